"""The Chat Completions quirk profiles (:mod:`.quirks`): rewrites of the chunks' payloads.

A Chat chunk is ``{"choices": [{"index", "delta": {"tool_calls": [{"index", "id", "type",
"function": {"name", "arguments"}}]}, "finish_reason"}]}``; ``data: [DONE]`` ends the stream.
Each rewrite works on the first choice, as gateways that send these shapes have one.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from .quirks import Event, Rewrite


def _choice(e: Event) -> dict[str, Any] | None:
    if isinstance(e.data, dict) and isinstance(e.data.get("choices"), list) and e.data["choices"]:
        first = e.data["choices"][0]
        return first if isinstance(first, dict) else None
    return None


def _parts(e: Event) -> list[dict[str, Any]]:
    choice = _choice(e)
    delta = choice.get("delta") if choice else None
    parts = delta.get("tool_calls") if isinstance(delta, dict) else None
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def _edited(events: list[Event]) -> Iterator[tuple[Event, dict[str, Any]]]:
    """Each event with a deep copy of its payload to change (the original is never touched)."""
    for e in events:
        yield e, copy.deepcopy(e.data) if isinstance(e.data, dict) else e.data


def _each_part(change: Any) -> Rewrite:
    """A rewrite that applies ``change(part)`` to every tool_calls entry."""
    def rewrite(events: list[Event]) -> list[Event]:
        out = []
        for e, data in _edited(events):
            if not _parts(e):
                out.append(e)
                continue
            for part in data["choices"][0]["delta"]["tool_calls"]:
                change(part)
            out.append(e.changed(data))
        return out
    return rewrite


def _no_index(part: dict[str, Any]) -> None:
    part.pop("index", None)


def _index_zero(part: dict[str, Any]) -> None:
    part["index"] = 0


def _null_continuation(part: dict[str, Any]) -> None:
    if part.get("id"):
        return
    part["id"] = None
    part["type"] = None
    part.setdefault("function", {})["name"] = None


class _Calls:
    """Each call's id, name and whole argument text, by index, in order of arrival."""

    def __init__(self, events: list[Event]) -> None:
        self.calls: dict[Any, dict[str, Any]] = {}
        for e in events:
            for part in _parts(e):
                call = self.calls.setdefault(part.get("index"), {"index": part.get("index"),
                                                                 "arguments": ""})
                for key in ("id", "type"):
                    if part.get(key):
                        call[key] = part[key]
                function = part.get("function") or {}
                if function.get("name"):
                    call["name"] = function["name"]
                call["arguments"] += function.get("arguments") or ""

    def whole(self, call: dict[str, Any]) -> dict[str, Any]:
        return {"index": call["index"], "id": call.get("id"), "type": "function",
                "function": {"name": call.get("name"), "arguments": call["arguments"]}}


def _chunk_like(e: Event, delta: dict[str, Any], finish: Any = None) -> dict[str, Any]:
    data = {k: v for k, v in e.data.items() if k not in ("choices", "usage")}
    return {**data, "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                 "finish_reason": finish}]}


def _without_parts(e: Event, data: dict[str, Any]) -> Event | None:
    """The event with its tool_calls removed; None when nothing else is left in it."""
    choice = data["choices"][0]
    choice["delta"].pop("tool_calls", None)
    if not choice["delta"] and not choice.get("finish_reason") and not data.get("usage"):
        return None
    return e.changed(data)


def _whole_call(events: list[Event]) -> list[Event]:
    calls = _Calls(events)
    out: list[Event] = []
    sent = False
    for e, data in _edited(events):
        if not _parts(e):
            out.append(e)
            continue
        if not sent:  # Groq: an empty content delta, then each call whole in one delta
            sent = True
            out.append(e.changed(_chunk_like(e, {"role": "assistant", "content": ""})))
            out += [e.changed(_chunk_like(e, {"tool_calls": [calls.whole(c)]}))
                    for c in calls.calls.values()]
        rest = _without_parts(e, data)
        if rest is not None:
            out.append(rest)
    return out


def _last_part_at(events: list[Event]) -> int:
    return max((i for i, e in enumerate(events) if _parts(e)), default=-1)


def _args_resent(events: list[Event]) -> list[Event]:
    """After the last fragment, each call's whole argument text once more (GLM's final chunk)."""
    at = _last_part_at(events)
    if at < 0:
        return events
    last = events[at]
    again = [last.changed(_chunk_like(last, {"tool_calls": [
        {"index": c["index"], "function": {"arguments": c["arguments"]}}]}))
        for c in _Calls(events).calls.values()]
    return [*events[:at + 1], *again, *events[at + 1:]]


def _final_mixed(events: list[Event]) -> list[Event]:
    """The last fragment, the finish_reason, the call's id/type/name again and vLLM's
    ``stop_reason`` in one chunk."""
    at = _last_part_at(events)
    finish_at = next((i for i in range(at + 1, len(events)) if (c := _choice(events[i]))
                      and c.get("finish_reason")), None)
    if at < 0 or finish_at is None:
        return events
    calls = _Calls(events).calls
    data = copy.deepcopy(events[at].data)
    part = data["choices"][0]["delta"]["tool_calls"][-1]
    call = calls[part.get("index")]
    part.update(id=call.get("id"), type="function")
    part.setdefault("function", {})["name"] = call.get("name")
    finish = copy.deepcopy(events[finish_at].data)
    choice = finish["choices"][0]
    choice["delta"] = {**choice.get("delta", {}), **data["choices"][0]["delta"]}
    choice["stop_reason"] = 154829
    merged = events[finish_at].changed(finish)
    return [*events[:at], *events[at + 1:finish_at], merged, *events[finish_at + 1:]]


def _done_no_finish(events: list[Event]) -> list[Event]:
    out = []
    for e, data in _edited(events):
        choice = _choice(e)
        if choice is None or not choice.get("finish_reason"):
            out.append(e)
            continue
        data["choices"][0]["finish_reason"] = None
        if data["choices"][0].get("delta") or data.get("usage"):
            out.append(e.changed(data))
    return out


def _length_as_tool_calls(events: list[Event]) -> list[Event]:
    """vLLM: once a tool-call delta went out, a finish_reason ``length`` is sent as
    ``tool_calls``; only the usage (completion_tokens at the request's limit) still tells."""
    out = []
    for e, data in _edited(events):
        choice = _choice(e)
        if choice is None or choice.get("finish_reason") != "length":
            out.append(e)
            continue
        data["choices"][0]["finish_reason"] = "tool_calls"
        out.append(e.changed(data))
    return out


def _usage_empty_choices(events: list[Event]) -> list[Event]:
    model = next((e for e in events if _choice(e) is not None), None)
    done = next((i for i, e in enumerate(events) if e.data == "[DONE]"), len(events))
    if model is None:
        return events
    head = {k: v for k, v in model.data.items() if k in ("id", "object", "created", "model")}
    usage = {"prompt_tokens": 19, "completion_tokens": 24, "total_tokens": 43}
    t = events[done - 1].t if done else model.t
    return [*events[:done], Event(None, {**head, "choices": [], "usage": usage}, None, t),
            *events[done:]]


_FILTER = {name: {"filtered": False, "severity": "safe"}
           for name in ("hate", "self_harm", "sexual", "violence")}


def _content_filter(events: list[Event]) -> list[Event]:
    """Azure: a first chunk with no choices and prompt_filter_results, and after the finish an
    annotation chunk whose choice has no delta."""
    if not events:
        return events
    first = Event(None, {"id": "", "object": "", "created": 0, "model": "", "choices": [],
                         "prompt_filter_results": [{"prompt_index": 0,
                                                    "content_filter_results": _FILTER}]},
                  None, events[0].t)
    finish_at = next((i for i, e in enumerate(events) if (c := _choice(e))
                      and c.get("finish_reason")), None)
    out = [first, *events]
    if finish_at is not None:
        e = events[finish_at]
        head = {k: v for k, v in e.data.items() if k != "choices"}
        annotation = {**head, "choices": [{"index": 0, "finish_reason": None,
                                           "content_filter_offsets": {"check_offset": 0,
                                                                      "start_offset": 0,
                                                                      "end_offset": 120},
                                           "content_filter_results": _FILTER}]}
        out.insert(finish_at + 2, Event(None, annotation, None, e.t))
    return out


CHAT_QUIRKS: list[tuple[str, str, str, Rewrite]] = [
    ("no-index", "tool_calls entries without 'index'",
     "1: Ollama before 0.4.7 (ollama#7881), term-llm PR#314", _each_part(_no_index)),
    ("index-zero", "parallel calls all at index 0, each with a new id",
     "2: Ollama (ollama#15457), vLLM, lmdeploy#3412, Bedrock via LangChain (langchain#34807)",
     _each_part(_index_zero)),
    ("null-continuations", "continuations with id, type and function.name set to null",
     "4: xintaofei/deepseek-acp#4", _each_part(_null_continuation)),
    ("whole-call", "an empty content delta, then each call whole (name and all its arguments) "
     "in one delta", "6: Groq (vercel/ai PR#1653), Mistral, Ollama (ollama#11633)", _whole_call),
    ("args-resent", "each call's whole arguments sent again after its fragments",
     "7: GLM (vllm#42167), xlam (vllm#51697)", _args_resent),
    ("final-mixed", "the last fragment, finish_reason, a re-sent id/type/name and stop_reason "
     "in one chunk", "8: vllm#44098, vllm-ascend#8327", _final_mixed),
    ("length-as-tool-calls", "finish_reason 'length' sent as 'tool_calls' (the usage still at the "
     "request's limit)", "B.2: vllm-project/vllm#53269, #58228", _length_as_tool_calls),
    ("done-no-finish", "[DONE] without any finish_reason",
     "12: Evolink deepseek-v4-pro (openclaw PR#98575)", _done_no_finish),
    ("usage-empty-choices", "a usage-only chunk with empty 'choices' before [DONE]",
     "13: Fireworks (Portkey PR#1629), DeepSeek, Bedrock Mantle (llmeter PR#34)",
     _usage_empty_choices),
    ("content-filter", "Azure's content filter frames: a first chunk with empty choices and "
     "prompt_filter_results, an annotation chunk without delta",
     "14: Azure (mentat#429, autogen#6465, langchain#18977)", _content_filter),
]
