"""What the cursor is on, shown or taken out of the app: detail screens, help, exports, copy.

A mixin of :class:`~.app.CallscopeApp`: the frame or call at the cursor opens in its own screen,
is written to files (:mod:`.exports`) or copied to the clipboard.
"""

from __future__ import annotations

from pathlib import Path

from ..core.errors import CallscopeError
from . import exports
from .app_mixin import AppMixin
from .call_detail import CallDetailScreen
from .commands import help_rows
from .expert import ExpertScreen
from .export_prompt import ExportPrompt
from .request_view import RequestScreen
from .screens import DetailScreen, HelpScreen


class OutputActions(AppMixin):
    """The detail, help, export and copy keys of :class:`~.app.CallscopeApp`."""

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

    def action_expert(self) -> None:
        self.push_screen(ExpertScreen(self.timeline, self.recorded_end or self.timeline.end))

    def action_request(self) -> None:
        self.push_screen(RequestScreen(self.header, self.recorded_end or self.timeline.end,
                                       self.source))

    def action_help(self) -> None:
        self.push_screen(HelpScreen(help_rows(self)))

    def action_export(self, what: str) -> None:
        call = self._selected_call()
        if what == "call" and call is None:
            self.notify("No call at this step.", timeout=2)
            return
        timeline, source = self.timeline, self.source
        default = exports.default_path(what, timeline, source, Path.cwd(), call, self.cursor)

        def write(answer: str | None) -> None:
            if answer is None:
                return
            try:
                paths = exports.export(what, timeline, source, Path(answer).expanduser(), call,
                                       self.recorded_end or timeline.end)
            except (OSError, CallscopeError) as exc:
                self.notify(f"Export failed: {exc}", severity="error", markup=False)
                return
            self.notify("Wrote " + ", ".join(str(p) for p in paths), markup=False, timeout=5)

        self.push_screen(ExportPrompt(f"export {what}", default,
                                      lambda path: exports.targets(what, path)), write)

    def action_copy(self, what: str) -> None:
        view = self.timeline.view(self.cursor)
        if what == "frame":
            if view.frame is None:
                self.notify("No frame yet at this step: nothing copied.", timeout=2)
                return
            text = view.frame.raw.decode("utf-8", "replace")
        else:
            call = self._selected_call()
            if call is None:  # (the clipboard keeps what it had)
                self.notify("No call at this step: nothing copied.", timeout=2)
                return
            text = call.text
        self.copy_to_clipboard(text)
        self.notify(f"Copied {len(text.encode('utf-8', 'surrogatepass'))} bytes to the clipboard.",
                    timeout=2)

    def deliver_screenshot(self, filename: str | None = None, path: str | None = None,
                           time_format: str | None = None) -> str | None:
        # The palette's Screenshot command saves where ctrl+s does, in the working directory:
        # Textual's default, the user's Downloads directory, may not exist (then it failed).
        return super().deliver_screenshot(filename, path or ".", time_format)
