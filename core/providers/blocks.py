"""The lifecycle Anthropic's content blocks and Interactions' steps share: a block starts (a
call, text, or something else), takes deltas, and stops; a block started again before its stop,
a stop for a block that is not open, and blocks still open when the message or interaction ends
are each reported the same way, and a call block's close says whether it was cut.

A reader derives from :class:`BlockReader`, keeps its open blocks in a dict of its own (keyed as
its wire numbers them), names its two codes and says in :meth:`BlockReader.without_deltas` what a
call block that got no argument deltas at all holds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from ..events import ArgumentsSet, TextAppended
from ..fork import Record
from ..frame import Frame
from ..gate.codes import Code
from .base import ProtocolReader, short


@dataclass(slots=True)
class Block(Record):
    """One open block (Anthropic) or step (Interactions)."""

    key: str
    type: str | None
    kind: str | None
    """CallOpened.kind for call blocks, None for text and other blocks."""
    start: Any = None
    """The arguments object of the start event (Anthropic keeps only a non-empty one)."""
    appended: bool = False
    """Argument text fragments arrived."""
    set_: bool = False
    """A whole arguments object arrived in a delta (Interactions' legacy and server calls)."""


class BlockReader(ProtocolReader):
    """A reader whose calls live in blocks that start and stop."""

    restarted_code: ClassVar[Code]
    """Said when a block starts again before its stop (both are then cut)."""
    not_stopped_code: ClassVar[Code]
    """Said for each block still open when the message or interaction ends."""

    def restart(self, frame: Frame, old: Block | None, key: str, message: Callable[[], str]) -> None:
        """A block starts under ``key``: the one ``old`` still open there is cut."""
        if old is not None:
            # The old block is cut; the new one's text then changes a closed call: both refused
            # (else the two blocks' text would be spliced into one call).
            restarted = message()
            self.anomaly(frame, self.restarted_code, restarted, key=key)
            self.close_block(frame, old, cut=restarted)

    def stop(self, frame: Frame, block: Block | None, key: str, message: Callable[[], str]) -> None:
        """The provider stops the block it keys ``key``: ``block`` (None: none is open)."""
        if block is None:
            self.anomaly(frame, Code.STOP_WITHOUT_START, message(), key=key)
        else:
            self.close_block(frame, block)

    def cut_open(self, frame: Frame, still_open: Iterable[tuple[Block, str]]) -> None:
        """The message or interaction ends with blocks still open: each ``(block, why)`` is
        reported and its call cut. The caller clears its table."""
        for block, why in still_open:
            self.anomaly(frame, self.not_stopped_code, why, key=block.key)
            self.close_block(frame, block, cut=why)

    def close_block(self, frame: Frame, block: Block, cut: str | None = None) -> None:
        """Close a block's call; ``cut`` says why the provider never closed it (then the gate
        refuses it: nothing vouched for its arguments being whole)."""
        if block.kind is None:
            return
        if not block.appended and not block.set_:
            self.without_deltas(frame, block)
        self.close_call(frame, block.key, cut)

    def without_deltas(self, frame: Frame, block: Block) -> None:
        """A call block closes without any argument delta: by default its start object, if it
        has one, is its arguments."""
        if block.start is not None:
            self.set_serialized(frame, block.key, block.start)

    def set_serialized(self, frame: Frame, key: str, value: Any) -> None:
        """A whole argument object becomes the call's text (unless it cannot be written)."""
        text = self.serialized(frame, key, value)
        if text is not None:
            self.emit(ArgumentsSet(frame.index, key, text, "serialized"))

    def text(self, frame: Frame, channel: str, text: Any) -> None:
        """Assistant text on a channel; text that is not a string is reported (``bad_text``)."""
        if isinstance(text, str):
            if text:
                self.emit(TextAppended(frame.index, channel, text))
        elif text is not None:
            self.anomaly(frame, Code.BAD_TEXT, f"{channel} is not a string: {short(text)}")
