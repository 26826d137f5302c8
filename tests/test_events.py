"""The call events' shared surface: every event kind names its fields the same way, whether it
is a named tuple (``ArgumentsAppended``, the commonest) or a frozen dataclass."""

from __future__ import annotations

import msgspec.structs
from callscope.core import events as E
from callscope.core.engine import CallStep
from callscope.core.gate.codes import Code
from callscope.tui.screens import describe_step

SAMPLES = [
    E.CallOpened(1, "k", id="i", name="n"),
    E.ArgumentsAppended(2, "k", '{"a"'),
    E.ArgumentsSet(3, "k", "{}"),
    E.ArgumentPiece(4, "k", "$.a", 1, False),
    E.CallIdentified(5, "k", name="n"),
    E.CallClosed(5, "k"),
    E.FinalCopy(5, "k", "{}"),
    E.CallCut(5, "k", "the stream ended first"),
    E.TextAppended(6, "text", "hello"),
    E.StopReported(7, "stop", False),
    E.TurnEnded(8, "response.completed"),
    E.ProviderError(9, "overloaded", "529"),
    E.UsageReported(10, {"output_tokens": 3}),
    E.Anomaly(11, Code.CLOSED_TWICE, "message", "k"),
]


def test_every_event_kind_is_sampled():
    assert {type(e) for e in SAMPLES} == set(E.CallEvent.__args__)


def test_event_fields_name_every_field_in_order():
    for event in SAMPLES:
        names = E.event_fields(event)
        assert names[0] == "frame"
        if isinstance(event, msgspec.Struct):
            assert names == tuple(f.name for f in msgspec.structs.fields(event))
        else:
            assert names == type(event)._fields
        assert [getattr(event, n) for n in names][0] == event.frame


def test_a_fragment_is_immutable_and_equal_only_to_its_own_kind():
    fragment = E.ArgumentsAppended(2, "k", "x")
    try:
        fragment.fragment = "y"  # type: ignore[misc]
    except AttributeError:
        pass
    else:
        raise AssertionError("ArgumentsAppended must be immutable")
    assert fragment == E.ArgumentsAppended(2, "k", "x")
    assert fragment != E.TextAppended(2, "k", "x")


def test_describe_step_shows_the_fields_of_every_kind():
    for event in SAMPLES:
        text = describe_step(CallStep(event, 3)).plain
        assert text.startswith(type(event).__name__)
        assert "frame=" not in text
        for name in E.event_fields(event)[1:]:
            assert f"{name}=" in text
