"""HTTP error answers as providers send them: each protocol's spec holds its table (status ->
:class:`ErrorShape`, in the provider's words), this module the rules they share.

The shapes come from the providers' error documentation and the SDKs that read them: OpenAI's
``{"error": {message, type, param, code}}`` with an ``x-request-id`` header; Anthropic's
``{"type": "error", "error": {type, message}, "request_id"}`` with the same id in a
``request-id`` header; Google's ``{"error": {code, message, status}}`` (with a ``RetryInfo``
detail on 429). The Stainless-built SDKs (openai, anthropic) decide whether to retry from
``x-should-retry`` first, then ``retry-after-ms`` / ``retry-after``, then the status
(``_should_retry`` in their ``_base_client.py``): the emulator sends what the provider sends, so
a client's retry logic meets the real signals.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import NamedTuple

RETRY_AFTER_SECONDS = 1
"""The ``retry-after`` of an emulated 429 or 529 (short: a test should not wait long)."""


class ErrorShape(NamedTuple):
    kind: str
    """The provider's name for the error (OpenAI's ``type``, Anthropic's ``error.type``,
    Google's ``status``)."""
    message: str
    code: str | None = None
    """OpenAI's ``code`` (``rate_limit_exceeded``, ``invalid_api_key``, ...)."""


def shape_for(table: Mapping[int, ErrorShape], status: int) -> ErrorShape:
    """The table's entry for ``status``, else its 400 (a client error) or 500 entry."""
    return table.get(status) or table[400 if status < 500 else 500]


def retryable(status: int) -> bool:
    """What the SDKs retry by status when no header says: 408, 409, 429 and every 5xx."""
    return status in (408, 409, 429) or status >= 500


def retry_headers(status: int) -> list[tuple[str, str]]:
    """``retry-after`` on a rate limit or an overload."""
    return [("retry-after", str(RETRY_AFTER_SECONDS))] if status in (429, 503, 529) else []


def request_id(prefix: str) -> str:
    """A fresh provider-style request id (``req_`` and hex)."""
    return prefix + uuid.uuid4().hex
