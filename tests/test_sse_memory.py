"""What the SSE decoder lets go of: a big block is decoded line by line (the same frames as one
decode), a big read's buffer is emptied while its blocks are cut from a copy, and the starts of
chunks before the pending block are dropped (the same frames and chunk numbers)."""

from __future__ import annotations

import random

import pytest
from callscope.core import sse_fast as sse
from callscope.core.sse import SSEDecoder


def _stream(rng: random.Random) -> bytes:
    words = ["x", "ü", "🎯", "日本", "\\n", '\\"', "\xff", "\xe2\x82", "a" * 40]
    blocks = []
    for _ in range(rng.randint(1, 12)):
        body = "".join(rng.choice(words) for _ in range(rng.randint(0, 400)))
        raw = body.encode("utf-8", "surrogateescape") if "\xff" not in body else \
            body.replace("\xff", "").encode() + b"\xff\xe2\x82"
        shape = rng.randrange(5)
        if shape == 0:
            blocks.append(b"data: " + raw)
        elif shape == 1:
            blocks.append(b"event: e" + raw[:3] + b"\ndata: " + raw)
        elif shape == 2:
            blocks.append(b"event: e\ndata: " + raw + b"\ndata: more")
        elif shape == 3:
            blocks.append(b": comment " + raw + b"\ndata: x")
        else:
            blocks.append(b"id: 7\ndata: " + raw)
    return b"\n\n".join(blocks) + b"\n\n"


def _frames(data: bytes, size: int) -> tuple[list, int]:
    decoder = SSEDecoder()
    frames = []
    for at in range(0, len(data), size):
        frames += decoder.feed(data[at:at + size])
    frames += decoder.close()
    return frames, len(decoder._chunk_starts)


@pytest.mark.parametrize("seed", range(40))
def test_big_blocks_and_dropped_chunk_starts_give_the_same_frames(monkeypatch, seed):
    rng = random.Random(seed)
    data = _stream(rng)
    size = rng.choice([1, 3, 17, 4000])
    monkeypatch.setattr(sse, "_BIG", 1 << 40)
    monkeypatch.setattr(sse, "_KEEP_STARTS", 1 << 40)
    expected, kept = _frames(data, size)
    monkeypatch.setattr(sse, "_BIG", rng.choice([0, 5, 100]))
    monkeypatch.setattr(sse, "_KEEP_STARTS", rng.choice([0, 2, 50]))
    monkeypatch.setattr(sse, "_KEEP", rng.choice([0, 30, 1 << 16]))  # (a big read's buffer)
    got, dropped = _frames(data, size)
    assert got == expected
    if size < 17 and len(expected) > 2:
        assert dropped < kept
