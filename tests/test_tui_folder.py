"""``callscope DIR``: the folder's sessions listed (protocol, size, ending, calls executed and
refused), any of them opened, and back to the list."""

from __future__ import annotations

import pathlib
import shutil

from callscope.tui.folder import FolderApp, summarize
from textual.widgets import DataTable

ROOT = pathlib.Path(__file__).resolve().parent.parent


def folder(tmp_path: pathlib.Path) -> pathlib.Path:
    shutil.copy(ROOT / "sessions/demo.jsonl", tmp_path / "demo.jsonl")
    (tmp_path / "sub").mkdir()
    shutil.copy(ROOT / "sessions/demo_complete.jsonl", tmp_path / "sub/complete.jsonl")
    (tmp_path / "broken.sse").write_bytes(b"\x00\x01 not a stream")
    (tmp_path / "notes.txt").write_text("not listed")
    return tmp_path


def test_summaries_say_the_ending_and_the_verdicts(tmp_path) -> None:
    root = folder(tmp_path)
    demo = summarize(str(root / "demo.jsonl"))
    assert (demo.protocol, demo.executed, demo.refused) == ("openai-responses", 0, 2)
    assert demo.ending == "reset @8329 · no terminal signal"
    complete = summarize(str(root / "sub/complete.jsonl"))
    assert (complete.executed, complete.refused) == (2, 0)
    assert complete.ending.endswith("· response.completed")
    broken = summarize(str(root / "broken.sse"))
    assert broken.error is not None and "binary data at byte 0" in broken.error


async def all_read(app: FolderApp, pilot, count: int) -> DataTable:
    """The list's table once its worker has read ``count`` sessions (or after 5 s)."""
    for _ in range(100):
        await pilot.pause(0.05)
        if app.read == count:
            break
    return app.list_screen.query_one(DataTable)


async def test_the_list_opens_a_session_and_comes_back(tmp_path) -> None:
    root = folder(tmp_path)
    app = FolderApp(str(root))
    async with app.run_test(size=(160, 40)) as pilot:
        table = await all_read(app, pilot, 3)
        assert app.read == 3 and len(table.rows) == 3  # notes.txt is not an input
        keys = [k.value for k in table.rows]
        assert keys == sorted(str(p) for p in (root / "broken.sse", root / "demo.jsonl",
                                                 root / "sub/complete.jsonl"))
        assert "binary data" in str(table.get_cell(str(root / "broken.sse"), "ending"))
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.screen is not app.list_screen and app.opened == str(root / "demo.jsonl")
        assert app.timeline.source and app.source == str(root / "demo.jsonl")
        await pilot.press("l")
        await pilot.pause()
        assert app.screen is app.list_screen
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is not app.list_screen


async def test_every_column_fits_at_80_columns(tmp_path) -> None:
    """At 80 cells the list scrolled sideways to reach the ending and the calls: now the name
    is elided in the middle, the size and the ending are short, and nothing is off screen."""
    root = folder(tmp_path)
    deep = root / "bedrock-converse-recordings" / "truncated_mid_arguments_again.jsonl"
    deep.parent.mkdir()
    shutil.copy(ROOT / "sessions/demo.jsonl", deep)
    app = FolderApp(str(root))
    async with app.run_test(size=(80, 24)) as pilot:
        table = await all_read(app, pilot, 4)
        await pilot.pause()
        assert table.max_scroll_x == 0 and table.virtual_size.width <= table.size.width
        assert [c.label.plain for c in table.columns.values()] == [
            "file", "protocol", "size", "ending", "exec", "ref"]
        name = str(table.get_cell(str(deep), "file"))
        assert "…" in name and name.startswith("bedroc") and name.endswith("again.jsonl")
        assert str(table.get_cell(str(root / "demo.jsonl"), "ending")) == "reset · no signal"
        assert str(table.get_cell(str(root / "sub/complete.jsonl"), "ending")) == \
            "clean · response.completed"[:19] + "…"
        assert str(table.get_cell(str(root / "demo.jsonl"), "bytes")).strip() == "8.3k"
        await pilot.resize_terminal(160, 30)  # wider: the columns of a wide terminal again
        await pilot.pause()
        assert "reset @8329" in str(table.get_cell(str(root / "demo.jsonl"), "ending"))
        assert str(table.get_cell(str(deep), "file")).endswith("again.jsonl")


def test_names_stay_apart_at_80_columns_and_whole_when_there_is_room() -> None:
    """Found walking the README: at 80 columns 'bedrock-converse/invalid_json.jsonl' and
    'bedrock-invoke/...' (and anthropic's no_arguments / truncated_mid_arguments) showed as the
    same elided name, and at 200 columns names were elided beside 50 empty cells."""
    from callscope.tui.folder import SHORT_PROTOCOLS, elide, fitted

    narrow = fitted(80)["file"]
    pairs = [("bedrock-converse/invalid_json.jsonl", "bedrock-invoke/invalid_json.jsonl"),
             ("anthropic/no_arguments.jsonl", "anthropic/truncated_mid_arguments.jsonl"),
             ("fixtures/anthropic/a_long_name_of_a_session.jsonl",
              "fixtures/anthropic/a_long_name_of_another.jsonl")]
    for a, b in pairs:
        assert elide(a, narrow) != elide(b, narrow)
    assert max(len(v) for v in SHORT_PROTOCOLS.values()) <= fitted(80)["protocol"]
    long = "fixtures/anthropic/parallel_server_tool_use_then_refusal_SYNTHETIC.jsonl"
    assert elide(long, fitted(200)["file"]) == long
    assert sum(fitted(200).values()) + 6 + 2 == 200  # (a cell of padding each, the bar)


async def test_the_footer_offers_escape_only_once_a_session_is_open(tmp_path) -> None:
    """Before any session was opened the list's footer said "esc Back to the open session"
    (escape then said that none was open)."""
    from callscope.tui.footer import FittingFooter

    def footer_text() -> str:
        return " ".join(str(w.render()) for w in app.screen.query(FittingFooter).first().children)

    app = FolderApp(str(folder(tmp_path)))
    async with app.run_test(size=(160, 40)) as pilot:
        await all_read(app, pilot, 3)
        await pilot.pause()
        assert "Quit" in footer_text() and "Back to the open session" not in footer_text()
        await pilot.press("down", "enter")
        await pilot.pause()
        await pilot.press("l")
        await pilot.pause()
        await pilot.pause()
        assert app.screen is app.list_screen and "Back to the open session" in footer_text()
