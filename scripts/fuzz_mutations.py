"""Hostile values and the mutations: bytes (flip, insert, delete, duplicate, overwrite, cut),
frames (drop, duplicate, move, swap, shuffle) and JSON values (drop keys, change types, huge
strings, deep nesting, wrong indexes, repeated ids, hostile argument text)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import orjson
from callscope.core.frame import Frame
from fuzz_corpus import vocabulary
from hypothesis import strategies as st

SCALES: dict[str, dict[str, Any]] = {
    # The suite stays fast; the long run reaches MB strings and nesting far past every parser.
    # Sizes are drawn uniformly from these tuples: the big ones are rare on purpose.
    "suite": {"huge": (300, 1_000, 5_000, 70_000), "deep": (100, 257, 1_025), "random": 4096, "ops": 4},
    "long": {"huge": (1_000, 5_000, 70_000, 300_000, 3_000_000),
             "deep": (100, 257, 1_000, 1_025, 5_000, 100_000), "random": 65_536, "ops": 8},
}
SCALE = dict(SCALES["suite"])


def set_scale(name: str) -> None:
    SCALE.clear()
    SCALE.update(SCALES[name])
    for strategy in (hostile_value, huge_text, argument_text, json_values, byte_ops, frame_ops):
        strategy.cache_clear()  # built from SCALE


# -- hostile values ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Raw:
    """JSON text spliced in verbatim (nesting deeper than orjson writes, integers past 64 bits)."""

    text: str

    def __repr__(self) -> str:
        return f"Raw({self.text[:24]!r}...{len(self.text)} chars)" if len(self.text) > 40 else \
            f"Raw({self.text!r})"


HOSTILE_TEXT = (
    "", " ", "[DONE]", "\x1b[31mred\x1b[0m", "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\",
    "\x1b]52;c;cm0gLXJmIH4=\x07", "\u202eevil\u202c", "\u2066x\u2069", "\x9b2J", "a\r\nb",
    "[bold red]markup[/]", "\ufeff", "\u200b", "\x00", "{", '{"a":', "}", "null", "\\", "𝄞",
    "\U000e0041", "\x85", "\u2028",
)
ARGUMENT_TEXTS = (
    "", "{}", " {} ", "{", '{"key":"Objective"}', '{"key":"Objective"', '{"a":1,"b":2}',
    '{"a":"1","b":2}', '{"path":"notes/todo.txt","dry_run":false}', '{"path":"x"}', "[]", "null",
    '"str"', "1", '{"a":1}{"b":2}', '{"a":1} x', '{"key":"\\ud800"}', '{"a":NaN}', '{"a":1e999}',
    '{"key":"x","key":"y"}', "\ufeff{}", '{"a":1,}', '{"key":"x"}\n', "{'key':'x'}",
)


def deep_text(depth: int, kind: int) -> str:
    if kind == 0:
        return "[" * depth + "]" * depth
    if kind == 1:
        return '{"a":' * depth + "1" + "}" * depth
    return "[" * depth  # never closed


@cache
def hostile_value() -> st.SearchStrategy[Any]:
    big = st.sampled_from([2**63, 2**64, -(2**63) - 1, 10**30]).map(lambda n: Raw(str(n)))
    deep = st.builds(lambda d, k: Raw(deep_text(d, k)), st.sampled_from(SCALE["deep"]),
                     st.integers(0, 1))
    return st.one_of(
        st.sampled_from([None, True, False, 0, 1, -1, 2, 7, 2**31, 2**63 - 1, -(2**63), 0.5, -0.0,
                         1e308, [], {}, [[]], [None], {"": None}, {"type": None},
                         {"$ref": "#/nope"}, {"$ref": "https://example.invalid/schema.json"}]),
        st.sampled_from(HOSTILE_TEXT), st.text(max_size=12), big, deep, huge_text())


@cache
def huge_text() -> st.SearchStrategy[str]:
    return st.builds(lambda n, unit: (unit * (n // len(unit) + 1))[:n],
                     st.sampled_from(SCALE["huge"]), st.sampled_from(["x", "\x1b[2J", '{"a":', "é"]))


@cache
def argument_text() -> st.SearchStrategy[str]:
    deep = st.builds(lambda d, k, key: f'{{"{key}":{deep_text(d, k)}}}', st.sampled_from(SCALE["deep"]),
                     st.integers(0, 2), st.sampled_from(["key", "a", "path"]))
    return st.one_of(st.sampled_from(ARGUMENT_TEXTS), deep,
                     huge_text().map(lambda s: '{"key":"' + s.replace('"', "") + '"}'))


@cache
def json_values() -> st.SearchStrategy[Any]:
    vocab = vocabulary()
    leaves = st.one_of(st.none(), st.booleans(), st.integers(-2, 5), st.integers(-(2**63), 2**63 - 1),
                       st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(vocab["types"]),
                       st.sampled_from(HOSTILE_TEXT), st.text(max_size=8), st.sampled_from(ARGUMENT_TEXTS))
    return st.recursive(leaves, lambda inner: st.lists(inner, max_size=3)
                        | st.dictionaries(st.sampled_from(vocab["keys"]), inner, max_size=4),
                        max_leaves=12)


def dumps(value: Any) -> str:
    """JSON text of ``value``, :class:`Raw` parts spliced in as they are."""
    raws: list[str] = []

    def swap(v: Any) -> Any:
        if isinstance(v, Raw):
            raws.append(v.text)
            return f"\x00RAW{len(raws) - 1}\x00"
        if isinstance(v, dict):
            return {k: swap(x) for k, x in v.items()}
        if isinstance(v, list):
            return [swap(x) for x in v]
        return v

    try:
        text = orjson.dumps(swap(value)).decode()
    except orjson.JSONEncodeError:  # nested past orjson's 255 levels by earlier mutations
        text = json.dumps(swap(value), ensure_ascii=False, separators=(",", ":"))
    for i, raw in enumerate(raws):
        text = text.replace(f'"\\u0000RAW{i}\\u0000"', raw, 1)
    return text


# -- mutations -----------------------------------------------------------------------------------

BYTE_TOKENS = (b"\n", b"\n\n", b"\r", b"\r\n", b"data: ", b"event: ", b"id: ", b"retry: 1\n", b":",
               b'"', b"\\", b"{", b"}", b"[", b"]", b",", b"[DONE]", b"\xff", b"\xc3", b"\xe2\x80\xae",
               b"\x1b[31m", b"\xef\xbb\xbf", b"\x00", b"null", b"-1", b"99999999999999999999999")
POSITION = st.integers(0, 2**24)


@cache
def byte_ops() -> st.SearchStrategy[list[tuple[Any, ...]]]:
    op = st.one_of(
        st.tuples(st.just("flip"), POSITION, st.integers(0, 7)),
        st.tuples(st.just("insert"), POSITION, st.binary(min_size=1, max_size=16)),
        st.tuples(st.just("token"), POSITION, st.sampled_from(BYTE_TOKENS)),
        st.tuples(st.just("delete"), POSITION, st.integers(1, 64)),
        st.tuples(st.just("duplicate"), POSITION, st.integers(1, 512)),
        st.tuples(st.just("overwrite"), POSITION, st.binary(min_size=1, max_size=8)),
        st.tuples(st.just("cut"), POSITION))
    return st.lists(op, min_size=1, max_size=SCALE["ops"])


def apply_byte_ops(data: bytes, ops: list[tuple[Any, ...]]) -> bytes:
    b = bytearray(data)
    for kind, pos, *arg in ops:
        i = pos % (len(b) + 1)
        if kind == "flip" and i < len(b):
            b[i] ^= 1 << arg[0]
        elif kind in ("insert", "token"):
            b[i:i] = arg[0]
        elif kind == "delete":
            del b[i:i + arg[0]]
        elif kind == "duplicate":
            b[i:i] = b[i:i + arg[0]]
        elif kind == "overwrite":
            b[i:i + len(arg[0])] = arg[0]
        elif kind == "cut":
            del b[i:]
    return bytes(b)


@cache
def frame_ops() -> st.SearchStrategy[list[tuple[Any, ...]]]:
    op = st.one_of(st.tuples(st.just("drop"), POSITION), st.tuples(st.just("duplicate"), POSITION, POSITION),
                   st.tuples(st.just("move"), POSITION, POSITION),
                   st.tuples(st.just("swap"), POSITION, POSITION),
                   st.tuples(st.just("shuffle"), POSITION, st.permutations(range(5))))
    return st.lists(op, min_size=1, max_size=SCALE["ops"])


def apply_frame_ops(raws: list[bytes], ops: list[tuple[Any, ...]]) -> list[bytes]:
    raws = list(raws)
    for kind, pos, *arg in ops:
        if not raws:
            break
        i = pos % len(raws)
        if kind == "drop":
            del raws[i]
        elif kind == "duplicate":
            raws.insert(arg[0] % (len(raws) + 1), raws[i])
        elif kind == "move":
            raws.insert(arg[0] % len(raws), raws.pop(i))
        elif kind == "swap":
            j = arg[0] % len(raws)
            raws[i], raws[j] = raws[j], raws[i]
        elif kind == "shuffle":
            window = raws[i:i + 5]
            raws[i:i + len(window)] = [window[p] for p in arg[0] if p < len(window)]
    return raws


JSON_OPS = ("drop", "replace", "replace", "wrap", "reuse", "index", "huge", "deep", "argtext",
            "strcut", "strinject", "retype")


MAX_WALK = 48
"""Mutations reach this deep at most: the plan stays deterministic (a walk as deep as the
recursion limit would fail or not depending on the caller's stack, which hypothesis calls
flaky), and deeper values come from the `deep` mutation anyway."""


def depth(value: Any) -> int:
    """JSON nesting depth, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            stack += [(v, level + 1) for v in (item.values() if isinstance(item, dict) else item)]
    return deepest


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if len(path) >= MAX_WALK:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*path, i))


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        value = value[p]
    return value


def _set(root: Any, path: tuple[Any, ...], new: Any, drop: bool = False) -> Any:
    if not path:
        return {} if drop else new
    parent = _get(root, path[:-1])
    if drop:
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return root


def _brief(value: Any) -> Any:
    text = repr(value)
    return value if len(text) <= 60 else f"<{type(value).__name__} {len(text)} chars: {text[:30]}…>"


def mutate_json(draw: Callable[..., Any], root: Any) -> tuple[Any, tuple[Any, ...]]:
    """One JSON mutation of ``root`` (in place where possible): the new root and a plan entry."""
    paths = list(_paths(root))[:500]
    path = draw(st.sampled_from(paths))
    old = _get(root, path)
    kind = draw(st.sampled_from(JSON_OPS))
    key = next((p for p in reversed(path) if isinstance(p, str)), "")
    if kind == "drop":
        return _set(root, path, None, drop=True), (kind, path)
    if kind == "wrap":
        new: Any = [old]
    elif kind == "retype":
        new = ([old] if not isinstance(old, list) else {"0": old}) if isinstance(old, dict | list) \
            else str(old) if not isinstance(old, str) else draw(st.sampled_from([0, [old], {"": old}]))
    elif kind == "reuse":
        pool = vocabulary().get(f"values:{key}") or vocabulary()["types"]
        new = draw(st.sampled_from(pool))
    elif kind == "index":
        new = draw(st.sampled_from([-1, 0, 1, 2, 3, 99, 2**31, 2**63 - 1, "0", 0.0, True, None]))
    elif kind == "huge":
        new = draw(huge_text())
    elif kind == "deep":
        new = Raw(deep_text(draw(st.sampled_from(SCALE["deep"])), draw(st.integers(0, 1))))
    elif kind == "argtext" or (kind in ("strcut", "strinject") and not isinstance(old, str)):
        new = draw(argument_text())
    elif kind == "strcut":
        new = old[:draw(st.integers(0, len(old)))]
    elif kind == "strinject":
        at = draw(st.integers(0, len(old)))
        new = old[:at] + draw(st.sampled_from(HOSTILE_TEXT + ('"', "}", "]", ","))) + old[at:]
    else:
        # A copy: the sampled constants ({}, [[]], ...) are shared by every case, and a later
        # mutation inside one must not change the next case's draws (hypothesis: "flaky").
        new = copy.deepcopy(draw(hostile_value()))
    return _set(root, path, new), (kind, path, _brief(new))


def rebuild(frame: Frame, value: Any) -> bytes:
    """A frame with its data replaced by ``value``'s JSON (its other lines kept in order)."""
    kept = [line for line in frame.lines if not (line == "data" or line.startswith("data:"))]
    return "".join(f"{line}\n" for line in [*kept, f"data: {dumps(value)}"]).encode() + b"\n"


