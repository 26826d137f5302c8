"""``callscope live`` against ``callscope serve`` on loopback: request shapes per provider, the
recording, transport faults as session facts, the httpx-sse cross-check, and no key on disk."""

from __future__ import annotations

import argparse
import io
import socket

import pytest
from callscope.core.engine import Engine
from callscope.core.errors import CallscopeError
from callscope.core.importers import open_input
from callscope.core.session import REDACTED
from callscope.net.live import (
    MissingKey,
    build_request,
    cross_check,
    record,
    shape_tools,
)
from callscope.tui.net_commands import add_commands
from loopback import ANTHROPIC, CHAT, GENERATE, serving

KEY = "sk-live-SECRET-4f1c9a"
MID_CALL = ANTHROPIC.read_bytes().index(b"input_json_delta") + 40
"""A byte offset inside the tool call's argument deltas."""
WEATHER = {"name": "get_weather", "description": "weather",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}


@pytest.fixture
def server():
    with serving(CHAT, ANTHROPIC, GENERATE) as url:
        yield url


@pytest.fixture
def keys(monkeypatch):
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
                 "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)


def run_cli(*argv: str) -> tuple[int, str]:
    """The command line, headless (the table on stdout; tests/test_tui_live.py runs the TUI)."""
    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers(dest="command"))
    args = parser.parse_args([*argv, "--headless"])
    out = io.StringIO()
    return args.handler(args, out), out.getvalue()


def chunks_of(path) -> bytes:
    return b"".join(c.data for c in open_input(str(path)).chunks())


# -- request shapes --------------------------------------------------------------------------------

def test_request_per_provider(keys):
    chat = build_request("openai-chat", "gpt-4o", "hi", tools=[WEATHER], base_url="http://x/v1")
    assert chat.url == "http://x/v1/chat/completions"
    assert chat.headers["authorization"] == f"Bearer {KEY}"
    assert chat.body["messages"] == [{"role": "user", "content": "hi"}] and chat.body["stream"]
    assert chat.body["tools"][0]["function"]["name"] == "get_weather"

    responses = build_request("openai", "gpt-5", "hi")
    assert responses.url == "https://api.openai.com/v1/responses"
    assert responses.body == {"model": "gpt-5", "input": "hi", "stream": True}

    claude = build_request("anthropic", "claude-x", "hi", tools=[WEATHER], max_tokens=77)
    assert claude.url == "https://api.anthropic.com/v1/messages"
    assert claude.headers["x-api-key"] == KEY and "anthropic-version" in claude.headers
    assert claude.body["max_tokens"] == 77
    assert claude.body["tools"][0]["input_schema"] == WEATHER["parameters"]

    gemini = build_request("gemini", "gemini-2.5-flash", "hi", tools=[WEATHER])
    assert gemini.url.endswith("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
    assert gemini.headers["x-goog-api-key"] == KEY and "key=" not in gemini.url
    assert gemini.body["tools"] == [{"functionDeclarations": [WEATHER]}]

    interactions = build_request("gemini-interactions", "gemini-3", "hi", tools=[WEATHER])
    assert interactions.url.endswith("/v1beta/interactions")
    assert interactions.body["tools"] == [{"type": "function", **WEATHER}]
    assert all(r.headers["accept-encoding"] == "identity"
               for r in (chat, responses, claude, gemini, interactions))


def test_tools_already_in_provider_shape_pass_verbatim():
    native = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    assert shape_tools("openai-chat", [native]) == [native]
    server_tool = {"type": "web_search"}
    assert shape_tools("openai-responses", [server_tool]) == [server_tool]


def test_base_url_and_key_from_the_environment(keys, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/")
    assert build_request("anthropic", "m", "p").url == "http://127.0.0.1:9/v1/messages"
    monkeypatch.delenv("GEMINI_API_KEY")
    monkeypatch.setenv("GOOGLE_API_KEY", "g-other")
    assert build_request("gemini", "m", "p").headers["x-goog-api-key"] == "g-other"


def test_missing_key_is_one_clear_line(keys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(MissingKey) as exc:
        build_request("openai-chat", "m", "p")
    assert str(exc.value) == "no API key for openai-chat: set OPENAI_API_KEY"
    assert isinstance(exc.value, CallscopeError)  # so the command line exits 2
    with pytest.raises(CallscopeError, match="unknown provider"):
        build_request("mistral", "m", "p")


def test_missing_key_exits_2_from_the_command_line(keys, monkeypatch, capsys):
    from callscope.tui.cli import main

    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert main(["live", "--provider", "anthropic", "--model", "m", "hello"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "callscope: no API key for anthropic: set ANTHROPIC_API_KEY"


# -- recording ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("provider", "fixture"), [
    ("openai-chat", CHAT), ("anthropic", ANTHROPIC), ("gemini", GENERATE)])
def test_records_every_byte_as_it_arrives(keys, server, tmp_path, provider, fixture):
    base = server + "/v1" if provider.startswith("openai") else server
    request = build_request(provider, "m", "hi", base_url=base)
    seen: list[bytes] = []
    result = record(request, str(tmp_path / "s.jsonl"), on_chunk=lambda c: seen.append(c.data))
    assert result.ok and result.status == 200 and result.disagreements == []
    session = open_input(str(tmp_path / "s.jsonl"))
    assert b"".join(seen) == chunks_of(tmp_path / "s.jsonl") == fixture.read_bytes()
    assert session.end.kind == "clean" and session.header.source == "live"
    assert session.header.protocol == request.protocol and session.header.status == 200
    headers = session.header.request["headers"]
    assert REDACTED in headers.values() and KEY not in str(session.header)


def test_live_command_prints_the_engine_table_and_writes_the_session(keys, server, tmp_path):
    tools = tmp_path / "tools.json"
    tools.write_text('[{"name": "get_weather", "parameters": {"type": "object"}},'
                     ' {"name": "get_time", "parameters": {"type": "object"}}]')
    out_path = tmp_path / "live.jsonl"
    code, out = run_cli("live", "--provider", "openai-chat", "--model", "gpt-4o",
                        "--base-url", server + "/v1", "--tools", str(tools), "-o", str(out_path),
                        "what", "is", "the", "weather")
    assert code == 0
    engine = Engine("openai-chat")
    engine.feed(CHAT.read_bytes())
    engine.close()
    for key in engine.state.calls:  # every call the engine finds is in the live table
        assert f"call {key} opened" in out
    assert "-- turn: openai-chat, complete" in out
    assert "-- stream: clean, 7728 B" in out and f"wrote {out_path}" in out
    assert chunks_of(out_path) == CHAT.read_bytes()
    session = open_input(str(out_path))
    assert session.header.request["body"]["messages"][0]["content"] == "what is the weather"
    assert [t["function"]["name"] for t in session.header.tools] == ["get_weather", "get_time"]


# -- transport faults become facts -------------------------------------------------------------------

def live_with_fault(server, tmp_path, fault: str, *extra: str) -> tuple[int, str, object]:
    path = tmp_path / "fault.jsonl"
    code, out = run_cli("live", "--provider", "anthropic", "--model", "m", "--base-url",
                        server, "-o", str(path), *extra, "hi")
    return code, out, open_input(str(path))


@pytest.fixture
def faulty(keys, monkeypatch):
    """Sends ``x-callscope-fault`` with every live request (set ``faulty.spec``)."""
    import callscope.net.live as live

    class Spec:
        spec = ""

    original = live.build_request

    def with_fault(*args, **kwargs):
        request = original(*args, **kwargs)
        request.headers["x-callscope-fault"] = Spec.spec
        return request

    monkeypatch.setattr(live, "build_request", with_fault)
    return Spec


def test_http_error_keeps_status_and_body(server, tmp_path, faulty):
    faulty.spec = 'status=529,body={"type":"error","error":{"type":"overloaded_error"}}'
    code, out, session = live_with_fault(server, tmp_path, "")
    assert code == 1
    assert session.end.kind == "http_error" and session.end.status == 529
    assert session.end.body == b'{"type":"error","error":{"type":"overloaded_error"}}'
    assert "-- HTTP 529" in out and list(session.chunks()) == []


@pytest.mark.parametrize(("spec", "kind"), [
    (f"reset={MID_CALL}", "reset"), (f"cut={MID_CALL}", "cut"),
    (f"stall={MID_CALL},hold=30", "timeout")])
def test_mid_stream_faults_keep_the_bytes_and_the_turn_is_refused(server, tmp_path, faulty,
                                                                    spec, kind):
    faulty.spec = spec
    code, out, session = live_with_fault(server, tmp_path, "", "--timeout", "0.4")
    assert code == 1
    assert session.end.kind == kind and session.end.detail
    data = chunks_of(tmp_path / "fault.jsonl")
    assert data == ANTHROPIC.read_bytes()[:MID_CALL]
    engine = Engine("anthropic")
    engine.feed(data)
    engine.close()
    assert not engine.state.complete
    assert engine.pipeline.decisions and all(
        d.action == "refuse" and d.reason == "truncated" for d in engine.pipeline.decisions.values())
    assert f"-- stream: {kind}" in out and "REFUSE" in out


def test_connection_refused_is_a_session_too(keys, tmp_path):
    with socket.socket() as s:  # a port that was free a moment ago and has no listener now
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, out = run_cli("live", "--provider", "openai-chat", "--model", "m", "--base-url",
                        f"http://127.0.0.1:{port}/v1", "-o", str(tmp_path / "r.jsonl"), "hi")
    session = open_input(str(tmp_path / "r.jsonl"))
    assert code == 1
    assert session.end.kind == "error" and "cannot connect" in session.end.detail
    assert list(session.chunks()) == [] and session.header.status is None
    assert "-- stream: error" in out


# -- cross-check and secrets ----------------------------------------------------------------------

def test_cross_check_agrees_on_real_streams_and_reports_a_bom():
    for fixture in (CHAT, ANTHROPIC, GENERATE):
        assert cross_check(fixture.read_bytes()) == []
    # The standard strips one leading BOM; httpx-sse's text decoding keeps it, so its first
    # field name is "\ufeffdata" and it loses the first event.
    problems = cross_check(b"\xef\xbb\xbfdata: 1\n\ndata: 2\n\n")
    assert problems and any("httpx-sse" in p for p in problems)


def test_no_key_reaches_disk_or_output(keys, server, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default output path is the current directory
    outputs = []
    for provider, base in (("openai-chat", server + "/v1"), ("anthropic", server),
                           ("gemini", server)):
        code, out = run_cli("live", "--provider", provider, "--model", "m", "--base-url",
                            base, "hello")
        assert code == 0
        outputs.append(out)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) >= 3  # three sessions in the default place
    for path in written:
        assert KEY.encode() not in path.read_bytes(), path
    assert all(KEY not in out for out in outputs)


# -- live for real use: headers, system, tool choice, Azure, resending a captured request ---------

@pytest.mark.parametrize(("provider", "system_at", "choice_at", "named"), [
    ("openai-chat", ("messages", 0, "content"), "tool_choice",
     {"type": "function", "function": {"name": "get_weather"}}),
    ("openai-responses", ("instructions",), "tool_choice", {"type": "function", "name": "get_weather"}),
    ("anthropic", ("system",), "tool_choice", {"type": "tool", "name": "get_weather"}),
    ("gemini-generate", ("systemInstruction", "parts", 0, "text"), "toolConfig",
     {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}}),
])
def test_system_and_tool_choice_in_each_providers_words(keys, provider, system_at, choice_at,
                                                          named):
    request = build_request(provider, "m", "hi", tools=[WEATHER], system="be brief",
                            tool_choice="get_weather", headers=[("X-Gateway", "g1")])
    value = request.body
    for step in system_at:
        value = value[step]
    assert value == "be brief" and request.body[choice_at] == named
    assert request.headers["X-Gateway"] == "g1"
    required = build_request(provider, "m", "hi", tool_choice="required").body[choice_at]
    assert "required" in str(required) or "any" in str(required) or "ANY" in str(required)


def test_a_protocol_without_a_tool_choice_says_so(keys):
    with pytest.raises(CallscopeError, match="--tool-choice is not offered for gemini-interactions"):
        build_request("gemini-interactions", "m", "hi", tool_choice="auto")


def test_azure_openai_uses_its_deployment_path_api_key_and_api_version(keys, monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://res.openai.azure.com/")
    monkeypatch.delenv("OPENAI_API_VERSION", raising=False)
    request = build_request("azure", "my-deployment", "hi")
    assert request.protocol == "openai-chat" and request.headers["api-key"] == KEY
    assert "authorization" not in request.headers
    assert request.url == ("https://res.openai.azure.com/openai/deployments/my-deployment/chat/"
                           "completions?api-version=2024-10-21")
    assert build_request("azure", "d", "hi", api_version="2025-01-01-preview").url.endswith(
        "api-version=2025-01-01-preview")
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT")
    with pytest.raises(CallscopeError, match="AZURE_OPENAI_ENDPOINT or --base-url"):
        build_request("azure", "d", "hi")


def test_a_captured_request_is_sent_again_with_the_key_from_the_environment(keys, tmp_path):
    from callscope.net.http1_server import BackgroundServer, HTTPServer

    seen = []

    async def echo(request, out):
        seen.append(request)
        await out.start(200, [("content-type", "text/event-stream")])
        await out.send(CHAT.read_bytes())
        await out.end()

    first, again = tmp_path / "first.jsonl", tmp_path / "again.jsonl"
    with BackgroundServer(lambda: HTTPServer(echo)) as url:
        code, _ = run_cli("live", "--provider", "openai-chat", "--model", "m", "--tools",
                          str(_tools_file(tmp_path)), "--base-url", url + "/v1", "-o", str(first),
                          "--header", "x-gateway:g1", "--system", "be brief", "hi")
        assert code == 0
        assert KEY.encode() not in first.read_bytes()
        code, out = run_cli("live", "--request", str(first), "-o", str(again),
                            "--header", "x-extra: 2")
    assert code == 0 and chunks_of(again) == CHAT.read_bytes()
    original, resent = seen
    assert resent.body == original.body and resent.target == original.target
    assert resent.header("authorization") == f"Bearer {KEY}"  # put back from the environment
    assert resent.header("x-gateway") == "g1" and resent.header("x-extra") == "2"
    assert open_input(str(again)).header.tools  # the gate checks against the captured tools


def test_bad_live_arguments_are_one_line(keys, tmp_path):
    with pytest.raises(SystemExit):
        run_cli("live", "--provider", "openai-chat", "--model", "m", "--header", "no colon", "hi")
    with pytest.raises(CallscopeError, match="needs --provider, --model and a PROMPT"):
        run_cli("live", "--provider", "openai-chat")
    empty = tmp_path / "s.jsonl"
    empty.write_text('{"callscope": "session", "version": 1}\n{"end": "clean"}\n')
    with pytest.raises(CallscopeError, match="no request with a URL"):
        run_cli("live", "--request", str(empty))


def _tools_file(tmp_path):
    import json

    path = tmp_path / "tools.json"
    path.write_text(json.dumps([WEATHER]))
    return path


def test_a_har_entry_is_sent_again_to_its_endpoint(keys, tmp_path):
    import json

    from callscope.net.http1_server import BackgroundServer, HTTPServer

    seen = []

    async def echo(request, out):
        seen.append(request)
        await out.start(200, [("content-type", "text/event-stream")])
        await out.send(ANTHROPIC.read_bytes())
        await out.end()

    with BackgroundServer(lambda: HTTPServer(echo)) as url:
        body = {"model": "claude-x", "max_tokens": 5, "stream": True, "tools": [
            {"name": "get_weather", "input_schema": {"type": "object"}}], "messages": []}
        har = {"log": {"entries": [{
            "startedDateTime": "2026-01-01T00:00:00Z",
            "request": {"method": "POST", "url": f"{url}/v1/messages?beta=true&key=sk-old",
                        "headers": [{"name": "x-api-key", "value": "sk-old-captured"},
                                    {"name": "anthropic-version", "value": "2023-06-01"},
                                    {"name": "content-type", "value": "application/json"}],
                        "postData": {"mimeType": "application/json", "text": json.dumps(body)}},
            "response": {"status": 200, "headers": [
                {"name": "content-type", "value": "text/event-stream"}],
                "content": {"mimeType": "text/event-stream", "text": "data: {}\n\n"}},
            "timings": {"send": 1, "wait": 5, "receive": 2}}]}}
        path = tmp_path / "agent.har"
        path.write_text(json.dumps(har))
        code, out = run_cli("live", "--request", f"{path}#1", "-o", str(tmp_path / "again.jsonl"))
    assert code == 0
    [resent] = seen
    assert resent.target == "/v1/messages?beta=true"  # the redacted key parameter is dropped
    assert resent.header("x-api-key") == KEY and orjson_loads(resent.body) == body
    assert "sk-old" not in (tmp_path / "again.jsonl").read_text()


def orjson_loads(data: bytes):
    import orjson

    return orjson.loads(data)


def test_live_stopped_by_sigterm_saves_the_session_with_its_end_time(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    path = tmp_path / "s.jsonl"
    with serving(CHAT) as url:
        env = {**os.environ, "OPENAI_API_KEY": KEY, "PYTHONUNBUFFERED": "1"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "callscope.tui.cli", "live", "--headless", "--provider",
             "openai-chat", "--model", "m", "--base-url", url + "/v1", "-o", str(path),
             "--header", "x-callscope-fault:stall=300,hold=30", "hi"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        try:
            deadline = time.monotonic() + 20
            while not list(tmp_path.glob(".s.jsonl.*.partial")) or (
                    b'"t"' not in next(tmp_path.glob(".s.jsonl.*.partial")).read_bytes()):
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.05)
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=10) == 130
        finally:
            proc.kill()
            proc.wait()
    end = open_input(str(path)).end
    assert end.kind == "cut" and end.at is not None and end.detail == "interrupted by the user"
    assert chunks_of(path) == CHAT.read_bytes()[:300]


def test_a_compressed_stream_is_recorded_raw_and_decoded_beside_it(keys, tmp_path):
    import gzip

    from callscope.net.http1_server import BackgroundServer, HTTPServer

    plain = CHAT.read_bytes()
    packed = gzip.compress(plain)

    async def gzipped(request, out):
        await out.start(200, [("content-type", "text/event-stream"), ("content-encoding", "gzip")])
        for i in range(0, len(packed), 500):
            await out.send(packed[i:i + 500])
        await out.end()

    path = tmp_path / "z.jsonl"
    with BackgroundServer(lambda: HTTPServer(gzipped)) as url:
        code, out = run_cli("live", "--provider", "openai-chat", "--model", "m", "--base-url",
                            url + "/v1", "-o", str(path), "hi")
    decoded = tmp_path / "z.decoded.jsonl"
    assert code == 0 and chunks_of(path) == packed and chunks_of(decoded) == plain
    assert f"the decoded stream is in {decoded}" in out
    assert "get_stock_price" in out  # the engine read the decoded stream
    assert open_input(str(decoded)).header.response_headers.get("content-encoding") is None
