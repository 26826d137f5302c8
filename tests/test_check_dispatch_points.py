"""Where a cut dispatches a frame is the framing's rule (``framing.DISPATCHED_AT_CR``): SSE ends
a line at a trailing CR at close, so a cut between a blank line's CR and LF dispatches the
block; NDJSON reads no line without its LF, and an event-stream message needs its last byte.
Read with SSE's rule, an Ollama stream with CR LF line ends failed ``check`` ("internal: the cut
at byte 240 (recorded) disagrees with its class"), and an event-stream message whose CRC ends
in 0x0D 0x0A (about 1 in 65,536) would have."""

from __future__ import annotations

import pathlib

import pytest
from callscope.core.check import check_input, dispatch_point
from callscope.core.framing import DISPATCHED_AT_CR, FRAMINGS, decode_all
from callscope.core.importers import open_input
from callscope.core.tools import ToolSet

SESSIONS = pathlib.Path(__file__).resolve().parents[1] / "sessions"


def _crlf_ollama() -> tuple[bytes, ToolSet]:
    session = open_input(str(SESSIONS / "ollama-chat" / "single_call.jsonl"))
    data = b"".join(c.data for c in session.chunks())
    assert b"\r" not in data
    return data.replace(b"\n", b"\r\n"), ToolSet(session.header.tools or [])


def test_every_framing_declares_its_rule():
    assert set(DISPATCHED_AT_CR) == set(FRAMINGS)


def test_check_passes_an_ndjson_stream_with_crlf_line_ends():
    data, tools = _crlf_ollama()
    report = check_input("crlf.ndjson", [(0.0, data)], protocol="ollama-chat", tools=tools)
    assert report.violations == []
    assert report.executed == 1


def test_an_ndjson_line_cut_between_its_cr_and_lf_is_not_read():
    data, _ = _crlf_ollama()
    frames = decode_all(data, "ndjson")
    first = frames[0]
    assert first.raw.endswith(b"\r\n")
    assert dispatch_point(first, "ndjson") == first.end - 1
    assert decode_all(data[:first.end - 1], "ndjson")[0].terminated is False
    assert decode_all(data[:first.end], "ndjson")[0].terminated is True


@pytest.mark.parametrize("framing", ["aws-eventstream", "ndjson"])
def test_a_frame_ending_in_crlf_dispatches_only_with_its_last_byte(framing):
    frame = decode_all(b"data: x\n\n", "sse")[0]._replace(raw=b"..\r\n")
    assert dispatch_point(frame, framing) == frame.end - 1
    assert dispatch_point(frame, "sse") == frame.end - 2
