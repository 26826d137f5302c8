"""Timing you can see: when the bytes came, as a strip, with the facts a reader asks first
(time to the first byte and to the first tool-call byte, the longest silence, how long frames
waited for their last byte)."""

from __future__ import annotations

from ..core.engine import CallStep
from ..core.events import CALL_CHANGES
from ..core.timeline import Timeline

BARS = " ▁▂▃▄▅▆▇█"


def sparkline(values: list[int]) -> str:
    top = max(values, default=0)
    if top <= 0:
        return BARS[0] * len(values)
    return "".join(BARS[0] if v == 0 else BARS[max(1, round(v / top * (len(BARS) - 1)))]
                   for v in values)


def recorded_reads(timeline: Timeline) -> list[tuple[float | None, int, int]]:
    """(arrival time, start, end) of each network read as recorded, up to the timeline's last
    byte (a cut). A re-chunked replay keeps the recorded times (each piece the time of its first
    byte), so the recording's reads say when the bytes came, in as many entries as were read,
    not one per piece (a byte at a time is millions)."""
    reads, start, total = [], 0, timeline.total_bytes
    for t, data in timeline.source:
        if start >= total:
            break
        end = min(start + len(data), total)
        reads.append((t, start, end))
        start = end
    return reads


def timing_lines(timeline: Timeline, width: int = 60) -> list[str]:
    """A few lines on the stream's timing; [] when the recording has no arrival times."""
    reads = recorded_reads(timeline)
    times = [t for t, _, _ in reads if t is not None]
    if len(set(times)) < 2 or timeline.t0 is None:
        return []
    t0 = timeline.t0
    span = max(times) - t0
    buckets = [0] * width
    for t, start, end in reads:
        if t is not None:
            at = min(width - 1, int((t - t0) / span * width)) if span > 0 else 0
            buckets[at] += end - start
    gaps = [(b[0] - a[0], a[2]) for a, b in zip(reads, reads[1:], strict=False)
            if a[0] is not None and b[0] is not None]
    longest, where = max(gaps, default=(0.0, 0))
    first_call = next((s.event.frame for s in timeline.steps.objects()
                       if isinstance(s, CallStep) and isinstance(s.event, CALL_CHANGES)
                       and s.event.frame is not None), None)
    waits = [done - first for i in range(len(timeline.frames))
             for first, done in [timeline.frame_times(i)] if first is not None and done is not None]
    lines = [f"bytes over {span:.3f} s  |{sparkline(buckets)}|",
             f"first byte {times[0] * 1000:.1f} ms after the request; longest silence "
             f"{longest * 1000:.1f} ms "
             f"(after byte {where}); {len(reads)} reads recorded"]
    if first_call is not None:
        arrived, _ = timeline.frame_times(first_call)
        if arrived is not None:
            lines.append(f"first tool-call byte {(t0 + arrived) * 1000:.1f} ms after the request "
                         f"(frame #{first_call})")
    if waits:
        lines.append(f"a frame's last byte came {max(waits) * 1000:.1f} ms after its first at most "
                     f"(chunk arrival vs frame completion; mean {sum(waits) / len(waits) * 1000:.1f} ms)")
    return lines
