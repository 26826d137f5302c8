"""What the gate decides for every stream a harness under test is fed: the full stream, and the
stream cut at any byte offset.

A cut stream's decisions depend only on which frames were dispatched before the cut (as
:mod:`.check` explains), so the gate's side of a cut sweep is one outcome per frame boundary: the
pipeline is stepped frame by frame and a fork of it is finished at each boundary. A cut at byte
``k`` then reads the outcome of its class, found with a binary search over the frames' dispatch
points. Nothing here runs the harness; :mod:`.sweep` does.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from typing import Any

from msgspec import Struct

from .check import dispatch_point, each_cut
from .engine import CallPipeline, Engine
from .framing import decode_all, framing_of, stream_framing
from .limits import DEFAULT_LIMITS, Limits
from .tools import ToolSet


class GateCall(Struct, frozen=True):
    """One call of the stream and what the gate decided for it."""

    key: str
    name: str
    action: str
    """``execute`` or ``refuse``."""
    reason: str | None
    """Why it was refused (``truncated``, ``invalid_json``, ``schema``, ``unknown_tool``,
    ``provider_error``), None when executed."""
    detail: str
    arguments: Any
    """The parsed arguments of an executed call (None when refused)."""


class GateOutcome(Struct, frozen=True):
    """The gate's decisions for one stream, in the order the calls opened."""

    calls: tuple[GateCall, ...]
    signal: str | None
    """The terminal signal, or None when the stream stopped before it."""
    frames: int
    """Frames dispatched before the stream stopped."""

    @property
    def executed(self) -> tuple[GateCall, ...]:
        return tuple(c for c in self.calls if c.action == "execute")


def _outcome(pipeline: CallPipeline, frames: int) -> GateOutcome:
    state = pipeline.state
    calls = tuple(GateCall(key, state.calls[key].name or "", d.action, d.reason, d.detail,
                           d.arguments)
                  for key, d in pipeline.decisions.items() if key in state.calls)
    signal = state.terminal.signal if state.terminal is not None else None
    return GateOutcome(calls, signal, frames)


def gate_full(reads: Sequence[bytes], protocol: str | None, tools: ToolSet,
              limits: Limits = DEFAULT_LIMITS) -> tuple[GateOutcome, str]:
    """The gate's outcome for the stream as these reads deliver it, and the protocol read."""
    engine = Engine(protocol, tools, limits, contrast=False)
    engine.push_reads(reads)
    engine.close()
    pipeline = engine.pipeline
    last = pipeline.last_frame
    return _outcome(pipeline, 0 if last is None else last + 1), pipeline.protocol


class CutClasses(Struct, frozen=True):
    """The gate's outcome for a cut at any byte offset of one stream."""

    size: int
    points: tuple[int, ...]
    """Each frame's dispatch point: a cut at ``k`` dispatches the frames whose point is < k."""
    outcomes: tuple[GateOutcome, ...]
    """One per class: ``outcomes[m]`` holds after the first ``m`` frames."""
    terminal_class: int | None
    """The first class whose frames include the terminal signal (None: it never comes)."""

    def at(self, cut: int) -> GateOutcome:
        return self.outcomes[bisect_left(self.points, cut)]

    @property
    def terminal_point(self) -> int | None:
        """The dispatch point of the frame that carries the terminal signal."""
        if self.terminal_class is None:
            return None
        return self.points[self.terminal_class - 1]


def cut_classes(data: bytes, protocol: str | None, tools: ToolSet,
                limits: Limits = DEFAULT_LIMITS) -> CutClasses:
    framing = stream_framing(framing_of(protocol), data)
    frames = decode_all(data, framing, limits.max_block_bytes)
    pipeline = CallPipeline(protocol, tools, limits, contrast=False)
    outcomes: list[GateOutcome] = []
    terminal_class = each_cut(frames, pipeline,
                              lambda m, finished: outcomes.append(_outcome(finished, m)))
    return CutClasses(len(data), tuple(dispatch_point(f, framing) for f in frames), tuple(outcomes),
                      terminal_class)
