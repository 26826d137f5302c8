"""Modal screens: help (f1), frame detail (enter), and a one-line prompt (go to, search, cut at)."""

from __future__ import annotations

import base64
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable
from enum import Enum

import orjson
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from ..core import exact_json
from ..core.engine import CallStep, DecisionStep, FrameStep, WaitStep
from ..core.events import event_fields
from ..core.frame import Frame
from ..core.framing import framing_of
from ..core.inert import json_dumps
from ..core.timeline import Timeline
from . import safe
from .panes.line_source import Joined, Part, assemble, text_lines
from .panes.rawbytes import fmt_time, line_spans

HELP_INTRO = (
    "callscope steps through a recorded stream: every pane shows the same instant.\n"
    "Left: the frames (SSE blocks, event-stream messages or NDJSON lines), a row each (offset, "
    "size, times, event, what it carried; frames not "
    "yet complete are dimmed), and under them the cursor's frame: its fields, pretty JSON and raw "
    "bytes (┊ marks a network chunk boundary, red when it split a UTF-8 character). "
    "Middle: each call's argument text, rebuilt fragment by fragment; the text the current frame "
    "added is highlighted, and the DRAFT preview is never what a tool receives. "
    "Right: the harness gate, which waits while the turn is open and decides only after the "
    "terminal signal, citing the frame it relied on.\n"
    "Click a frame, a fragment or a log entry to move there. Every key below can be remapped by "
    "its binding id: callscope --keymap FILE, a JSON object such as {\"callscope.cut\": \"ctrl+x\"}."
)


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close")]

    def __init__(self, rows: Iterable[tuple[str, str, str]]) -> None:
        super().__init__()
        self.rows = list(rows)

    def compose(self) -> ComposeResult:
        width = max((len(k) for k, _, _ in self.rows), default=8)
        parts: list[safe.Part] = [HELP_INTRO, "\n\n"]
        for keys, description, binding_id in self.rows:
            parts += [(keys.ljust(width + 2), "bold $text-accent"), description,
                      (f"  ({binding_id})\n", "$text-muted")]
        parts.append(("\nctrl+p: command palette (also themes, screenshot, quit). "
                      "escape closes this screen.", "$text-muted"))
        with VerticalScroll(id="help", classes="modal-body") as body:
            body.border_title = "callscope — keys"
            yield Static(Content.assemble(*parts))


class PromptScreen(ModalScreen[str | None]):
    """A one-line question; dismisses with the text, or None on escape."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, placeholder: str, hint: str, value: str = "") -> None:
        super().__init__()
        self.title_text, self.placeholder, self.hint, self.value = title, placeholder, hint, value

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt", classes="modal-body") as body:
            body.border_title = self.title_text
            yield Input(value=self.value, placeholder=self.placeholder, id="prompt-input")
            yield Static(Content.styled(self.hint, "$text-muted"))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


def describe_step(step: object) -> Content:
    if isinstance(step, CallStep):
        ev = step.event
        name = type(ev).__name__
        fields = {k: getattr(ev, k) for k in event_fields(ev) if k != "frame"}
        shown = ", ".join(f"{k}={safe.short(_field(v), 90)}" for k, v in fields.items())
        return Content.assemble((name, "bold"), " ", safe.content(shown))
    if isinstance(step, WaitStep):
        return Content.assemble(("wait ", "bold $text-warning"), safe.content(step.call),
                                f" draft {step.draft.value}")
    if isinstance(step, DecisionStep):
        d = step.decision
        return Content.assemble((d.action, "bold"), " ", safe.content(d.call), " ",
                                safe.content(f"{d.reason or ''} {safe.short(d.detail, 120)}"))
    return Content(type(step).__name__)


def _chunks(first: int, last: int, inside: list[int]) -> str:
    """The network reads a frame spans, and where inside it one read ended and the next began
    (offsets from the frame's first byte)."""
    span = str(first) if first == last else f"{first}–{last}"
    if not inside:
        return f"{span}; no read boundary inside"
    more = " …" if len(inside) > 20 else ""
    return f"{span}; boundaries inside at {', '.join(map(str, inside[:20]))}{more}"


def _field(value: object) -> str:
    """A call event's field as the detail shows it: a code or other enum by its name in the
    registry (``missing_terminal``), text quoted with its escapes (the exact characters), no
    value as a dash."""
    if value is None:
        return "—"
    return str(value.value) if isinstance(value, Enum) else repr(value)


def hexdump(raw: bytes, limit: int = 1024, per_row: int = 8) -> str:
    """The first ``limit`` bytes, ``per_row`` a row: offset, hex, text. Eight a row is 39
    cells, so a row fits the frame detail pane at 80 columns (sixteen, 71 cells, wrapped
    there and in a 130-column terminal: half a row under the other, unreadable)."""
    rows = []
    for i in range(0, min(len(raw), limit), per_row):
        chunk = raw[i:i + per_row]
        text = "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in chunk)
        rows.append(f"{i:04x}  {chunk.hex(' '):<{3 * per_row - 1}}  {text}")
    if len(raw) > limit:
        rows.append(f"… {len(raw) - limit} more bytes")
    return "\n".join(rows)


def _framed(frame: Frame, framing: str) -> list[tuple[str, str]]:
    """The fields of a frame its framing has: an SSE block's event, id, retry and comments;
    an event-stream message's event type (its other headers are in the message's section);
    an NDJSON line has none (one JSON object a line)."""
    if framing == "ndjson":
        return [("dispatch", "yes" if frame.dispatch else "no (the line never ended)"),
                ("terminated", "yes" if frame.terminated else "NO: the stream ended inside this line")]
    if framing == "aws-eventstream":
        return [("event", frame.event or "(no :event-type header)"),
                ("dispatch", "yes" if frame.dispatch else "no (an incomplete or damaged message)"),
                ("terminated", "yes" if frame.terminated else
                 "NO: the stream ended inside this message")]
    return [
        ("event", frame.event if frame.event is not None else "(none: message)"),
        ("id", frame.last_event_id or "—"), ("retry", str(frame.retry) if frame.retry else "—"),
        ("dispatch", "yes" if frame.dispatch else "no (a browser would not dispatch this block)"),
        ("terminated", "yes" if frame.terminated else "NO: the stream ended inside this block"),
        ("comments", " | ".join(frame.comments) or "—"),
    ]


CUT_LINE = ("(the stream ended inside its last line, which is not part of the data: the raw "
            "bytes below have it)")
"""Said under the data of a frame whose last line never ended."""


def _data(data: str, cut_line: bool = False) -> list[Part]:
    """The data, as pretty JSON when it is JSON; a payload of base64 ``bytes`` (Bedrock's
    InvokeModel stream wraps each provider event so) decoded beside it when that is JSON.
    ``cut_line``: the frame's last line never ended (said, so an empty or partial data is
    not taken for the whole frame)."""
    cut: list[Part] = [("\n" + CUT_LINE, "italic $text-warning")] if cut_line else []
    if not data:
        return [("\nData ", "bold $text-primary"), ("none", "$text-muted"), *cut]
    try:
        value = exact_json.loads(data)  # (integers as the stream wrote them)
    except orjson.JSONDecodeError:
        return [("\nData (not JSON)\n", "bold $text-primary"), text_lines(data), *cut]
    pretty = json_dumps(value, orjson.OPT_INDENT_2).decode("utf-8", "surrogatepass")
    parts: list[Part] = [("\nData (parsed JSON, pretty)\n", "bold $text-primary"),
                         text_lines(pretty)]
    wrapped = value.get("bytes") if isinstance(value, dict) else None
    if isinstance(wrapped, str):
        try:
            inner = exact_json.loads(base64.b64decode(wrapped, validate=True))
        except (ValueError, orjson.JSONDecodeError):
            return parts + cut
        parts += [("\n\nBytes, base64-decoded (the event inside)\n", "bold $text-primary"),
                  text_lines(json_dumps(inner, orjson.OPT_INDENT_2).decode("utf-8", "surrogatepass"))]
    return parts + cut


def frame_detail(timeline: Timeline, index: int, *, timed: bool | None = None,
                 hex_row: int = 8) -> Content:
    """Frame ``index``'s detail, whole (see :func:`detail_parts`)."""
    return assemble(detail_parts(timeline, index, timed=timed, hex_row=hex_row))


def raw_lines(raw: bytes, make: Callable[[int, int], Content] | None = None,
              plain: Callable[[int, int], str] | None = None) -> Joined:
    """A frame's raw lines, a newline after each, line ``j`` made when first asked for: by
    ``make(start, end)`` from its bytes (with their line end), else plain, the line end made
    visible; ``plain(start, end)``: its plain text, without making it."""
    spans = line_spans(raw)

    def line(j: int) -> Content:
        if j == len(spans):  # (the newline after the last line)
            return Content("")
        start, end = spans[j]
        if make is not None:
            return make(start, end)
        return safe.content(raw[start:end].decode("utf-8", "replace"), "", "$text-secondary")

    def plain_line(j: int) -> str:
        return "" if j == len(spans) or plain is None else plain(*spans[j])

    return Joined(len(spans) + 1, line, plain_line if plain is not None else None,
                  lambda j: spans[j][1] - spans[j][0] if j < len(spans) else 0)


def detail_parts(timeline: Timeline, index: int, raw: Joined | None = None, *,
                 timed: bool | None = None, hex_row: int = 8) -> list[Part]:
    """Frame ``index``'s fields, data, bytes and effects, as parts for ``Content.assemble``
    (its long runs of lines made a line at a time: :mod:`.panes.line_source`); ``raw``: its
    raw lines as drawn by the caller (with chunk marks, a newline after each), instead of the
    plain ones; ``timed``: the recording has times (see frame_text.timed; found when not
    given); ``hex_row``: bytes a hex row."""
    frame = timeline.frames[index]
    if timed is None:
        timed = not timeline.chunks.one_time()
    arrived, done = timeline.frame_times(index) if timed else (None, None)
    prev = timeline.frame_times(index - 1)[1] if index and timed else None
    starts = timeline.chunks.starts  # (bisected: a stream read a byte at a time has millions)
    inside = [start - frame.start for start in starts[bisect_right(starts, frame.start):
                                                         bisect_left(starts, frame.end)]]
    framing = framing_of(timeline.state.protocol)
    facts = [
        ("bytes", f"{frame.start}–{frame.end} ({frame.end - frame.start} B)"),
        ("chunks", _chunks(frame.first_chunk, frame.last_chunk, inside)),
        ("first byte", fmt_time(arrived) or "no timing (one chunk, or no arrival times recorded)"),
        ("complete", (fmt_time(done) + (f" (Δ {fmt_time(done - prev, '')} since the previous frame)"
                                        if done is not None and prev is not None else "")) or "—"),
        *_framed(frame, framing),
    ]
    parts: list[Part] = []
    for label, value in facts:
        parts += [(f"{label:>11} ", "$text-muted"), safe.content(value), "\n"]
    binary = framing == "aws-eventstream"
    # (an SSE block's data is its ended data: lines; an NDJSON line is its data, ended or not)
    parts += _data(frame.data, framing != "ndjson" and not binary
                   and not frame.raw.endswith((b"\n", b"\r")))
    parts.append(("\n\nRaw bytes (a binary message: control bytes made visible, the hex below "
                  "is exact)\n" if binary else "\n\nRaw bytes (line ends shown)\n",
                  "bold $text-primary"))
    parts.append(raw if raw is not None else raw_lines(frame.raw))
    parts += [("\nHex\n", "bold $text-primary"), hexdump(frame.raw, per_row=hex_row), "\n"]
    k = timeline.frame_steps[index]
    effects: list[Part] = []
    for j in range(k + 1, timeline.step_for_frame(index) + 1):
        effects += ["  ", describe_step(timeline.steps[j]), "\n"]
    parts += [("\nWhat this frame did\n", "bold $text-primary"),
              *(effects or [("  nothing (not dispatched, or no call event)", "$text-muted")])]
    return parts


class DetailScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,enter,q", "dismiss", "Close")]

    def __init__(self, timeline: Timeline, index: int) -> None:
        super().__init__()
        self.timeline, self.index = timeline, index

    def compose(self) -> ComposeResult:
        assert isinstance(self.timeline.steps[self.timeline.frame_steps[self.index]], FrameStep)
        with VerticalScroll(id="detail", classes="modal-body") as body:
            body.border_title = f"frame #{self.index}"
            yield Static(frame_detail(self.timeline, self.index, hex_row=16))  # (120 cells)
