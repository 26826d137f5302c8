"""The export prompt: where to write, the default shown, an existing file never overwritten
without a second enter."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.content import Content
from textual.widgets import Input, Static

from .screens import PromptScreen


class ExportPrompt(PromptScreen):
    """Dismisses with the path typed (the default offered), or None on escape. ``targets`` maps
    it to every file the export writes: when one exists, the first enter says so and the second
    (on the same path) confirms."""

    def __init__(self, title: str, default: Path, targets: Callable[[Path], list[Path]]) -> None:
        self.targets = targets
        names = ", ".join(p.name for p in targets(default))
        super().__init__(title, str(default), f"writes {names}; enter accepts, escape cancels",
                         value=str(default))
        self._confirmed: str | None = None

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        event.prevent_default()  # (PromptScreen's own handler would dismiss at once)
        value = event.value.strip()
        if not value:
            return
        existing = [p for p in self.targets(Path(value).expanduser()) if p.exists()]
        if existing and self._confirmed != value:
            self._confirmed = value
            self.query_one(Static).update(Content.styled(
                f"{' and '.join(str(p) for p in existing)} "
                f"{'exists' if len(existing) == 1 else 'exist'}: enter again to overwrite, "
                "escape cancels", "bold $text-warning"))
            return
        self.dismiss(value)
