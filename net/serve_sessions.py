"""Sessions held in memory by ``callscope serve``, ready to be streamed again and again.

A session's protocol is its header's, else the one detected over its bytes; its content type is
the protocol's stream type, with the parameters the recording had. The byte offsets of its SSE
frames are computed once, on first use (a ``frames=`` cut or a ``rate=`` pace asks for them).

The recorded response head is checked when the session is loaded (:func:`check_head`), so a
session the emulator holds is one it can answer with: a status or content type that could not go
on the wire is refused then, in one line naming the file, not by a failed response later.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from ..core.engine import Engine
from ..core.errors import InputError
from ..core.framing import decode_all, framing_of
from ..core.inert import preview
from ..core.providers import SPECS
from ..core.replay import TimedBytes
from ..core.session import Session, StreamEnd

HTTP_STATUSES = range(100, 600)
"""The statuses a recorded response head may hold (HTTP's three digits, 1xx to 5xx)."""
ERROR_STATUSES = range(400, 600)
"""The statuses an ``http_error`` end may hold: the emulator answers with it, and every recorder
writes that end only for a 4xx or 5xx (as ``serve``'s own ``status=`` fault requires)."""
_HEADER_VALUE = re.compile(r"(?:[\x21-\x7e]+(?:[ \t]+[\x21-\x7e]+)*)?")
"""A content type the emulator can send: visible ASCII, with spaces or tabs only between (a
control character would end or split the header, and HTTP gives text beyond ASCII no charset).
An empty one is no content type: it is kept, and the protocol's stream type is sent."""


@dataclass
class Loaded:
    """A session held in memory, ready to be streamed again and again."""

    name: str
    protocol: str
    chunks: list[TimedBytes]
    end: StreamEnd
    content_type: str = "text/event-stream"
    _frame_ends: list[int] | None = field(default=None, repr=False)

    @property
    def size(self) -> int:
        return sum(len(data) for _, data in self.chunks)

    @property
    def frame_ends(self) -> list[int]:
        """The byte offset just past each SSE frame (block) of the session, computed once."""
        if self._frame_ends is None:
            data = b"".join(d for _, d in self.chunks)
            self._frame_ends = [f.end for f in decode_all(data, framing_of(self.protocol))]
        return self._frame_ends

    def frame_end(self, count: int) -> int:
        """The byte offset just past the first ``count`` frames."""
        ends = self.frame_ends
        if count == 0:
            return 0
        return ends[min(count, len(ends)) - 1] if ends else 0


def load(path: str, session: Session | None = None) -> Loaded:
    """Read a session (any input ``open_input`` accepts) into memory; its protocol comes from
    its header, else from detection over its bytes."""
    if session is None:
        from ..core.importers import open_input

        session = open_input(path)
    content_types = check_head(path, session)
    chunks: list[TimedBytes] = [(c.t, c.data) for c in session.chunks()]
    protocol = session.header.protocol
    if not protocol:
        engine = Engine()
        for _, data in chunks:
            engine.feed(data)
        protocol = engine.state.protocol
    # The protocol's stream type (its spec says), with the parameters the recording had.
    content_type = SPECS[protocol].content_type if protocol in SPECS else "text/event-stream"
    for value in content_types:
        if value.lower().startswith(content_type):
            content_type = value
    return Loaded(os.path.basename(path), protocol, chunks, session.end, content_type)


def check_head(path: str, session: Session) -> list[str]:
    """The recorded content types of ``session`` (surrounding spaces and tabs stripped), once
    the head the emulator answers with is checked: the header's ``status`` in
    :data:`HTTP_STATUSES`, an ``http_error`` end's in :data:`ERROR_STATUSES` (any other end's
    in :data:`HTTP_STATUSES`), every ``content-type`` response header a string
    :data:`_HEADER_VALUE` matches. Raises :class:`~callscope.core.errors.InputError` naming
    ``path`` otherwise. (The file's name is no part of the recorded head: any name is served,
    escaped where it is sent as a header: see :func:`.serve_stream.header_text`.)"""
    end = session.end
    _check_status(path, "the header's 'status'", session.header.status, HTTP_STATUSES)
    if end.kind == "http_error":
        _check_status(path, "the http_error end's 'status'", end.status, ERROR_STATUSES,
                      "an HTTP error status")
    else:
        _check_status(path, f"the {end.kind} end's 'status'", end.status, HTTP_STATUSES)
    headers: Any = session.header.response_headers or {}
    if not isinstance(headers, dict):
        raise InputError(path, f"the recorded response headers are {type(headers).__name__}, "
                         "not an object")
    content_types: list[str] = []
    for name, value in headers.items():
        if not (isinstance(name, str) and name.lower() == "content-type"):
            continue
        text = value.strip(" \t") if isinstance(value, str) else None
        if text is None or not _HEADER_VALUE.fullmatch(text):
            raise InputError(path, f"the recorded content type {preview(value)} cannot be "
                             "sent: a content type is a string of visible ASCII")
        content_types.append(text)
    return content_types


def _check_status(path: str, what: str, status: object, allowed: range,
                  kind: str = "an HTTP status") -> None:
    if status is None or (type(status) is int and status in allowed):
        return
    raise InputError(path, f"{what} is {preview(status)}, not {kind} "
                     f"({allowed.start}-{allowed.stop - 1})")
