"""Engine.feed_lazily: a read larger than a piece is framed a piece at a time, with the steps of
Engine.feed; a timeline over a single huge read shows its first steps before framing the rest."""

from __future__ import annotations

import random

import pytest
from callscope.core import engine as engine_module
from callscope.core import synth
from callscope.core.engine import Engine, FrameStep
from callscope.core.replay import replay
from callscope.core.timeline import Timeline
from callscope.core.tools import ToolSet


def turn_bytes(protocol: str, size: int, seed: int = 4) -> bytes:
    rng = random.Random(seed)
    turn = synth.Turn(items=(synth.ToolCall("edit_file", synth.realistic_arguments(size, rng)),),
                      fragmenting=synth.REALISTIC)
    return synth.encode_turn(protocol, turn, rng).data


@pytest.mark.parametrize("protocol", ["openai-responses", "openai-chat", "anthropic",
                                      "gemini-generate"])
def test_steps_in_pieces_are_the_steps_of_one_feed(monkeypatch, protocol):
    data = turn_bytes(protocol, 3_000)
    whole = Engine(protocol, ToolSet())
    expected = whole.feed(data, 0.5) + whole.close()
    monkeypatch.setattr(engine_module, "PIECE", 97)  # many pieces, cut anywhere
    lazy = Engine(protocol, ToolSet())
    batches = list(lazy.feed_lazily(data, 0.5))
    assert len(batches) == -(-len(data) // 97)
    assert [s for batch in batches for s in batch] + lazy.close() == expected


def test_a_timeline_of_one_huge_read_shows_its_first_steps_before_the_rest_is_framed():
    data = turn_bytes("openai-responses", 600_000)
    assert len(data) > 4 * engine_module.PIECE
    timeline = Timeline.indexing([(0.0, data)], "openai-responses", ToolSet())
    timeline.index_more(500)
    framed = timeline.frames[-1].end
    assert 0 < framed <= 2 * engine_module.PIECE  # not the whole capture
    timeline.index_more()
    assert timeline.closed and timeline.frames[-1].end == len(data)
    steps = list(replay([(0.0, data)], protocol="openai-responses", tools=ToolSet()))
    assert sum(isinstance(s, FrameStep) for s in steps) == len(timeline.frames)
