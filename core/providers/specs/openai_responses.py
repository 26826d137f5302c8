"""The OpenAI Responses protocol (PROTOCOLS.md §1): its spec; the reader is
:mod:`..openai_responses`."""

from __future__ import annotations

from typing import Any

from ...frame import Frame
from ..budget import TokenBudget
from ..http_errors import ErrorShape, request_id, retry_headers, shape_for
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


def instructions(body: dict[str, Any], text: str) -> None:
    body["instructions"] = text


def tool_choice(choice: str) -> tuple[str, Any]:
    """``auto``/``none``/``required``, or ``{"type": "function", "name"}`` (flat, unlike Chat)."""
    if choice in ("auto", "none", "required"):
        return "tool_choice", choice
    return "tool_choice", {"type": "function", "name": choice}


ERRORS = {
    # OpenAI's error codes page (platform.openai.com/docs/guides/error-codes), in its words.
    400: ErrorShape("invalid_request_error", "callscope emulated HTTP 400: invalid request."),
    401: ErrorShape("invalid_request_error", "Incorrect API key provided. (callscope emulated)",
                    "invalid_api_key"),
    403: ErrorShape("invalid_request_error", "Country, region, or territory not supported. "
                    "(callscope emulated)", "unsupported_country_region_territory"),
    404: ErrorShape("invalid_request_error", "The model does not exist or you do not have access "
                    "to it. (callscope emulated)", "model_not_found"),
    429: ErrorShape("requests", "Rate limit reached for requests. Please try again in 1s. "
                    "(callscope emulated)", "rate_limit_exceeded"),
    500: ErrorShape("server_error", "The server had an error while processing your request. "
                    "Sorry about that! (callscope emulated)"),
    503: ErrorShape("server_error", "The engine is currently overloaded, please try again "
                    "later. (callscope emulated)"),
}


def error_body(status: int) -> dict[str, Any]:
    """OpenAI's error object (Responses and Chat Completions alike)."""
    shape = shape_for(ERRORS, status)
    return {"error": {"message": shape.message, "type": shape.kind, "param": None,
                      "code": shape.code}}


def error_headers(status: int, body: dict[str, Any]) -> list[tuple[str, str]]:
    return [("x-request-id", request_id("req_")), *retry_headers(status)]


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
    error_headers=error_headers,
    live=LiveShape(OPENAI_KEYS, "OPENAI_BASE_URL", OPENAI_BASE, "/responses", bearer, input_body,
                   function_tool, system=instructions, tool_choice=tool_choice),
    synthetic=Synthetic("synth_wire:encode_responses", b"\n", "gpt-5-2025-08-07", "{}"),
    # Reasoning tokens count in output_tokens and against max_output_tokens.
    # The response object echoes the request's settings, max_output_tokens among them.
    token_budget=TokenBudget(limits=(("max_output_tokens",),), spent=(("output_tokens",),),
                             echoed=(("max_output_tokens",),)),
)
