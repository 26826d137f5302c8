"""``callscope proxy``: client -> proxy -> serve on loopback. Responses pass through unchanged and
unbuffered, each streamed response becomes a session, faults pass through and are recorded, and
no credential reaches disk or the log."""

from __future__ import annotations

import pathlib
import time

import httpx
import orjson
import pytest
from callscope.core.importers import open_input
from callscope.core.session import REDACTED
from callscope.net.http1 import Request
from callscope.net.http1_response import Responder
from callscope.net.http1_server import BackgroundServer, HTTPServer
from callscope.net.proxy import RecordingProxy
from callscope.net.proxy import make_server as make_proxy
from loopback import ANTHROPIC, CHAT, GENERATE, post, serving

KEY = "sk-proxy-SECRET-77aa01"


class Chain:
    def __init__(self, tmp_path: pathlib.Path, upstream_url: str | None = None) -> None:
        self.dir = tmp_path / "captures"
        self.log: list[str] = []
        self.serve_log: list[str] = []
        self.started: list[str] = []
        self._servers: list[BackgroundServer] = []
        if upstream_url is None:
            upstream_url = self._start(serving(CHAT, ANTHROPIC, GENERATE, log=self.serve_log))
        self.upstream = upstream_url
        proxy = RecordingProxy(upstream_url, str(self.dir), log=self.log.append,
                               on_session=self.started.append)
        self.url = self._start(BackgroundServer(lambda: make_proxy(proxy)))

    def _start(self, server: BackgroundServer) -> str:
        self._servers.append(server)
        return server.start()

    def stop(self) -> None:
        for server in reversed(self._servers):
            server.stop()

    def sessions(self, count: int = 1, wait: float = 3.0) -> list[pathlib.Path]:
        """The finished session files, once there are ``count`` (or ``wait`` seconds passed):
        the proxy renames a session into place just after the client got the last byte."""
        deadline = time.monotonic() + wait
        while True:
            found = sorted(self.dir.glob("*.jsonl"))
            if len(found) >= count or time.monotonic() > deadline:
                return found
            time.sleep(0.02)


@pytest.fixture
def chain(tmp_path):
    c = Chain(tmp_path)
    yield c
    c.stop()


def eventually(condition, wait: float = 3.0) -> bool:
    """Whether ``condition()`` holds within ``wait`` seconds (the proxy logs and renames a
    session just after the client received the last byte)."""
    deadline = time.monotonic() + wait
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def chunks_of(path: pathlib.Path) -> bytes:
    return b"".join(c.data for c in open_input(str(path)).chunks())


def test_stream_passes_through_unchanged_and_becomes_a_session(chain):
    response, data, _ = post(chain.url, "/v1/chat/completions")
    assert response.status_code == 200 and data == CHAT.read_bytes()
    assert response.headers["x-callscope-session"] == CHAT.name  # upstream headers kept
    [path] = chain.sessions()
    session = open_input(str(path))
    assert chunks_of(path) == CHAT.read_bytes()
    assert session.end.kind == "clean" and session.header.source == "proxy"
    assert session.header.protocol == "openai-chat" and session.header.status == 200
    assert session.header.request["url"] == chain.upstream + "/v1/chat/completions"
    assert session.header.request["body"] == {"stream": True}
    assert chain.started == [str(path)]
    assert eventually(lambda: any("200 text/event-stream, 7728 B, clean" in line
                                  for line in chain.log))


def test_no_buffering_each_read_is_forwarded_when_it_arrives(chain):
    _, data, reads = post(chain.url, "/v1/chat/completions",
                          fault="chunk=100,delay=0.25,cut=300,end=clean")
    assert data == CHAT.read_bytes()[:300]
    assert len(reads) == 3 and reads[-1][0] - reads[0][0] >= 0.45  # not held back till the end
    [path] = chain.sessions()
    times = [c.t for c in open_input(str(path)).chunks()]
    assert len(times) == 3 and times[-1] - times[0] >= 0.45


@pytest.mark.parametrize(("fault", "error", "kind"), [
    ("reset=700", httpx.ReadError, "reset"), ("cut=700", httpx.RemoteProtocolError, "cut")])
def test_upstream_faults_reach_the_client_and_the_session(chain, fault, error, kind):
    with pytest.raises(error) as exc:
        post(chain.url, "/v1/messages", fault=fault)
    assert exc.value.received == ANTHROPIC.read_bytes()[:700]
    [path] = chain.sessions()
    assert open_input(str(path)).end.kind == kind
    assert chunks_of(path) == ANTHROPIC.read_bytes()[:700]


def test_http_error_on_a_streaming_request_is_recorded_with_its_body(chain):
    response, body, _ = post(chain.url, "/v1/messages", fault="status=429")
    assert response.status_code == 429 and orjson.loads(body)["type"] == "error"
    [path] = chain.sessions()
    session = open_input(str(path))
    assert session.end.kind == "http_error" and session.end.status == 429
    assert eventually(lambda: any("429 application/json" in line and "http_error" in line
                                  for line in chain.log))
    assert session.end.body == body


def test_plain_responses_pass_through_without_a_session(chain):
    response = httpx.get(chain.url + "/")
    assert response.status_code == 200 and "openai-chat" in response.text
    refused, _, _ = post(chain.url, "/v1/chat/completions", body={"stream": False})
    assert refused.status_code == 400
    assert chain.sessions(wait=0.3) == []


def test_client_disconnect_mid_stream_is_recorded_as_cut(chain):
    with httpx.Client(timeout=5) as client, client.stream(
            "POST", chain.url + "/v1/chat/completions", json={"stream": True},
            headers={"x-callscope-fault": "chunk=200,delay=0.1"}) as response:
        first = next(response.iter_raw())
    assert first
    [path] = chain.sessions()
    session = open_input(str(path))
    assert session.end.kind == "cut" and "client disconnected" in session.end.detail
    assert CHAT.read_bytes().startswith(chunks_of(path))
    recorded = len(chunks_of(path))
    assert eventually(lambda: any(  # the log gives what the session holds, not only what was sent
        f" {recorded} B, cut" in line or f", {recorded} B recorded, cut" in line
        for line in chain.log)), chain.log


def test_client_giving_up_during_an_upstream_stall_ends_the_session_now(chain):
    with pytest.raises(httpx.ReadTimeout) as exc:
        post(chain.url, "/v1/chat/completions", fault="stall=300,hold=60", timeout=0.4)
    assert exc.value.received == CHAT.read_bytes()[:300]
    [path] = chain.sessions()  # long before the upstream's 60 s hold ends
    session = open_input(str(path))
    assert session.end.kind == "cut" and "client" in session.end.detail
    assert chunks_of(path) == CHAT.read_bytes()[:300]


def test_unreachable_upstream_answers_502_and_records_the_fact(tmp_path):
    probe = BackgroundServer(lambda: HTTPServer(_echo))
    dead = probe.start()
    probe.stop()  # nothing listens there any more
    chain = Chain(tmp_path, upstream_url=dead)
    try:
        response, body, _ = post(chain.url, "/v1/chat/completions")
        assert response.status_code == 502 and b"upstream failed" in body
        [path] = chain.sessions()
        assert open_input(str(path)).end.kind == "error"
    finally:
        chain.stop()


async def _echo(request: Request, out: Responder) -> None:
    """An upstream that streams back what it received (the headers that matter here)."""
    seen = {"auth": request.header("authorization"), "custom": request.header("x-custom"),
            "target": request.target, "encoding": request.header("accept-encoding"),
            "body": request.body.decode()}
    await out.start(200, [("content-type", "text/event-stream"), ("x-upstream", "echo")])
    await out.send(b"data: " + orjson.dumps(seen) + b"\n\n")
    await out.end()


def test_requests_are_forwarded_as_sent(tmp_path):
    upstream = BackgroundServer(lambda: HTTPServer(_echo))
    chain = Chain(tmp_path, upstream_url=upstream.start())
    try:
        response, data, _ = post(chain.url, "/v1/chat/completions?x=1",
                                 headers={"authorization": "Bearer not-a-secret",
                                          "x-custom": "kept"}, body={"stream": True, "n": 2})
    finally:
        chain.stop()
        upstream.stop()
    seen = orjson.loads(data.removeprefix(b"data: "))
    assert seen == {"auth": "Bearer not-a-secret", "custom": "kept",
                    "target": "/v1/chat/completions?x=1", "encoding": "identity",
                    "body": '{"stream":true,"n":2}'}
    assert response.headers["x-upstream"] == "echo"


def test_no_key_reaches_disk_or_the_log(chain, tmp_path):
    post(chain.url, "/v1/chat/completions", headers={"authorization": f"Bearer {KEY}"})
    with pytest.raises(httpx.ReadError):
        post(chain.url, "/v1/messages", headers={"x-api-key": KEY}, fault="reset=300")
    post(chain.url, f"/v1beta/models/m:streamGenerateContent?alt=sse&key={KEY}",
         headers={"x-goog-api-key": KEY}, body={})
    sessions = chain.sessions(count=3)
    assert len(sessions) == 3
    for path in (p for p in tmp_path.rglob("*") if p.is_file()):
        assert KEY.encode() not in path.read_bytes(), path
    assert eventually(lambda: len(chain.log) == 3)
    for line in chain.log + chain.serve_log:
        assert KEY not in line
    gemini = open_input(str(sessions[-1])).header.request
    assert gemini["url"].endswith(f"alt=sse&key={REDACTED}")
    assert gemini["headers"]["x-goog-api-key"] == REDACTED


def test_openai_sdk_through_the_proxy(chain):
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=chain.url + "/v1", api_key=KEY, max_retries=0)
    args: dict[int, str] = {}
    for chunk in client.chat.completions.create(model="gpt-4o", messages=[], stream=True):
        for choice in chunk.choices:
            for tc in choice.delta.tool_calls or ():
                args[tc.index] = args.get(tc.index, "") + (tc.function.arguments or "")
    assert len(args) == 2 and all(orjson.loads(text) for text in args.values())
    [path] = chain.sessions()
    assert chunks_of(path) == CHAT.read_bytes()
    assert KEY.encode() not in path.read_bytes()


def test_anthropic_sdk_through_the_proxy(chain):
    anthropic = pytest.importorskip("anthropic")
    client = anthropic.Anthropic(base_url=chain.url, api_key=KEY, max_retries=0)
    with client.messages.stream(model="claude-x", max_tokens=10, messages=[]) as s:
        message = s.get_final_message()
    assert [b.name for b in message.content if b.type == "tool_use"] == ["get_weather"]
    [path] = chain.sessions()
    assert chunks_of(path) == ANTHROPIC.read_bytes()
