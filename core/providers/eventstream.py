"""What the readers over the AWS event stream share (Bedrock's ConverseStream and
InvokeModelWithResponseStream): a frame the framing found faulty is reported, never read; an
``error`` message (its code and text in headers, no JSON payload) is a provider error; the
message type and the exception an ``exception`` message carries are read from its headers.

A reader derives from :class:`EventStreamFrames` before its protocol base, so these checks run
before the protocol's own :meth:`~.base.ProtocolReader.read`.
"""

from __future__ import annotations

from typing import Any

from ..aws_eventstream import header
from ..events import CallEvent, ProviderError
from ..frame import Frame
from ..gate.codes import Code
from .base import ProtocolReader, short


def message_type(frame: Frame) -> str | None:
    """The ``:message-type`` header: ``event``, ``exception`` or ``error``."""
    return header(frame.headers, ":message-type")


def exception_text(payload: Any) -> str:
    """An exception message's text: botocore reads ``Message``, else ``message``."""
    if isinstance(payload, dict):
        text = payload.get("Message", payload.get("message"))
        if isinstance(text, str) and text:
            return text
    return short(payload)


class EventStreamFrames(ProtocolReader):
    """The event-stream checks that come before a protocol's own reading."""

    def read(self, frame: Frame) -> list[CallEvent]:
        if frame.fault is None and message_type(frame) != "error":
            return super().read(frame)
        out: list[CallEvent] = []
        self._out = out
        if frame.fault is not None:
            code, detail = frame.fault
            self.anomaly(frame, Code(code), detail)  # type: ignore[call-arg]  # by value
        else:  # botocore reads an error message from its headers (parsers.py, _do_error_parse)
            self.emit(ProviderError(frame.index,
                                    header(frame.headers, ":error-message") or "error message",
                                    header(frame.headers, ":error-code")))
        return out
