"""A lane's top and bottom edges: its title on the left of the top one, the gate's outcome on
the right of the bottom one, drawn as Textual draws border titles (a double edge for the
selected lane)."""

from __future__ import annotations

from textual.content import Content
from textual.strip import Strip
from textual.style import Style

from ...core.lanes import CallView
from .rows import RowsView


def outcome(call: CallView) -> Content:
    """The bottom edge's label: waiting, EXECUTED, or REFUSED with the reason."""
    d = call.decision
    if d is None:
        return Content.styled("waiting", "$text-warning")
    if d.action == "execute":
        return Content.styled("EXECUTED", "bold $text-success")
    return Content.styled(f"REFUSED: {d.reason}", "bold $text-error")


def edge(width: int, label: Content, top: bool, double: bool, border: Style, base: Style,
         view: RowsView) -> Strip:
    """The top edge with ``label`` on the left, or the bottom one with it on the right,
    ``width`` cells, in ``border`` on ``base``; ``double``: the selected lane's."""
    h = "═" if double else "─"
    corners = ("╔", "╗") if top and double else ("╭", "╮") if top else (
        ("╚", "╝") if double else ("╰", "╯"))
    style = view.get_visual_style("buffers--title" if top else "buffers--subtitle")
    label = label.truncate(max(width - 6, 1), ellipsis=True).stylize_before(style)
    fill = h * max(width - 5 - label.cell_length, 0)
    if top:
        line = Content.assemble((corners[0] + h + " ", border), label,
                                (" " + fill + corners[1], border))
    else:
        line = Content.assemble((corners[0] + fill + " ", border), label,
                                (" " + h + corners[1], border))
    return Strip(line.render_segments(base), line.cell_length)
