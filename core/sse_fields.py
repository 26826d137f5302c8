"""An SSE block's lines read as fields (WHATWG event-stream interpretation, HTML Living Standard
§9.2.6), and the two block shapes nearly every provider frame has, read without the field loop.

Pure functions of a block's text: the decoder (:mod:`.sse`) keeps the state that outlives a
block (the last event id), and :mod:`.frame_columns` remakes frames with :func:`common_shape`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

SPLIT_LINES = re.compile("\r\n|\r|\n")

Shape = tuple[tuple[str, ...], str | None, str]
"""A block's lines, event name and data."""


class Fields(NamedTuple):
    event: str | None
    data: Sequence[str]
    comments: tuple[str, ...]
    retry: int | None
    last_id: str | None = None
    """The block's last valid ``id`` value, None when it sets none (the id persists on the
    decoder, so a block without one keeps the previous block's)."""


NO_FIELDS = Fields(None, (), (), None)


def read_fields(lines: Sequence[str]) -> Fields:
    """Read a block's fields."""
    event: str | None = None
    data: list[str] = []
    comments: list[str] = []
    retry: int | None = None
    last_id: str | None = None
    for line in lines:
        if line.startswith("data:"):  # nearly every line: no partition needed
            data.append(line[6:] if line.startswith(" ", 5) else line[5:])
            continue
        if not line:
            continue
        if line[0] == ":":
            comments.append(line[1:])
            continue
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
        elif name == "id":
            if "\x00" not in value:
                last_id = value
        elif name == "retry":
            # All ASCII digits, as the standard says. Values too long for int() (see
            # sys.get_int_max_str_digits) are ignored: hostile input never raises.
            if value.isascii() and value.isdigit():
                try:
                    retry = int(value)
                except ValueError:
                    pass
        # Other field names are ignored, as the standard says; the raw line stays visible.
    return Fields(event, data, tuple(comments), retry, last_id)


def common_shape(text: str) -> Shape | None:
    """Lines, event and data of the two shapes nearly every provider frame has, ``data: X`` and
    ``event: E`` + ``data: X`` (no comment, id or retry), read without the general field loop;
    None for anything else. ``text`` is a block's lines, LF-separated, without the blank line."""
    nl = text.find("\n")
    if nl < 0:
        return ((text, ""), None, text[6:]) if text.startswith("data: ") else None
    if (text.startswith("event: ") and text.startswith("data: ", nl + 1)
            and text.find("\n", nl + 1) < 0):
        return (text[:nl], text[nl + 1:], ""), text[7:nl], text[nl + 7:]
    return None


def big_shape(data: bytes, start: int, end: int) -> Shape | None:
    """:func:`common_shape` of the block ``data[start:end]``, each line decoded on its own (the
    same text: a line end is ASCII, never inside a UTF-8 sequence), so a big block's text is
    not held whole beside its lines and its data."""
    nl = data.find(b"\n", start, end)
    if nl < 0:
        if not data.startswith(b"data: ", start):
            return None
        line = data[start:end].decode("utf-8", "replace")
        return (line, ""), None, line[6:]
    if (data.startswith(b"event: ", start) and data.startswith(b"data: ", nl + 1)
            and data.find(b"\n", nl + 1, end) < 0):
        first = data[start:nl].decode("utf-8", "replace")
        second = data[nl + 1:end].decode("utf-8", "replace")
        return (first, second, ""), first[7:], second[6:]
    return None
