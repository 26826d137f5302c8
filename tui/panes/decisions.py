"""The decisions pane's text: the harness gate at the cursor, and its log so far.

On top, the turn (open, ended by which signal, cut) and the current decision per call, with the
lenient harness's contrast ("lenient would have EXECUTED with ...; dropped: dry_run"). Below, the
log of waits and verdicts up to the cursor, each citing its frame, and the anomalies found so far.
Every entry is clickable: it moves the cursor to the step (or frame) it cites.
"""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.style import Style

from ...core.ending import Ending
from ...core.engine import DecisionStep, WaitStep
from ...core.events import Anomaly
from ...core.harness import Decision
from ...core.inert import json_text
from ...core.lanes import CallView
from ...core.timeline import Timeline, View
from .. import safe
from ..expert import turn_ending
from .blocks import Block, Wrapped

ACTION_STYLE = {"wait": "bold $text-warning", "execute": "bold $text-success",
                "refuse": "bold $text-error"}
LOG_TAIL = 400
"""Log entries rendered at most (the newest); earlier ones are a click away via navigation."""


def compact(value: Any, limit: int = 160) -> str:
    text = json_text(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def link(text: str, action: str, style: str = "") -> Content:
    """Clickable text; ``action`` is built from integers only, never from stream text."""
    return Content.styled(text, style).stylize(Style.from_meta({"@click": action}))


def frame_ref(frame: int | None) -> Content:
    if frame is None:
        return Content.styled("end of stream", "$text-muted")
    return link(f"#{frame}", f"app.goto_frame({frame})", "underline $text-primary")


def verdict(decision: Decision) -> Content:
    """One decision: action, reason, detail, evidence, and the lenient contrast."""
    parts: list[safe.Part] = [
        (decision.action.upper(), ACTION_STYLE[decision.action]),
        (f" {decision.reason}" if decision.reason else "", "bold $text-error"),
        (f" [rule {decision.rule}]" if decision.rule else "", "$text-muted"),
        " — ", safe.content(safe.short(decision.detail, 240)),
        ("\n  evidence: frame ", "$text-muted"), frame_ref(decision.frame),
        ("  signal ", "$text-muted"), safe.content(decision.signal or "none (never came)"),
    ]
    if decision.action == "execute":
        parts += [("\n  arguments ", "$text-muted"), safe.content(compact(decision.arguments))]
        if decision.ran == "demo":
            parts += [("\n  demo tool returned ", "$text-muted"), safe.content(compact(decision.result))]
        elif decision.ran == "dry-run":
            parts += [("\n  dry run: no local implementation was called", "$text-muted")]
    lenient = decision.lenient
    if decision.contrast and lenient is not None:
        parts += [("\n  ⚑ lenient harness would have EXECUTED", "bold $text-warning"),
                  (f" ({lenient.how}) with ", "$text-warning"),
                  safe.content(compact(lenient.arguments), "$text-warning")]
        if lenient.dropped:
            parts += [("; dropped: ", "$text-warning"),
                      safe.content(", ".join(lenient.dropped), "bold $text-warning")]
    return Content.assemble(*parts)


def turn_state(view: View, timeline: Timeline | None) -> tuple[str, Ending | None]:
    """How the turn stands at ``view``, for a headline (whole or compact): ``ended`` (by its
    terminal signal), ``truncated`` (the stream is over without one, or the gate decided: it
    decides only once the turn ended) or ``open``; and, once the stream is over, its ending."""
    said = turn_ending(timeline, timeline.end) if view.finished and timeline is not None else None
    if view.turn.terminal is not None:
        return "ended", said
    if said is not None or view.finished or any(c.decision is not None for c in view.calls):
        return "truncated", said
    return "open", said


def head(view: View, timeline: Timeline | None = None) -> Content:
    """The turn: open or ended (by which signal), how far the gate is, stop reason,
    provider errors, and, once the stream is over, how and where it ended, on the second line
    (a narrow pane's summary shows four or five rows: the transport's end, at the start of
    the ending's line, must be among them). It never says what the calls below it
    contradict: the gate decides only once the turn ended, so a decision
    on screen means the turn is over, and a turn that ended with a call still waiting is being
    decided."""
    turn = view.turn
    if view.k < 0:
        return Content.styled("No bytes (yet): nothing to decide.", "$text-muted italic")
    decided = sum(call.decision is not None for call in view.calls)
    state, said = turn_state(view, timeline)
    parts: list[safe.Part] = []  # (not the protocol: the status line says it, room is short)
    if turn.terminal is not None:
        parts += [("turn ENDED", "bold $text-success"), " by ", safe.content(turn.terminal.signal),
                  " at ", frame_ref(turn.terminal.frame)]
    elif said is not None:  # (short: the transport's end must show in a narrow pane's rows)
        parts += [("TRUNCATED", "bold $text-error"), (": no terminal signal", "$text-error")]
    elif state == "truncated":
        parts += [("stream ENDED, no terminal signal: TRUNCATED", "bold $text-error")]
    else:
        parts += [("turn OPEN", "bold $text-warning"), (" — the gate waits for the terminal signal",
                                                         "$text-muted")]
    if said is not None:  # second: how and where the transport ended leads the line, in bold
        line, lead = said.line(), f"transport {said.where()}"
        parts += [("\nending ", "bold"), safe.content(lead, "bold"),
                  safe.content(line.removeprefix(lead), "$text-muted")]
    if (turn.terminal is not None or decided) and decided < len(view.calls):
        parts += [(f"\nthe gate is deciding: {decided} of {len(view.calls)} calls decided at this "
                   "step", "$text-warning")]
    stop = turn.stop
    if stop is not None:
        flag = " (cut)" if stop.cut else " (failed)" if stop.failed else ""
        if said is not None and said.says_stop and said.stop_reason == stop.reason:
            # (the ending line above names it: said once)
            if flag:
                parts += [("\nthe provider " + ("cut its output" if stop.cut else
                                                "says the turn failed"), "$text-error"),
                          (" (the stop reason above)", "$text-muted")]
        else:
            parts += ["\nstop reason ", safe.content(stop.reason, "bold"), (flag, "$text-error"),
                      (" at ", "$text-muted"), frame_ref(stop.frame)]
    for error in turn.errors[:3]:
        parts += [("\nprovider error ", "bold $text-error"), safe.content(safe.short(error.message))]
    return Content.assemble(*parts)


def call_line(call: CallView) -> Content:
    """One call's current decision (or the wait)."""
    parts: list[safe.Part] = [(f"{call.order + 1} ", "bold"),
                              safe.content(call.name or call.key, "bold"), " "]
    if call.decision is not None:
        parts.append(verdict(call.decision))
    else:
        parts += [("WAIT", ACTION_STYLE["wait"]),
                  (f" draft {call.draft.value}; nothing runs before the turn ends", "$text-muted")]
    return Content.assemble(*parts)


def summary_blocks(view: View, timeline: Timeline | None) -> list[Block]:
    turn, tl = view.turn, id(timeline)
    blocks: list[Block] = [Wrapped(
        ("head", tl, view.k < 0, turn.protocol, id(turn.terminal), view.finished, id(turn.stop),
         tuple(id(e) for e in turn.errors[:3]),
         sum(call.decision is not None for call in view.calls), len(view.calls)),
        lambda: head(view, timeline))]
    if view.k < 0:
        return blocks
    for call in view.calls:
        key = ("call", tl, call.order, call.name or call.key,
               id(call.decision) if call.decision is not None else call.draft)
        blocks.append(Wrapped(key, lambda call=call: call_line(call)))  # type: ignore[misc]
    if not view.calls:
        blocks.append(Wrapped(("none",), lambda: Content.styled("no tool call so far",
                                                                "$text-muted italic")))
    blocks.append(Wrapped(("end",), Content))  # a blank row under the summary
    return blocks


def entry(step: WaitStep | DecisionStep, k: int, current: bool, name: str) -> Content:
    """One line of the log: the step (a link to it), then the wait or the verdict."""
    parts: list[safe.Part] = [link(f"{'▶' if current else ' '}{k:>5} ", f"app.goto_step({k})",
                                   "bold reverse" if current else "$text-muted")]
    if isinstance(step, WaitStep):
        parts += [("WAIT ", ACTION_STYLE["wait"]), safe.content(name),
                  (f" {step.draft.value} ", "$text-muted"), frame_ref(step.frame)]
    else:
        d = step.decision
        parts += [(d.action.upper(), ACTION_STYLE[d.action]),
                  (f" {d.reason}" if d.reason else "", "bold $text-error"),
                  (f" [{d.rule}]" if d.rule else "", "$text-muted"), " ",
                  safe.content(name, "bold"), " ", frame_ref(d.frame),
                  (" signal ", "$text-muted"), safe.content(d.signal or "none"),
                  (" — ", "$text-muted"), safe.content(safe.short(d.detail, 72), "$text-muted"),
                  (" ⚑ lenient would execute" if d.contrast else "", "$text-warning")]
    return Content.assemble(*parts)


def anomaly_line(anomaly: Anomaly, k: int) -> Content:
    return Content.assemble(
        link(f"{k:>7} ", f"app.goto_step({k})", "$text-muted"), (f"⚠ {anomaly.code} ", "bold $text-warning"),
        frame_ref(anomaly.frame), " ", safe.content(safe.short(anomaly.message, 160)))


def log_blocks(view: View, timeline: Timeline) -> list[Block]:
    """The newest :data:`LOG_TAIL` waits and verdicts up to the cursor, then the anomalies."""
    steps, tl = timeline.by_kind["decision"], id(timeline)
    first = max(0, len(view.log) - LOG_TAIL)
    blocks: list[Block] = []
    if first:
        blocks.append(Wrapped(("earlier", first), lambda: Content.styled(
            f"… {first} earlier entries", "$text-muted italic")))
    names = {c.key: c.name or c.key for c in view.calls}
    for i in range(first, len(view.log)):
        step, k = view.log[i], steps[i]
        name = names.get(step.call if isinstance(step, WaitStep) else step.decision.call, "")
        if not name:
            name = step.call if isinstance(step, WaitStep) else step.decision.call
        current = k == view.k
        blocks.append(Wrapped(("entry", tl, i, current, name),
                              lambda s=step, k=k, c=current, n=name: entry(s, k, c, n)))  # type: ignore[misc]
    anomalies = view.anomalies
    if anomalies:
        n = len(anomalies)
        blocks.append(Wrapped(("anomalies", n), lambda: Content.styled(
            f"\n{n} anomal{'y' if n == 1 else 'ies'} so far (newest last)", "bold $text-warning")))
        anomaly_steps = timeline.by_kind["anomaly"]
        for j in range(max(0, n - 8), n):
            blocks.append(Wrapped(("anomaly", tl, j), lambda a=anomalies[j], k=anomaly_steps[j]:
                                  anomaly_line(a, k)))  # type: ignore[misc]
    if not blocks:
        blocks.append(Wrapped(("log-empty",), lambda: Content.styled(
            "The log is empty: no call has been seen yet.", "$text-muted italic")))
    return blocks
