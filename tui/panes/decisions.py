"""The decisions pane: the harness gate at the cursor, and its log so far.

On top, the turn (open, ended by which signal, cut) and the current decision per call, with the
lenient harness's contrast ("lenient would have EXECUTED with ...; dropped: dry_run"). Below, the
log of waits and verdicts up to the cursor, each citing its frame, and the anomalies found so far.
Every entry is clickable: it moves the cursor to the step (or frame) it cites.
"""

from __future__ import annotations

from typing import Any

from textual.containers import Vertical
from textual.content import Content
from textual.style import Style

from ...core.engine import DecisionStep, WaitStep
from ...core.events import Anomaly
from ...core.harness import Decision
from ...core.inert import json_text
from ...core.lanes import CallView
from ...core.timeline import Timeline, View
from .. import safe
from ..expert import turn_ending
from .rows import Block, RowsView, Wrapped

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
    said = turn_ending(timeline, timeline.end) if view.finished and timeline is not None else None
    parts: list[safe.Part] = []  # (not the protocol: the status line says it, room is short)
    if turn.terminal is not None:
        parts += [("turn ENDED", "bold $text-success"), " by ", safe.content(turn.terminal.signal),
                  " at ", frame_ref(turn.terminal.frame)]
    elif said is not None:  # (short: the transport's end must show in a narrow pane's rows)
        parts += [("TRUNCATED", "bold $text-error"), (": no terminal signal", "$text-error")]
    elif view.finished or decided:
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


class DecisionsPane(Vertical, can_focus=False):
    """The summary on top, the log below, both line-API views.

    The summary is as tall as the tallest summary of the session (the one at its last step, or
    the tallest shown so far while the session still grows), up to 60% of the pane; with less to
    show, its last rows stay blank. Sized to the summary at the cursor, it changed height on
    most seeks, and a change of height is a layout of the whole screen (with a scrollbar coming
    or going: two, each waiting for the next refresh): 40-150 ms a seek. Sized for the session,
    the panes stay where they are while stepping."""

    SUMMARY_SHARE = 0.6
    """The summary's largest share of the pane's height (as the CSS max-height says)..."""
    SUMMARY_SHARE_ZOOMED = 0.85
    """... or this share when the pane is zoomed (it has the screen: the whole headline shows,
    with the log's last rows under it; at 80x24 60% cut the demo's headline before its
    lenient-harness contrast)."""
    SUMMARY_LEAST = 5
    """... or this many rows (its border included) when the share is fewer and the pane has
    room for the log's first rows: at 80x24, under a status line of three rows, 60% was three
    rows of text, one short of the headline's verdict and the transport's end."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.timeline: Timeline | None = None
        self.summary_view = RowsView(classes="summary-scroll", sticky_scrollbar=False)
        self.log_view = RowsView(classes="log-scroll")
        # Rows of the tallest summary known, at the width without a scrollbar and at the width
        # with one (both, so the result never depends on whether the bar is there right now).
        self._peaks = (0, 0)
        self._widths: tuple[int, int] | None = None  # (without, with a bar) the peaks are for
        self._end_measured = False  # the last step's summary is in _peaks (a complete timeline)
        self._applied: tuple[int, bool, int] | None = None  # (rows, fits, pane height) applied

    def compose(self):  # type: ignore[no-untyped-def]
        yield self.summary_view
        yield self.log_view

    def load(self, timeline: Timeline) -> None:
        self.timeline = timeline
        self.summary_view.clear_cache()
        self.log_view.clear_cache()
        self._peaks, self._widths, self._end_measured = (0, 0), None, False

    def show(self, view: View) -> None:
        assert self.timeline is not None
        self.summary_view.set_blocks(summary_blocks(view, self.timeline))
        self._fit_summary()
        if self.log_view.set_blocks(log_blocks(view, self.timeline)):
            self.log_view.scroll_to_end()  # (from an entry's first row: see RowsView.top_for)

    def on_resize(self) -> None:
        self._peaks, self._widths, self._end_measured = (0, 0), None, False  # (as a fresh pane)
        self.call_after_refresh(self._fit_summary)

    def _fit_summary(self) -> None:
        """Size the summary for the session (see the class docstring): a layout only when the
        tallest summary known grows, or the pane is resized.

        Rows are counted at the width without a scrollbar; when that many do not fit the
        summary's share of the pane, the bar will be there, so the rows at the width with the
        bar count. Both widths come from the summary's region, never from whether its bar is
        shown at this moment: counted at the current width, a summary that had a bar when the
        window was widened kept the rows of the narrower width (1-3 too many, with an empty
        track), and what it ended with depended on when the layout after the resize landed."""
        summary, timeline = self.summary_view, self.timeline
        if timeline is None or not summary._width or not summary.content_region.width:
            return
        widths = (summary.width_without_bar, summary.width_with_bar)
        if widths != self._widths:  # (rows depend on the width)
            self._peaks, self._widths, self._end_measured = (0, 0), widths, False
        free, barred = self._peaks
        if not self._end_measured and timeline.closed and not timeline.indexing_pending \
                and len(timeline):
            self._end_measured = True
            end = summary_blocks(timeline.view(len(timeline) - 1), timeline)
            free = max(free, summary.rows_at(widths[0], end))
            barred = max(barred, summary.rows_at(widths[1], end))
        free = max(free, summary.rows_at(widths[0]))
        barred = max(barred, summary.rows_at(widths[1]))
        self._peaks = (free, barred)
        pane = self.content_region.height
        share = (self.SUMMARY_SHARE_ZOOMED if getattr(self.app, "zoomed", None) is self
                 else self.SUMMARY_SHARE)
        cap = max(int(pane * share), min(self.SUMMARY_LEAST, pane - 3))
        # A scrollbar coming or going is a layout too: when the tallest summary does not fit
        # its share of the pane, the bar stays (an empty track while the summary is short).
        fits = free + 1 < cap - 1
        rows = free if fits else barred
        if self._applied == (rows, fits, pane) or not pane:
            return
        self._applied = (rows, fits, pane)
        summary.styles.max_height = cap
        summary.styles.height = rows + 1  # (and its bottom border)
        summary.styles.overflow_y = "hidden" if fits else "scroll"

    def summary_text(self) -> str:
        return "\n".join(b.content.plain for b in self.summary_view.blocks if isinstance(b, Wrapped))

    def log_text(self) -> str:
        return "\n".join(b.content.plain for b in self.log_view.blocks if isinstance(b, Wrapped))
