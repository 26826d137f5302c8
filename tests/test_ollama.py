"""The Ollama /api/chat reader over hand-built NDJSON lines (synthetic, in the shapes of the
ollama client's ``_types.py``): whole calls whose arguments are objects, the done object as the
terminal signal with done_reason, an error line, and what is not the documented shape."""

from __future__ import annotations

import json
from typing import Any

from callscope.core.demo_tools import DEMO_TOOL_DEFINITIONS
from callscope.core.engine import Engine
from callscope.core.gate.codes import Code
from callscope.core.tools import ToolSet

TOOLS = ToolSet(DEMO_TOOL_DEFINITIONS)


def line(message: dict[str, Any] | None = None, **top: Any) -> bytes:
    body = {"model": "llama3.2", "created_at": "2026-05-20T10:00:00Z", **top}
    if message is not None:
        body["message"] = {"role": "assistant", **message}
    body.setdefault("done", False)
    return json.dumps(body).encode() + b"\n"


def call(name: str, arguments: Any) -> dict[str, Any]:
    return {"content": "", "tool_calls": [{"function": {"index": 0, "name": name,
                                                        "arguments": arguments}}]}


DONE = line({"content": ""}, done=True, done_reason="stop", prompt_eval_count=3, eval_count=4)


def run(*lines: bytes, protocol: str | None = "ollama-chat") -> Engine:
    engine = Engine(protocol, TOOLS)
    data = b"".join(lines)
    for i in range(0, len(data), 5):
        engine.feed(data[i:i + 5])
    engine.close()
    return engine


def outcome(engine: Engine) -> list[tuple[str | None, str | None, str, str | None]]:
    return [(engine.state.calls[d.call].name, engine.state.calls[d.call].text, d.action, d.reason)
            for d in engine.pipeline.decisions.values()]


def test_two_calls_both_at_index_zero_are_two_calls() -> None:
    engine = run(line({"content": "Sure."}), line(call("lookup_demo_value", {"key": "Owner"})),
                 line(call("add_demo_numbers", {"a": 1, "b": 2})), DONE, protocol=None)
    assert engine.state.protocol == "ollama-chat"
    assert outcome(engine) == [("lookup_demo_value", '{"key":"Owner"}', "execute", None),
                               ("add_demo_numbers", '{"a":1,"b":2}', "execute", None)]
    assert engine.state.usage == {"prompt_eval_count": 3, "eval_count": 4}


def test_no_done_object_or_a_length_stop_runs_nothing() -> None:
    assert outcome(run(line(call("lookup_demo_value", {"key": "Owner"}))))[0][2:] == \
        ("refuse", "truncated")
    cut = line({"content": ""}, done=True, done_reason="length")
    assert outcome(run(line(call("lookup_demo_value", {"key": "Owner"})), cut))[0][2:] == \
        ("refuse", "truncated")


def test_a_done_object_cut_before_its_line_end_is_a_cut() -> None:
    engine = run(line(call("lookup_demo_value", {"key": "Owner"})), DONE[:-1])
    assert engine.state.terminal is None and outcome(engine)[0][2] == "refuse"


def test_an_error_line_is_a_provider_error() -> None:
    engine = run(line(call("lookup_demo_value", {"key": "Owner"})),
                 b'{"error":"model runner has unexpectedly stopped"}\n')
    assert [e.message for e in engine.state.errors] == ["model runner has unexpectedly stopped"]
    assert outcome(engine)[0][2:] == ("refuse", "provider_error")


def test_arguments_that_are_not_an_object_dispute_the_call() -> None:
    engine = run(line(call("lookup_demo_value", '{"key":"Owner"}')), DONE)
    assert Code.BAD_ARGUMENTS in {a.code for a in engine.state.anomalies}
    assert outcome(engine)[0][2] == "refuse"


def test_done_without_done_reason_is_a_failure() -> None:
    engine = run(line(call("lookup_demo_value", {"key": "Owner"})), line(done=True))
    assert Code.MISSING_STOP_REASON in {a.code for a in engine.state.anomalies}
    assert outcome(engine)[0][2] == "refuse"
