"""Session files: one recorded stream as JSON Lines, read lazily, written atomically.

A session is what the engine replays: a header (where the stream came from, the request that
started it), the chunks in the order and at the times they arrived, and how the stream ended.
On disk (``docs/sessions.md`` is the reference)::

    {"callscope":"session","version":1,"source":"live", ...}    line 1: the header
    {"t":0.0123,"text":"data: {...}\\n\\n"}                       one line per chunk
    {"t":0.0301,"b64":"ZGF0YTog4pw="}                           (bytes that are not UTF-8)
    {"end":"clean","t":0.0302}                                  how the stream ended

Reading never holds more than one line: :func:`open_session` reads the header and the end
line (seeking to the end of the file), and :meth:`Session.chunks` reads the chunk lines only
while it is iterated, so errors in a chunk line surface during iteration. Writing goes through
a temporary file that replaces the target only once it is complete.

This module is the public face of sessions and does the writing itself; the model lives in
:mod:`.session_model`, the reading in :mod:`.session_reader` and credential redaction in
:mod:`.redact`, all re-exported here so ``from callscope.core.session import ...`` keeps
working for every name.
"""

from __future__ import annotations

import base64
import math
import os
import stat
from collections.abc import Iterable
from types import TracebackType
from typing import IO, Any

import orjson
from msgspec.structs import replace

from .errors import CallscopeError
from .redact import (
    REDACTED,
    SECRET_HEADERS,
    SECRET_QUERY_PARAMS,
    redact_body,
    redact_headers,
    redact_request,
    redact_text,
    redact_url,
)
from .session_model import (
    END_KINDS,
    FORMAT_VERSION,
    HEADER_TYPES,
    REQUEST_TYPES,
    SUPPORTED_VERSIONS,
    Chunk,
    Session,
    SessionHeader,
    StreamEnd,
)
from .session_reader import MAX_LINE_DEPTH, read_session

__all__ = [
    "END_KINDS", "FORMAT_VERSION", "MAX_LINE_BYTES", "MAX_LINE_DEPTH", "REDACTED", "SECRET_HEADERS",
    "SECRET_QUERY_PARAMS", "SUPPORTED_VERSIONS", "Chunk", "Session", "SessionHeader",
    "SessionWriter", "StreamEnd", "open_input", "open_session", "redact_body", "redact_header",
    "redact_headers", "redact_text", "redact_url",
    "save_session",
]

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest line (line end included) a session file may hold; longer ones are rejected
before they are read into memory. Read when a session is opened (its chunks are then read with
that limit) or written, so tests may lower it."""

# Separators that JSON leaves unescaped but str.splitlines() and some editors treat as line
# breaks; escaping them keeps one record per line for every reader.
_LINE_BREAKERS = ((b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"),
                  (b"\xc2\x85", b"\\u0085"))


# -- writing ---------------------------------------------------------------------------------

def _as_typed(request: dict[str, Any]) -> dict[str, Any]:
    """A request whose members the reader types (:data:`REQUEST_TYPES`) are of those types: a
    string member given as another JSON value (a URL as a list) is kept as that value's JSON
    text, so the session written is one that loads, and nothing received is dropped (redaction
    has read the value by its shape before)."""
    for name, (kind, _) in REQUEST_TYPES.items():
        value = request.get(name)
        if value is not None and not isinstance(value, kind) and kind is str:
            request[name] = orjson.dumps(value).decode()
    return request


def redact_header(header: SessionHeader) -> SessionHeader:
    """The header as it may be written: the request by its members' shapes, the response
    headers as headers, the free-text members (source, provenance) as text and the members the
    reader does not know as a body (member names judged at any depth), since a tool that wrote
    the session may have put anything there. The tools stay as they are: they are the schemas
    the gate validates against."""
    request = header.request
    if request is not None:
        request = _as_typed(redact_request(request))  # (every member by its shape)
    response_headers = header.response_headers
    if response_headers is not None:
        response_headers = redact_headers(response_headers)
    source, provenance = (None if text is None else redact_text(text)
                          for text in (header.source, header.provenance))
    return replace(header, request=request, response_headers=response_headers, source=source,
                   provenance=provenance, extra=redact_body(dict(header.extra)))


def _dump(obj: Any, what: str) -> bytes:
    try:
        out = orjson.dumps(obj)
    except TypeError as exc:
        why = (f"nested deeper than {MAX_LINE_DEPTH} levels" if "ecursion" in str(exc)
               else str(exc))
        raise CallscopeError(f"cannot write the {what} as JSON: {why}") from None
    for raw, escaped in _LINE_BREAKERS:
        if raw in out:
            out = out.replace(raw, escaped)
    out += b"\n"
    if len(out) > MAX_LINE_BYTES:
        raise CallscopeError(f"the {what} needs a {len(out)}-byte line; a session line holds "
                             f"at most {MAX_LINE_BYTES} bytes")
    return out


def _payload(data: bytes) -> dict[str, str]:
    """``text`` when the bytes are UTF-8 (exact round trip), else ``b64``."""
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"b64": base64.b64encode(data).decode("ascii")}


def _header_line(header: SessionHeader) -> bytes:
    header = redact_header(header)
    obj: dict[str, Any] = {"callscope": "session", "version": FORMAT_VERSION}
    for name in HEADER_TYPES:
        value = getattr(header, name)
        if value is not None:
            obj[name] = value
    for name, value in header.extra.items():
        obj.setdefault(name, value)
    return _dump(obj, "header")


def _end_line(end: StreamEnd) -> bytes:
    obj: dict[str, Any] = {"end": end.kind}
    if end.at is not None:
        obj["t"] = round(end.at, 6)
    if end.status is not None:
        obj["status"] = end.status
    if end.detail is not None:
        obj["detail"] = end.detail
    if end.body is not None:
        if end.kind != "http_error":
            raise CallscopeError(f"only an http_error end carries a body, not {end.kind!r}")
        obj.update(_payload(end.body))
    return _dump(obj, "end line")


class SessionWriter:
    """Writes a session while it is received; the target appears only at :meth:`finish`.

    Lines go to a hidden ``.NAME.XXXXXXXX.partial`` file next to the target, flushed after
    each chunk. :meth:`finish` writes the end line, fsyncs and renames it over the target. If
    the process dies first, the partial file holds every chunk written so far and loads as a
    session whose end is ``missing``. Leaving a ``with`` block without :meth:`finish` (an
    exception, or a forgotten call) deletes the partial file and leaves the target untouched.
    """

    def __init__(self, path: str, header: SessionHeader) -> None:
        self.path = path
        directory, name = os.path.split(os.path.abspath(path))
        if not path:
            raise CallscopeError("no path given for the session (an empty -o)")
        if os.path.isdir(path):  # (said now: the rename at the end would fail, after recording)
            raise CallscopeError(f"{path}: is a directory; a session is written to a file")
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            mode = None  # (a new path)
        if mode is not None and not stat.S_ISREG(mode):
            # The session replaces its target by a rename: over a symlink, a device or a pipe
            # that would put a file in its place (as root, /dev/null becomes a regular file).
            raise CallscopeError(f"{path}: is not a regular file (a symlink, device, pipe or "
                                 f"socket); a session is written to a regular file or a new path")
        import secrets  # (here: with hmac and hashlib it costs every replay's start-up)

        while True:  # O_EXCL + the default mode, so the umask applies as for any new file
            self.partial_path = os.path.join(directory, f".{name}.{secrets.token_hex(4)}.partial")
            try:
                fd = os.open(self.partial_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
                break
            except FileExistsError:
                continue
            except OSError as exc:
                raise CallscopeError(f"{path}: cannot write a session there "
                                     f"({exc.strerror or exc})") from None
        self._file: IO[bytes] | None = os.fdopen(fd, "wb")
        self._last_t = 0.0
        self._count = 0
        try:
            self._put(_header_line(header))
        except CallscopeError as exc:  # a header built in memory (a HAR, --tools) may not fit
            self.discard()
            raise CallscopeError(f"{path}: {exc}") from None
        except BaseException:
            self.discard()
            raise

    def _put(self, line: bytes) -> IO[bytes]:
        if self._file is None:
            raise CallscopeError(f"{self.path}: the session writer is closed")
        self._file.write(line)
        return self._file

    def write(self, chunk: Chunk) -> None:
        t = round(chunk.t, 6)
        if not (math.isfinite(t) and t >= self._last_t):
            raise CallscopeError(f"chunk {self._count + 1}: time {chunk.t} is not a finite "
                                 f"offset at or after the previous chunk's {self._last_t}")
        # Flushed per chunk: if the recorder dies, the partial file holds every chunk so far.
        self._put(_dump({"t": t, **_payload(chunk.data)}, f"chunk {self._count + 1}")).flush()
        self._last_t = t
        self._count += 1

    def finish(self, end: StreamEnd) -> None:
        if end.at is not None and round(end.at, 6) < self._last_t:
            # Time runs one way in a session (the reader refuses an end before its last chunk):
            # an end stamped by another clock than the reads is put at the last read.
            end = replace(end, at=self._last_t)
        self._put(_end_line(end))
        file, self._file = self._file, None
        assert file is not None
        try:
            file.flush()
            os.fsync(file.fileno())
            file.close()
            try:  # a re-save keeps the permissions the user gave the file
                os.chmod(self.partial_path, stat.S_IMODE(os.stat(self.path).st_mode))
            except OSError:  # no such file yet, or it cannot be read: the default mode, and
                pass  # the session is not lost over a permission bit
        except BaseException:
            file.close()
            self._unlink()
            raise
        try:
            os.replace(self.partial_path, self.path)
        except OSError as exc:  # every byte is in the partial file: keep it, and say where
            raise CallscopeError(f"{self.path}: cannot write the session there "
                                 f"({exc.strerror or exc}); it is kept in {self.partial_path}"
                                 ) from None
        _fsync_dir(os.path.dirname(os.path.abspath(self.path)))

    def discard(self) -> None:
        """Abandon the session: close and delete the partial file."""
        if self._file is not None:
            self._file.close()
            self._file = None
            self._unlink()

    def _unlink(self) -> None:
        try:
            os.unlink(self.partial_path)
        except FileNotFoundError:
            pass

    def __enter__(self) -> SessionWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.discard()


def _fsync_dir(directory: str) -> None:
    """Make the rename durable; best effort, as not every platform can open a directory."""
    try:
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass


def save_session(path: str, header: SessionHeader, chunks: Iterable[Chunk],
                 end: StreamEnd) -> None:
    """Write a whole session atomically: the target is either untouched or complete. Secrets in
    the header's request URL and headers (and response headers) are redacted on the way."""
    with SessionWriter(path, header) as writer:
        for chunk in chunks:
            writer.write(chunk)
        writer.finish(end)


# -- reading ---------------------------------------------------------------------------------

def open_session(path: str) -> Session:
    """Open a session file. Its header and end line are read now (the end from the file's
    tail, so it is known before any chunk is read); its chunks are read line by line each time
    :meth:`Session.chunks` is iterated, and a broken chunk line raises :class:`InputError`
    then. A file without an end line loads with end kind ``missing``."""
    return read_session(path, MAX_LINE_BYTES)


def open_input(path: str) -> Session:
    """Open anything accepted where a session is: a session file, a HAR (``FILE.har#N``) or a
    raw SSE capture, told apart by content. The same as :func:`importers.open_input`."""
    from .importers import open_input as open_any  # importers builds on this module

    return open_any(path)
