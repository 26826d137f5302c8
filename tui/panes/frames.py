"""The frame list: one row per SSE frame, rendered lazily with the line API.

A row says which frame (number, stream offset, size), when it completed (since the stream began,
and since the previous frame, as Wireshark's time columns), its event, and what it carried (see
:mod:`.frame_row`); the columns' header is the pane's title. Only the rows on screen are drawn;
a frame's row is cached (LRU, as Toolong caches its lines) under a key that changes only when
that frame's look changes, so moving the cursor re-draws two or three rows, whatever the
session's size. The cursor's frame is highlighted, frames not decoded yet at the cursor are
dimmed, and with the app's filter on only the matching frames are listed. The selected frame's
fields and raw bytes are :mod:`.frame_view`'s, beside this list.

A live stream's timeline grows: :meth:`FramesPane.grow` takes in the frames it added, and the
block still arriving (bytes no frame holds yet) is a dimmed row after the last frame.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import replace

from textual.cache import LRUCache
from textual.content import Content
from textual.events import Click, Resize
from textual.geometry import Region, Size
from textual.message import Message
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.style import Style

from ...core.timeline import Timeline, View
from .frame_row import COMPACT, SPANS, Columns, event_width, row
from .frame_text import FrameText, arriving, timed
from .paint import PaintCache, render_lines
from .rawbytes import line_spans, whole_chars
from .scrolling import PaneScroll, quick_scrollbar, set_virtual_size

GUTTER = 2


class FramesPane(PaneScroll, can_focus=False):
    """The frames, a row each, one model, one cursor: it renders what the app's view says."""

    COMPONENT_CLASSES = {
        "frames--header", "frames--current", "frames--future", "frames--dim", "frames--escape",
        "frames--chunk", "frames--split", "frames--match", "frames--bar", "frames--call",
        "frames--text", "frames--stop", "frames--anomaly", "frames--decision",
    }
    DEFAULT_CSS = """
    FramesPane {
        overflow-x: hidden;
        & > .frames--header { color: $text-primary; text-style: bold; }
        & > .frames--current { background: $primary 35%; color: $text; text-style: bold; }
        & > .frames--future { color: $text-disabled; }
        & > .frames--dim { color: $text-muted; }
        & > .frames--escape { color: $text-secondary; text-style: dim; }
        & > .frames--chunk { color: $warning; text-style: bold; }
        & > .frames--split { color: $error; text-style: bold reverse; }
        & > .frames--match { color: $text-warning; text-style: bold; }
        & > .frames--bar { color: $primary; }
        & > .frames--call { color: $text-accent; text-style: bold; }
        & > .frames--text { color: $text-success; }
        & > .frames--stop { color: $text-warning; text-style: bold; }
        & > .frames--anomaly { color: $text-error; text-style: bold; }
        & > .frames--decision { color: $text-primary; text-style: bold; }
    }
    """

    class FrameSelected(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.timeline: Timeline | None = None
        self.view: View | None = None
        self.matches: frozenset[int] = frozenset()
        self._widths: list[int] = []  # rows per frame (one), as many as the frames taken in
        self.columns = Columns(4, 6, 6, False)
        self._event_width = 0
        self._starts: list[int] = [0]  # first row of each shown frame, and the total at the end
        self._only: list[int] | None = None  # the frames shown when filtering (sorted)
        self._layout_width = 0
        self._cache: LRUCache[tuple[object, ...], list[Strip]] = LRUCache(64)  # screenfuls of frames
        self._paint = PaintCache()  # finished rows (see paint.py)
        self._theme_styles: tuple[str, dict[str, Style]] | None = None
        self._text = FrameText()  # what each frame's rows say
        self._tail = b""  # a growing stream's block still arriving (no frame holds it yet)
        self._tail_start = 0  # its stream offset
        self._tail_cache: tuple[tuple[object, ...], list[Strip]] | None = None
        self._pin_end = False  # following a growing stream: its newest rows stay in view
        self._followed: tuple[int | None, int] | None = None  # (frame, layout) last scrolled to
        self._kept: tuple[int, int] | None = None  # (frame, rows into it) the user scrolled to

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        return quick_scrollbar(self)

    # -- model ---------------------------------------------------------------------------------

    def load(self, timeline: Timeline) -> None:
        """A new timeline (start, cut, rechunk)."""
        self.timeline = timeline
        self._text.load(timeline)
        self._widths = [1] * len(timeline.frames)
        self._event_width = event_width(timeline.frames, 0, timeline.state.protocol)
        self.columns = Columns.of(timeline, self._text.timed, self._event_width)
        self.border_title = self.columns.title()
        self._cache.clear()
        self._paint.clear()  # (its keys are frame indices: of the timeline shown)
        self._only = None
        self._layout_width = 0
        self._pin_end, self._followed, self._kept = False, None, None
        self._take_tail()
        self._relayout()

    def grow(self, *, follow: bool = False) -> None:
        """The timeline grew (a live stream): take in the chunks and frames it added since
        :meth:`load` or the last :meth:`grow`, and the block still arriving.

        Frames are only appended, and a frame is complete before it is indexed (its bytes, chunk
        marks and times are final), so the rows laid out and cached stay valid (unless the
        columns widen): only the new frames are laid out, and the scroll position stays. With ``follow`` (the
        app follows the stream), the newest rows are kept in view while the cursor is on the
        last step."""
        timeline = self.timeline
        if timeline is None:
            return
        self._pin_end = follow
        text = self._text
        text.timed = text.timed or timed(timeline)  # (its chunk boundaries grow with it)
        first = len(self._widths)
        self._event_width = event_width(timeline.frames[first:], self._event_width,
                                        timeline.state.protocol)
        columns = replace(Columns.of(timeline, text.timed, self._event_width),
                          compact=self.columns.compact, spans=self.columns.spans)
        if columns != self.columns:  # timing came, or a column widened: every row changes
            self.columns = columns
            self.border_title = columns.title()
            self._cache.clear()
            self._paint.clear()
        self._widths.extend([1] * (len(timeline.frames) - first))
        self._take_tail()
        if self._layout_width and self._only is None:  # (a filter lays out in show())
            self._starts += range(first + 1, len(self._widths) + 1)
        self._set_size()
        self.refresh()

    def _take_tail(self) -> None:
        """Keep the bytes after the last frame of a stream still arriving (none once closed)."""
        self._tail_start, self._tail = (0, b"") if self.timeline is None else arriving(self.timeline)

    def show(self, view: View, matches: frozenset[int] | None = None,
             only: list[int] | None = None) -> None:
        """Render ``view``; mark ``matches``; with ``only``, show just those frames (a filter)."""
        before, self.view = self.view, view
        everything = before is None or self._tail != b""
        if self.timeline is not None and len(self._widths) < len(self.timeline.frames):
            self.grow()  # the timeline grew since the last refresh (indexing, a live stream)
        if matches is not None and matches != self.matches:
            self.matches, everything = matches, True
        if only != self._only:
            self._only, everything, self._kept = only, True, None
            self._layout_width = 0  # the rows change: lay out again
        if self._relayout() or everything:
            self.refresh()
        else:  # only the frames on screen whose look changed (a step: two or three)
            assert before is not None  # (everything is true when there was no view before)
            self._refresh_changed(before)
        # Scroll only when the cursor's frame or the rows changed: a refresh of a growing
        # stream keeps the scroll position (unless following it).
        if self._pin_end or self._followed != (self._frame_index(), self._layout_width):
            self._kept = None  # a move: the cursor's frame comes before where the user scrolled
            self._follow()

    def _frame_index(self) -> int | None:
        return self.view.frame.index if self.view is not None and self.view.frame else None

    def _shown(self) -> Sequence[int]:
        return range(len(self._widths)) if self._only is None else self._only

    def _refresh_changed(self, before: View) -> None:
        top, height = round(self.scroll_y), self.scrollable_content_region.height
        first, last = self.frame_of_row(top), self.frame_of_row(top + height - 1)
        if first is None:
            self.refresh()
            return
        shown = self._shown()
        lo = self._slot(first)
        hi = self._slot(last) if last is not None else len(shown) - 1
        for slot in range(lo, hi + 1):
            index = shown[slot]
            if self._role(index, before) != self._role(index):
                start = self._starts[slot]
                self.refresh_lines(start, self._starts[slot + 1] - start)

    def _relayout(self) -> bool:
        """Lay the rows out again if the width changed; True if it did."""
        width = max(self.scrollable_content_region.width, GUTTER + 8)
        if width == self._layout_width:
            return False
        self._layout_width = width
        fit = replace(self.columns, compact=width < COMPACT, spans=width >= SPANS)
        if fit != self.columns:  # (the rows' cache keys hold the width)
            self.columns = fit
            self.border_title = fit.title()
        self._starts = list(range(len(self._shown()) + 1))
        self._cache.clear()
        with self.own_scroll():
            self._set_size()
            if self._kept is None:
                self._followed = None  # the rows moved: find the current frame again
            else:  # the user's top frame stays on top, where the rows of a new width put it
                frame, into = self._kept
                slot = self._slot(frame)
                rows = self._starts[slot + 1] - self._starts[slot]
                self.scroll_to(y=self._starts[slot] + min(into, rows - 1), animate=False,
                               immediate=True)
                self._followed = (self._frame_index(), width)
        return True

    def _set_size(self) -> None:
        set_virtual_size(self, Size(self._layout_width,
                                    self._starts[-1] + len(self._tail_strips())))

    def watch_show_vertical_scrollbar(self) -> None:
        # The scrollbar comes (a growing stream got taller than the pane) or goes: no Resize
        # event says so, but the width of the rows changed: lay them out again.
        if self._layout_width:
            self.call_later(self._scrollbar_changed)

    def _scrollbar_changed(self) -> None:
        before = self._layout_width
        self._relayout()
        if self._layout_width != before:
            self.refresh()
            self._follow()

    def on_resize(self, event: Resize) -> None:
        self.resized()

    def resized(self) -> None:
        self._relayout()
        self._follow()

    def _slot(self, index: int) -> int:
        """The position of frame ``index`` among the shown frames (or of the last one before it)."""
        if self._only is None:
            return index
        return max(bisect_right(self._only, index) - 1, 0)

    def row_of_frame(self, index: int) -> int:
        return self._starts[self._slot(index)]

    def frame_of_row(self, row: int) -> int | None:
        if not self._widths or row < 0 or row >= self._starts[-1]:
            return None
        return self._shown()[bisect_right(self._starts, row) - 1]

    def _follow(self) -> None:
        """Keep the current frame's row on screen (with a filter: the nearest shown one), or
        the top before the first frame; following a growing stream at its last step, show its
        newest rows too (as tail -f)."""
        if self.view is None or not self.size.height or self._kept:
            return
        self._followed = (self._frame_index(), self._layout_width)
        row = 0 if self.view.frame is None else self.row_of_frame(self.view.frame.index)
        top, height = round(self.scroll_y), self.scrollable_content_region.height
        if self._pin_end and self.timeline is not None and self.view.k == len(self.timeline) - 1:
            y = max(0, min(row, self.virtual_size.height - height))
            if y != top:
                with self.own_scroll():
                    self.scroll_to(y=y, animate=False, immediate=True)
        elif not top <= row < top + height:
            with self.own_scroll():
                self.scroll_to(y=max(0, row - height // 3), animate=False, immediate=True)

    def user_scrolled(self, top: int) -> None:
        # A re-layout (a resize, the scrollbar coming or going) keeps this frame on top instead
        # of going back to the cursor's, until the cursor moves to another frame.
        frame = self.frame_of_row(top)
        self._kept = None if frame is None else (frame, top - self.row_of_frame(frame))

    def on_click(self, event: Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        index = self.frame_of_row(offset.y + round(self.scroll_y))
        if index is not None:
            self.post_message(self.FrameSelected(index))

    # -- rendering -----------------------------------------------------------------------------

    def row_key(self, row: int, width: int) -> tuple[object, ...]:
        """What content row ``row`` shows, ``width`` cells wide (see :mod:`.paint`): the frame,
        its look, the row."""
        index = self.frame_of_row(row)
        if index is None or self.timeline is None:
            tail = self._tail_strips()
            at = row - self._starts[-1]
            if 0 <= at < len(tail) and self._tail_cache is not None:
                return ("tail", self._tail_cache[0], at, width)
            return ("blank", width)
        role, partial = self._role(index)
        return (index, self._layout_width, role, partial, index in self.matches,
                row - self._starts[self._slot(index)], width)

    def render_lines(self, crop: Region) -> list[Strip]:
        return render_lines(self, self._paint, self, round(self.scroll_y), crop)

    def render_line(self, y: int) -> Strip:
        row = y + round(self.scroll_y)
        width = self.size.width
        index = self.frame_of_row(row)
        if index is None or self.timeline is None:
            tail = self._tail_strips()
            if 0 <= row - self._starts[-1] < len(tail):
                return tail[row - self._starts[-1]].crop_extend(0, width, self.visual_style.rich_style)
            return Strip.blank(width, self.visual_style.rich_style)
        strips = self._frame_strips(index)
        strip = strips[row - self._starts[self._slot(index)]]
        return strip.crop_extend(0, width, self.visual_style.rich_style)

    def _role(self, index: int, view: View | None = None) -> tuple[str, int | None]:
        """How frame ``index`` looks at ``view`` (by default: the one shown)."""
        view = view or self.view
        if view is None:
            return "past", None
        frame = self.timeline.frames[index]  # type: ignore[union-attr]
        current = view.frame.index if view.frame is not None else -1
        if index == current:
            return "current", None
        if index < view.frames_seen:
            return "past", None
        # Not yet a frame at this step, but its bytes may have arrived (a chunk arrives before the
        # decoder completes the frames in it): arrived bytes are drawn normally, the rest dimmed.
        if view.received >= frame.end:
            return "arrived", None
        return "future", max(view.received, frame.start)

    def _frame_strips(self, index: int) -> list[Strip]:
        role, partial = self._role(index)
        key = (index, self._layout_width, role, partial, index in self.matches, self.app.theme)
        cached = self._cache.get(key)
        if cached is None:
            cached = self._cache[key] = self._render_frame(index, role, partial)
        return cached

    def _styles(self) -> dict[str, Style]:
        """The component styles, resolved once per theme (CSS look-ups for every row drawn)."""
        theme = self.app.theme
        if self._theme_styles is None or self._theme_styles[0] != theme:
            self._theme_styles = (theme, {name: self.get_visual_style(f"frames--{name}") for name in (
                "header", "current", "future", "dim", "escape", "chunk", "split", "match", "bar",
                "call", "text", "stop", "anomaly", "decision")})
        return self._theme_styles[1]

    def _render_frame(self, index: int, role: str, partial: int | None) -> list[Strip]:
        """The frame's row (one), as wide as it is: the pane crops it."""
        assert self.timeline is not None
        st = self._styles()
        # The gutter: a bar on the current frame, a diamond on search matches.
        gutter = (("▌" if role == "current" else " ", st["bar"]),
                  ("◆" if index in self.matches else " ", st["match"]))
        base = {"current": st["current"], "future": st["future"], "arrived": st["dim"]}.get(
            role, Style())
        line = row(self.timeline, index, self.columns, base, index in self.matches, st,
                   self._layout_width - GUTTER, gutter)
        return [Strip(line.render_segments(self.visual_style), line.cell_length)]

    def _tail_strips(self) -> list[Strip]:
        """The row of the block still arriving: a header and its bytes so far, all dimmed
        (none while a filter shows only matching frames)."""
        if not self._tail or self._only is not None or not self._layout_width:
            return []
        assert self.timeline is not None
        origin, end = self._tail_start, self._tail_start + len(self._tail)
        key = (origin, end, self._layout_width, self.app.theme)
        if self._tail_cache is not None and self._tail_cache[0] == key:
            return self._tail_cache[1]
        raw = whole_chars(self._tail)
        future, escape = (self.get_visual_style(f"frames--{n}") for n in ("future", "escape"))
        st = {"future": future, "escape": escape, "chunk": future, "split": future}
        header = Content.styled(f"  #{len(self.timeline.frames)} arriving  {origin}–{end} "
                                f"({len(self._tail)} B so far)  ", future)
        text = self._text
        line = Content.assemble(header, *(text.line(raw, origin, start, end, None, future, st)
                                          for start, end in line_spans(raw)))
        strips = [Strip(line.render_segments(self.visual_style), line.cell_length)]
        self._tail_cache = (key, strips)
        return strips
