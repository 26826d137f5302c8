"""The quirk profiles as pure rewrites (core/quirks.py, core/quirks_chat.py): each one produces
the shape QUIRKS.md describes, from a bundled session of its protocol."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from callscope.core.quirks import QuirkError, apply_quirk, events_of, quirk, quirks
from callscope.core.session import open_input

ROOT = Path(__file__).resolve().parent.parent
SESSION = {"openai-chat": "openai-chat/parallel_calls.jsonl",
           "anthropic": "anthropic/single_call.jsonl",
           "openai-responses": "openai-responses/single_call.jsonl"}


def chunks_of(path: str) -> list[tuple[float | None, bytes]]:
    return [(c.t, c.data) for c in open_input(str(ROOT / "sessions" / path)).chunks()]


def rewritten(name: str, path: str | None = None):
    profile = quirks()[name]
    protocol = (profile.protocols or ("openai-chat",))[0]
    chunks = chunks_of(path or SESSION[protocol])
    out, end = apply_quirk(name, protocol, chunks)
    return chunks, out, end


def payloads(out) -> list:
    return [e.data for e in events_of(out)]


def tool_parts(out) -> list[dict]:
    return [p for d in payloads(out) if isinstance(d, dict)
            for c in d.get("choices") or [] for p in (c.get("delta") or {}).get("tool_calls") or []]


@pytest.mark.parametrize("name", list(quirks()))
def test_every_profile_says_what_and_where_and_changes_the_stream(name):
    profile = quirks()[name]
    # a QUIRKS.md item, or a shape of the pain points it does not number (ANCHORS.md B.2)
    assert profile.says and (profile.seen[:2].rstrip(":").isdigit()
                             or profile.seen.startswith("B.2: "))
    path = {"split-utf8": "openai-chat/multibyte.jsonl",
            "length-as-tool-calls": "openai-chat/max_tokens.jsonl"}.get(name)
    chunks, out, _ = rewritten(name, path)
    assert out != chunks


def test_a_profile_for_another_protocol_or_none_at_all_is_refused():
    with pytest.raises(QuirkError, match="rewrites anthropic streams, not openai-chat"):
        quirk("anthropic-error", "openai-chat")
    with pytest.raises(QuirkError, match="unknown quirk 'nope'"):
        quirk("nope", "openai-chat")


def test_chat_call_identity_profiles():
    _, out, _ = rewritten("no-index")
    assert tool_parts(out) and all("index" not in p for p in tool_parts(out))
    _, out, _ = rewritten("index-zero")
    parts = tool_parts(out)
    assert {p["index"] for p in parts} == {0} and len({p["id"] for p in parts if p.get("id")}) == 3
    _, out, _ = rewritten("null-continuations")
    continuations = [p for p in tool_parts(out) if not p.get("id")]
    assert continuations and all(p["id"] is None and p["type"] is None
                                 and p["function"]["name"] is None for p in continuations)


def test_whole_call_sends_each_call_in_one_delta_after_an_empty_content():
    _, out, _ = rewritten("whole-call")
    parts = tool_parts(out)
    assert len(parts) == 3 and all(orjson.loads(p["function"]["arguments"]) for p in parts)
    deltas = [d["choices"][0]["delta"] for d in payloads(out) if isinstance(d, dict) and d["choices"]]
    first_call = next(i for i, d in enumerate(deltas) if "tool_calls" in d)
    assert deltas[first_call - 1] == {"role": "assistant", "content": ""}


def test_args_resent_repeats_each_call_s_whole_arguments():
    chunks, out, _ = rewritten("args-resent")
    before = {}
    for p in tool_parts([(0.0, b"".join(c for _, c in chunks))]):
        before[p["index"]] = before.get(p["index"], "") + p["function"].get("arguments", "")
    after = {}
    for p in tool_parts(out):
        after[p["index"]] = after.get(p["index"], "") + p["function"].get("arguments", "")
    assert after == {i: text * 2 for i, text in before.items()}


def test_final_mixed_puts_fragment_finish_and_identity_in_one_chunk():
    _, out, _ = rewritten("final-mixed")
    mixed = [d for d in payloads(out) if isinstance(d, dict) and d["choices"]
             and d["choices"][0].get("finish_reason")]
    assert len(mixed) == 1
    choice = mixed[0]["choices"][0]
    part = choice["delta"]["tool_calls"][-1]
    assert part["id"] and part["function"]["name"] == "delete_demo_file"
    assert choice["stop_reason"] == 154829


def test_the_end_of_a_chat_stream():
    _, out, _ = rewritten("done-no-finish")
    data = payloads(out)
    assert data[-1] == "[DONE]" and not any(
        c.get("finish_reason") for d in data if isinstance(d, dict) for c in d["choices"])
    _, out, _ = rewritten("usage-empty-choices")
    data = payloads(out)
    assert data[-1] == "[DONE]" and data[-2]["choices"] == [] and data[-2]["usage"]


def test_content_filter_frames():
    _, out, _ = rewritten("content-filter")
    data = payloads(out)
    assert data[0]["choices"] == [] and data[0]["prompt_filter_results"]
    annotations = [d for d in data if isinstance(d, dict) and d["choices"]
                   and "delta" not in d["choices"][0]]
    assert len(annotations) == 1 and "content_filter_offsets" in annotations[0]["choices"][0]


def test_framing_profiles():
    _, out, _ = rewritten("keepalive")
    body = b"".join(c for _, c in out)
    assert body.startswith(b": OPENROUTER PROCESSING\n\n") and b"\n\n: ping\n\n" in body
    _, out, _ = rewritten("data-keepalive")
    assert out[0][1] == b"data: : OPENROUTER PROCESSING\n\n"
    _, out, _ = rewritten("id-comments")
    body = b"".join(c for _, c in out)
    assert body.startswith(b"id: 1\ndata: {") and body.count(b": ping\n\n") >= 10
    chunks, out, _ = rewritten("crlf")
    body = b"".join(c for _, c in out)
    assert b"\r\n\r\n" in body and body.count(b"\n") == body.count(b"\r\n")
    assert body.replace(b"\r\n", b"\n") == b"".join(c for _, c in chunks)


def test_split_utf8_cuts_every_multibyte_character_and_keeps_the_bytes():
    chunks, out, _ = rewritten("split-utf8", "openai-chat/multibyte.jsonl")
    assert b"".join(c for _, c in out) == b"".join(c for _, c in chunks)
    split = 0
    for _, data in out:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            split += 1
    assert split >= 10


def test_anthropic_error_after_every_block_then_close():
    _, out, end = rewritten("anthropic-error")
    events = events_of(out)
    assert end == "close" and events[-1].event == "error"
    assert events[-1].data["error"]["type"] == "overloaded_error"
    assert [e.event for e in events].count("content_block_stop") == [
        e.event for e in events_of(chunks_of(SESSION["anthropic"]))].count("content_block_stop")


def test_responses_arguments_only_in_the_done_event():
    _, out, _ = rewritten("done-only-arguments")
    data = [d for d in payloads(out) if isinstance(d, dict)]
    kinds = [d["type"] for d in data]
    assert "response.function_call_arguments.delta" not in kinds
    assert [d["sequence_number"] for d in data] == list(range(len(data)))
    done = next(d for d in data if d["type"] == "response.output_item.done"
                and d["item"]["type"] == "function_call")
    assert done["item"]["arguments"] == "{}"
