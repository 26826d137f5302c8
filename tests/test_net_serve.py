"""``callscope serve``: provider endpoints, session choice, every fault, recorded timing and
endings, and the official SDKs (when installed) consuming its streams. Loopback only."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
import httpx_sse
import orjson
import pytest
from callscope.core.engine import Engine
from callscope.core.session import Chunk, SessionHeader, StreamEnd, save_session
from callscope.core.sse import decode_all
from callscope.net.capture_rules import protocol_for_path
from callscope.net.serve_faults import FaultError, Faults, parse_faults
from callscope.net.serve_stream import _paced
from loopback import ANTHROPIC, CHAT, CHAT_TEXT, GENERATE, INTERACTIONS, RESPONSES, post, serving

ENDPOINT_CASES = [
    ("/v1/chat/completions", CHAT, {"stream": True}),
    ("/v1/responses", RESPONSES, {"stream": True}),
    ("/v1/messages", ANTHROPIC, {"stream": True}),
    ("/v1beta/interactions", INTERACTIONS, {"stream": True}),
    ("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", GENERATE, {"contents": []}),
]


def engine_calls(data: bytes) -> dict[str, tuple[str | None, str]]:
    engine = Engine()
    engine.feed(data)
    engine.close()
    return {k: (c.name, c.text) for k, c in engine.state.calls.items()}


# -- endpoints and sessions ----------------------------------------------------------------------

@pytest.mark.parametrize(("path", "fixture", "body"), ENDPOINT_CASES)
def test_each_endpoint_streams_the_session_of_its_protocol(path, fixture, body):
    with serving(*(case[1] for case in ENDPOINT_CASES)) as url:
        response, data, _ = post(url, path, body=body)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["transfer-encoding"] == "chunked"
    assert "content-length" not in response.headers
    assert data == fixture.read_bytes()


def test_endpoint_table_matches_suffixes_only():
    assert protocol_for_path("/openai/v1/chat/completions") == "openai-chat"
    assert protocol_for_path("/v1/models/m-1:streamGenerateContent") == "gemini-generate"
    assert protocol_for_path("/v1/interactions") == "gemini-interactions"  # google-genai 3.x
    assert protocol_for_path("/v1/chat/completions/extra") is None
    assert protocol_for_path("/v1beta/models/m:generateContent") is None
    assert protocol_for_path("//evil.com/v1/chat/completions") is None  # an empty segment


@pytest.mark.parametrize(("path", "why"), [
    ("//evil.com/v1/chat/completions", "empty segment"),
    ("/x/../v1/responses", "dot segment"),
    ("/x/%2E%2e/v1/responses", "dot segment"),
    ("/./v1/messages", "dot segment"),
    ("/x\\..\\v1/messages", "backslash"),
    ("/x%5C/v1/messages", "backslash"),
    ("/v1/chat/completions;x=1", "path parameter"),
    ("/v1;x/responses", "path parameter"),
])
def test_a_path_servers_read_two_ways_names_no_protocol(path, why):
    """What a recorder names a capture never depends on which reading the upstream makes: each
    declared ambiguity names none, even where a route would match."""
    from callscope.net.capture_rules import path_ambiguity
    assert path_ambiguity(path) == why
    assert protocol_for_path(path) is None


@pytest.mark.parametrize(("path", "protocol"), [
    ("/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fus.anthropic.claude-v1"
     "%3A0/converse-stream", "bedrock-converse"),  # (boto3 escapes the ARN's ``/``)
    ("/model/anthropic.claude-3-5-sonnet-20240620-v1:0/invoke-with-response-stream",
     "bedrock-invoke"),
    ("/v1beta/models/gemini-2.5-flash:streamGenerateContent", "gemini-generate"),
    ("/api/chat", "ollama-chat"),
    ("/proxy.v2/v1/messages", "anthropic"),  # (a dot inside a segment is no dot segment)
])
def test_real_endpoint_paths_still_name_their_protocol(path, protocol):
    assert protocol_for_path(path) == protocol


def test_a_target_starting_with_two_slashes_routes_nowhere():
    """``//evil.com/v1/chat/completions`` is a path as sent, not a host and a path: no endpoint
    (urlsplit read ``/v1/chat/completions`` and served the stream)."""
    import socket

    with serving(CHAT) as url, socket.create_connection(
            ("127.0.0.1", int(url.rsplit(":", 1)[1])), timeout=3) as sock:
        sock.sendall(b"POST //evil.com/v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Length: 16\r\nConnection: close\r\n\r\n{\"stream\": true}")
        answer = b"".join(iter(lambda: sock.recv(65536), b""))
    assert answer.startswith(b"HTTP/1.1 404 ") and b"no endpoint" in answer


def test_session_chosen_by_header_query_or_index_and_round_robin():
    with serving(CHAT, CHAT_TEXT) as url:
        by_header = post(url, "/v1/chat/completions",
                         headers={"x-callscope-session": "plain_text_stop"})[1]
        by_index = post(url, "/v1/chat/completions?callscope-session=1")[1]
        turns = [post(url, "/v1/chat/completions")[1] for _ in range(3)]
        missing, _, _ = post(url, "/v1/chat/completions", headers={"x-callscope-session": "nope"})
        other, body, _ = post(url, "/v1/messages")
    assert by_header == CHAT_TEXT.read_bytes()
    assert by_index == CHAT.read_bytes()
    assert turns == [CHAT.read_bytes(), CHAT_TEXT.read_bytes(), CHAT.read_bytes()]
    assert missing.status_code == 404
    assert other.status_code == 404 and b"no anthropic session" in body


def test_protocol_from_the_session_header_wins_over_detection(tmp_path):
    # Chat bytes labelled as anthropic in the header are served at the anthropic endpoint.
    path = tmp_path / "labelled.jsonl"
    save_session(str(path), SessionHeader(protocol="anthropic"),
                 [Chunk(0.0, CHAT_TEXT.read_bytes())], StreamEnd("clean"))
    with serving(path) as url:
        response, data, _ = post(url, "/v1/messages")
    assert response.status_code == 200 and data == CHAT_TEXT.read_bytes()


def test_requests_that_do_not_stream_are_refused_plainly():
    with serving(CHAT, GENERATE) as url:
        no_stream, body1, _ = post(url, "/v1/chat/completions", body={"stream": False})
        no_alt, body2, _ = post(url, "/v1beta/models/m:streamGenerateContent", body={})
        unknown, _, _ = post(url, "/v2/whatever")
        index = httpx.get(url + "/")
    assert no_stream.status_code == 400 and b'only streams' in body1
    assert no_alt.status_code == 400 and b"alt=sse" in body2
    assert unknown.status_code == 404
    assert "parallel_tool_calls_two_functions.sse" in index.text and "openai-chat" in index.text


def test_httpx_sse_reads_the_same_events_as_the_engine():
    with serving(ANTHROPIC) as url, httpx.Client() as client:
        with httpx_sse.connect_sse(client, "POST", url + "/v1/messages",
                                   json={"stream": True}) as source:
            events = [(e.event, e.data) for e in source.iter_sse()]
    frames = [(f.event_type, f.data) for f in decode_all(ANTHROPIC.read_bytes()) if f.dispatch]
    assert events == frames and len(events) > 5


def test_keep_alive_connection_serves_several_streams():
    with serving(CHAT_TEXT) as url, httpx.Client() as client:
        for _ in range(3):
            response = client.post(url + "/v1/chat/completions", json={"stream": True})
            assert response.content == CHAT_TEXT.read_bytes()


# -- faults ----------------------------------------------------------------------------------------

def test_cut_at_byte_closes_mid_body_or_ends_cleanly():
    full = CHAT.read_bytes()
    with serving(CHAT) as url:
        with pytest.raises(httpx.RemoteProtocolError) as cut:
            post(url, "/v1/chat/completions", fault="cut=333")
        response, clean, _ = post(url, "/v1/chat/completions?callscope-fault=cut:333,end:clean")
    assert cut.value.received == full[:333]
    assert response.status_code == 200 and clean == full[:333]


def test_cut_after_n_frames():
    full = RESPONSES.read_bytes()
    frames = decode_all(full)
    with serving(RESPONSES) as url:
        _, data, _ = post(url, "/v1/responses", fault="frames=4,end=clean")
    assert data == full[:frames[3].end]
    assert len(decode_all(data)) == 4


def test_reset_after_n_bytes_is_a_tcp_reset():
    full = CHAT.read_bytes()
    with serving(CHAT) as url:
        with pytest.raises(httpx.ReadError) as reset:
            post(url, "/v1/chat/completions", fault="reset=500")
    assert "reset" in str(reset.value).lower()
    assert reset.value.received == full[:500]


def test_stall_holds_the_connection_until_the_client_times_out():
    full = CHAT.read_bytes()
    with serving(CHAT) as url:
        t0 = time.monotonic()
        with pytest.raises(httpx.ReadTimeout) as stall:
            post(url, "/v1/chat/completions", fault="stall=200,hold=30", timeout=0.4)
        assert time.monotonic() - t0 < 5
    assert stall.value.received == full[:200]


def test_http_error_status_with_provider_shaped_or_given_body():
    with serving(ANTHROPIC, CHAT) as url:
        shaped, body1, _ = post(url, "/v1/messages", fault="status=529")
        given, body2, _ = post(url, "/v1/chat/completions",
                               fault='status=429,body={"error":{"message":"slow, down"}}')
    assert shaped.status_code == 529
    assert orjson.loads(body1)["type"] == "error"
    assert given.status_code == 429 and body2 == b'{"error":{"message":"slow, down"}}'


def test_chunk_size_and_delay_flush_each_chunk():
    full = CHAT.read_bytes()
    with serving(CHAT) as url:
        _, data, reads = post(url, "/v1/chat/completions", fault="chunk=100,delay=0.25,cut=300,"
                              "end=clean")
    assert data == full[:300]
    assert [len(d) for _, d in reads] == [100, 100, 100]
    # The first chunk was delivered long before the last: nothing held the body back.
    # (Lower bounds only: a loaded machine can delay a read, never hasten one.)
    assert reads[2][0] - reads[0][0] >= 0.3


def test_recorded_timing_and_speed(tmp_path):
    path = tmp_path / "timed.jsonl"
    data = CHAT_TEXT.read_bytes()
    save_session(str(path), SessionHeader(), [Chunk(0.0, data[:50]), Chunk(0.6, data[50:])],
                 StreamEnd("clean"))
    with serving(path, defaults=Faults()) as url:
        _, recorded, slow = post(url, "/v1/chat/completions")
        _, fast_data, fast = post(url, "/v1/chat/completions", fault="speed=inf")
        _, _, faster = post(url, "/v1/chat/completions", fault="speed=4")
    assert recorded == fast_data == data
    assert slow[-1][0] - slow[0][0] >= 0.55
    # Upper bounds are generous (a busy machine is slow); each is far below the next lower one.
    assert fast[-1][0] < 0.45
    assert 0.15 <= faster[-1][0] < 0.55


def test_rate_paces_events_however_the_bytes_are_cut():
    full = CHAT.read_bytes()
    ends = [f.end for f in decode_all(full)]
    rate = 80.0
    with serving(CHAT) as url:  # the defaults say delay=0: rate replaces it
        _, data, reads = post(url, "/v1/chat/completions", fault=f"rate={rate:g},chunk=7")
        _, cut, _ = post(url, "/v1/chat/completions", fault="eps=1000,frames=3,end=clean")
    assert data == full and cut == full[:ends[2]]
    # The read completing frame k (0-based) cannot come before k / rate (lower bounds only:
    # a loaded machine can delay a read, never hasten one).
    received = 0
    for t, piece in reads:
        received += len(piece)
        complete = sum(1 for end in ends if end <= received)
        assert t >= (complete - 1) / rate - 0.005
    assert reads[-1][0] >= (len(ends) - 1) / rate


def test_paced_pieces_fall_due_by_frames():
    # Frame k is due at k / rate; a piece goes out once every frame ending before it is due.
    pieces = [(0.0, b"data: a\n\n"), (0.0, b"data: b"), (0.0, b"\n\ndata: c\n\n")]
    ends = [9, 18, 27]
    assert [t for t, _ in _paced(pieces, ends, 10.0)] == [0.0, 0.1, 0.1]
    assert [t for t, _ in _paced([(0.0, b"x" * 27)], ends, 10.0)] == [0.0]


def test_recorded_endings_are_replayed(tmp_path):
    data = CHAT.read_bytes()
    reset, error = tmp_path / "reset.jsonl", tmp_path / "error.jsonl"
    save_session(str(reset), SessionHeader(), [Chunk(0.0, data[:400])], StreamEnd("reset"))
    save_session(str(error), SessionHeader(protocol="openai-chat"), [],
                 StreamEnd("http_error", status=401, body=b'{"error":"bad key"}'))
    with serving(reset, error) as url:
        with pytest.raises(httpx.ReadError) as exc:
            post(url, "/v1/chat/completions?callscope-session=reset")
        response, body, _ = post(url, "/v1/chat/completions?callscope-session=error")
    assert exc.value.received == data[:400]
    assert response.status_code == 401 and body == b'{"error":"bad key"}'


def test_cli_defaults_apply_and_requests_override_them():
    full = CHAT.read_bytes()
    with serving(CHAT, defaults=Faults(delay=0, cut=100, end="clean")) as url:
        _, default, _ = post(url, "/v1/chat/completions")
        _, override, _ = post(url, "/v1/chat/completions", fault="cut=250")
    assert default == full[:100]
    assert override == full[:250]


def test_bad_fault_spec_is_a_400_not_a_crash():
    with serving(CHAT) as url:
        response, body, _ = post(url, "/v1/chat/completions", fault="cut=-3")
        again, data, _ = post(url, "/v1/chat/completions")
    assert response.status_code == 400 and b"cut must be >= 0" in body
    assert again.status_code == 200 and data == CHAT.read_bytes()


def test_parse_faults():
    assert parse_faults("cut=10, end=reset") == Faults(cut=10, end="reset")
    assert parse_faults("reset=7") == Faults(cut=7, end="reset")
    assert parse_faults("stall,hold=1.5") == Faults(end="stall", hold=1.5)
    assert parse_faults("frames:3,chunk:5,delay:0.01,speed:inf") == Faults(
        frames=3, chunk=5, delay=0.01, speed=float("inf"))
    assert parse_faults("status=500,body=a,b=c") == Faults(status=500, body="a,b=c")
    assert parse_faults("session=x") == Faults(session="x")
    assert parse_faults("rate=10000,chunk=3") == parse_faults("eps:1e4,chunk:3") == Faults(
        rate=10_000.0, chunk=3)
    for bad in ("cut=x", "nope=1", "end=later", "chunk=0", "status=200", "speed=0", "=3",
                "rate=0", "rate=inf", "rate=-5", "rate=nan"):
        with pytest.raises(FaultError):
            parse_faults(bad)


def test_serve_command_prints_its_port_and_streams():
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "callscope.tui.cli", "serve", str(CHAT_TEXT),
                             "--delay", "0"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        assert line.startswith("callscope serve: listening on http://127.0.0.1:")
        url = line.split(" on ", 1)[1].strip()
        response = httpx.post(url + "/v1/chat/completions", json={"stream": True}, timeout=5)
        assert response.content == CHAT_TEXT.read_bytes()
    finally:
        proc.terminate()
        proc.wait(timeout=5)


# -- the official SDKs (only when installed) ------------------------------------------------------

def test_openai_sdk_chat_completions_stream():
    openai = pytest.importorskip("openai")
    expected = engine_calls(CHAT.read_bytes())
    with serving(CHAT) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="sk-test", max_retries=0)
        calls: dict[int, list[str]] = {}
        names: dict[int, str] = {}
        for chunk in client.chat.completions.create(model="gpt-4o", messages=[], stream=True):
            for choice in chunk.choices:
                for tc in choice.delta.tool_calls or ():
                    if tc.function and tc.function.name:
                        names[tc.index] = tc.function.name
                    calls.setdefault(tc.index, []).append(tc.function.arguments or "")
    got = sorted((names[i], "".join(parts)) for i, parts in calls.items())
    assert got == sorted(expected.values()) and len(got) == 2


def test_openai_sdk_responses_stream():
    openai = pytest.importorskip("openai")
    expected = engine_calls(RESPONSES.read_bytes())
    with serving(RESPONSES) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="sk-test", max_retries=0)
        final = None
        for event in client.responses.create(model="gpt-5", input="hi", stream=True):
            if event.type == "response.completed":
                final = event.response
    assert final is not None
    got = [(o.name, o.arguments) for o in final.output if o.type == "function_call"]
    assert got == list(expected.values())


def test_anthropic_sdk_messages_stream():
    anthropic = pytest.importorskip("anthropic")
    expected = engine_calls(ANTHROPIC.read_bytes())
    with serving(ANTHROPIC) as url:
        client = anthropic.Anthropic(base_url=url, api_key="sk-ant-test", max_retries=0)
        with client.messages.stream(model="claude-x", max_tokens=100, messages=[]) as stream:
            message = stream.get_final_message()
    got = [(b.name, b.input) for b in message.content if b.type == "tool_use"]
    assert got == [(name, orjson.loads(text)) for name, text in expected.values()]


def test_anthropic_sdk_sees_a_cut_stream_fail():
    anthropic = pytest.importorskip("anthropic")
    with serving(ANTHROPIC) as url:
        client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0,
                                     default_headers={"x-callscope-fault": "cut=900"})
        # Depending on the SDK version the transport error is wrapped (APIError) or not.
        with pytest.raises(Exception) as failure:
            with client.messages.stream(model="claude-x", max_tokens=100, messages=[]) as stream:
                stream.get_final_message()
    assert isinstance(failure.value, anthropic.APIError) or "incomplete" in str(failure.value)


def test_google_genai_generate_content_stream():
    pytest.importorskip("google.genai")
    from google import genai
    from google.genai import types

    expected = engine_calls(GENERATE.read_bytes())
    with serving(GENERATE) as url:
        client = genai.Client(api_key="g-test", http_options=types.HttpOptions(base_url=url))
        calls = []
        for chunk in client.models.generate_content_stream(model="gemini-3-pro-preview",
                                                           contents="hi"):
            calls += [(fc.name, fc.args) for fc in chunk.function_calls or ()]
    assert calls == [(name, orjson.loads(text)) for name, text in expected.values()]
    assert calls


def test_google_genai_interactions_stream():
    pytest.importorskip("google.genai")
    from google import genai
    from google.genai import types

    expected = engine_calls(INTERACTIONS.read_bytes())
    with serving(INTERACTIONS) as url:  # this SDK posts to /v1/interactions
        client = genai.Client(api_key="g-test", http_options=types.HttpOptions(base_url=url))
        names: dict[int, str] = {}
        args: dict[int, str] = {}
        for event in client.interactions.create(model="gemini-2.5-flash", input="hi",
                                                stream=True):
            if event.event_type == "step.start" and event.step.type == "function_call":
                names[event.index] = event.step.name
            elif event.event_type == "step.delta" and event.delta.type == "arguments_delta":
                args[event.index] = args.get(event.index, "") + event.delta.arguments
    assert [(names[i], args[i]) for i in sorted(names)] == list(expected.values())
    assert names


def test_a_session_name_prefers_the_endpoints_protocol_and_refuses_a_mismatch(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    same_chat = tmp_path / "a" / "single_call.sse"
    same_anthropic = tmp_path / "b" / "single_call.sse"
    same_chat.write_bytes(CHAT_TEXT.read_bytes())
    same_anthropic.write_bytes(ANTHROPIC.read_bytes())
    with serving(same_chat, same_anthropic, RESPONSES) as url:
        named = {"x-callscope-session": "single_call"}
        anthropic = post(url, "/v1/messages", headers=named)[1]
        chat = post(url, "/v1/chat/completions", headers=named)[1]
        wrong, body, _ = post(url, "/v1/messages",
                              headers={"x-callscope-session": RESPONSES.stem})
    assert anthropic == ANTHROPIC.read_bytes() and chat == CHAT_TEXT.read_bytes()
    assert wrong.status_code == 409
    message = orjson.loads(body)["error"]["message"]
    assert "is openai-responses, not anthropic" in message


# -- error shapes, as the SDKs see them ------------------------------------------------------------

def test_openai_sdk_sees_a_real_rate_limit_error():
    openai = pytest.importorskip("openai")
    with serving(CHAT) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="sk-test", max_retries=0,
                               default_headers={"x-callscope-fault": "status=429"})
        with pytest.raises(openai.RateLimitError) as exc:
            client.chat.completions.create(model="m", messages=[], stream=True)
    assert exc.value.code == "rate_limit_exceeded" and exc.value.type == "requests"
    assert exc.value.request_id.startswith("req_")
    assert exc.value.response.headers["retry-after"] == "1"


@pytest.mark.parametrize(("status", "error", "kind", "retry"), [
    (529, "OverloadedError", "overloaded_error", "true"),
    (429, "RateLimitError", "rate_limit_error", "true"),
    (400, "BadRequestError", "invalid_request_error", "false")])
def test_anthropic_sdk_sees_real_error_types_and_request_ids(status, error, kind, retry):
    anthropic = pytest.importorskip("anthropic")
    with serving(ANTHROPIC) as url:
        client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0,
                                     default_headers={"x-callscope-fault": f"status={status}"})
        with pytest.raises(getattr(anthropic, error)) as exc:
            client.messages.create(model="m", max_tokens=5, messages=[], stream=True)
    body = exc.value.body
    assert body["error"]["type"] == kind
    assert exc.value.request_id == body["request_id"] and body["request_id"].startswith("req_")
    assert exc.value.response.headers["x-should-retry"] == retry


def test_anthropic_sdk_retries_an_overload_as_the_header_says():
    anthropic = pytest.importorskip("anthropic")
    log: list[str] = []
    with serving(ANTHROPIC, log=log) as url:
        client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=1,
                                     default_headers={"x-callscope-fault": "status=529"})
        with pytest.raises(anthropic.OverloadedError):
            client.messages.create(model="m", max_tokens=5, messages=[], stream=True)
    assert sum("HTTP 529" in line for line in log) == 2  # retried once, after retry-after


def test_google_genai_sees_resource_exhausted():
    genai = pytest.importorskip("google.genai")
    from google.genai import errors, types

    with serving(GENERATE) as url:
        client = genai.Client(api_key="k", http_options=types.HttpOptions(
            base_url=url, headers={"x-callscope-fault": "status=429"},
            retry_options=types.HttpRetryOptions(attempts=1)))
        with pytest.raises(errors.ClientError) as exc:
            list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="hi"))
    assert exc.value.code == 429 and exc.value.status == "RESOURCE_EXHAUSTED"
