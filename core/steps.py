"""The engine's steps: every fact it finds, in order (:data:`Step`).

The headless replay prints them, the timeline indexes them, the TUI renders the state they
build. :mod:`.engine` makes them and names them again, as the engine's output.
"""

from __future__ import annotations

from typing import NamedTuple

from .events import Anomaly, CallEvent
from .frame import Frame
from .harness import Decision
from .jsonprefix import Draft

# Steps are named tuples, not frozen dataclasses: the engine makes several per SSE event, and a
# frozen dataclass's __init__ (one object.__setattr__ per field) costs more than the event's JSON.

class ChunkStep(NamedTuple):
    """A network chunk arrived."""

    index: int  # type: ignore[assignment]  # shadows tuple.index on purpose: the chunk number
    start: int
    end: int
    t: float | None


class FrameStep(NamedTuple):
    frame: Frame


class CallStep(NamedTuple):
    """A call event from the protocol reader, or an anomaly the accumulator found, with what
    applying it did to its call: a timeline folds over these steps, never over the turn."""

    event: CallEvent
    length: int | None = None
    """The call's argument length (characters) once this event was applied."""
    draft: Draft | None = None
    """The call's draft status once this event was applied, when it changed the argument text
    (the accumulator added a fragment); None when the text is as it was."""
    disputed: Anomaly | None = None
    """The anomaly that disputes the call, on the step whose application made the call
    disputed: the event itself, an anomaly the accumulator found applying it, or the dispute
    a call takes when it opens (reported before it existed)."""
    inherited: tuple[Anomaly, ...] = ()
    """On the step that created the call: the anomalies about it reported before it existed
    (each had its own step then), which it takes now."""


class DecisionStep(NamedTuple):
    """The gate spoke: ``wait`` (with a new draft status) or the final decision for a call."""

    decision: Decision


class WaitStep(NamedTuple):
    """While the turn is open the gate waits; emitted when a call's draft status changes."""

    call: str
    draft: Draft
    frame: int | None


Step = ChunkStep | FrameStep | CallStep | WaitStep | DecisionStep
