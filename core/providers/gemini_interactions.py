"""Gemini Interactions API streaming (``POST /v1beta/interactions``, ``"stream": true``).

Two wire schemas share this reader (PROTOCOLS.md §4a.1); both discriminate on ``event_type``:

* **steps** (current): ``interaction.created``, ``interaction.status_update``, ``step.start``,
  ``step.delta``, ``step.stop``, ``interaction.completed``, then ``event: done`` / ``[DONE]``.
  A function call is ``step.start{step:{type:function_call,id,name,arguments:{}}}`` followed by
  string fragments in ``step.delta{delta:{type:arguments_delta,arguments:"…"}}``.
* **legacy content** (until 2026-06-08): ``interaction.start``, ``content.start``,
  ``content.delta``, ``content.stop``, ``interaction.complete``. The call arrives as ONE
  ``content.delta{type:function_call,id,name,arguments:{…complete object…}}``.

Calls are keyed by the step (content) ``index``: ``step:<i>`` (legacy ``content:<i>``, the name
the wire uses). A ``requires_continuation`` status is not terminal: another
``interaction.created`` hop follows in the same stream and restarts the indexes, so hop ``n``
(from the second on) prefixes its keys with ``hop<n>/``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from ..events import (
    ArgumentsAppended,
    CallIdentified,
    CallOpened,
    StopReported,
    UsageReported,
)
from ..frame import Frame
from ..gate.codes import Code
from ..hot_path import INT, STRING, block_shape
from .base import Handler, short, text_or_none
from .blocks import Block, BlockReader
from .spec import UNKNOWN_STOP
from .specs.gemini_interactions import SPEC

STATUSES = SPEC.stop_reasons
"""interaction.status -> verdict (declared in :mod:`.specs.gemini_interactions`)."""

SERVER_CALLS = frozenset({
    # Step and delta types for tools Google runs itself (SDK _STEP_VARIANTS and
    # _STEP_DELTA_DATA_VARIANTS); their deltas carry an arguments OBJECT.
    "google_search_call", "code_execution_call", "url_context_call", "mcp_server_tool_call",
    "file_search_call", "google_maps_call", "retrieval_call", "tool_search_call",
})

QUIET_DELTAS = frozenset({
    # Documented delta types with neither call arguments nor displayable text.
    "thought_signature", "text_annotation_delta", "image", "audio", "video", "document",
    "function_result", "google_search_result", "code_execution_result", "url_context_result",
    "mcp_server_tool_result", "file_search_result", "google_maps_result", "retrieval_result",
    "tool_search_result",
})

_DeltaHandler = Callable[[Any, Frame, str, dict[str, Any]], None]

_STEP_DELTA = "step.delta"

BEFORE_CREATED_OK = frozenset({"interaction.created", "interaction.start", "error"})



def _delta_text(delta: dict[str, Any]) -> Any:
    """``text{text}``; ``thought_summary{content:{type:text,text}}`` (content may be a string)."""
    if "text" in delta:
        return delta["text"]
    content = delta.get("content")
    return content.get("text") if isinstance(content, dict) else content


MAX_STEP_KEYS = 256
"""Step keys the reader remembers per interaction (:meth:`GeminiInteractionsReader._index_key`;
past this many it forgets them all and starts again)."""


class GeminiInteractionsReader(BlockReader):
    name: ClassVar[str] = SPEC.name
    restarted_code: ClassVar[Code] = Code.STEP_RESTARTED
    not_stopped_code: ClassVar[Code] = Code.STEP_NOT_STOPPED
    trailers: ClassVar[frozenset[str]] = frozenset({"done"})
    hot_shape = block_shape(  # (the API's own bytes: values index, arguments)
        b'event: step.delta\ndata: {"index":', INT, b',"delta":{"arguments":', STRING,
        b',"type":"arguments_delta"},"event_type":"step.delta"}')
    # step.start announces every function call with ``arguments: {}``: an empty object, so a
    # call whose text stays empty has no arguments.
    empty_arguments_mean_empty_object: ClassVar[bool] = SPEC.empty_arguments_mean_empty_object

    def __init__(self) -> None:
        super().__init__()
        self._hops = 0
        self._hop_open = False
        self._steps: dict[str, Block] = {}
        self._hop_calls: list[str] = []  # the keys of the current interaction's calls
        self._step_keys: dict[int, str] = {}
        """The current interaction's step keys by index, as :meth:`_index_key` spells them (the
        hot path looks one up per fragment; a stream uses a few indexes per interaction)."""
        self._done = False

    # -- frame-level checks ---------------------------------------------------------------

    def event_type(self, frame: Frame, payload: Any) -> Any:
        """The discriminator is ``event_type`` (not ``type``, which lives inside step/delta)."""
        kind = payload.get("event_type") if isinstance(payload, dict) else None
        # The event: line equals event_type on the wire; the SDK ignores it, but a gateway
        # that rewrites one and not the other is worth seeing. A missing line is fine.
        if frame.event is not None and frame.event != kind:
            self.anomaly(frame, Code.EVENT_NAME_MISMATCH,
                         f"event: {short(frame.event)} but data.event_type is {short(kind)}")
        if self._hops == 0 and isinstance(kind, str) and kind not in BEFORE_CREATED_OK:
            self.anomaly(frame, Code.EVENT_BEFORE_START,
                         f"{short(kind)} before interaction.created")
        return kind

    def hot_fragment(self, event: str | None, payload: Any, index: int) -> tuple[str, str] | None:
        """A ``step.delta`` of type ``arguments_delta`` with a string ``arguments``, for an
        open step that has had its first fragment, inside an interaction, with no metadata."""
        if type(payload) is not dict or payload.get("event_type") != _STEP_DELTA \
                or (event is not None and event != _STEP_DELTA) or self._hops == 0:
            return None
        at, delta = payload.get("index"), payload.get("delta")
        if type(at) is not int or type(delta) is not dict or payload.get("metadata") is not None \
                or delta.get("type") != "arguments_delta":
            return None
        fragment = delta.get("arguments")
        return self.hot_values([at, fragment]) if type(fragment) is str else None

    def hot_values(self, values: list[Any]) -> tuple[str, str] | None:
        """(index, arguments) of a hot delta: for an open step, inside an interaction, that
        has had its first."""
        at, fragment = values
        hops = self._hops
        if hops == 0:
            return None
        step = self._steps.get(self._step_keys.get(at) or self._index_key("step", at))
        if step is None or not step.appended:
            return None
        return step.key, fragment

    def on_done(self, frame: Frame) -> None:
        """``[DONE]`` is the allowed trailer after the terminal ``interaction.completed``."""
        if frame.event not in (None, "done"):
            self.anomaly(frame, Code.EVENT_NAME_MISMATCH,
                         f"[DONE] under event: {short(frame.event)} (expected done)")
        if self._done:
            self.anomaly(frame, Code.REPEATED_DONE, "a second [DONE]")
        elif not self.ended:
            self.anomaly(frame, Code.DONE_BEFORE_COMPLETED,
                         "[DONE] before a terminal interaction.completed")
        self._done = True

    def on_finish(self) -> None:
        if self.ended and not self._done:
            # Informational: the turn is complete; recorders that keep only JSON payloads
            # (every *.reconstructed.sse fixture) drop this frame.
            self.anomaly(None, Code.MISSING_DONE,
                         "the stream ended after interaction.completed without [DONE]")

    # -- interaction lifecycle --------------------------------------------------------------

    def _on_created(self, frame: Frame, payload: dict[str, Any]) -> None:
        if self._hop_open:
            restarted = (f"{short(payload.get('event_type'))} before the previous interaction "
                         "completed")
            self.anomaly(frame, Code.INTERACTION_RESTARTED, restarted)
            # Nothing vouched for its calls, stopped or not: all are cut (a review ran one).
            still_open = set(self._steps)
            self._close_open(frame, restarted)
            self.cut_calls(frame, (key for key in self._hop_calls if key not in still_open),
                           restarted)
        self._hop_calls = []
        self._hops += 1
        self._step_keys = {}
        self._hop_open = True
        interaction = payload.get("interaction")
        if isinstance(interaction, dict):
            self._usage(frame, interaction.get("usage"))

    def _on_status_update(self, frame: Frame, payload: dict[str, Any]) -> None:
        self._usage(frame, payload.get("usage"))

    def _on_completed(self, frame: Frame, payload: dict[str, Any]) -> None:
        signal = str(payload.get("event_type"))
        self._close_open(frame, f"{signal} arrived first")
        self._hop_open = False
        interaction = payload.get("interaction")
        interaction = interaction if isinstance(interaction, dict) else {}
        status = interaction.get("status")
        verdict = SPEC.classify(status) if isinstance(status, str) else None
        if not isinstance(status, str):  # not known to be a success: a failure
            self.anomaly(frame, Code.MISSING_STATUS,
                         f"{signal} without interaction.status; treated as failed")
            self.emit(StopReported(frame.index, "no status", cut=False, failed=True))
        else:
            if verdict is None:  # (an unknown status is not known to be a success: a failure)
                self.anomaly(frame, Code.UNKNOWN_STATUS,
                             f"unknown interaction status {short(status)}; treated as failed")
            verdict = verdict or UNKNOWN_STOP
            self.emit(StopReported(frame.index, status, verdict.cut, verdict.failed))
            if verdict.failed:
                error = interaction.get("error", payload.get("error"))
                if error is not None:
                    self.error_payload(frame, error)
        self._usage(frame, interaction.get("usage"))
        if verdict is None or verdict.terminal:
            self.end_turn(frame, signal)

    def _on_error(self, frame: Frame, payload: dict[str, Any]) -> None:
        self.error_payload(frame, payload.get("error", payload))

    # -- steps (and legacy content blocks) --------------------------------------------------

    def _on_step_start(self, frame: Frame, payload: dict[str, Any]) -> None:
        self._start(frame, payload, "step", "step")

    def _on_content_start(self, frame: Frame, payload: dict[str, Any]) -> None:
        self._start(frame, payload, "content", "content")

    def _start(self, frame: Frame, payload: dict[str, Any], field: str, word: str) -> None:
        key = self._key(frame, payload, word)
        if key is None:
            return
        step = payload.get(field)
        if not isinstance(step, dict):
            self.anomaly(frame, Code.BAD_STEP, f"{word} start without a {field} object", key=key)
            step = {}
        stype = text_or_none(step.get("type"))
        self.restart(frame, self._steps.get(key), key,
                     lambda: f"{key} started again before it stopped")
        kind = "function" if stype == "function_call" else (
            "server_tool" if stype in SERVER_CALLS else None)
        arguments = step.get("arguments")
        if kind is not None:
            self._hop_calls.append(key)
            name = text_or_none(step.get("name"))
            if name is None and kind == "server_tool" and stype:
                # Most server steps carry no name; their type labels them (google_search).
                name = stype.removesuffix("_call")
            self.emit(CallOpened(frame.index, key, id=text_or_none(step.get("id")),
                                 name=name, kind=kind))
            if arguments is not None and not isinstance(arguments, dict):
                self.anomaly(frame, Code.BAD_ARGUMENTS,
                             f"start arguments is not an object ({short(arguments)})", key=key)
        self._steps[key] = Block(key, stype, kind, arguments)

    def _on_delta(self, frame: Frame, payload: dict[str, Any]) -> None:
        word = "step" if payload.get("event_type") == "step.delta" else "content"
        key = self._key(frame, payload, word)
        if key is None:
            return
        delta = payload.get("delta")
        dtype = delta.get("type") if isinstance(delta, dict) else None
        if not isinstance(delta, dict) or not isinstance(dtype, str):
            self.anomaly(frame, Code.BAD_DELTA, f"delta without a type ({short(delta)})", key=key)
            return
        handler = self.delta_handlers.get(dtype)
        if handler is not None:
            handler(self, frame, key, delta)
        elif dtype in SERVER_CALLS:
            self._object_arguments(frame, key, delta, "server_tool")
        elif dtype not in QUIET_DELTAS:
            # The docs: "log and skip any events you don't recognize".
            self.anomaly(frame, Code.UNKNOWN_DELTA, f"unknown delta type {short(dtype)}", key=key)
        metadata = payload.get("metadata")
        if isinstance(metadata, dict):
            self._usage(frame, metadata.get("total_usage"))

    def _arguments_delta(self, frame: Frame, key: str, delta: dict[str, Any]) -> None:
        # google-genai 2.0.0 alone called the field partial_arguments.
        fragment = delta["arguments"] if "arguments" in delta else delta.get("partial_arguments")
        if isinstance(fragment, dict):
            self.anomaly(frame, Code.ARGUMENTS_NOT_TEXT,
                         "arguments_delta carries an object, not a string fragment", key=key)
            self._object_arguments(frame, key, {"arguments": fragment}, "function")
            return
        if not isinstance(fragment, str):
            self.anomaly(frame, Code.BAD_DELTA,
                         f"arguments_delta without a string fragment ({short(fragment)})", key=key)
            return
        step = self._step(key, "function")
        if not step.appended and isinstance(step.start, dict) and step.start:
            # The start object is NOT prefixed to the fragments (that is how "{}{...}" bugs
            # are made); the fragments are the arguments, and the conflict is shown.
            self.anomaly(frame, Code.START_ARGUMENTS_THEN_DELTAS,
                         f"{key} started with non-empty arguments and also got string deltas",
                         key=key)
        step.appended = True
        self.emit(ArgumentsAppended(frame.index, key, fragment))

    def _function_call_delta(self, frame: Frame, key: str, delta: dict[str, Any]) -> None:
        """Legacy: the whole call in one delta. The name only appears here: a call its start
        opened is identified again (the accumulator fills in what it lacked)."""
        call_id, name = text_or_none(delta.get("id")), text_or_none(delta.get("name"))
        if key in self._hop_calls:
            self.emit(CallIdentified(frame.index, key, id=call_id, name=name))
        else:
            self._hop_calls.append(key)
            self.emit(CallOpened(frame.index, key, id=call_id, name=name, kind="function"))
        self._object_arguments(frame, key, delta, "function")

    def _text_delta(self, frame: Frame, key: str, delta: dict[str, Any]) -> None:
        self.text(frame, "text", _delta_text(delta))

    def _thought_delta(self, frame: Frame, key: str, delta: dict[str, Any]) -> None:
        self.text(frame, "reasoning", _delta_text(delta))

    def _on_stop(self, frame: Frame, payload: dict[str, Any]) -> None:
        word = "step" if payload.get("event_type") == "step.stop" else "content"
        key = self._key(frame, payload, word)
        if key is None:
            return
        self.stop(frame, self._steps.pop(key, None), key,
                  lambda: f"stop for {key}, which is not open")
        self._usage(frame, payload.get("usage"))

    delta_handlers: ClassVar[dict[str, _DeltaHandler]] = {
        "arguments_delta": _arguments_delta,
        "function_call": _function_call_delta,
        "text": _text_delta,
        "thought_summary": _thought_delta,
    }

    handlers: ClassVar[dict[str, Handler]] = {
        "interaction.created": _on_created,
        "interaction.start": _on_created,
        "interaction.status_update": _on_status_update,
        "step.start": _on_step_start,
        _STEP_DELTA: _on_delta,
        "step.stop": _on_stop,
        "content.start": _on_content_start,
        "content.delta": _on_delta,
        "content.stop": _on_stop,
        "interaction.completed": _on_completed,
        "interaction.complete": _on_completed,
        "error": _on_error,
    }

    # -- helpers ----------------------------------------------------------------------------

    def _key(self, frame: Frame, payload: dict[str, Any], word: str) -> str | None:
        index = payload.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            self.anomaly(frame, Code.BAD_INDEX,
                         f"{short(payload.get('event_type'))} without an integer index "
                         f"({short(index)})")
            return None
        return self._index_key(word, index)

    def _index_key(self, word: str, index: int) -> str:
        """The key of this interaction's step (or content) ``index``; a step's is remembered
        (:attr:`_step_keys`), on either path, so both leave the reader as the other does."""
        key = f"hop{self._hops}/{word}:{index}" if self._hops > 1 else f"{word}:{index}"
        if word == "step" and index not in self._step_keys:
            if len(self._step_keys) >= MAX_STEP_KEYS:  # (a hostile stream's many indexes)
                self._step_keys.clear()
            self._step_keys[index] = key
        return key

    def _step(self, key: str, kind: str) -> Block:
        """The open step for a key; a delta for a step never started registers one, so its
        stop closes what the accumulator holds (which reports the unknown key itself)."""
        step = self._steps.get(key)
        if step is None:
            step = self._steps[key] = Block(key, None, kind)
        return step

    def _object_arguments(self, frame: Frame, key: str, delta: dict[str, Any], kind: str) -> None:
        arguments = delta.get("arguments")
        if not isinstance(arguments, dict):
            self.anomaly(frame, Code.BAD_ARGUMENTS,
                         f"{short(delta.get('type'))} delta without an arguments object "
                         f"({short(arguments)})", key=key)
            return
        self._step(key, kind).set_ = True
        self.set_serialized(frame, key, arguments)

    def without_deltas(self, frame: Frame, block: Block) -> None:
        if isinstance(block.start, dict):
            # No delta at all: the start object is the whole argument set.
            self.set_serialized(frame, block.key, block.start)
        else:
            self.anomaly(frame, Code.NO_ARGUMENTS,
                         f"{block.key} closed without any arguments on the wire", key=block.key)

    def _close_open(self, frame: Frame, why: str) -> None:
        self.cut_open(frame, ((step, f"{step.key} ({short(step.type or 'unknown type')}) never "
                                     f"stopped; {why}") for step in list(self._steps.values())))
        self._steps.clear()

    def _usage(self, frame: Frame, usage: Any) -> None:
        if isinstance(usage, dict):
            self.emit(UsageReported(frame.index, dict(usage)))
        elif usage is not None:
            self.anomaly(frame, Code.BAD_USAGE, f"usage is not an object ({short(usage)})")

