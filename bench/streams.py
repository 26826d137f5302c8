"""The benchmark streams: realistic provider streams built with ``core/synth.py``.

A :class:`Spec` names a stream (protocol, total argument size, parallel calls, fragment sizes,
or a target number of SSE events); :func:`build` makes it once and every peer reads the same
bytes, delivered as the same network reads. What synth lacks and the benchmarks need lives
here: sizing a session by its event count, and the tool definitions per protocol (the OpenAI
Chat one is ``strict`` so the SDK re-parses the arguments on every chunk, as it does for users
of strict tools).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from callscope.core import synth

TOOL_NAME = "edit_file"

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string"}, "content": {"type": "string"}, "dry_run": {"type": "boolean"},
        "line": {"type": "integer"}, "edits": {"type": "array", "items": {"type": "object"}},
    },
    "required": ["path", "content"],
}

FRAGMENTINGS: dict[str, synth.Fragmenting] = {"1-8": synth.REALISTIC, "32-48": synth.COARSE}
MEAN_FRAGMENT = {"1-8": 4.5, "32-48": 40.0}


def tool_definitions(protocol: str) -> list[dict[str, Any]]:
    """The tool as each protocol's request declares it."""
    if protocol == "openai-chat":
        return [{"type": "function", "function": {
            "name": TOOL_NAME, "description": "Edit a file", "parameters": SCHEMA, "strict": True}}]
    if protocol == "anthropic":
        return [{"name": TOOL_NAME, "description": "Edit a file", "input_schema": SCHEMA}]
    if protocol == "gemini-generate":
        return [{"functionDeclarations": [{"name": TOOL_NAME, "parameters": SCHEMA}]}]
    return [{"type": "function", "name": TOOL_NAME, "description": "Edit a file",
             "parameters": SCHEMA, "strict": False}]


@dataclass(frozen=True, slots=True)
class Spec:
    protocol: str
    size: int = 0
    """Total argument size in UTF-8 bytes, over all calls."""
    calls: int = 1
    fragments: str = "1-8"
    events: int = 0
    """When set: size the arguments so the stream has about this many SSE events."""

    @property
    def label(self) -> str:
        what = f"{self.events:.0e} events".replace("e+0", "e") if self.events else human(self.size)
        calls = "1 call" if self.calls == 1 else f"{self.calls} calls"
        return f"{self.protocol}, {what}, {calls}, fragments {self.fragments}"


@dataclass(frozen=True, slots=True)
class BenchStream:
    spec: Spec
    data: bytes
    chunks: list[bytes]
    """The network reads every chunked peer is fed (synth.network_chunks)."""
    times: list[float]
    arguments: list[str]
    """Each call's argument text, in call order: what every accumulator must rebuild."""
    tools: list[dict[str, Any]]
    events: int
    """SSE events (frames) in the stream."""
    eol: bytes

    @property
    def protocol(self) -> str:
        return self.spec.protocol

    @property
    def argument_bytes(self) -> int:
        return sum(len(a.encode()) for a in self.arguments)


def human(n: float) -> str:
    for unit, scale in (("MB", 1_000_000), ("KB", 1_000)):
        if n >= scale:
            value = n / scale
            return f"{value:.0f} {unit}" if value >= 10 or value == int(value) else f"{value:.1f} {unit}"
    return f"{n:.0f} B"


@lru_cache(maxsize=1)
def _bytes_per_char() -> float:
    sample = synth.realistic_arguments(50_000, random.Random(0))
    return len(sample.encode()) / len(sample)


def _size_for_events(spec: Spec) -> int:
    # Nearly every event of a big tool-call stream carries one fragment.
    return int(spec.events * MEAN_FRAGMENT[spec.fragments] * _bytes_per_char())


def build(spec: Spec, seed: int = 1) -> BenchStream:
    rng = random.Random(seed)
    size = _size_for_events(spec) if spec.events else spec.size
    per_call = max(64, size // spec.calls)
    arguments = [synth.realistic_arguments(per_call, rng) for _ in range(spec.calls)]
    tools = tool_definitions(spec.protocol)
    turn = synth.Turn(items=tuple(synth.ToolCall(TOOL_NAME, a) for a in arguments),
                      fragmenting=FRAGMENTINGS[spec.fragments], tools=tuple(tools))
    encoded = synth.encode_turn(spec.protocol, turn, rng)
    reads = synth.network_chunks(encoded.data, rng, frame_ends=encoded.frame_ends)
    return BenchStream(spec, encoded.data, [c for _, c in reads], [t for t, _ in reads], arguments,
                       tools, len(encoded.frame_ends), encoded.eol)


def session_stream(target_bytes: int, seed: int = 7) -> BenchStream:
    """A long OpenAI Responses turn (8 parallel calls) whose wire size is about ``target_bytes``."""
    probe = build(Spec("openai-responses", 80_000, calls=8), seed)
    ratio = len(probe.data) / probe.argument_bytes
    return build(Spec("openai-responses", int(target_bytes / ratio), calls=8), seed)


def small_session(target_bytes: int = 20_000, seed: int = 3) -> BenchStream:
    """A short turn of about ``target_bytes`` on the wire: the size of a typical recorded session."""
    size = 200
    while True:
        stream = build(Spec("openai-responses", size), seed)
        if len(stream.data) >= target_bytes:
            return stream
        size = int(size * max(1.05, target_bytes / len(stream.data)))
