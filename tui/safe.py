"""Terminal-safe text: every byte of a stream is untrusted, so nothing reaches the screen as-is.

Stream text may carry terminal escapes (``ESC [ 31 m``, OSC 8 hyperlinks, OSC 52 clipboard
writes), C0/C1 controls, bidirectional overrides that reorder what is shown (U+202E), and
invisible characters (zero-width spaces, BOM, tag characters). Here each one becomes a visible,
inert escape, and the result is always a :class:`~textual.content.Content` built from plain
strings, never parsed as markup, so ``[bold red]`` in a payload is shown as those characters.
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.cells import cell_len, get_character_cell_size
from textual.content import Content, Span
from textual.style import Style

from ..core import inert

Part = Content | tuple[str, "Style | str"] | str
"""A piece for ``Content.assemble``: plain strings are literal text there, never markup."""

UNSAFE = _UNSAFE = inert.UNSAFE
"""Every character that must not reach a terminal raw (defined once, in core/inert.py)."""
escape_char = inert.escape_char
plain = inert.plain


def pieces(text: str) -> Iterator[tuple[str, bool]]:
    """Split ``text`` into (text, is_escape) runs; escapes are already made visible."""
    pos = 0
    for match in _UNSAFE.finditer(text):
        if match.start() > pos:
            yield text[pos:match.start()], False
        yield escape_char(match.group()), True
        pos = match.end()
    if pos < len(text):
        yield text[pos:], False


def has_unsafe(text: str) -> bool:
    return _UNSAFE.search(text) is not None


def content(text: str, style: Style | str = "", escape: Style | str = "dim italic") -> Content:
    """Untrusted text as Content: plain runs in ``style``, escapes in ``escape`` style."""
    if not has_unsafe(text):
        return Content.styled(text, style) if style else Content(text)
    parts: list[tuple[str, Style | str]] = [(run, escape if is_escape else style)
                                            for run, is_escape in pieces(text)]
    return Content.assemble(*parts, strip_control_codes=False)


class Line:
    """Pieces of untrusted text assembled into one Content: what ``Content.assemble`` of
    ``content(text, style, escape)`` for each piece gives (the same text and spans), without
    a Content per piece (a row of the frame list has a dozen)."""

    __slots__ = ("_text", "_spans", "_at", "escape")

    def __init__(self, escape: Style | str = "dim italic") -> None:
        self._text: list[str] = []
        self._spans: list[Span] = []
        self._at = 0
        self.escape = escape

    def add(self, text: str, style: Style | str = "") -> None:
        """``text`` in ``style``, its unsafe characters made visible in the escape style."""
        if not has_unsafe(text):
            self._put(text, style)
            return
        for run, is_escape in pieces(text):
            self._put(run, self.escape if is_escape else style)

    def _put(self, text: str, style: Style | str) -> None:
        if not text:
            return
        self._text.append(text)
        end = self._at + len(text)
        if style:
            self._spans.append(Span(self._at, end, style))
        self._at = end

    def content(self) -> Content:
        return Content("".join(self._text), self._spans)


def lines(text: str, style: Style | str = "", escape: Style | str = "dim italic") -> Content:
    """Like :func:`content`, but a newline breaks the line (for pretty-printed JSON)."""
    return Content("\n").join([content(line, style, escape) for line in text.split("\n")])


def short(text: str, limit: int = 80) -> str:
    """A one-line, bounded, escaped preview."""
    shown = plain(text)
    return shown if len(shown) <= limit else shown[:limit - 1] + "…"


def same(a: object, b: object) -> bool:
    """Content equality including styles (``==`` on Content compares the text only)."""
    return isinstance(a, Content) and isinstance(b, Content) and a.is_same(b)


def elide_middle(text: str, width: int) -> str:
    """``text`` (escaped: :func:`plain`) in at most ``width`` cells: whole, or its start and
    its end with ``…`` between (an id's prefix and its last characters both show)."""
    shown = plain(text)
    span = middle_span(shown, width)
    if span is None:
        return shown
    head, tail = span
    return shown[:head] + "…" + shown[tail:] if width >= 1 else ""


def middle_span(shown: str, width: int) -> tuple[int, int] | None:
    """What :func:`elide_middle` leaves out of ``shown`` (already escaped) to fit ``width``
    cells with ``…`` in its place: the span ``[head, tail)``, or None when it fits whole."""
    if cell_len(shown) <= width:
        return None
    if width <= 1:
        return 0, len(shown)
    room = width - 1
    head, used = 0, 0
    while head < len(shown) and used + get_character_cell_size(shown[head]) <= (room + 1) // 2:
        used += get_character_cell_size(shown[head])
        head += 1
    tail, left = len(shown), room - used
    while tail > head and get_character_cell_size(shown[tail - 1]) <= left:
        left -= get_character_cell_size(shown[tail - 1])
        tail -= 1
    return head, tail
