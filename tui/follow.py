"""Following a stream that is still arriving: the growing frames pane and follow mode.

Whoever reads the network (a worker: ``tui/live.py``, ``tui/captures.py``) posts each read to the
app as a message; the app extends the :class:`~callscope.core.timeline.Timeline` right away, in
its own thread, and tells the :class:`Follower`. The follower refreshes the panes at most
:data:`REFRESH` times a second (a fast stream is thousands of reads a second), measuring only
the frames that are new. Like ``tail -f``, the cursor stays on the newest step while following;
any move of the user's stops following, ``end`` or the follow key starts it again.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, cast

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.timer import Timer

from ..core.session_model import StreamEnd
from ..core.timeline import Timeline
from . import safe
from .panes.frames import FramesPane

if TYPE_CHECKING:
    from .app import CallscopeApp

REFRESH = 0.05
"""Seconds between two refreshes of the panes while a stream grows."""

FOLLOW_BINDING = Binding("t", "toggle_follow", "Follow live", show=True,
                         id="callscope.follow", key_display="t")
"""Not in ``commands.BINDINGS`` (which only replays): the app adds it, hidden for a finished
recording, and lists it in help and the palette itself."""

END_STYLES = {"clean": "$text-success", "http_error": "bold $text-error",
              "reset": "bold $text-error", "cut": "bold $text-error", "timeout": "bold $text-error",
              "error": "bold $text-error", "missing": "$text-warning"}


class GrowingFramesPane(FramesPane):
    """The raw frames pane, able to take in the frames a growing timeline added since."""

    def grow(self) -> None:
        timeline = self.timeline
        if timeline is None:
            return
        # Timing shows once two chunks arrived at different times; it changes every header's
        # width, so that (once per stream) measures everything again.
        if not self._timed and len({c.t for c in timeline.chunks}) > 1:
            self.load(timeline)
            return
        # A frame is complete before it is indexed, so the chunk boundaries inside it are known:
        # measuring it now is final.
        self._boundaries.extend(c.start for c in timeline.chunks[len(self._boundaries):])
        self._widths.extend(self._measure(f) for f in timeline.frames[len(self._widths):])
        self._layout_width = 0  # the rows changed: lay out again
        self._relayout()
        self.refresh()


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
        app.query_one(GrowingFramesPane).grow()
        app.find_new_frames()
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


class ExtraCommands(Provider):
    """Palette entries for the keys the app adds to ``commands.BINDINGS`` (follow, the captures
    list), when they apply."""

    def _commands(self) -> list[tuple[str, str, str]]:
        app = cast("CallscopeApp", self.app)
        actions = {b.id: b.action for b in app.BINDINGS if isinstance(b, Binding)}
        return [(description, f"key: {keys}", actions[binding_id])
                for keys, description, binding_id in app.extra_help_rows()]

    async def discover(self) -> Hits:
        for title, help_text, action in self._commands():
            yield DiscoveryHit(Content(title), partial(self.app.run_action, action), text=title,
                               help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, action in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(self.app.run_action, action),
                          text=title, help=help_text)
