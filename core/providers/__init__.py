"""Protocol readers, one module per provider, all behind :class:`ProtocolReader`."""

from __future__ import annotations

from importlib import import_module

from ..errors import CallscopeError
from .base import ProtocolReader

# name -> (module, class); imported lazily so one reader's import cost is not everyone's.
_READERS = {
    "openai-responses": ("openai_responses", "OpenAIResponsesReader"),
    "openai-chat": ("openai_chat", "OpenAIChatReader"),
    "anthropic": ("anthropic", "AnthropicReader"),
    "gemini-interactions": ("gemini_interactions", "GeminiInteractionsReader"),
    "gemini-generate": ("gemini_generate", "GeminiGenerateReader"),
}

PROTOCOLS = (*_READERS, "unknown")


class UnknownProtocol(CallscopeError):
    pass


def reader_for(protocol: str) -> ProtocolReader | None:
    """A fresh reader for a protocol name; None for ``unknown`` (frames only)."""
    if protocol == "unknown":
        return None
    try:
        module, cls = _READERS[protocol]
    except KeyError:
        raise UnknownProtocol(
            f"unknown protocol {protocol!r} (one of: {', '.join(PROTOCOLS)})") from None
    reader: ProtocolReader = getattr(import_module(f".{module}", __name__), cls)()
    return reader
