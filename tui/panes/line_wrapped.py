"""A block measured and drawn a logical line at a time, the rows on screen only, its lines made
on demand (:mod:`.line_source`) and its longest lines, past the first screens, measured later.

A tall block (the frame detail: fields, pretty JSON, raw bytes, hex) whose content is new on
every step, wrapped whole, cost tens of ms a step, most of it for rows off screen; a large
frame's few very long lines (a 57 kB ``data:`` line) cost as much again just to count.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections.abc import Callable, Hashable, Iterator, Sequence
from itertools import accumulate
from typing import TYPE_CHECKING, overload

from textual.content import Content
from textual.strip import Strip

from .blocks import Wrapped
from .folding import cells, soft_breaks, soft_wrap_rows, soft_wrap_steps
from .line_source import ContentLines, LineSource

if TYPE_CHECKING:
    from .rows import RowsView

EXACT_ROWS = 256
"""Rows from the top that are always measured at once (a tall screen and a page under it)."""


class LineWrapped(Wrapped):
    """A :class:`.blocks.Wrapped` drawn and measured a logical line at a time.

    The rows are exactly :meth:`Wrapped.lines`': Content.wrap wraps each line of the content
    on its own, and :func:`.folding.soft_breaks` only cuts words longer than the width, so a
    line that fits the width is one row as it is, and only the longer ones are wrapped (each
    with its own soft breaks).

    ``lines``: the logical lines as a :class:`.line_source.LineSource` (made when first
    measured), instead of ``build``'s content split. ``defer``: a line longer than this many
    characters that starts below the first ``exact`` rows is counted as folded at the
    width (an estimate) until :meth:`settle` counts it; None: every line is counted at once.
    The rows drawn are always exact (a line's rows are its whole wrap); only where the rows
    after an estimated line start, and the total, move when it is settled."""

    def __init__(self, key: Hashable, build: Callable[[], Content] | None = None,
                 blank_after: int = 0, hang: Callable[[str], int] | None = None, *,
                 lines: Callable[[], LineSource] | None = None, defer: int | None = None,
                 exact: int = EXACT_ROWS) -> None:
        super().__init__(key, build if build is not None else self._joined, blank_after)
        self._hang = hang
        """The cells a line's wrapped rows hang under (a ``key value`` line: the value's first
        column), from its plain text; 0: none."""
        self._make_lines = lines
        self._lines: LineSource | None = None
        self._defer, self._exact = defer, exact
        self._pieces: dict[tuple[int, int], list[Content]] = {}  # (line, width): its rows
        self._counts: dict[int, list[int]] = {}  # width: the rows of each line
        self._pending: dict[int, list[int]] = {}  # width: the lines estimated (descending)
        self._tops: dict[int, list[int]] = {}  # width: the first row of each line, and the total
        self._counting: dict[int, tuple[Iterator[int], int]] = {}  # width: the line being
        # counted (its last pending line): its pieces still to count, and its rows so far

    def _source(self) -> LineSource:
        if self._lines is None:
            self._lines = (self._make_lines() if self._make_lines is not None
                           else ContentLines(lambda: self.content))
        return self._lines

    def _joined(self) -> Content:
        lines = self._source()
        return Content("\n").join([lines.line(j) for j in range(len(lines))])

    def _line_rows(self, j: int, width: int) -> list[Content]:
        pieces = self._pieces.get((j, width))
        if pieces is None:
            line = self._source().line(j)
            indent = 0 if self._fits(line.plain, width) else self._indent(line.plain, width)
            if self._fits(line.plain, width):
                pieces = [line]
            elif indent:  # (the value wrapped at what is left, its rows under its start)
                rest = line[indent:]
                wrapped = soft_breaks(rest, width - indent).wrap(width - indent) or [Content("")]
                pad = Content(" " * indent)
                pieces = [line[:indent] + wrapped[0], *(pad + piece for piece in wrapped[1:])]
            else:
                pieces = soft_breaks(line, width).wrap(max(width, 1))
            self._pieces[j, width] = pieces
        return pieces

    def _indent(self, plain: str, width: int) -> int:
        """The hanging indent of a line at ``width``: the value's column, when the value keeps
        at least half the width; else none (a key that long: its rows start at the edge)."""
        if self._hang is None or "\t" in plain:
            return 0
        indent = self._hang(plain)
        return indent if 0 < indent <= width // 2 and cells(plain) > indent else 0

    @staticmethod
    def _fits(plain: str, width: int) -> bool:
        return "\t" not in plain and cells(plain) <= width  # (tabs expand first)

    def _count(self, j: int, width: int) -> int:
        """Rows of line ``j`` at ``width``, counted, not wrapped (only the lines on screen are)."""
        return max(1, sum(self._count_steps(j, width)))

    def _count_steps(self, j: int, width: int) -> Iterator[int]:
        """:meth:`_count`'s rows a piece of the line at a time (summed, at least 1)."""
        plain = self._source().plain(j)
        if self._fits(plain, width):
            yield 1
        elif indent := self._indent(plain, width):
            yield from soft_wrap_steps(plain[indent:], width - indent)
        elif "\t" in plain:
            yield soft_wrap_rows(self._source().line(j), width)
        else:
            yield from soft_wrap_steps(plain, width)

    def _line_tops(self, width: int) -> list[int]:
        tops = self._tops.get(width)
        if tops is None:
            lines, defer = self._source(), self._defer
            counts: list[int] = []
            pending: list[int] = []
            total = 0
            for j in range(len(lines)):
                if defer is not None and total >= self._exact and (size := lines.size(j)) > defer:
                    count = -(-size // width)  # (folded at the width: about its rows)
                    pending.append(j)
                else:
                    count = self._count(j, width)
                counts.append(count)
                total += count
            pending.reverse()
            self._counts[width], self._pending[width] = counts, pending
            tops = self._tops[width] = [0, *accumulate(counts)]
        return tops

    def settled(self, width: int) -> bool:
        """Every line's rows at ``width`` are counted (none estimated)."""
        self._line_tops(max(width, 1))
        return not self._pending[max(width, 1)]

    def settle(self, width: int, budget: float = float("inf")) -> bool:
        """Count the estimated lines at ``width``, for about ``budget`` seconds (at least a
        piece of a line: see :func:`.folding.soft_wrap_steps`); True when none is left. Their
        rows, and the total, may move: the view lays the block out again
        (:meth:`.rows.RowsView.remeasure`)."""
        width = max(width, 1)
        self._line_tops(width)
        pending, counts = self._pending[width], self._counts[width]
        deadline = time.perf_counter() + budget
        while pending:
            j = pending[-1]
            counting = self._counting.pop(width, None)
            steps, rows = counting if counting is not None else (self._count_steps(j, width), 0)
            for piece in steps:
                rows += piece
                if time.perf_counter() >= deadline:
                    self._counting[width] = (steps, rows)  # (the rest in the next slice)
                    break
            else:
                counts[j] = max(1, rows)
                pending.pop()
                if time.perf_counter() < deadline:
                    continue
            break
        self._tops[width] = [0, *accumulate(counts)]
        return not pending

    def _text_rows(self, width: int) -> int:
        return max(1, self._line_tops(max(width, 1))[-1])

    def lines(self, width: int) -> list[Content]:
        width = max(width, 1)
        lines = [piece for j in range(len(self._source())) for piece in self._line_rows(j, width)]
        return lines or [Content("")]

    def rows(self, width: int) -> int:
        return self._text_rows(width) + self.blank_after

    def tops(self, width: int) -> Sequence[int]:
        """Each logical line is a unit (a field, a heading, a JSON line, a raw line): a top
        row is never a wrapped line's continuation."""
        tops = self._line_tops(max(width, 1))
        return tops[:-1] or (0,)

    def row_keys(self, width: int) -> Sequence[Hashable]:
        """A line that fits is keyed by what it shows (its text and spans), so a row equal to
        one drawn before (most of the frame detail's fields and JSON lines, from one frame to
        the next) is neither drawn nor refreshed again; a wrapped line's rows by its place
        (line, row in the line). Made per row when asked for (the rows on screen)."""
        return _RowKeys(self, max(width, 1))

    def row_key(self, row: int, width: int) -> Hashable:
        """The key of row ``row`` (see :meth:`row_keys`)."""
        tops = self._line_tops(width)
        if row >= max(1, tops[-1]):
            return ("line-blank", width)
        if tops[-1] == 0:
            return ("line", "", (), width)
        j = bisect_right(tops, row) - 1
        if tops[j + 1] - tops[j] == 1 and self._fits(plain := self._source().plain(j), width):
            return ("line", plain, tuple(self._source().line(j).spans), width)
        return ("line-row", self.key, j, row - tops[j], width)

    def render_row(self, row: int, width: int, view: RowsView) -> Strip:
        tops = self._line_tops(max(width, 1))
        if row >= max(1, tops[-1]):  # (a blank row after the text)
            return Strip.blank(width, view.visual_style.rich_style)
        if tops[-1] == 0:  # (no text: one empty row)
            piece = Content("")
        else:
            j = bisect_right(tops, row) - 1
            pieces = self._line_rows(j, max(width, 1))
            at = row - tops[j]
            piece = pieces[at] if at < len(pieces) else Content("")  # (as counted: never short)
        return Strip(piece.render_segments(view.visual_style), piece.cell_length)

    def render(self, width: int, view: RowsView) -> list[Strip]:
        return [self.render_row(row, width, view) for row in range(self.rows(width))]


class _RowKeys(Sequence[Hashable]):
    """A :class:`LineWrapped`'s row keys at a width, each made when asked for."""

    def __init__(self, block: LineWrapped, width: int) -> None:
        self._block, self._width = block, width

    def __len__(self) -> int:
        return self._block.rows(self._width)

    @overload
    def __getitem__(self, index: int) -> Hashable: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Hashable]: ...

    def __getitem__(self, index: int | slice) -> Hashable | Sequence[Hashable]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._block.row_key(index, self._width)
