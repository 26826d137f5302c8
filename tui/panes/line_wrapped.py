"""A block measured and drawn a logical line at a time, the rows on screen only."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING

from textual.content import Content
from textual.strip import Strip

from .blocks import Wrapped
from .folding import cells, soft_breaks, soft_wrap_rows

if TYPE_CHECKING:
    from .rows import RowsView


class LineWrapped(Wrapped):
    """A :class:`Wrapped` that is measured and drawn a line at a time, the rows on screen only:
    a tall block (the frame detail: fields, pretty JSON, raw bytes, hex) whose content is new
    on every step, wrapped whole, cost tens of ms a step, most of it for rows off screen.

    The rows are exactly :meth:`Wrapped.lines`': Content.wrap wraps each line of the content
    on its own, and :func:`.folding.soft_breaks` only cuts words longer than the width, so a
    line that fits the width is one row as it is, and only the longer ones are wrapped (each
    with its own soft breaks)."""

    def __init__(self, key: Hashable, build: Callable[[], Content], blank_after: int = 0,
                 hang: Callable[[str], int] | None = None) -> None:
        super().__init__(key, build, blank_after)
        self._hang = hang
        """The cells a line's wrapped rows hang under (a ``key value`` line: the value's first
        column), from its plain text; 0: none."""
        self._split: list[Content] | None = None
        self._pieces: dict[tuple[int, int], list[Content]] = {}  # (line, width): its rows
        self._tops: dict[int, list[int]] = {}  # width: the first row of each line, and the total

    def _logical(self) -> list[Content]:
        if self._split is None:
            content = self.content
            self._split = content.split("\n", allow_blank=True) if content.plain else []
        return self._split

    def _line_rows(self, j: int, width: int) -> list[Content]:
        pieces = self._pieces.get((j, width))
        if pieces is None:
            line = self._logical()[j]
            indent = 0 if self._fits(line, width) else self._indent(line, width)
            if self._fits(line, width):
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

    def _indent(self, line: Content, width: int) -> int:
        """The hanging indent of ``line`` at ``width``: the value's column, when the value keeps
        at least half the width; else none (a key that long: its rows start at the edge)."""
        if self._hang is None or "\t" in line.plain:
            return 0
        indent = self._hang(line.plain)
        return indent if 0 < indent <= width // 2 and line.cell_length > indent else 0

    @staticmethod
    def _fits(line: Content, width: int) -> bool:
        plain = line.plain  # (tabs expand first; Content.cell_length is rich's cell_len)
        return "\t" not in plain and cells(plain) <= width

    def _line_tops(self, width: int) -> list[int]:
        tops = self._tops.get(width)
        if tops is None:
            tops, total = [], 0
            for line in self._logical():
                tops.append(total)
                # (counted, not wrapped: only the lines on screen are)
                if self._fits(line, width):
                    total += 1
                elif indent := self._indent(line, width):
                    total += max(1, soft_wrap_rows(line[indent:], width - indent))
                else:
                    total += soft_wrap_rows(line, width)
            tops.append(total)
            self._tops[width] = tops
        return tops

    def _text_rows(self, width: int) -> int:
        return max(1, self._line_tops(max(width, 1))[-1])

    def lines(self, width: int) -> list[Content]:
        width = max(width, 1)
        lines = [piece for j in range(len(self._logical())) for piece in self._line_rows(j, width)]
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
        the next) is neither drawn nor refreshed again; a wrapped line's rows by position."""
        width = max(width, 1)
        tops = self._line_tops(width)
        keys: list[Hashable] = []
        for j, line in enumerate(self._logical()):
            if tops[j + 1] - tops[j] == 1 and self._fits(line, width):
                keys.append(("line", line.plain, tuple(line.spans), width))
            else:
                keys += [("line-row", self.key, row, width) for row in range(tops[j], tops[j + 1])]
        if not keys:
            keys.append(("line", "", (), width))
        keys += [("line-blank", width)] * self.blank_after
        return keys

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
