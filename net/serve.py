"""``callscope serve``: a provider emulator that streams recorded sessions, with faults on request.

This module routes: a request to a provider endpoint gets a loaded session
(:mod:`.serve_sessions`) whose protocol matches the endpoint, in turn or by name, under the
faults the command line sets and the request adds (:mod:`.serve_faults`), sent by
:mod:`.serve_stream`. Faults come per request from the ``x-callscope-fault`` header or the
``callscope-fault`` query parameter, a session by name from ``x-callscope-session`` or
``callscope-session``. A request the emulator cannot serve (no endpoint, a bad fault spec, not a
streaming request, no such session) gets a provider-shaped JSON error and a log line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import orjson

from ..core.errors import CallscopeError
from ..core.providers import SPECS
from ..core.session import redact_url
from .capture_rules import protocol_for_path
from .http1 import Request
from .http1_response import Responder
from .http1_server import HTTPServer
from .serve_faults import FaultError, Faults, check_faults, parse_faults
from .serve_quirks import QuirkError, quirked
from .serve_sessions import Loaded
from .serve_stream import stream_session

FAULT_HEADER = "x-callscope-fault"
FAULT_PARAM = "callscope-fault"
SESSION_HEADER = "x-callscope-session"
SESSION_PARAM = "callscope-session"
_NO_FAULTS = Faults()


def _stem(name: str) -> str:
    return name.split(".", 1)[0]


class Emulator:
    """The request handler of ``callscope serve``. Sessions of one protocol are served in turn
    (round robin), so an agent loop gets its recorded turns in order."""

    def __init__(self, sessions: Sequence[Loaded], defaults: Faults = _NO_FAULTS,
                 log: Callable[[str], None] | None = None) -> None:
        if not sessions:
            raise CallscopeError("serve needs at least one session")
        self.sessions = list(sessions)
        self.defaults = check_faults(defaults)
        self.log = log or (lambda line: None)
        self._turns: dict[str, int] = {}

    def named(self, name: str, protocol: str | None) -> list[Loaded]:
        """The sessions ``name`` (an index, a file name or a stem) names, those of the
        endpoint's ``protocol`` first: names are unique per protocol, not across them."""
        found = [s for i, s in enumerate(self.sessions, 1) if name in (str(i), s.name, _stem(s.name))]
        return sorted(found, key=lambda s: s.protocol != protocol)

    def pick(self, protocol: str | None, name: str | None) -> Loaded | None:
        """The session to serve at an endpoint of ``protocol``: the one named (of that
        protocol only), or the next of that protocol in turn."""
        if name:
            return next((s for s in self.named(name, protocol) if s.protocol == protocol), None)
        matching = [s for s in self.sessions if s.protocol == protocol]
        if not matching:
            return None
        turn = self._turns.get(protocol or "", 0)
        self._turns[protocol or ""] = turn + 1
        return matching[turn % len(matching)]

    async def handle(self, request: Request, out: Responder) -> None:
        where = f"{request.method} {redact_url(request.target)}"
        if request.method == "GET" and request.path in ("/", "/callscope"):
            await self._index(out)
            return
        protocol = protocol_for_path(request.path)
        if protocol is None:
            await self._error(out, where, 404, f"no endpoint {request.path[:80]!r}", logged="",
                              kind="not_found")
            return
        try:
            faults = self.defaults
            for spec in (request.header(FAULT_HEADER), *request.query.get(FAULT_PARAM, ())):
                if spec:
                    faults = faults.merged(parse_faults(spec))
        except FaultError as exc:
            await self._error(out, where, 400, str(exc))
            return
        problem = _not_streaming(request, protocol)
        if problem:
            await self._error(out, where, 400, problem)
            return
        name = (request.header(SESSION_HEADER) or next(iter(request.query.get(SESSION_PARAM, ())),
                                                        None) or faults.session)
        session = self.pick(protocol, name)
        if session is None:
            await self._no_session(out, where, protocol, name)
            return
        try:
            session = quirked(session, faults.quirk)
        except QuirkError as exc:
            await self._error(out, where, 400, str(exc))
            return
        result = "stopped"  # what the log says if the server is closed mid-stream
        try:
            result = await stream_session(session, faults, out)
        except (ConnectionError, OSError):
            result = f"the client went away after {out.bytes_sent} B"
            raise
        finally:
            self.log(f"{where} -> {session.name} ({session.protocol}): {result}")

    async def _no_session(self, out: Responder, where: str, protocol: str,
                          name: str | None) -> None:
        others = self.named(name, protocol) if name else []
        if others:  # named, but of another protocol: serving it here would mislead the client
            other = others[0]
            message = (f"session {name!r} is {other.protocol}, not {protocol}: this endpoint "
                       f"serves {protocol} sessions only")
            await self._error(out, where, 409, message)
            return
        loaded = ", ".join(f"{s.name} ({s.protocol})" for s in self.sessions)
        what = f"{protocol} session {name!r}" if name else f"{protocol} session"
        await self._error(out, where, 404, f"no {what}; loaded: {loaded}", logged=f"no {what}",
                          kind="not_found")

    async def _error(self, out: Responder, where: str, status: int, message: str, *,
                     logged: str | None = None, kind: str = "invalid_request_error") -> None:
        """A request not served: a JSON error in the providers' shape, and a log line that
        says why (``logged``, the message unless given; empty: the status alone)."""
        logged = message if logged is None else logged
        self.log(f"{where} -> {status}" + (f" ({logged})" if logged else ""))
        await out.send_full(status, [("content-type", "application/json")], orjson.dumps(
            {"error": {"message": f"callscope serve: {message}", "type": kind}}))

    async def _index(self, out: Responder) -> None:
        lines = ["callscope serve: sessions", *(
            f"{i}. {s.name}  {s.protocol}  {s.size} B  end={s.end.kind}"
            for i, s in enumerate(self.sessions, 1))]
        await out.send_full(200, [("content-type", "text/plain; charset=utf-8")],
                            ("\n".join(lines) + "\n").encode())


def _not_streaming(request: Request, protocol: str) -> str | None:
    """Why the request does not ask for a stream (the emulator only streams), or None. How a
    request asks is the protocol's spec's: a query switch, a route that always streams or a
    ``"stream"`` member that defaults to true, else ``"stream": true``."""
    if request.method != "POST":
        return f"{request.method} is not supported here; POST a streaming request"
    spec = SPECS.get(protocol)
    switch = spec.stream_query if spec is not None else None
    if switch is not None:
        name, value = switch
        return None if value in request.query.get(name, []) else \
            f"add ?{name}={value} (the emulator streams SSE only)"
    try:
        body = orjson.loads(request.body) if request.body else {}
    except orjson.JSONDecodeError:
        return "the request body is not JSON"
    if isinstance(body, dict) and body.get("stream", spec is not None and spec.stream_default) \
            is not True:
        return 'the emulator only streams: set "stream": true'
    return None


def make_server(emulator: Emulator, port: int = 0) -> HTTPServer:
    return HTTPServer(emulator.handle, port=port, log=emulator.log)
