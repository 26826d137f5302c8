"""What the run prints besides the tables: the machine, fitted growth, and the targets of issue 7
checked against this run's numbers only."""

from __future__ import annotations

import math
import os
import platform
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .measure import Measurement, growth
from .streams import Spec, human


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def load() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


def machine() -> list[str]:
    cpu = platform.processor() or platform.machine()
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        cpu = next((line.split(":", 1)[1].strip() for line in lscpu.splitlines()
                    if line.startswith("Model name")), cpu)
    except (OSError, subprocess.CalledProcessError):
        pass
    packages = ", ".join(f"{p} {_version(p)}" for p in
                         ("openai", "anthropic", "httpx-sse", "httpx", "orjson", "jiter", "pydantic",
                          "textual"))
    return [f"- CPU: {cpu}, {os.cpu_count()} cores ({platform.system()} {platform.release()})",
            f"- Python {platform.python_version()} ({platform.python_implementation()})",
            f"- {packages}"]


def fitted_growth(series: Sequence[Measurement]) -> float | None:
    """Time factor per 10x of size, from a least-squares line through log(time) vs log(size):
    steady against the noise of any one measurement, unlike the step-by-step factors."""
    points = [(math.log10(m.arguments), math.log10(m.seconds)) for m in series if m.seconds]
    if len(points) < 2:
        return None
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx
    return float(10 ** slope)


@dataclass
class Results:
    rows: dict[str, list[tuple[Spec, str, Measurement]]]

    def get(self, series: str, peer: str, **match: Any) -> Measurement | None:
        for spec, key, m in self.rows.get(series, []):
            if key == peer and all(getattr(spec, k) == v for k, v in match.items()):
                return m
        return None

    def series(self, series: str, peer: str, protocol: str) -> list[Measurement]:
        return [m for s, k, m in self.rows.get(series, []) if k == peer and s.protocol == protocol]


def _verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else "met" if ok else "**missed**"


def _time(m: Measurement | None) -> float | None:
    """Seconds, or the lower bound of a peer over its cap."""
    if m is None:
        return None
    return m.seconds if m.seconds is not None else m.at_least


def targets(results: Results, sdks: dict[str, str], check: Any, memory: Any, tui: Any
            ) -> list[tuple[str, str, str]]:
    """(target, measured, verdict) rows."""
    rows: list[tuple[str, str, str]] = []
    specs = [s for s, k, _ in results.rows.get("sizes", []) if k == "floor"]
    sizes = sorted({s.size for s in specs})
    protocols = list(dict.fromkeys(s.protocol for s in specs))
    if not sizes:
        return rows
    big = 1_000_000 if 1_000_000 in sizes else sizes[-1]
    mid = 100_000 if 100_000 in sizes else sizes[-2] if len(sizes) > 1 else sizes[0]

    for p in protocols:
        e = results.get("sizes", "engine", protocol=p, size=big)
        f = results.get("sizes", "floor", protocol=p, size=big)
        ratio = None if e is None or f is None or not e.seconds or not f.seconds else e.seconds / f.seconds
        reads = results.get("sizes", "floor-reads", protocol=p, size=big)
        context = ("" if reads is None or not reads.seconds or f is None or not f.seconds
                   else f" (the floor fed the same reads: {reads.seconds / f.seconds:.1f}x)")
        rows.append((f"engine <= 2x the floor, {human(big)} of arguments in 1-8 char fragments, {p}",
                     "over cap" if ratio is None else f"{ratio:.1f}x{context}",
                     _verdict(None if ratio is None else ratio <= 2)))
    for p in protocols:
        series = results.series("sizes", "engine", p)
        fit = fitted_growth(series)
        steps = [g for a, b in zip(series, series[1:], strict=False) if (g := growth(a, b)) is not None]
        if fit is None:
            continue
        span = f"{human(series[0].arguments)} to {human(series[-1].arguments)}"
        rows.append((f"engine growth <= 11x per 10x of size, {span}, {p}",
                     f"{fit:.1f}x fitted (steps: {', '.join(f'{g:.1f}x' for g in steps)})",
                     _verdict(fit <= 11)))
    for p in protocols:
        pairs = [(s.size, results.get("sizes", "engine", protocol=p, size=s.size), m)
                 for s, k, m in results.rows.get("sizes", []) if k == "nodraft" and s.protocol == p]
        pairs = [(size, e, n) for size, e, n in pairs if e and e.seconds and n.seconds]
        if not pairs:
            continue
        size, e, n = max(pairs, key=lambda x: x[0])
        assert e is not None and e.seconds and n.seconds
        ratio = e.seconds / n.seconds
        rows.append((f"draft status <= 1.3x the engine without it, {human(size)}, {p}",
                     f"{ratio:.2f}x", _verdict(ratio <= 1.3)))
    for p in protocols:
        if p not in sdks:
            continue
        at: dict[int, tuple[float | None, bool]] = {}
        small = sizes[0]
        for size in dict.fromkeys((small, mid, big)):
            sdk, e = results.get("sizes", "sdk", protocol=p, size=size), results.get(
                "sizes", "engine", protocol=p, size=size)
            t, et = _time(sdk), _time(e)
            at[size] = (None if t is None or not et else t / et, sdk is not None and sdk.over)

        def show(x: tuple[float | None, bool]) -> str:
            return "not run" if x[0] is None else (">= " if x[1] else "") + f"{x[0]:.1f}x"

        (r_small, over_small), (r_mid, over_mid), (r_big, over_big) = at[small], at[mid], at[big]
        # The gap grows: from the smallest size to the target size, both measured in full. At
        # the largest size a peer over its cap gives only a lower bound, which cannot show the
        # gap shrinking; a full measurement there must be above the target size's.
        ok: bool | None
        if r_mid is None or (over_mid and r_mid < 30):
            ok = None
        else:
            growing = (r_small is not None and not over_small and small < mid and r_mid > r_small
                       and not (r_big is not None and not over_big and r_big <= r_mid))
            ok = r_mid >= 30 and growing
        shown = [f"{show(at[size])} at {human(size)}" for size in dict.fromkeys((small, mid, big))]
        rows.append((f"callscope >= 30x faster than {sdks[p]} at {human(mid)}, the gap growing",
                     ", ".join(shown), _verdict(ok)))
    if check is not None:
        rows.append((f"`callscope check` <= 20x one replay ({human(check.wire)} session)",
                     f"{check.ratio:.0f}x", _verdict(check.ratio <= 20)))
    if memory is not None:
        rows.append((f"`replay --summary` peak memory < 2x the file ({human(memory.file_bytes)})",
                     f"{memory.ratio:.2f}x ({human(memory.peak_rss)})", _verdict(memory.ratio < 2)))
    if tui is not None:
        rows.append((f"TUI first paint within 1 s ({tui.events:,} events)",
                     f"{tui.first_paint:.2f} s (session shown after {tui.ready:.1f} s)",
                     _verdict(tui.first_paint <= 1)))
        step_floor = seek_floor = ""
        if tui.floor is not None:  # (Textual's own repaint of the screen, rows free)
            step_floor = f" (Textual's floor: {tui.floor.same_p99 * 1000:.0f} ms)"
            seek_floor = f" (Textual's floor: {tui.floor.new_p99 * 1000:.0f} ms)"
        rows.append(("TUI step p99 < 16 ms", f"{tui.step_p99 * 1000:.0f} ms{step_floor}",
                     _verdict(tui.step_p99 < 0.016)))
        rows.append(("TUI seek p99 < 16 ms", f"{tui.seek_p99 * 1000:.0f} ms{seek_floor}",
                     _verdict(tui.seek_p99 < 0.016)))
    return rows


def targets_18(results: Results, sdks: dict[str, str], ratios: Sequence[tuple[str, Any]],
               processes: Sequence[Any], check: Any, memory: Any, tui: Any
               ) -> list[tuple[str, str, str]]:
    """(target, measured, verdict) rows of issue 18, from this run's numbers only."""
    rows: list[tuple[str, str, str]] = []
    for protocol, pair in ratios:
        rows.append((f"engine <= 2.0x the floor fed the same reads, 1 MB in 1-8 char fragments, "
                     f"{protocol} (outcome only)", pair.cell(), _verdict(pair.median <= 2.0)))
    protocols = list(dict.fromkeys(s.protocol for s, k, _ in results.rows.get("sizes", [])
                                   if k == "outcome"))
    for p in protocols:
        series = results.series("sizes", "outcome", p)
        fit = fitted_growth(series)
        if fit is None:
            continue
        k = math.log10(fit)
        span = f"{human(series[0].arguments)} to {human(series[-1].arguments)}"
        rows.append((f"engine linear, fitted k <= 1.05, {span}, {p} (outcome only)",
                     f"k = {k:.2f} ({fit:.1f}x per 10x)", _verdict(k <= 1.05)))
    limits = {"raw": 2.5, "session": 3.0}
    for cost in processes:
        kind = cost.label.split()[0]
        if kind in limits:
            rows.append((f"`replay --summary` process <= {limits[kind]}x the floor process, "
                         f"{cost.label} of {human(cost.file_bytes)}",
                         f"{cost.ratio:.2f}x (spread {cost.ratios[0]:.2f}-{cost.ratios[-1]:.2f}x)",
                         _verdict(cost.ratio <= limits[kind])))
        else:
            wall = sorted(cost.replay)[len(cost.replay) // 2]
            rows.append((f"`replay --summary` of a {human(cost.file_bytes)} session <= 0.35 s wall",
                         f"{wall:.2f} s (floor process {sorted(cost.floor)[len(cost.floor) // 2]:.2f} s)",
                         _verdict(wall <= 0.35)))
    if check is not None:
        rows.append((f"`callscope check` <= 10x one replay ({human(check.wire)} session)",
                     f"{check.ratio:.1f}x", _verdict(check.ratio <= 10)))
    specs = [s for s, k, _ in results.rows.get("sizes", []) if k == "sdk"]
    mid = 100_000 if any(s.size == 100_000 for s in specs) else max((s.size for s in specs), default=0)
    for p in sdks:
        sdk = results.get("sizes", "sdk", protocol=p, size=mid)
        hot = results.get("sizes", "outcome", protocol=p, size=mid)
        steps = results.get("sizes", "engine", protocol=p, size=mid)
        t, h, e = _time(sdk), _time(hot), _time(steps)
        if t is None or not h:
            continue
        shown = f"{t / h:.0f}x (with every step: {t / e:.0f}x)" if e else f"{t / h:.0f}x"
        rows.append((f">= 30x faster than {sdks[p]} at {human(mid)}", shown, _verdict(t / h >= 30)))
    if memory is not None:
        rows.append((f"`replay --summary` peak memory <= 0.5x the file ({human(memory.file_bytes)})",
                     f"{memory.ratio:.2f}x ({human(memory.peak_rss)}; the interpreter and modules "
                     f"alone {human(memory.baseline_rss)})", _verdict(memory.ratio <= 0.5)))
    if tui is not None and tui.floor is not None:
        pairs = getattr(tui, "pairs", None)
        step_rs = pairs.step_ratios if pairs else [tui.step_p99 / tui.floor.same_p99]
        seek_rs = pairs.seek_ratios if pairs else [tui.seek_p99 / tui.floor.new_p99]
        step_r, seek_r = step_rs[(len(step_rs) - 1) // 2], seek_rs[(len(seek_rs) - 1) // 2]

        def spread(ratios: list[float]) -> str:
            return "" if len(ratios) < 2 else (
                f"spread {ratios[0]:.1f}-{ratios[-1]:.1f}x over {len(ratios)} rounds; ")

        at = pairs.median_round(lambda c: c.step_p99 / c.floor.same_p99) if pairs else tui
        rows.append(("debugger step p99 <= 1.5x the Textual floor (same rows)",
                     f"{step_r:.1f}x ({spread(step_rs)}median round {at.step_p99 * 1000:.0f} ms, "
                     f"floor {at.floor.same_p99 * 1000:.0f} ms)", _verdict(step_r <= 1.5)))
        rows.append(("debugger seek p99 <= 2x the Textual floor (new rows)",
                     f"{seek_r:.1f}x ({spread(seek_rs)}median round {tui.seek_p99 * 1000:.0f} ms, "
                     f"floor {tui.floor.new_p99 * 1000:.0f} ms)", _verdict(seek_r <= 2)))
        rows.append((f"debugger first paint <= 1 s ({tui.events:,} events)",
                     f"{tui.first_paint:.2f} s", _verdict(tui.first_paint <= 1)))
    return rows
