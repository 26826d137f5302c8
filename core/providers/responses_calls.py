"""The calls of an OpenAI Responses stream, as its reader keeps them (PROTOCOLS.md §1).

A call is an output item, keyed ``item:<item_id>`` (``output:<output_index>`` when the item
has no id), as the protocol keys its deltas. :class:`ResponsesCalls` finds the call an event
refers to (by id, else by output index, with the disputes between the two reported), opens it,
and closes it with the provider's final copy of its arguments, of which it keeps a fingerprint
to compare the later copies with.
"""

from __future__ import annotations

try:  # hashlib's own BLAKE2b, without loading OpenSSL (~4 ms of every replay's start-up)
    from _blake2 import blake2b
except ImportError:  # (an interpreter without the builtin module)
    from hashlib import blake2b
from dataclasses import dataclass
from typing import Any

from ..events import ArgumentsAppended, CallCut, CallOpened, FinalCopy
from ..fork import Record
from ..frame import Frame
from ..gate.codes import Code
from .base import ProtocolReader, short, text_or_none


def fingerprint(text: str) -> bytes:
    """What a call keeps of its first final copy to compare later ones with: a 256-bit BLAKE2b
    of its UTF-8 (equal exactly when the texts are, short of a collision nobody can make), not
    the text, which repeats every argument (a long turn's copies outweighed its buffers)."""
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=32).digest()


def call_key(item_id: str | None, output_index: int | None) -> str:
    if item_id is not None:
        return f"item:{item_id}"
    return f"output:{'?' if output_index is None else output_index}"


@dataclass(slots=True)
class ResponsesCall(Record):
    key: str
    output_index: int | None
    item_id: str | None = None
    call_id: str | None = None
    name: str | None = None
    closed: bool = False
    final: bytes | None = None
    """The :func:`fingerprint` of the first final copy of the arguments the provider sent
    (done event or item)."""
    id_change_reported: bool = False


class ResponsesCalls(ProtocolReader):
    """The call bookkeeping of :class:`~.openai_responses.OpenAIResponsesReader`."""

    def __init__(self) -> None:
        super().__init__()
        self._calls: dict[str, ResponsesCall] = {}
        self._call_at: dict[int, ResponsesCall] = {}  # output_index -> latest function call there

    def _find(self, item_id: str | None, output_index: int | None) -> ResponsesCall | None:
        call = self._calls.get(call_key(item_id, output_index))
        if call is None and output_index is not None:
            call = self._call_at.get(output_index)
        return call

    def _resolve(self, frame: Frame, item_id: str | None, output_index: int | None) -> str:
        """The key of the call an event refers to. Ids that rotate between events (GitHub
        Copilot's proxy) fall back to the call at the same output_index, reported once."""
        call = self._find(item_id, output_index)
        if call is None:
            return call_key(item_id, output_index)  # the accumulator reports the unknown call
        at = self._call_at.get(output_index) if output_index is not None else None
        if at is not None and at is not call:
            # The id names one call, the output_index another (the SDK routes by the index):
            # both are disputed (the two readings build different arguments).
            for disputed in (call, at):
                self.anomaly(frame, Code.ROUTING_DISAGREES,
                             f"an event's item_id names {call.key}, its output_index "
                             f"{output_index} names {at.key}", key=disputed.key)
        if item_id is not None and call.item_id is not None and item_id != call.item_id \
                and not call.id_change_reported:
            call.id_change_reported = True
            self.anomaly(frame, Code.ITEM_ID_CHANGED,
                         f"item id {short(item_id)} at output_index {output_index} is taken as"
                         f" {call.key} (reported once per call)", key=call.key)
        return call.key

    def _open(self, frame: Frame, key: str, item: dict[str, Any], idx: int | None) -> ResponsesCall:
        call = self._calls.get(key)
        if call is None:
            call = self._calls[key] = ResponsesCall(key, idx)
        call.item_id = text_or_none(item.get("id"))
        call.call_id = text_or_none(item.get("call_id"))
        call.name = text_or_none(item.get("name"))
        if idx is not None:
            self._call_at[idx] = call
        self.emit(CallOpened(frame.index, key, id=call.item_id, call_id=call.call_id,
                             name=call.name))
        text = item.get("arguments")
        if isinstance(text, str) and text:
            # Real captures announce with "", but a proxy may put text here: it is the call's
            # first fragment, so it goes into the buffer like any delta.
            self.emit(ArgumentsAppended(frame.index, key, text))
        return call

    def _close(self, frame: Frame, key: str, text: Any, cut: str | None = None) -> None:
        if text is not None and not isinstance(text, str):
            self.anomaly(frame, Code.BAD_ARGUMENTS, f"final arguments are not a string: {short(text)}",
                         key=key)
            text = None
        call = self._calls[key]
        if not call.closed:
            call.closed, call.final = True, None if text is None else fingerprint(text)
            if text is not None:
                self.emit(FinalCopy(frame.index, key, text))
            self.close_call(frame, key, cut)
            return
        differs = text is not None and call.final is not None and fingerprint(text) != call.final
        if differs:
            # The two provider copies (arguments.done and output_item.done) disagree with each
            # other: one of them differs from our buffer, which the accumulator finds.
            self.anomaly(frame, Code.FINAL_ARGUMENTS_DIFFER,
                         f"second final copy {short(text)} differs from the first", key=key)
        if differs:  # (output_item.done adds a copy, or says the call is not whole)
            self.emit(FinalCopy(frame.index, key, text))
        if cut is not None:
            self.emit(CallCut(frame.index, key, cut))
