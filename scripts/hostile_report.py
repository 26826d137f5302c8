#!/usr/bin/env python3
"""What was tried against callscope, and what held: the table in docs/hostile-input.md.

    /work/venv/bin/python scripts/hostile_report.py                  # everything (~5 minutes)
    /work/venv/bin/python scripts/hostile_report.py --fuzz-json run.json --skip-limits

Sections, each re-run from scratch (nothing is copied from a previous run):

* recordings: every real recording and bundled session, every chunking ``callscope check``
  knows, every cut offset, with permissive tools so the execute branch is reachable;
* fuzz: every target of ``scripts/fuzz.py`` for ``--fuzz-examples`` inputs (or the counts of a
  long run, from its ``--json-out`` file);
* faults: connection resets (cuts), one byte at a time, bursts, killed recorders, failing saves;
* untrusted files and terminal safety: broken files through ``callscope replay`` as a process,
  hostile text through the table, the JSON lines and the error line;
* limits: a 50 MB line, 100k calls, nesting depth 100k, ... each in a child process with a
  timeout, its time and peak memory measured.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import fuzz  # noqa: E402
import fuzz_oracle as oracle  # noqa: E402
import fuzz_strategies as strategies  # noqa: E402
import hostile_inputs as hostile  # noqa: E402
from callscope.core.check import check_input  # noqa: E402

Row = tuple[str, str, str]  # (what was tried, how much, what held)


def held(ok: bool, detail: str = "") -> str:
    return ("held" if ok else "**FAILED**") + (f": {detail}" if detail else "")


# -- recordings ----------------------------------------------------------------------------------

def recordings() -> list[Row]:
    seeds = strategies.corpus()
    cuts = chunkings = executed = 0
    failed: list[str] = []
    for seed in seeds:
        chunks, pos = [], 0
        for n in seed.sizes:
            chunks.append((0.0, seed.data[pos:pos + n]))
            pos += n
        tools = oracle.toolset("permissive", seed.data, seed.protocol, ())
        report = check_input(seed.name, chunks, protocol=seed.protocol, tools=tools)
        cuts, chunkings = cuts + report.cuts, chunkings + len(report.chunkings)
        executed += report.executed
        if not report.ok:
            failed.append(f"{seed.name}: {report.violations[0]}")
    fixtures = sum(s.name.startswith("fixture:") for s in seeds)
    return [(f"real recordings ({fixtures}) and bundled sessions ({len(seeds) - fixtures}): "
             "recorded, whole, 1 byte and 3 random chunkings; a cut at every byte offset",
             f"{len(seeds)} inputs, {chunkings} replays, {cuts:,} cuts, {executed} executions",
             held(not failed, "; ".join(failed[:2]) or "same decisions under every chunking; "
                  "no cut executes anything the full stream does not"))]


# -- fuzz ----------------------------------------------------------------------------------------

def fuzz_rows(examples: int, counts: dict[str, Any] | None) -> list[Row]:
    failures: dict[str, str] = {}
    if counts is None:
        for name in fuzz.TARGETS:
            failure = fuzz.run_batch(name, examples if name != "cli" else max(examples // 10, 10), None)
            if failure is not None:
                failures[name] = fuzz.describe_failure(failure)
        counts = {"targets": {k: dict(v) for k, v in oracle.STATS.items()}, "failures": failures}
    rows = []
    targets: dict[str, dict[str, int]] = counts["targets"]
    for name, description in strategies.DESCRIPTIONS.items():
        stats = Counter(targets.get(name, {}))
        if name == "cli":  # counted as cli-process by earlier versions
            stats.update(targets.get("cli-process", {}))
        if name == "session":  # the loaded files' engine runs: same inputs, more reached
            stats.update({k: v for k, v in targets.get("session:engine", {}).items()
                          if k not in ("inputs", "bytes")})
        reached = ", ".join(f"{stats[k]:,} {k}" for k in ("frames", "calls", "executed", "rejected",
                                                          "loaded", "faults") if stats[k])
        known = [f"`{k[6:]}` x{v}" for k, v in stats.items() if k.startswith("known:")]
        verdict = held(name not in counts["failures"], counts["failures"].get(name, "")[:160])
        if known:
            verdict += "; known bugs hit: " + ", ".join(known)
        rows.append((f"fuzz `{name}`: {description}", f"{stats['inputs']:,} inputs ({reached})",
                     verdict))
    return rows


# -- faults --------------------------------------------------------------------------------------

def faults() -> list[Row]:
    rows = []
    seeds = [s for s in strategies.corpus() if s.name.startswith("fixture:")]
    trickled = 0
    for seed in seeds:
        oracle.check_stream("trickle", seed.data, (1,), seed.protocol, "permissive")
        trickled += len(seed.data)
    rows.append(("one byte at a time (every real recording fed in 1-byte chunks)",
                 f"{trickled:,} one-byte feeds", held(True, "same decisions as one chunk")))
    burst = hostile.burst_stream(100_000)
    started = time.perf_counter()
    oracle.check_stream("burst", burst, (), "anthropic", "permissive")
    seconds = time.perf_counter() - started
    rows.append(("a burst: 100,000 argument deltas in one chunk",
                 f"{len(burst):,} bytes in {seconds:.1f} s ({100_000 / seconds:,.0f} events/s, "
                 f"every property checked too)", held(True, "every property")))
    rows.append(live_faults())
    killed = hostile.killed_recorder()
    rows.append(("recorder killed (SIGKILL) in the middle of saving a session",
                 "1 process", held(killed == "", killed or "target never appears; the partial "
                                   "file loads with end `missing` and every chunk written")))
    return rows


def live_faults() -> Row:
    """The emulated provider's faults (reset, stall, cut, trickle, HTTP errors) through real
    clients on loopback: the live issue's own tests, run here and counted."""
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-o", "addopts=", "-p",
                           "no:cacheprovider", str(ROOT / "tests" / "test_net_serve.py")],
                          capture_output=True, text=True, timeout=900, cwd=ROOT)
    summary = (done.stdout.strip().splitlines() or ["no output"])[-1].strip("= ")
    return ("emulated provider faults through real HTTP clients on loopback: reset, stall, cut, "
            "1-byte chunks, delays, HTTP errors (tests/test_net_serve.py)", summary,
            held(done.returncode == 0, "" if done.returncode == 0 else summary))


# -- untrusted files and terminal safety ---------------------------------------------------------

def files_and_terminal() -> list[Row]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        broken = hostile.broken_files(tmp)
        bad = []
        for name, path in broken:
            try:
                if oracle.check_cli_subprocess(path) != 2:
                    bad.append(f"{name}: accepted")
            except oracle.Violation as exc:
                bad.append(f"{name}: {exc}")
        rows.append(("broken input files through `callscope replay FILE` (a real process)",
                     f"{len(broken)} files: " + ", ".join(n for n, _ in broken),
                     held(not bad, "; ".join(bad)[:300] or "exit 2, one line naming the file, "
                          "no traceback")))
        for place, problems in hostile.terminal_checks(tmp).items():
            rows.append((f"hostile text (ANSI, OSC 8/52, C1, bidi, markup, long lines) in {place}",
                         f"{len(hostile.HOSTILE)} strings x every field",
                         held(not problems, "; ".join(problems)[:300])))
    return rows


# -- limits --------------------------------------------------------------------------------------

def limit_rows(timeout: float) -> list[Row]:
    rows = []
    for probe in hostile.PROBES:
        result = hostile.run_probe(probe, timeout)
        rows.append((f"limit: {probe.title}", result.measured, result.verdict))
    return rows


def markdown(rows: list[Row]) -> str:
    out = ["| what was tried | how much | what held |", "|---|---|---|"]
    out += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fuzz-examples", type=int, default=300, help="inputs per fuzz target")
    parser.add_argument("--fuzz-json", metavar="FILE", help="counts of a long run (fuzz.py --json-out)")
    parser.add_argument("--skip-limits", action="store_true")
    parser.add_argument("--probe-timeout", type=float, default=120.0)
    args = parser.parse_args(argv)
    counts = json.loads(Path(args.fuzz_json).read_text()) if args.fuzz_json else None
    sections = [recordings, lambda: fuzz_rows(args.fuzz_examples, counts), faults, files_and_terminal]
    if not args.skip_limits:
        sections.append(lambda: limit_rows(args.probe_timeout))
    rows: list[Row] = []
    for section in sections:
        rows += section()
        print(f"[{len(rows)} rows]", file=sys.stderr)
    print(markdown(rows))
    return 0 if all("FAILED" not in r[2] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
