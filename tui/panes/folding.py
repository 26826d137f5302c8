"""Text cut into rows at a width, and rows counted without drawing them.

Rows are *folded* at the width (cut at the cell, as the frames pane folds raw bytes): a line's
row count is then arithmetic on its width, which needs no drawing. Prose (the decisions log,
a lane's head and tail) is *wrapped* at words, as a Static wraps it, and counted by the same
walk rich's ``divide_line`` makes, without building the wrapped lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from rich._wrap import divide_line, re_word
from rich.cells import _is_single_cell_widths, cell_len, chop_cells, get_character_cell_size
from textual.content import Content
from textual.strip import Strip
from textual.style import Style


def fold_rows(width: int, cells: int) -> int:
    """Rows of a line ``cells`` wide, folded at ``width``."""
    return max(1, -(-cells // max(width, 1)))


def fold(lines: Sequence[Content], width: int, style: Style) -> list[Strip]:
    """The rows of ``lines`` folded at ``width`` (each exactly as many as :func:`fold_rows`
    says, so a block's measured height and its drawing always agree)."""
    strips: list[Strip] = []
    for line in lines:
        strips += fold_strip(Strip(line.render_segments(style), line.cell_length), width)
    return strips


def wrap(lines: Sequence[Content], width: int) -> list[Content]:
    """``lines`` word-wrapped at ``width`` (as a Static wraps them); short lines as they are."""
    width = max(width, 1)
    out: list[Content] = []
    for line in lines:
        out += line.wrap(width) if line.cell_length > width else [line]
    return out


def wrap_rows(lines: Sequence[Content], width: int) -> int:
    """``len(wrap(lines, width))`` without building the wrapped lines: Content.wrap finds its
    cuts with rich's ``divide_line`` on the plain text, then builds a Content per piece and
    per word (about 1 ms for a 400-character line; a seek measures 64 lanes)."""
    width = max(width, 1)
    rows = 0
    for line in lines:
        plain = line.plain
        if "\t" in plain:  # (tabs expand first)
            rows += len(line.wrap(width))
        elif "\n" in plain:  # (Content.wrap wraps each line of it)
            rows += sum(divided_rows(part, width) if cell_len(part) > width else 1
                        for part in plain.split("\n"))
        elif line.cell_length <= width:
            rows += 1
        else:
            rows += divided_rows(plain, width)
    return rows


def divided_rows(text: str, width: int) -> int:
    """``len(divide_line(text, width, fold=True)) + 1``: the same walk over the same words,
    with a word of one cell a character (rich's own test) measured by its length and folded
    by arithmetic instead of cell by cell."""
    if width < 2:  # (rich folds a wide character at width 1 its own way)
        return len(divide_line(text, width, fold=True)) + 1
    breaks = offset = 0
    for match in re_word.finditer(text):
        start, end = match.span()
        word = match.group()
        single = _is_single_cell_widths(word)
        size = len(word.rstrip()) if single else cell_len(word.rstrip())
        if width - offset >= size:
            offset += end - start if single else cell_len(word)
        elif size > width:  # folded into pieces of ``width`` cells
            if single:
                pieces = -(-(end - start) // width)
                last = end - start - (pieces - 1) * width
            else:
                folded = _folded(word, width)
                if folded is None:
                    chopped = chop_cells(word, width)
                    folded = len(chopped), cell_len(chopped[-1])
                pieces, last = folded
            breaks += pieces if start else pieces - 1
            offset = last
        elif offset and start:
            breaks += 1
            offset = end - start if single else cell_len(word)
    return breaks + 1


def _folded(word: str, width: int) -> tuple[int, int] | None:
    """(pieces, cells of the last) of ``word`` cut by rich's ``chop_cells`` at ``width``
    (at least 2), when each of its characters is a grapheme of one or two cells (no joiner,
    no zero-width character): the same greedy cut, run over its runs of one-cell characters
    by arithmetic (chop_cells splits graphemes a character at a time: ~0.2 ms for a lane's
    400-character draft preview with an emoji in it, and a seek measures one per call).
    None for any other word."""
    if any(j in word for j in _JOINERS):
        return None
    pieces, size, pos = 1, 0, 0
    for match in (*_NOT_ONE_CELL.finditer(word), None):
        at = len(word) if match is None else match.start()
        size += at - pos  # (the one-cell characters before it)
        if size > width:  # (the line filled, then whole lines of width, then the rest)
            more = -(-(size - width) // width)
            pieces, size = pieces + more, size - width - (more - 1) * width
        if match is None:
            return pieces, size
        cell = get_character_cell_size(match.group())
        if cell == 0:
            return None
        if size + cell > width:
            pieces, size = pieces + 1, cell
        else:
            size += cell
        pos = at + 1
    return pieces, size  # (not reached: the loop ends on its sentinel)


def render(lines: Sequence[Content], style: Style) -> list[Strip]:
    return [Strip(line.render_segments(style), line.cell_length) for line in lines]


def fold_strip(strip: Strip, width: int) -> list[Strip]:
    """One rendered line cut into rows of ``width`` cells. A line is rendered to segments once
    and the segments are cut: folding the Content first would shift every span of a long line
    once per row (a lane's argument text has a span or two per fragment, hundreds a line)."""
    width = max(width, 1)
    cells = strip.cell_length
    want = fold_rows(width, cells)
    if want == 1:
        return [strip.crop(0, width) if cells > width else strip]
    rows = list(strip.divide([*range(width, cells, width), cells]))
    return (rows + [Strip.blank(0)] * want)[:want]


BREAK_AFTER = "._/-,:;"
"""Characters after which a word longer than the width is broken (an event type, a path, an id:
response.function_call_arguments. / delta), rather than at whatever cell the width falls."""
_LONG_WORD = re.compile(r"\S{9,}")


def soft_breaks(content: Content, width: int) -> Content:
    """``content`` with a line break inside each word longer than ``width`` cells, after the
    last of :data:`BREAK_AFTER` that fits (a word without one is left to the usual fold)."""
    cuts = _soft_cuts(content.plain, width)
    if not cuts:
        return content
    return Content("\n").join(content.divide(cuts))


_NOT_ONE_CELL = re.compile(r"[^\x20-\x7e]")
_JOINERS = ("\u200d", "\ufe0f")  # (they change the width of the characters around them)


def cells(text: str) -> int:
    """``cell_len(text)``, without a Python step per character of a long text that is not all
    single-cell (rich sums the cell sizes one character at a time then: 0.3 µs each, ~30 ms
    for a large frame's detail, which has a few accented characters): the printable ASCII
    characters are a cell each, the others are measured as rich measures them."""
    if len(text) < 512 or any(j in text for j in _JOINERS):
        return cell_len(text)
    others = _NOT_ONE_CELL.findall(text)
    return len(text) - len(others) + sum(map(get_character_cell_size, others))


def _soft_cuts(plain: str, width: int) -> list[int]:
    """Where :func:`soft_breaks` breaks ``plain`` (offsets, ascending)."""
    if width < 8 or cells(plain) <= width:
        return []
    additive = not any(j in plain for j in _JOINERS)  # (a piece's cells add up to its word's)
    cuts: list[int] = []
    for match in _LONG_WORD.finditer(plain):
        start, end = match.span()
        rest = cells(plain[start:end])  # (what is left of the word, kept as it is cut: linear)
        while (rest if additive else cell_len(plain[start:end])) > width:
            size = width
            while cell_len(plain[start:start + size]) > width:  # (wide characters)
                size -= 1
            piece = plain[start:start + size]
            at = max(piece.rfind(c) for c in BREAK_AFTER) + 1
            if at <= 0:
                break
            cuts.append(start + at)
            rest -= cell_len(plain[start:start + at])
            start += at
    return cuts


def soft_wrap_rows(line: Content, width: int) -> int:
    """``len(soft_breaks(line, width).wrap(width))`` for a line without a newline, counted on
    its plain text (no Content is divided, joined or wrapped)."""
    plain = line.plain
    if "\t" in plain:  # (tabs expand first)
        return len(soft_breaks(line, width).wrap(max(width, 1)))
    return soft_wrap_plain_rows(plain, width)


def soft_wrap_plain_rows(plain: str, width: int) -> int:
    """:func:`soft_wrap_rows` of a line's plain text (without a tab or a newline)."""
    return sum(soft_wrap_steps(plain, width))


def soft_wrap_steps(plain: str, width: int) -> Iterator[int]:
    """The rows :func:`soft_wrap_plain_rows` counts, a piece between soft breaks at a time (a
    very long line is counted in slices: 57 kB of a frame's raw bytes take 17 ms)."""
    width = max(width, 1)
    bounds = [0, *_soft_cuts(plain, width), len(plain)]
    for a, b in zip(bounds, bounds[1:], strict=False):
        piece = plain[a:b]
        yield 1 if cells(piece) <= width else divided_rows(piece, width)
