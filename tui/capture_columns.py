"""The proxy's captures list, fitted to the terminal: no sideways scrolling from 80 cells on.

As the folder list (:mod:`.folder`) does: in a wide terminal every column keeps its width and
the URL takes what is left; in a narrow one (under the wide columns' total) the protocol and
the gate's verdicts are shorter, the size is short (``8.1k``), method and status go under short
labels, and the URL, elided in the middle (its path's start and its end show), takes the rest.
A cell longer than its column ends in ``…``: nothing is cut without a mark.
"""

from __future__ import annotations

from textual.content import Content

from .fitted_list import PADDING, SCROLLBAR
from .folder import short_size

COLUMNS = {"#": 3, "method": 6, "url": 28, "protocol": 19, "status": 6, "bytes": 9, "state": 10,
           "gate": 24}
"""Column names and widths in a wide terminal (the URL's is the least it gets)."""
NARROW_COLUMNS = {"#": 3, "method": 4, "url": 12, "protocol": 12, "status": 4, "bytes": 5,
                  "state": 10, "gate": 14}
NARROW_LABELS = {"method": "meth", "status": "http", "bytes": "size"}


def _room(width: int, columns: dict[str, int]) -> int:
    return width - SCROLLBAR - PADDING * len(columns) - sum(
        w for name, w in columns.items() if name != "url")


def is_narrow(width: int) -> bool:
    return _room(width, COLUMNS) < COLUMNS["url"]


def fitted(width: int) -> dict[str, int]:
    """The columns' widths in a terminal ``width`` cells wide: the URL takes what is left."""
    columns = NARROW_COLUMNS if is_narrow(width) else COLUMNS
    return {**columns, "url": max(columns["url"], _room(width, columns))}


def labels(width: int) -> dict[str, str]:
    """Each column's label at this width."""
    short = NARROW_LABELS if is_narrow(width) else {}
    return {name: short.get(name, name) for name in COLUMNS}


def elide_middle(cell: Content, width: int) -> Content:
    """``cell`` in ``width`` cells: whole, or its start and end with ``…`` between."""
    if cell.cell_length <= width:
        return cell
    head = max((width - 1) // 3, 0)
    tail = max(width - 1 - head, 0)
    return Content.assemble(cell[:head], "…", cell[len(cell) - tail:] if tail else "")


def fit(cells: tuple[Content, ...], widths: dict[str, int], size: int) -> tuple[Content, ...]:
    """A capture's cells (as :meth:`~.captures.Capture.cells` makes them, its byte count
    ``size``) fitted to ``widths``."""
    narrow = widths["bytes"] < COLUMNS["bytes"]
    out: list[Content] = []
    for (name, width), cell in zip(widths.items(), cells, strict=True):
        if name == "url":
            cell = elide_middle(cell, width)
        elif name == "bytes" and narrow:
            cell = Content(short_size(size))
        elif cell.cell_length > width:
            cell = cell.truncate(width, ellipsis=True)
        out.append(cell)
    return tuple(out)
