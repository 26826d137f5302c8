"""orjson's reading of a JSON text, with every integer exact.

orjson reads an integer outside ``-2**63 .. 2**64 - 1`` as the nearest double, silently:
``{"id": 123456789012345678901234567890}`` becomes ``1.2345678901234568e+29``. A tool's
arguments read that way are not what the model sent, and a schema that wants an integer would
pass the rounded float. Such an integer is at least 19 digits in a row, so a text without a run
of 19 digits is read by orjson alone; one with such a run (a nanosecond timestamp in a string
is one too) is read again by the standard library, whose integers are exact. orjson reads it
first either way, so what orjson refuses (lone surrogates, NaN, infinity, trailing data) stays
refused, and on a text both accept the two readings differ only in those integers
(tests/test_exact_json.py holds them equal).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_DIGITS = bytes(ord("0") if chr(i).isdigit() and i < 128 else ord(".") for i in range(256))
"""A byte table: ASCII digits to ``0``, every other byte to ``.`` (one C pass, no regex)."""
_RUN = b"0" * 19
"""The fewest digits of an integer orjson rounds: ``-9223372036854775809`` has 19."""


def may_round(data: str | bytes) -> bool:
    """Whether ``data`` has a run of 19 ASCII digits, so orjson could round an integer in it."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    return _RUN in raw.translate(_DIGITS)


def loads(data: str | bytes) -> Any:
    """``orjson.loads(data)`` (raising :class:`orjson.JSONDecodeError` as it does), with every
    integer exact."""
    value = orjson.loads(data)
    if len(data) < len(_RUN) or not may_round(data):
        return value
    try:
        return json.loads(data)
    except (RecursionError, ValueError):  # (nested past its stack: orjson's reading then)
        return value
