"""Headless commands over many inputs, run as processes: every input read, a broken one said in
one line and exit 2 at the end, and a check without tools says what it did not prove."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
GOOD = [str(ROOT / "sessions/demo.jsonl"), str(ROOT / "sessions/openai-chat/single_call.jsonl")]


def callscope(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "callscope.tui.cli", *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)


def test_replay_reads_every_input_past_a_broken_one_and_exits_2_at_the_end(tmp_path) -> None:
    missing = str(tmp_path / "missing.sse")
    run = callscope("replay", GOOD[0], missing, GOOD[1], "--json", "--summary")
    assert run.returncode == 2
    turns = [json.loads(line) for line in run.stdout.splitlines()]
    assert [t["source"] for t in turns if t["kind"] == "turn"] == GOOD
    assert run.stderr.count("\n") == 1 and "missing.sse" in run.stderr and "Traceback" not in run.stderr


def test_replay_of_good_inputs_exits_0() -> None:
    assert callscope("replay", *GOOD, "--summary").returncode == 0


def test_check_without_tools_says_it_proved_nothing_about_execution() -> None:
    run = callscope("check", str(ROOT / "tests/adversarial/a_splice.sse"), "--seeds", "1")
    assert run.returncode == 0
    assert "no tool definitions (pass --tools FILE)" in run.stdout
    with_tools = callscope("check", str(ROOT / "tests/adversarial/a_splice.sse"), "--seeds", "1",
                           "--tools", str(ROOT / "tests/adversarial/tools.json"))
    assert with_tools.returncode == 0 and "no tool definitions" not in with_tools.stdout


def test_version() -> None:
    run = callscope("--version")
    assert run.returncode == 0 and run.stdout.startswith("callscope ")
