"""Credential pairs in text, and the one name rule for them and for body members.

A name :func:`secret_member_name` takes (:data:`SECRET_MEMBER_RULES`, less
:data:`NOT_SECRET_MEMBER_RULES`) holds a credential wherever it names a value: a JSON body's
member (:mod:`.redact` walks those) or a pair written in text (:func:`redact_text`: a log line,
a free-text member, a body that is not JSON).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

from .redact_url import REDACTED, redact_urls

__all__ = ["NOT_SECRET_MEMBER_RULES", "SECRET_MEMBER_RULES", "plain_name", "redact_text",
           "secret_member_name"]


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
    (r".*pass(word|wd|phrase|code)\d*|pass|pwd",
     "A password or passphrase, also by its short names: password, passwd, db_password, "
     "passphrase, password2, pass, pwd."),
    (r".*(private|privkey|access|account|session|signing|encryption|master|subscription|auth"
     r"|app|license|licence|client|consumer)key(s|id|\d+)?",
     "A key that authenticates, signs or licenses: private_key, access_key, "
     "aws_access_key_id, authKey, app_key, license_key, consumer_key."),
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
