"""The official SDKs' stream helpers under test (tests/sdk_harnesses.py): what callscope finds
about each, as docs/testing.md reports it. A small cut plan (frame boundaries and a window before
the terminal signal) keeps each sweep to a second or two: the SDKs cost milliseconds per run."""

from __future__ import annotations

from pathlib import Path

import pytest
import sdk_harnesses
from callscope.core.session import open_input
from callscope.testing import check_harness

ROOT = Path(__file__).resolve().parent.parent
PLAN = {"every_byte_up_to": 0, "window": 8, "chunkings": ("recorded", "whole", "bytes:16", "random:1")}
"""bytes:1 is left out but for one test: a read per byte through httpx and the SDK's SSE decoder
costs a second per 10 KB."""


def sweep(make, path: str, tmp_path, **plan):
    full = ROOT / "sessions" / path
    return check_harness(make(open_input(str(full)).header.tools or []), full, out_dir=tmp_path,
                         **{**PLAN, **plan})


def kinds(report) -> dict[tuple[str, str], object]:
    return {(f.kind, f.call): f for f in report.findings}


def test_openai_chat_hands_back_calls_from_a_stream_that_never_finished(tmp_path):
    """ChatCompletionStream keeps no count of finish_reason or [DONE]: get_final_completion()
    returns the tool calls of a stream cut anywhere once their arguments parse."""
    report = sweep(sdk_harnesses.openai_chat_harness, "openai-chat/single_call.jsonl", tmp_path)
    early = kinds(report)[("early", "lookup_demo_value")]
    assert early.variant.cut is not None
    gate = report.gate.executed[0]
    assert f"executed lookup_demo_value({sdk_harnesses.json.dumps(gate.arguments)})".replace(
        ": ", ":") in early.message  # the whole arguments, before the finish_reason frame
    assert early.frames < report.gate.frames - 2
    assert {k for k, _ in kinds(report)} == {"early"}  # the full stream: what the gate does


def test_openai_chat_refuses_a_length_stop_and_passes_schema_violations(tmp_path):
    report = sweep(sdk_harnesses.openai_chat_harness, "openai-chat/max_tokens.jsonl", tmp_path)
    assert "refused" not in {k for k, _ in kinds(report)}  # LengthFinishReasonError
    report = sweep(sdk_harnesses.openai_chat_harness, "openai-chat/schema_violation.jsonl", tmp_path)
    refused = kinds(report)[("refused", "add_demo_numbers")]
    assert "(schema:" in refused.message and refused.variant.cut is None


@pytest.mark.parametrize("name", ["single_call", "no_arguments", "provider_error"])
def test_openai_responses_waits_for_response_completed(tmp_path, name):
    """ResponseStream raises without response.completed: no cut executes anything."""
    report = sweep(sdk_harnesses.openai_responses_harness, f"openai-responses/{name}.jsonl",
                   tmp_path)
    assert report.ok, report.lines()


def test_openai_responses_runs_unknown_tools_and_schema_violations(tmp_path):
    for name, call, reason in (("unknown_tool", "send_demo_email", "unknown_tool"),
                               ("schema_violation", "add_demo_numbers", "schema")):
        report = sweep(sdk_harnesses.openai_responses_harness, f"openai-responses/{name}.jsonl",
                       tmp_path)
        assert list(kinds(report)) == [("refused", call)]
        assert f"({reason}:" in report.findings[0].message


def test_anthropic_hands_back_an_empty_input_for_a_block_cut_at_its_start(tmp_path):
    """MessageStream takes a tool_use block's input from content_block_start ({}): a stream cut
    right after it hands back the call with {}."""
    report = sweep(sdk_harnesses.anthropic_harness, "anthropic/single_call.jsonl", tmp_path,
                   chunkings=None)  # the default chunkings, bytes:1 too (1.5 KB)
    assert "bytes:1" in report.chunkings
    early = kinds(report)[("early", "lookup_demo_value")]
    assert "executed lookup_demo_value({})" in early.message and early.frames == 2
    assert {k for k, _ in kinds(report)} == {"early"}


def test_anthropic_salvages_a_tool_input_cut_by_max_tokens(tmp_path):
    """The input is parsed in partial mode as it streams: a max_tokens stop hands back the
    prefix as a dict (a string cut short is dropped, not marked), and so does invalid JSON."""
    report = sweep(sdk_harnesses.anthropic_harness, "anthropic/max_tokens.jsonl", tmp_path)
    refused = kinds(report)[("refused", "delete_demo_file")]
    assert refused.variant.cut is None and "(truncated:" in refused.message
    assert "max_tokens" in refused.message
    report = sweep(sdk_harnesses.anthropic_harness,
                   "fixtures/anthropic/max_tokens_mid_tool_input.jsonl", tmp_path)
    early = kinds(report)[("early", "make_file")]
    assert early.variant.cut is None and '"filename":"taxes.txt"' in early.message
    report = sweep(sdk_harnesses.anthropic_harness, "anthropic/invalid_json.jsonl", tmp_path)
    assert "(invalid_json:" in kinds(report)[("refused", "lookup_demo_value")].message
