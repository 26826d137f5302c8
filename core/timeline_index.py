"""A timeline's indexes: built as the engine's steps arrive, so that any step's state is a seek.

Every structure here is appended to, never rewritten, so :meth:`TimelineIndex._index` runs once
over a whole recorded stream or once per network read of a growing one, and a view of step k
is the same either way. :class:`.timeline.Timeline` builds on these indexes; its module
docstring says how a seek uses them.

The index is a fold over the steps alone: it never reads the engine. What a pane needs about a
call and the accumulator decided (the draft after a fragment, a dispute, the anomalies a call
took when it opened) is on the :class:`~.steps.CallStep`, so the lanes cannot drift from the
turn the gate decided on. The step list is the whole input: :meth:`TimelineIndex.of` folds a
list of steps made elsewhere.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable

from .chunk_index import ChunkColumns, StepList
from .events import (
    CALL_CHANGES,
    Anomaly,
    ArgumentPiece,
    ArgumentsAppended,
    ArgumentsSet,
    CallClosed,
    CallCut,
    CallIdentified,
    CallOpened,
    FinalCopy,
    ProviderError,
    StopReported,
    TextAppended,
    TurnEnded,
    UsageReported,
)
from .frame_columns import FrameColumns
from .jsonprefix import Draft
from .lanes import CallIndex
from .steps import CallStep, ChunkStep, DecisionStep, FrameStep, Step, WaitStep
from .timeline_view import KINDS, Kind


class TimelineIndex:
    """Every step of one stream so far, and the indexes a view of any of them is cut from."""

    LAZY_FRAMES = True
    """Frames kept as columns, made when asked (see :class:`.FrameColumns`); False keeps every
    frame as the engine made it (the reference of the differential test)."""

    def __init__(self) -> None:
        # A chunk step per byte is common (``bytes:1``): chunks are columns of machine words,
        # not objects (see chunk_index.py), and so are the step numbers bisected. A frame per
        # SSE event is too: frames are columns over one buffer of their bytes (frame_columns.py).
        self.chunks = ChunkColumns()
        self.frames = FrameColumns(lazy=self.LAZY_FRAMES)
        self.frame_steps: array[int] = array("q")
        self.steps = StepList(self.chunks, (self.frames, self.frame_steps))
        self.chunk_steps: array[int] = self.chunks.steps
        self.bounds: array[int] = array("q")  # frame and chunk step indices, in order
        self.by_kind: dict[Kind, list[int]] = {kind: [] for kind in KINDS}
        self.calls: dict[str, CallIndex] = {}
        self.call_created: list[int] = []
        self.call_order: list[str] = []
        self.anomalies: list[Anomaly] = []
        self.log: list[WaitStep | DecisionStep] = []
        self.turn_facts: dict[type, tuple[list[int], list[object]]] = {
            kind: ([], []) for kind in (TurnEnded, StopReported, ProviderError, UsageReported)}
        self.text_steps: dict[str, list[int]] = {}
        self.text_ends: dict[str, list[int]] = {}
        self.texts: dict[str, str] = {}
        """Each channel's text so far; joined from ``_text_parts`` when a view needs it."""
        self._text_parts: dict[str, list[str]] = {}
        self._text_stale: set[str] = set()
        self.t0: float | None = None

    @staticmethod
    def of(steps: Iterable[Step]) -> TimelineIndex:
        """The index of a list of steps (from any engine, or a recording of one)."""
        index = TimelineIndex()
        index._index(steps)
        return index

    def _index(self, steps: Iterable[Step]) -> None:
        """Index steps as they come: every structure is appended to, never rewritten, so this
        runs once over a whole stream (:meth:`build`) or once per network read (:meth:`extend`).

        Most steps of a long session are chunks, frames and argument fragments, so those are
        dispatched first, on the exact type (a ``match`` on class patterns costs an
        ``isinstance`` per case, per step)."""
        k = len(self.steps)
        add, add_chunk, bounds = self.steps.add_object, self.steps.add_chunk, self.bounds.append
        add_frame, frames, frame_steps = self.steps.add_frame, self.frames, self.frame_steps
        decisions = self.by_kind["decision"]
        for step in steps:
            kind = type(step)
            if kind is ChunkStep:
                add_chunk(step, k)  # type: ignore[arg-type]
            elif kind is not FrameStep:  # (a frame step's mark comes after its frame, below)
                add(step)
            if kind is CallStep:
                self._call_step(k, step)  # type: ignore[arg-type]
            elif kind is ChunkStep:
                bounds(k)
                if self.t0 is None:  # times are shown relative to the first timed chunk
                    self.t0 = step.t  # type: ignore[union-attr]
            elif kind is FrameStep:
                frames.append(step.frame)  # type: ignore[union-attr,arg-type]
                add_frame()  # (its mark reads the frame just added)
                frame_steps.append(k)
                bounds(k)
            elif kind is WaitStep:
                assert isinstance(step, WaitStep)
                self.log.append(step)
                decisions.append(k)
                call = self.calls[step.call]
                call.wait_steps.append(k)
                call.waits.append(step)
                if step.draft is Draft.COMPLETE:
                    self.by_kind["parse"].append(k)
            elif kind is DecisionStep:
                assert isinstance(step, DecisionStep)
                self.log.append(step)
                decisions.append(k)
                if step.decision.action == "refuse":
                    self.by_kind["refusal"].append(k)
                call = self.calls[step.decision.call]
                call.decision_step, call.decision = k, step.decision
            k += 1

    def _call_step(self, k: int, step: CallStep) -> None:
        """Fold one call step into its call's lane: the step says what applying the event did
        (the text changed, and the draft after it; the call became disputed; the anomalies it
        took when it opened), so nothing here accumulates the turn a second time."""
        ev = step.event
        if isinstance(ev, Anomaly):
            self.anomalies.append(ev)
            self.by_kind["anomaly"].append(k)
            call = self.calls.get(ev.key) if ev.key is not None else None
            if call is not None:
                call.anomaly_steps.append(k)
                call.anomalies.append(ev)
                if step.disputed is not None:
                    call.dispute(k, step.disputed)
            return
        if isinstance(ev, CALL_CHANGES):
            self.by_kind["call"].append(k)
            call = self.calls.get(ev.key)
            if call is None:
                call = self.calls[ev.key] = CallIndex(ev.key, len(self.call_order), k, ev.frame)
                self.call_order.append(ev.key)
                self.call_created.append(k)
            named = isinstance(ev, CallOpened | CallIdentified)
            if named or not call.idents:  # (a delta for an identified call changes nothing)
                call.identify(k, ev if named else None)  # type: ignore[arg-type]
            for anomaly in step.inherited:  # reported before the call existed
                call.anomaly_steps.append(k)
                call.anomalies.append(anomaly)
            if step.disputed is not None:
                call.dispute(k, step.disputed)
            draft = step.draft
            if draft is not None:  # the event changed the text
                if isinstance(ev, ArgumentsAppended):
                    call.fragment(k, ev.frame, ev.fragment, False, "raw", draft)
                elif isinstance(ev, ArgumentsSet):
                    call.fragment(k, ev.frame, ev.text, True, ev.origin, draft)
                elif isinstance(ev, FinalCopy):  # (no fragments came: the copy is the text)
                    call.fragment(k, ev.frame, ev.arguments, False, "raw", draft)
            if isinstance(ev, ArgumentPiece):
                call.piece_steps.append(k)
            elif isinstance(ev, CallClosed | CallCut) and call.closed_step is None:
                call.closed_step, call.closed_frame = k, ev.frame
            return
        facts = self.turn_facts.get(type(ev))
        if facts is not None:
            facts[0].append(k)
            facts[1].append(ev)
        elif isinstance(ev, TextAppended):
            ends = self.text_ends.setdefault(ev.channel, [])
            self._text_parts.setdefault(ev.channel, []).append(ev.text)
            self._text_stale.add(ev.channel)
            self.text_steps.setdefault(ev.channel, []).append(k)
            ends.append((ends[-1] if ends else 0) + len(ev.text))

    def _text(self, channel: str) -> str:
        """The channel's whole text so far (joined once per growth, not once per view)."""
        if channel in self._text_stale:
            parts = self._text_parts[channel]
            joined = self.texts[channel] = "".join(parts)
            parts[:] = [joined]  # the next join starts from it
            self._text_stale.discard(channel)
        return self.texts[channel]
