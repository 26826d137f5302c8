"""Finished rows kept per content row: a row whose content did not change is never styled again.

Textual paints a widget through its styles cache: every row it is asked for is re-rendered
(border, padding, background, line filters: half a dozen intermediate strips, ~60-100 µs a row)
whenever the widget was refreshed, and a scroll refreshes the whole widget. A step scrolls the
buffers pane to the lane that grew and the frames pane to the current frame, and a layout (the
summary changing height) repaints the screen: most of those rows show what they showed before,
one or a few rows higher or lower.

:class:`PaintCache` keeps the *finished* rows (what the styles cache would return, filters
applied) under a key that says what the row shows (the pane's ``row_key``: block and row in it,
or frame, look and row), so a row that only moved costs a dictionary look-up, and the
compositor gets the same strip object back (its cuts of that strip are cached on the strip).
A row whose key is new is finished the way ``StylesCache.render_line`` finishes a content row
(content cut or padded to the content width, padding, left and right border, line filters),
with the border and padding segments made once per epoch instead of once a row: that is all
it does for these panes (no hatch, tint, text opacity or outline; with any of those the row
goes through Textual's own method). Border rows always do. The finished rows depend on the
widget's size and styles too: those are the cache's *epoch*; when it changes, the cache starts
over.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Protocol

from rich.segment import Segment
from rich.style import Style as RichStyle
from textual._border import get_box
from textual._segment_tools import make_blank
from textual.color import Color
from textual.filter import ANSIToTruecolor, LineFilter
from textual.geometry import Region
from textual.strip import Strip
from textual.style import Style
from textual.widget import Widget

ROWS_PER_HEIGHT = 3
"""Finished rows kept, per row of the widget's height (a screenful and what scrolled off)."""
TRUECOLOR_KEPT = 4096
"""Styles :func:`filtered` remembers as unchanged, at most (the decisions log links each entry)."""


class KeyedRows(Protocol):
    def row_key(self, row: int, width: int) -> Hashable:
        """What content row ``row`` (from the top of the virtual content) shows, drawn
        ``width`` cells wide (the widget's content width)."""
        ...


class PaintCache:
    """A widget's finished rows by content key (insertion-ordered dict used as an LRU)."""

    __slots__ = ("rows", "epoch", "limit", "frame", "truecolor")

    def __init__(self) -> None:
        self.rows: dict[Hashable, Strip] = {}
        self.epoch: tuple[object, ...] | None = None
        self.limit = 64
        self.frame: _Frame | None = None
        """How a content row is finished in this epoch (None: through Textual's method)."""
        self.truecolor: set[RichStyle] = set()
        """Styles the truecolor filter leaves as they are, in this epoch (see :func:`filtered`)."""

    def clear(self) -> None:
        self.rows.clear()
        self.epoch = None
        self.truecolor.clear()


class _Frame:
    """The segments around a content row: border and padding on each side."""

    __slots__ = ("left", "right", "width", "content_width", "inner")

    def __init__(self, left: list[Segment], right: list[Segment], width: int,
                 content_width: int, inner: object) -> None:
        self.left, self.right, self.width = left, right, width
        self.content_width, self.inner = content_width, inner

    def finish(self, line: Strip) -> Strip:
        return Strip(self.segments(line), self.width)

    def segments(self, line: Strip) -> list[Segment]:
        """The finished row's segments (see :meth:`finish`)."""
        line = line.adjust_cell_length(self.content_width, self.inner)  # type: ignore[arg-type]
        return [*self.left, *line, *self.right]


def _frame(widget: Widget, base_background: Color, background: Color,
           opacity: float) -> _Frame | None:
    """The segments StylesCache.render_line puts around a content row, when that is all it
    does for this widget (see the module's docstring)."""
    styles = widget.styles
    if (opacity != 1.0 or styles.text_opacity != 1.0 or styles.tint.a
            or any(edge for edge, _ in styles.outline)
            or (styles.has_rule("hatch") and styles.hatch != "none")):
        return None
    inner, outer = widget._styles_cache.get_inner_outer(base_background, background)
    _, (border_right, right_color), _, (border_left, left_color) = styles.border
    pad_top, pad_right, pad_bottom, pad_left = styles.padding
    blank = inner.rich_style
    left: list[Segment] = []
    right: list[Segment] = []
    if border_left:
        style = Style(foreground=base_background + left_color.multiply_alpha(opacity))
        left.append(get_box(border_left, inner, outer, style)[1][0])
    if pad_left:
        left.append(make_blank(pad_left, blank))
    if pad_right:
        right.append(make_blank(pad_right, blank))
    if border_right:
        style = Style(foreground=base_background + right_color.multiply_alpha(opacity))
        right.append(get_box(border_right, inner, outer, style)[1][2])
    return _Frame(left, right, widget.region.width, widget.content_region.width, blank)


def render_lines(widget: Widget, cache: PaintCache, row_key: KeyedRows, scroll_y: int,
                 crop: Region) -> list[Strip]:
    """What ``Widget.render_lines`` returns (through ``StylesCache.render_widget``), with the
    finished rows taken from ``cache`` when their content key is known."""
    sc = widget._styles_cache
    sc._simple_strip = None
    styles = widget.styles
    size = widget.region.size
    width, height = size
    base_background, background = widget.background_colors
    app = widget.app
    filters = widget.get_line_filters()
    content_size = widget.content_region.size
    padding = styles.padding
    opacity = widget.opacity
    ansi_theme, native_ansi = app.ansi_theme, app.native_ansi_color
    gutter = styles.gutter
    epoch = (size, content_size, padding, base_background, background, styles.border,
             styles.outline, styles.tint, styles.text_opacity, opacity, id(ansi_theme),
             native_ansi, tuple(id(f) for f in filters if f.enabled), app.theme)
    rows = cache.rows
    if epoch != cache.epoch:
        rows.clear()
        cache.truecolor.clear()
        cache.epoch = epoch
        cache.limit = max(64, ROWS_PER_HEIGHT * height)
        cache.frame = _frame(widget, base_background, background, opacity)
    frame = cache.frame
    content_width = content_size.width
    title = subtitle = None
    top, bottom = gutter.top, height - gutter.bottom
    strips: list[Strip] = []
    for y in crop.line_range:
        if top <= y < bottom:
            key: Hashable = row_key.row_key(scroll_y + y - top, content_width)
        else:  # a border or padding row: its labels may change (the pane's title does not)
            key = ("edge", y, str(widget._border_title), str(widget._border_subtitle))
        strip = rows.get(key)
        if strip is not None:
            rows[key] = rows.pop(key)  # most recently used last
        else:
            if frame is not None and top <= y < bottom:
                # One strip for the finished, filtered row: the filters are applied to its
                # segments as Strip.apply_filter applies them, without a strip per stage.
                segments = frame.segments(widget.render_line(y - top))
                for line_filter in filters:
                    segments = filtered(line_filter, segments, background, cache.truecolor)
                strip = Strip(segments, frame.width)
            else:
                if title is None:
                    title, subtitle = _labels(widget, base_background)
                strip = sc.render_line(styles, y, size, content_size, padding, base_background,
                                       background, widget.render_line, title, subtitle,
                                       opacity, ansi_theme, native_ansi)
                for line_filter in filters:
                    strip = strip.apply_filter(line_filter, background)
            rows[key] = strip
            if len(rows) > cache.limit:
                del rows[next(iter(rows))]
        strips.append(strip)
    if crop.column_span != (0, width):
        x1, x2 = crop.column_span
        strips = [strip.crop(x1, x2) for strip in strips]
    if widget.auto_links:  # (as Textual's render_widget: the link under the mouse)
        hover = widget.hover_style
        if hover._link_id and hover._meta and "@click" in hover.meta:
            link_style = widget.link_style_hover
            if link_style:
                strips = [strip.style_links(hover.link_id, link_style) for strip in strips]
    return strips


def filtered(line_filter: LineFilter, segments: list[Segment], background: Color,
             unchanged: set[RichStyle]) -> list[Segment]:
    """``line_filter.apply(segments, background)``, or ``segments`` themselves when the filter
    is Textual's truecolor one (every app has it) and changes none of their styles: a theme's
    colours are truecolor already, and the filter copies every segment of every row drawn.
    ``unchanged``: styles known to be left as they are (kept by the caller, per background)."""
    if type(line_filter) is not ANSIToTruecolor:
        return line_filter.apply(segments, background)
    if len(unchanged) > TRUECOLOR_KEPT:
        unchanged.clear()
    for _, style, control in segments:
        if control is not None:
            return line_filter.apply(segments, background)
        if style is None or style in unchanged:
            continue
        # What ANSIToTruecolor.truecolor_style changes: a colour with no triplet (a terminal
        # colour), and dim text with a colour. A style's links and meta it never looks at, so
        # a link style made per entry (the decisions log's) is checked here, not copied.
        color, bgcolor = style.color, style.bgcolor
        if ((color is not None and (color.triplet is None or style.dim))
                or (bgcolor is not None and bgcolor.triplet is None)):
            return line_filter.apply(segments, background)
        unchanged.add(style)
    return segments


def _labels(widget: Widget, base_background: Color) -> tuple[Any, Any]:
    title, subtitle = widget._border_title, widget._border_subtitle
    return (
        None if title is None else (title, *widget._get_title_style_information(base_background)),
        None if subtitle is None else (
            subtitle, *widget._get_subtitle_style_information(base_background)),
    )
