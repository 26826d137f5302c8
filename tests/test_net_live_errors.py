"""``callscope live`` given what it cannot send, or a body that does not decode: one line naming
the problem and a non-zero exit, never a traceback; and the end it reports is the end of the
stream the engine read (the decoded copy's), as that session records it. Loopback only."""

from __future__ import annotations

import gzip
import os
import pathlib
import subprocess
import sys

import pytest
from callscope.core.importers import open_input
from callscope.net.http1 import Request
from callscope.net.http1_response import Responder
from callscope.net.http1_server import BackgroundServer, HTTPServer
from callscope.net.live import build_request, record
from loopback import CHAT
from test_net_decoded import first_bad_byte

KEY = "sk-live-SECRET-4f1c9a"
ROOT = pathlib.Path(__file__).resolve().parent.parent


def run_live(tmp_path: pathlib.Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """``callscope live --headless`` as a user runs it, in a process of its own."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env.update(OPENAI_API_KEY=KEY, PYTHONIOENCODING="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "callscope.tui.cli", "live", "--headless", "-o",
         str(tmp_path / "s.jsonl"), *argv],
        capture_output=True, text=True, encoding="utf-8", env=env, cwd=ROOT, timeout=60)


CHAT_ARGS = ("--provider", "openai-chat", "--model", "m")


@pytest.mark.parametrize("extra, said", [
    (["--header", "x-gateway:caf\u00e9 \u20ac"],
     "cannot send the request: header 'x-gateway': its value has '\u20ac' at character 6; a "
     "header value holds latin-1 characters only"),
    (["--header", "x-gateway:\U0001f600"], "its value has '\U0001f600' at character 1"),
    (["--base-url", "http://[::1"],
     "cannot send to 'http://[::1/chat/completions': its [IPv6 address] is not closed or not "
     "valid"),
    (["--base-url", "http://host:notaport/v1"],
     "cannot send to 'http://host:notaport/v1/chat/completions': its port is not a number from "
     "1 to 65535"),
    (["--base-url", "http://host:99999/v1"], "its port is not a number from 1 to 65535"),
    (["--base-url", "ftp://host/v1"],
     "cannot send to 'ftp://host/v1/chat/completions': it must start http:// or https://"),
    (["--base-url", "host/v1"], "it must start http:// or https://"),
    (["--base-url", "http:///v1"], "it names no host"),
], ids=["header-euro", "header-emoji", "ipv6-unclosed", "port-word", "port-too-big", "ftp",
        "no-scheme", "no-host"])
def test_what_live_cannot_send_is_one_line_and_exit_2(tmp_path, extra, said):
    done = run_live(tmp_path, *CHAT_ARGS, *extra, "hi")
    assert "Traceback" not in done.stdout + done.stderr
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith("callscope: ") and said in line
    assert KEY not in done.stderr
    assert not list(tmp_path.glob("*s.jsonl*"))  # refused before any session was written


def test_a_captured_request_with_an_unsendable_header_is_one_line(tmp_path):
    """``--request``: the headers come from a file (hostile input), checked the same way."""
    import orjson

    captured = tmp_path / "captured.jsonl"
    captured.write_bytes(orjson.dumps({
        "callscope": "session", "version": 1, "protocol": "openai-chat",
        "request": {"method": "POST", "url": "http://127.0.0.1:9/v1/chat/completions",
                    "headers": {"x-note": "line\r\nx-injected: 1"},
                    "body": {"model": "m", "stream": True, "messages": []}}})
        + b'\n{"end": "clean"}\n')
    done = run_live(tmp_path, "--request", str(captured))
    assert "Traceback" not in done.stdout + done.stderr
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "callscope: cannot send the request: header 'x-note': its value has a line break or NUL"]


def _serve(handler):  # type: ignore[no-untyped-def]
    return BackgroundServer(lambda: HTTPServer(handler))


def test_a_latin1_header_value_is_sent_as_its_latin1_bytes(tmp_path):
    seen: list[Request] = []

    async def echo(request: Request, out: Responder) -> None:
        seen.append(request)
        await out.start(200, [("content-type", "text/event-stream")])
        await out.send(CHAT.read_bytes())
        await out.end()

    with _serve(echo) as url:
        done = run_live(tmp_path, *CHAT_ARGS, "--base-url", url + "/v1",
                        "--header", "x-gateway:caf\u00e9", "hi")
    assert "Traceback" not in done.stdout + done.stderr
    assert done.returncode == 0, done.stderr
    [request] = seen
    assert request.header("x-gateway") == "caf\u00e9"  # the byte 0xE9, read back as latin-1




PLAIN = CHAT.read_bytes()
PACKED = gzip.compress(PLAIN)
HALF = len(PACKED) // 2
CORRUPT = PACKED[:HALF] + b"\xff" * 8 + PACKED[HALF + 8:]
"""The gzip body of a whole stream, eight bytes of its compressed data overwritten mid-way."""


async def _corrupt_gzip(request: Request, out: Responder) -> None:
    await out.start(200, [("content-type", "text/event-stream"), ("content-encoding", "gzip")])
    for i in range(0, len(CORRUPT), 200):
        await out.send(CORRUPT[i:i + 200])
    await out.end()


def test_a_gzip_body_corrupt_mid_way_is_reported_as_the_decode_error(tmp_path):
    at = first_bad_byte(CORRUPT)
    assert HALF <= at < HALF + 8
    with _serve(_corrupt_gzip) as url:
        done = run_live(tmp_path, *CHAT_ARGS, "--base-url", url + "/v1", "hi")
    assert "Traceback" not in done.stdout + done.stderr
    assert done.returncode == 1  # not a clean stream
    decoded = open_input(str(tmp_path / "s.decoded.jsonl")).end
    assert decoded.kind == "error"
    assert f"the gzip body does not decode at byte {at} of the compressed stream" in (
        decoded.detail or "")
    assert f"-- stream: error ({decoded.detail}" in done.stdout  # what the decoded session says
    raw = open_input(str(tmp_path / "s.jsonl"))
    assert raw.end.kind == "clean"  # the transport delivered every byte; the raw session says so
    assert b"".join(c.data for c in raw.chunks()) == CORRUPT


def test_record_returns_the_decoded_copys_end(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with _serve(_corrupt_gzip) as url:
        request = build_request("openai-chat", "m", "hi", base_url=url + "/v1")
        result = record(request, str(tmp_path / "r.jsonl"))
    assert not result.ok and result.end.kind == "error"
    recorded = open_input(str(tmp_path / "r.decoded.jsonl")).end
    assert (result.end.kind, result.end.detail) == (recorded.kind, recorded.detail)
    assert "does not decode at byte" in (result.end.detail or "")
