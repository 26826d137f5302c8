"""Ollama's native chat stream (``POST /api/chat``), NDJSON.

Grammar (the ollama client's ``ChatResponse``): objects with ``"done": false`` carrying
``message`` fragments (``content``, ``thinking``) and, whole, ``tool_calls`` (each a
``function`` with a ``name`` and an ``arguments`` *object*; newer servers add an ``id`` and a
``function.index``), then one object with ``"done": true``, a ``done_reason`` and the token
counts: the terminal signal. A line ``{"error": "..."}`` is an error after the 200 (the client
raises ResponseError there).

Calls come whole, so each is opened, set and closed in its frame, keyed by arrival
(``call:<n>``): Ollama numbers every call's index 0 (QUIRKS.md, ``index_reused``), so neither
the index nor a missing id can key them.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..events import CallOpened, UsageReported
from ..frame import Frame
from ..gate.codes import Code
from .base import Handler, int_or_none, nonempty_text, short
from .blocks import BlockReader
from .specs.ollama_chat import SPEC
from .stops import report_stop

USAGE = ("prompt_eval_count", "eval_count", "total_duration", "load_duration",
         "prompt_eval_duration", "eval_duration")
"""The counts the done object carries (nanoseconds for durations)."""


class OllamaChatReader(BlockReader):
    """A BlockReader for what it shares (text, a whole object as a call's arguments), though
    Ollama's calls have no blocks: each is whole in its frame."""

    name: ClassVar[str] = SPEC.name
    empty_arguments_mean_empty_object: ClassVar[bool] = SPEC.empty_arguments_mean_empty_object

    def __init__(self) -> None:
        super().__init__()
        self._calls = 0

    def event_type(self, frame: Frame, payload: Any) -> Any:
        """There is no event type on the wire: ``done`` and ``error`` tell."""
        if not isinstance(payload, dict):
            return None
        if "error" in payload:
            return "error"
        return "done" if payload.get("done") is True else "chunk"

    def on_unknown(self, frame: Frame, payload: Any, kind: Any) -> None:
        self.anomaly(frame, Code.NOT_AN_OBJECT, f"a line that is not an object ({short(payload)})")

    def _on_chunk(self, frame: Frame, payload: dict[str, Any]) -> None:
        message = payload.get("message")
        if message is None:
            return
        if not isinstance(message, dict):
            self.anomaly(frame, Code.BAD_MESSAGE, f"message is not an object ({short(message)})")
            return
        self.text(frame, "reasoning", message.get("thinking"))
        self.text(frame, "text", message.get("content"))
        calls = message.get("tool_calls")
        if calls is None:
            return
        if not isinstance(calls, list):
            self.anomaly(frame, Code.BAD_TOOL_CALLS, f"tool_calls is not a list ({short(calls)})")
            return
        for call in calls:
            self._call(frame, call)

    def _call(self, frame: Frame, call: Any) -> None:
        key = f"call:{self._calls}"
        self._calls += 1
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            self.anomaly(frame, Code.BAD_TOOL_CALL if not isinstance(call, dict)
                         else Code.BAD_FUNCTION_CALL,
                         f"a tool call without a function object ({short(call)})")
            return
        self.emit(CallOpened(frame.index, key, id=nonempty_text(call.get("id")),
                             name=nonempty_text(function.get("name"))))
        arguments = function.get("arguments")
        if isinstance(arguments, dict):
            self.set_serialized(frame, key, arguments)
        else:  # the client's Function.arguments is a Mapping: anything else fails validation
            self.anomaly(frame, Code.BAD_ARGUMENTS, f"arguments is not an object "
                                                   f"({short(arguments)})", key=key)
        self.close_call(frame, key)

    def _on_done(self, frame: Frame, payload: dict[str, Any]) -> None:
        self._on_chunk(frame, payload)
        usage = {name: payload[name] for name in USAGE if int_or_none(payload.get(name)) is not None}
        if usage:
            self.emit(UsageReported(frame.index, usage))
        report_stop(self, SPEC, frame, "done_reason", payload.get("done_reason"))
        self.end_turn(frame, "done")

    def _on_error(self, frame: Frame, payload: dict[str, Any]) -> None:
        self.error_payload(frame, payload["error"])

    handlers: ClassVar[dict[str, Handler]] = {
        "chunk": _on_chunk,
        "done": _on_done,
        "error": _on_error,
    }
