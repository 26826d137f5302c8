"""Hostile request targets, header bytes and upstream URLs against ``callscope proxy``, on real
loopback sockets: a dot segment (raw or percent-encoded) never takes a request outside the
upstream's path prefix, a header value of any bytes h11 accepts is forwarded byte for byte (never
a 500), and an ``--upstream`` with a query or fragment is refused before anything listens."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from callscope.core.errors import CallscopeError
from callscope.net.http1 import Request
from callscope.net.http1_response import Responder
from callscope.net.http1_server import BackgroundServer, HTTPServer
from callscope.net.proxy import RecordingProxy, check_upstream, make_server

PREFIX = "/prefix/v1"


class Upstream:
    """A loopback upstream that keeps every request it was sent and answers a small stream."""

    def __init__(self) -> None:
        self.seen: list[Request] = []
        self.server = BackgroundServer(lambda: HTTPServer(self._handle))
        self.url = self.server.start()

    async def _handle(self, request: Request, out: Responder) -> None:
        self.seen.append(request)
        await out.start(200, [("content-type", "text/event-stream")])
        await out.send(b'data: {"n":1}\n\n')
        await out.end()


class Proxied:
    """The proxy in front of :class:`Upstream`, configured with the upstream ``PREFIX``."""

    def __init__(self, directory: str) -> None:
        self.origin = Upstream()
        self.log: list[str] = []
        proxy = RecordingProxy(self.origin.url + PREFIX, directory, log=self.log.append)
        self.server = BackgroundServer(lambda: make_server(proxy))
        self.url = self.server.start()
        self.port = int(self.url.rsplit(":", 1)[1])

    def stop(self) -> None:
        self.server.stop()
        self.origin.server.stop()

    def send(self, data: bytes, wait: float = 3.0) -> bytes:
        """``data`` sent on a new connection; every byte answered until the proxy closes it."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=wait) as sock:
            sock.sendall(data)
            got = bytearray()
            try:
                while chunk := sock.recv(65536):
                    got += chunk
            except TimeoutError:
                pass
        return bytes(got)


@pytest.fixture
def proxied(tmp_path) -> Iterator[Proxied]:
    made = Proxied(str(tmp_path / "captures"))
    yield made
    made.stop()


def _post(target: str, *headers: bytes) -> bytes:
    return (f"POST {target} HTTP/1.1\r\n".encode() + b"Host: x\r\n" + b"".join(
        h + b"\r\n" for h in headers) + b"Content-Length: 16\r\nConnection: close\r\n\r\n"
        b'{"stream": true}')


def _body(answer: bytes) -> bytes:
    return answer.partition(b"\r\n\r\n")[2]


# -- 1. a dot segment never leaves the upstream's path prefix ------------------------------------

DOT_TARGETS = [
    "/../../admin", "/./chat/completions", "/chat/..", "/chat/.", "/a/%2e%2e/x", "/a/%2E%2e/x",
    "/a/%2e/x", "/a/.%2E/x", "/a/%2e./x", "/%2e%2e/%2e%2e/admin?stream=1",
    # segments as servers that read ``\``, ``%5C`` or ``%2F`` as ``/`` see them
    "/..\\..\\admin", "/a/..%5cadmin", "/a/..%2Fadmin", "/a/%2e%2e%2fadmin",
    # a ``;name=value`` path parameter dropped from the segment leaves ``..``
    "/..;/admin", "/a/%2e%2e;x=1/admin",
]


@pytest.mark.parametrize("target", DOT_TARGETS)
def test_a_dot_segment_in_the_path_is_refused_and_never_reaches_the_upstream(proxied, target):
    answer = proxied.send(_post(target))
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    assert _body(answer) == b"callscope proxy: the request path must not have a . or .. segment\n"
    assert proxied.origin.seen == []
    assert any("400 (a dot segment in the path)" in line for line in proxied.log), proxied.log
    assert b"Traceback" not in answer and not any("internal error" in x for x in proxied.log)


@pytest.mark.parametrize("target", [
    "/chat/completions", "/a.b/..c/x...", "/model/us.anthropic.claude-v1%3A0/invoke",
    "/a/%2e%2ex/b", "/a/x?next=/../../admin", "/a/.hidden", "/a/%252e%252e/b",
    # ambiguous, but with no dot segment: forwarded as sent, under the prefix
    "//evil.com/x", "/a\\b", "/a%5Cb", "/a;x=1/b", "/a/..x;/b"])
def test_a_path_without_a_dot_segment_keeps_the_upstream_prefix(proxied, target):
    answer = proxied.send(_post(target))
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]
    [seen] = proxied.origin.seen
    assert seen.target == PREFIX + target


def test_the_upstream_prefix_is_kept_under_a_query_that_looks_like_a_path(proxied):
    proxied.send(_post("/chat/completions?x=%2e%2e/admin#frag"))
    [seen] = proxied.origin.seen
    assert seen.path == PREFIX + "/chat/completions"


# -- 2. a header value is forwarded as bytes ----------------------------------------------------

def test_a_non_ascii_header_value_is_forwarded_byte_for_byte_not_answered_500(proxied):
    answer = proxied.send(_post("/chat/completions", b"X-Name: caf\xc3\xa9 \xff\x80",
                                b"X-Plain: 1"))
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]
    assert b'data: {"n":1}' in answer
    [seen] = proxied.origin.seen
    assert seen.header("x-name") is not None
    assert seen.header("x-name").encode("latin-1") == b"caf\xc3\xa9 \xff\x80"
    assert seen.header("x-plain") == "1" and seen.header("accept-encoding") == "identity"
    assert not any("internal error" in line for line in proxied.log), proxied.log


def test_a_non_ascii_header_name_is_refused_by_the_parser_with_400(proxied):
    answer = proxied.send(_post("/chat/completions", b"X-\xc3\xa9: 1"))
    assert answer.startswith(b"HTTP/1.1 400 ") and b"\xc3" not in answer
    assert proxied.origin.seen == []


def test_a_non_ascii_header_value_on_an_upgrade_request_is_forwarded_too(proxied):
    """The WebSocket tunnel writes the head itself: the same bytes reach the upstream."""
    answer = proxied.send(_post("/realtime", b"Upgrade: websocket", b"X-Name: caf\xc3\xa9")
                          .replace(b"Content-Length: 16\r\n", b"").removesuffix(
                              b'{"stream": true}'))
    assert not answer.startswith(b"HTTP/1.1 500 "), answer[:200]
    [seen] = proxied.origin.seen
    assert seen.header("x-name").encode("latin-1") == b"caf\xc3\xa9"


# -- 3. the upstream URL has no query and no fragment ---------------------------------------------

@pytest.mark.parametrize("upstream", [
    "http://127.0.0.1:9/v1?key=k", "https://h.example/v1#x", "http://h.example?", "http://h/#"])
def test_an_upstream_with_a_query_or_a_fragment_is_refused(upstream):
    with pytest.raises(CallscopeError) as refused:
        check_upstream(upstream)
    message = str(refused.value)
    assert "\n" not in message and "query or fragment" in message
    assert "key=k" not in message  # a query may carry a key: the refusal does not repeat it


def test_an_upstream_without_a_query_is_kept_without_its_trailing_slash():
    assert check_upstream("http://h.example/prefix/v1/") == "http://h.example/prefix/v1"


@pytest.mark.parametrize("mode", [["--headless"], []])
def test_the_proxy_command_refuses_such_an_upstream_before_it_listens(tmp_path, monkeypatch,
                                                                       capsys, mode):
    from callscope.tui import cli, net_commands
    from callscope.tui.captures import ProxyApp

    ran: list[str] = []
    monkeypatch.setattr(net_commands, "_run", lambda *a, **k: ran.append("listened") or 0)
    monkeypatch.setattr(ProxyApp, "run", lambda self, *a, **k: ran.append("screen"))
    monkeypatch.setattr(ProxyApp, "wait_relay", lambda self: None)
    code = cli.main(["proxy", *mode, "--upstream", "http://127.0.0.1:9/v1?key=SECRET-1",
                     "--dir", str(tmp_path / "c")])
    err = capsys.readouterr().err
    assert code == 2 and ran == []
    assert err.startswith("callscope: --upstream ") and err.count("\n") == 1, err
    assert "query or fragment" in err and "SECRET-1" not in err
