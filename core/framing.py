"""The framing stage: bytes in, :class:`~.frame.Frame` records out, one implementation per wire
framing (Server-Sent Events today), each sans-IO and incremental over arbitrary reads.

The engine and the cut sweeps never name a framing's class: they ask :func:`new_decoder` for the
framing a protocol's spec declares (``ProtocolSpec.framing``), so a protocol that is not SSE
brings its framing as one more entry in :data:`FRAMINGS`, and everything after framing (the
pipeline, the gate, the timeline) is unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from .frame import Frame
from .limits import DEFAULT_LIMITS
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

    def feed(self, chunk: bytes) -> list[Frame]:
        """One network read: the frames it completed."""
        ...

    def feed_more(self, piece: bytes) -> list[Frame]:
        """The next piece of the same read (a large read framed a piece at a time)."""
        ...

    def close(self) -> list[Frame]:
        """End of stream: the frames still pending."""
        ...


FRAMINGS: dict[str, Callable[[int], Decoder]] = {
    "sse": SSEDecoder,
}
"""Framing name -> a decoder factory taking the block size limit (:mod:`.limits`)."""

DEFAULT_FRAMING = "sse"


def framing_of(protocol: str | None) -> str:
    """The framing a protocol's spec declares; SSE for an unknown or undetected protocol (then
    detection reads frames as they come)."""
    spec = SPECS.get(protocol) if protocol is not None else None
    return spec.framing if spec is not None else DEFAULT_FRAMING


def new_decoder(framing: str = DEFAULT_FRAMING,
                max_block_bytes: int = DEFAULT_LIMITS.max_block_bytes) -> Decoder:
    """A fresh decoder for one stream."""
    return FRAMINGS[framing](max_block_bytes)


def decode_all(data: bytes, framing: str = DEFAULT_FRAMING,
               max_block_bytes: int = DEFAULT_LIMITS.max_block_bytes) -> list[Frame]:
    """Every frame of a whole stream (as one read), the unterminated tail included."""
    decoder = new_decoder(framing, max_block_bytes)
    return decoder.feed(data) + decoder.close()
