"""The theme and the keymap persist in the user's config directory."""

from __future__ import annotations

import json
import pathlib

from callscope.tui import settings
from callscope.tui.app import CallscopeApp
from callscope.tui.cli_inputs import saved_keymap

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = (ROOT / "tests/fixtures/anthropic/tool_no_args_empty_partial_json.sse").read_bytes()


async def test_a_theme_chosen_is_the_theme_of_the_next_run() -> None:
    app = CallscopeApp([(0.0, DATA)], source="x")
    async with app.run_test() as pilot:
        app.theme = "nord"
        await pilot.pause()
    assert json.loads(settings.settings_path().read_text())["theme"] == "nord"
    again = CallscopeApp([(0.0, DATA)], source="x")
    async with again.run_test():
        assert again.theme == "nord"


def test_a_keymap_is_saved_and_its_unknown_ids_left_out() -> None:
    assert saved_keymap() is None
    assert settings.save(keymap={"callscope.cut": "ctrl+x", "no.such.id": "z"})
    assert saved_keymap() == {"callscope.cut": "ctrl+x"}


def test_a_broken_settings_file_is_left_alone() -> None:
    path = settings.settings_path()
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    assert settings.saved_theme() is None and not settings.save(theme="nord")
    assert path.read_text() == "{not json"
