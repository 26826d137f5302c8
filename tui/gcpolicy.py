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

A young collection of generation 1 (the strips of the last moves: 10-13 thousand objects,
3-12 ms) came inside about one move in twenty, in most of the slowest steps. After a move's
paint, when the next generation-0 collections would start one (:data:`YOUNG_AHEAD`), it is run
there instead: while the user looks at the screen the move painted, not inside the next key.
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

    def start(self) -> None:
        if self._saved is None:
            self._saved = gc.get_threshold()
            gen0, gen1, _ = self._saved
            gc.set_threshold(gen0, gen1, RARE_FULL)
            self.app.set_interval(CHECK, self._tick, name="gc-idle")

    def stop(self) -> None:
        if self._saved is not None:
            gc.set_threshold(*self._saved)
            self._saved = None

    def moved(self) -> None:
        self.last_move = time.monotonic()
        self.pending = True
        if self._saved is not None and not self._young_due:
            self._young_due = True
            self.app.call_after_refresh(self._young)

    def _young(self) -> None:
        """After a move's paint: the generation-1 collection, when the next few generation-0
        collections would start it anyway (inside the next move)."""
        self._young_due = False
        young_collections = gc.get_count()[1]  # (generation-0 collections since the last one)
        if young_collections >= gc.get_threshold()[1] - YOUNG_AHEAD:
            gc.collect(1)

    def _tick(self) -> None:
        if self.pending and time.monotonic() - self.last_move >= IDLE:
            self.pending = False
            self.collections += 1
            gc.collect()
