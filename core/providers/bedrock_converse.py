"""Amazon Bedrock ConverseStream (``POST /model/{modelId}/converse-stream``).

Grammar (botocore's service model, ConverseStreamOutput): ``messageStart`` -> per content block
``contentBlockStart``? / ``contentBlockDelta``* / ``contentBlockStop`` -> ``messageStop`` (the
stop reason; the terminal event) -> ``metadata`` (usage and latency, allowed after it). Each is
one event-stream message named by its ``:event-type`` header; errors after the HTTP 200 are
``exception`` messages named by ``:exception-type`` (QUIRKS.md 23), and the turn then ends
without ``messageStop``.

Blocks are keyed by ``contentBlockIndex`` (never by arrival order, QUIRKS.md 23). A tool block
starts with ``toolUse`` (``toolUseId``, ``name``) and takes ``delta.toolUse.input`` string
fragments of JSON; text and reasoning blocks have no start event, their first delta opens them.
A block still open at ``messageStop`` was never closed by the provider: its call is cut
(a gateway that never sends ``contentBlockStop``, QUIRKS.md 23, does not run half a call).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..events import ArgumentsAppended, CallOpened, ProviderError, UsageReported
from ..frame import Frame
from ..gate.codes import Code
from .base import Handler, int_or_none, short, text_or_none
from .blocks import Block, BlockReader
from .eventstream import EventStreamFrames, exception_text, message_type
from .specs.bedrock_converse import SPEC
from .stops import report_stop

TEXT_DELTAS: dict[str, str] = {"text": "text"}
"""ContentBlockDelta members carrying assistant text -> the TextAppended channel."""
QUIET_DELTAS = frozenset({"citation", "toolResult", "image"})
"""Documented delta members that carry neither call input nor text shown here."""


class BedrockConverseReader(EventStreamFrames, BlockReader):
    name: ClassVar[str] = SPEC.name
    empty_arguments_mean_empty_object: ClassVar[bool] = SPEC.empty_arguments_mean_empty_object
    trailers: ClassVar[frozenset[str]] = frozenset({"metadata"})

    restarted_code: ClassVar[Code] = Code.BLOCK_RESTARTED
    not_stopped_code: ClassVar[Code] = Code.BLOCK_NOT_STOPPED

    def __init__(self) -> None:
        super().__init__()
        self._started = False
        self._open: dict[int, Block] = {}

    def event_type(self, frame: Frame, payload: Any) -> Any:
        """The ``:event-type`` header names the event (the payload does not); an exception
        message is read by one handler whatever its ``:exception-type``. Every other handler
        reads an object: a payload that is not one has no event (see :meth:`on_unknown`)."""
        if message_type(frame) == "exception":
            return "exception"
        return frame.event if isinstance(payload, dict) else None

    def on_unknown(self, frame: Frame, payload: Any, kind: Any) -> None:
        if not isinstance(payload, dict):
            self.anomaly(frame, Code.NOT_AN_OBJECT, f"{short(frame.event)} payload is not an "
                                                    f"object ({short(payload)})")
            return
        super().on_unknown(frame, payload, kind)

    # -- handlers ---------------------------------------------------------------------------

    def _on_message_start(self, frame: Frame, payload: dict[str, Any]) -> None:
        if self._started:
            self.anomaly(frame, Code.DUPLICATE_MESSAGE_START, "messageStart repeated")
        self._started = True

    def _on_block_start(self, frame: Frame, payload: dict[str, Any]) -> None:
        index = self._index(frame, payload)
        if index is None:
            return
        start = payload.get("start")
        if not isinstance(start, dict):
            self.anomaly(frame, Code.BAD_BLOCK, f"contentBlockStart without a start object "
                                                f"({short(start)})")
            start = {}
        key = self._key(index)
        self.restart(frame, self._open.get(index), key,
                     lambda: f"block {index} started again before contentBlockStop")
        use = start.get("toolUse")
        if isinstance(use, dict):
            self._open[index] = Block(key, "toolUse", "function")
            self.emit(CallOpened(frame.index, key, id=text_or_none(use.get("toolUseId")),
                                 name=text_or_none(use.get("name"))))
        else:
            self._open[index] = Block(key, next(iter(start), None), None)

    def _on_block_delta(self, frame: Frame, payload: dict[str, Any]) -> None:
        index = self._index(frame, payload)
        if index is None:
            return
        delta = payload.get("delta")
        key = self._key(index)
        if not isinstance(delta, dict) or len(delta) != 1:  # a union: exactly one member
            self.anomaly(frame, Code.BAD_DELTA, f"contentBlockDelta without one delta member "
                                                f"({short(delta)})", key=key)
            return
        [(member, value)] = delta.items()
        if member == "toolUse":
            fragment = value.get("input") if isinstance(value, dict) else None
            if not isinstance(fragment, str):
                self.anomaly(frame, Code.BAD_DELTA, f"toolUse delta without a string input "
                                                    f"({short(value)})", key=key)
                return
            block = self._open.get(index)
            if block is None:  # never started: the accumulator reports the unknown key
                block = self._open[index] = Block(key, None, "function")
            block.appended = True
            self.emit(ArgumentsAppended(frame.index, key, fragment))
        elif member in TEXT_DELTAS or member == "reasoningContent":
            self._open.setdefault(index, Block(key, member, None))  # text blocks have no start
            if member == "reasoningContent":  # text, or a signature / redacted bytes (quiet)
                self.text(frame, "reasoning", value.get("text") if isinstance(value, dict)
                          else value)
            else:
                self.text(frame, TEXT_DELTAS[member], value)
        elif member not in QUIET_DELTAS:
            self.anomaly(frame, Code.UNKNOWN_DELTA, f"unknown delta member {short(member)}",
                         key=key)

    def _on_block_stop(self, frame: Frame, payload: dict[str, Any]) -> None:
        index = self._index(frame, payload)
        if index is None:
            return
        self.stop(frame, self._open.pop(index, None), self._key(index),
                  lambda: f"contentBlockStop for block {index}, which is not open")

    def _on_message_stop(self, frame: Frame, payload: dict[str, Any]) -> None:
        self.cut_open(frame, ((block, f"block {index} never got contentBlockStop; messageStop "
                                      "arrived first")
                              for index, block in sorted(self._open.items())))
        self._open.clear()
        report_stop(self, SPEC, frame, "stopReason", payload.get("stopReason"))
        self.end_turn(frame, "messageStop")

    def _on_metadata(self, frame: Frame, payload: dict[str, Any]) -> None:
        usage = payload.get("usage")
        if isinstance(usage, dict):
            self.emit(UsageReported(frame.index, dict(usage)))
        elif usage is not None:
            self.anomaly(frame, Code.BAD_USAGE, f"usage is not an object ({short(usage)})")

    def _on_exception(self, frame: Frame, payload: Any) -> None:
        """An error inside the HTTP 200: boto3 raises EventStreamError here."""
        self.emit(ProviderError(frame.index, exception_text(payload), frame.event))

    handlers: ClassVar[dict[str, Handler]] = {
        "messageStart": _on_message_start,
        "contentBlockStart": _on_block_start,
        "contentBlockDelta": _on_block_delta,
        "contentBlockStop": _on_block_stop,
        "messageStop": _on_message_stop,
        "metadata": _on_metadata,
        "exception": _on_exception,
    }

    # -- helpers ----------------------------------------------------------------------------

    @staticmethod
    def _key(index: int) -> str:
        return f"block:{index}"

    def _index(self, frame: Frame, payload: dict[str, Any]) -> int | None:
        index = int_or_none(payload.get("contentBlockIndex"))
        if index is not None and index >= 0:
            return index
        self.anomaly(frame, Code.BAD_INDEX, f"{short(frame.event)} without a non-negative "
                     f"integer contentBlockIndex ({short(payload.get('contentBlockIndex'))})")
        return None
