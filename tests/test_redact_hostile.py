"""Redaction of hostile session headers: a ``request`` member whose parts have the wrong type
(a body that is a string of JSON, a URL that is a list, headers that are a string) or whose
credential members have names a list misses. No secret may reach the written file, and
nothing may be dropped without a note."""

from __future__ import annotations

import json

import orjson
import pytest
from callscope.core.redact import (
    HEADERS_NOTE,
    NOT_SECRET_MEMBER_RULES,
    REDACTED,
    SECRET_MEMBER_RULES,
    redact_body,
    redact_headers,
    redact_request,
    redact_text,
    redact_urls,
    secret_member_name,
)
from callscope.core.session import Chunk, SessionHeader, StreamEnd, open_session, save_session
from callscope.tui.cli import main as cli_main


def write_session(path, request: dict, **header) -> str:
    """A session file as a hostile tool could write it (the reader checks only that
    ``request`` is an object)."""
    head = {"callscope": "session", "version": 1, "request": request, **header}
    path.write_bytes(orjson.dumps(head) + b"\n" + orjson.dumps({"t": 0, "text": "data: {}\n\n"})
                     + b"\n" + orjson.dumps({"end": "clean"}) + b"\n")
    return str(path)


def imported(tmp_path, request: dict, **header) -> tuple[bytes, dict]:
    """``callscope import X.jsonl -o Y``: the bytes of Y and its header's request."""
    source = write_session(tmp_path / "in.jsonl", request, **header)
    out = tmp_path / "out.jsonl"
    assert cli_main(["import", source, "-o", str(out)]) == 0
    return out.read_bytes(), open_session(str(out)).header.request or {}


def recorded(tmp_path, request: dict) -> tuple[bytes, dict]:
    """The recorder's path: a header built in code, saved."""
    path = tmp_path / "rec.jsonl"
    save_session(str(path), SessionHeader(source="live", request=request),
                 [Chunk(0, b"data: {}\n\n")], StreamEnd("clean"))
    return path.read_bytes(), open_session(str(path)).header.request or {}


# -- 1. a body that is a string holding JSON ------------------------------------------------

def test_a_body_string_holding_json_is_redacted_as_the_parsed_body_and_stays_a_string(tmp_path):
    body = json.dumps({"model": "m", "api_key": "LEAKS6", "auth": {"token": "LEAKS7"}})
    for saved, request in (imported(tmp_path, {"body": body}),
                           recorded(tmp_path, {"body": body})):
        assert b"LEAKS6" not in saved and b"LEAKS7" not in saved
        assert isinstance(request["body"], str)  # its type is kept: re-serialized, compact
        assert json.loads(request["body"]) == {"model": "m", "api_key": REDACTED,
                                               "auth": {"token": REDACTED}}


def test_a_body_string_with_nothing_to_redact_is_kept_byte_for_byte():
    body = '{ "model": "m",  "max_tokens": 5 }'
    assert redact_body(body) == body


def test_a_doubly_encoded_or_non_json_body_string_is_redacted_too():
    double = json.dumps(json.dumps({"password": "LEAK1"}))
    assert "LEAK1" not in redact_body(double)
    assert json.loads(json.loads(redact_body(double))) == {"password": REDACTED}
    assert redact_body("api_key=LEAK2&model=m") == f"api_key={REDACTED}&model=m"
    assert redact_body("[1, 2") == "[1, 2"  # not JSON, nothing to redact: as it was


def test_a_body_string_too_deep_to_walk_is_redacted_as_text():
    deep = "[" * 1000 + '{"api_key": "LEAK3"}' + "]" * 1000
    assert "LEAK3" not in redact_body(deep)


# -- 2. one name rule for body members -------------------------------------------------------

SECRET_MEMBERS = [
    "api_key", "apiKey", "api-key", "x-api-key", "API_KEY", "x-goog-api-key", "openai_api_key",
    "token", "Token", "access_token", "accessToken", "id_token", "refresh_token",
    "session_token", "aws_session_token", "x-amz-security-token", "secret", "client_secret",
    "clientSecret", "aws_secret_access_key", "password", "passwd", "passphrase", "private_key",
    "privateKey", "access_key", "authorization", "Proxy-Authorization", "auth", "credential",
    "credentials", "signature", "x-amz-signature", "sig", "cookie", "Set-Cookie", "cookies",
]
INNOCENT_MEMBERS = [
    "max_tokens", "tokens", "input_tokens", "output_tokens", "token_count", "max_completion_tokens",
    "tool_choice", "key", "model", "author", "keys", "tokenizer", "eos_token", "thoughtSignature",
    "stream", "messages", "cache_control",
]


@pytest.mark.parametrize("name", SECRET_MEMBERS)
def test_every_common_credential_member_name_is_redacted(name):
    assert secret_member_name(name)
    assert redact_body({"a": [{name: "LEAK"}]}) == {"a": [{name: REDACTED}]}
    assert "LEAK" not in redact_text(f'{{"{name}": "LEAK"}}')
    assert "LEAK" not in redact_text(f"x=1&{name}=LEAK")


@pytest.mark.parametrize("name", INNOCENT_MEMBERS)
def test_innocent_member_names_stay(name):
    assert not secret_member_name(name)
    assert redact_body({name: "kept"}) == {name: "kept"}
    assert redact_text(f'{{"{name}": "kept"}}') == f'{{"{name}": "kept"}}'


def test_the_audited_names_reach_the_file_redacted(tmp_path):
    body = {"token": "LEAKT1", "aws_secret_access_key": "LEAKT2", "id_token": "LEAKT3",
            "session_token": "LEAKT4", "aws_session_token": "LEAKT5", "private_key": "LEAKT6",
            "client_secret": "LEAKT7", "max_tokens": 9, "tool_choice": "auto",
            "usage": {"input_tokens": 3, "tokens": 4, "token_count": 5}}
    saved, request = imported(tmp_path, {"body": body})
    assert [k for k in ("LEAKT1", "LEAKT2", "LEAKT3", "LEAKT4", "LEAKT5", "LEAKT6", "LEAKT7")
            if k.encode() in saved] == []
    assert request["body"]["max_tokens"] == 9 and request["body"]["tool_choice"] == "auto"
    assert request["body"]["usage"] == {"input_tokens": 3, "tokens": 4, "token_count": 5}


def test_the_rule_tables_give_one_reason_per_rule():
    for table in (SECRET_MEMBER_RULES, NOT_SECRET_MEMBER_RULES):
        for pattern, reason in table:
            assert pattern and reason.endswith(".") and reason.count(". ") == 0


def test_a_reasoning_signature_is_kept_as_the_provider_needs_it_back():
    thinking = {"type": "thinking", "thinking": "hmm", "signature": "EqQBCkgI"}
    bedrock = {"reasoningText": {"text": "hmm", "signature": "c2ln"}}
    body = {"messages": [{"role": "assistant", "content": [thinking]}, bedrock]}
    assert redact_body(body) == body
    assert redact_body({"signature": "LEAK"}) == {"signature": REDACTED}


# -- 3. a URL that is not a string, and URLs anywhere ----------------------------------------

def test_a_url_in_a_list_is_redacted_and_keeps_its_shape():
    request = redact_request({"url": ["https://x/v1?key=LEAKS2", {"href": "/v1?api_key=LEAK"}]})
    assert request["url"] == [f"https://x/v1?key={REDACTED}", {"href": f"/v1?api_key={REDACTED}"}]


def test_a_url_in_a_list_never_reaches_the_file(tmp_path):
    """A header built in code (a HAR, the proxy) may hold a URL of another type: redacted by
    its shape, then kept as its JSON text, so the session loads; a session file holding one is
    refused when read (the format types ``request.url``)."""
    saved, request = recorded(tmp_path, {"url": ["https://x/v1?key=LEAKS2"]})
    assert b"LEAKS2" not in saved
    assert request["url"] == f'["https://x/v1?key={REDACTED}"]'
    source = write_session(tmp_path / "in.jsonl", {"url": ["https://x/v1?key=LEAKS2"]})
    assert cli_main(["import", source, "-o", str(tmp_path / "out.jsonl")]) == 2


def test_urls_with_secret_parameters_are_redacted_in_every_string_of_a_body():
    body = {"messages": [{"role": "user", "content": "see https://g.example/v1?key=LEAK1&q=2"}],
            "links": ("https://u:LEAK2@h.example/", "/v1/x?access_token=LEAK3"),
            "escaped": "https:\\/\\/h.example\\/v1?sig=LEAK4"}
    out = orjson.dumps(redact_body(body))
    assert [k for k in ("LEAK1", "LEAK2", "LEAK3", "LEAK4") if k.encode() in out] == []
    assert b"&q=2" in out and b"h.example" in out


def test_urls_in_text_are_redacted_and_the_rest_keeps_its_spelling():
    text = "GET https://h.example/a?b=1&token=LEAK then  spaces"
    assert redact_text(text) == f"GET https://h.example/a?b=1&token={REDACTED} then  spaces"
    assert redact_urls("no url here / at all") == "no url here / at all"


# -- 4. headers that are not a header object --------------------------------------------------

def test_headers_given_as_a_string_are_read_as_a_header_block(tmp_path):
    block = "Authorization: Bearer LEAKH1\r\nX-Api-Key: LEAKH2\r\nAccept: text/event-stream\r\n"
    saved, request = recorded(tmp_path, {"headers": block})  # (a header built in code)
    assert b"LEAKH1" not in saved and b"LEAKH2" not in saved
    assert request["headers"] == {"Authorization": REDACTED, "X-Api-Key": REDACTED,
                                  "Accept": "text/event-stream"}
    # a session file whose headers are a string is refused when read (its type is the format's)
    source = write_session(tmp_path / "in.jsonl", {"headers": block})
    assert cli_main(["import", source, "-o", str(tmp_path / "out.jsonl")]) == 2
    assert not (tmp_path / "out.jsonl").exists()


def test_what_is_not_a_header_is_not_kept_and_a_note_says_so():
    out = redact_headers("POST /v1 HTTP/1.1\nsk-LEAK-bare-line\nAccept: x")
    assert out["Accept"] == "x" and "LEAK" not in str(out)
    assert "2 item(s)" in out[HEADERS_NOTE]
    assert redact_headers(3) == {HEADERS_NOTE: "the headers were int, not a header object; "
                                               "not kept"}
    pairs = redact_headers([("Accept", "a"), ("x-api-key", "LEAK", "extra"), 7, {"value": "v"}])
    assert pairs["Accept"] == "a" and "3 item(s)" in pairs[HEADERS_NOTE] and "LEAK" not in str(pairs)


def test_a_header_block_line_goes_whole_when_its_name_is_a_secret():
    assert redact_headers("Set-Cookie: sid=LEAKR2; Path=/") == {"Set-Cookie": REDACTED}
    assert redact_headers("x-goog-api-key:LEAKR3") == {"x-goog-api-key": REDACTED}


# -- other shapes that bypassed redaction by type ---------------------------------------------

def test_header_values_that_are_not_strings_are_redacted_inside():
    out = redact_headers({"x-extra": {"authorization": "Bearer LEAK1"},
                          "referer": "https://h.example/?key=LEAK2", "x-n": 3,
                          "x-list": ["a", "b"], "X-Api-Key": ["LEAK3"]})
    assert "LEAK" not in str(out)
    assert out["x-n"] == "3" and out["x-list"] == "a, b" and out["X-Api-Key"] == REDACTED
    assert redact_headers(["Authorization: Basic LEAK4", "Accept: x"]) == {
        "Authorization": REDACTED, "Accept": "x"}


def test_har_like_name_value_objects_in_a_body_lose_a_credential_value():
    body = {"queryString": [{"name": "key", "value": "LEAK1"}, {"name": "alt", "value": "sse"}],
            "cookies": [{"name": "sid", "value": "LEAK2"}],
            "headers": [{"name": "x-portkey-api-key", "value": "LEAK3"}]}
    out = redact_body(body)
    assert "LEAK" not in str(out).replace("sid", "")  # the cookie's value goes with its member
    assert out["queryString"][1] == {"name": "alt", "value": "sse"}


def test_tuples_in_a_body_are_walked():
    assert redact_body({"a": ({"api_key": "LEAK"},)}) == {"a": [{"api_key": REDACTED}]}


def test_a_whole_request_of_hostile_types_is_redacted_by_shape():
    request = {"method": "POST", "url": ("https://x/?key=LEAK1",), "headers": "Cookie: LEAK2",
               "body": '{"apiKey": "LEAK3"}', "body_text": {"password": "LEAK4"},
               "query": {"key": "LEAK5", "alt": "sse"}, "extra": {"secret": "LEAK6"}}
    out = redact_request(request)
    assert "LEAK" not in str(out), out
    assert out["query"] == {"key": REDACTED, "alt": "sse"} and out["method"] == "POST"
    assert set(out) == set(request)  # nothing dropped


def test_members_of_other_types_never_reach_the_file(tmp_path):
    saved, _ = recorded(tmp_path, {"body_text": {"password": "LEAKX1"},
                                   "query": {"key": "LEAKX2"}})
    assert b"LEAKX1" not in saved and b"LEAKX2" not in saved


def test_redaction_is_idempotent():
    body = json.dumps({"api_key": "LEAK", "u": "https://x/?key=LEAK"})
    once = redact_body(body)
    assert redact_body(once) == once
    text = 'Authorization: Bearer LEAK\n{"token": "LEAK"} api_key=LEAK'
    assert redact_text(redact_text(text)) == redact_text(text) and "LEAK" not in redact_text(text)
    headers = redact_headers("Accept: x\nbad line")
    assert redact_headers(headers) == headers


def test_json_escaped_pairs_in_text_are_redacted_and_stay_valid():
    text = json.dumps({"body": json.dumps({"api_key": "LEAK", "n": 1})})
    out = redact_text(text)
    assert "LEAK" not in out
    assert json.loads(json.loads(out)["body"]) == {"api_key": REDACTED, "n": 1}


def test_a_header_line_in_text_goes_to_its_end():
    assert redact_text("Cookie: a=LEAK1; b=LEAK2\nAccept: x") == f"Cookie: {REDACTED}\nAccept: x"


# -- the header's other members ---------------------------------------------------------------

def test_no_key_in_the_headers_other_members_reaches_the_file(tmp_path):
    """A member the reader does not know (kept and written back as it is) and the free-text
    ones (provenance, source) are judged as a body and as text: ``import`` of a session that a
    tool wrote with a key in its notes must not copy the key."""
    keys = ["sk-proj-EXTRA1111", "sk-ant-NOTES2222", "AIzaPROV3333", "SRC4444"]
    data, _ = imported(
        tmp_path, {"method": "POST"},
        api_key=keys[0], notes={"auth": {"token": keys[1]}, "seen": "fine"},
        provenance=f"recorded with api_key={keys[2]}",
        source=f"https://g.example/v1?key={keys[3]}")
    assert [k for k in keys if k.encode() in data] == []
    header = open_session(str(tmp_path / "out.jsonl")).header
    assert header.extra["api_key"] == REDACTED
    assert header.extra["notes"] == {"auth": {"token": REDACTED}, "seen": "fine"}
    assert header.provenance == f"recorded with api_key={REDACTED}"
