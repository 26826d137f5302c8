"""Quirk profiles: a recorded stream rewritten into a shape a real system sends (``serve --quirk``).

Each profile is a pure rewrite of a session's events (:class:`Event`, one per SSE block), for
the protocols it names, with where the shape was seen (the numbers are the items of
``QUIRKS.md``, which cites the issues). Untouched events keep their exact bytes; rewritten ones
are encoded compactly. The result is one read per event at the time its first byte arrived,
except ``split-utf8``, whose point is where the reads end.

The rewrites that concern one protocol's payloads live in :mod:`.quirks_chat` (Chat
Completions) and here (the framing, Anthropic's error, Responses' done event).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import orjson
from msgspec import Struct
from msgspec.structs import replace

from .errors import CallscopeError
from .framing import decode_all, framing_of
from .replay import TimedBytes


class QuirkError(CallscopeError):
    """A quirk that does not exist, or does not apply to the stream's protocol."""


class Event(Struct, frozen=True):
    """One SSE block: its ``event:`` name, its data (parsed JSON, or the text when it is not
    JSON, or None for a block without data), the exact bytes while untouched, its time."""

    event: str | None
    data: Any
    raw: bytes | None
    t: float | None
    lines: tuple[str, ...] = ()
    """Extra lines written before ``event:``/``data:`` (``id:``, comments)."""

    def changed(self, data: Any = None, **others: Any) -> Event:
        return replace(self, data=data, raw=None, **others)

    def encode(self) -> bytes:
        if self.raw is not None:
            return self.raw
        lines = list(self.lines)
        if self.event is not None:
            lines.append(f"event: {self.event}")
        if self.data is not None:
            text = self.data if isinstance(self.data, str) else orjson.dumps(self.data).decode()
            lines.append(f"data: {text}")
        return ("\n".join(lines) + "\n\n").encode()


def events_of(chunks: Sequence[TimedBytes]) -> list[Event]:
    data = b"".join(c for _, c in chunks)
    times = [t for t, _ in chunks]
    out = []
    for frame in decode_all(data):
        t = times[frame.first_chunk] if frame.first_chunk < len(times) else None
        payload: Any = None
        if frame.data or any(line.startswith("data") for line in frame.lines):
            try:
                payload = orjson.loads(frame.data)
            except orjson.JSONDecodeError:
                payload = frame.data
        out.append(Event(frame.event, payload, frame.raw, t))
    return out


def comment(text: str, t: float | None) -> Event:
    return Event(None, None, f": {text}\n\n".encode(), t)


Rewrite = Callable[[list[Event]], list[Event]]


class Quirk(Struct, frozen=True):
    name: str
    protocols: tuple[str, ...] | None
    """The protocols it applies to (None: any SSE stream)."""
    says: str
    seen: str
    """Where it was seen: the QUIRKS.md item and sources, or ``B.2: ...`` for a shape of the
    pain points (ANCHORS.md B.2) the quirk list does not number."""
    rewrite: Rewrite
    end: str | None = None
    """How serve ends the body instead of as recorded (``close``: mid-body, no clean end)."""


def _keepalive(events: list[Event]) -> list[Event]:
    out = [comment("OPENROUTER PROCESSING", events[0].t if events else 0.0)]
    for n, e in enumerate(events):
        out.append(e)
        if n % 4 == 3:
            out.append(comment("ping", e.t))
    return out


def _data_keepalive(events: list[Event]) -> list[Event]:
    t = events[0].t if events else 0.0
    return [Event(None, ": OPENROUTER PROCESSING", None, t), *events]


def _id_comments(events: list[Event]) -> list[Event]:
    out: list[Event] = []
    for n, e in enumerate(events, 1):
        if e.data is None:
            out.append(e)
            continue
        out += [e.changed(e.data, lines=(f"id: {n}",)), comment("ping", e.t)]
    return out


def _anthropic_error(events: list[Event]) -> list[Event]:
    """Everything up to the ``message_delta`` (every block complete), then an in-band error."""
    names = [e.event or (e.data.get("type") if isinstance(e.data, dict) else None) for e in events]
    at = names.index("message_delta") if "message_delta" in names else len(events)
    t = events[at - 1].t if at else 0.0
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    return [*events[:at], Event("error", error, None, t)]


def _done_only_arguments(events: list[Event]) -> list[Event]:
    """The deltas dropped (the sequence numbers of the rest renumbered, as a server that never
    sent them counts), output_item.done's arguments ``{}``."""
    out: list[Event] = []
    for e in events:
        kind = e.data.get("type") if isinstance(e.data, dict) else None
        if kind == "response.function_call_arguments.delta":
            continue
        if isinstance(e.data, dict):
            data = dict(e.data)
            item = data.get("item")
            if kind == "response.output_item.done" and isinstance(item, dict) and \
                    item.get("type") == "function_call":
                data["item"] = {**item, "arguments": "{}"}
            if "sequence_number" in data:
                data["sequence_number"] = len(out)
            e = e.changed(data) if data != e.data else e
        out.append(e)
    return out


def _identity(events: list[Event]) -> list[Event]:
    return events


def _registry() -> dict[str, Quirk]:
    from .quirks_chat import CHAT_QUIRKS

    chat = ("openai-chat",)
    sse = None
    table = [
        *(Quirk(name, chat, says, seen, rewrite) for name, says, seen, rewrite in CHAT_QUIRKS),
        Quirk("keepalive", sse, "': OPENROUTER PROCESSING' before the first event and ': ping' "
              "comments between events", "15: OpenRouter (dive PR#206, brainlid/langchain "
              "PR#568)", _keepalive),
        Quirk("data-keepalive", sse, "a keepalive re-wrapped as non-JSON data: 'data: : "
              "OPENROUTER PROCESSING'", "15: mnfst/llm-gateway#2053; Vertex partner models "
              "(opencode#50871)", _data_keepalive),
        Quirk("id-comments", sse, "an 'id:' line on every event, each followed by a "
              "comment-only ': ping' block", "15: theopenco/llmgateway PR#2334 (openai-python"
              "#2722)", _id_comments),
        Quirk("crlf", sse, "CRLF line ends: events separated by \\r\\n\\r\\n",
              "16: Gemini alt=sse (routstr-core PR#543), sse-starlette (quern#119)", _identity),
        Quirk("split-utf8", sse, "every multi-byte UTF-8 character split across two reads",
              "17: api7/aisix#111, braintrust-sdk-javascript PR#2091", _identity),
        Quirk("anthropic-error", ("anthropic",), "every block complete, then an 'error' event "
              "(overloaded_error) instead of message_delta and message_stop, then the "
              "connection closes", "18: agent-os PR#2271, unsloth PR#10811, gptel PR#1512, "
              "anthropic-sdk-go#200", _anthropic_error, end="close"),
        Quirk("done-only-arguments", ("openai-responses",), "no function_call_arguments.delta: "
              "the arguments only in .done, and output_item.done carrying '{}'",
              "20: LM Studio (earendil-works/pi PR#917)", _done_only_arguments),
    ]
    return {q.name: q for q in table}


_QUIRKS: dict[str, Quirk] = {}


def quirks() -> dict[str, Quirk]:
    """Every profile by name (built on first use)."""
    if not _QUIRKS:
        _QUIRKS.update(_registry())
    return _QUIRKS


def quirk(name: str, protocol: str | None) -> Quirk:
    found = quirks().get(name)
    if found is None:
        raise QuirkError(f"unknown quirk {name!r} (one of: {', '.join(quirks())})")
    if found.protocols is not None and protocol not in found.protocols:
        raise QuirkError(f"quirk {name!r} rewrites {', '.join(found.protocols)} streams, "
                         f"not {protocol}")
    if found.protocols is None and framing_of(protocol) != "sse":
        raise QuirkError(f"quirk {name!r} rewrites Server-Sent Events; {protocol} streams are "
                         f"framed as {framing_of(protocol)}")
    return found


def _split_utf8(chunks: list[TimedBytes]) -> list[TimedBytes]:
    """A read boundary after the first byte of every multi-byte character."""
    out: list[TimedBytes] = []
    for t, data in chunks:
        start = 0
        for i in range(len(data) - 1):
            if data[i] >= 0xC0 and i + 1 > start:  # a lead byte: end the read after it
                out.append((t, data[start:i + 1]))
                start = i + 1
        out.append((t, data[start:]))
    return [c for c in out if c[1]]


def apply_quirk(name: str, protocol: str | None,
                chunks: Sequence[TimedBytes]) -> tuple[list[TimedBytes], str | None]:
    """The stream rewritten by the named profile, and how its body must end (None: as
    recorded)."""
    profile = quirk(name, protocol)
    if profile.name == "crlf":  # (read by read: a recording's line ends are LF)
        return [(t, c.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")) for t, c in chunks], None
    events = profile.rewrite(events_of(chunks))
    out = [(e.t, e.encode()) for e in events]
    if profile.name == "split-utf8":
        out = _split_utf8(list(chunks))
    return out, profile.end
