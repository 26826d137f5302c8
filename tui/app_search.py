"""The app's frame search: find frames by event name or bytes, step between matches, filter.

A mixin of :class:`~.app.CallscopeApp` (the search state, ``search_text``, ``matches``,
``filtering``, is set up in its ``__init__``); :meth:`SearchActions._find` runs again whenever the
app loads a timeline, and on the new frames only when a live timeline grows. A long search runs
in slices while keys are answered (:mod:`.search_scan`): its matches are the app's as found.
"""

from __future__ import annotations

from bisect import bisect_left

from ..core import frame_query, frame_scan
from . import indexer, safe, search_scan
from .app_mixin import AppMixin
from .screens import PromptScreen
from .search_scan import SearchRun


class SearchActions(AppMixin):
    """The search keys of :class:`~.app.CallscopeApp`."""

    _scan: SearchRun | None = None
    """The search running in slices, if any."""

    def action_search(self) -> None:
        self.push_screen(PromptScreen("search frames", "text, or a filter: event ~ delta and call = 2",
                                      "text: in the frames' bytes, the rebuilt arguments and the "
                                      "assistant text (case-insensitive); a filter over frame, "
                                      "event, call, tool, anomaly, text, bytes with = != ~ < > "
                                      "and/or/not. f / F: next / previous match, v: only matches",
                                      self.search_text), self._search)

    def _search(self, text: str | None) -> None:
        if text is None:
            return
        self._find(text, announce=True)

    def _find(self, text: str, first: int = 0, *, announce: bool = False) -> None:
        """Search the frames from ``first`` on (earlier matches are kept): a display filter
        (``event ~ delta and call = 2``, see core/frame_query.py), or text, found in the frames'
        bytes and in what they rebuild (a call's arguments, the assistant's text), across
        fragment boundaries. ``announce``: the search was asked for (the first match ahead is
        shown, no match is said). A filter that cannot be read is said, the search kept."""
        timeline = self.timeline
        found = self.matches[:bisect_left(self.matches, first)]
        try:
            work = frame_scan.search(timeline, text, first, found) if text else iter(())
        except frame_query.FilterError as exc:
            self.notify(f"Filter: {exc}", severity="error", markup=False, timeout=5)
            return
        if self._scan is not None:  # (a new search, or the timeline reloaded)
            self._scan.cancelled = True
            self._scan = None
        self.search_text, self.matches = text, list(found)
        run = SearchRun(timeline, work, found, len(timeline.frames), self.cursor if announce else None)
        count = run.stop - first
        first_slice = (None if count <= search_scan.SYNC_FRAMES or not text else
                       search_scan.FIRST_SLICE if count <= search_scan.QUICK_FRAMES else indexer.SLICE)
        if run.advance(first_slice):
            self.search_done(run, shown=True)
            return
        self._scan = run
        self.run_worker(run.run(self), name="search", group="search", exclusive=True)
        self.search_progressed(run)  # (what its first slice found; the status line says it runs)

    def search_progress(self) -> float | None:
        """How much of the running search is done (None: none runs)."""
        return self._scan.fraction if self._scan is not None else None

    def search_progressed(self, run: SearchRun) -> None:
        """A running search found more: show it, and its first match ahead of the cursor once
        there is one (the match a whole search would go to), unless the cursor moved meanwhile."""
        self.matches = list(run.found)
        if run.announce is not None and run.announce == self.cursor:
            view = self.timeline.view(self.cursor)
            current = view.frame.index if view.frame is not None else -1
            if self.matches and self.matches[-1] > current:
                run.announce = None
                self.action_match(1)
        self.refresh_view()

    def search_done(self, run: SearchRun, *, shown: bool = False) -> None:
        """A search ended; ``shown``: the caller refreshes the view (a search run at once)."""
        if self._scan is run:
            self._scan = None
        self.matches, self._searched = run.found, run.stop
        if run.stop < len(self.timeline.frames):  # (it grew meanwhile: the new frames too)
            self.find_new_frames()
        if run.announce is not None and not self.matches:
            self.notify(f"No frame matches {safe.short(self.search_text, 40)}", markup=False,
                        severity="warning")
        if not shown or run.announce is not None:
            self.refresh_view()
        if run.announce is not None and self.matches and run.announce == self.cursor:
            self.action_match(1)

    def find_new_frames(self) -> None:
        """The timeline grew: search the new frames too (after the search running, if one is)."""
        if self.search_text and self._scan is None:
            self._find(self.search_text, self._searched)

    def action_filter(self) -> None:
        if not self.search_text:
            self.notify("Search first (/): the filter shows only the frames that match.", timeout=2)
            return
        self.filtering = not self.filtering
        self.refresh_view()

    def action_match(self, direction: int) -> None:
        if not self.matches:
            self.notify("No search results: press / to search.", timeout=2)
            return
        view = self.timeline.view(self.cursor)
        current = view.frame.index if view.frame is not None else -1
        ahead = [i for i in self.matches if (i > current if direction > 0 else i < current)]
        target = (ahead[0] if direction > 0 else ahead[-1]) if ahead else (
            self.matches[0] if direction > 0 else self.matches[-1])
        self.action_goto_frame(target)
