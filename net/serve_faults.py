"""Fault specs of ``callscope serve``: what may be done to a stream, parsed and checked.

A spec such as ``cut=120,end=reset`` comes from the command line (the defaults) or from a
request (a header or a query parameter), so it is untrusted text: every value is checked here
(:func:`check_faults`) before the emulator acts on it, and a bad one is a :class:`FaultError`
whose message names the item, never a traceback. ``docs/live.md`` lists the keys.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields, replace
from typing import Any

from ..core.errors import CallscopeError
from .serve_quirks import known_quirk

ENDINGS = frozenset({"clean", "close", "reset", "stall"})


class FaultError(CallscopeError):
    """A fault spec that cannot be applied."""


@dataclass(frozen=True)
class Faults:
    """What to do to a stream. Every field None means "as recorded"."""

    cut: int | None = None
    """End the body after this many bytes."""
    frames: int | None = None
    """End the body after this many SSE frames (blocks)."""
    end: str | None = None
    """How the body ends: clean, close (connection closed mid-body), reset, stall."""
    hold: float | None = None
    """Seconds a stall lasts before the connection is closed."""
    chunk: int | None = None
    """Re-chunk the body into pieces of this many bytes."""
    delay: float | None = None
    """Seconds between chunks (replaces the recorded timing)."""
    speed: float | None = None
    """Recorded timing divided by this (``inf``: no waiting)."""
    rate: float | None = None
    """SSE frames (events) per second: replaces the recorded timing, ``delay`` and ``speed``
    (a provider pouring events out at a steady rate, however the bytes were recorded)."""
    status: int | None = None
    """Answer with this HTTP status instead of a stream."""
    body: str | None = None
    """The body of that answer (default: a provider-shaped error JSON)."""
    session: str | None = None
    """Which loaded session to stream (index, file name or stem)."""
    quirk: str | None = None
    """A quirk profile the stream is rewritten by first (:mod:`.serve_quirks`)."""

    def merged(self, other: Faults) -> Faults:
        """These faults with every field ``other`` sets overriding them."""
        return replace(self, **{f.name: getattr(other, f.name) for f in fields(other)
                                if getattr(other, f.name) is not None})


_INT_KEYS = {"cut": "cut", "frames": "frames", "cut_frame": "frames", "chunk": "chunk",
             "status": "status"}
_FLOAT_KEYS = {"delay": "delay", "speed": "speed", "hold": "hold", "rate": "rate", "eps": "rate"}


def parse_faults(spec: str) -> Faults:
    """``key=value`` items separated by commas (``key:value`` works too). ``body=`` takes the
    rest of the spec, commas included, so it must come last. ``reset[=N]``, ``stall[=N]``,
    ``close[=N]`` and ``clean[=N]`` are short for ``end=...`` (with ``cut=N``)."""
    values: dict[str, Any] = {}
    rest = spec.strip()
    while rest:
        item, _, after = rest.partition(",")
        match = re.match(r"\s*([A-Za-z_-]+)\s*(?:[=:]\s*(.*))?\Z", item, re.DOTALL)
        if match is None:
            raise FaultError(f"bad fault item {item.strip()[:40]!r} (key=value)")
        key, value = match[1].lower().replace("-", "_"), (match[2] or "").strip()
        if key == "body":
            values["body"] = re.sub(r"\A\s*body\s*[=:]?", "", rest, count=1, flags=re.I)
            break
        rest = after.strip()
        if key in ENDINGS:
            values["end"] = key
            if value:
                values["cut"] = _number(key, value, int)
        elif key == "end":
            if value not in ENDINGS:
                raise FaultError(f"end={value!r}: one of {', '.join(sorted(ENDINGS))}")
            values["end"] = value
        elif key in _INT_KEYS:
            values[_INT_KEYS[key]] = _number(key, value, int)
        elif key in _FLOAT_KEYS:
            values[_FLOAT_KEYS[key]] = _number(key, value, float)
        elif key in ("session", "quirk"):
            values[key] = value
        else:
            raise FaultError(f"unknown fault {key!r} (cut, frames, end, reset, stall, hold, "
                             "chunk, delay, speed, rate, status, body, session, quirk)")
    return check_faults(Faults(**values))


def _number(key: str, text: str, kind: type[int] | type[float]) -> Any:
    try:
        value = kind(text)
    except ValueError:
        raise FaultError(f"{key}={text[:20]!r}: not a number") from None
    if isinstance(value, float) and math.isnan(value):
        raise FaultError(f"{key}: not a number")
    return value


def check_faults(faults: Faults) -> Faults:
    for name in ("cut", "frames", "delay", "hold"):
        value = getattr(faults, name)
        if value is not None and value < 0:
            raise FaultError(f"{name} must be >= 0")
    if faults.chunk is not None and faults.chunk < 1:
        raise FaultError("chunk must be >= 1")
    if faults.speed is not None and not faults.speed > 0:
        raise FaultError("speed must be > 0 (inf: no waiting)")
    if faults.rate is not None and not 0 < faults.rate < math.inf:
        raise FaultError("rate must be a number of events per second > 0")
    if faults.status is not None and not 400 <= faults.status <= 599:
        raise FaultError("status must be an HTTP error status (4xx/5xx)")
    if faults.end is not None and faults.end not in ENDINGS:
        raise FaultError(f"end: one of {', '.join(sorted(ENDINGS))}")
    if faults.quirk is not None and (why := known_quirk(faults.quirk)):
        raise FaultError(why)
    return faults
