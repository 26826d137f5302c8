"""The Gemini ``streamGenerateContent`` protocol (PROTOCOLS.md §5): its spec; the reader is
:mod:`..gemini_generate`."""

from __future__ import annotations

from typing import Any

from ...frame import Frame
from ..spec import CUT, FAILED, OK, ProtocolSpec, StopVerdict

KEYS = ("candidates", "promptFeedback", "usageMetadata", "modelVersion")
"""Top-level fields of a GenerateContentResponse; any one of them tells."""


def recognise(frame: Frame, payload: dict[str, Any] | None) -> bool:
    return payload is not None and any(key in payload for key in KEYS)


STOP_REASONS: dict[str, StopVerdict] = {
    # finishReason. STOP also ends tool-call turns (there is no TOOL_CALLS); CONTINUATION asks
    # the client to continue with a token, so the output was cut, not refused.
    "STOP": OK,
    "MAX_TOKENS": CUT,
    "CONTINUATION": CUT,
    **dict.fromkeys((
        "FINISH_REASON_UNSPECIFIED", "SAFETY", "RECITATION", "LANGUAGE", "OTHER", "BLOCKLIST",
        "PROHIBITED_CONTENT", "SPII", "MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL",
        "TOO_MANY_TOOL_CALLS", "MISSING_THOUGHT_SIGNATURE", "MALFORMED_RESPONSE", "MODEL_ARMOR",
        "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "IMAGE_OTHER",
        "NO_IMAGE"), FAILED),
}


def error_body(status: int) -> dict[str, Any]:
    """Google's error object (generateContent and Interactions alike)."""
    return {"error": {"code": status, "message": f"callscope emulated HTTP {status}",
                      "status": "UNAVAILABLE"}}


SPEC = ProtocolSpec(
    name="gemini-generate",
    reader="gemini_generate:GeminiGenerateReader",
    recognise=recognise,
    stop_reasons=STOP_REASONS,
    cut_reasons=frozenset({"MAX_TOKENS", "CONTINUATION"}),
    empty_arguments_mean_empty_object=True,
    route=r"/v1(?:beta)?/models/[^/:]+:streamGenerateContent\Z",
    error_body=error_body,
)
