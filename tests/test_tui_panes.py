"""Panes you can work in: tab focuses one, z zooms it, page keys (and shift+up/down) scroll
it, < > resize it."""

from __future__ import annotations

import pathlib
import re

import pytest
from callscope.core.session import open_input
from callscope.tui.app import CallscopeApp
from callscope.tui.panes.decisions_pane import DecisionsPane
from callscope.tui.panes.frame_view import FrameDetailPane
from callscope.tui.panes.frames import FramesPane
from callscope.tui.panes.scrolling import QuickScrollBar
from textual.geometry import Region
from textual.screen import Screen
from textual.scroll_view import ScrollView
from textual.strip import Strip

ROOT = pathlib.Path(__file__).resolve().parent.parent


def demo() -> CallscopeApp:
    session = open_input(str(ROOT / "sessions/demo.jsonl"))
    return CallscopeApp([(c.t, c.data) for c in session.chunks()], source="demo")


async def test_focus_zoom_page_and_resize_act_on_the_focused_pane() -> None:
    app = demo()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("end", "tab", "tab")
        await pilot.pause()
        focused = app.focused_pane()
        assert focused.id == "buffers" and focused.has_class("-pane-focused")
        await pilot.press("z")
        await pilot.pause()
        assert app.zoomed is focused
        await pilot.press("tab")  # the zoom follows the focus
        await pilot.pause()
        assert app.zoomed is app.focused_pane() and app.focused_pane().id == "decisions"
        await pilot.press("z")
        await pilot.pause()
        assert app.zoomed is None
        before = app.focused_pane().size.width
        await pilot.press("greater_than_sign", "greater_than_sign")
        await pilot.pause()
        assert app.focused_pane().size.width > before
        await pilot.press("shift+tab", "shift+tab", "shift+tab")
        await pilot.pause()
        assert app.focused_pane().id == "frames"
        column = app.query_one("#left")
        before = column.size.width
        await pilot.press("greater_than_sign")  # the list widens with its column
        await pilot.pause()
        assert column.size.width > before
        cursor = app.cursor
        await pilot.press("pageup")
        assert app.cursor == cursor  # scrolling moves no cursor


async def test_the_frame_detail_takes_the_focus_and_scrolls_by_keys_at_80x24() -> None:
    app = demo()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("g", *"#3", "enter", "tab")
        await pilot.pause()
        detail = app.query_one(FrameDetailPane)
        assert app.focused_pane() is detail and detail.has_class("-pane-focused")
        assert detail.virtual_size.height > detail.size.height  # (more than fits: it scrolls)
        cursor = app.cursor
        await pilot.press("pagedown")
        await pilot.pause()
        paged = detail.scroll_y
        assert paged > 0 and app.cursor == cursor
        await pilot.press("shift+down")
        await pilot.pause()
        assert detail.scroll_y == paged + 1
        await pilot.press("shift+up", "shift+up")
        await pilot.pause()
        assert detail.scroll_y == paged - 1 and app.cursor == cursor
        await pilot.press("z")  # zoomed, the detail is the whole screen
        await pilot.pause()
        assert app.zoomed is detail and detail.outer_size.width == 80


@pytest.mark.parametrize("size", [(160, 45), (80, 24)])
@pytest.mark.parametrize("pane", range(4))
async def test_a_zoomed_pane_is_the_screen_between_the_status_line_and_the_footer(
        size: tuple[int, int], pane: int) -> None:
    """Wide (side by side) and narrow (two by two, a grid): the zoomed pane alone from under
    the status line (which still says where the cursor is) to the footer, the others hidden;
    z again (or escape) puts every pane back where it was."""
    app = demo()
    async with app.run_test(size=size) as pilot:
        await pilot.press("end", *["tab"] * pane)
        await pilot.pause()
        before = {w.id: w.region for w in app.panes()}
        await pilot.press("z")
        await pilot.pause()
        zoomed, status = app.focused_pane(), app.query_one("#status")
        width, height = size
        top = status.outer_size.height
        assert top >= 1 and "step 127 of 128" in status.content.plain
        assert app.zoomed is zoomed and zoomed.region == Region(0, top, width, height - 1 - top)
        shown = [w for w in app.panes() if w.region.area]
        assert shown == [zoomed]
        other = (80, 24) if size != (80, 24) else (160, 45)  # (across the narrow breakpoint)
        await pilot.resize_terminal(*other)
        await pilot.pause()
        await pilot.pause()
        top = status.outer_size.height
        assert zoomed.region == Region(0, top, other[0], other[1] - 1 - top)
        await pilot.resize_terminal(*size)
        await pilot.pause()
        await pilot.press("z" if pane % 2 else "escape")
        await pilot.pause()
        assert app.zoomed is None and {w.id: w.region for w in app.panes()} == before


@pytest.mark.parametrize("size", [(160, 45), (80, 24)])
async def test_every_paint_of_a_zoom_shows_the_rows_laid_out_at_the_new_width(
        monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]) -> None:
    """The frame list's rows, zoomed in and out: every paint after the key shows them as they
    are once settled (a pane laid out on its Resize event was painted once at its old width).
    The scrollbar's column is left out: a scrollbar comes or goes in the layout after."""
    paints: list[list[str]] = []
    refresh = Screen._compositor_refresh

    def recorded(screen: Screen) -> None:  # type: ignore[type-arg]
        refresh(screen)
        if screen is app.screen:
            area = app.query_one(FramesPane).region  # (its rows, but the bar and the border)
            rows = [s.text[area.x:area.right - 2] for s in screen._compositor.render_strips()]
            paints.append([row for row in rows[area.y:area.bottom] if re.search(r"#\d", row)])

    monkeypatch.setattr(Screen, "_compositor_refresh", recorded)
    app = demo()
    async with app.run_test(size=size) as pilot:
        await pilot.press("g", *"#9", "enter")
        for key in ("z", "z"):
            for _ in range(3):
                await pilot.pause()
            paints.clear()
            await pilot.press(key)
            for _ in range(5):
                await pilot.pause()
            settled = paints[-1]
            assert settled and all(rows == settled for rows in paints)


def _cells(strip: Strip) -> list[tuple[str, object]]:
    return [(ch, segment.style) for segment in strip for ch in segment.text]


def _views_with_bars(app: CallscopeApp) -> list[bool]:
    return [view.show_vertical_scrollbar for view in app.query(ScrollView)]


def _bars_as_drawn(app: CallscopeApp) -> list[tuple[object, object]]:
    """Each scrollbar on screen: (its cells as the screen shows them, as it draws itself now)."""
    compositor = app.screen._compositor
    screen = list(compositor.render_strips())
    shown = []
    for bar in compositor.visible_widgets:  # (a scroll view's bars are not in the DOM)
        if not isinstance(bar, QuickScrollBar):
            continue
        area = bar.region
        on_screen = [_cells(screen[y].crop(area.x, area.right)) for y in range(area.y, area.bottom)]
        drawn = [_cells(s) for s in bar.render_lines(Region(0, 0, area.width, area.height))]
        shown.append((on_screen, drawn))
    return shown


@pytest.mark.parametrize("size", [(120, 24), (80, 24)])  # (where the panes' rows overflow)
async def test_a_zoom_is_one_layout_and_one_paint_and_its_scrollbars_are_right(
        monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]) -> None:
    """A zoom (and back) lays the screen out once and paints it once (twice where a bar comes
    or goes): a scrollbar's virtual size and a column's that does not scroll ask for no
    layout of their own, and the repaint a scrollbar's reactives asked for during the layout
    is not a second paint of a bar the layout painted as it is. A scroll after it still
    repaints the bar."""
    counts = {"layout": 0, "paint": 0}
    layout, paint = Screen._refresh_layout, Screen._compositor_refresh

    def laid(screen: Screen, *args: object, **kwargs: object) -> None:  # type: ignore[type-arg]
        counts["layout"] += screen is app.screen
        layout(screen, *args, **kwargs)  # type: ignore[arg-type]

    def painted(screen: Screen) -> None:  # type: ignore[type-arg]
        counts["paint"] += screen is app.screen
        paint(screen)

    monkeypatch.setattr(Screen, "_refresh_layout", laid)
    monkeypatch.setattr(Screen, "_compositor_refresh", painted)
    app = demo()
    async with app.run_test(size=size) as pilot:
        await pilot.press("end")
        # (from the buffers pane: the demo's 21 frames fit a zoomed frame list, whose
        # scrollbar then goes, and a bar that comes or goes is a layout of its own)
        for key in ("tab", "z", "z", "tab", "z", "escape"):
            for _ in range(4):
                await pilot.pause()
            counts.update(layout=0, paint=0)
            before = _views_with_bars(app)
            await pilot.press(key)
            for _ in range(6):
                await pilot.pause()
            if key != "tab":  # (a bar that comes or goes changes its view's width: a layout)
                layouts = 1 if _views_with_bars(app) == before else 2
                assert counts == {"layout": layouts, "paint": layouts}, key
            assert all(on_screen == drawn for on_screen, drawn in _bars_as_drawn(app)), key
        await pilot.press("shift+tab", "shift+tab", "z", "home")  # (the frame list, scrolled)
        for _ in range(6):
            await pilot.pause()
        bars = _bars_as_drawn(app)
        assert bars and all(on_screen == drawn for on_screen, drawn in bars)


async def test_the_status_line_wraps_at_words_in_a_narrow_terminal() -> None:
    app = demo()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("end")
        await pilot.pause()
        status = app.query_one("#status")
        rows = [strip.text.rstrip() for strip in app.screen._compositor.render_strips()][
            :status.outer_size.height]
        assert status.outer_size.height >= 2
        said = " ".join(row.strip() for row in rows)
        for piece in ("step 127 of 128", "frame #20 of 21", "8,329/8,329 B", "chunking recorded"):
            assert piece in said, rows  # (no piece cut at the edge)


async def test_each_status_item_stays_whole_on_one_row() -> None:
    """Textual wraps at any space: at 80 columns it put the play state on one row and its speed
    on the next (``❚❚`` / ``1×``). The line breaks between items only, at every width."""
    app = demo()
    pieces = ("callscope openai-responses", "step 127 of 128", "frame #20 of 21", "8,329/8,329 B",
              "❚❚ 1×", "chunking recorded 81/81 read", "demo")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("end")
        for width in (80, 64, 72, 96, 110, 200):
            await pilot.resize_terminal(width, 24)
            await pilot.pause()
            await pilot.pause()
            status = app.query_one("#status")
            rows = [strip.text.rstrip() for strip in app.screen._compositor.render_strips()][
                :status.outer_size.height]
            for piece in pieces:
                assert any(piece in row for row in rows), (width, rows)
            assert all(row.strip() for row in rows), (width, rows)  # (its height: no blank row)
        await pilot.resize_terminal(80, 24)
        await pilot.press("space")
        await pilot.pause()
        rows = [strip.text.rstrip() for strip in app.screen._compositor.render_strips()][:3]
        assert any("▶ 1×" in row for row in rows), rows


def pane_rows(app: CallscopeApp, pane_id: str) -> list[str]:
    """The rows of a pane as on screen (inside its border)."""
    region = app.query_one(f"#{pane_id}").region
    screen = [strip.text for strip in app.screen._compositor.render_strips()]
    return [row[region.x + 1:region.right - 1] for row in screen[region.y + 1:region.bottom - 1]]


async def test_a_narrow_lane_shows_its_text_and_draft_status_before_its_ids_at_80x24() -> None:
    """At 80x24 the key and the id each took three rows above the text, which was out of view:
    a narrow lane shows the text, its size and draft status first, then each id on one row,
    elided in the middle (whole in the call's detail)."""
    app = demo()
    async with app.run_test(size=(80, 24)) as pilot:
        for where in ("end", "#15"):
            if where == "end":
                await pilot.press("end")
            else:
                await pilot.press("g", *where, "enter")
            await pilot.pause()
            call = next(c for c in app.timeline.view(app.cursor).calls if c.order == 1)
            rows = pane_rows(app, "buffers")
            said = "".join(row.strip(" │▁▂▃▄▅▆▇█") for row in rows)
            assert call.text in said, rows
            assert any("draft incomplete" in row for row in rows), rows
            key = next(row for row in rows if "key item:fc_" in row)
            assert "…" in key and key.rstrip(" │▁▂▃▄▅▆▇█").endswith(call.key[-8:]), rows
            ident = next(row for row in rows if " id fc_" in row)
            assert "…" in ident and ident.rstrip(" │▁▂▃▄▅▆▇█").endswith(call.id[-8:]), rows
            assert rows.index(key) > max(i for i, row in enumerate(rows) if "draft" in row)
        assert any("DRAFT (partial parse" in row for row in rows), rows  # (mid-call: waiting)


async def test_a_wide_lane_keeps_its_ids_first_one_row_each() -> None:
    app = demo()
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.press("end")
        await pilot.pause()
        rows = [row.strip(" │▁▂▃▄▅▆▇█") for row in pane_rows(app, "buffers")]
        top = rows.index(next(row for row in rows if "2 delete_demo_file" in row))
        assert rows[top + 1].startswith("key item:fc_0133") and "…" in rows[top + 1]
        assert rows[top + 2].startswith("id fc_0133") and rows[top + 3].startswith("call_id")
        assert rows[top + 5].startswith('{"path":"notes/todo.txt"')


def test_a_word_longer_than_the_pane_breaks_after_a_dot_not_mid_name() -> None:
    """The headline's ending names an event longer than a narrow pane: it breaks where the name
    has a joint (response.function_call_arguments. / delta), and the rows counted are the rows
    drawn."""
    from callscope.tui.panes.rows import Wrapped
    from textual.content import Content

    text = ("ending transport reset; no terminal signal: response.function_call_arguments.delta "
            "at #20 was never dispatched")
    block = Wrapped(("t",), lambda: Content(text))
    rows = block.rows(33)
    lines = [line.plain.strip() for line in block.lines(33)]
    assert "response.function_call_arguments." in lines and lines[lines.index(
        "response.function_call_arguments.") + 1].startswith("delta")
    assert rows == len(lines) and all(len(line) <= 33 for line in lines)
    assert " ".join(lines).replace(". delta", ".delta") == text


def _block_heads(view, width: int) -> set[str]:
    """The first row of each block of a RowsView, as drawn at ``width``."""
    heads = set()
    for block in view.blocks:
        strips = block.render(width, view)
        heads.add(strips[0].text.rstrip() if strips else "")
    return heads


async def test_the_decision_logs_top_row_is_never_a_cut_entry_at_80x24() -> None:
    """At 80x24 the log under the summary is three or four rows; following its end put the
    second row of an entry on top ("empty #7" without its "WAIT lookup_demo_value"), the
    second half of the anomalies' heading, or a verdict's evidence without its verdict. Stepped
    with the keys through Ollama's NDJSON sessions, the log's top row is always an entry's
    first row."""
    for name in ("truncated_mid_arguments", "provider_error", "single_call", "parallel_calls"):
        session = open_input(str(ROOT / f"sessions/ollama-chat/{name}.jsonl"))
        app = CallscopeApp([(c.t, c.data) for c in session.chunks()], source=name)
        async with app.run_test(size=(80, 24)) as pilot:
            log = app.query_one(DecisionsPane).log_view
            for _ in range(len(app.timeline)):
                await pilot.press("down")
                await pilot.pause()
                region = log.content_region
                screen = [strip.text for strip in app.screen._compositor.render_strips()]
                top = screen[region.y][region.x:region.x + log.scrollable_content_region.width]
                heads = _block_heads(log, log.scrollable_content_region.width)
                assert top.rstrip() in heads, (name, app.cursor, top, screen[region.y:region.bottom])


async def test_no_scroll_puts_a_cut_unit_on_top_at_any_size() -> None:
    """The mechanism under every pane (RowsView): whatever scrolls it (its end followed, a block
    shown, the user's page and line keys, a resize), the top row is a unit's first row (a
    block's, or a logical line's in a LineWrapped block), unless the unit is taller than the
    view; and following the end shows the last row."""
    from callscope.tui.panes.rows import LineWrapped, RowsView, Wrapped
    from textual.app import App
    from textual.content import Content

    words = "the quick brown fox jumps over the lazy dog again and again".split()

    def blocks() -> list:
        out: list = []
        for i in range(40):
            text = " ".join(words[: 2 + (i * 7) % 11]) * (1 + i % 3)
            out.append(Wrapped(("w", i), lambda i=i, text=text: Content(f"{i:>3} {text}")))
        lines = "\n".join(f"{'field':>8} " + " ".join(words[: 1 + j % 12]) for j in range(30))
        out.insert(20, LineWrapped(("lw",), lambda: Content(lines)))
        return out

    class One(App[None]):
        def compose(self):  # type: ignore[no-untyped-def]
            yield RowsView(id="v")

    def units(view: RowsView) -> list[tuple[int, int]]:
        """(first row, row after) of every unit: a Wrapped block, a LineWrapped's lines."""
        out = []
        for i, block in enumerate(view.blocks):
            base, end = view.block_top(i), view.block_top(i) + view.block_height(i)
            tops = block._line_tops(view._width)[:-1] if isinstance(block, LineWrapped) else [0]
            out += [(base + a, base + b) for a, b in
                    zip(tops, [*tops[1:], end - base], strict=True)]
        return out

    def check(view: RowsView, where: str) -> None:
        top, height = round(view.scroll_y), view.scrollable_content_region.height
        unit = next(u for u in units(view) if u[0] <= top < u[1])
        assert unit[0] == top or unit[1] - unit[0] > height, (where, top, unit)

    for width, height in ((30, 6), (41, 9), (52, 5), (80, 13), (23, 4)):
        app = One()
        async with app.run_test(size=(width, height)) as pilot:
            view = app.query_one(RowsView)
            view.set_blocks(blocks())
            await pilot.pause()
            view.scroll_end(animate=False, immediate=True)
            await pilot.pause()
            check(view, "end")
            assert round(view.scroll_y) + view.scrollable_content_region.height >= \
                view.block_top(len(view.blocks) - 1) + view.block_height(len(view.blocks) - 1)
            for _ in range(12):
                view.scroll_page_up(animate=False)
                await pilot.pause()
                check(view, "page up")
            for _ in range(9):
                view.scroll_down(animate=False)
                await pilot.pause()
                check(view, "line down")
            for _ in range(5):
                view.scroll_page_down(animate=False)
                await pilot.pause()
                check(view, "page down")
            for i in (3, 17, 20, 33, 5):
                view.show_block(i)
                await pilot.pause()
                check(view, f"show {i}")
            view.scroll_to_end()
            for size in ((width + 9, height + 3), (width - 5, max(3, height - 2)), (width, height)):
                await pilot.resize_terminal(*size)
                await pilot.pause()
                await pilot.pause()
                check(view, f"resized to {size}")


def test_a_wrapped_field_value_hangs_under_its_first_column() -> None:
    """In the frame detail a ``label value`` line wider than the pane wrapped to column 0,
    under the label; its rows hang under the value's first column, counted as drawn, and stay
    plain text. A label too long for its column (no field) wraps at the edge."""
    from callscope.tui.panes.frame_view import field_indent
    from callscope.tui.panes.rows import LineWrapped
    from textual.content import Content

    line = "     chunks 2–7; boundaries inside at 89, 111, 204, 216, 244, 301, 377 [b]x[/b]"
    text = line + "\n" + "x" * 50 + " " + "y" * 20
    block = LineWrapped(("t",), lambda: Content(text), hang=field_indent)
    rows = [piece.plain for piece in block.lines(30)]
    assert rows[0] == "     chunks 2–7; boundaries"
    value_rows = rows[1:rows.index("x" * 30)]
    assert value_rows and all(r.startswith(" " * 12) and r[12] != " " for r in value_rows), rows
    assert " ".join(r.strip() for r in rows[:len(value_rows) + 1]) == line.strip()
    assert "[b]x[/b]" in "".join(rows)  # (no markup)
    assert block.rows(30) == len(rows) and all(len(r) <= 30 for r in rows)
    assert field_indent('  "bytes": "eyJ0eXBlIjoibWVzc2FnZV9zdGFydCJ9"') == 0  # (JSON)
    assert field_indent("data: {\"type\": \"x\"}") == 0 and field_indent(line) == 12
    narrow = LineWrapped(("n",), lambda: Content(line), hang=field_indent)
    assert narrow.lines(20)[1].plain[0] != " "  # (12 of 20 cells: no room to hang)


async def test_the_call_details_wrapped_values_hang_under_their_first_column() -> None:
    """C: a field wider than the window (the rule's statement, the lenient contrast) wrapped
    to column 0; its rows hang under the value (13 cells in), as plain text."""
    from callscope.tui.call_detail import CallDetailText

    app = demo()
    async with app.run_test(size=(60, 24)) as pilot:
        await pilot.press("end", "C")
        await pilot.pause()
        rows = app.screen.query_one(CallDetailText).content.plain.split("\n")
        rule = next(i for i, row in enumerate(rows) if row.startswith("        rule "))
        assert rows[rule + 1].startswith(" " * 13) and rows[rule + 1][13] != " ", rows
        assert all(len(row) <= app.screen.query_one(CallDetailText).size.width for row in rows)


async def test_the_zoomed_decisions_show_the_whole_headline_at_80x24() -> None:
    """Found walking the README: zoomed at 80x24, the demo's headline stopped before the second
    call's lenient-harness contrast ('dropped: dry_run'); beside the others the summary is the
    compact one, whole when the pane has the screen (85% of it)."""
    from callscope.tui.panes.decision_compact import HINT
    from callscope.tui.panes.decisions_pane import DecisionsPane

    app = demo()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("end")
        await pilot.pause()
        pane = app.query_one(DecisionsPane)
        while app.focused_pane() is not pane:
            await pilot.press("tab")
        summary = pane.summary_view

        def compact() -> bool:
            return "dropped: dry_run" not in pane.summary_text() and summary.border_subtitle == HINT

        assert compact() and summary.virtual_size.height <= summary.size.height
        assert not summary.show_vertical_scrollbar  # (every row of it on screen, no bar)
        await pilot.press("z")
        await pilot.pause(0.3)
        assert app.zoomed is pane and not compact()
        assert "dropped: dry_run" in pane.summary_text()
        assert summary.virtual_size.height <= summary.size.height  # every row on screen
        await pilot.press("z")
        await pilot.pause(0.3)
        assert compact()


async def test_a_scrollbar_skips_a_repaint_only_of_the_look_it_drew_whole(monkeypatch) -> None:
    """A bar drawn whole in its current look skips a repaint asked for meanwhile; once part of
    it was drawn in another look, a repaint in the first look is painted again."""
    from textual import messages

    app = demo()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("end")
        await pilot.pause()
        bar = next(w for w in app.screen._compositor.visible_widgets
                   if isinstance(w, QuickScrollBar))
        def repaint() -> bool:
            """Whether a repaint asked for now reaches the screen (as an Update message)."""
            posted: list[object] = []
            screen = app.screen
            with monkeypatch.context() as patch:
                patch.setattr(screen, "post_message", lambda m: posted.append(m) or True)
                bar._repaint_required = True
                bar._check_refresh()
            return any(isinstance(m, messages.Update) for m in posted)

        height, width = bar.size.height, bar.size.width
        start = bar.position
        bar.render_lines(Region(0, 0, width, height))  # drawn whole
        assert not repaint()  # (the screen shows it as it is)
        bar.position = start + 1 if start == 0 else start - 1  # another look ...
        assert repaint()
        bar.render_lines(Region(0, 0, width, 1))  # ... its first row drawn in it
        bar.position = start  # the first look again: the screen is not all of it
        assert repaint()
