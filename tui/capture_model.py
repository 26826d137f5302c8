"""The proxy's captures as the debugger holds them: the facts its relay reports, one capture's
growing timeline, and what a captures-list row says of it.

A :class:`Capture` keeps the reads nobody has looked at yet (:attr:`Capture.waiting`): a capture
that is not open and not on screen costs no engine work while the relay streams it.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from textual.content import Content
from textual.message import Message

from ..core.session_model import Chunk, SessionHeader, StreamEnd
from ..core.timeline import Timeline
from ..net.relay_events import Event
from . import safe
from .follow import END_STYLES

# -- messages from the proxy's thread ------------------------------------------------------------

class CaptureStarted(Message):
    def __init__(self, path: str, header: SessionHeader) -> None:
        super().__init__()
        self.path, self.header = path, header


class CaptureChunk(Message):
    """Reads of one capture, in order (the relay writes those of
    :data:`~callscope.net.relay_events.PROGRESS` together)."""

    def __init__(self, path: str, chunks: tuple[Chunk, ...]) -> None:
        super().__init__()
        self.path, self.chunks = path, chunks


class CaptureEnded(Message):
    def __init__(self, path: str, end: StreamEnd) -> None:
        super().__init__()
        self.path, self.end = path, end


class ProxyEvent(Message):
    """The proxy listens (``url``), failed to (``error``), or logged a ``line``."""

    def __init__(self, *, url: str | None = None, error: str | None = None,
                 line: str | None = None) -> None:
        super().__init__()
        self.url, self.error, self.line = url, error, line


CaptureFact = CaptureStarted | CaptureChunk | CaptureEnded


def fact_of(event: Event) -> CaptureFact | None:
    """A capture fact from one event of the relay's pipe (in order: one queue for all
    captures, so a capture's start is handled before its reads)."""
    if event.path is None:
        return None
    if event.header is not None:
        return CaptureStarted(event.path, event.header)
    if event.chunks:
        return CaptureChunk(event.path, event.chunks)
    if event.end is not None:
        return CaptureEnded(event.path, event.end)
    return None


def relay_command(upstream: str, directory: str, port: int, timeout: float,
                  redact: tuple[str, ...]) -> list[str]:
    """The child process that relays and records: ``callscope proxy --headless --events``."""
    command = [sys.executable, "-m", "callscope.tui.cli", "proxy", "--headless", "--events",
               "--upstream", upstream, "--dir", directory, "--port", str(port),
               "--timeout", str(timeout)]
    for name in redact:
        command += ["--redact-header", name]
    return command


# -- the model -----------------------------------------------------------------------------------

@dataclass(eq=False)
class Capture:
    number: int
    path: str
    header: SessionHeader
    """As written to disk: secrets already redacted."""
    timeline: Timeline
    base: str = ""
    """The upstream URL (redacted), left out of the URL shown: every capture shares it."""
    waiting: list[Chunk] = field(default_factory=list)
    """Reads not yet through the engine: a capture nobody looks at (not open, the list not on
    screen) costs the debugger no CPU while the relay streams it (:meth:`catch_up`)."""
    ending: StreamEnd | None = None
    """Its end, once it came, until :meth:`catch_up` applies it."""

    def catch_up(self) -> bool:
        """Run what waits through the timeline (the reads, then the end); whether it changed."""
        timeline, changed = self.timeline, False
        if self.waiting:
            chunks, self.waiting = self.waiting, []
            if not timeline.closed:
                for chunk in chunks:
                    timeline.extend(chunk.t, chunk.data)
                changed = True
        if self.ending is not None:
            end, self.ending = self.ending, None
            changed = changed or not timeline.closed
            timeline.finish(end)
        return changed

    @property
    def request(self) -> dict[str, Any]:
        return self.header.request or {}

    @property
    def url(self) -> str:
        url = str(self.request.get("url", "?"))
        return url[len(self.base):] or "/" if self.base and url.startswith(self.base) else url

    @property
    def size(self) -> int:
        """Bytes received: the stream's, or an HTTP error's body (which is no chunk)."""
        end = self.timeline.end
        if end is not None and end.kind == "http_error" and end.body:
            return self.timeline.total_bytes + len(end.body)
        return self.timeline.total_bytes

    @property
    def label(self) -> str:
        return f"#{self.number} {self.request.get('method', '?')} {self.request.get('url', '?')}"

    def cells(self) -> tuple[Content, ...]:
        tl, end = self.timeline, self.timeline.end
        state = Content.styled("● running", "bold $text-success") if not tl.closed else (
            Content.styled(end.kind if end else "ended", END_STYLES.get(end.kind if end else "", "")))
        status = self.header.status
        return (Content(str(self.number)), safe.content(str(self.request.get("method", "?"))),
                safe.content(safe.short(self.url, 120)),
                safe.content(tl.state.protocol if tl.state.protocol != "unknown" else (
                    self.header.protocol or "?")),
                Content.styled(str(status) if status is not None else "—",
                               "$text-error" if status is None or status >= 400 else ""),
                Content(f"{self.size:,}"), state, gate_summary(tl))


def gate_summary(timeline: Timeline) -> Content:
    """What the gate made of the capture so far: its verdicts, or how many calls wait."""
    calls = len(timeline.state.calls)
    decisions = timeline.pipeline.decisions
    if not decisions:
        if calls:
            return Content.styled(f"{calls} call{'s' * (calls != 1)} waiting", "$text-warning")
        return Content.styled("no calls" if timeline.closed else "—", "$text-muted")
    counts = Counter((d.action, d.reason) for d in decisions.values())
    parts: list[safe.Part] = []
    for (action, reason), n in sorted(counts.items(), key=lambda item: str(item[0])):
        if parts:
            parts.append(", ")
        parts.append((f"{n} {action}" + (f" ({reason})" if reason else ""),
                      "bold $text-success" if action == "execute" else "bold $text-error"))
    return Content.assemble(*parts)
