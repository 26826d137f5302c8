"""The callscope app: three panes over one timeline, at one cursor.

The app owns the model (a :class:`~callscope.core.timeline.Timeline`) and one reactive ``cursor``.
Whenever the cursor moves, every pane renders ``timeline.view(cursor)``; panes never talk to each
other, they only post "select this" messages that the app turns into a cursor move. Every key is a
``Binding`` with an ``id`` (remappable with a keymap), listed in the footer, the f1 help and the
command palette.

The timeline may still be growing (``timeline=Timeline.live(...)``: ``callscope live``, a capture
of ``callscope proxy``): whoever reads the network posts the reads to the app, which extends the
timeline and lets its :class:`~.follow.Follower` refresh the panes and keep the cursor on the
newest step until the user moves it.

The keys that search frames (:mod:`.app_search`), rebuild the timeline (cut, undo, rechunk:
:mod:`.app_rebuild`) and show or take out what the cursor is on (:mod:`.app_outputs`) are
mixins of the app, in their own modules (over :mod:`.app_mixin`, what they use of the app).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.reactive import var
from textual.theme import Theme
from textual.widgets import Static

from ..core.lanes import CallView
from ..core.limits import DEFAULT_LIMITS, Limits
from ..core.replay import Chunking, TimedBytes
from ..core.session_model import SessionHeader, StreamEnd
from ..core.timeline import Kind, Timeline
from ..core.tools import ToolSet
from . import safe, settings
from .app_outputs import OutputActions
from .app_panes import PaneActions
from .app_rebuild import RebuildActions
from .app_search import SearchActions
from .commands import BINDINGS, CallscopeCommands
from .follow import Follower
from .footer import FittingFooter
from .gcpolicy import GcPolicy
from .indexer import BACKGROUND_BYTES, Indexer
from .panes.buffers import BuffersPane
from .panes.decisions_pane import DecisionsPane
from .panes.frame_view import FrameDetailPane
from .panes.frames import FramesPane
from .panes.lane import Lane
from .panes.scrolling import PlacedColumn
from .player import Player
from .screens import PromptScreen
from .status import StatusLine, show_status, status_line

NARROW = 120
"""A terminal narrower than this lays the panes out two by two, not three side by side."""


class CallscopeApp(SearchActions, RebuildActions, OutputActions, PaneActions, App[None]):
    """Step through a recorded stream: frames and the frame | argument buffers | decisions."""

    CSS_PATH = "app.tcss"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW, "-wide")]
    """Below :data:`NARROW` cells the panes are laid out two by two (see app.tcss)."""
    TITLE = "callscope"
    COMMANDS = App.COMMANDS | {CallscopeCommands}
    BINDINGS = BINDINGS

    # A var, not a reactive: a reactive on the App repaints the whole screen on every change;
    # the panes refresh (only the rows that changed) themselves.
    cursor: var[int] = var(0, init=False, always_update=True)

    def __init__(self, chunks: Sequence[TimedBytes], *, source: str, protocol: str | None = None,
                 tools: ToolSet | None = None, note: str | None = None,
                 chunking: Chunking | None = None, keymap: Mapping[str, str] | None = None,
                 timeline: Timeline | None = None, end: StreamEnd | None = None,
                 header: SessionHeader | None = None, limits: Limits = DEFAULT_LIMITS) -> None:
        """``timeline``: show this one (typically a growing one) instead of building one.
        ``end``: how the recording's transport ended (kept by a session export). ``limits``:
        the engine's, for the timeline built here (a timeline given carries its own)."""
        super().__init__()
        self.source, self.note, self.keymap = source, note, dict(keymap or {})
        self.recorded_end, self.header = end, header
        chunks = list(chunks)
        self.indexer: Indexer | None = None
        grows = timeline  # a timeline given is the one to follow (when it still grows)
        if timeline is None:
            args = (chunks, protocol, tools, chunking or Chunking("recorded"), None, limits)
            if sum(len(data) for _, data in chunks) > BACKGROUND_BYTES:
                timeline = Timeline.indexing(*args)
                self.indexer = Indexer(self, timeline)
            else:
                timeline = Timeline.build(*args)
        if timeline.end is None and end is not None:  # (what the recording says of its end)
            timeline.end = end
        self.timeline = timeline
        self.follower = Follower(self)
        self.follower.attach(grows)
        self.undo: list[tuple[Timeline, int]] = []
        self.since: int | None = None
        self.selected: str | None = None
        self.search_text = ""
        self.filtering = False
        self.matches: list[int] = []
        self._searched = 0  # frames searched so far (a growing timeline searches only new ones)
        self.loaded = False
        """The panes show the timeline (from the first layout on: see :meth:`on_mount`)."""
        self.player = Player(self)
        self.gc_policy = GcPolicy(self)
        self.sub_title = safe.plain(source)

    @property
    def building(self) -> bool:
        """The recording is still being indexed (its first steps are shown meanwhile)."""
        return self.indexer is not None and not self.indexer.done

    def compose(self) -> ComposeResult:
        yield StatusLine(id="status")
        with Horizontal(id="panes"):
            with PlacedColumn(id="left"):
                yield FramesPane(id="frames")
                yield FrameDetailPane(id="frame-detail")
            yield BuffersPane(id="buffers")
            yield DecisionsPane(id="decisions")
        yield FittingFooter()

    def on_mount(self) -> None:
        self.gc_policy.start()
        if self.keymap:
            self.set_keymap(self.keymap)
        saved = settings.saved_theme()
        if saved is not None and saved in self.available_themes and saved != self.theme:
            self.theme = saved
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self.query_one("#status").set_class(bool(self.note), "-note")
        self.query_one("#frames").border_title = "frames"
        self.query_one("#buffers").border_title = "argument buffers"
        self.query_one("#decisions").border_title = "harness decisions"
        # The panes load once their screen is laid out (on_ready), not here: a pane lays its
        # rows out at its own width, which it has from the first layout on, and rows laid out
        # before it would be 8 cells wide. So the first paint is the status line (with the
        # indexing progress) over empty panes. The breakpoint classes are set here, from the
        # terminal's width, so that the first layout is that width's (Textual sets them on
        # the screen's Resize, after the first layout).
        narrow = self.size.width < NARROW
        self.screen.set_class(narrow, "-narrow").set_class(not narrow, "-wide")
        show_status(self.query_one("#status", Static), status_line(self, self.timeline.view(0)))

    def on_ready(self) -> None:
        """The screen is laid out: the panes know their width."""
        self._load()
        if self.follower.following and len(self.timeline):
            self.cursor = len(self.timeline) - 1
        if self.building:
            assert self.indexer is not None
            self.run_worker(self.indexer.run(), name="index", exclusive=True)

    def _theme_changed(self, theme: Theme) -> None:
        if theme.name != settings.saved_theme():  # (kept for the next run)
            settings.save(theme=theme.name)

    def on_unmount(self) -> None:
        self.gc_policy.stop()

    # -- the one cursor ------------------------------------------------------------------------

    def show_timeline(self, timeline: Timeline, source: str, *, grows: bool = True) -> None:
        """Show another timeline (a capture picked in the proxy's list); ``grows``: it is the
        stream to follow (an open one starts in follow mode)."""
        self.player.pause()
        self.undo.clear()
        self.source, self.sub_title = source, safe.plain(source)
        self.timeline, self.since, self.selected = timeline, None, None
        self.cursor = 0  # first, so the panes never see an index from the old timeline
        self.follower.attach(timeline if grows else None)
        self._load()
        if self.follower.following and len(timeline):
            self.cursor = len(timeline) - 1

    def _load(self, cursor: int | None = None) -> None:
        """Load the panes with the timeline and show it; at ``cursor`` when given, set without
        its watcher first: the watcher's refresh would show the new timeline in panes still
        loaded with the old one, a refresh of every pane that the load's own repeats."""
        if cursor is not None:
            self.set_reactive(CallscopeApp.cursor, cursor)
            self.gc_policy.moved()
        self.loaded = True
        for pane in (self.query_one(FramesPane), self.query_one(FrameDetailPane),
                     self.query_one(BuffersPane), self.query_one(DecisionsPane)):
            pane.load(self.timeline)
        self._find(self.search_text)
        self.refresh_view()

    def watch_cursor(self) -> None:
        self.gc_policy.moved()
        self.refresh_view()

    def refresh_view(self) -> None:
        if not self.loaded:  # (not laid out yet: see on_mount)
            return
        view = self.timeline.view(self.cursor, self.since)
        if self.selected not in {c.key for c in view.calls}:
            self.selected = None
        only = self.matches if self.filtering and self.search_text else None
        self.query_one(FramesPane).show(view, frozenset(self.matches), only)
        self.query_one(FrameDetailPane).show(view)
        self.query_one(BuffersPane).show(view, self.selected)
        self.query_one(DecisionsPane).show(view)
        status = self.query_one("#status", Static)
        line = status_line(self, view)
        if not safe.same(line, status.content):
            show_status(status, line)

    def move(self, k: int | None, *, quiet: bool = False, stepped: bool = False) -> None:
        if k is None:
            if not quiet:
                self.notify("Nothing further in that direction.", timeout=1.5)
            return
        k = min(max(k, 0), len(self.timeline) - 1)
        # Stepping forward highlights all the text added since the previous position; a jump
        # highlights what the current frame added.
        self.since = self.cursor if stepped and k > self.cursor else None
        self.follower.user_moved(k)
        self.cursor = k

    # -- navigation ----------------------------------------------------------------------------

    def action_step(self, kind: Kind, direction: int) -> None:
        tl = self.timeline
        k = tl.next_step(self.cursor, kind) if direction > 0 else tl.prev_step(self.cursor, kind)
        if k is not None and self.filtering and self.search_text:  # navigation obeys the filter
            k = self._shown_from(k, kind, direction)
            if k is None:
                self.notify("No more frames that match the filter this way.", timeout=2)
                return
        self.move(k, stepped=True)

    def _shown_from(self, k: int, kind: Kind, direction: int) -> int | None:
        """The first step from ``k`` on (in ``direction``, by ``kind``) whose frame the filter
        shows; None when there is none."""
        tl, shown = self.timeline, set(self.matches)
        step: int | None = k
        while step is not None:
            frame = tl.view(step).frame
            if frame is not None and frame.index in shown:
                return step
            step = tl.next_step(step, kind) if direction > 0 else tl.prev_step(step, kind)
        return None

    def action_first(self) -> None:
        if self.filtering and self.matches:
            self.action_goto_frame(self.matches[0])
            return
        self.move(0)

    def action_last(self) -> None:
        if self.filtering and self.matches:
            self.action_goto_frame(self.matches[-1])
            return
        self.move(len(self.timeline) - 1)
        self.follower.user_moved(self.cursor, to_end=True)  # the end of a live stream: follow it

    def action_toggle_follow(self) -> None:
        self.follower.toggle()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # The live-only keys (commands.LIVE_ONLY) are off, and hidden, where they do not apply:
        # follow needs a stream that arrives; only the proxy (ProxyApp) has a captures list.
        if action == "toggle_follow":
            return self.follower.stream is not None
        return action != "captures"

    def action_goto_step(self, k: int) -> None:
        self.move(k)

    def action_goto_frame(self, index: int) -> None:
        if self.timeline.frames:
            self.move(self.timeline.step_for_frame(index))

    def on_frames_pane_frame_selected(self, message: FramesPane.FrameSelected) -> None:
        self.action_goto_frame(message.index)

    def on_lane_fragment_clicked(self, message: Lane.FragmentClicked) -> None:
        self.action_goto_frame(message.frame)

    def on_lane_selected(self, message: Lane.Selected) -> None:
        self.selected = message.key
        self.action_call_frame()

    def action_goto(self) -> None:
        self.push_screen(PromptScreen("go to", "42   #7   @1024",
                                      "a step number, #frame, or @byte offset"), self._goto)

    def _goto(self, text: str | None) -> None:
        text = (text or "").strip()
        if not text:
            return
        tl, body = self.timeline, text[1:].strip()
        try:
            if text[0] in "#f":
                k, n, what = int(body), len(tl.frames), "frame"
                target = tl.step_for_frame(k) if 0 <= k < n else None
            elif text[0] in "@b":
                k, n, what = int(body, 0), tl.total_bytes, "byte"
                target = tl.step_for_offset(k) if 0 <= k < n else None
            else:
                k, n, what = int(text, 0), len(tl), "step"
                target = k if 0 <= k < n else None
        except ValueError:
            self.notify(f"Not a step, #frame or @offset: {safe.short(text, 40)}", markup=False,
                        severity="error")
            return
        if target is None:  # said, not clamped: a mistyped number should not look like a move
            self.notify(f"No {what} {k}: " + (f"{what}s go from 0 to {n - 1}." if n else
                                               f"the session has no {what}s."),
                        severity="warning", timeout=3)
            return
        self.move(target)

    def action_select_call(self, direction: int) -> None:
        keys = [c.key for c in self.timeline.view(self.cursor).calls]
        if not keys:
            return
        i = keys.index(self.selected) + direction if self.selected in keys else (
            0 if direction > 0 else len(keys) - 1)
        self.selected = keys[i % len(keys)]
        self.refresh_view()

    def action_call_frame(self) -> None:
        call = self._selected_call()
        if call is not None and call.last_frame is not None:
            self.move(self.timeline.step_for_frame(call.last_frame), quiet=True)
        self.refresh_view()

    def _selected_call(self) -> CallView | None:
        calls = self.timeline.view(self.cursor).calls
        return next((c for c in calls if c.key == self.selected), calls[0] if calls else None)

    # -- play, breakpoints (the player does the timing) -----------------------------------------

    def action_play_pause(self) -> None:
        self.player.toggle()

    def action_speed(self, direction: int) -> None:
        self.player.change_speed(direction)

    def action_breakpoint(self, name: str) -> None:
        self.player.toggle_breakpoint(name)

    def action_break_on_event(self) -> None:
        self.push_screen(PromptScreen("break on event type", "response.completed   message_stop",
                                      "play stops at a frame of this event type (empty: off)"),
                         lambda text: self.player.set_event_break((text or "").strip() or None))


def run_app(chunks: Sequence[TimedBytes], *, source: str, protocol: str | None,
            tools: ToolSet | None, note: str | None) -> None:
    """Open the debugger on recorded chunks (``(t, bytes)`` pairs as recorded)."""
    CallscopeApp(chunks, source=source, protocol=protocol, tools=tools, note=note).run()
