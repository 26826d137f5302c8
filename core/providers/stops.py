"""One stop reason, classified by the protocol's table, for readers whose stop reason is one
field of one event (Bedrock's ``stopReason``, Ollama's ``done_reason``, Anthropic's
``stop_reason``): a documented reason as the spec says, an undocumented one reported and
failed, a missing or non-string one failed."""

from __future__ import annotations

from typing import Any

from ..events import StopReported
from ..frame import Frame
from ..gate.codes import Code
from .base import ProtocolReader, short
from .spec import UNKNOWN_STOP, ProtocolSpec


def report_stop(reader: ProtocolReader, spec: ProtocolSpec, frame: Frame, field: str,
                reason: Any) -> None:
    """Emit the :class:`StopReported` ``reason`` (the value of ``field``) makes."""
    if isinstance(reason, str):
        verdict = spec.classify(reason)
        if verdict is None:  # not known to be a success: a failure, as for the others
            reader.anomaly(frame, Code.UNKNOWN_STOP_REASON,
                           f"unknown {field} {short(reason)}; treated as failed")
            verdict = UNKNOWN_STOP
        reader.emit(StopReported(frame.index, reason, verdict.cut, verdict.failed))
    elif reason is None:
        reader.anomaly(frame, Code.MISSING_STOP_REASON, f"no {field}; treated as failed")
        reader.emit(StopReported(frame.index, "none", cut=False, failed=True))
    else:
        reader.anomaly(frame, Code.BAD_STOP_REASON,
                       f"{field} is not a string ({short(reason)}); treated as failed")
        reader.emit(StopReported(frame.index, short(reason), cut=False, failed=True))
