"""The user's harness under test: every chunking and every cut of a stream, compared with the gate.

A harness is a callable fed the stream's byte chunks (an iterator of ``bytes``) that returns what
it executed: ``(tool name, arguments)`` pairs, in order (:func:`.sweep_compare.executed_of`
lists the shapes accepted). :func:`sweep` feeds it

1. the full stream under the recorded chunking, whole (one read), byte by byte and seeded random
   chunkings: each run is compared with the gate, and with the recorded run (``chunking``);
2. the stream cut at byte offsets, as the network delivered it up to the cut: every offset of a
   stream up to ``every_byte_up_to`` bytes, else every frame boundary -1..+2 (a cut before a
   frame's last line end, before its blank line, just after it, one byte into the next frame)
   plus every offset of the ``window`` bytes before the terminal signal's frame (where a harness
   that runs on a stop reason or on the first parseable prefix goes wrong). The report says
   which plan it used.

Each finding is kept once per kind and tool, with the first variant that showed it (chunkings
first, then cuts in increasing order) and how many variants did. Nothing here touches a file:
:mod:`callscope.testing` writes the reproducing sessions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from msgspec import Struct

from .limits import DEFAULT_LIMITS, Limits
from .replay import Chunking, TimedBytes, reads, rechunk
from .sweep_compare import KINDS, Executed, HarnessBroken, Problem, compare, executed_of, same_json, shown
from .sweep_gate import CutClasses, GateOutcome, cut_classes, gate_full
from .tools import ANY_OBJECT, ToolSet

Harness = Callable[[Iterator[bytes]], Iterable[object]]

EVERY_BYTE_UP_TO = 4096
"""Streams up to this many bytes are cut at every offset."""
WINDOW = 256
"""Above that size: every offset of this many bytes before the terminal signal's frame."""


class Variant(Struct, frozen=True):
    """One stream the harness is fed: a chunking of the full stream, or a cut."""

    chunking: str
    cut: int | None = None
    """Bytes kept (the stream as recorded up to that offset), None for the full stream."""

    def label(self) -> str:
        if self.cut is None:
            return f"chunking {self.chunking}"
        return f"cut at byte {self.cut} ({self.chunking} chunking)"


@dataclass
class Finding:
    kind: str
    call: str
    message: str
    """What the first failing variant showed."""
    variant: Variant
    frames: int
    """Frames the gate saw dispatched in that variant."""
    failing: int = 1
    """How many variants failed this way."""
    reproduction: str | None = None
    """The session file that reproduces it (written by :mod:`callscope.testing`)."""

    def line(self) -> str:
        more = f" ({self.failing} variants fail this way)" if self.failing > 1 else ""
        where = f"; reproduce: callscope {self.reproduction}" if self.reproduction else ""
        frames = f"{self.frames} frame{'' if self.frames == 1 else 's'}"
        return (f"{KINDS[self.kind]}: first at {self.variant.label()}, {frames} dispatched: "
                f"{self.message}{more}{where}")


@dataclass
class SweepReport:
    source: str
    protocol: str
    size: int
    gate: GateOutcome
    """The gate's outcome for the full stream (recorded chunking)."""
    chunkings: list[str] = field(default_factory=list)
    cuts: int = 0
    cut_plan: str = ""
    runs: int = 0
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    inferred_tools: list[dict[str, Any]] = field(default_factory=list)
    """The definitions taken as declared when the stream came without any (see
    :func:`declared_or_inferred`); a reproducing session carries them."""

    @property
    def ok(self) -> bool:
        return not self.findings

    def lines(self) -> list[str]:
        executed = ", ".join(c.name for c in self.gate.executed) or "nothing"
        head = "ok  " if self.ok else "FAIL"
        out = [f"{head} {self.source}: {self.protocol}, {self.size} bytes, {self.runs} runs "
               f"({len(self.chunkings)} chunkings: {', '.join(self.chunkings)}; {self.cuts} cuts: "
               f"{self.cut_plan}); the gate executes {executed}"]
        out += [f"  note: {n}" for n in self.notes]
        out += [f"  {f.line()}" for f in self.findings]
        return out


def chunkings(seeds: Sequence[int]) -> list[str]:
    return ["recorded", "whole", "bytes:1", *(f"random:{s}" for s in seeds)]


def variant_reads(chunks: Sequence[TimedBytes], variant: Variant) -> list[bytes]:
    return list(reads(chunks, Chunking.parse(variant.chunking), variant.cut))


def variant_chunks(chunks: Sequence[TimedBytes], variant: Variant) -> list[TimedBytes]:
    """The variant's reads with their arrival times, for a session that reproduces it."""
    return list(rechunk(chunks, Chunking.parse(variant.chunking), variant.cut))


def cut_plan(classes: CutClasses, every_byte_up_to: int = EVERY_BYTE_UP_TO,
             window: int = WINDOW) -> tuple[list[int], str]:
    """The offsets to cut at (the full stream excluded) and the plan, said in words."""
    size = classes.size
    if size <= every_byte_up_to:
        return list(range(size)), "every byte offset"
    offsets = {0}
    for point in classes.points:
        offsets.update(range(point - 1, point + 3))
    end = classes.terminal_point
    before = "the terminal signal's frame" if end is not None else "the end"
    end = end if end is not None else size
    offsets.update(range(end - window, end + 2))
    kept = sorted(k for k in offsets if 0 <= k < size)
    return kept, (f"every frame boundary -1..+2 and every byte of the {window} before {before} "
                  f"(the stream is above {every_byte_up_to} bytes)")


def run_once(harness: Harness, pieces: Sequence[bytes]) -> tuple[list[Executed], str | None]:
    """What the harness executed on these reads, and the exception it raised (a harness that
    raises executed nothing). A result that is not a list of calls is the caller's error."""
    try:
        result = list(harness(iter(pieces)))
    except HarnessBroken:
        raise
    except Exception as exc:  # the harness under test is the user's code: any failure is data
        return [], f"{type(exc).__name__}: {str(exc)[:200]}"
    return [executed_of(v) for v in result], None


def declared_or_inferred(tools: ToolSet, gate: GateOutcome) -> list[dict[str, Any]]:
    """Without tool definitions, every tool the stream calls is taken as declared with any
    arguments (the harness is compared on the stream, not on a tool list it never saw)."""
    if len(tools) or not gate.calls:
        return []
    names = dict.fromkeys(c.name for c in gate.calls)
    return [{"name": n, "input_schema": ANY_OBJECT} for n in names]


class _Findings:
    def __init__(self) -> None:
        self.by_key: dict[tuple[str, str], Finding] = {}

    def add(self, problem: Problem, variant: Variant, frames: int) -> None:
        key = (problem.kind, problem.call)
        found = self.by_key.get(key)
        if found is None:
            self.by_key[key] = Finding(problem.kind, problem.call, problem.message, variant, frames)
        elif found.variant != variant:
            found.failing += 1

    def ordered(self) -> list[Finding]:
        order = list(KINDS)
        return sorted(self.by_key.values(), key=lambda f: order.index(f.kind))


def _calls_text(executed: Sequence[Executed], error: str | None) -> str:
    text = "[" + ", ".join(e.text() for e in executed) + "]"
    return text + (f" (raised {error})" if error else "")


def sweep(source: str, chunks: Sequence[TimedBytes], harness: Harness, *, protocol: str | None,
          tools: ToolSet, seeds: Sequence[int] = (1, 2, 3), limits: Limits = DEFAULT_LIMITS,
          every_byte_up_to: int = EVERY_BYTE_UP_TO, window: int = WINDOW,
          modes: Sequence[str] | None = None) -> SweepReport:
    """``modes``: the chunkings of the full stream (default :func:`chunkings` of the seeds;
    the first is the baseline the others are compared with)."""
    modes = list(modes) if modes is not None else chunkings(seeds)
    for mode in modes:
        Chunking.parse(mode)  # (a typo is said before any run)
    data = b"".join(c for _, c in chunks)
    recorded = [c for _, c in chunks]
    gate, read_as = gate_full(recorded, protocol, tools, limits)
    report = SweepReport(source, read_as, len(data), gate)
    inferred = declared_or_inferred(tools, gate)
    if inferred:
        tools = ToolSet(inferred, request=tools.request)
        report.inferred_tools = inferred
        gate, _ = gate_full(recorded, protocol, tools, limits)
        report.gate = gate
        report.notes.append("no tool definitions: every tool the stream calls is taken as "
                            "declared, with any arguments")
    protocol = protocol or (read_as if read_as != "unknown" else None)
    findings = _Findings()

    baseline: tuple[list[Executed], str | None] | None = None
    for name in modes:
        variant = Variant(name)
        executed, error = run_once(harness, variant_reads(chunks, variant))
        report.chunkings.append(name)
        report.runs += 1
        problems = compare(executed, gate, full=True)
        if error and any(p.kind == "dropped" for p in problems):
            problems = [Problem(p.kind, p.call, f"{p.message} (the harness raised {error})")
                        if p.kind == "dropped" else p for p in problems]
        if baseline is None:
            baseline = (executed, error)
        elif not _same_calls(executed, baseline[0]):
            problems.append(Problem("chunking", executed[0].name if executed else "-",
                                    f"executed {_calls_text(executed, error)}; under the "
                                    f"{modes[0]} chunking {_calls_text(*baseline)}"))
        for problem in problems:
            findings.add(problem, variant, gate.frames)

    classes = cut_classes(data, protocol, tools, limits)
    offsets, report.cut_plan = cut_plan(classes, every_byte_up_to, window)
    for k in offsets:
        variant = Variant("recorded", k)
        executed, _ = run_once(harness, variant_reads(chunks, variant))
        report.runs += 1
        report.cuts += 1
        at = classes.at(k)
        for problem in compare(executed, at, full=False):
            findings.add(problem, variant, at.frames)
    report.findings = findings.ordered()
    return report


def _same_calls(a: Sequence[Executed], b: Sequence[Executed]) -> bool:
    return len(a) == len(b) and all(x.name == y.name and same_json(x.arguments, y.arguments)
                                    for x, y in zip(a, b, strict=True))


__all__ = ["EVERY_BYTE_UP_TO", "WINDOW", "Executed", "Finding", "Harness", "SweepReport",
           "Variant", "chunkings", "cut_plan", "run_once", "shown", "sweep", "variant_chunks",
           "variant_reads"]
