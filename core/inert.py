"""Inert text: what must never reach a terminal raw, and its visible stand-ins.

Stream text, tool names, ids, error messages and file names are untrusted. They may carry
terminal escapes (CSI, OSC 8 hyperlinks, OSC 52 clipboard writes), C0/C1 controls, bidi
overrides that reorder what is shown (U+202E), and invisible characters (zero-width spaces, BOM,
tag characters used for "ASCII smuggling"). This module defines that set once; the panes
(``tui/safe.py``), the headless table, the JSON lines and the error messages all use it.
"""

from __future__ import annotations

import json
import math
import re
import reprlib
from typing import Any

import orjson

UNSAFE = re.compile(
    "["
    "\x00-\x1f\x7f-\x9f"  # C0, DEL, C1 (CSI/OSC/ST as single code points included)
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e"  # invisible or format characters
    "\u200b-\u200f\u2028-\u202e\u2060-\u206f"  # zero-width, separators, bidi embeddings/isolates
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\ufffe\uffff"  # fillers, variation selectors, BOM
    "\ud800-\udfff"  # lone surrogates (from surrogateescape/surrogatepass decoding)
    "\U000e0000-\U000e0fff"  # tag characters (invisible "ASCII smuggling") and selectors
    "]"
)

# Control Pictures for C0 (U+2400 + code), with the conventional glyphs for the common ones.
_NAMED = {0x09: "␉", 0x0A: "␊", 0x0D: "␍", 0x1B: "␛", 0x7F: "␡", 0xFEFF: "⟨BOM⟩"}


def escape_char(ch: str) -> str:
    """The visible stand-in for one unsafe character."""
    code = ord(ch)
    if code in _NAMED:
        return _NAMED[code]
    if code < 0x20:
        return chr(0x2400 + code)
    return f"⟨U+{code:04X}⟩"


def plain(text: str) -> str:
    """Text with every unsafe character replaced by its visible stand-in."""
    return UNSAFE.sub(lambda m: escape_char(m.group()), text)


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code > 0xFFFF:  # JSON escapes astral characters as a surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def json_safe(text: str) -> str:
    """Serialized JSON with every unsafe character written as a ``\\uXXXX`` escape.

    JSON's structure is ASCII, so unsafe characters can only sit inside strings, where the
    escape denotes the same value: the document parses to exactly what it did before."""
    return UNSAFE.sub(_json_escape, text)


_PREVIEW = reprlib.Repr()  # Python 3.11 takes no keyword arguments here
_PREVIEW.maxlevel, _PREVIEW.maxstring, _PREVIEW.maxother = 2, 60, 60
_PREVIEW.maxdict = _PREVIEW.maxlist = 4


def json_dumps(value: object, option: int = orjson.OPT_NON_STR_KEYS) -> bytes:
    """``orjson.dumps``, and the same JSON for integers past 64 bits, which orjson refuses:
    a partial parse (jiter) keeps ``123456789012345678901234567890`` an exact ``int``, and a
    salvaged draft or a record quoting one must still be written (as standard JSON, exact).
    ``option``: orjson's, of which INDENT_2 and SORT_KEYS change the fallback's layout too.
    Raises TypeError for what is not JSON at all."""
    try:
        return orjson.dumps(value, option=option)
    except TypeError:  # (orjson.JSONEncodeError is one)
        pass
    indent = 2 if option & orjson.OPT_INDENT_2 else None
    layout: dict[str, Any] = {
        "ensure_ascii": False, "sort_keys": bool(option & orjson.OPT_SORT_KEYS),
        "indent": indent, "separators": (",", ": ") if indent else (",", ":"),
        "default": _refuse}
    try:
        text = json.dumps(value, allow_nan=False, **layout)
    except ValueError:  # (NaN or infinity: orjson writes null, so must we)
        text = json.dumps(_finite(value), **layout)
    return text.encode("utf-8", "surrogatepass")


def _refuse(value: object) -> object:
    raise TypeError(f"{type(value).__name__} is not JSON")


def _finite(value: object) -> object:
    """``value`` with NaN and infinities as None (orjson's null); containers copied."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def json_text(value: object) -> str:
    """``value`` as one line of compact JSON, as the wire spells it (``true``, ``null``,
    ``"a"``, not Python's ``True``, ``None``, ``'a'``); its ``repr`` if it is not JSON."""
    try:
        return json_dumps(value).decode("utf-8", "surrogatepass")
    except (TypeError, RecursionError):
        return repr(value)


def clipped(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, ending in ``…`` where it was cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def preview(value: object, limit: int = 60) -> str:
    """A bounded, depth-limited ``repr`` of an untrusted value for a one-line message: never
    recursive past two levels (a value nested 1,000 deep must not raise while being quoted)."""
    return clipped(_PREVIEW.repr(value), limit)


def nested_deeper(raw: bytes, obj: Any, limit: int) -> bool:
    """Whether ``obj`` (parsed from ``raw``) nests arrays and objects deeper than ``limit``
    levels, its own level included. orjson reads 1,024 levels but writes only 254, and many
    consumers recurse: untrusted JSON is checked with this when it is read. Walked without
    recursion; skipped when ``raw`` has too few brackets to nest that deep (SSE text in a chunk
    line has many, but parses to one flat object)."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    level: list[tuple[Any, int]] = [(obj, 1)]
    while level:
        value, depth = level.pop()
        if depth > limit:
            return True
        if isinstance(value, dict):
            level.extend((v, depth + 1) for v in value.values() if isinstance(v, dict | list))
        elif isinstance(value, list):
            level.extend((v, depth + 1) for v in value if isinstance(v, dict | list))
    return False
