"""The gate's strict parse of a call's whole argument text: no repair, no trailing data, and no
object with a key twice (parsers disagree on which one wins)."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from ..call_buffer import CallBuffer

_JSON_SPACE = re.compile(r"[ \t\n\r]*")

TOO_DEEP = "[arguments nested past the depth limit: not shown]"

Parsed = tuple[Any, str]
"""The arguments and a note on how they were read: empty exactly when the arguments are orjson's
reading of the text (the lenient contrast shares them then), else why empty text means ``{}``."""


def parse_arguments(call: CallBuffer, empty_means_object: bool) -> Parsed | None:
    """The strict parse of the whole text, or None when it is not one JSON value."""
    text = call.text
    if not text.strip() and empty_means_object:
        return {}, "empty argument text means no arguments in this protocol"
    try:
        value, serialized = call.parsed_whole()
    except orjson.JSONDecodeError:
        return None
    # (a value's own serialization has no key twice: see duplicate_key)
    return None if not serialized and duplicate_key(text, value) is not None else (value, "")


class _Duplicate(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> None:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise _Duplicate(key)
        seen.add(key)


def duplicate_key(text: str, value: Any = None) -> str | None:
    """A key some object of ``text`` (valid JSON) has twice, or None. orjson keeps the last
    silently; the standard library's parser tells each object's pairs to a hook. ``value``,
    orjson's reading of ``text`` when the caller has it: a text that is that value's own
    serialization has no key twice (a dict holds each key once, and distinct keys are written
    distinctly), which a serialization and a comparison prove at a tenth of the hook's cost."""
    if text.count('"') < 4:  # (no room for two keys)
        return None
    if value is not None and (type(value) is dict or type(value) is list):
        try:
            if orjson.dumps(value) == text.encode():
                return None
        except (orjson.JSONEncodeError, UnicodeEncodeError):
            pass  # (nested past orjson's writer, or not UTF-8: the hook decides)
    try:
        json.loads(text, object_pairs_hook=_no_duplicates)
    except _Duplicate as exc:
        return str(exc.args[0])
    except (ValueError, RecursionError):  # (orjson read it; deeper than json's stack: let be)
        return None
    return None


def parse_error(call: CallBuffer) -> str:
    """Why :func:`parse_arguments` refused the call's text, in one line."""
    if not call.text.strip():
        return "empty argument text (this protocol does not document that as no arguments)"
    try:
        orjson.loads(call.text)
    except orjson.JSONDecodeError as exc:
        values = _values_back_to_back(call.text)
        if values > 1:
            many = f"{values} or more" if values == _MOST_VALUES else str(values)
            return (f"{many} JSON values back to back, not one: several calls streamed under "
                    "one index or id, or the whole arguments sent again after their fragments")
        return f"strict parse failed: {exc}"[:200]
    duplicate = duplicate_key(call.text)
    if duplicate is not None:
        return f"an object has the key {duplicate!r} twice (parsers disagree on which wins)"[:200]
    return "strict parse failed"


_MOST_VALUES = 9


def _not_json(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


def _values_back_to_back(text: str, most: int = _MOST_VALUES) -> int:
    """How many whole JSON values ``text`` is, written one after another (``{"a":1}{"b":2}``:
    a server streams that when it gives parallel calls one index or id, or resends a call's
    whole arguments after their fragments), counting up to ``most``; 0 when the text is not
    such a run of values."""
    decoder = json.JSONDecoder(parse_constant=_not_json)  # (NaN and Infinity are not JSON)
    at, count = 0, 0
    while count < most:
        at = _JSON_SPACE.match(text, at).end()  # type: ignore[union-attr]  # (* always matches)
        if at == len(text):
            return count
        try:
            _, at = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            return 0
        count += 1
    return count
