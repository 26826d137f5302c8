"""What a harness under test executed, compared with what the gate decides for the same stream.

A harness reports the calls it executed, in order: a tool name and the arguments it passed (the
parsed value, not the text). Each is matched with a call of the stream the gate saw, by name (a
call with the same arguments first, then the first of that name not matched yet), and judged:

* ``early``: the stream stopped before the terminal signal, and the harness executed anyway;
* ``refused``: the gate refuses that call on this stream, and says why;
* ``arguments``: the gate executes the call, with other arguments;
* ``phantom``: the stream holds no such call (not one of that name is left to match);
* ``dropped``: the gate executes a call of the full stream that the harness did not.

``chunking`` (the result changes with the chunking) is found by :mod:`.sweep`, which compares
runs with each other rather than with the gate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson
from msgspec import Struct

from .errors import CallscopeError
from .inert import clipped, plain, preview
from .sweep_gate import GateCall, GateOutcome

KINDS: dict[str, str] = {
    "early": "executed before the terminal signal",
    "refused": "executed a call the gate refuses",
    "arguments": "executed other arguments than the gate's",
    "phantom": "executed a call the stream does not hold",
    "dropped": "dropped a call the gate executes",
    "chunking": "its result depends on the chunking",
}
"""Each kind of finding and what it says of the harness, in the order a report lists them."""

_REASONS = {
    "truncated": "the turn is truncated",
    "invalid_json": "its arguments are not valid JSON (salvaged)",
    "schema": "its arguments break the tool's schema",
    "unknown_tool": "no one client tool of that name is declared",
    "provider_error": "the provider reported an error",
}


class HarnessOutputError(CallscopeError):
    """The harness returned something that is not a list of executed calls."""


class HarnessBroken(CallscopeError):
    """The harness could not be run at all (a process that died, hung or broke the protocol):
    the sweep stops, as this says nothing of what the harness would execute."""


class Executed(Struct, frozen=True):
    """One call the harness executed."""

    name: str
    arguments: Any

    def text(self) -> str:
        return f"{plain(self.name)[:60]}({shown(self.arguments)})"


class Problem(Struct, frozen=True):
    kind: str
    call: str
    """The tool name the problem is about."""
    message: str


def shown(value: Any, limit: int = 100) -> str:
    """A JSON value on one line, bounded (stream text is untrusted: control characters escaped)."""
    try:
        text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        text = preview(value, limit)
    text = plain(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def executed_of(value: object) -> Executed:
    """One entry of a harness's result: ``(name, arguments)``, a mapping with ``name`` and
    ``arguments`` (or ``input``, ``args``), or an object with such attributes."""
    if isinstance(value, Executed):
        return value
    name: object
    if isinstance(value, tuple | list) and len(value) == 2:
        name, arguments = value
    elif isinstance(value, Mapping):
        name = value.get("name")
        arguments = next((value[k] for k in ("arguments", "input", "args") if k in value), None)
    elif hasattr(value, "name"):
        name = value.name
        arguments = next((getattr(value, k) for k in ("arguments", "input", "args")
                          if hasattr(value, k)), None)
    else:
        raise HarnessOutputError(f"the harness returned {preview(value)}, not a call "
                                 "(name, arguments)")
    if not isinstance(name, str):
        raise HarnessOutputError(f"the harness returned a call whose name is {preview(name)}, "
                                 "not a string")
    return Executed(name, arguments)


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values: numbers by value, but true is not 1 and "1" is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


def _match(done: Executed, left: list[GateCall]) -> GateCall | None:
    named = [c for c in left if c.name == done.name]
    same = [c for c in named if c.action == "execute" and same_json(c.arguments, done.arguments)]
    if not named:
        return None
    found = (same or named)[0]
    left.remove(found)
    return found


def compare(executed: Sequence[Executed], gate: GateOutcome, *, full: bool) -> list[Problem]:
    """The problems of one run. ``full``: the stream was not cut, so a call the gate executes
    must have been executed (on a cut, a harness stricter than the gate is not at fault)."""
    if gate.signal is None:
        return [Problem("early", e.name, f"executed {e.text()}; the stream has no terminal "
                        "signal") for e in executed]
    left = list(gate.calls)
    problems: list[Problem] = []
    for done in executed:
        call = _match(done, left)
        if call is None:
            problems.append(Problem("phantom", done.name, f"executed {done.text()}, a call the "
                                    "stream does not hold"))
        elif call.action != "execute":
            why = _REASONS.get(call.reason or "", call.reason or "refused")
            problems.append(Problem("refused", done.name, f"executed {done.text()}, which the "
                                    f"gate refuses ({call.reason}: {why}; "
                                    f"{clipped(plain(call.detail), 240)})"))
        elif not same_json(call.arguments, done.arguments):
            problems.append(Problem("arguments", done.name, f"executed {done.text()}; the gate "
                                    f"executes it with {shown(call.arguments)}"))
    if full:
        problems += [Problem("dropped", c.name, f"did not execute {plain(c.name)[:60]}"
                             f"({shown(c.arguments)}), which the gate executes")
                     for c in left if c.action == "execute"]
    return problems
