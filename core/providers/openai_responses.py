"""OpenAI Responses API reader (PROTOCOLS.md §1, §5.1).

Every event is ``event: <type>`` + ``data: <json>`` carrying the same ``type`` and an integer
``sequence_number`` that starts at 0 and grows by one. A function call is an output item:
``response.output_item.added`` announces it (``item.id`` = ``fc_…``, ``call_id``, ``name``),
``response.function_call_arguments.delta`` carries its text keyed by ``item_id``,
``function_call_arguments.done`` and ``output_item.done`` both repeat the final text, and
``response.completed`` / ``.incomplete`` / ``.failed`` end the turn. There is no ``[DONE]``.

Calls are keyed ``item:<item_id>`` (``output:<output_index>`` when the item has no id), as the
protocol keys its deltas; ``call_id`` is kept on :class:`CallOpened` because it is the value a
client echoes back in ``function_call_output``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..events import (
    ArgumentsAppended,
    CallCut,
    CallIdentified,
    CallOpened,
    FinalCopy,
    ProviderError,
    StopReported,
    TextAppended,
    UsageReported,
)
from ..frame import Frame
from ..gate.codes import Code
from ..hot_path import INT, STRING, block_shape
from .base import Handler, int_or_none, short, text_or_none
from .responses_calls import ResponsesCalls, call_key, fingerprint
from .responses_events import NOT_CALLS, QUIET_EVENTS, TEXT_EVENTS
from .specs.openai_responses import SPEC

_DELTA = "response.function_call_arguments.delta"


class OpenAIResponsesReader(ResponsesCalls):
    """``POST /v1/responses`` with ``stream: true``."""

    name: ClassVar[str] = SPEC.name
    hot_shape = block_shape(  # (the API's own bytes: sequence_number, item_id, output_index,
        # delta, obfuscation)
        b"event: " + _DELTA.encode() + b'\ndata: {"type":"' + _DELTA.encode()
        + b'","sequence_number":', INT, b',"item_id":', STRING, b',"output_index":', INT,
        b',"delta":', STRING, b',"obfuscation":', STRING, b"}")

    def __init__(self) -> None:
        super().__init__()
        self._index_owner: dict[int, str] = {}  # output_index -> key of any item added there
        self._added: set[str] = set()
        self._seq: int | None = None
        self._seq_missing_reported = False
        self._response_id: str | None = None
        self._response_id_reported = False

    # -- envelope checks ------------------------------------------------------------------

    def event_type(self, frame: Frame, payload: Any) -> Any:
        # Every JSON payload passes through here exactly once, before dispatch: the place for
        # checks that concern the envelope of all events rather than one event type.
        if not isinstance(payload, dict):
            return None
        kind = payload.get("type")
        if frame.event is not None and frame.event != kind:
            self.anomaly(frame, Code.EVENT_NAME_MISMATCH,
                         f"event: {short(frame.event)} but data.type {short(kind)}")
        seq = payload.get("sequence_number")
        if type(seq) is int and self._seq is not None and seq == self._seq + 1:
            self._seq = seq  # the common case, inline: the next number
        else:
            self._check_sequence(frame, payload)
        response = payload.get("response")
        if response is not None:
            self._check_response_id(frame, response)
        return kind

    def hot_fragment(self, event: str | None, payload: Any, index: int) -> tuple[str, str] | None:
        """An arguments delta for a call announced under its item id, numbered next, with
        nothing :meth:`event_type` or :meth:`_resolve` would remark on."""
        if type(payload) is not dict or payload.get("type") != _DELTA:
            return None
        seq, item_id, delta = (payload.get("sequence_number"), payload.get("item_id"),
                               payload.get("delta"))
        if (event is not None and event != _DELTA) or type(seq) is not int \
                or payload.get("response") is not None \
                or type(item_id) is not str or type(delta) is not str:
            return None
        return self.hot_values([seq, item_id, payload.get("output_index"), delta, None])

    def hot_values(self, values: list[Any]) -> tuple[str, str] | None:
        """(sequence_number, item_id, output_index, delta, obfuscation) of a hot delta: numbered
        next, for a call announced under its item id, with no routing dispute."""
        seq, item_id, idx, delta, _ = values
        if self._seq is None or seq != self._seq + 1:
            return None
        call = self._calls.get(f"item:{item_id}")
        if call is None or call.item_id != item_id:
            return None
        if type(idx) is int and self._call_at.get(idx, call) is not call:
            return None  # (the routing dispute: read() says it)
        self._seq = seq
        return call.key, delta

    def _check_sequence(self, frame: Frame, payload: dict[str, Any]) -> None:
        # A stream is numbered or not from its first event, and every event agrees: a number
        # missing from a numbered stream, or appearing in an unnumbered one, is a gap.
        seq = int_or_none(payload.get("sequence_number"))
        if seq is None:
            if self._seq is not None:
                self.anomaly(frame, Code.SEQUENCE_GAP, "event without an integer sequence_number "
                                                       f"after {self._seq}")
            elif not self._seq_missing_reported:
                self._seq_missing_reported = True
                self.anomaly(frame, Code.MISSING_SEQUENCE_NUMBER,
                             "event without an integer sequence_number (reported once)")
            return
        if self._seq_missing_reported and self._seq is None:
            self.anomaly(frame, Code.SEQUENCE_GAP, f"sequence_number {seq} in a stream whose "
                                                   "first events had none")
        expected = 0 if self._seq is None else self._seq + 1
        if seq != expected and not (self._seq_missing_reported and self._seq is None):
            self.anomaly(frame, Code.SEQUENCE_GAP, f"sequence_number {seq}, expected {expected}")
        self._seq = seq  # resynchronise, so one gap is one anomaly

    def _check_response_id(self, frame: Frame, response: Any) -> None:
        rid = text_or_none(response.get("id")) if isinstance(response, dict) else None
        if rid is None:
            return
        if self._response_id is None:
            self._response_id = rid
        elif rid != self._response_id and not self._response_id_reported:
            self._response_id_reported = True
            self.anomaly(frame, Code.RESPONSE_ID_CHANGED,
                         f"response id {short(rid)}, first {short(self._response_id)}"
                         " (reported once)")

    # -- handlers ------------------------------------------------------------------------

    def _on_item_added(self, frame: Frame, payload: dict[str, Any]) -> None:
        item, idx = payload.get("item"), int_or_none(payload.get("output_index"))
        if not isinstance(item, dict):
            self.anomaly(frame, Code.BAD_ITEM, f"output_item.added without an item object: "
                                             f"{short(item)}")
            return
        key, kind = call_key(text_or_none(item.get("id")), idx), item.get("type")
        if key in self._added:
            self.anomaly(frame, Code.DUPLICATE_ITEM, f"output_item.added again for {key}", key=key)
        self._added.add(key)
        if idx is not None:
            owner = self._index_owner.get(idx)
            if owner is not None and owner != key:
                self.anomaly(frame, Code.OUTPUT_INDEX_REUSED,
                             f"output_index {idx} held {short(owner)}, now {short(key)}", key=key)
            self._index_owner[idx] = key
        if kind == "function_call":
            self._open(frame, key, item, idx)
        elif not (isinstance(kind, str) and kind in NOT_CALLS):
            self.anomaly(frame, Code.UNHANDLED_ITEM,
                         f"output item type {short(kind)} is not read as a call", key=key)

    def _on_arguments_delta(self, frame: Frame, payload: dict[str, Any]) -> None:
        key = self._resolve(frame, text_or_none(payload.get("item_id")),
                            int_or_none(payload.get("output_index")))
        delta = payload.get("delta")
        if isinstance(delta, str):
            self.emit(ArgumentsAppended(frame.index, key, delta))
        else:
            self.anomaly(frame, Code.BAD_DELTA, f"arguments delta is not a string: {short(delta)}",
                         key=key)

    def _on_arguments_done(self, frame: Frame, payload: dict[str, Any]) -> None:
        item_id, idx = text_or_none(payload.get("item_id")), int_or_none(payload.get("output_index"))
        key = self._resolve(frame, item_id, idx)
        # The spec requires `name` here, no real capture has it: optional either way.
        name = text_or_none(payload.get("name"))
        call = self._calls.get(key)
        if call is None:
            self.anomaly(frame, Code.CALL_NOT_ANNOUNCED,
                         f"arguments.done for {key}, never announced", key=key)
            call = self._open(frame, key, {"id": item_id, "name": name}, idx)
        elif name is not None and name != call.name:
            # The accumulator reports the differing name.
            self.emit(CallIdentified(frame.index, key, name=name))
        self._close(frame, key, payload.get("arguments"))

    def _on_item_done(self, frame: Frame, payload: dict[str, Any]) -> None:
        item, idx = payload.get("item"), int_or_none(payload.get("output_index"))
        if not isinstance(item, dict) or item.get("type") != "function_call":
            return  # other items: their text came in deltas; the final response has the rest
        key = self._resolve(frame, text_or_none(item.get("id")), idx)
        call = self._calls.get(key)
        if call is None:
            self.anomaly(frame, Code.CALL_NOT_ANNOUNCED,
                         f"output_item.done for {key}, never announced", key=key)
            self._open(frame, key, {k: v for k, v in item.items() if k != "arguments"}, idx)
        else:
            call_id, name = text_or_none(item.get("call_id")), text_or_none(item.get("name"))
            if (call_id is not None and call_id != call.call_id) or \
                    (name is not None and name != call.name):
                self.emit(CallOpened(frame.index, key, call_id=call_id, name=name))
        cut, status = None, item.get("status")
        if status is not None and status != "completed":  # (in_progress in a done item, too)
            cut = f"{key} ended with status {short(status)}"
            self.anomaly(frame, Code.CALL_INCOMPLETE, cut, key=key)
        self._close(frame, key, item.get("arguments"), cut)

    def _on_text(self, frame: Frame, payload: dict[str, Any]) -> None:
        delta = payload.get("delta")
        if isinstance(delta, str):
            if delta:
                self.emit(TextAppended(frame.index, TEXT_EVENTS[payload["type"]], delta))
        else:
            self.anomaly(frame, Code.BAD_TEXT, f"text delta is not a string: {short(delta)}")

    def _on_error(self, frame: Frame, payload: dict[str, Any]) -> None:
        # The wire nests {error:{type,code,message,param}}; the spec and SDK show them flat.
        nested = payload.get("error")
        if nested is not None:
            self.error_payload(frame, nested)
        else:
            self.error_payload(frame, {k: payload.get(k) for k in ("code", "message", "param")})

    def _final_response(self, frame: Frame, payload: dict[str, Any], status: str) -> dict[str, Any]:
        """Checks and usage common to the three terminal events; returns the response object."""
        response = payload.get("response")
        if not isinstance(response, dict):
            self.anomaly(frame, Code.BAD_RESPONSE, f"{status} event without a response object")
            return {}
        if response.get("status") != status:
            self.anomaly(frame, Code.STATUS_MISMATCH,
                         f"response.status {short(response.get('status'))}, expected {status}")
        usage = response.get("usage")
        if isinstance(usage, dict):
            budget = SPEC.token_budget
            self.emit(UsageReported(frame.index, usage,
                                    budget.echo(response) if budget is not None else None))
        output = response.get("output")
        listed: set[str] = set()
        for idx, item in enumerate(output if isinstance(output, list) else []):
            if not (isinstance(item, dict) and item.get("type") == "function_call"):
                continue
            call = self._find(text_or_none(item.get("id")), idx)
            if call is not None:
                listed.add(call.key)
            if call is None:
                self.anomaly(frame, Code.CALL_ONLY_IN_FINAL_RESPONSE,
                             f"function_call {short(item.get('name'))} at output {idx} was never"
                             " streamed")
                continue
            # The final response is what the SDK's get_final_response() hands a harness: what
            # it says of a streamed call (its name, call_id, status) is checked too.
            call_id, name = text_or_none(item.get("call_id")), text_or_none(item.get("name"))
            if (call_id is not None and call_id != call.call_id) or \
                    (name is not None and name != call.name):
                self.emit(CallIdentified(frame.index, call.key, call_id=call_id, name=name))
            item_status = item.get("status")
            if call.closed and item_status is not None and item_status != "completed":
                self.emit(CallCut(frame.index, call.key, f"{call.key} has status "
                                     f"{short(item_status)} in the final response"))
            if call.closed and isinstance(item.get("arguments"), str) and (
                    call.final is None or fingerprint(item["arguments"]) != call.final):
                # The final response is what the SDK's get_final_response() hands a harness: a
                # copy that is not the one the done events gave goes to the accumulator, which
                # compares it with the fragments.
                if call.final is not None:
                    self.anomaly(frame, Code.FINAL_ARGUMENTS_DIFFER,
                                 f"the final response's copy {short(item['arguments'])} is not "
                                 "the done events'", key=call.key)
                self.emit(FinalCopy(frame.index, call.key, item["arguments"]))
        if isinstance(output, list) and listed:
            # A streamed call the final response leaves out is not in what get_final_response()
            # hands a harness: it must not execute. (An empty output says nothing.)
            for call in self._calls.values():
                if call.key not in listed:
                    self.anomaly(frame, Code.CALL_MISSING_FROM_FINAL_RESPONSE,
                                 f"{call.key} was streamed but the final response does not list "
                                 "it", key=call.key)
        return response

    def _on_completed(self, frame: Frame, payload: dict[str, Any]) -> None:
        status = self._final_response(frame, payload, "completed").get("status")
        for call in self._calls.values():
            if not call.closed:
                self.anomaly(frame, Code.CALL_NOT_DONE,
                             f"{call.key} got no done event before response.completed",
                             key=call.key)
        # A completed event whose response says otherwise is taken at its worse word (status
        # incomplete inside response.completed is a cut turn).
        self.emit(StopReported(frame.index, "completed" if status in (None, "completed")
                               else short(status), cut=status == "incomplete",
                               failed=status not in (None, "completed", "incomplete")))
        self.end_turn(frame, "response.completed")

    def _on_incomplete(self, frame: Frame, payload: dict[str, Any]) -> None:
        response = self._final_response(frame, payload, "incomplete")
        details = response.get("incomplete_details")
        reason = text_or_none(details.get("reason")) if isinstance(details, dict) else None
        verdict = SPEC.classify(reason or "")
        if verdict is None or not verdict.cut:  # (only the cut reasons are incomplete ones)
            self.anomaly(frame, Code.UNKNOWN_INCOMPLETE_REASON,
                         f"incomplete_details.reason {short(reason)}")
        failed = verdict is not None and verdict.cut and verdict.failed
        self.emit(StopReported(frame.index, reason or "incomplete", cut=True, failed=failed))
        self.end_turn(frame, "response.incomplete")

    def _on_failed(self, frame: Frame, payload: dict[str, Any]) -> None:
        response = self._final_response(frame, payload, "failed")
        error = response.get("error")
        if error is not None:
            self.error_payload(frame, error)
        else:
            self.emit(ProviderError(frame.index, "response.failed without an error object"))
        self.emit(StopReported(frame.index, "failed", cut=False, failed=True))
        self.end_turn(frame, "response.failed")

    def _ignore(self, frame: Frame, payload: dict[str, Any]) -> None:
        pass

    handlers: ClassVar[dict[str, Handler]] = {
        **dict.fromkeys(QUIET_EVENTS, _ignore),
        **dict.fromkeys(TEXT_EVENTS, _on_text),
        "response.output_item.added": _on_item_added,
        "response.output_item.done": _on_item_done,
        _DELTA: _on_arguments_delta,
        "response.function_call_arguments.done": _on_arguments_done,
        "response.completed": _on_completed,
        "response.incomplete": _on_incomplete,
        "response.failed": _on_failed,
        "error": _on_error,
    }
