"""A footer that shows only the keys that fit, each whole.

Textual's footer lays every shown binding out in one row and crops the row at the terminal's
edge, so at 80 columns (and at 200, with the longer descriptions) the last key was cut mid-word.
This one measures each key (its key display and a short label), keeps them in a priority order
(:data:`PRIORITY`) while they fit beside the command palette's key, and shows the kept ones in
the bindings' order. A key left out is still bound, listed in the f1 help and in the palette.
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.binding import Binding
from textual.events import Resize
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

SHORT = {
    "callscope.next-frame": "Next", "callscope.prev-frame": "Prev", "callscope.goto": "Go to",
    "callscope.play": "Play", "callscope.cut": "Cut", "callscope.undo-cut": "Undo",
    "callscope.detail": "Detail", "callscope.expert": "Expert info",
    "callscope.search": "Search", "callscope.follow": "Follow", "callscope.help": "Help",
}
"""The footer's label of a binding (its description stays whole in help and the palette)."""

PRIORITY = ("callscope.help", "callscope.next-frame", "callscope.prev-frame",
            "callscope.captures", "callscope.follow", "callscope.expert", "callscope.search",
            "callscope.goto", "callscope.play", "callscope.detail", "callscope.cut",
            "callscope.undo-cut", "callscope.chunking")
"""Which keys the footer keeps first when not all fit (help first: it lists the others);
a binding not named here comes after these, in the bindings' order."""

PALETTE_EXTRA = 2
"""Cells the palette's key takes beyond its text (its left border and right padding)."""


def label(binding: Binding) -> str:
    return SHORT.get(binding.id or "", binding.description)


def key_cells(key_display: str, description: str) -> int:
    """A key's width as the footer draws it: `` key description `` (padding around both)."""
    return cell_len(key_display) + cell_len(description) + 3 if description else \
        cell_len(key_display) + 2


def fitting(items: list[tuple[Binding, int]], width: int) -> set[int]:
    """The positions in ``items`` ((binding, cells) in the bindings' order) kept in ``width``
    cells: by :data:`PRIORITY`, each kept only if it fits whole."""
    rank = {id_: n for n, id_ in enumerate(PRIORITY)}
    order = sorted(range(len(items)), key=lambda i: (rank.get(items[i][0].id or "", len(rank)), i))
    kept, used = set(), 0
    for i in order:
        if used + items[i][1] <= width:
            kept.add(i)
            used += items[i][1]
    return kept


class FittingFooter(Footer):
    """The app's footer (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self._width = 0

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        self._width = width = self.screen.size.width or self.app.size.width
        active = self.screen.active_bindings
        items: list[tuple[Binding, bool, str, str, int]] = []
        seen: set[str] = set()
        for _, binding, enabled, tooltip in active.values():
            if not binding.show or binding.action in seen:
                continue
            seen.add(binding.action)
            shown, text = self.app.get_key_display(binding), label(binding)
            items.append((binding, enabled, tooltip, shown, key_cells(shown, text)))
        palette = self._palette()
        room = width - (0 if palette is None else
                        key_cells(self.app.get_key_display(palette[0]), palette[0].description)
                        + PALETTE_EXTRA)
        kept = fitting([(b, cells) for b, _, _, _, cells in items], room)
        for i, (binding, enabled, tooltip, shown, _) in enumerate(items):
            if i in kept:
                yield FooterKey(binding.key, shown, label(binding), binding.action,
                                disabled=not enabled,
                                tooltip=tooltip or binding.description).data_bind(
                                    compact=Footer.compact)
        if palette is not None:
            binding, enabled = palette
            yield FooterKey(binding.key, self.app.get_key_display(binding), binding.description,
                            binding.action, classes="-command-palette", disabled=not enabled,
                            tooltip=binding.tooltip or binding.description)

    def _palette(self) -> tuple[Binding, bool] | None:
        if not (self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE):
            return None
        found = self.screen.active_bindings.get(self.app.COMMAND_PALETTE_BINDING)
        return None if found is None else (found[1], found[2])

    def on_resize(self, event: Resize) -> None:
        if self._bindings_ready and event.size.width != self._width:
            self.call_after_refresh(self.recompose)

    def shown_keys(self) -> Iterator[FooterKey]:
        """The keys shown (for tests)."""
        for child in self.children:
            if isinstance(child, FooterKey):
                yield child


def shown_text(footer: Widget) -> str:
    """The footer's keys as drawn, in order (for tests)."""
    assert isinstance(footer, FittingFooter)
    return "  ".join(f"{k.key_display} {k.description}".strip() for k in footer.shown_keys())
