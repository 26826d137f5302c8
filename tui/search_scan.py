"""A search over a long timeline while the app runs: in slices of the app's event loop.

A search reads every frame (:func:`.frame_scan.search`); over a long session that is a second
or more. As the indexer does (``indexer.py``: a worker thread would not be faster under the
GIL, and would race the panes), a search of more than :data:`SYNC_FRAMES` frames that does not
end in its first slice (:data:`FIRST_SLICE`) goes on in slices of about
:data:`~.indexer.SLICE` seconds, each followed by :data:`~.indexer.BREATHE` seconds of the
event loop, so a key waits at most one slice. Its matches are the app's as they are found
(the counter grows, ``f``/``F`` and ``v`` use them), and the status line says how far it is.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..core.timeline import Timeline
from . import indexer

if TYPE_CHECKING:
    from .app_search import SearchActions

SYNC_FRAMES = 3000
"""A search of at most this many frames runs at once, in the key that asked for it (about
10-20 ms); a larger one for :data:`FIRST_SLICE` seconds in the key, then in slices."""
FIRST_SLICE = 0.04
"""Seconds a search of up to :data:`QUICK_FRAMES` frames runs in the key that asked for it: most
searches of a session of 10^4 frames end in it, shown as one that ran at once (one paint). One
that goes on in slices paints its progress besides and ends later (the 4 MB bench session's
searches: 25 ms here, key to last paint p50 146 ms, p99 362; 40 ms, 55 and 91 ms, load 2.3-3);
with the paint that follows, a key behind it stays under 100 ms."""
QUICK_FRAMES = 20_000
"""Frames a search can read in :data:`FIRST_SLICE` seconds, about; a larger one cannot end in
its key, so it runs one ordinary slice there (a key behind it waits 80-107 ms on the 10^5-frame
session with the longer first slice, load 1.2)."""
PROGRESS = 0.1
"""Seconds between two showings of a running search's matches and progress (and at once when
the first match is found)."""


class SearchRun:
    """One search's work (an iterator of the part done, :func:`.frame_scan.search`), run to
    its end at once (:meth:`advance`) or in slices (:meth:`run`)."""

    def __init__(self, timeline: Timeline, work: Iterator[float], found: list[int], stop: int,
                 announce: int | None) -> None:
        """``found``: the list the work appends its matches to (the app shows a copy: a pane
        tells a new filter by the list it is given); ``stop``: the frames searched are those
        before it; ``announce``: the cursor when the search was asked for (the first match
        ahead of it is shown, and no match said), or None."""
        self.timeline, self.work, self.found = timeline, work, found
        self.stop, self.announce = stop, announce
        self.fraction = 0.0
        self.cancelled = False

    def advance(self, seconds: float | None = None) -> bool:
        """Do the work for about ``seconds`` (None: to its end); whether it is done."""
        until = None if seconds is None else time.perf_counter() + seconds
        for fraction in self.work:
            self.fraction = fraction
            if until is not None and time.perf_counter() >= until:
                return False
        return True

    async def breathe(self) -> None:
        """Let the event loop run other work (keys, paints) between two slices."""
        await asyncio.sleep(indexer.BREATHE)

    async def run(self, app: SearchActions) -> None:
        shown, matched = time.perf_counter(), bool(self.found)
        while True:
            if self.cancelled or app.timeline is not self.timeline:
                return
            if self.advance(indexer.SLICE):
                break
            if time.perf_counter() - shown > PROGRESS or not matched and app.matches:
                app.search_progressed(self)
                shown, matched = time.perf_counter(), bool(self.found)
            await self.breathe()
        if not self.cancelled and app.timeline is self.timeline:
            app.search_done(self)
