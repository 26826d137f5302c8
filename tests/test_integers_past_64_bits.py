"""An integer past 64 bits in a draft: a partial parse (jiter) keeps it an exact ``int``, which
orjson refuses to write. The lane's preview, ``replay --json``, the table and the exported
decision log each raised TypeError on such a call (a traceback, or the debugger gone)."""

from __future__ import annotations

import json

import orjson
import pytest
from callscope.core.inert import json_dumps, json_text
from callscope.core.replay import Chunking
from callscope.core.timeline import Timeline
from callscope.tui import exports
from callscope.tui.app import CallscopeApp
from callscope.tui.cli import main
from callscope.tui.panes.buffers import BuffersPane
from callscope.tui.panes.lane_text import draft_preview

BIG = 123456789012345678901234567890
ARGUMENTS = f'{{"city": {BIG}, "x": "y'
SALVAGED = f'{{"city":{BIG}}}'


def _frame(delta: dict[str, object], finish: str | None = None) -> bytes:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


def _call(arguments: str, head: bool = False) -> bytes:
    call: dict[str, object] = {"index": 0, "function": {"arguments": arguments}}
    if head:
        call.update(id="call_x", type="function", function={"name": "lookup", "arguments": ""})
    return _frame({"tool_calls": [call]})


CUT = _call("", head=True) + _call(ARGUMENTS[:20]) + _call(ARGUMENTS[20:])
"""A stream cut inside the call's arguments: refused, and the lenient contrast salvages it."""


def test_json_dumps_writes_what_orjson_refuses_exactly_and_the_rest_as_orjson_does() -> None:
    assert json_dumps({"a": BIG, "b": [1.5, None]}) == f'{{"a":{BIG},"b":[1.5,null]}}'.encode()
    assert json_dumps({"n": float("nan"), "a": BIG}) == f'{{"n":null,"a":{BIG}}}'.encode()
    pretty = json_dumps({"b": [1], "a": BIG}, orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
    assert pretty.decode() == f'{{\n  "a": {BIG},\n  "b": [\n    1\n  ]\n}}'
    ordinary = {"b": [1, {"c": "é"}], "a": 1.5}
    for option in (orjson.OPT_NON_STR_KEYS, orjson.OPT_INDENT_2):
        assert json_dumps(ordinary, option) == orjson.dumps(ordinary, option=option)
    with pytest.raises(TypeError):
        json_dumps({"a": BIG, "b": object()})
    assert json_text(-BIG) == str(-BIG)


def test_the_draft_preview_shows_the_integer_as_it_was_sent() -> None:
    assert draft_preview(ARGUMENTS) == SALVAGED


def test_replay_json_and_the_table_quote_the_salvaged_integer(tmp_path, capsys) -> None:
    path = tmp_path / "cut.sse"
    path.write_bytes(CUT)
    main(["replay", str(path), "--json"])
    lines = capsys.readouterr().out.splitlines()
    decision = [r for r in map(json.loads, lines) if r["kind"] == "decision"][-1]
    assert decision["action"] == "refuse" and decision["reason"] == "truncated"
    assert decision["lenient"]["arguments"] == {"city": BIG}  # (exact: json keeps big ints)
    main(["replay", str(path)])
    assert SALVAGED in capsys.readouterr().out


def test_the_exported_decision_log_quotes_it(tmp_path) -> None:
    timeline = Timeline.build([(0.0, CUT)], "openai-chat", None, Chunking("recorded"))
    (js, md) = exports.export("log", timeline, "cut.sse", tmp_path / "cut.decisions.json",
                              None, None)
    assert json.loads(js.read_bytes())["log"][-1]["lenient"]["arguments"] == {"city": BIG}
    assert "with " + SALVAGED in md.read_text()


async def test_the_debugger_shows_the_lane_and_its_preview() -> None:
    app = CallscopeApp([(0.0, CUT)], source="cut.sse", protocol="openai-chat")
    async with app.run_test(size=(120, 40)) as pilot:
        shown = []
        for k in range(len(app.timeline)):  # (the preview is the draft's: before the decision)
            app.action_goto_step(k)
            await pilot.pause()
            (lane,) = app.query_one(BuffersPane).lanes().values() or (None,)
            shown.append(lane is not None and "DRAFT" in (text := lane.plain(app.query_one(
                BuffersPane))) and SALVAGED in text)
        assert any(shown) and app.is_running
