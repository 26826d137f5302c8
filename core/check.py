"""``callscope check``: the proof that chunking never changes a decision and that no cut ever
executes what it should not.

For one input it replays the recorded chunking, whole, byte by byte and several random
chunkings, and requires identical decisions. Then it considers a cut at every byte offset:
no cut may execute anything the full stream would not (same call, same arguments), and a cut
before the terminal signal executes nothing.

The sweep does not replay from zero for every cut. A cut stream's events depend only on which
frames completed before the cut (a block cut before its blank line is never dispatched), so the
offsets fall into ``frames + 1`` classes. The pipeline is stepped once, frame by frame, and a copy
of it is finished at each frame boundary; every byte offset is then mapped to its class with a
binary search. A few offsets per input are also replayed for real by the engine, fed the bytes
up to each as reads, and must agree: that guards the shortcut itself (:func:`real_cuts` says
which, and why they are enough). Those fed as one read and the early ones fed as recorded are
replayed from zero; a later recorded one goes on from a copy of the recorded replay's engine
taken at the last whole read before it (:func:`_recorded_cuts`).
"""

from __future__ import annotations

import copy
import random
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from .check_reads import check_reads
from .engine import CallPipeline, Engine
from .frame import Frame
from .framing import DISPATCHED_AT_CR, decode_all, framing_of, stream_framing
from .harness import Decision
from .limits import DEFAULT_LIMITS, Limits
from .replay import Chunking, TimedBytes
from .tools import ToolSet

Outcome = dict[str, tuple[str, str | None, Any]]  # call -> (action, reason, arguments)

REAL_REPLAY_SAMPLES = 2
"""Random cuts among the real ones (:func:`real_cuts`), beside those placed by the frames."""
BOUNDARIES_CHECKED = 4
"""The first dispatch points cut at for real, on each side (and the frame after each, inside)."""
FORK_AFTER = 1 / 8
"""The share of a stream past which a recorded real cut is read off the recorded replay
(:func:`_recorded_cuts`) rather than replayed from byte 0."""


@dataclass
class CheckReport:
    source: str
    size: int
    chunkings: list[str] = field(default_factory=list)
    cuts: int = 0
    violations: list[str] = field(default_factory=list)
    executed: int = 0
    refused: int = 0
    protocol: str = "unknown"

    @property
    def ok(self) -> bool:
        return not self.violations

    def verdict(self) -> str:
        head = "ok  " if self.ok else "FAIL"
        summary = (f"{head} {self.source}: {self.protocol}, {self.size} bytes, "
                   f"{len(self.chunkings)} chunkings, {self.cuts} cuts; "
                   f"full stream: {self.executed} executed, {self.refused} refused")
        if self.violations:
            summary += f"; {len(self.violations)} violation(s), first: {self.violations[0]}"
        return summary


def _outcome(decisions: dict[str, Decision]) -> Outcome:
    return {k: (d.action, d.reason, d.arguments) for k, d in decisions.items()}


def _replay_outcome(chunks: Sequence[TimedBytes], chunking: Chunking, protocol: str | None,
                    tools: ToolSet, cut_at: int | None = None,
                    limits: Limits = DEFAULT_LIMITS) -> Outcome:
    """The decisions of a fresh engine fed these chunks (the steps themselves are not needed:
    every decision the engine takes is kept in its pipeline)."""
    engine = Engine(protocol, tools, limits, contrast=False)  # only the gate's decisions count
    engine.push_reads(check_reads(chunks, chunking, cut_at))
    engine.close()
    return _outcome(engine.pipeline.decisions)


def dispatch_point(frame: Frame, framing: str) -> int:
    """The offset past which a cut dispatches the frame (a cut at or before it does not): its
    last byte, or the CR of a closing CR LF where ``framing`` ends a line there at close
    (:data:`~.framing.DISPATCHED_AT_CR`)."""
    if not frame.terminated:
        return 1 << 62
    at_cr = DISPATCHED_AT_CR[framing] and frame.raw.endswith(b"\r\n")
    return frame.end - (2 if at_cr else 1)


def each_cut(frames: Sequence[Frame], pipeline: CallPipeline,
             visit: Callable[[int, CallPipeline], None]) -> int | None:
    """Finish a fork of ``pipeline`` after each prefix of ``frames`` (0 to all of them) and
    visit it with the prefix's length: one cut class per frame boundary, each read once. The
    last class is ``pipeline`` itself, finished (no frame comes after it).
    Returns the first class whose frames include the terminal signal (None: it never came)."""
    terminal_class: int | None = None
    for m in range(len(frames) + 1):
        finished = pipeline.fork(to_finish=True) if m < len(frames) else pipeline
        finished.finish()
        visit(m, finished)
        if m < len(frames):
            pipeline.push_frame(frames[m])  # (no steps: only decisions are compared)
            if terminal_class is None and pipeline.state.complete:
                terminal_class = m + 1  # classes >= this one include the terminal frame
    return terminal_class


def real_cuts(points: Sequence[int], terminal_class: int | None, size: int) -> list[int]:
    """The offsets ``check`` replays from zero to guard the sweep's shortcut, in order.

    A cut's class is the number of dispatch points below it, so the shortcut can be wrong in
    three ways only, and each has its cuts here:

    * at a class boundary (a dispatch point off by one: CRLF, a trailing CR, a comment line):
      both sides of the first :data:`BOUNDARIES_CHECKED` dispatch points, and of the terminal
      frame's, where the promise itself flips (at its point the frame has every line but the
      blank one and nothing may execute; one byte on, the turn is complete; without a terminal
      signal, the last terminated frame's);
    * inside a frame, a line cut short (the decoder fed a partial line, at close, against
      :func:`.framing.decode_all`'s complete frames): the middle of each frame between
      those first boundaries, which in a stream that opens with its calls include the first
      argument fragments (the random cuts below fall inside a frame too, nearly always);
    * in the state a fork carries to its finish: every class is compared with a pipeline fed
      its frames from zero in tests/test_check_fork.py, on every bundled input; here, the
      terminal class and the early ones, plus :data:`REAL_REPLAY_SAMPLES` random cuts for
      what none of the above foresaw (a cut inside a recorded read mid-stream).

    The early cuts cost little (a replay costs its prefix); the terminal frame's are the
    expensive ones and the ones a safety bug shows at. The whole stream (``size``) is left
    out: part 1 of :func:`check_input` replayed it and compared it with its class."""
    rng = random.Random(size)
    cuts = {0, *(rng.randint(0, size) for _ in range(REAL_REPLAY_SAMPLES))}
    early = points[:BOUNDARIES_CHECKED + 1]
    for i, point in enumerate(early[:BOUNDARIES_CHECKED]):
        cuts.update((point, point + 1))
        if i + 1 < len(early):
            cuts.add((point + 1 + early[i + 1]) // 2)
    # The terminal frame's point, or the last terminated frame's when the signal never came
    # (a cut stream's unterminated tail has no point).
    last = (points[terminal_class - 1] if terminal_class is not None
            else max((p for p in points if p < size), default=None))
    if last is not None:
        cuts.update((last, last + 1))
    return sorted(k for k in cuts if 0 <= k < size)


def _recorded_cuts(chunks: Sequence[TimedBytes], cuts: Sequence[int], protocol: str | None,
                   tools: ToolSet, limits: Limits) -> tuple[Outcome, dict[int, Outcome]]:
    """The recorded replay's outcome, and that of each cut of ``cuts`` fed as recorded.

    A cut's reads are the recorded reads before it, then the part of the read it falls in (if
    any). A cut past the first :data:`FORK_AFTER` of the stream is replayed by a copy of the
    recorded replay's engine taken after those whole reads, fed that part and closed: it reads
    on exactly as a fresh engine fed the same reads from byte 0 would (the pipeline forks as
    :meth:`.CallPipeline.fork` says, the decoder is deep-copied), without reading the prefix
    again (a copy costs about a twentieth of a replay). Earlier cuts, whose prefixes cost about
    as much as a copy, are replayed from byte 0 by a fresh engine."""
    engine = Engine(protocol, tools, limits, contrast=False)  # only the gate's decisions count
    reads = [data for _, data in chunks]
    starts = list(accumulate(map(len, reads), initial=0))
    fed = 0
    outcomes: dict[int, Outcome] = {}
    for k in sorted(cuts):
        taken = bisect_left(starts, k, 0, len(reads))  # reads starting before k
        whole = taken if starts[taken] <= k else taken - 1
        if starts[whole] < starts[-1] * FORK_AFTER:
            outcomes[k] = _replay_outcome(chunks, Chunking("recorded"), protocol, tools,
                                          cut_at=k, limits=limits)
            continue
        engine.push_reads(reads[fed:whole])
        fed = whole
        shared: dict[int, Any] = {id(tools): tools, id(limits): limits,  # (never changed)
                                  id(engine.pipeline): engine.pipeline.fork()}
        twin = copy.deepcopy(engine, shared)
        if whole < taken:  # (the read the cut falls in, up to the cut)
            twin.push_reads([reads[whole][:k - starts[whole]]])
        twin.close()
        outcomes[k] = _outcome(twin.pipeline.decisions)
    engine.push_reads(reads[fed:])
    engine.close()
    return _outcome(engine.pipeline.decisions), outcomes


def check_input(source: str, chunks: Sequence[TimedBytes], *, protocol: str | None,
                tools: ToolSet, seeds: Sequence[int] = (1, 2, 3),
                limits: Limits = DEFAULT_LIMITS) -> CheckReport:
    data = b"".join(c for _, c in chunks)
    report = CheckReport(source, len(data))

    # The cut classes (part 2) come first: they place the real cuts (part 3), whose recorded
    # ones are read off the recorded replay of part 1.
    framing = stream_framing(framing_of(protocol), data)
    frames = decode_all(data, framing, limits.max_block_bytes)
    points = [dispatch_point(f, framing) for f in frames]
    pipeline = CallPipeline(protocol, tools, limits, contrast=False)
    outcomes: list[Outcome] = []
    terminal_class = each_cut(frames, pipeline,
                              lambda m, finished: outcomes.append(_outcome(finished.decisions)))
    cuts = real_cuts(points, terminal_class, len(data))
    # Half of the real cuts are fed as one read (cheap), half as recorded: a cut inside a
    # recorded read is where the chunking and the cut meet, which part 1 (whole streams) does
    # not reach.
    recorded = cuts[1::2]

    # 1. Chunkings must not change decisions.
    baseline, recorded_outcomes = _recorded_cuts(chunks, recorded, protocol, tools, limits)
    modes = [Chunking("recorded"), Chunking("whole"), Chunking("bytes", size=1),
             *(Chunking("random", seed=s) for s in seeds)]
    for mode in modes:
        report.chunkings.append(str(mode))
        got = baseline if mode.mode == "recorded" else _replay_outcome(
            chunks, mode, protocol, tools, limits=limits)
        if got != baseline:
            report.violations.append(f"chunking {mode} changed the decisions")
    report.executed = sum(1 for a, _, _ in baseline.values() if a == "execute")
    report.refused = len(baseline) - report.executed

    # 2. Every cut offset, one class per frame boundary.
    report.protocol = pipeline.protocol
    full = outcomes[-1]
    for m, outcome in enumerate(outcomes):
        for key, (action, _, arguments) in outcome.items():
            if action != "execute":
                continue
            if terminal_class is None or m < terminal_class:
                report.violations.append(
                    f"a cut before the terminal signal (after {m} frames) executes {key}")
            elif full.get(key, (None, None, None))[0] != "execute" or full[key][2] != arguments:
                report.violations.append(
                    f"a cut after {m} frames executes {key}, which the full stream does not")
    report.cuts = len(data) + 1

    # 3. Guard the shortcut: a few real cuts, replayed apart from the sweep, must match their
    # class. The cut at the very end is the whole stream, which part 1 replayed already.
    if outcomes[-1] != baseline:
        report.violations.append("internal: the whole stream disagrees with its class")
    for n, k in enumerate(cuts):
        m = bisect_left(points, k)  # frames whose dispatch point is < k
        chunking = Chunking("recorded" if n % 2 else "whole")
        real = recorded_outcomes[k] if n % 2 else _replay_outcome(
            chunks, chunking, protocol, tools, cut_at=k, limits=limits)
        if real != outcomes[m]:
            report.violations.append(f"internal: the cut at byte {k} ({chunking}) disagrees "
                                     "with its class")
    return report
