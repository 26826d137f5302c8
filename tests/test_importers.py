"""Inputs accepted where a session is: raw SSE captures (byte-exact) and HAR exports."""

from __future__ import annotations

import base64
import json
import pathlib
import re

import pytest
from callscope.core import importers
from callscope.core.errors import InputError
from callscope.core.importers import open_input
from callscope.core.session import REDACTED, Chunk, StreamEnd, open_session, save_session
from callscope.core.session import open_input as open_input_from_session

FIXTURES = sorted((pathlib.Path(__file__).parent / "fixtures").rglob("*.sse"))


# -- raw SSE -----------------------------------------------------------------------------------

def test_fixtures_are_present():
    assert len(FIXTURES) >= 30


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_raw_sse_import_is_exact_and_survives_a_save(fixture, tmp_path):
    raw = fixture.read_bytes()
    s = open_input(str(fixture))
    assert list(s.chunks()) == [Chunk(0.0, raw)]
    assert s.end == StreamEnd("clean")
    assert s.header.source == "import:sse" and fixture.name in (s.header.provenance or "")
    saved = tmp_path / "s.jsonl"
    save_session(str(saved), s.header, s.chunks(), s.end)
    back = open_input(str(saved))
    assert [c.data for c in back.chunks()] == [raw]
    assert back.header == s.header and back.end == s.end


@pytest.mark.parametrize("raw", [
    b"\xef\xbb\xbfdata: bom\n\n",
    b"data: a\rdata: b\r\r",
    b"data: \xff\xfe not utf-8\r\n\r\n\x00",
    b"  \n\ndata: leading blank lines\n\n",
    b": comment first\n\n",
])
def test_raw_sse_bytes_are_kept_exactly(tmp_path, raw):
    path = tmp_path / "capture"  # no extension: detection is by content
    path.write_bytes(raw)
    s = open_input(str(path))
    assert [c.data for c in s.chunks()] == [raw]
    saved = tmp_path / "s.jsonl"
    save_session(str(saved), s.header, s.chunks(), s.end)
    assert [c.data for c in open_input(str(saved)).chunks()] == [raw]


def test_open_input_is_also_reachable_from_the_session_module(tmp_path):
    (tmp_path / "c.sse").write_bytes(b"data: x\n\n")
    assert list(open_input_from_session(str(tmp_path / "c.sse")).chunks()) == \
        [Chunk(0.0, b"data: x\n\n")]


def test_json_lines_are_not_mistaken_for_sse(tmp_path):
    path = tmp_path / "payloads.chunks.txt"
    path.write_bytes(b'{"type":"message_start"}\n{"type":"message_stop"}\n')
    with pytest.raises(InputError, match="no session header") as err:
        open_input(str(path))
    assert err.value.line == 1


def test_unreadable_and_oversized_inputs(tmp_path, monkeypatch):
    with pytest.raises(InputError, match="cannot read"):
        open_input(str(tmp_path / "nope.sse"))
    (tmp_path / "big.sse").write_bytes(b"data: x\n\n" * 20)
    monkeypatch.setattr(importers, "MAX_IMPORT_BYTES", 100)
    with pytest.raises(InputError, match="import limit of 100 bytes"):
        open_input(str(tmp_path / "big.sse"))


# -- HAR ---------------------------------------------------------------------------------------

STREAM = b'event: message_start\ndata: {"type":"message_start"}\n\ndata: [DONE]\n\n'
SECRETS = ["sk-ant-SECRET1", "AIzaSECRET2", "Bearer SECRET3"]


def entry(body: bytes | None = STREAM, *, mime="text/event-stream", base64_body=False,
          url="https://api.example/v1/messages", request_body: str | None = None,
          status=200, **extra) -> dict:
    content: dict = {"size": len(body or b""), "mimeType": mime}
    if body is not None:
        if base64_body:
            content.update(text=base64.b64encode(body).decode(), encoding="base64")
        else:
            content["text"] = body.decode("utf-8")
    request: dict = {"method": "POST", "url": url, "httpVersion": "HTTP/2", "headers": [
        {"name": ":path", "value": "/v1/messages?key=" + SECRETS[1]},
        {"name": "x-api-key", "value": SECRETS[0]},
        {"name": "Authorization", "value": SECRETS[2]},
        {"name": "content-type", "value": "application/json"},
    ]}
    if request_body is not None:
        request["postData"] = {"mimeType": "application/json", "text": request_body}
    return {
        "startedDateTime": "2026-03-01T10:00:00.000Z",
        "time": 1500,
        "request": request,
        "response": {"status": status, "statusText": "", "httpVersion": "HTTP/2",
                     "headers": [{"name": "content-type", "value": mime},
                                 {"name": "set-cookie", "value": "sid=SECRET4"}],
                     "content": content, **extra.pop("response_extra", {})},
        "timings": {"blocked": -1, "send": 2, "wait": 300, "receive": 1200},
        **extra,
    }


def write_har(path: pathlib.Path, *entries: dict, indent: int | None = 2) -> str:
    path.write_text(json.dumps({"log": {"version": "1.2", "creator": {"name": "test"},
                                        "entries": list(entries)}}, indent=indent))
    return str(path)


def test_har_stream_with_its_request(tmp_path):
    body = json.dumps({"model": "claude", "stream": True,
                       "tools": [{"name": "get_weather", "input_schema": {}}]})
    har = write_har(tmp_path / "devtools.har",
                    entry(b"", mime="text/html", url="https://x.example/"),
                    entry(request_body=body, url="https://api.example/v1/messages?key="
                          + SECRETS[1] + "&beta=true"))
    s = open_input(har)
    assert list(s.chunks()) == [Chunk(0.302, STREAM)]
    assert s.end == StreamEnd("clean", at=1.502)
    h = s.header
    assert h.source == "import:har" and h.status == 200
    assert h.recorded_at == "2026-03-01T10:00:00.000Z"
    assert "entry 2 of 2" in (h.provenance or "")
    assert h.request == {
        "method": "POST", "url": f"https://api.example/v1/messages?key={REDACTED}&beta=true",
        "headers": {"x-api-key": REDACTED, "Authorization": REDACTED,
                    "content-type": "application/json"},
        "body": json.loads(body),
    }
    assert h.tools == [{"name": "get_weather", "input_schema": {}}]
    assert h.response_headers == {"content-type": "text/event-stream", "set-cookie": REDACTED}
    saved = tmp_path / "s.jsonl"
    save_session(str(saved), h, s.chunks(), s.end)
    text = saved.read_bytes()
    assert [k for k in SECRETS + ["SECRET4"] if k.encode() in text] == []
    assert open_session(str(saved)).header == h


def test_har_request_body_credentials_are_redacted(tmp_path):
    """Found by review: an api_key member of a HAR request body reached the session file."""
    body = {"model": "m", "api_key": "SECRET5", "auth": {"client_secret": "SECRET6"},
            "messages": [{"role": "tool", "content": '{"key":"Objective"}', "key": "kept"}]}
    as_json = write_har(tmp_path / "a.har", entry(request_body=json.dumps(body)))
    as_text = write_har(tmp_path / "b.har", entry(
        request_body="api_key=SECRET7&Authorization: Bearer SECRET8&model=m"))
    for har, secrets in ((as_json, ["SECRET5", "SECRET6"]), (as_text, ["SECRET7", "SECRET8"])):
        s = open_input(har)
        saved = tmp_path / "s.jsonl"
        save_session(str(saved), s.header, s.chunks(), s.end)
        text = saved.read_bytes()
        assert [k for k in secrets if k.encode() in text] == []
        assert open_session(str(saved)).header == s.header
    request = open_input(as_json).header.request
    assert request["body"]["messages"] == body["messages"]  # a member named key is not a secret
    assert request["body"]["api_key"] == REDACTED
    assert open_input(as_text).header.request["body_text"] == (
        f"api_key={REDACTED}&Authorization: {REDACTED}&model=m")


def test_har_base64_body_is_exact(tmp_path):
    raw = b'data: {"a":"\xe2\x9c"}\r\n\r\ndata: \x93\r\n\r\n'  # a character split, kept split
    s = open_input(write_har(tmp_path / "mitm.har", entry(raw, base64_body=True)))
    assert [c.data for c in s.chunks()] == [raw]


def test_har_bad_base64_in_a_stream(tmp_path):
    e = entry(STREAM, base64_body=True)
    e["response"]["content"]["text"] = "not base64!"
    with pytest.raises(InputError, match="entry 1: response.content.text is not valid base64"):
        open_input(write_har(tmp_path / "x.har", e))


def test_har_stream_found_by_its_content(tmp_path):
    s = open_input(write_har(tmp_path / "x.har", entry(b'{"not": "sse"}', mime="application/json"),
                             entry(b"\ndata: {}\n\n", mime="text/plain")))
    assert [c.data for c in s.chunks()] == [b"\ndata: {}\n\n"]


def test_har_without_a_stream(tmp_path):
    har = write_har(tmp_path / "x.har", entry(b'{"error": {}}', mime="application/json",
                                              status=429),
                    entry(None))  # an event stream whose body the browser did not keep
    with pytest.raises(InputError, match="no streamed response in this HAR: none of its 2"):
        open_input(har)


def test_har_pick_another_stream(tmp_path):
    har = write_har(tmp_path / "x.har", entry(b"data: 1\n\n"), entry(b"data: 2\n\n"))
    first, second = open_input(har), open_input(har + "#2")
    assert [c.data for c in first.chunks()] == [b"data: 1\n\n"]
    assert [c.data for c in second.chunks()] == [b"data: 2\n\n"]
    assert "#2 of 2" in (second.header.provenance or "")
    with pytest.raises(InputError, match="#3: this HAR has 2 streamed response") as err:
        open_input(har + "#3")
    assert "#2 POST https://api.example/v1/messages" in err.value.message


def test_har_pick_zero_or_not_a_number_is_refused_with_what_n_is(tmp_path):
    """N counts from 1: ``#0`` read the first response as if no N was given; ``#-1`` and
    ``#+2`` said the file did not exist."""
    har = write_har(tmp_path / "x.har", entry(b"data: 1\n\n"), entry(b"data: 2\n\n"))
    with pytest.raises(InputError, match="#0: this HAR has 2 streamed response"):
        open_input(har + "#0")
    for bad in ("-1", "+2", " 2", "x", ""):
        with pytest.raises(InputError, match=f"#{re.escape(bad)} is not a response number"):
            open_input(har + "#" + bad)


def test_selector_on_something_else_than_a_har(tmp_path):
    (tmp_path / "c.sse").write_bytes(b"data: x\n\n")
    with pytest.raises(InputError, match="#2 picks a response of a HAR file"):
        open_input(str(tmp_path / "c.sse") + "#2")


def test_a_file_named_with_a_hash_is_opened_as_named(tmp_path):
    (tmp_path / "odd.sse#2").write_bytes(b"data: literal\n\n")
    assert [c.data for c in open_input(str(tmp_path / "odd.sse#2")).chunks()] \
        == [b"data: literal\n\n"]


def test_har_detected_by_content_not_name(tmp_path):
    har = write_har(tmp_path / "export.json", entry(), indent=None)
    assert open_input(har).header.source == "import:har"
    other_first = tmp_path / "x.har"  # first member is not "log": the name decides
    other_first.write_text(json.dumps({"comment": "", "log": {"entries": [entry()]}}))
    assert open_input(str(other_first)).header.source == "import:har"


def test_har_bad_json_names_the_line(tmp_path):
    path = tmp_path / "x.har"
    path.write_text('{"log": {\n  "entries": [\n    {,}\n  ]\n}}')
    with pytest.raises(InputError, match="not a HAR file: bad JSON") as err:
        open_input(str(path))
    assert err.value.line == 3


def test_har_error_and_plain_request_body(tmp_path):
    e = entry(request_body="prompt=hello", response_extra={"_error": "net::ERR_CONNECTION_RESET"})
    s = open_input(write_har(tmp_path / "x.har", e))
    assert s.end == StreamEnd("error", detail="the HAR says: net::ERR_CONNECTION_RESET",
                              at=1.502)
    assert s.header.request is not None
    assert s.header.request["body_text"] == "prompt=hello" and "body" not in s.header.request
    assert s.header.tools is None


def _nested(depth: int) -> str:
    return "[" * (depth - 1) + "{}" + "]" * (depth - 1)


def test_a_har_request_body_too_deep_for_a_session_is_kept_as_text_and_saves(tmp_path):
    # orjson reads 1,024 levels, a session line holds 254: the body stays whole, as text, and the
    # import can be saved (before: `callscope import` of such a HAR was refused at the save).
    deep = json.dumps({"model": "m", "tools": [{"name": "f", "input_schema": {}}],
                       "x": json.loads(_nested(importers.MAX_BODY_DEPTH + 5))})
    shallow = json.dumps({"model": "m", "x": json.loads(_nested(importers.MAX_BODY_DEPTH - 1))})
    har = write_har(tmp_path / "deep.har", entry(request_body=deep), indent=None)
    s = open_input(har)
    assert s.header.request["body_text"] == deep and "body" not in s.header.request
    assert s.header.tools is None  # not read from a body that is not held as JSON
    save_session(str(tmp_path / "deep.jsonl"), s.header, list(s.chunks()), s.end)
    har = write_har(tmp_path / "ok.har", entry(request_body=shallow), indent=None)
    s = open_input(har)
    assert s.header.request["body"] == json.loads(shallow)
    save_session(str(tmp_path / "ok.jsonl"), s.header, list(s.chunks()), s.end)


def test_a_tools_file_nested_too_deep_is_refused_naming_the_file(tmp_path):
    from callscope.core.tools import MAX_TOOLS_DEPTH, read_tools_file

    path = tmp_path / "tools.json"
    path.write_text(f'[{{"name": "f", "parameters": {_nested(MAX_TOOLS_DEPTH - 2)}}}]')
    assert read_tools_file(str(path))[0]["name"] == "f"  # at the limit: read
    path.write_text(f'[{{"name": "f", "parameters": {_nested(MAX_TOOLS_DEPTH)}}}]')
    with pytest.raises(InputError, match=f"nested deeper than {MAX_TOOLS_DEPTH} levels") as err:
        read_tools_file(str(path))
    assert str(path) in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("target", ["missing/dir/out.jsonl", "."])
def test_import_to_a_path_it_cannot_write_is_one_line(tmp_path, capsys, target):
    """Found by review: a traceback (FileNotFoundError, IsADirectoryError from os.replace)."""
    from callscope.tui.cli import main as cli_main

    har = write_har(tmp_path / "a.har", entry())
    assert cli_main(["import", har, "-o", str(tmp_path / target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("callscope: ") and "Traceback" not in err
