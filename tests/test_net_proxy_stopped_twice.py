"""A proxy stopped twice (a signal and the end of standard input, as the debugger's relay is
stopped when the debugger closes) still ends every session in flight as cut, with its time and
every byte: a second cancel landing in the cleanup of the first must not leave a ``.partial``
file behind. Loopback only."""

from __future__ import annotations

import asyncio

import pytest
from callscope.core.importers import open_input
from callscope.net.proxy import RecordingProxy, make_server
from callscope.net.relay import STOPPED, settle
from loopback import CHAT, serving
from test_net_proxy import chunks_of

REQUEST = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
           b"x-callscope-fault: stall=300,hold=30\r\nContent-Length: 16\r\n\r\n{\"stream\": true}")


async def _stop_twice_in_flight(upstream: str, directory: str, gap: int) -> bytes:
    """Serve one stalled stream through the proxy, cancel the server twice ``gap`` loop turns
    apart once the client has bytes of the body, and return what the client received."""
    proxy = RecordingProxy(upstream, directory)
    server = make_server(proxy)
    await server.start()
    serving_task = asyncio.create_task(server.serve_forever())
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(REQUEST)
    await writer.drain()
    received = b""
    while b"data:" not in received:  # the head and the first bytes of the body came through
        received += await asyncio.wait_for(reader.read(65536), 5)
    serving_task.cancel()
    for _ in range(gap):
        await asyncio.sleep(0)
    serving_task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await serving_task
    # Whatever the server's close was cut short of: a stop also cancels the tasks left, once.
    left = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()
            and "_connection" in repr(t.get_coro())]
    for task in left:
        task.cancel()
    await asyncio.gather(*left, return_exceptions=True)
    writer.close()
    return received


@pytest.mark.parametrize("gap", range(8))
def test_a_second_stop_still_ends_the_session_as_cut(tmp_path, gap):
    directory = tmp_path / "c"
    with serving(CHAT) as origin:
        received = asyncio.run(_stop_twice_in_flight(origin, str(directory), gap))
    assert not list(directory.glob(".*.partial")), "a session was left unfinished"
    [path] = directory.glob("*.jsonl")
    session = open_input(str(path))
    assert session.end.kind == "cut" and session.end.detail == STOPPED and session.end.at
    body = received.split(b"\r\n\r\n", 1)[1]
    recorded = chunks_of(path)
    assert recorded.startswith(b"data:") and b"data:" in body  # (the client's is chunk-framed)


def test_settle_waits_through_a_cancel_and_raises_it_after():
    async def run() -> list[str]:
        seen: list[str] = []

        async def slow() -> None:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                await asyncio.sleep(0.05)  # cleanup that takes loop turns
                seen.append("cleaned")
                raise

        async def waiter(inner: asyncio.Task[None]) -> None:
            inner.cancel()
            try:
                await settle(inner)
            finally:
                seen.append("after" if inner.done() else "early")

        inner = asyncio.create_task(slow())
        await asyncio.sleep(0)
        outer = asyncio.create_task(waiter(inner))
        await asyncio.sleep(0.01)
        outer.cancel()  # lands inside settle's wait
        with pytest.raises(asyncio.CancelledError):
            await outer
        return seen

    assert asyncio.run(run()) == ["cleaned", "after"]
