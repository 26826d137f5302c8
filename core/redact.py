"""Credential redaction: HTTP headers, URLs and request bodies with their secrets replaced by
``[REDACTED]``.

Used wherever a request or response is recorded (session headers, HAR imports, the proxy and
live logs), so a saved file never carries an API key. Works on plain names, values and text; it
knows nothing about sessions.

Rules by shape, whatever the type a (possibly hostile) input gives a member:

* headers (:func:`redact_headers`): a mapping, (name, value) pairs, HAR's ``{"name", "value"}``
  objects, ``"Name: value"`` strings, or one string holding such lines (a header block); an
  item that is none of these is not kept, and a ``callscope-redaction-note`` entry says so.
  Anything else (``3``, ``true``) becomes that note alone. Values that are not strings are
  written as text, redacted first.
* URLs (:func:`redact_url`, :func:`redact_urls`): every string anywhere in a body, a header
  value or text has the URLs in it redacted, so a URL in a list or object is too.
* bodies (:func:`redact_body`): members named by :data:`SECRET_MEMBER_RULES`; a string holding
  JSON is redacted as the parsed JSON, any other string as text (:func:`redact_text`).
* a whole request member (:func:`redact_request`): each member by its shape, whatever its type.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from typing import Any

import orjson

from .redact_url import (
    REDACTED,
    SECRET_HEADERS,
    SECRET_NAME_WORDS,
    SECRET_QUERY_PARAMS,
    redact_url,
    redact_urls,
    secret_name,
)

__all__ = [
    "HEADERS_NOTE", "REDACTED", "SECRET_HEADERS", "SECRET_MEMBER_RULES", "SECRET_NAME_WORDS",
    "SECRET_QUERY_PARAMS", "redact_body", "redact_headers", "redact_request", "redact_text",
    "redact_url", "redact_urls", "secret_member_name", "secret_name",
]

HEADERS_NOTE = "callscope-redaction-note"
"""The header entry that says what of a malformed header member was not kept (a ``callscope-``
name: never redacted itself)."""


# -- body members: the one name rule --------------------------------------------------------

SECRET_MEMBER_RULES: tuple[tuple[str, str], ...] = (
    (r".*apikey",
     "An API key under any vendor prefix: api_key, apiKey, x-api-key, x-goog-api-key."),
    (r".*token",
     "A bearer, OAuth or session token: token, access_token, id_token, refresh_token, "
     "session_token, aws_session_token (a count is plural or suffixed: max_tokens, "
     "token_count)."),
    (r".*secret.*",
     "A shared secret: secret, client_secret, aws_secret_access_key, secretKey."),
    (r".*pass(word|wd|phrase|code)",
     "A password or passphrase: password, passwd, db_password, passphrase."),
    (r".*(private|privkey|access|account|session|signing|encryption|master|subscription)key(id)?",
     "A key that authenticates or signs: private_key, access_key, aws_access_key_id."),
    (r".*auth(orization)?",
     "An Authorization value or an auth member: authorization, proxy-authorization, auth."),
    (r".*credentials?",
     "Credentials by name: credential, credentials, google_credentials."),
    (r".*signature|sig",
     "A request signature: signature, x-amz-signature, sig."),
    (r".*cookies?",
     "Cookie values carry sessions: cookie, set-cookie, cookies."),
)
"""Body members (and ``name: value`` pairs in text) that hold credentials: one entry per rule, a
pattern matched against the whole name lower-cased with ``-``, ``_``, ``.`` and spaces removed
(``api_key``, ``apiKey``, ``API-KEY`` are one name), and the reason. Not ``key`` alone: a body
carries the conversation, whose tool arguments name keys of their own."""

NOT_SECRET_MEMBER_RULES: tuple[tuple[str, str], ...] = (
    (r"(bos|eos|pad|unk|sep|cls|mask)token",
     "A tokenizer's special token is text such as </s>, not a credential."),
    (r"thoughtsignature",
     "Gemini's thoughtSignature tags the model's own reasoning and must be sent back as it was."),
)
"""Names the rules above match that hold no credential, with the reason."""

REASONING_SIGNATURE_BESIDE = ("thinking", "text")
"""A ``signature`` member beside one of these string members (Anthropic's thinking block,
Bedrock's reasoningText) is the provider's tag on that reasoning, not a credential: it is sent
back verbatim in the next turn, and a resent request needs it."""

_SEPARATORS = str.maketrans("", "", "-_. ")


@cache
def _member_rules() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The two tables as patterns, compiled on first use (as :func:`_secret_word`)."""
    def joined(rules: tuple[tuple[str, str], ...]) -> re.Pattern[str]:
        return re.compile("|".join(f"(?:{pattern})" for pattern, _ in rules))
    return joined(SECRET_MEMBER_RULES), joined(NOT_SECRET_MEMBER_RULES)


def secret_member_name(name: str) -> bool:
    """Whether a body member (or a text pair) named ``name`` holds a credential
    (:data:`SECRET_MEMBER_RULES`, less :data:`NOT_SECRET_MEMBER_RULES`)."""
    plain = name.lower().translate(_SEPARATORS)
    secret, innocent = _member_rules()
    return secret.fullmatch(plain) is not None and innocent.fullmatch(plain) is None


# -- headers --------------------------------------------------------------------------------

def redact_headers(headers: Any, also: Iterable[str] = ()) -> dict[str, str]:
    """Headers as a dict, credential values (:func:`secret_name`, ``also`` more names) replaced
    by ``[REDACTED]``, URLs in the other values redacted. Accepts a mapping, (name, value)
    pairs, HAR's ``{"name", "value"}`` objects, ``"Name: value"`` strings, or a string of such
    lines; repeated names are joined with ", " as HTTP allows. What is not a header (an item of
    another shape, a line with no name, a member that is a number) is not kept, since it may be
    a credential with no name to judge it by, and :data:`HEADERS_NOTE` says what was left out."""
    also = tuple(also)
    if isinstance(headers, str):
        items: Iterable[Any] = headers.splitlines()
    elif isinstance(headers, Mapping):
        items = headers.items()
    elif isinstance(headers, list | tuple):
        items = headers
    else:
        return {HEADERS_NOTE: f"the headers were {type(headers).__name__}, not a header "
                              "object; not kept"}
    out: dict[str, str] = {}
    left_out = 0
    for item in items:
        pair = _header_item(item)
        if pair is None:
            left_out += bool(not isinstance(item, str) or item.strip())
            continue
        name, raw = pair
        value = REDACTED if secret_name(name, also) else redact_urls(_header_text(raw), also)
        out[name] = f"{out[name]}, {value}" if name in out else value
    if left_out:
        shape = "a string" if isinstance(headers, str) else type(headers).__name__
        out[HEADERS_NOTE] = (f"{left_out} item(s) of the headers ({shape}) were not a header "
                             "(name and value) and were not kept")
    return out


def _header_item(item: Any) -> tuple[str, Any] | None:
    """(name, raw value) of one header item, or None when it is not a header."""
    if isinstance(item, Mapping):  # HAR; unpacking a dict would yield its keys
        name = item.get("name")
        if not isinstance(name, str) or not name or "value" not in item:
            return None
        return name, item["value"]
    if isinstance(item, list | tuple) and len(item) == 2 and isinstance(item[0], str | bytes):
        name = item[0] if isinstance(item[0], str) else item[0].decode("latin-1")
        return name, item[1]
    if isinstance(item, str):  # "Name: value"; a start line (GET / HTTP/1.1) has no colon
        name, colon, value = item.partition(":")
        name = name.strip()
        if colon and name and not any(c.isspace() for c in name):
            return name, value.strip()
    return None


def _header_text(value: Any) -> str:
    """A header value as text: bytes decoded as HTTP does, a list joined, anything else as
    its JSON with credential members redacted (:func:`redact_body`)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("latin-1")
    if isinstance(value, list | tuple) and all(isinstance(v, str | int | float) for v in value):
        return ", ".join(str(v) for v in value)
    if isinstance(value, Mapping | list | tuple):
        try:
            return orjson.dumps(redact_body(value)).decode()
        except (TypeError, orjson.JSONEncodeError):
            return REDACTED  # cannot be shown as text, so cannot be shown to hold no secret
    return str(value)


# -- bodies ---------------------------------------------------------------------------------

def redact_body(body: Any) -> Any:
    """A JSON request body with the values of credential members (:func:`secret_member_name`,
    at any depth) replaced by ``[REDACTED]`` and URLs in every string redacted; a copy, the
    input is left as it is. Only a string or a number, or a list of them, is a credential: an object
    under such a name is walked (a tool's JSON Schema may well define a property named
    ``api_key``; it must stay a schema). HAR-like ``{"name": N, "value": V}`` objects lose V
    when N names a credential (as a header or a member).

    A body that is a string stays a string: when it holds JSON it is redacted as the parsed
    JSON, and re-serialized (compact) only if something was redacted, else kept byte for byte;
    any other string is redacted as text (:func:`redact_text`). Strings inside a body are not
    parsed (a tool call's arguments stay the text the model wrote); their URLs are redacted."""
    if isinstance(body, str):
        return _redact_body_string(body)
    return _walk(body)


def _walk(value: Any, under_secret: bool = False) -> Any:
    """``value`` redacted; ``under_secret``: it is the object or list a credential member holds
    (``"cookies": [{"name": "sid", "value": ...}]``), where every name/value pair is one."""
    return _redacted(value, under_secret)[0]


def _redacted(value: Any, under_secret: bool) -> tuple[Any, bool]:
    """(``value`` redacted, whether anything was replaced), as :func:`_walk`.

    Walked with a stack of its own, not by recursion: a hostile body may nest far deeper than
    Python's recursion limit (orjson alone reads 1,024 levels), and every level is still
    judged by the member rules. Each object or list is copied into a new, empty container that
    is placed in its parent at once and filled when its turn on the stack comes."""
    pending: list[tuple[Mapping[Any, Any] | list[Any] | tuple[Any, ...], bool, Any]] = []
    changed = False

    def placed(item: Any, secret: bool) -> Any:
        nonlocal changed
        if isinstance(item, Mapping):
            copy: dict[Any, Any] | list[Any] = {}
        elif isinstance(item, list | tuple):
            copy = []
        elif isinstance(item, str):
            redacted = redact_urls(item)
            changed = changed or redacted != item
            return redacted
        else:
            return item
        pending.append((item, secret, copy))
        return copy

    root = placed(value, under_secret)
    while pending:
        source, secret, copy = pending.pop()
        if isinstance(source, Mapping):
            for k, v in source.items():
                if _secret_member(k, v, source):
                    copy[k] = REDACTED
                    changed = changed or v != REDACTED
                else:
                    copy[k] = placed(v, secret or (isinstance(k, str) and secret_member_name(k)))
            name, held = source.get("name"), source.get("value")
            if (isinstance(name, str) and _credential_value(held)
                    and (secret or secret_name(name) or secret_member_name(name))):
                copy["value"] = REDACTED
                changed = changed or held != REDACTED
        else:
            copy.extend(placed(v, secret) for v in source)
    return root, changed


def _redact_body_string(text: str) -> Any:
    if text.lstrip()[:1] in ("{", "[", '"'):
        try:
            parsed = orjson.loads(text)
        except orjson.JSONDecodeError:
            pass  # not JSON, or nested past the 1,024 levels orjson reads: redacted as text
        else:
            if isinstance(parsed, str):  # JSON text quoted as a JSON string
                redacted: Any = _redact_body_string(parsed)
                changed = redacted != parsed
            else:
                redacted, changed = _redacted(parsed, False)
            return _json_text(redacted) if changed else text
    return redact_text(text)


def _json_text(value: Any) -> str:
    """Compact JSON of a parsed body (as ``orjson.dumps`` writes it), also when it nests deeper
    than the 254 levels orjson writes: then written with a stack of its own."""
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:
        pass
    out: list[str] = []
    pending: list[tuple[bool, Any]] = [(False, value)]  # (literal text, else a value to write)
    while pending:
        literal, item = pending.pop()
        if literal:
            out.append(item)
        elif isinstance(item, dict):
            out.append("{")
            pending.append((True, "}"))
            members = list(item.items())
            for i in range(len(members) - 1, -1, -1):
                name, member = members[i]
                pending.append((False, member))
                pending.append((True, ("," if i else "") + orjson.dumps(name).decode() + ":"))
        elif isinstance(item, list):
            out.append("[")
            pending.append((True, "]"))
            for i in range(len(item) - 1, -1, -1):
                pending.append((False, item[i]))
                if i:
                    pending.append((True, ","))
        else:
            out.append(orjson.dumps(item).decode())
    return "".join(out)


def _credential_value(value: Any) -> bool:
    """Whether ``value`` can be a credential: a string, a number (a PIN, a passcode, an
    account key may be all digits; JSON gives them no quotes), or a list of those. An object
    or ``true``/``null`` cannot: an object under a credential name is walked instead."""
    return _scalar_secret(value) or (isinstance(value, list) and bool(value)
                                     and all(_scalar_secret(v) for v in value))


def _scalar_secret(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _secret_member(name: Any, value: Any, beside: Mapping[Any, Any]) -> bool:
    if not isinstance(name, str) or not _credential_value(value) or not secret_member_name(name):
        return False
    return not (name == "signature"
                and any(isinstance(beside.get(m), str) for m in REASONING_SIGNATURE_BESIDE))


# -- text -----------------------------------------------------------------------------------

@cache
def _pair_name() -> re.Pattern[str]:
    """A ``name: value`` / ``name=value`` pair's name and separator in text (the name maybe
    quoted, or JSON-escaped quoted), compiled on first use (as :func:`_secret_word`)."""
    return re.compile(r"""(?<![\w.-])([A-Za-z_][\w.-]*)(?:\\?["'])?\s*[:=]\s*""")


@cache
def _pair_value() -> re.Pattern[str]:
    """A pair's value: quoted whole (also JSON-escaped), a list whole, or a bare one with its
    scheme (``Bearer x``)."""
    return re.compile(r"""\\"(?:(?!\\")[^"])*\\"|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|"""
                      r"""\[[^\]]*\]|(?:(?:bearer|basic|token)\s+)?[^"'&,}\s\\]+""",
                      re.IGNORECASE)


def redact_text(text: str) -> str:
    """A body kept as text (not JSON, or too deep to keep as JSON) with credential pairs
    redacted (a name :func:`secret_member_name` takes, then ``:`` or ``=``): a quoted value keeps
    its quotes, a list and a scheme (``Bearer x``) go whole, and a ``Name: value`` line (a
    header) goes to its end. URLs in it are redacted too (:func:`redact_urls`)."""
    return redact_urls("".join(_text_pieces(text)))


def _text_pieces(text: str) -> Iterator[str]:
    at = 0
    names, values = _pair_name(), _pair_value()
    while (found := names.search(text, at)) is not None:
        yield text[at:found.end()]
        at = found.end()
        if not secret_member_name(found.group(1)):
            continue  # the value is scanned on: it may hold a pair of its own
        line_start = found.start() == 0 or text[found.start() - 1] in "\r\n"
        if line_start and ":" in found.group(0)[len(found.group(1)):]:
            end = text.find("\n", at)
            end = len(text) if end < 0 else end - (text[end - 1] == "\r")
            if end > at:
                yield REDACTED
                at = end
            continue
        value = values.match(text, at)
        if value is None:
            continue
        quote = next((q for q in ('\\"', '"', "'") if value.group(0).startswith(q)), "")
        yield quote + REDACTED + quote
        at = value.end()
    yield text[at:]


# -- a request ------------------------------------------------------------------------------

QUERY_MEMBERS = frozenset({"query", "querystring", "params", "queryparams", "cookies"})
"""Request members (compared as in :data:`SECRET_MEMBER_RULES`) that are name → value maps
of query parameters or cookies: judged by the header and query rule (:func:`secret_name`)."""


def redact_request(request: Mapping[str, Any], also: Iterable[str] = ()) -> dict[str, Any]:
    """A session header's ``request`` member with every member redacted by its shape, whatever
    its type: ``url`` by :func:`redact_url` when a string, and walked otherwise (a list of
    URLs keeps its shape with each redacted); ``headers`` by :func:`redact_headers` (a string
    is read as a header block); ``body`` by :func:`redact_body`; ``body_text`` by
    :func:`redact_text` when a string and as a body otherwise; any other member as a body, and
    a query or cookie map (:data:`QUERY_MEMBERS`) by name as a query parameter."""
    also = tuple(also)
    out: dict[str, Any] = {}
    for name, value in request.items():
        plain = name.lower().translate(_SEPARATORS) if isinstance(name, str) else ""
        if name == "url" and isinstance(value, str):
            out[name] = redact_url(value, also)
        elif name == "headers" and value is not None:
            out[name] = redact_headers(value, also)
        elif name == "body_text" and isinstance(value, str):
            out[name] = redact_text(value)
        elif plain in QUERY_MEMBERS and isinstance(value, Mapping):
            out[name] = {k: REDACTED if isinstance(k, str) and secret_name(k, also) else _walk(v)
                         for k, v in value.items()}
        else:
            out[name] = redact_body(value)
    return out
