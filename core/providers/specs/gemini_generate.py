"""The Gemini ``streamGenerateContent`` protocol (PROTOCOLS.md §5): its spec; the reader is
:mod:`..gemini_generate`."""

from __future__ import annotations

from typing import Any

from ...frame import Frame
from ..spec import ProtocolSpec, StopVerdict, pairs

KEYS = ("candidates", "promptFeedback", "usageMetadata", "modelVersion")
"""Top-level fields of a GenerateContentResponse; any one of them tells."""


def recognise(frame: Frame, payload: dict[str, Any] | None) -> bool:
    return payload is not None and any(key in payload for key in KEYS)


def stop_reasons() -> dict[str, StopVerdict]:
    from ..gemini_generate import _FINISH

    return pairs(_FINISH)


def error_body(status: int) -> dict[str, Any]:
    """Google's error object (generateContent and Interactions alike)."""
    return {"error": {"code": status, "message": f"callscope emulated HTTP {status}",
                      "status": "UNAVAILABLE"}}


SPEC = ProtocolSpec(
    name="gemini-generate",
    reader="gemini_generate:GeminiGenerateReader",
    recognise=recognise,
    stop_reasons=stop_reasons,
    cut_reasons=frozenset({"MAX_TOKENS", "CONTINUATION"}),
    empty_arguments_mean_empty_object=True,
    route=r"/v1(?:beta)?/models/[^/:]+:streamGenerateContent\Z",
    error_body=error_body,
)
