"""The gate's policy: one ordered table of refusal rules. The first rule that fires decides.

Every rule reads evidence the turn already holds (the terminal signal, stop reports, the
findings on the call, the strict parse, the tool definitions) and either passes or returns
the refusal's detail. Nothing here parses, runs a tool or formats a lenient verdict; anomalies
reach rules only through the effect :mod:`.codes` declares for them. The README's gate section
is this table, generated (``scripts/gate_tables.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from msgspec import Struct

from ..call_buffer import CallBuffer
from ..calls import TurnState
from ..providers import budget_of
from ..tools import ToolSet
from .parse import Parsed, parse_error

Reason = Literal["truncated", "invalid_json", "schema", "unknown_tool", "provider_error"]


class GateContext(Struct, frozen=True):
    """What a rule reads besides the call: the turn, the tools, the protocol's empty text."""

    turn: TurnState
    tools: ToolSet
    empty_means_object: bool
    contrast: bool = True
    """Whether decisions carry the lenient harness's verdict (``check`` compares only the
    gate's own decisions, and the contrast was most of the cost of finishing a cut)."""


Check = Callable[[GateContext, CallBuffer, Parsed | None], str | None]


class Rule(Struct, frozen=True):
    """One refusal rule of the gate: its id, the reason it refuses with, its check."""

    id: str
    reason: Reason
    statement: str
    """The rule in one line, as the README's table and the help show it."""
    check: Check
    """The refusal's detail when the rule fires, or None."""


def _limit(ctx: GateContext, call: CallBuffer, _: Parsed | None) -> str | None:
    halted = ctx.turn.halted
    return None if halted is None else f"the engine stopped reading at a limit: {halted}"


def _failed(ctx: GateContext, call: CallBuffer, _: Parsed | None) -> str | None:
    turn = ctx.turn
    if not turn.failed:
        return None
    if turn.errors:
        error = turn.errors[0].message
    else:
        error = f"stop reason {turn.failed_by.reason if turn.failed_by else '?'}"
    ended = "" if turn.complete else " (and the terminal signal never came)"
    return f"the provider reported a failure{ended}: {error}"[:200]


def _no_terminal(ctx: GateContext, call: CallBuffer, _: Parsed | None) -> str | None:
    return None if ctx.turn.complete else "the terminal signal never came"


def _stop_cut(ctx: GateContext, call: CallBuffer, _: Parsed | None) -> str | None:
    cut_by = ctx.turn.cut_by
    return None if cut_by is None else f"the provider says the output was cut ({cut_by.reason})"


def _tokens_spent(ctx: GateContext, call: CallBuffer, _: Parsed | None) -> str | None:
    budget = budget_of(ctx.turn.protocol)
    overrun = (budget.overrun(ctx.tools.request, ctx.turn.usage, ctx.turn.echoed_limit)
               if budget is not None else None)
    if overrun is None:
        return None
    stop = ctx.turn.stop.reason if ctx.turn.stop is not None else "none"
    return (f"the usage reports {overrun.used} output tokens, the budget is {overrun.budget} "
            f"({overrun.source}): the output was cut there, whatever the stop reason ({stop}) "
            "says")[:300]


def _not_closed(ctx: GateContext, call: CallBuffer, _: Parsed | None) -> str | None:
    return None if call.closed else "the provider never closed this call"


def _call_cut(ctx: GateContext, call: CallBuffer, _: Parsed | None) -> str | None:
    return None if call.cut_why is None else call.cut_why[:200]


def _disputed(ctx: GateContext, call: CallBuffer, _: Parsed | None) -> str | None:
    anomaly = call.disputed
    if anomaly is None:
        return None
    return (f"the stream disputes this call: {anomaly.code} at frame {anomaly.frame}: "
            f"{anomaly.message}")[:200]


def _unreadable(ctx: GateContext, call: CallBuffer, _: Parsed | None) -> str | None:
    anomaly = ctx.turn.unreadable
    if anomaly is None:
        return None
    return (f"the stream holds a frame the engine or the SDK could not read ({anomaly.code} at "
            f"frame {anomaly.frame}): what it carried is unknown")[:200]


def _json(ctx: GateContext, call: CallBuffer, parsed: Parsed | None) -> str | None:
    return parse_error(call) if parsed is None else None


def _depth(ctx: GateContext, call: CallBuffer, _: Parsed | None) -> str | None:
    limit = ctx.turn.limits.max_argument_depth
    return None if call.max_depth <= limit else (
        f"nested {call.max_depth} levels deep, past the limit of {limit}")


def _not_object(ctx: GateContext, call: CallBuffer, parsed: Parsed | None) -> str | None:
    value = parsed[0] if parsed is not None else None
    return None if isinstance(value, dict) else (
        f"$: arguments must be a JSON object, got {type(value).__name__}")


def _ambiguous_tool(ctx: GateContext, call: CallBuffer, _: Parsed | None) -> str | None:
    where = ctx.tools.ambiguous.get(call.name) if call.name is not None else None
    return None if where is None else (
        f"{call.name!r} is defined twice with different schemas ({where})")[:200]


def _schema(ctx: GateContext, call: CallBuffer, parsed: Parsed | None) -> str | None:
    name = call.name
    if name is None or name not in ctx.tools or parsed is None or not isinstance(parsed[0], dict):
        return None
    error = ctx.tools.schema_error(name, parsed[0])
    return error[:300] if error else None


def _server_tool(ctx: GateContext, call: CallBuffer, _: Parsed | None) -> str | None:
    return None if call.kind == "function" else (
        f"a {call.kind} call ({call.name!r}): the provider runs it itself; a client harness "
        "never does")[:200]


def _unknown_tool(ctx: GateContext, call: CallBuffer, _: Parsed | None) -> str | None:
    if call.name in ctx.tools:
        return None
    known = ", ".join(sorted(ctx.tools.tools)) or "none"
    return f"no definition for {call.name!r} (defined: {known})"[:200]


RULES: tuple[Rule, ...] = (
    Rule("limit", "truncated", "The engine stopped reading the turn at a limit.", _limit),
    Rule("failed", "provider_error", "The provider reported an error or a failed stop reason "
         "(with or without a terminal signal: the error explains the end).", _failed),
    Rule("no-terminal", "truncated", "The provider's terminal signal never came.", _no_terminal),
    Rule("stop-cut", "truncated", "A stop reason says the output was cut (length, max_tokens, "
         "incomplete, MAX_TOKENS).", _stop_cut),
    Rule("tokens-spent", "truncated", "The usage the provider reports reaches the output-token "
         "limit the request set (or the stream echoes): the output was cut, whatever the stop "
         "reason says.",
         _tokens_spent),
    Rule("not-closed", "truncated", "The provider never closed this call.", _not_closed),
    Rule("call-cut", "truncated", "The call was closed without the provider vouching it is whole "
         "(the stream ended first, it was marked incomplete, or another message replaced it).",
         _call_cut),
    Rule("disputed", "provider_error", "The stream disputes this call: an anomaly whose declared "
         "effect is 'disputes' names it.", _disputed),
    Rule("unreadable", "provider_error", "A frame of the turn could not be read as the protocol "
         "says: an anomaly whose declared effect is 'unreadable'.", _unreadable),
    Rule("json", "invalid_json", "The whole argument text is not one strict JSON value (no repair, "
         "no trailing data, no key twice).", _json),
    Rule("depth", "invalid_json", "The arguments nest past the depth limit.", _depth),
    Rule("not-object", "schema", "The arguments are not a JSON object.", _not_object),
    Rule("ambiguous-tool", "unknown_tool", "Two definitions give the tool's name different "
         "schemas: which one the call must satisfy is unknown.", _ambiguous_tool),
    Rule("schema", "schema", "The arguments fail the tool's JSON Schema, or it cannot be "
         "applied to them.", _schema),
    Rule("server-tool", "unknown_tool", "A call the provider runs itself (a server tool).",
         _server_tool),
    Rule("unknown-tool", "unknown_tool", "No tool of that name is defined.", _unknown_tool),
)
"""The gate, in order: the first rule that fires decides the refusal; none firing executes."""

RULE_STATEMENTS = {rule.id: rule.statement for rule in RULES}
"""Each rule's one-line statement, by id (for the views that name the rule of a refusal)."""


def first_refusal(ctx: GateContext, call: CallBuffer, parsed: Parsed | None) -> tuple[Rule, str] | None:
    """The first rule that fires for ``call``, with its detail; None when the call may run."""
    for rule in RULES:
        detail = rule.check(ctx, call, parsed)
        if detail is not None:
            return rule, detail
    return None
