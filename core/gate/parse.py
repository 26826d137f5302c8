"""The gate's strict parse of a call's whole argument text: no repair, no trailing data, and no
object with a key twice (parsers disagree on which one wins)."""

from __future__ import annotations

import json
from typing import Any

import orjson

from ..call_buffer import CallBuffer

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
        return f"strict parse failed: {exc}"[:200]
    duplicate = duplicate_key(call.text)
    if duplicate is not None:
        return f"an object has the key {duplicate!r} twice (parsers disagree on which wins)"[:200]
    return "strict parse failed"
