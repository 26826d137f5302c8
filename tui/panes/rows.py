"""A scrolling list of blocks rendered with the line API: the cost of a move is what is on screen.

Whole widgets re-rendered on a move (a Static per lane, one for a long log) make Textual wrap
and lay out everything, on screen or not. A :class:`RowsView` holds a list of :class:`Block`
values instead. Each block has a *key* (equal keys, equal look), knows its height at a width
without drawing itself (cheap), and draws its rows only when one of them is on screen; drawn
rows are kept in an LRU cache under (key, width), as Toolong keeps its lines. A move gives the
view new blocks: unchanged keys cost nothing, and only the rows on screen whose content changed
are refreshed.

Rows are *folded* or *wrapped* at the width by :mod:`.folding`, which counts them without
drawing; the scrollbar and the virtual size come from :mod:`.scrolling`. The blocks themselves
are in :mod:`.blocks` and :mod:`.line_wrapped` (imported from here too).
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections.abc import Hashable, Iterable, Iterator, Sequence

from textual.cache import LRUCache
from textual.events import Resize
from textual.geometry import Region, Size
from textual.scrollbar import ScrollBar
from textual.strip import Strip

from .blocks import Block, Wrapped
from .line_wrapped import LineWrapped
from .paint import PaintCache, render_lines
from .scrolling import PaneScroll, quick_scrollbar, set_virtual_size

__all__ = ["Block", "LineWrapped", "RowsView", "Wrapped"]

AHEAD_SLICE = 0.005
"""Seconds of measuring ahead (:meth:`RowsView.measure_ahead`) between two yields to the event
loop: a key pressed meanwhile waits at most this long."""
AHEAD_DELAY = 0.002
"""Seconds between two slices of measuring ahead (the event loop's own work comes first)."""


class RowsView(PaneScroll, can_focus=False):
    """Blocks top to bottom, drawn lazily, the rows on screen only."""

    DEFAULT_CSS = """
    RowsView { overflow-x: hidden; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None,
                 sticky_scrollbar: bool = True) -> None:
        super().__init__(id=id, classes=classes)
        self.sticky_scrollbar = sticky_scrollbar
        """Once the rows overflow the view, keep the scrollbar (until :meth:`clear_cache`): a
        scrollbar coming or going is a layout of the whole screen and a second paint, which
        every move between a short and a long state would pay."""
        self._stuck = False
        self._stuck_height = 0
        self.blocks: list[Block] = []
        self._keys: list[Hashable] = []
        self._starts: list[int] = [0]  # first row of each block, and the total at the end
        self._width = 0
        self._followed: int | None = None  # the block show_block keeps in view (these blocks)
        self._follow_end = False  # scroll_to_end keeps the end in view (until the user scrolls)
        self._end_top = 0  # the top row that shows the end (see _layout)
        self._laid_height = 0  # the view's height at the last layout
        self._heights: dict[tuple[Hashable, int], int] = {}
        self._row_keys: dict[tuple[Hashable, int], Sequence[Hashable] | None] = {}
        self._tops: dict[tuple[Hashable, int], Sequence[int]] = {}
        # (small caches: every cached row is a Strip with seven caches of its own, which the
        # garbage collector walks on each full collection)
        self._cache: LRUCache[tuple[Hashable, int, str], list[Strip]] = LRUCache(64)
        self._paint = PaintCache()
        self._ahead: Iterator[Block] | None = None  # blocks to measure in idle slices

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        return quick_scrollbar(self)

    # -- model ---------------------------------------------------------------------------------

    def set_blocks(self, blocks: list[Block]) -> bool:
        """Show these blocks; True when anything changed (only changed rows on screen are
        refreshed)."""
        keys = [b.key for b in blocks]
        if keys == self._keys and self._width:
            self.blocks = blocks
            return False
        before = self._on_screen()
        self.blocks, self._keys, self._followed = blocks, keys, None
        self._layout()
        after = self._on_screen()
        # Changed rows on screen, refreshed a run of consecutive rows at a time (a refresh per
        # row cost ~25 µs each, and a lane that turns fresh changes 40 of them).
        top, start = round(self.scroll_y), None
        for y, (old, new) in enumerate([*zip(before, after, strict=False), (None, None)]):
            if old != new:
                if start is None:
                    start = y
            elif start is not None:
                self.refresh_lines(top + start, y - start)
                start = None
        if len(before) != len(after):
            self.refresh()
        return True

    def remeasure(self) -> None:
        """Lay the blocks out again where the view is: a block's rows at this width were
        counted again (a :class:`.line_wrapped.LineWrapped` that settled its estimates)."""
        for key in self._keys:
            for measured in (self._heights, self._row_keys, self._tops):
                measured.pop((key, self._width), None)
        with self.own_scroll():
            self._layout()
        self.refresh()

    def measure_ahead(self, blocks: Iterable[Block]) -> None:
        """Measure ``blocks`` in idle slices of :data:`AHEAD_SLICE` seconds, made one at a time
        as they are measured: blocks that later moves are likely to show (equal keys, equal
        heights) are then laid out from what is known instead of being measured in the move.
        Each is measured at the current width and at the width a scrollbar leaves (the one
        rows that overflow are laid out at). Replaces what was still to measure."""
        first = self._ahead is None
        self._ahead = iter(blocks)
        if first:
            self.set_timer(AHEAD_DELAY, self._measure_slice)

    def _measure_slice(self) -> None:
        blocks = self._ahead
        if blocks is None:
            return
        if not self._width:  # (not laid out yet)
            self.set_timer(AHEAD_DELAY, self._measure_slice)
            return
        widths = sorted({self._width, self.width_with_bar})
        until = time.perf_counter() + AHEAD_SLICE
        for block in blocks:
            for width in widths:
                self._height(block, width)
            if time.perf_counter() > until:
                self.set_timer(AHEAD_DELAY, self._measure_slice)
                return
        self._ahead = None

    def clear_cache(self) -> None:
        """Forget what was drawn and measured (a new timeline is shown), and stop measuring
        ahead."""
        self._ahead = None
        self._heights.clear()
        self._row_keys.clear()
        self._tops.clear()
        self._cache.clear()
        self._paint.clear()
        if self._stuck:
            self._stuck = False
            self.styles.overflow_y = "auto"

    @property
    def width_cells(self) -> int:
        return max(self.scrollable_content_region.width, 8)

    def _layout(self) -> None:
        width = self._width = self.width_cells
        if len(self._heights) > 2048:  # keys of steps long gone
            self._heights.clear()
        starts, total = [0], 0
        for block in self.blocks:
            total += self._height(block, width)
            starts.append(total)
        self._starts = starts
        height = self._laid_height = self.scrollable_content_region.height
        if self.sticky_scrollbar and not self._stuck and total > height > 0:
            self._stuck, self._stuck_height = True, self.size.height
            self.styles.overflow_y = "scroll"
        # The end is shown from a unit's first row (see top_for): when the last rows that fit
        # start inside a unit, the view ends with blank rows, for which the virtual size has
        # room, so scrolling to the end (the user's or scroll_to_end) lands on that row.
        self._end_top = end = self._top_showing_end(total, height)
        set_virtual_size(self, Size(width, max(total, end + height) if total > height > 0
                                    else total))

    @property
    def width_without_bar(self) -> int:
        """The rows' width with no vertical scrollbar, whether or not one is shown now."""
        return max(self.content_region.width, 8)

    @property
    def width_with_bar(self) -> int:
        """The rows' width with a vertical scrollbar, whether or not one is shown now."""
        return max(self.content_region.width - self.styles.scrollbar_size_vertical, 8)

    def rows_at(self, width: int, blocks: Sequence[Block] | None = None) -> int:
        """Rows of ``blocks`` (the view's own by default) at ``width``, measured (not drawn)
        and kept under (key, width) as the layout keeps them."""
        return sum(self._height(block, width) for block in (self.blocks if blocks is None
                                                               else blocks))

    def _height(self, block: Block, width: int) -> int:
        """Rows of ``block`` at ``width``, measured once per (key, width): equal keys, equal
        looks."""
        hk = (block.key, width)
        rows = self._heights.get(hk)
        if rows is None:
            rows = self._heights[hk] = block.rows(width)
        return rows

    def _on_screen(self) -> list[Hashable]:
        """What each row on screen shows: (block key, row in the block)."""
        if not self._width:
            return []
        top, shown = round(self.scroll_y), []
        for row in range(top, top + self.scrollable_content_region.height):
            i = self.block_at(row)
            shown.append(None if i is None else self._row_id(i, row - self._starts[i]))
        return shown

    def _row_id(self, i: int, at: int) -> Hashable:
        """What row ``at`` of block ``i`` shows (at the current width)."""
        hk = (self._keys[i], self._width)
        if hk in self._row_keys:  # (blocks with equal keys have equal rows)
            keys = self._row_keys[hk]
        else:
            if len(self._row_keys) > 256:
                self._row_keys.clear()
            keys = self._row_keys[hk] = self.blocks[i].row_keys(self._width)
        return keys[at] if keys is not None else (self._keys[i], at, self._width)

    def on_resize(self, event: Resize) -> None:
        self.resized()

    def resized(self) -> None:
        if self._stuck and self.size.height != self._stuck_height:
            # Resized (the window, or the summary above the log on a new timeline): whether
            # the rows overflow is decided again.
            self._stuck = False
            self.styles.overflow_y = "auto"
            self._relayout()
        elif self.width_cells != self._width or (
                self._width and self.scrollable_content_region.height != self._laid_height):
            self._relayout()  # (the units a top may cut, and the end's top, are the height's)

    def watch_show_vertical_scrollbar(self) -> None:
        # The scrollbar came or went: the width of the rows changed.
        if self._width:
            self.call_later(self._rewidth)

    def _rewidth(self) -> None:
        if self.width_cells != self._width:
            self._relayout()

    def _relayout(self) -> None:
        """Lay the rows out at the current width, keeping the block :meth:`show_block` showed
        in view: at another width the blocks above it have other heights (a scrollbar that
        comes after a move scrolled makes the rows narrower, which moves the block down)."""
        followed, end = self._followed, self._follow_end
        with self.own_scroll():  # (the new size may clamp the scroll: not the user's doing)
            self._layout()
        if end:
            self.scroll_to_end()
        elif followed is not None and followed < len(self.blocks):
            self.show_block(followed)
        self.refresh()

    def user_scrolled(self, top: int) -> None:
        # A re-layout leaves the view where the user put it instead of going back to the block
        # the last move showed.
        self._followed, self._follow_end = None, False

    # -- geometry ------------------------------------------------------------------------------

    def block_at(self, row: int) -> int | None:
        if row < 0 or row >= self._starts[-1]:
            return None
        return bisect_right(self._starts, row) - 1

    def block_top(self, i: int) -> int:
        return self._starts[i]

    def block_height(self, i: int) -> int:
        return self._starts[i + 1] - self._starts[i]

    def show_block(self, i: int) -> None:
        """Scroll so block ``i`` is in view (its top, when it is taller than the view), and
        keep it there when the rows are laid out again at another width (until new blocks)."""
        self._followed, self._follow_end = i, False
        top, bottom = self._starts[i], self._starts[i + 1]
        y, height = round(self.scroll_y), self.scrollable_content_region.height
        if top >= y and bottom <= y + height:
            return
        # Its bottom in view: from the first unit whose rows down to it fit (never from inside
        # one, which may be a heading: the block fits, so its own first row is such a unit).
        target = top if bottom - top >= height or top < y else self._next_top(bottom - height)
        with self.own_scroll():
            self.scroll_to(y=max(0, target), animate=False, immediate=True)

    def scroll_to_end(self) -> None:
        """Show the last rows, from a unit's first row (see :meth:`top_for`), and keep the end
        in view when the rows are laid out again at another size (until the user scrolls or
        another block is shown)."""
        self._followed, self._follow_end = None, True
        with self.own_scroll():
            self.scroll_to(y=self._end_top, animate=False, immediate=True)

    # -- where the top row may be --------------------------------------------------------------
    #
    # The view's top row is a unit's first row (a block's, or a row a block's tops() names):
    # a unit shown from its middle reads as another, shorter text (a heading's second half, a
    # verdict's evidence without the verdict, a wrapped line's tail). Only a unit taller than
    # the view may be shown from any of its rows, else its middle could never be seen. Every
    # scroll is put on such a row (validate_scroll_y), the user's too, in the direction it
    # went; the end is the first such row from which the last rows fit.

    def _block_tops(self, i: int) -> Sequence[int]:
        hk = (self._keys[i], self._width)
        tops = self._tops.get(hk)
        if tops is None:
            if len(self._tops) > 256:
                self._tops.clear()
            tops = self._tops[hk] = self.blocks[i].tops(self._width) or (0,)
        return tops

    def unit_at(self, row: int) -> tuple[int, int] | None:
        """(first row, row after the last) of the unit row ``row`` is in, or None outside the
        rows."""
        i = self.block_at(row)
        if i is None or i >= len(self.blocks):
            return None
        base, end = self._starts[i], self._starts[i + 1]
        tops = self._block_tops(i)
        j = bisect_right(tops, row - base) - 1
        start = base + tops[max(j, 0)]
        return start, (base + tops[j + 1] if j + 1 < len(tops) else end)

    def _allowed(self, row: int, height: int) -> tuple[int, int] | None:
        """The unit of ``row`` when the top may not be there (None: it may)."""
        unit = self.unit_at(row)
        if unit is None or unit[0] == row or unit[1] - unit[0] > height:
            return None
        return unit

    def _next_top(self, row: int) -> int:
        """The first row from ``row`` on that may be the top."""
        unit = self._allowed(row, self.scrollable_content_region.height)
        return row if unit is None else unit[1]

    def _top_showing_end(self, total: int, height: int) -> int:
        """The top row that shows the end: the last rows that fit, from the first unit whose
        rows down to the end fit; a last unit taller than the view from its first row."""
        row = total - height
        if row <= 0 or height <= 0:
            return 0
        unit = self.unit_at(row)
        if unit is None or unit[0] == row:
            return row
        return unit[1] if unit[1] < total else unit[0]

    def top_for(self, value: float, current: float) -> int:
        """Where the top row goes for a scroll to ``value`` from ``current``: ``value`` when a
        top may be there, else a unit's first row: scrolling down, the last one past
        ``current`` (a page never skips rows), or the next one (a line's scroll moves a unit);
        up, the same mirrored; still (a layout moved the rows), the unit's own."""
        height = self.scrollable_content_region.height
        limit = self.max_scroll_y
        row, now = max(0, min(round(value), limit)), round(current)
        unit = self._allowed(row, height) if self._width else None
        if unit is None:
            return row
        first, after = unit
        if row > now:
            return first if first > now else min(after, limit)
        if row < now:
            return after if after < now else first
        return first

    def validate_scroll_y(self, value: float) -> float:
        value = super().validate_scroll_y(value)
        if self.app.animator.is_being_animated(self, "scroll_y"):
            return value  # (on its way to a target already put on a unit's first row)
        return self.top_for(value, self.scroll_y)

    def validate_scroll_target_y(self, value: float) -> float:
        return self.top_for(super().validate_scroll_target_y(value), self.scroll_y)

    # -- rendering -----------------------------------------------------------------------------

    def strips(self, i: int) -> list[Strip]:
        block = self.blocks[i]
        key = (block.key, self._width, self.app.theme)
        cached = self._cache.get(key)
        if cached is None:
            cached = self._cache[key] = block.render(self._width, self)
        return cached

    def row_key(self, row: int, width: int) -> Hashable:
        """What content row ``row`` shows, ``width`` cells wide (see :mod:`.paint`)."""
        i = self.block_at(row)
        if i is None:
            return ("blank", width)
        return (self._row_id(i, row - self._starts[i]), width)

    def render_lines(self, crop: Region) -> list[Strip]:
        return render_lines(self, self._paint, self, round(self.scroll_y), crop)

    def render_line(self, y: int) -> Strip:
        row = y + round(self.scroll_y)
        width = self.size.width
        i = self.block_at(row)
        if i is None:
            return Strip.blank(width, self.visual_style.rich_style)
        at = row - self._starts[i]
        block = self.blocks[i]
        if self._row_keys.get((self._keys[i], self._width)) is not None:
            strip = block.render_row(at, self._width, self)
        else:
            strips = self.strips(i)
            strip = strips[at] if at < len(strips) else Strip.blank(
                width, self.visual_style.rich_style)
        if strip.cell_length == width:  # (a lane's rows are: no copy)
            return strip
        return strip.crop_extend(0, width, self.visual_style.rich_style)
