"""Input that is not an event stream is refused in one line (file, byte or line, why), exit 2,
and nothing is written; a capture of zero bytes is a stream that sent nothing."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

NOT_STREAMS = {
    "random.bin": (bytes(range(128, 256)) * 8, "not UTF-8 at byte 0"),
    "binary.sse": (b"\x00\x01\x02 some text", "binary data at byte 0"),
    "utf16.sse": ("data: {}\n\n".encode("utf-16"), "a UTF-16 byte-order mark"),
    "prose.sse": (b"hello, this is not a stream\n", "no SSE field"),
    "notjson.har": (b"not json at all", "not a HAR file: bad JSON"),
}


def callscope(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "callscope.tui.cli", *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)


@pytest.mark.parametrize("name", sorted(NOT_STREAMS))
@pytest.mark.parametrize("command", ["replay", "check", "import"])
def test_what_is_not_an_event_stream_is_refused(tmp_path, name: str, command: str) -> None:
    data, why = NOT_STREAMS[name]
    path = tmp_path / name
    path.write_bytes(data)
    out = tmp_path / "out.jsonl"
    args = [command, str(path)] + (["-o", str(out)] if command == "import" else [])
    run = callscope(*args)
    assert run.returncode == 2, run.stdout
    (line,) = run.stderr.splitlines()
    assert line.startswith(f"callscope: {path}") and why in line, line
    assert "ok" not in run.stdout and not out.exists()


def test_an_empty_capture_is_a_stream_of_zero_bytes(tmp_path) -> None:
    path = tmp_path / "empty.sse"
    path.write_bytes(b"")
    run = callscope("replay", str(path), "--json")
    assert run.returncode == 0, run.stderr
    (turn,) = [json.loads(line) for line in run.stdout.splitlines()]
    assert turn["complete"] is False and turn["ending"]["bytes"] == 0
    assert turn["ending"]["absent"] == "not one byte arrived"


def test_an_empty_session_file_stays_an_error(tmp_path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    run = callscope("replay", str(path))
    assert run.returncode == 2 and "empty file" in run.stderr


def test_a_stream_after_a_proxys_status_line_and_headers_is_still_read(tmp_path) -> None:
    path = tmp_path / "curl-i.sse"
    path.write_bytes(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: [DONE]\n\n")
    assert callscope("replay", str(path), "--summary").returncode == 0


def test_every_cut_prefix_of_a_real_recording_is_read_with_one_turn_record_each(tmp_path) -> None:
    """A batch as a test suite would run it: 2,000 cut prefixes (cut 0 included), one process."""
    data = (ROOT / "tests/fixtures/openai-responses/single_function_call_gpt-5_with_reasoning.sse"
            ).read_bytes()
    assert len(data) >= 2000
    paths = []
    for n in range(2000):
        path = tmp_path / f"cut{n:04}.sse"
        path.write_bytes(data[:n])
        paths.append(str(path))
    run = callscope("replay", *paths, "--json", "--summary")
    assert run.returncode == 0, run.stderr[:500]
    turns = [json.loads(line) for line in run.stdout.splitlines()]
    assert [t["source"] for t in turns] == paths and {t["kind"] for t in turns} == {"turn"}
    assert not any(c["action"] == "execute" for t in turns for c in t["calls"])
