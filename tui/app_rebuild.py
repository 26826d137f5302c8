"""Cut, undo, rechunk: the app's actions that rebuild its timeline from the same bytes.

A mixin of :class:`~.app.CallscopeApp`. Each rebuilds the timeline (``Timeline.cut_at``,
``Timeline.rechunked``) and reloads the panes; ``undo`` (set up in the app's ``__init__``) keeps
the timelines a cut replaced.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, cast

from ..core.engine import ChunkStep, DecisionStep
from ..core.harness import Decision
from ..core.replay import RANDOM_MAX_CHUNK, Chunking
from ..core.timeline import Timeline
from . import safe
from .app_mixin import AppMixin
from .indexer import Indexer
from .screens import PromptScreen
from .status import recorded_bytes, same_recording

if TYPE_CHECKING:
    from .app import CallscopeApp

BACKGROUND_BYTES = 50_000
"""A cut or a re-chunk of more bytes than this is indexed in slices (:class:`.indexer.Indexer`),
so no key waits for it: indexing runs at about 6 MB/s, and the key that rebuilds at once also
paints every pane anew (a seek's cost): a cut of a 200 KB prefix built at once held the ``x``
key up to 130-150 ms, of 50 KB up to 100-110 ms, on the 4 MB bench session (a recording's
first indexing keeps its own threshold, :data:`.indexer.BACKGROUND_BYTES`: its first paint
comes first)."""
BACKGROUND_READS = 10_000
"""A cut or a re-chunk that makes more network reads than this is indexed in slices too,
whatever its size: the engine takes about 4 µs a read, however small (a cut of a 200 KB
prefix read a byte at a time, built at once, held the ``x`` key 0.9 s)."""
AFTER_PAINT = 0.05
"""Seconds from a rebuild key to its first indexing slice: the screen updates at 60 Hz, so its
paint (a layout, when the panes' scrollbars change) is in before."""
RANDOM_SEED = 7
"""The seed of the random chunking the ``c`` key cycles to."""


class RebuildActions(AppMixin):
    """The cut and chunking keys of :class:`~.app.CallscopeApp`."""

    def action_cut(self) -> None:
        """End the stream right after the current frame; when the cursor is on a network read
        that completed no frame (chunk stepping), right after that read."""
        view = self.timeline.view(self.cursor)
        on_read = view.anchor >= 0 and isinstance(self.timeline.step(view.anchor), ChunkStep)
        self._cut(view.received if on_read or view.frame is None else view.frame.end)

    def action_cut_prompt(self) -> None:
        here = self.timeline.view(self.cursor).received  # (the bytes read at the cursor)
        self.push_screen(PromptScreen("cut at byte offset", str(here or 1024),
                                      f"the stream ends after this many bytes, of "
                                      f"{self.timeline.total_bytes} (u undoes)"),
                         lambda text: self._cut_text(text))

    def _cut_text(self, text: str | None) -> None:
        if not text or not text.strip():
            return
        try:
            offset = int(text.strip().lstrip("@"), 0)
        except ValueError:
            offset = -1
        total = self.timeline.total_bytes
        if offset < 0:
            self.notify(f"Not a byte offset (0 or more): {safe.short(text.strip(), 40)}",
                        severity="error", markup=False)
        elif offset >= total:
            self.notify(f"The stream has {total} bytes: a cut at byte {offset} leaves it whole.",
                        severity="warning", timeout=3)
        else:
            self._cut(offset)

    def _cut(self, offset: int) -> None:
        if offset >= self.timeline.total_bytes:
            self.notify("Nothing to cut: the stream already ends here. Move back first.", timeout=3)
            return
        if self.building:
            self.notify("The recording is still being indexed: cut once it is.", timeout=3)
            return
        self.player.pause()
        old = self.timeline
        self.undo.append((old, self.cursor))
        reads = bisect_left(old.chunks.ends, offset) + 1  # (the reads that hold the prefix)
        if _at_once(offset, reads) or self.follower.streaming:
            cut = old.cut_at(offset)
            same_recording(cut, old)
            self._show_cut(cut, offset)
            return
        # A long prefix is indexed in slices, as a large recording is, so keys keep answering.
        timeline = Timeline.indexing(list(old.source), old.protocol_requested, old.tools,
                                     old.chunking, min(offset, old.cut if old.cut is not None
                                                       else offset), old.limits)
        self.indexer = indexer = self._indexer(timeline, old)
        self.timeline = timeline
        self._load(cursor=0)
        self.notify(f"Cut at byte {offset}: indexing in the background…", timeout=3)

        async def index() -> None:
            await indexer.run()
            if self.timeline is timeline and self.is_running:  # (closing: the panes are gone)
                self._show_cut(timeline, offset, loaded=True)

        self._index_after_paint(indexer, index)

    def _index_after_paint(self, indexer: Indexer,
                           index: Callable[[], Coroutine[None, None, None]]) -> None:
        """Run ``index`` once the key's own screen is painted (its first slices would otherwise
        come between the key's refresh and its paint), unless ``indexer`` was dropped since."""
        def start() -> None:
            if self.indexer is indexer:
                self.run_worker(index(), name="index", exclusive=True)

        # (after the screen's next update, not the app's next idle: call_after_refresh ran
        # 5-20 slices before the key's paint)
        self.set_timer(AFTER_PAINT, start)

    def _indexer(self, timeline: Timeline, old: Timeline) -> Indexer:
        """An indexer for ``timeline``, rebuilt from the bytes of ``old``."""
        same_recording(timeline, old)
        return Indexer(cast("CallscopeApp", self), timeline, rebuild=True,
                       total=recorded_bytes(old))

    def _show_cut(self, timeline: Timeline, offset: int, *, loaded: bool = False) -> None:
        """Show the cut ``timeline``; ``loaded``: the panes show it already (indexed in the
        background, they took in its steps as it grew, as a live stream's panes do): only the
        cursor moves, with no reload of every pane (~180 ms on the 4 MB session, which a key
        pressed then waited for)."""
        if not loaded:
            self.timeline = timeline
            self._load(cursor=0)  # (from step 0: an index of the old timeline may not be in it)
        self.move(len(self.timeline) - 1, quiet=True)
        refused = sum(isinstance(s, DecisionStep) and s.decision.action == "refuse"
                      for s in self.timeline.log)
        calls = "1 call" if refused == 1 else f"{refused} calls"
        self.notify(f"Cut at byte {offset}: the stream now ends there; {calls} refused. "
                    "u undoes.", timeout=4)

    def action_undo_cut(self) -> None:
        if not self.undo:
            self.notify("No cut to undo.", timeout=2)
            return
        timeline, cursor = self.undo.pop()
        if self.indexer is not None and self.indexer.timeline is not timeline:
            # The timeline being indexed is dropped: its indexing with it, or the keys that
            # refuse while a recording is indexed (x, c) would wait for a timeline not shown.
            self.workers.cancel_group(self, "index")
            self.indexer = None
        if timeline.chunking != self.timeline.chunking:  # (rechunked when needed, not per change)
            timeline, end = timeline.rechunked(self.timeline.chunking), timeline.end
            timeline.end = end
        self.timeline, self.since = timeline, None
        self._load(cursor=0)
        self.cursor = cursor
        self.notify("Cut undone: " + (f"the stream ends at byte {timeline.cut} again"
                                       if timeline.cut is not None else "the whole stream again")
                    + (f" ({len(self.undo)} more cut{'s' * (len(self.undo) != 1)} to undo)."
                       if self.undo else "."), timeout=3)

    def action_cycle_chunking(self) -> None:
        if self.follower.streaming or self.building:
            self.notify("The stream is still arriving: change the chunking once it ended."
                        if self.follower.streaming else
                        "The recording is still being indexed: change the chunking once it is.",
                        timeout=3)
            return
        order = ["recorded", "bytes:1", f"random:{RANDOM_SEED}"]
        now = str(self.timeline.chunking)
        nxt = Chunking.parse(order[(order.index(now) + 1) % 3 if now in order else 0])
        view = self.timeline.view(self.cursor)
        frame = view.frame.index if view.frame is not None else None
        old = self.timeline
        before = [s.decision for s in old.log if isinstance(s, DecisionStep)]
        args = (list(old.source), old.protocol_requested, old.tools, nxt, old.cut, old.limits)
        size = recorded_bytes(old) if old.cut is None else old.cut  # (summed once per recording)
        if _at_once(size, _reads(nxt, size, len(old.source))):
            built = Timeline.build(*args)
            built.end = old.end
            self._show_rechunked(built, frame, before)
            return
        # A large recording is indexed in slices on the event loop, with its progress in the
        # status line, so every key keeps answering while it is.
        timeline = Timeline.indexing(*args)
        timeline.end = old.end
        self.indexer = indexer = self._indexer(timeline, old)
        self.timeline, self.since = timeline, None
        self._load(cursor=0)
        self.notify(f"Chunking {nxt}: indexing in the background…", timeout=3)

        async def index() -> None:
            await indexer.run()
            # (where the user moved meanwhile, if they did; closing: the panes are gone)
            if self.timeline is timeline and self.is_running:
                here = timeline.view(self.cursor).frame if self.cursor else None
                self._show_rechunked(timeline, here.index if here is not None else frame, before,
                                     loaded=True)

        self._index_after_paint(indexer, index)

    def _show_rechunked(self, timeline: Timeline, frame: int | None,
                        before: list[Decision], *, loaded: bool = False) -> None:
        """Show the re-chunked ``timeline`` at ``frame``; ``loaded``: as :meth:`_show_cut`'s."""
        after = [s.decision for s in timeline.log if isinstance(s, DecisionStep)]
        if not loaded:
            self.timeline, self.since = timeline, None
            self._load(cursor=0)
        self.cursor = timeline.step_for_frame(frame) if frame is not None else 0
        same = "decisions unchanged" if after == before else "DECISIONS CHANGED (engine bug!)"
        self.notify(f"Chunking {timeline.chunking}: {len(timeline.chunks)} chunks; {same}.",
                    timeout=3, severity="information" if after == before else "error")


def _at_once(size: int, reads: int) -> bool:
    """A rebuild of ``size`` bytes in ``reads`` network reads is quick enough to run in the
    key that asked for it."""
    return size <= BACKGROUND_BYTES and reads <= BACKGROUND_READS


def _reads(chunking: Chunking, size: int, recorded: int) -> int:
    """About how many reads ``chunking`` makes of ``size`` bytes (at most: ``recorded``, the
    reads the recording has, is for the recorded chunking)."""
    if chunking.mode == "bytes":
        return -(-size // chunking.size)
    if chunking.mode == "random":  # (sizes drawn evenly from 1 to the maximum)
        return size * 2 // (RANDOM_MAX_CHUNK + 1) + 1
    if chunking.mode == "whole":
        return 1
    return recorded
