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
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from pathlib import Path

from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.reactive import var
from textual.widgets import Footer, Static

from ..core.engine import ChunkStep, DecisionStep
from ..core.lanes import CallView
from ..core.replay import Chunking, TimedBytes
from ..core.timeline import Kind, Timeline
from ..core.tools import ToolSet
from . import exports, safe
from .call_detail import CallDetailScreen
from .commands import BINDINGS, CallscopeCommands, help_rows
from .follow import Follower
from .gcpolicy import GcPolicy
from .indexer import Indexer
from .panes.buffers import BuffersPane
from .panes.decisions import DecisionsPane
from .panes.frames import FramesPane
from .panes.lane import Lane
from .player import Player
from .screens import DetailScreen, HelpScreen, PromptScreen
from .status import status_line

RANDOM_SEED = 7
"""The seed of the random chunking the ``c`` key cycles to."""
BACKGROUND_BYTES = 1_000_000
"""Inputs larger than this are indexed while the app runs (the first steps at once), so the
screen appears at once; smaller ones (a fraction of a second) are indexed before it."""


class CallscopeApp(App[None]):
    """Step through a recorded stream: raw frames | argument buffers | gate decisions."""

    CSS_PATH = "app.tcss"
    TITLE = "callscope"
    COMMANDS = App.COMMANDS | {CallscopeCommands}
    BINDINGS = BINDINGS

    # A var, not a reactive: a reactive on the App repaints the whole screen on every change;
    # the panes refresh (only the rows that changed) themselves.
    cursor: var[int] = var(0, init=False, always_update=True)

    def __init__(self, chunks: Sequence[TimedBytes], *, source: str, protocol: str | None = None,
                 tools: ToolSet | None = None, note: str | None = None,
                 chunking: Chunking | None = None, keymap: Mapping[str, str] | None = None,
                 timeline: Timeline | None = None) -> None:
        """``timeline``: show this one (typically a growing one) instead of building one."""
        super().__init__()
        self.source, self.note, self.keymap = source, note, dict(keymap or {})
        chunks = list(chunks)
        self.indexer: Indexer | None = None
        grows = timeline  # a timeline given is the one to follow (when it still grows)
        if timeline is None:
            args = (chunks, protocol, tools, chunking or Chunking("recorded"))
            if sum(len(data) for _, data in chunks) > BACKGROUND_BYTES:
                timeline = Timeline.indexing(*args)
                self.indexer = Indexer(self, timeline)
            else:
                timeline = Timeline.build(*args)
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
        self.player = Player(self)
        self.gc_policy = GcPolicy(self)
        self.sub_title = safe.plain(source)

    @property
    def building(self) -> bool:
        """The recording is still being indexed (its first steps are shown meanwhile)."""
        return self.indexer is not None and not self.indexer.done

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        with Horizontal(id="panes"):
            yield FramesPane(id="frames")
            yield BuffersPane(id="buffers")
            yield DecisionsPane(id="decisions")
        yield Footer()

    def on_mount(self) -> None:
        self.gc_policy.start()
        if self.keymap:
            self.set_keymap(self.keymap)
        self.query_one("#status").set_class(bool(self.note), "-note")
        self.query_one("#frames").border_title = "raw frames"
        self.query_one("#buffers").border_title = "argument buffers"
        self.query_one("#decisions").border_title = "harness decisions"
        self._load()
        if self.follower.following and len(self.timeline):
            self.cursor = len(self.timeline) - 1
        if self.building:
            assert self.indexer is not None
            self.run_worker(self.indexer.run(), name="index", exclusive=True)

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

    def _load(self) -> None:
        for pane in (self.query_one(FramesPane), self.query_one(BuffersPane),
                     self.query_one(DecisionsPane)):
            pane.load(self.timeline)
        self._find(self.search_text)
        self.refresh_view()

    def watch_cursor(self) -> None:
        self.gc_policy.moved()
        self.refresh_view()

    def refresh_view(self) -> None:
        view = self.timeline.view(self.cursor, self.since)
        if self.selected not in {c.key for c in view.calls}:
            self.selected = None
        only = self.matches if self.filtering and self.search_text else None
        self.query_one(FramesPane).show(view, frozenset(self.matches), only)
        self.query_one(BuffersPane).show(view, self.selected)
        self.query_one(DecisionsPane).show(view)
        status = self.query_one("#status", Static)
        line = status_line(self, view)
        if not safe.same(line, status.content):
            status.update(line, layout=False)

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
        self.move(tl.next_step(self.cursor, kind) if direction > 0 else tl.prev_step(self.cursor, kind),
                  stepped=True)

    def action_first(self) -> None:
        self.move(0)

    def action_last(self) -> None:
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
                self.move(tl.step_for_frame(int(body)))
            elif text[0] in "@b":
                self.move(tl.step_for_offset(int(body, 0)))
            else:
                self.move(int(text, 0))
        except ValueError:
            self.notify(f"Not a step, #frame or @offset: {safe.short(text, 40)}", markup=False,
                        severity="error")

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

    # -- search --------------------------------------------------------------------------------

    def action_search(self) -> None:
        self.push_screen(PromptScreen("search frames", "event name or text",
                                      "frames whose event is, or whose bytes contain, this text "
                                      "(case-insensitive); f / F: next / previous match",
                                      self.search_text), self._search)

    def _search(self, text: str | None) -> None:
        if text is None:
            return
        self._find(text)
        if text and not self.matches:
            self.notify(f"No frame matches {safe.short(text, 40)}", markup=False, severity="warning")
        self.refresh_view()
        if self.matches:
            self.action_match(1)

    def _find(self, text: str, first: int = 0) -> None:
        """Search the frames from ``first`` on (earlier matches are kept)."""
        self.search_text = text
        needle = text.lower().encode("utf-8", "surrogatepass")
        self.matches = self.matches[:bisect_left(self.matches, first)] + [
            f.index for f in self.timeline.frames[first:]
            if f.event == text or needle in f.raw.lower()] if text else []
        self._searched = len(self.timeline.frames)

    def find_new_frames(self) -> None:
        """The timeline grew: search the new frames too."""
        if self.search_text:
            self._find(self.search_text, self._searched)

    def action_filter(self) -> None:
        if not self.search_text:
            self.notify("Search first (/): the filter shows only the frames that match.", timeout=2)
            return
        self.filtering = not self.filtering
        self.refresh_view()

    def action_match(self, direction: int) -> None:
        if not self.matches:
            self.notify("No search results: press / to search.", timeout=2)
            return
        view = self.timeline.view(self.cursor)
        current = view.frame.index if view.frame is not None else -1
        ahead = [i for i in self.matches if (i > current if direction > 0 else i < current)]
        target = (ahead[0] if direction > 0 else ahead[-1]) if ahead else (
            self.matches[0] if direction > 0 else self.matches[-1])
        self.action_goto_frame(target)

    # -- play, breakpoints (the player does the timing) -----------------------------------------

    def action_play_pause(self) -> None:
        self.player.toggle()

    def action_speed(self, direction: int) -> None:
        self.player.change_speed(direction)

    def action_breakpoint(self, name: str) -> None:
        self.player.toggle_breakpoint(name)

    # -- cut, chunking -------------------------------------------------------------------------

    def action_cut(self) -> None:
        """End the stream right after the current frame; when the cursor is on a network read
        that completed no frame (chunk stepping), right after that read."""
        view = self.timeline.view(self.cursor)
        on_read = view.anchor >= 0 and isinstance(self.timeline.step(view.anchor), ChunkStep)
        self._cut(view.received if on_read or view.frame is None else view.frame.end)

    def action_cut_prompt(self) -> None:
        self.push_screen(PromptScreen("cut at byte offset", "1024",
                                      "the stream ends after this many bytes (u undoes)"),
                         lambda text: self._cut_text(text))

    def _cut_text(self, text: str | None) -> None:
        try:
            if text and text.strip():
                self._cut(int(text.strip().lstrip("@"), 0))
        except ValueError:
            self.notify("Not a byte offset.", severity="error")

    def _cut(self, offset: int) -> None:
        if offset >= self.timeline.total_bytes:
            self.notify("Nothing to cut: the stream already ends here. Move back first.", timeout=3)
            return
        self.player.pause()
        self.undo.append((self.timeline, self.cursor))
        self.timeline = self.timeline.cut_at(offset)
        self.cursor = 0  # reset first, so the panes never see an index from the old timeline
        self._load()
        self.move(len(self.timeline) - 1, quiet=True)
        refused = sum(isinstance(s, DecisionStep) and s.decision.action == "refuse"
                      for s in self.timeline.steps)
        self.notify(f"Cut at byte {offset}: the stream now ends there; {refused} call(s) refused. "
                    "u undoes.", timeout=4)

    def action_undo_cut(self) -> None:
        if not self.undo:
            self.notify("No cut to undo.", timeout=2)
            return
        self.timeline, cursor = self.undo.pop()
        self.since, self.cursor = None, 0
        self._load()
        self.cursor = cursor

    def action_cycle_chunking(self) -> None:
        if self.follower.streaming or self.building:
            self.notify("The stream is still arriving: change the chunking once it ended."
                        if self.follower.streaming else
                        "The recording is still being indexed: change the chunking once it is.",
                        timeout=3)
            return
        order = ["recorded", "bytes:1", f"random:{RANDOM_SEED}"]
        now = str(self.timeline.chunking)
        nxt = Chunking.parse(order[(order.index(now) + 1) % 3 if now in order else 0])
        view = self.timeline.view(self.cursor)
        before = [s.decision for s in self.timeline.steps if isinstance(s, DecisionStep)]
        self.timeline = self.timeline.rechunked(nxt)
        after = [s.decision for s in self.timeline.steps if isinstance(s, DecisionStep)]
        self.undo = [(t.rechunked(nxt), c) for t, c in self.undo]
        self.since, self.cursor = None, 0
        self._load()
        self.cursor = self.timeline.step_for_frame(view.frame.index) if view.frame is not None else 0
        same = "decisions unchanged" if after == before else "DECISIONS CHANGED (engine bug!)"
        self.notify(f"Chunking {nxt}: {len(self.timeline.chunks)} chunks; {same}.", timeout=3,
                    severity="information" if after == before else "error")

    # -- screens, exports, clipboard -----------------------------------------------------------

    def action_detail(self) -> None:
        view = self.timeline.view(self.cursor)
        if view.frame is None:
            self.notify("No frame yet at this step.", timeout=2)
            return
        self.push_screen(DetailScreen(self.timeline, view.frame.index))

    def action_call_detail(self) -> None:
        call = self._selected_call()
        if call is None:
            self.notify("No call at this step.", timeout=2)
            return
        self.push_screen(CallDetailScreen(call))

    def action_break_on_event(self) -> None:
        self.push_screen(PromptScreen("break on event type", "response.completed   message_stop",
                                      "play stops at a frame of this event type (empty: off)"),
                         lambda text: self.player.set_event_break((text or "").strip() or None))

    def action_help(self) -> None:
        self.push_screen(HelpScreen(help_rows(self)))

    def action_export(self, what: str) -> None:
        call = self._selected_call()
        if what == "call" and call is None:
            self.notify("No call at this step.", timeout=2)
            return
        try:
            paths = exports.export(what, self.timeline, self.source, Path.cwd(), call, self.cursor)
        except OSError as exc:
            self.notify(f"Export failed: {exc}", severity="error", markup=False)
            return
        self.notify("Wrote " + ", ".join(str(p) for p in paths), markup=False, timeout=5)

    def action_copy(self, what: str) -> None:
        view = self.timeline.view(self.cursor)
        if what == "frame":
            text = view.frame.raw.decode("utf-8", "replace") if view.frame is not None else ""
        else:
            call = self._selected_call()
            text = call.text if call is not None else ""
        self.copy_to_clipboard(text)
        self.notify(f"Copied {len(text.encode('utf-8', 'surrogatepass'))} bytes to the clipboard.",
                    timeout=2)


def run_app(chunks: Sequence[TimedBytes], *, source: str, protocol: str | None,
            tools: ToolSet | None, note: str | None) -> None:
    """Open the debugger on recorded chunks (``(t, bytes)`` pairs as recorded)."""
    CallscopeApp(chunks, source=source, protocol=protocol, tools=tools, note=note).run()
