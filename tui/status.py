"""The status line: what the stream is, where the cursor is, what the player and search do."""

from __future__ import annotations

import re
import weakref
from bisect import bisect_left
from typing import TYPE_CHECKING

from rich.cells import cell_len
from textual.content import Content
from textual.style import Style
from textual.visual import Visual
from textual.widgets import Static

from ..core.timeline import Timeline, View
from . import safe

if TYPE_CHECKING:
    from .app import CallscopeApp


def status_line(app: CallscopeApp, view: View) -> Content:
    tl, live = app.timeline, app.follower.status()
    if not len(tl):
        what = "waiting for the first bytes…" if not tl.closed else "empty stream: no bytes"
        return Content.assemble(("callscope ", "bold $text-primary"), what, *live, "  ",
                                _source(app.source))
    indexer = app.indexer
    if indexer is not None and not indexer.done:  # the recording's first steps, the rest coming
        live = [(f"  indexing {indexer.fraction():.0%} of {indexer.total:,} B…", "bold $text-warning")]
    frame = f"#{view.frame.index:,}" if view.frame is not None else "—"
    last_frame = f"#{len(tl.frames) - 1:,}"
    player = app.player
    play = f"{'▶' if player.playing else '❚❚'} {player.speed:g}×"
    # The live state goes beside the protocol; with a note, it leads the note's line instead (the
    # first line is full), followed by the source.
    inline = not (live and app.note)
    parts: list[safe.Part] = [
        ("callscope ", "bold $text-primary"), (tl.state.protocol, "bold"), *(live if inline else ()),
        # Indexes are 0-based, as every pane shows them; the count beside is a count.
        f"  step {fixed(f'{view.k:,}', f'{len(tl) - 1:,}')} of {len(tl):,}"
        f"  frame {fixed(frame, last_frame)} of {len(tl.frames):,}",
        f"  {fixed(f'{view.received:,}', f'{tl.total_bytes:,}')}/{tl.total_bytes:,} B",
        *((("  CUT at ", "bold $text-error"), (f"{tl.cut:,}", "bold $text-error"),
           (f" of {recorded_bytes(tl):,} B recorded", "$text-muted"))
          if tl.cut is not None else ()),
        "  ", (play, "bold $text-success" if player.playing else "$text-muted"),
        ("  chunking ", "$text-muted"), str(tl.chunking),
        f" {fixed(f'{view.chunks_seen:,}', f'{len(tl.chunks):,}')}/{len(tl.chunks):,} read",
    ]
    breaks = sorted(player.breakpoints) + ([f"event {player.event_break}"] if player.event_break else [])
    if breaks:
        parts += [("  break on ", "$text-muted"), safe.plain(", ".join(breaks))]
    if app.search_text:
        parts += [("  filter " if app.filtering else "  search ", "$text-muted"),
                  safe.content(safe.short(app.search_text, 40)), f" ({_match_count(app, view)})"]
        if (searched := app.search_progress()) is not None:  # (a long search, in slices)
            parts.append((f"  searching {searched:.0%}…", "bold $text-warning"))
    source: list[safe.Part] = ["  ", _source(app.source)]
    if inline:
        parts += source
    if app.note:
        parts += ["\n", *(_lead(live) if not inline else ()),
                  safe.content(safe.short(app.note, 200), "italic $text-muted"),
                  *(source if not inline else ())]
    return Content.assemble(*parts)


SOURCE_MARK = Style.from_meta({"status.source": True})
"""Marks the source in the line: the item :func:`fit_items` narrows to the room left."""


def _source(source: str) -> Content:
    return safe.content(safe.elide_middle(source, SOURCE_CELLS), "$text-muted").stylize(
        SOURCE_MARK)


def _marked(part: Content) -> tuple[int, int] | None:
    """Where the source (:data:`SOURCE_MARK`) is in ``part``, if it is there."""
    for span in part.spans:
        if isinstance(span.style, Style) and span.style.meta.get("status.source"):
            return span.start, span.end
    return None


FIGURE_SPACE = "\u2007"
"""A space as wide as a digit, which :data:`GAP` does not read as a gap between items."""


def fixed(value: object, widest: object) -> str:
    """``value`` right-aligned to the width of ``widest`` (the counter's largest value; counts
    come with their thousands separators): the line is as long wherever the cursor is, so
    moving never changes its rows (each change laid out every pane) nor shifts the items
    after it."""
    text = str(value)
    return FIGURE_SPACE * (len(str(widest)) - len(text)) + text


SOURCE_CELLS = 100
"""The most of the source (a file's path, a live target) the line shows, elided in the middle."""
SOURCE_MIN = 20
"""The narrowest the source is elided to, to stay on the row before it rather than start one."""
MAX_ROWS = 3
"""Rows the status line may take in a narrow terminal (it wraps between items, never inside
one; what does not fit them, a long note's end, is cut with ``…``)."""
GAP = re.compile(r"  +")
"""What separates two items of the status line (inside an item, words are one space apart)."""


def fit_items(line: Content, width: int) -> Content:
    """``line`` broken into rows of ``width`` cells between its items (at a gap of two spaces
    or more), so an item (``❚❚ 1×``, ``frame #20 of 21``) stays whole on one row: Textual
    wraps at any space, and split the play state from its speed. An item wider than a row is
    left to wrap at words. The source (the item :data:`SOURCE_MARK` marks) is elided in the
    middle to the room left on its row (:data:`SOURCE_MIN` cells at least) rather than start a
    row of its own: a search or a break point made the line a row taller, which lays out every
    pane."""
    rows: list[Content] = []
    for part in line.split("\n", allow_blank=True):
        plain = part.plain
        items, start = [], 0
        for gap in GAP.finditer(plain):
            if gap.start() > start:
                items.append((start, gap.start()))
            start = gap.end()
        if start < len(plain):
            items.append((start, len(plain)))
        source = _marked(part)
        first, end = 0, None
        for a, b in items:
            if end is not None and cell_len(plain[first:b]) > width:
                room = width - cell_len(plain[first:a])
                span = safe.middle_span(plain[a:b], room) if (a, b) == source else None
                if span is not None and room >= SOURCE_MIN and cell_len(plain[first:end]) <= width:
                    part = part[:a + span[0]] + Content("…") + part[a + span[1]:]
                    break
                rows.append(part[first:end])
                first = a
            end = b
        rows.append(part[first:])
    return Content("\n").join(rows)


def status_rows(line: Content, width: int) -> list[Content]:
    """The rows ``line`` shows at ``width``: fitted (:func:`fit_items`), wrapped, and at most
    :data:`MAX_ROWS`, the last one ending in `` …`` when more was cut (a long note)."""
    rows = fit_items(line, width).wrap(width)
    if len(rows) <= MAX_ROWS:
        return rows
    last = rows[MAX_ROWS - 1].rstrip()
    if cell_len(last.plain) + 2 > width:
        last = last.truncate(width - 2)
    return [*rows[:MAX_ROWS - 1], last + Content(" …")]  # (apart: more comes, not this item cut)


def show_status(status: Static, line: Content) -> None:
    """Put ``line`` in the status widget, as many rows tall as it wraps to at its width (a
    layout only when that changes: most moves keep the height)."""
    # (before the first layout: the screen's width, less the status line's padding)
    width = status.content_region.width or status.app.size.width - status.styles.gutter.width
    if width <= 0:
        status.update(line)
        return
    rows = max(1, len(status_rows(line, width)))
    height = status.styles.height
    if height is not None and rows > height.value and getattr(status.app, "building", False):
        # While a recording is indexed the line keeps its height, the items past its last row
        # (the progress leads the line) hidden until it is: a taller line re-lays out the whole
        # screen, 30-130 ms of a 4 MB session's panes, in the key that started the indexing.
        rows = int(height.value)
    if height is None or height.value != rows:
        status.styles.height = rows
        status.update(line)
    else:
        status.update(line, layout=False)


class StatusLine(Static):
    """The status line: refitted (:func:`show_status`) whenever its own width changes. Refitted
    from the app's resize, it could still have its old width then, and kept the two rows of a
    narrow terminal (one of them blank) after the terminal was widened."""

    _fitted: tuple[Content, int, Content] | None = None
    """The line, the width it was fitted to, and its rows there (:func:`status_rows`)."""

    def on_resize(self) -> None:
        if isinstance(self.content, Content):
            show_status(self, self.content)

    def render(self) -> Content | Visual:
        """The line's rows at this width (:func:`status_rows`); ``content`` stays the line as
        made."""
        line, width = self.content, self.content_region.width
        if not isinstance(line, Content) or width <= 0:
            return self.visual
        fitted = self._fitted
        if fitted is None or fitted[0] is not line or fitted[1] != width:
            fitted = self._fitted = (line, width, Content("\n").join(status_rows(line, width)))
        return fitted[2]


def _match_count(app: CallscopeApp, view: View) -> str:
    """``3/12`` on the third match, ``12`` elsewhere (the match counter)."""
    matches = app.matches
    if view.frame is not None:
        at = bisect_left(matches, view.frame.index)
        if at < len(matches) and matches[at] == view.frame.index:
            return f"{at + 1}/{len(matches)}"
    return f"{len(matches)} matches"


_RECORDED: weakref.WeakKeyDictionary[Timeline, int] = weakref.WeakKeyDictionary()


def recorded_bytes(timeline: Timeline) -> int:
    """The recording's size, whatever cut this timeline shows (a cut of a cut included)."""
    size = _RECORDED.get(timeline)
    if size is None:
        size = _RECORDED[timeline] = sum(len(data) for _, data in timeline.source)
    return size


def same_recording(timeline: Timeline, old: Timeline) -> None:
    """``timeline`` is rebuilt from the bytes ``old`` shows (a cut, a re-chunk): its recording's
    size is known, not summed again over every chunk (17 ms a 4 MB recording)."""
    _RECORDED[timeline] = recorded_bytes(old)


def _lead(live: list[safe.Part]) -> list[safe.Part]:
    """The live state at the start of a line: without its leading spaces, then a gap."""
    first = live[0]
    return [(first[0].lstrip(), first[1]) if isinstance(first, tuple) else first, *live[1:], "  "]
