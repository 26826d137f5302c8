"""Reading session files: the header and end line at open, the chunk lines lazily.

:func:`read_session` never holds more than one line in memory: it reads the header, then the
end line by seeking to the end of the file and reading backwards; the chunk lines are read
only while :meth:`Session.chunks` is iterated, so an error in a chunk line surfaces during
iteration. The caller passes the line limit (:data:`.session.MAX_LINE_BYTES`); the public
entry point is :func:`.session.open_session`.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Iterator
from typing import IO, Any

import orjson

from .errors import InputError
from .inert import nested_deeper, preview
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

_BOM = b"\xef\xbb\xbf"
_TAIL_BLOCK = 64 * 1024

MAX_LINE_DEPTH = 254
"""The deepest nesting of arrays and objects a session line may hold (the line's own object is
level 1). orjson reads 1,024 levels but writes only 254: a deeper header loaded, then could not
be saved again. Refusing it when reading makes every session that loads one that saves."""

_NO_END = "the file has no end line: the recorder stopped before the stream ended"


def _short(value: Any) -> str:
    return preview(value)


def _open(path: str) -> IO[bytes]:
    try:
        return open(path, "rb")
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror}") from None


def _lines(path: str, f: IO[bytes], line: int, limit: int) -> Iterator[tuple[int, bytes]]:
    """(number, bytes) of each non-blank line after ``line``, from the file's position. A line
    longer than ``limit`` is refused before it is in memory."""
    while raw := f.readline(limit + 1):
        line += 1
        if len(raw) > limit:
            raise InputError(path, f"line longer than the limit of {limit} bytes", line=line)
        if raw.strip():
            yield line, raw


def _too_deep(raw: bytes, obj: Any) -> bool:
    return nested_deeper(raw, obj, MAX_LINE_DEPTH)


_DEEP = f"nested deeper than {MAX_LINE_DEPTH} levels (the most a session line may hold)"


def _loads(path: str, raw: bytes, line: int | None) -> Any:
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as bad:
            raise InputError(path, f"not UTF-8 (byte {bad.start + 1} of the line); a session "
                             "file is UTF-8 text", line=line) from None
        raise InputError(path, f"bad JSON at column {exc.colno}: {exc.msg}", line=line) from None
    if _too_deep(raw, obj):
        raise InputError(path, _DEEP, line=line)
    return obj


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
    for name, (kind, described) in HEADER_TYPES.items():
        value = obj.get(name)
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
            raise InputError(path, f"header member {name!r} should be {described}", line=line)
        values[name] = value
    for name, (kind, described) in REQUEST_TYPES.items():
        value = (values["request"] or {}).get(name)
        if value is not None and not isinstance(value, kind):
            raise InputError(path, f"header member 'request.{name}' should be {described}",
                             line=line)
    extra = {k: v for k, v in obj.items() if k not in HEADER_TYPES and k not in
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


def _common_chunk(obj: Any) -> Chunk | None:
    """The line nearly every session is made of, ``{"t": seconds, "text": "..."}``, read
    without :func:`_record`'s checks (it passes all of them: a float time, not negative, and
    text, nothing else); None for any other line, which :func:`_record` reads or refuses."""
    if type(obj) is dict and len(obj) == 2:
        t, text = obj.get("t"), obj.get("text")
        if type(t) is float and t >= 0 and type(text) is str:
            return Chunk(t, text.encode("utf-8"))
    return None


def _read_chunks(path: str, offset: int, header_line: int, limit: int) -> Iterator[Chunk]:
    """The chunk lines, one generator over the file (the lines read here, as :func:`_lines`
    reads them: no generator layer per line)."""
    with _open(path) as f:
        f.seek(offset)
        last_t = 0.0
        ended = False
        line = header_line
        while raw := f.readline(limit + 1):
            line += 1
            if len(raw) > limit:
                raise InputError(path, f"line longer than the limit of {limit} bytes", line=line)
            if not raw.strip():
                continue
            if ended:
                raise InputError(path, "data after the end line", line=line)
            try:
                obj = _loads(path, raw, line)
            except InputError:
                if not raw.endswith(b"\n"):
                    return  # torn last line: the session's end (missing) already says so
                raise
            record = _common_chunk(obj) or _record(path, obj, line)
            if isinstance(record, StreamEnd):
                if record.at is not None and record.at < last_t:  # (time runs one way)
                    raise InputError(path, f"end time {record.at} is earlier than the last "
                                     f"chunk's {last_t}", line=line)
                ended = True
                continue
            if record.t < last_t:
                raise InputError(path, f"chunk time {record.t} is earlier than the previous "
                                 f"chunk's {last_t}", line=line)
            last_t = record.t
            yield record


def _last_line(f: IO[bytes], lo: int, hi: int, limit: int) -> tuple[int, bytes, bool] | None:
    """The last non-blank line in ``[lo, hi)``: (offset, bytes, torn), torn meaning no line end
    follows it. None if there is none or it is over ``limit`` (``chunks()`` says so).
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
        if end - pos > limit:
            return None
    if end is None or end - start > limit:
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


def _read_end(path: str, f: IO[bytes], lo: int, hi: int, limit: int) -> StreamEnd:
    found = _last_line(f, lo, hi, limit)
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
    if _too_deep(raw, obj):
        raise InputError(path, _DEEP, line=_line_at(f, start))
    try:
        return _parse_end(path, obj, None)
    except InputError as exc:
        raise InputError(path, exc.message, line=_line_at(f, start)) from None


def read_session(path: str, limit: int) -> Session:
    """Open a session file whose lines hold at most ``limit`` bytes (the same limit applies
    each time its chunks are read); see :func:`.session.open_session`."""
    with _open(path) as f:
        first = next(_lines(path, f, 0, limit), None)
        if first is None:
            raise InputError(path, "empty file")
        line, raw = first
        header = _parse_header(path, raw, line)
        body = f.tell()
        end = _read_end(path, f, body, os.fstat(f.fileno()).st_size, limit)
    return Session(header, lambda: _read_chunks(path, body, line, limit), end, path=path)
