"""The harness gate: wait while the turn is open; at its end, execute or refuse, with evidence.

:func:`decide` puts together what the gate says of one call: the strict parse
(:mod:`.gate.parse`), the first rule of the policy table that fires (:mod:`.gate.rules`), the
lenient harness's contrast (:mod:`.gate.lenient`) and, for a call that passes, the demo tool's
dry run (:mod:`.demo_tools`). The policy itself lives only in the rule table and the code
registry (:mod:`.gate.codes`).
"""

from __future__ import annotations

from typing import Any, Literal

from msgspec import Struct
from msgspec.structs import replace

from .call_buffer import CallBuffer
from .demo_tools import run_demo_tool
from .gate.lenient import Lenient, lenient_verdict
from .gate.parse import TOO_DEEP, parse_arguments
from .gate.rules import RULES, GateContext, Reason, first_refusal
from .jsonprefix import Draft

__all__ = ["RULES", "Action", "Decision", "GateContext", "Lenient", "Reason", "decide"]

Action = Literal["wait", "execute", "refuse"]


class Decision(Struct, frozen=True):
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
    rule: str | None = None
    """The id of the rule that refused (:data:`.gate.rules.RULES`), or None."""

    def without_arguments(self) -> Decision:
        """What a caller that reads only the outcome keeps (:attr:`.TurnState.
        outcome_only`): the decision without the parsed arguments, the gate's and the lenient
        harness's, which only step records and the views show (a long call's are megabytes)."""
        lenient = self.lenient
        if lenient is not None and lenient.arguments is not None:
            lenient = replace(lenient, arguments=None)
        return replace(self, arguments=None, lenient=lenient)

    @property
    def contrast(self) -> bool:
        """The lenient harness would have executed what the gate refused."""
        return (self.action == "refuse" and self.lenient is not None
                and self.lenient.action == "execute")


def decide(call: CallBuffer, ctx: GateContext, frame: int | None) -> Decision:
    """The gate's decision for one call of a turn that has ended (or been cut)."""
    turn = ctx.turn
    signal = turn.terminal.signal if turn.terminal else None
    readable = turn.complete and not turn.halted
    parsed = parse_arguments(call, ctx.empty_means_object) if readable else None
    if parsed is not None and call.max_depth > turn.limits.max_argument_depth:
        parsed = (TOO_DEEP, "")  # keep the value out of every record and renderer
    if not ctx.contrast:
        lenient = None
    elif parsed is not None and not parsed[1]:  # (read by orjson from non-blank text)
        lenient = lenient_verdict(call, turn.limits.max_argument_depth, parsed[0])
    else:
        lenient = lenient_verdict(call, turn.limits.max_argument_depth)
    refusal = first_refusal(ctx, call, parsed)
    if refusal is not None:
        rule, detail = refusal
        return Decision(call.key, "refuse", rule.reason, frame, signal, detail,
                        lenient=lenient, draft=call.draft, rule=rule.id)
    assert parsed is not None  # (the json rule fires on every unparsed call)
    arguments, note = parsed
    ran, result = run_demo_tool(call.name or "", arguments)
    detail = "all checks passed" + (f"; {note}" if note else "")
    return Decision(call.key, "execute", None, frame, signal, detail, arguments=arguments,
                    result=result if ran else None, ran="demo" if ran else "dry-run",
                    lenient=lenient, draft=call.draft)
