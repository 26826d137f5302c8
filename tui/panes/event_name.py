"""The event a frame list row names, where the frame's own event says little: a Bedrock
InvokeModel ``chunk`` carries a provider event as base64 ``bytes`` in its payload, and every
frame of such a stream is a ``chunk``; the row names the event inside (``chunk.content_block_delta``,
abbreviated as a namespace: ``c.content_block_delta``). The event is the reader's own unwrap
(:func:`...core.providers.bedrock_invoke.carried_event`, as the display filter's ``event``
reads it), for the row only: the engine's records are left as they are."""

from __future__ import annotations

from ...core.frame import Frame
from ...core.providers.bedrock_invoke import carried_event

INVOKE = "bedrock-invoke"


def inner_name(frame: Frame, protocol: str | None) -> str:
    """The frame's event type, or for an InvokeModel chunk ``chunk.`` and the event it carries."""
    if protocol == INVOKE and frame.event == "chunk":
        inner = carried_event(frame)
        if inner:
            return f"chunk.{inner}"
    return frame.event_type
