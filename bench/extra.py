"""The two whole-command measurements: ``callscope check`` against one replay, and the peak
memory of ``callscope replay --summary`` on a big session file."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from callscope.core.tools import ToolSet

from .peers import cpu
from .streams import BenchStream, session_stream

# -- check vs replay ---------------------------------------------------------------------------


@dataclass
class CheckCost:
    wire: int
    events: int
    replay: float
    check: float
    verdict: str

    @property
    def ratio(self) -> float:
        return self.check / self.replay


def _best(fn: object, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        gc.collect()
        start = cpu()
        fn()  # type: ignore[operator]
        best = min(best, cpu() - start)
    return best


def check_cost(stream: BenchStream, runs: int = 3) -> CheckCost:
    """``check_input`` (recorded, whole, bytes:1 and random chunkings, every cut offset) against
    one replay of the same recorded chunks, both through the core functions the CLI calls."""
    from callscope.core.check import check_input
    from callscope.core.replay import replay

    chunks = list(zip(stream.times, stream.chunks, strict=True))
    tools = ToolSet(stream.tools)
    report = check_input("bench", chunks, protocol=stream.protocol, tools=tools)

    def one_replay() -> None:
        for _ in replay(chunks, protocol=stream.protocol, tools=tools):
            pass

    def one_check() -> None:
        check_input("bench", chunks, protocol=stream.protocol, tools=tools)

    # The same number of runs for both: the best of more runs is lower, so fewer runs of the
    # check would inflate the ratio on a busy machine.
    return CheckCost(len(stream.data), stream.events, _best(one_replay, runs * 5),
                     _best(one_check, runs * 5), report.verdict())


# -- replay --summary peak memory --------------------------------------------------------------

# The peak is read from VmHWM: ru_maxrss survives exec, so a child forked from a big benchmark
# process would report the parent's size.
_CHILD = """
import sys, time
mode, path = sys.argv[1], sys.argv[2]
from callscope.tui import cli
from callscope.core import engine, replay, session, records  # what the replay imports
from callscope.tui import table
start = time.process_time()
if mode == "replay":
    import io
    out = io.StringIO()
    # (the parser the CLI builds for replay: without the network commands, whose imports
    # are 18 MB the replay never loads)
    args = cli.build_parser(network=False).parse_args(["replay", "--summary", path])
    code = cli.HANDLERS["replay"](args, out)
    assert code == 0, code
    sys.stderr.write(out.getvalue()[-2000:])
elapsed = time.process_time() - start
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(int(hwm.split()[1]) * 1024, elapsed)
"""


@dataclass
class MemoryCost:
    file_bytes: int
    wire: int
    events: int
    peak_rss: int
    baseline_rss: int
    seconds: float
    summary: str

    @property
    def ratio(self) -> float:
        return self.peak_rss / self.file_bytes


def _cache_dir() -> Path:
    path = Path(tempfile.gettempdir()) / "callscope-bench"
    path.mkdir(exist_ok=True)
    return path


def _source_hash() -> str:
    here = Path(__file__).resolve().parent
    core = here.parent / "core"
    parts = [here / "streams.py", *sorted(core.glob("synth*.py")), *sorted(core.glob("session*.py"))]
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.read_bytes())
    return digest.hexdigest()[:12]


def session_file(target_bytes: int) -> tuple[Path, BenchStream | None]:
    """A session file of about ``target_bytes``, cached in the temp dir (keyed by the sources that
    generate it), so repeated runs do not pay for writing 100 MB again."""
    from callscope.core.session import Chunk, SessionHeader, StreamEnd, save_session

    path = _cache_dir() / f"session-{target_bytes}-{_source_hash()}.jsonl"
    meta = path.with_suffix(".json")
    if path.exists() and meta.exists():
        return path, None
    for stale in path.parent.glob(f"session-{target_bytes}-*"):  # made by older sources
        stale.unlink(missing_ok=True)
    # A session line escapes the JSON payload's quotes: the file is about 1.37x the wire bytes.
    stream = session_stream(int(target_bytes / 1.37))
    header = SessionHeader(protocol=stream.protocol, tools=stream.tools, source="constructed",
                           provenance="bench/streams.py session_stream (core/synth.py)")
    save_session(str(path), header, (Chunk(t, d) for t, d in zip(stream.times, stream.chunks, strict=True)),
                 StreamEnd("clean"))
    meta.write_text(json.dumps({"wire": len(stream.data), "events": stream.events}))
    return path, stream


def _child(mode: str, path: Path) -> tuple[int, float, str]:
    env = dict(os.environ)
    done = subprocess.run([sys.executable, "-c", _CHILD, mode, str(path)], capture_output=True,
                          text=True, env=env, check=True)
    rss, elapsed = done.stdout.split()
    return int(rss), float(elapsed), done.stderr.strip()


def memory_cost(target_bytes: int) -> MemoryCost:
    path, _ = session_file(target_bytes)
    meta = json.loads(path.with_suffix(".json").read_text())
    baseline, _, _ = _child("baseline", path)
    peak, elapsed, summary = _child("replay", path)
    return MemoryCost(path.stat().st_size, meta["wire"], meta["events"], peak, baseline, elapsed,
                      summary.splitlines()[-1] if summary else "")


# -- replay --summary as a process, against the floor as a process -----------------------------

_FLOOR_PROCESS = """
import base64, sys, orjson
path = sys.argv[1]
if path.endswith(".jsonl"):  # a session: each chunk line parsed, the chunks joined
    with open(path, "rb") as f:
        f.readline()
        lines = [orjson.loads(line) for line in f]
        data = b"".join(c["text"].encode() if "text" in c else base64.b64decode(c["b64"])
                        for c in lines if "t" in c and "end" not in c)
else:
    with open(path, "rb") as f:
        data = f.read()
for block in data.split(b"\\n\\n"):
    i = block.find(b"data: ")
    if i >= 0 and block[i + 6:] != b"[DONE]":
        orjson.loads(block[i + 6:])
"""


@dataclass
class ProcessCost:
    label: str
    file_bytes: int
    replay: list[float]
    """Wall seconds of each ``callscope replay FILE --summary`` process."""
    floor: list[float]
    """Wall seconds of each floor process, run in turn with them."""

    @property
    def ratios(self) -> list[float]:
        return sorted(r / f for r, f in zip(self.replay, self.floor, strict=True))

    @property
    def ratio(self) -> float:
        return median(self.ratios)


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


# An installed package has its bytecode compiled (pip compiles at install; an editable checkout
# writes it on the first run). An environment that sets PYTHONDONTWRITEBYTECODE would make every
# timed process compile every module again (~0.1-0.2 s on this machine class), which no user
# pays: the children run without it, after the warm-up run that writes the bytecode.
_CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _wall(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=_CHILD_ENV)
    return time.perf_counter() - start


def process_files(wire_bytes: int, small_bytes: int) -> list[tuple[str, Path]]:
    """A raw ``.sse`` capture and a ``.jsonl`` session of about ``wire_bytes`` of stream, and a
    session of about ``small_bytes``, written once to the temp dir."""
    from callscope.core.session import Chunk, SessionHeader, StreamEnd, save_session

    from .streams import small_session

    out = []
    for label, stream, suffix in (("raw .sse", session_stream(wire_bytes), ".sse"),
                                  ("session .jsonl", session_stream(wire_bytes), ".jsonl"),
                                  ("small session .jsonl", small_session(small_bytes), ".jsonl")):
        path = _cache_dir() / f"process-{label.split()[0]}-{len(stream.data)}-{_source_hash()}{suffix}"
        if not path.exists():
            if suffix == ".sse":
                path.write_bytes(stream.data)
            else:
                header = SessionHeader(protocol=stream.protocol, tools=stream.tools,
                                       source="constructed", provenance="bench/extra.py")
                save_session(str(path), header, (Chunk(t, d) for t, d in
                                                 zip(stream.times, stream.chunks, strict=True)),
                             StreamEnd("clean"))
        out.append((label, path))
    return out


def process_cost(wire_bytes: int = 1_000_000, small_bytes: int = 20_000,
                 repeats: int = 7) -> list[ProcessCost]:
    """``callscope replay FILE --summary`` as a process, start-up included, and the floor as a
    process (the interpreter, orjson, the file read, split and parsed), in turn, ``repeats``
    pairs each (the order alternating), wall clock."""
    replay = [sys.executable, "-m", "callscope.tui.cli", "replay", "--summary"]
    floor = [sys.executable, "-c", _FLOOR_PROCESS]
    costs = []
    for label, path in process_files(wire_bytes, small_bytes):
        cost = ProcessCost(label, path.stat().st_size, [], [])
        _wall([*replay, str(path)])  # (the page cache warm for both)
        for n in range(repeats):
            if n % 2:
                cost.floor.append(_wall([*floor, str(path)]))
                cost.replay.append(_wall([*replay, str(path)]))
            else:
                cost.replay.append(_wall([*replay, str(path)]))
                cost.floor.append(_wall([*floor, str(path)]))
        costs.append(cost)
    return costs
