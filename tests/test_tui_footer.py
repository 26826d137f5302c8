"""The lines at the screen's edges fit its width: the footer shows whole keys only (at 80
columns Textual's footer cut its last key mid-word, 'spac▏^p palette', and at 200 the expert
key's long description, '…decisions, anom▏'), and the status line is as tall as it wraps to
after a resize either way."""

from __future__ import annotations

import pathlib

import pytest
from callscope.tui.app import CallscopeApp
from callscope.tui.cli import LoadedInput, protocol_for, toolset_for
from callscope.tui.commands import help_rows
from callscope.tui.footer import FittingFooter, key_cells, shown_text
from textual.widgets._footer import FooterKey

DEMO = pathlib.Path(__file__).resolve().parent.parent / "sessions" / "demo.jsonl"


def demo() -> CallscopeApp:
    loaded = LoadedInput(str(DEMO))
    return CallscopeApp(loaded.held(10**8), source="demo.jsonl", protocol=protocol_for(loaded, None),
                        tools=toolset_for(loaded, None), end=loaded.session.end)


def footer_line(app: CallscopeApp) -> str:
    return app.screen._compositor.render_strips()[-1].text


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (200, 50)])
async def test_every_key_in_the_footer_is_whole(size: tuple[int, int]) -> None:
    app = demo()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        footer = app.query_one(FittingFooter)
        keys = list(footer.shown_keys())
        palette = next(k for k in keys if k.has_class("-command-palette"))
        line = footer_line(app)
        for key in keys:
            if key is palette:
                continue
            assert key.region.right <= palette.region.x, (key.description, line)
            assert key.region.width == key_cells(key.key_display, key.description)
            assert f"{key.key_display} {key.description} " in line, line
        assert line.rstrip().endswith("^p palette")
        described = {description for _, description, _ in help_rows(app)}
        assert {"Help", "Next", "Prev"} <= {k.description for k in keys}
        assert len(described) > len(keys)  # the rest: in help and the palette


async def test_the_footer_refits_when_the_terminal_is_resized() -> None:
    app = demo()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        narrow = shown_text(app.query_one(FittingFooter))
        await pilot.resize_terminal(200, 50)
        await pilot.pause()
        await pilot.pause()
        wide = shown_text(app.query_one(FittingFooter))
        assert "space Play" not in narrow and "space Play" in wide
        assert len(list(app.query_one(FittingFooter).query(FooterKey))) > narrow.count("  ") + 2


async def test_the_status_line_refits_after_a_resize() -> None:
    """Widened from 80 columns, the status line kept its two rows (the second one blank)."""
    app = demo()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        status = app.query_one("#status")
        assert status.size.height == 2
        await pilot.resize_terminal(200, 50)
        await pilot.pause()
        await pilot.pause()
        assert status.size.height == 1
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        await pilot.pause()
        assert status.size.height == 2
