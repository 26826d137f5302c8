"""One call's lane in the argument buffers pane: its identity, its raw argument text at the
cursor, and what the draft looks like so far.

A lane is a :class:`~.rows.Block`: measured from its text's widths without drawing it (its
head and tail lines counted, its text folded by arithmetic), and drawn a row at a time when a
row is on screen. Each row is keyed by what it shows (see :meth:`Lane.row_keys`), so a step
that adds text to a lane draws only its rows that changed; the text itself is drawn by
:mod:`.lane_text`.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Hashable
from functools import cached_property

from rich.segment import Segment
from textual.content import Content
from textual.message import Message
from textual.strip import Strip
from textual.style import Style

from ...core.jsonprefix import Draft
from ...core.lanes import CallView
from ...core.timeline import Timeline
from .. import safe
from . import lane_edge
from .folding import fold_rows, wrap_rows
from .lane_text import (
    INNER_ROWS,
    TextRows,
    TextStyles,
    argument_lines,
    draft_preview,
    earlier,
    fold_segments,
    inner_rows,
    text_styles,
    text_widths,
    window,
)
from .rawbytes import cells
from .rows import Block, RowsView

MAX_ANOMALIES = 12

DRAFT_LABEL = {
    Draft.EMPTY: ("empty", "$text-muted"),
    Draft.INCOMPLETE: ("incomplete", "$text-warning"),
    Draft.COMPLETE: ("complete JSON", "$text-success"),
    Draft.INVALID: ("INVALID JSON", "$text-error"),
}
DRAFT_HEAD = "DRAFT (partial parse, not executed) "
NARROW = 40
"""A lane narrower inside than this many cells shows its text and draft status first, its
key, ids and kind after them (at 80x24 the ids came first and the text was out of view)."""


def _epoch(timeline: Timeline | None, key: str, k: int) -> int | None:
    """Which text the call has at step k (its text is append-only within an epoch)."""
    if timeline is None:
        return None
    index = timeline.calls[key]
    n = bisect_right(index.frag_steps, k)
    return index.frag_epoch[n - 1] if n else None


class Lane(Block):
    """One call's buffer at the cursor: a bordered block."""

    class Selected(Message):
        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    class FragmentClicked(Message):
        """A click on a fragment of the lane's text: ``frame`` sent it."""

        def __init__(self, frame: int) -> None:
            super().__init__()
            self.frame = frame

    def __init__(self, call: CallView, timeline: Timeline | None, k: int, selected: bool) -> None:
        self.call, self.timeline, self.k, self.selected = call, timeline, k, selected
        self._layouts: dict[int, list[tuple[str, int, int]]] = {}
        self._keys: dict[int, list[Hashable | None]] = {}
        self._pieces: dict[tuple[str, int, int], list[Content]] = {}
        self._folded: dict[int, list[tuple[list[Segment], int]]] = {}
        self._looks: tuple[Style, Style, list[Segment], list[Segment]] | None = None
        self._looks_theme: str | None = None
        self._rows_cache: dict[Hashable, tuple[list[Segment], int]] | None = None
        d = call.decision
        # Everything the lane shows depends on these (the text on the fragment count).
        self.key: Hashable = (
            "lane", id(timeline), call.key, call.fragments, call.fresh, call.draft, call.closed,
            call.closed_frame, call.name, call.id, call.call_id, call.kind, call.origin,
            call.pieces, call.byte_length, len(call.anomalies), call.disputed is not None,
            None if d is None else (d.action, d.reason), selected)

    @property
    def fresh(self) -> bool:
        return self.call.fresh is not None

    # -- what it shows ---------------------------------------------------------------------

    def title(self) -> Content:
        """The lane's title: its number and the tool's name (the key and ids are in the head)."""
        call = self.call
        name = safe.content(call.name or "(no name yet)", "bold")
        return Content.assemble(f"{call.order + 1} ", name)

    def ids(self) -> list[tuple[str, str]]:
        """(label, value) of the head's first lines: one row each, elided in the middle to fit
        (:meth:`head_row`; whole in the call's detail, C)."""
        call = self.call
        return [("key ", call.key), ("id ", call.id or "—"),
                *((("call_id ", call.call_id),) if call.call_id else ())]

    def head(self) -> list[Content]:
        call = self.call
        state = "closed" + (f" @#{call.closed_frame}" if call.closed_frame is not None else "") \
            if call.closed else "open"
        lines = [Content.assemble((label, "$text-muted"), safe.content(value))
                 for label, value in self.ids()]
        lines.append(Content.assemble(
            (call.kind, "$text-muted"), (" · " + state, "$text-muted"),
            (f" · {call.origin}" if call.origin != "raw" else "", "$text-muted"),
            (" · disputed" if call.disputed is not None else "", "bold $text-error")))
        return lines

    def tail(self) -> list[Content]:
        """The lines after the argument text: stats, the draft preview, anomalies."""
        call = self.call
        label, color = DRAFT_LABEL[call.draft]
        lines = [Content.assemble(
            (f"{call.byte_length} B", "bold"), (f" · {call.fragments} fragment"
                                                f"{'' if call.fragments == 1 else 's'}", ""),
            (f" · {call.pieces} pieces" if call.pieces else "", ""),
            (" · draft ", "$text-muted"), (label, f"bold {color}"))]
        if self.preview:
            lines.append(Content.assemble((DRAFT_HEAD, "bold $text-warning"),
                                          safe.content(self.preview, "$text-muted")))
        if len(call.anomalies) > MAX_ANOMALIES:
            lines.append(Content.styled(f"⚠ … {len(call.anomalies) - MAX_ANOMALIES} earlier "
                                        "anomalies (a: next anomaly)", "$text-warning"))
        for anomaly in call.anomalies[-MAX_ANOMALIES:]:
            lines.append(Content.assemble(
                (f"⚠ {anomaly.code}: ", "bold $text-warning"),
                safe.content(safe.short(anomaly.message, 200), "$text-warning")))
        return lines

    @cached_property
    def preview(self) -> str:
        return draft_preview(self.call.text) if self.call.decision is None else ""

    @cached_property
    def _measured(self) -> tuple[list[Content], list[int], list[Content]]:
        widths = text_widths(self.call) if self.call.text else [len("(no argument text yet)")]
        return self.head(), widths, self.tail()

    def rows(self, width: int) -> int:
        return len(self._layout(width))

    def _layout(self, width: int) -> list[tuple[str, int, int]]:
        """What each row shows: ("top"|"bottom"|"blank", 0, 0), ("head"|"tail", line, row in
        the wrapped line) or ("text", folded row, text line). Head and tail lines are
        counted, not wrapped, and text rows come from the lines' widths (only the lanes on
        screen are drawn)."""
        cached = self._layouts.get(width)
        if cached is not None:
            return cached
        inner = width - 4  # the border and a cell of padding on each side
        head, widths, tail = self._measured
        ids = len(self.ids())
        top: list[tuple[str, int, int]] = []
        for m, line in enumerate(head):
            top += [("head", m, q) for q in range(1 if m < ids else wrap_rows([line], inner))]
        rows: list[tuple[str, int, int]] = [("top", 0, 0)] + ([] if inner < NARROW else top)
        n = 0
        for j, w in enumerate(widths):
            count = fold_rows(inner, w)  # (whether a row is settled: see _inner_keys)
            rows += [("text", n + r, j) for r in range(count)]
            n += count
        for m, line in enumerate(tail):
            rows += [("tail", m, q) for q in range(wrap_rows([line], inner))]
        rows += (top if inner < NARROW else []) + [("bottom", 0, 0), ("blank", 0, 0)]
        self._layouts[width] = rows
        return rows

    def _settled_to(self) -> tuple[int, int]:
        """(line, cells) where the lane's text may change: the fresh text's start, else its
        end (lines as :func:`text_widths` counts them)."""
        call = self.call
        if not call.text or self.timeline is None:
            return -1, 0
        lo, shown = window(call)
        fs = len(shown) if call.fresh is None else min(max(call.fresh[0], lo) - lo, len(shown))
        line = shown.count("\n", 0, fs) + (1 if lo else 0)
        start = shown.rfind("\n", 0, fs) + 1
        return line, cells(safe.plain(shown[start:fs]))

    def row_keys(self, width: int) -> list[Hashable]:
        # (the sides are the same whether the lane is fresh: only its top edge says so)
        side, top = self._side, self._part
        return [(inner, top if i == 0 else side) if inner is not None
                else ("lane-row", self.key, i, width)
                for i, inner in enumerate(self._inner_keys(width))]

    def _inner_keys(self, width: int) -> list[Hashable | None]:
        """What the inside of each row shows (between the side borders), or None for a row that
        may change: the same whether the lane is fresh or not, which a step turns on and off
        (most steps add no argument text, the next one does)."""
        keys = self._keys.get(width)
        if keys is not None:
            return keys
        call, selected = self.call, self.selected
        head, _, tail = self._measured
        lo = window(call)[0] if call.text else 0
        epoch = _epoch(self.timeline, call.key, self.k)
        inner = width - 4
        upto_line, upto_cells = self._settled_to()
        layout = self._layout(width)
        last = max((i for i, row in enumerate(layout) if row[0] == "text"), default=-1)
        keys = []
        text_line, r = -1, 0
        for i, (kind, a, b) in enumerate(layout):
            if kind == "text":
                text_line, r = b, (r + 1 if b == text_line else 0)  # (row r of line b)
                # Settled: all of the row's text comes before the fresh text. A call's text
                # grows at its end only (within an epoch), so such a row stays as it is (the
                # last row may still grow).
                settled = b < upto_line or (b == upto_line and (r + 1) * inner <= upto_cells)
                keys.append(("lane-text", id(self.timeline), call.key, epoch, lo, a, selected,
                             width) if settled and i != last else None)
            elif kind == "head" or kind == "tail":
                line = (head if kind == "head" else tail)[a]
                keys.append(("lane-line", line.plain, tuple(line.spans), b, selected, width))
            elif kind == "top":
                keys.append(("lane-top", call.order, call.key, call.name, selected, width))
            elif kind == "bottom":
                d = call.decision
                keys.append(("lane-bottom", None if d is None else (d.action, d.reason),
                             selected, width))
            else:
                keys.append(("lane-blank", width))
        self._keys[width] = keys
        return keys

    def text_lines(self, view: RowsView, base: Style | None = None,
                   styles: TextStyles | None = None) -> list[list[Segment]]:
        """The argument text's lines, as drawn (segments); in ``styles`` if given."""
        if not self.call.text:
            return [list(Content.styled("(no argument text yet)", "$text-muted italic")
                         .render_segments(base or view.visual_style))]
        return argument_lines(self.call, self.timeline, self.k,
                              styles or text_styles(view, base or view.visual_style))

    def plain(self, view: RowsView) -> str:
        """The lane's text as drawn, one logical line a line (for tests and copying)."""
        head, _, tail = self._measured
        text = ["".join(seg.text for seg in line) for line in self.text_lines(view)]
        return "\n".join([*(c.plain for c in head), *text, *(c.plain for c in tail)])

    # -- drawing ---------------------------------------------------------------------------

    @property
    def _part(self) -> str:
        """The top edge's style: the lane's own, or fresh (its text grew at this step)."""
        return "selected" if self.selected else "fresh" if self.fresh else "border"

    @property
    def _side(self) -> str:
        """The sides' and the bottom edge's style. Freshness is marked on the top edge (with
        the fresh text itself), not on every row: a lane turning fresh or back, as most steps
        do, would otherwise make all of its rows on screen anew (about 40)."""
        return "selected" if self.selected else "border"

    def _look(self, view: RowsView) -> tuple[Style, Style, list[Segment], list[Segment]]:
        """(border, base, left, right): the border's style, the text's base style and the
        segments left and right of a row's content. A theme change (which repaints the lanes
        without making new ones) drops everything drawn in the old styles first."""
        theme = view.app.theme
        if self._looks_theme != theme:
            self._looks_theme = theme
            self._looks = self._rows_cache = None
            self._folded.clear()
        if self._looks is None:
            border = view.get_visual_style(f"buffers--{self._side}")
            base = view.visual_style + (border.background_style if self.selected else Style())
            bar = "║" if self.selected else "│"
            left = list(Content.styled(bar + " ", border).render_segments(base))
            right = list(Content.styled(" " + bar, border).render_segments(base))
            self._looks = (border, base, left, right)
        return self._looks

    def _inner_rows(self, view: RowsView) -> dict[Hashable, tuple[list[Segment], int]]:
        if self._rows_cache is None:
            self._rows_cache = inner_rows(view, self._look(view)[1])
        return self._rows_cache

    def _text_rows(self, width: int, view: RowsView) -> list[tuple[list[Segment], int]]:
        """The argument text folded into rows (drawn once per lane, when a text row is)."""
        rows = self._folded.get(width)
        if rows is None:
            rows = self._folded[width] = self._fold(width, view)
        return rows

    def _fold(self, width: int, view: RowsView, styles: TextStyles | None = None
              ) -> list[tuple[list[Segment], int]]:
        lines = self.text_lines(view, self._look(view)[1], styles)
        widths = self._measured[1] if self.call.text else [None] * len(lines)
        rows: list[tuple[list[Segment], int]] = []
        for segments, width_cells in zip(lines, widths, strict=True):
            rows += fold_segments(segments, width_cells, width - 4)
        return rows

    @cached_property
    def _text_source(self) -> TextRows:
        return TextRows(self.call, self.timeline, self.k)

    def _text_row(self, a: int, line: int, width: int, view: RowsView, linked: bool = False
                  ) -> tuple[list[Segment], int]:
        """Folded text row ``a`` (of text line ``line``): drawn alone when the text is the
        common case (see :class:`.lane_text.TextRows`), else cut from the whole text.
        ``linked``: in styles that say each fragment's frame (not kept: for a click)."""
        call = self.call
        base = self._look(view)[1]
        links = TextStyles(view, base, links=True) if linked else None
        if call.text and (linked or width not in self._folded):
            source = self._text_source
            if source.lo and line == 0:  # ("… n earlier characters …")
                segments = list(earlier(source.lo).render_segments(base))
                return fold_segments(segments, self._measured[1][0], width - 4)[a]
            if line == (1 if source.lo else 0):
                before = fold_rows(width - 4, self._measured[1][0]) if source.lo else 0
                row = source.row(links or text_styles(view, base), a - before, width - 4)
                if row is not None:
                    return row
        return (self._text_rows(width, view) if links is None
                else self._fold(width, view, links))[a]

    def frame_at(self, row: int, x: int, width: int, view: RowsView) -> int | None:
        """The frame that sent the fragment drawn at cell ``x`` of the lane's row ``row`` (at
        ``width``), or None: a border, the head or tail, text no fragment carried. The row is
        drawn again as it is drawn on screen, in styles that carry each fragment's frame."""
        layout = self._layout(width)
        if not self.call.text or not 0 <= row < len(layout) or layout[row][0] != "text":
            return None
        _, a, line = layout[row]
        cell = x - 2  # (the border and a cell of padding)
        if not 0 <= cell < width - 4:
            return None
        for segment in self._text_row(a, line, width, view, linked=True)[0]:
            if cell < segment.cell_length:
                frame = segment.style.meta.get("frame") if segment.style is not None else None
                return frame if isinstance(frame, int) else None
            cell -= segment.cell_length
        return None

    def render_row(self, row: int, width: int, view: RowsView) -> Strip:
        kind, a, b = self._layout(width)[row]
        border, base, left, right = self._look(view)
        if kind == "top":
            edge = border if self._part == self._side else view.get_visual_style(
                f"buffers--{self._part}")
            return lane_edge.edge(width, self.title(), True, self.selected, edge, base, view)
        if kind == "bottom":
            return lane_edge.edge(width, lane_edge.outcome(self.call), False, self.selected,
                                  border, base, view)
        if kind == "blank":
            return Strip.blank(width, view.visual_style.rich_style)
        inner = width - 4
        key = self._inner_keys(width)[row]
        cache = self._inner_rows(view)
        found = cache.get(key) if key is not None else None
        if found is not None:
            segments, size = found
        elif kind == "text":
            segments, size = self._text_row(a, b, width, view)
        else:  # (a head or tail line, word-wrapped inside the border)
            pieces = self._pieces.get((kind, a, width))
            if pieces is None:
                line = (self._measured[0] if kind == "head" else self._measured[2])[a]
                pieces = self._pieces[kind, a, width] = [self.head_row(a, inner)] if (
                    kind == "head" and a < len(self.ids())) else (
                    line.wrap(max(inner, 1)) if line.cell_length > inner else [line])
            piece = pieces[b]
            segments, size = list(piece.render_segments(base)), piece.cell_length
        if found is None and key is not None:
            if len(cache) > INNER_ROWS:
                cache.clear()
            cache[key] = (segments, size)
        # (one strip a row: a strip per folded row and then join and crop_extend made four)
        if size < inner:
            return Strip([*left, *segments, Segment(" " * (inner - size), base.rich_style),
                          *right], width)
        if size == inner:  # (a folded row: most text rows)
            return Strip([*left, *segments, *right], width)
        return Strip([*left, *Strip(segments, size).crop(0, inner), *right], width)

    def render(self, width: int, view: RowsView) -> list[Strip]:
        return [self.render_row(row, width, view) for row in range(self.rows(width))]

    def head_row(self, m: int, inner: int) -> Content:
        """Id line ``m`` on one row ``inner`` cells wide: its value elided in the middle."""
        label, value = self.ids()[m]
        return Content.assemble((label, "$text-muted"),
                                safe.elide_middle(value, max(inner - len(label), 1)))
