"""The debugger under a live stream of 10,000 events a second (issue 8, faults under load).

``python -m bench.live_bench`` (or ``python -m bench.run --only live``): a synthesized turn is
saved as a session and served by ``callscope serve`` in a child process (its own interpreter, as
a provider would be) paced at ``--rate`` SSE events a second; ``LiveApp`` (what ``callscope
live`` runs) requests it on loopback under Textual's pilot (headless) and, while the stream
pours in, a simulated user presses keys. Measured:

* **key latency**: from the key being posted to the app until the app has handled every message
  queued before it (the stream's reads included), the key itself and what it posted to the
  panes, and the screen is painted. Step (``left``/``right``), seek (``home`` and a jump to a
  random step) and follow (``end``). This is what a user waits for; the stream's backlog in the
  app's queue is part of it.
* **display lag**: how old the oldest received byte not yet on screen is, just before each
  refresh of the panes (the follower's throttled refresh), and how long after the last byte
  arrived the panes show everything (catch-up).
* **queue delay**: from a read arriving (the worker thread posts it) to the app feeding it to the
  engine.
* **bytes**: the session file written while the stream arrived, and the timeline the panes show,
  hold exactly the bytes the server sent; the stream is cut at the end (the terminal event is
  never sent, the transport ends cleanly) and every call is refused as truncated.

Times are wall clock on a shared machine (CPU time of the app process beside them). The numbers
are reported, never asserted: ``tests/test_live_load.py`` runs this on a small stream and checks
the byte and refusal properties only.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import cProfile
import io
import os
import pstats
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: python bench/live_bench.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "bench"

from .streams import BenchStream, Spec, build, human  # noqa: E402

SIZE = (200, 50)
KEYS: tuple[tuple[str, str], ...] = (("step", "left"), ("step", "right"), ("seek", "home"),
                                     ("seek", "goto"), ("follow", "end"))
"""One round of the simulated user: what each key is counted as, and the key (``goto``: a jump
to a random step, posted to the app's queue as a key would be)."""


@dataclass
class LiveLoad:
    protocol: str
    rate: float
    """Events a second the server was asked for."""
    events: int
    """SSE events sent (the stream cut before its terminal event)."""
    wire: int
    reads: int
    """Network reads the app received (each one a message to the app)."""
    arrival_rate: float
    """Events a second as they arrived (events sent / seconds from the first to the last read)."""
    duration: float
    keys: dict[str, list[float]]
    """Latency of each key press, by kind (seconds)."""
    stale: list[float]
    """Display lag just before each refresh of the panes (seconds)."""
    catch_up: float
    """From the last byte's arrival until the panes showed every byte."""
    queue: list[float]
    """From a read's arrival to the app feeding it to the engine (seconds)."""
    cpu: float
    """CPU seconds of the app's process (every thread) while the stream arrived."""
    recorded_ok: bool
    """The session file holds exactly the bytes sent."""
    shown_ok: bool
    """The timeline the panes show holds exactly the bytes sent."""
    end: str
    decisions: dict[str, int]
    """Final decisions by ``action reason``."""
    calls: int
    cpu_split: dict[str, float] = field(default_factory=dict)
    """CPU seconds by thread and part: reader (the worker: HTTP reads, session file), app (the
    app's thread, all of it), engine and refresh (parts of the app's)."""
    profile: str = ""
    moved: dict[str, int] = field(default_factory=dict)
    """Keys whose effect was checked and missing (should be empty)."""


def pct(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def frame_chunks(stream: BenchStream) -> list[tuple[float, bytes]]:
    """The stream as one read per event (a provider flushing each event as it is produced)."""
    from callscope.core.sse import decode_all

    return [(0.0, stream.data[f.start:f.end]) for f in decode_all(stream.data)]


@contextlib.contextmanager
def serving(session: str, rate: float) -> Iterator[str]:
    """``callscope serve SESSION --rate RATE`` as a child process; yields its URL."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "callscope.tui.cli", "serve", session,
                             "--rate", f"{rate:g}"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        match = re.search(r"http://\S+", proc.stdout.readline())
        if match is None:
            raise RuntimeError("callscope serve did not print its URL")
        yield match[0]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _probe_app(request: Any, path: str) -> Any:
    """A ``LiveApp`` that notes when each read arrives, when the app fed it to the engine, and
    what each refresh of the panes showed. Only observes: the app's code runs unchanged."""
    import callscope.tui.app
    from callscope.tui.live import LiveApp

    class Probe(LiveApp):  # type: ignore[misc]
        # Textual reads CSS_PATH beside the class's own module: point it back at the app's.
        CSS_PATH = str(Path(callscope.tui.app.__file__).with_name(LiveApp.CSS_PATH))

        def __init__(self) -> None:
            super().__init__(request, path, timeout=120.0)
            self.received = 0
            self.arrivals: list[tuple[float, int]] = []
            """(time, bytes received so far), from the worker thread."""
            self.queue: list[float] = []
            self.refreshes: list[tuple[float, int]] = []
            """(time, bytes in the timeline) after each refresh of the panes."""
            self.cpu: dict[str, float] = collections.defaultdict(float)
            """CPU seconds: the reader thread, and the engine and the pane refreshes (both in
            the app's thread)."""
            self._arrived: collections.deque[float] = collections.deque()
            extend = self.stream.extend

            def timed_extend(t: float | None, data: bytes) -> int:
                c = time.thread_time()
                try:
                    return int(extend(t, data))
                finally:
                    self.cpu["engine"] += time.thread_time() - c

            self.stream.extend = timed_extend  # the app feeds the engine through this
            put = self.inbox.put

            def timed_put(chunk: Any) -> None:  # the worker thread hands a read to the app
                self.received += len(chunk.data)
                arrived = time.perf_counter()
                self.arrivals.append((arrived, self.received))
                self._arrived.append(arrived)
                put(chunk)

            self.inbox.put = timed_put

        def _record(self) -> None:
            c = time.thread_time()
            try:
                super()._record()
            finally:
                self.cpu["reader"] += time.thread_time() - c

        def take_chunk(self, chunk: Any) -> None:  # in the app's thread, in arrival order
            self.queue.append(time.perf_counter() - self._arrived.popleft())
            super().take_chunk(chunk)

        def watch_refreshes(self) -> None:
            follower = self.follower
            original = follower._refresh

            def refresh() -> None:
                c = time.thread_time()
                original()
                self.cpu["refresh"] += time.thread_time() - c
                self.refreshes.append((time.perf_counter(), self.stream.total_bytes))

            follower._refresh = refresh  # grew() schedules follower._refresh: this one

    return Probe()


def _staleness(arrivals: list[tuple[float, int]], refreshes: list[tuple[float, int]]
               ) -> tuple[list[float], float]:
    """Before each refresh, the age of the oldest byte that had arrived but was not on screen;
    and the time from the last arrival to the refresh that showed every byte."""
    import bisect

    totals = [b for _, b in arrivals]
    stale: list[float] = []
    shown = 0
    for t, now_shown in refreshes:
        i = bisect.bisect_right(totals, shown)  # the first read holding a byte not yet shown
        if i < len(arrivals) and arrivals[i][0] < t:
            stale.append(t - arrivals[i][0])
        shown = max(shown, now_shown)
    last_t, total = arrivals[-1] if arrivals else (0.0, 0)
    done = next((t for t, b in refreshes if b >= total), None)
    return stale, (done - last_t) if done is not None else float("nan")


def _stuck(app: Any, what: str) -> RuntimeError:
    return RuntimeError(f"{what}: {app.stream.total_bytes} B in the timeline, {app.received} B "
                        f"received, closed={app.stream.closed}, worker done={app._done.is_set()},"
                        f" result={app.result}, failure={app.failure}")


async def _drive(app: Any, seed: int, gap: float, keys: dict[str, list[float]],
                 moved: collections.Counter[str], limit: float) -> None:
    from callscope.tui.follow import REFRESH
    from textual import events

    rng = random.Random(seed)
    give_up = time.perf_counter() + limit  # never wait forever, whatever goes wrong
    async with app.run_test(size=SIZE) as pilot:
        app.watch_refreshes()
        while not app.stream.total_bytes and not app.stream.closed:
            if time.perf_counter() > give_up:
                raise _stuck(app, "no bytes arrived")
            await asyncio.sleep(0.01)

        async def timed(post: Any) -> float:
            t0 = time.perf_counter()
            post()
            await pilot._wait_for_screen()  # everything queued before it, then the key itself
            await pilot._wait_for_screen()  # what handling it posted to the panes
            app.screen._on_timer_update()  # paint now (as pilot.pause does)
            return time.perf_counter() - t0

        def press(key: str) -> None:
            event = events.Key(key, None)
            event.set_sender(app)
            app.post_message(event)

        while not app.stream.closed:
            if time.perf_counter() > give_up:
                raise _stuck(app, f"the stream did not end within {limit:.0f} s")
            for kind, key in KEYS:
                if app.stream.closed:
                    break
                if key == "goto":
                    target = rng.randrange(max(1, len(app.timeline)))
                    keys[kind].append(await timed(lambda t=target: app.call_later(
                        app.action_goto_step, t)))
                    moved["goto"] += app.cursor != target
                else:
                    keys[kind].append(await timed(lambda k=key: press(k)))
                    if key == "home":
                        moved["home"] += app.cursor != 0
                    elif key == "end" and not app.stream.closed:
                        moved["end"] += not app.follower.following
                await asyncio.sleep(gap)  # the user looks at the screen
        deadline = time.perf_counter() + 60
        while time.perf_counter() < deadline and not (
                app.refreshes and app.refreshes[-1][1] >= app.received):
            await asyncio.sleep(REFRESH)
        await pilot.pause(2 * REFRESH)


def live_load(stream: BenchStream, rate: float, *, per_event: bool = True, seed: int = 5,
              gap: float = 0.1, profile: int = 0, cut: bool = True,
              workdir: str | None = None) -> LiveLoad:
    """Serve ``stream`` at ``rate`` events a second to the debugger, cut before its terminal
    event (``cut=False``: whole), and measure it (see the module's docstring)."""
    from callscope.core.engine import DecisionStep
    from callscope.core.importers import open_input
    from callscope.core.session import Chunk, SessionHeader, StreamEnd, save_session
    from callscope.core.sse import decode_all
    from callscope.net.live import build_request

    reads = frame_chunks(stream) if per_event else list(zip(stream.times, stream.chunks,
                                                             strict=True))
    frames = decode_all(stream.data)
    # Cut: the last event ([DONE], message_stop, ...) is never sent; the transport ends cleanly.
    sent_events = len(frames) - 1 if cut else len(frames)
    expected = stream.data[:frames[sent_events - 1].end]
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        source = os.path.join(tmp, "source.jsonl")
        save_session(source, SessionHeader(protocol=stream.protocol, tools=stream.tools),
                     [Chunk(t, d) for t, d in reads], StreamEnd("clean"))
        recorded = os.path.join(tmp, "live.jsonl")
        with serving(source, rate) as url:
            base = url + ("/v1" if stream.protocol.startswith("openai") else "")
            request = build_request(stream.protocol, "bench", "go", tools=stream.tools,
                                    base_url=base, env={"OPENAI_API_KEY": "x",
                                                        "ANTHROPIC_API_KEY": "x",
                                                        "GEMINI_API_KEY": "x"})
            if cut:
                request.headers["x-callscope-fault"] = f"frames={sent_events},end=clean"
            app = _probe_app(request, recorded)
            keys: dict[str, list[float]] = {kind: [] for kind, _ in KEYS}
            moved: collections.Counter[str] = collections.Counter()
            profiler = cProfile.Profile() if profile else None
            cpu0, t0, app_cpu = time.process_time(), time.perf_counter(), time.thread_time()
            if profiler is not None:
                profiler.enable()
            try:
                limit = 120 + 20 * sent_events / rate  # far more than any run has needed
                asyncio.run(_drive(app, seed, gap, keys, moved, limit))
            finally:
                if profiler is not None:
                    profiler.disable()
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - t0
            app.cpu["app"] = time.thread_time() - app_cpu
            result = app.wait(30)
        chunks = open_input(recorded).chunks()
        recorded_ok = b"".join(c.data for c in chunks) == expected
    arrivals = app.arrivals
    span = arrivals[-1][0] - arrivals[0][0] if len(arrivals) > 1 else float("nan")
    stale, catch_up = _staleness(arrivals, app.refreshes)
    decided = collections.Counter(
        f"{s.decision.action} {s.decision.reason or ''}".strip() for s in app.stream.steps
        if isinstance(s, DecisionStep) and s.decision.action != "wait")
    text = ""
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(profile)
        text = out.getvalue()
    return LiveLoad(stream.protocol, rate, sent_events, len(expected), len(arrivals),
                    sent_events / span if span else float("nan"), wall, keys, stale, catch_up,
                    app.queue, cpu, recorded_ok, app.stream.data() == expected,
                    result.end.kind if result is not None else "none", dict(decided),
                    len(stream.arguments), dict(app.cpu), text, {k: n for k, n in moved.items() if n})


def ms(t: float) -> str:
    return f"{t * 1000:.0f} ms" if t >= 0.1 else f"{t * 1000:.1f} ms"


def report(r: LiveLoad) -> list[str]:
    lines = [f"- stream: {r.protocol}, {r.calls} calls, {r.events:,} events, {human(r.wire)} wire, "
             f"{r.reads:,} reads; served at {r.rate:,.0f} events/s, arrived at "
             f"{r.arrival_rate:,.0f} events/s; {r.duration:.1f} s in all, {r.cpu:.1f} s CPU "
             f"({100 * r.cpu / r.duration:.0f}% of one core)"]
    split = r.cpu_split
    if split:
        per = 1e6 / max(1, r.events)
        rest = split.get("app", 0.0) - split.get("engine", 0.0) - split.get("refresh", 0.0)
        lines.append(
            f"- CPU per event: {per * (split.get('app', 0) + split.get('reader', 0)):.0f} µs in "
            f"all; reader thread {per * split.get('reader', 0):.0f} µs (HTTP read, session "
            f"file, hand to the app's inbox); app thread {per * split.get('app', 0):.0f} µs: engine "
            f"{per * split.get('engine', 0):.0f}, pane refreshes {per * split.get('refresh', 0):.0f}, "
            f"the rest (Textual: inbox slices, rendering, keys) {per * rest:.0f}")
    for kind, values in r.keys.items():
        if values:
            lines.append(f"- key to screen, {kind} ({len(values)} presses): p50 "
                         f"{ms(pct(values, 0.5))}, p99 {ms(pct(values, 0.99))}, max "
                         f"{ms(max(values))}")
    lines.append(f"- display lag before each refresh ({len(r.stale)} refreshes): p50 "
                 f"{ms(pct(r.stale, 0.5))}, p99 {ms(pct(r.stale, 0.99))}, max "
                 f"{ms(max(r.stale, default=0.0))}; every byte shown {ms(r.catch_up)} after the "
                 f"last arrived")
    lines.append(f"- read to engine (queue delay): p50 {ms(pct(r.queue, 0.5))}, p99 "
                 f"{ms(pct(r.queue, 0.99))}, max {ms(max(r.queue, default=0.0))}")
    verdicts = ", ".join(f"{n} {what}" for what, n in sorted(r.decisions.items())) or "none"
    lines.append(f"- bytes: session file {'identical' if r.recorded_ok else '**DIFFERENT**'}, "
                 f"timeline {'identical' if r.shown_ok else '**DIFFERENT**'} to what was sent; "
                 f"end `{r.end}`; decisions: {verdicts}")
    if r.moved:
        lines.append(f"- keys without their effect: {r.moved}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["--proxy"]:  # the recording proxy under concurrent streams (issue 19)
        from .proxy_bench import main as proxy_main

        return proxy_main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m bench.live_bench",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--rate", type=float, default=10_000, help="events a second (10,000)")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of the stream (10)")
    parser.add_argument("--protocol", default="openai-chat")
    parser.add_argument("--calls", type=int, default=4, help="parallel calls (4)")
    parser.add_argument("--reads", choices=("event", "network"), default="event",
                        help="one read per event (default), or synth's network reads (~3 a "
                             "event, split anywhere)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="cProfile the app's thread; print the top N by cumulative time")
    args = parser.parse_args(argv)
    for line in run_section(args.rate, args.seconds, args.protocol, args.calls,
                            args.reads == "event", args.seed, args.profile):
        print(line)
    return 0


def run_section(rate: float, seconds: float, protocol: str = "openai-chat", calls: int = 4,
                per_event: bool = True, seed: int = 1, profile: int = 0) -> list[str]:
    stream = build(Spec(protocol, calls=calls, events=int(rate * seconds)), seed)
    result = live_load(stream, rate, per_event=per_event, profile=profile)
    reads = "one read per event" if per_event else "network reads (~3 per event)"
    lines = [f"### The debugger under a live stream ({rate:,.0f} events/s, {reads}; "
             f"Textual pilot, headless, {SIZE[0]}x{SIZE[1]}; wall clock)", "", *report(result)]
    if result.profile:
        lines += ["", "```", result.profile.rstrip(), "```"]
    return lines


if __name__ == "__main__":
    sys.exit(main())
