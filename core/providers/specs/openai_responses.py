"""The OpenAI Responses protocol (PROTOCOLS.md §1): its spec; the reader is
:mod:`..openai_responses`."""

from __future__ import annotations

from typing import Any

from ...frame import Frame
from ..spec import ProtocolSpec, StopVerdict, payload_type


def recognise(frame: Frame, payload: dict[str, Any] | None) -> bool:
    """Every event type starts with ``response.``, in the ``event:`` field or the payload."""
    if payload is None:
        return (frame.event or "").startswith("response.")
    kind = payload_type(payload)
    return kind is not None and kind.startswith("response.")


def stop_reasons() -> dict[str, StopVerdict]:
    """``response.completed`` succeeds and ``response.failed`` fails; every
    ``response.incomplete`` is cut, and its ``incomplete_details.reason`` says whether it also
    failed."""
    from ..responses_events import INCOMPLETE_FAILED

    return {"completed": StopVerdict(False, False), "failed": StopVerdict(False, True),
            **{reason: StopVerdict(True, failed) for reason, failed in INCOMPLETE_FAILED.items()}}


def error_body(status: int) -> dict[str, Any]:
    """OpenAI's error object (Responses and Chat Completions alike)."""
    return {"error": {"message": f"callscope emulated HTTP {status}", "type": "server_error",
                      "param": None, "code": None}}


SPEC = ProtocolSpec(
    name="openai-responses",
    reader="openai_responses:OpenAIResponsesReader",
    recognise=recognise,
    stop_reasons=stop_reasons,
    cut_reasons=frozenset({"max_output_tokens", "max_tokens"}),
    empty_arguments_mean_empty_object=False,
    route=r"/v1/responses\Z",
    error_body=error_body,
)
