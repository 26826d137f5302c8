"""The argument buffers pane: one lane per call, its raw text as reconstructed at the cursor.

A lane shows the call's identity, the raw argument text with the text added by the current frame
highlighted (click any fragment to jump to the frame that carried it), the byte count, the draft
status, and a preview of what a partial parser makes of the draft so far, labelled DRAFT: it is
what the arguments look like, never what a tool will receive.

The pane is a :class:`~.rows.RowsView`: each lane (:mod:`.lane`) is a block drawn with its own
border, measured from its text's widths without drawing it, and drawn only when on screen. A
seek across a 64-call session re-measures 64 lanes (microseconds each) and draws the two or
three in view.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator

from textual.cache import LRUCache
from textual.content import Content
from textual.events import Click
from textual.strip import Strip

from ...core.lanes import CallView
from ...core.timeline import Timeline, View
from .. import safe
from .folding import render, wrap
from .lane import Lane
from .rows import Block, RowsView, Wrapped

TURN_TEXT_ROWS = 6


class TurnText(Block):
    """The assistant's text so far (the tail of each channel), above the lanes."""

    def __init__(self, content: Content) -> None:
        self.content = content
        self.key = ("turn-text", content.plain, tuple(content.spans))
        self._wraps: dict[int, list[Content]] = {}

    def _lines(self, width: int) -> list[Content]:
        lines = self._wraps.get(width)
        if lines is None:  # prose: word-wrapped (inside a cell of padding)
            lines = self._wraps[width] = wrap(self.content.split("\n", allow_blank=True),
                                              width - 2)[:TURN_TEXT_ROWS]
        return lines

    def rows(self, width: int) -> int:
        return len(self._lines(width)) + 1

    def render(self, width: int, view: RowsView) -> list[Strip]:
        style = view.visual_style + view.get_visual_style("buffers--turn", partial=True)
        pad = Strip.blank(1, view.visual_style.rich_style)
        rows = [Strip.join([pad, row]) for row in render(self._lines(width), style)]
        return rows + [Strip.blank(width, view.visual_style.rich_style)]


COMPACT_FROM = 4
"""From this many calls, a compact list of them (one line each) heads the lanes."""


class CallList(Block):
    """One line per call (number, tool, bytes, draft, verdict): the whole turn at a glance when
    its lanes do not fit; a click on a line selects that call's lane.

    A step changes one call's line (its byte count) of 64: each row is keyed by what its call
    shows (:meth:`row_keys`), so only that row is drawn again, and a line's text is made once
    per look (:data:`_CALL_LINES`), not once per call per step."""

    def __init__(self, calls: list[CallView]) -> None:
        self.calls = calls
        self._looks = tuple(_call_look(c) for c in calls)
        self.key = ("call-list", self._looks)

    @property
    def lines(self) -> list[Content]:
        return [_line_of(call, look) for call, look in zip(self.calls, self._looks, strict=True)]

    def rows(self, width: int) -> int:
        return len(self.calls) + 1

    def row_keys(self, width: int) -> list[Hashable]:
        return [*(("call-line", look, width) for look in self._looks), ("call-list-end", width)]

    def render_row(self, row: int, width: int, view: RowsView) -> Strip:
        if row >= len(self.calls):
            return Strip.blank(width, view.visual_style.rich_style)
        line = _line_of(self.calls[row], self._looks[row])
        strip = Strip(line.render_segments(view.visual_style), line.cell_length)
        return Strip.join([Strip.blank(1, view.visual_style.rich_style), strip]).crop(0, width)

    def render(self, width: int, view: RowsView) -> list[Strip]:
        return [self.render_row(row, width, view) for row in range(self.rows(width))]

    def call_at(self, row: int) -> CallView | None:
        return self.calls[row] if 0 <= row < len(self.calls) else None


def _call_look(call: CallView) -> Hashable:
    """Everything :func:`_call_line` shows of a call."""
    d = call.decision
    return (call.order, call.key, call.name, call.byte_length, call.draft,
            None if d is None else (d.action, d.reason))


_CALL_LINES: LRUCache[Hashable, Content] = LRUCache(1024)
"""Call-list lines by look (Content is immutable and styled by name: any pane, any theme)."""


def _line_of(call: CallView, look: Hashable) -> Content:
    line = _CALL_LINES.get(look)
    if line is None:
        line = _CALL_LINES[look] = _call_line(call)
    return line


def _call_line(call: CallView) -> Content:
    verdict = (call.decision.action.upper() + (f" {call.decision.reason}" if call.decision.reason
                                               else "")) if call.decision else "WAIT"
    style = {"EXECUTE": "bold $text-success", "WAIT": "bold $text-warning"}.get(
        verdict.split()[0], "bold $text-error")
    return Content.assemble((f"{call.order + 1:>3} ", "bold"),
                            safe.content(safe.short(call.name or call.key, 28), "bold"),
                            (f"  {call.byte_length} B  {call.draft.value}  ", "$text-muted"),
                            (verdict, style))


EMPTY = "No tool call yet at this step."


def _empty() -> Wrapped:
    """What the pane says before any call: word-wrapped (never cut mid-word in a narrow pane)."""
    return Wrapped(("empty",), lambda: Content.styled(EMPTY, "$text-muted italic"))


class BuffersPane(RowsView):
    """Argument buffers at the cursor: one lane per call that exists by then."""

    COMPONENT_CLASSES = {"buffers--border", "buffers--fresh", "buffers--selected",
                         "buffers--title", "buffers--subtitle", "buffers--turn", "buffers--shade",
                         "buffers--new", "buffers--escape"}
    DEFAULT_CSS = """
    BuffersPane {
        & > .buffers--border { color: $secondary 40%; }
        & > .buffers--fresh { color: $accent; }
        & > .buffers--selected { color: $accent; background: $boost; }
        & > .buffers--title { color: $text; }
        & > .buffers--subtitle { color: $text-muted; }
        & > .buffers--turn { color: $text-muted; }
        & > .buffers--shade { background: $primary 25%; }
        & > .buffers--new { color: $accent; }
        & > .buffers--escape { color: $text-secondary; text-style: dim; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.timeline: Timeline | None = None

    def load(self, timeline: Timeline) -> None:
        self.timeline = timeline
        self.clear_cache()
        self.__dict__.pop("_inner_rows", None)  # (keyed by the timeline's id)
        self.measure_settled()

    def measure_settled(self) -> None:
        """Once the timeline is whole, measure in idle slices the lanes most steps show: each
        call as it stands once its text is whole (it looks the same at every step until it
        closes), once closed (the same until the decisions), and as decided. A seek anywhere
        then lays those lanes out from their known heights: the first seek deep into a
        64-call turn measured 30 to 60 lanes (10-25 ms), of which two or three reach the
        screen."""
        timeline = self.timeline
        if timeline is not None and timeline.closed and len(timeline):
            self.measure_ahead(_settled_lanes(timeline))

    def lanes(self) -> dict[str, Lane]:
        return {b.call.key: b for b in self.blocks if isinstance(b, Lane)}

    def show(self, view: View, selected: str | None) -> None:
        blocks: list[Block] = []
        text = _turn_text(view)
        if view.turn.text:
            blocks.append(TurnText(text))
        if len(view.calls) >= COMPACT_FROM:
            blocks.append(CallList(list(view.calls)))
        lanes = [Lane(call, self.timeline, view.k, call.key == selected) for call in view.calls]
        blocks += lanes if lanes else [_empty()]
        self.set_blocks(blocks)
        target = next((i for i, b in enumerate(blocks) if isinstance(b, Lane) and b.selected),
                       None) if selected else None
        if target is None:
            target = next((i for i, b in enumerate(blocks) if isinstance(b, Lane) and b.fresh),
                          None)
        if target is None:
            # No text added at this step: the call written to last (a seek to such a step
            # left the pane wherever it was, on some other call, and the next step scrolled).
            latest = max(((b.call.last_frame, i) for i, b in enumerate(blocks)
                          if isinstance(b, Lane) and b.call.last_frame is not None),
                         default=None)
            target = None if latest is None else latest[1]
        if target is not None:
            self.show_block(target)

    def on_click(self, event: Click) -> None:
        offset = event.get_content_offset(self)
        row = None if offset is None else offset.y + round(self.scroll_y)
        i = None if row is None else self.block_at(row)
        if i is None or row is None:
            return
        block = self.blocks[i]
        if isinstance(block, Lane):
            assert offset is not None
            frame = block.frame_at(row - self.block_top(i), offset.x, self._width, self)
            # (a fragment goes to the frame that sent it; elsewhere the click selects the lane)
            self.post_message(Lane.Selected(block.call.key) if frame is None
                              else Lane.FragmentClicked(frame))
        elif isinstance(block, CallList):
            call = block.call_at(row - self.block_top(i))
            if call is not None:
                self.post_message(Lane.Selected(call.key))


def _settled_lanes(timeline: Timeline) -> Iterator[Lane]:
    """The lanes of :meth:`BuffersPane.measure_settled`, unselected and with no fresh text (as
    most steps show them: text is fresh only at the steps that add it), the looks most seeks
    meet first."""
    calls = [timeline.calls[key] for key in timeline.call_order]
    last = len(timeline) - 1
    for settled in ((lambda c: c.frag_steps[-1] if c.frag_steps else None),
                    (lambda c: c.closed_step), (lambda c: last)):
        for call in calls:
            k = settled(call)
            if k is not None:
                yield Lane(call.view(k, k), timeline, k, False)  # (anchored at k: none fresh)


def _turn_text(view: View) -> Content:
    parts: list[safe.Part] = []
    for channel, text in view.turn.text.items():
        tail = text[-240:]
        parts += [(f"{channel}: ", "bold $text-muted"),
                  safe.content(("…" if len(text) > 240 else "") + tail, "$text-muted"), "\n"]
    return Content.assemble(*parts[:-1]) if parts else Content("")
