"""The debugger's relay pipe (net/relay_events.py) on a real pipe: a capture's reads are gathered
into one line per capture (never split across its start or end, in order), its start and end
are written on the loop's next turn, a full pipe never blocks the relay's loop and loses nothing,
and lines that are not the relay's are ignored."""

from __future__ import annotations

import asyncio
import base64
import os

import orjson
import pytest
from callscope.core.session import Chunk, SessionHeader, StreamEnd
from callscope.net.relay_events import PROGRESS_BYTES, Event, EventPipe, read_event

HEADER = SessionHeader(protocol="openai-chat", source="proxy")


class Pipe:
    """Both ends of an OS pipe; the reading end read without blocking, split into events."""

    def __init__(self) -> None:
        self.r, self.w = os.pipe()
        os.set_blocking(self.r, False)
        self._pending = b""
        self.events: list[Event] = []
        self.lines = 0

    def read(self) -> list[Event]:
        """What can be read now, as events (every line must be one)."""
        while True:
            try:
                data = os.read(self.r, 1 << 20)
            except BlockingIOError:
                break
            if not data:
                break
            self._pending += data
        *lines, self._pending = self._pending.split(b"\n")
        for line in lines:
            event = read_event(line)
            assert event is not None, line[:200]
            self.events.append(event)
            self.lines += 1
        return self.events

    async def until(self, condition, turns: int = 4000) -> list[Event]:
        """Run the loop until the events read satisfy ``condition`` (a bounded number of turns:
        a failure is a failure, not a hang)."""
        for _ in range(turns):
            if condition(self.read()):
                return self.events
            await asyncio.sleep(0.001)
        raise AssertionError(f"never came: {[e.kind for e in self.events]}")

    def close(self) -> None:
        for fd in (self.r, self.w):
            os.close(fd)


@pytest.fixture
def pipe():
    made = Pipe()
    yield made
    made.close()


def reads(events: list[Event], path: str) -> list[Chunk]:
    return [c for e in events if e.kind == "chunks" and e.path == path for c in e.chunks]


def test_reads_are_gathered_a_line_per_capture_and_come_before_its_end(pipe):
    async def main() -> None:
        out = EventPipe(pipe.w, progress=3600.0)  # reads wait for an end (or the close)
        out.started("a", HEADER)
        out.started("b", HEADER)
        await pipe.until(lambda ev: len(ev) == 2)  # starts go out on the next turn
        for i in range(5):
            out.chunk("a", Chunk(i * 0.01, b"a%d;" % i))
            out.chunk("b", Chunk(i * 0.01 + 0.005, b"b%d;" % i))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert pipe.read() == pipe.events[:2]  # the reads wait (for PROGRESS)
        out.ended("a", StreamEnd("clean", at=0.05))
        events = await pipe.until(lambda ev: ev[-1].kind == "chunks")
        # a's reads before its end; the flush writes b's too (one line each)
        assert [(e.kind, e.path) for e in events] == [
            ("started", "a"), ("started", "b"), ("chunks", "a"), ("ended", "a"), ("chunks", "b")]
        assert reads(events, "a") == [Chunk(i * 0.01, b"a%d;" % i) for i in range(5)]
        assert reads(events, "b") == [Chunk(i * 0.01 + 0.005, b"b%d;" % i) for i in range(5)]
        assert events[3].end == StreamEnd("clean", at=0.05)
        out.chunk("b", Chunk(1.0, b"last"))
        out.close()  # what still waits is written at the close
        assert reads(pipe.read(), "b")[-1] == Chunk(1.0, b"last") and pipe.lines == 6

    asyncio.run(main())


def test_reads_go_out_after_progress_or_once_many_bytes_wait(pipe):
    async def main() -> None:
        out = EventPipe(pipe.w, progress=0.001)
        out.started("a", HEADER)
        out.chunk("a", Chunk(0.0, b"x"))
        out.chunk("a", Chunk(0.1, b"y"))
        events = await pipe.until(lambda ev: reads(ev, "a"))
        assert reads(events, "a") == [Chunk(0.0, b"x"), Chunk(0.1, b"y")]

        slow = EventPipe(pipe.w, progress=3600.0)
        slow.chunk("c", Chunk(0.0, b"z" * PROGRESS_BYTES))  # too much to wait for the timer
        events = await pipe.until(lambda ev: reads(ev, "c"))
        assert reads(events, "c") == [Chunk(0.0, b"z" * PROGRESS_BYTES)]

    asyncio.run(main())


def test_a_full_pipe_never_blocks_the_relays_loop_and_loses_nothing(pipe):
    piece = bytes(range(256)) * 40  # 10 KiB a read: the pipe (64 KiB) fills at once

    async def main() -> None:
        out = EventPipe(pipe.w, progress=0.0)
        assert not os.get_blocking(pipe.w)
        out.started("a", HEADER)
        ticks = 0
        for i in range(300):  # ~3 MiB while nobody reads: every call returns, the loop turns
            out.chunk("a", Chunk(float(i), piece))
            out.log(f"line {i}")
            await asyncio.sleep(0)
            ticks += 1
        assert ticks == 300
        out.ended("a", StreamEnd("cut", detail="the proxy stopped", at=3.0))
        events = await pipe.until(lambda ev: ev and ev[-1].kind == "ended", turns=100_000)
        assert [c.t for c in reads(events, "a")] == [float(i) for i in range(300)]
        assert b"".join(c.data for c in reads(events, "a")) == piece * 300
        assert [e.text for e in events if e.kind == "log"] == [f"line {i}" for i in range(300)]
        assert events[-1].end is not None and events[-1].end.kind == "cut"
        out.close()

    asyncio.run(main())


def test_a_pipe_whose_reader_is_gone_ends_the_facts_quietly():
    r, w = os.pipe()
    os.close(r)

    async def main() -> None:
        out = EventPipe(w, progress=0.0)
        out.started("a", HEADER)
        out.chunk("a", Chunk(0.0, b"x"))
        await asyncio.sleep(0.01)
        out.ended("a", StreamEnd("clean"))  # nothing raised: the sessions are on disk anyway
        out.close()

    try:
        asyncio.run(main())
    finally:
        os.close(w)


def line(obj: object) -> bytes:
    return orjson.dumps(obj)


@pytest.mark.parametrize("obj", [
    {"e": "chunks", "path": "a", "t": [0.0], "n": [3], "b64": base64.b64encode(b"ab").decode()},
    {"e": "chunks", "path": "a", "t": [0.0, 1.0], "n": [2], "b64": base64.b64encode(b"ab").decode()},
    {"e": "chunks", "path": "a", "t": [0.0], "n": [-1], "b64": ""},
    {"e": "chunks", "path": "a", "t": [0.0], "n": [2], "b64": "!!not base64!!"},
    {"e": "chunks", "path": "a", "t": "0", "n": [0], "b64": ""},
    {"e": "chunks", "path": "a", "t": ["x"], "n": [0], "b64": ""},
    {"e": "chunks", "path": "a"},
    {"e": "ended", "path": "a"},
    {"e": "started", "path": 3, "header": {}},
    {"e": 1},
    ["chunks"],
])
def test_lines_that_are_not_the_relays_are_ignored(obj):
    assert read_event(line(obj)) is None


def test_a_line_of_reads_splits_back_into_the_reads():
    data = [b"data: 1\n", b"", b"\n\ndata: 2\n\n"]
    event = read_event(line({"e": "chunks", "path": "p", "t": [0.1, 0.2, 0.3],
                             "n": [len(d) for d in data],
                             "b64": base64.b64encode(b"".join(data)).decode()}))
    assert event is not None and event.path == "p"
    assert event.chunks == tuple(Chunk(t, d) for t, d in zip((0.1, 0.2, 0.3), data, strict=True))
    assert read_event(b"callscope proxy: listening\n") is None  # the child's own output
