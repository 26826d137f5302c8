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

The turn description is in :mod:`.synth_turn`, the five per-protocol encoders in
:mod:`.synth_wire` (over :mod:`.synth_context`, what they share); this module is the public API
and re-exports what callers use.
"""

from __future__ import annotations

import random
import re
import string
from dataclasses import dataclass, field
from typing import Any

import orjson
from msgspec import Struct

from .synth_context import token
from .synth_turn import (
    COARSE,
    MODELS,
    NO_ARGUMENTS,
    REALISTIC,
    Cut,
    Fragmenting,
    Item,
    Stop,
    Text,
    ToolCall,
    Turn,
)
from .synth_wire import PROTOCOLS, write_turn

__all__ = [
    "COARSE", "MODELS", "NO_ARGUMENTS", "PROTOCOLS", "REALISTIC", "Cut", "Encoded", "Fragmenting",
    "Item", "Stop", "Stream", "Text", "ToolCall", "Turn", "cut_offset", "encode", "encode_turn",
    "network_chunks", "realistic_arguments", "synthesize",
]

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


def encode_turn(protocol: str, turn: Turn, rng: random.Random) -> Encoded:
    """The whole stream for ``turn`` as ``protocol`` sends it (``turn.cut`` is only marked)."""
    wire = write_turn(protocol, turn, rng)
    return Encoded(protocol, b"".join(wire.parts), wire.frame_ends, wire.marks, wire.eol)


def cut_offset(encoded: Encoded, cut: Cut, rng: random.Random) -> int:
    """A byte offset inside the ``data:`` line of the frame that carries the cut fragment (in
    another framing, inside the frame), so that frame never completes (no line end, no blank
    line, not all its bytes): everything before it arrived."""
    span = encoded.marks.get((cut.item, cut.at))
    if span is None:
        raise ValueError(f"no frame carries item {cut.item}'s fragment at {cut.at} "
                         "(not a call with text there, or never sent by this protocol)")
    start, end = span
    if not encoded.eol or encoded.data.find(b"data: ", start, end) < 0:
        # Not SSE (an event-stream message, an NDJSON line): anywhere before its last byte.
        return rng.randint(start + 1, end - 1)
    data_at = encoded.data.index(b"data: ", start, end) + len(b"data: ")
    return rng.randint(data_at + 1, end - 2 * len(encoded.eol))


def encode(protocol: str, turn: Turn, rng: random.Random) -> bytes:
    """The bytes a client receives: the whole stream, or up to the cut when ``turn.cut``."""
    encoded = encode_turn(protocol, turn, rng)
    if turn.cut is None:
        return encoded.data
    return encoded.data[:cut_offset(encoded, turn.cut, rng)]


class Stream(Struct, frozen=True):
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
                at = i + rng.randint(1, length - 1)  # strictly inside the character
                if not forced or at > forced[-1]:  # binary bytes (a CRC) may look like a lead
                    forced.append(at)
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
        "path": f"src/{token(rng, string.ascii_lowercase, 6)}/módulo_{rng.randint(1, 99)}.py",
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
