"""The OpenAI Chat Completions protocol (PROTOCOLS.md §2), gateways included: its spec; the
reader is :mod:`..openai_chat`."""

from __future__ import annotations

from typing import Any

from ...frame import Frame
from ..spec import CUT, FAILED, OK, ProtocolSpec, StopVerdict
from .openai_responses import error_body


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


SPEC = ProtocolSpec(
    name="openai-chat",
    reader="openai_chat:OpenAIChatReader",
    recognise=recognise,
    stop_reasons=STOP_REASONS,
    cut_reasons=frozenset({"length"}),
    empty_arguments_mean_empty_object=False,
    route=r"/v1/chat/completions\Z",
    error_body=error_body,
)
