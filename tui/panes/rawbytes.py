"""Byte-level helpers for showing raw stream bytes: lines with their own line ends, UTF-8
character boundaries, and times as the frames pane and the detail screen print them."""

from __future__ import annotations

import re

from rich.cells import cell_len

_LINES = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)?")
_ASCII_RUNS = re.compile(r"[\x00-\x7f]+")


def cells(text: str) -> int:
    """Terminal cells of ``text`` (already made safe: no controls), as ``rich.cells.cell_len``
    counts them, but only the non-ASCII characters go through its per-character table (a
    frame of JSON is mostly ASCII, and measuring 10^5 frames char by char costs seconds)."""
    if text.isascii():
        return len(text)
    rest = _ASCII_RUNS.sub("", text)
    return len(text) - len(rest) + cell_len(rest)


def line_spans(raw: bytes) -> list[tuple[int, int]]:
    """Byte spans of the frame's lines, each with its own line end."""
    return [m.span() for m in _LINES.finditer(raw) if m.end() > m.start()]


def char_start(raw: bytes, i: int) -> int:
    """Move a byte index back to the start of the UTF-8 character it falls inside, if any."""
    j = i
    while j > 0 and i - j < 3 and 0x80 <= raw[j] < 0xC0:
        j -= 1
    return j if j != i and raw[j] >= 0xC0 else i


def whole_chars(raw: bytes) -> bytes:
    """``raw`` without the first bytes of a UTF-8 character whose last bytes have not arrived."""
    for back in range(1, min(4, len(raw)) + 1):
        byte = raw[-back]
        if byte < 0x80:
            return raw
        if byte >= 0xC0:  # a lead byte: how long is its character?
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return raw[:-back] if back < need else raw
    return raw


def fmt_time(seconds: float | None, sign: str = "+") -> str:
    if seconds is None:
        return ""
    if abs(seconds) < 1:
        return f"{sign}{seconds * 1000:.1f}ms"
    return f"{sign}{seconds:.3f}s"
