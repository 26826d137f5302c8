"""Expert info (like Wireshark's): the whole turn at a glance, from any step.

How the stream ended, every decision with the rule that refused, every stop reason, terminal
signal and provider error, and every anomaly grouped by its declared effect and explained in
the registry's words (:mod:`~callscope.core.gate.codes`). Each entry is a link: clicking it
closes the screen on its step.
"""

from __future__ import annotations

from collections import Counter

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.style import Style
from textual.widgets import Static

from ..core.ending import Ending, ending, transport_of
from ..core.engine import DecisionStep
from ..core.events import Anomaly, ProviderError, StopReported, TurnEnded
from ..core.gate.codes import Code, Effect
from ..core.gate.rules import RULE_STATEMENTS
from ..core.session_model import StreamEnd
from ..core.timeline import Timeline
from . import safe
from .timing import timing_lines

EFFECT_STYLE = {Effect.DISPUTES: "bold $text-error", Effect.UNREADABLE: "bold $text-error",
                Effect.HARMLESS: "$text-muted", Effect.INFO: "$text-warning"}


def _entry(k: int, pieces: list[Content | str]) -> Content:
    """One entry's line, all of it a link to step ``k`` (the action is built from an integer
    only, never from stream text)."""
    line = Content.assemble(*pieces)
    return line.stylize(Style.from_meta({"@click": f"screen.jump({k})"}), 0, len(line))


def turn_ending(timeline: Timeline, end: StreamEnd | None) -> Ending | None:
    """The ending of the whole recording (None while it still streams)."""
    if not timeline.closed:
        return None
    chunks = timeline.chunks
    transport, detail, at = transport_of(end, None if timeline.cut is None else
                                         f"cut at byte {timeline.cut} in the debugger")
    # (a recording whose reads all have one time says nothing of when it ended: no t+0.000s)
    last = chunks[-1].t if chunks and not chunks.one_time() else None
    return ending(timeline.state, transport=transport, received=timeline.total_bytes,
                  t=at if at is not None else last, detail=detail,
                  last_frame=timeline.frames[-1] if timeline.frames else None)


def expert_info(timeline: Timeline, end: StreamEnd | None) -> Content:
    parts: list[Content | str] = []
    said = turn_ending(timeline, end)
    parts += [Content.styled("Ending\n", "bold"),
              safe.content(said.line() if said else "the stream is still arriving"), "\n\n"]

    timing = timing_lines(timeline)
    if timing:
        parts += [Content.styled("Timing\n", "bold"),
                  *[piece for line in timing for piece in (safe.content(line), "\n")], "\n"]

    decided = [(k, s.decision) for k, s in zip(timeline.by_kind["decision"], timeline.log,
                                                 strict=True)
               if isinstance(s, DecisionStep) and s.decision.action != "wait"]
    parts.append(Content.styled(f"Decisions ({len(decided)})\n", "bold"))
    names = {c.key: c.name for c in timeline.view(len(timeline) - 1).calls} if len(timeline) else {}
    for k, d in decided:
        rule = f" [{d.rule}: {RULE_STATEMENTS[d.rule]}]" if d.rule else ""
        parts += [_entry(k, [
            Content.styled(f"{k:>8} ", "$text-muted"),
            Content.styled(d.action.upper(), "bold $text-success" if d.action == "execute"
                           else "bold $text-error"),
            f" {d.reason or ''} ", safe.content(safe.short(names.get(d.call) or d.call, 40),
                                                "bold"),
            safe.content(f"{rule} — {safe.short(d.detail, 160)}", "$text-muted")]), "\n"]
    if not decided:
        parts.append(Content.styled("none yet: the gate decides at the turn's end\n", "$text-muted"))

    facts: list[tuple[int, str]] = []
    for kind, label in ((StopReported, "stop reason"), (TurnEnded, "terminal signal"),
                        (ProviderError, "provider error")):
        steps, events = timeline.turn_facts[kind]
        for k, event in zip(steps, events, strict=True):
            text = (event.reason if isinstance(event, StopReported) else event.signal
                    if isinstance(event, TurnEnded) else event.message)  # type: ignore[attr-defined]
            facts.append((k, f"{label} {text} at #{event.frame}"))  # type: ignore[attr-defined]
    parts.append(Content.styled(f"\nStop reasons, terminal signal, provider errors ({len(facts)})\n",
                                "bold"))
    for k, text in sorted(facts):
        parts += [_entry(k, [Content.styled(f"{k:>8} ", "$text-muted"),
                             safe.content(safe.short(text, 200))]), "\n"]
    if not facts:
        parts.append(Content.styled("none: the provider said nothing of how the turn ended\n",
                                    "$text-muted"))

    anomalies = list(zip(timeline.by_kind["anomaly"], timeline.anomalies, strict=True))
    counts = Counter(a.code.effect for _, a in anomalies)
    total = timeline.state.anomaly_total
    parts.append(Content.styled(f"\nAnomalies ({total}"
                                + (f", {len(anomalies)} kept" if total != len(anomalies) else "")
                                + ")\n", "bold"))
    for effect in (Effect.DISPUTES, Effect.UNREADABLE, Effect.INFO, Effect.HARMLESS):
        group = [(k, a) for k, a in anomalies if a.code.effect is effect]
        if not group:
            continue
        parts.append(Content.styled(f"  {effect} ({counts[effect]})\n", EFFECT_STYLE[effect]))
        seen: set[Code] = set()
        for k, anomaly in group:
            parts += _anomaly(k, anomaly, explain=anomaly.code not in seen)
            seen.add(anomaly.code)
    return Content.assemble(*parts)


def _anomaly(k: int, anomaly: Anomaly, *, explain: bool) -> list[Content | str]:
    where = f"#{anomaly.frame}" if anomaly.frame is not None else "end"
    line: list[Content | str] = [_entry(k, [
        Content.styled(f"{k:>8} ", "$text-muted"), Content.styled(f"{anomaly.code} ", "bold"),
        Content.styled(f"{where} ", "$text-muted"),
        safe.content(safe.short(anomaly.message, 160))]), "\n"]
    if explain:  # (the registry's sentence, once per code)
        line.append(Content.styled(f"{'':9}{anomaly.code.sentence}\n", "italic $text-muted"))
    return line


class ExpertScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,e,q", "dismiss", "Close")]

    def __init__(self, timeline: Timeline, end: StreamEnd | None) -> None:
        super().__init__()
        self.timeline, self.end = timeline, end

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="expert", classes="modal-body") as body:
            body.border_title = "expert info — the whole turn (click an entry to go there)"
            yield Static(expert_info(self.timeline, self.end))

    def action_jump(self, k: int) -> None:
        self.dismiss()
        self.app.action_goto_step(k)  # type: ignore[attr-defined]
