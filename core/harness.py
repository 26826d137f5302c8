"""The harness gate: wait while the turn is open; at its end, execute or refuse, with evidence.

The gate's checks run in a fixed order, kept in one table (:data:`GATE`) so the policy reads in
one place. Each check looks at the finished turn and one call and either passes or returns a
refusal reason. Beside each decision, :func:`lenient_verdict` says what a common lenient harness
would have done with the same bytes (partial-JSON salvage as jiter's partial mode does in the
SDKs, ``{}`` for invalid JSON, execution on the stop reason alone), so the log can mark every
place where it would have executed what the gate refused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import jiter
import orjson

from .call_buffer import CallBuffer
from .calls import TurnState
from .demo_tools import run_demo_tool
from .jsonprefix import Draft
from .tools import ToolSet

TOO_DEEP = "[arguments nested past the depth limit: not shown]"

Action = Literal["wait", "execute", "refuse"]
Reason = Literal["truncated", "invalid_json", "schema", "unknown_tool", "provider_error"]


@dataclass(frozen=True, slots=True)
class Lenient:
    """What a lenient harness would have done with the same call."""

    action: Literal["execute", "skip"]
    arguments: Any
    how: str
    """``parsed``, ``salvaged`` (partial JSON), ``empty-object`` (invalid JSON replaced by {})."""
    dropped: tuple[str, ...] = ()
    """Keys present in the raw text but missing from the arguments it would have used."""


@dataclass(frozen=True, slots=True)
class Decision:
    call: str
    action: Action
    reason: Reason | None
    frame: int | None
    """The frame the decision relied on (the terminal signal, or the last frame received)."""
    signal: str | None
    """The terminal signal, or None when it never came."""
    detail: str
    arguments: Any = None
    result: Any = None
    ran: Literal["demo", "dry-run", None] = None
    lenient: Lenient | None = None
    draft: Draft | None = None

    @property
    def contrast(self) -> bool:
        """The lenient harness would have executed what the gate refused."""
        return (self.action == "refuse" and self.lenient is not None
                and self.lenient.action == "execute")


@dataclass(frozen=True, slots=True)
class GateContext:
    turn: TurnState
    tools: ToolSet
    empty_means_object: bool
    contrast: bool = True
    """Whether decisions carry the lenient harness's verdict (``check`` compares only the
    gate's own decisions, and the contrast was most of the cost of finishing a cut)."""


# -- the checks, in order --------------------------------------------------------------------

Parsed = tuple[Any, str]  # (arguments, note)
Check = Callable[[GateContext, CallBuffer, Parsed | None], tuple[Reason, str] | None]


def _turn_complete(ctx: GateContext, call: CallBuffer, _: Parsed | None) -> tuple[Reason, str] | None:
    turn = ctx.turn
    if turn.halted:
        return "truncated", f"the engine stopped reading at a limit: {turn.halted}"
    if turn.failed:  # an error explains a missing terminal better than "truncated" does
        error = turn.errors[0].message if turn.errors else f"stop reason {turn.failed_by.reason}"  # type: ignore[union-attr]
        ended = "" if turn.complete else " (and the terminal signal never came)"
        return "provider_error", f"the provider reported a failure{ended}: {error}"[:200]
    if not turn.complete:
        return "truncated", "the terminal signal never came"
    if call.changed_after_close is not None:
        return "provider_error", (f"the arguments changed after the provider closed the call "
                                  f"(frame {call.changed_after_close})")
    if call.reidentified is not None:
        return "provider_error", (f"the provider changed the call's {call.reidentified}: which "
                                  "call it meant is unknown")
    if call.copy_differs is not None:
        return "provider_error", (f"the provider's final copy of the arguments (frame "
                                  f"{call.copy_differs}) differs from the fragments it streamed: "
                                  "which one it meant is unknown")
    if turn.cut:
        return "truncated", f"the provider says the output was cut ({turn.cut_by.reason})"  # type: ignore[union-attr]
    if not call.closed:
        return "truncated", "the provider never closed this call"
    if call.cut is not None:
        return "truncated", call.cut[:200]
    return None


def _json(ctx: GateContext, call: CallBuffer, parsed: Parsed | None) -> tuple[Reason, str] | None:
    if parsed is None:
        return "invalid_json", call_parse_error(call, ctx.empty_means_object)
    if call.max_depth > ctx.turn.limits.max_argument_depth:
        return "invalid_json", (f"nested {call.max_depth} levels deep, past the limit of "
                                f"{ctx.turn.limits.max_argument_depth}")
    return None


def _schema(ctx: GateContext, call: CallBuffer, parsed: Parsed | None) -> tuple[Reason, str] | None:
    assert parsed is not None
    if not isinstance(parsed[0], dict):
        return "schema", f"$: arguments must be a JSON object, got {type(parsed[0]).__name__}"
    if call.name in ctx.tools:
        error = ctx.tools.schema_error(call.name, parsed[0])  # type: ignore[arg-type]
        if error:
            return "schema", error[:300]
    return None


def _known(ctx: GateContext, call: CallBuffer, _: Parsed | None) -> tuple[Reason, str] | None:
    if call.kind != "function":  # (found by review: a server_tool_use named like a client tool ran)
        return "unknown_tool", (f"a {call.kind} call ({call.name!r}): the provider runs it "
                                "itself; a client harness never does")[:200]
    if call.name not in ctx.tools:
        known = ", ".join(sorted(ctx.tools.tools)) or "none"
        return "unknown_tool", f"no definition for {call.name!r} (defined: {known})"[:200]
    return None


def _undisputed(ctx: GateContext, call: CallBuffer, _: Parsed | None) -> tuple[Reason, str] | None:
    # Default deny: a call the engine found anything wrong with is not run, whatever the rest
    # says (reviews kept finding contradictions, each reported as an anomaly and then executed:
    # fragments before the call's start, a start input and deltas that disagree, a string
    # reopened, an object replacing text, frames the SDK would skip). The accumulator marks
    # the call with its first such anomaly, past the anomaly caps too (calls.DISPUTE_FREE).
    anomaly = call.disputed
    if anomaly is not None:
        return "provider_error", (f"the stream disputes this call: {anomaly.code} at frame "
                                  f"{anomaly.frame}: {anomaly.message}")[:200]
    unread = next((code for code in UNREADABLE if code in ctx.turn.anomaly_counts), None)
    if unread is not None:
        first = next((a for a in ctx.turn.anomalies if a.code == unread), None)
        where = f" at frame {first.frame}" if first is not None else ""
        return "provider_error", (f"the stream holds a frame the engine or the SDK could not "
                                  f"read ({unread}{where}): what it carried is unknown")[:200]
    return None


UNREADABLE = (
    "not_json", "not_an_object", "bad_index", "bad_choice", "bad_choices", "bad_tool_call",
    "bad_tool_calls", "bad_delta", "bad_part", "bad_function_call", "bad_candidate",
    "bad_candidates", "bad_item", "bad_block", "bad_step", "sequence_gap", "missing_choice_index",
    "event_name_missing", "event_name_mismatch",
)
"""Anomalies of the turn (not of one call) that mean a frame, or part of one, could not be read
and was dropped, or that the official SDK would read otherwise (a choice without its index, an
Anthropic frame without its event: line): whatever it carried might have belonged to any call,
so none is run (found by review: a fragment in a frame the engine could not parse was lost,
and its call ran without it; the SDKs raise there). Counted past the anomaly caps."""


GATE: tuple[tuple[str, Check], ...] = (
    ("turn", _turn_complete),
    ("json", _json),
    ("schema", _schema),
    ("tool", _known),
    ("disputed", _undisputed),
)
"""The gate, in order: the first check that fails decides the refusal."""


# -- parsing -----------------------------------------------------------------------------------

def parse_arguments(call: CallBuffer, empty_means_object: bool) -> Parsed | None:
    """The strict parse of the whole text: no repair, trailing data refused, and no object
    with a key twice (parsers disagree on which one wins: found by review, the last
    ``"path"`` of two was run)."""
    text = call.text
    if not text.strip() and empty_means_object:
        return {}, "empty argument text means no arguments in this protocol"
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return None if _duplicate_key(text) is not None else (value, "")


class _Duplicate(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> None:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise _Duplicate(key)
        seen.add(key)


def _duplicate_key(text: str) -> str | None:
    """A key some object of ``text`` (valid JSON) has twice, or None. orjson keeps the last
    silently; the standard library's parser tells each object's pairs to a hook."""
    if text.count('"') < 4:  # (no room for two keys)
        return None
    try:
        json.loads(text, object_pairs_hook=_no_duplicates)
    except _Duplicate as exc:
        return str(exc.args[0])
    except (ValueError, RecursionError):  # (orjson read it; deeper than json's stack: let be)
        return None
    return None


def call_parse_error(call: CallBuffer, empty_means_object: bool) -> str:
    if not call.text.strip():
        return "empty argument text (this protocol does not document that as no arguments)"
    try:
        orjson.loads(call.text)
    except orjson.JSONDecodeError as exc:
        return f"strict parse failed: {exc}"[:200]
    duplicate = _duplicate_key(call.text)
    if duplicate is not None:
        return f"an object has the key {duplicate!r} twice (parsers disagree on which wins)"[:200]
    return "strict parse failed"


def decide(call: CallBuffer, ctx: GateContext, frame: int | None) -> Decision:
    """The gate's decision for one call of a turn that has ended (or been cut)."""
    signal = ctx.turn.terminal.signal if ctx.turn.terminal else None
    readable = ctx.turn.complete and not ctx.turn.halted
    parsed = parse_arguments(call, ctx.empty_means_object) if readable else None
    if parsed is not None and call.max_depth > ctx.turn.limits.max_argument_depth:
        parsed = (TOO_DEEP, "")  # keep the value out of every record and renderer
    lenient = lenient_verdict(call, ctx) if ctx.contrast else None
    for _, check in GATE:
        refusal = check(ctx, call, parsed)
        if refusal is not None:
            return Decision(call.key, "refuse", refusal[0], frame, signal, refusal[1],
                            lenient=lenient, draft=call.draft)
    assert parsed is not None
    arguments, note = parsed
    ran, result = run_demo_tool(call.name or "", arguments)
    detail = "all checks passed" + (f"; {note}" if note else "")
    return Decision(call.key, "execute", None, frame, signal, detail, arguments=arguments,
                    result=result if ran else None, ran="demo" if ran else "dry-run",
                    lenient=lenient, draft=call.draft)


# -- the lenient harness -----------------------------------------------------------------------

# Unrolled ("normal* (special normal*)*"), so an unterminated multi-megabyte string costs no
# backtracking stack.
_KEY = re.compile(r'"([^"\\]*(?:\\.[^"\\]*)*)"\s*:')


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value).union(*(_keys(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_keys(v) for v in value))
    return set()


def lenient_verdict(call: CallBuffer, ctx: GateContext) -> Lenient:
    """A common lenient harness: runs whatever it has once the stream stops."""
    if not call.name:
        return Lenient("skip", None, "no tool name")
    if call.max_depth > ctx.turn.limits.max_argument_depth:
        return Lenient("execute", TOO_DEEP, "parsed")  # it would run them; we do not show them
    text = call.text
    try:
        return Lenient("execute", orjson.loads(text) if text.strip() else {}, "parsed")
    except orjson.JSONDecodeError:
        pass
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
