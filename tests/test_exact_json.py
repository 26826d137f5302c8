"""Integers past 64 bits, read exactly (core/exact_json.py).

orjson reads ``123456789012345678901234567890`` as ``1.2345678901234568e+29``: the gate used to
execute a call with that float, and a schema that wanted an integer passed it. The tests hold
the exact reading equal to orjson's everywhere else, keep every refusal orjson makes, and run
such a call through every protocol, the reference path and the outcome (hot) path.
"""

from __future__ import annotations

import json
import math
import random
from typing import Any

import orjson
import pytest
from callscope.core import exact_json
from callscope.core.engine import Engine
from callscope.core.replay import Chunking, replay
from callscope.core.synth import PROTOCOLS, ToolCall, Turn, encode
from callscope.core.tools import ToolSet
from callscope.tui.cli import main
from hypothesis import given, settings
from hypothesis import strategies as st

BIG = 123456789012345678901234567890
U64 = 2**64 - 1


def same(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (``1 == 1.0`` is not enough here)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return bool(a == b)


def in_64_bits(value: Any) -> bool:
    if isinstance(value, dict):
        return all(in_64_bits(v) for v in value.values())
    if isinstance(value, list):
        return all(in_64_bits(v) for v in value)
    return not isinstance(value, int) or isinstance(value, bool) or -2**63 <= value <= U64


JSON = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False, allow_infinity=False)
    | st.integers(min_value=-10**40, max_value=10**40)
    | st.sampled_from([2**63 - 1, -2**63, -2**63 - 1, U64, U64 + 1, BIG, -BIG])
    | st.text(alphabet=st.characters(codec="utf-8"), max_size=30)
    | st.sampled_from(["1733000000123456789", "id 12345678901234567890"]),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=5),
    max_leaves=25)


@settings(max_examples=400, deadline=None)
@given(JSON, st.booleans())
def test_the_exact_reading_is_orjsons_but_for_the_integers_it_rounds(value: Any, spaced: bool):
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": ") if spaced else (",", ":"))
    read = exact_json.loads(text)
    assert same(read, json.loads(text))
    assert same(exact_json.loads(text.encode()), read)
    if in_64_bits(value):
        assert same(read, orjson.loads(text))


@pytest.mark.parametrize("text", [
    '["\\ud800", 123456789012345678901234567890]',  # a lone surrogate escape
    "[NaN, 123456789012345678901234567890]", "[Infinity, 1234567890123456789012]",
    "[1e400, 1234567890123456789012]",  # a number past a double
    '{"a": 1234567890123456789012} x',  # trailing data
    '{"a": 1234567890123456789012',  # unfinished
    "[" * 2000 + "1234567890123456789012" + "]" * 2000,  # nested past orjson's limit
])
def test_what_orjson_refuses_stays_refused(text: str):
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(text)
    with pytest.raises(orjson.JSONDecodeError):
        exact_json.loads(text)


def test_a_run_of_19_digits_is_the_only_thing_that_costs_a_second_reading():
    assert not exact_json.may_round('{"n": 922337203685477580, "s": "x1234567890"}')
    assert exact_json.may_round('{"s": "1733000000123456789"}')
    assert exact_json.may_round(b"[-9223372036854775809]")
    assert same(exact_json.loads("[-9223372036854775809, 18446744073709551616]"),
                [-9223372036854775809, 18446744073709551616])


ARGUMENTS = (f'{{"id": {BIG}, "neg": -{BIG}, "u": {U64}, "f": 1e29, '
             f'"ns": "1733000000123456789"}}')
EXACT = {"id": BIG, "neg": -BIG, "u": U64, "f": 1e29, "ns": "1733000000123456789"}
SCHEMA = {"type": "object", "required": ["id", "neg", "u", "f", "ns"], "properties": {
    "id": {"type": "integer"}, "neg": {"type": "integer"}, "u": {"type": "integer"},
    "f": {"type": "number"}, "ns": {"type": "string"}}}


def _tools(schema: dict[str, Any]) -> ToolSet:
    return ToolSet([{"name": "lookup", "parameters": schema}])


def _decisions(protocol: str, data: bytes, tools: ToolSet, hot: bool) -> list[Any]:
    engine = Engine(protocol, tools)
    if hot:
        for piece in (data[:97], data[97:]):
            engine.push(piece)
        engine.close()
    else:
        for _ in replay([(0.0, data)], chunking=Chunking.parse("random:7"), engine=engine):
            pass
    return list(engine.pipeline.decisions.values())


@pytest.mark.parametrize("hot", [False, True], ids=["steps", "outcome"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_protocol_executes_the_integer_the_model_sent(protocol: str, hot: bool):
    data = encode(protocol, Turn((ToolCall("lookup", ARGUMENTS),)), random.Random(3))
    [decision] = _decisions(protocol, data, _tools(SCHEMA), hot)
    assert decision.action == "execute", decision
    assert same(decision.arguments, EXACT)
    # The schema sees the integer too: one past a maximum below it is refused, as it should be.
    capped = {**SCHEMA, "properties": {**SCHEMA["properties"],
                                       "id": {"type": "integer", "maximum": BIG - 1}}}
    [refused] = _decisions(protocol, data, _tools(capped), hot)
    assert refused.action == "refuse" and refused.reason == "schema", refused


def test_replay_json_writes_the_executed_integer_as_sent(tmp_path, capsys):
    path = tmp_path / "big.sse"
    path.write_bytes(encode("openai-chat", Turn((ToolCall("lookup", ARGUMENTS),)), random.Random(3)))
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": "lookup", "parameters": SCHEMA}]))
    assert main(["replay", str(path), "--tools", str(tools), "--json"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    [executed] = [r for r in records if r.get("action") == "execute"]
    assert same(executed["arguments"], EXACT)
    assert same(executed["lenient"]["arguments"], EXACT)


@pytest.mark.parametrize("protocol", ["ollama-chat", "gemini-generate"])  # (objects)
def test_the_frame_detail_shows_the_integer_as_the_stream_wrote_it(protocol: str):
    from callscope.core.timeline import Timeline
    from callscope.tui.screens import frame_detail

    data = encode(protocol, Turn((ToolCall("lookup", ARGUMENTS),)), random.Random(3))
    timeline = Timeline.build([(0.0, data)], protocol=protocol)
    details = [frame_detail(timeline, k).plain for k in range(len(timeline.frames))]
    assert any(f"{BIG}," in d and f"-{BIG}," in d for d in details)
    assert not any("e+29" in d.replace("1e+29", "") for d in details)


def test_the_call_detail_shows_the_strict_parse_exactly():
    from callscope.core.timeline import Timeline
    from callscope.tui.call_detail import call_detail

    data = encode("openai-chat", Turn((ToolCall("lookup", ARGUMENTS),)), random.Random(3))
    timeline = Timeline.build([(0.0, data)], protocol="openai-chat")
    last = len(timeline) - 1
    [call] = timeline.view(last).calls
    text = call_detail(call).plain
    assert "parsed (strict)" in text and f'"id": {BIG},' in text
    assert "1.2345678901234568e+29" not in text  # (orjson's reading of it)
