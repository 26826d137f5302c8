"""A headless replay loads only what it uses: the modules only another command, another chunking
or help output needs are imported when first needed (each is start-up time of every command),
and help written later still measures the terminal as argparse does."""

from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys

import pytest
from callscope.tui.cli import build_parser

ROOT = pathlib.Path(__file__).resolve().parent.parent

PROBE = """
import sys
from callscope.tui.cli import main
code = main(sys.argv[1:])
print()
print(code, *sorted(m for m in ("random", "shutil", "textual", "jsonschema", "_hashlib",
                                 "callscope.core.aws_eventstream") if m in sys.modules))
"""


def loaded_by(*args: str) -> list[str]:
    run = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    return run.stdout.splitlines()[-1].split()


STREAM = str(ROOT / "tests/adversarial/a_splice.sse")
SESSION = str(ROOT / "sessions/openai-chat/single_call.jsonl")
RESPONSES = str(ROOT / "sessions/openai-responses/single_call.jsonl")


@pytest.mark.parametrize("args", [
    ("replay", STREAM, "--summary"), ("replay", SESSION, "--summary"), ("replay", SESSION, "--json"),
    ("replay", STREAM, "--json", "--summary"), ("replay", RESPONSES, "--summary")])
def test_a_recorded_replay_imports_no_random_shutil_textual_jsonschema_openssl_or_eventstream(
        args) -> None:
    assert loaded_by(*args) == ["0"]


def test_a_bedrock_stream_loads_the_event_stream_decoder_when_it_reads_one() -> None:
    bedrock = str(ROOT / "sessions/bedrock-converse/single_call.jsonl")
    assert loaded_by("replay", bedrock, "--summary") == ["0", "callscope.core.aws_eventstream"]


def test_a_random_chunking_imports_random_when_it_draws() -> None:
    assert loaded_by("replay", SESSION, "--summary", "--chunking", "random:3") == ["0", "random"]


def run_cli(*args: str, columns: int) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns)}
    return subprocess.run([sys.executable, "-m", "callscope.tui.cli", *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT, env=env)


def helps(parser: argparse.ArgumentParser) -> list[str]:
    """The program's help and every command's, as written now."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return [parser.format_help()] + [p.format_help() for a in subs for p in a.choices.values()]


def stock(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The same parser with argparse's own formatter (which measures the terminal at once)."""
    parser.formatter_class = argparse.HelpFormatter
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                stock(sub)
    return parser


@pytest.mark.parametrize("columns", ["40", "60", "200", None])
def test_help_is_written_as_argparse_writes_it_at_any_width(monkeypatch, columns) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    ours = helps(build_parser(network=False))
    assert ours == helps(stock(build_parser(network=False)))
    assert len(ours) == 6
    if columns == "40":  # (a narrow terminal wraps: the width was measured, not assumed)
        assert max(len(line) for line in ours[0].splitlines()) <= 38


@pytest.mark.parametrize("command", ["replay", "check", "import", "diff", "open"])
def test_a_command_line_builds_the_same_parser_for_its_command(command) -> None:
    whole = build_parser(network=False)
    alone = build_parser(network=False, only=command)
    assert helps(alone)[1:] == [h for h in helps(whole)[1:] if h.startswith(f"usage: callscope {command}")]


def test_a_usage_error_still_names_the_command_and_the_flag() -> None:
    run = run_cli("replay", "--max-calls", "many", STREAM, columns=80)
    assert run.returncode == 2
    assert "callscope replay: error: argument --max-calls: not a count" in run.stderr
