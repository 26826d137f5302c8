"""The decisions pane: the summary of the gate at the cursor on top, its log below.

Two line-API views of the app's view at the cursor (:mod:`.decisions` makes their text). The
summary is the whole headline (:func:`.decisions.summary_blocks`) when its share of the pane
shows the turn and a row of a verdict under it, else the compact one (:mod:`.decision_compact`),
chosen for the session.
"""

from __future__ import annotations

from textual.containers import Vertical

from ...core.timeline import Timeline, View
from .blocks import Block, Wrapped
from .decision_compact import HINT, compact_blocks
from .decisions import log_blocks, summary_blocks
from .rows import RowsView


class DecisionsPane(Vertical, can_focus=False):
    """The summary on top, the log below, both line-API views.

    The summary is as tall as the tallest summary of the session (the one at its last step, or
    the tallest shown so far while the session still grows), up to 60% of the pane; with less to
    show, its last rows stay blank. Sized to the summary at the cursor, it changed height on
    most seeks, and a change of height is a layout of the whole screen (with a scrollbar coming
    or going: two, each waiting for the next refresh): 40-150 ms a seek. Sized for the session,
    the panes stay where they are while stepping.

    When the summary's share of the pane would show the whole summary's turn (with how the
    stream ended) and not a row of any verdict under it (at 80x24 the share is four rows of
    text; the demo's turn and ending take five), the compact summary is shown for the session
    instead: the turn and where the transport ended, then a row per call, its verdict first,
    with its bottom edge saying that ``z`` shows the whole one (zoomed, the pane shows the
    whole summary). A whole summary that only needs to scroll for its later calls stays whole:
    each verdict is in the log too."""

    SUMMARY_SHARE = 0.6
    """The summary's largest share of the pane's height (as the CSS max-height says)..."""
    SUMMARY_SHARE_ZOOMED = 0.85
    """... or this share when the pane is zoomed (it has the screen: the whole headline shows,
    with the log's last rows under it; at 80x24 60% cut the demo's headline before its
    lenient-harness contrast)."""
    SUMMARY_LEAST = 5
    """... or this many rows (its border included) when the share is fewer and the pane has
    room for the log's first rows: at 80x24, under a status line of three rows, 60% was three
    rows of text, one short of the headline's verdict and the transport's end."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.timeline: Timeline | None = None
        self.summary_view = RowsView(classes="summary-scroll", sticky_scrollbar=False)
        self.log_view = RowsView(classes="log-scroll")
        self._view: View | None = None
        self._compact: int | None = None
        """The summary shown: None, the whole one; else the compact one, for this many rows
        of text."""
        self._decided = False  # whether _compact is chosen for the pane's size
        # Per summary (whole, compact): rows of the tallest one known, at the width without a
        # scrollbar and at the width with one (both, so the result never depends on whether
        # the bar is there right now), and whether the last step's is among them.
        self._peaks: dict[bool, tuple[int, int]] = {}
        self._end_measured: set[bool] = set()
        self._lead = 0  # rows of the whole summary's turn (the tallest known)
        self._widths: tuple[int, int] | None = None  # (without, with a bar) the peaks are for
        self._applied: tuple[int, bool, int, int | None] | None = None  # (rows, fits, pane
        # height, compact) applied

    def compose(self):  # type: ignore[no-untyped-def]
        yield self.summary_view
        yield self.log_view

    def load(self, timeline: Timeline) -> None:
        self.timeline = timeline
        self.summary_view.clear_cache()
        self.log_view.clear_cache()
        self._forget_sizes()

    def _forget_sizes(self) -> None:
        """As a fresh pane: the summary's size (and whether it is compact) decided again."""
        self._peaks, self._end_measured, self._widths, self._decided = {}, set(), None, False
        self._lead = 0

    def show(self, view: View) -> None:
        assert self.timeline is not None
        self._view = view
        self.summary_view.set_blocks(self._summary_at(view, self._compact))
        self._fit_summary()
        if self.log_view.set_blocks(log_blocks(view, self.timeline)):
            self.log_view.scroll_to_end()  # (from an entry's first row: see RowsView.top_for)

    def _summary_at(self, view: View, compact: int | None) -> list[Block]:
        if compact is None:
            return summary_blocks(view, self.timeline)
        return compact_blocks(view, self.timeline, compact)

    def on_resize(self) -> None:
        self._forget_sizes()
        self.call_after_refresh(self._fit_summary)

    def _fit_summary(self) -> None:
        """Choose the summary (whole or compact) and size it for the session, as the class
        docstring says: a layout only when the tallest summary known grows, or the pane is
        resized.

        Rows are counted at the width without a scrollbar; when that many do not fit the
        summary's share of the pane, the bar will be there, so the rows at the width with the
        bar count. Both widths come from the summary's region, never from whether its bar is
        shown at this moment: counted at the current width, a summary that had a bar when the
        window was widened kept the rows of the narrower width (1-3 too many, with an empty
        track), and what it ended with depended on when the layout after the resize landed."""
        summary, timeline, view = self.summary_view, self.timeline, self._view
        if timeline is None or view is None or not summary._width \
                or not summary.content_region.width:
            return
        widths = (summary.width_without_bar, summary.width_with_bar)
        if widths != self._widths:  # (rows depend on the width)
            self._forget_sizes()
            self._widths = widths
        pane = self.content_region.height
        zoomed = getattr(self.app, "zoomed", None) is self
        share = self.SUMMARY_SHARE_ZOOMED if zoomed else self.SUMMARY_SHARE
        cap = max(int(pane * share), min(self.SUMMARY_LEAST, pane - 3))
        compact = self._compact if self._decided else None
        self._decided = True
        free, barred = self._peak(None, widths) if compact is None else (0, 0)
        if compact is None and not zoomed and self._lead + 1 > cap - 1 and cap > 1:
            compact = cap - 1  # (no verdict would show under the turn: the compact summary)
        if compact is not None:
            free, barred = self._peak(compact, widths)
        if compact != self._compact:
            self._compact = compact
            summary.set_blocks(self._summary_at(view, compact))
            summary.border_subtitle = HINT if compact is not None else ""
        # A scrollbar coming or going is a layout too: when the tallest summary does not fit
        # its share of the pane, the bar stays (an empty track while the summary is short).
        # (the compact summary, with its border, fits its cap exactly; the whole one keeps a
        # row's margin, as it always has)
        fits = free + 1 <= cap if compact is not None else free + 1 < cap - 1
        rows = free if fits else barred
        if self._applied == (rows, fits, pane, compact) or not pane:
            return
        self._applied = (rows, fits, pane, compact)
        summary.styles.max_height = cap
        summary.styles.height = rows + 1  # (and its bottom border)
        summary.styles.overflow_y = "hidden" if fits else "scroll"

    def _peak(self, compact: int | None, widths: tuple[int, int]) -> tuple[int, int]:
        """Rows of the tallest summary (whole, or compact for ``compact`` rows) known so far
        at both widths: the last step's, once the timeline is complete, and the cursor's."""
        summary, timeline, view = self.summary_view, self.timeline, self._view
        assert timeline is not None and view is not None
        mode = compact is not None
        free, barred = self._peaks.get(mode, (0, 0))
        if mode not in self._end_measured and timeline.closed and not timeline.indexing_pending \
                and len(timeline):
            self._end_measured.add(mode)
            end = self._summary_at(timeline.view(len(timeline) - 1), compact)
            free = max(free, summary.rows_at(widths[0], end))
            barred = max(barred, summary.rows_at(widths[1], end))
            if not mode:
                self._lead = max(self._lead, summary.rows_at(widths[0], end[:1]))
        shown = summary.blocks if compact == self._compact else self._summary_at(view, compact)
        free = max(free, summary.rows_at(widths[0], shown))
        barred = max(barred, summary.rows_at(widths[1], shown))
        if not mode:
            self._lead = max(self._lead, summary.rows_at(widths[0], shown[:1]))
        self._peaks[mode] = (free, barred)
        return free, barred

    def summary_text(self) -> str:
        return "\n".join(b.content.plain for b in self.summary_view.blocks
                         if isinstance(b, Wrapped))

    def log_text(self) -> str:
        return "\n".join(b.content.plain for b in self.log_view.blocks if isinstance(b, Wrapped))
