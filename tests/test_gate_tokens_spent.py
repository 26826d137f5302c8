"""Rule ``tokens-spent``: a turn whose reported output tokens reach the request's limit is
cut, whatever its stop reason says; below the limit, or with no limit or no count, the rule
says nothing. Each protocol's paths are data (:class:`TokenBudget` in its spec)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from callscope.core.check import check_input
from callscope.core.demo_tools import DEMO_TOOL_DEFINITIONS
from callscope.core.engine import CallStep, DecisionStep, Engine
from callscope.core.events import Anomaly
from callscope.core.gate.rules import RULES
from callscope.core.providers import SPECS
from callscope.core.providers.budget import TokenBudget, proto3
from callscope.core.replay import replay
from callscope.core.session import open_input
from callscope.core.tools import ToolSet, tools_from_request

SESSIONS = Path(__file__).resolve().parent.parent / "sessions"

WRITE_TOOL = {"type": "function", "function": {"name": "write_file", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"]}}}


def chat_stream(arguments: str, *, completion_tokens: int, finish: str = "tool_calls") -> bytes:
    """A Chat stream whose server rewrote the finish reason: the arguments close as JSON, the
    content inside them is cut (vllm-project/vllm#53269)."""
    def chunk(payload: dict[str, Any]) -> str:
        return "data: " + json.dumps({"id": "c1", "object": "chat.completion.chunk", **payload}) \
            + "\n\n"

    call = {"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "write_file", "arguments": arguments}}
    return "".join([
        chunk({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]},
                            "finish_reason": None}]}),
        chunk({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}),
        chunk({"choices": [], "usage": {"prompt_tokens": 50, "completion_tokens":
                                        completion_tokens, "total_tokens": 50 + completion_tokens}}),
        "data: [DONE]\n\n",
    ]).encode()


CUT_CODE = json.dumps({"path": "a.py", "content": "def f():\n    retu"})


def decisions(data: bytes, tools: ToolSet, protocol: str | None = None) -> list[Any]:
    return [s.decision for s in replay([(0.0, data)], protocol=protocol, tools=tools)
            if isinstance(s, DecisionStep)]


@pytest.mark.parametrize("body, action", [
    ({"max_completion_tokens": 16}, "refuse"),
    ({"max_tokens": 16}, "refuse"),
    ({"max_tokens": 4096, "max_completion_tokens": 16}, "refuse"),  # (the smaller binds)
    ({"max_completion_tokens": 17}, "execute"),
    ({"max_completion_tokens": 0}, "execute"),  # (not a limit)
    ({"max_completion_tokens": True}, "execute"),
    ({"max_completion_tokens": "16"}, "execute"),
    ({}, "execute"),
    (None, "execute"),
    ("not an object", "execute"),
])
def test_a_finish_reason_that_lies_is_refused_when_the_usage_reaches_the_limit(body, action):
    [decision] = decisions(chat_stream(CUT_CODE, completion_tokens=16),
                           ToolSet([WRITE_TOOL], request=body))
    assert decision.action == action, decision.detail
    if action == "refuse":
        assert (decision.reason, decision.rule) == ("truncated", "tokens-spent")
        assert "16 output tokens" in decision.detail and "tool_calls" in decision.detail


def test_the_rule_comes_after_the_stop_reason_and_before_the_calls_own_evidence():
    order = [rule.id for rule in RULES]
    assert order.index("stop-cut") < order.index("tokens-spent") < order.index("not-closed")
    # a turn both cut by its stop reason and over its budget names the stop reason
    [decision] = decisions(chat_stream(CUT_CODE, completion_tokens=16, finish="length"),
                           ToolSet([WRITE_TOOL], request={"max_tokens": 16}))
    assert decision.rule == "stop-cut"


def test_check_finds_no_cut_of_the_lying_stream_that_executes():
    """Every cut offset and chunking of the stream: nothing executes (the whole stream is
    over its budget; a cut one never had its terminal signal)."""
    data = chat_stream(CUT_CODE, completion_tokens=16)
    report = check_input("lying", [(0.0, data)], protocol="openai-chat",
                         tools=ToolSet([WRITE_TOOL], request={"max_completion_tokens": 16}))
    assert report.ok, report.violations
    assert (report.executed, report.refused) == (0, 1) and report.cuts >= len(data)


def _session_with_limit(protocol: str, delta: int) -> tuple[bytes, ToolSet, int]:
    """The bundled single call of ``protocol``, its request's limit set to the output tokens
    the stream reports plus ``delta``."""
    session = open_input(str(SESSIONS / protocol / "single_call.jsonl"))
    data = b"".join(chunk.data for chunk in session.chunks())
    body = json.loads(json.dumps((session.header.request or {}).get("body") or {}))
    budget = SPECS[protocol].token_budget
    assert budget is not None
    tools = ToolSet(tools_from_request(body) or DEMO_TOOL_DEFINITIONS)
    engine = Engine(protocol, tools)
    engine.feed(data)
    engine.close()
    used = budget.used(engine.state.usage)
    assert used is not None, f"{protocol}: the bundled stream reports no output count"
    place = body
    *parents, last = budget.limits[0]
    for name in parents:
        place = place.setdefault(name, {})
    place[last] = used + delta
    return data, tools.with_request(body), used


@pytest.mark.parametrize("protocol", sorted(SPECS))
def test_every_protocol_reads_its_limit_and_its_count(protocol):
    """Where the usage comes before the terminal signal, the limit is read; where it comes
    after (Bedrock Converse's ``metadata`` follows ``messageStop``), the budget declares it, and
    the call is decided before the count exists."""
    budget = SPECS[protocol].token_budget
    assert budget is not None
    data, tools, used = _session_with_limit(protocol, 0)
    [decision] = decisions(data, tools, protocol)
    if budget.after_terminal:  # decided before the count came; the count is then said
        assert decision.action == "execute", decision.detail
        late = [s.event for s in replay([(0.0, data)], protocol=protocol, tools=tools)
                if isinstance(s, CallStep) and isinstance(s.event, Anomaly)
                and s.event.code == "budget_spent_after_decision"]
        assert len(late) == 1 and f"({used} output tokens)" in late[0].message, late
        data, tools, _ = _session_with_limit(protocol, 1)
        assert not [s for s in replay([(0.0, data)], protocol=protocol, tools=tools)
                    if isinstance(s, CallStep) and isinstance(s.event, Anomaly)
                    and s.event.code == "budget_spent_after_decision"]
        return
    assert (decision.action, decision.rule) == ("refuse", "tokens-spent"), decision.detail
    assert f"{used} output tokens" in decision.detail
    data, tools, _ = _session_with_limit(protocol, 1)
    [decision] = decisions(data, tools, protocol)
    assert decision.action == "execute", decision.detail


@pytest.mark.parametrize("n, completion_tokens, action", [
    (2, 15, "execute"), (2, 16, "refuse"), (2, 31, "refuse"), (1, 16, "refuse"),
    (0, 16, "refuse"), ("2", 15, "execute"),
])
def test_with_several_choices_the_sum_is_held_to_the_limit_itself(n, completion_tokens, action):
    """Chat's ``n``: the usage sums the choices while ``max_tokens`` binds each, so a sum at
    the limit may be one choice cut there (refused: the turn may hold a cut call), and a sum
    below it shows that no choice reached it."""
    [decision] = decisions(chat_stream(CUT_CODE, completion_tokens=completion_tokens),
                           ToolSet([WRITE_TOOL], request={"max_tokens": 16, "n": n}))
    assert decision.action == action, decision.detail
    if action == "refuse" and n == 2:
        assert "the count sums 2 choices" in decision.detail, decision.detail


def test_one_choice_cut_at_the_limit_beside_a_short_one_is_refused():
    """Two choices asked for, one streamed and cut at the limit: the sum (16) is at the limit,
    however many choices the request asked for."""
    [decision] = decisions(chat_stream(CUT_CODE, completion_tokens=16),
                           ToolSet([WRITE_TOOL], request={"max_tokens": 16, "n": 4}))
    assert (decision.action, decision.rule) == ("refuse", "tokens-spent"), decision.detail


@pytest.mark.parametrize("config, limit", [
    ({"generationConfig": {"maxOutputTokens": 4}}, 4),
    ({"generationConfig": {"max_output_tokens": 4}}, 4),
    ({"generation_config": {"maxOutputTokens": 4}}, 4),
    ({"generation_config": {"max_output_tokens": 4}}, 4),
    ({"generationConfig": {"maxOutputTokens": 4, "candidateCount": 3}}, 4),
    ({"generation_config": {"max_output_tokens": 4, "candidate_count": 3}}, 4),
])
def test_gemini_reads_its_limit_in_either_proto3_spelling(config, limit):
    budget = SPECS["gemini-generate"].token_budget
    assert budget is not None
    overrun = budget.overrun(config, {"candidatesTokenCount": limit})
    assert overrun is not None and (overrun.used, overrun.budget) == (limit, limit)
    assert budget.overrun(config, {"candidatesTokenCount": limit - 1}) is None


def test_proto3_spells_each_level_both_ways():
    assert proto3("aB", "c") == (("aB", "c"), ("a_b", "c"))
    assert len(proto3("generationConfig", "maxOutputTokens")) == 4


def test_every_protocol_declares_a_budget():
    assert all(spec.token_budget is not None for spec in SPECS.values())


@pytest.mark.parametrize("body, limit", [
    ({"a": 5}, 5), ({"a": 5, "b": {"c": 3}}, 3), ({"a": -1}, None), ({"a": 0}, None),
    ({"a": 2.0}, None), ({"a": False}, None), ({"b": [1]}, None), ({"b": {"c": None}}, None),
    ([], None), (None, None), ({"b": 7}, None),
])
def test_a_limit_is_the_smallest_positive_integer_set(body, limit):
    bound = TokenBudget(limits=(("a",), ("b", "c")), spent=()).binding(body)
    assert (bound[0] if bound is not None else None) == limit


@pytest.mark.parametrize("usage, used", [
    ({"x": 3, "y": 4}, 7), ({"x": 3}, 3), ({"y": 0}, 0), ({}, None), ({"x": "3"}, None),
    ({"x": -2, "y": 1}, 1), ({"x": True}, None),
])
def test_the_count_sums_what_is_reported(usage, used):
    assert TokenBudget(limits=(), spent=(("x",), ("y",))).used(usage) == used


def _responses_with_echo(echoed: Any) -> bytes:
    """The bundled Responses single call, its response object echoing ``max_output_tokens``
    as ``echoed`` (every event that carries the response object)."""
    session = open_input(str(SESSIONS / "openai-responses" / "single_call.jsonl"))
    data = b"".join(chunk.data for chunk in session.chunks())
    assert b'"max_output_tokens":null' in data
    return data.replace(b'"max_output_tokens":null',
                        b'"max_output_tokens":' + json.dumps(echoed).encode())


def _output_tokens(data: bytes) -> int:
    engine = Engine("openai-responses", ToolSet(DEMO_TOOL_DEFINITIONS))
    engine.feed(data)
    engine.close()
    return int(engine.state.usage["output_tokens"])


def test_a_responses_capture_without_its_request_is_judged_by_the_echoed_limit():
    """A raw capture has no request body, but the response object echoes the request's
    ``max_output_tokens``: the rule reads that."""
    used = _output_tokens(_responses_with_echo(None))
    tools = ToolSet(DEMO_TOOL_DEFINITIONS)  # (no request)
    [decision] = decisions(_responses_with_echo(used), tools, "openai-responses")
    assert (decision.action, decision.rule) == ("refuse", "tokens-spent"), decision.detail
    assert (f"{used} output tokens, the budget is {used} (max_output_tokens {used} the stream "
            "echoed)") in decision.detail
    for echoed in (used + 1, None, 0, True, "5"):
        [decision] = decisions(_responses_with_echo(echoed), tools, "openai-responses")
        assert decision.action == "execute", (echoed, decision.detail)


def test_with_both_the_request_and_the_echo_the_smaller_limit_binds():
    used = _output_tokens(_responses_with_echo(None))
    for request, echoed, action in ((used, used + 50, "refuse"), (used + 50, used, "refuse"),
                                    (used + 1, used + 1, "execute")):
        tools = ToolSet(DEMO_TOOL_DEFINITIONS, request={"max_output_tokens": request})
        [decision] = decisions(_responses_with_echo(echoed), tools, "openai-responses")
        assert decision.action == action, (request, echoed, decision.detail)


def test_the_usage_record_carries_the_echoed_limit(tmp_path, capsys):
    from callscope.tui.cli import main
    capture = tmp_path / "echo.sse"
    capture.write_bytes(_responses_with_echo(321))
    assert main(["replay", str(capture), "--json"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    usage = [r for r in records if r["kind"] == "usage"]
    assert usage and usage[-1]["limit"] == 321


def test_a_harness_that_trusts_the_lying_finish_reason_is_a_refused_finding(tmp_path):
    """``check --harness``: the naive harness runs the call at finish_reason; on the lying
    stream that is a ``refused`` finding naming the rule's evidence, and its reproduction keeps
    the request, so it replays to the same refusal."""
    import sys

    from callscope.core.session import Chunk, SessionHeader, StreamEnd, save_session
    from callscope.testing import check_harness
    sys.path.insert(0, str(SESSIONS.parent / "docs" / "examples"))
    from naive_harness import naive_harness

    data = chat_stream(CUT_CODE, completion_tokens=16)
    body = {"model": "m", "stream": True, "max_tokens": 16, "tools": [WRITE_TOOL]}
    path = tmp_path / "lying.jsonl"
    save_session(str(path), SessionHeader(protocol="openai-chat", tools=[WRITE_TOOL], request={
        "method": "POST", "url": "http://127.0.0.1/v1/chat/completions", "headers": {},
        "body": body}), [Chunk(0.0, data[:200]), Chunk(0.1, data[200:])],
        StreamEnd("clean", at=0.2))
    report = check_harness(naive_harness, str(path), out_dir=tmp_path / "found")
    [refused] = [f for f in report.findings if f.kind == "refused"]
    assert "16 output tokens" in refused.message and "max_tokens 16" in refused.message
    assert refused.reproduction is not None
    [decision] = [s.decision for s in replay(
        [(c.t, c.data) for c in open_input(refused.reproduction).chunks()],
        protocol="openai-chat",
        tools=ToolSet([WRITE_TOOL], request=open_input(refused.reproduction).header.request["body"]))
        if isinstance(s, DecisionStep)]
    assert decision.rule == "tokens-spent"


@pytest.mark.parametrize("body, usage, echoed, line", [
    ({"max_tokens": 16}, {"completion_tokens": 16}, None,
     "16 of 16 output tokens (max_tokens 16 in the request): at the limit, so the output was cut "
     "there"),
    ({"max_tokens": 16, "n": 2}, {"completion_tokens": 12}, None,
     "12 of 16 output tokens (max_tokens 16 in the request; the count sums 2 choices, so any of "
     "them may have run into it)"),
    ({}, {"completion_tokens": 5}, None, "5 output tokens; no limit known (no request, or none set)"),
    (None, {}, None, "no output count reported, and no limit known (no request, or none set)"),
    ({"max_completion_tokens": 9}, {}, None,
     "no output count reported; the budget is 9 (max_completion_tokens 9 in the request)"),
])
def test_the_expert_info_line_says_the_count_against_the_budget(body, usage, echoed, line):
    budget = SPECS["openai-chat"].token_budget
    assert budget is not None and budget.account(body, usage, echoed) == line


def test_the_responses_account_names_the_echoed_limit():
    budget = SPECS["openai-responses"].token_budget
    assert budget is not None
    assert budget.account(None, {"output_tokens": 3}, 10) == \
        "3 of 10 output tokens (max_output_tokens 10 the stream echoed)"


def test_usage_after_the_terminal_is_said_only_where_the_protocol_sends_it_there():
    """Anthropic's usage comes before message_stop; one sent after it is no part of the turn
    (``data_after_terminal``), and no budget anomaly is said of it."""
    data, tools, used = _session_with_limit("anthropic", 0)
    late = (b'event: message_delta\ndata: {"type":"message_delta","delta":{},'
            b'"usage":{"output_tokens":%d}}\n\n' % (used + 50))
    codes = [s.event.code for s in replay([(0.0, data + late)], protocol="anthropic", tools=tools)
             if isinstance(s, CallStep) and isinstance(s.event, Anomaly)]
    assert "budget_spent_after_decision" not in codes, codes


def test_the_turn_record_carries_the_output_tokens_against_the_budget(tmp_path, capsys):
    from callscope.tui.cli import main
    capture = tmp_path / "echo.sse"
    capture.write_bytes(_responses_with_echo(_output_tokens(_responses_with_echo(None))))
    assert main(["replay", str(capture), "--json"]) == 0
    turn = json.loads(capsys.readouterr().out.splitlines()[-1])
    used = _output_tokens(_responses_with_echo(None))
    assert turn["output_tokens"] == {"used": used, "budget": used, "reached": True,
                                     "source": f"max_output_tokens {used} the stream echoed"}
