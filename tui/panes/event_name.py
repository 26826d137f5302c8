"""The event a frame list row names, where the frame's own event says little: a Bedrock
InvokeModel ``chunk`` carries a provider event as base64 ``bytes`` in its payload, and every
frame of such a stream is a ``chunk``; the row names the event inside (``chunk.content_block_delta``,
abbreviated as a namespace: ``c.content_block_delta``). Read from the frame's data for the row
only: the engine's records are left as they are."""

from __future__ import annotations

import base64
from functools import lru_cache

import orjson

INVOKE = "bedrock-invoke"


@lru_cache(maxsize=4096)
def invoke_event(data: str) -> str | None:
    """The ``type`` of the event a chunk's payload (``{"bytes": base64 JSON}``) carries, or None
    when it carries none that can be read."""
    try:
        payload = orjson.loads(data)
        encoded = payload.get("bytes") if isinstance(payload, dict) else None
        inner = orjson.loads(base64.b64decode(encoded, validate=True)) if isinstance(
            encoded, str) else None
    except ValueError:  # (not JSON, not base64: binascii.Error is a ValueError)
        return None
    kind = inner.get("type") if isinstance(inner, dict) else None
    return kind if isinstance(kind, str) and kind else None


def inner_name(event: str, data: str, protocol: str | None) -> str:
    """``event``, or for an InvokeModel chunk ``chunk.`` and the event it carries."""
    if protocol == INVOKE and event == "chunk":
        inner = invoke_event(data)
        if inner is not None:
            return f"chunk.{inner}"
    return event
