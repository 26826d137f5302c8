"""Amazon Bedrock ConverseStream (``POST /model/{modelId}/converse-stream``): its spec; the
reader is :mod:`..bedrock_converse`. The wire is the AWS binary event stream
(:mod:`core.aws_eventstream`), one JSON event per message, named by its ``:event-type`` header;
the shapes are botocore's service model (``botocore/data/bedrock-runtime/2023-09-30``).
"""

from __future__ import annotations

from typing import Any

from ...frame import Frame
from ..budget import TokenBudget
from ..spec import CUT, FAILED, OK, LiveShape, ProtocolSpec, StopVerdict, Synthetic, bearer

EVENT_TYPES = frozenset({
    "messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop",
    "metadata",
})
"""ConverseStreamOutput's event members (the exception members come as ``exception`` messages)."""


def recognise(frame: Frame, payload: dict[str, Any] | None) -> bool:
    """An event-stream message (it has headers; SSE frames have none) of a Converse event."""
    return bool(frame.headers) and frame.event in EVENT_TYPES


STOP_REASONS: dict[str, StopVerdict] = {
    # StopReason in the service model (service-2.json).
    "end_turn": OK,
    "tool_use": OK,
    "stop_sequence": OK,
    "max_tokens": CUT,
    "model_context_window_exceeded": CUT,
    "guardrail_intervened": FAILED,
    "content_filtered": FAILED,
    "malformed_model_output": FAILED,
    "malformed_tool_use": FAILED,
}

EXCEPTIONS = {400: "ValidationException", 403: "AccessDeniedException",
              404: "ResourceNotFoundException", 408: "ModelTimeoutException",
              424: "ModelErrorException", 429: "ThrottlingException",
              500: "InternalServerException", 503: "ServiceUnavailableException"}
"""HTTP status -> the operation's error shape with that status (service-2.json)."""


def error_body(status: int) -> dict[str, Any]:
    """AWS's rest-json error: botocore takes the code from ``__type`` (no header needed)."""
    return {"__type": EXCEPTIONS.get(status, "InternalServerException"),
            "message": f"callscope emulated HTTP {status}"}


def body(model: str, prompt: str, max_tokens: int) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": [{"text": prompt}]}],
            "inferenceConfig": {"maxTokens": max_tokens}}


def tool(plain: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    return {"toolSpec": {**plain, "inputSchema": {"json": schema}}}


SPEC = ProtocolSpec(
    name="bedrock-converse",
    reader="bedrock_converse:BedrockConverseReader",
    recognise=recognise,
    stop_reasons=STOP_REASONS,
    cut_reasons=frozenset({"max_tokens", "model_context_window_exceeded"}),
    # Claude on Bedrock relays Anthropic's one empty input fragment for a tool without
    # parameters, and the SDK-side assemblers (strands, langchain-aws) read "" as {}.
    empty_arguments_mean_empty_object=True,
    route=r"/model/[^/]+/converse-stream\Z",
    error_body=error_body,
    # Bedrock API keys are bearer tokens (the service model's smithy.api#httpBearerAuth; boto3
    # reads AWS_BEARER_TOKEN_BEDROCK); SigV4 signing is the SDK's, not this client's.
    live=LiveShape(("AWS_BEARER_TOKEN_BEDROCK",), "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
                   "https://bedrock-runtime.us-east-1.amazonaws.com",
                   "/model/{model}/converse-stream", bearer, body, tool),
    synthetic=Synthetic("synth_framed:encode_converse", b"",
                        "anthropic.claude-3-5-sonnet-20240620-v1:0", ""),
    framing="aws-eventstream",
    stream_default=True,
    content_type="application/vnd.amazon.eventstream",
    token_budget=TokenBudget(limits=(("inferenceConfig", "maxTokens"),),
                             spent=(("outputTokens",),), after_terminal=True),
)
