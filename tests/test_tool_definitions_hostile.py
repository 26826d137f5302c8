"""Tool definitions that are not what they look like: a falsy schema is not "any object", a
tool needs a name, and a bad ``--tools FILE`` is blamed on FILE (each test from an audit
finding)."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest
from callscope.core.tools import ANY_OBJECT, ToolDefinitionError, ToolSet
from callscope.tui.cli import main

SESSIONS = pathlib.Path(__file__).resolve().parent.parent / "sessions"
SINGLE_CALL = str(SESSIONS / "openai-chat" / "single_call.jsonl")  # calls lookup_demo_value
DEMO = str(SESSIONS / "demo.jsonl")

ABSENT = object()


def _put(target: dict[str, Any], key: str, schema: object) -> dict[str, Any]:
    if schema is not ABSENT:
        target[key] = schema
    return target


# Each provider's shape, from a name and a schema (ABSENT: the schema's key left out).
SHAPES = {
    "chat": lambda n, s: {"type": "function", "function": _put({"name": n}, "parameters", s)},
    "responses": lambda n, s: _put({"type": "function", "name": n}, "parameters", s),
    "anthropic": lambda n, s: _put({"name": n}, "input_schema", s),
    "gemini": lambda n, s: {"functionDeclarations": [_put({"name": n}, "parameters", s)]},
    "gemini-json-schema": lambda n, s: {
        "functionDeclarations": [_put({"name": n}, "parametersJsonSchema", s)]},
    "bedrock": lambda n, s: {"toolSpec": {"name": n, "inputSchema": _put({}, "json", s)}},
    "bare": lambda n, s: _put({"name": n}, "parameters", s),
}
NULL_IS_ABSENT = {"chat", "responses", "gemini", "gemini-json-schema", "bare"}
"""Where the provider reads a null schema as none given; Anthropic's and Bedrock's are required."""


@pytest.mark.parametrize("shape", SHAPES)
def test_a_false_schema_refuses_every_call_and_true_accepts_any(shape):
    refusing = ToolSet([SHAPES[shape]("f", False)])
    assert refusing.tools["f"].schema is False
    assert refusing.schema_error("f", {}) is not None
    assert refusing.schema_error("f", {"a": 1}) is not None
    accepting = ToolSet([SHAPES[shape]("f", True)])
    assert accepting.schema_error("f", {"a": 1}) is None


@pytest.mark.parametrize("shape", SHAPES)
def test_an_empty_object_schema_is_kept_and_accepts_anything(shape):
    tools = ToolSet([SHAPES[shape]("f", {})])
    assert tools.tools["f"].schema == {}
    assert tools.schema_error("f", {"a": [1, "x", None]}) is None


@pytest.mark.parametrize("shape", SHAPES)
def test_a_missing_schema_keeps_the_default(shape):
    assert ToolSet([SHAPES[shape]("f", ABSENT)]).tools["f"].schema == ANY_OBJECT


@pytest.mark.parametrize("shape", SHAPES)
def test_a_null_schema_is_the_default_only_where_the_provider_says_so(shape):
    if shape in NULL_IS_ABSENT:
        assert ToolSet([SHAPES[shape]("f", None)]).tools["f"].schema == ANY_OBJECT
    else:
        with pytest.raises(ToolDefinitionError, match=r"^tool 'f': a JSON Schema is an object "
                                                      r"or a boolean, not null$"):
            ToolSet([SHAPES[shape]("f", None)])


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("schema, quoted", [([], "[]"), (0, "0"), ("", "''"), (5, "5"),
                                            ("object", "'object'"), ([{"type": "object"}],
                                                                     "[{'type': 'object'}]")])
def test_a_schema_neither_object_nor_boolean_is_a_bad_definition(shape, schema, quoted):
    with pytest.raises(ToolDefinitionError) as raised:
        ToolSet([SHAPES[shape]("f", schema)])
    assert str(raised.value) == f"tool 'f': a JSON Schema is an object or a boolean, not {quoted}"


@pytest.mark.parametrize("wrapper", [None, 5, [], "x", True])
def test_a_bedrock_input_schema_that_is_not_an_object_is_a_bad_definition(wrapper):
    with pytest.raises(ToolDefinitionError, match=r"^tools\[0\]\.toolSpec: its inputSchema is an "
                                                  r"object holding the schema in json, not "):
        ToolSet([{"toolSpec": {"name": "f", "inputSchema": wrapper}}])


def test_the_false_schema_repro_refuses_the_call(tmp_path, capsys):
    tools = tmp_path / "t_false.json"
    tools.write_text(json.dumps([{"type": "function", "function": {
        "name": "lookup_demo_value", "parameters": False}}]))
    assert main(["replay", "--tools", str(tools), SINGLE_CALL]) == 0
    out = capsys.readouterr().out
    assert "lookup_demo_value 18B -> refuse (schema, rule schema)" in out
    assert "execute" not in out


# -- names ---------------------------------------------------------------------------------------

WHERE = {"chat": "tools[1].function", "responses": "tools[1]", "anthropic": "tools[1]",
         "gemini": "tools[1].functionDeclarations[0]",
         "gemini-json-schema": "tools[1].functionDeclarations[0]", "bedrock": "tools[1].toolSpec",
         "bare": "tools[1]"}


def _nameless(shape: str, name: object) -> dict[str, Any]:
    entry = SHAPES[shape]("placeholder", {"type": "object"})
    holder = (entry.get("function") or entry.get("toolSpec")
              or (entry.get("functionDeclarations") or [entry])[0])
    del holder["name"]
    if name is not ABSENT:
        holder["name"] = name
    return entry


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", [ABSENT, None], ids=["missing", "null"])
def test_a_tool_without_a_name_is_a_bad_definition_named_by_its_index(shape, name):
    if shape == "bare" and name is ABSENT:  # ({"parameters": ...} alone is no tool shape at all)
        with pytest.raises(ToolDefinitionError, match=r"^tools\[1\]: not a tool definition: "):
            ToolSet([{"name": "ok"}, _nameless(shape, name)])
        return
    with pytest.raises(ToolDefinitionError) as raised:
        ToolSet([{"name": "ok"}, _nameless(shape, name)])
    assert str(raised.value) == f"{WHERE[shape]}: a tool definition needs a name, and this one has none"


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name, quoted", [(5, "5"), ("", "''"), (["f"], "['f']"),
                                          (False, "false")])
def test_a_tool_whose_name_is_not_a_non_empty_string_is_a_bad_definition(shape, name, quoted):
    with pytest.raises(ToolDefinitionError) as raised:
        ToolSet([{"name": "ok"}, _nameless(shape, name)])
    assert str(raised.value) == f"{WHERE[shape]}: a tool's name is a non-empty string, not {quoted}"


@pytest.mark.parametrize("entry, message", [
    ({"type": "function", "function": 5}, "tools[0]: its function is an object (name, parameters), not 5"),
    ({"toolSpec": None}, "tools[0]: its toolSpec is an object (name, inputSchema), not null"),
    ({"type": 5}, "tools[0]: not a tool definition: {'type': 5}"),
    (7, "tools[0]: not a tool definition: 7"),
])
def test_an_entry_holding_no_named_tool_is_a_bad_definition(entry, message):
    with pytest.raises(ToolDefinitionError) as raised:
        ToolSet([entry])
    assert str(raised.value) == message


def test_a_provider_side_tool_is_named_by_its_type():
    assert list(ToolSet([{"type": "web_search"}]).tools) == ["web_search"]


# -- where a bad definition is blamed ------------------------------------------------------------

def test_a_bad_tools_file_is_blamed_on_the_file_once(tmp_path, capsys):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": "f", "parameters": []}]))
    for command in (["replay"], ["check", "--seeds", "1"]):
        assert main([*command, "--tools", str(tools), SINGLE_CALL, DEMO]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err == (f"callscope: {tools}: tool definitions: tool 'f': a JSON Schema "
                                "is an object or a boolean, not []\n")


def test_a_bad_tools_file_is_blamed_on_the_file_for_diff_and_import(tmp_path, capsys):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {"parameters": {}}}]))
    said = (f"callscope: {tools}: tool definitions: tools[0].function: a tool definition needs "
            "a name, and this one has none\n")
    assert main(["diff", "--tools", str(tools), SINGLE_CALL, DEMO]) == 2
    assert capsys.readouterr().err == said
    output = tmp_path / "out.jsonl"
    assert main(["import", SINGLE_CALL, "-o", str(output), "--tools", str(tools)]) == 2
    assert capsys.readouterr().err == said and not output.exists()


def test_a_bad_definition_in_a_session_header_is_blamed_on_the_session_and_its_header_line(
        tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n" + json.dumps({"callscope": "session", "version": 1,
                                      "tools": [{"name": "f"}, {"name": 7}]}) + '\n{"end":"clean"}\n')
    assert main(["replay", str(bad), DEMO, "--summary"]) == 2
    captured = capsys.readouterr()
    assert captured.err == (f"callscope: {bad}:2: tool definitions: tools[1]: a tool's name is a "
                            "non-empty string, not 7\n")
    assert f"== {DEMO}" in captured.out  # (the other input still read)


def test_a_good_tools_file_still_overrides_the_header(tmp_path, capsys):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps({"tools": [{"name": "lookup_demo_value", "input_schema": {}}]}))
    assert main(["replay", "--tools", str(tools), SINGLE_CALL]) == 0
    assert "lookup_demo_value 18B -> execute" in capsys.readouterr().out
