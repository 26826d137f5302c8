"""Facts from a network thread, handed to the app's thread a slice at a time.

A live stream at 10,000 events a second is tens of thousands of network reads a second. Posted
as one Textual message per read, the reads queued in front of every key press and every
refresh, and Textual's handling of each message cost more than the engine's work on the read
(measured: ``python -m bench.live_bench``; docs/hostile-input.md, "Faults under load"). An inbox
keeps the reads in a queue of its own and posts one wake-up while any are waiting; the app's
thread then handles them for at most one slice and yields to the event loop, so a key waits at
most one slice behind the stream. Order is kept: one queue, handled in arrival order.

Threads: :meth:`Inbox.put` may be called from any thread; :meth:`Inbox.drain` runs in the app's
thread only. ``deque.append``/``popleft`` are atomic; the ``_waiting`` flag may race, but only
towards an extra (empty) drain, never towards an item left without a drain scheduled: the drain
clears the flag *before* it looks at the queue, and ``put`` appends *before* it reads the flag.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

SLICE = 0.02
"""Seconds of handling before the app's thread yields to keys and paints (a 50 Hz budget)."""


class Inbox(Generic[T]):
    """``put`` from a worker thread; ``handle`` runs in the app's thread, in order, in slices."""

    def __init__(self, schedule: Callable[[Callable[[], None]], object],
                 handle: Callable[[T], None], *,
                 resume: Callable[[Callable[[], None]], object] | None = None,
                 after: Callable[[], None] | None = None,
                 slice_seconds: float = SLICE, max_waiting: int | None = None) -> None:
        """``schedule`` runs a callable later in the app's thread, from any thread
        (``App.call_later``); ``resume`` schedules the next slice from the app's thread once the
        event loop has run (``App.call_after_refresh``: keys, timers and the screen's paint come
        first; a callback posted straight back to the app's queue would starve them, since the
        app handles its queue without yielding while it is not empty). ``after`` runs once per
        slice that handled anything (e.g. a refresh). With ``max_waiting``, :meth:`put` blocks
        (the producer's thread, never the app's) while that many items wait: a reader faster
        than the app then reads slower, and TCP flow control slows the sender, instead of the
        backlog (and what the screen shows) falling further and further behind."""
        self._items: deque[T] = deque()
        self._max_waiting = max_waiting
        self._drained = threading.Event()
        self._closed = False
        self._waiting = False
        self._schedule, self._handle, self._after = schedule, handle, after
        self._resume = resume or schedule
        self._slice = slice_seconds

    def __len__(self) -> int:
        return len(self._items)

    def put(self, item: T) -> None:
        """Queue an item (any thread but the app's) and make sure a drain is scheduled; with
        ``max_waiting``, wait while the backlog is full (until :meth:`close`)."""
        items = self._items
        items.append(item)
        if not self._waiting:
            self._waiting = True
            self._schedule(self._drain_slice)
        limit = self._max_waiting
        while limit is not None and len(items) > limit and not self._closed:
            self._drained.clear()
            self._drained.wait(0.05)  # bounded: a drain that set it just before is not missed

    def close(self) -> None:
        """No more drains will come (the app is closing): a blocked :meth:`put` returns."""
        self._closed = True
        self._drained.set()

    def drain(self, *, everything: bool = False) -> int:
        """Handle queued items in the app's thread: one slice, or all of them (before the end of
        the stream is handled). Schedules the rest; returns how many were handled."""
        self._waiting = False
        items, handle = self._items, self._handle
        deadline = None if everything else time.perf_counter() + self._slice
        handled = 0
        try:
            while items:
                handle(items.popleft())
                handled += 1
                if deadline is not None and items and time.perf_counter() > deadline:
                    break
        finally:
            # Whatever stopped the slice (its budget, or an error in ``handle``, which goes on
            # up to the app), what is left is scheduled: nothing waits for the next put.
            if items and not self._waiting:
                self._waiting = True
                self._resume(self._drain_slice)  # after keys, timers and a paint
        self._drained.set()
        if handled and self._after is not None:
            self._after()
        return handled

    def _drain_slice(self) -> None:
        self.drain()
