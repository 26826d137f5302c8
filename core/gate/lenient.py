"""What a common lenient harness would have done with the same bytes, shown beside every decision.

It runs whatever it has once the stream stops: partial-JSON salvage as jiter's partial mode does
in the SDKs, ``{}`` for text it cannot read, execution on the stop reason alone. The log marks
every place where it would have executed what the gate refused.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import orjson
from msgspec import Struct

from .. import exact_json
from ..call_buffer import CallBuffer
from .parse import TOO_DEEP


class Lenient(Struct, frozen=True):
    """What a lenient harness would have done with the same call."""

    action: Literal["execute", "skip"]
    arguments: Any
    how: str
    """``parsed``, ``salvaged`` (partial JSON), ``empty-object`` (invalid JSON replaced by {})."""
    dropped: tuple[str, ...] = ()
    """Keys present in the raw text but missing from the arguments it would have used."""


# Unrolled ("normal* (special normal*)*"), so an unterminated multi-megabyte string costs no
# backtracking stack.
_KEY = re.compile(r'"([^"\\]*(?:\\.[^"\\]*)*)"\s*:')


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value).union(*(_keys(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_keys(v) for v in value))
    return set()


_UNREAD: Any = object()


def lenient_verdict(call: CallBuffer, max_depth: int, strict: Any = _UNREAD) -> Lenient:
    """The lenient harness's verdict on one call once the stream stopped. ``strict`` is the
    value the gate's strict parse read from the same non-blank text, when it read one: the
    lenient parse is orjson's too and gives an equal value, so that one is shared (a call's
    arguments parsed once, and held once)."""
    if not call.name:
        return Lenient("skip", None, "no tool name")
    if call.max_depth > max_depth:
        return Lenient("execute", TOO_DEEP, "parsed")  # it would run them; we do not show them
    if strict is not _UNREAD:
        return Lenient("execute", strict, "parsed")
    text = call.text
    try:
        return Lenient("execute", exact_json.loads(text) if text.strip() else {}, "parsed")
    except orjson.JSONDecodeError:
        pass
    import jiter  # (only a refused call that does not parse is salvaged: start-up need not load it)

    try:
        salvaged = jiter.from_json(text.encode("utf-8", "surrogatepass"), partial_mode=True)
        how = "salvaged"
    except ValueError:
        salvaged, how = {}, "empty-object"
    if not isinstance(salvaged, dict):
        salvaged, how = {}, "empty-object"
    raw_keys = {m.group(1) for m in _KEY.finditer(text)}
    dropped = tuple(sorted(raw_keys - _keys(salvaged)))
    return Lenient("execute", salvaged, how, dropped)
