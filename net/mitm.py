"""A mitmproxy addon: each streamed LLM response mitmproxy sees becomes a callscope session.

For users who already run mitmproxy, or need what ``callscope proxy`` does not do (forward
mode with TLS interception, HTTP/2, many hosts)::

    mitmdump -s "$(python -c 'import callscope.net.mitm as m; print(m.__file__)')" \
        --set callscope_dir=captures

Options: ``callscope_dir`` (where
sessions go, default ``captures``) and ``callscope_redact`` (more header and query parameter
names to redact, comma-separated; credentials by name pattern always are).

The addon is duck-typed over mitmproxy's hook arguments (``flow.request.method``,
``.pretty_url``, ``.path``, ``.headers.fields``, ``.content``; ``flow.response.status_code``,
``.headers``, ``.stream``; ``flow.error.msg``) and imports nothing from mitmproxy, so its logic is
tested with plain objects in the suite and under a real ``mitmdump`` where mitmproxy is
installed (``tests/test_net_mitm.py``). It imports no HTTP library of callscope's either:
mitmproxy 11 (the newest for Python 3.11) pins h11 < 0.15, which the proxy's h11 >= 0.16 rules
out, so in that environment the addon must load without them.

Recording: at ``responseheaders`` a stream response (or an HTTP error answering a streaming
request) opens a session and sets ``flow.response.stream`` to a callback that records each
chunk with its time, as mitmproxy forwards it, unchanged. The end of the body ends the session
as clean; ``error`` (a reset, a cut, a client gone) ends it as cut with mitmproxy's message, every
byte received kept.
"""

from __future__ import annotations

import importlib
import itertools
import os
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

# Absolute imports: ``mitmdump -s`` loads this file as a script, outside its package.
from callscope.core.redact import redact_headers, redact_url
from callscope.core.session import Chunk, SessionHeader, SessionWriter, StreamEnd
from callscope.net.capture_rules import is_stream, protocol_for_path, request_record, wants_stream

MAX_ERROR_BODY = 1024 * 1024
_STATE = "callscope"
"""The key of the addon's state in ``flow.metadata``."""


def _pairs(headers: Any) -> list[tuple[str, str]]:
    """mitmproxy's ``Headers`` (``.fields``: raw (name, value) byte pairs) as text pairs."""
    fields = getattr(headers, "fields", None)
    if fields is not None:
        return [(bytes(k).decode("latin-1"), bytes(v).decode("latin-1")) for k, v in fields]
    return [(str(k), str(v)) for k, v in dict(headers).items()]


class _Capture:
    """One recorded response: its writer, its clock, and what an error body keeps."""

    def __init__(self, writer: SessionWriter, start: float, status: int) -> None:
        self.writer, self.start, self.status = writer, start, status
        self.error_body = bytearray()
        self.finished = False

    def now(self) -> float:
        return max(0.0, time.monotonic() - self.start)

    def chunk(self, data: bytes) -> None:
        if self.status >= 400:
            self.error_body.extend(data[:MAX_ERROR_BODY - len(self.error_body)])
        else:
            self.writer.write(Chunk(self.now(), data))

    def finish(self, end: StreamEnd) -> None:
        if self.finished:
            return
        self.finished = True
        if self.status >= 400:
            end = StreamEnd("http_error", status=self.status, body=bytes(self.error_body),
                            detail=None if end.kind == "clean" else end.detail, at=end.at)
        self.writer.finish(end)


class CallscopeAddon:
    """The addon; ``directory`` and ``redact`` as the options set them."""

    def __init__(self, directory: str = "captures", redact: Iterable[str] = (),
                 log: Callable[[str], object] | None = None) -> None:
        self.directory = directory
        self.redact = tuple(redact)
        self.log = log or (lambda line: None)
        self._numbers = itertools.count(1)

    # -- mitmproxy's option hooks ----------------------------------------------------------------

    def load(self, loader: Any) -> None:
        loader.add_option("callscope_dir", str, self.directory, "Where callscope sessions go.")
        loader.add_option("callscope_redact", str, "",
                          "More header/query names to redact (comma-separated).")

    def configure(self, updated: Any) -> None:
        options = importlib.import_module("mitmproxy").ctx.options
        self.directory = options.callscope_dir
        self.redact = tuple(n.strip() for n in options.callscope_redact.split(",") if n.strip())

    # -- the flow hooks ----------------------------------------------------------------------------

    def requestheaders(self, flow: Any) -> None:
        flow.metadata[f"{_STATE}.start"] = time.monotonic()
        flow.metadata[f"{_STATE}.recorded_at"] = datetime.now(UTC).isoformat(
            timespec="milliseconds")

    def responseheaders(self, flow: Any) -> None:
        request, response = flow.request, flow.response
        headers = _pairs(response.headers)
        content_type = next((v for k, v in headers if k.lower() == "content-type"), "")
        accept = next((v for k, v in _pairs(request.headers) if k.lower() == "accept"), None)
        body = request.content or b""
        status = int(response.status_code)
        if not (is_stream(content_type) or (status >= 400 and wants_stream(
                request.path, accept, body))):
            return
        capture = self._open(flow, headers, status)
        flow.metadata[_STATE] = capture

        def stream(data: bytes) -> bytes:
            if data:
                capture.chunk(data)
            else:  # the end of the body
                capture.finish(StreamEnd("clean", at=capture.now()))
                self.log(f"callscope: {capture.writer.path} clean")
            return data
        response.stream = stream

    def response(self, flow: Any) -> None:
        capture = flow.metadata.get(_STATE)
        if isinstance(capture, _Capture):
            capture.finish(StreamEnd("clean", at=capture.now()))

    def error(self, flow: Any) -> None:
        capture = flow.metadata.get(_STATE)
        if isinstance(capture, _Capture):
            message = str(getattr(flow.error, "msg", flow.error))[:300]
            kind = "reset" if "reset" in message.lower() else "cut"
            capture.finish(StreamEnd(kind, detail=f"mitmproxy: {message}", at=capture.now()))
            self.log(f"callscope: {capture.writer.path} {kind}")

    # -- sessions ----------------------------------------------------------------------------------

    def _open(self, flow: Any, headers: list[tuple[str, str]], status: int) -> _Capture:
        request = flow.request
        protocol = protocol_for_path(request.path.split("?", 1)[0])
        os.makedirs(self.directory, exist_ok=True)
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        path = os.path.join(self.directory, f"{os.getpid()}-{next(self._numbers):04d}-{stamp}-"
                                            f"{protocol or 'stream'}.jsonl")
        encoding = next((v for k, v in headers if k.lower() == "content-encoding"), "identity")
        extra = {} if encoding.lower() in ("", "identity") else {"content_encoding": encoding}
        header = SessionHeader(
            protocol=protocol, source="mitmproxy",
            recorded_at=flow.metadata.get(f"{_STATE}.recorded_at"),
            provenance=f"callscope mitmproxy addon, {redact_url(request.pretty_url, self.redact)}",
            request=request_record(request.method, request.pretty_url, _pairs(request.headers),
                                   request.content or b"", self.redact),
            status=status, response_headers=redact_headers(headers, self.redact), extra=extra)
        start = flow.metadata.get(f"{_STATE}.start", time.monotonic())
        return _Capture(SessionWriter(path, header), start, status)


addons = [CallscopeAddon()]
"""What ``mitmdump -s`` loads."""
