"""The network subcommands of the command line: ``serve``, ``live`` and ``proxy``.

The servers and the client are in net/; the command line is here, with the rest of it
(tui/cli.py), as ``live`` and ``proxy`` open the debugger and the headless ones print its table.
``add_commands(subparsers)`` registers them on the main ``callscope`` parser; each parser gets
``handler=cmd_*`` as a default, and :data:`HANDLERS` maps the command names to the same
functions (``cmd(args, out) -> exit code``). Errors raised on purpose are
:class:`~callscope.core.errors.CallscopeError` (one line, exit 2, printed by the caller).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from ..core.errors import CallscopeError
from ..core.inert import plain
from ..core.tools import read_tools_file
from ..net.http1_server import HTTPServer

if TYPE_CHECKING:
    from ..net.live import LiveRequest, LiveResult


def _line_writer(out: TextIO) -> Callable[[str], None]:
    def write(line: str) -> None:
        from .table import inert

        out.write(inert(line, 300) + "\n")
        out.flush()
    return write


def _run(server: HTTPServer, banner: Callable[[str], list[str]], out: TextIO,
         *, until_stdin_closes: bool = False) -> int:
    """Serve until Ctrl-C or SIGTERM (or, ``until_stdin_closes``, the end of standard input:
    the debugger's relay stops when the debugger is gone, however it went)."""
    async def main() -> None:
        try:
            await server.start()
        except OSError as exc:
            raise CallscopeError(f"cannot listen on 127.0.0.1:{server.port}: "
                                 f"{exc.strerror or exc}") from None
        for line in banner(server.url):
            out.write(plain(line) + "\n")  # (session names are file names: untrusted text)
        out.flush()
        task = asyncio.current_task()
        if task is not None:  # SIGTERM stops as Ctrl-C does: streams in flight end their sessions
            def stop() -> None:  # once: a second cancel would cut the server's close short
                if not task.cancelling():
                    task.cancel()
            with contextlib.suppress(NotImplementedError, RuntimeError):
                asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop)
            if until_stdin_closes:
                _on_stdin_end(stop)
        await server.serve_forever()

    try:
        asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):  # how a server is meant to stop
        out.write("stopped\n")
    return 0


def _on_stdin_end(stop: Callable[[], None]) -> None:
    """Call ``stop`` in the loop once standard input ends (read in a thread: it holds no lock
    while it waits)."""
    import sys
    import threading

    loop = asyncio.get_running_loop()

    def watch() -> None:
        with contextlib.suppress(OSError, ValueError):
            while sys.stdin.buffer.read(4096):
                pass
        with contextlib.suppress(RuntimeError):  # the loop already closed
            loop.call_soon_threadsafe(stop)
    threading.Thread(target=watch, name="callscope-stdin", daemon=True).start()


# -- serve -------------------------------------------------------------------------------------

def serve_faults(args: argparse.Namespace) -> Any:
    from ..net.serve_faults import Faults, check_faults, parse_faults

    flags = Faults(cut=args.cut, frames=args.frames, end=args.end, hold=args.hold,
                   chunk=args.chunk, delay=args.delay, speed=args.speed, rate=args.rate,
                   status=args.status, body=args.error_body, quirk=args.quirk)
    spec = parse_faults(args.fault) if args.fault else Faults()
    return check_faults(spec.merged(flags))


def cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    from ..net.serve import Emulator, make_server
    from ..net.serve_sessions import load

    sessions = [load(path) for path in args.sessions]
    emulator = Emulator(sessions, serve_faults(args), log=_line_writer(out))

    def banner(url: str) -> list[str]:
        return [f"callscope serve: listening on {url}", *(
            f"  {i}. {s.name} ({s.protocol}, {s.size} B, end={s.end.kind})"
            for i, s in enumerate(sessions, 1))]

    return _run(make_server(emulator, args.port), banner, out)


# -- live --------------------------------------------------------------------------------------

def live_request(args: argparse.Namespace) -> LiveRequest:
    """The request ``live`` sends: built from the options, or captured (``--request``)."""
    from ..net.live import build_request

    if args.request:
        from ..net.resend import request_from_file

        if args.prompt or args.system or args.tool_choice or args.tools:
            raise CallscopeError("--request sends the captured request as it was: no PROMPT, "
                                 "--system, --tool-choice or --tools with it")
        return request_from_file(args.request, provider=args.provider, base_url=args.base_url,
                                 headers=args.header)
    if not (args.prompt and args.provider and args.model):
        raise CallscopeError("live needs --provider, --model and a PROMPT (or --request FILE)")
    return build_request(args.provider, args.model, " ".join(args.prompt),
                         tools=read_tools_file(args.tools) if args.tools else [],
                         base_url=args.base_url, max_tokens=args.max_tokens, system=args.system,
                         tool_choice=args.tool_choice, headers=args.header,
                         api_version=args.api_version)


def cmd_live(args: argparse.Namespace, out: TextIO) -> int:
    from ..net.live import default_path

    request = live_request(args)
    path = args.output or default_path(request.protocol)
    if args.headless:
        return _live_table(request, path, args.timeout, out)
    from ..core.session import redact_url
    from .cli_inputs import saved_keymap
    from .live import LiveApp

    app = LiveApp(request, path, timeout=args.timeout, keymap=saved_keymap(),
                  note=f"live {request.protocol} {redact_url(request.url)}; recording to {path}")
    app.run()
    result = app.wait()
    if result is None:
        raise CallscopeError(f"the recording failed: {app.failure or 'it did not finish'}")
    _live_report(result, out)
    return 0 if result.ok else 1


def _live_table(request: LiveRequest, path: str, timeout: float, out: TextIO) -> int:
    """``live --headless``: the engine's table on stdout as the bytes arrive."""
    from ..core.engine import Engine
    from ..core.records import turn_record
    from ..core.session import Chunk, redact_url
    from ..core.tools import ToolSet
    from ..net.live import record
    from .table import TableWriter

    engine = Engine(request.protocol, ToolSet(request.tools, request=request.body))
    table = TableWriter(out, f"live {request.protocol} {redact_url(request.url)}")

    def on_chunk(chunk: Chunk) -> None:
        for step in engine.feed(chunk.data, chunk.t):
            table.step(step, engine.pipeline)
        out.flush()

    def terminated(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # ends the session as interrupted, with its time, then exits

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        result = record(request, path, on_chunk=on_chunk, timeout=timeout)
    finally:
        signal.signal(signal.SIGTERM, previous)
    for step in engine.close():
        table.step(step, engine.pipeline)
    table.turn(turn_record(engine.pipeline))
    _live_report(result, out)
    return 0 if result.ok else 1


def _live_report(result: LiveResult, out: TextIO) -> None:
    """How the stream ended, what httpx-sse thought of it, where the session is."""
    from .table import inert

    end = result.end
    if end.kind == "http_error":
        body = (end.body or b"").decode("utf-8", "replace")
        out.write(f"-- HTTP {end.status}: {inert(body, 300)}\n")
    took = f", {end.at:.2f} s" if end.at is not None else ""
    detail = f" ({inert(end.detail, 200)})" if end.detail else ""
    out.write(f"-- stream: {end.kind}{detail}, {result.size} B in {result.chunks} chunks{took}\n")
    if result.content_encoding:
        beside = (f"; the decoded stream is in {inert(result.decoded_path, 200)}"
                  if result.decoded_path else "; callscope cannot decode it")
        out.write(f"-- note: the body came compressed ({inert(result.content_encoding, 40)}); "
                  f"the session holds the compressed bytes{beside}\n")
    for problem in result.disagreements:
        out.write(f"-- httpx-sse disagrees: {inert(problem, 200)}\n")
    out.write(f"wrote {plain(result.path)}\n")


# -- proxy -------------------------------------------------------------------------------------

def cmd_proxy(args: argparse.Namespace, out: TextIO) -> int:
    from ..core.session import redact_url
    from ..net.proxy import RecordingProxy, make_server

    if not args.headless:
        return _proxy_tui(args, out)
    if args.events:
        return _proxy_events(args)
    proxy = RecordingProxy(args.upstream, args.dir, timeout=args.timeout, log=_line_writer(out),
                           redact=tuple(args.redact_header))

    def banner(url: str) -> list[str]:
        return [f"callscope proxy: listening on {url} -> {redact_url(proxy.upstream)}",
                f"  streamed responses are recorded in {args.dir}"]

    return _run(make_server(proxy, args.port), banner, out)


def _proxy_events(args: argparse.Namespace) -> int:
    """The debugger's relay (its child process): capture facts as JSON lines on stdout."""
    import io
    import sys

    from ..net.proxy import RecordingProxy, make_server
    from ..net.relay_events import EventPipe

    sys.stdout.flush()
    pipe = EventPipe(sys.stdout.fileno())
    proxy = RecordingProxy(args.upstream, args.dir, timeout=args.timeout, log=pipe.log,
                           observer=pipe, redact=tuple(args.redact_header))

    def banner(url: str) -> list[str]:
        pipe.listening(url)
        return []

    try:
        return _run(make_server(proxy, args.port), banner, io.StringIO(), until_stdin_closes=True)
    finally:
        pipe.close()


def _proxy_tui(args: argparse.Namespace, out: TextIO) -> int:
    """The proxy with its captures list in the debugger; after it, one line per capture."""
    from .captures import ProxyApp
    from .cli_inputs import saved_keymap
    from .table import inert

    app = ProxyApp(args.upstream, args.dir, port=args.port, timeout=args.timeout,
                   redact=tuple(args.redact_header), yield_cpu=True, keymap=saved_keymap())
    app.run()
    app.wait_relay()
    if app.error is not None:
        raise CallscopeError(app.error)
    for capture in app.captures.values():
        end = capture.timeline.end
        out.write(f"{inert(capture.path, 200)}: {inert(capture.label, 200)}, "
                  f"{capture.size} B, {end.kind if end else 'cut when the proxy stopped'}\n")
    out.write(f"{len(app.captures)} capture(s) in {inert(args.dir, 200)}\n")
    return 0


# -- parsing -----------------------------------------------------------------------------------

def _count(text: str) -> int:
    if not (text.isascii() and text.isdigit()):
        raise argparse.ArgumentTypeError(f"not a count: {text!r}")
    return int(text)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text!r}")
    return value


def _header(text: str) -> tuple[str, str]:
    """``NAME:VALUE`` (``--header``), the name a header token and neither part a line break."""
    import re

    name, colon, value = text.partition(":")
    if not colon or not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name.strip()) or (
            "\r" in value or "\n" in value):
        raise argparse.ArgumentTypeError(f"not a NAME:VALUE header: {text[:60]!r}")
    return name.strip(), value.strip()


def _port(text: str) -> int:
    value = _count(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"not a port: {text!r}")
    return value


def add_commands(sub: Any) -> None:
    """Register ``serve``, ``live`` and ``proxy`` on an ``add_subparsers()`` object."""
    from ..net.live import PROVIDER_NAMES
    from ..net.serve_faults import ENDINGS

    p = sub.add_parser("serve", help="emulate providers: stream sessions, with faults on request")
    p.add_argument("sessions", nargs="+", metavar="SESSION")
    p.add_argument("--port", type=_port, default=0, help="default: a free port (printed)")
    p.add_argument("--fault", metavar="SPEC", help="default faults, e.g. cut=120,end=reset")
    p.add_argument("--cut", type=_count, metavar="BYTES", help="end each body after BYTES")
    p.add_argument("--frames", type=_count, metavar="N", help="end each body after N frames")
    p.add_argument("--end", choices=sorted(ENDINGS), help="how a cut body ends (default close)")
    p.add_argument("--hold", type=_seconds, metavar="S", help="how long a stall lasts")
    p.add_argument("--chunk", type=_count, metavar="N", help="re-chunk into N-byte pieces")
    p.add_argument("--delay", type=_seconds, metavar="S", help="fixed delay between chunks")
    p.add_argument("--speed", type=float, metavar="F", help="recorded timing / F (inf: none)")
    p.add_argument("--rate", type=float, metavar="N",
                   help="N SSE events a second (replaces the recorded timing)")
    p.add_argument("--status", type=_count, metavar="CODE", help="answer with an HTTP error")
    p.add_argument("--error-body", metavar="TEXT", help="the body of that error")
    p.add_argument("--quirk", metavar="NAME", help="rewrite each stream into a shape a real "
                   "system sends (README: the quirk list; per request: quirk=NAME)")
    p.set_defaults(handler=cmd_serve)

    p = sub.add_parser("live", help="send one streaming request, read and record it")
    p.add_argument("prompt", nargs="*", metavar="PROMPT")
    p.add_argument("--provider", choices=PROVIDER_NAMES,
                   help="azure: Azure OpenAI (AZURE_OPENAI_API_KEY, AZURE_OPENAI_ENDPOINT; "
                        "--model is the deployment)")
    p.add_argument("--model")
    p.add_argument("--request", metavar="FILE",
                   help="send again the request captured in a session or HAR (FILE.har#N); "
                        "credentials come from the environment")
    p.add_argument("--header", action="append", default=[], type=_header, metavar="NAME:VALUE",
                   help="add a header (gateways, x-callscope-fault; repeatable)")
    p.add_argument("--system", metavar="TEXT", help="a system prompt")
    p.add_argument("--tool-choice", metavar="CHOICE",
                   help="auto, none, required, or a tool's name")
    p.add_argument("--api-version", metavar="V", help="Azure's api-version (default "
                   "OPENAI_API_VERSION, else 2024-10-21)")
    p.add_argument("--tools", metavar="FILE", help="a JSON list of tool definitions")
    p.add_argument("-o", "--output", metavar="SESSION", help="default: ./live-PROTOCOL-TIME.jsonl")
    p.add_argument("--base-url", metavar="URL", help="override the provider's base URL")
    p.add_argument("--max-tokens", type=_count, default=1024, help="Anthropic max_tokens")
    p.add_argument("--timeout", type=_seconds, default=120.0, metavar="S",
                   help="read timeout (default 120)")
    p.add_argument("--headless", action="store_true",
                   help="no debugger: print the engine's table as the bytes arrive")
    p.set_defaults(handler=cmd_live)

    p = sub.add_parser("proxy", help="a recording reverse proxy in front of a provider")
    p.add_argument("--upstream", required=True, metavar="URL")
    p.add_argument("--port", type=_port, default=0, help="default: a free port (printed)")
    p.add_argument("--dir", default="captures", help="where sessions go (default ./captures)")
    p.add_argument("--timeout", type=_seconds, default=600.0, metavar="S",
                   help="upstream read timeout (default 600)")
    p.add_argument("--redact-header", action="append", default=[], metavar="NAME",
                   help="also redact this header (and query parameter) in sessions and logs; "
                        "names containing auth, key, token, secret, signature, cookie, session "
                        "or credential always are (repeatable)")
    p.add_argument("--headless", action="store_true",
                   help="no debugger: log one line per request on stdout")
    p.add_argument("--events", action="store_true", help=argparse.SUPPRESS)  # the debugger's relay
    p.set_defaults(handler=cmd_proxy)


HANDLERS: dict[str, Callable[[argparse.Namespace, TextIO], int]] = {
    "serve": cmd_serve, "live": cmd_live, "proxy": cmd_proxy}
