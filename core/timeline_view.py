"""What a timeline answers: the state of every pane at a step, and the kinds of step to move by.

Plain frozen data built by :meth:`.timeline.Timeline.view`; :mod:`.timeline` re-exports every
name here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from msgspec import Struct

from .events import Anomaly, ProviderError, StopReported, TurnEnded
from .frame import Frame
from .lanes import CallView
from .steps import DecisionStep, Step, WaitStep

Kind = Literal["step", "frame", "chunk", "call", "decision", "anomaly", "refusal", "parse"]
KINDS: tuple[Kind, ...] = ("step", "frame", "chunk", "call", "decision", "anomaly", "refusal", "parse")
"""``call``: a call event (opened, arguments, piece, closed); ``decision``: a wait or a verdict;
``parse``: a call's draft first became a complete JSON value while the turn was open."""


class TurnView(Struct, frozen=True):
    protocol: str
    terminal: TurnEnded | None
    stop: StopReported | None
    errors: tuple[ProviderError, ...]
    usage: dict[str, object]
    text: dict[str, str]


class View(Struct, frozen=True):
    """The state of every pane after step ``k`` (immutable)."""

    k: int
    step: Step | None
    frames_seen: int
    frame: Frame | None
    """The latest complete frame at k."""
    anchor: int
    """The step that opened the current frame (or chunk) group; fresh text is newer than it."""
    received: int
    """Bytes received by step k."""
    chunks_seen: int
    calls: tuple[CallView, ...]
    log: Sequence[WaitStep | DecisionStep]
    """Wait and decision steps so far."""
    anomalies: Sequence[Anomaly]
    turn: TurnView
    finished: bool
    """k is the last step: the stream is over and every call decided."""
