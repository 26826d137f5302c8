"""Terminal-safe text: every byte of a stream is untrusted, so nothing reaches the screen as-is.

Stream text may carry terminal escapes (``ESC [ 31 m``, OSC 8 hyperlinks, OSC 52 clipboard
writes), C0/C1 controls, bidirectional overrides that reorder what is shown (U+202E), and
invisible characters (zero-width spaces, BOM, tag characters). Here each one becomes a visible,
inert escape, and the result is always a :class:`~textual.content.Content` built from plain
strings, never parsed as markup, so ``[bold red]`` in a payload is shown as those characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from textual.content import Content
from textual.style import Style

Part = Content | tuple[str, "Style | str"] | str
"""A piece for ``Content.assemble``: plain strings are literal text there, never markup."""

# Control Pictures for C0 (U+2400 + code), with the conventional glyphs for the common ones.
_NAMED = {0x09: "␉", 0x0A: "␊", 0x0D: "␍", 0x1B: "␛", 0x7F: "␡", 0xFEFF: "⟨BOM⟩"}

_UNSAFE = re.compile(
    "["
    "\x00-\x1f\x7f-\x9f"  # C0, DEL, C1 (CSI/OSC/ST as single code points included)
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e"  # invisible or format characters
    "\u200b-\u200f\u2028-\u202e\u2060-\u206f"  # zero-width, separators, bidi embeddings/isolates
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\ufffe\uffff"  # fillers, variation selectors, BOM
    "\ud800-\udfff"  # lone surrogates (from surrogateescape/surrogatepass decoding)
    "\U000e0000-\U000e0fff"  # tag characters (invisible "ASCII smuggling") and selectors
    "]"
)


UNSAFE = _UNSAFE
"""Every character that must not reach a terminal raw (share it; do not copy it)."""


def escape_char(ch: str) -> str:
    """The visible stand-in for one unsafe character."""
    code = ord(ch)
    if code in _NAMED:
        return _NAMED[code]
    if code < 0x20:
        return chr(0x2400 + code)
    return f"⟨U+{code:04X}⟩"


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


def plain(text: str) -> str:
    """The escaped text as a plain string (for titles, file names in messages, the clipboard
    preview): still never to be parsed as markup."""
    return _UNSAFE.sub(lambda m: escape_char(m.group()), text)


def content(text: str, style: Style | str = "", escape: Style | str = "dim italic") -> Content:
    """Untrusted text as Content: plain runs in ``style``, escapes in ``escape`` style."""
    if not has_unsafe(text):
        return Content.styled(text, style) if style else Content(text)
    parts: list[tuple[str, Style | str]] = [(run, escape if is_escape else style)
                                            for run, is_escape in pieces(text)]
    return Content.assemble(*parts, strip_control_codes=False)


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
