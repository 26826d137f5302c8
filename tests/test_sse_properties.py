"""Properties of core/sse.py: chunking independence, agreement with an independent reference
implementation of the WHATWG algorithm, and linear scanning (proved by counting, not timing)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import callscope.core.sse as sse
import pytest
from callscope.core.frame import Frame
from callscope.core.sse import SSEDecoder, decode_all
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

PROPERTY_SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

# SSE-ish building blocks: field names, every line end, colons and spaces, multi-byte UTF-8
# (BOM, NEL, LS, fullwidth digit), truncated and invalid sequences, NUL, VT.
TOKENS = [
    b"data:", b"data: ", b"data", b"event:", b"event: ", b"id:", b"id: ", b"id",
    b"retry:", b"retry: ", b"12", b"7", b"x", b"y", b":", b" ", b"  ",
    b"\r", b"\n", b"\r\n", b"\n\n", b"\r\r", b"\r\n\r\n",
    b"\xef\xbb\xbf", b"\xef\xbb", b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80",
    b"\xc2\x85", b"\xe2\x80\xa8", b"\xef\xbc\x91", b"\x00", b"\x0b", b"\xff", b"\xc3",
    b"\xe2\x82", b"\xed\xa0\x80", b"\x80",
]
any_bytes_streams = st.lists(
    st.one_of(st.sampled_from(TOKENS), st.binary(max_size=3)), max_size=50
).map(b"".join)
# Streams without CR, as providers send them: unless they start with a byte order mark the decoder
# reads these on its fast path (bytes.find of LF LF), so every property must hold there too.
lf_only_streams = st.lists(
    st.one_of(st.sampled_from([t for t in TOKENS if b"\r" not in t]),
              st.binary(max_size=3).map(lambda b: b.replace(b"\r", b"\n"))), max_size=50
).map(b"".join)
streams = st.one_of(any_bytes_streams, lf_only_streams)


def chunked(stream: bytes, cuts: list[int]) -> list[bytes]:
    """Split at the given offsets; repeated offsets make empty chunks."""
    bounds = [0, *sorted(cuts), len(stream)]
    return [stream[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


@st.composite
def stream_and_chunks(draw: st.DrawFn) -> tuple[bytes, list[bytes]]:
    stream = draw(streams)
    cuts = draw(st.lists(st.integers(0, len(stream)), max_size=12))
    return stream, chunked(stream, cuts)


def feed_chunks(chunks: list[bytes]) -> list[Frame]:
    decoder = SSEDecoder()
    frames: list[Frame] = []
    for chunk in chunks:
        frames += decoder.feed(chunk)
    return frames + decoder.close()


def chunk_free(frames: list[Frame]) -> list[Frame]:
    return [f._replace(first_chunk=0, last_chunk=0) for f in frames]


# -- independent reference: the WHATWG algorithm over the whole decoded stream ----------------

_REF_EOL = re.compile(r"\r\n|\r|\n")


@dataclass
class Reference:
    events: list[tuple[str, str, str]]  # dispatched (type, data, lastEventId)
    lines: list[str]  # every line, plus the unterminated tail when it is not empty
    last_event_id: str  # the last event ID buffer at end of stream
    reconnection_time: int | None  # the last valid retry value processed


def reference(stream: bytes) -> Reference:
    text = stream.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    *lines, tail = _REF_EOL.split(text)  # the last piece has no line end
    events: list[tuple[str, str, str]] = []
    data_buffer, event_type, last_id, retry = "", "", "", None
    for line in lines:
        if line == "":
            # "dispatch the event"
            if data_buffer == "":
                data_buffer, event_type = "", ""
                continue
            if data_buffer.endswith("\n"):
                data_buffer = data_buffer[:-1]
            events.append((event_type or "message", data_buffer, last_id))
            data_buffer, event_type = "", ""
            continue
        if line.startswith(":"):
            continue
        if ":" in line:
            field, value = line.split(":", 1)
            if value.startswith(" "):
                value = value[1:]
        else:
            field, value = line, ""
        if field == "event":
            event_type = value
        elif field == "data":
            data_buffer += value + "\n"
        elif field == "id":
            if "\0" not in value:
                last_id = value
        elif field == "retry":
            if value and all(c in "0123456789" for c in value):
                retry = int(value)
    # End of file: pending data is discarded; the tail is not a line.
    return Reference(events, lines + ([tail] if tail else []), last_id, retry)


def test_reference_itself_reads_a_known_stream() -> None:
    ref = reference(b"\xef\xbb\xbfid: 1\r\nevent: e\rdata: a\ndata\n\nretry: 3\n\ndata: b\n\ndata: c")
    assert ref.events == [("e", "a\n", "1"), ("message", "b", "1")]
    assert ref.lines[0] == "id: 1" and ref.lines[-1] == "data: c"
    assert ref.reconnection_time == 3


# -- properties ---------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(stream_and_chunks())
def test_any_chunking_gives_the_frames_of_the_whole_stream(
    case: tuple[bytes, list[bytes]],
) -> None:
    stream, chunks = case
    whole = decode_all(stream)
    frames = feed_chunks(chunks)
    assert chunk_free(frames) == chunk_free(whole)
    assert b"".join(f.raw for f in frames) == stream
    offset = 0
    for index, frame in enumerate(frames):
        assert (frame.index, frame.start) == (index, offset)
        assert frame.end > frame.start and frame.raw == stream[frame.start:frame.end]
        offset = frame.end
    assert offset == len(stream)


@PROPERTY_SETTINGS
@given(streams)
def test_one_byte_chunks_give_the_frames_of_the_whole_stream(stream: bytes) -> None:
    frames = feed_chunks([stream[i:i + 1] for i in range(len(stream))])
    assert chunk_free(frames) == chunk_free(decode_all(stream))


@PROPERTY_SETTINGS
@given(stream_and_chunks())
def test_first_and_last_chunk_hold_the_first_and_last_byte(
    case: tuple[bytes, list[bytes]],
) -> None:
    stream, chunks = case
    owner: list[int] = []  # chunk index of every stream byte
    for index, chunk in enumerate(chunks):
        owner += [index] * len(chunk)
    for frame in feed_chunks(chunks):
        assert frame.first_chunk == owner[frame.start]
        assert frame.last_chunk == owner[frame.end - 1]


@PROPERTY_SETTINGS
@given(stream_and_chunks())
def test_dispatched_events_match_the_reference_algorithm(
    case: tuple[bytes, list[bytes]],
) -> None:
    stream, chunks = case
    frames = feed_chunks(chunks)
    ref = reference(stream)
    assert [(f.event_type, f.data, f.last_event_id) for f in frames if f.dispatch] == ref.events
    lines = [line for f in frames for line in f.lines]
    assert lines == ref.lines
    assert sum(f.terminated for f in frames) == ref.lines.count("")
    if frames:
        assert frames[-1].last_event_id == ref.last_event_id
    retries = [f.retry for f in frames if f.retry is not None]
    assert (retries[-1] if retries else None) == ref.reconnection_time


# -- linear time, proved by counting the bytes the line-end search looks at ----------------


class CountingLineEnd:
    """Stands in for sse._blank_line (the block-end search): delegates to the real one and
    counts the bytes each search may scan (from where it starts to the buffer's end).

    With a budget it fails as soon as the count exceeds it, so a quadratic regression fails
    in a fraction of a second instead of hanging the suite for hours.
    """

    def __init__(self, real: Callable[[bytes | bytearray, int], re.Match[bytes] | None]) -> None:
        self.real = real
        self.scanned = 0
        self.calls = 0
        self.budget: int | None = None

    def __call__(self, buf: bytes | bytearray, pos: int = 0) -> re.Match[bytes] | None:
        self.calls += 1
        self.scanned += len(buf) - pos
        if self.budget is not None and self.scanned > self.budget:
            raise AssertionError(f"line-end search scanned {self.scanned} > {self.budget} bytes")
        return self.real(buf, pos)


@pytest.fixture
def counter(monkeypatch: pytest.MonkeyPatch) -> CountingLineEnd:
    counting = CountingLineEnd(sse._blank_line)
    monkeypatch.setattr(sse, "_blank_line", counting)
    return counting


def feed_bytewise(stream: bytes) -> list[Frame]:
    decoder = SSEDecoder()
    frames: list[Frame] = []
    feed: Callable[[bytes], list[Frame]] = decoder.feed
    for i in range(len(stream)):
        frames += feed(stream[i:i + 1])
    return frames + decoder.close()


def test_counter_sees_the_decoder_searches(counter: CountingLineEnd) -> None:
    # Guards the instrument: if the decoder stopped using _blank_line the bounds below would
    # pass vacuously. (An LF-only stream takes the bytes.find fast path from its first byte, so
    # the general path's searches are seen on CRLF.)
    frames = feed_chunks([b"data: abc\r\n", b"\r\n"])
    assert [f.data for f in frames] == ["abc"]
    assert counter.calls >= 2 and counter.scanned >= 11


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"], ids=["LF", "CRLF"])
def test_one_mebibyte_line_fed_one_byte_at_a_time_is_scanned_linearly(
    counter: CountingLineEnd, eol: bytes
) -> None:
    n = 1 << 20
    payload = b"x" * (n - len(b"data: ") - 2 * len(eol))
    stream = b"data: " + payload + eol + eol
    assert len(stream) == n
    counter.budget = 3 * n
    frames = feed_bytewise(stream)
    assert len(frames) == 1 and frames[0].dispatch and frames[0].end == n
    assert frames[0].data == payload.decode()
    # Rescanning the pending line on every byte would cost about n * n / 2.
    assert counter.scanned <= 3 * n


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"], ids=["LF", "CRLF", "CR"])
def test_many_small_frames_fed_one_byte_at_a_time_are_scanned_linearly(
    counter: CountingLineEnd, eol: bytes
) -> None:
    frame = b"event: e" + eol + b"data: 0123456789" + eol + eol
    count = 10_000
    stream = frame * count
    counter.budget = 3 * len(stream)
    frames = feed_bytewise(stream)
    assert len(frames) == count and all(f.dispatch and f.data == "0123456789" for f in frames)
    assert counter.scanned <= 3 * len(stream)


def test_large_block_of_many_lines_in_small_chunks_is_scanned_linearly(
    counter: CountingLineEnd,
) -> None:
    line = b"data: " + b"y" * 57 + b"\r"
    stream = line * 16_384 + b"\r"  # one 1 MiB block, CR line ends (each waits for a maybe-LF)
    counter.budget = 3 * len(stream)
    frames = feed_chunks([stream[i:i + 7] for i in range(0, len(stream), 7)])
    assert len(frames) == 1 and frames[0].terminated
    assert frames[0].data.count("\n") == 16_383
    assert counter.scanned <= 3 * len(stream)


@PROPERTY_SETTINGS
@given(stream_and_chunks(), st.integers(1, 16))
def test_framing_stops_for_good_at_the_first_overflow(case: tuple[bytes, list[bytes]],
                                                      limit: int) -> None:
    # Past the block limit the decoder emits one overflow frame and nothing after it, however
    # the bytes arrive (a first read holding a whole block plus an oversized tail once turned the
    # fast path back on: the bytes after the limit were framed again).
    _, chunks = case
    decoder = SSEDecoder(max_block_bytes=limit)
    frames: list[Frame] = []
    for chunk in chunks:
        frames += decoder.feed(chunk)
    frames += decoder.close()
    overflows = [i for i, f in enumerate(frames) if f.overflow]
    assert overflows in ([], [len(frames) - 1])


@PROPERTY_SETTINGS
@given(stream_and_chunks(), st.integers(1, 8))
def test_a_chunk_fed_in_pieces_gives_the_frames_of_the_whole_chunk(
    case: tuple[bytes, list[bytes]], piece: int,
) -> None:
    # feed_more: a huge read framed a piece at a time keeps its frames and its chunk numbers.
    _, chunks = case
    decoder = SSEDecoder()
    frames: list[Frame] = []
    for chunk in chunks:
        frames += decoder.feed(chunk[:piece])
        for i in range(piece, len(chunk), piece):
            frames += decoder.feed_more(chunk[i:i + piece])
    frames += decoder.close()
    assert frames == feed_chunks(chunks)


@given(st.lists(st.sampled_from([b"\r", b"\n", b"\r\n", b"a", b"data: x", b":"]), max_size=40)
       .map(b"".join), st.integers(0, 60), st.booleans())
@PROPERTY_SETTINGS
def test_the_blank_line_search_is_the_regex_search(data: bytes, scan: int, mutable: bool) -> None:
    """The decoder looks for a block's end with bytes.find before the regex: the same match
    (start and end) as the regex searching every byte, from any position, in bytes or a
    bytearray (the decoder's buffer)."""
    buf = bytearray(data) if mutable else data
    found, reference = sse._blank_line(buf, scan), sse._LINE_END.search(buf, scan)
    assert (found.span() if found else None) == (reference.span() if reference else None)
