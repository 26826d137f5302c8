"""The decisions pane: the harness gate at the cursor, and its log so far.

On top, the turn (open, ended by which signal, cut) and the current decision per call, with the
lenient harness's contrast ("lenient would have EXECUTED with ...; dropped: dry_run"). Below, the
log of waits and verdicts up to the cursor, each citing its frame, and the anomalies found so far.
Every entry is clickable: it moves the cursor to the step (or frame) it cites.
"""

from __future__ import annotations

from typing import Any

import orjson
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.style import Style
from textual.widgets import Static

from ...core.engine import DecisionStep, WaitStep
from ...core.harness import Decision
from ...core.timeline import Timeline, View
from .. import safe

ACTION_STYLE = {"wait": "bold $text-warning", "execute": "bold $text-success",
                "refuse": "bold $text-error"}
LOG_TAIL = 400
"""Log entries rendered at most (the newest); earlier ones are a click away via navigation."""


def compact(value: Any, limit: int = 160) -> str:
    try:
        text = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        text = repr(value)
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


def summary(view: View) -> Content:
    turn = view.turn
    if view.k < 0:
        return Content.styled("No bytes (yet): nothing to decide.", "$text-muted italic")
    parts: list[safe.Part] = [(turn.protocol, "bold"), "  "]
    if turn.terminal is not None:
        parts += [("turn ENDED", "bold $text-success"), " by ", safe.content(turn.terminal.signal),
                  " at ", frame_ref(turn.terminal.frame)]
    elif view.finished:
        parts += [("stream ENDED, no terminal signal: TRUNCATED", "bold $text-error")]
    else:
        parts += [("turn OPEN", "bold $text-warning"), (" — the gate waits for the terminal signal",
                                                         "$text-muted")]
    if turn.stop is not None:
        flag = " (cut)" if turn.stop.cut else " (failed)" if turn.stop.failed else ""
        parts += ["\nstop reason ", safe.content(turn.stop.reason, "bold"), (flag, "$text-error")]
    for error in turn.errors[:3]:
        parts += [("\nprovider error ", "bold $text-error"), safe.content(safe.short(error.message))]
    for call in view.calls:
        parts += ["\n", (f"{call.order + 1} ", "bold"), safe.content(call.name or call.key, "bold"), " "]
        if call.decision is not None:
            parts.append(verdict(call.decision))
        else:
            parts += [("WAIT", ACTION_STYLE["wait"]),
                      (f" draft {call.draft.value}; nothing runs before the turn ends", "$text-muted")]
    if not view.calls:
        parts += [("\nno tool call so far", "$text-muted italic")]
    return Content.assemble(*parts)


def log_entries(view: View, timeline: Timeline) -> Content:
    steps = timeline.by_kind["decision"]
    first = max(0, len(view.log) - LOG_TAIL)
    parts: list[safe.Part] = []
    if first:
        parts.append((f"… {first} earlier entries\n", "$text-muted italic"))
    names = {c.key: c.name or c.key for c in view.calls}
    for i in range(first, len(view.log)):
        step, k = view.log[i], steps[i]
        current = k == view.k
        parts += [link(f"{'▶' if current else ' '}{k:>5} ", f"app.goto_step({k})",
                       "bold reverse" if current else "$text-muted")]
        if isinstance(step, WaitStep):
            parts += [("WAIT ", ACTION_STYLE["wait"]), safe.content(names.get(step.call, step.call)),
                      (f" {step.draft.value} ", "$text-muted"), frame_ref(step.frame)]
        elif isinstance(step, DecisionStep):
            d = step.decision
            parts += [(d.action.upper(), ACTION_STYLE[d.action]),
                      (f" {d.reason}" if d.reason else "", "bold $text-error"), " ",
                      safe.content(names.get(d.call, d.call), "bold"), " ", frame_ref(d.frame),
                      (" signal ", "$text-muted"), safe.content(d.signal or "none"),
                      (" — ", "$text-muted"), safe.content(safe.short(d.detail, 72), "$text-muted"),
                      (" ⚑ lenient would execute" if d.contrast else "", "$text-warning")]
        parts.append("\n")
    if view.anomalies:
        parts.append((f"\n{len(view.anomalies)} anomal{'y' if len(view.anomalies) == 1 else 'ies'}"
                      " so far (newest last)\n", "bold $text-warning"))
        anomaly_steps = timeline.by_kind["anomaly"]
        for i in range(max(0, len(view.anomalies) - 8), len(view.anomalies)):
            a = view.anomalies[i]
            parts += [link(f"{anomaly_steps[i]:>7} ", f"app.goto_step({anomaly_steps[i]})",
                           "$text-muted"), (f"⚠ {a.code} ", "bold $text-warning"),
                      frame_ref(a.frame), " ", safe.content(safe.short(a.message, 160)), "\n"]
    if not parts:
        parts.append(("The log is empty: no call has been seen yet.", "$text-muted italic"))
    return Content.assemble(*parts)


class DecisionsPane(Vertical, can_focus=False):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.timeline: Timeline | None = None
        self._summary = Static(classes="summary")
        self._log = Static(classes="log")
        self._scroll = VerticalScroll(self._log, can_focus=False, classes="log-scroll")

    def compose(self):  # type: ignore[no-untyped-def]
        yield VerticalScroll(self._summary, can_focus=False, classes="summary-scroll")
        yield self._scroll

    def load(self, timeline: Timeline) -> None:
        self.timeline = timeline

    def show(self, view: View) -> None:
        assert self.timeline is not None
        top, log = summary(view), log_entries(view, self.timeline)
        if not safe.same(top, self._summary.content):
            self._summary.update(top)
        if not safe.same(log, self._log.content):
            self._log.update(log)
            self.call_after_refresh(self._scroll.scroll_end, animate=False)
