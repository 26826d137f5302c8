"""The floor of a move in the TUI: Textual repainting callscope's screen when the rows cost nothing.

As the engine's floor is the least any Python reader does with the bytes (split them, parse
each payload), this is the least any Textual app with callscope's screen does on a move: a
status line, three bordered panes side by side (the third split into two views), scrollbars
and the footer, 200x50, where each pane hands Textual every row on screen as a ready strip.
Nothing is laid out, measured, styled or looked up: a row is one ``Strip`` made from a list of
segments prepared before the clock starts (border and padding included, so Textual does not
finish it either). What is left is Textual's own work for a paint: marking the regions, the
compositor cutting every line at every widget's edge, and the update.

Two moves are timed, each until its paint is done (as :mod:`.tui_bench` times callscope):

* *new rows*: every pane scrolls elsewhere (its scrollbar moves, drawn as callscope draws
  its bars) and every row of every pane becomes a row not shown before (a new strip each),
  with the status line: what a seek is, at the least;
* *same rows*: every pane is refreshed and returns the strips it returned last time: the
  compositor alone, with no row to make. A step changes a few rows of a pane or two and the
  status line; a refresh of three rows a pane measured about the same as this, so it is the
  step's floor;
* *new rows made* (:func:`_made_row`): as *new rows*, but each row is made at the paint as any
  Textual app that styles its text makes it: a :class:`~textual.content.Content` of the same
  four styled pieces, rendered to segments (``Content.render_segments``), between the borders.
  The least a seek costs an app whose rows are styled text rather than strips made before the
  clock starts: callscope's rows are that (and more: columns, links, wrapping, escapes shown);
* *a step's panes new* (:data:`STEP_PANES`): the two panes a callscope step makes new (the
  argument buffers, scrolled to the lane that grew, and the frame detail's size) scroll and
  get new rows, the others return their strips again: the least a step as callscope shows
  it costs Textual.

Both are latencies measured as callscope's are (to the end of the paint, Textual's refresh
scheduling included), not bare CPU time.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from callscope.tui.gcpolicy import GcPolicy
from callscope.tui.panes.scrolling import quick_scrollbar
from rich.segment import Segment
from rich.style import Style
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.style import Style as ContentStyle
from textual.widgets import Footer, Static

from .tui_bench import SETTLE, _p, _Paints

CSS = """
Screen { layout: vertical; }
#status { height: 1; padding: 0 1; background: $panel; }
#panes { height: 1fr; }
#frames, #buffers, #decisions { height: 1fr; }
#frames { width: 5fr; }
#buffers { width: 4fr; }
#decisions { width: 4fr; }
#summary { height: 27; }
#log { height: 1fr; }
FloorPane { overflow-y: scroll; overflow-x: hidden; }
"""

_PALETTE = [Style(color=c, bgcolor="#1e1e1e") for c in
            ("#a0a0a0", "#e0c060", "#60c0e0", "#80e080", "#e08080", "#c0a0e0")]
_BORDER = Style(color="#406080", bgcolor="#1e1e1e")


def _row(n: int, width: int) -> list[Segment]:
    """A row ``width`` cells wide in four styled pieces between a left and right border, as
    callscope's rows look (a gutter or key, then text in a few styles)."""
    inner = width - 2
    text = (f"{n:>7} data: {{\"choices\":[{{\"delta\":{{\"arguments\":\"" + "x" * inner)[:inner]
    q = inner // 4
    cuts = [0, q, 2 * q, 3 * q, inner]
    pieces = [Segment(text[a:b], _PALETTE[(n + i) % len(_PALETTE)])
              for i, (a, b) in enumerate(zip(cuts, cuts[1:], strict=False)) if b > a]
    return [Segment("│", _BORDER), *pieces, Segment("│", _BORDER)]


_CONTENT_PALETTE = [ContentStyle.from_rich_style(style) for style in _PALETTE]


def _made_row(n: int, width: int) -> list[Segment]:
    """The row :func:`_row` hands over, made now from a ``Content`` of its four styled pieces
    (the text differs per ``n``, so nothing Textual caches by text is reused)."""
    inner = width - 2
    text = (f"{n:>7} data: {{\"choices\":[{{\"delta\":{{\"arguments\":\"" + "x" * inner)[:inner]
    q = inner // 4
    cuts = [0, q, 2 * q, 3 * q, inner]
    line = Content.assemble(*((text[a:b], _CONTENT_PALETTE[(n + i) % len(_CONTENT_PALETTE)])
                              for i, (a, b) in enumerate(zip(cuts, cuts[1:], strict=False))
                              if b > a))
    return [Segment("│", _BORDER), *line.render_segments(), Segment("│", _BORDER)]


class FloorPane(ScrollView, can_focus=False):
    """Hands Textual ready rows: ``new`` makes every row on screen a new strip."""

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id)
        self.epoch = 0
        self._rows: list[list[Segment]] = []
        self._width = -1
        self._last: dict[int, Strip] = {}
        self.fresh = True
        self.made = False
        self.made_count = 0  # (every made row has a number not made before)

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        return quick_scrollbar(self)  # (the bar callscope's panes draw: cheaper than Textual's)

    def on_mount(self) -> None:
        self.virtual_size = Size(self.size.width, 100_000)  # (a scrollbar, as the panes have)

    def new(self, fresh: bool, made: bool = False) -> None:
        self.fresh, self.made = fresh, fresh and made
        if fresh:  # elsewhere, as a seek goes: the bar moves too
            self.epoch += 1
            self.scroll_to(y=self.epoch * 997 % 90_000, animate=False, immediate=True)
        self.refresh()

    def render_lines(self, crop: Region) -> list[Strip]:
        width = self.region.width  # (the scrollbar is a widget in front of the last cells)
        if width != self._width:  # the rows are made once per width (the untimed first move)
            self._rows, self._width = [_row(n, width) for n in range(64)], width
            self._last.clear()
        strips = []
        for y in crop.line_range:
            strip = None if self.fresh else self._last.get(y)
            if strip is None and self.made:
                self.made_count += 1
                strip = self._last[y] = Strip(_made_row(self.made_count, width), width)
            elif strip is None:
                strip = self._last[y] = Strip(self._rows[(self.epoch + y) % 64], width)
            strips.append(strip)
        x1, x2 = crop.column_span
        return strips if (x1, x2) == (0, width) else [s.crop(x1, x2) for s in strips]


class FloorApp(App[None]):
    CSS = CSS
    # As many keys in the footer as callscope shows (they are cut like the panes on its line).
    BINDINGS = [Binding(k, "noop", d) for k, d in
                [("q", "quit"), ("right", "step"), ("left", "back"), ("n", "next call"),
                 ("f", "frame"), ("g", "go to"), ("slash", "search"), ("e", "export"),
                 ("d", "detail"), ("t", "theme"), ("question_mark", "help")]]

    def __init__(self) -> None:
        super().__init__()
        # The collector as callscope runs it (full collections wait for a pause): a full
        # collection inside a move is Python's cost, not Textual's, and callscope avoids it.
        self.gc_policy = GcPolicy(self)

    def on_mount(self) -> None:
        self.gc_policy.start()

    def on_unmount(self) -> None:
        self.gc_policy.stop()

    def compose(self) -> ComposeResult:
        yield Static("step 0", id="status")
        with Horizontal(id="panes"):
            yield FloorPane(id="frames")
            yield FloorPane(id="buffers")
            with Vertical(id="decisions"):
                yield FloorPane(id="summary")
                yield FloorPane(id="log")
        yield Footer()

    def action_noop(self) -> None:
        pass

    def move(self, n: int, fresh: bool, only: frozenset[str] | None = None,
             made: bool = False) -> None:
        """Every pane new (``fresh``) or the same; with ``only``, just those panes new and the
        others the same (the shape of a step: see :data:`STEP_PANES`); ``made``: the new rows
        are made at the paint from ``Content`` (:func:`_made_row`), not handed over ready."""
        self.gc_policy.moved()
        for pane in self.query(FloorPane):
            pane.new(fresh if only is None else pane.id in only, made)
        self.query_one("#status", Static).update(f"step {n}", layout=False)


STEP_PANES = frozenset({"buffers", "summary"})
"""The panes a step of callscope's makes new, as this screen has them: a step scrolls the
argument buffers to the lane that grew (48 rows, most of them new: its border turns fresh and
the last lane's turns back) and shows the next frame in the frame detail (27 rows, all new; the
summary pane here is its size), and changes two or three rows of the frame list."""


@dataclass
class FloorCost:
    new_p50: float
    new_p99: float
    same_p50: float
    same_p99: float
    samples: int
    step_p50: float = 0.0
    step_p99: float = 0.0
    """Only :data:`STEP_PANES` new, the others the same rows: the shape of a step."""
    new_cpu_p99: float = 0.0
    same_cpu_p99: float = 0.0
    """The main thread's CPU to the paint, p99 (a host that steals time moves the wall clock
    of one run and not the other's; CPU shows what is Textual's work)."""
    made_p50: float = 0.0
    made_p99: float = 0.0
    """Every row new and made at the paint from ``Content``: a seek's floor for styled rows."""


async def _drive(moves: int) -> FloorCost:
    paints = _Paints()
    paints.install()
    try:
        app = FloorApp()
        paints.app = app
        async with app.run_test(size=(200, 50)) as pilot:
            await paints.settled(0)
            app.move(-1, True)  # (the rows are made at the first paint of a width: untimed)
            await paints.settled(len(paints.log))
            # The kinds, interleaved: True every row new, False the same rows, None the
            # step's panes new, "made" every row new and made from Content.
            kinds: tuple[bool | None | str, ...] = (True, False, None, "made")
            times: dict[bool | None | str, list[float]] = {k: [] for k in kinds}
            cpus: dict[bool | None | str, list[float]] = {k: [] for k in kinds}
            for n in range(moves):
                for kind in kinds:
                    since = len(paints.log)
                    start, start_cpu = time.perf_counter(), time.thread_time()
                    app.move(n, kind is not False, None if kind is not None else STEP_PANES,
                             made=kind == "made")
                    done, done_cpu = await paints.settled(since)
                    times[kind].append(done - start)
                    cpus[kind].append(done_cpu - start_cpu)
            await pilot.pause()
    finally:
        paints.uninstall()
    p: Callable[[list[float], float], float] = _p
    return FloorCost(p(times[True], 0.5), p(times[True], 0.99),
                     p(times[False], 0.5), p(times[False], 0.99), moves,
                     p(times[None], 0.5), p(times[None], 0.99),
                     p(cpus[True], 0.99), p(cpus[False], 0.99),
                     p(times["made"], 0.5), p(times["made"], 0.99))


def tui_floor(moves: int = 100) -> FloorCost:
    """Time ``moves`` moves of each kind (about ``moves * 4 * SETTLE`` seconds)."""
    assert SETTLE > 0
    return asyncio.run(_drive(moves))
