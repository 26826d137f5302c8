"""Redaction of credentials in the URL shapes that hide them from a flat query split: a URL or
parameter list nested in a parameter's value (raw or percent-encoded, at any level of
encoding), a ``;name=value`` path parameter, and a relative request target inside running text
(a provenance line, a log message). Prose that only looks like a query stays as it was."""

from __future__ import annotations

from urllib.parse import quote, unquote_plus

import pytest
from callscope.core.redact import REDACTED, redact_body, redact_headers, redact_text, redact_url
from callscope.core.redact_url import MAX_NESTED_URL_DEPTH, redact_urls
from callscope.core.session import Chunk, SessionHeader, StreamEnd, open_session, save_session
from hypothesis import given, settings
from hypothesis import strategies as st
from leak_check import leaks as shows

SECRET = "sk-NESTED7731"


def leaks(text: str) -> bool:
    return shows(text, SECRET)


# -- 1. a URL inside a parameter's value ----------------------------------------------------

NESTED = [
    f"https://h/a?next=https%3A%2F%2Fo%2F%3Fkey%3D{SECRET}",
    f"https://h/a?next=https://o/?key={SECRET}",
    f"https://h/a?next=https%253A%252F%252Fo%252F%253Fkey%253D{SECRET}&x=1",
    f"https://h/a?next=%2Flogin%3Fapi_key%3D{SECRET}",
    f"https://h/a?next=/login?token={SECRET}",
    f"https://h/a?state=access_token%3D{SECRET}%26x%3D1",
    f"https://h/a#next=https%3A%2F%2Fo%2F%23access_token%3D{SECRET}",
    f"/v1/x?redirect_uri=https%3A%2F%2Fo%2Fcb%3Bsig%3D{SECRET}",
    f"https://h/a?next=https%3A%2F%2Fu%3A{SECRET}%40o%2F",
    f"https://h/a?next=https%3A%2F%2Fo%2Fp%3Bkey%3D{SECRET}",
]


@pytest.mark.parametrize("url", NESTED)
def test_a_credential_in_a_url_nested_in_a_parameter_value_is_redacted(url):
    out = redact_url(url)
    assert not leaks(out), out
    assert REDACTED in unquote_plus(out) or REDACTED in out


def test_a_nested_value_is_written_back_in_the_encoding_it_came_in():
    assert (redact_url(f"https://h/a?next=https%3A%2F%2Fo%2F%3Fkey%3D{SECRET}&x=1")
            == f"https://h/a?next=https%3A%2F%2Fo%2F%3Fkey%3D{REDACTED}&x=1")
    assert (redact_url(f"https://h/a?next=https://o/?key={SECRET}")
            == f"https://h/a?next=https://o/?key={REDACTED}")


@pytest.mark.parametrize("url", [
    "https://h/a?next=https%3A%2F%2Fo%2F%3Fq%3Dcats&data=abc%3D%3D&q=a+b",
    "https://h/a?next=/login?page=2;lang=pt",
    "https://h/v1/models;version=3/x?y=1",
    "/v1/x?q=%2F%3F%3D",
])
def test_a_url_without_a_credential_keeps_its_exact_spelling(url):
    assert redact_url(url) == url


def test_a_value_nested_past_the_depth_limit_is_replaced_whole():
    value = f"key={SECRET}"
    for _ in range(MAX_NESTED_URL_DEPTH + 4):
        value = quote(f"https://o/?next={value}", safe="")
    out = redact_url(f"https://h/a?next={value}")
    assert not leaks(out)
    assert out.startswith("https://h/a?next=")


# -- 2. path parameters ---------------------------------------------------------------------

@pytest.mark.parametrize("url", [
    f"https://h/v1/models;key={SECRET}/x",
    f"https://h/v1/models;key={SECRET}?alt=sse",
    f"/v1/models;a=1;api_key={SECRET}",
    f"https://h/v1/models;x-api-key={SECRET}#top",
    f"https://h/v1/m;%6Bey={SECRET}",
])
def test_a_credential_path_parameter_is_redacted(url):
    out = redact_url(url)
    assert not leaks(out), out
    assert REDACTED in out


def test_only_the_path_parameter_value_is_replaced():
    assert (redact_url(f"https://h/v1/models;v=2;key={SECRET}/x?alt=sse")
            == f"https://h/v1/models;v=2;key={REDACTED}/x?alt=sse")


# -- 3. a relative request target inside text -----------------------------------------------

@pytest.mark.parametrize("text", [
    f"recorded from GET /v1/x?key={SECRET} by the proxy",
    f"POST /v1/models;key={SECRET} HTTP/1.1",
    f'upstream said: "/v1/x#access_token={SECRET}"',
    f"(see /v1/x?a=1&apikey={SECRET})",
    f"escaped \\/v1\\/x?key={SECRET}\\\" end",
    f"target=/v1/x?next=%2Fp%3Fkey%3D{SECRET}",
])
def test_a_relative_target_in_text_is_redacted(text):
    out = redact_text(text)
    assert not leaks(out), out
    assert REDACTED in out


@pytest.mark.parametrize("text", [
    "is x=1? yes", "and/or? maybe", "a/b 3/4? fine", "ratio 1/2;k=3", "see /docs#intro",
    "http is not a URL here? right", "path /v1/x?page=2 then /v2",
])
def test_prose_that_looks_like_a_query_is_untouched(text):
    assert redact_text(text) == text
    assert redact_urls(text) == text


def test_the_free_text_members_and_a_header_value_are_redacted_in_a_session_file(tmp_path):
    header = SessionHeader(
        protocol="openai-responses", source=f"GET /v1/x?key={SECRET}",
        provenance=f"proxy, upstream https://h/a?next=https%3A%2F%2Fo%2F%3Fkey%3D{SECRET}",
        request={"url": f"https://h/v1/models;key={SECRET}",
                 "headers": {"Referer": f"/back?next=/p?token={SECRET}"},
                 "body": {"note": f"call GET /v1/x?api_key={SECRET} later"}})
    path = tmp_path / "s.jsonl"
    save_session(str(path), header, [Chunk(0.0, b"data: {}\n\n")], StreamEnd("clean"))
    assert not leaks(path.read_text())
    assert open_session(str(path)).header.request["url"] == f"https://h/v1/models;key={REDACTED}"


def test_header_and_body_strings_use_the_same_rules():
    assert not leaks(str(redact_headers({"Location": f"/cb?next=%2Fp%3Fkey%3D{SECRET}"})))
    assert not leaks(str(redact_body({"u": f"see /v1/x;key={SECRET} now"})))


# -- 4. any nesting, any encoding -----------------------------------------------------------

SECRET_NAMES = st.sampled_from(["key", "api_key", "access_token", "x-goog-api-key", "sig",
                                "Helicone-Auth", "%6Bey"])
WRAPPERS = st.sampled_from(["https://o/p?a=1&{}", "/p?{}", "https://o/#{}", "/p;{}",
                            "https://o/cb?next={}"])


@settings(max_examples=300, deadline=None)
@given(name=SECRET_NAMES, chain=st.lists(st.tuples(WRAPPERS, st.booleans()), max_size=12),
       in_text=st.booleans())
def test_no_nesting_or_encoding_of_a_credential_reaches_the_output(name, chain, in_text):
    inner = f"{name}={SECRET}"
    for wrapper, encoded in chain:
        inner = wrapper.format(inner)
        inner = f"next={quote(inner, safe='') if encoded else inner}"
    url = f"https://h/start?{inner}"
    out = redact_text(f"went to {url} then back") if in_text else redact_url(url)
    assert not leaks(out), out
    assert redact_url(out) == out or in_text  # redacting again changes nothing


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="bdfhlmnpqruvxz0123456789 /?=&;#:.\"'", max_size=60))
def test_text_without_a_credential_name_is_never_changed(text):
    assert redact_text(text) == text


# -- 5. a credential of digits ----------------------------------------------------------------

def test_a_number_under_a_credential_name_is_redacted_and_counts_stay():
    body = {"passcode": 493817, "account_key": 7.5, "pins": [1234, 5678], "api_key": True,
            "max_tokens": 512, "token_count": 3, "n": 2,
            "extra": [{"name": "x-api-key", "value": 99887766}]}
    assert redact_body(body) == {
        "passcode": REDACTED, "account_key": REDACTED, "pins": [1234, 5678], "api_key": True,
        "max_tokens": 512, "token_count": 3, "n": 2,
        "extra": [{"name": "x-api-key", "value": REDACTED}]}


def test_a_lone_surrogate_beside_an_encoded_secret_is_written_not_raised():
    """Text may carry a lone surrogate (a JSON ``"\\ud800"`` the fallback reader accepts)."""
    for out in (redact_url(f"https://h/?next=%3Fkey%3D{SECRET}%26x%3D\ud800"),
                str(redact_headers({"Location": f"/cb?next=%3Fkey%3D{SECRET}%26x%3D\udc80"})),
                redact_text(f"GET /cb?next=%3Fkey%3D{SECRET}%26x%3D\udc80 HTTP/1.1"),
                str(redact_body({"m": f"/cb?next=%3Fkey%3D{SECRET}%26x%3D\udc80"}))):
        assert not leaks(out) and REDACTED in out


def test_a_password_nested_past_the_depth_limit_is_replaced_whole():
    value = f"https://u:{SECRET}@h/"
    for _ in range(MAX_NESTED_URL_DEPTH + 1):
        value = quote(value, safe="")
    assert not leaks(redact_url(f"https://h/?next={value}"))
