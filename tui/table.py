"""The readable table of ``callscope replay`` (without ``--json``).

Every value from the stream is untrusted: it goes through :func:`inert` so escape sequences,
control and bidi characters print as visible escapes, never as terminal commands.
"""

from __future__ import annotations

from typing import Any, TextIO

from ..core.engine import CallPipeline, Step
from ..core.inert import json_text, plain
from ..core.records import step_record


def inert(text: str, limit: int | None = None) -> str:
    """Text safe to print (core/inert.py): controls, escapes and bidi marks made visible."""
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return plain(text)


class TableWriter:
    def __init__(self, out: TextIO, source: str, *, width: int = 72) -> None:
        self.out = out
        self.width = width
        out.write(f"== {inert(source)}\n")  # (with --summary too: whose turn is whose)

    def _line(self, text: str) -> None:
        self.out.write(text + "\n")

    def step(self, step: Step, pipeline: CallPipeline) -> None:
        record = step_record(step, pipeline)
        if record is None:
            return
        kind = record["kind"]
        if kind == "frame":
            mark = "" if record["dispatch"] else "  (not dispatched)" if record["terminated"] else (
                "  (unterminated: stream ended inside this block)")
            event = inert(record["event"] or "message", 32)
            data = inert(record["data"], self.width)
            self._line(f"#{record['index']:<5} {record['start']:>7}-{record['end']:<7} "
                       f"{event:<28} {data}{mark}")
        elif kind == "call":
            self._line(f"{'':6} call {inert(record['call'], 40)} {record['action']}"
                       + self._call_detail(record))
        elif kind == "decision":
            self._line(self._decision(record))
        elif kind == "anomaly":
            self._line(f"{'':6} ! {record['code']}: {inert(record['message'], 100)}")
        elif kind in ("stop", "terminal", "provider_error"):
            self._line(f"{'':6} {kind}: " + inert(str(record.get("reason") or record.get("signal")
                                                         or record.get("message")), 80))

    def _call_detail(self, r: dict[str, Any]) -> str:
        if r["action"] == "opened":
            return f" name={inert(str(r['name']), 40)} id={inert(str(r['id']), 40)}"
        if r["action"] == "appended":
            return f" +{inert(json_text(r['fragment']), 40)} ({r['length']} chars)"
        if r["action"] == "set":
            return f" = {inert(r['text'], 48)} ({r['origin']})"
        if r["action"] == "piece":
            return f" {inert(r['path'], 30)} <- {inert(json_text(r['value']), 30)}"
        return ""

    def _decision(self, r: dict[str, Any]) -> str:
        call = inert(r["call"], 40)
        if r["action"] == "wait":
            return f"{'':6} wait {call} (draft {r['draft']})"
        head = f"{'':6} {r['action'].upper()} {call}"
        if r["action"] == "refuse":
            head += f" [{r['reason']}, rule {r.get('rule')}] {inert(r['detail'], 80)}"
        else:
            head += f" {inert(json_text(r.get('arguments')), 60)} -> {r.get('ran')}"
        if r.get("contrast"):
            lenient = r["lenient"]
            dropped = f", dropping {', '.join(lenient['dropped'])}" if lenient["dropped"] else ""
            head += (f"\n{'':8} lenient harness would have EXECUTED it with "
                     f"{inert(json_text(lenient['arguments']), 60)} ({lenient['how']}{dropped})")
        return head

    def turn(self, t: dict[str, Any]) -> None:
        state = "complete" if t["complete"] else "no terminal signal"
        if t["truncated"] and t["complete"]:
            state += ", cut by the provider"
        self._line(f"-- turn: {t['protocol']}, {state}, stop={inert(str(t['stop_reason']), 30)}"
                   + (f", error={inert(t['error'], 60)}" if t["error"] else "")
                   + f", {t['anomalies']} anomalies")
        if t.get("ending"):
            self._line(f"   ending: {inert(t['ending']['line'], 300)}")
        for c in t["calls"]:
            verdict = c["action"] + (f" ({c['reason']}, rule {c.get('rule')})" if c["action"] == "refuse"
                                     else "")
            self._line(f"   {inert(c['key'], 30)} {inert(c['name'], 30)} {c['bytes']}B -> {verdict}")
