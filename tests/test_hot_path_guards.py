"""Every guard of the engine's hot path, taken by a stream made to trip it.

A guard is a condition on which the hot path (core/hot_path.py, the readers' ``hot_fragment`` and
``hot_values``, :meth:`CallPipeline.push_frame`, :meth:`TurnState.hot_room`) leaves a frame to the
reference path, or checks before it trusts its fast reading. Each case below is a clean stream
in which one argument fragment frame (the target) is read hot, and the same stream changed in
the one thing a guard looks at. The case proves the guard is reached: on the clean stream the
target is read hot (on the paths the guard belongs to), on the changed one it is not; and on
both the hot path leaves exactly what the reference path leaves
(:func:`test_hot_path_differential.assert_same`). The stream path is :meth:`Engine.push_reads`
(the block read where it lies in the bytes: not read hot means materialized); the frame path is
:meth:`CallPipeline.push_frame` (a frame asked of the reader: read hot means handed to
:meth:`CallPipeline.hot_fragment`).

The same changes are then drawn by hypothesis on random streams, fragments and chunkings
(:func:`test_guard_changes_on_random_streams_read_as_the_reference`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, NamedTuple

import orjson
import pytest
from callscope.core import synth
from callscope.core.engine import CallPipeline
from callscope.core.framing import decode_all
from callscope.core.hot_path import MAX_NAMES, HotPath
from callscope.core.limits import DEFAULT_LIMITS, Limits
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_hot_path_differential import assert_same, hot, reads, tools

ARGS = '{"path": "src/callscope/core/hot_path.py", "content": "' + "abcdefgh" * 12 + '"}'

Blocks = list[bytes]


def clean(protocol: str, calls: int = 1, seed: int = 1, args: str = ARGS,
          size: int = 8) -> Blocks:
    """A turn's blocks (without the blank lines that end them), LF-ended, fragments of ``size``
    characters."""
    rng = random.Random(seed)
    turn = synth.Turn(items=tuple(synth.ToolCall("edit_file", args) for _ in range(calls)),
                      fragmenting=synth.Fragmenting(size, size))
    data = synth.encode_turn(protocol, turn, rng).data.replace(b"\r\n", b"\n")
    return [b for b in data.split(b"\n\n") if b]


FRAGMENT = {"anthropic": b'"input_json_delta"', "openai-chat": b'"arguments":"',
            "openai-responses": b"response.function_call_arguments.delta\n",
            "gemini-interactions": b'"arguments_delta"'}


def fragments(protocol: str, blocks: Blocks) -> list[int]:
    """The indexes of the blocks that carry one argument fragment and nothing else."""
    mark = FRAGMENT[protocol]
    out = [i for i, b in enumerate(blocks) if mark in b and b'"name"' not in b]
    if protocol == "anthropic":
        out = out[1:]  # (the first partial_json, "": the block's first fragment)
    return out


def data(blocks: Blocks) -> bytes:
    return b"\n\n".join(blocks) + b"\n\n"


def payload(block: bytes) -> tuple[bytes, Any]:
    head, _, line = block.rpartition(b"data: ")
    return head, orjson.loads(line)


def with_payload(block: bytes, change: Callable[[Any], None]) -> bytes:
    head, value = payload(block)
    change(value)
    return head + b"data: " + orjson.dumps(value)


def dig(value: Any, *path: Any) -> Any:
    for key in path:
        value = value[key]
    return value


def setter(*path: Any, value: Any) -> Callable[[Any], None]:
    def change(p: Any) -> None:
        dig(p, *path[:-1])[path[-1]] = value
    return change


def deleter(*path: Any) -> Callable[[Any], None]:
    def change(p: Any) -> None:
        del dig(p, *path[:-1])[path[-1]]
    return change


CHOICE = ("choices", 0)
CALL = (*CHOICE, "delta", "tool_calls", 0)


class Case(NamedTuple):
    guard: str
    """file:line and the condition."""
    protocol: str
    change: Callable[[Blocks, int], tuple[Blocks, int]]
    """The clean blocks and the target's index -> the changed blocks and the target's index."""
    paths: tuple[str, ...] = ("stream", "frame")
    """Where the change must send the target to the reference ("stream", "frame")."""
    limits: Limits = DEFAULT_LIMITS
    calls: int = 1


def edit(change: Callable[[Any], None]) -> Callable[[Blocks, int], tuple[Blocks, int]]:
    """The target's payload changed."""
    def apply(blocks: Blocks, t: int) -> tuple[Blocks, int]:
        out = list(blocks)
        out[t] = with_payload(out[t], change)
        return out, t
    return apply


def raw(change: Callable[[bytes], bytes]) -> Callable[[Blocks, int], tuple[Blocks, int]]:
    """The target's bytes changed."""
    def apply(blocks: Blocks, t: int) -> tuple[Blocks, int]:
        out = list(blocks)
        out[t] = change(out[t])
        return out, t
    return apply


def before(*inserted: bytes) -> Callable[[Blocks, int], tuple[Blocks, int]]:
    """Blocks inserted just before the target."""
    def apply(blocks: Blocks, t: int) -> tuple[Blocks, int]:
        return blocks[:t] + list(inserted) + blocks[t:], t + len(inserted)
    return apply


def unframed(blocks: Blocks, t: int) -> tuple[Blocks, int]:
    """The target without its ``event:`` line (a data-only block: event None)."""
    out = list(blocks)
    out[t] = b"data: " + out[t].rpartition(b"data: ")[2]
    return out, t


def first_of_its_call(protocol: str) -> Callable[[Blocks, int], tuple[Blocks, int]]:
    """The call's fragments before the target dropped: the target is its call's first."""
    def apply(blocks: Blocks, t: int) -> tuple[Blocks, int]:
        mark = FRAGMENT[protocol]
        gone = [i for i in range(t) if mark in blocks[i] and b'"name"' not in blocks[i]]
        return [b for i, b in enumerate(blocks) if i not in gone], t - len(gone)
    return apply


def empty_object_first(blocks: Blocks, t: int) -> tuple[Blocks, int]:
    """Chat: the call's fragments before the target replaced by one "{}"."""
    blocks, t = first_of_its_call(C)(blocks, t)
    first = with_payload(blocks[t], setter(*CALL, "function", "arguments", value="{}"))
    return blocks[:t] + [first] + blocks[t:], t + 1


def retyped(kind: str) -> Callable[[Any], None]:
    return setter("type", value=kind)


def responses_item(index: int, item_id: str) -> bytes:
    return b"event: response.output_item.added\ndata: " + orjson.dumps({
        "type": "response.output_item.added", "sequence_number": 0, "output_index": index,
        "item": {"id": item_id, "type": "function_call", "status": "in_progress",
                 "arguments": "", "call_id": "call_x", "name": "read_file"}})


def renumbered(blocks: Blocks, t: int) -> tuple[Blocks, int]:
    """A Responses stream numbered again in order (after blocks were inserted)."""
    out = []
    for seq, block in enumerate(blocks):
        def number(p: Any, seq: int = seq) -> None:
            if "sequence_number" in p:
                p["sequence_number"] = seq
        out.append(with_payload(block, number) if b"data: {" in block else block)
    return out, t


def then(*steps: Callable[[Blocks, int], tuple[Blocks, int]]
         ) -> Callable[[Blocks, int], tuple[Blocks, int]]:
    def apply(blocks: Blocks, t: int) -> tuple[Blocks, int]:
        for step in steps:
            blocks, t = step(blocks, t)
        return blocks, t
    return apply


def other_call_at_target_index(blocks: Blocks, t: int) -> tuple[Blocks, int]:
    """Responses: a second call added at output_index 1, and the target delta (item id of the
    first call) sent with output_index 1: the id names one call, the index another."""
    added = next(i for i, b in enumerate(blocks) if b"response.output_item.added" in b)
    blocks = blocks[:added + 1] + [responses_item(1, "fc_other")] + blocks[added + 1:]
    t += 1
    blocks[t] = with_payload(blocks[t], setter("output_index", value=1))
    return renumbered(blocks, t)


def message_stop() -> bytes:
    return b'event: message_stop\ndata: {"type":"message_stop"}'


A, C, R, G = "anthropic", "openai-chat", "openai-responses", "gemini-interactions"
STREAM = ("stream",)
FRAME = ("frame",)

CASES = [
    # -- core/hot_path.py HotPath.take: the turn and the reader (checked once per hot_ready) --
    Case("hot_path.py:120 state.halted (the turn halted at a limit, engine.py:130 on the frame "
         "path)", C, lambda b, t: (b, t), limits=Limits(max_argument_chars=10)),
    Case("hot_path.py:121 reader.done_frame (data after a [DONE] that ended nothing)", C,
         before(b"data: [DONE]")),
    Case("hot_path.py:121 reader.ended (data after the terminal signal)", A,
         before(message_stop())),
    # -- HotPath.take: the block's lines --
    Case("hot_path.py:132 a data: block of more than one line", C,
         raw(lambda b: b + b"\nid: 7"), STREAM),
    Case("hot_path.py:137 an event: line not followed by data:", A,
         raw(lambda b: b.replace(b"\ndata: ", b"\nid: 7\ndata: ", 1)), STREAM),
    Case("hot_path.py:137 an event: block of more than two lines", A,
         raw(lambda b: b + b"\nid: 7"), STREAM),
    Case("hot_path.py:146 an event name that is not UTF-8", A,
         raw(lambda b: b.replace(b"content_block_delta\n", b"content_block_delt\xe9\n", 1))),
    Case("hot_path.py:153 a block that starts with neither data: nor event:", C,
         raw(lambda b: b"id: 7\n" + b), STREAM),
    Case("hot_path.py:153 data: without its space", C,
         raw(lambda b: b.replace(b"data: ", b"data:", 1)), STREAM),
    Case("hot_path.py:154 data that is not a JSON object (a leading space: the reference "
         "reads it; engine.py:129 data[:1] == '{' on the frame path)", C,
         raw(lambda b: b.replace(b"data: ", b"data:  ", 1))),
    Case("hot_path.py:158 data that is not UTF-8 (the reference reads U+FFFD)", C,
         raw(lambda b: b[:-12] + b"\xff" + b[-11:]), STREAM),
    Case("hot_path.py:158 data that is not JSON (engine.py:136 on the frame path)", C,
         raw(lambda b: b[:-1] + b",}")),
    Case("hot_path.py:126-128 a block not of the declared shape (read hot the general way)",
         A, raw(lambda b: b.replace(b'"index":', b'"index": ', 1)), ()),
    # -- core/engine.py CallPipeline.push_frame (the frame path's own guards) --
    Case("engine.py:130 reader.quiet(): done_frame", C, before(b"data: [DONE]"), FRAME),
    # -- core/providers/anthropic.py hot_fragment / hot_values --
    Case("anthropic.py:123 event != content_block_delta", A,
         raw(lambda b: b.replace(b"event: content_block_delta", b"event: content_block_deltb"))),
    Case("anthropic.py:123 no event: line (event None)", A, unframed),
    Case("anthropic.py:123/135 not self._started (no message_start)", A,
         lambda b, t: (b[1:], t - 1)),
    Case("anthropic.py:124 data.type != content_block_delta", A,
         edit(retyped("content_block_deltb"))),
    Case("anthropic.py:127 index not an int", A, edit(setter("index", value=0.0))),
    Case("anthropic.py:127 delta not an object", A, edit(setter("delta", value=[]))),
    Case("anthropic.py:127 delta.type != input_json_delta", A,
         edit(setter("delta", "type", value="text_delta"))),
    Case("anthropic.py:130 partial_json not a string", A,
         edit(setter("delta", "partial_json", value=1))),
    Case("anthropic.py:136 no open block at the index", A, edit(setter("index", value=5))),
    Case("anthropic.py:136 a block without its first fragment", A, first_of_its_call(A)),
    # -- core/providers/openai_responses.py hot_fragment / hot_values --
    Case("openai_responses.py:84 data.type != the delta's", R, edit(retyped("x"))),
    Case("openai_responses.py:88 event != the delta's", R,
         raw(lambda b: b.replace(b"event: response.function_call_arguments.delta",
                                 b"event: response.function_call_arguments.deltb", 1))),
    Case("openai_responses.py:88 sequence_number not an int", R,
         edit(deleter("sequence_number"))),
    Case("openai_responses.py:89 a response member", R, edit(setter("response", value={}))),
    Case("openai_responses.py:90 item_id not a string", R, edit(setter("item_id", value=1))),
    Case("openai_responses.py:90 delta not a string", R, edit(setter("delta", value=1))),
    Case("openai_responses.py:98 an unnumbered stream (self._seq None)", R,
         lambda b, t: ([with_payload(x, lambda p: p.pop("sequence_number", None))
                        if i != t else x for i, x in enumerate(b)], t)),
    Case("openai_responses.py:98 sequence_number not the next", R,
         edit(lambda p: p.update(sequence_number=p["sequence_number"] + 1))),
    Case("openai_responses.py:101 an item id no call was added under", R,
         edit(setter("item_id", value="fc_unknown"))),
    Case("openai_responses.py:103 output_index names another call (routing dispute)", R,
         other_call_at_target_index),
    # -- core/providers/gemini_interactions.py hot_fragment / hot_values --
    Case("gemini_interactions.py:119 event_type != step.delta", G,
         edit(setter("event_type", value="step.deltb"))),
    Case("gemini_interactions.py:120 event != step.delta", G,
         raw(lambda b: b.replace(b"event: step.delta", b"event: step.deltb", 1))),
    Case("gemini_interactions.py:120/134 before interaction.created (self._hops == 0)", G,
         lambda b, t: (b[1:], t - 1)),
    Case("gemini_interactions.py:123 index not an int", G, edit(setter("index", value="0"))),
    Case("gemini_interactions.py:123 delta not an object", G, edit(setter("delta", value="x"))),
    Case("gemini_interactions.py:123 a metadata member", G,
         edit(setter("metadata", value={"a": 1}))),
    Case("gemini_interactions.py:124 delta.type != arguments_delta", G,
         edit(setter("delta", "type", value="text"))),
    Case("gemini_interactions.py:127 arguments not a string", G,
         edit(setter("delta", "arguments", value={}))),
    Case("gemini_interactions.py:137 no step at the index", G, edit(setter("index", value=5))),
    Case("gemini_interactions.py:137 a step without its first fragment", G,
         first_of_its_call(G)),
    # -- core/providers/openai_chat.py hot_fragment --
    Case("openai_chat.py:118 choices not a list", C, edit(setter("choices", value={}))),
    Case("openai_chat.py:118 more than one choice", C,
         edit(lambda p: p["choices"].append(dict(p["choices"][0], index=1)))),
    Case("openai_chat.py:119 object not a chunk", C, edit(setter("object", value="x"))),
    Case("openai_chat.py:120 an error member", C, edit(setter("error", value={"m": 1}))),
    Case("openai_chat.py:120 a usage member", C, edit(setter("usage", value={"t": 1}))),
    Case("openai_chat.py:123 a choice not an object", C, edit(setter(*CHOICE, value=[]))),
    Case("openai_chat.py:126 choice index not an int", C,
         edit(setter(*CHOICE, "index", value=None))),
    Case("openai_chat.py:126 delta not an object", C,
         edit(setter(*CHOICE, "delta", value=None))),
    Case("openai_chat.py:126 a finish_reason", C,
         edit(setter(*CHOICE, "finish_reason", value="stop"))),
    Case("openai_chat.py:127 a choice never seen", C, edit(setter(*CHOICE, "index", value=3))),
    Case("openai_chat.py:127 a finished choice", C,
         lambda b, t: (b[:t] + [with_payload(b[t], lambda p: (
             dig(p, *CHOICE).update(finish_reason="tool_calls", delta={})))] + b[t:], t + 1)),
    Case("openai_chat.py:130 tool_calls not a list", C,
         edit(setter(*CHOICE, "delta", "tool_calls", value={}))),
    Case("openai_chat.py:130 more than one tool call", C,
         edit(lambda p: dig(p, *CHOICE, "delta", "tool_calls").append(dig(p, *CALL)))),
    Case("openai_chat.py:131 a function_call member", C,
         edit(setter(*CHOICE, "delta", "function_call", value={"arguments": "x"}))),
    Case("openai_chat.py:135 text beside the fragment (content)", C,
         edit(setter(*CHOICE, "delta", "content", value="x"))),
    Case("openai_chat.py:138 a tool call not an object", C, edit(setter(*CALL, value=1))),
    Case("openai_chat.py:141 function not an object", C,
         edit(setter(*CALL, "function", value="x"))),
    Case("openai_chat.py:141 tool call index not an int", C,
         edit(setter(*CALL, "index", value="0"))),
    Case("openai_chat.py:142 an id", C, edit(setter(*CALL, "id", value="call_2"))),
    Case("openai_chat.py:143 a name", C, edit(setter(*CALL, "function", "name", value="f"))),
    Case("openai_chat.py:147 no call at the index", C, edit(setter(*CALL, "index", value=4))),
    Case("openai_chat.py:147 arguments not a string", C,
         edit(setter(*CALL, "function", "arguments", value=None))),
    Case("openai_chat.py:147 empty arguments", C,
         edit(setter(*CALL, "function", "arguments", value=""))),
    Case("openai_chat.py:148 a call whose one fragment so far is {}", C, empty_object_first),
    # -- what the guards let through: read hot all the same (paths ()) --
    Case("openai_responses.py:88 no event: line (event None)", R, unframed, ()),
    Case("openai_responses.py:103 no output_index", R, edit(deleter("output_index")), ()),
    Case("gemini_interactions.py:120 no event: line (event None)", G, unframed, ()),
    Case("openai_chat.py:119 no object member", C, edit(deleter("object")), ()),
    Case("openai_chat.py:126 finish_reason \"\"", C,
         edit(setter(*CHOICE, "finish_reason", value="")), ()),
    Case("openai_chat.py:135 content \"\"", C,
         edit(setter(*CHOICE, "delta", "content", value="")), ()),
    # -- core/calls.py TurnState.hot_room / append_hot, core/engine.py hot_fragment --
    Case("calls.py:187 / engine.py:151 a fragment past the call's limit (read by the "
         "reference: the turn halts there)", C, lambda b, t: (b, t), (),
         Limits(max_argument_chars=20)),
]

# Conditions that are not a case above, and why (each holds in a test below or is unreachable):
# - hot_path.py:120 reader None, not reader.has_hot_frame: test_frames_before_a_reader_...
#   and test_a_reader_without_a_hot_frame_...; hot_path.py:137 nl < 0: test_an_event_line_...
# - hot_path.py:148 the names memo full: test_more_event_names_than_the_memo_holds.
# - hot_path.py:180 RUN, :182 a block past the decoder's limit in a run, :189/:234 a run whose
#   values orjson refuses, :201 a block of a run the reader does not call hot, :211 a call with
#   no room in a run: test_run_guards.
# - engine.py:129 frame.overflow, not frame.dispatch: test_push_frame_guards_on_overflow_...
# - calls.py:196 call None, closed, origin != "raw": the random streams below (a reader's call the
#   accumulator refused or closed); ``halted`` and ``terminal`` are not reached from the hot
#   path (a halted or ended turn is refused first: hot_path.py:120-121, engine.py:130), only by
#   the reference path's own use of append_hot (CallPipeline._apply), not taken by any test here.
# - openai_responses.py:101 ``call.item_id != item_id``: unreachable (a call is keyed
#   ``item:<its item id>``, responses_calls._open), kept as a check.
# - anthropic.py:123, openai_responses.py:84, gemini_interactions.py:119, openai_chat.py:114
#   ``type(payload) is not dict``: unreachable from the hot path (take and push_frame hand only
#   a payload whose text starts with "{" and that orjson parsed: an object), kept as the readers'
#   contract; anthropic.py:135 ``if self._started`` in hot_values, reached only through take's
#   shape reading (the case "not self._started" above takes it).


def frame_path_hot(protocol: str, blob: bytes, limits: Limits) -> set[int]:
    """The frames :meth:`CallPipeline.push_frame` reads hot."""
    pipeline = CallPipeline(protocol, tools(), limits)
    taken: set[int] = set()
    inner = pipeline.hot_fragment

    def spy(frame: int, key: str, fragment: str) -> None:
        taken.add(frame)
        inner(frame, key, fragment)

    pipeline.hot_fragment = spy  # type: ignore[method-assign]
    for frame in decode_all(blob, "sse"):
        pipeline.push_frame(frame)
    return taken


def stream_path_hot(protocol: str, blob: bytes, limits: Limits) -> set[int]:
    """The frames :meth:`Engine.push_reads` reads without materializing them."""
    got = hot(protocol, [blob[:8], blob[8:]], limits)
    return set(range(got.decoder.frames_emitted)) - {f.index for f in got.materialized}


def read_hot(path: str, protocol: str, blob: bytes, limits: Limits) -> set[int]:
    return (stream_path_hot if path == "stream" else frame_path_hot)(protocol, blob, limits)


def target_of(case: Case) -> tuple[Blocks, int]:
    blocks = clean(case.protocol, case.calls)
    return blocks, fragments(case.protocol, blocks)[2]


@pytest.mark.parametrize("case", CASES, ids=[c.guard for c in CASES])
def test_each_guard_sends_its_case_to_the_reference(case: Case) -> None:
    blocks, t = target_of(case)
    control = data(blocks)
    changed_blocks, u = case.change(blocks, t)
    changed = data(changed_blocks)
    assert changed != control or case.limits is not DEFAULT_LIMITS
    assert_same(case.protocol, control, [control[:8], control[8:]])
    assert_same(case.protocol, changed, [changed[:8], changed[8:]], case.limits)
    assert_same(case.protocol, changed, reads(random.Random(u), changed), case.limits)
    for path in ("stream", "frame"):
        assert t in read_hot(path, case.protocol, control, DEFAULT_LIMITS), (path, "control")
        if path in case.paths:
            assert u not in read_hot(path, case.protocol, changed, case.limits), path
    if not case.paths:  # (a fallback: read hot all the same, or handed over by the pipeline)
        for path in ("stream", "frame"):
            assert u in read_hot(path, case.protocol, changed, case.limits), path
    if case.limits is not DEFAULT_LIMITS:
        halted = hot(case.protocol, [changed[:8], changed[8:]], case.limits).state.anomalies
        assert halted[-1].frame == (u if not case.paths else u - 1), halted


class Offers:
    """A spy on :meth:`HotPath.take`: each block offered, what the pipeline held then, and
    how many blocks the offer read."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen: list[tuple[bytes, str | None, bool, int]] = []
        take = HotPath.take

        def spy(path: HotPath, blob: bytes, start: int, end: int, index: int) -> int:
            reader = path.pipeline.reader
            read = take(path, blob, start, end, index)
            self.seen.append((blob[start:end], None if reader is None else reader.name,
                              reader is not None and reader.has_hot_frame, read))
            return read

        monkeypatch.setattr(HotPath, "take", spy)


def test_frames_before_a_reader_and_a_reader_without_a_hot_frame(monkeypatch):
    """hot_path.py:120 ``reader is None`` (the protocol not detected yet: the frames before
    detection) and ``not reader.has_hot_frame`` (Gemini generateContent, LF-ended); engine.py:129
    ``reader is not None`` and :131 ``reader.has_hot_frame`` on the frame path."""
    offers = Offers(monkeypatch)
    blob = data(clean(A))
    assert_same(None, blob, [blob[:8], blob[8:]])
    assert offers.seen[0][1:] == (None, False, 0)  # (offered before any reader: not read)
    assert any(read for *_, read in offers.seen)  # (and read hot once detected)
    offers.seen.clear()
    generate = data(clean("gemini-generate"))
    got = assert_same("gemini-generate", generate, [generate[:8], generate[8:]])
    assert offers.seen and all(s[1:] == ("gemini-generate", False, 0) for s in offers.seen)
    assert len(got.materialized) == got.decoder.frames_emitted
    assert frame_path_hot("gemini-generate", generate, DEFAULT_LIMITS) == set()
    assert frame_path_hot(None, blob, DEFAULT_LIMITS) == frame_path_hot(A, blob, DEFAULT_LIMITS)


def test_an_event_line_alone_and_a_block_without_data(monkeypatch):
    """hot_path.py:137 ``nl < 0`` (a block of one ``event:`` line), engine.py:129 ``frame.
    dispatch`` (that block dispatches nothing): the blocks around it are read hot."""
    offers = Offers(monkeypatch)
    blocks, t = target_of(CASES[0]._replace(protocol=A))
    blocks = blocks[:t] + [b"event: content_block_delta"] + blocks[t:]
    blob = data(blocks)
    assert_same(A, blob, [blob[:8], blob[8:]])
    assert (b"event: content_block_delta", A, True, 0) in offers.seen
    assert t + 1 in stream_path_hot(A, blob, DEFAULT_LIMITS)
    assert t + 1 in frame_path_hot(A, blob, DEFAULT_LIMITS)


def test_more_event_names_than_the_memo_holds():
    """hot_path.py:148: past MAX_NAMES distinct event names the memo stops growing (a hostile
    stream cannot grow it), and the names after it are still read as the reference reads."""
    blocks, t = target_of(CASES[0]._replace(protocol=A))
    names = [b'event: ping%d\ndata: {"type":"ping"}' % i for i in range(MAX_NAMES + 8)]
    blocks = blocks[:t] + names + blocks[t:]
    blob = data(blocks)
    assert_same(A, blob, [blob[:8], blob[8:]])
    engine = hot(A, [blob[:8], blob[8:]])
    assert len(engine._hot._names) == MAX_NAMES
    assert t + len(names) in stream_path_hot(A, blob, DEFAULT_LIMITS)


def _shaped(protocol: str, change: Callable[[Any], None], at: int = 1
            ) -> tuple[Blocks, int, bytes]:
    """A shaped protocol's blocks, and the index of the block after the target with its
    payload changed (kept in the declared shape)."""
    blocks, t = target_of(CASES[0]._replace(protocol=protocol))
    blocks[t + at] = with_payload(blocks[t + at], change)
    return blocks, t + at, data(blocks)


def test_run_guards():
    """The run after a block of the declared shape (HotPath._run), read in one read:
    hot_path.py:182 a block of the run as long as the decoder's limit (it overflows: the
    decoder's, engine.py:129 ``not frame.overflow`` on the frame it delivers); :189 and :234 a
    block of the run whose slots orjson refuses (a raw tab in a string: the run stops before
    it); :211 a call with no room in a run (its fragment handed over, the turn halts)."""
    partial = ("delta", "partial_json")
    blocks, u, blob = _shaped(A, setter(*partial, value="y" * 600))
    limit = len(blocks[u]) - 1
    assert max(len(b) for i, b in enumerate(blocks) if i != u) < limit
    limits = Limits(max_block_bytes=limit)
    got = assert_same(A, blob, [blob[:8], blob[8:]], limits)
    assert u - 1 in stream_path_hot(A, blob, limits)
    assert [f.index for f in got.materialized if f.overflow] == [u]
    assert got.state.halted is not None

    blocks, u, _ = _shaped(A, setter(*partial, value="a\tb"))
    blocks[u] = blocks[u].replace(b"a\\tb", b"a\tb")  # (a raw tab: JSON refuses it)
    assert b"a\tb" in blocks[u]
    blob = data(blocks)
    got = assert_same(A, blob, [blob[:8], blob[8:]])
    hot_set = stream_path_hot(A, blob, DEFAULT_LIMITS)
    assert u - 1 in hot_set and u not in hot_set and u + 1 in hot_set

    blocks, t = target_of(CASES[0]._replace(protocol=A))
    blob = data(blocks)
    limits = Limits(max_argument_chars=20)
    got = assert_same(A, blob, [blob[:8], blob[8:]], limits)
    assert t in stream_path_hot(A, blob, limits)  # (handed over, not materialized)
    assert got.state.halted is not None and got.state.anomalies[0].frame == t



@settings(max_examples=150, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(case=st.sampled_from([c for c in CASES if c.limits is DEFAULT_LIMITS]),
       seed=st.integers(0, 2**32), size=st.integers(1, 12), calls=st.integers(1, 2),
       target=st.integers(0, 2**16))
def test_guard_changes_on_random_streams_read_as_the_reference(case, seed, size, calls, target):
    """The guard changes above, on random streams: other arguments, fragment sizes, calls, a
    random fragment as the target, random reads."""
    rng = random.Random(seed)
    blocks = clean(case.protocol, calls, seed, synth.realistic_arguments(rng.randint(40, 300), rng),
                   size)
    hot_blocks = fragments(case.protocol, blocks)[2:]
    if not hot_blocks:
        return
    changed, _ = case.change(blocks, hot_blocks[target % len(hot_blocks)])
    blob = data(changed)
    assert_same(case.protocol, blob, reads(rng, blob))
    assert_same(case.protocol, blob, [blob[:8], blob[8:]])
