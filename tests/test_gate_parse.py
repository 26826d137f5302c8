"""The gate's duplicate-key check: its shortcut for a text that is its value's own serialization
decides as the standard library's hook does."""

from __future__ import annotations

import json
from typing import Any

import orjson
from callscope.core import exact_json
from callscope.core.gate.parse import duplicate_key
from hypothesis import given, settings
from hypothesis import strategies as st

_TEXT = st.characters(blacklist_categories=("Cs",))
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(_TEXT, max_size=4),
    lambda children: (st.lists(children, max_size=4)
                      | st.dictionaries(st.text(st.sampled_from("ab\"\\é"), max_size=2), children,
                                        max_size=4)),
    max_leaves=12,
)


def _spelled(value: Any, style: str) -> str:
    if style == "compact":
        try:
            return orjson.dumps(value).decode()
        except orjson.JSONEncodeError:  # (an integer past 64 bits)
            return json.dumps(value, separators=(",", ":"))
    return json.dumps(value, ensure_ascii=style == "ascii",
                      separators=(", ", ": ") if style == "spaced" else (",", ":"))


@settings(max_examples=400, deadline=None)
@given(_VALUES, st.sampled_from(["compact", "spaced", "ascii", "plain"]), st.integers(0, 50))
def test_the_shortcut_finds_what_the_hook_finds(value: Any, style: str, at: int) -> None:
    """Texts with and without a key twice (a member repeated inside an object), each spelled
    compactly or not: the answer with orjson's value is the answer without it."""
    text = _spelled(value, style)
    objects = [i for i, c in enumerate(text) if c == "{" and text[i + 1:i + 2] == '"']
    if objects and at % 2:
        i = objects[at % len(objects)]
        end = text.find(",", i)
        member = text[i + 1:end] if end > 0 and "}" not in text[i + 1:end] else None
        if member is not None:
            text = text[:i + 1] + member + "," + text[i + 1:]  # (the first member twice)
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError:
        return
    assert duplicate_key(text, parsed) == duplicate_key(text)


def test_a_serialized_value_has_no_key_twice_and_a_repeated_key_is_found() -> None:
    text = orjson.dumps({"a": [{"b": 1, "c": {"d": None}}], "é": "x"}).decode()
    assert duplicate_key(text, orjson.loads(text)) is None
    twice = '{"a":1,"b":2,"a":1}'
    assert duplicate_key(twice, orjson.loads(twice)) == "a"


@settings(max_examples=200, deadline=None)
@given(_VALUES, st.text(st.sampled_from('{}[]",:1 a'), max_size=6))
def test_the_held_parse_is_the_parse_of_the_text_the_gate_reads(value: Any, more: str) -> None:
    """A whole-object text's parse, held from the draft checker for the gate, is what the gate
    reads of the call's text now (:func:`.exact_json.loads`), also after a fragment changed the
    text, and is handed once."""
    from callscope.core.call_buffer import CallBuffer

    text = _spelled(value, "compact")
    call = CallBuffer("call:0", 0)
    call.replace(0, text, "serialized")
    if more:
        call.append(1, more)

    def read() -> Any:  # (the gate's reading: orjson's, with integers past 64 bits exact)
        try:
            return ("ok", exact_json.loads(call.text))
        except orjson.JSONDecodeError:
            return ("refused",)

    def held() -> Any:
        try:
            return ("ok", call.parsed())
        except orjson.JSONDecodeError:
            return ("refused",)

    assert held() == read()
    assert held() == read()  # (a second ask parses again)
