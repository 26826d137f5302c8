"""Every quirk profile end to end: ``callscope serve`` on loopback streams it (``quirk=NAME`` per
request), the official SDK reads it as the real system's stream reads (the symptom QUIRKS.md
cites), and the gate decides on the bytes served."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from callscope.core.engine import Engine
from callscope.core.quirks import apply_quirk, quirks
from callscope.core.session import open_input
from callscope.core.tools import ToolSet
from loopback import post, serving
from sdk_harnesses import CALLS, client_for

ROOT = Path(__file__).resolve().parent.parent / "sessions"
CHAT = ROOT / "openai-chat/parallel_calls.jsonl"
THREE = ["lookup_demo_value", "add_demo_numbers", "delete_demo_file"]
EXECUTE3 = [("execute", None)] * 3

CASES: dict[str, tuple[Path, object, list[tuple[str, str | None]]]] = {
    # name: (session, what the SDK hands back (tool names) or the exception it raises, the gate)
    "no-index": (CHAT, "TypeError", [("execute", None), ("refuse", "provider_error"),
                                     ("refuse", "provider_error")]),
    "index-zero": (CHAT, "JSONDecodeError", EXECUTE3),  # the SDK merges the calls' arguments
    "null-continuations": (CHAT, "AssertionError", EXECUTE3),
    "whole-call": (CHAT, THREE, EXECUTE3),
    "args-resent": (CHAT, "JSONDecodeError", [("refuse", "invalid_json")] * 3),
    "final-mixed": (CHAT, ["lookup_demo_value", "add_demo_numbers",
                           "delete_demo_filedelete_demo_file"], EXECUTE3),  # the name, twice
    "length-as-tool-calls": (ROOT / "openai-chat/max_tokens.jsonl", "JSONDecodeError",
                             [("refuse", "truncated")] * 2),  # (rule tokens-spent)
    "done-no-finish": (CHAT, THREE, [("refuse", "truncated")] * 3),
    "usage-empty-choices": (CHAT, THREE, EXECUTE3),
    "content-filter": (CHAT, "AttributeError", EXECUTE3),
    "keepalive": (CHAT, THREE, EXECUTE3),
    "data-keepalive": (CHAT, "JSONDecodeError", [("refuse", "provider_error")] * 3),
    "id-comments": (CHAT, "JSONDecodeError", EXECUTE3),  # openai-python#2722
    "crlf": (CHAT, THREE, EXECUTE3),
    "split-utf8": (ROOT / "openai-chat/multibyte.jsonl", ["lookup_demo_value"],
                   [("execute", None)]),
    "anthropic-error": (ROOT / "anthropic/single_call.jsonl", "APIStatusError",
                        [("refuse", "provider_error")]),
    "done-only-arguments": (ROOT / "openai-responses/single_call.jsonl", ["lookup_demo_value"],
                            [("refuse", "provider_error")]),
}


def test_every_profile_has_a_case():
    assert sorted(CASES) == sorted(quirks())


PATHS = {"openai-chat": "/v1/chat/completions", "anthropic": "/v1/messages",
         "openai-responses": "/v1/responses"}


@pytest.mark.parametrize("name", list(CASES))
def test_the_sdk_reads_the_served_profile_and_the_gate_decides(name):
    path, sdk, gate = CASES[name]
    session = open_input(str(path))
    protocol, tools = session.header.protocol, session.header.tools or []
    expected, _ = apply_quirk(name, protocol, [(c.t, c.data) for c in session.chunks()])
    with serving(path) as url:
        try:
            _, body, _ = post(url, PATHS[protocol], fault=f"quirk={name}")
        except httpx.RemoteProtocolError as exc:  # anthropic-error: the connection closes
            assert quirks()[name].end == "close"
            body = exc.received  # type: ignore[attr-defined]
        assert body == b"".join(d for _, d in expected)  # serve sends the rewrite
        try:
            client = client_for(protocol, url,
                                default_headers={"x-callscope-fault": f"quirk={name}"})
            got: object = [n for n, _ in CALLS[protocol](client, tools)]
        except Exception as exc:  # what the SDK does with the shape is the finding
            got = type(exc).__name__
    assert got == sdk
    request = (session.header.request or {}).get("body")
    engine = Engine(protocol, ToolSet(tools, request=request))
    engine.feed(body)
    engine.close()
    assert [(d.action, d.reason) for d in engine.pipeline.decisions.values()] == gate


def test_a_profile_for_another_protocol_is_a_400():
    with serving(CHAT) as url:
        response, body, _ = post(url, "/v1/chat/completions", fault="quirk=anthropic-error")
    assert response.status_code == 400 and b"rewrites anthropic streams" in body
    with serving(CHAT) as url:
        response, body, _ = post(url, "/v1/chat/completions", fault="quirk=nope")
    assert response.status_code == 400 and b"unknown quirk 'nope'" in body
