"""A declared block shape's integer slots read only what orjson reads as an int.

orjson reads an integer past 64 bits as a float equal to the nearest double: -2**63-1 reads as
-9.223372036854776e18, equal (and hashing equal) to the int -2**63. An Anthropic block opened
at index -2**63 would then take a fragment sent for index -2**63-1, which the reference reader
refuses as a bad index; a Responses sequence number of 2**64 would read as the next after
2**64-1. Each stream here decides, and reports its anomalies, as the reference does.
"""

from __future__ import annotations

import random
import re

import orjson
import pytest
from callscope.core import synth
from callscope.core.hot_path import INT
from test_hot_path_differential import assert_same, turn

INT64_MIN = -(2**63)


def _event(name: str, body: dict[str, object]) -> bytes:
    # orjson writes ints of any size exactly only up to 64 bits: the index is spliced in as text.
    return b"event: %s\ndata: %s\n\n" % (name.encode(), orjson.dumps(body))


def _at(index: int, name: str, body: dict[str, object]) -> bytes:
    return _event(name, {"type": name, "index": 0, **body}).replace(
        b'"index":0', b'"index":' + str(index).encode(), 1)


def _delta(index: int, fragment: str) -> bytes:
    return _at(index, "content_block_delta",
               {"delta": {"type": "input_json_delta", "partial_json": fragment}})


def _anthropic(injected_at: int) -> bytes:
    return b"".join([
        _event("message_start", {"type": "message_start", "message": {
            "id": "m", "type": "message", "role": "assistant", "content": [], "model": "x",
            "usage": {"input_tokens": 1, "output_tokens": 1}}}),
        _at(INT64_MIN, "content_block_start",
            {"content_block": {"type": "tool_use", "id": "t", "name": "edit_file", "input": {}}}),
        _delta(INT64_MIN, "{"),
        _delta(injected_at, '"evil":"rm -rf /",'),
        _delta(INT64_MIN, '"path":"a.txt"}'),
        _at(INT64_MIN, "content_block_stop", {}),
        _event("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                                 "usage": {"output_tokens": 1}}),
        _event("message_stop", {"type": "message_stop"})])


@pytest.mark.parametrize("injected_at", [INT64_MIN - 1, INT64_MIN, 2**64, -(2**70)])
@pytest.mark.parametrize("size", [1, 16, 10_000])
def test_an_index_past_64_bits_is_not_the_block_it_rounds_to(injected_at, size):
    data = _anthropic(injected_at)
    ref = assert_same("anthropic", data, [data[i:i + size] for i in range(0, len(data), size)])
    if injected_at != INT64_MIN:
        assert [d.action for d in ref.pipeline.decisions.values()] != ["execute"]


@pytest.mark.parametrize("size", [1, 100])
def test_a_sequence_number_past_64_bits_is_not_the_next_one(size):
    rng = random.Random(3)
    data = synth.encode("openai-responses", turn(rng, 2, 1, "tool_calls"), rng)
    offset = 2**64 - 3  # (the third event's number is 2**64 - 1, the fourth's 2**64, ...)

    def far(m: re.Match[bytes]) -> bytes:
        n = int(m.group(1))
        return b'"sequence_number":%d' % (n if n < 2 else n + offset)

    data, count = re.subn(rb'"sequence_number":(\d+)', far, data)
    assert count > 4
    assert_same("openai-responses", data, [data[i:i + size] for i in range(0, len(data), size)])


def test_every_int_slot_match_is_an_int_to_orjson():
    pattern = re.compile(INT)
    for text in ("9" * 18, "-" + "9" * 18, "0", "-0", str(2**63 - 1)[:18]):
        assert pattern.fullmatch(text.encode()) and type(orjson.loads(text)) is int
    for text in (str(2**63), str(INT64_MIN - 1), str(2**64), "9" * 19):
        assert pattern.fullmatch(text.encode()) is None
