"""SSEDecoder.feed_hot_each (reads in batches, the blocks of a run of reads cut at once,
sse_fast.FastPath._plain_run) against the per-read path, SSEDecoder.feed_hot once per read:
the same frames with their chunk numbers, the same blocks offered to the hot path's take (and
the same frames when it reads them), the same overflow at the same read, the same chunk count and
chunk of every pending byte, the same state left for close (a cut stream's trailing block)."""

from __future__ import annotations

import zlib

from callscope.core import sse, sse_fast
from callscope.core.frame import Frame
from callscope.core.sse import SSEDecoder
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_sse_properties import TOKENS, chunked

LF_TOKENS = [t for t in TOKENS if b"\r" not in t] + [
    b'data: {"a": 1}', b"event: e\ndata: {}", b"x" * 40, b'data: {"a": "' + b"y" * 90 + b'"}']
lf_streams = st.lists(st.sampled_from(LF_TOKENS), max_size=60).map(b"".join)
any_streams = st.lists(st.one_of(st.sampled_from(TOKENS), st.binary(max_size=3)),
                       max_size=60).map(b"".join)


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[bytes], int, bool, int, int, int]:
    stream = draw(st.one_of(lf_streams, any_streams))
    if draw(st.booleans()):  # a byte per read, as check feeds it
        reads = [stream[i:i + 1] for i in range(len(stream))]
    else:
        reads = chunked(stream, draw(st.lists(st.integers(0, len(stream)), max_size=20)))
    limit = draw(st.sampled_from([1, 4, 12, 40, 300, 1 << 20]))
    join = draw(st.sampled_from([1, 2, 7, 64, sse._JOIN]))  # (bytes of reads joined at once)
    batch = draw(st.sampled_from([1, 3, 50, sse._BATCH]))
    return reads, limit, draw(st.booleans()), draw(st.integers(0, 3)), join, batch


class Recorder:
    """The hot path's taker (reading a block when its CRC says so, a fixed choice per block,
    and then the whole blocks after it in the bytes it is handed while their CRCs say so, as
    the hot path reads a run) and deliver. Each block read is seen as if offered alone, so the
    record is the same however many blocks one offer reads."""

    def __init__(self, every: int, limit: int = 1 << 20) -> None:
        self.every = every
        self.limit = limit
        self.run_end = 0
        self.seen: list[tuple[str, object]] = []

    def _reads(self, block: bytes) -> bool:
        return self.every > 0 and zlib.crc32(block) % (self.every + 1) == 0

    def take(self, data: bytes, start: int, end: int, index: int) -> int:
        block = data[start:end]
        taken = self._reads(block)
        self.seen.append(("take", (block, index, taken)))
        if not taken:
            return 0
        read, pos = 1, end + 2
        while pos < len(data) and data[pos] != 0x0A:
            nxt = data.find(b"\n\n", pos)
            if nxt < 0 or nxt - pos >= self.limit or not self._reads(data[pos:nxt]):
                break
            self.seen.append(("take", (data[pos:nxt], index + read, True)))
            read, pos = read + 1, nxt + 2
        self.run_end = pos
        return read

    def deliver(self, frame: Frame) -> None:
        self.seen.append(("frame", frame))


def _chunks(decoder: SSEDecoder) -> tuple[object, ...]:
    """The chunks counted and the chunk of each pending byte (the starts of chunks wholly
    before the pending block may be let go at other reads), then the frames at close."""
    start = decoder._block_start
    return (decoder._chunk_base + len(decoder._chunk_starts),
            [decoder._chunk_of(o) for o in range(start, start + decoder.pending)], decoder.close())


def _state(decoder: SSEDecoder) -> tuple[object, ...]:
    return (decoder.bytes_received, decoder.frames_emitted, decoder.pending, decoder._plain,
            decoder._overflowed, bytes(decoder._buf), *_chunks(decoder))


def _bytes(stream: bytes) -> list[bytes]:
    return [stream[i:i + 1] for i in range(len(stream))]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
# (line ends next to each other inside a batch of byte reads, each run one read long)
@example((_bytes(b"data: x\n\n\n"), 1 << 20, False, 0, 1, sse._BATCH))
@example((_bytes(b"data: x\n\n\ndata: y\n\n"), 1 << 20, False, 1, 1, sse._BATCH))
@example((_bytes(b"data: x\n\n\n\n" * 3), 12, True, 0, 2, 3))
# (CRLF blocks between LF ones: the fast path left and taken again inside one joined run)
@example(([b"data: a\n\n", b"data: b\r\n\r\n", b"data: c\n", b"\n", b"\r", b"data: d\n\n"] * 3,
          1 << 20, False, 1, sse._JOIN, sse._BATCH))
# (a byte order mark, a stray LF, a block that overflows inside a run, a cut tail)
@example(([b"\xef\xbb", b"\xbfdata: a\n\n", b"\n", b"data: ", b"b" * 20, b"\n\ndata: c"], 12, False,
          0, sse._JOIN, sse._BATCH))
@example(([b"data: a\n\ndata: bbbbbbbbbbbbbbbb\n\n"], 12, False, 0, 1, 1))
def test_feed_hot_each_is_feed_hot_per_read(
        case: tuple[list[bytes], int, bool, int, int, int]) -> None:
    reads, limit, more, every, join, batch = case
    saved = sse._JOIN, sse._BATCH
    sse._JOIN, sse._BATCH = join, batch
    try:
        _compare(reads, limit, more, every)
    finally:
        sse._JOIN, sse._BATCH = saved


def _compare(reads: list[bytes], limit: int, more: bool, every: int) -> None:
    head, rest = reads[:2], reads[2:]  # (a run after the first reads, as push_reads feeds it)
    one, each = SSEDecoder(limit), SSEDecoder(limit)
    by_read, in_run = Recorder(every, limit), Recorder(every, limit)
    for chunk in head:
        one.feed_hot(chunk, by_read, by_read.deliver)
        each.feed_hot(chunk, in_run, in_run.deliver)
    for n, chunk in enumerate(rest):
        one.feed_hot(chunk, by_read, by_read.deliver, more=more and n == 0)
    fed = each.feed_hot_each(rest, in_run, in_run.deliver, more=more)
    assert fed == len(rest)
    assert in_run.seen == by_read.seen
    assert _state(each) == _state(one)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(LF_TOKENS), max_size=40).map(b"".join), st.booleans())
def test_feed_hot_each_of_nothing_changes_nothing(stream: bytes, more: bool) -> None:
    one, each = SSEDecoder(), SSEDecoder()
    sink = Recorder(1)
    one.feed_hot(stream, sink, sink.deliver)
    each.feed_hot(stream, sink, sink.deliver)
    assert each.feed_hot_each([], sink, sink.deliver, more=more) == 0
    assert _state(each) == _state(one)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 40), st.integers(0, 3), st.booleans())
def test_chunk_starts_are_let_go_as_read_by_read(size: int, every: int, bytewise: bool) -> None:
    """Past sse_fast._KEEP_STARTS chunk starts, those before the pending block are let go: at
    other reads than one by one, to the same chunk numbers (the state compared holds them)."""
    block = b'data: {"a": "' + b"y" * size + b'"}\n\n'
    stream = block * (2 * sse_fast._KEEP_STARTS // len(block) + 3) + b"data: cut"
    reads = _bytes(stream) if bytewise else chunked(stream, list(range(0, len(stream), 5)))
    one, each = SSEDecoder(), SSEDecoder()
    by_read, in_run = Recorder(every), Recorder(every)
    for chunk in reads:
        one.feed_hot(chunk, by_read, by_read.deliver)
    each.feed_hot_each(reads, in_run, in_run.deliver)
    assert in_run.seen == by_read.seen
    assert _chunks(each) == _chunks(one)
    # Let go, not only equal: at most the kept starts, a batch's and the pending block's (a
    # byte per read holds a start per byte of the stream, twice the kept ones, without it).
    pending = len(block) // (1 if bytewise else 5) + 1
    assert len(each._chunk_starts) <= sse_fast._KEEP_STARTS + sse._BATCH + pending
