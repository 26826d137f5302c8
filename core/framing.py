"""The framing stage: bytes in, :class:`~.frame.Frame` records out, one implementation per wire
framing (Server-Sent Events, the AWS event stream, NDJSON), each sans-IO and incremental over
arbitrary reads.

The engine and the cut sweeps never name a framing's class: they ask :func:`new_decoder` for the
framing a protocol's spec declares (``ProtocolSpec.framing``), so a protocol that is not SSE
brings its framing as one more entry in :data:`FRAMINGS`, and everything after framing (the
pipeline, the gate, the timeline) is unchanged. When no protocol is given, the framing is
told from the stream's first byte (:func:`sniff`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from .errors import DecoderClosed
from .frame import Frame
from .limits import DEFAULT_LIMITS
from .ndjson import NDJSONDecoder
from .providers import SPECS
from .sse import SSEDecoder


class Decoder(Protocol):
    """What the engine needs of a framing: the contract :class:`~.sse.SSEDecoder` defines.

    Frames come out in stream order with their byte offsets and chunk indexes, identical
    whatever the chunking (the property tests check it per framing); ``close`` flushes an
    unterminated tail as a frame with ``terminated=False`` (a cut inside a frame is a cut)."""

    @property
    def bytes_received(self) -> int: ...

    @property
    def frames_emitted(self) -> int: ...

    @property
    def pending(self) -> int:
        """Bytes received that belong to no completed frame yet."""
        ...

    def feed(self, chunk: bytes) -> list[Frame]:
        """One network read: the frames it completed."""
        ...

    def feed_more(self, piece: bytes) -> list[Frame]:
        """The next piece of the same read (a large read framed a piece at a time)."""
        ...

    def close(self) -> list[Frame]:
        """End of stream: the frames still pending."""
        ...


def _eventstream_decoder(max_block_bytes: int) -> Decoder:
    from .aws_eventstream import EventStreamDecoder  # (only Bedrock's binary framing loads it)

    return EventStreamDecoder(max_block_bytes)


FRAMINGS: dict[str, Callable[[int], Decoder]] = {
    "sse": SSEDecoder,
    "aws-eventstream": _eventstream_decoder,
    "ndjson": NDJSONDecoder,
}
"""Framing name -> a decoder factory taking the block size limit (:mod:`.limits`)."""

DEFAULT_FRAMING = "sse"
SNIFF = "sniff"
"""Not a framing: "tell it from the first byte" (:class:`SniffingDecoder`)."""


def sniff(first: bytes) -> str:
    """The framing a stream's first byte says. An AWS event-stream message starts with its
    total length, big-endian, so with a zero byte below 16 MiB; an NDJSON stream starts with a
    JSON object; SSE never starts with either (a line is a field, a comment or blank)."""
    if first[:1] == b"\x00":
        return "aws-eventstream"
    if first[:1] == b"{":
        return "ndjson"
    return DEFAULT_FRAMING


class SniffingDecoder:
    """A decoder that waits for the first byte, then frames as :func:`sniff` says: it holds
    the reads before it (empty ones) and feeds them on, so chunk numbers stay as they came."""

    def __init__(self, max_block_bytes: int = DEFAULT_LIMITS.max_block_bytes) -> None:
        self._max_block = max_block_bytes
        self._inner: Decoder | None = None
        self._held = 0  # empty reads before the first byte
        self._closed = False
        self.framing: str | None = None
        """The framing chosen, once a byte has come."""

    @property
    def inner(self) -> Decoder | None:
        """The decoder of the framing chosen (None before the first byte): fed directly, it
        frames as this one would (the engine's hot path feeds an SSE one so)."""
        return self._inner

    @property
    def bytes_received(self) -> int:
        return self._inner.bytes_received if self._inner is not None else 0

    @property
    def frames_emitted(self) -> int:
        return self._inner.frames_emitted if self._inner is not None else 0

    @property
    def pending(self) -> int:
        return self._inner.pending if self._inner is not None else 0

    def feed(self, chunk: bytes) -> list[Frame]:
        if self._inner is not None:
            return self._inner.feed(chunk)
        if self._closed:
            raise DecoderClosed("feed() after close()")
        if not chunk:
            self._held += 1
            return []
        inner = self._choose(chunk)
        return inner.feed(chunk)

    def feed_more(self, piece: bytes) -> list[Frame]:
        if self._inner is not None:
            return self._inner.feed_more(piece)
        if self._closed:
            raise DecoderClosed("feed_more() after close()")
        if not piece:
            return []
        self._held -= 1  # the piece belongs to the empty read fed last
        return self._choose(piece).feed(piece)

    def close(self) -> list[Frame]:
        if self._inner is None:
            if self._closed:
                return []
            self._choose(b"")
        assert self._inner is not None
        self._closed = True
        return self._inner.close()

    def _choose(self, first: bytes) -> Decoder:
        self.framing = sniff(first)
        inner = self._inner = FRAMINGS[self.framing](self._max_block)
        for _ in range(self._held):
            inner.feed(b"")
        # From here on, reads go straight to the chosen decoder (check replays a byte a read).
        self.feed = inner.feed  # type: ignore[method-assign]
        self.feed_more = inner.feed_more  # type: ignore[method-assign]
        return inner


DISPATCHED_AT_CR: dict[str, bool] = {"sse": True, "aws-eventstream": False, "ndjson": False}
"""Whether a frame ending in CR LF is dispatched by a cut between the two. SSE: a trailing CR
ends a line at close, so the blank line is whole. NDJSON reads no line without its LF, and an
event-stream message is whole only with its last byte (its CRC may end in 0x0D 0x0A by chance)."""


def stream_framing(framing: str, data: bytes) -> str:
    """The framing a whole stream is decoded in: ``framing``, or the one its first byte says."""
    return sniff(data[:1]) if framing == SNIFF else framing


def framing_of(protocol: str | None) -> str:
    """The framing a protocol's spec declares; for an unknown or undetected protocol, the
    framing the stream's first byte says (then detection reads frames as they come)."""
    spec = SPECS.get(protocol) if protocol is not None else None
    return spec.framing if spec is not None else SNIFF


def new_decoder(framing: str = DEFAULT_FRAMING,
                max_block_bytes: int = DEFAULT_LIMITS.max_block_bytes) -> Decoder:
    """A fresh decoder for one stream."""
    if framing == SNIFF:
        return SniffingDecoder(max_block_bytes)
    return FRAMINGS[framing](max_block_bytes)


def decode_all(data: bytes, framing: str = DEFAULT_FRAMING,
               max_block_bytes: int = DEFAULT_LIMITS.max_block_bytes) -> list[Frame]:
    """Every frame of a whole stream (as one read), the unterminated tail included."""
    decoder = new_decoder(framing, max_block_bytes)
    return decoder.feed(data) + decoder.close()
