"""Raw bytes drawn as text: a frame's lines (or the bytes still arriving), every byte visible
(escapes, see :mod:`..safe`), with a ┊ where a network chunk boundary fell inside a line (red
when the boundary split a UTF-8 character) and, from a given byte on, the bytes not received yet
dimmed. The frame detail draws a frame's raw lines with it, the frame list the block still
arriving after a live stream's last frame (:func:`arriving` finds its bytes).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence

from textual.content import Content
from textual.style import Style

from ...core.timeline import Timeline
from .. import safe
from .rawbytes import cells, char_start, line_spans

CHUNK_MARK = "┊"


class FrameText:
    """Measures and draws frames as text; knows the chunk boundaries and whether times show."""

    def __init__(self) -> None:
        self.timeline: Timeline | None = None
        self.boundaries: Sequence[int] = ()  # stream offsets where a network chunk started
        self.timed = False

    def load(self, timeline: Timeline) -> None:
        self.timeline = timeline
        self.boundaries = timeline.chunks.starts  # (the timeline's own column: it grows with it)
        self.timed = timed(timeline)

    def line_widths(self, raw: bytes, origin: int) -> list[int]:
        """Display cells of each raw line of the bytes at stream offset ``origin``."""
        spans = line_spans(raw)
        if raw.isascii():  # the common case: one cell per byte (controls become one glyph)
            widths = [end - start for start, end in spans]
        else:
            widths = [cells(safe.plain(raw[start:end].decode("utf-8", "replace")))
                      for start, end in spans]
        lo = bisect_right(self.boundaries, origin)
        if lo < len(self.boundaries) and self.boundaries[lo] < origin + len(raw):  # chunk marks
            for i, (start, end) in enumerate(spans):
                widths[i] += len(self.marks(origin, start, end))
        return widths

    def marks(self, origin: int, start: int, end: int) -> list[int]:
        """Chunk boundaries inside this line (of the bytes at stream offset ``origin``), as byte
        indices in those bytes."""
        lo = bisect_right(self.boundaries, origin + start)
        hi = bisect_left(self.boundaries, origin + end)
        if start == 0:  # a boundary at the frame's first byte is shown in the header, not the text
            lo = bisect_right(self.boundaries, origin)
        return [b - origin for b in self.boundaries[lo:hi]]

    def runs(self, raw: bytes, origin: int, start: int, end: int,
             split_at: int | None) -> Iterator[tuple[str, str]]:
        """One raw line (of the bytes at stream offset ``origin``) as runs of (text, kind):
        ``text`` decoded between chunk marks (kind ``text``, or ``future`` from byte ``split_at``
        on: not received yet), and the marks (``chunk``; ``split`` where the network split a
        UTF-8 character)."""
        marks = set(self.marks(origin, start, end))
        cuts = sorted(marks | ({split_at} if split_at is not None and start < split_at < end else set()))
        pos = start
        for cut in [*cuts, end]:
            at = char_start(raw, cut) if cut < end else cut
            if at > pos:
                future = split_at is not None and pos >= split_at
                yield raw[pos:at].decode("utf-8", "replace"), "future" if future else "text"
                pos = at
            if cut in marks:
                yield CHUNK_MARK, "split" if at != cut else "chunk"

    def line(self, raw: bytes, origin: int, start: int, end: int, split_at: int | None,
              muted: Style | None, st: dict[str, Style]) -> Content:
        """One raw line (see :meth:`runs`), escapes visible; ``muted``: the style of the whole
        text (comments are always dim)."""
        normal = muted if muted is not None else st["dim"] if raw[start:start + 1] == b":" else (
            Style())
        return Content.assemble(*(
            safe.content(text, normal if kind == "text" else st["future"], st["escape"])
            if kind in ("text", "future") else Content.styled(text, st[kind])
            for text, kind in self.runs(raw, origin, start, end, split_at)))

    def plain(self, raw: bytes, origin: int, start: int, end: int) -> str:
        """``line(...).plain`` for a line received whole, without making the Content."""
        return "".join(safe.plain(text) if kind == "text" else text
                       for text, kind in self.runs(raw, origin, start, end, None))


def timed(timeline: Timeline) -> bool:
    """Timing is shown only when the recording has some: one chunk, or no times, says nothing."""
    return not timeline.chunks.one_time()


def arriving(timeline: Timeline) -> tuple[int, bytes]:
    """The stream offset and bytes after the last frame of a stream still arriving (no bytes once
    it closed, nor while a recording is being indexed: its source is all there)."""
    if timeline.closed or timeline.indexing_pending:
        return 0, b""
    start = timeline.frames[-1].end if timeline.frames else 0
    size = timeline.total_bytes - start
    pieces: list[bytes] = []
    for _, data in reversed(timeline.source):  # only the last few reads: one block's worth
        if size <= 0:
            break
        pieces.append(data)
        size -= len(data)
    return start, b"".join(reversed(pieces))[max(-size, 0):]
