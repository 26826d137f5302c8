"""The items a :class:`.rows.RowsView` shows: a :class:`Block` knows its height at a width
without drawing itself, and draws its rows only when asked (see :mod:`.rows`); a
:class:`Wrapped` block is content word-wrapped as a Static wraps it."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING

from textual.content import Content
from textual.strip import Strip

from .folding import soft_breaks, wrap_rows

if TYPE_CHECKING:
    from .rows import RowsView


class Block:
    """One item of a :class:`RowsView`. Subclasses set ``key`` and implement both methods."""

    key: Hashable = None

    def rows(self, width: int) -> int:
        """Its height at ``width`` cells (without drawing it)."""
        raise NotImplementedError

    def render(self, width: int, view: RowsView) -> list[Strip]:
        """Exactly ``rows(width)`` rows, ``width`` cells wide at most."""
        raise NotImplementedError

    def row_keys(self, width: int) -> Sequence[Hashable] | None:
        """Optional: a key per row saying what that row shows (equal keys, equal rows, across
        blocks and moves), for a block whose key changes on a move while most of its rows do
        not (a lane that grew). Then rows are drawn one at a time (:meth:`render_row`), only
        those whose key is new. None: the block is drawn whole, its rows keyed by its key."""
        return None

    def render_row(self, row: int, width: int, view: RowsView) -> Strip:
        """Row ``row`` alone (only called when :meth:`row_keys` is not None)."""
        return self.render(width, view)[row]

    def tops(self, width: int) -> Sequence[int]:
        """The rows (from 0, ascending) where a *unit* of the block starts: an entry, a heading
        with its lines, a logical line. A view's top row is never inside a unit, except one
        taller than the view (see :meth:`RowsView.top_for`). By default the block is one unit."""
        return (0,)


class Wrapped(Block):
    """Content word-wrapped to the width (as a Static wraps it), built only when measured or
    drawn: ``build`` is called at most once, and each width is wrapped once."""

    def __init__(self, key: Hashable, build: Callable[[], Content], blank_after: int = 0) -> None:
        self.key, self._build, self.blank_after = key, build, blank_after
        self._wrapped: dict[int, list[Content]] = {}
        self._content: Content | None = None

    @property
    def content(self) -> Content:
        if self._content is None:
            self._content = self._build()
        return self._content

    def lines(self, width: int) -> list[Content]:
        lines = self._wrapped.get(width)
        if lines is None:
            lines = self._wrapped[width] = (soft_breaks(self.content, width).wrap(max(width, 1))
                                            or [Content("")])
        return lines

    def rows(self, width: int) -> int:
        lines = self._wrapped.get(width)  # (counted, not wrapped, unless drawn already)
        count = len(lines) if lines is not None else max(
            1, wrap_rows([soft_breaks(self.content, width)], width))
        return count + self.blank_after

    def render(self, width: int, view: RowsView) -> list[Strip]:
        style = view.visual_style
        strips = [Strip(line.render_segments(style), line.cell_length) for line in self.lines(width)]
        return strips + [Strip.blank(width, view.visual_style.rich_style)] * self.blank_after


class OneRow(Wrapped):
    """Content on one row, cut at the width with an ellipsis: a line whose start says what
    matters, where a wrap would cost a row the view does not have."""

    def __init__(self, key: Hashable, build: Callable[[], Content]) -> None:
        super().__init__(key, build)

    def rows(self, width: int) -> int:
        return 1

    def render(self, width: int, view: RowsView) -> list[Strip]:
        line = self.content.truncate(max(width, 1), ellipsis=True)
        return [Strip(line.render_segments(view.visual_style), line.cell_length)]
