"""``python -m bench.run``: callscope against what users would otherwise run, in one process.

Per stream, every peer reads the same bytes as the same network reads (bench/peers.py): the
floor (split at blank lines + ``orjson.loads``), httpx-sse with ``+=`` accumulation, the
official SDK accumulator of the protocol, a naive live preview (jiter partial re-parse of the
whole buffer after every fragment) and callscope's engine, with and without the draft status.
Each measurement has a cap in CPU seconds: a peer over it is abandoned and reported "over cap"
with how far it got, and is not run again on the larger streams of the same series. Then
``callscope check`` against one replay, the peak memory of ``callscope replay --summary`` on a
100 MB session file (in a subprocess), and the TUI under Textual's pilot. Output is Markdown.

    python -m bench.run            # the default run
    python -m bench.run --quick    # small streams only (what the tests run)
    python -m bench.run --full     # 4 MB for every protocol, 10^6 events, Gemini, all parallel
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib.util
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import orjson

if __package__ in (None, ""):  # run as a file: python bench/run.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "bench"

from . import peers as P  # noqa: E402
from .extra import check_cost, memory_cost, process_cost  # noqa: E402
from .measure import Measurement, Paired, growth, measure, paired, seconds, skipped  # noqa: E402
from .report import Results, fitted_growth, load, machine, targets, targets_18  # noqa: E402
from .streams import BenchStream, Spec, build, human, small_session  # noqa: E402

KB, MB = 1_000, 1_000_000
MAIN = ("floor", "floor-reads", "httpx-sse", "sdk", "preview", "engine", "outcome", "nodraft")
LEAN = ("floor", "floor-reads", "httpx-sse", "sdk", "engine", "outcome")
STAGES = ("framing", "reader", "oneread")
OWN = ("floor", "floor-reads", "engine", "outcome", "nodraft", *STAGES)
"""The rows under ``own_cap``: the floor, and callscope's, whose growth is measured to 4 MB."""
NAMES = {
    "floor": "floor (split + orjson.loads)", "httpx-sse": "httpx-sse + naive +=",
    "preview": "naive preview (jiter re-parse)", "engine": "callscope engine",
    "nodraft": "callscope, no draft status", "framing": "callscope: SSE framing only",
    "reader": "callscope: framing + reader", "oneread": "callscope engine, stream as one read",
    "floor-reads": "floor fed the reads (buffer + split + orjson.loads)",
    "outcome": "callscope engine, outcome only (push_reads: hot path, no steps)",
}
FUNCS: dict[str, P.Peer] = {
    "floor": P.floor, "httpx-sse": P.httpx_sse_naive, "preview": P.naive_preview,
    "engine": P.callscope_engine, "nodraft": P.callscope_no_draft,
    "framing": P.callscope_framing, "reader": P.callscope_reader, "oneread": P.callscope_one_read,
    "floor-reads": P.floor_reads, "outcome": P.callscope_outcome,
}


@dataclass
class Series:
    key: str
    title: str
    specs: list[Spec]
    peers: tuple[str, ...] = MAIN
    stages_at: int | None = None
    """Argument size at which the engine's stages are also measured."""
    upto: dict[str, int] = field(default_factory=lambda: {"nodraft": 1 * MB})
    """Peers only run up to this argument size (the others run on every stream)."""


@dataclass
class Config:
    cap: float
    """CPU seconds per measurement of a peer, on streams of up to 200 KB of arguments ..."""
    big_cap: float
    """... and above (where the quadratic peers are known to be far over)."""
    own_cap: float
    series: list[Series]
    check_bytes: int
    memory_bytes: int
    tui_events: int
    seed: int = 1


def configure(mode: str) -> Config:
    three = ("openai-responses", "openai-chat", "anthropic")
    if mode == "quick":
        return Config(2.0, 1.0, 10.0, [
            Series("sizes", "Argument size, fragments of 1-8 characters, 1 call",
                   [Spec(p, s) for p in three for s in (1 * KB, 4 * KB)], stages_at=4 * KB),
            Series("parallel", "Parallel calls", [Spec("openai-responses", 4 * KB, calls=8)], LEAN),
        ], check_bytes=3_000, memory_bytes=1 * MB, tui_events=500)
    full = mode == "full"
    sizes = (10 * KB, 100 * KB, 1 * MB, 4 * MB) if full else (10 * KB, 100 * KB, 1 * MB)
    parallel = ([Spec(p, 1 * MB, calls=n) for p in three for n in (8, 64)] if full
                else [Spec("anthropic", 1 * MB, calls=64)])
    events = (10**5, 10**6) if full else (10**5,)
    series = [
        Series("sizes", "Argument size, fragments of 1-8 characters (as models send), 1 call",
               [Spec(p, s) for p in three for s in sizes], stages_at=100 * KB,
               upto={"nodraft": MB if full else 100 * KB, "httpx-sse": MB, "sdk": MB, "preview": MB}),
        Series("coarse", "Fragments of 32-48 characters, 1 MB, 1 call",
               [Spec(p, 1 * MB, fragments="32-48") for p in three], LEAN),
        Series("parallel", "Parallel calls: 1 MB of arguments in all, fragments of 1-8", parallel, LEAN),
        Series("events", "Long sessions by event count: 64 parallel calls, fragments of 1-8",
               [Spec("openai-chat", calls=64, events=n) for n in events], LEAN,
               upto={"sdk": MB}),
    ]
    if full:
        series.append(Series("gemini", "Gemini Interactions (no SDK accumulator), 1 call",
                             [Spec("gemini-interactions", s) for s in (10 * KB, 1 * MB)],
                             ("floor", "httpx-sse", "preview", "engine")))
    return Config(25.0, 2.0, 150.0 if full else 90.0, series, check_bytes=20_000, memory_bytes=100 * MB,
                  tui_events=10**5)


class Out:
    def __init__(self, streams: Sequence[TextIO]) -> None:
        self.streams = streams

    def __call__(self, text: str = "") -> None:
        for s in self.streams:
            s.write(text + "\n")
            s.flush()


def sdk_missing(protocol: str) -> str | None:
    package = "anthropic" if protocol == "anthropic" else "openai"
    if importlib.util.find_spec(package) is None:
        return f"{package} not installed: pip install -e '.[bench]'"
    return None


def _peers(series: Series, stream: BenchStream) -> list[tuple[str, str, P.Peer | None, str | None]]:
    """(key, display name, function, why it cannot run) for each peer of the series."""
    keys = [k for k in series.peers if stream.argument_bytes <= 1.1 * series.upto.get(k, 1 << 62)]
    if stream.spec.size == series.stages_at:
        keys += STAGES
    out: list[tuple[str, str, P.Peer | None, str | None]] = []
    for key in keys:
        if key != "sdk":
            out.append((key, NAMES[key], FUNCS[key], None))
        elif stream.protocol in P.SDKS:
            name, fn = P.SDKS[stream.protocol]
            missing = sdk_missing(stream.protocol)
            out.append((key, name, None if missing else fn, missing))
    return out


def run_series(series: Series, cfg: Config, out: Out, rows: list[tuple[Spec, str, Measurement]]) -> None:
    out(f"\n### {series.title}\n")
    out("| stream | peer | CPU time | MB/s | vs floor | growth per 10x | rebuilt |")
    out("|---|---|---:|---:|---:|---:|---|")
    over: dict[tuple[str, int, str, str], str] = {}
    previous: dict[tuple[str, int, str, str], Measurement] = {}
    for spec in series.specs:
        stream = _build(spec, cfg.seed)
        expected = [orjson.loads(a) for a in stream.arguments]
        calls = "" if spec.calls == 1 else f", {spec.calls} calls"
        head = (f"{spec.protocol}, {human(stream.argument_bytes)} args{calls} "
                f"({human(len(stream.data))} wire, {stream.events:,} events)")
        floor: Measurement | None = None
        for key, name, fn, missing in _peers(series, stream):
            group = (spec.protocol, spec.calls, spec.fragments, key)
            if missing or fn is None:
                m = skipped(name, stream, missing or "unavailable")
            elif group in over:
                m = skipped(name, stream, f"over cap at {over[group]}")
            elif key in STAGES and (*group[:3], "engine") in over:
                m = skipped(name, stream, "the engine was over cap")
            else:
                small = stream.argument_bytes <= 200 * KB
                cap = cfg.own_cap if key in OWN else cfg.cap if small else cfg.big_cap
                m = measure(name, fn, stream, cap, expected, own=key in OWN)
                if m.over:
                    over[group] = human(stream.argument_bytes)
            floor = m if key == "floor" else floor
            g = growth(previous[group], m) if group in previous else None
            if m.seconds is not None:
                previous[group] = m
            rows.append((spec, key, m))
            ratio = ("" if m.seconds is None or floor is None or not floor.seconds
                     else f"{m.seconds / floor.seconds:.1f}x")
            rate = "" if m.mb_per_s is None else f"{m.mb_per_s:.1f}"
            ok = {True: "yes", False: "**NO**", None: ""}[m.correct]
            out(f"| {head} | {name} | {m.cell()} | {rate} | {ratio} | "
                f"{'' if g is None else f'{g:.1f}x'} | {ok} |")
            head = ""
        del stream
        sys.stderr.write(f"  [{spec.label}: done at {time.perf_counter() - STARTED:.0f} s]\n")


def warm_up(cfg: Config) -> None:
    """Import every peer's modules and run each once on a tiny stream, so no measurement pays
    for imports or first-call caches; then freeze what is alive, so the collector does not walk
    the SDKs' type caches again during every measurement."""
    protocols = dict.fromkeys(spec.protocol for series in cfg.series for spec in series.specs)
    for protocol in protocols:
        stream = build(Spec(protocol, 300), cfg.seed)
        every = Series("warm", "", [stream.spec], MAIN, stages_at=300, upto={})
        for _, _, fn, missing in _peers(every, stream):
            if fn is not None and not missing:
                fn(stream, P.Budget(60.0))
    gc.collect()
    gc.freeze()


STARTED = time.perf_counter()
_build = functools.lru_cache(maxsize=1)(build)
"""The last stream built is kept: the TUI reads the same long session as the last series."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="small streams only (seconds)")
    mode.add_argument("--full", action="store_true", help="every protocol at 4 MB, 10^6 events")
    parser.add_argument("--cap", type=float, help="CPU seconds per peer measurement up to 200 KB "
                                                   "of arguments (default 25)")
    parser.add_argument("--big-cap", type=float, help="the same above 200 KB (default 2)")
    parser.add_argument("--own-cap", type=float, help="the same for the floor and callscope (default 90)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", help="comma-separated: sizes, coarse, parallel, events, gemini, "
                                       "ratios, process, check, memory, tui, live (the debugger "
                                       "under a live 10,000 events/s stream; only when named)")
    parser.add_argument("--markdown", metavar="FILE", help="also write the report to FILE")
    args = parser.parse_args(argv)
    cfg = configure("quick" if args.quick else "full" if args.full else "default")
    cfg.cap, cfg.big_cap, cfg.own_cap = (args.cap or cfg.cap, args.big_cap or cfg.big_cap,
                                         args.own_cap or cfg.own_cap)
    cfg.seed = args.seed
    only = set(args.only.split(",")) if args.only else None
    files = [open(args.markdown, "w", encoding="utf-8")] if args.markdown else []  # noqa: SIM115
    out = Out([sys.stdout, *files])
    started = time.perf_counter()
    try:
        out("## Machine\n")
        for line in machine():
            out(line)
        out(f"- load average at start: {load()}. Times are CPU seconds of the benchmark process, "
            f"best of up to 5 runs below 0.25 s (below 1.5 s for the floor and callscope). "
            f"Caps: {cfg.cap:g} s per peer up to 200 KB of "
            f"arguments, {cfg.big_cap:g} s above, {cfg.own_cap:g} s for the floor and callscope.")
        results = Results({})
        warm_up(cfg)
        for series in cfg.series:
            if only is None or series.key in only:
                run_series(series, cfg, out, results.rows.setdefault(series.key, []))
        growth_lines(results, out)
        ratios = processes = None
        if only is None or "ratios" in only:
            ratios = ratio_section(cfg, out)
        if only is None or "process" in only:
            processes = process_section(cfg, out)
        check = memory = tui = None
        if only is None or "tui" in only:
            tui = tui_section(cfg, out)
        if only is not None and "live" in only:  # ~1 min of wall time: asked for by name
            from .live_bench import run_section

            out()
            for line in run_section(10_000, 10.0):
                out(line)
        if only is None or "check" in only:
            check = check_cost(small_session(cfg.check_bytes, cfg.seed))
            out("\n### `callscope check` against one replay\n")
            out(f"- {check.verdict}")
            out(f"- one replay {seconds(check.replay)}, check {seconds(check.check)}: "
                f"**{check.ratio:.0f}x** one replay")
        if only is None or "memory" in only:
            memory = memory_cost(cfg.memory_bytes)
            out("\n### `callscope replay --summary` peak memory\n")
            out(f"- session file {human(memory.file_bytes)} ({human(memory.wire)} of stream, "
                f"{memory.events:,} events), replayed in {seconds(memory.seconds)} of CPU")
            out(f"- peak RSS {human(memory.peak_rss)}: **{memory.ratio:.2f}x** the file (the "
                f"interpreter with the same modules imported: {human(memory.baseline_rss)})")
        if only is None:
            out("\n### Targets (issue 18)\n")
            out("| target | measured | |")
            out("|---|---|---|")
            sdks = {p: name for p, (name, _) in P.SDKS.items() if not sdk_missing(p)}
            for target, measured, met in targets_18(results, sdks, ratios or [], processes or [],
                                                    check, memory, tui):
                out(f"| {target} | {measured} | {met} |")
            out("\n### Targets (issue 7)\n")
            out("| target | measured | |")
            out("|---|---|---|")
            sdks = {p: name for p, (name, _) in P.SDKS.items() if not sdk_missing(p)}
            for target, measured, met in targets(results, sdks, check, memory, tui):
                out(f"| {target} | {measured} | {met} |")
        out(f"\nTotal run time {seconds(time.perf_counter() - started)} (wall); "
            f"load average at end: {load()}.")
    finally:
        for f in files:
            f.close()
    return 0


def growth_lines(results: Results, out: Out) -> None:
    rows = results.rows.get("sizes", [])
    protocols = list(dict.fromkeys(s.protocol for s, _, _ in rows))
    lines = []
    for peer in ("floor", "engine", "outcome"):
        for p in protocols:
            fit = fitted_growth(results.series("sizes", peer, p))
            if fit is not None:
                lines.append(f"{NAMES[peer]}, {p}: {fit:.1f}x")
    if lines:
        out("\nGrowth per 10x of argument size, least-squares fit over the sizes above: "
            + "; ".join(lines) + ".")


RATIO_PROTOCOLS = ("openai-responses", "openai-chat", "anthropic", "gemini-interactions",
                   "gemini-generate")
"""Every SSE protocol (the floor's split at blank lines is SSE's; the binary and NDJSON
framings have no floor row here)."""


def ratio_section(cfg: Config, out: Out) -> list[tuple[str, Paired]]:
    """The engine's target: each protocol at 1 MB of arguments (10 KB in --quick), the engine
    for the outcome against the floor fed the same reads, in interleaved pairs."""
    size = 10 * KB if cfg.check_bytes < 10_000 else 1 * MB
    out(f"\n### The engine against the floor fed the same reads, {human(size)} of arguments in "
        "1-8 character fragments (CPU, interleaved pairs, median and spread)\n")
    out("| protocol | outcome only (push_reads) | with every step (feed) |")
    out("|---|---|---|")
    rows = []
    for protocol in RATIO_PROTOCOLS:
        stream = _build(Spec(protocol, size), cfg.seed)
        hot = paired(protocol, P.callscope_outcome, P.floor_reads, stream, pairs=5)
        steps = paired(protocol, P.callscope_engine, P.floor_reads, stream, pairs=3)
        out(f"| {protocol} | {hot.cell()} | {steps.cell()} |")
        rows.append((protocol, hot))
        sys.stderr.write(f"  [ratios {protocol}: done at {time.perf_counter() - STARTED:.0f} s]\n")
    return rows


def process_section(cfg: Config, out: Out) -> list[object]:
    """``callscope replay FILE --summary`` as a process, start-up included, against the floor
    as a process, in interleaved pairs (wall clock)."""
    quick = cfg.check_bytes < 10_000
    costs = process_cost(100 * KB if quick else 1 * MB, 20 * KB, repeats=3 if quick else 7)
    out("\n### `callscope replay FILE --summary` as a process (wall, start-up included, "
        "interleaved pairs)\n")
    out("| file | replay --summary | floor process | ratio (median, spread) |")
    out("|---|---:|---:|---:|")
    for c in costs:
        out(f"| {c.label}, {human(c.file_bytes)} | {seconds(sorted(c.replay)[len(c.replay) // 2])} "
            f"| {seconds(sorted(c.floor)[len(c.floor) // 2])} | {c.ratio:.2f}x "
            f"({c.ratios[0]:.2f}-{c.ratios[-1]:.2f}x) |")
    return list(costs)


def tui_section(cfg: Config, out: Out) -> object | None:
    if importlib.util.find_spec("callscope.tui.app") is None:
        out("\n### TUI\n\n- not available (callscope.tui.app not found)")
        return None
    from .tui_bench import TuiPairs, tui_cost
    from .tui_floor import tui_floor

    stream = _build(Spec("openai-chat", calls=64, events=cfg.tui_events), cfg.seed)
    big = cfg.tui_events > 1000
    # Paired rounds, as the engine ratios are: the debugger, then the floor right after it.
    # (8 s a kind a round: 40-150 samples as the host goes, so a round's p99 is its slowest
    # sample or two; the median of three rounds keeps one round's outlier out)
    rounds = []
    for _ in range(3 if big else 1):
        cost = tui_cost(stream, budget=8.0 if big else 2.0)
        cost.floor = tui_floor(150 if big else 10)
        rounds.append(cost)
    pairs = TuiPairs(rounds)
    tui = pairs.median_round(lambda c: c.seek_p99 / c.floor.new_p99 if c.floor else 0.0)
    floor = tui.floor
    assert floor is not None
    out("\n### TUI (Textual pilot, headless, 200x50; wall clock)\n")
    out(f"- session: {human(len(stream.data))} wire, {tui.events:,} events, {tui.steps:,} steps; "
        f"{len(rounds)} round{'s' if len(rounds) > 1 else ''}, each the debugger then the floor "
        f"(`bench/tui_floor.py`); the numbers below are the round with the median seek ratio")
    out(f"- first paint {tui.first_paint:.2f} s ({tui.first_paint_cpu:.2f} s CPU), showing the "
        f"first {tui.first_steps:,} steps; whole session indexed and shown after {tui.ready:.2f} s")
    out(f"- step (next frame, key to paint, {tui.samples[0]} samples): p50 {seconds(tui.step_p50)}, "
        f"p99 {seconds(tui.step_p99)} ({seconds(tui.step_cpu_p99)} CPU)")
    out(f"- seek (random step, to paint, {tui.samples[1]} samples): p50 {seconds(tui.seek_p50)}, "
        f"p99 {seconds(tui.seek_p99)} ({seconds(tui.seek_cpu_p99)} CPU)")
    out(f"- floor (Textual repainting the same screen, every row handed over ready, "
        f"{floor.samples} moves each): every row new p50 {seconds(floor.new_p50)}, "
        f"p99 {seconds(floor.new_p99)}; the same rows again p50 {seconds(floor.same_p50)}, "
        f"p99 {seconds(floor.same_p99)} (CPU p99 {seconds(floor.new_cpu_p99)} and "
        f"{seconds(floor.same_cpu_p99)})")
    if floor.made_p99:
        out(f"- floor with every row new and made at the paint from Textual's `Content` (four "
            f"styled pieces a row, as a seek's rows are styled text): p50 {seconds(floor.made_p50)}, "
            f"p99 {seconds(floor.made_p99)}; callscope's seek p99 is "
            f"{tui.seek_p99 / floor.made_p99:.1f}x it")
    if floor.step_p99:
        out(f"- floor with a step's panes new (the argument buffers and a pane the frame detail's "
            f"size scrolled to new rows, the others the same): p50 {seconds(floor.step_p50)}, "
            f"p99 {seconds(floor.step_p99)}; callscope's step p99 is "
            f"{tui.step_p99 / floor.step_p99:.1f}x it")
    seek, step = pairs.seek_ratios, pairs.step_ratios
    out(f"- callscope's seek p99 over the new-rows floor's (a seek's), round by round: "
        f"{', '.join(f'{r:.2f}x' for r in seek)}; its step p99 over the same-rows floor's (a "
        f"step's): {', '.join(f'{r:.2f}x' for r in step)}; main-thread CPU p99 against the "
        f"floor's, round by round: seek "
        f"{', '.join(f'{c.seek_cpu_p99 / c.floor.new_cpu_p99:.2f}x' for c in rounds if c.floor)}, "
        f"step {', '.join(f'{c.step_cpu_p99 / c.floor.same_cpu_p99:.2f}x' for c in rounds if c.floor)}")
    tui.pairs = pairs
    return tui


if __name__ == "__main__":
    sys.exit(main())
