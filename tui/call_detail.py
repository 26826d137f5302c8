"""The detail view of one call (C): identity, raw argument text, the parsed value or a labelled
draft, the gate's decision with the lenient contrast, and the call's anomalies."""

from __future__ import annotations

from functools import partial

import jiter
import orjson
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.events import Resize
from textual.screen import ModalScreen
from textual.widgets import Static

from ..core import exact_json
from ..core.gate.rules import RULE_STATEMENTS
from ..core.inert import json_dumps, json_text
from ..core.jsonprefix import Draft
from ..core.lanes import CallView
from . import safe
from .panes.frame_view import field_indent
from .panes.rows import LineWrapped

LABEL = 12
"""A field's label is right-aligned in this many cells, then a space, then its value."""


def _pretty(value: object) -> str:
    try:
        return json_dumps(value, orjson.OPT_INDENT_2).decode("utf-8", "surrogatepass")
    except (TypeError, RecursionError):
        return repr(value)


def _parsed(call: CallView) -> tuple[str, str]:
    """(label, pretty text) of the arguments as they stand at this step."""
    if call.draft is Draft.COMPLETE:
        try:
            return "parsed (strict)", _pretty(exact_json.loads(call.text))
        except orjson.JSONDecodeError:
            pass
    try:
        draft = jiter.from_json(call.text.encode("utf-8", "surrogatepass"), partial_mode=True)
    except ValueError:
        return "DRAFT: nothing salvageable", ""
    return "DRAFT (partial parse: never what a tool receives)", _pretty(draft)


def call_detail(call: CallView) -> Content:
    parts: list[safe.Part] = []

    def row(label: str, value: object) -> None:
        parts.extend([(f"{label:>{LABEL}} ", "$text-muted"), safe.content(str(value)), "\n"])

    for label, value in (("key", call.key), ("name", call.name or "—"), ("id", call.id or "—"),
                         ("call_id", call.call_id or "—"), ("kind", call.kind),
                         ("text", f"{call.origin}, {call.byte_length} B, {call.fragments} fragments"),
                         ("closed", f"at frame #{call.closed_frame}" if call.closed else "no"),
                         ("draft", call.draft.value)):
        row(label, value)
    if call.disputed is not None:  # the gate refuses a disputed call (rule `disputed`)
        where = f"#{call.disputed.frame}" if call.disputed.frame is not None else "end"
        row("disputed", f"{call.disputed.code} at {where}")
    parts.append(("\nRaw argument text (as received)\n", "bold"))
    parts.extend([safe.lines(call.text or "(empty)"), "\n"])
    label, pretty = _parsed(call)
    parts.append((f"\n{label}\n", "bold"))
    parts.extend([safe.lines(pretty), "\n"])
    decision = call.decision
    parts.append(("\nGate\n", "bold"))
    if decision is None:
        parts.append(safe.content("wait: the turn is still open at this step"))
    else:
        verdict = decision.action.upper() + (f" ({decision.reason})" if decision.reason else "")
        row("decision", verdict)
        if decision.rule is not None:
            row("rule", f"{decision.rule}: {RULE_STATEMENTS[decision.rule]}")
        row("detail", decision.detail)
        row("evidence", f"frame #{decision.frame}, signal {decision.signal or 'none (never came)'}")
        if decision.action == "execute":
            row("ran", decision.ran)
            row("result", json_text(decision.result) if decision.result is not None else "—")
        if decision.lenient is not None:
            lenient = decision.lenient
            row("lenient", f"{lenient.action} ({lenient.how}) with {json_text(lenient.arguments)}")
            if lenient.dropped:
                row("dropped", ", ".join(lenient.dropped))
    if call.anomalies:
        parts.append(("\n\nAnomalies\n", "bold"))
        for anomaly in call.anomalies:
            where = f"#{anomaly.frame}" if anomaly.frame is not None else "end"
            parts.extend([(f"{where:>6} {anomaly.code} ", "$warning"),
                          (f"[{anomaly.code.effect}] ", "$text-muted"),
                          safe.content(anomaly.message), "\n",
                          (f"{'':7}{anomaly.code.sentence}\n", "$text-muted")])
    return Content.assemble(*parts)


class CallDetailText(Static):
    """The call's detail wrapped at its width by the panes' wrapping, a field's value hanging
    under its first column (:func:`.panes.frame_view.field_indent`); stream text stays text."""

    DEFAULT_CSS = "CallDetailText { width: 1fr; }"

    def __init__(self, content: Content) -> None:
        super().__init__(content)
        self._block = LineWrapped(("call-detail",), lambda: content,
                                  hang=partial(field_indent, label=LABEL))
        self._width = 0

    def on_resize(self, event: Resize) -> None:
        width = event.size.width
        if width and width != self._width:
            self._width = width
            self.update(Content("\n").join(self._block.lines(width)))


class CallDetailScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,enter,q,C", "dismiss", "Close")]

    def __init__(self, call: CallView) -> None:
        super().__init__()
        self.call = call

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail", classes="modal-body") as body:
            body.border_title = safe.plain(f"call {self.call.key}")
            yield CallDetailText(call_detail(self.call))
