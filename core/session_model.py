"""The session model: what a recorded stream is, independent of how it is stored.

:class:`Session` (header, chunks, end), :class:`SessionHeader`, :class:`Chunk` and
:class:`StreamEnd`, plus the format constants the reader and the writer share. Both
:mod:`.session_reader` and :mod:`.session` import this module; :mod:`.session` re-exports it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from msgspec import Struct, field

FORMAT_VERSION = 1
SUPPORTED_VERSIONS = frozenset({1})

END_KINDS = frozenset({"clean", "reset", "timeout", "cut", "http_error", "error", "missing"})
"""How a stream can end. ``missing``: the file has no end line (the recorder stopped)."""


class Chunk(Struct, frozen=True):
    """One network read: its bytes, exactly, and when it arrived."""

    t: float
    """Seconds since the request was sent (stored with microsecond precision)."""
    data: bytes


class StreamEnd(Struct, frozen=True):
    """How the stream ended (one of :data:`END_KINDS`)."""

    kind: str
    status: int | None = None
    """HTTP status, for ``http_error``."""
    body: bytes | None = None
    """The error response body, for ``http_error`` only."""
    detail: str | None = None
    """Free text: the exception, the HAR's error string, why the end is missing."""
    at: float | None = None
    """Seconds since the request was sent, when the end was observed."""

    def __post_init__(self) -> None:
        if self.kind not in END_KINDS:
            raise ValueError(f"unknown stream end kind {self.kind!r}")


class SessionHeader(Struct, frozen=True):
    """Everything a session knows besides its chunks. ``request`` is
    ``{"method", "url", "headers": {name: value}, "body": <JSON>}`` (``body_text`` instead of
    ``body`` when the request body was not JSON), secrets redacted."""

    version: int = FORMAT_VERSION
    protocol: str | None = None
    request: dict[str, Any] | None = None
    tools: list[Any] | None = None
    """The request's tool definitions, verbatim (provider-specific shape)."""
    source: str | None = None
    """``live``, ``proxy``, ``constructed``, ``import:sse``, ``import:har``, ..."""
    recorded_at: str | None = None
    """ISO 8601 time the request was sent."""
    provenance: str | None = None
    status: int | None = None
    """HTTP status of the response."""
    response_headers: dict[str, str] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    """Header members this version does not know; kept so that a re-save loses nothing."""


HEADER_TYPES: dict[str, tuple[type, str]] = {
    "source": (str, "a string"), "protocol": (str, "a string"),
    "recorded_at": (str, "a string"), "provenance": (str, "a string"),
    "status": (int, "an integer"), "response_headers": (dict, "an object"),
    "request": (dict, "an object"), "tools": (list, "a list"),
}
"""The header's members in the order they are written (after the marker and version), with
the type the reader requires of each."""

REQUEST_TYPES: dict[str, tuple[type, str]] = {
    "method": (str, "a string"), "url": (str, "a string"), "headers": (dict, "an object"),
    "body_text": (str, "a string"),
}
"""The members of the header's ``request`` the reader requires a type of (``body`` is any JSON
value; other members are kept as they are). A URL or headers of another type would pass by
redaction, which reads these as strings and an object, and by every view of the request."""


class Session:
    """A recorded stream: ``header``, ``end`` and :meth:`chunks`, which can be iterated again
    and again (a session file is re-read lazily each time)."""

    __slots__ = ("header", "end", "path", "_source")

    def __init__(self, header: SessionHeader, source: Callable[[], Iterator[Chunk]],
                 end: StreamEnd, *, path: str | None = None) -> None:
        self.header = header
        self.end = end
        self.path = path
        self._source = source

    @classmethod
    def from_chunks(cls, header: SessionHeader, chunks: Iterable[Chunk], end: StreamEnd,
                    *, path: str | None = None) -> Session:
        """A session held in memory (constructed in code, or imported from a HAR)."""
        kept = tuple(chunks)
        return cls(header, lambda: iter(kept), end, path=path)

    def chunks(self) -> Iterator[Chunk]:
        return self._source()

    def __repr__(self) -> str:
        return f"Session(path={self.path!r}, source={self.header.source!r}, end={self.end.kind!r})"
