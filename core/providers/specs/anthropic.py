"""The Anthropic Messages protocol (PROTOCOLS.md §3): its spec; the reader is
:mod:`..anthropic`."""

from __future__ import annotations

from typing import Any

from ...frame import Frame
from ..budget import TokenBudget
from ..http_errors import ErrorShape, request_id, retry_headers, retryable, shape_for
from ..spec import CUT, FAILED, OK, LiveShape, ProtocolSpec, StopVerdict, Synthetic, payload_type

EVENT_TYPES = frozenset({
    "message_start", "message_delta", "message_stop", "content_block_start",
    "content_block_delta", "content_block_stop",
})
"""The event types only Anthropic sends (``ping`` and ``error`` do not tell)."""


def recognise(frame: Frame, payload: dict[str, Any] | None) -> bool:
    if payload is None:
        return frame.event in EVENT_TYPES
    return payload_type(payload) in EVENT_TYPES


STOP_REASONS: dict[str, StopVerdict] = {
    # stop_reason; anthropic/types/stop_reason.py
    "end_turn": OK,
    "tool_use": OK,
    "stop_sequence": OK,
    "pause_turn": OK,
    "max_tokens": CUT,
    "model_context_window_exceeded": CUT,
    "refusal": FAILED,
}


ERRORS = {
    # docs.claude.com/en/api/errors: one error type per status, in its words.
    400: ErrorShape("invalid_request_error", "callscope emulated HTTP 400: invalid request"),
    401: ErrorShape("authentication_error", "invalid x-api-key (callscope emulated)"),
    403: ErrorShape("permission_error", "Your API key does not have permission to use the "
                    "specified resource. (callscope emulated)"),
    404: ErrorShape("not_found_error", "The requested resource could not be found. "
                    "(callscope emulated)"),
    413: ErrorShape("request_too_large", "Request exceeds the maximum allowed number of bytes. "
                    "(callscope emulated)"),
    429: ErrorShape("rate_limit_error", "Number of requests has exceeded your rate limit. "
                    "(callscope emulated)"),
    500: ErrorShape("api_error", "Internal server error (callscope emulated)"),
    529: ErrorShape("overloaded_error", "Overloaded (callscope emulated)"),
}


def error_body(status: int) -> dict[str, Any]:
    shape = shape_for(ERRORS, status)
    return {"type": "error", "error": {"type": shape.kind, "message": shape.message},
            "request_id": request_id("req_011")}


def error_headers(status: int, body: dict[str, Any]) -> list[tuple[str, str]]:
    """The body's request id as ``request-id``, and Anthropic's own retry verdict."""
    headers = [("x-should-retry", "true" if retryable(status) else "false"),
               *retry_headers(status)]
    if isinstance(body.get("request_id"), str):
        headers.insert(0, ("request-id", body["request_id"]))
    return headers


def auth(key: str) -> dict[str, str]:
    return {"x-api-key": key, "anthropic-version": "2023-06-01"}


def body(model: str, prompt: str, max_tokens: int) -> dict[str, Any]:
    return {"model": model, "max_tokens": max_tokens, "stream": True,
            "messages": [{"role": "user", "content": prompt}]}


def system(body: dict[str, Any], text: str) -> None:
    body["system"] = text


def tool_choice(choice: str) -> tuple[str, Any]:
    """``{"type": auto|none|any|tool}``: Anthropic's ``any`` is what others call required."""
    kinds = {"auto": "auto", "none": "none", "required": "any"}
    if choice in kinds:
        return "tool_choice", {"type": kinds[choice]}
    return "tool_choice", {"type": "tool", "name": choice}


def tool(plain: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    return {**plain, "input_schema": schema}


SPEC = ProtocolSpec(
    name="anthropic",
    reader="anthropic:AnthropicReader",
    recognise=recognise,
    stop_reasons=STOP_REASONS,
    cut_reasons=frozenset({"max_tokens", "model_context_window_exceeded"}),
    empty_arguments_mean_empty_object=True,
    route=r"/v1/messages\Z",
    error_body=error_body,
    error_headers=error_headers,
    live=LiveShape(("ANTHROPIC_API_KEY",), "ANTHROPIC_BASE_URL", "https://api.anthropic.com",
                   "/v1/messages", auth, body, tool, system=system, tool_choice=tool_choice),
    synthetic=Synthetic("synth_wire:encode_anthropic", b"\n", "claude-sonnet-4-20250514", ""),
    # Thinking counts in output_tokens and against max_tokens.
    token_budget=TokenBudget(limits=(("max_tokens",),), spent=(("output_tokens",),)),
)
