"""WebSocket upgrades through ``callscope proxy``, passed on untouched.

A request that asks to switch protocols (``Upgrade: websocket``: OpenAI's Realtime and
Responses WebSocket modes, Gemini Live) is sent to the upstream on a connection of its own,
head as the client wrote it (``Host`` the upstream's); the upstream's answer goes back as it
came. After a ``101 Switching Protocols`` the bytes are copied both ways, unread and
unrecorded (callscope records HTTP streams; a WebSocket session is not one), until either side
closes. Any other answer is relayed whole and the connection closed.

An upgrade request with a body (``Content-Length`` above 0, or any ``Transfer-Encoding``) is
refused with 400 and never reaches the upstream: the head is forwarded as sent, so the bytes
after it would be read by the upstream under its own framing (a chunked body goes on decoded,
so its text is parsed as chunks again), which lets a client smuggle a request past the proxy.
A WebSocket handshake has no body (RFC 6455 4.1).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Callable
from urllib.parse import urlsplit

from .http1 import MAX_HEAD_BYTES, Request
from .http1_response import REFUSAL_HEADERS, Responder

CONNECT_TIMEOUT = 10.0
HEAD_TIMEOUT = 60.0
COPY_SIZE = 64 * 1024
_NOT_FORWARDED = frozenset({"host", "proxy-authorization", "proxy-connection"})


def wants_upgrade(request: Request) -> bool:
    return "websocket" in (request.header("upgrade") or "").lower()


def body_problem(request: Request) -> str | None:
    """Why an upgrade request is not tunnelled because of its body (one line), or None."""
    names = {name.lower() for name, _ in request.headers}
    if "transfer-encoding" in names:
        return "an upgrade request must not have a Transfer-Encoding"
    length = (request.header("content-length") or "0").strip()
    if request.body or not (length.isdigit() and int(length) == 0):
        return "an upgrade request must not have a body"
    return None


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                count: list[int]) -> None:
    with contextlib.suppress(ConnectionError, OSError):
        while data := await reader.read(COPY_SIZE):
            writer.write(data)
            count[0] += len(data)
            await writer.drain()
    with contextlib.suppress(ConnectionError, OSError, RuntimeError):
        if writer.can_write_eof():
            writer.write_eof()


async def tunnel(url: str, request: Request, out: Responder,
                 log: Callable[[str], object], shown: str) -> None:
    """Send the upgrade request to ``url`` and join the two connections."""
    problem = body_problem(request)
    if problem is not None:
        log(f"{shown} -> 400 ({problem})")
        await out.send_full(400, REFUSAL_HEADERS, f"callscope proxy: {problem}\n".encode(),
                            keep_alive=False)
        return
    parts = urlsplit(url)
    secure = parts.scheme == "https"
    port = parts.port or (443 if secure else 80)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    try:
        async with asyncio.timeout(CONNECT_TIMEOUT):
            up_reader, up_writer = await asyncio.open_connection(
                parts.hostname, port, ssl=ssl.create_default_context() if secure else None,
                limit=MAX_HEAD_BYTES)
    except (OSError, TimeoutError) as exc:
        log(f"{shown} -> upstream failed (websocket: {exc})")
        await out.send_full(502, [("content-type", "text/plain; charset=utf-8")],
                            b"callscope proxy: upstream failed\n", keep_alive=False)
        return
    host = parts.netloc.rpartition("@")[2]
    head = [f"{request.method} {target} HTTP/1.1", f"Host: {host}", *(
        f"{k}: {v}" for k, v in request.headers if k.lower() not in _NOT_FORWARDED)]
    up_writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
    try:
        async with asyncio.timeout(HEAD_TIMEOUT):
            answer = await up_reader.readuntil(b"\r\n\r\n")
    except (OSError, TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        up_writer.close()
        log(f"{shown} -> upstream gave no answer to the upgrade")
        await out.send_full(502, [("content-type", "text/plain; charset=utf-8")],
                            b"callscope proxy: no answer from upstream\n", keep_alive=False)
        return
    status = answer.split(b" ", 2)[1][:3] if answer.count(b" ") >= 1 else b"?"
    client_reader, client_writer, pending = out.take_connection()
    client_writer.write(answer)  # the upstream's head, as it came
    if pending:
        up_writer.write(pending)  # what the client sent after its head
    down, up = [0], [len(pending)]
    await asyncio.gather(_copy(up_reader, client_writer, down),
                         _copy(client_reader, up_writer, up) if status == b"101" else _noop())
    for writer in (up_writer, client_writer):
        writer.close()
    log(f"{shown} -> {status.decode('latin-1')} websocket, {up[0]} B up, {down[0]} B down")


async def _noop() -> None:
    return None
