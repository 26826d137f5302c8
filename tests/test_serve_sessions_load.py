"""``callscope serve`` refuses, when it loads a session, a recorded response head it could not
answer with: a status that is not an HTTP status (or, for an ``http_error`` end, not an error
status), a content type that is not a string of visible ASCII. The refusal is one line naming
the file; nothing fails later while serving (a file name that is not printable is served, its
header escaped)."""

from __future__ import annotations

from typing import Any

import pytest
from callscope.core.errors import InputError
from callscope.core.session import Chunk, Session, SessionHeader, StreamEnd, save_session
from callscope.net.serve_sessions import load
from callscope.tui.cli import main as cli_main
from loopback import post, serving

CHUNKS = [Chunk(0, b'data: {"choices":[]}\n\n'), Chunk(0.001, b"data: [DONE]\n\n")]


def saved(tmp_path, name: str = "s.jsonl", end: StreamEnd | None = None, **header: Any) -> str:
    path = tmp_path / name
    save_session(str(path), SessionHeader(protocol="openai-chat", **header), CHUNKS,
                 end or StreamEnd("clean"))
    return str(path)


def in_memory(end: StreamEnd | None = None, **header: Any) -> Session:
    """A session built in code, whose members no reader has checked."""
    return Session.from_chunks(SessionHeader(protocol="openai-chat", **header), CHUNKS,
                               end or StreamEnd("clean"), path="built.jsonl")


def refused(path: str, session: Session | None = None) -> str:
    with pytest.raises(InputError) as caught:
        load(path, session)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "\n" not in message.removeprefix(path)
    return message


# -- the status ----------------------------------------------------------------------------

@pytest.mark.parametrize("status", [42, 99, 204, 302, 399, 600, 1000, -1])
def test_an_http_error_end_whose_status_is_not_an_error_status_is_refused_at_load(
        tmp_path, status):
    path = saved(tmp_path, end=StreamEnd("http_error", status=status, body=b"{}"))
    message = refused(path)
    assert f"is {status}, not an HTTP error status (400-599)" in message


@pytest.mark.parametrize("status", [42, 1000, 600, 0])
def test_a_header_status_that_is_not_an_http_status_is_refused_at_load(tmp_path, status):
    assert f"the header's 'status' is {status}, not an HTTP status (100-599)" in refused(
        saved(tmp_path, status=status))


@pytest.mark.parametrize("status", ["abc", "200", 1.5, True, [429]])
def test_a_status_that_is_not_an_integer_is_refused_whoever_built_the_session(status):
    assert "not an HTTP status" in refused("built.jsonl", in_memory(status=status))
    assert "not an HTTP error status" in refused(
        "built.jsonl", in_memory(end=StreamEnd("http_error", status=status)))


@pytest.mark.parametrize("status", [100, 200, 429, 599])
def test_statuses_in_range_load(tmp_path, status):
    assert load(saved(tmp_path, status=status)).protocol == "openai-chat"


def test_a_recorded_http_error_still_loads_and_is_answered_with(tmp_path):
    session = load(saved(tmp_path, end=StreamEnd("http_error", status=429, body=b'{"e":1}')))
    with serving(sessions=[session]) as url:
        response, body, _ = post(url, "/v1/chat/completions")
    assert response.status_code == 429 and body == b'{"e":1}'


# -- the content type ----------------------------------------------------------------------

@pytest.mark.parametrize("value", [
    "text/event-stream\x01x", "text/event-stream; charset=\u00e9", "text/event-stream\x7f",
    "text/event-stream\r\nx-injected: 1", "text/event-stream\x00", "text/\u2028event-stream",
])
def test_a_content_type_with_a_control_character_or_beyond_ascii_is_refused_at_load(
        tmp_path, value):
    message = refused(saved(tmp_path, response_headers={"Content-Type": value}))
    assert "content type" in message and "visible ASCII" in message


@pytest.mark.parametrize("value", [5, None, ["text/event-stream"], {"a": 1}])
def test_a_content_type_that_is_not_a_string_is_refused(value):
    assert "content type" in refused(
        "built.jsonl", in_memory(response_headers={"content-type": value}))


def test_a_good_content_type_keeps_its_parameters_without_the_spaces_around(tmp_path):
    path = saved(tmp_path, response_headers={"content-type": " text/event-stream; charset=utf-8\t"})
    session = load(path)
    assert session.content_type == "text/event-stream; charset=utf-8"
    with serving(sessions=[session]) as url:
        response, body, _ = post(url, "/v1/chat/completions")
    assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert body.endswith(b"data: [DONE]\n\n")


def test_an_empty_content_type_loads_and_the_stream_type_is_sent(tmp_path):
    assert load(saved(tmp_path, response_headers={"content-type": ""})).content_type == (
        "text/event-stream")


@pytest.mark.parametrize("headers", [["content-type", "text/event-stream"], "x", 3])
def test_response_headers_that_are_not_an_object_are_refused(headers):
    assert "response headers" in refused("built.jsonl", in_memory(response_headers=headers))


def test_another_content_type_is_checked_too_though_not_sent(tmp_path):
    """Every recorded content type is checked, the one the stream type does not take too: a
    head that carried a control character is not one to trust for the rest."""
    assert "content type" in refused(
        saved(tmp_path, response_headers={"content-type": "application/json\x01"}))


# -- the file name -------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "sent"), [
    ("a\nb.jsonl", b"a\\nb.jsonl"), ("a\x01b.jsonl", b"a\\x01b.jsonl"),
    ("a\x1b[31mb.jsonl", b"a\\x1b[31mb.jsonl"), ("a\udcffb.jsonl", b"a\\udcffb.jsonl")])
def test_a_file_name_that_is_not_printable_is_served_with_its_header_escaped(tmp_path, name, sent):
    """The name is no part of the recorded head: the session loads, and the header that names
    it carries the name's escapes, never a control character that would split the head."""
    if "\udcff" in name:  # (a name whose bytes are not text: made as such)
        import os
        path = os.path.join(str(tmp_path).encode(), b"a\xffb.jsonl")
        save_session(os.fsdecode(path), SessionHeader(protocol="openai-chat"), CHUNKS,
                     StreamEnd("clean"))
        session = load(os.fsdecode(path))
    else:
        session = load(saved(tmp_path, name=name))
    with serving(sessions=[session]) as url:
        response, data, _ = post(url, "/v1/chat/completions")
    assert response.status_code == 200 and data == b"".join(c.data for c in CHUNKS)
    assert dict(response.headers.raw)[b"x-callscope-session"] == sent


def test_a_file_name_beyond_ascii_loads_and_is_served(tmp_path):
    session = load(saved(tmp_path, name="caf\u00e9.jsonl"))
    with serving(sessions=[session]) as url:
        response, _, _ = post(url, "/v1/chat/completions")
    assert response.status_code == 200
    assert dict(response.headers.raw)[b"x-callscope-session"] == "caf\u00e9.jsonl".encode()


# -- the command line ----------------------------------------------------------------------

def test_the_serve_command_refuses_a_bad_head_in_one_line_and_exits_2(
        tmp_path, capsys, monkeypatch):
    def no_server(*_: Any, **__: Any) -> Any:
        raise AssertionError("the server started: the bad session was loaded")

    monkeypatch.setattr("callscope.net.serve.make_server", no_server)
    good = saved(tmp_path, name="good.jsonl")
    bad = saved(tmp_path, name="bad.jsonl", end=StreamEnd("http_error", status=1000))
    assert cli_main(["serve", good, bad, "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"callscope: {bad}: ") and "1000" in err
