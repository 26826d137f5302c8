"""Indexing a long recording while the app runs: the first steps at once, the rest in slices.

The engine is single-threaded Python: a worker thread would not index any faster (the GIL), and
it would race the panes that read the timeline it grows. So the app's own event loop indexes: a
first slice before the first paint (the session's first steps are on screen at once), then
slices of about :data:`SLICE` seconds, each followed by a yield to the event loop, so a key press
waits at most one slice. The panes take in what was indexed at most :data:`REFRESH` times a
second, the way a live stream is followed (``follow.py``), but the cursor stays where it is.
"""

from __future__ import annotations

import asyncio
import gc
import time
from typing import TYPE_CHECKING

from ..core.timeline import Timeline
from .panes.buffers import BuffersPane
from .panes.frames import FramesPane

if TYPE_CHECKING:
    from .app import CallscopeApp

BACKGROUND_BYTES = 1_000_000
"""Inputs larger than this are indexed while the app runs (the first steps at once), so the
screen appears at once; smaller ones (a fraction of a second) are indexed before it."""

FIRST_STEPS = 4000
"""Steps indexed before the first paint (about 40 ms of engine time)."""
REBUILD_FIRST_STEPS = 200
"""Steps a cut or a re-chunk indexes at once, in the key that asked for it (the rest in slices):
the cursor goes to step 0 meanwhile, so the first screenful is all it needs; 4000 at once held
the ``x`` key 130 ms."""
SLICE = 0.008
"""Seconds of indexing between two yields to the event loop."""
BREATHE = 0.002
"""Seconds the event loop runs other work after each slice. A key goes through several message
queues (driver, app, screen, bindings, the panes' refresh, the paint), one loop iteration each:
with only a bare yield between slices, each of those hops waited for a slice of its own."""
BATCH = 200
"""Steps per call into the timeline (the clock is read between batches)."""
REFRESH = 0.25
"""Seconds between two refreshes of the panes while indexing."""


class Indexer:
    """Indexes one recording (:meth:`Timeline.indexing`) in the app's event loop."""

    def __init__(self, app: CallscopeApp, timeline: Timeline, *, rebuild: bool = False,
                 total: int | None = None) -> None:
        """``rebuild``: a cut or re-chunk (:data:`REBUILD_FIRST_STEPS` at once); ``total``: the
        recording's size, when known."""
        self.app, self.timeline = app, timeline
        self.started = time.perf_counter()
        self.finished_after: float | None = None
        """Seconds from the start to the whole recording indexed."""
        self.total = sum(len(data) for _, data in timeline.source) if total is None else total
        timeline.index_more(min(REBUILD_FIRST_STEPS, FIRST_STEPS) if rebuild else FIRST_STEPS)
        gc.freeze()

    @property
    def done(self) -> bool:
        return not self.timeline.indexing_pending

    def fraction(self) -> float:
        """How much of the recording is indexed: bytes framed so far (not bytes read: a
        recording that is one read has read everything before its first frame)."""
        frames = self.timeline.frames
        return (frames[-1].end if frames else 0) / self.total if self.total else 1.0

    async def run(self) -> None:
        timeline, refreshed = self.timeline, time.perf_counter()
        while not self.done:
            until = time.perf_counter() + SLICE
            while not timeline.index_more(BATCH) and time.perf_counter() < until:
                pass  # (a batch at least per slice)
            if self.done or time.perf_counter() - refreshed > REFRESH:
                # The index is millions of long-lived objects: moved out of the collector's
                # sight, a full collection no longer walks them (each took up to a second,
                # while indexing and then in the middle of a key press).
                gc.freeze()
                self._show()
                refreshed = time.perf_counter()
            await asyncio.sleep(BREATHE)
        self.finished_after = time.perf_counter() - self.started
        if self.app.is_running and self.app.timeline is self.timeline:
            self.app.query_one(BuffersPane).measure_settled()  # (it is whole now)

    def _show(self) -> None:
        """Let the panes take in the new steps (when this recording is the one shown)."""
        app = self.app
        if not app.is_running:
            return
        if app.timeline is not self.timeline:  # a cut is shown: only the status line counts
            app.refresh_view()
            return
        app.query_one(FramesPane).grow()
        app.find_new_frames()
        app.refresh_view()
