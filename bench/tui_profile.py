"""Where a step and a seek of the TUI go: the benchmark's session and moves, profiled.

``python -m bench.tui_profile [step|seek] [moves] [--events N]`` drives :class:`CallscopeApp`
as :mod:`.tui_bench` does (headless pilot, 200x50, the 10^5-event session), then times each
move in phases: the app's own work on the key (the cursor watcher: view and panes, up to the
first paint) and the rest (Textual's refresh and the compositor), and prints the cumulative
cProfile of all the moves (the whole thread, event loop included).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import random
import time
from collections.abc import Callable

from .streams import Spec, build
from .tui_bench import SETTLE, _p, _Paints


def _instrument(app: object, spent: dict[str, float]) -> None:
    """Time (per move, thread CPU) the panes' render_lines and show, the view, the compositor."""
    from callscope.tui.panes.frames import FramesPane
    from callscope.tui.panes.rows import RowsView
    from textual._compositor import Compositor
    from textual.screen import Screen
    from textual.widget import Widget

    def wrap(owner: type, attr: str, name: Callable[[object], str]) -> None:
        original = getattr(owner, attr)

        def timed(self: object, *args: object, **kwargs: object) -> object:
            t = time.thread_time()
            try:
                return original(self, *args, **kwargs)
            finally:
                key = name(self)
                spent[key] = spent.get(key, 0.0) + time.thread_time() - t
                if "misses" in key:
                    spent["count " + key] = spent.get("count " + key, 0.0) + 0.001

        setattr(owner, attr, timed)

    def who(prefix: str) -> Callable[[object], str]:
        return lambda w: f"{prefix} {type(w).__name__}#{getattr(w, 'id', None) or ''}" \
            f"{'.' + ' '.join(getattr(w, 'classes', ())) if not getattr(w, 'id', None) else ''}"

    wrap(FramesPane, "render_lines", who("render_lines"))
    wrap(RowsView, "render_lines", who("render_lines"))
    wrap(RowsView, "render_line", who("render_line (misses)"))
    wrap(FramesPane, "render_line", who("render_line (misses)"))
    wrap(Widget, "render_lines", who("render_lines"))
    wrap(Screen, "_compositor_refresh", lambda s: "compositor refresh (all)")
    wrap(Compositor, "render_update", lambda s: "compositor render_update")
    wrap(Screen, "_refresh_layout", lambda s: "screen layout")
    tl = app.timeline  # type: ignore[attr-defined]
    wrap(type(tl), "view", lambda s: "timeline.view")
    for pane in ("FramesPane", "FrameDetailPane", "BuffersPane", "DecisionsPane"):
        cls = type(app.query_one(pane))  # type: ignore[attr-defined]
        wrap(cls, "show", who("show"))
    from callscope.tui import app as app_module
    original_status = getattr(app_module, "show_status")  # noqa: B009 (not re-exported)

    def show_status(*args: object) -> None:
        t = time.thread_time()
        original_status(*args)
        spent["show_status"] = spent.get("show_status", 0.0) + time.thread_time() - t

    setattr(app_module, "show_status", show_status)  # noqa: B010

    import gc

    started: list[float] = []

    def collected(phase: str, info: dict[str, int]) -> None:  # (as every part: from the key
        # until the move settled, so a collection after its paint counts too)
        if phase == "start":
            started[:] = [time.thread_time()]
        elif started:
            key = f"gc generation {info['generation']}"
            spent[key] = spent.get(key, 0.0) + time.thread_time() - started[0]

    gc.callbacks.append(collected)


async def _drive(kind: str, moves: int, events: int, sort: str, limit: int,
                 profile: bool, breakdown: bool, slowest: int = 0) -> None:
    from callscope.core.tools import ToolSet
    from callscope.tui.app import CallscopeApp
    from textual import events as tevents

    stream = build(Spec("openai-chat", calls=64, events=events), 1)
    paints = _Paints()
    paints.install()
    try:
        chunks = list(zip(stream.times, stream.chunks, strict=True))
        app = CallscopeApp(chunks, source="bench", protocol=stream.protocol,
                           tools=ToolSet(stream.tools))
        paints.app = app
        work: list[float] = []
        original = app.refresh_view

        def refresh_view() -> None:
            t = time.perf_counter()
            original()
            work.append(time.perf_counter() - t)

        app.refresh_view = refresh_view  # type: ignore[method-assign]
        spent: dict[str, float] = {}
        async with app.run_test(size=(200, 50)) as pilot:
            while app.building:
                await asyncio.sleep(0.05)
            await paints.settled(0)
            if breakdown:
                _instrument(app, spent)
            rng = random.Random(5)
            total = len(app.timeline)
            prof = cProfile.Profile()
            walls: list[float] = []
            works: list[float] = []
            firsts: list[float] = []
            paints_per: list[int] = []
            cpus: list[float] = []
            parts: dict[str, list[float]] = {}
            each: list[tuple[float, int, dict[str, float]]] = []  # (wall, step, parts) a move

            def right() -> None:
                assert app._driver is not None
                app._driver.send_message(tevents.Key("right", None))

            for _ in range(moves):
                k = rng.randrange(total)
                move: Callable[[], None]
                if kind == "step":
                    app.action_goto_step(k)
                    await paints.settled(len(paints.log) - 1)
                    move = right
                else:
                    def move(k: int = k) -> None:
                        app.action_goto_step(k)
                since = len(paints.log)
                work.clear()
                spent.clear()
                t, c = time.perf_counter(), time.thread_time()
                if profile:
                    prof.enable()
                move()
                done, done_cpu = await paints.settled(since)
                cpus.append(done_cpu - c)
                if profile:
                    prof.disable()
                walls.append(done - t)
                works.append(sum(work))
                firsts.append(paints.log[since][0] - t)
                paints_per.append(len(paints.log) - since)
                for name, v in spent.items():
                    parts.setdefault(name, []).append(v)
                each.append((done - t, app.cursor, dict(spent)))
            await pilot.pause()
    finally:
        paints.uninstall()
    ms = 1000
    print(f"{kind}: {len(walls)} moves; to paint p50 {_p(walls, .5) * ms:.1f} ms, "
          f"p90 {_p(walls, .9) * ms:.1f}, p99 {_p(walls, .99) * ms:.1f}; CPU p50 "
          f"{_p(cpus, .5) * ms:.1f} ms, p90 {_p(cpus, .9) * ms:.1f}, p99 {_p(cpus, .99) * ms:.1f}; "
          f"refresh_view p50 {_p(works, .5) * ms:.1f} ms p99 {_p(works, .99) * ms:.1f}; "
          f"first paint p50 {_p(firsts, .5) * ms:.1f} ms; paints per move "
          f"{sorted(paints_per)[len(paints_per) // 2]} (max {max(paints_per)})")
    for name, values in sorted(parts.items()):
        values += [0.0] * (len(walls) - len(values))
        print(f"  {name:<40} p50 {_p(values, .5) * ms:6.2f} ms  p90 {_p(values, .9) * ms:6.2f}  "
              f"mean {sum(values) / len(values) * ms:6.2f}")
    for wall, step, spent_in in sorted(each, key=lambda m: -m[0])[:slowest]:
        top = sorted(spent_in.items(), key=lambda kv: -kv[1])[:6]
        print(f"  slow move to step {step}: {wall * ms:.1f} ms; " + ", ".join(
            f"{name} {v * ms:.1f}" for name, v in top))
    if profile:
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats(sort).print_stats(limit)
        print(out.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.tui_profile")
    parser.add_argument("kind", choices=("step", "seek"), nargs="?", default="step")
    parser.add_argument("moves", type=int, nargs="?", default=60)
    parser.add_argument("--events", type=int, default=10**5)
    parser.add_argument("--sort", default="cumulative")
    parser.add_argument("--limit", type=int, default=60)
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--breakdown", action="store_true", help="time the parts of a move")
    parser.add_argument("--slowest", type=int, default=0, metavar="N",
                        help="with --breakdown: the N slowest moves, each with its largest parts")
    args = parser.parse_args()
    assert SETTLE > 0
    asyncio.run(_drive(args.kind, args.moves, args.events, args.sort, args.limit,
                       not args.no_profile, args.breakdown, args.slowest))


if __name__ == "__main__":
    main()
