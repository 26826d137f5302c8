"""The recording proxy under concurrent streams, headless and with the debugger (issue 19).

``python -m bench.proxy_bench`` (or ``python -m bench.live_bench --proxy``): ``callscope serve``
in its own process streams a recorded Chat turn (7,728 B) in 100-byte pieces 10 ms apart
(about 0.8 s a stream); N clients (one asyncio process, no connection limit) stream it at once,
straight from serve (the floor), through ``callscope proxy --headless``, and through
``callscope proxy`` with the debugger running (Textual headless, in a process of its own), in
the two ways it is used: the first capture opened and followed live (the others wait, as
nobody looks at them), and the captures list on screen, updated as every capture streams.
Measured at the client, per mode and N: time to first byte (request sent -> first body byte)
and the gaps between reads (serve paces them at 10 ms; what the relay adds shows as longer
gaps), median and p95, and that every client received every byte. Timing starts once every
path is ready: each got one stream first (the debugger opened it), then a second's rest.

Wall clock on a shared machine; reported, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as a file: python bench/proxy_bench.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "bench"

ROOT = Path(__file__).resolve().parent.parent
SESSION = ROOT / "tests" / "fixtures" / "openai-chat" / "parallel_tool_calls_two_functions.sse"
FAULT = "chunk=100,delay=0.01"
SIZE = (200, 50)


def _url(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    for _ in range(5):
        match = re.search(r"http://127\.0\.0\.1:\d+", proc.stdout.readline())
        if match is not None:
            return match[0]
    raise RuntimeError("the child did not print its URL")


@contextlib.contextmanager
def child(*args: str) -> Iterator[str]:
    """A child process that prints its URL first; yields the URL; stopped after."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        url = _url(proc)
        # Its log (a line a request) is read on, or a full pipe would stop it mid-run.
        threading.Thread(target=lambda: [None for _ in proc.stdout or ()], daemon=True).start()
        yield url
    finally:
        assert proc.stdin is not None
        proc.stdin.close()  # the debugger host ends on this (and stops its relay)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=20 if "--host-debugger" in args else 0.1)
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _in_process_app(upstream: str, directory: str) -> object:
    """The design before issue 19, for comparison: the relay on an event loop in a thread of
    the debugger's own process (sharing its interpreter lock), facts posted to the inbox."""
    import callscope.tui.app
    from callscope.net.proxy import RecordingProxy, make_server
    from callscope.tui.captures import CaptureChunk, CaptureEnded, CaptureStarted, ProxyApp

    class InProcess(ProxyApp):
        CSS_PATH = str(Path(callscope.tui.app.__file__).parent / "app.tcss")

        def on_mount(self) -> None:
            self.push_screen(self.list_screen)
            app = self

            class Poster:
                def started(self, path: str, header: object) -> None:
                    app.inbox.put(CaptureStarted(path, header))  # type: ignore[arg-type]

                def chunk(self, path: str, chunk: object) -> None:
                    app.inbox.put(CaptureChunk(path, (chunk,)))  # type: ignore[arg-type]

                def ended(self, path: str, end: object) -> None:
                    app.inbox.put(CaptureEnded(path, end))  # type: ignore[arg-type]

            proxy = RecordingProxy(upstream, directory, observer=Poster())  # type: ignore[arg-type]
            server = make_server(proxy)

            def serve() -> None:
                async def main() -> None:
                    await server.start()
                    app.url = server.url
                    await server.serve_forever()
                asyncio.run(main())
            threading.Thread(target=serve, daemon=True).start()

        def on_unmount(self) -> None:
            pass

    return InProcess(upstream, directory)


def host_debugger(upstream: str, directory: str, in_process: bool = False,
                  view: str = "capture") -> int:
    """The debugger's side of a run (a process of its own): ``ProxyApp`` headless, its URL on
    stdout, the first capture opened once there is one (``view="list"``: the list stays on
    screen); it ends when stdin closes."""
    from callscope.tui.captures import ProxyApp

    app: ProxyApp = _in_process_app(upstream, directory) if in_process else (  # type: ignore[assignment]
        ProxyApp(upstream, directory, yield_cpu=os.environ.get("BENCH_NO_YIELD") is None))

    async def pilot(driver: object) -> None:
        while app.url is None:
            await asyncio.sleep(0.02)
        print(f"debugger on {app.url}", flush=True)
        closed = asyncio.ensure_future(asyncio.to_thread(sys.stdin.read))
        while view == "capture" and not app.captures and not closed.done():
            await asyncio.sleep(0.02)
        if view == "capture" and app.captures:
            app.open_capture(next(iter(app.captures)))  # followed live, as a user would
        await closed
        app.exit()

    app.run(headless=True, size=SIZE, auto_pilot=pilot)  # type: ignore[arg-type]
    app.wait_relay()
    return 0


@dataclass
class Load:
    mode: str
    streams: int
    """Concurrent streams of one round."""
    ttfb: list[float]
    gaps: list[float]
    durations: list[float]
    """First byte to last byte of each stream (serve paces one at about 0.77 s)."""
    complete: int
    seconds: float
    runs: int = 1
    rounds: list[float] = field(default_factory=list)
    """The median first byte of each round (the modes of a round run one after the other, so
    a round's ratio to headless is what the machine's other work moves least)."""


Result = tuple[float, list[float], float, bool]
"""One stream at the client: time to first byte, gaps between reads, first to last byte, and
whether every byte arrived."""


async def _stream(client: object, url: str, expected: bytes) -> Result:
    import httpx

    assert isinstance(client, httpx.AsyncClient)
    sent = time.perf_counter()
    request = client.build_request("POST", url + "/v1/chat/completions", json={"stream": True},
                                   headers={"x-callscope-fault": FAULT})
    times: list[float] = []
    data = bytearray()
    try:
        response = await client.send(request, stream=True)
        async for piece in response.aiter_raw():
            times.append(time.perf_counter())
            data += piece
        await response.aclose()
    except httpx.TransportError as exc:  # counted as incomplete, said on stderr
        print(f"{url}: {type(exc).__name__} after {len(data)} B", file=sys.stderr)
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    nan = float("nan")
    return (times[0] - sent if times else nan, gaps, times[-1] - times[0] if times else nan,
            bytes(data) == expected)


async def _load(url: str, streams: int) -> tuple[list[Result], float]:
    import httpx

    expected = SESSION.read_bytes()
    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=None)) as client:
        await _stream(client, url, expected)  # warm: the first capture opens in the debugger
        start = time.perf_counter()
        results = await asyncio.gather(*(_stream(client, url, expected) for _ in range(streams)))
    return list(results), time.perf_counter() - start


def measure(mode: str, url: str, streams: int) -> Load:
    results, seconds = asyncio.run(_load(url, streams))
    return Load(mode, streams, [r[0] for r in results], [g for r in results for g in r[1]],
                [r[2] for r in results], sum(r[3] for r in results), seconds)


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def run(counts: Sequence[int], rounds: int, before: bool = False) -> list[Load]:
    """Each mode ``rounds`` times per count, the modes interleaved (the machine is shared:
    a neighbour's burst then falls on every mode alike); a mode's loads are pooled."""
    pooled: dict[tuple[int, str], Load] = {}
    with tempfile.TemporaryDirectory() as tmp, child(
            "-m", "callscope.tui.cli", "serve", str(SESSION)) as origin, child(
            "-m", "callscope.tui.cli", "proxy", "--headless", "--upstream", origin,
            "--dir", f"{tmp}/headless") as headless, child(
            "-m", "bench.proxy_bench", "--host-debugger", origin, f"{tmp}/debugger") as debugger, child(
            "-m", "bench.proxy_bench", "--host-debugger", origin, f"{tmp}/list",
            "--view", "list") as listed, (
            child("-m", "bench.proxy_bench", "--host-debugger", origin, f"{tmp}/before",
                  "--in-process") if before else contextlib.nullcontext("")) as old:
        modes = [("direct (serve)", origin), ("proxy --headless", headless),
                 ("proxy + debugger, a capture open", debugger),
                 ("proxy + debugger, the list on screen", listed)]
        if old:
            modes.append(("relay in the debugger's process (before)", old))
        for _, url in modes:  # every path ready before the clock starts (the debugger opened
            measure("warm", url, 1)  # its first capture), then a rest for what that started
        time.sleep(1.0)
        for _ in range(rounds):
            for n in counts:
                for mode, url in modes:
                    load = measure(mode, url, n)
                    kept = pooled.setdefault((n, mode), Load(mode, n, [], [], [], 0, 0.0, 0))
                    kept.runs += 1
                    kept.ttfb += load.ttfb
                    kept.gaps += load.gaps
                    kept.durations += load.durations
                    kept.complete += load.complete
                    kept.seconds = max(kept.seconds, load.seconds)
                    kept.rounds.append(pct(load.ttfb, .5))
    return list(pooled.values())


HEADLESS = "proxy --headless"


def versus_headless(load: Load, loads: Sequence[Load]) -> str:
    """The median over rounds of this mode's median first byte over headless's in the same
    round (``—`` for headless itself and for what has no headless to compare with)."""
    base = next((b for b in loads if b.mode == HEADLESS and b.streams == load.streams), None)
    if base is None or load is base or not load.rounds:
        return "—"
    ratios = sorted(a / b for a, b in zip(load.rounds, base.rounds, strict=False) if b > 0)
    return f"{(pct(ratios, .5) - 1) * 100:+.0f}%"


def report(loads: Sequence[Load]) -> list[str]:
    lines = ["| streams | path | first byte p50 / p95 | vs headless, per round | "
             "read gap p50 / p95 / max | stream (first to last byte) p50 / p95 | complete | "
             "slowest round |",
             "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for load in loads:
        lines.append(
            f"| {load.streams} | {load.mode} | {pct(load.ttfb, .5) * 1e3:.0f} / "
            f"{pct(load.ttfb, .95) * 1e3:.0f} ms | {versus_headless(load, loads)} | "
            f"{pct(load.gaps, .5) * 1e3:.1f} / "
            f"{pct(load.gaps, .95) * 1e3:.1f} / {max(load.gaps, default=0) * 1e3:.0f} ms | "
            f"{pct(load.durations, .5):.2f} / {pct(load.durations, .95):.2f} s | "
            f"{load.complete}/{load.streams * load.runs} | "
            f"{load.seconds:.2f} s |")
    lines[2:] = sorted(lines[2:], key=lambda line: int(line.split("|")[1]))
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.proxy_bench",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--streams", type=int, nargs="+", default=[20, 150])
    parser.add_argument("--rounds", type=int, default=5, help="runs per mode, pooled (5)")
    parser.add_argument("--before", action="store_true",
                        help="also measure the relay in the debugger's process (before issue 19)")
    parser.add_argument("--host-debugger", nargs=2, metavar=("UPSTREAM", "DIR"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--view", choices=("capture", "list"), default="capture",
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.host_debugger:
        upstream, directory = args.host_debugger
        return host_debugger(upstream, directory, in_process=args.in_process, view=args.view)
    load = os.getloadavg()[0]
    print(f"### The proxy under {', '.join(map(str, args.streams))} concurrent streams "
          f"({args.rounds} rounds pooled, load average {load:.1f} at the start; wall clock)\n")
    for line in report(run(args.streams, args.rounds, args.before)):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
