"""The TUI on a long session, driven by Textual's pilot (headless): first paint, step and seek.

* first paint: from constructing the app to the app mounted, rendered and idle (large inputs
  are indexed in a worker thread, so the first screen may not show the session yet);
* ready: until the timeline is indexed (the whole engine run over the session) and shown;
* step: ``right`` (next frame) pressed at random places, until the app is idle again;
* seek: ``goto_step`` to random steps anywhere in the session, until idle.

Times are wall clock (a user waits in wall time), so load from other jobs on the machine shows
up here; the CPU time of the same intervals is reported beside it.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass

from .streams import BenchStream


@dataclass
class TuiCost:
    events: int
    steps: int
    first_paint: float
    first_paint_cpu: float
    ready: float
    """Wall seconds from start until the session is indexed and shown."""
    step_p50: float
    step_p99: float
    seek_p50: float
    seek_p99: float
    step_cpu_p99: float
    seek_cpu_p99: float
    samples: tuple[int, int]
    """Steps and seeks timed (each kind stops after ``budget`` seconds)."""


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _drive(stream: BenchStream, moves: int, seed: int, budget: float) -> TuiCost:
    from callscope.core.tools import ToolSet
    from callscope.tui.app import CallscopeApp

    chunks = list(zip(stream.times, stream.chunks, strict=True))
    wall, cpu = time.perf_counter, time.process_time
    start, start_cpu = wall(), cpu()
    app = CallscopeApp(chunks, source="bench", protocol=stream.protocol, tools=ToolSet(stream.tools))
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        first, first_cpu = wall() - start, cpu() - start_cpu
        while getattr(app, "building", False):
            await pilot.pause(0.02)
        await pilot.pause()
        ready = wall() - start
        rng = random.Random(seed)
        total = len(app.timeline)

        async def timed(action: object) -> tuple[float, float]:
            t, c = wall(), cpu()
            await action  # type: ignore[misc]
            await pilot.pause()
            return wall() - t, cpu() - c

        steps: list[tuple[float, float]] = []
        seeks: list[tuple[float, float]] = []
        until = wall() + budget
        for _ in range(moves):
            app.action_goto_step(rng.randrange(total))  # a random place, then one step
            await pilot.pause()
            steps.append(await timed(pilot.press("right")))
            if wall() > until:
                break
        until = wall() + budget
        for _ in range(moves):
            if seeks and wall() > until:
                break
            k = rng.randrange(total)

            async def seek(k: int = k) -> None:
                app.action_goto_step(k)

            seeks.append(await timed(seek()))
    return TuiCost(stream.events, total, first, first_cpu, ready,
                   _p([s[0] for s in steps], 0.5), _p([s[0] for s in steps], 0.99),
                   _p([s[0] for s in seeks], 0.5), _p([s[0] for s in seeks], 0.99),
                   _p([s[1] for s in steps], 0.99), _p([s[1] for s in seeks], 0.99),
                   (len(steps), len(seeks)))


def tui_cost(stream: BenchStream, moves: int = 200, seed: int = 5, budget: float = 20.0) -> TuiCost:
    return asyncio.run(_drive(stream, moves, seed, budget))
