"""The selected frame, beside the frame list: its fields, its data as pretty JSON, its raw bytes
(escapes visible, ┊ where a network chunk boundary fell, ␊ and ␍ for line ends), its hex and
what it did. The cursor's frame, always: browsing the list moves the cursor, and this follows.

The text is :func:`..screens.frame_detail`'s (the enter key's modal shows the same), with the raw
lines drawn as the list's arriving block draws them (:mod:`.frame_text`); it is built only when
drawn, once per frame (see :class:`.rows.Wrapped`).
"""

from __future__ import annotations

import re

from textual.content import Content

from ...core.aws_eventstream import describe
from ...core.timeline import Timeline, View
from .. import safe
from ..screens import frame_detail
from .frame_text import FrameText, timed
from .rawbytes import line_spans
from .rows import LineWrapped, RowsView, Wrapped

LABEL = 11
"""A field's label is right-aligned in this many cells, then a space, then its value."""
_LABEL = re.compile(r" *[A-Za-z][\w -]*")


def field_indent(plain: str, label: int = LABEL) -> int:
    """The value's column in a field line (``{label:>11} value``: 12), else 0: wrapped, the
    value's rows hang under its first column, not under the label."""
    if len(plain) > label + 1 and plain[label] == " " and plain[label + 1] != " " \
            and _LABEL.fullmatch(plain[:label]):
        return label + 1
    return 0


class FrameDetailPane(RowsView):
    """The cursor's frame in detail (a view of the app's view, like every pane)."""

    COMPONENT_CLASSES = {"detail--escape", "detail--chunk", "detail--split", "detail--dim"}
    DEFAULT_CSS = """
    FrameDetailPane {
        & > .detail--escape { color: $text-secondary; text-style: dim; }
        & > .detail--chunk { color: $warning; text-style: bold; }
        & > .detail--split { color: $error; text-style: bold reverse; }
        & > .detail--dim { color: $text-muted; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, sticky_scrollbar=False)
        self.timeline: Timeline | None = None
        self.index: int | None = None
        self._shown: tuple[object, ...] | None = None  # (timeline, frame, theme) drawn
        self._view: View | None = None
        self._text = FrameText()

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)

    def _theme_changed(self, _theme: object) -> None:
        if self._view is not None:  # (the text's styles are the theme's: drawn again)
            self.show(self._view)

    def load(self, timeline: Timeline) -> None:
        self.timeline, self.index, self._shown = timeline, None, None
        self._text.load(timeline)
        self.clear_cache()

    def show(self, view: View) -> None:
        self._view = view
        index = view.frame.index if view.frame is not None else None
        shown = (id(self.timeline), index, self.app.theme)  # (its styles are the theme's)
        if self.timeline is None or shown == self._shown:
            return
        self._shown = shown
        if not self._text.timed and not self.timeline.closed:  # (a growing stream's times)
            self._text.timed = timed(self.timeline)
        self.index = index
        key = ("frame", *shown)
        self.border_title = "frame detail" if index is None else f"frame #{index}"
        if self.set_blocks([LineWrapped(key, self._content, hang=field_indent)]):
            self.show_block(0)
            with self.own_scroll():
                self.scroll_to(y=0, animate=False, immediate=True)

    def _content(self) -> Content:
        if self.timeline is None or self.index is None:
            return Content.styled("No frame yet: the cursor is before the first one.", "$text-muted")
        frame = self.timeline.frames[self.index]
        st = {name: self.get_visual_style(f"detail--{name}")
              for name in ("escape", "chunk", "split", "dim")}
        st["future"] = st["dim"]
        muted = st["dim"] if not frame.dispatch else None
        raw = [self._text.line(frame.raw, frame.start, start, end, None, muted, st)
               for start, end in line_spans(frame.raw)]
        detail = frame_detail(self.timeline, self.index, raw, timed=self._text.timed)
        binary = describe(frame)  # an AWS event-stream message: prelude, headers, checksums
        if not binary:
            return detail
        head = Content.assemble(("Event-stream message\n", "bold $text-primary"), *(
            part for label, value in binary
            for part in ((f"{label:>11} ", "$text-muted"), safe.content(value), "\n")), "\n")
        return head + detail

    def plain(self) -> str:
        """What the pane says, as text (for tests)."""
        return "\n".join(block.content.plain for block in self.blocks
                         if isinstance(block, Wrapped))
