"""The Anthropic Messages protocol (PROTOCOLS.md §3): its spec; the reader is
:mod:`..anthropic`."""

from __future__ import annotations

from typing import Any

from ...frame import Frame
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


def error_body(status: int) -> dict[str, Any]:
    return {"type": "error", "error": {"type": "api_error",
                                       "message": f"callscope emulated HTTP {status}"}}


def auth(key: str) -> dict[str, str]:
    return {"x-api-key": key, "anthropic-version": "2023-06-01"}


def body(model: str, prompt: str, max_tokens: int) -> dict[str, Any]:
    return {"model": model, "max_tokens": max_tokens, "stream": True,
            "messages": [{"role": "user", "content": prompt}]}


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
    live=LiveShape(("ANTHROPIC_API_KEY",), "ANTHROPIC_BASE_URL", "https://api.anthropic.com",
                   "/v1/messages", auth, body, tool),
    synthetic=Synthetic("synth_wire:encode_anthropic", b"\n", "claude-sonnet-4-20250514", ""),
)
