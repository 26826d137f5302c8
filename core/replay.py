"""Headless replay: re-chunk recorded bytes, run them through the engine, yield steps.

Chunking modes (the ``--chunking`` flag): ``recorded`` (the chunks as the network delivered
them), ``whole`` (one chunk), ``bytes:N`` (N bytes each) and ``random:SEED`` (sizes drawn from a
seeded generator, so a failing chunking can be replayed exactly). ``cut_at`` ends the stream
after that many bytes, as if the connection dropped there. Re-chunking streams: it never holds
more than one chunk of the input at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from msgspec import Struct

from .ending import EndingWatch
from .engine import Engine, FrameStep, Step
from .errors import CallscopeError
from .tools import ToolSet

if TYPE_CHECKING:
    from random import Random

TimedBytes = tuple[float | None, bytes]

RANDOM_MAX_CHUNK = 64


class ChunkingError(CallscopeError):
    pass


class Chunking(Struct, frozen=True):
    """How a replay splits the recorded bytes (the ``--chunking`` flag)."""

    mode: str
    size: int = 0
    seed: int = 0

    @classmethod
    def parse(cls, text: str) -> Chunking:
        name, _, arg = text.partition(":")
        if name in ("recorded", "whole") and not arg:
            return cls(name)
        if name in ("bytes", "random") and arg.isascii() and arg.isdigit():
            value = int(arg)
            if name == "bytes" and value < 1:
                raise ChunkingError("bytes:N needs N >= 1")
            return cls(name, size=value) if name == "bytes" else cls(name, seed=value)
        raise ChunkingError(
            f"unknown chunking {text!r} (recorded, whole, bytes:N or random:SEED)")

    def __str__(self) -> str:
        return {"bytes": f"bytes:{self.size}", "random": f"random:{self.seed}"}.get(
            self.mode, self.mode)


RECORDED = Chunking("recorded")
"""The recorded chunks as they arrived: the default of every replay."""


def _cut(chunks: Iterable[TimedBytes], cut_at: int | None) -> Iterator[TimedBytes]:
    if cut_at is None:
        yield from chunks
        return
    left = cut_at
    for t, data in chunks:
        if left <= 0:
            return
        yield t, data[:left]
        left -= len(data)


def rechunk(chunks: Iterable[TimedBytes], chunking: Chunking,
            cut_at: int | None = None) -> Iterator[TimedBytes]:
    """The same bytes, split another way (each piece keeps the arrival time of its first byte).
    The recorded chunks, uncut, are the input's own iterator: no generator layer per read."""
    if chunking.mode == "recorded":
        return iter(chunks) if cut_at is None else _cut(chunks, cut_at)
    return _rechunked(_cut(chunks, cut_at), chunking)


def _rechunked(source: Iterator[TimedBytes], chunking: Chunking) -> Iterator[TimedBytes]:
    if chunking.mode == "whole":
        parts, first_t = [], None
        for t, data in source:
            first_t = t if first_t is None else first_t
            parts.append(data)
        yield first_t, b"".join(parts)
        return
    if chunking.mode == "bytes":
        yield from _fixed_size(source, chunking.size)
        return
    from random import Random  # (here: only random chunkings draw sizes; 1 ms of start-up)

    rng = Random(chunking.seed)

    def size() -> int:
        return chunking.size if chunking.mode == "bytes" else rng.randint(1, RANDOM_MAX_CHUNK)

    pending, pending_t, want = bytearray(), None, size()
    for t, data in source:
        if not pending:
            pending_t = t
        pending += data
        while len(pending) >= want:
            yield pending_t, bytes(pending[:want])
            del pending[:want]
            pending_t, want = t, size()
    if pending:
        yield pending_t, bytes(pending)


def reads(chunks: Iterable[TimedBytes], chunking: Chunking,
          cut_at: int | None = None) -> Iterator[bytes]:
    """The pieces of :func:`rechunk` without their arrival times, for replays that want only
    the outcome. ``bytes:N`` and ``random:SEED`` slice the joined bytes directly, drawing the
    same sizes: ``check`` replays every session one byte per read and three random ways, and
    the timed generators cost two to three times the slicing there."""
    if chunking.mode not in ("bytes", "random"):
        return (data for _, data in rechunk(chunks, chunking, cut_at))
    data = b"".join(piece for _, piece in _cut(chunks, cut_at))
    if chunking.mode == "bytes":
        size = chunking.size
        return (data[i:i + size] for i in range(0, len(data), size))
    from random import Random

    return _random_slices(data, Random(chunking.seed))


def _random_slices(data: bytes, rng: Random) -> Iterator[bytes]:
    start = 0
    while start < len(data):
        end = start + rng.randint(1, RANDOM_MAX_CHUNK)
        yield data[start:end]
        start = end


def _fixed_size(source: Iterable[TimedBytes], size: int) -> Iterator[TimedBytes]:
    """``bytes:N``: one slice per piece (``bytes:1`` of a session is a piece per byte)."""
    pending, pending_t = b"", None
    for t, data in source:
        if not pending:
            pending_t = t
        buf = pending + data if pending else data
        whole = len(buf) - len(buf) % size
        if whole:
            yield pending_t, buf[:size]
            for i in range(size, whole, size):
                yield t, buf[i:i + size]
        pending = buf[whole:]
        if whole and pending:
            pending_t = t
    if pending:
        yield pending_t, pending


def replay_outcome(chunks: Iterable[TimedBytes], engine: Engine, watch: EndingWatch, *,
                   chunking: Chunking = RECORDED, cut_at: int | None = None) -> None:
    """:func:`replay` for callers that read only the outcome (``replay --summary``): each
    read is pushed (:meth:`.Engine.push`, no steps) and the watch is told what the steps would
    have told it: the bytes received, the last arrival time, the last frame. The engine keeps
    only the outcome from here on (:attr:`.TurnState.outcome_only`: fragment counts, not
    fragments; decisions without parsed arguments)."""
    engine.state.outcome_only = True
    push = engine.push
    last_t: float | None = None
    for t, data in rechunk(chunks, chunking, cut_at):
        push(data)
        if t is not None:
            last_t = t
    if engine.chunks:
        watch.chunk(engine.decoder.bytes_received, last_t)
    last = engine.last_frame
    for step in engine.close():
        if isinstance(step, FrameStep):
            last = step.frame
    if last is not None:
        watch.frame(last)


def replay(chunks: Iterable[TimedBytes], *, protocol: str | None = None,
           tools: ToolSet | None = None, chunking: Chunking = RECORDED,
           cut_at: int | None = None, engine: Engine | None = None) -> Iterator[Step]:
    """Run recorded chunks through a fresh engine (or the one given); yield every step."""
    engine = engine or Engine(protocol, tools)
    for t, data in rechunk(chunks, chunking, cut_at):
        for steps in engine.feed_lazily(data, t):  # a huge read yields its first steps early
            yield from steps
    yield from engine.close()
