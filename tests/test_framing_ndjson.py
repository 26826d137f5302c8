"""NDJSON framing (Ollama's /api/chat): one frame per line under every chunking, the lines
httpx's line iterator (what the ollama client reads with) gives, a cut last line is a cut,
offsets and chunk numbers are the stream's, and a line past the limit stops framing."""

from __future__ import annotations

import random

from callscope.core.frame import Frame
from callscope.core.framing import decode_all, new_decoder
from callscope.core.ndjson import NDJSONDecoder
from httpx._decoders import LineDecoder
from hypothesis import given, settings
from hypothesis import strategies as st

LINES = ['{"model":"llama3.2","message":{"role":"assistant","content":"Ça va ✅ 数据"},"done":false}'
         .encode(),
         b'{"model":"llama3.2","message":{"role":"assistant","content":"","tool_calls":[{"function":'
         b'{"name":"f","arguments":{"a":1}}}]},"done":false}',
         b'{"model":"llama3.2","message":{"role":"assistant","content":""},"done":true,'
         b'"done_reason":"stop","eval_count":3}']
DATA = b"\n".join(LINES) + b"\n"


def ours(chunks: list[bytes]) -> list[Frame]:
    decoder = NDJSONDecoder()
    frames = [f for chunk in chunks for f in decoder.feed(chunk)]
    return frames + decoder.close()


def httpx_lines(chunks: list[bytes]) -> list[str]:
    decoder, out = LineDecoder(), []
    text = b"".join(chunks).decode()
    for piece in (text[i:i + 7] for i in range(0, len(text), 7)):
        out += decoder.decode(piece)
    return out + decoder.flush()


def unchunked(frames: list[Frame]) -> list[Frame]:
    return [f._replace(first_chunk=0, last_chunk=0) for f in frames]


def test_one_frame_per_line_as_httpx_reads_them() -> None:
    frames = decode_all(DATA, "ndjson")
    assert [f.data for f in frames] == [line.decode() for line in LINES] == httpx_lines([DATA])
    assert all(f.dispatch and f.terminated for f in frames)
    assert [f.end for f in frames] == [DATA.index(b"\n", f.start) + 1 for f in frames]


def test_every_split_point_and_byte_by_byte_give_the_same_frames() -> None:
    whole = decode_all(DATA, "ndjson")
    for at in range(len(DATA) + 1):
        assert unchunked(ours([DATA[:at], DATA[at:]])) == whole, at
    bytewise = ours([DATA[i:i + 1] for i in range(len(DATA))])
    assert unchunked(bytewise) == whole
    assert [(f.first_chunk, f.last_chunk) for f in bytewise] == [(f.start, f.end - 1) for f in whole]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32))
def test_any_chunking_gives_the_same_frames(seed: int) -> None:
    rng = random.Random(seed)
    data = b"".join(rng.choice(LINES) + rng.choice([b"\n", b"\r\n"]) for _ in range(rng.randint(1, 8)))
    cuts = sorted(rng.sample(range(1, len(data)), rng.randint(1, 20)))
    chunks = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
    frames = ours(chunks)
    assert unchunked(frames) == decode_all(data, "ndjson")
    assert [f.data for f in frames] == httpx_lines(chunks)  # CRLF too, as httpx strips it


def test_a_cut_last_line_is_a_cut_even_when_it_parses() -> None:
    for n in range(len(DATA) + 1):
        frames = decode_all(DATA[:n], "ndjson")
        tail = [f for f in frames if not f.terminated]
        assert [f.dispatch for f in frames if f.terminated] == [True] * (len(frames) - len(tail))
        assert len(tail) == (0 if n == 0 or DATA[n - 1:n] == b"\n" else 1)
        assert all(not f.dispatch for f in tail)
    [cut] = decode_all(LINES[2], "ndjson")  # the whole done object, without its LF
    assert not cut.dispatch and not cut.terminated and cut.data == LINES[2].decode()


def test_blank_lines_do_not_dispatch() -> None:
    frames = decode_all(b"\n" + LINES[0] + b"\n\r\n", "ndjson")
    assert [f.dispatch for f in frames] == [False, True, False]


def test_a_line_past_the_limit_stops_framing() -> None:
    decoder = new_decoder("ndjson", 50)
    frames = decoder.feed(LINES[0][:30]) + decoder.feed(LINES[0][30:] + b"\n" + LINES[0] + b"\n")
    frames += decoder.close()
    assert [f.overflow for f in frames] == [True]
    assert frames[0].raw == LINES[0][:50] and not frames[0].dispatch
