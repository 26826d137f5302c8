"""The TUI on a long session, driven by Textual's pilot (headless): first paint, step and seek.

Every time is measured up to a *paint*: the end of the screen's compositor refresh that draws
the result (``Screen._compositor_refresh``, which the headless driver runs as a terminal would).
The pilot's own helpers (``press``, ``pause``) are not used for timing: they wait for the
process to look idle in 20 ms slices, which would dwarf a 16 ms target.

* first paint: from constructing the app to the first paint that shows steps of the session
  (a large session is indexed a slice at a time, so the first screen shows its first steps);
* ready: until the whole session is indexed and a paint shows it;
* step: the ``right`` key (next frame) sent to the app at random places, until the paint that
  shows the move (and any paint it scheduled: a scroll after the refresh) is done;
* seek: ``goto_step`` to random steps anywhere in the session, until painted the same way.

Times are wall clock (a user waits in wall time), so load from other jobs on the machine shows
up here; the CPU time of the same intervals (the app's thread: the work itself) is beside it.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .streams import BenchStream

if TYPE_CHECKING:  # (tui_floor imports this module)
    from .tui_floor import FloorCost

SETTLE = 0.04
"""Seconds without a paint after which a move counts as fully drawn (over two 60 Hz frames)."""


@dataclass
class TuiCost:
    events: int
    steps: int
    first_paint: float
    first_paint_cpu: float
    first_steps: int
    """Steps of the session indexed when the first paint showed it."""
    ready: float
    """Wall seconds from start until the whole session is indexed and painted."""
    step_p50: float
    step_p99: float
    seek_p50: float
    seek_p99: float
    step_cpu_p99: float
    seek_cpu_p99: float
    samples: tuple[int, int]
    """Steps and seeks timed (each kind stops after ``budget`` seconds)."""
    floor: FloorCost | None = None
    """Textual's own cost of a move on the same screen (:class:`.tui_floor.FloorCost`), when
    measured in the same run."""
    pairs: TuiPairs | None = None
    """Every round of the run this cost is the median round of (:class:`TuiPairs`)."""


@dataclass
class TuiPairs:
    """The debugger and Textual's floor measured alternately, round after round (as the engine
    ratios are paired): the host's speed moves within minutes (the floor's p99 from 8 to 76 ms
    in one session), so a ratio is only fair between runs next to each other. Each round's
    ratios are its own; the rows quote the median round and the spread."""

    rounds: list[TuiCost]
    """Each round's debugger cost, its :attr:`TuiCost.floor` the floor measured right after."""

    @property
    def step_ratios(self) -> list[float]:
        """Step p99 over the same-rows floor's p99, per round, sorted."""
        return sorted(c.step_p99 / c.floor.same_p99 for c in self.rounds if c.floor)

    @property
    def seek_ratios(self) -> list[float]:
        """Seek p99 over the new-rows floor's p99, per round, sorted."""
        return sorted(c.seek_p99 / c.floor.new_p99 for c in self.rounds if c.floor)

    def median_round(self, ratio: Callable[[TuiCost], float]) -> TuiCost:
        """The round whose ``ratio`` is the median (the lower middle of an even count)."""
        ordered = sorted((c for c in self.rounds if c.floor), key=ratio)
        return ordered[(len(ordered) - 1) // 2]


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class _Paints:
    """Records the end of every compositor refresh of the app's main screen (wall, thread CPU)."""

    def __init__(self) -> None:
        self.log: list[tuple[float, float, int, bool]] = []
        self.app: object = None
        self._original: Callable[..., None] | None = None

    def install(self) -> None:
        from textual.screen import Screen

        original = self._original = Screen._compositor_refresh
        paints = self

        def refresh(screen: Screen) -> None:  # type: ignore[type-arg]
            original(screen)
            app = paints.app
            if app is not None and screen is getattr(app, "screen", None):
                timeline = getattr(app, "timeline", None)
                paints.log.append((time.perf_counter(), time.thread_time(),
                                   len(timeline) if timeline is not None else 0,
                                   bool(getattr(app, "building", False))))

        Screen._compositor_refresh = refresh  # type: ignore[method-assign,assignment]

    def uninstall(self) -> None:
        from textual.screen import Screen

        if self._original is not None:
            Screen._compositor_refresh = self._original  # type: ignore[method-assign]

    async def settled(self, since: int) -> tuple[float, float]:
        """Wait until a paint came after log entry ``since`` and none for :data:`SETTLE` s;
        return the (wall, CPU) time of the last paint."""
        while True:
            await asyncio.sleep(SETTLE / 4)
            if len(self.log) > since and time.perf_counter() - self.log[-1][0] > SETTLE:
                return self.log[-1][0], self.log[-1][1]


async def _drive(stream: BenchStream, moves: int, seed: int, budget: float) -> TuiCost:
    from callscope.core.tools import ToolSet
    from callscope.tui.app import CallscopeApp
    from textual import events

    paints = _Paints()
    paints.install()
    try:
        chunks = list(zip(stream.times, stream.chunks, strict=True))
        wall, cpu = time.perf_counter, time.thread_time
        start, start_cpu = wall(), cpu()
        app = CallscopeApp(chunks, source="bench", protocol=stream.protocol,
                           tools=ToolSet(stream.tools))
        paints.app = app
        async with app.run_test(size=(200, 50)) as pilot:
            while not any(n for _, _, n, _ in paints.log):
                await asyncio.sleep(0.005)
            first_wall, first_cpu, first_steps, _ = next(p for p in paints.log if p[2])
            first, first_c = first_wall - start, first_cpu - start_cpu
            while app.building or not any(not b for _, _, _, b in paints.log):
                await asyncio.sleep(0.02)
            ready = next(p for p in paints.log if not p[3])[0] - start
            await paints.settled(0)
            rng = random.Random(seed)
            total = len(app.timeline)

            async def timed(move: Callable[[], None]) -> tuple[float, float]:
                since = len(paints.log)
                t, c = wall(), cpu()
                move()
                done, done_cpu = await paints.settled(since)
                return done - t, done_cpu - c

            def right() -> None:
                assert app._driver is not None
                app._driver.send_message(events.Key("right", None))

            steps: list[tuple[float, float]] = []
            seeks: list[tuple[float, float]] = []
            until = wall() + budget
            for _ in range(moves):
                app.action_goto_step(rng.randrange(total))  # a random place, then one step
                await paints.settled(len(paints.log) - 1)
                steps.append(await timed(right))
                if wall() > until:
                    break
            until = wall() + budget
            for _ in range(moves):
                k = rng.randrange(total)
                seeks.append(await timed(lambda k=k: app.action_goto_step(k)))  # type: ignore[misc]
                if wall() > until:
                    break
            await pilot.pause()
    finally:
        paints.uninstall()
    return TuiCost(stream.events, total, first, first_c, first_steps, ready,
                   _p([s[0] for s in steps], 0.5), _p([s[0] for s in steps], 0.99),
                   _p([s[0] for s in seeks], 0.5), _p([s[0] for s in seeks], 0.99),
                   _p([s[1] for s in steps], 0.99), _p([s[1] for s in seeks], 0.99),
                   (len(steps), len(seeks)))


def tui_cost(stream: BenchStream, moves: int = 400, seed: int = 5, budget: float = 20.0) -> TuiCost:
    return asyncio.run(_drive(stream, moves, seed, budget))


# -- keys while a large session is re-chunked ---------------------------------------------------

@dataclass
class RechunkCost:
    """Keys pressed while the ``c`` key re-chunks a large session a byte per read (issue 17:
    "no key waits more than 100 ms", no freeze, bounded memory, progress shown)."""

    wire_bytes: int
    chunks: int
    """Chunks of the re-chunked timeline (a byte each)."""
    indexed_after: float
    """Wall seconds from the ``c`` key to the whole re-chunked session indexed."""
    keys: int
    """Keys timed while indexing ran."""
    key_p50: float
    key_p99: float
    key_max: float
    """Key sent to the paint that shows its move (the cursor it set), wall seconds."""
    progress_shown: bool
    """The status line said how far indexing was, while it ran."""
    peak_rss: int
    """The process's peak resident set, bytes (the whole run: load, index, re-chunk)."""
    rss_before: int
    """Resident set before the ``c`` key, bytes."""
    waits: list[float]
    """Every key's wait (the samples of the percentiles)."""


def _rss() -> int:
    import os

    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def _rechunk_drive(target_bytes: int, gap: float, size: tuple[int, int]) -> RechunkCost:
    import resource

    from callscope.core.session import open_input
    from callscope.core.tools import ToolSet
    from callscope.tui.app import CallscopeApp
    from textual import events
    from textual.widgets import Static

    from .extra import session_file

    path, _ = session_file(target_bytes)
    session = open_input(str(path))
    chunks = [(c.t, c.data) for c in session.chunks()]
    header = session.header
    app = CallscopeApp(chunks, source=path.name, protocol=header.protocol,
                       tools=ToolSet(list(header.tools or [])), end=session.end, header=header)
    from textual.screen import Screen

    cursors: list[tuple[float, int]] = []  # (end of a paint of the main screen, cursor then)
    original = Screen._compositor_refresh

    def refresh(screen: Screen) -> None:  # type: ignore[type-arg]
        original(screen)
        if screen is getattr(app, "screen", None):
            cursors.append((time.perf_counter(), app.cursor))

    Screen._compositor_refresh = refresh  # type: ignore[method-assign,assignment]
    try:
        async with app.run_test(size=size) as pilot:
            while app.building:
                await asyncio.sleep(0.05)
            await pilot.pause()
            before = _rss()
            assert app._driver is not None
            start = time.perf_counter()
            app._driver.send_message(events.Key("c", "c"))
            while not app.building:
                await asyncio.sleep(0.001)
            waits: list[float] = []
            progress = False
            down = True
            while app.building:
                await asyncio.sleep(gap)
                if not app.building:
                    break
                status = app.query_one("#status", Static).content
                progress = progress or "indexing" in getattr(status, "plain", str(status))
                was, sent = app.cursor, time.perf_counter()
                app._driver.send_message(events.Key("down" if down else "up", None))
                down = not down
                while True:  # until a paint shows the cursor the key set
                    await asyncio.sleep(0.001)
                    seen = [t for t, cursor in cursors if t > sent and cursor != was]
                    if seen:
                        waits.append(seen[0] - sent)
                        break
                    if time.perf_counter() - sent > 30:
                        waits.append(float("inf"))
                        break
            indexed = time.perf_counter() - start
            await pilot.pause()
    finally:
        Screen._compositor_refresh = original  # type: ignore[method-assign]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return RechunkCost(sum(len(d) for _, d in chunks), len(app.timeline.chunks), indexed,
                       len(waits), _p(waits, 0.5), _p(waits, 0.99), max(waits), progress, peak,
                       before, waits)


def rechunk_cost(target_bytes: int = 4_000_000, gap: float = 0.05,
                 size: tuple[int, int] = (200, 50)) -> RechunkCost:
    """Open the session of ``target_bytes`` (:func:`.extra.session_file`), wait until indexed,
    press ``c`` (recorded -> a byte per read), and press down/up every ``gap`` seconds until the
    re-chunked session is indexed, timing each key to its paint. Run it in a fresh process
    (``python -m bench.tui_bench``): the peak resident set is the process's."""
    return asyncio.run(_rechunk_drive(target_bytes, gap, size))


# -- every kind of key, on a large session once indexed -----------------------------------------

KEYS: dict[str, tuple[str, ...]] = {
    "step": ("down", "up"), "frame step": ("right", "left"), "seek": ("end", "home"),
    "search": ("/",), "filter": ("v",), "zoom": ("z",), "tab": ("tab",), "rechunk": ("c",),
    "cut": ("x",),
}
"""What each kind presses. ``search`` is the search applied (the prompt's answer: every frame
searched, the matches marked), ``cut`` the cut at the cursor's frame (``x``; ``X`` asks for an
offset, then cuts the same way), ``rechunk`` the key until it is painted (the re-chunked session
is then indexed in the background: :func:`rechunk_cost` times keys meanwhile)."""


@dataclass
class KeyCost:
    kind: str
    waits: list[float]
    """Key (or action) sent to the last paint it caused, wall seconds, each press."""
    firsts: list[float]
    """Key sent to its first paint (the key's answer: a long search or a re-chunk paints its
    progress after it, and the last paint is when that work is done), each press."""

    @property
    def p99(self) -> float:
        return _p(self.waits, 0.99)

    @property
    def max(self) -> float:
        return max(self.waits)


async def _keys_drive(target_bytes: int, presses: int, size: tuple[int, int],
                      seed: int, kinds: tuple[str, ...]) -> list[KeyCost]:
    from callscope.core.session import open_input
    from callscope.core.tools import ToolSet
    from callscope.tui.app import CallscopeApp
    from textual import events

    from .extra import session_file

    path, _ = session_file(target_bytes)
    session = open_input(str(path))
    header = session.header
    app = CallscopeApp([(c.t, c.data) for c in session.chunks()], source=path.name,
                       protocol=header.protocol, tools=ToolSet(list(header.tools or [])),
                       end=session.end, header=header)
    paints = _Paints()
    paints.install()
    paints.app = app
    rng = random.Random(seed)
    costs: list[KeyCost] = []
    try:
        async with app.run_test(size=size) as pilot:
            while app.building:
                await asyncio.sleep(0.05)
            await paints.settled(0)

            firsts: list[float] = []

            async def timed(move: Callable[[], None]) -> float:
                since = len(paints.log)
                t = time.perf_counter()
                move()
                done = (await paints.settled(since))[0] - t
                firsts.append(paints.log[since][0] - t)
                return done

            def key(name: str) -> Callable[[], None]:
                def press() -> None:
                    assert app._driver is not None
                    app._driver.send_message(events.Key(name, None))
                return press

            for kind, names in KEYS.items():
                if kind not in kinds:
                    continue
                waits: list[float] = []
                firsts.clear()
                for i in range(presses):
                    if kind in ("step", "frame step", "cut"):  # somewhere else each time
                        app.action_goto_step(rng.randrange(len(app.timeline)))
                        await paints.settled(len(paints.log) - 1)
                    if kind == "search":
                        text = ("delta", "edit_file", "path", "zz-none")[i % 4]
                        waits.append(await timed(lambda text=text: app._search(text)))  # type: ignore[misc]
                        continue
                    if kind == "filter" and not app.search_text:
                        app._search("delta")
                        await paints.settled(len(paints.log) - 1)
                    waits.append(await timed(key(names[i % len(names)])))
                    if kind == "rechunk":
                        while app.building:  # (indexed before the next press)
                            await asyncio.sleep(0.05)
                        await paints.settled(len(paints.log) - 1)
                    if kind == "cut":
                        app.action_undo_cut()
                        await paints.settled(len(paints.log) - 1)
                if kind == "filter" and app.filtering:
                    app.action_filter()
                if kind == "zoom" and presses % 2:  # (unzoomed for the next kind)
                    app.action_zoom()
                costs.append(KeyCost(kind, waits, list(firsts)))
            await pilot.pause()
    finally:
        paints.uninstall()
    return costs


def key_costs(target_bytes: int = 4_000_000, presses: int = 30, size: tuple[int, int] = (200, 50),
              seed: int = 3, kinds: tuple[str, ...] = tuple(KEYS)) -> list[KeyCost]:
    """Open the session of ``target_bytes``, wait until indexed, press every kind of key
    (:data:`KEYS`; or only ``kinds``) ``presses`` times, each timed to its last paint (as
    :func:`tui_cost`)."""
    return asyncio.run(_keys_drive(target_bytes, presses, size, seed, kinds))


def _main() -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench.tui_bench", description=(
        "Keys on a large session: every kind of key once indexed (--keys), and keys while `c` "
        "re-chunks it (--rechunk); both by default. Max and p99 per kind, wall clock."))
    parser.add_argument("--keys", action="store_true", help="only every kind of key")
    parser.add_argument("--rechunk", action="store_true", help="only keys while re-chunking")
    parser.add_argument("--bytes", type=int, default=4_000_000, help="session size (file)")
    parser.add_argument("--presses", type=int, default=30, help="presses per kind of key")
    parser.add_argument("--size", default="200x50", help="terminal size, WxH")
    parser.add_argument("--kinds", default=",".join(KEYS),
                        help=f"the kinds of key --keys presses, comma-separated ({', '.join(KEYS)})")
    args = parser.parse_args()
    kinds = tuple(k.strip() for k in args.kinds.split(",") if k.strip())
    if unknown := set(kinds) - set(KEYS):
        parser.error(f"unknown kind(s) of key: {', '.join(sorted(unknown))}")
    width, height = (int(v) for v in args.size.split("x"))
    with open("/proc/loadavg") as load:
        print("load average:", " ".join(load.read().split()[:3]))
    if not args.rechunk:
        print(f"- every kind of key, {args.presses} presses each, {args.bytes:,} B session "
              f"indexed, {width}x{height}: key to its last paint (and to its first)")
        for cost in key_costs(args.bytes, args.presses, (width, height), kinds=kinds):
            print(f"  {cost.kind:<11} p50 {_p(cost.waits, 0.5) * 1000:5.0f} ms  "
                  f"p99 {cost.p99 * 1000:5.0f} ms  max {cost.max * 1000:5.0f} ms  (first paint "
                  f"p50 {_p(cost.firsts, 0.5) * 1000:.0f} ms, max {max(cost.firsts) * 1000:.0f} ms)")
    if not args.keys:
        _rechunk_report(rechunk_cost(args.bytes, size=(width, height)))
    with open("/proc/loadavg") as load:
        print("load average:", " ".join(load.read().split()[:3]))


def _rechunk_report(cost: RechunkCost) -> None:
    mb = 1024 * 1024
    print(f"- session: {cost.wire_bytes / mb:.1f} MB wire; `c` re-chunks it to "
          f"{cost.chunks:,} one-byte reads, indexed in {cost.indexed_after:.1f} s while keys "
          f"were pressed (progress in the status line: {'yes' if cost.progress_shown else 'NO'})")
    print(f"- key to paint while indexing ({cost.keys} keys, down/up every 50 ms): "
          f"p50 {cost.key_p50 * 1000:.0f} ms, p99 {cost.key_p99 * 1000:.0f} ms, "
          f"max {cost.key_max * 1000:.0f} ms")
    print("  slowest keys:", ", ".join(f"{w * 1000:.0f} ms" for w in sorted(cost.waits)[-6:]))
    print(f"- memory: {cost.rss_before / mb:.0f} MB resident before `c`, peak "
          f"{cost.peak_rss / mb:.0f} MB")


if __name__ == "__main__":
    _main()
