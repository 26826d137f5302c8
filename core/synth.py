"""A stream synthesizer: a turn description in, each provider's exact wire bytes out (sans-IO).

A :class:`Turn` lists what the model produced (text, reasoning, tool calls whose arguments are
JSON *text*, possibly invalid) and how it stopped (normally, cut by the token limit, or by a
provider error). :func:`encode_turn` writes it the way one provider streams it, following
PROTOCOLS.md shape for shape (ids, sequence numbers, padding fields, terminal events), with the
text split into fragments the way real models send them. :func:`network_chunks` then splits the
bytes into network reads that ignore every boundary, with plausible arrival times.

Everything is driven by a ``random.Random`` passed in, so a seed reproduces a stream byte for
byte. Output is built as a list of byte strings joined once: the benchmarks use this module
for multi-megabyte arguments and dozens of parallel calls.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

# -- the turn description ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Text:
    text: str
    channel: Literal["text", "reasoning"] = "text"


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    arguments: str
    """The argument JSON text exactly as the model writes it (it may be invalid or cut)."""
    closed: bool = True
    """False: the provider never closes this call (output cut by the limit, or an error)."""


Item = Text | ToolCall


@dataclass(frozen=True, slots=True)
class Stop:
    kind: Literal["normal", "length", "error"] = "normal"
    message: str | None = None
    """For ``error``: the provider's message (None: a typical one for the protocol)."""
    code: str | None = None


@dataclass(frozen=True, slots=True)
class Fragmenting:
    """Fragment sizes in characters, drawn uniformly in ``[low, high]``."""

    low: int = 1
    high: int = 8

    def __post_init__(self) -> None:
        if not 1 <= self.low <= self.high:
            raise ValueError(f"fragment sizes need 1 <= low <= high, not {self.low}..{self.high}")


REALISTIC = Fragmenting(1, 8)
"""What models send: a token or a few per delta."""
COARSE = Fragmenting(32, 48)


@dataclass(frozen=True, slots=True)
class Cut:
    """The connection drops inside the frame carrying call ``item``'s fragment that starts at
    character ``at`` of its arguments; everything before that frame was received."""

    item: int
    at: int


@dataclass(frozen=True, slots=True)
class Turn:
    items: tuple[Item, ...]
    stop: Stop = Stop()
    fragmenting: Fragmenting = REALISTIC
    cut: Cut | None = None
    model: str | None = None
    tools: tuple[dict[str, Any], ...] = ()
    """Provider-format tool definitions, echoed where the protocol echoes them."""
    breaks: tuple[tuple[int, int], ...] = ()
    """(item, character offset): extra fragment boundaries, so that a complete turn can carry
    exactly the fragments of a cut one."""


NO_ARGUMENTS: dict[str, str] = {
    # What a call of a tool without parameters carries, per protocol: Anthropic streams one
    # empty partial_json, Gemini sends no args at all; OpenAI sends "{}".
    "openai-responses": "{}", "openai-chat": "{}", "anthropic": "",
    "gemini-interactions": "", "gemini-generate": "",
}

MODELS: dict[str, str] = {
    "openai-responses": "gpt-5-2025-08-07", "openai-chat": "gpt-4o-2024-08-06",
    "anthropic": "claude-sonnet-4-20250514", "gemini-interactions": "gemini-2.5-flash",
    "gemini-generate": "gemini-2.5-flash",
}

# -- the wire ----------------------------------------------------------------------------------


@dataclass
class Encoded:
    """A whole stream: its bytes, where each SSE frame ends, and the frames of marked fragments."""

    protocol: str
    data: bytes
    frame_ends: list[int]
    marks: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    """(item, character offset) -> (start, end) byte span of the frame carrying that fragment."""
    eol: bytes = b"\n"


class _Wire:
    def __init__(self, eol: bytes) -> None:
        self.eol = eol
        self.parts: list[bytes] = []
        self.size = 0
        self.frame_ends: list[int] = []
        self.marks: dict[tuple[int, int], tuple[int, int]] = {}
        self._heads: dict[str | None, bytes] = {}
        self._tail = eol + eol

    def frame(self, event: str | None, payload: Any) -> None:
        data = payload if isinstance(payload, bytes) else orjson.dumps(payload)
        head = self._heads.get(event)
        if head is None:
            eol = self.eol
            head = self._heads[event] = (b"event: " + event.encode() + eol if event else b"") + b"data: "
        block = head + data + self._tail
        self.parts.append(block)
        self.size += len(block)
        self.frame_ends.append(self.size)


_ALNUM = string.ascii_letters + string.digits
_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_LOWER = string.ascii_lowercase + string.digits


def _token(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choices(alphabet, k=n))


class _Ctx:
    """What every encoder shares: the turn, the generator, the wire and the fragmenter."""

    def __init__(self, protocol: str, turn: Turn, rng: random.Random, wire: _Wire) -> None:
        self.turn, self.rng, self.w = turn, rng, wire
        self.model = turn.model or MODELS[protocol]
        self.breaks: dict[int, list[int]] = {}
        wanted = [*turn.breaks, *([(turn.cut.item, turn.cut.at)] if turn.cut else [])]
        for item, at in wanted:
            self.breaks.setdefault(item, []).append(at)
        self.calls = [i for i, item in enumerate(turn.items) if isinstance(item, ToolCall)]
        chars = sum(len(x.text if isinstance(x, Text) else x.arguments) for x in turn.items)
        self.output_tokens = max(1, chars // 4)
        self.input_tokens = rng.randint(80, 600)
        self.created = 1767000000 + rng.randint(0, 10_000_000)
        self._noise = _token(rng, _ALNUM, 4096)

    def obfuscation(self, delta: str) -> str:
        # Real captures pad every delta so that delta + padding is 16 characters; longer
        # deltas (coarse fragments) are padded to the next multiple of 16, an assumption.
        # Random padding is sliced from one pre-drawn string: drawing per character would
        # dominate the cost of multi-megabyte streams.
        at = int(self.rng.random() * 4000)
        return self._noise[at:at + 16 - len(delta) % 16]

    def pieces(self, i: int, text: str) -> Iterator[str]:
        """Fragments of ``text`` (item ``i``); marks the frames of the requested boundaries."""
        rand, w, n = self.rng.random, self.w, len(text)
        low, span = self.turn.fragmenting.low, self.turn.fragmenting.high - self.turn.fragmenting.low + 1
        forced = self.breaks.get(i)
        pos = 0
        if not forced:
            while pos < n:
                end = pos + low + int(rand() * span)
                yield text[pos:end]
                pos = end
            return
        marks, stops, j = set(forced), [*sorted(forced), n], 0
        while pos < n:
            while stops[j] <= pos:
                j += 1
            end = min(stops[j], pos + low + int(rand() * span))  # requested boundaries hold
            before = w.size
            yield text[pos:end]
            if pos in marks:
                w.marks[(i, pos)] = (before, w.size)
            pos = end

    def mark_whole(self, i: int, before: int) -> None:
        """Protocols that send a call in one frame: every requested boundary is that frame."""
        for at in self.breaks.get(i, []):
            self.w.marks[(i, at)] = (before, self.w.size)


# -- OpenAI Responses (PROTOCOLS.md §1) --------------------------------------------------------

def _responses(c: _Ctx) -> None:
    rng, turn, seq = c.rng, c.turn, [0]

    def send(kind: str, **fields: Any) -> None:
        c.w.frame(kind, {"type": kind, "sequence_number": seq[0], **fields})
        seq[0] += 1

    response: dict[str, Any] = {
        "id": "resp_" + _token(rng, "0123456789abcdef", 50), "object": "response",
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
    suffix = _token(rng, "0123456789abcdef", 40)
    output: list[dict[str, Any]] = []
    for i, item in enumerate(turn.items):
        if isinstance(item, Text) and item.channel == "reasoning":
            iid, text = f"rs_{i:02x}{_token(rng, '0123456789abcdef', 6)}{suffix}", item.text
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
            iid, text = f"msg_{i:02x}{_token(rng, '0123456789abcdef', 6)}{suffix}", item.text
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
            iid = f"fc_{i:02x}{_token(rng, '0123456789abcdef', 6)}{suffix}"
            call = {"id": iid, "type": "function_call", "status": "in_progress", "arguments": "",
                    "call_id": "call_" + _token(rng, _ALNUM, 24), "name": item.name}
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

def _chat(c: _Ctx) -> None:
    rng, turn = c.rng, c.turn
    base = {"id": "chatcmpl-" + _token(rng, _ALNUM, 29), "object": "chat.completion.chunk",
            "created": c.created, "model": c.model,
            "system_fingerprint": "fp_" + _token(rng, "0123456789abcdef", 10)}

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
        chunk({"tool_calls": [{"index": k, "id": "call_" + _token(rng, _ALNUM, 24),
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


def _anthropic(c: _Ctx) -> None:
    rng, turn, w = c.rng, c.turn, c.w

    def send(kind: str, **fields: Any) -> None:
        w.frame(kind, {"type": kind, **fields})

    send("message_start", message={
        "id": "msg_01" + _token(rng, _B58, 22), "type": "message", "role": "assistant",
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
                    "type": "signature_delta", "signature": _token(rng, _ALNUM, 88)})
            send("content_block_stop", index=i)
            continue
        send("content_block_start", index=i, content_block={
            "type": "tool_use", "id": "toolu_01" + _token(rng, _B58, 22), "name": item.name,
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

def _interactions(c: _Ctx) -> None:
    rng, turn, w = c.rng, c.turn, c.w

    def send(kind: str, **fields: Any) -> None:
        w.frame(kind, {**fields, "event_type": kind})

    iid = "v1_" + _token(rng, _ALNUM, 64)
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
                send("step.delta", index=i, delta={"signature": _token(rng, _ALNUM, 48),
                                                   "type": "thought_signature"})
            send("step.stop", index=i)
            continue
        send("step.start", index=i, step={"id": _token(rng, _LOWER, 8), "signature": "",
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
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _generate(c: _Ctx) -> None:
    rng, turn, w = c.rng, c.turn, c.w
    rid = _token(rng, _ALNUM, 23)
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


ENCODERS: dict[str, tuple[Callable[[_Ctx], None], bytes]] = {
    "openai-responses": (_responses, b"\n"),
    "openai-chat": (_chat, b"\n"),
    "anthropic": (_anthropic, b"\n"),
    "gemini-interactions": (_interactions, b"\n"),
    "gemini-generate": (_generate, b"\r\n"),  # Google frames end in CRLF CRLF (§0)
}
PROTOCOLS = tuple(ENCODERS)


def encode_turn(protocol: str, turn: Turn, rng: random.Random) -> Encoded:
    """The whole stream for ``turn`` as ``protocol`` sends it (``turn.cut`` is only marked)."""
    encoder, eol = ENCODERS[protocol]
    wire = _Wire(eol)
    encoder(_Ctx(protocol, turn, rng, wire))
    return Encoded(protocol, b"".join(wire.parts), wire.frame_ends, wire.marks, eol)


def cut_offset(encoded: Encoded, cut: Cut, rng: random.Random) -> int:
    """A byte offset inside the ``data:`` line of the frame that carries the cut fragment, so
    that frame never completes (no line end, no blank line): everything before it arrived."""
    span = encoded.marks.get((cut.item, cut.at))
    if span is None:
        raise ValueError(f"no frame carries item {cut.item}'s fragment at {cut.at} "
                         "(not a call with text there, or never sent by this protocol)")
    start, end = span
    data_at = encoded.data.index(b"data: ", start, end) + len(b"data: ")
    return rng.randint(data_at + 1, end - 2 * len(encoded.eol))


def encode(protocol: str, turn: Turn, rng: random.Random) -> bytes:
    """The bytes a client receives: the whole stream, or up to the cut when ``turn.cut``."""
    encoded = encode_turn(protocol, turn, rng)
    if turn.cut is None:
        return encoded.data
    return encoded.data[:cut_offset(encoded, turn.cut, rng)]


@dataclass(frozen=True, slots=True)
class Stream:
    """Bytes as received: the chunks with their arrival times, and how the stream ended."""

    data: bytes
    chunks: list[tuple[float, bytes]]
    end: str
    """``clean`` (the server closed after its last event) or ``reset`` (cut mid-stream)."""
    end_t: float


def synthesize(protocol: str, turn: Turn, rng: random.Random, *, max_chunk: int = 384,
               inside_chars: float = 0.0) -> Stream:
    """Encode ``turn`` and deliver it as network reads (see :func:`network_chunks`)."""
    encoded = encode_turn(protocol, turn, rng)
    data = encoded.data
    if turn.cut is not None:
        data = data[:cut_offset(encoded, turn.cut, rng)]
    chunks = network_chunks(data, rng, frame_ends=encoded.frame_ends, max_chunk=max_chunk,
                            inside_chars=inside_chars)
    last = chunks[-1][0] if chunks else 0.0
    end_t = round(last + rng.uniform(0.0005, 0.004), 6)
    return Stream(data, chunks, "reset" if turn.cut is not None else "clean", end_t)


# -- the network -------------------------------------------------------------------------------

_LEAD = re.compile(rb"[\xc2-\xf4]")
"""A UTF-8 lead byte of a multi-byte character."""


def network_chunks(data: bytes, rng: random.Random, *, frame_ends: list[int] | None = None,
                   max_chunk: int = 384, inside_chars: float = 0.0,
                   first_byte: tuple[float, float] = (0.25, 0.9)) -> list[tuple[float, bytes]]:
    """Split ``data`` into reads of random sizes (1..``max_chunk``, log-uniform, blind to
    frames, lines and characters), each with the time (seconds) its last byte arrived.

    Timing: the first frame is produced after a time-to-first-byte in ``first_byte``, each next
    frame 2-60 ms later (a model producing tokens); a read arrives when its last byte has been
    produced, plus a little jitter. ``inside_chars`` is the probability that a multi-byte UTF-8
    character gets a read boundary inside it (the decoder must hold its first bytes back).
    """
    n = len(data)
    if not n:
        return []
    forced: list[int] = []
    if inside_chars > 0:
        for m in _LEAD.finditer(data):
            i, lead = m.start(), data[m.start()]
            length = 2 + (lead >= 0xE0) + (lead >= 0xF0)
            if i + length <= n and rng.random() < inside_chars:
                forced.append(i + rng.randint(1, length - 1))  # strictly inside the character
    forced.append(n)
    ends = frame_ends or [n]
    rand, uniform = rng.random, rng.uniform
    produced: list[float] = []
    t = uniform(*first_byte)
    for _ in ends:
        produced.append(t)
        t += uniform(0.002, 0.06) if rand() < 0.9 else uniform(0.06, 0.25)
    chunks: list[tuple[float, bytes]] = []
    start, last, k, f, last_frame = 0, 0.0, 0, 0, len(ends) - 1
    while start < n:
        # Log-uniform sizes: mostly tens to hundreds of bytes, now and then a sliver.
        size = int(16 * (max_chunk / 16) ** rand()) if rand() < 0.85 else 1 + int(rand() * 16)
        end = min(forced[f], start + max(1, min(size, max_chunk)))
        if end == forced[f]:
            f += 1
        while k < last_frame and ends[k] < end:
            k += 1  # the frame holding the read's last byte
        last = max(last, round(produced[k] + rand() * 0.003, 6))
        chunks.append((last, data[start:end]))
        start = end
    return chunks


# -- realistic arguments -----------------------------------------------------------------------

_WORDS = (
    "the", "stream", "parser", "buffer", "event", "delta", "call", "tool", "harness", "gate",
    "json", "schema", "frame", "chunk", "turn", "value", "résumé", "café", "naïve", "Ærøskøbing",
    "über", "señal", "日本語", "締め切り", "数据", "流式", "🚀", "✅", "🎯", "📦", "Ωmega", "Ελλάδα",
    "\"quoted\"", "back\\slash", "tab\there", "path/to/file.py", "C:\\Users\\demo", "<b>",
    "x = 1;", "{not: json}", "[1, 2]", "if (a && b)", "100%", "e=mc²", "→", "…",
)


def _words(rng: random.Random, chars: int) -> str:
    """About ``chars`` characters of prose with newlines, escapes and non-ASCII."""
    out: list[str] = []
    total = 0
    while total < chars:
        batch = rng.choices(_WORDS, k=max(8, (chars - total) // 6))
        for w in batch:
            out.append(w)
            out.append("\n" if rng.random() < 0.08 else " ")
            total += len(w) + 1
            if total >= chars:
                break
    return "".join(out)[:chars]


def realistic_arguments(size: int, rng: random.Random) -> str:
    """A JSON object of about ``size`` UTF-8 bytes, as a model writes tool arguments: nested
    objects and arrays, numbers, booleans, null, long strings with escapes (``\\n``, ``\\"``,
    ``\\\\``, ``\\t``, ``\\u00e9``) and raw non-ASCII. Always valid JSON."""
    head: dict[str, Any] = {
        "path": f"src/{_token(rng, string.ascii_lowercase, 6)}/módulo_{rng.randint(1, 99)}.py",
        "dry_run": rng.random() < 0.5, "line": rng.randint(1, 5000), "ratio": round(rng.random(), 4),
        "owner": None, "tags": rng.sample(["draft", "ü-test", "日本", "🚀", "a\"b"], 3)}
    base = len(orjson.dumps(head))
    budget = max(0, size - base - 64)
    edits: list[dict[str, Any]] = []
    spent = 0
    while spent < budget * 0.3 and budget > 400:
        old = _words(rng, rng.randint(20, 160))
        edit = {"line": rng.randint(1, 5000), "old": old, "new": old.upper()[:80], "ok": True}
        edits.append(edit)
        spent += len(orjson.dumps(edit))
    head["edits"] = edits
    # Bytes per character of the prose is about 1.15 (non-ASCII words and escapes).
    content = _words(rng, max(0, int((budget - spent) / 1.15)))
    body = orjson.dumps(head)[:-1] + b',"content":' + orjson.dumps(content)
    # One member written with \u escapes, as some models do, so readers meet both spellings.
    note = '"note":"caf\\u00e9 \\u2713 \\ud83d\\ude80"'
    return (body + b"," + note.encode() + b"}").decode()
