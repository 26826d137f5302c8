"""The mitmproxy addon (net/mitm.py): its logic over duck-typed flows (always), and a real
``mitmdump`` in reverse mode on loopback when one is there (``MITMDUMP=/path/to/mitmdump``, or
one on PATH; mitmproxy is not in the test extra: for Python 3.11 it pins h11 < 0.15, and the
proxy needs h11 >= 0.16)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from types import SimpleNamespace

import httpx
import pytest
from callscope.core.importers import open_input
from callscope.net.mitm import CallscopeAddon
from loopback import CHAT, post, serving

KEY = "sk-mitm-SECRET-9"


class Headers:
    """mitmproxy's Headers as the addon reads them: raw (name, value) byte pairs."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self.fields = [(k.encode(), v.encode()) for k, v in pairs]


def flow(path: str, content_type: str, status: int = 200, body: bytes = b'{"stream": true}'):
    request = SimpleNamespace(
        method="POST", path=path, pretty_url=f"https://api.example.com{path}", content=body,
        headers=Headers([("Authorization", f"Bearer {KEY}"), ("x-portkey-api-key", KEY),
                         ("content-type", "application/json")]))
    response = SimpleNamespace(status_code=status, stream=None,
                               headers=Headers([("content-type", content_type)]))
    return SimpleNamespace(request=request, response=response, metadata={}, error=None)


def chunks_of(path) -> bytes:
    return b"".join(c.data for c in open_input(str(path)).chunks())


def test_a_streamed_response_becomes_a_session_chunk_by_chunk(tmp_path):
    addon = CallscopeAddon(str(tmp_path))
    f = flow(f"/v1/chat/completions?key={KEY}", "text/event-stream; charset=utf-8")
    addon.requestheaders(f)
    addon.responseheaders(f)
    data = CHAT.read_bytes()
    relayed = [f.response.stream(data[i:i + 1000]) for i in range(0, len(data), 1000)]
    assert b"".join(relayed) == data  # forwarded unchanged
    assert f.response.stream(b"") == b""
    addon.response(f)
    [path] = tmp_path.glob("*.jsonl")
    session = open_input(str(path))
    assert chunks_of(path) == data and len(list(session.chunks())) == 8
    assert session.end.kind == "clean" and session.header.protocol == "openai-chat"
    assert session.header.source == "mitmproxy" and KEY.encode() not in path.read_bytes()


def test_an_error_mid_stream_ends_the_session_as_cut_with_the_bytes(tmp_path):
    addon = CallscopeAddon(str(tmp_path))
    f = flow("/v1/messages", "text/event-stream")
    addon.requestheaders(f)
    addon.responseheaders(f)
    f.response.stream(b"event: message_start\n")
    f.error = SimpleNamespace(msg="peer closed connection without sending complete message body")
    addon.error(f)
    [path] = tmp_path.glob("*.jsonl")
    end = open_input(str(path)).end
    assert end.kind == "cut" and "peer closed" in end.detail
    assert chunks_of(path) == b"event: message_start\n"


def test_an_http_error_to_a_streaming_request_keeps_its_body_and_others_pass(tmp_path):
    addon = CallscopeAddon(str(tmp_path), redact=["x-team"])
    f = flow("/v1/messages", "application/json", status=529)
    addon.requestheaders(f)
    addon.responseheaders(f)
    f.response.stream(b'{"type":"error","error":{"type":"overloaded_error"}}')
    f.response.stream(b"")
    plain = flow("/v1/models", "application/json", body=b"")
    addon.requestheaders(plain)
    addon.responseheaders(plain)
    assert plain.response.stream is None  # not a stream: mitmproxy handles it as usual
    [path] = tmp_path.glob("*.jsonl")
    end = open_input(str(path)).end
    assert end.kind == "http_error" and end.status == 529 and b"overloaded_error" in end.body


def _mitmdump() -> str | None:
    return os.environ.get("MITMDUMP") or shutil.which("mitmdump")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.skipif(_mitmdump() is None, reason="no mitmdump (set MITMDUMP=/path/to/mitmdump)")
def test_a_real_mitmdump_with_the_addon_records_streams(tmp_path):
    import callscope.net.mitm as mitm

    port = _free_port()
    with serving(CHAT) as origin:
        proc = subprocess.Popen(
            [_mitmdump(), "-q", "-s", mitm.__file__, "--mode", f"reverse:{origin}",
             "--listen-host", "127.0.0.1", "--listen-port", str(port),
             "--set", f"callscope_dir={tmp_path}", "--set", "callscope_redact=x-team"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 30
            while True:  # mitmdump takes a few seconds to start
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
                    assert time.monotonic() < deadline, "mitmdump did not listen"
                    time.sleep(0.1)
            url = f"http://127.0.0.1:{port}"
            response, data, _ = post(url, "/v1/chat/completions",
                                     headers={"authorization": f"Bearer {KEY}", "x-team": KEY})
            with pytest.raises(httpx.TransportError):
                post(url, "/v1/chat/completions", fault="cut=700")
            deadline = time.monotonic() + 10
            while len(list(tmp_path.glob("*.jsonl"))) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    assert response.status_code == 200 and data == CHAT.read_bytes()
    paths = sorted(tmp_path.glob("*.jsonl"))
    sessions = [open_input(str(p)) for p in paths]
    ends = sorted(s.end.kind for s in sessions)
    assert ends == ["clean", "cut"], ends
    clean = next(p for p, s in zip(paths, sessions, strict=True) if s.end.kind == "clean")
    assert chunks_of(clean) == CHAT.read_bytes()
    cut = next(p for p, s in zip(paths, sessions, strict=True) if s.end.kind == "cut")
    assert chunks_of(cut) == CHAT.read_bytes()[:700]
    for p in paths:
        assert KEY.encode() not in p.read_bytes()
