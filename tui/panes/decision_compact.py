"""The decisions summary for a pane too short for it: the turn, then a row per call.

At 80x24 the summary has four rows, and the whole of it (the ending's line, each verdict with
its rule, evidence and the lenient harness's contrast) fifteen: the verdicts were under its
fold. Here the turn's state and how and where the transport ended come first, then each call
on one row, its action first (then its reason and its name), cut at the width. The pane
chooses it for the session (never per step: a summary that changes height is a layout of the
whole screen), and ``z`` shows the whole summary.
"""

from __future__ import annotations

from collections import Counter

from textual.content import Content

from ...core.lanes import CallView
from ...core.timeline import Timeline, View
from .. import safe
from .blocks import Block, OneRow, Wrapped
from .decisions import ACTION_STYLE, frame_ref, turn_state

HINT = "focus, z: the whole summary"
"""The summary's bottom edge says where the rest is (z zooms the focused pane)."""


def compact_head(view: View, timeline: Timeline | None) -> Content:
    """The turn in a line (wrapped when the pane is narrow): open, ended by which signal, or
    truncated, and how and where the transport ended once the stream is over."""
    turn = view.turn
    if view.k < 0:
        return Content.styled("No bytes (yet): nothing to decide.", "$text-muted italic")
    state, said = turn_state(view, timeline)
    parts: list[safe.Part]
    if turn.terminal is not None:
        parts = [("ENDED", "bold $text-success"), " by ", safe.content(turn.terminal.signal),
                 " at ", frame_ref(turn.terminal.frame)]
    elif said is not None:
        parts = [("TRUNCATED", "bold $text-error"), ": ", safe.content(said.where(), "bold")]
    elif state == "truncated":
        parts = [("TRUNCATED: no terminal signal", "bold $text-error")]
    else:
        parts = [("OPEN", "bold $text-warning"), (": the gate waits for the turn's end",
                                                   "$text-muted")]
    stop = turn.stop
    if stop is not None and (stop.cut or stop.failed):
        parts += [("; stop ", "$text-muted"), safe.content(stop.reason, "bold"),
                  (" (cut)" if stop.cut else " (failed)", "$text-error")]
    if turn.errors:  # (what the verdicts below name as their reason: provider_error)
        more = len(turn.errors) - 1
        parts += [("; provider error ", "bold $text-error"),
                  safe.content(safe.short(turn.errors[0].message, 80)),
                  (f" (+{more} more)" if more else "", "$text-muted")]
    decided = _decided(view)
    if (turn.terminal is not None or decided) and decided < len(view.calls):
        parts += [(f"; deciding: {decided} of {len(view.calls)} calls", "$text-warning")]
    return Content.assemble(*parts)


def _decided(view: View) -> int:
    return sum(call.decision is not None for call in view.calls)


def call_row(call: CallView) -> Content:
    """A call on one row: its number, the action (or WAIT and its draft), the reason, its name."""
    parts: list[safe.Part] = [(f"{call.order + 1} ", "bold")]
    decision = call.decision
    if decision is not None:
        parts += [(decision.action.upper(), ACTION_STYLE[decision.action]),
                  (f" {decision.reason}" if decision.reason else "", "$text-error")]
    else:
        parts += [("WAIT", ACTION_STYLE["wait"]), (f" {call.draft.value}", "$text-muted")]
    parts += [" ", safe.content(call.name or call.key)]
    return Content.assemble(*parts)


def tally(calls: list[CallView]) -> Content:
    """The calls counted by action, for more calls than the rows: ``8 calls: 6 REFUSE, 2
    EXECUTE``."""
    counts = Counter(c.decision.action if c.decision is not None else "wait" for c in calls)
    parts: list[safe.Part] = [(f"{len(calls)} calls: ", "bold")]
    for i, (action, n) in enumerate(counts.most_common()):
        parts += [", " if i else "", f"{n} ", (action.upper(), ACTION_STYLE[action])]
    return Content.assemble(*parts)


def compact_blocks(view: View, timeline: Timeline | None, rows: int) -> list[Block]:
    """The compact summary at ``view`` for a summary of ``rows`` rows of text: when the calls
    do not fit under the turn, their tally comes first (the rest scroll)."""
    tl = id(timeline)
    turn = view.turn
    blocks: list[Block] = [Wrapped(
        ("compact-head", tl, view.k < 0, id(turn.terminal), view.finished, id(turn.stop),
         len(turn.errors), _decided(view), len(view.calls)),
        lambda: compact_head(view, timeline))]
    if view.k < 0:
        return blocks
    if not view.calls:
        blocks.append(OneRow(("compact-none",), lambda: Content.styled(
            "no tool call so far", "$text-muted italic")))
        return blocks
    if len(view.calls) > max(rows - 1, 1):
        calls = list(view.calls)
        decided = tuple(id(c.decision) if c.decision is not None else None for c in calls)
        blocks.append(OneRow(("compact-tally", tl, decided), lambda: tally(calls)))
    for call in view.calls:
        key = ("compact-call", tl, call.order, call.name or call.key,
               id(call.decision) if call.decision is not None else call.draft)
        blocks.append(OneRow(key, lambda call=call: call_row(call)))  # type: ignore[misc]
    return blocks
