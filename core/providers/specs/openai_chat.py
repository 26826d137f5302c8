"""The OpenAI Chat Completions protocol (PROTOCOLS.md §2), gateways included: its spec; the
reader is :mod:`..openai_chat`."""

from __future__ import annotations

from typing import Any

from ...frame import Frame
from ..budget import TokenBudget
from ..spec import CUT, FAILED, OK, LiveShape, ProtocolSpec, StopVerdict, Synthetic, bearer
from .openai_responses import OPENAI_BASE, OPENAI_KEYS, error_body, error_headers


def recognise(frame: Frame, payload: dict[str, Any] | None) -> bool:
    """A chunk object, or anything with ``choices`` (gateways leave ``object`` out)."""
    return payload is not None and (payload.get("object") == "chat.completion.chunk"
                                    or "choices" in payload)


STOP_REASONS: dict[str, StopVerdict] = {
    # finish_reason. `length` may leave tool arguments as partial JSON; `content_filter` is a
    # refusal of the turn.
    "stop": OK,
    "tool_calls": OK,
    "function_call": OK,
    "length": CUT,
    "content_filter": FAILED,
    "error": FAILED,  # OpenRouter: a mid-stream error chunk that also carries `error`
}


def system(body: dict[str, Any], text: str) -> None:
    body["messages"].insert(0, {"role": "system", "content": text})


def tool_choice(choice: str) -> tuple[str, Any]:
    """``auto``/``none``/``required``, or ``{"type": "function", "function": {"name"}}``."""
    if choice in ("auto", "none", "required"):
        return "tool_choice", choice
    return "tool_choice", {"type": "function", "function": {"name": choice}}


def body(model: str, prompt: str, max_tokens: int) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": prompt}], "stream": True,
            "stream_options": {"include_usage": True}}


def tool(plain: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {**plain, "parameters": schema}}


SPEC = ProtocolSpec(
    name="openai-chat",
    reader="openai_chat:OpenAIChatReader",
    recognise=recognise,
    stop_reasons=STOP_REASONS,
    cut_reasons=frozenset({"length"}),
    empty_arguments_mean_empty_object=False,
    route=r"/v1/chat/completions\Z",
    error_body=error_body,
    error_headers=error_headers,
    live=LiveShape(OPENAI_KEYS, "OPENAI_BASE_URL", OPENAI_BASE, "/chat/completions", bearer, body,
                   tool, system=system, tool_choice=tool_choice),
    synthetic=Synthetic("synth_wire:encode_chat", b"\n", "gpt-4o-2024-08-06", "{}"),
    # Reasoning tokens count in completion_tokens and against either limit; with n choices,
    # completion_tokens counts them all and the limit binds each.
    token_budget=TokenBudget(limits=(("max_completion_tokens",), ("max_tokens",)),
                             spent=(("completion_tokens",),), choices=(("n",),)),
)
