"""The command line as a user meets it: what it names, what it says, how it exits (each test
from a review finding)."""

from __future__ import annotations

import pathlib

import orjson
import pytest
from callscope.tui.cli import main

SESSIONS = pathlib.Path(__file__).resolve().parent.parent / "sessions"
DEMO = str(SESSIONS / "demo.jsonl")
MAX_TOKENS = str(SESSIONS / "anthropic" / "max_tokens.jsonl")


def test_a_summary_of_several_inputs_names_each(capsys):
    assert main(["replay", DEMO, MAX_TOKENS, "--summary"]) == 0
    lines = capsys.readouterr().out.splitlines()
    heads = [i for i, line in enumerate(lines) if line.startswith("== ")]
    assert [lines[i] for i in heads] == [f"== {DEMO}", f"== {MAX_TOKENS}"]
    assert [lines[i + 1].split(",")[0] for i in heads] == [
        "-- turn: openai-responses", "-- turn: anthropic"]


def test_check_goes_on_past_an_input_it_cannot_read(tmp_path, capsys):
    missing = str(tmp_path / "nowhere.jsonl")
    assert main(["check", DEMO, missing, MAX_TOKENS, "--seeds", "1"]) == 2
    captured = capsys.readouterr()
    assert [line.split()[:2] for line in captured.out.splitlines()] == [
        ["ok", f"{DEMO}:"], ["ok", f"{MAX_TOKENS}:"]]
    assert captured.err == f"callscope: {missing}: cannot read: No such file or directory\n"


@pytest.mark.parametrize("flag", ["--max-calls", "--max-text-chars", "--seeds"])
def test_a_negative_count_is_called_a_count(capsys, flag):
    command = "check" if flag == "--seeds" else "replay"
    with pytest.raises(SystemExit) as exited:
        main([command, DEMO, flag, "-1"])
    assert exited.value.code == 2
    assert f"argument {flag}: not a count (a whole number, 0 or more): '-1'" in (
        capsys.readouterr().err)


def test_a_keymap_with_an_unknown_binding_id_is_refused(tmp_path, capsys):
    """Found by review: a mistyped id was ignored without a word (the key stayed where it was)."""
    keymap = tmp_path / "keys.json"
    keymap.write_text('{"callscope.cut": "ctrl+x", "callscope.cutt": "ctrl+y"}')
    assert main([DEMO, "--keymap", str(keymap)]) == 2
    assert capsys.readouterr().err == (
        f"callscope: {keymap}: unknown binding id 'callscope.cutt': the ids are in the f1 help, "
        "e.g. 'callscope.cut'\n")


@pytest.mark.parametrize("keys", ["", "ctrl+nosuchkey+++", "\x1b[31m", "ctrl+", ",x", "x,,y"])
def test_a_keymap_binding_what_is_not_a_key_list_is_refused_before_any_screen(
        tmp_path, capsys, keys):
    """Found by an audit: these opened the debugger and were saved for the next run."""
    from callscope.tui import settings

    keymap = tmp_path / "keys.json"
    keymap.write_text(orjson.dumps({"callscope.cut": keys}).decode())
    assert main([DEMO, "--keymap", str(keymap)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"callscope: {keymap}: callscope.cut: ") and "not a key list" in err
    assert "\x1b" not in err and err.count("\n") == 1
    assert settings.saved_keymap() == {}


def test_a_saved_keymap_keeps_only_key_lists(monkeypatch):
    from callscope.tui import settings
    from callscope.tui.cli_inputs import saved_keymap

    monkeypatch.setattr(settings, "saved_keymap", lambda: {
        "callscope.cut": "ctrl+x", "callscope.undo-cut": "", "callscope.help": "f1,question_mark"})
    assert saved_keymap() == {"callscope.cut": "ctrl+x", "callscope.help": "f1,question_mark"}
