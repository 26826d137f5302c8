"""The captures list of ``callscope proxy`` in the debugger (:class:`CapturesScreen`): every
capture of the run, updated as they stream, on top of the panes of the capture opened last
(escape comes back to it); enter opens one. The app that feeds it is :class:`.captures.ProxyApp`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, cast

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.widgets import DataTable, Static

from . import safe
from .capture_columns import COLUMNS, fit, fitted, labels
from .capture_model import Capture
from .fitted_list import Cells, FittedListScreen
from .footer import FittingFooter

if TYPE_CHECKING:
    from .captures import ProxyApp


class CapturesScreen(FittedListScreen):
    """Every capture of this proxy run, updated as they stream; enter opens one."""

    BINDINGS = [Binding("escape", "app.back_to_capture", "Back to the open capture", show=True),
                Binding("q", "app.quit", "Quit", show=True)]
    DEFAULT_CSS = """
    CapturesScreen { layout: vertical; }
    CapturesScreen #captures-info { height: auto; padding: 0 1; background: $panel; }
    CapturesScreen #captures { height: 1fr; }
    CapturesScreen #captures-log { height: auto; max-height: 6; padding: 0 1; color: $text-muted; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="captures-info")
        yield DataTable(id="captures", cursor_type="row", zebra_stripes=True, cell_padding=0)
        yield Static(id="captures-log")
        yield FittingFooter()

    def fitted(self, width: int) -> dict[str, int]:
        return fitted(width)

    def labels(self, width: int) -> dict[str, str]:
        return labels(width)

    def rows(self) -> Iterable[tuple[str, Cells]]:
        return ((capture.path, fit(capture.cells(), self.widths, capture.size))
                for capture in cast("ProxyApp", self.app).captures.values())

    def open(self, key: str) -> None:
        cast("ProxyApp", self.app).open_capture(key)

    def show(self, captures: list[Capture], info: Content | None, log: list[str] | None) -> None:
        """Make the rows of ``captures`` again (a cell only where it changed); the info and the
        log lines when they are given (None: as they were)."""
        table = self.query_one(DataTable)
        for capture in captures:
            cells = fit(capture.cells(), self.widths, capture.size)
            if capture.path not in table.rows:
                table.add_row(*cells, key=capture.path)
                continue
            for name, cell in zip(COLUMNS, cells, strict=True):
                if not safe.same(cell, table.get_cell(capture.path, name)):
                    table.update_cell(capture.path, name, cell)
        if info is not None:
            self.query_one("#captures-info", Static).update(info)
        if log is not None:
            self.query_one("#captures-log", Static).update(
                Content("\n").join([safe.content(safe.short(line, 200)) for line in log]))

    def on_screen_resume(self) -> None:
        cast("ProxyApp", self.app)._show_list()  # what changed while it was hidden
