"""A lane's argument text, drawn: which part is shown, in which styles, as segments per line.

The buffers pane (:mod:`.buffers`) lays lanes out and keeps their rows; this module turns one
call's text at one step into segments, straight from the fragment spans (alternate fragments
shaded, the fresh text in reverse, invisible characters made visible; drawn again with each
fragment's frame in its style to find where a click landed), and measures the same lines
without drawing them.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import jiter
from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style as RichStyle
from textual.content import Content
from textual.strip import Strip
from textual.style import Style

from ...core.inert import json_text
from ...core.lanes import CallView
from ...core.timeline import Timeline
from .. import safe
from .folding import fold_rows
from .rawbytes import cells
from .rows import RowsView

_T = TypeVar("_T")

_NON_ASCII = re.compile(r"[^\x00-\x7f]")

WINDOW = 600
"""Characters of argument text a lane shows at least (the tail, around the newest fragment)."""
ALIGN = 1200
"""Where the shown text starts is a multiple of this many characters: the window stays put while
the text grows by up to ALIGN characters (showing WINDOW to WINDOW + ALIGN of it), so a step
changes the lane's last rows only, not every row (a window sliding by each fragment did)."""
PREVIEW = 400


def draft_preview(text: str) -> str:
    """What a partial-JSON parser makes of the draft (jiter partial mode), compact and bounded."""
    if not text.strip():
        return ""
    try:
        value: Any = jiter.from_json(text.encode("utf-8", "surrogatepass"), partial_mode=True)
    except ValueError as exc:
        return f"(no partial parse: {str(exc)[:80]})"
    shown = json_text(value)  # (a partial parse keeps integers past 64 bits exact)
    return shown if len(shown) <= PREVIEW else shown[:PREVIEW - 1] + "…"


def window(call: CallView) -> tuple[int, str]:
    """(offset, text) of the part of the argument text a lane shows: the tail, or around the
    fresh text when that is earlier."""
    text, fresh = call.text, call.fresh
    lo = max(0, len(text) - WINDOW) // ALIGN * ALIGN
    if fresh is not None and fresh[0] < lo:  # keep the fresh text in the window
        lo = max(0, fresh[0] - 200)
    return lo, text[lo:lo + WINDOW + ALIGN]


def earlier(lo: int) -> Content:
    return Content.styled(f"… {lo} earlier characters …", "$text-muted italic")


class TextStyles:
    """The rich styles of argument text, resolved once per drawing: 8 combinations of fragment
    shading, fresh text and escapes. With ``links``, each fragment's style also carries the
    frame that sent it (``meta["frame"]``), for finding what a click landed on
    (:meth:`.lane.Lane.frame_at`): the pane draws without them, since a style per frame
    cost more than the rest of a row (made, then turned into terminal codes, a few hundred
    times a seek)."""

    def __init__(self, view: RowsView, base: Style, links: bool = False) -> None:
        self.base = base
        shade, new, escape = (view.get_visual_style(f"buffers--{n}", partial=True)
                              for n in ("shade", "new", "escape"))
        # (a visual style drops ``reverse``: the fresh text's is set here)
        fresh = Style(foreground=new.foreground, bold=True, reverse=True)
        self.styles = {
            (odd, new, esc): (base + (shade if odd else Style()) + (escape if esc else Style())
                              + (fresh if new else Style())).rich_style
            for odd in (False, True) for new in (False, True) for esc in (False, True)}
        self.links = links
        self._links: dict[tuple[bool, bool, bool, int], RichStyle] = {}

    def get(self, odd: bool, new: bool, esc: bool, frame: int | None) -> RichStyle:
        style = self.styles[odd, new, esc]
        if frame is None or not self.links:
            return style
        key = (odd, new, esc, frame)
        linked = self._links.get(key)
        if linked is None:
            linked = self._links[key] = style + RichStyle.from_meta({"frame": frame})
        return linked


INNER_ROWS = 512
"""Lane row insides kept (see :func:`inner_rows`)."""


def _held(view: RowsView, name: str, base: Style, make: Callable[[], _T], limit: int) -> _T:
    """What the pane keeps under ``name`` for the current theme and ``base`` (made by ``make``
    when missing); at most ``limit`` (theme, base) pairs, then it starts over."""
    held: dict[tuple[str, Style], _T] = view.__dict__.setdefault(name, {})
    key = (view.app.theme, base)
    value = held.get(key)
    if value is None:
        if len(held) > limit:
            held.clear()
        value = held[key] = make()
    return value


def inner_rows(view: RowsView, base: Style) -> dict[Hashable, tuple[list[Segment], int]]:
    """The pane's drawn lane rows, inside the side borders, by what they show, on ``base``
    (kept while the theme is): a lane whose border turns fresh, or a lane that grew, draws its
    other rows again from these instead of from its text."""
    return _held(view, "_inner_rows", base, dict, 4)


def text_styles(view: RowsView, base: Style) -> TextStyles:
    """The pane's text styles on ``base`` (kept while the theme is)."""
    return _held(view, "_text_styles", base, lambda: TextStyles(view, base), 8)


def argument_lines(call: CallView, timeline: Timeline | None, k: int,
                   st: TextStyles) -> list[list[Segment]]:
    """The raw text (window) as segments, one list per line (a newline shows as ␊ and breaks
    the line): alternate fragments shaded (each with its frame, in styles with links), the
    fresh text in reverse, invisible characters made visible. Built straight from the fragment
    spans, in one pass (a Content with a span or two per fragment cost tens of ms a lane to
    draw)."""
    lo, shown = window(call)
    n = len(shown)
    runs: list[tuple[int, int, bool, int | None]] = []  # (start, end, odd, frame)
    fragments = timeline.calls[call.key].spans(k, lo) if timeline is not None else []
    for i, (start, end, frame) in enumerate(fragments, call.fragments - len(fragments)):
        s, e = max(start, lo) - lo, min(end, lo + n) - lo
        if e > s:
            runs.append((s, e, bool(i % 2), frame))
    fs = fe = -1
    if call.fresh is not None:
        fs, fe = max(call.fresh[0], lo) - lo, min(call.fresh[1], lo + n) - lo
    lines: list[list[Segment]] = [[]]
    if "\n" not in shown and not safe.has_unsafe(shown):
        # The common case (one line, nothing to escape): a segment per run, and up to two more
        # where the fresh text starts and ends inside a run.
        line, get, pos = lines[0], st.get, 0
        for s, e, odd, frame in runs:
            if s > pos:  # (text no fragment carried: never shaded)
                _plain_pieces(line, shown, pos, s, False, None, fs, fe, get)
            _plain_pieces(line, shown, s, e, odd, frame, fs, fe, get)
            pos = e
        if pos < n:
            _plain_pieces(line, shown, pos, n, False, None, fs, fe, get)
    else:
        _mixed_lines(lines, shown, runs, fs, fe, st)
    if lo:
        lines.insert(0, list(earlier(lo).render_segments(st.base)))
    return lines


def argument_row(call: CallView, timeline: Timeline | None, k: int, st: TextStyles,
                 row: int, width: int) -> tuple[list[Segment], int] | None:
    """Folded row ``row`` of the shown text (see :class:`TextRows`)."""
    return TextRows(call, timeline, k).row(st, row, width)


class TextRows:
    """The shown text of one call at one step, drawn a folded row at a time: each row as
    :func:`argument_lines` then :func:`fold_segments` draw it, made from the fragments in that
    row alone, when the text is one line with nothing to escape (the common case). A step
    draws the row or two of a lane that changed, not the whole window (hundreds of fragments).

    A row's characters are found by cells (wide characters count two), the fragments over
    them drawn as :func:`argument_lines` draws them, and the row cut out of those segments
    with ``Segment.divide``, as :func:`fold_segments` cuts it out of the whole line. The
    window, its fragments and its cell offsets are found once, for all the rows drawn."""

    def __init__(self, call: CallView, timeline: Timeline | None, k: int) -> None:
        self.call, self.timeline, self.k = call, timeline, k
        self.lo, self.shown = window(call)
        shown = self.shown
        self.simple = "\n" not in shown and not safe.has_unsafe(shown)
        self.ascii = shown.isascii()
        self.cells = cells(shown) if self.simple else 0
        self._wide: tuple[list[int], list[int], list[int]] | None = None

    def _spans_over(self, a: int, b: int) -> tuple[int, list[tuple[int, int, int | None]]]:
        """The fragments over characters [a, b) of the shown text: the index of the first
        (counted over the call's fragments, whose parity shades it) and their spans."""
        timeline, lo = self.timeline, self.lo
        if timeline is None:
            return 0, []
        return timeline.calls[self.call.key].spans_over(self.k, lo + a, lo + b)

    def _wide_chars(self) -> tuple[list[int], list[int], list[int]]:
        """The non-ASCII characters of the shown text (the only ones that may not be one cell
        wide): their indexes, the cells before each, and each one's cells."""
        if self._wide is None:
            at, before, size, extra = [], [], [], 0
            for match in _NON_ASCII.finditer(self.shown):
                i, width = match.start(), cell_len(match.group())
                at.append(i)
                before.append(i + extra)
                size.append(width)
                extra += width - 1
            self._wide = (at, before, size)
        return self._wide

    def _char_at(self, cell: int) -> int:
        """The index of the character holding cell ``cell`` (of a zero-width one, the next)."""
        if self.ascii:
            return cell
        at, before, size = self._wide_chars()
        m = bisect_right(before, cell) - 1
        if m < 0:  # (ASCII up to there)
            return cell
        if cell < before[m] + size[m]:
            return at[m]
        return at[m] + 1 + cell - before[m] - size[m]  # (ASCII between it and the next)

    def _cell_of(self, char: int) -> int:
        """Cells before character ``char``."""
        if self.ascii:
            return char
        at, before, size = self._wide_chars()
        m = bisect_left(at, char) - 1
        return char if m < 0 else before[m] + size[m] + char - at[m] - 1

    def row(self, st: TextStyles, row: int, width: int) -> tuple[list[Segment], int] | None:
        """Folded row ``row`` of the shown text at ``width`` (None: not the common case)."""
        if not self.simple:
            return None
        shown, lo, total, width = self.shown, self.lo, self.cells, max(width, 1)
        a, b = row * width, min((row + 1) * width, total)
        if fold_rows(width, total) == 1:
            a, b = 0, total  # (a line that fits is one row, as it is)
        if a >= b:
            return [], 0
        # Characters [ia, ib) hold cells [a, b); ia starts at cell ``at`` (<= a: a wide
        # character may straddle a).
        ia, ib = self._char_at(a), min(len(shown), self._char_at(b - 1) + 1)
        at = self._cell_of(ia)
        # (only the fragments over the row: a window holds thousands)
        first, fragments = self._spans_over(ia, ib)
        call = self.call
        fs = fe = -1
        if call.fresh is not None:
            fs, fe = max(call.fresh[0], lo) - lo, min(call.fresh[1], lo + len(shown)) - lo
        line: list[Segment] = []
        get, pos = st.get, ia
        for i, (start, end, frame) in enumerate(fragments, first):
            if pos >= ib:
                break
            s, e = max(max(start, lo) - lo, ia), min(end - lo, ib)
            if e > s:
                if s > pos:  # (text no fragment carried: never shaded)
                    _plain_pieces(line, shown, pos, s, False, None, fs, fe, get)
                _plain_pieces(line, shown, s, e, bool(i % 2), frame, fs, fe, get)
                pos = e
        if pos < ib:
            _plain_pieces(line, shown, pos, ib, False, None, fs, fe, get)
        if at == a and self._cell_of(ib) - at == b - a:
            return line, b - a
        pieces = list(Segment.divide(line, [a - at, b - at]))
        return (pieces[1] if len(pieces) > 1 else []), b - a


def _plain_pieces(line: list[Segment], shown: str, a: int, b: int, odd: bool, frame: int | None,
                  fs: int, fe: int, get: Callable[[bool, bool, bool, int | None], RichStyle]
                  ) -> None:
    """Segments of ``shown[a:b]`` (one run): split where the fresh text [fs, fe) starts or ends."""
    if fe <= fs or fe <= a or fs >= b:
        line.append(Segment(shown[a:b], get(odd, False, False, frame)))
        return
    if a < fs:
        line.append(Segment(shown[a:fs], get(odd, False, False, frame)))
    line.append(Segment(shown[max(a, fs):min(b, fe)], get(odd, True, False, frame)))
    if b > fe:
        line.append(Segment(shown[fe:b], get(odd, False, False, frame)))


def _mixed_lines(lines: list[list[Segment]], shown: str,
                 runs: list[tuple[int, int, bool, int | None]], fs: int, fe: int,
                 st: TextStyles) -> None:
    """The general case: newlines break the line (shown as ␊), invisible characters escaped."""
    n = len(shown)
    cuts = sorted({0, n, *(c for r in runs for c in r[:2]), *((fs, fe) if fe > fs else ())})
    unsafe = safe.has_unsafe(shown)  # (rare: then each run is checked)
    j = 0
    for a, b in zip(cuts, cuts[1:], strict=False):
        while j < len(runs) and runs[j][1] <= a:
            j += 1
        run = runs[j] if j < len(runs) and runs[j][0] <= a else None
        odd, frame = (run[2], run[3]) if run else (False, None)
        new = fs <= a < fe
        for m, piece in enumerate(shown[a:b].split("\n")):
            if m:
                lines[-1].append(Segment("␊", st.get(odd, new, True, frame)))
                lines.append([])
            if not piece:
                continue
            if not unsafe or not safe.has_unsafe(piece):
                lines[-1].append(Segment(piece, st.get(odd, new, False, frame)))
                continue
            for text, esc in safe.pieces(piece):
                lines[-1].append(Segment(text, st.get(odd, new, esc, frame)))


def fold_segments(segments: list[Segment], cells: int | None, width: int
                  ) -> list[tuple[list[Segment], int]]:
    """A line's segments (``cells`` wide) cut into rows of ``width`` cells, as
    :func:`~.folding.fold_strip` cuts a strip, without a strip per row."""
    if cells is None:
        cells = Segment.get_line_length(segments)
    width = max(width, 1)
    want = fold_rows(width, cells)
    if want == 1:
        return [(segments, cells)] if cells <= width else [
            (list(Strip(segments, cells).crop(0, width)), width)]
    cuts = [*range(width, cells, width), cells]
    rows: list[tuple[list[Segment], int]] = []
    pos = 0
    for part, cut in zip(Segment.divide(segments, cuts), cuts, strict=False):
        rows.append((part, cut - pos))
        pos = cut
    return (rows + [([], 0)] * want)[:want]


def text_widths(call: CallView) -> list[int]:
    """Cells of each line :func:`argument_text` draws, without drawing it."""
    lo, shown = window(call)
    lines = shown.split("\n")
    widths = [cells(safe.plain(line)) + 1 for line in lines[:-1]]  # + the ␊
    widths.append(cells(safe.plain(lines[-1])))
    return ([earlier(lo).cell_length] if lo else []) + widths
