"""Scroll views without the costs Textual pays for generality: a scrollbar drawn straight to
strips, and a virtual size set without laying out the screen; and a scroll view that tells the
user's scrolls from its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.color import Color as RichColor
from rich.style import Style as RichStyle
from textual.containers import Vertical
from textual.events import Resize
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.strip import Strip
from textual.widget import Widget


class QuickScrollBar(ScrollBar):
    """A vertical scrollbar drawn straight to strips. Textual draws its scrollbars as a Rich
    renderable through a console, then through the styles cache line by line: about 2 ms each
    time one moves, and on a seek every pane's bar moves."""

    _rows: tuple[tuple[object, ...], list[Strip]] | None = None
    _painted: tuple[object, ...] | None = None
    """The look of the bar the last time all of it was drawn."""

    def _bar(self) -> tuple[tuple[object, ...], ScrollBarRender] | None:
        bar = self.render()
        if not isinstance(bar, ScrollBarRender) or not self.vertical:
            return None
        return (self.size.height, self.size.width, bar.virtual_size, bar.window_size,
                bar.position, str(bar.style)), bar

    def _bar_rows(self) -> list[Strip] | None:
        found = self._bar()
        if found is None:
            return None
        key, bar = found
        if self._rows is None or self._rows[0] != key:
            height, width = self.size.height, self.size.width
            style = bar.style if isinstance(bar.style, RichStyle) else RichStyle.parse(str(bar.style))
            segments = bar.render_bar(
                size=height, virtual_size=bar.virtual_size, window_size=bar.window_size,
                position=bar.position, thickness=width, vertical=True,
                back_color=style.bgcolor or RichColor.parse("#555555"),
                bar_color=style.color or RichColor.parse("bright_magenta"))
            self._rows = (key, [Strip([segment], width) for segment in segments.segments])
        return self._rows[1]

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size,
                      layout: bool = True) -> bool:
        return _placed(super()._size_updated, size, virtual_size, container_size)

    def _check_refresh(self) -> None:
        # A repaint of a bar already drawn whole with the look it has now is skipped: a layout
        # moves the bar (its view's new size sets its window and position), then paints every
        # region it changed, this bar's whole, as it is by then; the repaint its reactives
        # asked for meanwhile would come after that paint, as a second one a frame later.
        if self._repaint_required and self._painted is not None:
            found = self._bar()
            if found is not None and found[0] == self._painted:
                self._repaint_required = False
        super()._check_refresh()

    def render_lines(self, crop: Region) -> list[Strip]:
        rows = self._bar_rows()
        if rows is None or len(rows) < crop.bottom:
            self._painted = None
            return super().render_lines(crop)
        assert self._rows is not None
        if crop.y == 0 and crop.bottom == len(rows) and crop.x == 0 and crop.right >= self.size.width:
            self._painted = self._rows[0]
        elif self._painted != self._rows[0]:  # (part of it drawn in another look)
            self._painted = None
        return [rows[y].crop(crop.x, crop.right) for y in range(crop.y, crop.bottom)]


class PlacedColumn(Vertical):
    """A column of panes that never scrolls (``overflow: hidden``): its virtual size is the
    extent of the children the layout just placed, so a change of it needs no layout of its own."""

    DEFAULT_CSS = """
    PlacedColumn { overflow: hidden hidden; }
    """

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size,
                      layout: bool = True) -> bool:
        return _placed(super()._size_updated, size, virtual_size, container_size)


def _placed(size_updated: Callable[[Size, Size, Size, bool], bool], size: Size,
            virtual_size: Size, container_size: Size) -> bool:
    """Textual's ``_size_updated`` for a widget whose virtual size nothing lays out (a
    scrollbar's is its size; a column that does not scroll has its children's extent): the
    layout that gave it the size sets it without asking for another. Textual's reactive would
    lay the whole screen out and paint it a second time, on every zoom and every resize."""
    return size_updated(size, virtual_size, container_size, False)


def set_virtual_size(widget: ScrollView, size: Size) -> None:
    """Set a scroll view's virtual size without a layout of the screen. Setting the reactive
    lays the whole screen out again and repaints the view whole, on every move whose content
    changed height; only the scrollbars depend on it (a layout happens when one comes or goes)."""
    old = widget.virtual_size
    if size != old:
        widget.set_reactive(Widget.virtual_size, size)
        widget._scroll_update(size)
        height, shown = widget.styles.height, widget.size.height
        capped = shown and old.height >= shown and size.height >= shown  # (at its max height)
        if height is not None and height.is_auto and size.height != old.height and not capped:
            widget.refresh(layout=True)  # as tall as its content: that is a layout


def quick_scrollbar(widget: ScrollView) -> ScrollBar:
    """The widget's vertical scrollbar, created as a :class:`QuickScrollBar`."""
    if widget._vertical_scrollbar is None:
        widget._vertical_scrollbar = bar = QuickScrollBar(
            vertical=True, name="vertical", thickness=widget.scrollbar_size_vertical)
        bar.display = False
        widget.app._start_widget(widget, bar)
    return widget._vertical_scrollbar


class PaneScroll(ScrollView):
    """A scroll view that tells the user's scrolls (wheel, keys, the bar) from its own, so that a
    re-layout at another width can leave the view where the user put it rather than where the
    last move scrolled it. Its own: those made inside :meth:`own_scroll` (following the cursor,
    a new layout's virtual size), and Textual's clamp of the scroll to a new size, which comes
    before the pane hears of the resize."""

    _own = False
    _sized = Size(0, 0)  # the size at the last resize the pane heard of

    @contextmanager
    def own_scroll(self) -> Iterator[None]:
        own, self._own = self._own, True
        try:
            yield
        finally:
            self._own = own

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if not self._own and round(old_value) != round(new_value) and self.size == self._sized:
            self.user_scrolled(round(new_value))

    def user_scrolled(self, top: int) -> None:
        """The user scrolled the view: row ``top`` is now its first."""

    def on_resize(self, event: Resize) -> None:
        # (Textual calls this after the subclass's own on_resize.)
        self._sized = self.size

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size,
                      layout: bool = True) -> bool:
        # A view lays its rows out at a new size in the layout that gives it the size, before
        # the paint that follows: Textual paints right after a layout and delivers the Resize
        # event later, so rows laid out on the event would be painted once at the old size
        # (and the corrected paint waits for the screen's next refresh).
        new_size = self._size != size  # (the outer size, as Textual compares it)
        resized = super()._size_updated(size, virtual_size, container_size, layout)
        if resized and self.is_mounted:
            self.resized()
            if new_size:
                # A new size is a new region: this layout's paint draws the view whole, after
                # the rows were laid out just above, so the repaint their layout asked for
                # would be a second paint of the same rows (about a frame after the key).
                self._repaint_required = False
        return resized

    def resized(self) -> None:
        """The view has a new size (called in the layout that gave it, before its paint)."""
