"""Credential redaction in names and URLs: which header or query parameter names hold a
credential, and URLs (absolute, relative request targets, either inside text) with those values
replaced by ``[REDACTED]``. The body and header rules build on this (:mod:`.redact`).

A URL is redacted wherever a credential can sit in it:

* the user info after every ``//`` (``https://user:PASS@host``, protocol-relative
  ``//user:PASS@host``): the password, or the user when there is no password (a token given
  as the user name, ``https://ghp_TOKEN@github.com``); a password holding ``/``, ``#`` or
  ``?`` is read to its ``@`` (unless digits alone come before them, which read as a port, or
  the ``@`` opens a path segment: ``localhost:$PORT/@vite/client``);
* a path segment's matrix parameters (``/v1/models;key=SECRET/x``), and a target that starts
  with a parameter list (``key=SECRET;a=1``, ``key=SECRET|https://x/``);
* the query and the ``#fragment`` (OAuth's implicit flow returns ``#access_token=...``), the
  pairs separated by ``&`` or ``;``;
* a URL, a request target or a parameter list held in a parameter's value (a matrix
  parameter's too) or in a parameter with no ``=`` (``?key%3DSECRET``), raw or percent-encoded
  (``?next=https%3A%2F%2Fo%2F%3Fkey%3DSECRET``), judged by the same rules.

In text, every run of URL characters that holds ``?``, ``#``, ``;`` or ``//`` is read as a URL,
with or without a scheme or a leading ``/`` (``host/v1?key=S``, ``callback?access_token=S``,
``<p?key=S>; rel=next``, ``0;url=cb?token=S``), also JSON-escaped (``\\/``, ``\\u0026``); a
run holding ``&`` and ``=`` is read as a query string (``a=1&key=S``, or the rest of a URL a
quote cut: ``?q=Joe's+Diner&key=S``), and a run holding ``%`` as a value that may be a URL
percent-encoded whole (``https%3A%2F%2Fh%2F%3Fkey%3DS``). A run's unbalanced closing
parentheses are not its own (``[docs](https://h/?key=S)``).

The rest of the URL keeps its exact spelling; a value that held a secret under percent-encoding
is written back percent-encoded, with ``[REDACTED]`` in place of the secret.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cache
from urllib.parse import quote, unquote, unquote_plus

REDACTED = "[REDACTED]"
SECRET_HEADERS = frozenset({
    "authorization", "proxy-authorization", "x-api-key", "x-goog-api-key", "api-key",
    "cookie", "set-cookie",
})
SECRET_QUERY_PARAMS = frozenset({"key", "api_key", "api-key", "apikey", "access_token", "sig",
                                 "pass"})
SECRET_NAME_WORDS = ("auth", "key", "token", "secret", "signature", "cookie", "session",
                     "credential", "password", "passwd", "passphrase", "passcode", "pwd", "jwt")
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
    names that hold one. Works on the text, so the rest keeps its exact spelling. A URL written
    inside JSON text (``https:\\/\\/h\\/?a=1\\u0026key=S``, Go escapes ``&``) is judged as the
    URL it stands for; when something was redacted, each character that came escaped is written
    escaped again."""
    return _judged_unescaped(url, tuple(also), _redact_whole_url)


def _redact_whole_url(url: str, also: tuple[str, ...]) -> str:
    return _redact_url(url, also, 0)


def _judged_unescaped(text: str, also: tuple[str, ...],
                      redact: Callable[[str, tuple[str, ...]], str]) -> str:
    """``redact(text)``, with the JSON escapes of URL characters in ``text`` read as those
    characters (:func:`_json_escape`) and, when something was redacted, written escaped again."""
    if "\\" not in text:
        return redact(text, also)
    escapes = _json_escape()
    decoded = escapes.sub(lambda m: _unescaped(m.group(0)), text)
    if decoded == text:
        return redact(text, also)
    out = redact(decoded, also)
    if out == decoded:
        return text
    return out.translate({ord(_unescaped(e)): e for e in escapes.findall(text)})


@cache
def _json_escape() -> re.Pattern[str]:
    """The JSON escapes of the characters a URL is split at (``\\/`` and ``\\u00XX`` for
    ``# % & / : ; = ? @``): text that holds JSON escapes them, and they must not hide a pair."""
    return re.compile(r"\\/|\\u00(?:2[356fF]|3[abdfABDF]|40)")


def _unescaped(escape: str) -> str:
    return "/" if escape == "\\/" else chr(int(escape[2:], 16))


def _redact_url(url: str, also: tuple[str, ...], depth: int) -> str:
    url = _redact_userinfo(url)
    rest, hash_, fragment = url.partition("#")
    base, question, query = rest.partition("?")
    if "=" in base.partition("/")[0]:
        # A target that starts with a parameter list, as a decoded value may (``key=S;a=1``,
        # ``key=S|https://x/``): read as one, so its first pair is judged too.
        base = _redact_params(base, also, depth, bare=False)
    else:
        base = _redact_matrix(base, also, depth)
    if question:
        base = f"{base}?{_redact_params(query, also, depth, bare=True)}"
    if hash_:
        # A fragment is a parameter list only where it has a ``name=value``: a bare
        # ``#oauth-setup`` is an anchor, kept even when its name holds a credential word.
        fragment = _redact_params(fragment, also, depth, bare=False)
    return f"{base}{hash_}{fragment}"


@cache
def _authority_end() -> re.Pattern[str]:
    return re.compile(r"[/?#]|$")


def _redact_userinfo(url: str) -> str:
    """``url`` with the user info after each ``//`` redacted: the password of ``user:PASS@``,
    the whole of ``USER@`` (a token may be given as the user name). RFC 3986 allows no ``/``,
    ``?`` or ``#`` in a password, but people write them: an authority whose ``:`` is followed
    by no port (not digits) runs to the next ``@``. Each ``@`` search starts where the last one
    ended, so a run of ``//`` is read once."""
    if "@" not in url or "//" not in url:
        return url
    out: list[str] = []
    at = 0
    next_at = -2  # the first "@" at or after the last search's start; -1: none; -2: not sought
    ends = _authority_end()
    for slashes in re.finditer("//", url):
        start = slashes.end()
        if start < at:
            continue
        end = ends.search(url, start).start()  # type: ignore[union-attr]  # ($ always matches)
        authority = url[start:end]
        if "@" in authority:
            info_end = start + authority.rindex("@")
        else:
            _, colon, port = authority.partition(":")
            if not colon or port.isdigit() or not port or authority.startswith("["):
                continue
            if next_at == -2 or 0 <= next_at < end:
                next_at = url.find("@", end)
            if next_at < 0 or url[next_at - 1] == "/":  # (``/@x``: a path segment, not a user)
                continue
            info_end = next_at
        user, colon, _ = url[start:info_end].partition(":")
        out.append(url[at:start])
        out.append(f"{user}:{REDACTED}" if colon else REDACTED)
        at = info_end
    out.append(url[at:])
    return "".join(out)


@cache
def _matrix_param() -> re.Pattern[str]:
    """A path segment's ``;name=value`` parameter (RFC 3986 leaves ``;`` in a segment to the
    server, and matrix-parameter servers read it as a pair)."""
    return re.compile(r";([^;/=]*)=([^;/]*)")


def _redact_matrix(path: str, also: tuple[str, ...], depth: int) -> str:
    """Each credential matrix parameter's value redacted, every other value looked into
    (:func:`_redact_value`) as a query parameter's is."""
    if ";" not in path:
        return path

    def one(m: re.Match[str]) -> str:
        name, value = m.group(1), m.group(2)
        if secret_name(unquote(name), also):
            return f";{name}={REDACTED}"
        return f";{name}={_redact_value(value, also, depth + 1)}" if value else m.group(0)
    return _matrix_param().sub(one, path)


@cache
def _query_start() -> re.Pattern[str]:
    return re.compile(r"[?#]")


def _redact_params(params: str, also: tuple[str, ...], depth: int, *, bare: bool,
                   named: Callable[[str, tuple[str, ...]], bool] = secret_name) -> str:
    """``name=value`` parameters separated by ``&`` or ``;``, each credential's value redacted,
    every other value looked into (:func:`_redact_value`) and every separator kept. A part with no
    ``=`` is looked into as a value when its decoding holds a pair or a URL (``key%3DSECRET``);
    else, when ``bare``, it is redacted if its name is a credential's (``?apikey``). ``named``
    judges the names (:func:`secret_name` in a URL)."""
    parts = re.split(r"([&;])", params)
    for i in range(0, len(parts), 2):  # (the odd items are the separators)
        name, equals, value = parts[i].partition("=")
        if equals:
            # A name holding ? or # is the end of a URL the split ran over (``?https://h/?k=``):
            # its own name is what follows the last of them.
            if named(unquote_plus(_query_start().split(name)[-1]), also):
                parts[i] = f"{name}={REDACTED}"
            elif value:
                parts[i] = f"{name}={_redact_value(value, also, depth + 1)}"
        elif name:
            decoded = unquote_plus(name)
            if decoded != name and _holds_params(decoded):
                parts[i] = _redact_value(name, also, depth + 1)
            elif bare and secret_name(decoded, also):
                parts[i] = f"{name}={REDACTED}"
    return "".join(parts)


def _redact_value(value: str, also: tuple[str, ...], depth: int) -> str:
    """A parameter's value with the credentials of a URL, request target or parameter list it
    holds redacted, raw (``next=/login?key=S``) or percent-encoded (``next=%2Flogin%3Fkey%3DS``,
    decoded and judged again, so each level of encoding is one more level here)."""
    if depth > MAX_NESTED_URL_DEPTH:
        return REDACTED if _holds_params(unquote_plus(value)) else value
    out = value
    if "?" in value or "#" in value or ";" in value or "//" in value:
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
def _run_in_text() -> re.Pattern[str]:
    """A run of URL characters inside text: up to a space, a quote, an angle bracket or a
    backslash that is not a JSON escape of a URL character (:func:`_json_escape`). Runs do not
    overlap, so the text is read once."""
    return re.compile(r"""(?:[^\s"'<>\\]|\\/|\\u00(?:2[356fF]|3[abdfABDF]|40))+""")


def redact_urls(text: str, also: Iterable[str] = ()) -> str:
    """``text`` with every URL and every request target in it redacted (:func:`redact_url`): each
    run of URL characters (:func:`_run_in_text`) that holds ``?``, ``#``, ``;`` or ``//`` (maybe
    JSON-escaped) is one, with or without a scheme or a leading ``/``; a whole string with no
    space that starts with ``/`` is one URL. Prose with no such run (``is x=1? yes``) is never
    changed; the rest keeps its exact spelling."""
    if not any(c in text for c in "?#;/\\&%"):
        return text
    also = tuple(also)
    if text.startswith("/") and not any(c.isspace() for c in text):
        return _target(text, also)
    out: list[str] = []
    at, in_url = 0, False
    for found in _run_in_text().finditer(text):
        start, run = found.start(), found.group(0)
        gap = text[at:start]
        # A URL goes on past a quote, a bracket or a backslash that the runs stop at (``?q=
        # Joe's+Diner&key=S``): a run that follows one with no space between may be its rest,
        # so its pairs are judged as the query's too, after the run's own rules.
        in_url = in_url and not any(c.isspace() for c in gap)
        out.append(gap)
        piece = _target(run, also)
        out.append(_judged_unescaped(piece, also, _url_rest) if in_url else piece)
        in_url = in_url or _url_marks(run)
        at = found.end()
    out.append(text[at:])
    return "".join(out)


def _url_rest(run: str, also: tuple[str, ...]) -> str:
    """The rest of a URL a quote or a bracket cut from its start: its pairs are the query's."""
    return _redact_params(run, also, 0, bare=False) if "=" in run else run


def _url_marks(run: str) -> bool:
    """Whether a run holds what makes it a URL or a request target (maybe JSON-escaped)."""
    return (any(c in run for c in "?#;") or "//" in run or "\\u00" in run
            or "\\/\\/" in run)


def _target(run: str, also: tuple[str, ...]) -> str:
    """A run of URL characters in text, redacted as the module's rules read it. A Markdown
    link's target (after its last ``](``) is a run of its own, and closing parentheses that
    end a run without opening in it are the text's (``(see https://h/?key=S)``)."""
    head, link, run = run.rpartition("](")
    tail = ""
    if run.endswith(")"):
        unbalanced = min(run.count(")") - run.count("("), len(run) - len(run.rstrip(")")))
        if unbalanced > 0:
            run, tail = run[:-unbalanced], run[-unbalanced:]
    return ((_judged_unescaped(head, also, _redact_run) if head else "") + link
            + _judged_unescaped(run, also, _redact_run) + tail)


def _redact_run(run: str, also: tuple[str, ...]) -> str:
    """One run (its JSON escapes read): as a URL when it holds a URL's marks; then, when what
    follows its first ``&`` is ``name=value`` pairs (:func:`_query_like`), as a parameter list
    too (a run may be the rest of a URL whose start the split cut off: ``/&key=S`` after
    ``?q=<``); else, holding ``%``, as a value maybe encoded whole."""
    url = any(c in run for c in "?#;") or "//" in run
    out = _redact_url(run, also, 0) if url else run
    if "&" in out and "=" in out and _query_like(out):
        return _redact_params(out, also, 0, bare=False, named=_secret_word_name)
    if not url and "%" in run:
        return _redact_value(run, also, 0)
    return out


@cache
def _query_pair() -> re.Pattern[str]:
    return re.compile(r"[\w.~%\[\]-]+(?:=|\Z)")


def _query_like(run: str) -> bool:
    """Whether every part after the run's first ``&`` is a ``name=value`` pair whose name is
    made of query characters, such a name alone, or empty (``&&``): ``a=1&key=S``,
    ``s+Diner&key=S`` and ``<&0&key=S`` are, code is not (``if(a&&b){key=1}``: a name with a
    brace)."""
    pair = _query_pair()
    parts = run.split("&")[1:]
    return any(parts) and all(not part or pair.match(part) for part in parts)


@cache
def _name_words() -> re.Pattern[str]:
    """A name's words: its runs of letters and digits, split again where a lower-case letter
    meets a capital (``sessionId``: session, id)."""
    return re.compile(r"[A-Z]*[a-z0-9]+|[A-Z]+(?![a-z])")


def _secret_word_name(name: str, also: tuple[str, ...]) -> bool:
    """The stricter name rule of a parameter list found in text with no URL around it
    (``a=1&key=S``): a query parameter's name (:data:`SECRET_QUERY_PARAMS`, ``also``) or a
    name whose last word is a secret word (``db_password``, ``apiKey``, ``AUTH_TOKEN``), not a
    name that only holds one (``monkey``, ``max_tokens``, ``key_count``): text is prose as
    often as it is a query, and a name ends with what it names."""
    lower = name.lower()
    if lower in SECRET_QUERY_PARAMS or any(lower == extra.lower() for extra in also):
        return True
    words = [word.lower() for word in _name_words().findall(name)]
    if words[-2:-1] == ["session"] and words[-1] == "id":
        return True  # (a session's identifier is its credential: sessionId, SESSION_ID)
    return bool(words) and words[-1] in SECRET_NAME_WORDS
