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
"""

from __future__ import annotations

import base64
import binascii
import math
import os
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import IO, Any
from urllib.parse import unquote_plus

import orjson

from .errors import CallscopeError, InputError

FORMAT_VERSION = 1
SUPPORTED_VERSIONS = frozenset({1})
MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest line (line end included) a session file may hold; longer ones are rejected
before they are read into memory. Read at call time, so tests may lower it."""

END_KINDS = frozenset({"clean", "reset", "timeout", "cut", "http_error", "error", "missing"})
"""How a stream can end. ``missing``: the file has no end line (the recorder stopped)."""

REDACTED = "[REDACTED]"
SECRET_HEADERS = frozenset({
    "authorization", "proxy-authorization", "x-api-key", "x-goog-api-key", "api-key",
    "cookie", "set-cookie",
})
SECRET_QUERY_PARAMS = frozenset({"key", "api_key", "api-key", "apikey", "access_token"})

_BOM = b"\xef\xbb\xbf"
_TAIL_BLOCK = 64 * 1024
# Separators that JSON leaves unescaped but str.splitlines() and some editors treat as line
# breaks; escaping them keeps one record per line for every reader.
_LINE_BREAKERS = ((b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"),
                  (b"\xc2\x85", b"\\u0085"))


# -- the model -------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Chunk:
    """One network read: its bytes, exactly, and when it arrived."""

    t: float
    """Seconds since the request was sent (stored with microsecond precision)."""
    data: bytes


@dataclass(frozen=True, slots=True)
class StreamEnd:
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


@dataclass(frozen=True, slots=True)
class SessionHeader:
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


_HEADER_TYPES: dict[str, tuple[type, str]] = {
    "source": (str, "a string"), "protocol": (str, "a string"),
    "recorded_at": (str, "a string"), "provenance": (str, "a string"),
    "status": (int, "an integer"), "response_headers": (dict, "an object"),
    "request": (dict, "an object"), "tools": (list, "a list"),
}
"""The header's members in the order they are written (after the marker and version)."""


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


# -- redaction -------------------------------------------------------------------------------

def redact_headers(
    headers: Mapping[str, str] | Iterable[tuple[str, str]] | Iterable[Mapping[str, str]],
) -> dict[str, str]:
    """Headers as a dict, credential values replaced by ``[REDACTED]``. Accepts a mapping, or
    (name, value) pairs, or HAR's ``{"name", "value"}`` objects; repeated names are joined with
    ", " as HTTP allows."""
    items: Iterable[Any] = headers.items() if isinstance(headers, Mapping) else headers
    out: dict[str, str] = {}
    for item in items:
        if isinstance(item, Mapping):  # HAR; unpacking a dict would yield its keys
            name, value = str(item.get("name", "")), str(item.get("value", ""))
        else:
            name, value = (str(part) for part in item)
        if name.lower() in SECRET_HEADERS:
            value = REDACTED
        out[name] = f"{out[name]}, {value}" if name in out else value
    return out


def redact_url(url: str) -> str:
    """The URL with a password and the values of key-like query parameters redacted. Works on
    the text, so the rest of the URL keeps its exact spelling."""
    rest, hash_, fragment = url.partition("#")
    base, question, query = rest.partition("?")
    scheme, sep, after = base.partition("://")
    if sep:
        authority, slash, path = after.partition("/")
        userinfo, at, host = authority.rpartition("@")
        if at and ":" in userinfo:
            userinfo = userinfo.split(":", 1)[0] + ":" + REDACTED
            base = f"{scheme}://{userinfo}@{host}{slash}{path}"
    if question:
        parts = query.split("&")
        for i, part in enumerate(parts):
            name = part.split("=", 1)[0]
            if unquote_plus(name).lower() in SECRET_QUERY_PARAMS:
                parts[i] = f"{name}={REDACTED}"
        base = f"{base}?{'&'.join(parts)}"
    return f"{base}{hash_}{fragment}"


def _redacted(header: SessionHeader) -> SessionHeader:
    request = header.request
    if request is not None:
        request = dict(request)
        if isinstance(request.get("url"), str):
            request["url"] = redact_url(request["url"])
        if request.get("headers") is not None:
            request["headers"] = redact_headers(request["headers"])
    response_headers = header.response_headers
    if response_headers is not None:
        response_headers = redact_headers(response_headers)
    return replace(header, request=request, response_headers=response_headers)


# -- writing ---------------------------------------------------------------------------------

def _dump(obj: Any, what: str) -> bytes:
    try:
        out = orjson.dumps(obj)
    except TypeError as exc:
        raise CallscopeError(f"cannot write the {what} as JSON: {exc}") from None
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
    header = _redacted(header)
    obj: dict[str, Any] = {"callscope": "session", "version": FORMAT_VERSION}
    for name in _HEADER_TYPES:
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
        while True:  # O_EXCL + the default mode, so the umask applies as for any new file
            self.partial_path = os.path.join(directory, f".{name}.{secrets.token_hex(4)}.partial")
            try:
                fd = os.open(self.partial_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
                break
            except FileExistsError:
                continue
        self._file: IO[bytes] | None = os.fdopen(fd, "wb")
        self._last_t = 0.0
        self._count = 0
        try:
            self._put(_header_line(header))
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
        self._put(_end_line(end))
        file, self._file = self._file, None
        assert file is not None
        try:
            file.flush()
            os.fsync(file.fileno())
            file.close()
            try:  # a re-save keeps the permissions the user gave the file
                os.chmod(self.partial_path, stat.S_IMODE(os.stat(self.path).st_mode))
            except FileNotFoundError:
                pass
            os.replace(self.partial_path, self.path)
        except BaseException:
            file.close()
            self._unlink()
            raise
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

_NO_END = "the file has no end line: the recorder stopped before the stream ended"


def _short(value: Any) -> str:
    text = repr(value[:61] if isinstance(value, str) else value)
    return text if len(text) <= 60 else text[:59] + "…"


def _open(path: str) -> IO[bytes]:
    try:
        return open(path, "rb")
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror}") from None


def _lines(path: str, f: IO[bytes], line: int) -> Iterator[tuple[int, bytes]]:
    """(number, bytes) of each non-blank line after ``line``, from the file's position. A line
    longer than the limit is refused before it is in memory."""
    limit = MAX_LINE_BYTES
    while raw := f.readline(limit + 1):
        line += 1
        if len(raw) > limit:
            raise InputError(path, f"line longer than the limit of {limit} bytes", line=line)
        if raw.strip():
            yield line, raw


def _loads(path: str, raw: bytes, line: int | None) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as bad:
            raise InputError(path, f"not UTF-8 (byte {bad.start + 1} of the line); a session "
                             "file is UTF-8 text", line=line) from None
        raise InputError(path, f"bad JSON at column {exc.colno}: {exc.msg}", line=line) from None


def _parse_header(path: str, raw: bytes, line: int) -> SessionHeader:
    obj = _loads(path, raw.removeprefix(_BOM), line)
    if not isinstance(obj, dict) or "callscope" not in obj:
        raise InputError(path, 'no session header: the first line is not a {"callscope": '
                         '"session", "version": ...} object', line=line)
    if obj["callscope"] != "session":
        raise InputError(path, f'not a session: the header says "callscope": '
                         f'{_short(obj["callscope"])}', line=line)
    version = obj.get("version")
    if type(version) is not int:
        raise InputError(path, "the header has no integer 'version'", line=line)
    if version not in SUPPORTED_VERSIONS:
        raise InputError(path, f"unknown session version {version} (this callscope reads "
                         f"version {FORMAT_VERSION})", line=line)
    values: dict[str, Any] = {}
    for name, (kind, described) in _HEADER_TYPES.items():
        value = obj.get(name)
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
            raise InputError(path, f"header member {name!r} should be {described}", line=line)
        values[name] = value
    extra = {k: v for k, v in obj.items() if k not in _HEADER_TYPES and k not in
             ("callscope", "version")}
    return SessionHeader(version=version, extra=extra, **values)


def _time(path: str, obj: dict[str, Any], line: int | None) -> float | None:
    t = obj.get("t")
    if t is None:
        return None
    if isinstance(t, bool) or not isinstance(t, int | float) or t < 0:
        raise InputError(path, f"'t' should be seconds >= 0, not {_short(t)}", line=line)
    return float(t)


def _bytes(path: str, obj: dict[str, Any], line: int | None) -> bytes | None:
    text, b64 = obj.get("text"), obj.get("b64")
    if text is not None and b64 is not None:
        raise InputError(path, "a line holds both 'text' and 'b64'", line=line)
    if text is not None:
        if not isinstance(text, str):
            raise InputError(path, "'text' should be a string", line=line)
        return text.encode("utf-8")
    if b64 is not None:
        if not isinstance(b64, str):
            raise InputError(path, "'b64' should be a string", line=line)
        try:
            return base64.b64decode(b64, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise InputError(path, f"bad base64 in 'b64': {exc}", line=line) from None
    return None


def _parse_end(path: str, obj: dict[str, Any], line: int | None) -> StreamEnd:
    kind, status, detail = obj["end"], obj.get("status"), obj.get("detail")
    if not isinstance(kind, str) or kind not in END_KINDS:
        raise InputError(path, f"unknown end kind {_short(kind)} (one of "
                         f"{', '.join(sorted(END_KINDS))})", line=line)
    if status is not None and (type(status) is not int):
        raise InputError(path, "'status' should be an integer", line=line)
    if detail is not None and not isinstance(detail, str):
        raise InputError(path, "'detail' should be a string", line=line)
    body = _bytes(path, obj, line)
    if body is not None and kind != "http_error":
        raise InputError(path, f"only an http_error end carries a body, not {kind!r}", line=line)
    return StreamEnd(kind, status, body, detail, _time(path, obj, line))


def _record(path: str, obj: Any, line: int) -> Chunk | StreamEnd:
    if isinstance(obj, dict):
        if "end" in obj:
            return _parse_end(path, obj, line)
        data = _bytes(path, obj, line)
        if data is not None:
            t = _time(path, obj, line)
            if t is None:
                raise InputError(path, "a chunk line without its time 't'", line=line)
            return Chunk(t, data)
    raise InputError(path, 'neither a chunk line {"t", "text" or "b64"} nor an end line '
                     '{"end"}', line=line)


def _read_chunks(path: str, offset: int, header_line: int) -> Iterator[Chunk]:
    with _open(path) as f:
        f.seek(offset)
        last_t = 0.0
        ended = False
        for line, raw in _lines(path, f, header_line):
            if ended:
                raise InputError(path, "data after the end line", line=line)
            try:
                obj = _loads(path, raw, line)
            except InputError:
                if not raw.endswith(b"\n"):
                    return  # torn last line: the session's end (missing) already says so
                raise
            record = _record(path, obj, line)
            if isinstance(record, StreamEnd):
                ended = True
                continue
            if record.t < last_t:
                raise InputError(path, f"chunk time {record.t} is earlier than the previous "
                                 f"chunk's {last_t}", line=line)
            last_t = record.t
            yield record


def _last_line(f: IO[bytes], lo: int, hi: int) -> tuple[int, bytes, bool] | None:
    """The last non-blank line in ``[lo, hi)``: (offset, bytes, torn), torn meaning no line end
    follows it. None if there is none or it is over the line limit (``chunks()`` says so).
    Reads backwards block by block, so only the last line is ever in memory."""
    end: int | None = None  # just past the line's last non-blank byte
    newline_after = False
    pos, start = hi, lo
    while pos > lo:
        step = min(_TAIL_BLOCK, pos - lo)
        pos -= step
        f.seek(pos)
        block = f.read(step)
        if end is None:
            kept = len(block.rstrip())
            newline_after = newline_after or b"\n" in block[kept:]
            if not kept:
                continue
            end, block = pos + kept, block[:kept]
        newline = block.rfind(b"\n")
        if newline >= 0:
            start = pos + newline + 1
            break
        if end - pos > MAX_LINE_BYTES:
            return None
    if end is None or end - start > MAX_LINE_BYTES:
        return None
    f.seek(start)
    return start, f.read(end - start), not newline_after


def _line_at(f: IO[bytes], offset: int) -> int:
    """The number of the line starting at ``offset`` (only computed for error messages)."""
    f.seek(0)
    count = 1
    while offset > 0:
        block = f.read(min(1 << 20, offset))
        if not block:
            break
        count += block.count(b"\n")
        offset -= len(block)
    return count


def _read_end(path: str, f: IO[bytes], lo: int, hi: int) -> StreamEnd:
    found = _last_line(f, lo, hi)
    if found is None:
        return StreamEnd("missing", detail=_NO_END)
    start, raw, torn = found
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        if torn:
            return StreamEnd("missing", detail=f"line {_line_at(f, start)} was cut short "
                             "while being written (the recorder stopped); it is not read")
        return StreamEnd("missing", detail=_NO_END)  # chunks() reports the line
    if not (isinstance(obj, dict) and "end" in obj):
        return StreamEnd("missing", detail=_NO_END)
    try:
        return _parse_end(path, obj, None)
    except InputError as exc:
        raise InputError(path, exc.message, line=_line_at(f, start)) from None


def open_session(path: str) -> Session:
    """Open a session file. Its header and end line are read now (the end from the file's
    tail, so it is known before any chunk is read); its chunks are read line by line each time
    :meth:`Session.chunks` is iterated, and a broken chunk line raises :class:`InputError`
    then. A file without an end line loads with end kind ``missing``."""
    with _open(path) as f:
        first = next(_lines(path, f, 0), None)
        if first is None:
            raise InputError(path, "empty file")
        line, raw = first
        header = _parse_header(path, raw, line)
        body = f.tell()
        end = _read_end(path, f, body, os.fstat(f.fileno()).st_size)
    return Session(header, lambda: _read_chunks(path, body, line), end, path=path)


def open_input(path: str) -> Session:
    """Open anything accepted where a session is: a session file, a HAR (``FILE.har#N``) or a
    raw SSE capture, told apart by content. The same as :func:`importers.open_input`."""
    from .importers import open_input as open_any  # importers builds on this module

    return open_any(path)
