"""The request beside the response: what was asked, of whom, with which tools, and what came back.

Shown from the session's header, redacted again as the session writer redacts it
(``core/session.py`` ``redact_header``): a file callscope wrote holds no secret, but a session
written by another tool, or by hand, may, and what this window shows can end up in a
screenshot. The values are untrusted text and are shown as text.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from ..core.session import redact_header
from ..core.session_model import SessionHeader, StreamEnd
from . import safe

BODY_LIMIT = 20_000
"""Characters of a request body shown (the session file has all of it)."""


def _pretty(value: Any) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()
    except (orjson.JSONEncodeError, TypeError):
        return repr(value)


def _compact(value: Any) -> str:
    """One line of JSON with a space after each separator: the window wraps it there, not
    inside a key (``add`` / ``itionalProperties``)."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    except (TypeError, ValueError):
        return repr(value)


def _lines(text: str) -> Content:
    """Untrusted text shown line by line (each line inert; the line breaks kept)."""
    return Content("\n").join([safe.content(line) for line in text.split("\n")])


def request_text(header: SessionHeader | None, end: StreamEnd | None, source: str) -> Content:
    parts: list[Content | str] = []

    def row(name: str, value: object) -> None:
        parts.extend([Content.styled(f"{name:>12}  ", "bold"), safe.content(str(value)), "\n"])

    row("source", source)
    if header is None:
        parts.append(Content.styled("\nNo session header: this input is a raw capture or built in "
                                    "code, so there is no request to show.", "$text-muted"))
        return Content.assemble(*parts)
    header = redact_header(header)
    row("recorded", header.recorded_at or "—")
    row("provenance", header.provenance or "—")
    row("via", header.source or "—")
    row("protocol", header.protocol or "detected from the stream")
    request = header.request or {}
    row("request", f"{request.get('method', '—')} {request.get('url', '—')}")
    for name, value in (request.get("headers") or {}).items():
        row("", f"{name}: {value}")
    row("status", header.status if header.status is not None else "—")
    for name, value in (header.response_headers or {}).items():
        row("", f"{name}: {value}")
    if end is not None:
        row("ended", end.kind + (f" ({end.detail})" if end.detail else "")
            + (f" after {end.at:.3f} s" if end.at is not None else ""))
    tools = header.tools or []
    parts.append(Content.styled(f"\ntools ({len(tools)})\n", "bold"))
    for tool in tools:
        parts += [safe.content(safe.short(_compact(tool), 400)), "\n"]
    body = request.get("body", request.get("body_text"))
    if body is not None:
        text = body if isinstance(body, str) else _pretty(body)
        cut = f"\n… {len(text) - BODY_LIMIT} more characters" if len(text) > BODY_LIMIT else ""
        parts += [Content.styled("\nrequest body\n", "bold"), _lines(text[:BODY_LIMIT] + cut)]
    if header.extra:
        parts += [Content.styled("\nnotes\n", "bold"), _lines(_pretty(header.extra))]
    return Content.assemble(*parts)


class RequestScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,i,q", "dismiss", "Close")]

    def __init__(self, header: SessionHeader | None, end: StreamEnd | None, source: str) -> None:
        super().__init__()
        self.header, self.end, self.source = header, end, source

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="request", classes="modal-body") as body:
            body.border_title = "the request beside the response"
            yield Static(request_text(self.header, self.end, self.source))
