"""The raw frames pane: every SSE block as the bytes arrived, rendered lazily with the line API.

Each frame is a header row (index, byte span, timing, chunks, event) and its raw lines, folded to
the pane's width, with every invisible byte made visible (CR ␍, LF ␊, BOM, controls) and a ┊ where
a network chunk boundary fell inside the frame. Only the rows on screen are rendered; a frame's
rows are cached (LRU, as Toolong caches its lines) under a key that changes only when that frame's
look changes, so moving the cursor re-renders a handful of frames, whatever the session's size.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import accumulate

from rich.cells import cell_len
from textual.cache import LRUCache
from textual.content import Content
from textual.events import Click, Resize
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.style import Style

from ...core.sse import Frame
from ...core.timeline import Timeline, View
from .. import safe

_LINES = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)?")
GUTTER = 2
CHUNK_MARK = "┊"


def line_spans(raw: bytes) -> list[tuple[int, int]]:
    """Byte spans of the frame's lines, each with its own line end."""
    return [m.span() for m in _LINES.finditer(raw) if m.end() > m.start()]


def char_start(raw: bytes, i: int) -> int:
    """Move a byte index back to the start of the UTF-8 character it falls inside, if any."""
    j = i
    while j > 0 and i - j < 3 and 0x80 <= raw[j] < 0xC0:
        j -= 1
    return j if j != i and raw[j] >= 0xC0 else i


def fmt_time(seconds: float | None, sign: str = "+") -> str:
    if seconds is None:
        return ""
    if abs(seconds) < 1:
        return f"{sign}{seconds * 1000:.1f}ms"
    return f"{sign}{seconds:.3f}s"


class FramesPane(ScrollView, can_focus=False):
    """Raw SSE frames, one model, one cursor: it renders what the app's view says."""

    COMPONENT_CLASSES = {
        "frames--header", "frames--current", "frames--future", "frames--dim", "frames--escape",
        "frames--chunk", "frames--split", "frames--match", "frames--bar",
    }
    DEFAULT_CSS = """
    FramesPane {
        overflow-x: hidden;
        & > .frames--header { color: $text-primary; text-style: bold; }
        & > .frames--current { background: $primary 35%; color: $text; text-style: bold; }
        & > .frames--future { color: $text-disabled; }
        & > .frames--dim { color: $text-muted; }
        & > .frames--escape { color: $text-secondary; text-style: dim; }
        & > .frames--chunk { color: $warning; text-style: bold; }
        & > .frames--split { color: $error; text-style: bold reverse; }
        & > .frames--match { color: $text-warning; text-style: bold; }
        & > .frames--bar { color: $primary; }
    }
    """

    class FrameSelected(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.timeline: Timeline | None = None
        self.view: View | None = None
        self.matches: frozenset[int] = frozenset()
        self._widths: list[list[int]] = []  # display cells per line, per frame
        self._starts: list[int] = [0]  # first row of each shown frame, and the total at the end
        self._only: list[int] | None = None  # the frames shown when filtering (sorted)
        self._layout_width = 0
        self._cache: LRUCache[tuple[object, ...], list[Strip]] = LRUCache(512)
        self._boundaries: list[int] = []
        self._timed = False

    # -- model ---------------------------------------------------------------------------------

    def load(self, timeline: Timeline) -> None:
        """A new timeline (start, cut, rechunk): measure every line once, width-independent."""
        self.timeline = timeline
        self._boundaries = [c.start for c in timeline.chunks]
        # Timing is shown only when the recording has some: one chunk, or no times, says nothing.
        self._timed = len({c.t for c in timeline.chunks}) > 1
        self._widths = [self._measure(f) for f in timeline.frames]
        self._cache.clear()
        self._only = None
        self._layout_width = 0
        self._relayout()

    def show(self, view: View, matches: frozenset[int] | None = None,
             only: list[int] | None = None) -> None:
        """Render ``view``; mark ``matches``; with ``only``, show just those frames (a filter)."""
        self.view = view
        if matches is not None and matches != self.matches:
            self.matches = matches
        if only != self._only:
            self._only = only
            self._layout_width = 0  # the rows change: lay out again
        self._relayout()
        self.refresh()
        self._follow()

    def _measure(self, frame: Frame) -> list[int]:
        """Display cells of the header, then of each raw line (markers included)."""
        kind, meta = self._header_parts(frame)
        # meta is ours and every character in it is one cell wide: only kind needs measuring.
        shown = safe.plain(kind)
        widths = [len(f"#{frame.index} ") + (len(shown) if shown.isascii() else cell_len(shown))
                  + 2 + len(meta)]
        raw, spans = frame.raw, line_spans(frame.raw)
        if raw.isascii():  # the common case: one cell per byte (controls become one glyph)
            widths += [end - start for start, end in spans]
        else:
            widths += [cell_len(safe.plain(raw[start:end].decode("utf-8", "replace")))
                       for start, end in spans]
        lo = bisect_right(self._boundaries, frame.start)
        if lo < len(self._boundaries) and self._boundaries[lo] < frame.end:  # chunk marks inside
            for i, (start, end) in enumerate(spans, 1):
                widths[i] += len(self._marks(frame, start, end))
        return widths

    def _marks(self, frame: Frame, start: int, end: int) -> list[int]:
        """Chunk boundaries inside this line, as byte indices in the frame."""
        lo = bisect_right(self._boundaries, frame.start + start)
        hi = bisect_left(self._boundaries, frame.start + end)
        if start == 0:  # a boundary at the frame's first byte is shown in the header, not the text
            lo = bisect_right(self._boundaries, frame.start)
        return [b - frame.start for b in self._boundaries[lo:hi]]

    def _shown(self) -> Sequence[int]:
        return range(len(self._widths)) if self._only is None else self._only

    def _relayout(self) -> None:
        width = max(self.scrollable_content_region.width, GUTTER + 8)
        if width == self._layout_width:
            return
        self._layout_width = width
        body = width - GUTTER
        counts = (sum(max(1, -(-w // body)) for w in self._widths[i]) for i in self._shown())
        self._starts = [0, *accumulate(counts)]
        self._cache.clear()
        self.virtual_size = Size(width, self._starts[-1])

    def on_resize(self, event: Resize) -> None:
        self._relayout()
        self._follow()

    def _slot(self, index: int) -> int:
        """The position of frame ``index`` among the shown frames (or of the last one before it)."""
        if self._only is None:
            return index
        return max(bisect_right(self._only, index) - 1, 0)

    def row_of_frame(self, index: int) -> int:
        return self._starts[self._slot(index)]

    def frame_of_row(self, row: int) -> int | None:
        if not self._widths or row < 0 or row >= self._starts[-1]:
            return None
        return self._shown()[bisect_right(self._starts, row) - 1]

    def _follow(self) -> None:
        """Keep the current frame's header on screen (with a filter: the nearest shown one)."""
        if self.view is None or self.view.frame is None or not self.size.height:
            return
        row = self.row_of_frame(self.view.frame.index)
        top, height = round(self.scroll_y), self.scrollable_content_region.height
        if not top <= row < top + height - 1:
            self.scroll_to(y=max(0, row - height // 3), animate=False, immediate=True)

    def on_click(self, event: Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        index = self.frame_of_row(offset.y + round(self.scroll_y))
        if index is not None:
            self.post_message(self.FrameSelected(index))

    # -- rendering -----------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        row = y + round(self.scroll_y)
        width = self.size.width
        index = self.frame_of_row(row)
        if index is None or self.timeline is None:
            return Strip.blank(width, self.rich_style)
        strips = self._frame_strips(index)
        strip = strips[row - self._starts[self._slot(index)]]
        return strip.crop_extend(0, width, self.rich_style)

    def _role(self, index: int) -> tuple[str, int | None]:
        view = self.view
        if view is None:
            return "past", None
        frame = self.timeline.frames[index]  # type: ignore[union-attr]
        current = view.frame.index if view.frame is not None else -1
        if index == current:
            return "current", None
        if index < view.frames_seen:
            return "past", None
        # Not yet a frame at this step, but its bytes may have arrived (a chunk arrives before the
        # decoder completes the frames in it): arrived bytes are drawn normally, the rest dimmed.
        if view.received >= frame.end:
            return "arrived", None
        return "future", max(view.received, frame.start)

    def _frame_strips(self, index: int) -> list[Strip]:
        role, partial = self._role(index)
        key = (index, self._layout_width, role, partial, index in self.matches, self.app.theme)
        cached = self._cache.get(key)
        if cached is None:
            cached = self._cache[key] = self._render_frame(index, role, partial)
        return cached

    def _render_frame(self, index: int, role: str, partial: int | None) -> list[Strip]:
        assert self.timeline is not None
        frame = self.timeline.frames[index]
        base = self.visual_style
        st = {name: self.get_visual_style(f"frames--{name}") for name in (
            "header", "current", "future", "dim", "escape", "chunk", "split", "match", "bar")}
        body_width = self._layout_width - GUTTER
        # The gutter: a bar on the current frame, a diamond on search matches.
        gutter = Content.assemble(("▌" if role == "current" else " ", st["bar"]),
                                  ("◆" if index in self.matches else " ", st["match"]))
        widths = self._widths[index]
        lines = [self._header(frame, index, role, st)]
        received = partial if role == "future" else None
        lines += [self._line(frame, start, end, received, st) for start, end in line_spans(frame.raw)]
        rows: list[Content] = []
        for line, width in zip(lines, widths, strict=True):
            folded = line.fold(body_width) if line.cell_length > body_width else [line]
            want = max(1, -(-width // body_width))
            rows += [gutter + part for part in (folded + [Content("")] * want)[:want]]
        return [Strip(row.render_segments(base), row.cell_length) for row in rows]

    def _header_parts(self, frame: Frame) -> tuple[str, str]:
        """(what the frame is, where and when it arrived), as plain strings."""
        assert self.timeline is not None
        index = frame.index
        timing = ""
        if self._timed:
            arrived, done = self.timeline.frame_times(index)
            prev = self.timeline.frame_times(index - 1)[1] if index else None
            if done is not None:
                timing = f"  t{fmt_time(done)}"
                if prev is not None:
                    timing += f" Δ{fmt_time(done - prev, '')}"
                if arrived is not None and arrived != done:
                    timing += f" (first byte {fmt_time(arrived)})"
        chunks = (f"chunk {frame.first_chunk}" if frame.first_chunk == frame.last_chunk
                  else f"chunks {frame.first_chunk}–{frame.last_chunk}")
        kind = frame.event_type if frame.dispatch else (
            "comment" if frame.comments and not frame.data else
            "unterminated" if not frame.terminated else "no dispatch")
        return kind, f"{frame.start}–{frame.end} ({frame.end - frame.start} B) {chunks}{timing}"

    def _header(self, frame: Frame, index: int, role: str, st: dict[str, Style]) -> Content:
        kind, meta = self._header_parts(frame)
        style = st["current"] if role == "current" else st["header"] if role == "past" else (
            st["future"])
        return Content.assemble(
            (f"#{index} ", style), safe.content(kind, st["match"] if index in self.matches else style,
                                                st["escape"]),
            (f"  {meta}", style),
        )

    def _line(self, frame: Frame, start: int, end: int, received: int | None,
              st: dict[str, Style]) -> Content:
        """One raw line: decoded per run between chunk marks, escapes visible."""
        raw = frame.raw
        muted = not frame.dispatch or raw[start:start + 1] == b":"
        normal = st["dim"] if muted else Style()
        marks = set(self._marks(frame, start, end))
        split_at = None if received is None else received - frame.start
        cuts = sorted(marks | ({split_at} if split_at is not None and start < split_at < end else set()))
        parts: list[Content] = []
        pos = start
        for cut in [*cuts, end]:
            at = char_start(raw, cut) if cut < end else cut
            if at > pos:
                text = raw[pos:at].decode("utf-8", "replace")
                future = split_at is not None and pos >= split_at
                parts.append(safe.content(text, st["future"] if future else normal, st["escape"]))
                pos = at
            if cut in marks:  # red when the network split a UTF-8 character
                parts.append(Content.styled(CHUNK_MARK, st["split"] if at != cut else st["chunk"]))
        return Content.assemble(*parts)
