"""The app's frame search: find frames by event name or bytes, step between matches, filter.

A mixin of :class:`~.app.CallscopeApp` (the search state, ``search_text``, ``matches``,
``filtering``, is set up in its ``__init__``); :meth:`SearchActions._find` runs again whenever the
app loads a timeline, and on the new frames only when a live timeline grows.
"""

from __future__ import annotations

from bisect import bisect_left

from ..core import frame_query
from . import safe
from .app_mixin import AppMixin
from .screens import PromptScreen


class SearchActions(AppMixin):
    """The search keys of :class:`~.app.CallscopeApp`."""

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
        self._find(text)
        if text and not self.matches:
            self.notify(f"No frame matches {safe.short(text, 40)}", markup=False, severity="warning")
        self.refresh_view()
        if self.matches:
            self.action_match(1)

    def _find(self, text: str, first: int = 0) -> None:
        """Search the frames from ``first`` on (earlier matches are kept): a display filter
        (``event ~ delta and call = 2``, see core/frame_query.py), or text, found in the frames'
        bytes and in what they rebuild (a call's arguments, the assistant's text), across
        fragment boundaries."""
        timeline = self.timeline
        kept = self.matches[:bisect_left(self.matches, first)]
        if not text:
            found: list[int] = []
        elif frame_query.looks_like_filter(text):
            try:
                predicate = frame_query.parse(text)
            except frame_query.FilterError as exc:
                self.notify(f"Filter: {exc}", severity="error", markup=False, timeout=5)
                return
            facts = frame_query.frame_facts(timeline.steps.objects(), timeline.frames)
            found = [i for i in frame_query.matching(facts, predicate) if i >= first]
        else:
            needle = text.lower().encode("utf-8", "surrogatepass")
            rebuilt = frame_query.text_frames(timeline.state.calls.values(),
                                                 timeline.steps.objects(), text)
            found = [f.index for f in timeline.frames[first:]
                     if f.event == text or needle in f.raw.lower() or f.index in rebuilt]
        self.search_text = text
        self.matches = kept + found
        self._searched = len(timeline.frames)

    def find_new_frames(self) -> None:
        """The timeline grew: search the new frames too."""
        if self.search_text:
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
