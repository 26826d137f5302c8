"""What the protocol-reader tests share: where the recordings are, how bytes reach a reader,
and how to pick the resulting events apart. Protocol-specific builders stay in each test file."""

from __future__ import annotations

import json
import os
import pathlib
from typing import Any

from callscope.core.events import (
    Anomaly,
    ArgumentsAppended,
    ArgumentsSet,
    CallClosed,
    CallCut,
    CallEvent,
    CallOpened,
    TextAppended,
)
from callscope.core.providers.base import ProtocolReader
from callscope.core.sse import SSEDecoder, decode_all

# The recordings vendored from /work/shared/fixtures (byte for byte, provenance in
# tests/fixtures/SOURCES.md), one folder per protocol; CALLSCOPE_FIXTURES points at another copy.
FIXTURE_ROOT = pathlib.Path(os.environ.get("CALLSCOPE_FIXTURES", pathlib.Path(__file__).parent / "fixtures"))


def read_all(reader: ProtocolReader, data: bytes, step: int = 0) -> list[CallEvent]:
    """Frames as the decoder cuts them -- from the whole stream at once, or fed ``step`` bytes
    at a time -- only dispatched frames reach the reader (as in the engine), then finish."""
    if step:
        decoder = SSEDecoder()
        frames = [f for i in range(0, len(data), step) for f in decoder.feed(data[i:i + step])]
        frames += decoder.close()
    else:
        frames = decode_all(data)
    events: list[CallEvent] = []
    for frame in frames:
        if frame.dispatch:
            events.extend(reader.read(frame))
    events.extend(reader.finish())
    return events


def sse_frames(*frames: tuple[str | None, Any]) -> bytes:
    """``(event name or None, payload)`` -> wire bytes (LF framing, no ``event:`` line for None);
    a str payload is sent as is, anything else as ``json.dumps``."""
    out = []
    for name, payload in frames:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        out.append((f"event: {name}\n" if name else "") + f"data: {data}\n\n")
    return "".join(out).encode()


def of(events: list[CallEvent], kind: Any) -> list[Any]:
    """The events of a type (or a union of types), in order."""
    return [e for e in events if isinstance(e, kind)]


def codes(events: list[CallEvent]) -> list[str]:
    return [e.code for e in of(events, Anomaly)]


def arguments(events: list[CallEvent], key: str) -> str:
    """The argument text of one call: fragments concatenated, an ArgumentsSet replaces."""
    text = ""
    for e in events:
        if isinstance(e, ArgumentsAppended) and e.key == key:
            text += e.fragment
        elif isinstance(e, ArgumentsSet) and e.key == key:
            text = e.text
    return text


def text_of(events: list[CallEvent], key: str) -> str:
    """Only the appended fragments of one call (unlike ``arguments``, an ArgumentsSet is ignored)."""
    return "".join(e.fragment for e in of(events, ArgumentsAppended) if e.key == key)


def opened(events: list[CallEvent]) -> dict[str, CallOpened]:
    """The last announcement per key (a call announced again keeps its latest)."""
    return {e.key: e for e in of(events, CallOpened)}


def closed(events: list[CallEvent]) -> list[str]:
    """The keys of the calls as they ended: closed by the provider or cut."""
    return [e.key for e in of(events, CallClosed | CallCut)]


def text(events: list[CallEvent], channel: str = "text") -> str:
    return "".join(e.text for e in of(events, TextAppended) if e.channel == channel)
