"""The timeline: the state at any step, by bisection, equals the engine's state at that step."""

from __future__ import annotations

import pathlib
import random
from bisect import bisect_right

import msgspec.structs
import orjson
import pytest
from callscope.core.engine import CallStep, ChunkStep, DecisionStep, Engine, FrameStep, WaitStep
from callscope.core.events import Anomaly, ArgumentsAppended, ArgumentsSet, CallOpened
from callscope.core.jsonprefix import Draft
from callscope.core.lanes import CallIndex
from callscope.core.limits import DEFAULT_LIMITS, Limits
from callscope.core.replay import Chunking, rechunk
from callscope.core.session import StreamEnd
from callscope.core.timeline import Timeline
from callscope.core.timeline_index import TimelineIndex
from callscope.core.tools import ToolSet, read_tools_file
from callscope.tui.call_detail import call_detail

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = sorted((ROOT / "tests" / "fixtures").rglob("*.sse"))
PARALLEL = ROOT / "tests" / "fixtures" / "openai-chat" / "parallel_tool_calls_two_functions.sse"
ids = [f"{p.parent.name}/{p.name}" for p in FIXTURES]


def one_chunk(path: pathlib.Path) -> list[tuple[float | None, bytes]]:
    return [(0.0, path.read_bytes())]


def engine_snapshots(chunks, chunking):
    """Run a fresh engine chunk by chunk; after each feed, record its state (the reference)."""
    engine, k, snaps = Engine(), 0, {}
    for piece in [*rechunk(chunks, chunking), None]:
        steps = engine.close() if piece is None else engine.feed(piece[1], piece[0])
        k += len(steps)
        snaps[k - 1] = {
            key: (c.text, c.draft, c.closed, c.name, c.id, len(c.anomalies), c.byte_length)
            for key, c in engine.state.calls.items()
        }, dict(engine.pipeline.decisions), engine.decoder.frames_emitted
    return snaps


@pytest.mark.parametrize("path", FIXTURES, ids=ids)
@pytest.mark.parametrize("chunking", ["bytes:5", "random:3"])
def test_view_equals_engine_state_after_every_chunk(path, chunking):
    chunks = one_chunk(path)
    timeline = Timeline.build(chunks, chunking=Chunking.parse(chunking))
    for k, (calls, decisions, frames) in engine_snapshots(chunks, Chunking.parse(chunking)).items():
        view = timeline.view(k)
        got = {c.key: (c.text, c.draft, c.closed, c.name, c.id, len(c.anomalies), c.byte_length)
               for c in view.calls}
        assert got == calls, f"step {k}"
        assert {c.key: c.decision for c in view.calls if c.decision} == decisions
        assert view.frames_seen == frames


def test_every_fixture_builds_and_the_last_view_is_the_final_state():
    for path in FIXTURES:
        timeline = Timeline.build(one_chunk(path))
        last = timeline.view(len(timeline) - 1)
        assert last.finished and last.frames_seen == len(timeline.frames)
        assert [c.key for c in last.calls] == list(timeline.state.calls)
        assert [c.text for c in last.calls] == [c.text for c in timeline.state.calls.values()]
        assert timeline.data() == path.read_bytes()


def synthetic_chat(frames: int, calls: int = 3) -> list[tuple[float | None, bytes]]:
    """A Chat Completions stream: ``calls`` parallel calls, many small argument deltas each."""
    rng = random.Random(11)
    out: list[tuple[float | None, bytes]] = []

    def chunk(delta: dict) -> None:
        body = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}
        out.append((len(out) * 0.001, b"data: " + orjson.dumps(body) + b"\n\n"))

    per_call = (frames - 2 * calls - 2) // calls
    for i in range(calls):
        chunk({"tool_calls": [{"index": i, "id": f"call_{i}", "type": "function",
                               "function": {"name": f"tool_{i}", "arguments": ""}}]})
        chunk({"tool_calls": [{"index": i, "function": {"arguments": '{"items": ['}}]})
        for n in range(per_call):
            piece = f"{rng.randint(0, 999)}, " if n < per_call - 1 else f"{n}]}}"
            chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
    out.append((len(out) * 0.001, b'data: {"object":"chat.completion.chunk","choices":[{"index":0,'
                b'"delta":{},"finish_reason":"tool_calls"}]}\n\n'))
    out.append((len(out) * 0.001, b"data: [DONE]\n\n"))
    return out


def test_seek_anywhere_in_a_100k_step_session():
    timeline = Timeline.build(synthetic_chat(34_000))
    assert len(timeline) >= 100_000
    # Independent reference: walk the steps once, accumulating text per call from the events.
    rng = random.Random(5)
    probes = set(rng.sample(range(len(timeline)), 300)) | {0, len(timeline) - 1}
    texts: dict[str, list[str]] = {}
    opened: list[str] = []
    frames = decisions = anomalies = 0
    for k, step in enumerate(timeline.steps):
        if isinstance(step, FrameStep):
            frames += 1
        elif isinstance(step, (WaitStep, DecisionStep)):
            decisions += 1
        elif isinstance(step, CallStep):
            ev = step.event
            if isinstance(ev, CallOpened) and ev.key not in texts:
                texts[ev.key] = []
                opened.append(ev.key)
            elif isinstance(ev, ArgumentsAppended):
                texts[ev.key].append(ev.fragment)
            elif isinstance(ev, Anomaly):
                anomalies += 1
        if k in probes:
            view = timeline.view(k)
            assert [c.key for c in view.calls] == opened
            assert [c.text for c in view.calls] == ["".join(texts[key]) for key in opened]
            assert (view.frames_seen, len(view.log), len(view.anomalies)) == (
                frames, decisions, anomalies)
    final = timeline.view(len(timeline) - 1)
    assert all(c.draft is Draft.COMPLETE for c in final.calls)
    assert all(c.decision is not None for c in final.calls)


def test_navigation_matches_a_linear_scan():
    timeline = Timeline.build(synthetic_chat(400), chunking=Chunking.parse("random:9"))
    steps = timeline.steps

    def is_kind(k: int, kind: str) -> bool:
        s = steps[k]
        return {
            "call": isinstance(s, CallStep) and hasattr(s.event, "key")
            and not isinstance(s.event, Anomaly),
            "decision": isinstance(s, (WaitStep, DecisionStep)),
            "refusal": isinstance(s, DecisionStep) and s.decision.action == "refuse",
            "parse": isinstance(s, WaitStep) and s.draft is Draft.COMPLETE,
        }[kind]

    def group_end(k: int, bound) -> int:
        j = k + 1
        while j < len(steps) and not bound(steps[j]):
            j += 1
        return j - 1

    frame_ends = [group_end(k, lambda s: isinstance(s, (FrameStep, ChunkStep)))
                  for k, s in enumerate(steps) if isinstance(s, FrameStep)]
    chunk_ends = [group_end(k, lambda s: isinstance(s, ChunkStep))
                  for k, s in enumerate(steps) if isinstance(s, ChunkStep)]
    for k in random.Random(2).sample(range(len(steps)), 120):
        for kind in ("call", "decision", "refusal", "parse"):
            after = [j for j in range(k + 1, len(steps)) if is_kind(j, kind)]
            before = [j for j in range(k) if is_kind(j, kind)]
            assert timeline.next_step(k, kind) == (after[0] if after else None)
            assert timeline.prev_step(k, kind) == (before[-1] if before else None)
        for kind, ends in (("frame", frame_ends), ("chunk", chunk_ends)):
            assert timeline.next_step(k, kind) == next((e for e in ends if e > k), None)
            assert timeline.prev_step(k, kind) == next((e for e in reversed(ends) if e < k), None)


def test_frame_and_offset_lookups():
    timeline = Timeline.build(one_chunk(PARALLEL))
    for frame in timeline.frames:
        k = timeline.step_for_frame(frame.index)
        assert timeline.view(k).frame == frame
        # the group has ended: the next step opens another frame, or it is the last one
        assert k + 1 == len(timeline) or isinstance(timeline.step(k + 1), FrameStep)
        for offset in (frame.start, (frame.start + frame.end) // 2, frame.end - 1):
            assert timeline.frame_at(offset) == frame.index
            assert timeline.step_for_offset(offset) == k


def test_fresh_text_is_what_the_current_frame_added():
    timeline = Timeline.build(one_chunk(PARALLEL))
    view = timeline.view(timeline.step_for_frame(3))  # frame 3 carries 'ty": '
    call = view.calls[0]
    assert call.text == '{"city": '
    assert call.fresh is not None and call.text[slice(*call.fresh)] == 'ty": '
    later = timeline.view(timeline.step_for_frame(14))  # frame 14 is the second call's
    assert later.calls[0].fresh is None and later.calls[1].fresh == (0, 4)
    # since= widens the highlight to everything added after an earlier step
    wide = timeline.view(timeline.step_for_frame(5), since=timeline.step_for_frame(3))
    assert wide.calls[0].text[slice(*wide.calls[0].fresh)] == '"Edinburgh'


def test_rechunking_never_changes_decisions():
    for path in FIXTURES:
        chunks = one_chunk(path)
        reference = Timeline.build(chunks)
        expected = [s.decision for s in reference.steps if isinstance(s, DecisionStep)]
        for mode in ("bytes:1", "random:1234"):
            other = reference.rechunked(Chunking.parse(mode))
            assert [s.decision for s in other.steps if isinstance(s, DecisionStep)] == expected
            assert other.frames == reference.frames or [f.raw for f in other.frames] == [
                f.raw for f in reference.frames]
            assert len(other.chunks) == len(path.read_bytes()) or mode != "bytes:1"


def test_cut_here_refuses_and_keeps_the_original():
    tools = ToolSet([{"name": "GetWeatherArgs", "parameters": {"type": "object"}},
                     {"name": "get_stock_price", "parameters": {"type": "object"}}])
    full = Timeline.build(one_chunk(PARALLEL), tools=tools)
    assert [c.decision.action for c in full.view(len(full) - 1).calls] == ["execute", "execute"]
    cut_frame = full.frames[7]
    cut = full.cut_at(cut_frame.end)
    assert cut.data() == PARALLEL.read_bytes()[:cut_frame.end]
    final = cut.view(len(cut) - 1)
    assert [(c.decision.action, c.decision.reason) for c in final.calls] == [("refuse", "truncated")]
    assert final.calls[0].text == '{"city": "Edinburgh", "country'
    # the original is untouched (undo), and cutting a cut keeps the shorter stream
    assert len(full.view(len(full) - 1).calls) == 2
    assert full.cut_at(10_000).cut == 10_000 and cut.cut_at(10_000).cut == cut_frame.end
    assert cut.rechunked(Chunking.parse("bytes:3")).data() == cut.data()


def test_whole_object_epochs():
    """A whole-object text (ArgumentsSet) starts a new epoch; earlier text stays readable."""
    call = CallIndex("c", 0, 0)
    call.identify(0, CallOpened(0, "c", name="f"))
    call.fragment(1, 0, '{"a":', False, "raw", Draft.INCOMPLETE)
    call.fragment(2, 1, ' 1}', False, "raw", Draft.COMPLETE)
    call.fragment(3, 2, '{"b":2}', True, "serialized", Draft.COMPLETE)
    call.fragment(4, 3, ' ', False, "raw", Draft.COMPLETE)
    call.seal()
    texts = [call.view(k, k - 1).text for k in range(5)]
    assert texts == ["", '{"a":', '{"a": 1}', '{"b":2}', '{"b":2} ']
    assert [call.view(k, k - 1).origin for k in (2, 3, 4)] == ["raw", "serialized", "raw"]
    assert call.view(3, 1).fresh == (0, 7)  # a replacement makes everything fresh
    assert call.view(4, 3).fresh == (7, 8)
    assert call.view(4, 0).byte_length == 8


def test_identity_fills_in_and_never_overwrites():
    call = CallIndex("c", 0, 0)
    call.identify(0, None)  # created by a delta for an unknown call
    call.identify(1, CallOpened(1, "c", id="x"))
    call.identify(2, CallOpened(2, "c", id="y", name="f"))
    assert [(call.view(k, -1).id, call.view(k, -1).name) for k in range(3)] == [
        (None, None), ("x", None), ("x", "f")]


def test_argument_set_fixtures_keep_their_final_text():
    for path in FIXTURES:
        timeline = Timeline.build(one_chunk(path))
        sets = [s for s in timeline.steps
                if isinstance(s, CallStep) and isinstance(s.event, ArgumentsSet)]
        for step in sets:
            k = timeline.steps.index(step)
            view = {c.key: c for c in timeline.view(k).calls}
            assert view[step.event.key].text == step.event.text


def test_fragment_spans_tile_the_text():
    timeline = Timeline.build(one_chunk(PARALLEL))
    k = timeline.step_for_frame(9)
    call = timeline.view(k).calls[0]
    spans = timeline.calls[call.key].spans(k)
    assert call.text[spans[0][0]:spans[0][1]] == '{"ci'
    assert "".join(call.text[s:e] for s, e, _ in spans) == call.text
    assert [f for _, _, f in spans] == list(range(2, 10))
    assert timeline.calls[call.key].spans(k, lo=10)[0] == (9, 15, 4)


def test_the_fragments_over_a_range_are_those_of_spans_that_overlap_it() -> None:
    """``spans_over`` (a lane's row drawn alone) finds by bisection the fragments ``spans``
    lists that overlap a range, with the index of the first: over texts appended to and set
    whole again (an epoch each), empty fragments included, at every step."""
    rng = random.Random(4)
    for _ in range(200):
        index = CallIndex("k", 0, 0)
        for step in range(rng.randrange(1, 30)):
            index.fragment(step, rng.choice([None, step]), "x" * rng.randrange(0, 5),
                           rng.random() < 0.1, "raw", Draft.INCOMPLETE)
        for k in range(-1, len(index.frag_steps) + 1):
            listed = index.spans(k)
            before = bisect_right(index.frag_steps, k) - len(listed)  # (fragments of other epochs)
            total = listed[-1][1] if listed else 0
            for lo in range(total + 1):
                for hi in range(lo + 1, total + 2):
                    want = [(n, span) for n, span in enumerate(listed, before)
                            if span[1] > lo and span[0] < hi]
                    first, got = index.spans_over(k, lo, hi)
                    assert got == [span for _, span in want], (k, lo, hi)
                    if want:
                        assert first == want[0][0]


# -- growth: a timeline fed read by read equals one built at once ------------------------------------

def _same_view(grown, built, k: int, *, closed: bool) -> None:
    a, b = grown.view(k), built.view(k)
    # While the stream is open nothing is "finished", and the turn names the protocol detected
    # so far; everything else must be identical at every step.
    if not closed:
        b = msgspec.structs.replace(b, finished=False,
                                turn=msgspec.structs.replace(b.turn, protocol=a.turn.protocol))
    assert (a.k, a.step, a.frames_seen, a.frame, a.anchor, a.received, a.chunks_seen, a.calls,
            list(a.log), list(a.anomalies), a.turn, a.finished) == (
            b.k, b.step, b.frames_seen, b.frame, b.anchor, b.received, b.chunks_seen, b.calls,
            list(b.log), list(b.anomalies), b.turn, b.finished), f"step {k}"


@pytest.mark.parametrize("path", FIXTURES, ids=ids)
def test_a_timeline_grown_read_by_read_equals_one_built_at_once(path):
    pieces = list(rechunk(one_chunk(path), Chunking.parse("random:5")))
    pieces = [(i * 0.01, data) for i, (_, data) in enumerate(pieces)]  # timed, as a live stream
    built = Timeline.build(pieces)
    grown = Timeline.live()
    rng = random.Random(path.name)
    kept = {}  # views taken while they were the newest, compared again at the end
    for t, data in pieces:
        before = len(grown)
        added = grown.extend(t, data)
        assert added == len(grown) - before >= 1  # at least the chunk's own step
        assert not grown.closed and not grown.view(len(grown) - 1).finished
        for k in {*range(before, len(grown)), rng.randrange(len(grown))}:
            _same_view(grown, built, k, closed=False)
        newest = kept[len(grown) - 1] = grown.view(len(grown) - 1)
        # The newest view is the engine's state now (the reference, independent of build()).
        assert {c.key: (c.text, c.draft) for c in newest.calls} == {
            key: (c.text, c.draft) for key, c in grown.state.calls.items()}
        # Navigation among the steps that exist so far agrees with the whole stream's.
        k = rng.randrange(len(grown))
        for kind in ("frame", "chunk", "call", "decision", "anomaly"):
            ahead = built.next_step(k, kind)
            if ahead is not None and ahead < len(grown) - 1 and kind != "frame":
                assert grown.next_step(k, kind) == ahead, kind
            assert grown.prev_step(k, kind) == built.prev_step(k, kind), kind
    grown.finish()
    assert grown.closed and grown.finish() == 0
    with pytest.raises(ValueError):
        grown.extend(1.0, b"data: late\n\n")
    assert len(grown) == len(built) and grown.steps == built.steps
    for k in range(len(built)):
        _same_view(grown, built, k, closed=True)
    for k, view in kept.items():  # a view is a snapshot: later growth never changed it
        again = built.view(k)
        assert (view.calls, list(view.log), view.turn.text) == (again.calls, list(again.log),
                                                                 again.turn.text)
    for kind in ("frame", "chunk", "call", "decision", "anomaly", "refusal", "parse"):
        assert list(grown._targets(kind)) == list(built._targets(kind)), kind
    assert (grown.t0, grown.data(), grown.total_bytes) == (built.t0, built.data(), built.total_bytes)


def test_a_growing_timeline_cuts_and_rechunks_what_arrived_so_far():
    data = PARALLEL.read_bytes()
    grown = Timeline.live("openai-chat")
    for i in range(0, 3000, 100):
        grown.extend(i / 1000, data[i:i + 100])
    cut = grown.cut_at(2000)
    assert cut.closed and cut.cut == 2000 and cut.data() == data[:2000]
    assert cut.view(len(cut) - 1).finished and not grown.closed
    grown.extend(3.0, data[3000:])  # the snapshot does not grow with it
    assert cut.total_bytes == 2000 and len(cut.source) == 30
    whole = grown.rechunked(Chunking.parse("whole"))
    assert whole.closed and whole.data() == data
    grown.finish(StreamEnd("clean"))
    assert grown.end == StreamEnd("clean")
    assert [s.decision for s in grown.steps if isinstance(s, DecisionStep)] == [
        s.decision for s in whole.steps if isinstance(s, DecisionStep)]


def test_an_empty_live_timeline_is_open_until_finished():
    grown = Timeline.live()
    assert len(grown) == 0 and not grown.view(0).finished
    grown.finish(StreamEnd("error", detail="cannot connect"))
    assert grown.view(0).finished and grown.end.kind == "error"


# -- the index is a fold over the steps ------------------------------------------------------

ADVERSARIAL = sorted((ROOT / "tests" / "adversarial").glob("*.sse"))
ADVERSARIAL_TOOLS = ToolSet(read_tools_file(str(ROOT / "tests" / "adversarial" / "tools.json")))


def lane(c):
    """What the lanes and the call detail read of a call (CallView or CallBuffer)."""
    return (c.text, c.draft, c.byte_length, c.closed, c.origin, c.name, c.id, tuple(c.anomalies),
            c.disputed)


def engine_turn(data: bytes, limits: Limits = DEFAULT_LIMITS, step: int = 7):
    """Steps of a fresh engine fed ``step`` bytes at a time, and the turn after every feed
    (the reference: what the gate decides on)."""
    engine, steps, snaps = Engine(tools=ADVERSARIAL_TOOLS, limits=limits), [], {}
    for i in [*range(0, len(data), step), None]:
        steps += engine.close() if i is None else engine.feed(data[i:i + step])
        snaps[len(steps) - 1] = {key: lane(c) for key, c in engine.state.calls.items()}
    return steps, engine, snaps


@pytest.mark.parametrize("path", ADVERSARIAL + FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_index_of_the_steps_alone_is_what_the_panes_show(path):
    """Folded from the step list alone (no engine to read), every call's lane at every read
    equals the turn the gate decided on: text, draft, anomalies (those reported before the
    call opened too) and dispute. And it is the index the panes' timeline holds."""
    steps, engine, snaps = engine_turn(path.read_bytes())
    index = TimelineIndex.of(steps)
    assert not hasattr(index, "engine")
    for k, calls in snaps.items():
        opened = index.call_order[:bisect_right(index.call_created, k)]
        views = [index.calls[key].view(k, k) for key in opened]
        assert {c.key: lane(c) for c in views} == calls, f"step {k}"
    for k in range(len(steps)):  # at any step, a dispute shown is one of the call's anomalies
        for key in index.call_order[:bisect_right(index.call_created, k)]:
            view = index.calls[key].view(k, k)
            assert view.disputed is None or any(a is view.disputed for a in view.anomalies), k
    data = path.read_bytes()
    timeline = Timeline.build([(None, data[i:i + 7]) for i in range(0, len(data), 7)],
                              tools=ADVERSARIAL_TOOLS)
    last = len(timeline) - 1
    assert timeline.steps == index.steps
    assert list(timeline.view(last).calls) == [
        index.calls[key].view(last, timeline.view(last).anchor) for key in index.call_order]


def test_a_halted_turn_shows_the_text_the_gate_kept():
    """Past a limit the engine stops interpreting: the lane shows what the turn kept, not the
    text of the events that came after (the step says no fragment was added)."""
    steps, engine, snaps = engine_turn(PARALLEL.read_bytes(), Limits(max_argument_chars=12))
    assert engine.state.halted
    index = TimelineIndex.of(steps)
    last = len(steps) - 1
    assert {key: lane(index.calls[key].view(last, last)) for key in index.call_order} == {
        key: lane(c) for key, c in engine.state.calls.items()} == snaps[last]


def test_an_anomaly_before_its_call_opened_is_in_its_lane_and_disputes_it():
    """Regression: the turn hands a call the anomalies reported before it opened, and their
    dispute (the gate refuses it); the lane and the call detail used to show neither."""
    path = ROOT / "tests" / "adversarial" / "r3_resp_output_index_reused.sse"
    timeline = Timeline.build(one_chunk(path), tools=ADVERSARIAL_TOOLS)
    k_anomaly, anomaly = next((k, s.event) for k, s in enumerate(timeline.steps)
                              if isinstance(s, CallStep) and isinstance(s.event, Anomaly))
    assert anomaly.key == "item:fc_B" and "item:fc_B" not in {
        c.key for c in timeline.view(k_anomaly).calls}  # reported before the call opened
    k_open, opened = next((k, s) for k, s in enumerate(timeline.steps)
                          if isinstance(s, CallStep) and isinstance(s.event, CallOpened)
                          and s.event.key == "item:fc_B")
    assert opened.inherited == (anomaly,) and opened.disputed is anomaly
    fc_b = {c.key: c for c in timeline.view(k_open).calls}["item:fc_B"]
    assert fc_b.anomalies == (anomaly,) and fc_b.disputed is anomaly
    final = {c.key: c for c in timeline.view(len(timeline) - 1).calls}["item:fc_B"]
    assert final.disputed is anomaly and anomaly in final.anomalies
    assert final.decision.rule == "disputed"
    assert {c.key: c for c in timeline.view(len(timeline) - 1).calls}["item:fc_A"].disputed is None
    detail = call_detail(final).plain
    assert "output_index_reused" in detail and "disputed" in detail


def test_a_delta_before_its_call_was_added_disputes_the_call_it_makes():
    """Responses ``function_call_arguments.delta`` before ``output_item.added``: the delta
    makes the call (disputed: it was never opened), the open names it; the lane says so."""
    path = ROOT / "tests" / "adversarial" / "j_resp_delta_before_added.sse"
    timeline = Timeline.build(one_chunk(path), tools=ADVERSARIAL_TOOLS)
    first, found = [s for s in timeline.steps if isinstance(s, CallStep)][:2]
    assert isinstance(first.event, ArgumentsAppended) and first.draft is Draft.COMPLETE
    assert first.disputed is None  # the anomaly's own step, next, says so
    assert found.event.code == "delta_for_unknown_call" and found.disputed is found.event
    view = timeline.view(len(timeline) - 1).calls[0]
    assert view.disputed is found.event and view.anomalies == (found.event,)
    assert view.name == "delete_demo_file" and view.decision.rule == "disputed"


def test_a_block_stopped_before_it_started_disputes_the_tool_use_that_opens_it():
    """Anthropic: a content_block_stop for a block not open yet, then that block starts as a
    tool_use: the call opens disputed, with the earlier anomaly."""
    def ev(kind, payload):
        return f"event: {kind}\ndata: {orjson.dumps({'type': kind, **payload}).decode()}\n\n"
    data = "".join([
        ev("message_start", {"message": {"id": "m"}}),
        ev("content_block_stop", {"index": 0}),
        ev("content_block_start", {"index": 0, "content_block": {
            "type": "tool_use", "id": "t0", "name": "list_demo_keys", "input": {}}}),
        ev("content_block_delta", {"index": 0, "delta": {"type": "input_json_delta",
                                                         "partial_json": "{}"}}),
        ev("content_block_stop", {"index": 0}),
        ev("message_delta", {"delta": {"stop_reason": "tool_use"}}),
        ev("message_stop", {})]).encode()
    steps, engine, snaps = engine_turn(data)
    index = TimelineIndex.of(steps)
    last = len(steps) - 1
    call = index.calls["block:0"].view(last, last)
    assert call.disputed is not None and call.disputed.code == "stop_without_start"
    assert lane(call) == lane(engine.state.calls["block:0"])
    assert call.anomalies[0] is call.disputed
    assert engine.pipeline.decisions["block:0"].rule == "disputed"
