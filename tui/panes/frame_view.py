"""The selected frame, beside the frame list: its fields, its data as pretty JSON, its raw bytes
(escapes visible, ┊ where a network chunk boundary fell, ␊ and ␍ for line ends), its hex and
what it did. The cursor's frame, always: browsing the list moves the cursor, and this follows.

The text is :func:`..screens.frame_detail`'s (the enter key's modal shows the same), with the raw
lines drawn as the list's arriving block draws them (:mod:`.frame_text`); its lines are made only
when measured or drawn, once per frame (:mod:`.line_source`, :mod:`.line_wrapped`).
"""

from __future__ import annotations

import re
from collections.abc import Hashable

from textual.timer import Timer

from ...core.aws_eventstream import describe
from ...core.timeline import Timeline, View
from .. import safe
from ..screens import detail_parts, raw_lines
from .frame_text import FrameText, timed
from .line_source import Part, StitchedLines
from .line_wrapped import LineWrapped
from .rows import RowsView, Wrapped

LABEL = 11
"""A field's label is right-aligned in this many cells, then a space, then its value."""
_LABEL = re.compile(r" *[A-Za-z][\w -]*")
LONG_LINE = 2000
"""A detail line longer than this many characters, past the first screens, is counted after the
paint (see :class:`.line_wrapped.LineWrapped`): a large frame's few long lines (its ``data:``
line, a long JSON string) cost as much to count as the rest of the detail to draw."""
EXACT_ROWS = 48
"""Rows from the top of a detail counted at once, at the least: two of the pane's screens."""
KEPT_BLOCKS = 4
"""Details of the last frames shown kept measured (a seek back and forth counts them once)."""
SETTLE_DELAY = 0.03
"""Seconds after a frame is shown before its long lines are counted (the paint goes first)."""
SETTLE_SLICE = 0.008
"""Seconds of counting at a time, so that a key pressed meanwhile waits at most about so long."""


def field_indent(plain: str, label: int = LABEL) -> int:
    """The value's column in a field line (``{label:>11} value``: 12), else 0: wrapped, the
    value's rows hang under its first column, not under the label."""
    if len(plain) > label + 1 and plain[label] == " " and plain[label + 1] != " " \
            and _LABEL.fullmatch(plain[:label]):
        return label + 1
    return 0


class FrameDetailPane(RowsView):
    """The cursor's frame in detail (a view of the app's view, like every pane)."""

    COMPONENT_CLASSES = {"detail--escape", "detail--chunk", "detail--split", "detail--dim"}
    DEFAULT_CSS = """
    FrameDetailPane {
        & > .detail--escape { color: $text-secondary; text-style: dim; }
        & > .detail--chunk { color: $warning; text-style: bold; }
        & > .detail--split { color: $error; text-style: bold reverse; }
        & > .detail--dim { color: $text-muted; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, sticky_scrollbar=False)
        self.timeline: Timeline | None = None
        self.index: int | None = None
        self._shown: tuple[object, ...] | None = None  # (timeline, frame, theme) drawn
        self._view: View | None = None
        self._text = FrameText()
        self._settling: Timer | None = None
        self._blocks: dict[Hashable, LineWrapped] = {}
        self._preparing = False  # the next frame's detail is to be made after the paint

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)

    def _theme_changed(self, _theme: object) -> None:
        if self._view is not None:  # (the text's styles are the theme's: drawn again)
            self.show(self._view)

    def load(self, timeline: Timeline) -> None:
        self.timeline, self.index, self._shown = timeline, None, None
        self._blocks.clear()
        self._text.load(timeline)
        self.clear_cache()

    def show(self, view: View) -> None:
        self._view = view
        index = view.frame.index if view.frame is not None else None
        shown = (id(self.timeline), index, self.app.theme)  # (its styles are the theme's)
        if self.timeline is None or shown == self._shown:
            return
        self._shown = shown
        if not self._text.timed and not self.timeline.closed:  # (a growing stream's times)
            self._text.timed = timed(self.timeline)
        self.index = index
        key = ("frame", *shown)
        self.border_title = "frame detail" if index is None else f"frame #{index}"
        block = self._blocks.pop(key, None) or self._block(key, index)
        if self.timeline.closed:  # (the last few frames shown, counted once: a live frame's
            self._keep(key, block)  # times and effects may be new when it is shown again)
            if index is not None and index + 1 < len(self.timeline.frames) \
                    and not self._preparing:
                self._preparing = True
                self.call_after_refresh(self._prepare_next)
        if self.set_blocks([block]):
            self.show_block(0)
            with self.own_scroll():
                self.scroll_to(y=0, animate=False, immediate=True)
            self._settle_later()

    def _block(self, key: Hashable, index: int | None) -> LineWrapped:
        return LineWrapped(
            key, hang=field_indent, lines=lambda: StitchedLines(self._parts(index)),
            defer=LONG_LINE, exact=max(2 * self.scrollable_content_region.height, EXACT_ROWS))

    def _keep(self, key: Hashable, block: LineWrapped) -> None:
        self._blocks[key] = block
        while len(self._blocks) > KEPT_BLOCKS:
            del self._blocks[next(iter(self._blocks))]

    def _prepare_next(self) -> None:
        """After a frame's paint, while the user reads it: the next frame's detail built and
        its first screens counted (~1 ms), so a step onto it (the commonest move) only draws.
        A recorded stream's only: a live frame's detail may change when shown again."""
        self._preparing = False
        if self.timeline is None or not self.timeline.closed or self.index is None \
                or not self._width or self.index + 1 >= len(self.timeline.frames):
            return
        key = ("frame", id(self.timeline), self.index + 1, self.app.theme)
        if key not in self._blocks:
            block = self._block(key, self.index + 1)
            block.rows(self._width)
            self._keep(key, block)

    def _relayout(self) -> None:
        super()._relayout()
        self._settle_later()  # (at another width, other lines may be estimated)

    def _settle_later(self, delay: float = SETTLE_DELAY) -> None:
        block = self.blocks[0] if self.blocks else None
        if not isinstance(block, LineWrapped) or not self._width or block.settled(self._width):
            return  # (a small frame: all counted at once)
        if self._settling is not None:
            self._settling.stop()
        self._settling = self.set_timer(delay, self._settle)

    def _settle(self, budget: float = SETTLE_SLICE) -> None:
        """Count the rows of the detail's long lines past its first screens (estimated when it
        was shown, so a large frame paints at once), a slice at a time, then lay the detail
        out again with its exact height (the scrollbar settles)."""
        self._settling = None
        block = self.blocks[0] if self.blocks else None
        if not isinstance(block, LineWrapped) or not self._width or block.settled(self._width):
            return
        if block.settle(self._width, budget):
            self.remeasure()
        else:
            self._settle_later(0.002)  # (the next slice after the keys waiting)

    def user_scrolled(self, top: int) -> None:
        super().user_scrolled(top)
        if self._settling is not None:  # (scrolled into the detail: its rows exact now)
            self._settling.stop()
            self.call_later(self._settle, float("inf"))

    def _parts(self, index: int | None) -> list[Part]:
        """Frame ``index``'s detail as parts (:func:`..screens.detail_parts`), its raw lines
        with chunk marks, each made when first measured or drawn."""
        if self.timeline is None or index is None:
            return [("No frame yet: the cursor is before the first one.", "$text-muted")]
        frame = self.timeline.frames[index]
        st = {name: self.get_visual_style(f"detail--{name}")
              for name in ("escape", "chunk", "split", "dim")}
        st["future"] = st["dim"]
        muted = st["dim"] if not frame.dispatch else None
        raw = raw_lines(frame.raw, lambda start, end: self._text.line(
            frame.raw, frame.start, start, end, None, muted, st),
            lambda start, end: self._text.plain(frame.raw, frame.start, start, end))
        detail = detail_parts(self.timeline, index, raw, timed=self._text.timed)
        binary = describe(frame)  # an AWS event-stream message: prelude, headers, checksums
        if not binary:
            return detail
        return [("Event-stream message\n", "bold $text-primary"), *(
            part for label, value in binary
            for part in ((f"{label:>11} ", "$text-muted"), safe.content(value), "\n")), "\n",
            *detail]

    def plain(self) -> str:
        """What the pane says, as text (for tests)."""
        return "\n".join(block.content.plain for block in self.blocks
                         if isinstance(block, Wrapped))
