"""A list of streams over the debugger (a folder's sessions, the proxy's captures), fitted to
the terminal; enter opens a row in the panes under it, escape or ``l`` comes back.

:class:`FittedListScreen` owns the table's layout: its columns are fitted to the terminal's
width (no sideways scrolling from 80 cells on) and laid out again, with every row, only when a
resize changes the widths. A list says which columns a width gets, their labels, its rows and
what opening a row does. :class:`ListingApp` is the app side: the list on top of the panes, and
the pane keys off while the list shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

from textual.content import Content
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import DataTable

from .app import CallscopeApp
from .commands import DEBUGGER_ACTIONS
from .footer import FittingFooter

PADDING = 1
"""Cells a column takes beyond its width: one blank after it (the tables have no cell padding)."""
SCROLLBAR = 2

Cells = Sequence[Content | str]


class FittedListScreen(Screen[None]):
    """A screen whose one :class:`DataTable` has columns fitted to the terminal's width."""

    def __init__(self) -> None:
        super().__init__()
        self.widths: dict[str, int] = {}

    # -- what a list says ----------------------------------------------------------------------

    def fitted(self, width: int) -> dict[str, int]:
        """Each column's width, in order, in a terminal ``width`` cells wide."""
        raise NotImplementedError

    def labels(self, width: int) -> dict[str, str]:
        """Column labels that differ from the column's name at this width."""
        return {}

    def rows(self) -> Iterable[tuple[str, Cells]]:
        """Every row as (key, cells fitted to :attr:`widths`), in order."""
        raise NotImplementedError

    def open(self, key: str) -> None:
        """Open the row ``key`` (enter on it)."""
        raise NotImplementedError

    # -- layout ----------------------------------------------------------------------------------

    def on_mount(self) -> None:
        self._lay_out(self.app.size.width)
        self.query_one(DataTable).focus()

    def on_resize(self, event: Resize) -> None:
        if self.fitted(event.size.width) != self.widths:
            self._lay_out(event.size.width)

    def _lay_out(self, width: int) -> None:
        """The columns for a terminal ``width`` cells wide, and every row again in them, the
        cursor kept on the row it was on."""
        table = self.query_one(DataTable)
        cursor = table.cursor_row
        table.clear(columns=True)
        self.widths, labels = self.fitted(width), self.labels(width)
        for name, cells in self.widths.items():
            table.add_column(labels.get(name, name), width=cells + PADDING, key=name)
        count = 0
        for key, row in self.rows():
            table.add_row(*row, key=key)
            count += 1
        if count:
            table.move_cursor(row=min(cursor, count - 1))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.open(event.row_key.value)


class ListingApp(CallscopeApp):
    """The debugger with a list on top (:attr:`list_screen`); the panes show the row opened."""

    ITEM: ClassVar[str] = "session"
    """What a row is, as the notices say it."""
    list_screen: FittedListScreen

    def has_open(self) -> bool:
        """Whether a row has been opened (the panes show it)."""
        raise NotImplementedError

    def before_list(self) -> None:
        """Bring the list up to date as it comes back on screen (nothing by default)."""

    def action_captures(self) -> None:
        if self._leaving:  # (asked for before the list was left: it stays)
            self._leaving = False
            self.before_list()
        elif self.screen is not self.list_screen:
            self.before_list()
            self.push_screen(self.list_screen)

    def action_back_to_capture(self) -> None:
        if not self.has_open():
            self.notify(f"No {self.ITEM} open yet: enter opens the one under the cursor.",
                        timeout=2)
        else:
            self.leave_list()

    # The panes' screen is laid out beneath the list (it follows what is opened in it), and
    # the list is left only once that screen has laid out what the panes now show and its
    # footer holds the debugger's keys: popped at once, the list would give way to a frame of
    # the panes drawn before the layout their new rows need (a summary a row too tall) and
    # before the footer's keys (which the list keeps off), each put right a refresh later.

    _leaving = False
    """The list is being left: the debugger's keys apply (the panes' footer lists them)."""

    def leave_list(self) -> None:
        """Show the panes in place of the list (see above), after what was opened in them."""
        if self.screen is not self.list_screen or self._leaving:
            return
        self._leaving = True
        footers = self.default_screen.query(FittingFooter)
        if footers:  # (composed in its own message loop, as a widget's compose must be)
            footers.first().call_later(self._compose_then_leave, footers.first())
        else:
            self.default_screen.call_after_refresh(self._after_layout)

    async def _compose_then_leave(self, footer: FittingFooter) -> None:
        try:
            await footer.recompose()
        finally:
            self.default_screen.call_after_refresh(self._after_layout)

    def _after_layout(self) -> None:
        # (the layout's resizes may ask for one more: a summary's height follows its rows)
        self.default_screen.call_after_refresh(self._pop_list)

    def _pop_list(self) -> None:
        if self._leaving:  # (not when the list was asked for again meanwhile)
            self._leaving = False
            if self.screen is self.list_screen:
                self.pop_screen()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back_to_capture" and not self.has_open():
            return False  # (nothing to go back to: the footer does not offer it)
        if self.screen is self.list_screen and not self._leaving:
            return action not in DEBUGGER_ACTIONS
        return True if action == "captures" else super().check_action(action, parameters)
