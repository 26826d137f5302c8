"""What the gate says after it has decided: usage a stream reports after its terminal signal.

Bedrock Converse sends its usage in ``metadata``, after ``messageStop``: every call is decided
at the terminal signal, before the count exists (:attr:`.TokenBudget.after_terminal`). A count
that then reaches the request's limit cannot change a decision, but it says that the output ran
into the limit, so the reader is told (an ``info`` anomaly, once a turn).
"""

from __future__ import annotations

from typing import Any

from ..calls import TurnState
from ..events import Anomaly
from ..providers import budget_of
from .codes import Code


def spent_after_decision(turn: TurnState, request: Any, frame: int | None) -> Anomaly | None:
    """The anomaly for usage reported after the terminal signal that reaches the budget, where
    the protocol reports its usage there (:attr:`.TokenBudget.after_terminal`), or None (no
    such budget, no overrun, or said already this turn)."""
    if Code.BUDGET_SPENT_AFTER_DECISION in turn.anomaly_counts:
        return None
    budget = budget_of(turn.protocol)
    if budget is None or not budget.after_terminal:
        return None  # (elsewhere a usage after the terminal is no part of the turn: not read)
    overrun = budget.overrun(request, turn.usage, turn.echoed_limit)
    if overrun is None:
        return None
    return Anomaly(frame, Code.BUDGET_SPENT_AFTER_DECISION,
                   f"the usage reported after the terminal signal ({overrun.used} output "
                   f"tokens) reaches the budget of {overrun.budget} ({overrun.source}): the "
                   "calls decided at that signal may have been cut by it"[:300])
