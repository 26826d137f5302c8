"""What the network tests share: the recordings they serve, ``callscope serve``'s emulator as a
loopback server, and a streaming POST that keeps every read with its time. Loopback only."""

from __future__ import annotations

import asyncio
import pathlib
import threading
import time
from typing import Any

import httpx
from callscope.net.http1_server import BackgroundServer
from callscope.net.serve import Emulator, make_server
from callscope.net.serve_faults import Faults
from callscope.net.serve_sessions import Loaded, load

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
CHAT = FIXTURES / "openai-chat" / "parallel_tool_calls_two_functions.sse"
CHAT_TEXT = FIXTURES / "openai-chat" / "plain_text_stop.sse"
RESPONSES = FIXTURES / "openai-responses" / "single_function_call_gpt-5_with_reasoning.sse"
ANTHROPIC = FIXTURES / "anthropic" / "tool_use_text_then_tool.sse"
INTERACTIONS = (FIXTURES / "gemini-interactions"
                / "steps_schema_function_call_requires_action.reconstructed.sse")
GENERATE = (FIXTURES / "gemini-generatecontent"
            / "gemini_api_complete_functionCall_one_chunk.reconstructed.sse")
FAST = Faults(delay=0)
"""No pacing: the recordings stream as fast as the socket takes them."""


def serving(*paths: pathlib.Path | str, defaults: Faults = FAST, log: list[str] | None = None,
            sessions: list[Loaded] | None = None) -> BackgroundServer:
    """The emulator over ``paths`` (or ready ``sessions``), not started yet: ``with serving(...)
    as url`` runs it for the block; ``log`` collects its log lines."""
    loaded = sessions if sessions is not None else [load(str(p)) for p in paths]
    emulator = Emulator(loaded, defaults, log=(log.append if log is not None else None))
    return BackgroundServer(lambda: make_server(emulator))


def post(url: str, path: str, *, body: dict[str, Any] | None = None, fault: str | None = None,
         timeout: float = 5.0, headers: dict[str, str] | None = None,
         ) -> tuple[httpx.Response, bytes, list[tuple[float, bytes]]]:
    """POST and read the raw body; returns (response, bytes, reads as (seconds, bytes)). Raises
    transport errors after attaching what was read to the exception (``exc.received``)."""
    hdrs = dict(headers or {})
    if fault is not None:
        hdrs["x-callscope-fault"] = fault
    reads: list[tuple[float, bytes]] = []
    t0 = time.monotonic()
    with httpx.Client(timeout=httpx.Timeout(timeout)) as client:
        with client.stream("POST", url + path, json=body if body is not None else {"stream": True},
                           headers=hdrs) as response:
            try:
                for data in response.iter_raw():
                    reads.append((time.monotonic() - t0, data))
            except httpx.TransportError as exc:
                exc.received = b"".join(d for _, d in reads)  # type: ignore[attr-defined]
                raise
    return response, b"".join(d for _, d in reads), reads


class SocketUpstream:
    """A loopback upstream on bare sockets, in a thread of its own: a subclass answers each
    connection in :meth:`serve` (what h11 or httpx would tidy away reaches it as sent)."""

    def __init__(self) -> None:
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(),), daemon=True)
        self._thread.start()
        assert self._ready.wait(5)

    async def _main(self) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        server = await asyncio.start_server(self.serve, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stop.wait()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(5)
