"""The engine: bytes in, steps out. SSE framing, protocol reading, call buffers and the gate.

:class:`CallPipeline` is everything after framing (detection, the protocol reader, the turn
state, the gate); :class:`Engine` puts the SSE decoder in front of it. Both are sans-IO and
deterministic, which is what makes chunking fuzz and cut sweeps exact: the pipeline only ever
sees frames, and frames do not depend on how the bytes were chunked.

Every fact comes out as a :data:`Step`, in order. The headless replay prints them, the timeline
indexes them, the TUI renders the state they build.
"""

from __future__ import annotations

from dataclasses import dataclass

from .calls import TurnState
from .detect import detect
from .events import Anomaly, CallEvent, TurnEnded
from .harness import Decision, GateContext, decide
from .jsonprefix import Draft
from .limits import DEFAULT_LIMITS, Limits
from .providers import reader_for
from .providers.base import ProtocolReader
from .sse import Frame, SSEDecoder
from .tools import ToolSet


@dataclass(frozen=True, slots=True)
class ChunkStep:
    """A network chunk arrived."""

    index: int
    start: int
    end: int
    t: float | None


@dataclass(frozen=True, slots=True)
class FrameStep:
    frame: Frame


@dataclass(frozen=True, slots=True)
class CallStep:
    """A call event from the protocol reader, or an anomaly the accumulator found."""

    event: CallEvent
    length: int | None = None
    """The call's argument length (characters) once this event was applied."""


@dataclass(frozen=True, slots=True)
class DecisionStep:
    """The gate spoke: ``wait`` (with a new draft status) or the final decision for a call."""

    decision: Decision


@dataclass(frozen=True, slots=True)
class WaitStep:
    """While the turn is open the gate waits; emitted when a call's draft status changes."""

    call: str
    draft: Draft
    frame: int | None


Step = ChunkStep | FrameStep | CallStep | WaitStep | DecisionStep


class CallPipeline:
    """Frames in, call events and decisions out (everything after SSE framing)."""

    def __init__(self, protocol: str | None = None, tools: ToolSet | None = None,
                 limits: Limits = DEFAULT_LIMITS) -> None:
        self.tools = tools if tools is not None else ToolSet()
        self.protocol_fixed = protocol is not None
        self.reader: ProtocolReader | None = None
        self.state = TurnState(protocol or "unknown", limits=limits)
        self.decisions: dict[str, Decision] = {}
        self.last_frame: int | None = None
        self._undetected: list[Frame] = []
        self._drafts: dict[str, Draft] = {}
        self._finished = False
        if protocol is not None:
            self.reader = reader_for(protocol)

    @property
    def protocol(self) -> str:
        return self.state.protocol

    def frame(self, frame: Frame) -> list[Step]:
        self.last_frame = frame.index
        if frame.overflow:
            anomaly = self.state.halt(frame.index, f"frame {frame.index} is larger than "
                                      f"{self.state.limits.max_block_bytes} bytes")
            self.state.anomalies.append(anomaly)
            return [CallStep(anomaly)]
        if not frame.dispatch or self.state.halted:
            return []
        if self.reader is None and self.protocol_fixed:
            return []  # unknown protocol (given, or detection gave up): frames only
        if self.reader is None:
            found = detect(frame)
            if found is None:
                if len(self._undetected) >= self.state.limits.max_undetected_frames:
                    self.protocol_fixed = True  # stop trying: the stream is frames only
                    self._undetected.clear()
                    anomaly = Anomaly(frame.index, "protocol_unknown",
                                      f"no protocol recognised in the first "
                                      f"{self.state.limits.max_undetected_frames} frames")
                    self.state.anomalies.append(anomaly)
                    return [CallStep(anomaly)]
                self._undetected.append(frame)
                return []
            self.state.protocol = found
            self.reader = reader_for(found)
            steps: list[Step] = []
            for waiting in (*self._undetected, frame):
                steps += self._read(waiting)
            self._undetected.clear()
            return steps
        return self._read(frame)

    def finish(self) -> list[Step]:
        """End of stream: the reader closes what it can; undecided calls are decided now."""
        if self._finished:
            return []
        self._finished = True
        steps: list[Step] = []
        if self.reader is not None:
            steps += self._apply(self.reader.finish())
        steps += self._decide_all(self.last_frame)
        return steps

    def _read(self, frame: Frame) -> list[Step]:
        assert self.reader is not None
        return self._apply(self.reader.read(frame))

    def _apply(self, events: list[CallEvent]) -> list[Step]:
        steps: list[Step] = []
        for event in events:
            found = self.state.apply(event)
            call = self.state.calls.get(getattr(event, "key", None) or "")
            steps.append(CallStep(event, call.length if call else None))
            steps += [CallStep(a) for a in found]
            if isinstance(event, TurnEnded):
                steps += self._decide_all(event.frame)
            elif not self.state.complete:
                steps += self._waits(event)
        return steps

    def _waits(self, event: CallEvent) -> list[Step]:
        key = getattr(event, "key", None)
        if key is None or isinstance(event, Anomaly) or key in self.decisions:
            return []
        call = self.state.calls.get(key)
        if call is None or self._drafts.get(key) is call.draft:
            return []
        self._drafts[key] = call.draft
        return [WaitStep(key, call.draft, getattr(event, "frame", None))]

    def _decide_all(self, frame: int | None) -> list[Step]:
        empty_means_object = bool(self.reader and self.reader.empty_arguments_mean_empty_object)
        ctx = GateContext(self.state, self.tools, empty_means_object)
        steps: list[Step] = []
        for key, call in self.state.calls.items():
            if key in self.decisions:
                continue
            decision = decide(call, ctx, frame)
            self.decisions[key] = decision
            steps.append(DecisionStep(decision))
        return steps


class Engine:
    """The whole engine: ``feed(bytes) -> [Step]``, ``close() -> [Step]``."""

    def __init__(self, protocol: str | None = None, tools: ToolSet | None = None,
                 limits: Limits = DEFAULT_LIMITS) -> None:
        self.decoder = SSEDecoder(limits.max_block_bytes)
        self.pipeline = CallPipeline(protocol, tools, limits)
        self.chunks = 0

    @property
    def state(self) -> TurnState:
        return self.pipeline.state

    def feed(self, data: bytes, t: float | None = None) -> list[Step]:
        start = self.decoder.bytes_received
        steps: list[Step] = [ChunkStep(self.chunks, start, start + len(data), t)]
        self.chunks += 1
        for frame in self.decoder.feed(data):
            steps.append(FrameStep(frame))
            steps += self.pipeline.frame(frame)
        return steps

    def close(self) -> list[Step]:
        steps: list[Step] = []
        for frame in self.decoder.close():
            steps.append(FrameStep(frame))
            steps += self.pipeline.frame(frame)
        steps += self.pipeline.finish()
        return steps
