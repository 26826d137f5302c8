"""Hand-made hostile inputs: terminal escapes in every field, broken files, a killed recorder,
and the limit probes (each in a child process with a timeout, its time and memory measured).

Used by ``scripts/hostile_report.py`` and by ``tests/test_terminal_safety.py``.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fuzz_corpus as corpus_module
import fuzz_mutations as mutations
import fuzz_oracle as oracle
import orjson
from callscope.core.sse import decode_all
from callscope.tui.cli import main as cli_main

HOSTILE = (
    "\x1b[31mRED\x1b[0m",                                         # SGR colour
    "\x1b[2J\x1b[H",                                              # clear screen, cursor home
    "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",     # OSC 8 hyperlink
    "\x1b]52;c;cm0gLXJmIH4=\x07",                                 # OSC 52 clipboard write
    "\x1b]0;title\x07",                                           # OSC 0 window title
    "\x9b2J\x9d0;c1\x9c",                                         # C1 CSI, OSC, ST
    "\u202egnp.exe\u202c",                                        # bidi override (Trojan Source)
    "\u2066isolate\u2069\u200f",                                  # bidi isolate, RLM
    "zero\u200bwidth\ufeffbom\u2060joiner",                        # invisible characters
    "[bold red]markup[/bold red] [link=https://evil.example]x[/link]",  # Rich/Textual markup
    "carriage\roverwrite",                                        # CR rewrites the line
    "new\nline\u2028sep\x85nel",                                  # line breaks of every kind
    "\x07bell\x08\x7f",                                           # BEL, BS, DEL
    "tag\U000e0041\U000e0042",                                    # invisible tag characters
    "L" * 20_000,                                                 # a very long line
)
ESCAPED_ESC = ("\\u001b", "\\x1b", "␛", "\\e")
"""How an escaped ESC may look once made inert (the table, JSON, repr, Control Pictures)."""

# String fields whose values reach the outputs (names, ids, text, errors, reasons).
INJECT_KEYS = frozenset({
    "name", "id", "call_id", "item_id", "tool_call_id", "text", "message", "code", "model",
    "refusal", "reasoning_content", "stop_reason", "finish_reason", "finishReason", "status",
})
MAX_TABLE_LINE = 1000


def _inject(value: Any, hostile: str) -> Any:
    if isinstance(value, dict):
        return {k: (v + hostile if k in INJECT_KEYS and isinstance(v, str) else _inject(v, hostile))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_inject(v, hostile) for v in value]
    return value


def hostile_stream(data: bytes, hostile: str) -> bytes:
    """The recording with ``hostile`` appended to every name, id, text, error and reason, plus an
    unknown event and an error event named and worded with it, before the last frame."""
    out = []
    frames = decode_all(data)
    for i, frame in enumerate(frames):
        if i == len(frames) - 1:
            extra = {"type": hostile, "error": {"message": hostile, "code": hostile}}
            out.append(f"event: {hostile[:200]}\ndata: {json.dumps(extra)}\n\n".encode())
        try:
            value = orjson.loads(frame.data) if frame.dispatch else None
        except orjson.JSONDecodeError:
            value = None
        out.append(frame.raw if value is None else mutations.rebuild(frame, _inject(value, hostile)))
    return b"".join(out)


def _ev(kind: str, payload: dict[str, Any]) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **payload})}\n\n"


def anthropic_call(name: str, arguments: str, call_id: str = "toolu_1", message: str = "msg_1") -> bytes:
    """A complete Anthropic turn with one tool call: ``name`` with argument text ``arguments``."""
    return "".join([
        _ev("message_start", {"message": {"id": message, "model": "claude"}}),
        _ev("content_block_start", {"index": 0, "content_block": {
            "type": "tool_use", "id": call_id, "name": name, "input": {}}}),
        _ev("content_block_delta", {"index": 0, "delta": {"type": "input_json_delta",
                                                         "partial_json": arguments}}),
        _ev("content_block_stop", {"index": 0}),
        _ev("message_delta", {"delta": {"stop_reason": "tool_use"}}),
        _ev("message_stop", {})]).encode()


def hostile_call(hostile: str) -> bytes:
    """An Anthropic turn whose tool name, id and (valid) arguments carry ``hostile``."""
    return anthropic_call("t" + hostile, json.dumps({"key": hostile, hostile[:50]: 1}),
                          "toolu" + hostile, "msg" + hostile)


def hostile_inputs(per_protocol: int = 1) -> Iterator[tuple[str, bytes, str]]:
    """(label, stream, hostile string): recordings of every protocol, and a call, per string."""
    seen: dict[str | None, int] = {}
    seeds = []
    for seed in corpus_module.corpus():
        if seed.name.startswith("fixture:") and seen.get(seed.protocol, 0) < per_protocol:
            seen[seed.protocol] = seen.get(seed.protocol, 0) + 1
            seeds.append(seed)
    for n, hostile in enumerate(HOSTILE):
        for seed in seeds:
            yield f"{seed.name} + hostile #{n}", hostile_stream(seed.data, hostile), hostile
        yield f"tool call + hostile #{n}", hostile_call(hostile), hostile


def replay_output(path: str, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = cli_main(["replay", path, *args])
    return rc, out.getvalue(), err.getvalue()


def terminal_problems(text: str, place: str, json_lines: bool = False) -> list[str]:
    problems = []
    found = oracle.TERMINAL_UNSAFE.search(text)
    if found:
        at = found.start()
        problems.append(f"{place}: raw U+{ord(found.group()):04X} in {text[max(at - 30, 0):at + 10]!r}")
    if json_lines:  # split on LF only: str.splitlines() also splits at U+2028, U+0085, ...
        for line in text.split("\n")[:-1]:
            if not isinstance(orjson.loads(line), dict):
                problems.append(f"{place}: a line is not a JSON object")
    elif max(map(len, text.split("\n"))) > MAX_TABLE_LINE:
        problems.append(f"{place}: a line longer than {MAX_TABLE_LINE} characters")
    return problems


def terminal_checks(tmp: str, per_protocol: int = 1) -> dict[str, list[str]]:
    """Every hostile input through the table, the JSON lines and the error line."""
    places: dict[str, list[str]] = {"the replay table": [], "the --json lines": [],
                                    "the one-line error on stderr": []}
    tools = os.path.join(tmp, "tools.json")
    for n, (label, data, hostile) in enumerate(hostile_inputs(per_protocol)):
        path = os.path.join(tmp, f"hostile{n}.sse")
        Path(path).write_bytes(data)
        names = [str(x) for x in oracle.call_names(data, None)]
        Path(tools).write_text(json.dumps([{"name": x, "parameters": {"type": "object"}} for x in names]))
        for mode, place in (([], "the replay table"), (["--json"], "the --json lines")):
            rc, out, err = replay_output(path, "--tools", tools, *mode)
            problems = [f"{label}: exit {rc} {err[-200:]!r}"] if rc != 0 else []
            problems += terminal_problems(out, label, json_lines=bool(mode))
            if "\x1b" in hostile and not any(e in out for e in ESCAPED_ESC):
                problems.append(f"{label}: the hostile text never reached the output")
            places[place] += problems
    for name, path in hostile_files(tmp):
        rc, out, err = replay_output(path)
        if rc != 2 or err.count("\n") != 1 or oracle.TERMINAL_UNSAFE.search(err):
            places["the one-line error on stderr"].append(f"{name}: exit {rc}, stderr {err[:160]!r}")
    return places


def hostile_files(tmp: str) -> list[tuple[str, str]]:
    """Broken inputs whose error messages would quote hostile text."""
    h = "\x1b]52;c;cm0=\x07\x1b[2J\u202e\nInjected: line"
    har = {"log": {"entries": [{"request": {"method": "POST" + h, "url": "https://x/" + h},
                                "response": {"content": {"mimeType": "text/event-stream",
                                                         "text": "data: {}\n\n"}}}]}}
    files = {
        "a HAR entry picked out of range": ("h.har", json.dumps(har), "#9"),
        "a session marker": ("m.jsonl", json.dumps({"callscope": h, "version": 1}) + "\n", ""),
        "an end kind": ("e.jsonl", '{"callscope":"session","version":1}\n'
                        + json.dumps({"end": h}) + "\n", ""),
        "a header protocol": ("p.jsonl", json.dumps({"callscope": "session", "version": 1,
                                                     "protocol": h}) + "\n", ""),
        "a tool definition": ("t.jsonl", json.dumps({"callscope": "session", "version": 1, "tools": [
            {"name": h, "parameters": {"type": h}}]}) + "\n", ""),
    }
    out = []
    for label, (name, text, suffix) in files.items():
        path = os.path.join(tmp, name)
        Path(path).write_text(text)
        out.append((f"hostile text in {label}", path + suffix))
    return out


# -- broken files, a killed recorder, a burst ----------------------------------------------------

HEADER = '{"callscope":"session","version":1}\n'


def broken_files(tmp: str) -> list[tuple[str, str]]:
    nested = "[" * 100_000 + "]" * 100_000
    files: dict[str, bytes] = {
        "empty": b"",
        "binary": b"{" + bytes(range(256)) * 4,
        "not UTF-8": HEADER.encode() + b'{"t":0,"text":"\xff\xfe"}\n',
        "not a session": b'{"hello":"world"}\n',
        "version 99": b'{"callscope":"session","version":99}\n',
        "bad JSON line": (HEADER + '{"t":0,"text":\n{"end":"clean"}\n').encode(),
        "negative time": (HEADER + '{"t":-1,"text":"x"}\n').encode(),
        "time going back": (HEADER + '{"t":2,"text":"x"}\n{"t":1,"text":"y"}\n').encode(),
        "text and b64": (HEADER + '{"t":0,"text":"x","b64":"eA=="}\n').encode(),
        "bad base64": (HEADER + '{"t":0,"b64":"!!!"}\n').encode(),
        "data after the end": (HEADER + '{"end":"clean"}\n{"t":0,"text":"x"}\n').encode(),
        "unknown end": (HEADER + '{"end":"exploded"}\n').encode(),
        "nesting 100k": (HEADER + '{"t":0,"text":' + nested + "}\n").encode(),
        "header nesting 100k": ('{"callscope":"session","version":1,"x":' + nested + "}\n").encode(),
        "tools not a list": b'{"callscope":"session","version":1,"tools":{}}\n',
        "invalid tool schema": (
            b'{"callscope":"session","version":1,"tools":[{"name":"x","parameters":{"type":1}}]}\n'),
        "unknown protocol": b'{"callscope":"session","version":1,"protocol":"smtp"}\n',
        "HAR without a stream": b'{"log":{"entries":[]}}',
        "HAR not JSON": b'{"log": [',
    }
    out = []
    for i, (name, data) in enumerate(files.items()):
        path = os.path.join(tmp, f"broken{i}.{'har' if 'HAR' in name else 'jsonl'}")
        Path(path).write_bytes(data)
        out.append((name, path))
    return out


KILL_SCRIPT = """
import sys, time
from callscope.core.session import Chunk, SessionHeader, SessionWriter
w = SessionWriter(sys.argv[1], SessionHeader(source="fuzz"))
for i in range(3):
    w.write(Chunk(i * 0.1, b"data: {}\\n\\n"))
print("written", flush=True)
time.sleep(60)
"""


def killed_recorder() -> str:
    """Kill a recorder mid-session; '' when the target never appeared and the partial loads."""
    with tempfile.TemporaryDirectory() as tmp:
        target = os.path.join(tmp, "s.jsonl")
        child = subprocess.Popen([sys.executable, "-c", KILL_SCRIPT, target], stdout=subprocess.PIPE)
        try:
            assert child.stdout is not None
            child.stdout.readline()
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
        if os.path.exists(target):
            return "the target exists after the kill"
        partials = [n for n in os.listdir(tmp) if n.endswith(".partial")]
        if len(partials) != 1:
            return f"expected one partial file, found {partials}"
        session, chunks = oracle.load(os.path.join(tmp, partials[0]))
        if session.end.kind != "missing" or len(chunks) != 3:
            return f"the partial file loads as end={session.end.kind}, {len(chunks)} chunks"
    return ""


def burst_stream(deltas: int) -> bytes:
    ev = _ev
    delta = ev("content_block_delta", {"index": 0, "delta": {"type": "input_json_delta",
                                                            "partial_json": '"ab'}})
    return "".join([
        ev("message_start", {"message": {"id": "m"}}),
        ev("content_block_start", {"index": 0, "content_block": {
            "type": "tool_use", "id": "t", "name": "f", "input": {}}}),
        ev("content_block_delta", {"index": 0, "delta": {"type": "input_json_delta",
                                                        "partial_json": '{"a":'}}),
        delta * deltas,
        ev("content_block_delta", {"index": 0, "delta": {"type": "input_json_delta",
                                                        "partial_json": '"}'}}),
        ev("content_block_stop", {"index": 0}),
        ev("message_delta", {"delta": {"stop_reason": "tool_use"}}),
        ev("message_stop", {})]).encode()


# -- limits --------------------------------------------------------------------------------------

PRELUDE = r'''
import json, resource, sys, time
from collections import Counter
from callscope.core.engine import CallStep, DecisionStep, Engine
from callscope.core.events import Anomaly
from callscope.core.limits import Limits
from callscope.core.tools import ToolSet

def peak_mb():
    """This process's peak RSS (VmHWM: ru_maxrss would include the parent's, kept across exec)."""
    try:
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("VmHWM")) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

def ev(kind, payload):
    return ("event: %s\ndata: %s\n\n" % (kind, json.dumps(dict(type=kind, **payload)))).encode()

START = ev("message_start", {"message": {"id": "m"}})
TEXT = ev("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}})
END = ev("message_delta", {"delta": {"stop_reason": "tool_use"}}) + ev("message_stop", {})

def open_call(i, name="f"):
    return ev("content_block_start", {"index": i, "content_block": {"type": "tool_use",
              "id": "t%d" % i, "name": name, "input": {}}})

def delta(i, text):
    return ev("content_block_delta", {"index": i, "delta": {"type": "input_json_delta",
              "partial_json": text}})

def text(t):
    return ev("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": t}})

def call(i, name="f", arguments="{}"):
    return [open_call(i, name), delta(i, arguments), ev("content_block_stop", {"index": i})]

def stream_call(first, middle, count, last):
    """One call whose arguments arrive as first + middle * count + last, in count + 2 deltas."""
    yield START
    yield open_call(0)
    yield delta(0, first)
    for _ in range(count):
        yield delta(0, middle)
    yield delta(0, last)
    yield ev("content_block_stop", {"index": 0})
    yield END

def split(parts, size=65536):
    buf = bytearray()
    for part in parts:
        buf += part
        while len(buf) >= size:
            yield bytes(buf[:size]); del buf[:size]
    if buf:
        yield bytes(buf)

def run(parts, definitions=None, limits=None):
    ts = ToolSet(definitions or [{"name": "f", "parameters": {"type": "object"}}])
    engine = Engine(None, ts, **({"limits": limits} if limits else {}))
    started, codes, decisions, fed = time.perf_counter(), Counter(), Counter(), 0
    def tally(steps):
        for s in steps:
            if isinstance(s, CallStep) and isinstance(s.event, Anomaly):
                codes[s.event.code] += 1
            elif isinstance(s, DecisionStep):
                decisions["%s %s" % (s.decision.action, s.decision.reason or "")] += 1
    for chunk in split(parts):
        fed += len(chunk)
        tally(engine.feed(chunk))
    tally(engine.close())
    print(json.dumps({"seconds": time.perf_counter() - started, "bytes": fed, "rss_mb": peak_mb(),
        "anomalies": dict(codes.most_common(3)), "decisions": dict(decisions),
        "halted": engine.state.halted}))
'''


@dataclass(frozen=True)
class Probe:
    title: str
    code: str
    expect: str
    """What a clear refusal looks like here (a substring of the outcome), or '' for no opinion."""
    known: str = ""
    """The strict-xfail test that pins this probe's failure, while the bug is open."""


PROBES = (
    Probe("a 50 MB line (one text delta of 50 MB in one frame)",
          'run([START, TEXT, text("x" * 50_000_000), END])', '"halted": null'),
    Probe("a 100 MB line (past the 64 MiB frame limit)",
          'run([START, TEXT, text("x" * 100_000_000), END])', "limit_exceeded"),
    Probe("a 50 MB argument in 1,000 deltas of 50 KB",
          """run(stream_call('{"a":"', "x" * 50_000, 1000, '"}'))""", "execute"),
    Probe("a 100 MB argument in 2,000 deltas of 50 KB (past the 64 Mi chars argument limit)",
          """run(stream_call('{"a":"', "x" * 50_000, 2000, '"}'))""", "limit_exceeded"),
    Probe("100,000 calls in one turn (default limit 10,000)",
          "run([START, *(p for i in range(100_000) for p in call(i)), END])", "limit_exceeded"),
    Probe("100,000 calls with the call limit lifted (--max-calls 1000000)",
          "run([START, *(p for i in range(100_000) for p in call(i)), END], "
          "limits=Limits(max_calls=1_000_000))", '"execute ": 100000'),
    Probe("argument nesting depth 100,000",
          """run([START, *call(0, arguments='{"a":' + "[" * 100_000 + "]" * 100_000 + "}"), END])""",
          "invalid_json"),
    Probe("payload nesting depth 100,000",
          'run([START, b"data: " + b"[" * 100_000 + b"]" * 100_000 + b"\\n\\n", END])', "not_json"),
    Probe("argument nesting depth 1,000 under a strict schema (the demo tools)",
          "from callscope.core.demo_tools import DEMO_TOOL_DEFINITIONS as D\n"
          """run([START, *call(0, "lookup_demo_value", '{"key":' + "[" * 1000 + "]" * 1000 + "}"), END], """
          "definitions=D)", "refuse",
          "tests/test_fuzz.py::test_deeply_nested_arguments_under_a_strict_schema_are_refused"),
    Probe("1,000,000 unknown events (each one an anomaly, all kept)",
          'run([START, *[ev("x", {})] * 1_000_000, END])', ""),
    Probe("200,000 frames before the protocol is known (detection gives up after 1,000)",
          'run([b"data: {}\\n\\n"] * 200_000 + [START, END])', ""),
    Probe("100 MB of assistant text (2,000 deltas of 50 KB, all kept)",
          'run([START, TEXT, *[text("x" * 50_000)] * 2000, END])', ""),
    Probe("events per second: 500,000 small argument deltas",
          """run(stream_call('{"a":"', "ab", 500_000, '"}'))""", "execute"),
)


@dataclass(frozen=True)
class ProbeResult:
    measured: str
    verdict: str
    outcome: dict[str, Any]


def run_probe(probe: Probe, timeout: float) -> ProbeResult:
    try:
        done = subprocess.run([sys.executable, "-c", PRELUDE + probe.code], capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return ProbeResult(f"over {timeout:.0f} s", "**FAILED**: did not finish (a hang)", {})
    if done.returncode != 0:
        error = (done.stderr.strip().splitlines() or ["?"])[-1]
        known = f" (known bug: {probe.known})" if probe.known else ""
        return ProbeResult("crashed", f"**FAILED**{known}: {error[:160]}", {})
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    measured = (f"{outcome['bytes'] / 1e6:,.0f} MB in {outcome['seconds']:.1f} s, "
                f"peak {outcome['rss_mb']:,.0f} MB RSS")
    summary = f"decisions {outcome['decisions']}, anomalies {outcome['anomalies']}"
    if outcome["halted"]:
        summary += f", halted: {outcome['halted']}"
    ok = probe.expect in json.dumps(outcome) if probe.expect else True
    return ProbeResult(measured, ("held: " if ok else "**FAILED**: ") + summary, outcome)
