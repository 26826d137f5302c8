"""Redaction of the credentials an adversarial review found leaking: targets with no scheme and
no leading ``/`` in a header or in text, URLs inside JSON text (``\\/``, Go's ``\\u0026``), user
info of every shape, parameter lists hidden in a value, and the text and request shapes of
:mod:`test_redact_hostile` that still let a secret through. Each case leaked before its fix."""

from __future__ import annotations

import json

import pytest
from callscope.core.redact import REDACTED, redact_body, redact_headers, redact_text, redact_url
from callscope.core.redact_url import redact_urls
from hypothesis import given, settings
from hypothesis import strategies as st
from leak_check import LEAKED, leaks

SECRET = LEAKED


# -- 1. a target with no scheme and no leading "/" --------------------------------------------

@pytest.mark.parametrize("name, value", [
    ("Location", f"host.example/v1?key={SECRET}"),
    ("Location", f"./x?key={SECRET}"),
    ("Location", f"callback?access_token={SECRET}"),
    ("Location", f"?access_token={SECRET}"),
    ("Content-Location", f"../up?api_key={SECRET}&x=1"),
    ("Link", f"<p?key={SECRET}>; rel=next"),
    ("Link", f'<https://h/a?x=1>; rel=prev, <b?sig={SECRET}>; rel="next"'),
    ("Refresh", f"0;url=cb?token={SECRET}"),
    ("X-Forwarded-Uri", f"cb#access_token={SECRET}"),
])
def test_a_scheme_less_target_in_a_header_value_is_redacted(name, value):
    out = redact_headers({name: value})[name]
    assert not leaks(out), out
    assert REDACTED in out


def test_a_scheme_less_target_keeps_the_rest_of_the_value():
    assert (redact_headers({"Link": f"<p?key={SECRET}>; rel=next"})
            == {"Link": f"<p?key={REDACTED}>; rel=next"})
    assert (redact_headers({"Refresh": f"0;url=cb?token={SECRET}&x=1"})
            == {"Refresh": f"0;url=cb?token={REDACTED}&x=1"})


@pytest.mark.parametrize("text", [
    f"redirected to host.example/v1?key={SECRET} then",
    f"open callback?access_token={SECRET}",
    f"a body string ?sig={SECRET}",
])
def test_a_scheme_less_target_in_a_body_string_is_redacted(text):
    out = redact_body({"note": text})["note"]
    assert not leaks(out), out


@pytest.mark.parametrize("value", [
    "text/event-stream; charset=utf-8", "max-age=31536000; includeSubDomains",
    "Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101", 'attachment; filename="a?b.txt"',
    "application/json;q=0.9, */*;q=0.1", "<https://h/a?page=2>; rel=next",
])
def test_ordinary_header_values_keep_their_spelling(value):
    assert redact_headers({"X": value}) == {"X": value}


# -- 2. a URL inside JSON text ----------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    (f"https://x/y?a=1\\u0026key={SECRET}", f"https://x/y?a=1\\u0026key={REDACTED}"),
    (f"https:\\/\\/x\\/y?a=1\\u0026key={SECRET}\\u0026b=2",
     f"https:\\/\\/x\\/y?a=1\\u0026key={REDACTED}\\u0026b=2"),
    (f"/cb\\u003faccess_token\\u003d{SECRET}", f"/cb\\u003faccess_token\\u003d{REDACTED}"),
])
def test_json_escaped_separators_do_not_hide_a_pair(text, expected):
    assert redact_urls(text) == expected
    assert not leaks(redact_body({"m": f'{{"u":"{text}"}}'}))
    assert not leaks(redact_text(f'{{"u":"{text}"}}'))


def test_json_escaped_text_without_a_secret_keeps_its_spelling():
    text = '{"u":"https:\\/\\/x\\/y?a=1\\u0026b=2"}'
    assert redact_text(text) == text and redact_urls(text) == text


# -- 3. user info -----------------------------------------------------------------------------

@pytest.mark.parametrize("url, expected", [
    (f"https://{SECRET}@github.com/o/r.git", f"https://{REDACTED}@github.com/o/r.git"),
    (f"https://x-access-token:{SECRET}@github.com/", f"https://x-access-token:{REDACTED}@github.com/"),
    (f"//user:{SECRET}@host/x", f"//user:{REDACTED}@host/x"),
    (f"https://u:a/{SECRET}@h/p", f"https://u:{REDACTED}@h/p"),
    (f"https://u:a#{SECRET}@h/p", f"https://u:{REDACTED}@h/p"),
    (f"https://u:a?{SECRET}@h/p?q=1", f"https://u:{REDACTED}@h/p?q=1"),
    (f"https://u:p@{SECRET}@h/", f"https://u:{REDACTED}@h/"),
])
def test_every_shape_of_user_info_is_redacted(url, expected):
    assert redact_url(url) == expected
    assert redact_urls(f"see {url} now") == f"see {expected} now"


@pytest.mark.parametrize("text", [
    f"https:\\/\\/u:{SECRET}@h\\/x", f"https:\\/\\/{SECRET}@h", f"see //u:{SECRET}@h/",
    f"https://a/,https://u:{SECRET}@b/",
])
def test_user_info_in_text_is_redacted(text):
    assert not leaks(redact_text(text)), redact_text(text)
    assert not leaks(redact_body({"m": text}))


@pytest.mark.parametrize("url", [
    "https://h:8080/users/@me", "https://h/a@b", "https://[::1]:80/x", "mailto:a@b.example",
    "bob@example.com wrote //x/y",
])
def test_an_at_sign_that_is_no_user_info_is_kept(url):
    assert redact_urls(url) == url


# -- 4. a parameter list inside a value -------------------------------------------------------

@pytest.mark.parametrize("url", [
    f"https://h/?next=key%3D{SECRET}%3Ba%3D1",
    f"https://h/?state=key={SECRET}|https://x/",
    f"https://h/?key%3D{SECRET}",
    f"https://h/?a=1&api_key%3D{SECRET}",
    f"https://h/p;next=https%3A%2F%2Fo%2F%3Fkey%3D{SECRET}",
    f"https://h/p;next=key%3D{SECRET}/q",
    f"https://h/#next%3Dhttps%3A%2F%2Fo%2F%3Fkey%3D{SECRET}",
    f"https://h/#%2Fcb%3Faccess_token%3D{SECRET}",
    f"https://h/?next=%2F%2Fu%3A{SECRET}%40o%2F",
])
def test_a_parameter_list_hidden_in_a_value_is_redacted(url):
    out = redact_url(url)
    assert not leaks(out), out
    assert redact_url(out) == out


def test_a_decoded_list_keeps_its_other_pairs():
    assert (redact_url(f"https://h/?next=key%3D{SECRET}%3Ba%3D1&b=2")
            == f"https://h/?next=key%3D{REDACTED}%3Ba%3D1&b=2")


@pytest.mark.parametrize("url", [
    "https://h/?q=a%3Db", "https://h/#top%20x", "https://h/p;v=2/q?x=%2F", "https://h/?data=abc%3D%3D",
])
def test_encoded_values_without_a_credential_keep_their_spelling(url):
    assert redact_url(url) == url


# -- hostile runs ----------------------------------------------------------------------------

@pytest.mark.parametrize("unit", ["//a:b", "//a:b@", "a?", "?key%3D", ";a=%3B", "x=", "\\u0026",
                                  "\\/\\/u:", "@//", "a#b=", "?next=%25", "<p?k=1>;"])
def test_hostile_url_text_redacts_to_a_fixed_point(unit):
    """100 KB of each unit (their times, which must stay linear, are measured by
    ``bench/redact_bench.py``): redacting what came out changes nothing more."""
    text = (unit * (100_000 // len(unit) + 1))[:100_000]
    for redact in (redact_urls, redact_url, redact_text):
        out = redact(text)
        assert redact(out) == out


# -- 5. a query string a quote cut, one without its "?", a URL encoded whole -------------------

@pytest.mark.parametrize("text, expected", [
    (f"https://www.google.com/maps/embed/v1/place?q=Joe's+Diner&key={SECRET}",
     f"https://www.google.com/maps/embed/v1/place?q=Joe's+Diner&key={REDACTED}"),
    (f'https://h/v1/x?q="a"&key={SECRET}', f'https://h/v1/x?q="a"&key={REDACTED}'),
    (f"a=1&key={SECRET}", f"a=1&key={REDACTED}"),
    (f"a=1&db_password={SECRET}&sessionId={SECRET}",
     f"a=1&db_password={REDACTED}&sessionId={REDACTED}"),
    (f"https%3A%2F%2Fh%2F%3Fkey%3D{SECRET}", f"https%3A%2F%2Fh%2F%3Fkey%3D{REDACTED}"),
    (f"redirect=https%3A%2F%2Fh%2F%3Fkey%3D{SECRET}",
     f"redirect=https%3A%2F%2Fh%2F%3Fkey%3D{REDACTED}"),
    (f"https%3A%2F%2Fu%3A{SECRET}%40h%2Fx", f"https%3A%2F%2Fu%3A{REDACTED}%40h%2Fx"),
])
def test_a_query_the_url_rules_could_not_see_is_redacted(text, expected):
    assert redact_urls(text) == expected
    assert not leaks(redact_headers({"X-Original": text}))
    assert not leaks(redact_body({"m": text}))
    assert not leaks(redact_text(text))


@pytest.mark.parametrize("name", ["password", "pass", "passwd", "pwd", "db_password", "jwt"])
def test_a_password_parameter_in_a_url_is_redacted(name):
    url = f"https://h/db?user=a&{name}={SECRET}"
    assert redact_url(url) == f"https://h/db?user=a&{name}={REDACTED}"
    assert not leaks(redact_headers({"Location": url}))


@pytest.mark.parametrize("text, expected", [
    (f"[docs](https://h/x?key={SECRET}) and more", f"[docs](https://h/x?key={REDACTED}) and more"),
    (f"(see https://h/x?key={SECRET})", f"(see https://h/x?key={REDACTED})"),
    (f"https://en.wikipedia.org/wiki/Foo_(bar)?key={SECRET}",
     f"https://en.wikipedia.org/wiki/Foo_(bar)?key={REDACTED}"),
])
def test_the_text_around_a_url_keeps_its_parentheses(text, expected):
    assert redact_urls(text) == expected


@pytest.mark.parametrize("text", [
    "http://localhost:$PORT/@vite/client", "https://registry.npmjs.org:{port}/@scope/pkg",
    "100% sure & x=1", "f(a)(b))", "[a](b) and (c)", "a&b", "50%", "x=1&y=2",
    "https://h/a?page=2&sort=asc", "rock & roll = fun", "max_tokens=5&monkey=1",
    "a=1&tokens=3", "if(a&&b){key=1}else{key=0}", "Query like a=1&key_count=3",
    "x&y){token=1}",
])
def test_text_with_no_credential_keeps_its_spelling(text):
    assert redact_urls(text) == text


# -- 6. any punctuation around and inside a URL ------------------------------------------------

_PUNCT = "'\"()<>,!*[]{}|\\^`~$@:/.-_+%?#;&="
_AROUND = "ab ,.;:!?()[]{}<>\"'`\n\t=&/#"


@settings(max_examples=400, deadline=None)
@given(before=st.lists(st.tuples(st.sampled_from(["q", "page", "redirect", "state"]),
                                 st.text(alphabet="abc019" + _PUNCT, max_size=8)), max_size=3),
       after=st.lists(st.tuples(st.sampled_from(["x", "lang"]),
                                st.text(alphabet="abc019" + _PUNCT, max_size=8)), max_size=2),
       name=st.sampled_from(["key", "api_key", "access_token", "token", "sig", "password"]),
       sep=st.sampled_from(["&", ";"]), where=st.sampled_from(["?", "#"]),
       start=st.sampled_from(["https://h.example/v1/x", "/v1/x", "h.example/p", "", "//h/"]),
       prefix=st.text(alphabet=_AROUND, max_size=6), suffix=st.text(alphabet=_AROUND, max_size=6),
       json_escaped=st.booleans(),
       then=st.sampled_from(["", ",https://u:{}@h/", '","b":"https://u:{}@h/x?y=1',
                             "'//{}@h/"]))
def test_no_punctuation_around_or_inside_a_url_lets_its_credential_through(
        before, after, name, sep, where, start, prefix, suffix, json_escaped, then):
    """Other parameters' values hold any punctuation (a quote, a bracket, a backslash ends a
    run of URL characters in text), and the text around the URL too, maybe written as JSON
    with ``\\/`` and ``\\u0026``, maybe with a second URL right after it that holds a
    password: the credential never shows, and redacting again changes nothing."""
    pairs = [f"{n}={v}" for n, v in before] + [f"{name}={SECRET}"] + [f"{n}={v}" for n, v in after]
    text = f"{prefix}{start}{where}{sep.join(pairs)}{suffix}{then.format(SECRET)}"
    if json_escaped:
        text = json.dumps({"u": text}).replace("/", "\\/").replace("&", "\\u0026")
    for redact in (redact_text, redact_urls, lambda t: redact_headers({"X": t})["X"],
                   lambda t: redact_body({"m": t})["m"]):
        out = redact(text)
        assert not leaks(out), (text, out)
        assert redact(out) == out, (text, out)


def test_a_request_bodys_tool_definitions_are_kept_as_they_are():
    """The gate validates calls against them: a schema's enum, pattern or default that a text
    rule changed would change what a replay decides (the session's header keeps the same
    definitions verbatim anyway); the rest of the body is redacted."""
    tools = [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {
            "order": {"enum": ["sort=date&key=asc", "sort=date&key=desc"]},
            "q": {"type": "string", "pattern": "^[a-z]+(&token=[0-9]+)?$"}}}}}]
    body = {"model": "m", "tools": tools, "api_key": SECRET,
            "messages": [{"role": "user", "content": f"see https://h/?key={SECRET}"}]}
    out = redact_body(body)
    assert out["tools"] == tools and not leaks(out)
    as_text = redact_body(json.dumps(body))
    assert json.loads(as_text)["tools"] == tools and not leaks(as_text)
    converse = {"toolConfig": {"tools": [{"toolSpec": {"name": "f", "inputSchema": {"json": {
        "properties": {"u": {"default": "a=1&sig=abc"}}}}}}]}, "password": SECRET}
    assert redact_body(converse) == {**converse, "password": REDACTED}


@pytest.mark.parametrize("value", [f"Bearer {SECRET}", f"basic {SECRET}", f"  Token {SECRET}",
                                   f"Digest username=a, response={SECRET}", f"ApiKey {SECRET}"])
def test_a_header_of_any_name_that_carries_an_auth_scheme_is_redacted(value):
    assert redact_headers({"X-Upstream-Credentials-For": value}) == {
        "X-Upstream-Credentials-For": REDACTED}


@pytest.mark.parametrize("value", ["Token", "bearer", "text/html; q=0.9", "tokenizer v2"])
def test_a_header_that_only_names_a_scheme_keeps_its_value(value):
    assert redact_headers({"X-Info": value}) == {"X-Info": value}


def test_every_url_after_a_url_in_compact_json_text_is_judged_whole():
    """In compact JSON every run of URL characters follows the last with no space: a later
    URL is still read by all the rules, not only as the first one's rest."""
    text = ('{"a":"https://h/?x=1","b":"https://u:' + SECRET + '@host/","c":"/p;key=' + SECRET
            + '","d":"https%3A%2F%2Fh%2F%3Fkey%3D' + SECRET + '"}')
    for redact in (redact_urls, redact_text):
        out = redact(text)
        assert not leaks(out) and out.count(REDACTED) == 3, out
