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
        if self.screen is not self.list_screen:
            self.before_list()
            self.push_screen(self.list_screen)

    def action_back_to_capture(self) -> None:
        if not self.has_open():
            self.notify(f"No {self.ITEM} open yet: enter opens the one under the cursor.",
                        timeout=2)
        elif self.screen is self.list_screen:
            self.pop_screen()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.screen is self.list_screen:
            return action not in DEBUGGER_ACTIONS
        return True if action == "captures" else super().check_action(action, parameters)
