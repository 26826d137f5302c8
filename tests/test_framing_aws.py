"""The AWS event-stream framing against botocore's own parser (``botocore/eventstream.py``, the
ground truth every AWS SDK for Python reads Bedrock with): the same messages, headers and
payloads under every chunking; a corrupt byte anywhere is a fault exactly where botocore
raises; a cut is a cut; offsets and chunk numbers are the stream's."""

from __future__ import annotations

import random
import struct
import uuid
from binascii import crc32

import pytest
from botocore.eventstream import EventStreamBuffer, ParserError
from callscope.core.aws_eventstream import (
    MAX_PAYLOAD,
    EventStreamDecoder,
    encode_message,
    event_message,
    exception_message,
)
from callscope.core.frame import Frame
from callscope.core.framing import decode_all, new_decoder, sniff
from hypothesis import given, settings
from hypothesis import strategies as st

# -- an independent writer: every header type, spelled out from the format --------------------

def typed_header(name: str, kind: int, value: bytes) -> bytes:
    key = name.encode()
    return bytes((len(key),)) + key + bytes((kind,)) + value


def message(headers: bytes, payload: bytes, *, total_delta: int = 0) -> bytes:
    total = 16 + len(headers) + len(payload) + total_delta
    prelude = struct.pack("!II", total, len(headers))
    prelude += struct.pack("!I", crc32(prelude))
    body = prelude + headers + payload
    return body + struct.pack("!I", crc32(body))


ALL_TYPES = b"".join((
    typed_header("t", 0, b""), typed_header("f", 1, b""),
    typed_header("byte", 2, struct.pack("!b", -5)), typed_header("short", 3, struct.pack("!h", -300)),
    typed_header("int", 4, struct.pack("!i", 70000)),
    typed_header("long", 5, struct.pack("!q", -(2**40))),
    typed_header("bytes", 6, b"\x00\x03\x01\x02\xff"),
    typed_header("str", 7, b"\x00\x06caf\xc3\xa9!"),
    typed_header("ts", 8, struct.pack("!q", 1767000000123)),
    typed_header("id", 9, uuid.UUID(int=0x1234).bytes),
))
RENDERED = (("t", "true"), ("f", "false"), ("byte", "-5"), ("short", "-300"), ("int", "70000"),
            ("long", str(-(2**40))), ("bytes", "0102ff"), ("str", "café!"),
            ("ts", "1767000000123"), ("id", str(uuid.UUID(int=0x1234))))


def botocore_render(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes):
        return str(uuid.UUID(bytes=value)) if len(value) == 16 else value.hex()
    return str(value)


def botocore_messages(data: bytes, chunks: list[bytes] | None = None) -> list[tuple[dict, bytes]]:
    buffer = EventStreamBuffer()
    out = []
    for chunk in chunks if chunks is not None else [data]:
        buffer.add_data(chunk)
        out += [({k: botocore_render(v) for k, v in m.headers.items()}, m.payload) for m in buffer]
    return out


def ours(chunks: list[bytes]) -> list[Frame]:
    decoder = EventStreamDecoder()
    frames = [f for chunk in chunks for f in decoder.feed(chunk)]
    return frames + decoder.close()


def as_messages(frames: list[Frame]) -> list[tuple[dict, bytes]]:
    return [(dict(f.headers), f.raw[12 + struct.unpack_from("!I", f.raw, 4)[0]:-4])
            for f in frames if f.dispatch and f.fault is None]


def stream(rng: random.Random, n: int = 6) -> bytes:
    parts = [message(ALL_TYPES, "Ünïcode ✅ payload".encode())]
    for i in range(n):
        text = "x" * rng.randint(0, 40)
        payload = f'{{"contentBlockIndex":{i},"delta":{{"text":"{text}"}},"p":"abc"}}'.encode()
        parts.append(event_message("contentBlockDelta", payload) if i % 3 else
                     exception_message("throttlingException", b'{"message":"slow down"}'))
    parts.append(message(b"", b""))  # the smallest message there is
    return b"".join(parts)


def split(data: bytes, rng: random.Random) -> list[bytes]:
    cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(1, 30))))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]


# -- the same messages as botocore -----------------------------------------------------------

def test_every_header_type_reads_as_botocore_reads_it() -> None:
    data = message(ALL_TYPES, b"{}")
    [frame] = decode_all(data, "aws-eventstream")
    assert frame.headers == RENDERED and frame.fault is None and frame.data == "{}"
    assert as_messages([frame]) == botocore_messages(data)


def test_byte_by_byte_and_every_split_point_give_the_same_frames() -> None:
    data = stream(random.Random(1), 4)
    whole = ours([data])
    assert as_messages(whole) == botocore_messages(data)
    bytewise = ours([data[i:i + 1] for i in range(len(data))])
    assert [f._replace(first_chunk=0, last_chunk=0) for f in bytewise] == whole
    assert [(f.first_chunk, f.last_chunk) for f in bytewise] == [(f.start, f.end - 1) for f in whole]
    for at in range(len(data) + 1):
        halves = ours([data[:at], data[at:]])
        assert [f._replace(first_chunk=0, last_chunk=0) for f in halves] == whole, at


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), st.integers(0, 12))
def test_any_chunking_reads_what_botocore_reads(seed: int, n: int) -> None:
    rng = random.Random(seed)
    data = stream(rng, n)
    chunks = split(data, rng)
    frames = ours(chunks)
    assert as_messages(frames) == botocore_messages(data, chunks)
    assert [f.start for f in frames] == [0, *(f.end for f in frames[:-1])]
    assert frames[-1].end == len(data)
    starts = [0]
    for chunk in chunks[:-1]:
        starts.append(starts[-1] + len(chunk))
    for frame in frames:  # the chunk numbers are those of the reads holding its first/last byte
        assert starts[frame.first_chunk] <= frame.start < starts[frame.first_chunk] + \
            len(chunks[frame.first_chunk]) or not chunks[frame.first_chunk]
        assert starts[frame.last_chunk] <= frame.end - 1


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32))
def test_a_corrupt_byte_is_a_fault_exactly_where_botocore_raises(seed: int) -> None:
    rng = random.Random(seed)
    data = bytearray(stream(rng, 5))
    at = rng.randrange(len(data))
    data[at] ^= 1 << rng.randrange(8)
    chunks = split(bytes(data), rng)
    good: list[tuple[dict, bytes]] = []
    buffer = EventStreamBuffer()
    raised = False
    try:
        for chunk in chunks:
            buffer.add_data(chunk)
            for m in buffer:  # one at a time: the messages before the raise count
                good.append(({k: botocore_render(v) for k, v in m.headers.items()}, m.payload))
    except ParserError:
        raised = True
    frames = ours(chunks)
    faults = [f for f in frames if f.fault is not None]
    assert raised == bool(faults)
    first = frames.index(faults[0]) if faults else len(frames)
    assert as_messages(frames[:first]) == good
    assert all(f.fault[0] == "frame_checksum" for f in faults)  # CRC32 sees every flipped bit


def test_a_cut_inside_a_message_is_a_cut_at_every_offset() -> None:
    data = stream(random.Random(2), 3)
    ends = [f.end for f in decode_all(data, "aws-eventstream")]
    for n in range(len(data) + 1):
        frames = decode_all(data[:n], "aws-eventstream")
        complete = [f for f in frames if f.terminated]
        assert [f.end for f in complete] == [e for e in ends if e <= n]
        tail = [f for f in frames if not f.terminated]
        assert bool(tail) == (n not in (0, *ends))
        assert all(not f.dispatch and f.end == n for f in tail)
        assert as_messages(frames) == botocore_messages(data[:n])


# -- what botocore refuses ---------------------------------------------------------------------

def test_a_bad_message_crc_is_a_fault_and_framing_goes_on() -> None:
    bad = bytearray(event_message("a", b'{"x":1}'))
    bad[-1] ^= 0xFF
    data = bytes(bad) + event_message("b", b"{}")
    first, second = decode_all(data, "aws-eventstream")
    assert first.fault is not None and first.fault[0] == "frame_checksum"
    assert "message CRC32" in first.fault[1] and "byte 0" in first.fault[1]
    assert first.dispatch and second.fault is None and second.event == "b"
    with pytest.raises(ParserError):
        botocore_messages(data)


@pytest.mark.parametrize(("total", "headers_length"), [(12, 0), (0, 0), (64, 10_000)])
def test_an_impossible_length_stops_framing(total: int, headers_length: int) -> None:
    prelude = struct.pack("!II", total, headers_length)
    data = prelude + struct.pack("!I", crc32(prelude)) + b"\x00" * 60 + event_message("a", b"{}")
    frames = decode_all(data, "aws-eventstream")
    assert len(frames) == 2 and frames[0].raw == data[:12]
    assert frames[0].fault is not None and frames[0].fault[0] == "frame_length"
    # Nothing received is dropped: the bytes past the fault are kept, in a frame that does not
    # dispatch (framing cannot find a boundary after an impossible length).
    assert frames[1].raw == data[12:] and not frames[1].dispatch and not frames[1].terminated


def test_a_payload_past_botocores_limit_is_impossible() -> None:
    prelude = struct.pack("!II", MAX_PAYLOAD + 17, 0)
    data = prelude + struct.pack("!I", crc32(prelude))
    [frame] = decode_all(data, "aws-eventstream")
    assert frame.fault is not None and frame.fault[0] == "frame_length"


def test_a_message_past_the_block_limit_overflows() -> None:
    data = event_message("a", b'{"x":"' + b"y" * 500 + b'"}')
    frames = new_decoder("aws-eventstream", 100).feed(data)
    assert len(frames) == 1 and frames[0].overflow and not frames[0].dispatch


@pytest.mark.parametrize("headers", [
    typed_header("x", 42, b""),  # an unknown type
    typed_header("x", 7, b"\x00\x09ab"),  # a string cut short
    typed_header("x", 4, b"\x00"),  # an integer cut short
    typed_header("a", 0, b"") + typed_header("a", 1, b""),  # repeated
    b"\x01\xff\x00",  # a name that is not UTF-8
    b"\x05ab",  # a name cut short
])
def test_malformed_headers_are_a_fault(headers: bytes) -> None:
    data = message(headers, b"{}") + event_message("next", b"{}")
    first, second = decode_all(data, "aws-eventstream")
    assert first.fault is not None and first.fault[0] == "frame_headers", first.fault
    assert second.fault is None and second.event == "next"


def test_botocore_refuses_the_headers_we_call_malformed() -> None:
    for headers in (typed_header("x", 42, b""), typed_header("a", 0, b"") + typed_header("a", 1, b""),
                    b"\x01\xff\x00", typed_header("x", 4, b"\x00")):
        with pytest.raises((ParserError, KeyError, UnicodeDecodeError, struct.error)):
            botocore_messages(message(headers, b"{}"))


def test_our_writer_is_what_botocore_reads() -> None:
    data = encode_message(((":event-type", "chunk"), ("flag", True), ("n", 7), ("b", b"\x01")),
                          b'{"bytes":"e30="}')
    assert botocore_messages(data) == [({":event-type": "chunk", "flag": "true", "n": "7",
                                          "b": "01"}, b'{"bytes":"e30="}')]


def test_the_first_byte_tells_the_framing() -> None:
    assert sniff(event_message("a", b"{}")) == "aws-eventstream"
    assert sniff(b'{"model":"m"}\n') == "ndjson"
    assert sniff(b"data: {}\n\n") == sniff(b"event: x\n") == sniff(b": hi\n") == "sse"
    assert sniff(b"") == "sse"
    data = stream(random.Random(3), 2)
    decoder = new_decoder("sniff")
    frames = decoder.feed(b"") + decoder.feed(data[:1]) + decoder.feed(data[1:]) + decoder.close()
    assert [f._replace(first_chunk=0, last_chunk=0) for f in frames] == \
        decode_all(data, "aws-eventstream")
    assert frames[0].first_chunk == 1  # the empty read before it still counts


def test_a_session_file_keeps_binary_reads_byte_for_byte(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from callscope.core.session import Chunk, SessionHeader, StreamEnd, open_input, save_session

    data = stream(random.Random(4), 5)
    chunks = [Chunk(0.001 * i, piece) for i, piece in enumerate(split(data, random.Random(5)))]
    path = str(tmp_path / "b.jsonl")
    save_session(path, SessionHeader(protocol="bedrock-converse"), chunks, StreamEnd("clean"))
    back = list(open_input(path).chunks())
    assert [c.data for c in back] == [c.data for c in chunks]
    assert decode_all(b"".join(c.data for c in back), "aws-eventstream") == \
        decode_all(data, "aws-eventstream")


def test_the_debugger_describes_a_binary_frame_and_its_checksum_verdict() -> None:
    from callscope.core.aws_eventstream import describe

    good, = decode_all(event_message("contentBlockStop", b'{"contentBlockIndex":0}'),
                       "aws-eventstream")
    facts = dict(describe(good))
    assert "holds" in facts["prelude"] and "holds" in facts["message CRC"]
    assert ":event-type = contentBlockStop" in facts["headers"]
    assert facts["verdict"] == "both checksums hold"
    bad = bytearray(good.raw)
    bad[-1] ^= 1
    broken, = decode_all(bytes(bad), "aws-eventstream")
    assert "DOES NOT MATCH" in dict(describe(broken))["message CRC"]
    assert describe(decode_all(b"data: {}\n\n")[0]) == []
