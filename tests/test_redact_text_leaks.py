"""Redaction of the credentials a second probe found leaking: body member names the rules
missed, a credential's ``value`` member, Postman's key/value objects, a body given as bytes,
the request's cookies, and (in text) unclosed quotes and lists, command-line flags, comparison
operators, YAML block scalars, percent-encoded names and values holding ``,`` or ``&``. Each case
leaked before its fix; the cases that must keep their spelling are pinned beside them."""

from __future__ import annotations

import json
from urllib.parse import unquote_plus

import pytest
from callscope.core.redact import (
    REDACTED,
    redact_body,
    redact_request,
    secret_member_name,
)

SECRET = "sk-LEAKED9913"


def leaks(text: object) -> bool:
    """Whether the secret shows in ``text`` or in any percent-decoding of it."""
    seen = str(text)
    for _ in range(12):
        if SECRET in seen:
            return True
        decoded = unquote_plus(seen)
        if decoded == seen:
            return False
        seen = decoded
    return True


# -- 1. body member names --------------------------------------------------------------------

@pytest.mark.parametrize("name", ["pass", "pwd", "jwt", "authKey", "app_key", "api_key_2",
                                  "license_key", "sessionId", "session_id", "JSESSIONID",
                                  "consumer_key", "password2"])
def test_a_credential_member_name_the_rules_missed_is_redacted(name):
    assert secret_member_name(name)
    assert redact_body({name: SECRET, "n": 1}) == {name: REDACTED, "n": 1}


def test_a_list_of_api_keys_goes_whole():
    assert redact_body({"apiKeys": [SECRET, "sk-other"]}) == {"apiKeys": REDACTED}


@pytest.mark.parametrize("name", ["max_tokens", "token_count", "thoughtSignature", "eos_token",
                                  "key", "keys", "cache_key", "idempotency_key", "session",
                                  "passage", "bypass", "author", "user"])
def test_names_next_to_the_new_rules_stay(name):
    assert not secret_member_name(name)
    assert redact_body({name: "kept"}) == {name: "kept"}


# -- 2. a credential's value member, Postman's key/value -------------------------------------

def test_the_value_member_of_an_object_under_a_credential_name_is_redacted():
    assert redact_body({"api_key": {"value": SECRET}}) == {"api_key": {"value": REDACTED}}
    postman = {"auth": {"type": "apikey",
                        "apikey": [{"key": "value", "value": SECRET, "type": "string"}]}}
    assert not leaks(redact_body(postman))


def test_a_schema_under_a_credential_name_is_still_walked():
    schema = {"api_key": {"type": "string", "description": "the key", "default": "none"},
              "token": {"type": "object", "properties": {"value": {"type": "string"}}}}
    assert redact_body(schema) == schema


@pytest.mark.parametrize("body, expected", [
    ([{"key": "api_key", "value": SECRET}], [{"key": "api_key", "value": REDACTED}]),
    ([{"key": "x-api-key", "value": SECRET, "type": "text"}],
     [{"key": "x-api-key", "value": REDACTED, "type": "text"}]),
    ({"header": [{"key": "Authorization", "value": f"Bearer {SECRET}"}]},
     {"header": [{"key": "Authorization", "value": REDACTED}]}),
])
def test_a_postman_key_value_object_loses_a_credential_value(body, expected):
    assert redact_body(body) == expected


def test_a_postman_key_value_object_without_a_credential_stays():
    body = [{"key": "Content-Type", "value": "application/json"}, {"key": "n", "value": 3}]
    assert redact_body(body) == body


# -- 3. a body given as bytes ----------------------------------------------------------------

@pytest.mark.parametrize("body, expected", [
    (f'{{"api_key":"{SECRET}"}}'.encode(), f'{{"api_key":"{REDACTED}"}}'),
    (bytearray(f'{{"api_key": "{SECRET}", "n": 1}}'.encode()),
     f'{{"api_key":"{REDACTED}","n":1}}'),
    (f"api_key={SECRET}&model=m".encode(), f"api_key={REDACTED}&model=m"),
    (b'{"model": "m"}', '{"model": "m"}'),
])
def test_a_body_given_as_bytes_is_redacted_as_its_text(body, expected):
    assert redact_body(body) == expected


def test_a_bytes_body_that_is_no_utf8_keeps_every_byte_visible_and_loses_the_secret():
    out = redact_body(b"\xff\xfe api_key=" + SECRET.encode() + b" caf\xc3\xa9")
    assert out == f"\\xff\\xfe api_key={REDACTED} café"
    json.dumps(out)  # text a JSON session file can hold


def test_bytes_inside_a_body_are_text_and_judged_by_their_member():
    assert (redact_body({"api_key": SECRET.encode(), "m": b"ok"})
            == {"api_key": REDACTED, "m": "ok"})


# -- 4. the request's cookies and its other members ------------------------------------------

@pytest.mark.parametrize("cookies, expected", [
    ([{"name": "sid", "value": SECRET}], [{"name": "sid", "value": REDACTED}]),
    ({"sid": SECRET}, {"sid": REDACTED}),
    ([["sid", SECRET]], [["sid", REDACTED]]),
    (f"sid={SECRET}", REDACTED),
])
def test_the_request_cookies_lose_every_value(cookies, expected):
    assert redact_request({"cookies": cookies}) == {"cookies": expected}


def test_the_request_query_list_is_judged_by_name():
    request = {"queryString": [{"name": "key", "value": SECRET}, {"name": "alt", "value": "sse"}],
               "params": [["api_key", SECRET], ["alt", "sse"]]}
    assert redact_request(request) == {
        "queryString": [{"name": "key", "value": REDACTED}, {"name": "alt", "value": "sse"}],
        "params": [["api_key", REDACTED], ["alt", "sse"]]}


def test_a_request_member_named_as_a_credential_goes_whole():
    assert redact_request({"api_key": SECRET, "method": "POST"}) == {"api_key": REDACTED,
                                                                    "method": "POST"}
    assert redact_request({"auth": {"password": SECRET, "type": "basic"}}) == {
        "auth": {"password": REDACTED, "type": "basic"}}
