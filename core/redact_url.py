"""Credential redaction in names and URLs: which header or query parameter names hold a
credential, and URLs (absolute, relative request targets, either inside text) with those values
replaced by ``[REDACTED]``. The body and header rules build on this (:mod:`.redact`).

A URL is redacted wherever a credential can sit in it:

* a password in the user info (``https://user:PASS@host``);
* a path segment's matrix parameters (``/v1/models;key=SECRET/x``);
* the query and the ``#fragment`` (OAuth's implicit flow returns ``#access_token=...``), the
  pairs separated by ``&`` or ``;``;
* a URL, a request target or a parameter list held in a parameter's value, raw or
  percent-encoded (``?next=https%3A%2F%2Fo%2F%3Fkey%3DSECRET``), judged by the same rules.

The rest of the URL keeps its exact spelling; a value that held a secret under percent-encoding
is written back percent-encoded, with ``[REDACTED]`` in place of the secret.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from urllib.parse import quote, unquote, unquote_plus

REDACTED = "[REDACTED]"
SECRET_HEADERS = frozenset({
    "authorization", "proxy-authorization", "x-api-key", "x-goog-api-key", "api-key",
    "cookie", "set-cookie",
})
SECRET_QUERY_PARAMS = frozenset({"key", "api_key", "api-key", "apikey", "access_token", "sig"})
SECRET_NAME_WORDS = ("auth", "key", "token", "secret", "signature", "cookie", "session",
                     "credential")
"""A header or query parameter whose name contains one of these (in any case) holds a
credential: gateways add their own (``Helicone-Auth``, ``x-portkey-api-key``,
``cf-aig-authorization``, ``x-amz-security-token``, ``X-Amz-Signature``), and a name list
would always miss the next one. Two exceptions: ``tokens`` (plural) names a count in rate-limit
headers (``x-ratelimit-remaining-tokens``), and callscope's own ``x-callscope-*`` /
``callscope-*`` names (a session to serve, a fault) carry no secret."""

MAX_NESTED_URL_DEPTH = 8
"""How many levels of URL inside a parameter value (each maybe percent-encoded once more) are
looked into. A value nested deeper is replaced whole: it cannot be shown to hold no secret, and
no real redirect chain nests this far."""


@cache
def _secret_word() -> re.Pattern[str]:
    """The name words as one pattern, compiled on first use: reading a session never redacts,
    and the compile is part of every command's start-up otherwise."""
    return re.compile("|".join(w if w != "token" else "token(?!s)" for w in SECRET_NAME_WORDS))


def secret_name(name: str, also: Iterable[str] = ()) -> bool:
    """Whether a header or query parameter named ``name`` holds a credential (see
    :data:`SECRET_NAME_WORDS`); ``also``: more names, compared without case."""
    lower = name.lower()
    if lower in SECRET_HEADERS or lower in SECRET_QUERY_PARAMS:
        return True
    if any(lower == extra.lower() for extra in also):
        return True
    if lower.startswith(("x-callscope-", "callscope-")):
        return False
    return _secret_word().search(lower) is not None


def redact_url(url: str, also: Iterable[str] = ()) -> str:
    """The URL with its credentials redacted (see the module's rules); ``also``: more parameter
    names that hold one. Works on the text, so the rest keeps its exact spelling."""
    return _redact_url(url, tuple(also), 0)


def _redact_url(url: str, also: tuple[str, ...], depth: int) -> str:
    rest, hash_, fragment = url.partition("#")
    base, question, query = rest.partition("?")
    scheme, sep, after = base.partition("://")
    if sep:
        authority, slash, path = after.partition("/")
        userinfo, at, host = authority.rpartition("@")
        if at and ":" in userinfo:
            authority = userinfo.split(":", 1)[0] + ":" + REDACTED + "@" + host
        base = f"{scheme}://{authority}{slash}{_redact_matrix(path, also)}"
    else:
        base = _redact_matrix(base, also)
    if question:
        base = f"{base}?{_redact_params(query, also, depth, bare=True)}"
    if hash_:
        # A fragment is a parameter list only where it has a ``name=value``: a bare
        # ``#oauth-setup`` is an anchor, kept even when its name holds a credential word.
        fragment = _redact_params(fragment, also, depth, bare=False)
    return f"{base}{hash_}{fragment}"


@cache
def _matrix_param() -> re.Pattern[str]:
    """A path segment's ``;name=value`` parameter (RFC 3986 leaves ``;`` in a segment to the
    server, and matrix-parameter servers read it as a pair)."""
    return re.compile(r";([^;/=]*)=([^;/]*)")


def _redact_matrix(path: str, also: tuple[str, ...]) -> str:
    if ";" not in path:
        return path
    return _matrix_param().sub(
        lambda m: f";{m.group(1)}={REDACTED}" if secret_name(unquote(m.group(1)), also)
        else m.group(0), path)


def _redact_params(params: str, also: tuple[str, ...], depth: int, *, bare: bool) -> str:
    """``name=value`` parameters separated by ``&`` or ``;``, each credential's value redacted,
    every other value looked into (:func:`_redact_value`) and every separator kept; ``bare``: a
    name with no ``=`` is redacted too (``?apikey``)."""
    parts = re.split(r"([&;])", params)
    for i in range(0, len(parts), 2):  # (the odd items are the separators)
        name, equals, value = parts[i].partition("=")
        if (equals or bare) and secret_name(unquote_plus(name), also):
            parts[i] = f"{name}={REDACTED}"
        elif equals and value:
            parts[i] = f"{name}={_redact_value(value, also, depth + 1)}"
    return "".join(parts)


def _redact_value(value: str, also: tuple[str, ...], depth: int) -> str:
    """A parameter's value with the credentials of a URL, request target or parameter list it
    holds redacted, raw (``next=/login?key=S``) or percent-encoded (``next=%2Flogin%3Fkey%3DS``,
    decoded and judged again, so each level of encoding is one more level here)."""
    if depth > MAX_NESTED_URL_DEPTH:
        return REDACTED if _holds_params(unquote_plus(value)) else value
    out = value
    if "?" in value or "#" in value or ";" in value or "://" in value:
        out = _redact_url(value, also, depth)
    elif "=" in value:
        out = _redact_params(value, also, depth, bare=False)
    if "%" in out or "+" in out:  # a secret may sit both raw and encoded in one value
        decoded = unquote_plus(out)
        if decoded != out:
            redacted = _redact_value(decoded, also, depth + 1)
            if redacted != decoded:
                # Written back encoded, as it came; the marker's brackets stay readable.
                out = quote(redacted, safe="[]", errors="surrogatepass")  # (text may hold
                # a lone surrogate: it is written as its bytes, never an exception)
    return out


def _holds_params(text: str) -> bool:
    """Whether ``text`` may hold a credential a URL carries (a parameter, a user info)."""
    return any(c in text for c in "?#;=%@:")


@cache
def _url_in_text() -> re.Pattern[str]:
    """An absolute URL inside text (also JSON-escaped, ``https:\\/\\/``), up to a space, a
    quote or an angle bracket. A scheme starts where a run of scheme characters does, so a
    long run is read once, not again from each of its characters."""
    return re.compile(r"""(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*:(?://|\\/\\/)"""
                      r"""(?:[^\s"'<>\\]|\\/)+""")


@cache
def _target_in_text() -> re.Pattern[str]:
    """A relative request target inside text (``GET /v1/x?key=S``, JSON-escaped ``\\/v1``): a
    ``/`` that does not continue a word, a number, a path or a URL, then up to a space, a quote
    or an angle bracket, holding a query, a fragment or a path parameter. Prose with no such
    ``/`` run (``is x=1? yes``) is never touched. The pattern takes the whole run, and the
    caller keeps a run without ``?``, ``#`` or ``;`` as it is: a pattern that required one
    would read a long run again from each ``/`` in it."""
    return re.compile(r"""(?<![\w/:.%\\-])(?:/|\\/)(?:[^\s"'<>\\]|\\/)*""")


def redact_urls(text: str, also: Iterable[str] = ()) -> str:
    """``text`` with every URL and every relative request target in it redacted
    (:func:`redact_url`); a whole string that is a request target is one URL. The rest keeps
    its exact spelling."""
    if "/" not in text:
        return text
    also = tuple(also)
    if text.startswith("/") and not any(c.isspace() for c in text):
        return _target(text, also)
    if "//" in text or "\\/\\/" in text:
        text = _url_in_text().sub(lambda m: redact_url(m.group(0), also), text)
    if any(c in text for c in "?#;"):
        text = _target_in_text().sub(lambda m: _target(m.group(0), also), text)
    return text


def _target(run: str, also: tuple[str, ...]) -> str:
    return redact_url(run, also) if any(c in run for c in "?#;") else run
