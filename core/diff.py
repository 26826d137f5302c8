"""``callscope diff A B``: two recordings of a turn compared call by call.

For example the upstream and downstream sides of a gateway, captured by two proxies: each is
replayed through the engine, and its calls (in the order they opened) are paired by position and
compared on name, id, argument text and the gate's decision; the two endings are compared too.
The first difference is shown down to the fragment: the call, the character where the two
argument texts part, and on each side the fragment holding it with the frame that carried it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from msgspec import Struct

from .ending import Ending, EndingWatch, transport_of
from .engine import ChunkStep, Engine, FrameStep
from .frame import Frame, event_name
from .inert import plain
from .limits import DEFAULT_LIMITS, Limits
from .replay import TimedBytes, replay
from .session_model import StreamEnd
from .sweep_compare import shown
from .tools import ToolSet


class CallSide(Struct, frozen=True):
    key: str
    name: str
    id: str | None
    text: str
    """The argument text as accumulated."""
    action: str
    reason: str | None
    fragments: tuple[tuple[int | None, int, int], ...]
    """(frame, start, end) of each fragment in ``text``."""
    opened_frame: int | None
    decided_frame: int | None
    """The frame the gate's decision relied on."""

    def decision(self) -> str:
        return self.action + (f" ({self.reason})" if self.reason else "")

    def fragment_at(self, offset: int) -> int | None:
        """The index of the fragment holding character ``offset`` (the last one at the end)."""
        for n, (_, start, end) in enumerate(self.fragments):
            if start <= offset < end:
                return n
        return len(self.fragments) - 1 if self.fragments else None


class Side(Struct, frozen=True):
    """One recording as the engine read it."""

    source: str
    protocol: str
    calls: tuple[CallSide, ...]
    frames: dict[int, Frame]
    ending: Ending


def read_side(source: str, chunks: Sequence[TimedBytes], *, protocol: str | None,
              tools: ToolSet, end: StreamEnd | None, limits: Limits = DEFAULT_LIMITS) -> Side:
    engine = Engine(protocol, tools, limits)
    watch = EndingWatch()
    frames: dict[int, Frame] = {}
    for step in replay(chunks, engine=engine):
        if isinstance(step, ChunkStep):
            watch.chunk(step.end, step.t)
        elif isinstance(step, FrameStep):
            watch.frame(step.frame)
            frames[step.frame.index] = step.frame
    state = engine.state
    calls = []
    for key, call in state.calls.items():
        decision = engine.pipeline.decisions.get(key)
        calls.append(CallSide(key, call.name or "", call.id or call.call_id, call.text,
                              decision.action if decision else "wait",
                              decision.reason if decision else None,
                              tuple((f.frame, f.start, f.end) for f in call.fragments),
                              call.opened_frame, decision.frame if decision else None))
    return Side(source, state.protocol, tuple(calls), frames,
                watch.ending(state, *transport_of(end)))


class First(Struct, frozen=True):
    """Where the calls first differ: the call's position, the character where the argument
    texts part (None when they are equal) and the fragment holding it on each side."""

    call: int
    what: str
    offset: int | None
    fragment_a: int | None
    fragment_b: int | None


@dataclass
class DiffReport:
    a: Side
    b: Side
    rows: list[tuple[int, list[str]]] = field(default_factory=list)
    """(call position, what differs) for each pair that differs."""
    first: First | None = None
    endings: list[str] = field(default_factory=list)

    @property
    def calls_differ(self) -> bool:
        return bool(self.rows)

    def lines(self) -> list[str]:
        a, b = self.a, self.b
        head = "differ" if self.calls_differ else "same calls"
        out = [f"{head}: A {plain(a.source)} ({a.protocol}, {len(a.calls)} calls) / "
               f"B {plain(b.source)} ({b.protocol}, {len(b.calls)} calls)"]
        for position, what in self.rows:
            out.append(f"  call {position + 1}: " + "; ".join(what))
        out += [f"  ending: {line}" for line in self.endings]
        if self.first is not None:
            out += self.first_lines()
        return out

    def first_lines(self) -> list[str]:
        first = self.first
        assert first is not None
        out = [f"first difference: call {first.call + 1}, {first.what}"]
        for label, side, n in (("A", self.a, first.fragment_a), ("B", self.b, first.fragment_b)):
            call = side.calls[first.call] if first.call < len(side.calls) else None
            if call is None:
                out.append(f"  {label}: no call {first.call + 1}")
                continue
            frame_index, where = ((call.decided_frame, f"decided {call.decision()}")
                                  if first.what == "decision" else (call.opened_frame, "opened"))
            if n is not None:
                frame_index, start, end = call.fragments[n]
                where = f"fragment {n + 1} of {len(call.fragments)} (characters {start}..{end})"
                out.append(f"  {label}: {where}: {shown(call.text[start:end], 120)}")
            else:
                out.append(f"  {label}: {plain(call.name)[:60]} {where}")
            frame = side.frames.get(frame_index) if frame_index is not None else None
            if frame is not None:
                out.append(f"  {label}: frame #{frame.index} ({plain(event_name(frame))[:60]}) "
                           f"at bytes {frame.start}..{frame.end}: {shown(frame.data, 400)}")
        return out


def _differences(a: CallSide, b: CallSide, ignore_ids: bool) -> list[str]:
    what = []
    if a.name != b.name:
        what.append(f"name {shown(a.name, 60)} / {shown(b.name, 60)}")
    if not ignore_ids and a.id != b.id:
        what.append(f"id {shown(a.id, 60)} / {shown(b.id, 60)}")
    if a.text != b.text:
        what.append(f"arguments {shown(a.text, 80)} / {shown(b.text, 80)}")
    if (a.action, a.reason) != (b.action, b.reason):
        what.append(f"decision {a.decision()} / {b.decision()}")
    return what


def _parting(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            return n
        n += 1
    return n


def diff(a: Side, b: Side, *, ignore_ids: bool = False) -> DiffReport:
    """The pairs that differ, the endings, and the first difference: the first call whose
    argument texts part (down to the fragment), else the first pair that differs at all."""
    report = DiffReport(a, b)
    for position in range(max(len(a.calls), len(b.calls))):
        if position >= len(a.calls) or position >= len(b.calls):
            only = "A" if position < len(a.calls) else "B"
            call = (a.calls if only == "A" else b.calls)[position]
            report.rows.append((position, [f"only in {only}: {plain(call.name)[:60]} "
                                           f"({call.decision()})"]))
            if report.first is None:
                report.first = First(position, f"only in {only}", None, None, None)
            continue
        ca, cb = a.calls[position], b.calls[position]
        what = _differences(ca, cb, ignore_ids)
        if not what:
            continue
        report.rows.append((position, what))
        if ca.text != cb.text and (report.first is None or report.first.offset is None):
            offset = _parting(ca.text, cb.text)
            report.first = First(position, f"the arguments part at character {offset}", offset,
                                 ca.fragment_at(offset), cb.fragment_at(offset))
        elif report.first is None:
            report.first = First(position, what[0].split(" ", 1)[0], None, None, None)
    ea, eb = a.ending, b.ending
    for label, x, y in (("transport", ea.transport, eb.transport),
                        ("terminal signal", ea.signal, eb.signal),
                        ("stop reason", ea.stop_reason, eb.stop_reason)):
        if x != y:
            report.endings.append(f"{label} {shown(x, 60)} / {shown(y, 60)}")
    return report
