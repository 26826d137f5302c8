"""The argument buffers pane: one lane per call, its raw text as reconstructed at the cursor.

A lane shows the call's identity, the raw argument text with the text added by the current frame
highlighted (click any fragment to jump to the frame that carried it), the byte count, the draft
status, and a preview of what a partial parser makes of the draft so far, labelled DRAFT: it is
what the arguments look like, never what a tool will receive.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import accumulate
from typing import Any

import jiter
import orjson
from textual.containers import VerticalScroll
from textual.content import Content, Span
from textual.events import Click
from textual.message import Message
from textual.style import Style
from textual.widgets import Static

from ...core.jsonprefix import Draft
from ...core.lanes import CallView
from ...core.timeline import Timeline, View
from .. import safe

WINDOW = 1200
"""Characters of argument text shown per lane (the tail, around the newest fragment)."""
PREVIEW = 400
MAX_ANOMALIES = 12

DRAFT_LABEL = {
    Draft.EMPTY: ("empty", "$text-muted"),
    Draft.INCOMPLETE: ("incomplete", "$text-warning"),
    Draft.COMPLETE: ("complete JSON", "$text-success"),
    Draft.INVALID: ("INVALID JSON", "$text-error"),
}


def draft_preview(text: str) -> str:
    """What a partial-JSON parser makes of the draft (jiter partial mode), compact and bounded."""
    if not text.strip():
        return ""
    try:
        value: Any = jiter.from_json(text.encode("utf-8", "surrogatepass"), partial_mode=True)
    except ValueError as exc:
        return f"(no partial parse: {str(exc)[:80]})"
    shown = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    return shown if len(shown) <= PREVIEW else shown[:PREVIEW - 1] + "…"


def argument_text(call: CallView, timeline: Timeline | None, k: int) -> Content:
    """The raw text (tail window), fresh part highlighted, fragments clickable."""
    text, fresh = call.text, call.fresh
    lo = max(0, len(text) - WINDOW)
    if fresh is not None and fresh[0] < lo:  # keep the fresh text in the window
        lo = max(0, fresh[0] - 200)
    shown = text[lo:lo + WINDOW]
    parts: list[Content] = []
    if lo:
        parts.append(Content.styled(f"… {lo} earlier characters …\n", "$text-muted italic"))
    fragments = timeline.calls[call.key].spans(k, lo) if timeline is not None else []
    body = _with_breaks(shown)
    at = _display_offsets(shown)
    spans: list[Span] = []
    for i, (start, end, frame) in enumerate(fragments, call.fragments - len(fragments)):
        s, e = at(max(start, lo) - lo), at(min(end, lo + len(shown)) - lo)
        if e <= s:
            continue
        # A click goes to the frame that carried the fragment; alternate shading shows where
        # each fragment begins.
        if frame is not None:
            spans.append(Span(s, e, Style.from_meta({"@click": f"app.goto_frame({frame})"})))
        if i % 2:
            spans.append(Span(s, e, "on $primary 25%"))
    if fresh is not None:
        s, e = at(max(fresh[0], lo) - lo), at(min(fresh[1], lo + len(shown)) - lo)
        if e > s:
            spans.append(Span(s, e, "bold reverse $accent"))
    parts.append(body.add_spans(spans))  # one pass: stylize() per fragment would be quadratic
    return Content.assemble(*parts)


def _with_breaks(text: str) -> Content:
    """Escaped text where a newline shows as ␊ and also breaks the line (pretty-printed JSON)."""
    lines = text.split("\n")
    out = [safe.content(line, "", "$text-secondary dim") for line in lines]
    return Content("\n").join(
        [*(line + Content.styled("␊", "$text-secondary dim") for line in out[:-1]), out[-1]])


def _display_offsets(text: str) -> Callable[[int], int]:
    """Raw character offset -> offset in the escaped display of :func:`_with_breaks`."""
    if "\n" not in text and not safe.has_unsafe(text):
        return lambda i: i
    widths = [2 if ch == "\n" else len(safe.plain(ch)) for ch in text]
    offsets = [0, *accumulate(widths)]
    return offsets.__getitem__


def lane(call: CallView, timeline: Timeline | None, k: int) -> Content:
    label, color = DRAFT_LABEL[call.draft]
    state = "closed" + (f" @#{call.closed_frame}" if call.closed_frame is not None else "") \
        if call.closed else "open"
    ident = Content.assemble(
        ("id ", "$text-muted"), safe.content(call.id or "—"),
        *((("\ncall_id ", "$text-muted"), safe.content(call.call_id)) if call.call_id else ()),
        ("\n" + call.kind, "$text-muted"), (" · " + state, "$text-muted"),
        (f" · {call.origin}" if call.origin != "raw" else "", "$text-muted"),
    )
    stats = Content.assemble(
        (f"{call.byte_length} B", "bold"), (f" · {call.fragments} fragment"
                                            f"{'' if call.fragments == 1 else 's'}", ""),
        (f" · {call.pieces} pieces" if call.pieces else "", ""),
        (" · draft ", "$text-muted"), (label, f"bold {color}"),
    )
    parts: list[safe.Part] = [ident, "\n"]
    if call.text:
        parts += [argument_text(call, timeline, k), "\n"]
    else:
        parts += [("(no argument text yet)", "$text-muted italic"), "\n"]
    parts.append(stats)
    preview = draft_preview(call.text) if call.decision is None else ""
    if preview:
        parts += ["\n", ("DRAFT (partial parse, not executed) ", "bold $text-warning"),
                  safe.content(preview, "$text-muted")]
    if len(call.anomalies) > MAX_ANOMALIES:
        parts += ["\n", (f"⚠ … {len(call.anomalies) - MAX_ANOMALIES} earlier anomalies (a: next "
                         "anomaly)", "$text-warning")]
    for anomaly in call.anomalies[-MAX_ANOMALIES:]:
        parts += ["\n", (f"⚠ {anomaly.code}: ", "bold $text-warning"),
                  safe.content(safe.short(anomaly.message, 200), "$text-warning")]
    return Content.assemble(*parts)


class Lane(Static):
    """One call's buffer."""

    class Selected(Message):
        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    def __init__(self, key: str) -> None:
        super().__init__(classes="lane")
        self.key = key
        self.shown: CallView | None = None

    def show(self, call: CallView, timeline: Timeline | None, k: int) -> None:
        """Re-render only when the call's state changed (a call view is a frozen value)."""
        if call == self.shown:
            return
        self.shown = call
        name = safe.content(call.name or "(no name yet)", "bold")
        self.border_title = Content.assemble(f"{call.order + 1} ", safe.content(call.key), " · ", name)
        self.border_subtitle = _outcome(call)
        self.set_class(call.fresh is not None, "-fresh")
        self.update(lane(call, timeline, k))

    def on_click(self, event: Click) -> None:
        if event.style.meta.get("@click") is None:
            self.post_message(self.Selected(self.key))


class BuffersPane(VerticalScroll, can_focus=False):
    """Argument buffers at the cursor: lanes mounted as calls appear, hidden before they exist."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.timeline: Timeline | None = None
        self._lanes: dict[str, Lane] = {}
        self._empty = Static(classes="lane-empty")
        self._text = Static(classes="turn-text")

    def compose(self):  # type: ignore[no-untyped-def]
        yield self._text
        yield self._empty
        self._empty.update(Content.styled("No tool call yet at this step.", "$text-muted italic"))

    def load(self, timeline: Timeline) -> None:
        self.timeline = timeline
        for widget in self._lanes.values():
            widget.remove()
        self._lanes.clear()

    def show(self, view: View, selected: str | None) -> None:
        present = {c.key for c in view.calls}
        new = [Lane(c.key) for c in view.calls if c.key not in self._lanes]
        for widget in new:
            self._lanes[widget.key] = widget
        if new:
            self.mount_all(new)
        for key, widget in self._lanes.items():
            widget.display = key in present
        for call in view.calls:
            widget = self._lanes[call.key]
            widget.set_class(call.key == selected, "-selected")
            widget.show(call, self.timeline, view.k)
        self._empty.display = not view.calls
        text = _turn_text(view)
        if not safe.same(text, self._text.content):
            self._text.update(text)
        self._text.display = bool(view.turn.text)
        target = self._lanes.get(selected or "") or next(
            (self._lanes[c.key] for c in view.calls if c.fresh is not None), None)
        if target is not None and target.display:
            self.call_after_refresh(target.scroll_visible, animate=False)


def _outcome(call: CallView) -> Content:
    d = call.decision
    if d is None:
        return Content.styled("waiting", "$text-warning")
    if d.action == "execute":
        return Content.styled("EXECUTED", "bold $text-success")
    return Content.styled(f"REFUSED: {d.reason}", "bold $text-error")


def _turn_text(view: View) -> Content:
    parts: list[safe.Part] = []
    for channel, text in view.turn.text.items():
        tail = text[-240:]
        parts += [(f"{channel}: ", "bold $text-muted"),
                  safe.content(("…" if len(text) > 240 else "") + tail, "$text-muted"), "\n"]
    return Content.assemble(*parts[:-1]) if parts else Content("")
