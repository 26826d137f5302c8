"""The decoded copy of a compressed stream (net/decoded.py): every byte the server compressed,
or an end that says where decoding stopped. gzip in several members (one per flush), deflate
with or without its zlib header, members falling anywhere across reads; a corrupt or truncated
body ends the copy as ``error`` naming the offset in the compressed stream, keeping what
decoded before it; codings callscope cannot decode are never copied as if clean; the raw
session keeps the compressed bytes exactly."""

from __future__ import annotations

import gzip
import pathlib
import zlib

import pytest
from callscope.core.importers import open_input
from callscope.core.session import Chunk, SessionHeader, SessionWriter, StreamEnd
from callscope.net import decoded as dec
from hypothesis import given, settings
from hypothesis import strategies as st

EVENTS = [
    b'data: {"id":"c","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n',
    b'data: {"id":"c","choices":[{"index":0,"delta":{"content":" there"}}]}\n\n',
    b'data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
    b"data: [DONE]\n\n",
]
PLAIN = b"".join(EVENTS)


def raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-15)
    return packer.compress(data) + packer.flush()


MEMBERS = b"".join(gzip.compress(e) for e in EVENTS)  # a server gzipping each flush
BODIES = {
    "gzip": ("gzip", gzip.compress(PLAIN)),
    "gzip members": ("gzip", MEMBERS),
    "x-gzip members": ("x-gzip", MEMBERS),
    "gzip empty members": ("gzip", gzip.compress(b"") + MEMBERS + gzip.compress(b"")),
    "deflate zlib": ("deflate", zlib.compress(PLAIN)),
    "deflate raw": ("deflate", raw_deflate(PLAIN)),
    "deflate raw stored": ("deflate", zlib.compress(PLAIN, 0)[2:-4]),
}


class Recorded:
    """One recording as the proxy and ``live`` make it: raw session and decoded copy."""

    def __init__(self, directory: pathlib.Path, encoding: str, reads: list[bytes],
                 end: StreamEnd) -> None:
        self.raw_path = str(directory / "s.jsonl")
        header = SessionHeader(protocol="openai-chat", response_headers={
            "content-type": "text/event-stream", "content-encoding": encoding},
            extra=dec.header_notes(self.raw_path, encoding))
        raw = SessionWriter(self.raw_path, header)
        copy = dec.DecodedCopy.open(self.raw_path, header, encoding)
        assert copy is not None
        self.shown: list[bytes] = []  # what the caller (the TUI, the engine) was handed
        for i, data in enumerate(reads):
            chunk = Chunk(i * 0.01, data)
            raw.write(chunk)
            plain = copy.write(chunk)
            assert chunk.data == data  # the raw chunk is not touched
            if plain is not None:
                self.shown.append(plain.data)
        raw.finish(end)
        copy.finish(end)
        self.raw = open_input(self.raw_path)
        self.copy = open_input(dec.decoded_path(self.raw_path))
        self.decoded = b"".join(c.data for c in self.copy.chunks())
        assert b"".join(self.shown) == self.decoded


def clean() -> StreamEnd:
    return StreamEnd("clean", at=1.0)


def record(tmp_path: pathlib.Path, encoding: str, reads: list[bytes],
           end: StreamEnd | None = None) -> Recorded:
    return Recorded(tmp_path, encoding, reads, end or clean())


@pytest.mark.parametrize("name", list(BODIES))
def test_each_coding_decodes_whole_and_ends_clean(tmp_path, name):
    encoding, body = BODIES[name]
    got = record(tmp_path, encoding, [body])
    assert got.decoded == PLAIN and got.copy.end.kind == "clean"
    assert got.copy.end.detail is None


def test_every_gzip_member_is_decoded_up_to_done(tmp_path):
    got = record(tmp_path, "gzip", [MEMBERS])
    assert got.decoded.endswith(b"data: [DONE]\n\n") and got.decoded == PLAIN


def test_one_read_per_member_is_one_chunk_per_event(tmp_path):
    reads = [gzip.compress(e) for e in EVENTS]
    assert record(tmp_path, "gzip", reads).shown == EVENTS


def test_raw_deflate_without_zlib_header_decodes(tmp_path):
    body = raw_deflate(PLAIN)
    assert not dec.is_zlib_header(body[:2])
    assert record(tmp_path, "deflate", [body]).decoded == PLAIN


@pytest.mark.parametrize("level", range(10))
@pytest.mark.parametrize("wbits", range(9, 16))
def test_every_zlib_header_is_told_from_raw_deflate(level, wbits):
    packer = zlib.compressobj(level, wbits=wbits)
    assert dec.is_zlib_header((packer.compress(PLAIN) + packer.flush())[:2])
    packer = zlib.compressobj(level, wbits=-wbits)
    assert not dec.is_zlib_header((packer.compress(PLAIN) + packer.flush())[:2])


def test_a_deflate_body_whose_first_read_is_one_byte_is_sniffed_after_the_second(tmp_path):
    for body in (zlib.compress(PLAIN), raw_deflate(PLAIN)):
        got = record(tmp_path, "deflate", [body[:1], b"", body[1:2], body[2:]])
        assert got.decoded == PLAIN and got.copy.end.kind == "clean"


@pytest.mark.parametrize("name", list(BODIES))
def test_a_split_at_every_byte_offset_decodes_the_same(tmp_path, name):
    """Two reads split anywhere: inside a header, on a member boundary, inside a trailer."""
    encoding, body = BODIES[name]
    for at in range(len(body) + 1):
        copy = dec.DecodedCopy(str(tmp_path / f"{at}.jsonl"), SessionHeader(), encoding)
        got = b"".join(c.data for c in (copy.write(Chunk(0.0, body[:at])),
                                        copy.write(Chunk(0.1, body[at:]))) if c is not None)
        assert got == PLAIN, at
        assert copy.end_for(clean()).kind == "clean", at
        copy.writer.finish(clean())


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(list(BODIES)), cuts=st.lists(st.integers(0, 2000), max_size=30))
def test_random_chunkings_decode_the_same(tmp_path_factory, name, cuts):
    encoding, body = BODIES[name]
    points = sorted({c % (len(body) + 1) for c in cuts})
    reads = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    got = record(tmp_path_factory.mktemp("r"), encoding, reads)
    assert got.decoded == PLAIN and got.copy.end.kind == "clean"
    assert b"".join(c.data for c in got.raw.chunks()) == body


def first_bad_byte(body: bytes) -> int:
    """The offset of the byte at which zlib first fails on ``body`` (gzip), by prefixes."""
    for at in range(len(body)):
        try:
            zlib.decompressobj(wbits=31).decompress(body[:at + 1])
        except zlib.error:
            return at
    raise AssertionError("decodes")


@pytest.mark.parametrize("flipped", [12, 30, 60])
def test_corrupt_gzip_ends_as_an_error_naming_the_offset(tmp_path, flipped):
    bad = bytearray(gzip.compress(PLAIN))
    bad[flipped] ^= 0xFF
    got = record(tmp_path, "gzip", [bytes(bad[:20]), bytes(bad[20:])])
    end = got.copy.end
    assert end.kind == "error" and end.at == 1.0
    at = first_bad_byte(bytes(bad))
    assert f"does not decode at byte {at} of the compressed stream" in (end.detail or "")
    # kept: all zlib gave before that byte (wrong bytes, if the damage hid until the CRC)
    assert got.decoded == zlib.decompressobj(wbits=31).decompress(bytes(bad[:at]))


def test_a_bad_checksum_keeps_every_byte_decoded_before_it(tmp_path):
    """zlib fails the whole read; what decoded before the bad byte is still kept."""
    body = bytearray(MEMBERS)
    body[-8] ^= 1  # the last member's CRC-32 (failed when its 4th byte arrives)
    got = record(tmp_path, "gzip", [bytes(body)])
    assert got.decoded == PLAIN and got.copy.end.kind == "error"
    assert f"at byte {len(body) - 5} of the compressed stream" in (got.copy.end.detail or "")
    assert "incorrect data check" in (got.copy.end.detail or "")


def test_the_offset_counts_earlier_reads_and_nothing_decodes_after_the_error(tmp_path):
    first, second = gzip.compress(EVENTS[0]), bytearray(gzip.compress(EVENTS[1]))
    second[-1] ^= 1  # its length (ISIZE)
    got = record(tmp_path, "gzip", [first, bytes(second), gzip.compress(EVENTS[2])])
    assert got.decoded == EVENTS[0] + EVENTS[1]
    offset = len(first) + len(second) - 1
    assert f"at byte {offset} of the compressed stream" in (got.copy.end.detail or "")


def test_garbage_after_the_last_member_is_an_error_not_clean(tmp_path):
    got = record(tmp_path, "gzip", [MEMBERS + b"\x00\x00\x00\x00"])
    assert got.decoded == PLAIN and got.copy.end.kind == "error"


def test_bytes_after_a_deflate_stream_are_an_error_at_its_end(tmp_path):
    for body in (zlib.compress(PLAIN), raw_deflate(PLAIN)):
        got = record(tmp_path, "deflate", [body, b"more"])
        assert got.decoded == PLAIN and got.copy.end.kind == "error"
        assert f"at byte {len(body)} of the compressed stream" in (got.copy.end.detail or "")


@pytest.mark.parametrize("name", ["gzip", "deflate zlib", "deflate raw"])
def test_a_truncated_body_never_ends_clean(tmp_path, name):
    encoding, body = BODIES[name]
    for at in range(1, len(body)):  # (none at all is an empty body)
        copy = dec.DecodedCopy(str(tmp_path / f"{at}.jsonl"), SessionHeader(), encoding)
        plain = copy.write(Chunk(0.0, body[:at]))
        assert PLAIN.startswith(plain.data if plain is not None else b""), at
        end = copy.end_for(clean())
        assert end.kind == "error", at
        assert f"ends inside a compressed member at byte {at}: truncated" in (end.detail or "")
        copy.writer.finish(end)


def test_a_truncated_gzip_session_ends_as_an_error(tmp_path):
    body = gzip.compress(PLAIN)
    got = record(tmp_path, "gzip", [body[:len(body) // 2]])
    assert got.copy.end.kind == "error" and got.raw.end.kind == "clean"
    assert PLAIN.startswith(got.decoded)


def test_a_cut_stream_keeps_its_own_end_on_the_copy(tmp_path):
    body = gzip.compress(PLAIN)
    cut = StreamEnd("reset", detail="peer reset", at=1.0)
    got = record(tmp_path, "gzip", [body[:40]], cut)
    assert got.copy.end == cut


def test_a_decode_error_on_a_cut_stream_says_both(tmp_path):
    got = record(tmp_path, "gzip", [b"not gzip at all"], StreamEnd("cut", detail="stopped"))
    end = got.copy.end
    assert end.kind == "error" and "the stream itself ended cut: stopped" in (end.detail or "")


def test_an_empty_body_ends_clean(tmp_path):
    got = record(tmp_path, "gzip", [])
    assert got.decoded == b"" and got.copy.end.kind == "clean"


def test_the_raw_session_holds_the_compressed_bytes_exactly(tmp_path):
    bad = bytearray(MEMBERS)
    bad[50] ^= 0xFF
    for encoding, body in [*BODIES.values(), ("gzip", bytes(bad))]:
        reads = [body[i:i + 7] for i in range(0, len(body), 7)]
        got = record(tmp_path, encoding, reads)
        assert [c.data for c in got.raw.chunks()] == reads and got.raw.end == clean()
        assert got.raw.header.extra == {"content_encoding": encoding, "decoded": "s.decoded.jsonl"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.decoded.jsonl", "s.jsonl"]


@pytest.mark.parametrize("encoding", ["br", "zstd", "compress", "gzip, br", "snappy"])
def test_a_coding_callscope_cannot_decode_is_said_and_not_copied(tmp_path, encoding):
    path = str(tmp_path / "s.jsonl")
    assert dec.header_notes(path, encoding) == {"content_encoding": encoding, "decoded": None}
    assert dec.DecodedCopy.open(path, SessionHeader(), encoding) is None


@pytest.mark.parametrize("chunks", [[], [b"\x1b\x00\x00"]])
def test_a_copy_of_an_undecodable_coding_never_ends_clean(tmp_path, chunks):
    copy = dec.DecodedCopy(str(tmp_path / "s.jsonl"), SessionHeader(), "br")
    assert all(copy.write(Chunk(0.0, c)) is None for c in chunks)
    copy.finish(clean())
    end = open_input(dec.decoded_path(str(tmp_path / "s.jsonl"))).end
    assert end.kind == "error" and "callscope does not decode 'br'" in (end.detail or "")


def test_identity_and_no_coding_make_no_notes():
    assert dec.encoding_of({"content-encoding": " Identity "}) == ""
    assert dec.encoding_of({"content-encoding": "GZIP"}) == "gzip"
    assert dec.header_notes("s.jsonl", "") == {}
