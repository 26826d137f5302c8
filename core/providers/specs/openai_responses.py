"""The OpenAI Responses protocol (PROTOCOLS.md §1): its spec; the reader is
:mod:`..openai_responses`."""

from __future__ import annotations

from typing import Any

from ...frame import Frame
from ..spec import (
    CUT,
    FAILED,
    OK,
    LiveShape,
    ProtocolSpec,
    StopVerdict,
    Synthetic,
    bearer,
    function_tool,
    input_body,
    payload_type,
)


def recognise(frame: Frame, payload: dict[str, Any] | None) -> bool:
    """Every event type starts with ``response.``, in the ``event:`` field or the payload."""
    if payload is None:
        return (frame.event or "").startswith("response.")
    kind = payload_type(payload)
    return kind is not None and kind.startswith("response.")


STOP_REASONS: dict[str, StopVerdict] = {
    # response.completed succeeds and response.failed fails; every response.incomplete is cut,
    # and its incomplete_details.reason says whether it also failed. The SDK enum says
    # max_output_tokens; the openapi example says max_tokens: accept both (PROTOCOLS.md §1.4).
    "completed": OK,
    "failed": FAILED,
    "max_output_tokens": CUT,
    "max_tokens": CUT,
    "max_messages": CUT,
    "steered": CUT,
    "content_filter": StopVerdict(cut=True, failed=True),
}


def error_body(status: int) -> dict[str, Any]:
    """OpenAI's error object (Responses and Chat Completions alike)."""
    return {"error": {"message": f"callscope emulated HTTP {status}", "type": "server_error",
                      "param": None, "code": None}}


OPENAI_KEYS = ("OPENAI_API_KEY",)
OPENAI_BASE = "https://api.openai.com/v1"

SPEC = ProtocolSpec(
    name="openai-responses",
    reader="openai_responses:OpenAIResponsesReader",
    recognise=recognise,
    stop_reasons=STOP_REASONS,
    cut_reasons=frozenset({"max_output_tokens", "max_tokens"}),
    empty_arguments_mean_empty_object=False,
    route=r"/v1/responses\Z",
    error_body=error_body,
    live=LiveShape(OPENAI_KEYS, "OPENAI_BASE_URL", OPENAI_BASE, "/responses", bearer, input_body,
                   function_tool),
    synthetic=Synthetic("synth_wire:encode_responses", b"\n", "gpt-5-2025-08-07", "{}"),
)
