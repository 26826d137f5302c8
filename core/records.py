"""Steps as plain records: the ``callscope replay --json`` contract, shared by every exporter.

One record per step (``frame``, ``call``, ``anomaly``, ``wait``, ``decision``; chunks only on
request), then one ``turn`` record last. Every record has ``kind``; the CLI adds ``source``.
"""

from __future__ import annotations

from typing import Any

from .ending import Ending
from .engine import CallPipeline
from .events import (
    Anomaly,
    ArgumentPiece,
    ArgumentsAppended,
    ArgumentsSet,
    CallClosed,
    CallCut,
    CallIdentified,
    CallOpened,
    FinalCopy,
    ProviderError,
    StopReported,
    TextAppended,
    TurnEnded,
    UsageReported,
)
from .harness import Decision
from .providers import budget_of
from .steps import CallStep, ChunkStep, DecisionStep, FrameStep, Step, WaitStep


def frame_record(step: FrameStep) -> dict[str, Any]:
    f = step.frame
    return {
        "kind": "frame", "index": f.index, "start": f.start, "end": f.end, "event": f.event,
        "data": f.data, "id": f.last_event_id, "retry": f.retry, "dispatch": f.dispatch,
        "terminated": f.terminated, "overflow": f.overflow, "comments": list(f.comments),
        "chunks": [f.first_chunk, f.last_chunk],
    }


def decision_record(d: Decision) -> dict[str, Any]:
    record: dict[str, Any] = {
        "kind": "decision", "call": d.call, "action": d.action, "reason": d.reason,
        "frame": d.frame, "signal": d.signal, "detail": d.detail, "rule": d.rule,
    }
    if d.action == "execute":
        record.update(arguments=d.arguments, ran=d.ran, result=d.result)
    if d.lenient is not None:
        record["lenient"] = {"action": d.lenient.action, "how": d.lenient.how,
                             "arguments": d.lenient.arguments, "dropped": list(d.lenient.dropped)}
        record["contrast"] = d.contrast
    return record


def _call_event_record(event: Any, length: int | None) -> dict[str, Any]:
    match event:
        case CallOpened():
            return {"kind": "call", "action": "opened", "call": event.key, "frame": event.frame,
                    "id": event.id, "call_id": event.call_id, "name": event.name,
                    "call_kind": event.kind}
        case ArgumentsAppended():
            return {"kind": "call", "action": "appended", "call": event.key, "frame": event.frame,
                    "fragment": event.fragment, "length": length}
        case ArgumentsSet():
            return {"kind": "call", "action": "set", "call": event.key, "frame": event.frame,
                    "text": event.text, "origin": event.origin, "length": length}
        case ArgumentPiece():
            return {"kind": "call", "action": "piece", "call": event.key, "frame": event.frame,
                    "path": event.path, "value": event.value, "will_continue": event.will_continue}
        case CallIdentified():
            return {"kind": "call", "action": "identified", "call": event.key, "frame": event.frame,
                    "id": event.id, "call_id": event.call_id, "name": event.name}
        case CallClosed():
            return {"kind": "call", "action": "closed", "call": event.key, "frame": event.frame}
        case FinalCopy():
            return {"kind": "call", "action": "final_copy", "call": event.key, "frame": event.frame,
                    "arguments": event.arguments}
        case CallCut():
            return {"kind": "call", "action": "cut", "call": event.key, "frame": event.frame,
                    "why": event.why}
        case Anomaly():
            return {"kind": "anomaly", "code": event.code, "message": event.message,
                    "call": event.key, "frame": event.frame}
        case StopReported():
            return {"kind": "stop", "reason": event.reason, "cut": event.cut,
                    "failed": event.failed, "frame": event.frame}
        case TurnEnded():
            return {"kind": "terminal", "signal": event.signal, "frame": event.frame}
        case ProviderError():
            return {"kind": "provider_error", "message": event.message, "code": event.code,
                    "frame": event.frame}
        case UsageReported():
            return {"kind": "usage", "usage": event.usage, "limit": event.limit,
                    "frame": event.frame}
        case TextAppended():
            return {"kind": "text", "channel": event.channel, "text": event.text,
                    "frame": event.frame}
    raise TypeError(f"no record for {type(event).__name__}")


def step_record(step: Step, pipeline: CallPipeline) -> dict[str, Any] | None:
    """The record of one step (None for chunk steps, which the CLI prints only on request)."""
    match step:
        case FrameStep():
            return frame_record(step)
        case CallStep():
            return _call_event_record(step.event, step.length)
        case WaitStep():
            return {"kind": "decision", "call": step.call, "action": "wait", "reason": None,
                    "frame": step.frame, "draft": step.draft.value}
        case DecisionStep():
            return decision_record(step.decision)
        case ChunkStep():
            return None
    raise TypeError(f"no record for {type(step).__name__}")


def chunk_record(step: ChunkStep) -> dict[str, Any]:
    return {"kind": "chunk", "index": step.index, "start": step.start, "end": step.end, "t": step.t}


def _output_tokens(pipeline: CallPipeline) -> dict[str, Any] | None:
    """The output tokens against the budget (:meth:`.TokenBudget.tally`); None where the
    protocol declares none."""
    budget = budget_of(pipeline.state.protocol)
    if budget is None:
        return None
    return budget.tally(pipeline.tools.request, pipeline.state.usage, pipeline.state.echoed_limit)


def turn_record(pipeline: CallPipeline, ending: Ending | None = None) -> dict[str, Any]:
    """The last record of an input: how the turn ended and what became of every call
    (``ending``: how and where the stream ended, when the caller knows the transport's end)."""
    state = pipeline.state
    known = state.protocol != "unknown"
    calls = []
    for key, call in state.calls.items():
        decision = pipeline.decisions.get(key)
        calls.append({
            "key": key, "id": call.id, "call_id": call.call_id, "name": call.name or "",
            "kind": call.kind, "arguments": call.text, "origin": call.origin,
            "bytes": call.byte_length, "closed": call.closed, "draft": call.draft.value,
            "action": decision.action if decision else "refuse",
            "reason": decision.reason if decision else "truncated",
            "rule": decision.rule if decision else None,
            "detail": decision.detail if decision else "no decision was made",
        })
    return {
        "kind": "turn", "protocol": state.protocol,
        "complete": state.complete if known else False,
        "truncated": state.truncated if known else False,
        "signal": state.terminal.signal if state.terminal else None,
        "stop_reason": state.stop.reason if state.stop else None,
        "error": state.errors[0].message if state.errors else None,
        "usage": state.usage or None,
        "output_tokens": _output_tokens(pipeline),
        "anomalies": state.anomaly_total,
        "halted": state.halted,
        "ending": ending.record() if ending is not None else None,
        "calls": calls,
    }
