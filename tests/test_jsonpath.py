"""The JSONPath parser and the object assembly behind Vertex's streamed arguments (pure)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from callscope.core.providers.jsonpath import (
    MAX_DEPTH,
    BadPath,
    StreamedString,
    parse_json_path,
    place,
    plain,
)

# -- the path parser ---------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "segments"), [
    ("$", []),
    ("$.location", ["location"]),
    ("$.operations[0].action", ["operations", 0, "action"]),
    ("$.a[1][12].b", ["a", 1, 12, "b"]),
    ("$['weird key']", ["weird key"]),
    ('$["dq \\"x\\""]', ['dq "x"']),
    ("$['a\\'b\\u00e9\\n']", ["a'b\u00e9\n"]),
    ("$['\\ud83d\\ude00']", ["\U0001F600"]),
    ("$.foo-bar.baz", ["foo-bar", "baz"]),
])
def test_parse_json_path(path: str, segments: list[str | int]) -> None:
    assert parse_json_path(path) == segments


@pytest.mark.parametrize("path", ["", "a", "$.", "$..a", "$.*", "$[*]", "$[-1]", "$[1:2]",
                                  "$[?@.a]", "$['x'", "$['x\\q']", "$['\\ud800']", "$[0",
                                  "$[1234567890]", "$x", "$" + ".a" * 129])
def test_parse_json_path_rejects(path: str) -> None:
    with pytest.raises(BadPath):
        parse_json_path(path)


def test_depth_limit_is_inclusive() -> None:
    assert len(parse_json_path("$" + ".a" * MAX_DEPTH)) == MAX_DEPTH
    with pytest.raises(BadPath, match=f"deeper than {MAX_DEPTH}"):
        parse_json_path("$" + ".a" * (MAX_DEPTH + 1))


# -- placing pieces ----------------------------------------------------------------------------


def put(root: dict[str, Any], path: str, value: Any, *, will: bool = False) -> str:
    return place(root, parse_json_path(path), value, is_str=isinstance(value, str), will=will)


def test_paths_create_the_objects_and_arrays_they_need() -> None:
    root: dict[str, Any] = {}
    outcomes = [put(root, "$.a.b", 1), put(root, "$.list[0]", "x"), put(root, "$.list[1].k", True),
                put(root, "$.list[1].n", None), put(root, "$.m[0][0]", 2.5)]
    assert outcomes == ["added"] * 5
    assert plain(root) == {"a": {"b": 1}, "list": ["x", {"k": True, "n": None}], "m": [[2.5]]}


def test_a_streamed_string_is_appended_fragment_by_fragment() -> None:
    root: dict[str, Any] = {}
    assert put(root, "$.s", "ab", will=True) == "added"
    assert put(root, "$.s", "cd", will=True) == "appended"
    assert put(root, "$.s", "ef") == "appended"  # the last piece: the string is closed
    node = root["s"]
    assert isinstance(node, StreamedString)
    assert node.parts == ["ab", "cd", "ef"] and node.closed  # kept as fragments, joined by plain
    assert put(root, "$.s", "gh") == "reopened"  # still appended, but the string had closed
    assert plain(root) == {"s": "abcdefgh"}


@pytest.mark.parametrize(("first", "second", "result"), [
    (1, 2, 2),
    ("text", 3, 3),  # a value replaces a streamed string
    (3, "text", "text"),  # a string replaces a value
    ({"k": 1}, "text", "text"),
])
def test_a_second_value_at_a_path_replaces_the_first(first: Any, second: Any, result: Any) -> None:
    root: dict[str, Any] = {}
    assert put(root, "$.v", first) == "added"
    assert put(root, "$.v", second) == "replaced"
    assert plain(root) == {"v": result}


def test_non_string_pieces_never_append() -> None:
    root: dict[str, Any] = {"v": StreamedString("ab", False)}
    assert place(root, ["v"], "cd", is_str=False, will=False) == "replaced"
    assert plain(root) == {"v": "cd"}


@pytest.mark.parametrize(("segments", "message"), [
    ([], "cannot replace the argument object"),
    ([0], "index [0] into an object"),
    (["obj", 0], "obj holds a dict, not a list"),
    (["list", 3], "skips past the end of an array of 2"),
    (["obj", "k", "deeper"], "holds a int, not a dict"),
    (["list", 0, 1], "holds a int, not a list"),
    (["new", "deep", 3], "skips past the end of an array of 0"),  # after creating new.deep
    (["list", 2, "x", 1], "skips past the end of an array of 0"),  # after appending to list
])
def test_unplaceable_pieces_leave_the_tree_as_it_was(segments: list[str | int], message: str) -> None:
    root: dict[str, Any] = {"obj": {"k": 1}, "list": [1, 2]}
    before = copy.deepcopy(root)
    with pytest.raises(BadPath) as err:
        place(root, segments, "v", is_str=True, will=False)
    assert message in str(err.value)
    assert root == before


def test_plain_copies_the_tree_in_first_seen_key_order() -> None:
    root: dict[str, Any] = {}
    for path in ("$.z", "$.a", "$.m[0].y", "$.m[0].b"):
        put(root, path, path)
    out = plain(root)
    assert list(out) == ["z", "a", "m"] and list(out["m"][0]) == ["y", "b"]
    out["m"][0]["y"] = "changed"
    assert plain(root)["m"][0]["y"] == "$.m[0].y"
