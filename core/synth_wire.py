"""The five per-protocol encoders of the stream synthesizer: a turn to one provider's exact
SSE bytes, following PROTOCOLS.md shape for shape (ids, sequence numbers, padding fields,
terminal events), with the text split by the turn's fragmenter.

:func:`write_turn` runs the encoder the protocol's spec names (``ProtocolSpec.synthetic``) over
a :class:`.synth_context.Wire`; the encoders draw everything random from the turn's
``random.Random`` in a fixed order, so a seed reproduces a stream byte for byte.
"""

from __future__ import annotations

import random
import string
from typing import Any

import orjson

from . import exact_json
from .providers import SPECS
from .synth_context import ALNUM, Context, Wire, token
from .synth_turn import Text, ToolCall, Turn

_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_LOWER = string.ascii_lowercase + string.digits


# -- OpenAI Responses (PROTOCOLS.md §1) --------------------------------------------------------

def encode_responses(c: Context) -> None:
    rng, turn, seq = c.rng, c.turn, [0]

    def send(kind: str, **fields: Any) -> None:
        c.w.frame(kind, {"type": kind, "sequence_number": seq[0], **fields})
        seq[0] += 1

    response: dict[str, Any] = {
        "id": "resp_" + token(rng, "0123456789abcdef", 50), "object": "response",
        "created_at": c.created, "status": "in_progress", "background": False, "error": None,
        "incomplete_details": None, "instructions": None, "max_output_tokens": None,
        "max_tool_calls": None, "model": c.model, "output": [], "parallel_tool_calls": True,
        "previous_response_id": None, "reasoning": {"effort": "medium", "summary": None},
        "service_tier": "auto", "store": True, "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"}, "tool_choice": "auto",
        "tools": list(turn.tools), "top_p": 1.0, "truncation": "disabled", "usage": None,
        "user": None, "metadata": {}}
    send("response.created", response=response)
    send("response.in_progress", response=response)
    suffix = token(rng, "0123456789abcdef", 40)
    output: list[dict[str, Any]] = []
    for i, item in enumerate(turn.items):
        if isinstance(item, Text) and item.channel == "reasoning":
            iid, text = f"rs_{i:02x}{token(rng, '0123456789abcdef', 6)}{suffix}", item.text
            send("response.output_item.added", output_index=i,
                 item={"id": iid, "type": "reasoning", "summary": []})
            part: dict[str, Any] = {"type": "summary_text", "text": ""}
            ref: dict[str, Any] = {"item_id": iid, "output_index": i, "summary_index": 0}
            send("response.reasoning_summary_part.added", **ref, part=part)
            for piece in c.pieces(i, text):
                send("response.reasoning_summary_text.delta", **ref, delta=piece,
                     obfuscation=c.obfuscation(piece))
            send("response.reasoning_summary_text.done", **ref, text=text)
            send("response.reasoning_summary_part.done", **ref, part={**part, "text": text})
            done = {"id": iid, "type": "reasoning", "summary": [{**part, "text": text}]}
        elif isinstance(item, Text):
            iid, text = f"msg_{i:02x}{token(rng, '0123456789abcdef', 6)}{suffix}", item.text
            send("response.output_item.added", output_index=i, item={
                "id": iid, "type": "message", "status": "in_progress", "content": [],
                "role": "assistant"})
            part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
            ref = {"item_id": iid, "output_index": i, "content_index": 0}
            send("response.content_part.added", **ref, part=part)
            for piece in c.pieces(i, text):
                send("response.output_text.delta", **ref, delta=piece, logprobs=[],
                     obfuscation=c.obfuscation(piece))
            send("response.output_text.done", **ref, text=text, logprobs=[])
            send("response.content_part.done", **ref, part={**part, "text": text})
            done = {"id": iid, "type": "message", "status": "completed",
                    "content": [{**part, "text": text}], "role": "assistant"}
        else:
            iid = f"fc_{i:02x}{token(rng, '0123456789abcdef', 6)}{suffix}"
            call = {"id": iid, "type": "function_call", "status": "in_progress", "arguments": "",
                    "call_id": "call_" + token(rng, ALNUM, 24), "name": item.name}
            send("response.output_item.added", output_index=i, item=call)
            for piece in c.pieces(i, item.arguments):
                send("response.function_call_arguments.delta", item_id=iid, output_index=i,
                     delta=piece, obfuscation=c.obfuscation(piece))
            if item.closed:
                send("response.function_call_arguments.done", item_id=iid, output_index=i,
                     arguments=item.arguments)
                done = {**call, "status": "completed", "arguments": item.arguments}
            elif turn.stop.kind == "length":  # a cut item may end with status incomplete
                done = {**call, "status": "incomplete", "arguments": item.arguments}
            else:
                break  # the error comes while the call is still streaming
        send("response.output_item.done", output_index=i, item=done)
        output.append(done)
    usage = {"input_tokens": c.input_tokens, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": c.output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": c.input_tokens + c.output_tokens}
    if turn.stop.kind == "error":
        message = turn.stop.message or "The server had an error while processing your request."
        code = turn.stop.code or "server_error"
        send("error", error={"type": code, "code": code, "message": message, "param": None})
        send("response.failed", response={**response, "status": "failed",
                                          "error": {"code": code, "message": message}})
    elif turn.stop.kind == "length":
        send("response.incomplete", response={
            **response, "status": "incomplete", "output": output, "usage": usage,
            "incomplete_details": {"reason": "max_output_tokens"}})
    else:
        send("response.completed", response={**response, "status": "completed",
                                             "output": output, "usage": usage})


# -- OpenAI Chat Completions (§2) --------------------------------------------------------------

def encode_chat(c: Context) -> None:
    rng, turn = c.rng, c.turn
    base = {"id": "chatcmpl-" + token(rng, ALNUM, 29), "object": "chat.completion.chunk",
            "created": c.created, "model": c.model,
            "system_fingerprint": "fp_" + token(rng, "0123456789abcdef", 10)}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> None:
        c.w.frame(None, {**base, "choices": [
            {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]})

    first = turn.items[0] if turn.items else None
    chunk({"role": "assistant", "content": None} if isinstance(first, ToolCall)
          else {"role": "assistant", "content": "", "refusal": None})
    for i, item in enumerate(turn.items):
        if isinstance(item, Text):
            field_ = "content" if item.channel == "text" else "reasoning_content"
            for piece in c.pieces(i, item.text):
                chunk({field_: piece})
            continue
        k = c.calls.index(i)
        chunk({"tool_calls": [{"index": k, "id": "call_" + token(rng, ALNUM, 24),
                               "type": "function",
                               "function": {"name": item.name, "arguments": ""}}]})
        for piece in c.pieces(i, item.arguments):
            chunk({"tool_calls": [{"index": k, "function": {"arguments": piece}}]})
    if turn.stop.kind == "error":
        c.w.frame(None, {"error": {"message": turn.stop.message or "The server had an error "
                                   "while processing your request. Sorry about that!",
                                   "type": "server_error", "param": None, "code": turn.stop.code}})
        return
    chunk({}, "length" if turn.stop.kind == "length" else "tool_calls" if c.calls else "stop")
    c.w.frame(None, {**base, "choices": [], "usage": {
        "prompt_tokens": c.input_tokens, "completion_tokens": c.output_tokens,
        "total_tokens": c.input_tokens + c.output_tokens,
        "completion_tokens_details": {"reasoning_tokens": 0}}})
    c.w.frame(None, b"[DONE]")


# -- Anthropic Messages (§3) -------------------------------------------------------------------

_ANTHROPIC_TEXT = {"text": ("text", "text_delta"), "reasoning": ("thinking", "thinking_delta")}


def encode_anthropic(c: Context) -> None:
    rng, turn, w = c.rng, c.turn, c.w

    def send(kind: str, **fields: Any) -> None:
        w.frame(kind, {"type": kind, **fields})

    send("message_start", message={
        "id": "msg_01" + token(rng, _B58, 22), "type": "message", "role": "assistant",
        "model": c.model, "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": c.input_tokens, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0, "output_tokens": 1, "service_tier": "standard"}})
    for i, item in enumerate(turn.items):
        if isinstance(item, Text):
            kind, delta = _ANTHROPIC_TEXT[item.channel]
            block = {"type": kind, kind: ""} | ({"signature": ""} if kind == "thinking" else {})
            send("content_block_start", index=i, content_block=block)
            if i == 0:
                w.frame("ping", b'{"type": "ping"}')  # as in Anthropic's own recordings
            for piece in c.pieces(i, item.text):
                send("content_block_delta", index=i, delta={"type": delta, kind: piece})
            if kind == "thinking":
                send("content_block_delta", index=i, delta={
                    "type": "signature_delta", "signature": token(rng, ALNUM, 88)})
            send("content_block_stop", index=i)
            continue
        send("content_block_start", index=i, content_block={
            "type": "tool_use", "id": "toolu_01" + token(rng, _B58, 22), "name": item.name,
            "input": {}})
        if i == 0:
            w.frame("ping", b'{"type": "ping"}')
        # Every recorded tool_use block opens with an empty partial_json; a tool without
        # parameters sends only that one.
        send("content_block_delta", index=i, delta={"type": "input_json_delta", "partial_json": ""})
        for piece in c.pieces(i, item.arguments):
            send("content_block_delta", index=i,
                 delta={"type": "input_json_delta", "partial_json": piece})
        if item.closed:  # max_tokens inside a tool input skips content_block_stop (§3.2)
            send("content_block_stop", index=i)
    if turn.stop.kind == "error":
        send("error", error={"type": turn.stop.code or "overloaded_error",
                             "message": turn.stop.message or "Overloaded"})
        return
    reason = "max_tokens" if turn.stop.kind == "length" else "tool_use" if c.calls else "end_turn"
    send("message_delta", delta={"stop_reason": reason, "stop_sequence": None},
         usage={"output_tokens": c.output_tokens})
    send("message_stop")


# -- Gemini Interactions, steps schema (§4a) ---------------------------------------------------

def encode_interactions(c: Context) -> None:
    rng, turn, w = c.rng, c.turn, c.w

    def send(kind: str, **fields: Any) -> None:
        w.frame(kind, {**fields, "event_type": kind})

    iid = "v1_" + token(rng, ALNUM, 64)
    head = {"id": iid, "status": "in_progress", "object": "interaction", "model": c.model}
    send("interaction.created", interaction=head)
    send("interaction.status_update", interaction_id=iid, status="in_progress")
    for i, item in enumerate(turn.items):
        if isinstance(item, Text):
            reasoning = item.channel == "reasoning"
            send("step.start", index=i, step={"type": "thought" if reasoning else "model_output"})
            for piece in c.pieces(i, item.text):
                delta = ({"content": {"type": "text", "text": piece}, "type": "thought_summary"}
                         if reasoning else {"text": piece, "type": "text"})
                send("step.delta", index=i, delta=delta)
            if reasoning:
                send("step.delta", index=i, delta={"signature": token(rng, ALNUM, 48),
                                                   "type": "thought_signature"})
            send("step.stop", index=i)
            continue
        send("step.start", index=i, step={"id": token(rng, _LOWER, 8), "signature": "",
                                          "type": "function_call", "name": item.name,
                                          "arguments": {}})
        for piece in c.pieces(i, item.arguments):
            send("step.delta", index=i, delta={"arguments": piece, "type": "arguments_delta"})
        if item.closed:
            send("step.stop", index=i)
    if turn.stop.kind == "error":
        send("error", error={"message": turn.stop.message or "Deadline expired before operation "
                             "could complete.", "code": turn.stop.code or "gateway_timeout"})
        return
    status = ("incomplete" if turn.stop.kind == "length" else
              "requires_action" if c.calls else "completed")
    stamp = "2026-05-20T10:00:00Z"
    send("interaction.completed", interaction={
        **head, "status": status, "usage": {
            "total_tokens": c.input_tokens + c.output_tokens, "total_input_tokens": c.input_tokens,
            "total_output_tokens": c.output_tokens, "total_thought_tokens": 0},
        "created": stamp, "updated": stamp, "service_tier": "standard"})
    w.frame("done", b"[DONE]")


# -- Gemini generateContent (§4b) --------------------------------------------------------------

def _object(text: str) -> dict[str, Any] | None:
    """The arguments as the object Gemini sends, or None when the text is not a JSON object."""
    if not text:
        return {}
    try:
        value = exact_json.loads(text)  # (an integer past 64 bits is sent as written)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def encode_generate(c: Context) -> None:
    rng, turn, w = c.rng, c.turn, c.w
    rid = token(rng, ALNUM, 23)
    running = {"promptTokenCount": c.input_tokens, "totalTokenCount": c.input_tokens}

    def chunk(parts: list[Any] | None, finish: str | None = None, usage: Any = running) -> None:
        cand: dict[str, Any] = {} if parts is None else {"content": {"parts": parts,
                                                                      "role": "model"}}
        cand |= {"finishReason": finish} if finish else {}
        w.frame(None, {"candidates": [{**cand, "index": 0}], "usageMetadata": usage,
                       "modelVersion": c.model, "responseId": rid})

    malformed = False
    for i, item in enumerate(turn.items):
        if isinstance(item, Text):
            extra = {"thought": True} if item.channel == "reasoning" else {}
            for piece in c.pieces(i, item.text):
                chunk([{"text": piece, **extra}])
            continue
        args = _object(item.arguments)
        if not item.closed or args is None:
            # Calls are whole objects here: an unfinished call is never sent, and arguments
            # that are not a JSON object end the turn with MALFORMED_FUNCTION_CALL.
            malformed = malformed or (item.closed and args is None)
            continue
        before = w.size
        call: dict[str, Any] = {"name": item.name} | ({"args": args} if item.arguments else {})
        chunk([{"functionCall": call}])
        c.mark_whole(i, before)
    if turn.stop.kind == "error":
        w.frame(None, {"error": {"code": 503, "message": turn.stop.message or "The model is "
                                 "overloaded. Please try again later.",
                                 "status": turn.stop.code or "UNAVAILABLE"}})
        return
    final = {**running, "candidatesTokenCount": c.output_tokens,
             "totalTokenCount": c.input_tokens + c.output_tokens}
    if turn.stop.kind == "normal" and malformed:
        chunk(None, "MALFORMED_FUNCTION_CALL", final)
    else:
        chunk([{"text": ""}], "MAX_TOKENS" if turn.stop.kind == "length" else "STOP", final)


PROTOCOLS = tuple(SPECS)
"""Every registered protocol: each spec names its encoder (``synthetic``)."""


def write_turn(protocol: str, turn: Turn, rng: random.Random) -> Wire:
    """Run ``protocol``'s encoder over ``turn``: the wire holds the whole stream's frames."""
    spec = SPECS[protocol]
    wire = Wire(spec.synthetic.eol)
    spec.encoder()(Context(protocol, turn, rng, wire))
    return wire
