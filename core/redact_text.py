"""Credential pairs in text, and the one name rule for them and for body members.

A name :func:`secret_member_name` takes (:data:`SECRET_MEMBER_RULES`, less
:data:`NOT_SECRET_MEMBER_RULES`) holds a credential wherever it names a value: a JSON body's
member (:mod:`.redact` walks those) or a pair written in text (:func:`redact_text`: a log line,
a free-text member, a body that is not JSON).
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator
from functools import cache
from urllib.parse import unquote

from .redact_commands import redact_command_flags
from .redact_url import REDACTED, redact_urls

__all__ = ["NOT_SECRET_MEMBER_RULES", "SECRET_MEMBER_RULES", "USER_PASSWORD_FLAGS", "plain_name",
           "redact_text", "secret_member_name"]


# -- the name rule --------------------------------------------------------------------------

SECRET_MEMBER_RULES: tuple[tuple[str, str], ...] = (
    (r".*apikey(s|\d+)?",
     "An API key under any vendor prefix, a list of them or a numbered one: api_key, apiKey, "
     "x-api-key, x-goog-api-key, apiKeys, api_key_2."),
    (r".*token",
     "A bearer, OAuth or session token: token, access_token, id_token, refresh_token, "
     "session_token, aws_session_token (a count is plural or suffixed: max_tokens, "
     "token_count)."),
    (r".*jwt",
     "A JSON Web Token by its own name: jwt, id_jwt, client_jwt."),
    (r".*secret.*",
     "A shared secret: secret, client_secret, aws_secret_access_key, secretKey."),
    (r".*pass(word|wd|phrase|code)(s|\d+)?|pass|pwd|pw",
     "A password or passphrase, also by its short names or a list of them: password, passwd, "
     "db_password, passphrase, password2, passwords, pass, pwd, pw."),
    (r".*(private|privkey|access|account|session|signing|encryption|master|subscription|auth"
     r"|app|license|licence|client|consumer)key(s|id|\d+)?",
     "A key that authenticates, signs or licenses: private_key, access_key, "
     "aws_access_key_id, authKey, app_key, license_key, consumer_key."),
    (r".*(openai|anthropic|claude|gemini|google|groq|mistral|cohere|deepseek|xai|together"
     r"|fireworks|perplexity|openrouter|huggingface|hf|replicate|azure|voyage)key",
     "A provider's key named by its provider, without the word api: openai_key, OPENAI_KEY, "
     "anthropicKey, hf_key."),
    (r".*sess(ion)?id",
     "A session identifier is the session to the server that issued it: sessionId, "
     "session_id, jsessionid, phpsessid."),
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
    plain = plain_name(name)
    secret, innocent = _member_rules()
    return secret.fullmatch(plain) is not None and innocent.fullmatch(plain) is None




def plain_name(name: str) -> str:
    """``name`` as the rules compare it: lower-cased, ``-``, ``_``, ``.`` and spaces removed."""
    return name.lower().translate(_SEPARATORS)


# -- text -----------------------------------------------------------------------------------

USER_PASSWORD_FLAGS = frozenset({"-u", "--user", "-U", "--proxy-user"})
"""Command-line flags whose value is ``user:password`` (curl's ``-u``/``--user`` and
``-U``/``--proxy-user``): the password is redacted, or the user when the password is empty (a
key given as the user, ``-u sk_live_...:``); a value with no ``:`` (``python -u``, ``docker
-u 1000``) holds no password and is kept."""

_NAME_ESCAPE = r"%(?:4[1-9A-Fa-f]|5[0-9AaFf]|6[1-9A-Fa-f]|7[0-9Aa])"
"""A percent-escape of a letter or ``_``: a name may be written encoded (``api%5Fkey``)."""

_NAME = rf"(?:[A-Za-z_]|{_NAME_ESCAPE})(?:[\w.-]|{_NAME_ESCAPE}|%(?:2[DdEe]|3[0-9]))*"

_SEPARATOR = r"(?:->|=>|:=|[!=]==?|[:=]|%3[AaDd])"
"""What joins a name to its value: ``:`` and ``=``, an operator that assigns or compares
(``==``, ``!=``, ``:=``, ``=>``, ``->``: the value stands right after it), and ``:``/``=``
percent-encoded."""

_NAME_START = (r"(?:(?<!\w)(?<!\w[.-])|(?<=%2[0267CcFf])|(?<=%3[AaBbDdFf])|(?<=%0[AaDd]))")
"""Where a name starts: not inside a word (a ``.`` or ``-`` that follows none is no part of a
name: ``.api_key=S``), or right after an encoded separator (``%26``, ``%3D``, ``%20``...), never
after an encoded letter, so a run of escapes is read once."""


@cache
def _pair_name() -> re.Pattern[str]:
    """A pair's name and separator in text, compiled on first use (as :func:`_secret_word`):
    ``name: value`` and the other separators (the name maybe quoted, or JSON-escaped quoted),
    or a command-line flag, ``--name value``, ``--name=value``, ``-n value``, or an XML
    element's start tag, ``<name>`` or ``<ns:name attr="...">`` (its value: :func:`_element`).
    After the separator, JSON's escaped whitespace (``\\t``, ``\\n``) is skipped as
    whitespace is."""
    space = r"(?:\s|\\[nrt])*"
    return re.compile(
        rf"""{_NAME_START}(?:(?<=<)(?:(?P<ns>[A-Za-z_][\w.-]*):)?(?P<tag>{_NAME})"""
        r"""(?:\s+[A-Za-z_][\w:.-]*\s*=\s*(?:\\?"[^"<>]*"|'[^'<>]*'))*\s*>"""
        rf"""|(?P<flag>--?)(?P<fname>{_NAME})(?:\s*(?P<fsep>{_SEPARATOR}){space}"""
        rf"""|[ \t]+)|(?P<name>{_NAME})(?:\\?["']\]?|%2[27])?\s*(?P<sep>{_SEPARATOR}){space})""")


@cache
def _pair_value() -> re.Pattern[str]:
    """A pair's value: quoted whole (also JSON-escaped), a list whole, or a bare one with its
    scheme (``Bearer x``; ``Digest`` to the end of the line, as its parameters are quoted and
    one, ``response``, has no name of a credential). An unclosed quote or list runs to the end
    of the text, so no value is read twice (and none is cut short: the rest may be the secret).
    A bare value holds a ``,`` or ``&`` unless a pair follows it (``password=ab,cd`` is one
    value, ``key=S&n=1`` two). A quoted value may have a string prefix (Python's ``r``, ``b``,
    ``f``, ``u``, the shell's ``$``: group ``prefix``) and triple quotes (``'''S'''``)."""
    pair_follows = rf"""[A-Za-z_][\w.-]*\s*{_SEPARATOR}"""
    return re.compile(
        r"""(?P<prefix>[rbfu$]{1,2}(?=["']))?"""
        r"(?:'''.*?(?:'''|\Z)|" r'""".*?(?:"""|\Z)'
        r"""|\\"(?:(?!\\").)*(?:\\"|\Z)|"(?:[^"\\]|\\.?)*(?:"|\Z)|'(?:[^'\\]|\\.?)*(?:'|\Z)"""
        r"""|\[[^\]]*(?:\]|\Z)|digest\s[^\r\n]*|(?:(?:bearer|basic|token)\s+)?"""
        rf"""(?:[^"'&,}}\s\\]|[&,](?=[^"'&,}}\s\\])(?!{pair_follows}))+)""",
        re.IGNORECASE | re.DOTALL)


@cache
def _block_scalar() -> re.Pattern[str]:
    """A YAML block scalar's indicator line (``|``, ``>-``, ``|2+``, maybe a comment): the value
    is the more indented lines that follow."""
    return re.compile(r"[|>][1-9+-]{0,2}[ \t]*(?:#[^\r\n]*)?(?=\r?\n|\Z)")


def redact_text(text: str) -> str:
    """A body kept as text (not JSON, or too deep to keep as JSON) with credential pairs
    redacted: a name :func:`secret_member_name` takes (maybe percent-encoded), then a separator
    (:data:`_SEPARATOR`), or a command-line flag of that name (``--api-key S``), or a
    ``user:password`` flag (:data:`USER_PASSWORD_FLAGS`). A quoted value keeps its quotes (the
    closing one only if it had one), a list and a scheme (``Bearer x``) go whole, a YAML block
    scalar's lines go, and a ``Name: value`` line (a header) goes to its end. URLs in it are
    redacted too (:func:`redact_urls`), and the passwords tools take by a short flag
    (:func:`.redact_commands.redact_command_flags`: ``mysql -pS``)."""
    return redact_urls(redact_command_flags("".join(_text_pieces(text))))


def _text_pieces(text: str) -> Iterator[str]:
    at = 0
    names, values = _pair_name(), _pair_value()
    while (found := names.search(text, at)) is not None:
        flag, ns = found.group("flag"), found.group("ns")
        name = found.group("fname") or found.group("name") or found.group("tag")
        if ns is not None and secret_member_name(ns) and not secret_member_name(name):
            # ``<api_key:S>`` reads as a namespaced tag; its "name" is a credential's value.
            yield text[at:found.start("tag")] + REDACTED
            at = found.end("tag")
            continue
        if not (flag is not None and flag + name in USER_PASSWORD_FLAGS) and not \
                secret_member_name(unquote(name) if "%" in name else name):
            # The value is scanned on: it may hold a pair of its own, from right after the
            # separator (the space after it may be JSON's \n, which a name can follow).
            sep = "sep" if found.group("sep") is not None else "fsep"
            resume = found.end(sep) if found.group(sep) is not None else found.end()
            yield text[at:resume]
            at = resume
            continue
        yield text[at:found.end()]
        at = found.end()
        if found.group("tag") is not None:
            span = _element(text, at)
            if span is not None:
                yield text[at:span[0]] + REDACTED
                at = span[1]
            continue
        if flag is not None and flag + name in USER_PASSWORD_FLAGS:
            if (value := values.match(text, at)) is not None:
                shown = _user_password(value.group(0))
                if shown is not None:
                    yield shown
                    at = value.end()
            continue
        if found.group("sep") == ":" and (block := _block_scalar().match(text, at)):
            yield block.group(0)
            at = yield from _block_lines(text, block.end(), found.start())
            continue
        line_start = found.start() == 0 or text[found.start() - 1] in "\r\n"
        if line_start and found.group("sep") == ":":
            end = text.find("\n", at)
            end = len(text) if end < 0 else end - (text[end - 1] == "\r")
            if end > at:
                yield REDACTED
                at = end
            continue
        value = values.match(text, at)
        if value is None:
            continue
        prefix = value.group("prefix") or ""
        yield prefix + _quoted(value.group(0)[len(prefix):], REDACTED)
        at = value.end()
    yield text[at:]


@cache
def _token() -> re.Pattern[str]:
    """One token of a cut body: letters, digits and ``-_.~+/=:``."""
    return re.compile(r"[\w.~+/=:-]+")


def _element(text: str, at: int) -> tuple[int, int] | None:
    """The span of an element's text that starts at ``at`` (after its start tag): a CDATA
    section's inside, or the text up to a closing tag (``</...``); with no tag after it, the
    rest of the text when it is one token (a cut body's: letters, digits and ``-_.~+/=:``).
    Text before another start tag, code or prose (``List<Token> tokens``, ``ArrayList<Token>();``,
    ``the <token> element``), is no element's value."""
    if text.startswith("<![CDATA[", at):
        end = text.find("]]>", at + 9)
        return (at + 9, len(text) if end < 0 else end)
    end = text.find("<", at)
    if end < 0:
        return (at, len(text)) if _token().fullmatch(text, at) else None
    return (at, end) if end > at and text.startswith("</", end) else None


def _quoted(value: str, replacement: str) -> str:
    """``replacement`` in the quotes ``value`` has: the opening one, and the closing one only if
    the value had it (an unclosed quote stays unclosed, so redacting again changes nothing)."""
    quote = next((q for q in ("'''", '"""', '\\"', '"', "'") if value.startswith(q)), "")
    closed = quote and len(value) >= 2 * len(quote) and value.endswith(quote)
    return quote + replacement + (quote if closed else "")


def _user_password(value: str) -> str | None:
    """A ``user:password`` flag value redacted (:data:`USER_PASSWORD_FLAGS`), or None when it
    holds no ``:`` and so no password."""
    quote = next((q for q in ('\\"', '"', "'") if value.startswith(q)), "")
    inner = value[len(quote):]
    if quote and inner.endswith(quote):
        inner = inner[:-len(quote)]
    user, colon, password = inner.partition(":")
    if not colon:
        return None
    return _quoted(value, f"{user}:{REDACTED}" if password or not user else f"{REDACTED}:")


def _block_lines(text: str, at: int, key: int) -> Generator[str, None, int]:
    """The lines of a YAML block scalar whose indicator ends at ``at``, for the key at ``key``:
    every following line that is blank or more indented than the key is the value,
    written as one ``[REDACTED]`` at the first line's indentation (blank lines after the last
    one are kept). Returns where the text goes on."""
    before = text[text.rfind("\n", 0, key) + 1:key]
    # A key after sequence dashes (``- key: |``) is indented to its column, as YAML reads it;
    # after other text, to its line's indentation (more lines go, none is kept that might hold
    # the value).
    base = (len(before) if not before.replace("-", " ").strip()
            else len(before) - len(before.lstrip(" \t")))
    first, indent, end = -1, "", at
    pos = at
    while (newline := text.find("\n", pos)) >= 0:
        start = newline + 1
        stop = text.find("\n", start)
        stop = len(text) if stop < 0 else stop
        line = text[start:stop].rstrip("\r")
        content = line.lstrip(" \t")
        if content:
            if len(line) - len(content) <= base:
                break
            if first < 0:
                first, indent = start, line[:len(line) - len(content)]
            end = start + len(line)
        pos = stop
    if first >= 0:
        yield text[at:first] + indent + REDACTED
    return end
