"""The stream synthesizer's encoders for the protocols that are not SSE: Bedrock ConverseStream
and InvokeModelWithResponseStream (AWS event-stream messages, :mod:`.aws_eventstream`) and
Ollama's ``/api/chat`` (NDJSON). Each spec's ``synthetic`` names one of them.

The encoders write through the :class:`.synth_context.Wire` the synthesizer hands them, with
its SSE block writer replaced by the framing's (:func:`_framed`), so frame ends and the marks
of requested fragment boundaries are kept exactly as for the SSE encoders. Shapes follow
botocore's service model for bedrock-runtime and the ollama client's ``_types.py``; the random
``p`` padding of Converse events is what Bedrock adds to every event payload.
"""

from __future__ import annotations

import base64
import string
from collections.abc import Callable
from typing import Any

import orjson

from . import exact_json
from .aws_eventstream import event_message, exception_message
from .inert import json_dumps
from .synth_context import ALNUM, Context, Wire, token
from .synth_turn import Text
from .synth_wire import encode_anthropic

_PADDING = string.ascii_letters + string.digits


def _framed(wire: Wire, block_of: Callable[[str | None, bytes], bytes]) -> None:
    """Write this wire's frames as ``block_of(event, payload)`` says instead of as SSE blocks."""

    def frame(event: str | None, payload: Any) -> None:
        data = payload if isinstance(payload, bytes) else json_dumps(payload)
        block = block_of(event, data)
        wire.parts.append(block)
        wire.size += len(block)
        wire.frame_ends.append(wire.size)

    wire.frame = frame  # type: ignore[method-assign]


# -- Bedrock ConverseStream --------------------------------------------------------------------

def _converse_block(event: str | None, data: bytes) -> bytes:
    if event is not None and event.endswith("Exception"):
        return exception_message(event, data)
    return event_message(event or "", data)


def encode_converse(c: Context) -> None:
    rng, turn = c.rng, c.turn
    _framed(c.w, _converse_block)

    def send(event: str, **fields: Any) -> None:
        c.w.frame(event, {**fields, "p": token(rng, _PADDING, 1 + int(rng.random() * 30))})

    send("messageStart", role="assistant")
    for i, item in enumerate(turn.items):
        if isinstance(item, Text):
            for piece in c.pieces(i, item.text):
                delta = ({"text": piece} if item.channel == "text"
                         else {"reasoningContent": {"text": piece}})
                send("contentBlockDelta", contentBlockIndex=i, delta=delta)
            if item.channel == "reasoning":
                send("contentBlockDelta", contentBlockIndex=i,
                     delta={"reasoningContent": {"signature": token(rng, ALNUM, 88)}})
            send("contentBlockStop", contentBlockIndex=i)
            continue
        send("contentBlockStart", contentBlockIndex=i, start={"toolUse": {
            "toolUseId": "tooluse_" + token(rng, ALNUM, 22), "name": item.name}})
        sent = False
        for piece in c.pieces(i, item.arguments):
            send("contentBlockDelta", contentBlockIndex=i, delta={"toolUse": {"input": piece}})
            sent = True
        if not sent:  # a tool without parameters: one empty fragment, as Claude's relayed one
            send("contentBlockDelta", contentBlockIndex=i, delta={"toolUse": {"input": ""}})
        if item.closed:
            send("contentBlockStop", contentBlockIndex=i)
    if turn.stop.kind == "error":
        c.w.frame(turn.stop.code or "modelStreamErrorException", {
            "message": turn.stop.message or "The system encountered an unexpected error during "
            "processing. Try your request again.", "originalStatusCode": 500})
        return
    reason = "max_tokens" if turn.stop.kind == "length" else "tool_use" if c.calls else "end_turn"
    send("messageStop", stopReason=reason)
    send("metadata", usage={"inputTokens": c.input_tokens, "outputTokens": c.output_tokens,
                            "totalTokens": c.input_tokens + c.output_tokens},
         metrics={"latencyMs": 200 + int(rng.random() * 3000)})


# -- Bedrock InvokeModelWithResponseStream (Anthropic events inside) ---------------------------

def _invoke_block(event: str | None, data: bytes) -> bytes:
    if event == "error":  # Bedrock sends an exception message, not Anthropic's error event
        error = orjson.loads(data).get("error", {})
        return exception_message("modelStreamErrorException", orjson.dumps({
            "message": error.get("message", "error"), "originalStatusCode": 529}))
    return event_message("chunk", orjson.dumps({"bytes": base64.b64encode(data).decode()}))


def encode_invoke(c: Context) -> None:
    """Anthropic's events (the Anthropic encoder's, unchanged), each in a ``chunk`` message."""
    _framed(c.w, _invoke_block)
    encode_anthropic(c)


# -- Ollama /api/chat --------------------------------------------------------------------------

def encode_ollama(c: Context) -> None:
    rng, turn, w = c.rng, c.turn, c.w
    _framed(w, _ollama_block)
    stamp = f"2026-05-20T10:00:{int(rng.random() * 60):02d}.{rng.randint(0, 999999):06d}Z"

    def line(message: dict[str, Any], done: bool = False, **fields: Any) -> None:
        w.frame(None, {"model": c.model, "created_at": stamp,
                       "message": {"role": "assistant", **message}, "done": done, **fields})

    for i, item in enumerate(turn.items):
        if isinstance(item, Text):
            field = "content" if item.channel == "text" else "thinking"
            for piece in c.pieces(i, item.text):
                line({"content": "", field: piece} if field == "thinking" else {field: piece})
            continue
        if not item.closed:
            continue  # calls come whole: an unfinished one is never sent
        try:
            arguments = exact_json.loads(item.arguments) if item.arguments else {}
        except orjson.JSONDecodeError:
            arguments = None
        if not isinstance(arguments, dict):
            continue  # Ollama parses the model's call itself: what is not an object is no call
        before = w.size
        line({"content": "", "tool_calls": [{"id": "call_" + token(rng, ALNUM, 8), "function": {
            "index": c.calls.index(i), "name": item.name, "arguments": arguments}}]})
        c.mark_whole(i, before)
    if turn.stop.kind == "error":
        w.frame(None, {"error": turn.stop.message or "an error was encountered while running "
                       "the model: unexpected EOF"})
        return
    line({"content": ""}, True, done_reason="length" if turn.stop.kind == "length" else "stop",
         total_duration=4_000_000_000 + rng.randint(0, 10**9), load_duration=10**7,
         prompt_eval_count=c.input_tokens, prompt_eval_duration=2 * 10**8,
         eval_count=c.output_tokens, eval_duration=10**9)


def _ollama_block(event: str | None, data: bytes) -> bytes:
    return data + b"\n"


BLOCKS: dict[str, Callable[[str | None, bytes], bytes]] = {
    "bedrock-converse": _converse_block,
    "bedrock-invoke": _invoke_block,
    "ollama-chat": _ollama_block,
}
"""Protocol -> how one frame of it is written (the encoders above, and tests splicing in a
frame of their own)."""


def one_frame(protocol: str, event: str | None, payload: bytes) -> bytes:
    """One frame of ``protocol`` carrying ``payload`` (an event named ``event``)."""
    return BLOCKS[protocol](event, payload)
