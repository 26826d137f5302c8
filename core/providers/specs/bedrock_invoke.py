"""Amazon Bedrock InvokeModelWithResponseStream (``POST /model/{modelId}/invoke-with-response-
stream``) carrying Anthropic Messages events: its spec; the reader is :mod:`..bedrock_invoke`,
which unwraps each ``chunk`` message's base64 ``bytes`` and reads the Anthropic event inside
with the Anthropic reader, as the anthropic SDK's Bedrock client does
(``anthropic/lib/bedrock/_stream_decoder.py``).
"""

from __future__ import annotations

from typing import Any

from ...frame import Frame
from ..spec import LiveShape, ProtocolSpec, Synthetic, bearer
from . import anthropic, bedrock_converse


def recognise(frame: Frame, payload: dict[str, Any] | None) -> bool:
    """An event-stream message whose event is ResponseStream's ``chunk``."""
    return bool(frame.headers) and frame.event == "chunk"


def body(model: str, prompt: str, max_tokens: int) -> dict[str, Any]:
    return {"anthropic_version": "bedrock-2023-05-31", "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": prompt}]}


SPEC = ProtocolSpec(
    name="bedrock-invoke",
    reader="bedrock_invoke:BedrockInvokeReader",
    recognise=recognise,
    stop_reasons=anthropic.STOP_REASONS,  # the events inside are Anthropic's
    cut_reasons=anthropic.SPEC.cut_reasons,
    empty_arguments_mean_empty_object=anthropic.SPEC.empty_arguments_mean_empty_object,
    route=r"/model/[^/]+/invoke-with-response-stream\Z",
    error_body=bedrock_converse.error_body,
    live=LiveShape(("AWS_BEARER_TOKEN_BEDROCK",), "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
                   "https://bedrock-runtime.us-east-1.amazonaws.com",
                   "/model/{model}/invoke-with-response-stream", bearer, body, anthropic.tool),
    synthetic=Synthetic("synth_framed:encode_invoke", b"",
                        "anthropic.claude-3-5-sonnet-20240620-v1:0", ""),
    framing="aws-eventstream",
    stream_default=True,
    content_type="application/vnd.amazon.eventstream",
    token_budget=anthropic.SPEC.token_budget,  # the body and the usage are Anthropic's
)
