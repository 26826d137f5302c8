"""A file name is untrusted text like the stream's: ``check``'s verdict, ``import``'s and
``live``'s ``wrote`` line and ``serve``'s banner print it with its control characters made
visible. A session is written only to a regular file or a new path (it replaces its target by
a rename: over a FIFO, a symlink or, as root, /dev/null, a file took its place), never to an
empty path. ``import`` checks the input's own tool definitions as replay will read them. Each
was found by a hostile-input audit of the command line and fails on the tree before."""

from __future__ import annotations

import io
import os
import pathlib
import shutil

import pytest
from callscope.core.errors import CallscopeError
from callscope.core.session import SessionWriter
from callscope.core.session_model import SessionHeader
from callscope.tui import cli

ROOT = pathlib.Path(__file__).resolve().parent.parent
SINGLE = ROOT / "sessions/openai-chat/single_call.jsonl"
EVIL = "\x1b]0;evil\x07name.jsonl"


def _run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    args = cli.build_parser(False, only=argv[0]).parse_args(argv)
    return cli.HANDLERS[argv[0]](args, out), out.getvalue()


def test_a_file_name_is_printed_as_text(tmp_path):
    evil = tmp_path / EVIL
    shutil.copy(SINGLE, evil)
    code, said = _run(["check", "--seeds", "1", str(evil)])
    assert code == 0 and "\x1b" not in said and "\x07" not in said and "evil" in said
    code, said = _run(["import", str(SINGLE), "-o", str(tmp_path / ("\x1b[31m" + "o.jsonl"))])
    assert code == 0 and said.startswith("wrote ") and "\x1b" not in said


@pytest.mark.parametrize("kind", ["fifo", "symlink"])
def test_a_session_is_never_written_over_what_is_not_a_regular_file(tmp_path, kind):
    target = tmp_path / "target"
    if kind == "fifo":
        os.mkfifo(target)
    else:
        (tmp_path / "real.jsonl").write_text("kept\n")
        target.symlink_to(tmp_path / "real.jsonl")
    with pytest.raises(CallscopeError, match="is not a regular file"):
        SessionWriter(str(target), SessionHeader())
    assert (target.is_fifo() if kind == "fifo" else target.is_symlink())
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
    if kind == "symlink":
        assert (tmp_path / "real.jsonl").read_text() == "kept\n"


def test_an_empty_session_path_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CallscopeError, match="no path given"):
        SessionWriter("", SessionHeader())
    assert list(tmp_path.iterdir()) == [] and not [
        p for p in tmp_path.parent.iterdir() if p.name.endswith(".partial")]


def test_import_refuses_an_input_whose_own_tool_definitions_replay_would_refuse(tmp_path):
    lines = SINGLE.read_text().splitlines()
    import orjson

    header = orjson.loads(lines[0])
    header["tools"] = [5]
    bad = tmp_path / "bad_tools.jsonl"
    bad.write_text("\n".join([orjson.dumps(header).decode(), *lines[1:]]) + "\n")
    with pytest.raises(CallscopeError, match="tool definitions"):
        _run(["import", str(bad), "-o", str(tmp_path / "out.jsonl")])
    assert not (tmp_path / "out.jsonl").exists()


def test_serve_names_its_sessions_as_text(tmp_path):
    import subprocess
    import sys

    evil = tmp_path / EVIL
    shutil.copy(SINGLE, evil)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "callscope.tui.cli", "serve", str(evil)],
                            stdout=subprocess.PIPE, env=env)
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline() + proc.stdout.readline()
        assert b"evil" in banner and b"\x1b" not in banner and b"\x07" not in banner
    finally:
        proc.terminate()
        proc.wait(timeout=5)


@pytest.mark.parametrize("argv", [["replay", "--cut-at", "-1", "x"], ["replay"],
                                  ["check", "--seeds", "x", "x"], ["replay", "--max-calls", "-1", "x"],
                                  ["serve", "--port", "x", "s"], ["replay", "--chunking", "whole",
                                                                  "--json", "--bogus", "x"]])
def test_a_bad_option_is_one_line_naming_the_command_and_its_help(argv, capsys):
    with pytest.raises(SystemExit) as exit:
        cli.main(argv)
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "usage:" not in err
    assert err.startswith(f"callscope {argv[0]}: error: ") or err.startswith("callscope: error: ")
    assert err.rstrip().endswith("-h)")
