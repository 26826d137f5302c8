"""Panes you can work in: focus one (tab), scroll it (page keys, shift+up/down a line), zoom it
alone under the status line (z), widen or narrow it (< >).

A mixin of :class:`~.app.CallscopeApp`. The panes stay views of the one cursor and never take
the keyboard's focus themselves (the arrow keys move the cursor everywhere); "the focused pane"
is the app's choice of which one the page, zoom and resize keys act on, marked by its border.
"""

from __future__ import annotations

from textual import events
from textual.widget import Widget

from .app_mixin import AppMixin

PANES = ("#frames", "#frame-detail", "#buffers", "#decisions")
"""The panes, in tab order: the frame list, its frame's detail, the buffers, the decisions."""
COLUMN = "#left"
"""The column that holds the frame list and its detail: widened or narrowed with them."""
CONTAINER = "#panes"
"""The panes' container (side by side, or a grid in a narrow terminal)."""
MIN_FR, MAX_FR = 1, 6


class PaneActions(AppMixin):
    """The focus, scroll, zoom and resize keys of :class:`~.app.CallscopeApp`."""

    pane_focus: int = 0

    def panes(self) -> list[Widget]:
        found: list[Widget] = []
        for selector in PANES:
            hits = self.query(selector)
            if hits:
                found.append(hits.first())
        return found

    def focused_pane(self) -> Widget:
        panes = self.panes()
        return panes[self.pane_focus % len(panes)]

    def _mark_focus(self) -> None:
        focused = self.focused_pane()
        for pane in self.panes():
            pane.set_class(pane is focused, "-pane-focused")

    def action_focus_pane(self, direction: int) -> None:
        with self.batch_update():
            self.pane_focus = (self.pane_focus + direction) % len(self.panes())
            self._mark_focus()
            if self.zoomed is not None:  # (zoomed: the zoom follows the focus)
                self._unzoom()
                self._zoom(self.focused_pane())

    # A zoom shows the focused pane alone, between the status line (where the cursor is: the
    # arrows still move it) and the footer (its keys still apply), by hiding everything
    # beside it (``display``, set inline on a few widgets, in one batch), not with Textual's
    # maximize: a maximize changes a class of the screen, which restyles all ~90 widgets of it
    # (the stylesheet applied again) before the layout; hidden widgets need only the layout.
    # The panes' container is a row while zoomed: its grid (the narrow layout) would keep
    # the hidden panes' cells empty.

    zoomed: Widget | None = None
    """The pane zoomed (alone under the status line), if one is."""
    _zoom_hidden: tuple[Widget, ...] = ()

    def action_zoom(self) -> None:
        with self.batch_update():
            if self.zoomed is not None:
                self._unzoom()
            else:
                self._zoom(self.focused_pane())

    def _zoom(self, pane: Widget) -> None:
        container = self.query_one(CONTAINER)
        hidden: list[Widget] = []
        node: Widget = pane
        while node is not container and isinstance(node.parent, Widget):
            hidden += [w for w in node.parent.children if w is not node and w.display]
            node = node.parent
        for widget in hidden:
            widget.display = False
        container.styles.inline.layout = "horizontal"  # (inline even where the CSS says so too)
        self.zoomed, self._zoom_hidden = pane, tuple(hidden)

    def _unzoom(self) -> None:
        for widget in self._zoom_hidden:
            widget.display = True
        self.query_one(CONTAINER).styles.clear_rule("layout")
        self.zoomed, self._zoom_hidden = None, ()

    async def on_event(self, event: events.Event) -> None:
        # Escape unzooms first, before any binding of it (a list's escape too), as it does
        # any zoom in Textual.
        if isinstance(event, events.Key) and event.key == "escape" and self.zoomed is not None \
                and self.screen is self.zoomed.screen:
            self.action_zoom()
            return
        await super().on_event(event)

    def _scroller(self) -> Widget:
        pane = self.focused_pane()
        return next((w for w in (pane, *pane.query("*")) if w.allow_vertical_scroll), pane)

    def action_page(self, direction: int) -> None:
        scroller = self._scroller()
        scroller.scroll_page_down() if direction > 0 else scroller.scroll_page_up()

    def action_scroll_line(self, direction: int) -> None:
        scroller = self._scroller()
        scroller.scroll_down() if direction > 0 else scroller.scroll_up()

    def action_resize_pane(self, direction: int) -> None:
        pane = self.focused_pane()
        column = self.query(COLUMN)
        if column and column.first() in pane.ancestors:  # (the list and its detail: their column)
            pane = column.first()
        width = pane.styles.width
        now = int(width.value) if width is not None and width.unit.name == "FRACTION" else 1
        pane.styles.width = f"{max(MIN_FR, min(MAX_FR, now + direction))}fr"
