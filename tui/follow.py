"""Following a stream that is still arriving: follow mode and throttled refreshes.

Whoever reads the network (a worker: ``tui/live.py``, ``tui/captures.py``) posts each read to the
app as a message; the app extends the :class:`~callscope.core.timeline.Timeline` right away, in
its own thread, and tells the :class:`Follower`. The follower refreshes the panes at most
:data:`REFRESH` times a second (a fast stream is thousands of reads a second), measuring only
the frames that are new. Like ``tail -f``, the cursor stays on the newest step while following;
any move of the user's stops following, ``end`` or the follow key starts it again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.timer import Timer

from ..core.session_model import StreamEnd
from ..core.timeline import Timeline
from . import safe
from .panes.buffers import BuffersPane
from .panes.frames import FramesPane

if TYPE_CHECKING:
    from .app import CallscopeApp

REFRESH = 0.05
"""Seconds between two refreshes of the panes while a stream grows."""

END_STYLES = {"clean": "$text-success", "http_error": "bold $text-error",
              "reset": "bold $text-error", "cut": "bold $text-error", "timeout": "bold $text-error",
              "error": "bold $text-error", "missing": "$text-warning"}


class Follower:
    """Follow mode and throttled refreshes for the timeline that grows (the *stream*).

    The app may show another timeline than the stream (a cut of it, or another capture); the
    stream keeps growing meanwhile and the status line says so."""

    def __init__(self, app: CallscopeApp) -> None:
        self.app = app
        self.stream: Timeline | None = None
        self.following = False
        self._timer: Timer | None = None

    @property
    def streaming(self) -> bool:
        """The stream is still open."""
        return self.stream is not None and not self.stream.closed

    @property
    def shown(self) -> bool:
        """The app shows the stream itself (not a cut of it, not another capture)."""
        return self.stream is not None and self.app.timeline is self.stream

    def attach(self, stream: Timeline | None) -> None:
        """Follow ``stream`` (None: nothing grows); an open stream starts in follow mode."""
        self.stream = stream
        self.following = stream is not None and not stream.closed

    def grew(self, stream: Timeline) -> None:
        """``stream`` got new steps (or closed): refresh soon, once for many reads."""
        if stream is not self.stream:
            return
        if self._timer is None:
            self._timer = self.app.set_timer(REFRESH, self._refresh)

    def _refresh(self) -> None:
        self._timer = None
        app = self.app
        if not app.is_running:  # the app is closing: its widgets are going away
            return
        if not self.shown:
            app.refresh_view()  # the status line counts what arrived meanwhile
            return
        app.query_one(FramesPane).grow(follow=self.following)
        app.find_new_frames()
        if not self.streaming:  # (it is whole now)
            app.query_one(BuffersPane).measure_settled()
        last = len(app.timeline) - 1
        if self.following and not app.player.playing and last > app.cursor:
            # Everything added since the previous refresh is highlighted as fresh.
            app.since = app.cursor if app.cursor >= 0 and len(app.timeline) else None
            app.cursor = last
        else:
            app.refresh_view()

    def user_moved(self, k: int, *, to_end: bool = False) -> None:
        """The user moved the cursor: that stops following, unless they asked for the end."""
        self.following = to_end and self.streaming and self.shown

    def toggle(self) -> None:
        app = self.app
        if not self.streaming:
            app.notify("Nothing to follow: this stream is not arriving any more.", timeout=2)
            return
        if not self.shown:
            app.notify("Showing a cut of the live stream: u returns to it.", timeout=2)
            return
        self.following = not self.following
        if self.following and len(app.timeline):
            app.since, app.cursor = None, len(app.timeline) - 1
        else:
            app.refresh_view()
        app.notify("Following the newest step." if self.following else
                   "Not following: the cursor stays where it is (t follows again).", timeout=2)

    def status(self) -> list[safe.Part]:
        """The live part of the status line (nothing for a recording)."""
        stream = self.stream
        if stream is None:
            return []
        if not stream.closed:
            if not self.shown:
                return [("  ● LIVE continues", "bold $text-success"),
                        f" ({stream.total_bytes:,} B; u returns)"]
            return [("  ● LIVE", "bold $text-success"),
                    (" following" if self.following else " (t: follow)",
                     "$text-success" if self.following else "$text-muted")]
        end: StreamEnd | None = stream.end
        if end is None:
            return [("  ended", "$text-muted")]
        detail = f" {end.status}" if end.status is not None else ""
        return [("  ended: ", "$text-muted"),
                (end.kind + detail, END_STYLES.get(end.kind, "$text-muted"))]
