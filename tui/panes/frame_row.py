"""One row of the frame list: a frame's number, offset, size, times and event, and what it carries.

The columns are fixed-width (:class:`Columns`, sized once per timeline from its frame count and
byte total), so rows line up and the column header (the pane's title) fits them. The times are
Wireshark's: since the stream began, and since the previous frame completed. What a frame
carries comes from the timeline's steps for that frame (the group its :class:`FrameStep` opens):
which call and tool, the fragment it appended, text, a stop reason, usage, an end, an error,
the gate's verdicts, and anomaly codes marked ⚠. Stream text is shown as text (see :mod:`..safe`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rich.cells import cell_len
from textual.content import Content
from textual.style import Style

from ...core.engine import CallStep, DecisionStep
from ...core.events import (
    Anomaly,
    ArgumentPiece,
    ArgumentsAppended,
    ArgumentsSet,
    CallClosed,
    CallCut,
    CallIdentified,
    CallOpened,
    FinalCopy,
    ProviderError,
    StopReported,
    TextAppended,
    TurnEnded,
    UsageReported,
)
from ...core.frame import Frame
from ...core.framing import framing_of
from ...core.timeline import Timeline
from .. import safe
from .decisions import compact
from .event_name import inner_name
from .rawbytes import fmt_time

COMPACT = 64  # a pane narrower than this many cells lists frames compactly (Columns.compact)
SPANS = 110  # a pane narrower than this shows no offset and size columns (Columns.spans)
PREVIEW = 40  # characters of a fragment or text shown in a row, at least (or what the row has)
EVENT_MAX = 24  # cells of the event column at most (a longer one is abbreviated: short_event)
COMPACT_EVENT = 10  # cells of the event column in a compact row


@dataclass(frozen=True, slots=True)
class Columns:
    """The widths of the fixed columns (the summary takes the rest of the row)."""

    number: int
    offset: int
    size: int
    timed: bool
    time: int = 8
    event: int = 12
    compact: bool = False
    """A narrow pane: the number, event and what it carries only (offset, size and times are
    in the frame's detail)."""
    spans: bool = True
    """Offset and size shown (not in a pane of middling width: times, event, what it carries)."""
    widest: int = 3
    """Cells of the largest frame number (``#20``)."""

    @classmethod
    def of(cls, timeline: Timeline, timed: bool, event: int) -> Columns:
        """For this timeline; ``timed``: it has times to show (see FrameText.timed); ``event``:
        the widest event (see :func:`event_width`)."""
        frames, total = len(timeline.frames), timeline.total_bytes
        return cls(number=max(3, len(str(frames))) + 1, offset=max(6, len(str(total))), size=6,
                   timed=timed, event=min(max(event, 5), EVENT_MAX),
                   widest=len(f"#{max(frames - 1, 0)}"))

    @property
    def event_cells(self) -> int:
        """The event column's width (narrower when compact: what a frame carries says more)."""
        return min(self.event, COMPACT_EVENT) if self.compact else self.event

    @property
    def number_cells(self) -> int:
        """The number column's width (when compact, as wide as the largest number only)."""
        return self.widest if self.compact else self.number

    def title(self) -> str:
        """The column header, as wide as the row's columns."""
        parts = ["#".ljust(self.number_cells)]
        if self.spans and not self.compact:
            parts += ["offset".rjust(self.offset), "size".rjust(self.size)]
        if self.timed and not self.compact:
            parts += ["time".rjust(self.time), "Δprev".rjust(self.time)]
        return " ".join([*parts, "event".ljust(self.event_cells), "carries"])


def kind_of(frame: Frame, framing: str = "sse", protocol: str | None = None) -> str:
    """What the frame is: its event (an NDJSON line has none: ``line``, not SSE's default
    ``message``; an InvokeModel chunk names the event it carries: :mod:`.event_name`), or why
    it dispatched nothing."""
    if frame.dispatch:
        return "line" if framing == "ndjson" else inner_name(frame, protocol)
    return ("comment" if frame.comments and not frame.data else
            "unterminated" if not frame.terminated else "no dispatch")


def event_width(frames: Iterable[Frame], widest: int = 0, protocol: str | None = None) -> int:
    """The widest event of ``frames`` as their rows name them (:func:`kind_of`, in the
    ``protocol``'s framing), or ``widest``, if wider, up to :data:`EVENT_MAX`."""
    framing = framing_of(protocol)
    for frame in frames:
        if widest >= EVENT_MAX:
            break
        widest = max(widest, len(kind_of(frame, framing, protocol)))
    return min(widest, EVENT_MAX)


def fixed(timeline: Timeline, index: int, cols: Columns) -> str:
    """The fixed columns of frame ``index`` (ours: one cell per character), event excluded."""
    frame = timeline.frames[index]
    parts = [f"#{index}".ljust(cols.number_cells)]
    if cols.compact:
        return parts[0] + " "
    if cols.spans:
        parts += [str(frame.start).rjust(cols.offset),
                  f"{frame.end - frame.start}B".rjust(cols.size)]
    if cols.timed:
        done = timeline.frame_times(index)[1]
        prev = timeline.frame_times(index - 1)[1] if index else None
        since = fmt_time(done - prev, "+") if done is not None and prev is not None else ""
        parts += [fmt_time(done, "").rjust(cols.time), since.rjust(cols.time)]
    return " ".join(parts) + " "


def short_event(kind: str, width: int) -> str:
    """``kind`` in ``width`` cells, its start always shown: whole; else with its namespace
    abbreviated (``r.output_item.added``); else its start and its last word (after a ``.``, a
    ``_`` or in camelCase: ``response.function….delta``, ``r.f….delta``, ``con…_delta``,
    ``cont…Delta``); else its start (``r.in_prog…``)."""
    if len(kind) <= width:
        return kind
    head, dot, rest = kind.partition(".")
    short = f"{head[0]}.{rest}" if dot and head and rest else kind
    if len(short) <= width:
        return short
    for text, least in ((kind, 8), (short, 3)):  # (least: cells of its start kept)
        camel = max((i for i in range(1, len(text))
                     if text[i].isupper() and text[i - 1].islower()), default=-1)
        cut = max(text.rfind("."), text.rfind("_"), camel)
        if cut > 0 and width - 1 - (len(text) - cut) >= least:
            return text[:width - 1 - (len(text) - cut)] + "…" + text[cut:]
    return short[:width - 1] + "…"


def carries(timeline: Timeline, index: int, preview: int = PREVIEW) -> list[tuple[str, str]]:
    """What frame ``index`` did, as (what, style name) pieces; style names: ``call``, ``text``,
    ``stop``, ``anomaly``, ``decision``, ``dim``; a fragment or text up to ``preview``
    characters."""
    def _quote(text: str) -> str:
        # As a JSON string spells it, so the quotes around it are the only bare ones: a
        # fragment of JSON (``{"key":``) is mostly quotes, and ``""Owne"`` could be read three
        # ways. It is how the raw bytes spell it too.
        return '"' + safe.short(text.replace("\\", "\\\\").replace('"', '\\"'), preview) + '"'

    if index >= len(timeline.frame_steps):
        return []
    first, last = timeline.frame_steps[index] + 1, timeline.step_for_frame(index)
    out: list[tuple[str, str]] = []
    calls: list[tuple[str, str]] = []  # which calls and tools: after what the frame carried
    seen_calls: set[str] = set()
    for j in range(first, last + 1):
        step = timeline.steps[j]
        if isinstance(step, DecisionStep):
            d = step.decision
            out.append((f"{d.action} {d.call}", "decision"))
            continue
        if not isinstance(step, CallStep):
            continue
        ev = step.event
        if isinstance(ev, Anomaly):
            out.append((f"⚠ {ev.code}", "anomaly"))
            continue
        for anomaly in step.inherited:
            out.append((f"⚠ {anomaly.code}", "anomaly"))
        key = getattr(ev, "key", None)
        if isinstance(key, str) and key not in seen_calls and key in timeline.calls:
            seen_calls.add(key)
            made = timeline.calls[key]  # (its name at this step, not its whole view)
            calls.append((f"call {made.order + 1} {made.ident(j)[2] or key}", "call"))
        if isinstance(ev, ArgumentsAppended):
            out.append((_quote(ev.fragment), "text"))
        elif isinstance(ev, ArgumentsSet):
            out.append(("= " + _quote(ev.text), "text"))
        elif isinstance(ev, FinalCopy):
            out.append(("final " + _quote(ev.arguments), "text"))
        elif isinstance(ev, ArgumentPiece):
            out.append((f"{ev.path} = {safe.short(compact(ev.value), preview)}", "text"))
        elif isinstance(ev, CallOpened):
            out.append(("opened", "dim"))
        elif isinstance(ev, CallIdentified):
            out.append(("identified", "dim"))
        elif isinstance(ev, CallClosed):
            out.append(("closed", "dim"))
        elif isinstance(ev, CallCut):
            out.append((f"cut: {ev.why}", "anomaly"))
        elif isinstance(ev, TextAppended):
            out.append((f"{ev.channel} " + _quote(ev.text), "text"))
        elif isinstance(ev, StopReported):
            out.append((f"stop {ev.reason}", "stop"))
        elif isinstance(ev, TurnEnded):
            out.append((f"end {ev.signal}", "stop"))
        elif isinstance(ev, ProviderError):
            out.append((f"error {safe.short(ev.message, preview)}", "anomaly"))
        elif isinstance(ev, UsageReported):
            usage = " ".join(f"{k}={v}" for k, v in ev.usage.items()
                             if isinstance(v, int | float))
            if usage:  # (a usage block of no counts says nothing)
                out.append((f"usage {safe.short(usage, preview)}", "dim"))
        if step.disputed is not None:  # (an anomaly event itself was said above)
            out.append((f"⚠ {step.disputed.code}", "anomaly"))
    return _counted(out) + calls


def _counted(pieces: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Runs of one piece said once with their count: a frame that closes two calls says
    ``closed ×2`` (the calls follow), not ``closed closed``."""
    out: list[tuple[str, str]] = []
    runs: list[int] = []
    for piece in pieces:
        if out and out[-1] == piece:
            runs[-1] += 1
        else:
            out.append(piece)
            runs.append(1)
    return [(f"{text} ×{n}", style) if n > 1 else (text, style)
            for (text, style), n in zip(out, runs, strict=True)]


def row(timeline: Timeline, index: int, cols: Columns, base: Style, matched: bool,
        st: dict[str, Style], cells: int = 0,
        gutter: tuple[tuple[str, Style], ...] = ()) -> Content:
    """Frame ``index``'s row, in ``base`` (its role's style); ``st``: the pane's component
    styles (``match`` marks a search match's event, ``escape`` an escape made visible, and one
    per piece of :func:`carries`). ``cells``: the row's width, if known: what the frame
    carries fills it (not :data:`PREVIEW` characters of it) and a row longer than that ends in
    … at its edge rather than anywhere in a word. ``gutter``: pieces drawn before the columns
    (their cells not counted in ``cells``)."""
    frame = timeline.frames[index]
    width = cols.event_cells
    protocol = timeline.state.protocol
    kind = short_event(kind_of(frame, framing_of(protocol), protocol), width)
    shown = safe.plain(kind)
    line = safe.Line(st["escape"])
    for mark, mark_style in gutter:
        line.add(mark, mark_style)
    columns = fixed(timeline, index, cols)  # (ours: one cell per character)
    line.add(columns, base)
    line.add(kind, st["match"] if matched else base)
    line.add(" " * max(1, width + 1 - len(shown)), base)
    plain = base == st["future"]  # a frame not decoded yet: all of it dimmed
    room = cells - len(columns) - max(width + 1, len(shown) + 1)
    for n, (text, style) in enumerate(carries(timeline, index, max(PREVIEW, room))):
        if n:
            line.add(" ", base)
        line.add(text, base if plain else base + st[style])
    content = line.content()
    if cells <= 0:
        return content
    limit = cell_len("".join(text for text, _ in gutter)) + cells  # (the gutter is never cut)
    return content.truncate(limit, ellipsis=True) if limit < content.cell_length else content
