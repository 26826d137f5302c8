"""net/http1.py over h11, on real loopback sockets: request targets, pipelining, HTTP/1.0,
100-continue, header validation, and the head and idle timeouts. Every test talks raw bytes."""

from __future__ import annotations

import contextlib
import re
import socket
import time

import orjson
import pytest
from callscope.net import http1
from callscope.net.http1 import Request
from callscope.net.http1_response import Responder
from callscope.net.http1_server import BackgroundServer, HTTPServer


async def _echo(request: Request, out: Responder) -> None:
    """Answers with what it was asked, streamed in two pieces."""
    await out.start(200, [("content-type", "application/json")])
    await out.send(orjson.dumps({"method": request.method, "target": request.target}))
    await out.send(orjson.dumps({"body": request.body.decode("latin-1")}))
    await out.end()


@pytest.fixture
def server():
    with BackgroundServer(lambda: HTTPServer(_echo)) as url:
        yield int(url.rsplit(":", 1)[1])


def exchange(port: int, data: bytes, *, wait: float = 2.0, shut: bool = False) -> bytes:
    """Send ``data`` on a fresh connection and read until the server closes (or ``wait``)."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as sock:
        sock.sendall(data)
        if shut:
            sock.shutdown(socket.SHUT_WR)
        received = bytearray()
        deadline = time.monotonic() + wait
        try:
            while time.monotonic() < deadline:
                got = sock.recv(65536)
                if not got:
                    break
                received += got
        except (TimeoutError, ConnectionResetError):
            pass
    return bytes(received)


def test_absolute_url_target_is_400_with_a_hint(server):
    answer = exchange(server, b"GET http://127.0.0.1:1/elsewhere HTTP/1.1\r\nHost: x\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400 ")
    assert b"origin-form" in answer and b"base URL" in answer and b"Traceback" not in answer


def test_userinfo_trick_target_is_refused(server):
    answer = exchange(server, b"POST @127.0.0.1:9/x HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400 ")


def test_connect_is_501_with_a_one_line_hint(server):
    answer = exchange(server, b"CONNECT api.openai.com:443 HTTP/1.1\r\nHost: api.openai.com\r\n\r\n")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 501 ")
    assert body.count(b"\n") == 1 and b"reverse proxy" in body and b"base URL" in body


def test_pipelined_requests_are_each_served_whole(server):
    # The second request arrives while the first is answered: its first byte must not be lost.
    two = (b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\none"
           b"POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\ntwo")
    answer = exchange(server, two)
    assert answer.count(b"HTTP/1.1 200 ") == 2
    assert b'{"method":"POST","target":"/a"}' in answer
    assert b'{"method":"POST","target":"/b"}' in answer and b'"body":"two"' in answer
    assert b"OST" not in answer.replace(b"POST", b"")


def test_http10_client_gets_a_body_ended_by_close_not_chunks(server):
    answer = exchange(server, b"POST /x HTTP/1.0\r\nContent-Length: 2\r\n\r\nhi")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ") and b"chunked" not in head.lower()
    assert body == b'{"method":"POST","target":"/x"}{"body":"hi"}'


def test_expect_100_continue_is_answered_before_the_body():
    with BackgroundServer(lambda: HTTPServer(_echo)) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=3) as sock:
            sock.sendall(b"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n"
                         b"Expect: 100-continue\r\nConnection: close\r\n\r\n")
            assert sock.recv(100).startswith(b"HTTP/1.1 100 ")  # before any body byte
            sock.sendall(b"body")
            rest = bytearray()
            while got := sock.recv(65536):
                rest += got
    assert rest.startswith(b"HTTP/1.1 200 ") and b'"body":"body"' in rest


@pytest.mark.parametrize("head", [
    b"GET / HTTP/1.1\r\nHost x\r\n\r\n",  # no colon
    b"GET / HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n",  # space in a name
    b"GET / HTTP/1.1\r\n\r\n",  # HTTP/1.1 without Host
    b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
    b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
])
def test_malformed_heads_are_a_400_line(server, head):
    answer = exchange(server, head)
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:80]
    assert answer.rstrip().count(b"\n") <= 6 and b"Traceback" not in answer


def test_oversized_head_is_431(server):
    answer = exchange(server, b"GET / HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 70_000 + b"\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 431 ")


def test_a_half_open_head_is_closed_after_the_head_timeout(monkeypatch):
    monkeypatch.setattr(http1, "HEAD_TIMEOUT", 0.3)
    with BackgroundServer(lambda: HTTPServer(_echo)) as url:
        port = int(url.rsplit(":", 1)[1])
        started = time.monotonic()
        answer = exchange(port, b"POST /x HTTP/1.1\r\nHost: x\r\n", wait=5)
    assert answer.startswith(b"HTTP/1.1 408 ") and time.monotonic() - started < 4


def test_an_idle_connection_is_closed_after_the_idle_timeout(monkeypatch):
    monkeypatch.setattr(http1, "IDLE_TIMEOUT", 0.3)
    with BackgroundServer(lambda: HTTPServer(_echo)) as url:
        port = int(url.rsplit(":", 1)[1])
        started = time.monotonic()
        answer = exchange(port, b"", wait=5)
    assert answer == b"" and time.monotonic() - started < 4


async def _broken(request: Request, out: Responder) -> None:
    raise RuntimeError("secret internal detail")


def test_a_handler_bug_is_a_500_without_its_text():
    with BackgroundServer(lambda: HTTPServer(_broken)) as url:
        answer = exchange(int(url.rsplit(":", 1)[1]), b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 500 ") and b"secret internal detail" not in answer


def test_pipelined_requests_survive_any_split_into_reads():
    """However the client's bytes are cut into writes (a byte at a time included), each request
    of a pipelined burst is served whole and in order."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    burst = b"".join(
        b"POST /r%d HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (i, len(body), body)
        for i, body in enumerate([b"", b"a", b"{\"k\": 1}", b"x" * 300]))
    burst += b"GET /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"

    with BackgroundServer(lambda: HTTPServer(_echo)) as url:
        port = int(url.rsplit(":", 1)[1])

        @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
        @given(st.lists(st.integers(1, len(burst) - 1), max_size=12, unique=True))
        def check(cuts: list[int]) -> None:
            edges = [0, *sorted(cuts), len(burst)]
            with socket.create_connection(("127.0.0.1", port), timeout=3) as sock:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                for a, b in zip(edges, edges[1:], strict=False):
                    sock.sendall(burst[a:b])
                got = bytearray()
                while chunk := sock.recv(65536):
                    got += chunk
            targets = [t.decode() for t in re.findall(rb'"target":"([^"]*)"', bytes(got))]
            assert targets == ["/r0", "/r1", "/r2", "/r3", "/last"]
            assert b'"body":"xxxxxxxx' in got and b'"body":"{\\"k\\": 1}"' in got

        check()


def test_what_a_client_pipelines_while_a_response_is_written_is_kept_up_to_the_bound(monkeypatch):
    """``client_gone`` keeps the bytes a client sends meanwhile for the next cycle (in the
    connection's own buffer, not h11's), and stops
    reading once they pass MAX_HEAD_BYTES + MAX_BODY_BYTES (the rest stays in the socket), or
    returns when the client closes; no timing: the reader is fed by the test."""
    import asyncio

    monkeypatch.setattr(http1, "MAX_BODY_BYTES", 1000)
    bound = http1.MAX_HEAD_BYTES + 1000

    async def probe(sent: int, eof: bool) -> tuple[int, int, bool, bool]:
        reader = asyncio.StreamReader()
        reader.feed_data(b"x" * sent)
        if eof:
            reader.feed_eof()
        connection = http1.Connection(reader, None)  # type: ignore[arg-type]
        task = asyncio.ensure_future(connection.client_gone())
        for _ in range(50):  # as many turns of the loop as the reads need
            await asyncio.sleep(0)
        done = task.done()
        task.cancel()
        assert not connection.h11.trailing_data[0]  # h11 gets them at the next cycle
        kept = len(connection.held)
        return kept, sent - kept, done, connection.closed_by_client

    kept, unread, done, closed = asyncio.run(probe(4 * bound, eof=False))
    assert bound < kept <= bound + http1.READ_SIZE and unread > 0 and not done and not closed
    kept, unread, done, closed = asyncio.run(probe(bound // 2, eof=True))
    assert (kept, unread, done, closed) == (bound // 2, 0, True, True)


# -- what a hostile client can hold ------------------------------------------------------------

PING = b"GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"

def test_a_huge_head_pipelined_during_a_stream_is_refused_without_being_parsed(monkeypatch):
    """A 3 MB head pipelined while a response streams is read meanwhile (``client_gone``), but
    h11 is handed it a read at a time as it asks, so it refuses it after two reads instead of
    parsing all of it on the event loop (which blocked every other client ~1 s); another
    client is served before and after. Measured by what h11 is given, not by time."""
    import h11

    fed: list[int] = []
    receive = h11.Connection.receive_data
    monkeypatch.setattr(h11.Connection, "receive_data",
                        lambda self, data: (fed.append(len(data)), receive(self, data))[1])

    async def stream(request: Request, out: Responder) -> None:
        if request.path == "/ping":
            await out.send_full(200, [], b"pong")
            return
        await out.start(200, [("content-type", "text/event-stream")])
        await out.send(b"data: 1\n\n")
        await out.client_gone()  # the client half-closes once the whole head is sent
        await out.send(b"data: 2\n\n")
        await out.end()

    head = b"GET /next HTTP/1.1\r\nHost: x\r\n" + b"a: b\r\n" * 500_000 + b"\r\n"
    with BackgroundServer(lambda: HTTPServer(stream)) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"POST /stream HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
            assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
            assert exchange(port, PING).endswith(b"pong")
            sock.sendall(head)
            sock.shutdown(socket.SHUT_WR)
            answer = bytearray()
            with contextlib.suppress(ConnectionResetError):
                while got := sock.recv(65536):
                    answer += got
        assert exchange(port, PING).endswith(b"pong")
    assert b"data: 2\n\n\r\n0\r\n\r\nHTTP/1.1 431 " in answer  # the stream ended, then the 431
    assert len(head) > 3_000_000 and sum(fed) < 4 * http1.MAX_HEAD_BYTES


def test_a_body_trickled_just_inside_the_per_read_timeout_is_closed_at_the_deadline(monkeypatch):
    """BODY_TIMEOUT bounds each read; BODY_DEADLINE the whole body (patched small: a byte every
    0.1 s never trips the 60 s per-read timeout, and would hold the connection for ever)."""
    monkeypatch.setattr(http1, "BODY_DEADLINE", 0.5)
    with BackgroundServer(lambda: HTTPServer(_echo)) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=3) as sock:
            sock.sendall(b"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
            answer = b""
            with contextlib.suppress(OSError):
                for _ in range(60):  # 6 s of trickling, unless the server answers first
                    sock.sendall(b"x")
                    time.sleep(0.1)
            with contextlib.suppress(OSError):
                answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 408 ") and b"took too long" in answer


def test_a_connection_past_the_cap_is_a_503_and_a_freed_slot_serves_again(monkeypatch):
    monkeypatch.setattr(http1, "MAX_CONNECTIONS", 2)
    ask = b"GET /x HTTP/1.1\r\nHost: x\r\n\r\n"
    with BackgroundServer(lambda: HTTPServer(_echo)) as url:
        port = int(url.rsplit(":", 1)[1])
        held = [socket.create_connection(("127.0.0.1", port), timeout=3) for _ in range(2)]
        for sock in held:  # each served once and kept alive: both are counted
            sock.sendall(ask)
            assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
        refused = exchange(port, ask)
        assert refused.startswith(b"HTTP/1.1 503 ") and b"connection: close" in refused.lower()
        held.pop().close()
        for _ in range(100):  # the server sees the close when its loop gets to it
            answer = exchange(port, ask + b"GET /y HTTP/1.1\r\nHost: x\r\nConnection: close"
                              b"\r\n\r\n")
            if not answer.startswith(b"HTTP/1.1 503 "):
                break
            time.sleep(0.05)
        for sock in held:
            sock.close()
    assert answer.startswith(b"HTTP/1.1 200 ") and b'"target":"/y"' in answer


BAD_HEADER = b"GET / HTTP/1.1\r\nHost: x\r\n<script>\x1b]0 x: 1\r\n\r\n"
BAD_TARGET = b"GET <script>x?key=SECRET HTTP/1.1\r\nHost: x\r\n\r\n"


def test_a_refused_head_is_answered_in_fixed_words_never_its_own_bytes(server):
    """h11's messages quote the offending line, and the target hint quoted the target: the
    answer names the problem class only, as text that must not be sniffed as anything else."""
    bad_header, bad_target = exchange(server, BAD_HEADER), exchange(server, BAD_TARGET)
    for answer in (bad_header, bad_target):
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400 ") and b"x-content-type-options: nosniff" in head
        assert b"script" not in body and b"SECRET" not in body and body.count(b"\n") == 1
    assert b"malformed request" in bad_header and b"origin-form" in bad_target


def test_a_refusal_is_logged_with_the_target_redacted_never_h11s_quote():
    """The log says the problem, and a refused target redacted and escaped; never h11's quote
    of a malformed line (it may be a credential header sent without its colon)."""
    log: list[str] = []
    with BackgroundServer(lambda: HTTPServer(_echo, log=log.append)) as url:
        port = int(url.rsplit(":", 1)[1])
        exchange(port, BAD_HEADER)
        exchange(port, BAD_TARGET)
    assert log[0] == "refused a request: 400 malformed request"
    assert "<script>x?key=[REDACTED]" in log[1] and "SECRET" not in log[1] and len(log) == 2


@pytest.mark.parametrize(("target", "path", "query"), [
    ("//evil.com/v1/chat/completions", "//evil.com/v1/chat/completions", {}),
    ("/v1/x?a=1&b=#frag?c=2", "/v1/x", {"a": ["1"], "b": [""]}),
    ("/v1/x#f?a=1", "/v1/x", {}),
    ("/a%2F//b;p?q=%2F", "/a%2F//b;p", {"q": ["/"]}),
])
def test_the_path_is_the_target_up_to_its_query_as_sent(target, path, query):
    request = Request("GET", target, [], b"")
    assert (request.path, request.query) == (path, query)
