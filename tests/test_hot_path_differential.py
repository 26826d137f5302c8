"""The engine's hot path against its reference path, decided by a differential test.

:meth:`Engine.push_reads` (the hot path of :mod:`callscope.core.hot_path`: argument fragments read
where they lie in the bytes, no frame, event or step made) and :meth:`CallPipeline.push_frame`
(the same question asked of a materialized frame) must leave exactly what :meth:`Engine.feed`
(every frame materialized and read by the protocol reader, every step made) leaves: the frames
that are materialized, the call buffers fragment by fragment with their draft statuses, the
anomalies, the text, the reader's own state and the decisions. Streams are synthesized for every
protocol with a registered spec (so every framing), then mutated (bytes, frames, JSON fields the
hot guards look at) and fed in random reads; hypothesis draws it all, with modest counts.
"""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest
from callscope.core import synth
from callscope.core.engine import CallPipeline, Engine
from callscope.core.framing import decode_all, framing_of
from callscope.core.hot_path import RUN
from callscope.core.limits import DEFAULT_LIMITS, Limits
from callscope.core.providers import SPECS
from callscope.core.tools import ToolSet
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

PROTOCOLS = sorted(SPECS)
SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}
TOOLS = [{"type": "function", "name": "edit_file", "parameters": SCHEMA},
         {"type": "function", "name": "read_file", "parameters": SCHEMA}]
ODD_VALUES: list[Any] = [None, "", "x", "{}", 0, 1, -1, True, [], {}, [1], {"a": 1}, 1.5e300, "\u2028"]


def tools() -> ToolSet:
    return ToolSet(TOOLS)


def turn(rng: random.Random, calls: int, texts: int, stop: str) -> synth.Turn:
    items: list[synth.Item] = [synth.Text(synth.realistic_arguments(rng.randint(5, 60), rng)[:40])
                               for _ in range(texts)]
    for _ in range(calls):
        args = synth.realistic_arguments(rng.randint(20, 400), rng)
        if rng.random() < 0.15:
            args = args[:rng.randint(0, len(args))]  # invalid JSON: cut short
        items.insert(rng.randint(0, len(items)), synth.ToolCall(
            rng.choice(["edit_file", "read_file", "unknown"]), args, closed=rng.random() > 0.1))
    low = rng.randint(1, 6)
    return synth.Turn(items=tuple(items), stop=synth.Stop(stop),  # type: ignore[arg-type]
                      fragmenting=synth.Fragmenting(low, low + rng.randint(0, 10)))


def _mutate_json(rng: random.Random, payload: Any) -> Any:
    """One change to a random member of a parsed payload: a value replaced, a member dropped,
    one added, a list emptied or doubled."""
    path: list[Any] = []
    node = payload
    while isinstance(node, dict | list) and node and rng.random() < 0.7:
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path.append((node, key))
        node = node[key]
    if not path:
        if isinstance(payload, dict):
            payload[rng.choice(["usage", "error", "response", "metadata", "id", "name"])] = \
                rng.choice(ODD_VALUES)
        return payload
    parent, key = path[-1]
    roll = rng.random()
    if roll < 0.5:
        parent[key] = rng.choice(ODD_VALUES)
    elif roll < 0.7 and isinstance(parent, dict):
        del parent[key]
    elif roll < 0.85 and isinstance(parent, list):
        parent.append(parent[key])
    elif isinstance(parent, dict):
        parent[rng.choice(["id", "name", "content", "usage", "index", "x"])] = rng.choice(ODD_VALUES)
    return payload


def mutate(rng: random.Random, data: bytes, eol: bytes, count: int) -> bytes:
    """``count`` changes: JSON members of a frame, whole frames (dropped, repeated, swapped),
    single bytes, or an event line renamed."""
    sep = eol + eol
    for _ in range(count):
        frames = data.split(sep) if eol else [data]
        if len(frames) < 2:  # (a binary framing: bytes only)
            if data:
                raw = bytearray(data)
                at = rng.randrange(len(raw))
                raw[at:at + rng.randint(0, 2)] = bytes([rng.randrange(256)])
                data = bytes(raw)
            continue
        i = rng.randrange(len(frames))
        kind = rng.random()
        if kind < 0.45:
            lines = frames[i].split(eol)
            for n, line in enumerate(lines):
                if line.startswith(b"data: {"):
                    try:
                        payload = orjson.loads(line[6:])
                    except orjson.JSONDecodeError:
                        break
                    lines[n] = b"data: " + orjson.dumps(_mutate_json(rng, payload))
                    break
            frames[i] = eol.join(lines)
        elif kind < 0.55:
            del frames[i]
        elif kind < 0.65:
            frames.insert(i, frames[i])
        elif kind < 0.75:
            j = rng.randrange(len(frames))
            frames[i], frames[j] = frames[j], frames[i]
        elif kind < 0.85 and frames[i].startswith(b"event: "):
            frames[i] = b"event: " + rng.choice([b"x", b"", b"\xff", b"ping"]) + \
                frames[i][frames[i].find(eol):]
        else:
            raw = bytearray(sep.join(frames))
            at = rng.randrange(len(raw))
            raw[at:at + rng.randint(0, 2)] = bytes([rng.choice(b'"{}[],:\\\n\r x0\xc3\x00')])
            data = bytes(raw)
            continue
        data = sep.join(frames)
    return data


def reads(rng: random.Random, data: bytes) -> list[bytes]:
    out, at = [], 0
    big = rng.random() < 0.2
    while at < len(data):
        size = rng.randint(1, 4000) if big else int(rng.lognormvariate(3.5, 1.3)) + 1
        out.append(data[at:at + size])
        at += size
    return out


def snapshot(pipeline: CallPipeline) -> dict[str, Any]:
    """Everything the pipeline holds that a frame can change (the steps aside)."""
    state = pipeline.state
    reader = pipeline.reader
    return {
        "protocol": state.protocol, "last_frame": pipeline.last_frame,
        "decisions": dict(pipeline.decisions), "drafts": dict(pipeline._drafts),
        "calls": {key: (call.text, list(call.fragments), call.draft, call.draft_error,
                        call.max_depth, call.byte_length, call.length, call.closed,
                        call.closed_frame, call.origin, call.id, call.call_id, call.name,
                        call.kind, call.cut_why, call.disputed,
                        list(call.anomalies), list(call.pieces))
                  for key, call in state.calls.items()},
        "anomalies": list(state.anomalies), "counts": dict(state.anomaly_counts),
        "text": {k: "".join(v) for k, v in state.text.items()}, "text_chars": state.text_chars,
        "turn": (state.terminal, state.stop, state.cut_by, state.failed_by, list(state.errors),
                 dict(state.usage), state.halted, set(state.late), state.unreadable,
                 {k: list(v) for k, v in state.orphans.items()}, dict(state.disputes)),
        "reader": None if reader is None else
        {k: v for k, v in vars(reader).items() if k != "_out"},
    }


def reference(protocol: str | None, chunks: list[bytes],
              limits: Limits = DEFAULT_LIMITS) -> tuple[Engine, dict[int, Any]]:
    engine = Engine(protocol, tools(), limits)
    frames = {}
    for chunk in chunks:
        for step in engine.feed(chunk):
            frame = getattr(step, "frame", None)
            if frame is not None and hasattr(frame, "raw"):
                frames[frame.index] = frame
    engine.close()
    return engine, frames


class Counting(Engine):
    """An engine that keeps the frames it materializes."""

    def __init__(self, protocol: str | None, limits: Limits = DEFAULT_LIMITS) -> None:
        super().__init__(protocol, tools(), limits)
        self.materialized: list[Any] = []

    def _deliver(self, frame: Any) -> None:
        self.materialized.append(frame)
        super()._deliver(frame)


def hot(protocol: str | None, chunks: list[bytes], limits: Limits = DEFAULT_LIMITS) -> Counting:
    engine = Counting(protocol, limits)
    engine.push_reads(chunks)
    engine.close()
    return engine


def assert_same(protocol: str | None, data: bytes, chunks: list[bytes],
                limits: Limits = DEFAULT_LIMITS) -> Counting:
    ref, ref_frames = reference(protocol, chunks, limits)
    got = hot(protocol, chunks, limits)
    assert got.decoder.frames_emitted == ref.decoder.frames_emitted
    for frame in got.materialized:
        assert frame == ref_frames[frame.index]
    assert snapshot(got.pipeline) == snapshot(ref.pipeline)
    # The frame-level question (check's cut sweep): each frame pushed, not read with steps.
    spec_protocol = protocol or ref.pipeline.protocol
    frames = decode_all(data, framing_of(spec_protocol if spec_protocol in SPECS else None))
    one, two = CallPipeline(protocol, tools(), limits), CallPipeline(protocol, tools(), limits)
    for frame in frames:
        one.frame(frame)
        two.push_frame(frame)
    one.finish()
    two.finish()
    assert snapshot(two) == snapshot(one)
    return got


@settings(max_examples=60, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(protocol=st.sampled_from(PROTOCOLS), seed=st.integers(0, 2**32),
       calls=st.integers(0, 3), texts=st.integers(0, 2),
       stop=st.sampled_from(["normal", "normal", "length", "error"]),
       mutations=st.integers(0, 4), detect=st.booleans())
def test_the_hot_path_leaves_what_the_reference_path_leaves(protocol, seed, calls, texts, stop,
                                                            mutations, detect):
    rng = random.Random(seed)
    encoded = synth.encode_turn(protocol, turn(rng, calls, texts, stop), rng)
    data = mutate(rng, encoded.data, encoded.eol, mutations)
    if rng.random() < 0.2:
        data = data[:rng.randint(0, len(data))]  # the connection dropped
    assert_same(None if detect else protocol, data, reads(rng, data))


def test_the_hot_path_is_taken_on_every_protocol_whose_reader_has_one():
    """The comparison above is not idle: on a clean stream nearly every frame is read hot
    (Gemini generateContent has no hot frame: its fragments are whole objects)."""
    rng = random.Random(3)
    for protocol in PROTOCOLS:
        calls = tuple(synth.ToolCall("edit_file", synth.realistic_arguments(600, rng))
                      for _ in range(2))
        encoded = synth.encode_turn(protocol, synth.Turn(items=calls), rng)
        got = assert_same(protocol, encoded.data, reads(rng, encoded.data))
        hot_frames = got.decoder.frames_emitted - len(got.materialized)
        reader = got.pipeline.reader
        assert reader is not None
        has_hot = type(reader).hot_fragment is not type(reader).__mro__[-2].hot_fragment
        if has_hot and framing_of(protocol) == "sse":
            assert hot_frames > got.decoder.frames_emitted / 2, protocol
            # Without a protocol the framing is sniffed and the reader detected: hot after that.
            sniffed = assert_same(None, encoded.data, reads(rng, encoded.data))
            assert sniffed.decoder.frames_emitted - len(sniffed.materialized) > \
                sniffed.decoder.frames_emitted / 2, protocol
            # A stream read whole (a raw capture is one read): hot past its first bytes.
            for framed in (protocol, None):
                whole = assert_same(framed, encoded.data, [encoded.data])
                assert whole.decoder.frames_emitted - len(whole.materialized) > \
                    whole.decoder.frames_emitted / 2, (protocol, framed)
        else:
            assert hot_frames == 0, protocol


SLOT_BYTES = [b"\\", b'"', b"\n", b"0", b"00", b"-", b"1" * 30, b"\xff", b"\xc3", b"\xed\xa0\x80",
              b"\x00", b"\\u", b"\\ud800", b"\\udc00", b"\\n", b"\\x", b" ", b",", b"]", b"}",
              b"1.5", b"true", b'",1,"', b"\t"]


def mutate_slots(rng: random.Random, data: bytes, shape: Any, count: int) -> bytes:
    """``count`` changes inside the value slots of blocks that match the reader's declared
    :attr:`hot_shape` (bytes a JSON value or the SSE lines read differently: quotes, escapes,
    line ends, bytes that are not UTF-8, numbers JSON refuses), the fixed bytes kept."""
    blocks = data.split(b"\n\n")
    hot = [i for i, b in enumerate(blocks)
           if b.startswith(shape.head) and shape.rest.fullmatch(b, shape.size)]
    for _ in range(count if hot else 0):
        i = rng.choice(hot)
        block = blocks[i]
        match = shape.rest.fullmatch(block, shape.size)
        if match is None:
            continue
        slot = rng.randrange(len(match.groups())) + 1
        at = rng.randint(match.start(slot), match.end(slot))
        cut = rng.randint(0, 2) if rng.random() < 0.3 else 0
        blocks[i] = block[:at] + rng.choice(SLOT_BYTES) + block[at + cut:]
    return b"\n\n".join(blocks)


SHAPED = [p for p in PROTOCOLS if SPECS[p].reader_class().hot_shape is not None
          and framing_of(p) == "sse"]
"""The protocols whose hot blocks can be read by their declared shape (the hot path reads SSE
only: a reader another framing shares, Bedrock's Anthropic, keeps the shape unused)."""


@settings(max_examples=40, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(protocol=st.sampled_from(SHAPED), seed=st.integers(0, 2**32),
       mutations=st.integers(1, 6))
def test_a_declared_block_shape_reads_as_the_reference(protocol, seed, mutations):
    """The hot path's exact-bytes reading (:attr:`.ProtocolReader.hot_shape`) against the
    reference, on blocks of that shape changed inside their values."""
    rng = random.Random(seed)
    encoded = synth.encode_turn(protocol, turn(rng, rng.randint(1, 2), 0, "normal"), rng)
    shape = SPECS[protocol].reader_class().hot_shape
    data = mutate_slots(rng, encoded.data, shape, mutations)
    assert_same(protocol, data, reads(rng, data))


def test_the_declared_shapes_are_what_the_providers_write():
    """The exact-bytes reading is not idle: on a clean stream of a protocol that declares its
    hot block, nearly every argument fragment after a call's first matches it."""
    rng = random.Random(5)
    assert SHAPED, "no reader declares a hot block shape"
    for protocol in SHAPED:
        calls = tuple(synth.ToolCall("edit_file", synth.realistic_arguments(600, rng))
                      for _ in range(2))
        encoded = synth.encode_turn(protocol, synth.Turn(items=calls), rng)
        shape = SPECS[protocol].reader_class().hot_shape
        blocks = encoded.data.split(b"\n\n")
        matched = sum(1 for b in blocks
                      if b.startswith(shape.head) and shape.rest.fullmatch(b, shape.size))
        assert matched > len(blocks) / 2, protocol


@pytest.mark.parametrize("beyond", [0, 40])
def test_an_interaction_with_as_many_steps_as_the_readers_key_memo_holds_or_more(beyond):
    """Gemini Interactions' reader remembers a step's key by index (at most MAX_STEP_KEYS an
    interaction), on the hot path and the reference path alike: full, or past the bound, both
    forget alike, so the reader's state stays the same, and every delta after the first of its
    step is read hot."""
    from callscope.core.providers.gemini_interactions import MAX_STEP_KEYS

    def block(payload: dict[str, Any]) -> bytes:
        return b"event: " + payload["event_type"].encode() + b"\ndata: " + \
            orjson.dumps(payload) + b"\n\n"

    steps = MAX_STEP_KEYS + beyond
    out = [block({"interaction": {"id": "v1_a", "status": "in_progress"},
                  "event_type": "interaction.created"})]
    for i in range(steps):
        out.append(block({"index": i, "step": {"id": f"c{i}", "type": "function_call",
                                               "name": "edit_file", "arguments": {}},
                          "event_type": "step.start"}))
    for fragment in ('{"pa', 'th":', '"a"', "}"):  # (every step open at once: the memo churns)
        for i in reversed(range(steps)):
            out.append(block({"index": i, "delta": {"arguments": fragment,
                                                    "type": "arguments_delta"},
                              "event_type": "step.delta"}))
    out += [block({"index": i, "event_type": "step.stop"}) for i in range(steps)]
    out.append(block({"interaction": {"id": "v1_a", "status": "requires_action"},
                      "event_type": "interaction.completed"}))
    data = b"".join(out)
    got = assert_same("gemini-interactions", data, reads(random.Random(4), data))
    assert got.decoder.frames_emitted - len(got.materialized) >= 3 * steps  # (read hot)


@settings(max_examples=30, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(protocol=st.sampled_from(SHAPED), seed=st.integers(0, 2**32),
       room=st.integers(0, 700), one_read=st.booleans())
def test_a_run_of_blocks_that_fills_a_call_to_its_limit_reads_as_the_reference(
        protocol, seed, room, one_read):
    """The hot path reads a run of blocks at once and appends each call's fragments in a row
    together: a call whose limit falls inside a run hands the fragment past it to the
    reference, which halts the turn, and the reader reads no block after it."""
    rng = random.Random(seed)
    calls = tuple(synth.ToolCall("edit_file", synth.realistic_arguments(rng.randint(50, 400), rng))
                  for _ in range(rng.randint(1, 2)))
    encoded = synth.encode_turn(protocol, synth.Turn(items=calls), rng)
    data = encoded.data
    # (one read after the first bytes: the decoder's fast path holds from its second read)
    chunks = [data[:8], data[8:]] if one_read else reads(rng, data)
    got = assert_same(protocol, data, chunks, Limits(max_argument_chars=room))
    if one_read and room > 400:  # (no call reaches the limit: the runs are long)
        assert got.decoder.frames_emitted - len(got.materialized) > min(RUN, 20)


def _interleaved(rng: random.Random, data: bytes) -> bytes:
    """A Responses stream of several calls with their argument deltas interleaved (each
    call's in order, every call added before the first delta), numbered again in order: a
    run of hot blocks that alternates between calls."""
    blocks = [b for b in data.split(b"\n\n") if b]
    kinds = [b.split(b"\n", 1)[0][7:] for b in blocks]
    delta = b"response.function_call_arguments.delta"
    first = kinds.index(delta)
    added = [b for b, k in zip(blocks, kinds, strict=True) if k == b"response.output_item.added"]
    queues: dict[bytes, list[bytes]] = {}
    for b in blocks:
        if b.startswith(b"event: " + delta):
            queues.setdefault(orjson.loads(b.split(b"data: ", 1)[1])["item_id"].encode(), []).append(b)
    mixed: list[bytes] = []
    while any(queues.values()):
        mixed.append(queues[rng.choice([k for k, q in queues.items() if q])].pop(0))
    rest = [b for b, k in zip(blocks[first:], kinds[first:], strict=True)
            if k not in (delta, b"response.output_item.added")]
    head = [b for b in blocks[:first] if b not in added]
    out = []
    for seq, block in enumerate(head + added + mixed + rest):
        event, line = block.split(b"\n", 1)
        payload = orjson.loads(line[6:])
        if "sequence_number" in payload:
            payload["sequence_number"] = seq
        out.append(event + b"\ndata: " + orjson.dumps(payload) + b"\n\n")
    return b"".join(out)


@settings(max_examples=30, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**32), room=st.sampled_from([0, 150, 300, 64 * 2**20]),
       one_read=st.booleans())
def test_a_run_alternating_between_calls_reads_as_the_reference(seed, room, one_read):
    rng = random.Random(seed)
    calls = tuple(synth.ToolCall("edit_file", synth.realistic_arguments(rng.randint(50, 300), rng))
                  for _ in range(rng.randint(2, 3)))
    data = _interleaved(rng, synth.encode_turn("openai-responses", synth.Turn(items=calls),
                                               rng).data)
    got = assert_same("openai-responses", data,
                      [data[:8], data[8:]] if one_read else reads(rng, data),
                      Limits(max_argument_chars=room))
    if room > 300:
        assert got.decoder.frames_emitted - len(got.materialized) > got.decoder.frames_emitted / 2


def test_a_read_holding_many_hot_blocks_is_read_in_runs(monkeypatch):
    """The run reading is not idle: a read holding many argument deltas in a row is read by
    few offers of the hot path (each reading many blocks), on every shaped protocol."""
    from callscope.core.hot_path import HotPath

    offers: list[int] = []
    take = HotPath.take

    def counted(self: HotPath, data: bytes, start: int, end: int, index: int) -> int:
        offers.append(take(self, data, start, end, index))
        return offers[-1]

    monkeypatch.setattr(HotPath, "take", counted)
    rng = random.Random(8)
    for protocol in SHAPED:
        offers.clear()
        call = synth.ToolCall("edit_file", synth.realistic_arguments(3000, rng))
        data = synth.encode_turn(protocol, synth.Turn(items=(call,)), rng).data
        got = assert_same(protocol, data, [data[:8], data[8:]])
        hot_frames = got.decoder.frames_emitted - len(got.materialized)
        assert sum(offers) == hot_frames, protocol
        assert max(offers) == RUN and len(offers) < hot_frames / 50, protocol
