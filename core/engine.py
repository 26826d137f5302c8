"""The engine: bytes in, steps out. Framing, protocol reading, call buffers and the gate.

:class:`CallPipeline` is everything after framing (detection, the protocol reader, the turn
state, the gate); :class:`Engine` puts the protocol's framing (:mod:`.framing`) in front of it.
Both are sans-IO and deterministic, which is what makes chunking fuzz and cut sweeps exact: the
pipeline only ever sees frames, and frames do not depend on how the bytes were chunked.

Every fact comes out as a :data:`~.steps.Step` (:mod:`.steps`), in order; the step types are
this module's output, and importable from it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from .call_buffer import CallBuffer
from .calls import TurnState
from .detect import detect
from .events import Anomaly, ArgumentsAppended, CallEvent, TurnEnded, UsageReported
from .fork import forked, shallow_copy
from .frame import Frame
from .framing import Decoder, SniffingDecoder, framing_of, new_decoder
from .gate.codes import Code
from .gate.late import spent_after_decision
from .harness import Decision, GateContext, decide
from .hot_path import HotPath
from .jsonprefix import Draft
from .limits import DEFAULT_LIMITS, Limits
from .providers import reader_for
from .providers.base import ProtocolReader
from .sse import SSEDecoder
from .steps import CallStep, ChunkStep, DecisionStep, FrameStep, Step, WaitStep
from .tools import ToolSet

_new = tuple.__new__
"""Builds a named tuple on the per-event path without its generated ``__new__`` (a Python
lambda around this call): ``_new(CallStep, (event, length, draft, None, ()))`` costs half of
``CallStep(...)``. It fills no defaults: every field is given."""

PIECE = 1 << 20
"""Bytes of one read framed at a time by :meth:`Engine.feed_lazily`."""
SNIFF_PIECE = 64
"""Bytes :meth:`Engine.push` frames before it knows whether the stream is SSE."""


class CallPipeline:
    """Frames in, call events and decisions out (everything after framing)."""

    def __init__(self, protocol: str | None = None, tools: ToolSet | None = None,
                 limits: Limits = DEFAULT_LIMITS, *, contrast: bool = True) -> None:
        self.tools = tools if tools is not None else ToolSet()
        self.contrast = contrast
        """Whether decisions carry the lenient harness's verdict beside the gate's."""
        self.protocol_fixed = protocol is not None
        self.reader: ProtocolReader | None = None
        self.state = TurnState(protocol or "unknown", limits=limits)
        self.decisions: dict[str, Decision] = {}
        self.last_frame: int | None = None
        self._undetected: list[Frame] = []
        self._drafts: dict[str, Draft] = {}
        self._finished = False
        self._sink: list[Step] = []
        """Where the steps nobody wants go (:meth:`push_frame`), emptied after each frame."""
        self.hot_ready = False
        """Whether the hot path's conditions on the turn and the reader (:meth:`.hot_path.
        HotPath.take`) held at its last frame: they change only on the reference path, so
        every frame it reads and every event it applies clears this, and the hot path checks
        them again."""
        if protocol is not None:
            self.reader = reader_for(protocol)

    @property
    def protocol(self) -> str:
        return self.state.protocol

    def fork(self, *, to_finish: bool = False) -> CallPipeline:
        """An independent copy, to finish as if the stream ended here (``callscope check`` does
        this at every frame boundary). The reader and the turn are deep-copied (each knows how
        to fork cheaply); decisions and draft statuses are shared (frozen, and the parsed
        arguments a decision holds are never changed); so are the tools. ``to_finish``: a copy
        to finish once before this pipeline reads on, and nothing else (cheaper: the reader's
        tables and the calls' draft checkers are shared, as finishing only reads them)."""
        twin = shallow_copy(self)
        memo: dict[int, Any] = {}
        if to_finish:
            twin.reader = self.reader and self.reader.fork_to_finish()
            twin.state = self.state.fork_to_finish()
        else:
            twin.reader = forked(self.reader, memo)
            twin.state = forked(self.state, memo)
        twin.decisions = dict(self.decisions)
        twin._undetected = list(self._undetected)
        twin._drafts = dict(self._drafts)
        twin._sink = []
        return twin

    def frame(self, frame: Frame) -> list[Step]:
        out: list[Step] = []
        self.frame_into(frame, out)
        return out

    def frame_into(self, frame: Frame, out: list[Step]) -> None:
        """Read one frame, appending its steps to ``out`` (the engine's hot path: no list per
        frame or per event)."""
        self.last_frame = frame.index
        self.hot_ready = False
        if frame.overflow:
            anomaly = self.state.halt(frame.index, f"frame {frame.index} is larger than "
                                      f"{self.state.limits.max_block_bytes} bytes")
            out.extend(CallStep(a) for a in self.state.record(anomaly))
            return
        if not frame.dispatch or self.state.halted:
            return
        reader = self.reader
        if reader is not None:
            self._apply(reader.read(frame), out)
        elif not self.protocol_fixed:
            self._detect(frame, out)
        # else: unknown protocol (given, or detection gave up): frames only

    def push_frame(self, frame: Frame) -> None:
        """:meth:`frame_into` for callers that read only the outcome: the frames the reader
        calls hot take :meth:`hot_fragment` (no event or step is made), the others the
        reference path, their steps dropped."""
        reader = self.reader
        data = frame.data
        if (reader is not None and data[:1] == "{" and frame.dispatch and not frame.overflow
                and self.state.halted is None and reader.quiet()
                and reader.has_hot_frame):
            try:
                payload = orjson.loads(data)
            except orjson.JSONDecodeError:
                payload = None
            hit = None if payload is None else reader.hot_fragment(frame.event, payload,
                                                                   frame.index)
            if hit is not None:
                self.hot_fragment(frame.index, hit[0], hit[1])
                return
            del payload  # (the reader parses it again: a final response's is not held twice)
        sink = self._sink
        self.frame_into(frame, sink)
        sink.clear()

    def hot_fragment(self, frame: int, key: str, fragment: str) -> None:
        """Frame ``frame`` was one argument fragment and nothing else (the hot path has read
        it, :mod:`.hot_path`): what :meth:`frame_into` does with it, without its steps."""
        self.last_frame = frame
        draft = self.state.append_hot(key, frame, fragment)
        if draft is None:  # (not the accumulator's fast case: its general path, as _apply does)
            sink = self._sink
            self._apply([_new(ArgumentsAppended, (frame, key, fragment))], sink)
            sink.clear()
        elif self._drafts.get(key) is not draft and key not in self.decisions:
            self._drafts[key] = draft  # (the wait step _wait would make, unmade)

    def hot_fragments(self, frame: int, key: str, fragments: list[str]) -> None:
        """Frames ``frame`` onwards were each one fragment for call ``key`` and nothing else,
        and it has room for them all (:meth:`.calls.TurnState.hot_room`): :meth:`hot_fragment`
        of each in turn."""
        self.last_frame = frame + len(fragments) - 1
        draft = self.state.calls[key].extend(frame, fragments)
        if self._drafts.get(key) is not draft and key not in self.decisions:
            self._drafts[key] = draft  # (the last wait step _wait would make, unmade)

    def _detect(self, frame: Frame, out: list[Step]) -> None:
        found = detect(frame)
        if found is None:
            if len(self._undetected) >= self.state.limits.max_undetected_frames:
                self.protocol_fixed = True  # stop trying: the stream is frames only
                self._undetected.clear()
                anomaly = Anomaly(frame.index, Code.PROTOCOL_UNKNOWN,
                                  f"no protocol recognised in the first "
                                  f"{self.state.limits.max_undetected_frames} frames")
                out.extend(CallStep(a) for a in self.state.record(anomaly))
                return
            self._undetected.append(frame)
            return
        self.state.protocol = found
        reader = reader_for(found)
        assert reader is not None  # detect() only names protocols that have a reader
        self.reader = reader
        for waiting in (*self._undetected, frame):
            self._apply(reader.read(waiting), out)
        self._undetected.clear()

    def finish(self) -> list[Step]:
        """End of stream: the reader closes what it can; undecided calls are decided now."""
        if self._finished:
            return []
        self._finished = True
        steps: list[Step] = []
        if self.reader is not None:
            self._apply(self.reader.finish(), steps)
        self._decide_all(self.last_frame, steps)
        return steps

    def _apply(self, events: list[CallEvent], out: list[Step]) -> None:
        self.hot_ready = False
        state = self.state
        calls = state.calls
        for event in events:
            if type(event) is ArgumentsAppended:
                # Nearly every event of a tool-call stream: the accumulator's fast path (taken
                # only before the terminal signal, so the call is still waiting).
                draft = state.append_hot(event.key, event.frame, event.fragment)
                if draft is not None:
                    grown = calls[event.key]
                    out.append(_new(CallStep, (event, grown.length, draft, None, ())))
                    if self._drafts.get(event.key) is not draft:
                        self._wait(grown, event.frame, out)  # the draft status changed
                    continue
            key = getattr(event, "key", None)
            before = calls.get(key) if key is not None else None
            if before is not None:
                fragments, was_disputed, pending = len(before.fragments), before.disputed, None
            else:  # what the call takes if this event creates it
                fragments, was_disputed = 0, None
                pending = state.orphans.get(key) if key is not None else None
            found = state.apply(event)
            call = calls.get(key) if key is not None else None
            disputed = call.disputed if call is not None and call.disputed is not was_disputed \
                else None
            # A dispute the accumulator found is said by its own step (the anomaly's), any
            # other (the event itself, one taken at the open, one over its cap) by the event's.
            found_it = disputed is not None and any(a is disputed for a in found)
            if not state.dropped_last:  # an anomaly over its cap is counted, not a step
                if call is None:
                    out.append(CallStep(event))
                else:
                    out.append(_new(CallStep, (
                        event, call.length,
                        call.draft if len(call.fragments) != fragments else None,
                        None if found_it else disputed,
                        tuple(pending) if pending and before is None else ())))
            if found_it:
                out.extend(CallStep(a, None, None, a) if a is disputed else CallStep(a)
                           for a in found)
            else:
                out.extend(CallStep(a) for a in found)
            if isinstance(event, TurnEnded):
                self._decide_all(event.frame, out)
            elif call is not None and state.terminal is None and not isinstance(event, Anomaly):
                self._wait(call, getattr(event, "frame", None), out)
            elif type(event) is UsageReported and state.terminal is not None:
                late = spent_after_decision(state, self.tools.request, event.frame)
                if late is not None:
                    out.extend(CallStep(a) for a in state.record(late))

    def _wait(self, call: CallBuffer, frame: int | None, out: list[Step]) -> None:
        """A wait step when the call's draft status changed (and it is not decided yet)."""
        draft = call.draft
        key = call.key
        if self._drafts.get(key) is draft or key in self.decisions:
            return
        self._drafts[key] = draft
        out.append(WaitStep(key, draft, frame))

    def _decide_all(self, frame: int | None, out: list[Step]) -> None:
        empty_means_object = bool(self.reader and self.reader.empty_arguments_mean_empty_object)
        ctx = GateContext(self.state, self.tools, empty_means_object, self.contrast)
        for key, call in self.state.calls.items():
            if key in self.decisions:
                continue
            decision = decide(call, ctx, frame)
            if self.state.outcome_only:
                decision = decision.without_arguments()
            self.decisions[key] = decision
            out.append(DecisionStep(decision))


class Engine:
    """The whole engine: ``feed(bytes) -> [Step]``, ``close() -> [Step]``."""

    def __init__(self, protocol: str | None = None, tools: ToolSet | None = None,
                 limits: Limits = DEFAULT_LIMITS, *, contrast: bool = True) -> None:
        self.decoder: Decoder = new_decoder(framing_of(protocol), limits.max_block_bytes)
        self.pipeline = CallPipeline(protocol, tools, limits, contrast=contrast)
        self.chunks = 0
        self.last_frame: Frame | None = None
        """The last frame :meth:`push` materialized if it was cut short (not terminated: all
        an ending asks of it), else None: a big terminated frame (a final response holding every
        call's arguments) is not kept for nothing. The hot path's frames are all terminated."""
        self._hot = HotPath(self.pipeline, limits.max_block_bytes)
        self._sse: SSEDecoder | None = self.decoder if isinstance(self.decoder, SSEDecoder) \
            else None
        """The SSE decoder the hot path feeds: the decoder, or the one a sniffing decoder chose
        (:meth:`_sniffed`); None while the framing is not SSE or not known yet."""

    @property
    def state(self) -> TurnState:
        return self.pipeline.state

    def feed(self, data: bytes, t: float | None = None) -> list[Step]:
        start = self.decoder.bytes_received
        steps: list[Step] = [_new(ChunkStep, (self.chunks, start, start + len(data), t))]
        self.chunks += 1
        frames = self.decoder.feed(data)
        if frames:
            self._frames_into(frames, steps)
        return steps

    def feed_lazily(self, data: bytes, t: float | None = None) -> Iterator[list[Step]]:
        """:meth:`feed`, in batches: a read larger than :data:`PIECE` bytes (a raw capture is
        one read of the whole file) is framed a piece at a time, so its first steps come before
        the rest is framed. Exhaust the iterator before feeding again."""
        if len(data) <= PIECE:
            yield self.feed(data, t)
            return
        start = self.decoder.bytes_received
        steps: list[Step] = [ChunkStep(self.chunks, start, start + len(data), t)]
        self.chunks += 1
        self._frames_into(self.decoder.feed(data[:PIECE]), steps)
        yield steps
        for offset in range(PIECE, len(data), PIECE):
            steps = []
            self._frames_into(self.decoder.feed_more(data[offset:offset + PIECE]), steps)
            yield steps

    def _frames_into(self, frames: list[Frame], steps: list[Step]) -> None:
        pipeline = self.pipeline
        for frame in frames:
            steps.append(_new(FrameStep, (frame,)))
            pipeline.frame_into(frame, steps)

    def push(self, data: bytes) -> None:
        """:meth:`feed` for callers that read only the outcome (``replay --summary``): the
        same turn, decisions and state, without steps; an SSE stream's commonest frames take
        the hot path (:mod:`.hot_path`) and are never materialized."""
        self.chunks += 1
        deliver, sse = self._deliver, self._sse
        if sse is None:
            # The framing is sniffed from the first byte: the first piece is kept small, so
            # that a stream read whole (a raw capture) takes the hot path past its first bytes.
            decoder = self.decoder
            first = data[:SNIFF_PIECE]
            for frame in decoder.feed(first):
                deliver(frame)
            sse = self._sniffed()
            for offset in range(len(first), len(data), PIECE):  # (in pieces, as feed_lazily)
                piece = data[offset:offset + PIECE]
                if sse is not None:
                    sse.feed_hot(piece, self._hot, deliver, more=True)
                    continue
                for frame in decoder.feed_more(piece):
                    deliver(frame)
            return
        hot = self._hot
        sse.feed_hot(data if len(data) <= PIECE else data[:PIECE], hot, deliver)
        for offset in range(PIECE, len(data), PIECE):
            sse.feed_hot(data[offset:offset + PIECE], hot, deliver, more=True)

    def _sniffed(self) -> SSEDecoder | None:
        """The SSE decoder a sniffing decoder (no protocol given) chose, once it has."""
        decoder = self.decoder
        if isinstance(decoder, SniffingDecoder) and isinstance(decoder.inner, SSEDecoder):
            self._sse = decoder.inner
        return self._sse

    def push_reads(self, reads: Iterable[bytes]) -> None:
        """:meth:`push` each read in turn (``callscope check`` replays a session byte by
        byte): one Python call per read."""
        reads = iter(reads)  # (two loops over it: the second goes on where the first stopped)
        for data in reads:  # (until the framing is known to be SSE: a first read holding the
            if self._sse is not None:  # whole stream is read hot past its first bytes)
                break
            self.push(data)
        else:
            return
        assert self._sse is not None
        self._sse.feed_hot(data, self._hot, self._deliver)
        self.chunks += 1 + self._sse.feed_hot_each(reads, self._hot, self._deliver)

    def _deliver(self, frame: Frame) -> None:
        self.last_frame = None if frame.terminated else frame
        self.pipeline.push_frame(frame)

    def close(self) -> list[Step]:
        steps: list[Step] = []
        for frame in self.decoder.close():
            steps.append(FrameStep(frame))
            self.pipeline.frame_into(frame, steps)
        steps += self.pipeline.finish()
        return steps


__all__ = ["CallPipeline", "CallStep", "ChunkStep", "DecisionStep", "Engine", "FrameStep", "Step",
           "WaitStep"]
