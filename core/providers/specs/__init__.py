"""The registered protocols: one spec module each, none of which imports its reader.

Registering a protocol is one line in :data:`REGISTERED` and its place in
:data:`DETECTION_ORDER` (see docs/adding-a-protocol.md).
"""

from __future__ import annotations

from ..spec import ProtocolSpec
from . import (
    anthropic,
    bedrock_converse,
    bedrock_invoke,
    gemini_generate,
    gemini_interactions,
    ollama_chat,
    openai_chat,
    openai_responses,
)

REGISTERED: tuple[ProtocolSpec, ...] = (
    openai_responses.SPEC,
    openai_chat.SPEC,
    anthropic.SPEC,
    gemini_interactions.SPEC,
    gemini_generate.SPEC,
    bedrock_converse.SPEC,
    bedrock_invoke.SPEC,
    ollama_chat.SPEC,
)
"""In the order protocols are listed (``--protocol``, error messages, the emulator's routes)."""

DETECTION_ORDER: tuple[str, ...] = (
    "gemini-interactions",  # event_type is its own; a payload of it may hold anything else
    "openai-responses",
    "anthropic",
    "openai-chat",  # choices: before generate's looser top-level keys
    "gemini-generate",
    "bedrock-converse",  # event-stream messages: headers no SSE frame has
    "bedrock-invoke",
    "ollama-chat",  # a top-level boolean done: after every protocol that could carry one
)
"""The order detection asks the specs in: the first that recognises a frame names it."""
