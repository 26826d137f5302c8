"""A frame's call keys, as the display filter reads them: every call the frame touched, even
when one key is a part of another (a frame's first key is kept as a string, not a tuple)."""

from __future__ import annotations

import pytest
from callscope.core import frame_query as q
from callscope.core.engine import CallStep
from callscope.core.events import CallOpened
from callscope.core.sse import decode_all


@pytest.mark.parametrize("first, second", [("msg2/block:1", "block:1"), ("block:1", "block:10"),
                                           ("ab", "b"), ("a", "a")])
def test_a_frame_keeps_every_call_it_touched(first: str, second: str) -> None:
    steps = [CallStep(CallOpened(0, first, name="one")), CallStep(CallOpened(0, second, name="two"))]
    facts = q.new_facts(decode_all(b"data: {}\n\n"), 1)
    for _ in q.add_steps(facts, steps):
        pass
    keys = {first, second}
    assert set(facts.calls(0)) >= keys
    assert facts.tools(0) == ({"one", "two"} if first != second else {"one"})
    assert len([k for k in facts.calls(0) if k in keys]) == len(keys)
