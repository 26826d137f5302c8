"""Text as logical lines, each made only when it is measured or drawn.

A tall text (the frame detail: a large frame's pretty JSON and raw bytes, 10^5 characters)
made whole costs tens of ms to assemble and as much again to split into lines, most of it for
lines never on screen. :class:`StitchedLines` holds the text as the parts ``Content.assemble``
would take, some of them :class:`Joined` (many lines, each made on demand), and gives its
logical lines one at a time: line ``j`` is exactly line ``j`` of
``Content.assemble(*parts).split("\\n", allow_blank=True)`` (the same text, the same styles).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from textual.content import Content

from .. import safe


class LineSource(Protocol):
    """Logical lines (no newline inside one), made on demand."""

    def __len__(self) -> int: ...

    def line(self, j: int) -> Content:
        """Line ``j``, made (and kept)."""
        ...

    def plain(self, j: int) -> str:
        """Line ``j``'s plain text (``line(j).plain``), made as cheaply as the source can."""
        ...

    def size(self, j: int) -> int:
        """About as many characters as line ``j`` has, without making it (a line much longer
        than the width is measured later: see :class:`.line_wrapped.LineWrapped`)."""
        ...


class ContentLines:
    """The lines of a whole Content (split when first asked for)."""

    def __init__(self, build: Callable[[], Content]) -> None:
        self._build = build
        self._lines: list[Content] | None = None

    def _split(self) -> list[Content]:
        if self._lines is None:
            content = self._build()
            self._lines = content.split("\n", allow_blank=True) if content.plain else []
        return self._lines

    def __len__(self) -> int:
        return len(self._split())

    def line(self, j: int) -> Content:
        return self._split()[j]

    def plain(self, j: int) -> str:
        return self._split()[j].plain

    def size(self, j: int) -> int:
        return len(self._split()[j].plain)


class Joined:
    """``count`` lines joined by newlines, line ``j`` made by ``make(j)`` when first asked for;
    ``plain(j)`` its plain text and ``size(j)`` its length, when cheaper than making it."""

    def __init__(self, count: int, make: Callable[[int], Content],
                 plain: Callable[[int], str] | None = None,
                 size: Callable[[int], int] | None = None) -> None:
        self.count, self._make, self._plain, self._size = count, make, plain, size
        self._made: dict[int, Content] = {}

    def line(self, j: int) -> Content:
        made = self._made.get(j)
        if made is None:
            made = self._made[j] = self._make(j)
        return made

    def plain(self, j: int) -> str:
        return self._plain(j) if self._plain is not None and j not in self._made else (
            self.line(j).plain)

    def size(self, j: int) -> int:
        return self._size(j) if self._size is not None else len(self.plain(j))

    def content(self) -> Content:
        """The whole text (the lines made, then joined)."""
        return Content("\n").join([self.line(j) for j in range(self.count)])


def text_lines(text: str, style: str = "", escape: str = "dim italic") -> Joined:
    """:func:`..safe.lines` (untrusted text, a newline breaking the line), a line at a time."""
    rows = text.split("\n")
    return Joined(len(rows), lambda j: safe.content(rows[j], style, escape),
                  lambda j: safe.plain(rows[j]), lambda j: len(rows[j]))


Part = safe.Part | Joined
Piece = Content | tuple[Joined, int]
"""A piece of a logical line: a Content, or line ``j`` of a Joined."""


def assemble(parts: Sequence[Part]) -> Content:
    """The whole text of ``parts`` (as ``Content.assemble`` assembles it)."""
    return Content.assemble(*(part.content() if isinstance(part, Joined) else part
                              for part in parts))


class StitchedLines:
    """The logical lines of ``parts``: each a run of pieces (a line may begin in one part and
    end in another: a heading's last line and the first line of what follows)."""

    def __init__(self, parts: Sequence[Part]) -> None:
        self._lines: list[list[Piece]] = []
        self._made: dict[int, Content] = {}
        pending: list[Piece] = []
        run: list[safe.Part] = []  # (consecutive plain parts are assembled together)

        def flush() -> None:
            nonlocal pending
            if not run:
                return
            first, *rest = Content.assemble(*run).split("\n", allow_blank=True)
            run.clear()
            pending.append(first)
            for piece in rest:
                self._lines.append(pending)
                pending = [piece]

        for part in parts:
            if not isinstance(part, Joined):
                run.append(part)
                continue
            flush()
            pending.append((part, 0))
            for j in range(1, part.count):
                self._lines.append(pending)
                pending = [(part, j)]
        flush()
        self._lines.append(pending)
        if len(self._lines) == 1 and not self.size(0):  # (no text: no lines, as ContentLines)
            self._lines.clear()

    def __len__(self) -> int:
        return len(self._lines)

    def line(self, j: int) -> Content:
        made = self._made.get(j)
        if made is None:
            pieces = [piece if isinstance(piece, Content) else piece[0].line(piece[1])
                      for piece in self._lines[j]]
            made = Content("") if not pieces else pieces[0] if len(pieces) == 1 else (
                Content("").join(pieces))
            self._made[j] = made
        return made

    def plain(self, j: int) -> str:
        if j in self._made:
            return self._made[j].plain
        return "".join(piece.plain if isinstance(piece, Content) else piece[0].plain(piece[1])
                       for piece in self._lines[j])

    def size(self, j: int) -> int:
        return sum(len(piece.plain) if isinstance(piece, Content) else piece[0].size(piece[1])
                   for piece in self._lines[j])
