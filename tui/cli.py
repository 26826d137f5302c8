"""The ``callscope`` command line.

``callscope [INPUT]`` opens the debugger (a bundled demo session without INPUT);
``callscope replay``, ``check`` and ``import`` are the headless commands. Every error the engine
raises on purpose (a broken file, a bad flag value) becomes one line on stderr and exit code 2;
``check`` exits 1 when the proof fails.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

import orjson

from ..core.errors import CallscopeError, InputError
from ..core.inert import json_safe, plain
from ..core.limits import DEFAULT_LIMITS, Limits
from ..core.providers import PROTOCOLS
from ..core.replay import Chunking, TimedBytes
from ..core.tools import ToolSet, read_tools_file, tools_from_request

DEMO_SESSION = "demo.jsonl"
COMMANDS = ("replay", "check", "import", "open", "diff", "serve", "live", "proxy")


def sessions_dir() -> Path:
    """The bundled sessions (beside the package in a checkout; installed as package data)."""
    here = Path(__file__).resolve().parent.parent / "sessions"
    if here.is_dir():
        return here
    from importlib import resources  # (here: it costs every command's start-up ~20 ms)

    return Path(str(resources.files("callscope") / "sessions"))


# -- inputs ------------------------------------------------------------------------------------

class LoadedInput:
    """One input file: its chunks (kept lazy), and what its header says."""

    def __init__(self, path: str) -> None:
        from ..core.session import open_input

        self.path = path
        self.session = open_input(path)
        self._noted = False
        header = self.session.header
        self.protocol: str | None = getattr(header, "protocol", None)
        if self.protocol is not None and self.protocol not in PROTOCOLS:
            raise InputError(path, f"unknown protocol {self.protocol!r} in the session header "
                                   f"(one of: {', '.join(PROTOCOLS)})", line=1)
        definitions = list(getattr(header, "tools", None) or [])
        request = getattr(header, "request", None) or {}
        if not definitions and isinstance(request, dict):
            definitions = tools_from_request(request.get("body"))
        self.tool_definitions = definitions

    def chunks(self) -> Iterator[TimedBytes]:
        for chunk in self.session.chunks():
            yield chunk.t, chunk.data
        self.note()  # (once every chunk was read: an error in the file says more than the note)

    def note(self) -> None:
        """Say once, on stderr, that the recording stopped before its end line (it is read as
        a cut stream, which it is), and which line of it was cut short, if one was."""
        end = self.session.end
        if end.kind == "missing" and end.detail and not self._noted:
            self._noted = True
            print(f"callscope: note: {plain(self.path)}: {plain(end.detail)}", file=sys.stderr)

    def held(self, limit: int) -> list[TimedBytes]:
        """Every chunk in memory (check and the debugger need them all), up to ``limit`` bytes."""
        chunks, size = [], 0
        for t, data in self.chunks():
            size += len(data)
            if size > limit:
                raise InputError(self.path, f"larger than {limit} bytes, the most check and the "
                                            f"debugger hold in memory (--max-session-bytes; "
                                            f"replay streams any size)")
            chunks.append((t, data))
        return chunks


def load_tools(path: str | None) -> list[dict[str, Any]] | None:
    return None if path is None else read_tools_file(path)


def toolset_for(loaded: LoadedInput, override: list[dict[str, Any]] | None) -> ToolSet:
    try:
        return ToolSet(override if override is not None else loaded.tool_definitions)
    except CallscopeError as exc:
        raise InputError(loaded.path, f"tool definitions: {exc}") from None


def limits_from(args: argparse.Namespace) -> Limits:
    return Limits(max_block_bytes=args.max_frame_bytes, max_calls=args.max_calls,
                  max_argument_chars=args.max_argument_chars,
                  max_session_bytes=args.max_session_bytes,
                  max_anomalies_per_code=args.max_anomalies_per_code,
                  max_text_chars=args.max_text_chars,
                  max_argument_depth=args.max_argument_depth,
                  max_undetected_frames=args.max_undetected_frames)


def protocol_for(loaded: LoadedInput, flag: str | None) -> str | None:
    """``--protocol`` wins, then the session header; None means detect from the stream."""
    return flag or loaded.protocol


# -- commands ----------------------------------------------------------------------------------

def cmd_replay(args: argparse.Namespace, out: TextIO) -> int:
    from ..core.ending import EndingWatch
    from ..core.engine import ChunkStep, Engine, FrameStep
    from ..core.records import chunk_record, step_record, turn_record
    from ..core.replay import replay, replay_outcome
    from .table import TableWriter

    chunking = Chunking.parse(args.chunking)
    override = load_tools(args.tools)
    broken = 0
    for path in args.inputs:
        try:
            loaded = LoadedInput(path)
            engine = Engine(protocol_for(loaded, args.protocol), toolset_for(loaded, override),
                            limits_from(args))
            table = None if args.json else TableWriter(out, path)
            watch = EndingWatch()
            if args.summary:  # the outcome only: no step is made
                replay_outcome(loaded.chunks(), engine, watch, chunking=chunking,
                               cut_at=args.cut_at)
            for step in () if args.summary else replay(
                    loaded.chunks(), chunking=chunking, cut_at=args.cut_at, engine=engine):
                if isinstance(step, ChunkStep):
                    watch.chunk(step.end, step.t)
                elif isinstance(step, FrameStep):
                    watch.frame(step.frame)
                if args.json:
                    record = (chunk_record(step) if args.chunks else None) if isinstance(
                        step, ChunkStep) else step_record(step, engine.pipeline)
                    if record is not None:
                        _write_json(out, record, path)
                else:
                    assert table is not None
                    table.step(step, engine.pipeline)
        except CallscopeError as exc:  # one broken input: said, and the others still read
            out.flush()
            print(f"callscope: {plain(str(exc))}", file=sys.stderr)
            broken += 1
            continue
        turn = turn_record(engine.pipeline, _ending(loaded, args.cut_at, watch, engine.state))
        if args.json:
            _write_json(out, turn, path)
        else:
            assert table is not None
            table.turn(turn)
    return 2 if broken else 0


def _ending(loaded: LoadedInput, cut_at: int | None, watch: Any, state: Any) -> Any:
    """The input's ending: the recorded transport end, or the cut asked for."""
    from ..core.ending import transport_of

    end = loaded.session.end
    cut = f"--cut-at {cut_at}" if cut_at is not None and (
        cut_at < watch.received or end.kind == "clean") else None
    return watch.ending(state, *transport_of(end, cut))


def _write_json(out: TextIO, record: dict[str, Any], source: str) -> None:
    record = {"kind": record["kind"], "source": source, **record}
    out.write(json_safe(orjson.dumps(record, option=orjson.OPT_NON_STR_KEYS).decode()))
    out.write("\n")


def cmd_check(args: argparse.Namespace, out: TextIO) -> int:
    from ..core.check import check_input

    override = load_tools(args.tools)
    if args.harness is not None:  # the user's harness under test (tui/harness_check.py)
        from .harness_check import cmd_check_harness

        args.tool_definitions = override
        return cmd_check_harness(args, out, limits_from(args))
    failed = broken = 0
    for path in args.inputs:
        try:
            loaded = LoadedInput(path)
            report = check_input(path, loaded.held(args.max_session_bytes),
                                 protocol=protocol_for(loaded, args.protocol),
                                 tools=toolset_for(loaded, override),
                                 seeds=range(1, args.seeds + 1), limits=limits_from(args))
        except CallscopeError as exc:  # one broken input: said, and the others still checked
            out.flush()
            print(f"callscope: {plain(str(exc))}", file=sys.stderr)
            broken += 1
            continue
        tools = toolset_for(loaded, override)
        note = "" if tools.tools else (
            "; no tool definitions (pass --tools FILE): every call is refused as unknown_tool, so "
            "this proves no call runs early, not that the gate lets a whole call run")
        out.write(report.verdict() + note + "\n")
        failed += not report.ok
    return 2 if broken else 1 if failed else 0


def cmd_diff(args: argparse.Namespace, out: TextIO) -> int:
    """Exit 1 when the calls differ (endings alone are said, exit 0); ``--open`` shows them."""
    from ..core.diff import diff, read_side

    override = load_tools(args.tools)
    sides = []
    for path in (args.a, args.b):
        loaded = LoadedInput(path)
        sides.append(read_side(path, loaded.held(args.max_session_bytes),
                               protocol=protocol_for(loaded, args.protocol),
                               tools=toolset_for(loaded, override), end=loaded.session.end))
    report = diff(*sides, ignore_ids=args.ignore_ids)
    if args.open:
        from .diff_view import DiffApp

        DiffApp(report).run()
    else:
        for line in report.lines():
            out.write(line + "\n")
    return 1 if report.calls_differ else 0


def cmd_import(args: argparse.Namespace, out: TextIO) -> int:
    from ..core.session import save_session

    loaded = LoadedInput(args.input)
    header = loaded.session.header
    if args.provenance:
        header = _with(header, provenance=args.provenance)
    if args.protocol:
        header = _with(header, protocol=args.protocol)
    if args.tools:  # checked now (a session must not carry definitions no replay can load)
        definitions = load_tools(args.tools) or []
        try:
            ToolSet(definitions)
        except CallscopeError as exc:
            raise InputError(args.tools, f"tool definitions: {exc}") from None
        header = _with(header, tools=definitions)
    save_session(args.output, header, loaded.session.chunks(), loaded.session.end)
    loaded.note()
    out.write(f"wrote {args.output}\n")
    return 0


def _with(header: Any, **changes: Any) -> Any:
    import dataclasses

    return dataclasses.replace(header, **changes)


def load_keymap(path: str | None) -> dict[str, str] | None:
    """A JSON object of binding id -> keys, e.g. {"callscope.cut": "ctrl+x"} (ids in f1 help)."""
    if path is None:
        return None
    try:
        value = orjson.loads(Path(path).read_bytes())
    except OSError as exc:
        raise InputError(path, exc.strerror or "cannot read") from None
    except orjson.JSONDecodeError as exc:
        raise InputError(path, f"not JSON ({exc})") from None
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise InputError(path, 'expected a JSON object of binding id -> keys')
    from .commands import BINDINGS

    known = {getattr(b, "id", None) for b in BINDINGS}
    unknown = sorted(k for k in value if k not in known)
    if unknown:  # (a typo would otherwise leave the key where it was, without a word)
        raise InputError(path, f"unknown binding id {unknown[0]!r}: the ids are in the f1 help, "
                               "e.g. 'callscope.cut'")
    return value


def saved_keymap() -> dict[str, str] | None:
    """The keymap saved by an earlier --keymap, its unknown binding ids left out."""
    from . import settings
    from .commands import BINDINGS

    known = {getattr(b, "id", None) for b in BINDINGS}
    return {k: v for k, v in settings.saved_keymap().items() if k in known} or None


def cmd_open(args: argparse.Namespace, out: TextIO) -> int:
    from .app import CallscopeApp

    note = None
    path = args.input
    if path is None:
        path = str(sessions_dir() / DEMO_SESSION)
        note = ("Bundled demo session. Open your own: callscope FILE (.jsonl session, .sse capture "
                "or .har); more demos in " + str(sessions_dir()))
    keymap = load_keymap(args.keymap)
    if keymap is not None:  # given: kept for the next run
        from . import settings

        settings.save(keymap=keymap)
    else:
        keymap = saved_keymap()
    if Path(path).is_dir():  # a folder: its sessions listed, any of them opened
        from .folder import FolderApp

        override = load_tools(args.tools)
        FolderApp(path, protocol=args.protocol, keymap=keymap,
                  tools=ToolSet(override) if override is not None else None).run()
        return 0
    loaded = LoadedInput(path)
    CallscopeApp(loaded.held(args.max_session_bytes), source=path,
                 protocol=protocol_for(loaded, args.protocol),
                 tools=toolset_for(loaded, load_tools(args.tools)), note=note, keymap=keymap,
                 end=loaded.session.end, header=loaded.session.header).run()
    return 0


# -- parsing -----------------------------------------------------------------------------------

def _whole_number(what: str) -> Callable[[str], int]:
    """An argparse type for a whole number (0 or more), named in its error."""
    def parse(text: str) -> int:
        if not (text.isascii() and text.isdigit()):
            raise argparse.ArgumentTypeError(f"not {what} (a whole number, 0 or more): {text!r}")
        return int(text)
    return parse


_offset = _whole_number("a byte offset")
_count = _whole_number("a count")


class _VersionAction(argparse.Action):
    """``--version``, looked up only when asked: importlib.metadata costs every command ~50 ms of
    start-up, which is most of a small replay's budget."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0,
                         help=help or "show the program's version number and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("callscope")
        except PackageNotFoundError:  # (run from a checkout that was never installed)
            found = "unknown"
        print(f"callscope {found}")  # on stdout, as argparse's own version action does
        parser.exit()


NETWORK_COMMANDS = ("serve", "live", "proxy")


def build_parser(network: bool = True) -> argparse.ArgumentParser:
    """The parser; without ``network``, the headless commands only (their parsers and handlers
    never import the network stack: asyncio, ssl, httpx)."""
    parser = argparse.ArgumentParser(
        prog="callscope", description="A terminal debugger for streamed LLM tool calls.",
        epilog="With no command: callscope [INPUT] opens the debugger (a bundled demo without INPUT).")
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--protocol", choices=PROTOCOLS, help="override protocol detection")
        p.add_argument("--tools", metavar="FILE", help="a JSON list of tool definitions")
        p.add_argument("--max-frame-bytes", type=_count, default=DEFAULT_LIMITS.max_block_bytes,
                       metavar="N", help="stop framing past an SSE block of N bytes (default 64 MiB)")
        p.add_argument("--max-calls", type=_count, default=DEFAULT_LIMITS.max_calls, metavar="N",
                       help="stop past N calls in one turn (default 10000)")
        p.add_argument("--max-argument-chars", type=_count, default=DEFAULT_LIMITS.max_argument_chars,
                       metavar="N", help="stop past N characters of one call's arguments (default 64 Mi)")
        p.add_argument("--max-session-bytes", type=_count, default=DEFAULT_LIMITS.max_session_bytes,
                       metavar="N", help="refuse to hold a session larger than N bytes in memory "
                       "(check and the debugger; default 1 GiB)")
        p.add_argument("--max-anomalies-per-code", type=_count,
                       default=DEFAULT_LIMITS.max_anomalies_per_code, metavar="N",
                       help="keep N anomalies of one code per turn, count the rest (default 1000)")
        p.add_argument("--max-text-chars", type=_count, default=DEFAULT_LIMITS.max_text_chars,
                       metavar="N", help="keep N characters of assistant text per turn, count the "
                       "rest (default 64 Mi)")
        p.add_argument("--max-argument-depth", type=_count,
                       default=DEFAULT_LIMITS.max_argument_depth, metavar="N",
                       help="refuse arguments nested deeper than N levels as invalid_json "
                       "(default 128)")
        p.add_argument("--max-undetected-frames", type=_count,
                       default=DEFAULT_LIMITS.max_undetected_frames, metavar="N",
                       help="read the stream as frames only when no protocol is recognised in "
                       "N frames (default 1000)")

    p = sub.add_parser("replay", help="replay inputs headless (a table, or JSON lines)")
    p.add_argument("inputs", nargs="+", metavar="INPUT")
    p.add_argument("--json", action="store_true", help="one JSON record per line")
    p.add_argument("--chunking", default="recorded", metavar="MODE",
                   help="recorded (default), whole, bytes:N or random:SEED")
    p.add_argument("--cut-at", type=_offset, metavar="BYTE", help="end the stream after BYTE bytes")
    p.add_argument("--summary", action="store_true", help="print only the turn records")
    p.add_argument("--chunks", action="store_true", help="with --json, also a record per chunk")
    common(p)

    p = sub.add_parser("check", help="prove chunking and cuts never execute what they should not")
    p.add_argument("inputs", nargs="+", metavar="INPUT")
    p.add_argument("--seeds", type=_count, default=3, help="random chunkings per input (default 3)")
    p.add_argument("--harness", metavar="CMD", help="test your harness instead of the gate: CMD "
                   "is started once and fed every variant over JSON lines (docs/testing.md)")
    p.add_argument("--harness-timeout", type=float, default=30.0, metavar="SECONDS",
                   help="with --harness: the longest wait for one answer (default 30)")
    p.add_argument("--findings", metavar="DIR", help="with --harness: where the sessions that "
                   "reproduce findings go (default: a new folder in the temporary directory)")
    p.add_argument("--every-byte-up-to", type=_count, default=4096, metavar="N",
                   help="with --harness: cut streams up to N bytes at every offset, longer ones "
                   "at frame boundaries and before the terminal signal (default 4096)")
    p.add_argument("--window", type=_count, default=256, metavar="N",
                   help="with --harness: above that size, cut at every offset of the N bytes "
                   "before the terminal signal (default 256)")
    p.add_argument("--quirk", metavar="NAME", help="with --harness: rewrite each input into a "
                   "shape a real system sends first (README: the quirk list)")
    common(p)

    p = sub.add_parser("import", help="convert a .sse capture or a HAR file into a session")
    p.add_argument("input", metavar="FILE")
    p.add_argument("-o", "--output", required=True, metavar="SESSION")
    p.add_argument("--protocol", choices=PROTOCOLS, help="record the protocol in the header")
    p.add_argument("--tools", metavar="FILE", help="tool definitions the session carries (a JSON list)")
    p.add_argument("--provenance", help="where the capture came from (kept in the header)")

    p = sub.add_parser("diff", help="compare two recordings call by call (exit 1 when they differ)")
    p.add_argument("a", metavar="A")
    p.add_argument("b", metavar="B")
    p.add_argument("--ignore-ids", action="store_true",
                   help="do not compare call ids (a gateway that rewrites them)")
    p.add_argument("--open", action="store_true", help="show them side by side in the debugger")
    common(p)

    p = sub.add_parser("open", help="open the debugger (the default command)")
    p.add_argument("input", nargs="?", metavar="INPUT")
    p.add_argument("--keymap", metavar="FILE", help='remap keys: JSON {"callscope.cut": "ctrl+x"}')
    common(p)

    if network:
        from .net_commands import add_commands  # serve, live and proxy (the servers are in net/)

        add_commands(sub)
    return parser


HANDLERS = {"replay": cmd_replay, "check": cmd_check, "import": cmd_import, "open": cmd_open,
            "diff": cmd_diff}


def _handler(command: str) -> Any:
    if command in HANDLERS:
        return HANDLERS[command]
    from .net_commands import HANDLERS as NET_HANDLERS

    return NET_HANDLERS[command]


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "open")
    args = build_parser(network=argv[0] in (*NETWORK_COMMANDS, "-h", "--help")).parse_args(argv)
    try:
        return int(_handler(args.command)(args, sys.stdout))
    except CallscopeError as exc:
        print(f"callscope: {plain(str(exc))}", file=sys.stderr)  # file names are untrusted too
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
