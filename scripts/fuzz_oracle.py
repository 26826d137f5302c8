"""The properties every fuzz input must keep, and the counts of what the inputs reached.

Shared by ``scripts/fuzz.py`` (the long run), ``tests/test_fuzz.py`` (the short run) and
``scripts/hostile_report.py``. A broken property raises :class:`Violation`; an exception other
than :class:`CallscopeError` escaping the engine, the loader or the CLI is left to propagate, so
hypothesis shrinks it like any other failure.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tempfile
import traceback
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import callscope.core.importers  # noqa: F401 - imported now, so loading imports nothing
import jsonschema
import orjson
from callscope.core.demo_tools import DEMO_TOOL_DEFINITIONS
from callscope.core.engine import CallStep, DecisionStep, Engine, FrameStep, Step
from callscope.core.errors import CallscopeError, InputError
from callscope.core.events import (
    Anomaly,
    ArgumentsAppended,
    ArgumentsSet,
    CallClosed,
    CallIdentified,
    CallOpened,
    FinalCopy,
    ProviderError,
    StopReported,
    TurnEnded,
)
from callscope.core.session import Chunk, Session, open_input, save_session
from callscope.core.tools import ToolSet, tools_from_request
from callscope.tui.cli import main as cli_main

STATS: defaultdict[str, Counter[str]] = defaultdict(Counter)
"""target -> counts (inputs, frames, calls, executed, refused, ...), summed over every run."""

OFFLINE_MAIN = """
import sys
def offline(event, args):
    if event.startswith(("socket.", "urllib.", "http.client.")):
        raise PermissionError(event + " blocked: replaying a file must not reach the network")
sys.addaudithook(offline)
from callscope.tui.cli import main
sys.exit(main())
"""
CLI = [sys.executable, "-c", OFFLINE_MAIN]
"""``callscope`` as a process, with the network blocked (a fuzzed file must not reach out)."""
ANY_OBJECT = {"type": "object"}
ANOMALY_CODE = re.compile(r"[a-z][a-z0-9_]*\Z")
MAX_MESSAGE = 400
# What must never reach a terminal raw: C0 (but \n, \t), DEL, C1, bidi controls, and the
# invisible characters that hide text (zero-width, word joiners, BOM, tag characters).
TERMINAL_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f"
    "\ufeff\ufff9-\ufffb\U000e0000-\U000e0fff]")


KNOWN_BUGS: dict[tuple[str, str, str], str] = {
    # (exception, file, function) -> the strict-xfail test that pins an open bug
    # (tests/test_fuzz.py). While a bug is open the fuzzers count its hits and go on looking
    # for new ones. Fixed bugs are kept as regression tests.
}
KNOWN_MESSAGES: dict[str, str] = {
    # a substring of a one-line CLI error -> the strict-xfail test that pins it
}
KNOWN_UNBOUNDED: dict[str, str] = {
    # anomaly code -> the strict-xfail test pinning its unbounded, multi-line message
}
TOLERATE_KNOWN = True
ROOT = Path(__file__).resolve().parent.parent


def signature(exc: BaseException) -> tuple[str, str, str]:
    """(exception type, file, function) of the innermost callscope frame that raised."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if f.filename.startswith(str(ROOT)) and "/scripts/" not in f.filename]
    last = (ours or frames)[-1]
    name = Path(last.filename)
    rel = str(name.relative_to(ROOT)) if name.is_relative_to(ROOT) else name.name
    return type(exc).__name__, rel, last.name


@contextmanager
def known_bugs(stats: Counter[str]) -> Iterator[None]:
    """Count (and swallow) the exceptions of bugs already pinned by a failing test."""
    try:
        yield
    except CallscopeError:
        raise
    except Exception as exc:
        known = KNOWN_BUGS.get(signature(exc))
        if known is None or not TOLERATE_KNOWN:
            raise
        stats[f"known:{known}"] += 1


class Violation(AssertionError):
    """A property of the engine, the gate, the loader or the CLI does not hold."""


def require(condition: object, message: str) -> None:
    if not condition:
        raise Violation(message)


# -- loading only reads; replaying never reaches the network ----------------------------------------

_NETWORK = ("socket.", "urllib.", "http.client.", "webbrowser.")
_PROCESS = ("subprocess.", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "pty.")
_LOADING = ("exec", "compile", "import", "pickle.", "marshal.", "ctypes.", "os.remove",
            "os.unlink", "os.rename", "os.rmdir", "shutil.", *_NETWORK, *_PROCESS)
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
KNOWN_NETWORK = ""
"""The name of an open bug (its strict-xfail test) that reaches the network: while set, network
attempts are counted instead of failing. Empty: the remote $ref fetch is fixed."""


class _Guard:
    forbidden: tuple[str, ...] = ()
    writes = False
    seen: list[str] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _Guard.forbidden:
        return
    if event.startswith(_Guard.forbidden):
        _Guard.seen.append(event)
        if event.startswith(_NETWORK + _PROCESS):  # blocked, not just seen: fuzzing stays offline
            raise PermissionError(f"{event} blocked by the fuzz guard")
    elif event == "open" and _Guard.writes:
        mode, flags = args[1], args[2]
        if (isinstance(mode, str) and set(mode) & set("wax+")) or (
                mode is None and isinstance(flags, int) and flags & _WRITE_FLAGS):
            _Guard.seen.append(f"open {args[0]!r} for writing")


sys.addaudithook(_audit)


@contextmanager
def _guarded(forbidden: tuple[str, ...], writes: bool, what: str,
             stats: Counter[str] | None = None) -> Iterator[None]:
    _Guard.seen, _Guard.forbidden, _Guard.writes = [], forbidden, writes
    try:
        yield
    finally:
        _Guard.forbidden = ()
    seen = _Guard.seen
    if seen and stats is not None and KNOWN_NETWORK and TOLERATE_KNOWN and all(
            e.startswith(_NETWORK) for e in seen):
        stats[f"known:{KNOWN_NETWORK}"] += 1
        return
    require(not seen, f"{what} did more than it should: {seen[:3]}")


def reading_only() -> Any:
    """Fail if loading compiles, imports, spawns, connects, unpickles or writes a file."""
    return _guarded(_LOADING, True, "loading a session")


def offline(stats: Counter[str]) -> Any:
    """Fail (and block) if replaying reaches the network or spawns a process."""
    return _guarded(_NETWORK + _PROCESS, True, "replaying a stream", stats)


# -- the engine and the gate -------------------------------------------------------------------

def pieces(data: bytes, sizes: Sequence[int]) -> Iterator[bytes]:
    """``data`` in chunks of the given sizes, cycled; one chunk when ``sizes`` is empty."""
    if not sizes:
        yield data
        return
    pos, i = 0, 0
    while pos < len(data):
        size = sizes[i % len(sizes)]
        yield data[pos:pos + size]
        pos, i = pos + size, i + 1


def feed_all(data: bytes, sizes: Sequence[int], protocol: str | None,
             tools: ToolSet) -> tuple[Engine, list[Step]]:
    engine = Engine(protocol, tools)
    steps: list[Step] = []
    for piece in pieces(data, sizes):
        steps += engine.feed(piece)
    steps += engine.close()
    return engine, steps


def call_names(data: bytes, protocol: str | None) -> list[Any]:
    engine, _ = feed_all(data, (), protocol, ToolSet())
    return sorted({c.name for c in engine.state.calls.values() if c.name is not None}, key=repr)


def toolset(mode: str, data: bytes, protocol: str | None, declared: Sequence[Any]) -> ToolSet:
    """``none``; ``demo`` (the strict demo tools); ``declared`` (the session's own); ``permissive``
    (every call name in the stream accepts any object, so the execute branch is reachable)."""
    if mode == "demo":
        return ToolSet(DEMO_TOOL_DEFINITIONS)
    if mode == "declared":
        return ToolSet(declared)
    if mode == "permissive":
        return ToolSet([{"name": str(n), "parameters": ANY_OBJECT}
                        for n in call_names(data, protocol)])
    return ToolSet()


def _valid(tools: ToolSet, name: str, arguments: Any) -> bool:
    """Schema validation done here, with jsonschema directly, not through the gate's ToolSet."""
    schema = tools.tools[name].schema
    return bool(jsonschema.validators.validator_for(schema)(schema).is_valid(arguments))


def check_steps(steps: Sequence[Step], engine: Engine, tools: ToolSet, data: bytes) -> Counter[str]:
    """The gate's promise, re-derived from the steps alone."""
    text: dict[str, str] = {}
    names: dict[str, Any] = {}
    closed: set[str] = set()
    decided: set[str] = set()
    ended = halted = errored = False
    stop: StopReported | None = None
    cut_before = False
    at_close: dict[str, str] = {}
    counts: Counter[str] = Counter()
    empty_means_object = bool(engine.pipeline.reader
                              and engine.pipeline.reader.empty_arguments_mean_empty_object)
    raw = []
    for step in steps:
        if isinstance(step, FrameStep):
            raw.append(step.frame.raw)
            halted = halted or step.frame.overflow
            continue
        if isinstance(step, CallStep):
            event = step.event
            if isinstance(event, CallOpened | CallIdentified):
                if names.get(event.key) is None:  # (set once: a changed name is a dispute)
                    names[event.key] = event.name
            elif isinstance(event, ArgumentsAppended):
                text[event.key] = text.get(event.key, "") + event.fragment
            elif isinstance(event, ArgumentsSet):
                text[event.key] = event.text
            elif isinstance(event, FinalCopy) and not text.get(event.key):
                text[event.key] = event.arguments  # (no fragments: the copy is the text)
            elif isinstance(event, CallClosed):
                closed.add(event.key)
                at_close.setdefault(event.key, text.get(event.key, ""))
            elif isinstance(event, TurnEnded):
                ended = True
            elif isinstance(event, StopReported):
                stop = event
                cut_before = cut_before or event.cut or event.failed
            elif isinstance(event, ProviderError):
                errored = True
            elif isinstance(event, Anomaly):
                counts["anomalies"] += 1
                halted = halted or event.code == "limit_exceeded"
                require(ANOMALY_CODE.match(event.code), f"anomaly code {event.code!r}")
                if "\n" in event.message or "\r" in event.message or len(event.message) > MAX_MESSAGE:
                    known = KNOWN_UNBOUNDED.get(event.code)
                    require(known is not None and TOLERATE_KNOWN,
                            f"anomaly {event.code} message is not one bounded line: "
                            f"{event.message[:120]!r}")
                    counts[f"known:{known}"] += 1
            continue
        if not isinstance(step, DecisionStep):
            continue
        d = step.decision
        require(d.call not in decided, f"{d.call} decided twice")
        decided.add(d.call)
        if d.action != "execute":
            counts["refused"] += 1
            counts[f"refused:{d.reason}"] += 1
            continue
        counts["executed"] += 1
        counts["executed_after_a_cut_stop_report"] += cut_before
        where = f"executed {d.call!r}"
        require(ended, f"{where} before the terminal signal (or without one)")
        require(not halted, f"{where} in a turn halted at a limit")
        require(not errored, f"{where} after a provider error")
        require(stop is None or not (stop.cut or stop.failed), f"{where} after stop {stop}")
        require(d.call in closed, f"{where} which the provider never closed")
        if text.get(d.call, "") != at_close[d.call]:
            require(TOLERATE_KNOWN, f"{where} with text that changed after the provider closed it")
            counts["known:call_changed_after_close"] += 1
        name = names.get(d.call)
        require(isinstance(name, str) and name in tools, f"{where}: unknown tool {name!r}")
        body = text.get(d.call, "")
        if not body.strip() and empty_means_object:
            parsed: Any = {}
        else:
            try:
                orjson.loads(body)
            except orjson.JSONDecodeError:
                raise Violation(f"{where} whose text fails the strict parse: {body[:80]!r}") from None
            try:  # (the value the text denotes: integers past 64 bits exact, as orjson's are not)
                parsed = json.loads(body)
            except RecursionError:  # (deeper than the standard library goes: orjson's reading)
                parsed = orjson.loads(body)
        require(parsed == d.arguments, f"{where} with arguments that are not its text")
        require(isinstance(parsed, dict), f"{where} with non-object arguments")
        require(_valid(tools, str(name), parsed), f"{where} with arguments its schema rejects")
    require(decided == set(engine.state.calls),
            f"calls decided {sorted(decided)[:5]} != calls {sorted(engine.state.calls)[:5]}")
    if not halted:
        require(b"".join(raw) == data, "the frames do not hold exactly the bytes received")
    require(engine.decoder.bytes_received == len(data), "bytes_received is not the input length")
    counts["frames"] += len(raw)
    counts["calls"] += len(engine.state.calls)
    counts["terminal"] += engine.state.complete
    counts["halted"] += halted
    return counts


def outcome(steps: Sequence[Step]) -> tuple[dict[str, Any], list[str]]:
    decisions = {s.decision.call: (s.decision.action, s.decision.reason, s.decision.arguments)
                 for s in steps if isinstance(s, DecisionStep)}
    codes = [s.event.code for s in steps if isinstance(s, CallStep) and isinstance(s.event, Anomaly)]
    return decisions, codes


def check_stream(target: str, data: bytes, sizes: Sequence[int], protocol: str | None,
                 tools_mode: str, declared: Sequence[Any] = ()) -> None:
    """One input through the whole engine, chunked as drawn and whole; every property checked."""
    stats = STATS[target]
    stats["inputs"] += 1
    stats["bytes"] += len(data)
    with known_bugs(stats):
        try:
            with offline(stats):
                tools = toolset(tools_mode, data, protocol, declared)
        except CallscopeError:
            stats["tool_definition_errors"] += 1
            tools = ToolSet()
        try:
            with offline(stats):
                engine, steps = feed_all(data, sizes, protocol, tools)
        except CallscopeError:
            stats["callscope_errors"] += 1
            return
        stats.update(check_steps(steps, engine, tools, data))
        if sizes:
            with offline(stats):
                _, whole = feed_all(data, (), protocol, tools)
            require(outcome(steps) == outcome(whole),
                    f"chunking {tuple(sizes)[:8]} changed the decisions or anomalies")


# -- untrusted session files -------------------------------------------------------------------

def check_error(exc: CallscopeError, path: str) -> None:
    """A rejection is one bounded line that names the file and shows no control characters."""
    text = str(exc)
    require("\n" not in text and "\r" not in text, f"multi-line error: {text[:200]!r}")
    require(text.startswith(path), f"the error does not start with the file name: {text[:200]!r}")
    require(len(text) <= len(path) + MAX_MESSAGE + 200, f"unbounded error ({len(text)} chars)")
    require(not TERMINAL_UNSAFE.search(text), f"control characters in the error: {text[:200]!r}")


def load(path: str) -> tuple[Session, list[Chunk]]:
    with reading_only():
        session = open_input(path)
        chunks = list(session.chunks())
    return session, chunks


def declared_tools(session: Session) -> list[Any]:
    header = session.header
    request = header.request if isinstance(header.request, dict) else {}
    return list(header.tools or tools_from_request(request.get("body")))


def check_session_file(target: str, raw: bytes, name: str, cli: str | None = None) -> None:
    """Load a (mutated) session file: refused with one clean line, or loaded, replayed through
    the engine and saved again without losing a byte; optionally through the CLI too."""
    stats = STATS[target]
    stats["inputs"] += 1
    stats["bytes"] += len(raw)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, name)
        Path(path).write_bytes(raw)
        try:
            session, chunks = load(path)
        except CallscopeError as exc:
            check_error(exc, path)
            stats["rejected"] += 1
            stats["rejected_with_line"] += isinstance(exc, InputError) and exc.line is not None
        else:
            stats["loaded"] += 1
            data = b"".join(c.data for c in chunks)
            protocol = session.header.protocol
            check_stream(f"{target}:engine", data, [len(c.data) for c in chunks if c.data],
                         protocol, "declared", declared_tools(session))
            with known_bugs(stats):
                resave(tmp, session, chunks, stats)
        if cli is not None:
            check_cli(path, cli)
            stats[f"cli_{cli}"] += 1


def resave(tmp: str, session: Session, chunks: list[Chunk], stats: Counter[str]) -> None:
    """Saving what was loaded, and loading it again, keeps every byte and the stream's end. A
    refusal is a failure: loading refuses lines nested deeper than orjson writes (254 levels),
    so whatever loads must save again."""
    out = os.path.join(tmp, "resaved.jsonl")
    try:
        save_session(out, session.header, chunks, session.end)
    except CallscopeError as exc:
        require(False, f"a session that loads could not be saved again: {exc}")
    again, chunks2 = load(out)
    require([c.data for c in chunks2] == [c.data for c in chunks], "a re-save changed the bytes")
    require([round(c.t, 6) for c in chunks2] == [round(c.t, 6) for c in chunks],
            "a re-save changed the chunk times")
    require(again.end.kind == session.end.kind, "a re-save changed how the stream ended")


def check_cli_result(rc: int, out: str, err: str, mode: str, path: str,
                     target: str = "session") -> None:
    require(rc in (0, 2), f"replay exited {rc}: {err[-300:]!r}")
    require("Traceback" not in err, f"a traceback on stderr: {err[-300:]!r}")
    if rc == 2:
        require(err.startswith("callscope: ") and err.endswith("\n") and err.count("\n") == 1,
                f"exit 2 without exactly one error line: {err[:300]!r}")
        known = next((v for k, v in KNOWN_MESSAGES.items() if k in err), None)
        if path not in err and known and TOLERATE_KNOWN:
            STATS[target][f"known:{known}"] += 1
        else:
            require(path.split("#")[0] in err, f"the error does not name the file: {err[:300]!r}")
        require(not TERMINAL_UNSAFE.search(err), f"control characters on stderr: {err[:200]!r}")
    else:  # at most one note: the file was cut (read as a cut stream), naming it
        require(err == "" or (err.startswith("callscope: note: ") and err.count("\n") == 1
                              and err.endswith("\n") and path.split("#")[0] in err
                              and not TERMINAL_UNSAFE.search(err)),
                f"exit 0 with stderr {err[:200]!r}")
    if mode == "json":
        for line in out.split("\n")[:-1]:
            require(isinstance(orjson.loads(line), dict), "a --json line is not an object")
    require("\x1b" not in out, "an escape character reached stdout")
    if mode == "table":
        require(not TERMINAL_UNSAFE.search(out), "control characters in the table")


def check_cli(path: str, mode: str) -> None:
    """``callscope replay FILE`` in-process: exit 0, or exit 2 with one clean stderr line."""
    args = ["replay", path, *(["--json"] if mode == "json" else [])]
    out, err = io.StringIO(), io.StringIO()
    with known_bugs(STATS["session"]):
        with redirect_stdout(out), redirect_stderr(err), offline(STATS["session"]):
            rc = cli_main(args)
        check_cli_result(rc, out.getvalue(), err.getvalue(), mode, path)


def run_cli(path: str, *extra: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "replay", path, *extra], capture_output=True, text=True,
                          timeout=timeout, errors="replace")


def check_cli_subprocess(path: str, mode: str = "table") -> int:
    """The same, as a user runs it: a real process, its exit code and stderr."""
    done = run_cli(path, *(["--json"] if mode == "json" else []))
    if "Traceback" in done.stderr and TOLERATE_KNOWN:
        known = KNOWN_BUGS.get(signature_from_text(done.stderr))
        if known is not None:
            STATS["cli"][f"known:{known}"] += 1
            return done.returncode
    check_cli_result(done.returncode, done.stdout, done.stderr, mode, path, "cli")
    return done.returncode


_TB_FILE = re.compile(r'File "([^"]+)", line \d+, in (\S+)')
_TB_ERROR = re.compile(r"^(?:[\w.]+\.)?(\w+): ", re.MULTILINE)


def signature_from_text(stderr: str) -> tuple[str, str, str]:
    """The :func:`signature` of a traceback printed by another process."""
    frames = [(f, fn) for f, fn in _TB_FILE.findall(stderr) if f.startswith(str(ROOT))]
    errors = _TB_ERROR.findall(stderr.rsplit("Traceback", 1)[-1])
    if not frames or not errors:
        return "", "", ""
    return errors[-1], str(Path(frames[-1][0]).relative_to(ROOT)), frames[-1][1]
