"""The status line's source (the file's path) is its last item, narrowed to the room left on
its row: a search or a break point no longer pushes it onto a row of its own, which made the
line a row taller and laid out every pane, and a long path keeps its file name."""

from __future__ import annotations

import pathlib

from callscope.core.session import open_input
from callscope.tui.app import CallscopeApp
from callscope.tui.status import SOURCE_MARK, SOURCE_MIN, fit_items, status_rows
from textual.content import Content

ROOT = pathlib.Path(__file__).resolve().parent.parent
LONG = "/tmp/callscope-bench/a-long-directory-name/session-4000000-6d517e43bbfe.jsonl"


def app_with(source: str) -> CallscopeApp:
    session = open_input(str(ROOT / "sessions/demo.jsonl"))
    return CallscopeApp([(c.t, c.data) for c in session.chunks()], source=source)


def rows_of(app: CallscopeApp) -> list[str]:
    status = app.query_one("#status")
    return [strip.text.rstrip() for strip in app.screen._compositor.render_strips()][
        :status.outer_size.height]


async def test_a_search_keeps_the_status_line_one_row_and_the_file_name_shown() -> None:
    app = app_with(LONG)
    async with app.run_test(size=(180, 40)) as pilot:
        await pilot.press("end")
        await pilot.pause()
        assert app.query_one("#status").outer_size.height == 1
        app._search("edit_file")
        await pilot.pause()
        await pilot.pause()
        rows = rows_of(app)
        assert len(rows) == 1, rows
        assert "search edit_file" in rows[0] and rows[0].endswith("bbfe.jsonl"), rows
        assert "…" in rows[0] and len(rows[0]) <= 180


async def test_a_long_path_keeps_its_file_name() -> None:
    app = app_with("/" + "very-long-directory/" * 8 + "the-session.jsonl")
    async with app.run_test(size=(200, 40)) as pilot:
        await pilot.pause()
        assert rows_of(app)[0].endswith("the-session.jsonl")


def test_the_source_starts_a_row_when_less_than_its_minimum_is_left() -> None:
    def line(head: str, source: str) -> Content:
        return Content.assemble(head, "  ", Content(source).stylize(SOURCE_MARK))

    assert 80 - 52 >= SOURCE_MIN
    fitted = fit_items(line("x" * 50, "y" * 30 + "z" * 30), 80).plain
    assert "\n" not in fitted and len(fitted) == 80 and fitted.endswith("z") and "…" in fitted
    narrow = fit_items(line("x" * 70, "y" * 60), 80).plain  # (8 cells: a row of its own)
    assert narrow == "x" * 70 + "\n" + "y" * 60
    unmarked = fit_items(Content("x" * 50 + "  " + "y" * 60), 80).plain  # (only the source)
    assert unmarked == "x" * 50 + "\n" + "y" * 60


async def test_with_a_note_the_source_is_still_narrowed_and_a_search_keeps_the_rows() -> None:
    """The demo has a note under the line: the source was then not the line's last item, and a
    search pushed it to a row of its own again."""
    session = open_input(str(ROOT / "sessions/demo.jsonl"))
    app = CallscopeApp([(c.t, c.data) for c in session.chunks()], source=LONG,
                       note="Bundled demo session: a note on its own row.")
    async with app.run_test(size=(180, 40)) as pilot:
        await pilot.press("end")
        await pilot.pause()
        before = rows_of(app)
        app._search("edit_file")
        await pilot.pause()
        await pilot.pause()
        rows = rows_of(app)
        assert len(rows) == len(before) == 2, rows
        assert "search edit_file" in rows[0] and rows[0].endswith("bbfe.jsonl") and "…" in rows[0]
        assert rows[1].strip() == "Bundled demo session: a note on its own row."


async def test_a_note_past_the_status_lines_rows_ends_in_an_ellipsis() -> None:
    """At 80x24 the demo's note took the third row and was cut there mid-sentence, silently."""
    session = open_input(str(ROOT / "sessions/demo.jsonl"))
    app = CallscopeApp([(c.t, c.data) for c in session.chunks()], source="demo",
                       note="a note of many words " * 12 + "the end")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        rows = rows_of(app)
        assert len(rows) == 3 and rows[-1].endswith(" …") and len(rows[-1]) <= 80, rows
        assert rows[0].startswith(" callscope openai-responses"), rows


def test_a_line_that_fits_its_rows_is_shown_whole() -> None:
    line = Content("callscope x  step 1 of 2\nnote words")
    assert [r.plain for r in status_rows(line, 40)] == ["callscope x  step 1 of 2", "note words"]


async def test_moving_never_changes_the_status_lines_length_nor_its_rows() -> None:
    """At 80 columns the demo's line was two rows at step 0 and three further on (its counters
    grew a digit each), and each change laid out every pane; its items shifted as it grew."""
    app = app_with("/tmp/callscope-bench/session-4000000-6d517e43bbfe.jsonl")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        status = app.query_one("#status")
        seen = set()
        for keys in ((), ("right",) * 3, ("end",), ("home",), ("g",)):
            if keys == ("g",):
                app.action_goto_step(len(app.timeline) // 2)
            else:
                await pilot.press(*keys)
            await pilot.pause()
            seen.add((len(status.content.plain), status.outer_size.height, tuple(
                len(row) for row in rows_of(app))))
        assert len(seen) == 1, seen
