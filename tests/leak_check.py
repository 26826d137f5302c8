"""Whether a secret survives redaction: shown as it is, or under any level of percent-encoding
(a redacted URL is written back encoded, so a leak may hide a level or more down)."""

from __future__ import annotations

from urllib.parse import unquote_plus

LEAKED = "sk-LEAKED9913"
"""The secret the redaction tests plant (a shape no real key has)."""


def decodings(text: str, most: int = 40) -> list[str]:
    """``text`` and each percent-decoding of it, until one changes nothing (at most ``most``)."""
    seen = [text]
    while (decoded := unquote_plus(seen[-1])) != seen[-1] and len(seen) < most:
        seen.append(decoded)
    return seen


def leaks(text: object, secret: str = LEAKED) -> bool:
    """Whether ``secret`` shows in ``text`` (made a string) or in any decoding of it; a text
    still decoding after the bound counts as a leak, as it cannot be shown to hold none."""
    forms = decodings(str(text))
    return any(secret in form for form in forms) or unquote_plus(forms[-1]) != forms[-1]
