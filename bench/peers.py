"""The peers: what a user would otherwise run to read streamed tool calls, and callscope itself.

Every peer takes a :class:`~bench.streams.BenchStream` and a :class:`Budget` and returns each
call's final arguments (text, or the parsed object where the SDK only keeps that), in call
order, so the runner can check that every peer really rebuilt what was sent. Chunked peers read
the stream through :meth:`Budget.chunks`, which checks the clock between network reads and
raises :class:`OverCap` once the measurement's time is up: a quadratic peer is abandoned
mid-stream instead of being waited for, and the runner reports how far it got.

The SDK peers follow the SDKs' own streaming code path exactly (read in the installed
packages): the SDK's SSE decoder over the byte chunks, ``sse.json()``, ``construct_type`` into
the SDK's event union (what ``Stream`` does through ``_process_response_data`` without strict
validation), then the accumulator the ``.stream()`` helpers drive.
"""

from __future__ import annotations

import bisect
import contextlib
import inspect
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import jiter
import orjson

from .streams import BenchStream

cpu = time.process_time
"""What the measurements report: on a shared machine other jobs inflate wall time, not this."""


class OverCap(Exception):
    def __init__(self, done: int, rate: float | None) -> None:
        super().__init__(f"over cap after {done} bytes")
        self.done = done
        """Bytes of the stream consumed when the cap was reached."""
        self.rate = rate
        """Bytes per CPU second over the last fifth of the run (None: too few readings)."""


class Budget:
    """The time cap of one measurement, in CPU seconds of this process (like the measurements:
    other jobs on a shared machine do not eat into it). Reading the CPU clock is a system call
    (microseconds), so it is read every :data:`EVERY` network reads, not on each. The readings
    are kept, so a peer over the cap leaves its latest rate behind."""

    def __init__(self, cap: float) -> None:
        self.start = cpu()
        self.limit = self.start + cap
        self.done = 0
        self.marks: list[tuple[float, int]] = [(self.start, 0)]

    def tick(self, done: int) -> None:
        now = cpu()
        if now > self.limit:
            raise OverCap(done, self._rate(now, done))
        self.marks.append((now, done))

    def _rate(self, now: float, done: int) -> float | None:
        since = now - (now - self.start) / 5
        i = bisect.bisect_left(self.marks, (since, -1))
        then, before = self.marks[min(i, len(self.marks) - 1)]
        return (done - before) / (now - then) if now > then and done > before else None

    def chunks(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        for i, chunk in enumerate(chunks):
            if not i % EVERY:
                self.tick(self.done)
            yield chunk
            self.done += len(chunk)


EVERY = 32


Peer = Callable[[BenchStream, Budget], "list[Any] | None"]


# -- the floor ---------------------------------------------------------------------------------

def floor(s: BenchStream, budget: Budget) -> None:
    """Split the bytes at blank lines and parse each payload: about the least any reader does."""
    sep = s.eol + s.eol
    loads, done, step = orjson.loads, 0, len(sep)
    for i, block in enumerate(s.data.split(sep)):
        if not i % EVERY:
            budget.tick(done)
        done += len(block) + step
        i = block.find(b"data: ")
        if i >= 0:
            payload = block[i + 6:]
            if payload != b"[DONE]":
                loads(payload)
    return None


def floor_reads(s: BenchStream, budget: Budget) -> None:
    """The floor fed the same network reads: keep the unfinished tail, split off the complete
    blocks of each read, parse each payload. What the reads alone add to the floor, for
    comparison with callscope, which is fed reads too (not a target row: the issue's floor is
    the whole stream split at once)."""
    sep = s.eol + s.eol
    loads, pending, scan = orjson.loads, bytearray(), 0
    for chunk in budget.chunks(s.chunks):
        pending += chunk
        if pending.find(sep, scan) < 0:  # never rescan: a 100 KB event spans hundreds of reads
            scan = max(len(pending) - len(sep) + 1, 0)
            continue
        *blocks, rest = bytes(pending).split(sep)
        del pending[:len(pending) - len(rest)]
        scan = 0
        for block in blocks:  # the floor's own parse, inlined as there: no call per block
            i = block.find(b"data: ")
            if i >= 0:
                payload = block[i + 6:]
                if payload != b"[DONE]":
                    loads(payload)
    return None


# -- httpx-sse with naive accumulation, and the naive live preview -----------------------------

class Naive:
    """Per-call argument text, accumulated the way a first harness does: ``args[key] += delta``."""

    def __init__(self, preview: bool) -> None:
        self.args: dict[Any, str] = {}
        self.preview = preview
        self.last: Any = None

    def open(self, key: Any) -> None:
        self.args.setdefault(key, "")

    def fragment(self, key: Any, text: str) -> None:
        self.args[key] += text
        if self.preview:
            # The live preview: re-parse the whole buffer so the UI can show the arguments.
            try:
                self.last = jiter.from_json(self.args[key].encode(), partial_mode=True)
            except ValueError:  # nothing parseable yet (an empty first fragment)
                pass

    def feed(self, protocol: str, payload: Any) -> None:
        NAIVE_READERS[protocol](self, payload)


def _naive_responses(acc: Naive, p: dict[str, Any]) -> None:
    kind = p.get("type")
    if kind == "response.function_call_arguments.delta":
        acc.fragment(p["item_id"], p["delta"])
    elif kind == "response.output_item.added" and p["item"].get("type") == "function_call":
        acc.open(p["item"]["id"])


def _naive_chat(acc: Naive, p: dict[str, Any]) -> None:
    for choice in p.get("choices") or ():
        for call in (choice.get("delta") or {}).get("tool_calls") or ():
            acc.open(call["index"])
            text = (call.get("function") or {}).get("arguments")
            if text:
                acc.fragment(call["index"], text)


def _naive_anthropic(acc: Naive, p: dict[str, Any]) -> None:
    kind = p.get("type")
    if kind == "content_block_delta" and p["delta"].get("type") == "input_json_delta":
        acc.fragment(p["index"], p["delta"]["partial_json"])
    elif kind == "content_block_start" and p["content_block"].get("type") == "tool_use":
        acc.open(p["index"])


def _naive_interactions(acc: Naive, p: dict[str, Any]) -> None:
    kind = p.get("event_type")
    if kind == "step.delta" and p["delta"].get("type") == "arguments_delta":
        acc.fragment(p["index"], p["delta"]["arguments"])
    elif kind == "step.start" and p["step"].get("type") == "function_call":
        acc.open(p["index"])


NAIVE_READERS: dict[str, Callable[[Naive, Any], None]] = {
    "openai-responses": _naive_responses, "openai-chat": _naive_chat,
    "anthropic": _naive_anthropic, "gemini-interactions": _naive_interactions,
}


def _httpx_sse(s: BenchStream, budget: Budget, preview: bool) -> list[Any]:
    import httpx
    from httpx_sse import EventSource

    response = httpx.Response(200, headers={"content-type": "text/event-stream"},
                              content=budget.chunks(s.chunks))
    acc = Naive(preview)
    for sse in EventSource(response).iter_sse():
        if sse.data and sse.data != "[DONE]":
            acc.feed(s.protocol, sse.json())
    return list(acc.args.values())


def httpx_sse_naive(s: BenchStream, budget: Budget) -> list[Any]:
    """httpx-sse's public API over an in-memory response, ``json.loads``, ``+=`` per call."""
    return _httpx_sse(s, budget, preview=False)


def naive_preview(s: BenchStream, budget: Budget) -> list[Any]:
    """The same, plus ``jiter.from_json(buffer, partial_mode=True)`` after every fragment."""
    return _httpx_sse(s, budget, preview=True)


# -- the official SDKs' accumulators -----------------------------------------------------------

def openai_responses_sdk(s: BenchStream, budget: Budget) -> list[Any]:
    """``client.responses.stream()``: ``ResponseStreamState.handle_event`` per event."""
    import openai
    from openai._models import construct_type
    from openai._streaming import SSEDecoder
    from openai.lib.streaming.responses._responses import ResponseStreamState
    from openai.types.responses import ResponseStreamEvent

    omit: Any = getattr(openai, "omit", None) or openai.NOT_GIVEN  # older SDKs: NOT_GIVEN
    tools: Any = s.tools
    state: ResponseStreamState[Any] = ResponseStreamState(input_tools=tools, text_format=omit)
    for sse in SSEDecoder().iter_bytes(budget.chunks(s.chunks)):
        if sse.data.startswith("[DONE]"):
            break
        state.handle_event(construct_type(type_=ResponseStreamEvent, value=sse.json()))  # type: ignore[arg-type]
    final = state._completed_response
    assert final is not None, "no response.completed"
    return [item.arguments for item in final.output if item.type == "function_call"]


def openai_chat_sdk(s: BenchStream, budget: Budget) -> list[Any]:
    """``client.chat.completions.stream()`` with a strict tool: ``ChatCompletionStreamState``
    re-builds the message snapshot and partial-parses the arguments on every chunk."""
    from openai._models import construct_type
    from openai._streaming import SSEDecoder
    from openai.lib.streaming.chat._completions import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState(input_tools=s.tools)  # type: ignore[arg-type]
    for sse in SSEDecoder().iter_bytes(budget.chunks(s.chunks)):
        if sse.data.startswith("[DONE]"):
            break
        chunk: Any = construct_type(type_=ChatCompletionChunk, value=sse.json())
        if chunk.object == "chat.completion.chunk":
            state.handle_chunk(chunk)
    message = state.get_final_completion().choices[0].message
    return [call.function.arguments for call in message.tool_calls or ()]


def anthropic_sdk(s: BenchStream, budget: Budget) -> list[Any]:
    """``client.messages.stream()``: ``accumulate_event`` (jiter partial parse of the whole
    input buffer on every ``input_json_delta``) and ``build_events`` per event."""
    from anthropic._models import construct_type
    from anthropic._streaming import SSEDecoder
    from anthropic.lib.streaming._messages import accumulate_event, build_events
    from anthropic.types import RawMessageStreamEvent

    snapshot: Any = None
    # Recent SDKs keep the raw input buffers in a dict passed in; older ones on the block.
    extra: dict[str, Any] = {"json_bufs": {}} if "json_bufs" in inspect.signature(
        accumulate_event).parameters else {}
    for sse in SSEDecoder().iter_bytes(budget.chunks(s.chunks)):
        if sse.event in ("ping", None) or not sse.data:
            continue
        event: Any = construct_type(type_=RawMessageStreamEvent, value=sse.json())
        if snapshot is None and event.type != "message_start":
            continue
        snapshot = accumulate_event(event=event, current_snapshot=snapshot, **extra)
        build_events(event=event, message_snapshot=snapshot)
    return [block.input for block in snapshot.content if block.type == "tool_use"]


SDKS: dict[str, tuple[str, Peer]] = {
    "openai-responses": ("openai ResponseStreamState", openai_responses_sdk),
    "openai-chat": ("openai ChatCompletionStreamState", openai_chat_sdk),
    "anthropic": ("anthropic accumulate_event", anthropic_sdk),
}


# -- callscope ---------------------------------------------------------------------------------

def callscope_engine(s: BenchStream, budget: Budget) -> list[Any]:
    """The whole engine: SSE frames, the protocol reader, call buffers with the draft status on
    every fragment, and the gate's decisions (strict parse + schema) at the end of the turn."""
    from callscope.core.engine import Engine
    from callscope.core.tools import ToolSet

    engine = Engine(s.protocol, ToolSet(s.tools))
    for chunk in budget.chunks(s.chunks):
        engine.feed(chunk)
    engine.close()
    actions = {d.action for d in engine.pipeline.decisions.values()}
    assert actions == {"execute"}, f"the gate did not execute: {engine.pipeline.decisions}"
    return [call.text for call in engine.state.calls.values()]


def callscope_outcome(s: BenchStream, budget: Budget) -> list[Any]:
    """The same engine for a caller that reads only the outcome (``replay --summary``,
    ``check``): every read pushed (``Engine.push_reads``), so no step is made and the commonest
    frames take the hot path (read where they lie, never materialized); the same frames
    counted, call buffers, draft statuses, anomalies and decisions."""
    from callscope.core.engine import Engine
    from callscope.core.tools import ToolSet

    engine = Engine(s.protocol, ToolSet(s.tools))
    engine.push_reads(budget.chunks(s.chunks))
    engine.close()
    actions = {d.action for d in engine.pipeline.decisions.values()}
    assert actions == {"execute"}, f"the gate did not execute: {engine.pipeline.decisions}"
    return [call.text for call in engine.state.calls.values()]


@contextlib.contextmanager
def drafts_disabled() -> Iterator[None]:
    """The engine without the streaming JSON prefix checker (core has no flag for it yet):
    the checker's ``feed`` is replaced by a constant for the duration of the measurement."""
    from callscope.core.jsonprefix import Draft, JsonPrefixChecker

    original = JsonPrefixChecker.feed

    def skip(self: JsonPrefixChecker, text: str) -> Draft:
        return Draft.INCOMPLETE

    JsonPrefixChecker.feed = skip
    try:
        yield
    finally:
        JsonPrefixChecker.feed = original


def callscope_no_draft(s: BenchStream, budget: Budget) -> list[Any]:
    with drafts_disabled():
        return callscope_engine(s, budget)


def callscope_one_read(s: BenchStream, budget: Budget) -> None:
    """The whole engine fed the stream as one read: the difference to :func:`callscope_engine`
    is the cost of the network reads themselves (cannot be abandoned mid-way)."""
    from callscope.core.engine import Engine
    from callscope.core.tools import ToolSet

    engine = Engine(s.protocol, ToolSet(s.tools))
    engine.feed(s.data)
    engine.close()


def callscope_framing(s: BenchStream, budget: Budget) -> None:
    """Only the SSE decoder (frames with offsets, raw bytes, decoded lines)."""
    from callscope.core.sse import SSEDecoder

    decoder = SSEDecoder()
    for chunk in budget.chunks(s.chunks):
        decoder.feed(chunk)
    decoder.close()


def callscope_reader(s: BenchStream, budget: Budget) -> None:
    """The SSE decoder and the protocol reader (call events), without call buffers or gate."""
    from callscope.core.providers import reader_for
    from callscope.core.sse import SSEDecoder

    decoder, reader = SSEDecoder(), reader_for(s.protocol)
    for chunk in budget.chunks(s.chunks):
        for frame in decoder.feed(chunk):
            if frame.dispatch:
                reader.read(frame)
    for frame in decoder.close():
        if frame.dispatch:
            reader.read(frame)
    reader.finish()
