"""Keys while a search runs, on a large session (issue 17: "no key waits more than 100 ms").

``python -m bench.search_bench [--session 4mb|e5]`` opens the 4 MB bench session
(:func:`.extra.session_file`) or the 10^5-event one (``bench.run``'s TUI session), waits until
it is indexed, and for each search text: asks for the search (the prompt's answer, as a key
would: a key is sent right behind it), then presses down/up every ``--gap`` seconds until the
search is done, timing each key to the paint that shows its move. Reported per search: the
time to the first paint that counts a match, to the paint of the whole result, and the keys'
waits (the first key is the one sent behind the search: it waits for the search's first slice,
or for the whole search where a search runs at once).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from dataclasses import dataclass

from .tui_bench import _p

TEXTS = ("event ~ delta and call = 2", "tool = edit_file", "text ~ path", "bytes = 1000-2000",
         "delta", "path", "zz-none")


@dataclass
class SearchCost:
    text: str
    matches: int
    first_match: float | None
    """Seconds from the search asked for to the first paint counting a match (None: none)."""
    done: float
    """Seconds to the paint of the whole result."""
    waits: list[float]
    """Each key's wait, key to the paint showing its move."""


def _app(session: str) -> object:
    from callscope.core.tools import ToolSet
    from callscope.tui.app import CallscopeApp

    if session == "e5":
        from .streams import Spec, build

        stream = build(Spec("openai-chat", calls=64, events=10**5), 1)
        return CallscopeApp(list(zip(stream.times, stream.chunks, strict=True)), source="bench",
                            protocol=stream.protocol, tools=ToolSet(stream.tools))
    from callscope.core.session import open_input

    from .extra import session_file

    path, _ = session_file(4_000_000)
    opened = open_input(str(path))
    header = opened.header
    return CallscopeApp([(c.t, c.data) for c in opened.chunks()], source=path.name,
                        protocol=header.protocol, tools=ToolSet(list(header.tools or [])),
                        end=opened.end, header=header)


async def _drive(session: str, texts: tuple[str, ...], gap: float) -> list[SearchCost]:
    from textual import events
    from textual.screen import Screen

    app = _app(session)
    paints: list[tuple[float, int, int]] = []  # (end of a paint, cursor, matches)
    original = Screen._compositor_refresh

    def refresh(screen: Screen) -> None:  # type: ignore[type-arg]
        original(screen)
        if screen is getattr(app, "screen", None):
            paints.append((time.perf_counter(), app.cursor, len(app.matches)))  # type: ignore[attr-defined]

    def running() -> bool:
        progress = getattr(app, "search_progress", None)  # (none: every search runs at once)
        return progress is not None and progress() is not None

    async def key(name: str) -> float:
        was, sent = app.cursor, time.perf_counter()  # type: ignore[attr-defined]
        app._driver.send_message(events.Key(name, None))  # type: ignore[attr-defined]
        while True:
            await asyncio.sleep(0.001)
            seen = [t for t, cursor, _ in paints if t > sent and cursor != was]
            if seen:
                return seen[0] - sent
            if time.perf_counter() - sent > 30:
                return float("inf")

    Screen._compositor_refresh = refresh  # type: ignore[method-assign,assignment]
    costs: list[SearchCost] = []
    try:
        async with app.run_test(size=(200, 50)) as pilot:  # type: ignore[attr-defined]
            while app.building:  # type: ignore[attr-defined]
                await asyncio.sleep(0.05)
            await pilot.pause()
            for text in texts:
                app.action_goto_step(len(app.timeline) // 2)  # type: ignore[attr-defined]
                await pilot.pause()
                await asyncio.sleep(0.1)
                since = len(paints)
                start = time.perf_counter()
                app.call_later(app._search, text)  # type: ignore[attr-defined]
                waits = [await key("down")]  # (behind the search)
                down = False
                while running():
                    await asyncio.sleep(gap)
                    if not running():
                        break
                    waits.append(await key("down" if down else "up"))
                    down = not down
                ended = time.perf_counter()
                await asyncio.sleep(0.1)  # (the result's paint)
                later = paints[since:]
                first = next((t for t, _, n in later if n), None)
                done = next((t for t, _, _ in later if t >= ended), later[-1][0] if later else ended)
                costs.append(SearchCost(text, len(app.matches), None if first is None else first - start,  # type: ignore[attr-defined]
                                        done - start, waits))
            await pilot.pause()
    finally:
        Screen._compositor_refresh = original  # type: ignore[method-assign]
    return costs


def search_costs(session: str = "4mb", texts: tuple[str, ...] = TEXTS,
                 gap: float = 0.03) -> list[SearchCost]:
    return asyncio.run(_drive(session, texts, gap))


def _main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.search_bench", description=__doc__)
    parser.add_argument("--session", choices=("4mb", "e5"), default="4mb")
    parser.add_argument("--gap", type=float, default=0.03, help="seconds between two keys")
    args = parser.parse_args()
    with open("/proc/loadavg") as load:
        print("load average:", " ".join(load.read().split()[:3]))
    print(f"- session {args.session}, 200x50: search asked for, then down/up every {args.gap * 1000:.0f} ms")
    for cost in search_costs(args.session, gap=args.gap):
        first = "-" if cost.first_match is None else f"{cost.first_match * 1000:.0f} ms"
        later = cost.waits[1:]  # (the keys pressed while it ran)
        print(f"  {cost.text!r:<28} {cost.matches:>7} matches  first match {first:>7}  "
              f"done {cost.done * 1000:5.0f} ms  key behind it {cost.waits[0] * 1000:4.0f} ms  "
              + (f"{len(later)} keys while it ran: p50 {_p(later, 0.5) * 1000:3.0f} ms, max "
                 f"{max(later) * 1000:3.0f} ms" if later else "no key while it ran"))
    with open("/proc/loadavg") as load:
        print("load average:", " ".join(load.read().split()[:3]))


if __name__ == "__main__":
    _main()
