"""What a recorder (the proxy, the mitmproxy addon) records and how it names it: the rules both
share, free of any HTTP library so that mitmproxy's environment can load them.

* :func:`protocol_for_path`: the protocol an endpoint speaks (each spec's route, matched against
  the end of the path, so a gateway prefix such as ``/openai/v1/...`` still works). A path that
  servers read in more than one way (:data:`AMBIGUOUS_PATHS`) names none, so what a recorder
  records never depends on which reading the upstream makes.
* :data:`STREAM_TYPES`, :func:`wants_stream`: a response is recorded when it is a stream, or an
  HTTP error answering a request that asked for one.
* :func:`request_record`: the request as a session keeps it, credentials redacted, a body
  nested too deep for a session line kept as text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import orjson

from ..core.importers import MAX_BODY_DEPTH
from ..core.inert import nested_deeper
from ..core.providers import SPECS
from ..core.redact import redact_headers, redact_url

ENDPOINTS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(spec.route), spec.name) for spec in SPECS.values())
STREAM_TYPES = ("text/event-stream", "application/x-ndjson", "application/vnd.amazon.eventstream")
"""Response content types recorded as streams (SSE, Ollama's NDJSON, AWS's event stream)."""
DECODABLE = ("gzip", "x-gzip", "deflate")
"""Content codings a recorder decodes into a second session beside the raw one."""


AMBIGUOUS_PATHS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("empty segment", re.compile(r"//"),
     "``//evil.com/v1/...`` is a host to some servers, ``/evil.com/v1/...`` to others"),
    ("dot segment", re.compile(r"(?:^|/)(?:\.|%2e){1,2}(?:/|$)", re.IGNORECASE),
     "``/x/../v1/responses`` is ``/v1/responses`` once a server removes dot segments"),
    ("backslash", re.compile(r"\\|%5c", re.IGNORECASE),
     "some servers read ``\\`` (or ``%5C``) as ``/``"),
    ("path parameter", re.compile(r";"),
     "some servers drop ``;name=value`` from a segment, others keep it"),
)
"""Paths that name no protocol: (name, pattern, why). ``%2F`` is not among them: Bedrock's
clients send an inference profile's ARN in the path with its ``/`` escaped so."""


def path_ambiguity(path: str) -> str | None:
    """The name of the first :data:`AMBIGUOUS_PATHS` entry ``path`` matches, or None."""
    return next((name for name, pattern, _ in AMBIGUOUS_PATHS if pattern.search(path)), None)


def protocol_for_path(path: str) -> str | None:
    if path_ambiguity(path) is not None:
        return None
    for pattern, protocol in ENDPOINTS:
        if pattern.search(path):
            return protocol
    return None


def is_stream(content_type: str) -> bool:
    return content_type.strip().lower().startswith(STREAM_TYPES)


def wants_stream(path: str, accept: str | None, body: bytes) -> bool:
    """Whether a request asked for a stream (so an error answer is worth a session too)."""
    if ":streamGenerateContent" in path or path.endswith("-stream") or (
            "text/event-stream" in (accept or "")):
        return True
    try:
        parsed = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        return False
    return isinstance(parsed, dict) and parsed.get("stream") is True


def request_record(method: str, url: str, headers: Iterable[tuple[str, str]], body: bytes,
                   also: Iterable[str] = ()) -> dict[str, Any]:
    """The request as the session keeps it: ``also`` (``--redact-header``) redacted here, the
    built-in names (:func:`~callscope.core.redact.secret_name`) here and by the writer too.
    The body is kept as JSON (``body``) when it parses and nests at most
    :data:`~callscope.core.importers.MAX_BODY_DEPTH` levels, as the HAR importer keeps one: a
    session line holds 254, the header holds the body two levels down, and a deeper one could
    not be written. Any other body is kept as text (``body_text``), which the writer redacts by
    the text rules."""
    also = tuple(also)
    record: dict[str, Any] = {"method": method, "url": redact_url(url, also),
                              "headers": redact_headers(list(headers), also)}
    if body:
        try:
            parsed: Any = orjson.loads(body)
            as_json = not nested_deeper(body, parsed, MAX_BODY_DEPTH)
        except orjson.JSONDecodeError:  # (not JSON, or nested past the 1,024 levels orjson reads)
            as_json = False
        if as_json:
            record["body"] = parsed
        else:
            record["body_text"] = body.decode("utf-8", "replace")
    return record
