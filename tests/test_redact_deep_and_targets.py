"""Redaction of bodies nested past every recursion limit, and of request targets that carry a
credential after a ``;`` separator or in a ``#fragment``. No secret may reach a session file,
and nothing may crash: a hostile body is as deep as it likes."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from callscope.core.errors import CallscopeError
from callscope.core.importers import MAX_BODY_DEPTH
from callscope.core.redact import (
    REDACTED,
    redact_body,
    redact_headers,
    redact_request,
    redact_url,
    redact_urls,
)
from callscope.core.session import Chunk, SessionHeader, StreamEnd, open_session, save_session
from callscope.net.capture_rules import request_record

SECRET = "sk-DEEPLEAK1234"


def nested_lists(depth: int, leaf: Any) -> Any:
    """``leaf`` inside ``depth`` lists, built without recursion."""
    for _ in range(depth):
        leaf = [leaf]
    return leaf


def nested_dicts(depth: int, leaf: Any) -> Any:
    for i in range(depth):
        leaf = {"model": "m", f"level{i % 7}": leaf}
    return leaf


def nested_text(depth: int, leaf: str) -> str:
    return "[" * depth + leaf + "]" * depth


def strings_in(value: Any) -> list[str]:
    """Every string (member names included) anywhere in ``value``, walked without recursion:
    the values under test are too deep for ``repr`` or ``==``."""
    found: list[str] = []
    level = [value]
    while level:
        item = level.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            found.extend(k for k in item if isinstance(k, str))
            level.extend(item.values())
        elif isinstance(item, list | tuple):
            level.extend(item)
    return found


def leaked(value: Any) -> bool:
    return any(SECRET in s for s in strings_in(value))


# -- 1. a body nested past Python's recursion limit ----------------------------------------

@pytest.mark.parametrize("build", [nested_lists, nested_dicts])
@pytest.mark.parametrize("depth", [600, 5_000, 100_000])
def test_a_body_nested_past_the_recursion_limit_is_walked_and_its_secret_redacted(build, depth):
    body = build(depth, {"api_key": SECRET, "note": "kept"})
    out = redact_body(body)
    assert not leaked(out)
    assert REDACTED in strings_in(out) and "kept" in strings_in(out)
    assert leaked(body)  # a copy: the input is left as it is


def test_every_rule_holds_at_any_depth():
    """The member rule, the name/value (HAR) rule, the rule under a credential member and URL
    redaction all apply as deep as the body goes, and schemas stay schemas."""
    leaf = {"headers": [{"name": "Authorization", "value": f"Bearer {SECRET}"}],
            "cookies": [{"name": "sid", "value": SECRET}],
            "link": f"https://h.example/cb?key={SECRET}",
            "schema": {"api_key": {"type": "string"}}}
    out = redact_body(nested_lists(50_000, leaf))
    assert not leaked(out)
    inner = out
    while isinstance(inner, list):
        inner = inner[0]
    assert inner["headers"][0]["value"] == REDACTED
    assert inner["cookies"][0]["value"] == REDACTED
    assert inner["link"] == f"https://h.example/cb?key={REDACTED}"
    assert inner["schema"] == {"api_key": {"type": "string"}}


@pytest.mark.parametrize("depth", [300, 600, 1_000, 2_000, 100_000])
def test_a_json_string_body_of_any_depth_is_redacted_and_stays_a_string(depth):
    """Up to orjson's 1,024 levels the string is parsed, redacted by the member rules and
    written back (past the 254 levels orjson writes, too); deeper, it is redacted as text."""
    text = nested_text(depth, orjson.dumps({"api_key": SECRET, "note": "kept"}).decode())
    out = redact_body(text)
    assert isinstance(out, str)
    assert SECRET not in out and "kept" in out and REDACTED in out


def test_a_string_body_too_deep_for_orjson_to_write_keeps_the_member_rules():
    """A name/value pair is a credential only by its shape, which the text rules cannot see:
    the body is written back as JSON, not handed to them."""
    text = nested_text(400, orjson.dumps({"name": "x-api-key", "value": SECRET}).decode())
    out = redact_body(text)
    assert SECRET not in out
    parsed = orjson.loads(out)
    for _ in range(400):
        parsed = parsed[0]
    assert parsed == {"name": "x-api-key", "value": REDACTED}


def test_a_deep_string_body_with_nothing_to_redact_is_kept_byte_for_byte():
    text = nested_text(900, '{ "model" : "m" }')
    assert redact_body(text) is text


def test_a_deep_header_value_is_redacted_not_raised():
    headers = redact_headers({"X-Meta": nested_dicts(3_000, {"token": SECRET})})
    assert SECRET not in orjson.dumps(headers).decode()


def test_a_request_with_a_deep_body_is_refused_in_one_line_not_crashed(tmp_path):
    """The writer can hold a body 254 levels deep: a deeper one (built in code) is refused
    with the writer's own error, and no file is left with its secret."""
    request = {"url": "https://h.example/v1", "body": nested_lists(5_000, {"api_key": SECRET})}
    assert not leaked(redact_request(request))
    path = tmp_path / "s.jsonl"
    with pytest.raises(CallscopeError, match="nested deeper"):
        save_session(str(path), SessionHeader(source="proxy", request=request), [],
                     StreamEnd("clean"))
    assert not path.exists() or SECRET.encode() not in path.read_bytes()


# -- 2. a recorder's body nested too deep to keep as JSON ----------------------------------

def record_of(body: bytes) -> dict[str, Any]:
    return request_record("POST", "https://h.example/v1/chat/completions",
                          [("content-type", "application/json")], body)


@pytest.mark.parametrize("depth", [MAX_BODY_DEPTH, MAX_BODY_DEPTH + 1, 600, 2_000])
def test_a_recorded_body_nested_past_the_limit_is_kept_as_text_and_saved(tmp_path, depth):
    body = nested_text(depth - 1, orjson.dumps({"api_key": SECRET}).decode()).encode()
    record = record_of(body)
    if depth <= MAX_BODY_DEPTH:
        assert "body" in record and "body_text" not in record
    else:
        assert record["body_text"] == body.decode() and "body" not in record
    path = tmp_path / "s.jsonl"
    save_session(str(path), SessionHeader(source="proxy", request=record),
                 [Chunk(0, b"data: {}\n\n")], StreamEnd("clean"))
    saved = path.read_bytes()
    assert SECRET.encode() not in saved and REDACTED.encode() in saved
    assert open_session(str(path)).header.request is not None


def test_a_recorded_body_that_is_not_json_is_still_text():
    assert record_of(b"api_key=" + SECRET.encode())["body_text"] == f"api_key={SECRET}"
    assert record_of(b'{"stream": true}')["body"] == {"stream": True}


# -- 3. credentials after ";" and in the fragment ------------------------------------------

@pytest.mark.parametrize("url, expected", [
    (f"https://h.example/v1/m?a=1;key={SECRET}", f"https://h.example/v1/m?a=1;key={REDACTED}"),
    (f"https://h.example/v1/m?key={SECRET};a=1&b=2",
     f"https://h.example/v1/m?key={REDACTED};a=1&b=2"),
    (f"https://h.example/cb#key={SECRET}", f"https://h.example/cb#key={REDACTED}"),
    (f"https://h.example/cb?x=1#access_token={SECRET}",
     f"https://h.example/cb?x=1#access_token={REDACTED}"),
    (f"https://h.example/cb#state=xyz&access_token={SECRET};expires_in=3600",
     f"https://h.example/cb#state=xyz&access_token={REDACTED};expires_in=3600"),
    (f"https://h.example/app#/callback?api_key={SECRET}",
     f"https://h.example/app#/callback?api_key={REDACTED}"),
    (f"/v1beta/models/m:streamGenerateContent?alt=sse;key={SECRET}",
     f"/v1beta/models/m:streamGenerateContent?alt=sse;key={REDACTED}"),
])
def test_a_credential_after_a_semicolon_or_in_the_fragment_is_redacted(url, expected):
    assert redact_url(url) == expected
    assert redact_urls(url) == expected  # (a whole string that is a target is one URL)
    assert redact_body({"url": url}) == {"url": expected}
    if url.startswith("https:"):  # (in running text only an absolute URL is found)
        assert redact_body({"see": f"open {url} now"}) == {"see": f"open {expected} now"}


@pytest.mark.parametrize("url", [
    "https://h.example/v1/m?a=1;b=2&c=3#section-2",
    "https://h.example/docs#oauth-setup",  # an anchor whose name holds a credential word
    "https://h.example/docs#a=1;b=2",
    "https://h.example/p%20a?q=x;y#frag",
])
def test_parameters_that_hold_no_credential_keep_their_exact_spelling(url):
    assert redact_url(url) == url


def test_a_request_target_with_only_a_fragment_is_redacted():
    assert redact_urls(f"/v1/chat#token={SECRET}") == f"/v1/chat#token={REDACTED}"


def test_extra_names_apply_to_the_fragment_and_after_a_semicolon():
    url = f"https://h.example/?a=1;mine={SECRET}#mine={SECRET}"
    assert redact_url(url, also=["mine"]) == (
        f"https://h.example/?a=1;mine={REDACTED}#mine={REDACTED}")


def test_no_credential_in_a_target_reaches_the_session_file(tmp_path):
    url = f"https://h.example/v1/chat?x=1;api_key={SECRET}#access_token={SECRET}"
    path = tmp_path / "s.jsonl"
    save_session(str(path), SessionHeader(source="proxy", request={"url": url}),
                 [Chunk(0, b"data: {}\n\n")], StreamEnd("clean"))
    saved = path.read_bytes()
    assert SECRET.encode() not in saved
    request = open_session(str(path)).header.request or {}
    assert request["url"] == (f"https://h.example/v1/chat?x=1;api_key={REDACTED}"
                              f"#access_token={REDACTED}")
