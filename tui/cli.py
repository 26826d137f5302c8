"""The ``callscope`` command line: its arguments parsed, the command's body run.

``callscope [INPUT]`` opens the debugger (a bundled demo session without INPUT);
``callscope replay``, ``check`` and ``import`` are the headless commands. Every error the engine
raises on purpose (a broken file, a bad flag value) becomes one line on stderr and exit code 2;
``check`` exits 1 when the proof fails.

This module is the parser (the only one in the package besides :mod:`.net_commands`, the
network commands'); what the commands read is :mod:`.cli_inputs`, their bodies
:mod:`.cli_commands`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from ..core.errors import CallscopeError
from ..core.inert import plain
from ..core.limits import DEFAULT_LIMITS
from ..core.providers import PROTOCOLS
from .cli_commands import cmd_check, cmd_diff, cmd_import, cmd_open, cmd_replay
from .cli_inputs import LoadedInput, limits_from, protocol_for, sessions_dir, toolset_for

__all__ = ["COMMANDS", "LoadedInput", "build_parser", "limits_from", "main", "protocol_for",
           "sessions_dir", "toolset_for"]
"""The command line, and what scripts and tests read inputs with as it does."""

COMMANDS = ("replay", "check", "import", "open", "diff", "serve", "live", "proxy")


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


class _Parser(argparse.ArgumentParser):
    """argparse's parser, its errors one line (the rule for every bad input): the command,
    what is wrong, where the help is; not the usage block above it (9-10 lines of options
    before the one line that says what went wrong)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {plain(message)} (see {self.prog} -h)\n")


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter, the terminal's width asked only when help or an error is written:
    argparse makes a formatter for every argument added, and asking imports shutil (zlib, bz2,
    lzma), ~3 ms of every command's start-up."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, 0 if width is None else width)
        if width is None:  # (then __getattr__ measures the terminal on first use)
            self._asked = max_help_position
            del self._width, self._max_help_position

    def __getattr__(self, name: str) -> Any:
        if name not in ("_width", "_max_help_position") or "_asked" not in self.__dict__:
            raise AttributeError(name)
        import shutil

        width = shutil.get_terminal_size().columns - 2  # (as argparse measures it)
        self._width = width
        self._max_help_position = min(self._asked, max(width - 20, self._indent_increment * 2))
        return getattr(self, name)


def _common(p: argparse.ArgumentParser) -> None:
    """The flags every reading command takes: the protocol, the tools, the limits."""
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


def _replay_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("inputs", nargs="+", metavar="INPUT")
    p.add_argument("--json", action="store_true", help="one JSON record per line")
    p.add_argument("--chunking", default="recorded", metavar="MODE",
                   help="recorded (default), whole, bytes:N or random:SEED")
    p.add_argument("--cut-at", type=_offset, metavar="BYTE", help="end the stream after BYTE bytes")
    p.add_argument("--summary", action="store_true", help="print only the turn records")
    p.add_argument("--chunks", action="store_true", help="with --json, also a record per chunk")
    _common(p)


def _check_flags(p: argparse.ArgumentParser) -> None:
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
    _common(p)


def _import_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", metavar="FILE")
    p.add_argument("-o", "--output", required=True, metavar="SESSION")
    p.add_argument("--protocol", choices=PROTOCOLS, help="record the protocol in the header")
    p.add_argument("--tools", metavar="FILE", help="tool definitions the session carries (a JSON list)")
    p.add_argument("--provenance", help="where the capture came from (kept in the header)")


def _diff_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("a", metavar="A")
    p.add_argument("b", metavar="B")
    p.add_argument("--ignore-ids", action="store_true",
                   help="do not compare call ids (a gateway that rewrites them)")
    p.add_argument("--open", action="store_true", help="show them side by side in the debugger")
    _common(p)


def _open_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", nargs="?", metavar="INPUT")
    p.add_argument("--keymap", metavar="FILE", help='remap keys: JSON {"callscope.cut": "ctrl+x"}')
    _common(p)


_HEADLESS: tuple[tuple[str, str, Callable[[argparse.ArgumentParser], None]], ...] = (
    ("replay", "replay inputs headless (a table, or JSON lines)", _replay_flags),
    ("check", "prove chunking and cuts never execute what they should not", _check_flags),
    ("import", "convert a .sse capture or a HAR file into a session", _import_flags),
    ("diff", "compare two recordings call by call (exit 1 when they differ)", _diff_flags),
    ("open", "open the debugger (the default command)", _open_flags),
)
"""The headless commands and the debugger's: name, help, the flags they take."""


def build_parser(network: bool = True, only: str | None = None) -> argparse.ArgumentParser:
    """The parser; without ``network``, the headless commands only (their parsers and handlers
    never import the network stack: asyncio, ssl, httpx). With ``only`` (a headless command),
    that command's parser alone: the one a command line given it parses with (each parser
    built is start-up time, and ``-h`` of the whole program builds them all)."""
    parser = _Parser(
        prog="callscope", description="A terminal debugger for streamed LLM tool calls.",
        formatter_class=_Formatter,
        epilog="With no command: callscope [INPUT] opens the debugger (a bundled demo without INPUT).")
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    for name, help, flags in _HEADLESS:
        if only is None or name == only:
            flags(sub.add_parser(name, help=help, formatter_class=_Formatter))
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
    network = argv[0] in (*NETWORK_COMMANDS, "-h", "--help")
    args = build_parser(network, only=argv[0] if argv[0] in HANDLERS else None).parse_args(argv)
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
