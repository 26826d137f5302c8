"""A whole-object call's parse reaches the turn state once, and the step list keeps no copy.

generateContent's reader hands the state the args object whose serialization the call's text
is (:class:`~callscope.core.events.Handover`), so the text is not parsed again; the event stays
in the debugger's step list for the timeline's life, and must not keep that object alive.
"""

from __future__ import annotations

import orjson
from callscope.core.engine import Engine
from callscope.core.events import ArgumentsSet, Handover


def _frames(calls: int) -> list[bytes]:
    args = {"items": [{"k": i, "v": "x" * 10} for i in range(200)]}
    frames = [b"data: " + orjson.dumps({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": f"f{n}", "args": args}}]}, "index": 0}]}) + b"\n\n"
              for n in range(calls)]
    last = {"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]},
                            "finishReason": "STOP", "index": 0}]}
    return [*frames, b"data: " + orjson.dumps(last) + b"\n\n"]


def test_the_events_kept_as_steps_hold_no_parsed_arguments() -> None:
    engine = Engine("gemini-generate")
    steps = [step for frame in _frames(3) for step in engine.feed(frame)] + list(engine.close())
    handed = [s.event.parsed for s in steps if type(getattr(s, "event", None)) is ArgumentsSet]
    assert len(handed) == 3 and all(isinstance(h, Handover) for h in handed)
    assert [h.take() for h in handed if h is not None] == [None, None, None]
    assert {d.reason for d in engine.pipeline.decisions.values()} == {"unknown_tool"}


def test_a_handover_gives_its_value_once() -> None:
    value = {"a": [1]}
    handover = Handover(value)
    assert handover.take() is value
    assert handover.take() is None
