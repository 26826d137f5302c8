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
  JSON is redacted as the parsed JSON, any other string as text (:func:`redact_text`; it and
  the name rule live in :mod:`.redact_text` and are re-exported here).
* a whole request member (:func:`redact_request`): each member by its shape, whatever its type.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from .redact_text import (
    NOT_SECRET_MEMBER_RULES,
    SECRET_MEMBER_RULES,
    plain_name,
    redact_text,
    secret_member_name,
)
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
    "COOKIE_MEMBERS", "HEADERS_NOTE", "NOT_SECRET_MEMBER_RULES", "QUERY_MEMBERS", "REDACTED",
    "SECRET_HEADERS", "SECRET_MEMBER_RULES", "SECRET_NAME_WORDS", "SECRET_QUERY_PARAMS",
    "redact_body", "redact_headers", "redact_request", "redact_text", "redact_url",
    "redact_urls", "secret_member_name", "secret_name",
]

HEADERS_NOTE = "callscope-redaction-note"
"""The header entry that says what of a malformed header member was not kept (a ``callscope-``
name: never redacted itself)."""


# -- body members ---------------------------------------------------------------------------

REASONING_SIGNATURE_BESIDE = ("thinking", "text")
"""A ``signature`` member beside one of these string members (Anthropic's thinking block,
Bedrock's reasoningText) is the provider's tag on that reasoning, not a credential: it is sent
back verbatim in the next turn, and a resent request needs it."""

PAIR_NAME_MEMBERS = ("name", "key")
"""The member that names a name/value object (HAR's ``{"name", "value"}``, Postman's
``{"key", "value"}``): the object's ``value`` is a credential when the name is one."""

VALUE_MEMBER = "value"
"""The member of a name/value object that holds the value; inside an object a credential member
holds (``"api_key": {"value": ...}``), a string or number under this name is the credential
itself, while the object's other members are walked (a JSON Schema's ``type``, ``default``)."""


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
        text = _header_text(raw)
        value = (REDACTED if secret_name(name, also) or _scheme_credential(text)
                 else redact_urls(text, also))
        out[name] = f"{out[name]}, {value}" if name in out else value
    if left_out:
        shape = "a string" if isinstance(headers, str) else type(headers).__name__
        out[HEADERS_NOTE] = (f"{left_out} item(s) of the headers ({shape}) were not a header "
                             "(name and value) and were not kept")
    return out


CREDENTIAL_SCHEMES = ("bearer", "basic", "digest", "token", "apikey")
"""HTTP authentication schemes: a header value that starts with one and a space is a
credential whatever the header is named (gateways carry keys in headers of their own, such as
``X-Upstream-Authorization: Bearer ...``)."""


def _scheme_credential(value: str) -> bool:
    scheme, space, rest = value.lstrip().partition(" ")
    return bool(space) and bool(rest.strip()) and scheme.lower() in CREDENTIAL_SCHEMES


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

    ``api_key``; it must stay a schema), but a string or number in its ``value`` member
    (:data:`VALUE_MEMBER`) is the credential. Name/value objects (HAR's ``{"name", "value"}``,
    Postman's ``{"key", "value"}``) lose the value when the name is a credential's (as a header,
    a query parameter or a member).

    A body that is a string stays a string: when it holds JSON it is redacted as the parsed
    JSON, and re-serialized (compact) only if something was redacted, else kept byte for byte;
    any other string is redacted as text (:func:`redact_text`). A body given as bytes is
    redacted as that string and comes back as text (:func:`_decoded`), as bytes inside a body
    do. Strings inside a body are not parsed (a tool call's arguments stay the text the model
    wrote); their URLs are redacted."""
    if isinstance(body, bytes | bytearray | memoryview):
        return _redact_body_string(_decoded(bytes(body)))
    if isinstance(body, str):
        return _redact_body_string(body)
    return _redacted_body(body)[0]


TOOL_MEMBERS = frozenset({"tools", "toolConfig", "functions"})
"""A request body's top-level members that hold its tool definitions (Chat, Responses,
Anthropic, Gemini and Ollama's ``tools``, Bedrock Converse's ``toolConfig``, Chat's legacy
``functions``): kept as they are. The gate validates the calls against the first two
(:func:`.tools.tools_from_request` reads them), so a schema's ``enum``, ``pattern`` or
``default`` changed by a text rule would change what a replay decides, and a session keeps
those definitions verbatim in its header (``tools``) anyway; legacy ``functions`` are schemas
of the same kind, kept for the same reason."""


def _redacted_body(body: Any) -> tuple[Any, bool]:
    """(``body`` redacted, whether anything was replaced), its tool definitions kept as they
    are (:data:`TOOL_MEMBERS`: the very objects, which nothing downstream changes)."""
    if not isinstance(body, Mapping) or not TOOL_MEMBERS.intersection(body):
        return _redacted(body, False)
    rest, changed = _redacted({k: v for k, v in body.items() if k not in TOOL_MEMBERS}, False)
    return {k: body[k] if k in TOOL_MEMBERS else rest[k] for k in body}, changed


def _decoded(data: bytes) -> str:
    """Bytes as text for a JSON session file: UTF-8, and a byte that is no UTF-8 written as
    ``\\xNN`` (no byte is dropped or changed unseen, and the text is one JSON can hold)."""
    try:
        return data.decode()
    except UnicodeDecodeError:
        return data.decode("utf-8", "backslashreplace")


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
        if isinstance(item, bytes | bytearray):
            item = _decoded(bytes(item))
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
                if _secret_member(k, v, source) or (secret and k == VALUE_MEMBER
                                                    and _credential_value(v)):
                    copy[k] = REDACTED
                    changed = changed or v != REDACTED
                else:
                    copy[k] = placed(v, secret or (isinstance(k, str) and secret_member_name(k)))
            held = source.get(VALUE_MEMBER)
            if _credential_value(held) and any(
                    isinstance(name, str) and (secret or secret_name(name)
                                               or secret_member_name(name))
                    for name in (source.get(m) for m in PAIR_NAME_MEMBERS)):
                copy[VALUE_MEMBER] = REDACTED
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
                redacted, changed = _redacted_body(parsed)
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
    return isinstance(value, str | bytes | bytearray | int | float) and not isinstance(value, bool)


def _secret_member(name: Any, value: Any, beside: Mapping[Any, Any]) -> bool:
    if not isinstance(name, str) or not _credential_value(value) or not secret_member_name(name):
        return False
    return not (name == "signature"
                and any(isinstance(beside.get(m), str) for m in REASONING_SIGNATURE_BESIDE))


# -- a request ------------------------------------------------------------------------------

QUERY_MEMBERS = frozenset({"query", "querystring", "params", "queryparams"})
"""Request members (compared as in :data:`SECRET_MEMBER_RULES`) that hold the query
parameters: a name → value map, HAR's name/value objects or (name, value) pairs, each value
judged by its name by the header and query rule (:func:`secret_name`)."""

COOKIE_MEMBERS = frozenset({"cookies", "cookie"})
"""Request members that hold the request's cookies, in the shapes of :data:`QUERY_MEMBERS`:
every value is a credential whatever the cookie's name, as the ``Cookie`` header is (a session
cookie's name is the server's choice: ``sid``, ``connect.sid``, ``__Host-s``)."""


def redact_request(request: Mapping[str, Any], also: Iterable[str] = ()) -> dict[str, Any]:
    """A session header's ``request`` member with every member redacted by its shape, whatever
    its type: ``url`` by :func:`redact_url` when a string, and walked otherwise (a list of
    URLs keeps its shape with each redacted); ``headers`` by :func:`redact_headers` (a string
    is read as a header block); ``body`` by :func:`redact_body`; ``body_text`` by
    :func:`redact_text` when a string and as a body otherwise; the query parameters and the
    cookies (:data:`QUERY_MEMBERS`, :data:`COOKIE_MEMBERS`) by name and by shape; any other
    member as a body member of its name (``"api_key": "..."`` goes whole)."""
    also = tuple(also)
    out: dict[str, Any] = {}
    for name, value in request.items():
        plain = plain_name(name) if isinstance(name, str) else ""
        if name == "url" and isinstance(value, str):
            out[name] = redact_url(value, also)
        elif name == "headers" and value is not None:
            out[name] = redact_headers(value, also)
        elif name == "body_text" and isinstance(value, str):
            out[name] = redact_text(value)
        elif plain in QUERY_MEMBERS or plain in COOKIE_MEMBERS:
            out[name] = _params_member(value, plain in COOKIE_MEMBERS, also)
        elif name != "body" and _secret_member(name, value, request):
            out[name] = REDACTED
        elif name != "body" and isinstance(name, str) and secret_member_name(name):
            out[name] = _walk(value, under_secret=True)
        else:
            out[name] = redact_body(value)
    return out


def _params_member(value: Any, cookies: bool, also: tuple[str, ...]) -> Any:
    """A query or cookie member (:data:`QUERY_MEMBERS`): a map's values and the values of
    (name, value) pairs redacted by name (every one, for ``cookies``), anything else walked
    (HAR's name/value objects, under a credential name for ``cookies``)."""
    def secret(key: Any) -> bool:
        return cookies or (isinstance(key, str) and secret_name(key, also))
    if isinstance(value, Mapping):
        return {k: REDACTED if secret(k) and _credential_value(v) else _walk(v, cookies)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [[item[0], REDACTED] if (isinstance(item, list | tuple) and len(item) == 2
                                        and isinstance(item[0], str) and secret(item[0])
                                        and _credential_value(item[1]))
                else _walk(item, cookies) for item in value]
    return REDACTED if cookies and _credential_value(value) else redact_body(value)
