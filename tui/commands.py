"""The command palette provider: every key binding, plus commands that depend on the state
(breakpoints on/off, the next chunking, jump to each call present at the cursor)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, cast

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider

from . import safe

if TYPE_CHECKING:
    from .app import CallscopeApp


class CallscopeCommands(Provider):
    """Commands named like the help screen; the key is shown beside each one."""

    def _commands(self) -> Iterator[tuple[str, str, Callable[[], object]]]:
        app = cast("CallscopeApp", self.app)
        keys = {row[2]: row[0] for row in app.help_rows()}
        for binding in app.BINDINGS:
            assert isinstance(binding, Binding) and binding.id is not None
            if binding.action in ("quit", "help"):
                continue
            title = binding.description
            if binding.action.startswith("breakpoint("):
                name = binding.action.split("'")[1]
                title += f" ({'on' if name in app.breakpoints else 'off'})"
            yield title, f"key: {keys[binding.id]}", partial(app.run_action, binding.action)
        if app.timeline.frames:
            view = app.timeline.view(app.cursor)
            for call in view.calls:
                label = safe.short(f"{call.name or '?'} ({call.key})", 60)
                if call.last_frame is not None:
                    yield (f"Jump to call {label}", "the frame of its latest fragment",
                           partial(app.action_goto_frame, call.last_frame))

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, text=title, help=help_text)
