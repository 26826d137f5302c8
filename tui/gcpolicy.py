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

    def _tick(self) -> None:
        if self.pending and time.monotonic() - self.last_move >= IDLE:
            self.pending = False
            self.collections += 1
            gc.collect()
