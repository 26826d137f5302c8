"""Credential redaction: HTTP headers and URLs with their secrets replaced by ``[REDACTED]``.

Used wherever a request or response is recorded (session headers, HAR imports, the proxy and
live logs), so a saved file never carries an API key. Works on plain names and text; it knows
nothing about sessions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any
from urllib.parse import unquote_plus

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
_SECRET_NAMES = (
    ("api", "key"), ("x", "api", "key"), ("x", "goog", "api", "key"), ("private", "key"),
    ("access", "token"), ("refresh", "token"), ("id", "token"), ("authorization",),
    ("client", "secret"), ("password",), ("secret",),
)
"""Names of request body members and text pairs that hold credentials, as words (joined with
or without ``-`` / ``_``, in any case). Not ``key`` or ``token`` alone: a body carries the
conversation, whose tool arguments name keys of their own."""
SECRET_BODY_MEMBERS = frozenset("".join(words) for words in _SECRET_NAMES)
"""Body members, compared lower-cased without ``-`` and ``_`` (``api_key``, ``apiKey``)."""
_NAME = "|".join(r"\b" + "[_-]?".join(words) for words in _SECRET_NAMES)


@cache
def _secret_in_text() -> re.Pattern[str]:
    """A credential pair in text, compiled on first use (as :func:`_secret_word`)."""
    return re.compile(
        rf"""(?i)((?:{_NAME})["']?\s*[:=]\s*)"""  # the name and its separator, kept
        r"""("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|\[[^\]]*\]|"""  # a quoted value or a list, whole
        r"""(?:(?:bearer|basic|token)\s+)?[^"'&,}\s]+)""")  # or a bare one, with its scheme


def redact_headers(
    headers: Mapping[str, str] | Iterable[tuple[str, str]] | Iterable[Mapping[str, str]],
    also: Iterable[str] = (),
) -> dict[str, str]:
    """Headers as a dict, credential values (:func:`secret_name`, ``also`` more names) replaced
    by ``[REDACTED]``. Accepts a mapping, or (name, value) pairs, or HAR's ``{"name", "value"}``
    objects; repeated names are joined with ", " as HTTP allows."""
    also = tuple(also)
    if isinstance(headers, Mapping):
        items: Iterable[Any] = headers.items()
    elif isinstance(headers, list | tuple):
        items = headers
    else:  # a malformed session header (true, 3, "x"): nothing to keep
        return {}
    out: dict[str, str] = {}
    for item in items:
        if isinstance(item, Mapping):  # HAR; unpacking a dict would yield its keys
            name, value = str(item.get("name", "")), str(item.get("value", ""))
        elif isinstance(item, list | tuple) and len(item) == 2:
            name, value = str(item[0]), str(item[1])
        else:
            continue  # not a header: a re-save drops it rather than failing
        if secret_name(name, also):
            value = REDACTED
        out[name] = f"{out[name]}, {value}" if name in out else value
    return out


def redact_url(url: str, also: Iterable[str] = ()) -> str:
    """The URL with a password and the values of credential query parameters
    (:func:`secret_name`, ``also`` more names) redacted. Works on the text, so the rest of the
    URL keeps its exact spelling."""
    also = tuple(also)
    rest, hash_, fragment = url.partition("#")
    base, question, query = rest.partition("?")
    scheme, sep, after = base.partition("://")
    if sep:
        authority, slash, path = after.partition("/")
        userinfo, at, host = authority.rpartition("@")
        if at and ":" in userinfo:
            userinfo = userinfo.split(":", 1)[0] + ":" + REDACTED
            base = f"{scheme}://{userinfo}@{host}{slash}{path}"
    if question:
        parts = query.split("&")
        for i, part in enumerate(parts):
            name = part.split("=", 1)[0]
            if secret_name(unquote_plus(name), also):
                parts[i] = f"{name}={REDACTED}"
        base = f"{base}?{'&'.join(parts)}"
    return f"{base}{hash_}{fragment}"


def redact_body(body: Any) -> Any:
    """A JSON request body with the values of credential members (:data:`SECRET_BODY_MEMBERS`,
    at any depth) replaced by ``[REDACTED]``; a copy, the input is left as it is. Only a string,
    or a list of strings, is a credential: an object under such a name is walked (a tool's
    JSON Schema may well define a property named ``api_key``; it must stay a schema)."""
    if isinstance(body, Mapping):
        return {k: REDACTED if _secret_member(k, v) else redact_body(v) for k, v in body.items()}
    if isinstance(body, list):
        return [redact_body(v) for v in body]
    return body


def _secret_member(name: Any, value: Any) -> bool:
    return (isinstance(name, str)
            and name.lower().replace("-", "").replace("_", "") in SECRET_BODY_MEMBERS
            and (isinstance(value, str) or (isinstance(value, list) and bool(value)
                                            and all(isinstance(v, str) for v in value))))


def redact_text(text: str) -> str:
    """A body kept as text (not JSON, or too deep to keep as JSON) with credential-looking
    ``name: value`` / ``name=value`` pairs redacted: a quoted value keeps its quotes, a list
    and a scheme (``Bearer x``) go whole."""
    def value(m: re.Match[str]) -> str:
        found = m.group(2)
        quote = found[0] if found[0] in "\"'" else ""
        return m.group(1) + quote + REDACTED + quote
    return _secret_in_text().sub(value, text)
