"""Full garbage collections while the user pauses, not in the middle of a move.

The timeline's index (a million objects) is frozen (``gc.freeze``, see indexer.py), but the
rows the panes and Textual keep cached (strips, each with seven small caches of its own, their
segments and styles) are 100-150 thousand tracked objects, and a full collection walks them
all: 60-140 ms on the benchmark machine, about once a second while keys are held, each one
landing inside some move, where it would be most of the move's p99.

Young collections (generations 0 and 1) stay as they are: they are what frees the short-lived
cycles. Only the *full* collection is moved: while the app runs, CPython starts one after
:data:`RARE_FULL` collections of generation 1 instead of 10 (still bounded: a stream of moves
that never pauses gets one every few minutes), and the app runs one itself once no key, click
or scroll has come for :data:`IDLE` seconds after a move, when nothing waits for the screen.
Both are undone when the app exits.

Young collections wait for the paint too. A seek allocates tens of thousands of objects (the
rows it makes, Textual's strips and their caches): with CPython's threshold of 700, that is
several generation-0 collections and, one move in a few, a generation-1 collection inside the
move, 3-5 ms of a 30 ms seek at its median. So from a move (the cursor set) to its paint the
collector is off, and after the paint the collections the move's allocations call for are run
at once (:meth:`GcPolicy._young`): generation 1 when CPython would have reached it within
:data:`YOUNG_AHEAD` more generation-0 collections, else generation 0. The collector is back on
between moves, for what the app does when no key moves it (indexing, a live stream), and a
move that never paints (a screen not shown) turns it back on at the next tick.
"""

from __future__ import annotations

import gc
import time
from typing import Any

from textual.app import App

IDLE = 0.6
"""Seconds without a move before the deferred full collection runs."""
RARE_FULL = 1000
"""Generation-1 collections between two automatic full collections while the app runs
(CPython's default is 10; each generation-1 collection takes ~10 allocations' worth of
generation-0 collections of 700 objects each)."""
YOUNG_AHEAD = 4
"""A move's paint is followed by the generation-1 collection when it is at most this many
generation-0 collections away (a step makes about 2-3 of them; a seek more)."""
PAUSE_LIMIT = 0.5
"""Seconds the collector stays off for a move that has not painted: then it is back on."""
CHECK = 0.25
"""Seconds between two looks at the clock (a timer of the app's, cheap when idle)."""


class GcPolicy:
    """Owns the collector's third threshold for the app's lifetime."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self._saved: tuple[int, int, int] | None = None
        self.last_move = 0.0
        self.pending = False
        """A move happened since the last full collection."""
        self.collections = 0
        self._young_due = False  # a look at the young generations is asked for after a paint
        self._paused_at: float | None = None  # the collector was turned off for a move, then

    def start(self) -> None:
        if self._saved is None:
            self._saved = gc.get_threshold()
            gen0, gen1, _ = self._saved
            gc.set_threshold(gen0, gen1, RARE_FULL)
            self.app.set_interval(CHECK, self._tick, name="gc-idle")

    def stop(self) -> None:
        self._resume()
        if self._saved is not None:
            gc.set_threshold(*self._saved)
            self._saved = None

    def moved(self) -> None:
        self.last_move = time.monotonic()
        self.pending = True
        if self._saved is None:
            return
        if self._paused_at is None and gc.isenabled():
            gc.disable()
            self._paused_at = self.last_move
        if not self._young_due:
            self._young_due = True
            self.app.call_after_refresh(self._young)

    def _resume(self) -> None:
        if self._paused_at is not None:
            self._paused_at = None
            gc.enable()

    def _young(self) -> None:
        """After a move's paint: the collector on again, and the young collection the move's
        allocations call for, run now rather than at the next key's first allocations."""
        self._young_due = False
        # Decide and collect while the collector is still off: once it is on, the very next
        # allocation (the count's own tuple) would start an automatic collection of whichever
        # generation is over its threshold, before this choice is made.
        allocated, young_collections, _ = gc.get_count()  # (young: gen-0 runs since gen 1's)
        gen0, gen1, _ = gc.get_threshold()
        if allocated >= gen0:
            due = young_collections + max(1, allocated // gen0)
            gc.collect(1 if due >= gen1 - YOUNG_AHEAD else 0)
        self._resume()

    def _tick(self) -> None:
        if self._paused_at is not None and time.monotonic() - self._paused_at >= PAUSE_LIMIT:
            self._resume()
        if self.pending and time.monotonic() - self.last_move >= IDLE:
            self.pending = False
            self.collections += 1
            gc.collect()
