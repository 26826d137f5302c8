"""OpenAI Chat Completions reader, for OpenAI and the gateways that copy it (PROTOCOLS.md §2).

Data-only SSE: every frame is a ``chat.completion.chunk`` with ``choices[].delta``; there is no
event type. Tool calls are keyed by ``(choice.index, tool_calls[].index)``: the first fragment
of a call brings ``id`` and ``function.name``, the next ones only ``function.arguments`` text.
``finish_reason`` says why the choice stopped, and ``data: [DONE]`` ends the stream.

Gateways bend this in known ways (§2.4), each handled here and shown as an anomaly where it
matters: ``index`` missing (fall back to ``id``, then to the choice's last open call), ``id`` and
``name`` repeated on every fragment (never concatenated), an index reused for a new call, sparse
indexes, whole calls in one chunk, several fragments of one call in one chunk.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..events import (
    ArgumentsAppended,
    ArgumentsSet,
    CallIdentified,
    CallOpened,
    StopReported,
    TextAppended,
    UsageReported,
)
from ..fork import Record
from ..frame import Frame
from ..gate.codes import Code
from .base import Handler, ProtocolReader, int_or_none, nonempty_text, short
from .spec import UNKNOWN_STOP
from .specs.openai_chat import SPEC

CHUNK = "chunk"
"""The event type this reader gives every chunk, since the wire has none."""

# delta fields that carry assistant text, and their channel (reasoning_content: xAI, DeepSeek;
# reasoning: OpenRouter and others).
_TEXT_FIELDS: dict[str, str] = {
    "content": "text",
    "refusal": "refusal",
    "reasoning_content": "reasoning",
    "reasoning": "reasoning",
}

# Values of `object` that are not anomalies: the chunk type, and Azure's "" on its
# prompt-filter and async-filter chunks.
_CHUNK_OBJECTS = frozenset({"chat.completion.chunk", ""})



@dataclass(slots=True)
class _Call(Record):
    key: str
    choice: int
    id: str | None = None
    name: str | None = None
    fragments: int = 0
    """Non-empty argument fragments so far."""
    first: str = ""
    """The first non-empty fragment (to spot ``{}`` followed by more text)."""
    has_args: bool = False
    closed: bool = False
    repeat_reported: bool = False
    missing_index_reported: bool = False
    late: str | None = None
    """Set when the call first came after its choice's finish_reason: why it is not whole."""


class OpenAIChatReader(ProtocolReader):
    """``POST /v1/chat/completions`` with ``stream: true``, and compatible gateways."""

    name: ClassVar[str] = SPEC.name

    def __init__(self) -> None:
        super().__init__()
        self._slots: dict[tuple[int, int], _Call] = {}  # (choice, index) -> latest call there
        self._generations: dict[tuple[int, int], int] = {}
        self._by_id: dict[tuple[int, str], _Call] = {}
        self._order: dict[int, list[_Call]] = {}  # choice -> its calls, in opening order
        self._legacy: dict[int, _Call] = {}  # choice -> deprecated `function_call` call
        self._choices: set[int] = set()
        self._finished: set[int] = set()
        self._unindexed = 0

    # -- framing --------------------------------------------------------------------------

    def event_type(self, frame: Frame, payload: Any) -> Any:
        if not isinstance(payload, dict):
            return None
        if "choices" in payload or "usage" in payload \
                or payload.get("object") == "chat.completion.chunk":
            return CHUNK
        if "error" in payload:
            return "error"
        return None

    def on_done(self, frame: Frame) -> None:
        if not self._finished:
            # No proof that any call finished: no TurnEnded, so the gate treats the turn as cut.
            self.anomaly(frame, Code.DONE_WITHOUT_FINISH_REASON,
                         "[DONE] arrived but no choice reported a finish_reason")
            return
        for choice in sorted(self._choices - self._finished):
            self.anomaly(frame, Code.CHOICE_WITHOUT_FINISH_REASON,
                         f"choice {choice} has no finish_reason at [DONE]")
        self.end_turn(frame, "[DONE]")

    def hot_fragment(self, event: str | None, payload: Any, index: int) -> tuple[str, str] | None:
        """A chunk of one choice (already seen, not finished) whose delta is one arguments
        fragment for the call at an index already open, with no id, name, text, usage, error
        or finish reason beside it."""
        if type(payload) is not dict:
            return None
        choices = payload.get("choices")
        obj = payload.get("object")
        if type(choices) is not list or len(choices) != 1 or \
                (obj is not None and obj != "chat.completion.chunk") or \
                payload.get("error") is not None or payload.get("usage") is not None:
            return None
        choice = choices[0]
        if type(choice) is not dict:
            return None
        c, delta, reason = choice.get("index"), choice.get("delta"), choice.get("finish_reason")
        if type(c) is not int or type(delta) is not dict or (reason is not None and reason != "") \
                or c not in self._choices or c in self._finished:
            return None
        tool_calls = delta.get("tool_calls")
        if type(tool_calls) is not list or len(tool_calls) != 1 or \
                delta.get("function_call") is not None:
            return None
        for field in _TEXT_FIELDS:
            text = delta.get(field)
            if text is not None and text != "":
                return None
        fragment = tool_calls[0]
        if type(fragment) is not dict:
            return None
        function, i = fragment.get("function"), fragment.get("index")
        if type(function) is not dict or type(i) is not int or \
                nonempty_text(fragment.get("id")) is not None or \
                nonempty_text(function.get("name")) is not None:
            return None
        call = self._slots.get((c, i))
        text = function.get("arguments")
        if call is None or type(text) is not str or not text or \
                (call.fragments == 1 and call.first == "{}"):
            return None
        call.fragments += 1
        if call.fragments == 1:
            call.first = text
        call.has_args = True
        return call.key, text

    # -- handlers ------------------------------------------------------------------------

    def _on_error(self, frame: Frame, payload: dict[str, Any]) -> None:
        self.error_payload(frame, payload["error"])

    def _on_chunk(self, frame: Frame, payload: dict[str, Any]) -> None:
        obj = payload.get("object")
        if obj is not None and not (isinstance(obj, str) and obj in _CHUNK_OBJECTS):
            self.anomaly(frame, Code.UNEXPECTED_OBJECT, f"object {short(obj)} in a chunk stream")
        if payload.get("error") is not None:  # an error riding on a chunk (OpenRouter)
            self.error_payload(frame, payload["error"])
        usage = payload.get("usage")
        if isinstance(usage, dict):
            self.emit(UsageReported(frame.index, usage))
        choices = payload.get("choices")
        if choices is None:
            return
        if not isinstance(choices, list):
            self.anomaly(frame, Code.BAD_CHOICES, f"choices is not a list: {short(choices)}")
            return
        for choice in choices:
            if isinstance(choice, dict):
                self._choice(frame, choice)
            else:
                self.anomaly(frame, Code.BAD_CHOICE, f"choice is not an object: {short(choice)}")

    def _choice(self, frame: Frame, choice: dict[str, Any]) -> None:
        c = int_or_none(choice.get("index"))
        if c is None:
            self.anomaly(frame, Code.MISSING_CHOICE_INDEX,
                         f"choice index {short(choice.get('index'))}, taken as 0")
            c = 0
        self._choices.add(c)
        delta = choice.get("delta")
        if isinstance(delta, dict):
            self._delta(frame, c, delta)
        elif delta is not None:
            self.anomaly(frame, Code.BAD_DELTA, f"delta is not an object: {short(delta)}")
        reason = choice.get("finish_reason")
        if reason is not None and reason != "":  # some gateways send "" for "not yet"
            self._finish(frame, c, reason)

    def _delta(self, frame: Frame, c: int, delta: dict[str, Any]) -> None:
        if c in self._finished:
            carries = [k for k in (*_TEXT_FIELDS, "tool_calls", "function_call") if delta.get(k)]
            if carries:
                self.anomaly(frame, Code.DELTA_AFTER_FINISH,
                             f"choice {c} sent {', '.join(carries)} after its finish_reason")
        for field, channel in _TEXT_FIELDS.items():
            text = delta.get(field)
            if isinstance(text, str):
                if text:
                    self.emit(TextAppended(frame.index, channel, text))
            elif text is not None:
                self.anomaly(frame, Code.BAD_TEXT, f"delta.{field} is not a string: {short(text)}")
        tool_calls = delta.get("tool_calls")
        if isinstance(tool_calls, list):
            for fragment in tool_calls:  # several fragments of one index: in order, as sent
                self._tool_fragment(frame, c, fragment)
        elif tool_calls is not None:
            self.anomaly(frame, Code.BAD_TOOL_CALLS, f"tool_calls is not a list: {short(tool_calls)}")
        legacy = delta.get("function_call")
        if isinstance(legacy, dict):
            self._legacy_fragment(frame, c, legacy)
        elif legacy is not None:
            self.anomaly(frame, Code.BAD_FUNCTION_CALL,
                         f"function_call is not an object: {short(legacy)}")

    def _finish(self, frame: Frame, c: int, reason: Any) -> None:
        if not isinstance(reason, str):
            self.anomaly(frame, Code.BAD_FINISH_REASON, f"finish_reason {short(reason)}")
            reason = short(reason)
        verdict = SPEC.classify(reason)
        if verdict is None:  # not known to be a success: a failure (DeepSeek's
            # insufficient_system_resource is an interrupted output, and names no cut)
            self.anomaly(frame, Code.UNKNOWN_FINISH_REASON,
                         f"finish_reason {short(reason)} is not documented; treated as failed")
            verdict = UNKNOWN_STOP
        if c in self._finished:
            self.anomaly(frame, Code.REPEATED_FINISH_REASON, f"choice {c} finished again ({reason})")
        self._finished.add(c)
        self.emit(StopReported(frame.index, reason, cut=verdict.cut, failed=verdict.failed))
        # The finish_reason is the provider's word that this choice's calls are complete.
        for call in self._order.get(c, []):
            if not call.closed:
                call.closed = True
                self.close_call(frame, call.key, call.late)

    # -- tool calls ----------------------------------------------------------------------

    def _tool_fragment(self, frame: Frame, c: int, fragment: Any) -> None:
        if not isinstance(fragment, dict):
            self.anomaly(frame, Code.BAD_TOOL_CALL, f"tool_calls entry is not an object: "
                                                 f"{short(fragment)}")
            return
        function = fragment.get("function")
        if function is None:
            function = {}
        elif not isinstance(function, dict):
            self.anomaly(frame, Code.BAD_TOOL_CALL, f"function is not an object: {short(function)}")
            function = {}
        call_id, index = nonempty_text(fragment.get("id")), fragment.get("index")
        call, new = self._locate(frame, c, index, call_id)
        # Without an index the id is the routing key: repeating it is then no quirk.
        self._apply(frame, call, new, call_id, function, id_is_key=int_or_none(index) is None)

    def _legacy_fragment(self, frame: Frame, c: int, function: dict[str, Any]) -> None:
        """The deprecated ``delta.function_call`` (functions API): one call per choice."""
        call = self._legacy.get(c)
        new = call is None
        if call is None:
            call = self._legacy[c] = self._new(c, f"choice{c}/function_call")
        self._apply(frame, call, new, None, function)

    def _new(self, c: int, key: str, call_id: str | None = None) -> _Call:
        call = _Call(key, c)
        if c in self._finished:  # (its choice's finish_reason vouched for the calls before it)
            call.late = f"{key} first came after choice {c}'s finish_reason"
        self._order.setdefault(c, []).append(call)
        if call_id is not None:
            self._by_id[(c, call_id)] = call
        return call

    def _locate(self, frame: Frame, c: int, index: Any, call_id: str | None) -> tuple[_Call, bool]:
        """The call a fragment belongs to, and whether it is new."""
        i = int_or_none(index)
        if i is not None:
            slot = (c, i)
            call = self._slots.get(slot)
            if call is not None and call_id is not None and call.id is not None \
                    and call_id != call.id and call.has_args:
                # Ollama-style: every call says index 0. A new id after the old call had its
                # arguments is a new call, not a rename of the finished one.
                generation = self._generations[slot] = self._generations.get(slot, 1) + 1
                key = f"choice{c}/call{i}#{generation}"
                self.anomaly(frame, Code.INDEX_REUSED,
                             f"index {i} reused by id {short(call_id)} after {call.key}"
                             f" (id {short(call.id)}) had arguments", key=key)
                call = None
            else:
                key = f"choice{c}/call{i}"
            if call is not None:
                return call, False
            call = self._slots[slot] = self._new(c, key, call_id)
            return call, True
        if index is not None:
            self.anomaly(frame, Code.BAD_INDEX, f"tool_calls index {short(index)} is not an integer")
        new = False
        if call_id is not None:
            call = self._by_id.get((c, call_id))
            if call is None:
                call, new = self._new(c, f"choice{c}/id:{call_id}", call_id), True
        else:
            open_calls = [k for k in self._order.get(c, []) if not k.closed]
            if len(open_calls) > 1:
                # A guess between several open calls (the SDK raises here): the call it goes to
                # is disputed (a guess could complete another call's arguments).
                self.anomaly(frame, Code.AMBIGUOUS_FRAGMENT,
                             f"a tool_calls fragment with neither index nor id, while "
                             f"{len(open_calls)} calls are open: given to the last one",
                             key=open_calls[-1].key)
            if open_calls:
                call = open_calls[-1]
            else:
                self._unindexed += 1
                call, new = self._new(c, f"choice{c}/noindex{self._unindexed}"), True
        if not call.missing_index_reported:
            call.missing_index_reported = True
            how = "by id" if call_id is not None else "to the last open call"
            self.anomaly(frame, Code.MISSING_INDEX,
                         f"tool_calls fragment without index, attributed {how} (once per call)",
                         key=call.key)
        return call, new

    def _apply(self, frame: Frame, call: _Call, new: bool, call_id: str | None,
               function: dict[str, Any], id_is_key: bool = False) -> None:
        name = nonempty_text(function.get("name"))
        if new:
            call.id, call.name = call_id, name
            self.emit(CallOpened(frame.index, call.key, id=call_id, name=name))
            if name is None:  # (the first fragment of a call names it: that one never came)
                self.anomaly(frame, Code.CALL_WITHOUT_NAME,
                             f"{call.key} first appears without a function name", key=call.key)
        elif call_id is not None or name is not None:
            changed = (call_id is not None and call_id != call.id) or \
                      (name is not None and name != call.name)
            if changed:
                # Set-once values that change: the accumulator reports the change.
                self.emit(CallIdentified(frame.index, call.key, id=call_id, name=name))
                call.id, call.name = call_id or call.id, name or call.name
                if call_id is not None:
                    self._by_id[(call.choice, call_id)] = call
            elif not call.repeat_reported and (name is not None or not id_is_key):
                # Same id/name again (Fireworks, DeepSeek, Qwen, NIM…): never concatenated.
                call.repeat_reported = True
                self.anomaly(frame, Code.REPEATED_IDENTITY,
                             f"{call.key} repeats its id/name on later fragments (once per call)",
                             key=call.key)
        self._arguments(frame, call, function.get("arguments"))

    def _arguments(self, frame: Frame, call: _Call, text: Any) -> None:
        if isinstance(text, str):
            if not text:
                return  # OpenAI's announcing fragment and some gateways send "": nothing to add
            if call.fragments == 1 and call.first == "{}":
                self.anomaly(frame, Code.EMPTY_OBJECT_THEN_MORE,
                             f"{call.key} sent {{}} and then more argument text", key=call.key)
            call.fragments += 1
            if call.fragments == 1:
                call.first = text
            call.has_args = True
            self.emit(ArgumentsAppended(frame.index, call.key, text))
        elif text is not None:
            # Some gateways send the arguments as a JSON object rather than text.
            self.anomaly(frame, Code.ARGUMENTS_NOT_TEXT,
                         f"{call.key} arguments sent as {type(text).__name__}, serialized",
                         key=call.key)
            call.has_args = True
            serialized = self.serialized(frame, call.key, text)
            if serialized is not None:
                self.emit(ArgumentsSet(frame.index, call.key, serialized, origin="serialized"))

    handlers: ClassVar[dict[str, Handler]] = {
        CHUNK: _on_chunk,
        "error": _on_error,
    }
