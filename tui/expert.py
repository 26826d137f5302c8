"""Expert info (like Wireshark's): the whole turn at a glance, from any step.

How the stream ended, every decision with the rule that refused, every stop reason, terminal
signal and provider error, and every anomaly grouped by its declared effect and explained in
the registry's words (:mod:`~callscope.core.gate.codes`). Each entry is a link: clicking it
closes the screen on its step.
"""

from __future__ import annotations

import re
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
from ..core.providers import budget_of
from ..core.session_model import StreamEnd
from ..core.timeline import Timeline
from . import safe
from .timing import timing_lines

EFFECT_STYLE = {Effect.DISPUTES: "bold $text-error", Effect.UNREADABLE: "bold $text-error",
                Effect.HARMLESS: "$text-muted", Effect.INFO: "$text-warning"}


class _Entries:
    """The entries of one rendering, in order: each a line that is a link to its step (the
    action is built from an integer only, never from stream text), the selected one shown
    selected; their steps and where each starts in the text, for the keys that move between
    them."""

    def __init__(self, selected: int | None) -> None:
        self.selected = selected
        self.steps: list[int] = []
        self.starts: list[int] = []  # (the entry's line number in the text, before wrapping)
        self._counted, self._lines = 0, 0  # (the parts before counted so far: counted once)

    def line(self, k: int, pieces: list[Content | str], before: list[Content | str]) -> Content:
        """Entry ``k``'s line, which comes after the parts ``before`` (one growing list)."""
        for part in before[self._counted:]:
            self._lines += (part if isinstance(part, str) else part.plain).count("\n")
        self._counted = len(before)
        self.starts.append(self._lines)
        line = Content.assemble(*pieces)
        if len(self.steps) == self.selected:
            line = line.stylize("reverse", 0, len(line))
        self.steps.append(k)
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
    return expert_view(timeline, end)[0]


def expert_view(timeline: Timeline, end: StreamEnd | None, selected: int | None = None,
                strip: int = 60) -> tuple[Content, _Entries]:
    """Expert info with entry ``selected`` (its place among the entries) shown selected, and
    the entries; ``strip``: the cells of the arrival strip."""
    entries = _Entries(selected)
    parts: list[Content | str] = []
    said = turn_ending(timeline, end)
    parts += [Content.styled("Ending\n", "bold"),
              safe.content(said.line() if said else "the stream is still arriving"), "\n\n"]

    budget = budget_of(timeline.state.protocol)
    if budget is not None:
        request = timeline.tools.request if timeline.tools is not None else None
        parts += [Content.styled("Output tokens\n", "bold"), safe.content(budget.account(
            request, timeline.state.usage, timeline.state.echoed_limit)), "\n\n"]

    timing = timing_lines(timeline, strip)
    if timing:
        parts += [Content.styled("Timing\n", "bold"),
                  *[piece for line in timing for piece in (safe.content(line), "\n")], "\n"]

    decided = [(k, s.decision) for k, s in zip(timeline.by_kind["decision"], timeline.log,
                                                 strict=True)
               if isinstance(s, DecisionStep) and s.decision.action != "wait"]
    parts.append(Content.styled(f"Decisions ({len(decided)})\n", "bold"))
    names = {c.key: c.name for c in timeline.view(len(timeline) - 1).calls} if len(timeline) else {}
    for k, d in decided:
        statement = RULE_STATEMENTS[d.rule] if d.rule else ""
        rule = f" [{d.rule}: {statement}]" if d.rule else ""
        detail = "" if _says_nothing_more(d.detail, statement) else f" — {safe.short(d.detail, 160)}"
        parts += [entries.line(k, [
            Content.styled(f"{k:>8} ", "$text-muted"),
            Content.styled(d.action.upper(), "bold $text-success" if d.action == "execute"
                           else "bold $text-error"),
            f" {d.reason or ''} ", safe.content(safe.short(names.get(d.call) or d.call, 40),
                                                "bold"),
            safe.content(f"{rule}{detail}", "$text-muted")], parts), "\n"]
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
        parts += [entries.line(k, [Content.styled(f"{k:>8} ", "$text-muted"),
                             safe.content(safe.short(text, 200))], parts), "\n"]
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
            parts += _anomaly(entries, k, anomaly, explain=anomaly.code not in seen, before=parts)
            seen.add(anomaly.code)
    return Content.assemble(*parts), entries


def _anomaly(entries: _Entries, k: int, anomaly: Anomaly, *, explain: bool,
             before: list[Content | str]) -> list[Content | str]:
    where = f"#{anomaly.frame}" if anomaly.frame is not None else "end"
    line: list[Content | str] = [entries.line(k, [
        Content.styled(f"{k:>8} ", "$text-muted"), Content.styled(f"{anomaly.code} ", "bold"),
        Content.styled(f"{where} ", "$text-muted"),
        safe.content(safe.short(anomaly.message, 160))], before), "\n"]
    if explain:  # (the registry's sentence, once per code)
        line.append(Content.styled(f"{'':9}{anomaly.code.sentence}\n", "italic $text-muted"))
    return line


class ExpertScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,e,q", "dismiss", "Close"),
                Binding("down,j", "select(1)", "Next entry", priority=True),
                Binding("up,k", "select(-1)", "Previous entry", priority=True),
                Binding("enter", "go", "Go to the entry", priority=True)]

    def __init__(self, timeline: Timeline, end: StreamEnd | None) -> None:
        super().__init__()
        self.timeline, self.end = timeline, end
        self.selected: int | None = None

    def _view(self) -> None:
        # The strip and its label on one row of the window (at 80 columns 60 cells wrapped it).
        strip = max(16, min(60, self.app.size.width - 34))
        self.content, self.entries = expert_view(self.timeline, self.end, self.selected, strip)

    def compose(self) -> ComposeResult:
        self._view()
        with VerticalScroll(id="expert", classes="modal-body") as body:
            body.border_title = ("expert info — the whole turn (up/down or a click selects an "
                                 "entry, enter goes there)")
            yield Static(self.content)

    def action_select(self, by: int) -> None:
        """Select the next (previous) entry, shown selected and scrolled into view."""
        count = len(self.entries.steps)
        if not count:
            return
        at = (0 if by > 0 else count - 1) if self.selected is None else (
            max(0, min(count - 1, self.selected + by)))
        self.selected = at
        self._view()
        self.query_one(Static).update(self.content)
        body = self.query_one(VerticalScroll)
        top, bottom = self._rows_of(at)
        if not (body.scroll_y <= top and bottom <= body.scroll_y + body.size.height):
            body.scroll_to(y=max(0, top - body.size.height // 3), animate=False)

    _row_starts: tuple[int, str, list[int]] | None = None
    """The width and the text last wrapped, and the row each line of the text starts on."""

    def _rows_of(self, entry: int) -> tuple[int, int]:
        """The rows entry ``entry``'s line spans in the window, wrapped as the window wraps it
        (the text is the same whichever entry is selected: wrapped once per width and text)."""
        width, text = self.query_one(Static).content_region.width, self.content.plain
        if self._row_starts is None or self._row_starts[:2] != (width, text):
            starts, row = [], 0
            for line in self.content.split("\n", allow_blank=True):
                starts.append(row)
                row += max(1, len(line.wrap(width))) if width > 0 else 1
            self._row_starts = (width, text, [*starts, row])
        rows = self._row_starts[2]
        first = min(self.entries.starts[entry], len(rows) - 2)
        return rows[first], rows[first + 1]

    def action_go(self) -> None:
        if self.selected is not None:
            self.action_jump(self.entries.steps[self.selected])

    def action_jump(self, k: int) -> None:
        self.dismiss()
        self.app.action_goto_step(k)  # type: ignore[attr-defined]


def _says_nothing_more(detail: str, statement: str) -> bool:
    """A decision's detail whose words are all its rule's statement's (``the terminal signal
    never came`` beside "The provider's terminal signal never came."): said once."""
    words = re.findall(r"[\w']+", detail.lower())
    return bool(words) and set(words) <= set(re.findall(r"[\w']+", statement.lower()))
