"""``callscope diff A B --open``: the two recordings side by side, at the same call.

Each side lists its calls (those that differ marked ``≠``) and shows the selected call: name,
id, the gate's decision, the argument text, and its fragments with the frame of each; the
fragment where the two argument texts part is highlighted, and its frame's bytes are shown
beneath. ``n``/``p`` (or the arrows) move both sides to the next or previous call, ``f`` to the
first difference. All stream text is shown as text (:mod:`.safe`), never as markup.
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from ..core.diff import CallSide, DiffReport, Side
from . import safe
from .footer import FittingFooter


def side_view(report: DiffReport, side: Side, label: str, position: int) -> Content:
    """One side of the view at call ``position`` (plain text and styles, no markup)."""
    differing = {p for p, _ in report.rows}
    parts: list[Content] = [Content.styled(f"{label}  {safe.short(side.source, 70)}", "bold"),
                            Content(f"{side.protocol}; {safe.short(side.ending.line(), 160)}"),
                            Content("")]
    for n, call in enumerate(side.calls):
        mark = "≠" if n in differing else " "
        line = Content.assemble(("▶ " if n == position else "  "), f"{mark} {n + 1}. ",
                                safe.content(safe.short(call.name, 40)), f"  {call.decision()}")
        parts.append(line.stylize("reverse") if n == position else line)
    if position >= len(side.calls):
        parts += [Content(""), Content.styled(f"no call {position + 1} on this side", "italic")]
        return Content("\n").join(parts)
    call = side.calls[position]
    parts += [Content(""), *_call_detail(report, side, call, position)]
    return Content("\n").join(parts)


def _call_detail(report: DiffReport, side: Side, call: CallSide, position: int) -> list[Content]:
    first = report.first
    parting = first.offset if first is not None and first.call == position else None
    out = [Content.assemble(("name ", "dim"), safe.content(safe.short(call.name, 60))),
           Content.assemble(("id ", "dim"), safe.content(safe.short(str(call.id), 60))),
           Content.assemble(("decision ", "dim"), call.decision()),
           Content.styled("arguments", "dim"), safe.lines(call.text[:4000]),
           Content.styled(f"fragments ({len(call.fragments)})", "dim")]
    held = call.fragment_at(parting) if parting is not None else None
    for n, (number, start, end) in enumerate(call.fragments[:400]):
        line = Content.assemble(f"  #{number} {start}..{end}  ",
                                safe.content(safe.short(call.text[start:end], 60)))
        out.append(line.stylize("reverse bold") if n == held else line)
    if held is not None:
        frame_index = call.fragments[held][0]
        frame = side.frames.get(frame_index) if frame_index is not None else None
        if frame is not None:
            out += [Content.styled(f"frame #{frame.index} (bytes {frame.start}..{frame.end})",
                                   "dim"), safe.lines(frame.raw[:2000].decode("utf-8", "replace"))]
    return out


class DiffApp(App[None]):
    TITLE = "callscope diff"
    BINDINGS = [
        Binding("n,down", "move(1)", "next call"),
        Binding("p,up", "move(-1)", "previous call"),
        Binding("f", "first", "first difference"),
        Binding("q", "quit", "quit"),
    ]
    CSS = """
    #headline { height: auto; padding: 0 1; }
    #sides { height: 1fr; }
    .side { width: 1fr; border: round $primary; padding: 0 1; }
    """

    def __init__(self, report: DiffReport) -> None:
        super().__init__()
        self.report = report
        self.position = report.first.call if report.first is not None else 0
        self.count = max(len(report.a.calls), len(report.b.calls), 1)

    def compose(self) -> ComposeResult:
        yield Static(id="headline")
        with Horizontal(id="sides"):
            with VerticalScroll(classes="side"):
                yield Static(id="a")
            with VerticalScroll(classes="side"):
                yield Static(id="b")
        yield FittingFooter()

    def on_mount(self) -> None:
        self.query_one("#headline", Static).update(
            safe.lines("\n".join(self.report.lines()[:1] + [
                f"  ending: {e}" for e in self.report.endings]) + (
                f"\nfirst difference: call {self.report.first.call + 1}, "
                f"{self.report.first.what}" if self.report.first else "")))
        self.show()

    def show(self) -> None:
        self.query_one("#a", Static).update(side_view(self.report, self.report.a, "A",
                                                      self.position))
        self.query_one("#b", Static).update(side_view(self.report, self.report.b, "B",
                                                      self.position))

    def action_move(self, step: int) -> None:
        self.position = min(max(self.position + step, 0), self.count - 1)
        self.show()

    def action_first(self) -> None:
        if self.report.first is not None:
            self.position = self.report.first.call
            self.show()
