"""Timing one peer on one stream: a time cap, repeats for short runs, and a correctness check."""

from __future__ import annotations

import gc
import math
from dataclasses import dataclass
from typing import Any

import orjson

from .peers import Budget, OverCap, Peer, cpu
from .streams import BenchStream

SHORT = 0.25
"""Runs shorter than this are repeated (best of several) to get above timer and load noise."""
REPEAT_BUDGET = 0.5
OWN_SHORT = 1.5
"""The same for the floor and callscope, whose runs up to 100 KB (0.3-1 s) are the denominators
of the SDK targets: one run of those took 806 ms where the run before took 495 ms."""
OWN_REPEAT_BUDGET = 4.0


@dataclass
class Measurement:
    peer: str
    label: str
    wire: int
    """Bytes on the wire."""
    arguments: int
    """Argument bytes over all calls."""
    seconds: float | None
    """Best CPU time of the benchmark process, or None when the peer went over the cap (the
    cap itself is wall time: nothing waits for a peer longer than that)."""
    done: int = 0
    """Over cap: bytes of the stream it had consumed."""
    at_least: float | None = None
    """Over cap: a lower bound of its time, the rest of the stream at its latest rate (the cost
    per byte of these peers only grows along a stream: they re-process what they hold)."""
    runs: int = 1
    correct: bool | None = None
    """Whether the peer rebuilt every call's arguments (None: it rebuilds nothing)."""
    skipped: str | None = None

    @property
    def over(self) -> bool:
        return self.seconds is None

    @property
    def mb_per_s(self) -> float | None:
        return None if self.seconds is None else self.wire / 1e6 / self.seconds

    def cell(self) -> str:
        if self.skipped:
            return f"over cap ({self.skipped})"
        if self.seconds is None:
            bound = "" if self.at_least is None else f", >= {seconds(self.at_least)} at its latest rate"
            return f"over cap at {100 * self.done / self.wire:.0f}%{bound}"
        return seconds(self.seconds)


def seconds(t: float) -> str:
    if t >= 100:
        return f"{t:.0f} s"
    if t >= 1:
        return f"{t:.2f} s"
    return f"{t * 1000:.3g} ms"


def _normal(value: Any) -> Any:
    return orjson.loads(value) if isinstance(value, str) else value


def _sizes(stream: BenchStream) -> tuple[str, int, int]:
    return stream.spec.label, len(stream.data), stream.argument_bytes


def skipped(name: str, stream: BenchStream, why: str) -> Measurement:
    return Measurement(name, *_sizes(stream), None, skipped=why)


def measure(name: str, peer: Peer, stream: BenchStream, cap: float,
            expected: list[Any] | None = None, own: bool = False) -> Measurement:
    """Run ``peer`` on ``stream`` under ``cap`` seconds; repeat short runs and keep the best
    (``own``: the floor or callscope, repeated up to longer runs)."""
    short, repeat_budget = (OWN_SHORT, OWN_REPEAT_BUDGET) if own else (SHORT, REPEAT_BUDGET)
    best: float | None = None
    runs, spent, correct = 0, 0.0, None
    gc.collect()
    while True:
        budget = Budget(cap)
        start = cpu()
        try:
            result = peer(stream, budget)
        except OverCap as exc:
            spent_here = cpu() - start
            bound = None if not exc.rate else spent_here + (len(stream.data) - exc.done) / exc.rate
            return Measurement(name, *_sizes(stream), None, done=exc.done, runs=runs + 1,
                               at_least=bound)
        elapsed = cpu() - start
        runs += 1
        spent += elapsed
        best = elapsed if best is None else min(best, elapsed)
        if runs == 1 and result is not None and expected is not None:
            correct = [_normal(v) for v in result] == expected
        if best >= short or spent >= repeat_budget or runs >= 5:
            return Measurement(name, *_sizes(stream), best, runs=runs, correct=correct)


def growth(small: Measurement, large: Measurement) -> float | None:
    """Time factor per 10x of argument size between two measurements of one series."""
    if small.seconds is None or large.seconds is None:
        return None
    ratio = large.arguments / small.arguments
    return float((large.seconds / small.seconds) ** (1 / math.log10(ratio)))


@dataclass
class Paired:
    """One peer against a base on one stream, ``len(ratios)`` pairs run back to back (the order
    alternating): on a shared machine the load moves between pairs, far less within one."""

    label: str
    ratios: list[float]
    base: list[float]
    """The base's seconds, pair by pair."""

    @property
    def median(self) -> float:
        ordered = sorted(self.ratios)
        mid = len(ordered) // 2
        return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2

    def cell(self) -> str:
        return (f"{self.median:.2f}x (spread {min(self.ratios):.2f}-{max(self.ratios):.2f}x over "
                f"{len(self.ratios)} pairs; base median {seconds(sorted(self.base)[len(self.base) // 2])})")


def paired(label: str, peer: Peer, base: Peer, stream: BenchStream, pairs: int = 5,
           cap: float = 600.0) -> Paired:
    """The ratio of ``peer`` to ``base`` in ``pairs`` interleaved pairs of single runs."""
    ratios, bases = [], []
    for n in range(pairs):
        times = {}
        for which, fn in ((("base", base), ("peer", peer)) if n % 2 == 0
                          else (("peer", peer), ("base", base))):
            gc.collect()
            start = cpu()
            fn(stream, Budget(cap))
            times[which] = cpu() - start
        ratios.append(times["peer"] / times["base"])
        bases.append(times["base"])
    return Paired(label, ratios, bases)
