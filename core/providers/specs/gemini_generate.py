"""The Gemini ``streamGenerateContent`` protocol (PROTOCOLS.md §5): its spec; the reader is
:mod:`..gemini_generate`."""

from __future__ import annotations

from typing import Any

from ...frame import Frame
from ..budget import TokenBudget, proto3
from ..http_errors import RETRY_AFTER_SECONDS, ErrorShape, shape_for
from ..spec import CUT, FAILED, OK, LiveShape, ProtocolSpec, StopVerdict, Synthetic

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


ERRORS = {
    # ai.google.dev/gemini-api/docs/troubleshooting: the status name per HTTP status.
    400: ErrorShape("INVALID_ARGUMENT", "Request contains an invalid argument. "
                    "(callscope emulated)"),
    401: ErrorShape("UNAUTHENTICATED", "API key not valid. Please pass a valid API key. "
                    "(callscope emulated)"),
    403: ErrorShape("PERMISSION_DENIED", "The caller does not have permission. "
                    "(callscope emulated)"),
    404: ErrorShape("NOT_FOUND", "Requested entity was not found. (callscope emulated)"),
    429: ErrorShape("RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota). "
                    "(callscope emulated)"),
    500: ErrorShape("INTERNAL", "An internal error has occurred. (callscope emulated)"),
    503: ErrorShape("UNAVAILABLE", "The model is overloaded. Please try again later. "
                    "(callscope emulated)"),
    504: ErrorShape("DEADLINE_EXCEEDED", "Deadline expired before operation could complete. "
                    "(callscope emulated)"),
}


def error_body(status: int) -> dict[str, Any]:
    """Google's error object (generateContent and Interactions alike); a 429 says when to
    retry as Google does, in a ``RetryInfo`` detail."""
    shape = shape_for(ERRORS, status)
    error: dict[str, Any] = {"code": status, "message": shape.message, "status": shape.kind}
    if status == 429:
        error["details"] = [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                             "retryDelay": f"{RETRY_AFTER_SECONDS}s"}]
    return {"error": error}


GEMINI_KEYS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
GEMINI_BASE_ENV = "GOOGLE_GEMINI_BASE_URL"
GEMINI_BASE = "https://generativelanguage.googleapis.com"


def google_auth(key: str) -> dict[str, str]:
    return {"x-goog-api-key": key}


def body(model: str, prompt: str, max_tokens: int) -> dict[str, Any]:
    return {"contents": [{"role": "user", "parts": [{"text": prompt}]}]}


def system_instruction(body: dict[str, Any], text: str) -> None:
    body["systemInstruction"] = {"parts": [{"text": text}]}


def tool_config(choice: str) -> tuple[str, Any]:
    """``functionCallingConfig.mode`` AUTO, NONE or ANY; a name is ANY limited to it."""
    modes = {"auto": "AUTO", "none": "NONE", "required": "ANY"}
    if choice in modes:
        return "toolConfig", {"functionCallingConfig": {"mode": modes[choice]}}
    return "toolConfig", {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [choice]}}


def tool(plain: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    return {**plain, "parameters": schema}


SPEC = ProtocolSpec(
    name="gemini-generate",
    reader="gemini_generate:GeminiGenerateReader",
    recognise=recognise,
    stop_reasons=STOP_REASONS,
    cut_reasons=frozenset({"MAX_TOKENS", "CONTINUATION"}),
    empty_arguments_mean_empty_object=True,
    route=r"/v1(?:beta)?/models/[^/:]+:streamGenerateContent\Z",
    error_body=error_body,
    live=LiveShape(GEMINI_KEYS, GEMINI_BASE_ENV, GEMINI_BASE,
                   "/v1beta/models/{model}:streamGenerateContent?alt=sse", google_auth, body, tool,
                   tool_group="functionDeclarations", system=system_instruction,
                   tool_choice=tool_config),
    # Google frames end in CRLF CRLF (PROTOCOLS.md §0).
    synthetic=Synthetic("synth_wire:encode_generate", b"\r\n", "gemini-2.5-flash", ""),
    stream_query=("alt", "sse"),
    # Thoughts count against maxOutputTokens beside the candidates' tokens
    # (googleapis/python-genai#2062); candidatesTokenCount sums every candidate, and the
    # limit binds each. proto3 JSON accepts either spelling of each name.
    token_budget=TokenBudget(limits=proto3("generationConfig", "maxOutputTokens"),
                             spent=(("candidatesTokenCount",), ("thoughtsTokenCount",)),
                             choices=proto3("generationConfig", "candidateCount")),
)
