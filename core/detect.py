"""Protocol detection from the stream itself (PROTOCOLS.md §7.2).

Looks at one dispatched frame at a time and answers a protocol name, or None when the frame
does not tell (a ping, ``[DONE]``, an error both Responses and Anthropic could send). The engine
keeps asking until a frame tells; a stream where none does is ``unknown`` and replays as frames.
"""

from __future__ import annotations

from typing import Any

import orjson

from .frame import Frame

_ANTHROPIC_TYPES = frozenset({
    "message_start", "message_delta", "message_stop", "content_block_start",
    "content_block_delta", "content_block_stop",
})
_GENERATE_KEYS = ("candidates", "promptFeedback", "usageMetadata", "modelVersion")


def detect(frame: Frame) -> str | None:
    if not frame.dispatch:
        return None
    event = frame.event or ""
    if event.startswith("response."):
        return "openai-responses"
    if event in _ANTHROPIC_TYPES:
        return "anthropic"
    try:
        payload: Any = orjson.loads(frame.data)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(payload, dict):
        return None
    kind = payload.get("type")
    if not isinstance(kind, str):  # untrusted: a list or object here must not break lookups
        kind = None
    if "event_type" in payload:
        return "gemini-interactions"
    if isinstance(kind, str) and kind.startswith("response."):
        return "openai-responses"
    if kind in _ANTHROPIC_TYPES:
        return "anthropic"
    if payload.get("object") == "chat.completion.chunk" or "choices" in payload:
        return "openai-chat"
    if any(key in payload for key in _GENERATE_KEYS):
        return "gemini-generate"
    return None
