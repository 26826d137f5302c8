"""The search over the frame columns against a search over the frames the engine made.

The display filter and the text search (core/frame_scan.py, core/frame_query.py) read the
frames' bytes, offsets and events from the timeline's frame columns, the call facts from the
steps, and search the columns' buffer at once; the reference reads every frame as the engine
made it, one at a time, with the call facts kept per frame (the search as it was written
first). They must find the same frames, for generated filters and needles, on every bundled
session, fixture and adversarial stream, and on synthesized streams of every protocol
(mutated, with odd SSE blocks, cut, in random reads), from any first frame.
"""

from __future__ import annotations

import pathlib
import random
import re
from collections.abc import Callable, Iterable, Sequence

import orjson
import pytest
from callscope.core import frame_query as q
from callscope.core import synth
from callscope.core.engine import CallStep, FrameStep, Step
from callscope.core.events import CALL_CHANGES, Anomaly, CallIdentified, CallOpened
from callscope.core.frame import Frame, event_name
from callscope.core.frame_scan import search_all
from callscope.core.session import open_input
from callscope.core.timeline import Timeline
from callscope.core.tools import ToolSet
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_hot_path_differential import PROTOCOLS, mutate, reads, tools, turn
from test_timeline_lazy import EagerTimeline, oddities

ROOT = pathlib.Path(__file__).resolve().parent.parent
INPUTS = sorted([*ROOT.glob("sessions/*.jsonl"), *ROOT.glob("sessions/*/*.jsonl"),
                 *ROOT.glob("sessions/*/*/*.jsonl"), *pathlib.Path("/work/shared/fixtures").glob("*/*.*"),
                 *ROOT.glob("tests/adversarial/*.sse")])
INPUTS = [p for p in INPUTS if p.suffix != ".md"]
ADVERSARIAL_TOOLS = ROOT / "tests/adversarial/tools.json"


# -- the reference: every frame made, the facts kept per frame -------------------------------

class ReferenceFacts:
    """The facts a filter reads, from the frames as made, kept per frame (lists of sets of calls,
    tools and anomalies, filled by one pass over the steps)."""

    def __init__(self, steps: Sequence[Step], frames: Sequence[Frame]) -> None:
        n = len(frames)
        self.frames = frames
        self.events = [event_name(f) for f in frames]
        from callscope.core.providers.bedrock_invoke import carried_event
        self.carried = {i: name for i, f in enumerate(frames)
                        if f.headers and f.event == "chunk" and (name := carried_event(f))}
        self.calls: list[set[str]] = [set() for _ in range(n)]
        self.tools: list[set[str]] = [set() for _ in range(n)]
        self.anomalies: list[set[str]] = [set() for _ in range(n)]
        numbers: dict[str, int] = {}
        names: dict[str, str] = {}
        touched: dict[str, list[int]] = {}
        for step in steps:
            if isinstance(step, FrameStep) or not isinstance(step, CallStep):
                continue
            event = step.event
            frame = getattr(event, "frame", None)
            if isinstance(event, Anomaly):
                if frame is not None and frame < n:
                    self.anomalies[frame].add(str(event.code))
                continue
            if not isinstance(event, CALL_CHANGES):
                continue
            key = event.key
            number = numbers.setdefault(key, len(numbers) + 1)
            if isinstance(event, CallOpened | CallIdentified) and event.name and key not in names:
                names[key] = event.name
                for earlier in touched.get(key, ()):
                    self.tools[earlier].add(event.name)
            if frame is not None and frame < n:
                self.calls[frame].update((str(number), key))
                touched.setdefault(key, []).append(frame)
                if key in names:
                    self.tools[frame].add(names[key])


def reference_comparison(name: str, op: str, want: str) -> Callable[[ReferenceFacts, int], bool]:
    """A comparison of a filter, over :class:`ReferenceFacts` (every value read from a frame)."""
    if name == "bytes" and re.fullmatch(r"\d+-\d+", want) and op in ("=", "!="):
        lo, hi = (int(x) for x in want.split("-"))
        return lambda f, i: (f.frames[i].start < hi and f.frames[i].end > lo) == (op == "=")

    def values(f: ReferenceFacts, i: int) -> Iterable[str]:
        if name == "frame":
            return (str(i),)
        if name == "bytes":
            return (str(f.frames[i].start),)
        if name == "event":
            inner = f.carried.get(i)
            return (f.events[i],) if inner is None else (f.events[i], inner, f"chunk.{inner}")
        if name == "text":
            return (f.frames[i].raw.decode("utf-8", "replace"),)
        return {"call": f.calls, "tool": f.tools, "anomaly": f.anomalies}[name][i]

    if op == "!=":
        return lambda f, i: all(v != want for v in values(f, i))
    return lambda f, i: any(q._compare(v, op, want) for v in values(f, i))


def reference(timeline: Timeline, text: str, first: int) -> list[int]:
    """What the search finds, every frame as made (raises FilterError as the search does)."""
    frames = list(timeline.frames)
    steps = list(timeline.steps)
    if q.looks_like_filter(text):
        with pytest.MonkeyPatch.context() as patch:  # (the parser makes each comparison so)
            patch.setattr(q, "_comparison", reference_comparison)
            predicate = q.parse(text)
        facts = ReferenceFacts(steps, frames)
        return [i for i in range(first, len(frames)) if predicate(facts, i)]  # type: ignore[arg-type]
    needle = text.lower().encode("utf-8", "surrogatepass")
    # (what the fragments rebuild is read from the steps alike: text_frames, run whole)
    rebuilt = q.text_frames(timeline.state.calls.values(), steps, text)
    return [f.index for f in frames[first:]
            if f.event == text or needle in f.raw.lower() or f.index in rebuilt]


def found(timeline: Timeline, text: str, first: int) -> list[int] | str:
    try:
        return search_all(timeline, text, first)
    except q.FilterError as exc:
        return f"FilterError: {exc}"


def expected(timeline: Timeline, text: str, first: int) -> list[int] | str:
    try:
        return reference(timeline, text, first)
    except q.FilterError as exc:
        return f"FilterError: {exc}"


# -- generated filters and needles, from what a timeline holds -------------------------------

def pool(timeline: Timeline) -> dict[str, list[str]]:
    frames = list(timeline.frames)
    facts = ReferenceFacts(list(timeline.steps), frames)
    n = len(frames)
    raws = [f.raw.decode("utf-8", "replace") for f in frames]
    return {
        "frame": [str(i) for i in range(n)] + ["-1", str(n)],
        "event": sorted(set(facts.events) | {f"chunk.{v}" for v in facts.carried.values()}) + ["", "x"],
        "call": sorted(set().union(*facts.calls)) + ["0", "99"],
        "tool": sorted(set().union(*facts.tools)) + ["edit_file"],
        "anomaly": sorted(set().union(*facts.anomalies)) + ["missing", "sequence"],
        "bytes": [str(f.start) for f in frames],
        "ranges": [f"{f.start}-{f.start + w}" for f, w in zip(frames, (1, 40, 500, 0), strict=False)]
        + [f"{a.end}-{b.start}" for a, b in zip(frames[:30], frames[2:32], strict=False)],
        "text": [r[a:a + 8] for r in raws[:40] for a in (0, len(r) // 2)] + ["\u00e9", "DATA"],
        "rebuilt": [c.text[a:a + 9] for c in timeline.state.calls.values() for a in (0, 3, 20)],
        # (an occurrence across two frames' bytes is in neither)
        "boundary": [a[-k:] + b[:k] for a, b in zip(raws[:30], raws[1:31], strict=False)
                     for k in (1, 3)],
    }


def _quoted(value: str) -> str:
    return '"' + re.sub(r'(["\\])', r"\\\1", value) + '"'


def a_filter(rng: random.Random, values: dict[str, list[str]], depth: int = 0) -> str:
    roll = rng.random()
    if depth < 2 and roll < 0.15:
        return "not " + a_filter(rng, values, depth + 1)
    if depth < 2 and roll < 0.35:
        join = rng.choice(("and", "or"))
        return f"({a_filter(rng, values, depth + 1)} {join} {a_filter(rng, values, depth + 1)})"
    name = rng.choice(q.FIELDS)
    choices = values["ranges" if name == "bytes" and rng.random() < 0.6 else name] or ["x"]
    value = rng.choice(choices)
    if rng.random() < 0.2:
        value = value.upper()
    op = rng.choice(("=", "!=", "~", "<", "<=", ">", ">=", "=", "~"))
    return f"{name} {op} {_quoted(value)}"


def a_needle(rng: random.Random, values: dict[str, list[str]]) -> str:
    kind = rng.choice(("text", "rebuilt", "event", "boundary", "other"))
    if kind == "other" or not values[kind]:
        return rng.choice(("zz-none", "\u00c9T\u00c9", "K", "\ufffd", "data: {", "\r\n", "DONE",
                           "event = x", "evnt = 1", "call = (", "İ"))
    value = rng.choice(values[kind]) or "x"
    return value.upper() if rng.random() < 0.3 else value


def assert_same_facts(timeline: Timeline) -> None:
    """The facts read from the columns and the steps are those read from every frame made."""
    n = len(timeline.frames)
    facts = q.frame_facts(timeline.steps.objects(), timeline.frames)
    ref = ReferenceFacts(list(timeline.steps), list(timeline.frames))
    assert [facts.events[i] for i in range(n)] == ref.events
    assert facts.carried == ref.carried
    assert [sorted(facts.calls(i)) for i in range(n)] == [sorted(c) for c in ref.calls]
    assert [facts.tools(i) for i in range(n)] == ref.tools
    assert [facts.anomalies.get(i, set()) for i in range(n)] == ref.anomalies
    assert [facts.raw(i) for i in range(n)] == [f.raw for f in ref.frames]


def assert_same_search(timeline: Timeline, rng: random.Random, filters: int, needles: int) -> None:
    assert_same_facts(timeline)
    values = pool(timeline)
    n = len(timeline.frames)
    for text in [a_filter(rng, values) for _ in range(filters)] + \
            [a_needle(rng, values) for _ in range(needles)]:
        first = rng.choice((0, 0, rng.randint(0, n)))
        assert found(timeline, text, first) == expected(timeline, text, first), (text, first)


NAMED_BLOCKS = [b"event: \xc3\x89t\xc3\xa9\ndata: {}", b"event: \xe2\x84\xaa\ndata: {\"a\": 1}",
                b"event: Ping\ndata: [DONE]", b"event: \xc4\xb0x\ndata: {}",
                b'data: {"\\u0074ype": "escaped"}', b'data: {"a": "\\"", "event_typ\\u0065": "e2"}',
                b'event: \ndata: {"type": "named_by_data"}', b'data: {"typ": "x", "b": ["type"]}',
                b"data: [DONE]", b'data: {"type": 3}']
"""Blocks made again from the frame columns: events that are not ASCII (found by the event's
name alone: ``bytes.lower`` leaves the bytes of a non-ASCII letter as they are), and payloads
that name their event (or seem to) in the ways a reading of the bytes could miss."""


def named(rng: random.Random, data: bytes, eol: bytes, count: int) -> bytes:
    if eol not in (b"\n", b"\r\n"):
        return data
    blocks = data.split(eol + eol)
    for _ in range(count):
        blocks.insert(rng.randint(0, len(blocks)), rng.choice(NAMED_BLOCKS).replace(b"\n", eol))
    return (eol + eol).join(blocks)


def build(path: pathlib.Path, eager: bool = False) -> Timeline:
    session = open_input(str(path))
    header = session.header
    cls = EagerTimeline if eager else Timeline
    definitions = header.tools or (orjson.loads(ADVERSARIAL_TOOLS.read_bytes())
                                   if "adversarial" in str(path) else [])
    tools_ = ToolSet(list(definitions))
    return cls.build([(c.t, c.data) for c in session.chunks()], header.protocol, tools_)


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"])
def test_events_named_in_the_bytes_are_the_events_of_the_frames(eol: bytes) -> None:
    data = (eol + eol).join(block.replace(b"\n", eol) for block in NAMED_BLOCKS * 2) + eol + eol
    timeline = Timeline.build([(None, data)], "openai-responses", tools())
    assert len(timeline.frames) == 2 * len(NAMED_BLOCKS)
    assert not any(timeline.frames.is_kept(i) for i in range(len(timeline.frames)))
    assert_same_facts(timeline)
    assert {"escaped", "e2", "named_by_data", "\u00c9t\u00e9", "Ping", ""} <= set(
        q.frame_facts(timeline.steps, timeline.frames).events.values())


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: str(p.relative_to(p.parents[1])))
def test_every_bundled_input_is_searched_as_frame_by_frame(path: pathlib.Path) -> None:
    rng = random.Random(str(path.name))
    assert_same_search(build(path), rng, filters=12, needles=8)


def test_the_frames_kept_as_they_came_are_searched_the_same() -> None:
    """(Every frame of an eager timeline is kept as it came: the other side of the columns.)"""
    rng = random.Random(2)
    for path in INPUTS[::9]:
        assert_same_search(build(path, eager=True), rng, filters=6, needles=6)


@settings(max_examples=40, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(protocol=st.sampled_from(PROTOCOLS), seed=st.integers(0, 2**32),
       calls=st.integers(0, 3), texts=st.integers(0, 2), mutations=st.integers(0, 3),
       odd=st.integers(0, 3), detect=st.booleans())
def test_synthesized_streams_are_searched_as_frame_by_frame(protocol, seed, calls, texts, mutations,
                                                            odd, detect):
    rng = random.Random(seed)
    encoded = synth.encode_turn(protocol, turn(rng, calls, texts, "normal"), rng)
    data = oddities(rng, mutate(rng, encoded.data, encoded.eol, mutations), encoded.eol, odd)
    data = named(rng, data, encoded.eol, odd)
    if rng.random() < 0.2:
        data = data[:rng.randint(0, len(data))]
    source = [(None, c) for c in reads(rng, data)]
    timeline = Timeline.build(source, None if detect else protocol, tools())
    assert_same_search(timeline, rng, filters=10, needles=8)


def test_the_comparison_is_not_idle() -> None:
    """The generated searches find something, and not everything, on most inputs; and the
    filters use every field."""
    rng = random.Random(5)
    some = every = none = 0
    fields: set[str] = set()
    for path in INPUTS[::5]:
        timeline = build(path)
        values = pool(timeline)
        for _ in range(10):
            text = a_filter(rng, values)
            fields |= q.fields_of(text)
            hits = found(timeline, text, 0)
            if isinstance(hits, list):
                some += 0 < len(hits) < len(timeline.frames)
                every += len(hits) == len(timeline.frames)
                none += not hits
    assert fields == set(q.FIELDS)
    assert some > every and some > 20 and none > 5
