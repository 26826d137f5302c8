"""How and where a stream ended, said once: the transport's end, the terminal signal or exactly
why it is absent, and the frame that carried the stop reason.

Every view of a turn (``replay``'s table and turn record, the exports, the debugger's headline)
says the ending with :meth:`Ending.line`, so none of them can contradict another.
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct

from .calls import TurnState
from .frame import Frame, event_name
from .inert import plain
from .providers import SPECS
from .session_model import StreamEnd

_HOW = {
    "clean": "closed cleanly", "reset": "reset by the peer", "timeout": "timed out",
    "cut": "cut", "http_error": "ended with an HTTP error", "error": "failed",
    "missing": "stopped without its end line (the recorder stopped)",
}

_UNFINISHED = {
    "sse": "before its blank line", "ndjson": "before its line end",
    "aws-eventstream": "before the last of the bytes its prelude counts",
}
"""Where a frame the stream cut would have ended, in its framing's terms."""


class Ending(Struct, frozen=True):
    transport: str
    """The transport's end as recorded (:data:`~.session_model.END_KINDS`), or ``cut`` for a
    cut the user asked for."""
    bytes: int
    """Bytes received before the end."""
    t: float | None
    """Seconds from the request to the last bytes, when recorded."""
    detail: str | None
    signal: str | None
    signal_frame: int | None
    absent: str | None
    """Why the terminal signal is absent (None when it came)."""
    stop_reason: str | None
    stop_frame: int | None

    def where(self) -> str:
        """How and where the transport ended, briefly: ``reset by the peer at byte 8329,
        t+1.700s`` (the start of :meth:`line`, for a headline with little room)."""
        when = f", t+{self.t:.3f}s" if self.t is not None else ""
        return f"{_HOW.get(self.transport, self.transport)} at byte {self.bytes}{when}"

    @property
    def says_stop(self) -> bool:
        """Whether :meth:`line` names the stop reason: when a frame before the terminal one
        carried it (the terminal frame's is the signal's)."""
        return self.stop_reason is not None and self.stop_frame != self.signal_frame

    def line(self) -> str:
        """The ending in one line."""
        extra = f" ({plain(self.detail)[:120]})" if self.detail else ""
        parts = [f"transport {self.where()}{extra}"]
        if self.signal is not None:
            parts.append(f"terminal signal {plain(self.signal)[:60]} at #{self.signal_frame}")
        else:
            parts.append(f"no terminal signal: {self.absent}")
        if self.says_stop:
            parts.append(f"stop reason {plain(self.stop_reason or '')[:60]} at #{self.stop_frame}")
        return "; ".join(parts)

    def short(self) -> str:
        """The ending for a list's column: the transport's end and the terminal signal."""
        signal = plain(self.signal)[:30] if self.signal is not None else "no terminal signal"
        return f"{self.transport} @{self.bytes} · {signal}"

    def record(self) -> dict[str, Any]:
        return {"transport": self.transport, "bytes": self.bytes, "t": self.t,
                "detail": self.detail, "signal": self.signal, "signal_frame": self.signal_frame,
                "absent": self.absent, "stop_reason": self.stop_reason,
                "stop_frame": self.stop_frame, "line": self.line()}


def _event_of(frame: Frame, framing: str = "sse") -> str:
    unnamed = {"ndjson": "the line", "aws-eventstream": "the message"}.get(framing, "the frame")
    return plain(event_name(frame))[:60] or unnamed


def transport_of(end: StreamEnd | None, cut: str | None = None) -> tuple[str, str | None, float | None]:
    """(kind, detail, time) of the transport's end: the recording's, or ``cut`` (said how) when
    the stream was cut on purpose; a recording without its end counts as closed cleanly."""
    if cut is not None:
        return "cut", cut, None
    if end is None:
        return "clean", None, None
    detail = end.detail or (f"HTTP {end.status}" if end.status is not None else None)
    return end.kind, detail, end.at


def ending(state: TurnState, *, transport: str, received: int, t: float | None,
           detail: str | None = None, last_frame: Frame | None = None) -> Ending:
    """The ending of a turn whose stream stopped after ``received`` bytes."""
    terminal = state.terminal
    absent = None
    if terminal is None:
        name = state.protocol if state.protocol != "unknown" else "protocol's"
        if last_frame is not None and not last_frame.terminated:
            spec = SPECS.get(state.protocol)
            framing = spec.framing if spec is not None else "sse"
            absent = (f"{_event_of(last_frame, framing)} at #{last_frame.index} was never "
                      "dispatched: the "
                      f"stream ended {_UNFINISHED.get(framing, _UNFINISHED['sse'])}")
        elif received == 0:
            absent = "not one byte arrived"
        elif transport in ("clean", "missing"):
            absent = f"the stream ended without the {name} terminal signal"
        else:
            absent = f"the stream was {_HOW.get(transport, transport)} before the {name} terminal signal"
    stop = state.stop
    return Ending(transport, received, t, detail,
                  terminal.signal if terminal else None, terminal.frame if terminal else None,
                  absent, stop.reason if stop else None, stop.frame if stop else None)


class EndingWatch:
    """Follows a replay's steps for what :func:`ending` needs: the bytes received, the last
    arrival time and the last frame."""

    __slots__ = ("received", "t", "last_frame")

    def __init__(self) -> None:
        self.received = 0
        self.t: float | None = None
        self.last_frame: Frame | None = None

    def chunk(self, end: int, t: float | None) -> None:
        self.received = end
        self.t = t if t is not None else self.t

    def frame(self, frame: Frame) -> None:
        self.last_frame = frame

    def ending(self, state: TurnState, transport: str, detail: str | None = None,
               at: float | None = None) -> Ending:
        return ending(state, transport=transport, received=self.received,
                      t=at if at is not None else self.t, detail=detail,
                      last_frame=self.last_frame)
