#!/usr/bin/env python3
"""Property-based fuzzing of the engine, the gate, the session loader and the CLI (hypothesis).

    /work/venv/bin/python scripts/fuzz.py --minutes 10          # the long run, every target
    /work/venv/bin/python scripts/fuzz.py --examples 2000 --targets bytes,payload
    /work/venv/bin/python scripts/fuzz.py --list

Targets (``--list``): random bytes; SSE built from the protocols' own vocabulary; byte mutations
(flip, insert, delete, duplicate, overwrite, cut) of every real recording and bundled session;
JSON payloads mutated inside valid frames (keys dropped, types changed, huge strings, deep
nesting, wrong indexes, repeated ids, hostile argument text); frames shuffled, dropped and
duplicated; mutated session files (and a HAR) through the loader and the CLI; faults while
saving. Every input runs with a drawn chunking, tool set (none, permissive, the strict demo
tools, the session's own) and protocol (detected, forced right, forced wrong).

Properties (:mod:`fuzz_oracle`): nothing but :class:`CallscopeError` escapes; no call executes
unless the terminal signal preceded the decision, the turn was not cut, halted or failed, the
provider closed the call, its text parses strictly to exactly the arguments executed, and those
arguments satisfy the tool's schema; chunking never changes a decision; frames keep every byte.

It prints, per target, how many inputs ran and what they reached, then any failure with the
input hypothesis shrank it to (saved under ``--save-failures``). Exit status 1 on a failure.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fuzz_oracle as oracle  # noqa: E402
import fuzz_strategies as strategies  # noqa: E402
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import seed as hypothesis_seed  # noqa: E402

TARGETS = strategies.TARGETS


def describe_failure(exc: BaseException) -> str:
    notes = [n for n in getattr(exc, "__notes__", []) if n.startswith(("Falsifying", "You can"))]
    head = f"{type(exc).__name__}: {str(exc)[:300]}"
    return " | ".join([head, *(n[:300] for n in notes)])


def save_failure(directory: Path, name: str, exc: BaseException) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.txt"
    text = "".join(traceback.format_exception(exc))
    path.write_text(text + "\n" + "\n".join(getattr(exc, "__notes__", [])) + "\n")
    return path


COLUMNS = ("inputs", "bytes", "frames", "calls", "executed", "refused", "anomalies", "terminal",
           "halted", "callscope_errors", "rejected", "loaded")


def stats_table(stats: dict[str, Counter[str]]) -> str:
    shown = [c for c in COLUMNS if any(s[c] for s in stats.values())]
    lines = ["| target | " + " | ".join(shown) + " |", "|---" * (len(shown) + 1) + "|"]
    for name in sorted(stats):
        lines.append(f"| {name} | " + " | ".join(f"{stats[name][c]:,}" for c in shown) + " |")
    known = Counter({k: v for s in stats.values() for k, v in s.items() if k.startswith("known:")})
    for key, hits in sorted(known.items()):
        lines.append(f"\nknown bug {key[6:]}: {hits} inputs hit it (see tests/test_fuzz.py)")
    return "\n".join(lines)


def run_batch(name: str, examples: int, seed: int | None, shrink: bool = True) -> BaseException | None:
    """Run ``examples`` inputs of one target; the (shrunk) failure, or None."""
    strategy, check = TARGETS[name]
    phases = [Phase.generate, Phase.shrink] if shrink else [Phase.generate]

    @settings(max_examples=examples, deadline=None, database=None, phases=phases,
              suppress_health_check=list(HealthCheck), print_blob=True)
    @given(strategy())
    def prop(case: Any) -> None:
        check(case)

    if seed is not None:
        prop = hypothesis_seed(seed)(prop)
    try:
        prop()
    except BaseException as exc:  # noqa: BLE001 - reported, then the other targets go on
        if isinstance(exc, KeyboardInterrupt):
            raise
        return exc
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, help="run every target round robin this long")
    parser.add_argument("--examples", type=int, default=300, help="inputs per target (without --minutes)")
    parser.add_argument("--batch", type=int, default=200, help="inputs per batch in a timed run")
    parser.add_argument("--targets", default=",".join(TARGETS), help="comma-separated target names")
    parser.add_argument("--seed", type=int, help="a fixed seed (default: random)")
    parser.add_argument("--scale", choices=("suite", "long"), default="long",
                        help="input sizes: long reaches MB strings and nesting depth 100k")
    parser.add_argument("--json-out", metavar="FILE", help="write the counts as JSON")
    parser.add_argument("--save-failures", metavar="DIR",
                        default=str(Path(tempfile.gettempdir()) / "callscope-fuzz-failures"),
                        help="where each failing target's traceback and shrunk input go")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args(argv)
    if args.list:
        for name in TARGETS:
            print(f"{name:10} {strategies.DESCRIPTIONS[name]}")
        return 0
    strategies.set_scale(args.scale)
    names = [n for n in args.targets.split(",") if n]
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        parser.error(f"unknown target(s) {unknown}; --list shows them")
    failures: dict[str, str] = {}
    started = time.monotonic()
    deadline = started + args.minutes * 60 if args.minutes else None
    round_ = 0
    active = list(names)
    while active:
        for name in list(active):
            examples = args.batch if deadline else args.examples
            if name == "cli":  # a process per input: fewer of them
                examples = max(examples // 10, 5)
            seed = None if args.seed is None else args.seed + round_ * 1000 + names.index(name)
            failure = run_batch(name, examples, seed)
            if failure is not None:
                failures[name] = describe_failure(failure)
                save_failure(Path(args.save_failures), name, failure)
                active.remove(name)
            if deadline is None and name in active:
                active.remove(name)  # one batch of --examples per target
            elif deadline is not None and time.monotonic() >= deadline:
                active = []
                break
        round_ += 1
    elapsed = time.monotonic() - started
    stats = oracle.STATS
    # "session:engine" counts the loaded session files again, as engine runs: not new inputs.
    total = sum(s["inputs"] for k, s in stats.items() if ":" not in k)
    print(f"callscope fuzz: {elapsed:.0f} s, scale {args.scale}, {total} inputs")
    print(stats_table(stats))
    for name, text in failures.items():
        print(f"\nFAILED {name}: {text}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({
            "seconds": round(elapsed), "scale": args.scale, "seed": args.seed,
            "targets": {k: dict(v) for k, v in stats.items()},
            "inputs": total,
            "failures": failures}, indent=1) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
