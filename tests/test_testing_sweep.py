"""callscope.testing on the docs' example harnesses: the naive one caught at its first failing cut
(with a session that reproduces it), the safe one clean; and each kind of finding triggered by a
harness built to show it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from callscope.core.engine import Engine
from callscope.core.replay import Chunking, reads
from callscope.core.session import open_input
from callscope.core.sweep import Variant, run_once
from callscope.core.sweep_compare import Executed, HarnessOutputError, executed_of, same_json
from callscope.core.tools import ToolSet
from callscope.testing import (
    HarnessUnsafe,
    assert_harness_safe,
    bundled_sessions,
    check_harness,
    from_factory,
)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs" / "examples"))

from naive_harness import naive_harness  # noqa: E402
from safe_harness import make_safe_harness  # noqa: E402

CHAT = ROOT / "sessions" / "openai-chat"
SINGLE = CHAT / "single_call.jsonl"


def _tools(path: Path) -> list[dict]:
    return list(open_input(str(path)).header.tools or [])


def _chunks(path: Path) -> list[tuple[float | None, bytes]]:
    return [(c.t, c.data) for c in open_input(str(path)).chunks()]


def test_the_naive_harness_is_caught_at_its_first_failing_cut(tmp_path):
    report = check_harness(naive_harness, SINGLE, out_dir=tmp_path)
    assert not report.ok and report.cut_plan == "every byte offset"
    early = next(f for f in report.findings if f.kind == "early")
    assert early.call == "lookup_demo_value" and early.variant.chunking == "recorded"
    cut = early.variant.cut
    assert cut is not None
    # The first failing cut is the first one: no smaller cut makes the harness execute.
    chunks = _chunks(SINGLE)
    assert run_once(naive_harness, list(reads(chunks, Chunking("recorded"), cut)))[0]
    assert not any(run_once(naive_harness, list(reads(chunks, Chunking("recorded"), k)))[0]
                   for k in range(cut))
    # The reproduction is that cut stream: the gate sees no terminal signal, the harness runs.
    repro = open_input(early.reproduction)
    assert repro.end.kind == "cut" and "callscope testing" in (repro.header.provenance or "")
    data = [c.data for c in repro.chunks()]
    assert sum(map(len, data)) == cut
    engine = Engine(repro.header.protocol, ToolSet(repro.header.tools or []))
    engine.push_reads(data)
    engine.close()
    assert engine.state.terminal is None
    assert all(d.action == "refuse" for d in engine.pipeline.decisions.values())
    assert run_once(naive_harness, data)[0] == [Executed("lookup_demo_value", {})]


def test_the_naive_harness_runs_on_the_stop_reason_before_done(tmp_path):
    """Between the frame with finish_reason and [DONE] every cut is a finding, even one that
    holds every argument byte: the terminal signal is [DONE]."""
    report = check_harness(naive_harness, SINGLE, out_dir=tmp_path)
    early = next(f for f in report.findings if f.kind == "early")
    assert early.failing > 1000  # every cut from the first call frame on, up to [DONE]
    data = b"".join(c for _, c in _chunks(SINGLE))
    done = data.index(b"data: [DONE]")
    executed, _ = run_once(naive_harness, [data[:done]])
    gate = report.gate.executed[0]
    assert executed == [Executed(gate.name, gate.arguments)]  # the whole call, before [DONE]


@pytest.mark.parametrize("name", ["schema_violation", "invalid_json", "unknown_tool", "max_tokens"])
def test_the_naive_harness_executes_what_the_gate_refuses(tmp_path, name):
    report = check_harness(naive_harness, CHAT / f"{name}.jsonl", out_dir=tmp_path)
    refused = [f for f in report.findings if f.kind == "refused"]
    assert refused and refused[0].variant == Variant("recorded")
    reason = {"schema_violation": "schema", "invalid_json": "invalid_json",
              "unknown_tool": "unknown_tool", "max_tokens": "truncated"}[name]
    assert f"gate refuses ({reason}:" in refused[0].message
    assert Path(refused[0].reproduction).is_file()


@pytest.mark.parametrize("path", bundled_sessions("openai-chat"), ids=lambda p: p.stem)
def test_the_safe_harness_passes_every_chat_session(tmp_path, path):
    report = assert_harness_safe(make_safe_harness(_tools(path)), path, out_dir=tmp_path,
                                 every_byte_up_to=3000, window=64)
    assert report.runs == len(report.chunkings) + report.cuts
    assert not list(tmp_path.iterdir())  # nothing to reproduce, nothing written


def test_assert_harness_safe_raises_with_the_report(tmp_path):
    with pytest.raises(HarnessUnsafe) as caught:
        assert_harness_safe(naive_harness, SINGLE, out_dir=tmp_path)
    message = str(caught.value)
    assert message.startswith("FAIL ") and "executed before the terminal signal" in message
    assert f"reproduce: callscope {tmp_path}" in message


def _safe_single():
    return make_safe_harness(_tools(SINGLE))


def test_a_harness_that_drops_the_call_is_found(tmp_path):
    report = check_harness(lambda chunks: [], SINGLE, out_dir=tmp_path)
    assert [f.kind for f in report.findings] == ["dropped"]
    assert report.findings[0].variant == Variant("recorded")
    assert report.findings[0].failing == 6  # every chunking of the full stream


def test_other_arguments_and_a_phantom_call_are_found(tmp_path):
    safe = _safe_single()

    def harness(chunks):
        done = safe(chunks)
        return [(name, {**args, "key": "other"}) for name, args in done] + \
            [("rm_everything", {})] * bool(done)

    kinds = {f.kind: f for f in check_harness(harness, SINGLE, out_dir=tmp_path).findings}
    assert set(kinds) == {"arguments", "phantom"}
    assert '"other"' in kinds["arguments"].message and '"Deadline"' in kinds["arguments"].message


def test_a_result_that_depends_on_the_chunking_is_found(tmp_path):
    safe = _safe_single()

    def harness(chunks):  # drops the last read, as a reader that forgets to flush does
        pieces = list(chunks)
        return safe(iter(pieces[:-1] + [pieces[-1] + b"\n"])) if len(pieces) > 1 else []

    report = check_harness(harness, SINGLE, out_dir=tmp_path)
    chunking = next(f for f in report.findings if f.kind == "chunking")
    assert chunking.variant == Variant("whole")
    repro = open_input(chunking.reproduction)
    assert len(list(repro.chunks())) == 1 and repro.end.kind == "clean"


def test_a_factory_gives_every_variant_a_fresh_harness(tmp_path):
    class Accumulator:  # keeps what it saw: reused across variants it would run stale calls
        seen = 0

        def __init__(self) -> None:
            Accumulator.seen += 1
            self.safe = _safe_single()

        def __call__(self, chunks):
            return self.safe(chunks)

    report = check_harness(from_factory(Accumulator), SINGLE, out_dir=tmp_path,
                           every_byte_up_to=0, window=4)
    assert report.ok and Accumulator.seen == report.runs


def test_a_quirk_profile_aims_the_sweep_at_a_real_system_s_shape(tmp_path):
    """The safe example keys calls by index: parallel calls all at index 0 (Ollama, vLLM) merge
    into one whose JSON does not parse, so it runs none of the three the gate executes."""
    path = CHAT / "parallel_calls.jsonl"
    report = check_harness(make_safe_harness(_tools(path)), path, out_dir=tmp_path,
                           quirk="index-zero", every_byte_up_to=0, window=4, seeds=(1,))
    assert report.source.endswith("parallel_calls.jsonl+index-zero")
    assert [f.kind for f in report.findings] == ["dropped"] * 3
    repro = open_input(report.findings[0].reproduction)
    assert b'"index":0' in b"".join(c.data for c in repro.chunks())
    assert Path(report.findings[0].reproduction).name.startswith("parallel_calls_index-zero.")


def test_a_harness_that_raises_executed_nothing(tmp_path):
    def harness(chunks):
        raise RuntimeError("stream incomplete")

    report = check_harness(harness, SINGLE, out_dir=tmp_path)
    assert [f.kind for f in report.findings] == ["dropped"]
    assert "raised RuntimeError: stream incomplete" in report.findings[0].message


def test_large_streams_cut_at_frame_boundaries_and_a_window_before_the_signal(tmp_path):
    path = CHAT / "parallel_calls.jsonl"
    report = check_harness(_safe_single(), path, tools=_tools(path), out_dir=tmp_path,
                           every_byte_up_to=1000, window=40)
    assert report.ok and report.cuts < report.size / 4
    assert "every byte of the 40 before the terminal signal's frame" in report.cut_plan


def test_without_tool_definitions_the_stream_s_tools_are_taken_as_declared(tmp_path):
    path = ROOT / "sessions/fixtures/openai-chat/single_tool_call_strict.jsonl"
    report = check_harness(naive_harness, path, out_dir=tmp_path, every_byte_up_to=0, window=8)
    assert report.inferred_tools and "no tool definitions" in report.notes[0]
    assert [c.action for c in report.gate.calls] == ["execute"]
    repro = open_input(report.findings[0].reproduction)
    assert repro.header.tools == report.inferred_tools


def test_executed_shapes_and_strict_json_equality():
    class Call:
        name, arguments = "t", {"a": 1}

    assert executed_of(("t", {"a": 1})) == executed_of({"name": "t", "input": {"a": 1}}) \
        == executed_of(Call())
    with pytest.raises(HarnessOutputError):
        executed_of("t")
    with pytest.raises(HarnessOutputError):
        executed_of((1, {}))
    assert same_json({"a": 1}, {"a": 1.0}) and not same_json({"a": True}, {"a": 1})
    assert not same_json(["1"], [1]) and not same_json({"a": 1}, {"a": 1, "b": None})


def test_a_result_that_is_not_calls_is_refused(tmp_path):
    with pytest.raises(HarnessOutputError, match="not a call"):
        check_harness(lambda chunks: ["run it"], SINGLE, out_dir=tmp_path)
