"""Sessions held in memory by ``callscope serve``, ready to be streamed again and again.

A session's protocol is its header's, else the one detected over its bytes; its content type is
the protocol's stream type, with the parameters the recording had. The byte offsets of its SSE
frames are computed once, on first use (a ``frames=`` cut or a ``rate=`` pace asks for them).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..core.engine import Engine
from ..core.framing import decode_all, framing_of
from ..core.providers import SPECS
from ..core.replay import TimedBytes
from ..core.session import Session, StreamEnd


@dataclass
class Loaded:
    """A session held in memory, ready to be streamed again and again."""

    name: str
    protocol: str
    chunks: list[TimedBytes]
    end: StreamEnd
    content_type: str = "text/event-stream"
    _frame_ends: list[int] | None = field(default=None, repr=False)

    @property
    def size(self) -> int:
        return sum(len(data) for _, data in self.chunks)

    @property
    def frame_ends(self) -> list[int]:
        """The byte offset just past each SSE frame (block) of the session, computed once."""
        if self._frame_ends is None:
            data = b"".join(d for _, d in self.chunks)
            self._frame_ends = [f.end for f in decode_all(data, framing_of(self.protocol))]
        return self._frame_ends

    def frame_end(self, count: int) -> int:
        """The byte offset just past the first ``count`` frames."""
        ends = self.frame_ends
        if count == 0:
            return 0
        return ends[min(count, len(ends)) - 1] if ends else 0


def load(path: str, session: Session | None = None) -> Loaded:
    """Read a session (any input ``open_input`` accepts) into memory; its protocol comes from
    its header, else from detection over its bytes."""
    if session is None:
        from ..core.importers import open_input

        session = open_input(path)
    chunks: list[TimedBytes] = [(c.t, c.data) for c in session.chunks()]
    protocol = session.header.protocol
    if not protocol:
        engine = Engine()
        for _, data in chunks:
            engine.feed(data)
        protocol = engine.state.protocol
    # The protocol's stream type (its spec says), with the parameters the recording had.
    content_type = SPECS[protocol].content_type if protocol in SPECS else "text/event-stream"
    for name, value in (session.header.response_headers or {}).items():
        if name.lower() == "content-type" and value.lower().startswith(content_type):
            content_type = value
    return Loaded(os.path.basename(path), protocol, chunks, session.end, content_type)
