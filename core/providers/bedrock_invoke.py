"""Amazon Bedrock InvokeModelWithResponseStream carrying Anthropic Messages events.

Each event-stream message is a ResponseStream ``chunk`` whose JSON payload holds ``bytes``: the
base64 of one Anthropic event. The reader unwraps it as the anthropic SDK's Bedrock client does
(``anthropic/lib/bedrock/_stream_decoder.py``): the event inside becomes a frame named by its
own ``type``, and an ``exception`` message becomes an Anthropic ``error`` event; then the
Anthropic reader reads it, unchanged (its grammar, its codes, its decisions). The inner frame
keeps the message's index and offsets, so every anomaly points at the bytes on the wire.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, ClassVar

import orjson

from ..events import CallEvent
from ..frame import Frame
from ..gate.codes import Code
from .anthropic import AnthropicReader
from .base import short
from .eventstream import EventStreamFrames, exception_text, message_type
from .specs.bedrock_invoke import SPEC


class BedrockInvokeReader(EventStreamFrames, AnthropicReader):
    name: ClassVar[str] = SPEC.name
    empty_arguments_mean_empty_object: ClassVar[bool] = SPEC.empty_arguments_mean_empty_object

    def read(self, frame: Frame) -> list[CallEvent]:
        if frame.fault is not None or message_type(frame) == "error":
            return super().read(frame)  # reported by EventStreamFrames
        if message_type(frame) == "exception":
            try:
                payload: Any = orjson.loads(frame.data)
            except orjson.JSONDecodeError:
                payload = frame.data
            error = {"type": "error", "error": {"type": frame.event or "exception",
                                                "message": exception_text(payload)}}
            return super().read(frame._replace(event="error", data=orjson.dumps(error).decode()))
        inner = self._unwrap(frame)
        if isinstance(inner, str):
            out: list[CallEvent] = []
            self._out = out
            self.anomaly(frame, Code.NOT_JSON, inner)
            return out
        return super().read(inner)

    @staticmethod
    def _unwrap(frame: Frame) -> Frame | str:
        """The Anthropic event a ``chunk`` carries, as a frame; or why it cannot be read."""
        if frame.event != "chunk":
            return f"event {short(frame.event)} is not a ResponseStream chunk"
        try:
            payload = orjson.loads(frame.data)
        except orjson.JSONDecodeError as exc:
            return f"the chunk's payload is not JSON ({exc})"
        encoded = payload.get("bytes") if isinstance(payload, dict) else None
        if not isinstance(encoded, str):
            return f"the chunk has no base64 bytes ({short(payload)})"
        try:
            text = base64.b64decode(encoded, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError) as exc:
            return f"the chunk's bytes are not base64 of UTF-8 ({exc})"
        try:
            event = orjson.loads(text)
        except orjson.JSONDecodeError:
            event = None
        kind = event.get("type") if isinstance(event, dict) else None
        # The SDK names the event by its type; one without a type it skips, which the
        # Anthropic reader reports as a frame without an event name.
        return frame._replace(event=kind if isinstance(kind, str) else None, data=text)


def carried_event(frame: Frame) -> str | None:
    """The type of the Anthropic event an InvokeModel ``chunk`` carries (None: not a chunk, or
    none can be read): what the frame list names and the display filter's ``event`` matches."""
    inner = BedrockInvokeReader._unwrap(frame)
    return inner.event if isinstance(inner, Frame) else None
