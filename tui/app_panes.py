"""Panes you can work in: focus one (tab), scroll it (page keys, shift+up/down a line), zoom it
to the whole screen (z), widen or narrow it (< >).

A mixin of :class:`~.app.CallscopeApp`. The panes stay views of the one cursor and never take
the keyboard's focus themselves (the arrow keys move the cursor everywhere); "the focused pane"
is the app's choice of which one the page, zoom and resize keys act on, marked by its border.
"""

from __future__ import annotations

from textual.widget import Widget

from .app_mixin import AppMixin

PANES = ("#frames", "#frame-detail", "#buffers", "#decisions")
"""The panes, in tab order: the frame list, its frame's detail, the buffers, the decisions."""
COLUMN = "#left"
"""The column that holds the frame list and its detail: widened or narrowed with them."""
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
        self.pane_focus = (self.pane_focus + direction) % len(self.panes())
        self._mark_focus()
        if self.screen.maximized is not None:  # (zoomed: the zoom follows the focus)
            self.action_zoom()
            self.action_zoom()

    def action_zoom(self) -> None:
        if self.screen.maximized is not None:
            self.screen.minimize()
            return
        pane = self.focused_pane()
        setattr(pane, "ALLOW_MAXIMIZE", True)  # noqa: B010 (panes never take focus: Textual would refuse)
        self.screen.maximize(pane, container=False)

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
