"""Focused examples: core/sse.py against the WHATWG "Interpreting an event stream" rules.

Each test names one rule of the HTML Living Standard (server-sent events, §9.2.6). Chunking
independence, the reference comparison and the linear-time proof live in
test_sse_properties.py.
"""

from __future__ import annotations

import pytest
from callscope.core.errors import CallscopeError, DecoderClosed
from callscope.core.frame import Frame
from callscope.core.sse import SSEDecoder, decode_all

BOM = b"\xef\xbb\xbf"


def feed_chunks(chunks: list[bytes]) -> list[Frame]:
    decoder = SSEDecoder()
    frames: list[Frame] = []
    for chunk in chunks:
        frames += decoder.feed(chunk)
    return frames + decoder.close()


def chunk_free(frames: list[Frame]) -> list[Frame]:
    """Frames with the chunk indices blanked: those are the only fields chunking may change."""
    return [f._replace(first_chunk=0, last_chunk=0) for f in frames]


def dispatched(frames: list[Frame]) -> list[tuple[str, str, str]]:
    return [(f.event_type, f.data, f.last_event_id) for f in frames if f.dispatch]


def assert_spans_cover(frames: list[Frame], stream: bytes) -> None:
    assert [f.index for f in frames] == list(range(len(frames)))
    offset = 0
    for frame in frames:
        assert frame.start == offset
        assert frame.end > frame.start
        assert frame.raw == stream[frame.start:frame.end]
        offset = frame.end
    assert offset == len(stream)
    assert b"".join(f.raw for f in frames) == stream


# -- line ends ----------------------------------------------------------------------------


@pytest.mark.parametrize("eol", [b"\r\n", b"\n", b"\r"], ids=["CRLF", "LF", "CR"])
def test_each_line_end_kind_ends_lines_and_blocks(eol: bytes) -> None:
    body = [b"event: e", b"id: 7", b"data: a", b"data: b", b""]
    stream = eol.join(body) + eol + b"data: c" + eol + eol
    frames = decode_all(stream)
    assert len(frames) == 2
    first, second = frames
    assert first.lines == ("event: e", "id: 7", "data: a", "data: b", "")
    assert (first.event, first.data, first.last_event_id) == ("e", "a\nb", "7")
    assert first.end == len(eol.join(body) + eol)
    assert second.lines == ("data: c", "")
    assert all(f.dispatch and f.terminated for f in frames)
    assert_spans_cover(frames, stream)


def test_mixed_line_ends_in_one_stream() -> None:
    stream = b"data: a\rdata: b\r\ndata: c\n\r\ndata: d\r\r"
    frames = decode_all(stream)
    assert [f.data for f in frames] == ["a\nb\nc", "d"]
    assert frames[0].raw == b"data: a\rdata: b\r\ndata: c\n\r\n"
    assert_spans_cover(frames, stream)


def test_cr_at_chunk_end_and_lf_at_next_chunk_start_are_one_line_end() -> None:
    stream = b"data: a\r\n\r\ndata: b\r\n\r\n"
    whole = decode_all(stream)
    assert [f.data for f in whole] == ["a", "b"]
    for cut in range(1, len(stream)):
        split = feed_chunks([stream[:cut], stream[cut:]])
        assert chunk_free(split) == chunk_free(whole), cut

    # Step by step: the pending CR must not end a line (or a block) before its LF is seen.
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"\n\r") == []
    (frame,) = decoder.feed(b"\n")
    assert (frame.start, frame.end, frame.raw) == (0, 11, b"data: a\r\n\r\n")
    assert frame.lines == ("data: a", "")
    assert decoder.close() == []


def test_lone_cr_followed_by_other_byte_in_next_chunk_ends_the_line() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\n\r") == []  # the CR may still be half of a CRLF
    frames = decoder.feed(b"data: b\n\n")
    assert [(f.raw, f.data) for f in frames] == [
        (b"data: a\n\r", "a"),
        (b"data: b\n\n", "b"),
    ]


def test_cr_as_last_byte_of_stream_ends_a_line_at_close() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r\r") == []  # the second CR waits for a possible LF
    (frame,) = decoder.close()
    assert frame.terminated and frame.dispatch
    assert (frame.data, frame.end, frame.lines) == ("a", 9, ("data: a", ""))

    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    (frame,) = decoder.close()
    # The CR ended the line, so it is not part of the decoded text; no blank line followed.
    assert frame.lines == ("data: a",)
    assert frame.data == "a"
    assert not frame.terminated and not frame.dispatch
    assert frame.raw == b"data: a\r"


# -- byte order mark ----------------------------------------------------------------------


def test_one_leading_bom_is_stripped() -> None:
    stream = BOM + b"data: x\n\n"
    (frame,) = decode_all(stream)
    assert frame.lines[0] == "data: x"
    assert frame.dispatch and frame.data == "x"
    assert frame.raw == stream  # the bytes stay visible


def test_only_one_leading_bom_is_stripped() -> None:
    (frame,) = decode_all(BOM + BOM + b"data: x\n\n")
    assert frame.lines[0] == "\ufeffdata: x"
    # The field name is now "\ufeffdata", an unknown field: nothing to dispatch.
    assert not frame.dispatch and frame.data == ""


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_bom_split_across_chunks_is_still_stripped(cut: int) -> None:
    stream = BOM + b"data: x\n\n"
    frames = feed_chunks([stream[:cut], stream[cut:]])
    assert chunk_free(frames) == chunk_free(decode_all(stream))
    assert frames[0].lines[0] == "data: x" and frames[0].data == "x"
    one_byte = feed_chunks([stream[i:i + 1] for i in range(len(stream))])
    assert chunk_free(one_byte) == chunk_free(frames)


def test_bom_later_in_the_stream_is_kept() -> None:
    frames = decode_all(b"data: a\n\n" + BOM + b"data: b\n\n")
    assert frames[1].lines[0] == "\ufeffdata: b"
    assert dispatched(frames) == [("message", "a", "")]

    # Not at stream start even though it starts the first non-blank line.
    frames = decode_all(b"\n" + BOM + b"data: b\n\n")
    assert frames[1].lines[0] == "\ufeffdata: b"
    assert dispatched(frames) == []

    (frame,) = decode_all(b"data: " + BOM + b"x\n\n")
    assert frame.data == "\ufeffx"


# -- UTF-8 ------------------------------------------------------------------------------


def test_invalid_utf8_decodes_to_replacement_character() -> None:
    frames = decode_all(b"data: a\xffb\xc3\n\ndata: \xed\xa0\x80|\x85\n\nevent: \xc0\xaf\ndata: z\n\n")
    assert frames[0].data == "a\ufffdb\ufffd"  # a truncated sequence before LF is one U+FFFD
    assert frames[1].data == "\ufffd\ufffd\ufffd|\ufffd"  # encoded surrogate, lone continuation
    assert frames[2].event == "\ufffd\ufffd"  # overlong encoding
    assert frames[2].event_type == "\ufffd\ufffd"


def test_multibyte_characters_split_at_every_position() -> None:
    text = "é€😀𝄞 ok ü"
    stream = f"event: ß\ndata: {text}\n\n".encode()
    whole = decode_all(stream)
    assert [(f.event, f.data) for f in whole] == [("ß", text)]
    for cut in range(1, len(stream)):
        frames = feed_chunks([stream[:cut], stream[cut:]])
        assert chunk_free(frames) == chunk_free(whole), cut
    for cut in range(1, len(stream) - 1):
        three = feed_chunks([stream[:cut], stream[cut:cut + 1], stream[cut + 1:]])
        assert chunk_free(three) == chunk_free(whole), cut
    one_byte = feed_chunks([stream[i:i + 1] for i in range(len(stream))])
    assert chunk_free(one_byte) == chunk_free(whole)


@pytest.mark.parametrize(
    "char",
    ["\u2028", "\u2029", "\u0085", "\x0b", "\x0c"],
    ids=["LS", "PS", "NEL", "VT", "FF"],
)
def test_unicode_and_ascii_breaks_other_than_cr_lf_are_not_line_ends(char: str) -> None:
    stream = f"data: a{char}b\n\n".encode()
    if char == "\u0085":
        assert b"\xc2\x85" in stream
    (frame,) = decode_all(stream)
    assert frame.lines == (f"data: a{char}b", "")
    assert frame.data == f"a{char}b"
    assert frame.dispatch


# -- fields -------------------------------------------------------------------------------


def test_comments_are_kept_and_do_not_dispatch() -> None:
    frames = decode_all(b": hello\n:\ndata: x\n\n: only a comment\n\n")
    assert frames[0].comments == (" hello", "")
    assert frames[0].dispatch and frames[0].data == "x"
    assert frames[1].comments == (" only a comment",)
    assert not frames[1].dispatch and frames[1].terminated
    assert frames[1].data == ""


def test_line_without_colon_is_a_field_with_empty_value() -> None:
    (frame,) = decode_all(b"data\n\n")
    assert frame.dispatch and frame.data == ""
    (frame,) = decode_all(b"data\ndata\n\n")
    assert frame.data == "\n"
    (frame,) = decode_all(b"event\ndata: x\n\n")
    assert frame.event == "" and frame.event_type == "message"
    frames = decode_all(b"id: 5\n\nid\ndata: x\n\n")
    assert frames[1].last_event_id == ""


def test_only_one_leading_space_is_removed_from_a_value() -> None:
    frames = decode_all(b"data:x\n\ndata: x\n\ndata:  x\n\ndata:\tx\n\nevent:  e\ndata: y\n\n")
    assert [f.data for f in frames] == ["x", "x", " x", "\tx", "y"]
    assert frames[4].event == " e"


def test_data_lines_are_joined_with_lf() -> None:
    (frame,) = decode_all(b"data: a\ndata:\ndata: b\ndata: \n\n")
    assert frame.data == "a\n\nb\n"


@pytest.mark.parametrize("line", [b"data:", b"data: "])
def test_data_with_empty_value_dispatches_empty_data(line: bytes) -> None:
    (frame,) = decode_all(line + b"\n\n")
    assert frame.dispatch and frame.terminated
    assert frame.data == ""


def test_id_containing_nul_is_ignored() -> None:
    frames = decode_all(b"id: 1\ndata: a\n\nid: x\x00y\ndata: b\n\n")
    assert [f.last_event_id for f in frames] == ["1", "1"]
    assert frames[1].lines[0] == "id: x\x00y"


def test_id_persists_across_events() -> None:
    stream = b"id: 1\ndata: a\n\ndata: b\n\nid: 2\n\ndata: c\n\nid\ndata: d\n\n"
    frames = decode_all(stream)
    assert [f.last_event_id for f in frames] == ["1", "1", "2", "2", ""]
    # The id set by a block that does not dispatch still reaches the next event.
    assert dispatched(frames) == [
        ("message", "a", "1"),
        ("message", "b", "1"),
        ("message", "c", "2"),
        ("message", "d", ""),
    ]


def test_retry_accepts_only_ascii_digits() -> None:
    (frame,) = decode_all(b"retry: 1500\ndata: x\n\n")
    assert frame.retry == 1500
    assert decode_all(b"retry: 007\n\n")[0].retry == 7
    for value in ["１２", "12a", "", " 12", "-1", "+1", "1.5", "1_000", "²", "٣"]:
        (frame,) = decode_all(f"retry: {value}\ndata: x\n\n".encode())
        assert frame.retry is None, value
        assert frame.dispatch, value  # a bad retry does not spoil the event
    (frame,) = decode_all(b"retry\n\n")
    assert frame.retry is None


def test_retry_belongs_to_the_block_that_carries_it() -> None:
    frames = decode_all(b"retry: 5\n\ndata: x\n\nretry: 1\nretry: bad\nretry: 9\n\n")
    assert [f.retry for f in frames] == [5, None, 9]


def test_huge_retry_value_does_not_raise() -> None:
    stream = b"retry: " + b"1" * 5000 + b"\ndata: x\n\n"
    try:
        frames = decode_all(stream)
    except ValueError as exc:  # reported as a test failure, not an error
        raise AssertionError(f"decoder raised on input: {exc}") from exc
    assert dispatched(frames) == [("message", "x", "")]
    assert frames[0].retry is None or frames[0].retry > 10**4999


def test_unknown_fields_are_ignored() -> None:
    (frame,) = decode_all(b"foo: bar\nDATA: x\ndata : y\nData: z\n\n")
    assert not frame.dispatch and frame.data == "" and frame.event is None
    assert frame.lines[:4] == ("foo: bar", "DATA: x", "data : y", "Data: z")
    (frame,) = decode_all(b"foo: bar\ndata: x\nretry_ms: 5\n\n")
    assert frame.dispatch and frame.data == "x" and frame.retry is None


def test_event_name_is_recorded_per_block() -> None:
    frames = decode_all(b"event: tool_call\ndata: {}\n\ndata: plain\n\nevent: a\nevent: b\ndata: 1\n\n")
    assert [f.event for f in frames] == ["tool_call", None, "b"]
    assert dispatched(frames) == [("tool_call", "{}", ""), ("message", "plain", ""), ("b", "1", "")]


# -- blocks and frames ------------------------------------------------------------------


def test_unterminated_block_at_end_of_stream_is_a_frame_that_does_not_dispatch() -> None:
    stream = b"data: a\n\ndata: b\ndata: c"
    decoder = SSEDecoder()
    (first,) = decoder.feed(stream)
    (tail,) = decoder.close()
    assert first.dispatch and first.terminated
    assert not tail.terminated and not tail.dispatch
    assert tail.lines == ("data: b", "data: c")
    assert tail.data == "b"  # the unterminated last line is shown but not interpreted
    assert (tail.start, tail.end, tail.raw) == (9, len(stream), b"data: b\ndata: c")
    assert_spans_cover([first, tail], stream)


def test_block_without_data_is_a_frame_that_does_not_dispatch() -> None:
    frames = decode_all(b"event: x\nid: 3\nretry: 10\n\n\ndata: y\n\n")
    assert len(frames) == 3
    meta, stray, event = frames
    assert not meta.dispatch and meta.terminated
    assert (meta.event, meta.last_event_id, meta.retry) == ("x", "3", 10)
    assert stray.lines == ("",) and stray.raw == b"\n" and not stray.dispatch
    # The event type buffer is reset at a blank line even when nothing dispatches.
    assert dispatched(frames) == [("message", "y", "3")]


def test_byte_spans_are_contiguous_and_cover_the_stream() -> None:
    stream = BOM + b": hi\r\n\r\nevent: e\rdata: \xff\r\r\n\ndata: tail"
    chunks = [stream[:5], stream[5:6], stream[6:20], b"", stream[20:]]
    frames = feed_chunks(chunks)
    assert len(frames) == 4
    assert_spans_cover(frames, stream)
    assert [f.terminated for f in frames] == [True, True, True, False]


def test_first_and_last_chunk_of_frames_spanning_several_chunks() -> None:
    frames = feed_chunks([b"data: a", b"bc\n", b"\n", b"data: d\n\n", b"da", b"ta: e\n\nx"])
    assert [(f.first_chunk, f.last_chunk) for f in frames] == [(0, 2), (3, 3), (4, 5), (5, 5)]
    assert [f.data for f in frames] == ["abc", "d", "e", ""]

    # Empty chunks never own a byte.
    frames = feed_chunks([b"", b"data: a\n", b"", b"\n", b""])
    assert [(f.first_chunk, f.last_chunk) for f in frames] == [(1, 3)]

    # A frame ended by a lone CR is only emitted with the next chunk but ends in the previous.
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\n\r") == []
    frames = decoder.feed(b"data: b\n\n")
    assert [(f.first_chunk, f.last_chunk) for f in frames] == [(0, 0), (1, 1)]


def test_counters_track_bytes_and_frames() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: a\n\ndata: ")
    assert (decoder.bytes_received, decoder.frames_emitted, decoder.pending) == (15, 1, 6)
    decoder.close()
    assert (decoder.frames_emitted, decoder.pending) == (2, 0)


def test_feed_after_close_raises_decoder_closed() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: a\n\n")
    decoder.close()
    with pytest.raises(DecoderClosed) as info:
        decoder.feed(b"data: b\n\n")
    assert isinstance(info.value, CallscopeError)
    assert decoder.close() == []  # closing twice is harmless
    with pytest.raises(DecoderClosed):
        decoder.feed(b"")
