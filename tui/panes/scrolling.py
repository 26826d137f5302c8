"""Scroll views without the costs Textual pays for generality: a scrollbar drawn straight to
strips, and a virtual size set without laying out the screen.
"""

from __future__ import annotations

from rich.color import Color as RichColor
from rich.style import Style as RichStyle
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

    def _bar_rows(self) -> list[Strip] | None:
        bar = self.render()
        if not isinstance(bar, ScrollBarRender) or not self.vertical:
            return None
        height, width = self.size.height, self.size.width
        key = (height, width, bar.virtual_size, bar.window_size, bar.position, str(bar.style))
        if self._rows is None or self._rows[0] != key:
            style = bar.style if isinstance(bar.style, RichStyle) else RichStyle.parse(str(bar.style))
            segments = bar.render_bar(
                size=height, virtual_size=bar.virtual_size, window_size=bar.window_size,
                position=bar.position, thickness=width, vertical=True,
                back_color=style.bgcolor or RichColor.parse("#555555"),
                bar_color=style.color or RichColor.parse("bright_magenta"))
            self._rows = (key, [Strip([segment], width) for segment in segments.segments])
        return self._rows[1]

    def render_lines(self, crop: Region) -> list[Strip]:
        rows = self._bar_rows()
        if rows is None or len(rows) < crop.bottom:
            return super().render_lines(crop)
        return [rows[y].crop(crop.x, crop.right) for y in range(crop.y, crop.bottom)]


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
