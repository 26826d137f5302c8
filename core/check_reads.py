"""The reads of ``callscope check``'s chunkings, cut in C where :func:`.replay.reads` cuts them in
Python: the same reads, each its own ``bytes``, fed to the engine one by one.

``bytes:1`` is a one-byte ``bytes`` per byte (``struct``'s ``c`` format); ``random:SEED`` draws
its sizes as :meth:`random.Random.randint` does, from the same generator words, a block of them
at a time. tests/test_check_reads.py holds both equal to :func:`.replay.reads`.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain

from .replay import RANDOM_MAX_CHUNK, Chunking, TimedBytes, reads

_UNPACK_BLOCK = 1 << 16
"""Bytes cut into one-byte reads at a time (a tuple of that many references)."""
_WORDS = 1024
"""Generator words drawn at a time for random sizes."""


def check_reads(chunks: Sequence[TimedBytes], chunking: Chunking,
                cut_at: int | None = None) -> Iterable[bytes]:
    """:func:`.replay.reads`: the same reads, made faster for ``bytes:1`` and ``random``."""
    if chunking.mode == "bytes" and chunking.size == 1:
        return _one_byte_reads(b"".join(piece for _, piece in chunks)[:cut_at])
    if chunking.mode == "random" and _SIZES is not None:
        data = b"".join(piece for _, piece in chunks)[:cut_at]
        return _random_reads(data, random.Random(chunking.seed), *_SIZES)
    return reads(chunks, chunking, cut_at)


def _one_byte_reads(data: bytes) -> Iterator[bytes]:
    unpack = struct.unpack
    return chain.from_iterable(
        unpack(f"{len(block)}c", block)
        for block in (data[at:at + _UNPACK_BLOCK] for at in range(0, len(data), _UNPACK_BLOCK)))


def _size_table(most: int) -> tuple[bytes, bytes] | None:
    """How ``randint(1, most)`` reads the top byte of a generator word: it draws
    ``getrandbits(k)`` (``k`` the bit length of ``most``: the word's top ``k`` bits) until the
    draw is below ``most``, and adds 1. Returns the ``bytes.translate`` table from a top byte to
    its size and the top bytes it rejects; None when a draw does not fit in a byte."""
    k = most.bit_length()
    if not 0 < k <= 8 or most > 255:
        return None
    sizes = bytearray(256)
    rejected = bytearray()
    for top in range(256):
        draw = top >> (8 - k)
        if draw < most:
            sizes[top] = draw + 1
        else:
            rejected.append(top)
    return bytes(sizes), bytes(rejected)


_SIZES = _size_table(RANDOM_MAX_CHUNK)


def _random_reads(data: bytes, rng: random.Random, table: bytes,
                  rejected: bytes) -> Iterator[bytes]:
    """``getrandbits(32 * n)`` holds the next ``n`` words the generator would give ``n`` calls of
    ``getrandbits(k)``, the first in the lowest 32 bits; the top byte of each, little-endian, is
    every fourth byte from the fourth."""
    start, size = 0, len(data)
    while start < size:
        words = rng.getrandbits(32 * _WORDS).to_bytes(4 * _WORDS, "little")
        for step in words[3::4].translate(table, rejected):
            end = start + step
            yield data[start:end]
            start = end
            if start >= size:
                return
