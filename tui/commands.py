"""Keys and commands: every binding (with an id, so a keymap can move it), the rows of the help
screen, and the command palette provider: every binding, plus commands that depend on the state
(breakpoints on/off, jump to each call present at the cursor).

A few keys apply only to live traffic (:data:`LIVE_ONLY`): the app's ``check_action`` turns them
off (and out of the footer) where they do not apply; help and the palette leave them out there."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from textual.binding import Binding, BindingType
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.markup import escape

from . import safe

if TYPE_CHECKING:
    from textual.app import App

    from .app import CallscopeApp


def _b(keys: str, action: str, description: str, id: str, show: bool = False,
       key_display: str | None = None, priority: bool = False) -> Binding:
    return Binding(keys, action, description, show=show, id=f"callscope.{id}",
                   key_display=key_display, priority=priority)


def list_key(description: str) -> Binding:
    """The key back to the list on top of the panes (a proxy's captures, a folder's
    sessions), named for what that list holds."""
    return _b("escape,l", "captures", description, "captures", True)


BINDINGS: list[BindingType] = [
    _b("right,n", "step('frame', 1)", "Next frame", "next-frame", True, "→/n"),
    _b("left,p", "step('frame', -1)", "Prev frame", "prev-frame", True, "←/p"),
    _b("full_stop", "step('chunk', 1)", "Next chunk", "next-chunk"),
    _b("comma", "step('chunk', -1)", "Previous chunk", "prev-chunk"),
    _b("j", "step('call', 1)", "Next call event", "next-call"),
    _b("k", "step('call', -1)", "Previous call event", "prev-call"),
    _b("down", "step('step', 1)", "Next step (any)", "next-step"),
    _b("up", "step('step', -1)", "Previous step (any)", "prev-step"),
    _b("home", "first", "First step", "first"),
    _b("end", "last", "Last step", "last"),
    _b("d", "step('decision', 1)", "Next decision", "next-decision"),
    _b("D", "step('decision', -1)", "Previous decision", "prev-decision"),
    _b("a", "step('anomaly', 1)", "Next anomaly", "next-anomaly"),
    _b("A", "step('anomaly', -1)", "Previous anomaly", "prev-anomaly"),
    _b("r", "step('refusal', 1)", "Next refusal", "next-refusal"),
    _b("R", "step('refusal', -1)", "Previous refusal", "prev-refusal"),
    _b("g", "goto", "Go to step / #frame / @byte", "goto", True),
    _b("space", "play_pause", "Play/pause", "play", True),
    _b("plus,equals_sign", "speed(1)", "Faster", "faster"),
    _b("minus", "speed(-1)", "Slower", "slower"),
    _b("1", "breakpoint('refusal')", "Break on refusal", "break-refusal"),
    _b("2", "breakpoint('parse')", "Break when a draft parses", "break-parse"),
    _b("3", "breakpoint('anomaly')", "Break on anomaly", "break-anomaly"),
    _b("4", "break_on_event", "Break on an event type…", "break-event"),
    _b("x", "cut", "Cut here", "cut", True),
    _b("X", "cut_prompt", "Cut at byte offset", "cut-at"),
    _b("u", "undo_cut", "Undo cut", "undo-cut", True),
    _b("c", "cycle_chunking", "Chunking", "chunking", True),
    _b("enter", "detail", "Frame detail", "detail", True),
    _b("C", "call_detail", "Selected call's detail", "call-detail"),
    _b("e", "expert", "Expert info: the whole turn (ending, decisions, anomalies)", "expert", True),
    _b("i", "request", "The request beside the response", "request"),
    _b("slash", "search", "Search frames", "search", True),
    _b("f", "match(1)", "Next match", "next-match"),
    _b("F", "match(-1)", "Previous match", "prev-match"),
    _b("v", "filter", "Show only matching frames (toggle)", "filter"),
    _b("right_square_bracket", "select_call(1)", "Select next call", "next-lane"),
    _b("left_square_bracket", "select_call(-1)", "Select previous call", "prev-lane"),
    _b("o", "call_frame", "Jump to the selected call's frame", "call-frame"),
    _b("S", "export('session')", "Export session (.jsonl and .sse)", "export-session"),
    _b("L", "export('log')", "Export decision log (JSON, Markdown)", "export-log"),
    _b("W", "export('call')", "Export selected call's arguments", "export-call"),
    _b("y", "copy('call')", "Copy selected call's arguments", "copy-call"),
    _b("Y", "copy('frame')", "Copy current frame's raw text", "copy-frame"),
    _b("tab", "focus_pane(1)", "Focus the next pane (page, zoom, resize act on it)", "next-pane",
       priority=True),  # (over Textual's own tab: the panes never take the keyboard's focus)
    _b("shift+tab", "focus_pane(-1)", "Focus the previous pane", "prev-pane", priority=True),
    _b("z", "zoom", "Zoom the focused pane: alone under the status line (toggle)", "zoom"),
    _b("pagedown", "page(1)", "Scroll the focused pane down a page", "page-down"),
    _b("pageup", "page(-1)", "Scroll the focused pane up a page", "page-up"),
    _b("shift+down", "scroll_line(1)", "Scroll the focused pane down a line", "line-down"),
    _b("shift+up", "scroll_line(-1)", "Scroll the focused pane up a line", "line-up"),
    _b("greater_than_sign", "resize_pane(1)", "Widen the focused pane", "widen"),
    _b("less_than_sign", "resize_pane(-1)", "Narrow the focused pane", "narrow"),
    _b("ctrl+s", "screenshot(None, '.')", "Save an SVG screenshot (cwd)", "screenshot"),
    _b("f1,question_mark", "help", "Help", "help", True, "f1/?"),
    _b("q", "quit", "Quit", "quit"),
    # live traffic only (see LIVE_ONLY)
    _b("t", "toggle_follow", "Follow live", "follow", True, "t"),
    list_key("Captures"),
]
"""The app's keys; shown (show=True) in the footer, all of them in help and the palette."""

DEBUGGER_ACTIONS = frozenset(
    {b.action.split("(")[0] for b in BINDINGS if isinstance(b, Binding)} - {"quit", "help"})
"""The app's keys that act on the panes: off while a list (captures, a folder) is on screen."""

LIVE_ONLY = frozenset({"toggle_follow", "captures"})
"""Actions that exist only for live traffic (a stream to follow, the proxy's captures list)."""


def available(app: App[Any], binding: Binding) -> bool:
    """The key applies in this app, now (help and the palette list only those)."""
    action = binding.action.split("(")[0]
    return action not in LIVE_ONLY or bool(app.check_action(action, ()))


def _bindings(app: App[Any]) -> Iterator[Binding]:
    for binding in BINDINGS:
        assert isinstance(binding, Binding) and binding.id is not None
        if available(app, binding):
            yield binding


def help_rows(app: App[Any]) -> list[tuple[str, str, str]]:
    """(keys as the user must press them now, description, binding id), keymap applied."""
    rows = []
    for binding in _bindings(app):
        assert binding.id is not None
        keys = app._keymap.get(binding.id, binding.key)
        shown = " ".join(app.get_key_display(Binding(k.strip(), "")) for k in keys.split(","))
        rows.append((shown, binding.description, binding.id))
    return rows


class CallscopeCommands(Provider):
    """Commands named like the help screen; the key is shown beside each one."""

    def _commands(self) -> Iterator[tuple[str, str, Callable[[], object]]]:
        app = cast("CallscopeApp", self.app)
        keys = {row[2]: row[0] for row in help_rows(app)}
        for binding in _bindings(app):
            assert binding.id is not None
            if binding.action in ("quit", "help"):
                continue
            title = binding.description
            if binding.action.startswith("breakpoint("):
                name = binding.action.split("'")[1]
                title += f" ({'on' if name in app.player.breakpoints else 'off'})"
            yield title, f"key: {keys[binding.id]}", partial(app.run_action, binding.action)
        if app.timeline.frames:
            view = app.timeline.view(app.cursor)
            for call in view.calls:
                label = safe.short(f"{call.name or '?'} ({call.key})", 60)
                if call.last_frame is not None:
                    yield (f"Jump to call {label}", "the frame of its latest fragment",
                           partial(app.action_goto_frame, call.last_frame))

    # The palette parses str prompts and help as markup (and Matcher.highlight does too), and
    # titles may hold call names from the stream: prompts are built as Content here, help escaped.

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(Content(title), callback, text=title, help=escape(help_text))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score, offsets = matcher.fuzzy_search.match(query, title)
            if score > 0:
                shown = Content(title)
                for offset in offsets:
                    shown = shown.stylize(self.match_style or "reverse", offset, offset + 1)
                yield Hit(score, shown, callback, text=title, help=escape(help_text))
