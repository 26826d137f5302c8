"""``callscope check --harness CMD`` (a harness in another process, over JSON lines) and the
pytest plugin (run by pytester on a folder of sessions)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from callscope.core.session import open_input
from callscope.core.sweep_compare import HarnessBroken
from callscope.net.harness_process import HarnessFailed, ProcessHarness
from callscope.tui.cli import main

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "process_harness.py"
CHAT = ROOT / "sessions" / "openai-chat"
SMALL = ["--every-byte-up-to", "0", "--window", "16", "--seeds", "1"]


def harness_cmd(which: str) -> str:
    return f"{sys.executable} {EXAMPLE} {which}"


def test_check_harness_catches_the_naive_process(tmp_path, capsys):
    code = main(["check", "--harness", harness_cmd("naive"), str(CHAT / "single_call.jsonl"),
                 str(CHAT / "unknown_tool.jsonl"), "--findings", str(tmp_path), *SMALL])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert [line.split(" ")[0] for line in out if not line.startswith(" ")] == ["FAIL", "FAIL"]
    early = next(line for line in out if "executed before the terminal signal" in line)
    repro = early.split("reproduce: callscope ")[1]
    assert Path(repro).parent == tmp_path and open_input(repro).end.kind == "cut"
    assert any("which the gate refuses (unknown_tool:" in line for line in out)


def test_check_harness_passes_the_safe_process(capsys):
    code = main(["check", "--harness", harness_cmd("safe"), str(CHAT / "single_call.jsonl"),
                 str(CHAT / "max_tokens.jsonl"), *SMALL])
    out = capsys.readouterr().out.splitlines()
    assert code == 0 and [line[:4] for line in out] == ["ok  ", "ok  "]


def _script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "harness.py"
    path.write_text("import json, sys\nfor line in sys.stdin:\n    stream = json.loads(line)\n"
                    + body)
    return f"{sys.executable} {path}"


def test_the_process_is_told_the_stream_and_its_tools(tmp_path):
    script = _script(tmp_path, "    print(json.dumps({'id': stream['id'], 'executed': [{'name': "
                     "stream['protocol'], 'arguments': len(stream['tools'])}]}), flush=True)\n")
    with ProcessHarness(script, timeout=20) as harness:
        harness.context = {"protocol": "openai-chat", "tools": [1, 2]}
        assert harness(iter([b"data: x\n\n"])) == [{"name": "openai-chat", "arguments": 2}]
        assert harness(iter([])) == [{"name": "openai-chat", "arguments": 2}]  # id 2 answered


def test_an_error_answer_means_it_executed_nothing(tmp_path):
    script = _script(tmp_path, "    print(json.dumps({'id': stream['id'], 'error': 'boom'}), "
                     "flush=True)\n")
    with ProcessHarness(script, timeout=20) as harness, pytest.raises(HarnessFailed, match="boom"):
        harness(iter([b"x"]))


@pytest.mark.parametrize(("body", "message"), [
    ("    print('not json', flush=True)\n", "answer 1 is not JSON"),
    ("    print(json.dumps({'id': 7, 'executed': []}), flush=True)\n", "answer 1 is not {\"id\": 1"),
    ("    print(json.dumps({'id': 1}), flush=True)\n", "has no \"executed\" list"),
    ("    sys.exit(3)\n", "exited (status 3)"),
])
def test_a_broken_process_stops_the_check_with_one_line(tmp_path, capsys, body, message):
    code = main(["check", "--harness", _script(tmp_path, body), str(CHAT / "no_arguments.jsonl"),
                 "--harness-timeout", "20", *SMALL])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.splitlines()) == 1
    assert "Traceback" not in err


def test_a_silent_process_times_out(tmp_path):
    script = _script(tmp_path, "    pass\n")
    with ProcessHarness(script, timeout=0.3) as harness, pytest.raises(HarnessBroken,
                                                                       match="no answer"):
        harness(iter([b"x"]))


def test_an_input_over_the_memory_limit_is_refused_and_the_others_checked(capsys):
    code = main(["check", "--harness", harness_cmd("safe"), str(CHAT / "parallel_calls.jsonl"),
                 str(CHAT / "no_arguments.jsonl"), "--max-session-bytes", "2000", *SMALL])
    captured = capsys.readouterr()
    assert code == 2 and "parallel_calls.jsonl: larger than 2000 bytes" in captured.err
    assert captured.out.startswith("ok   ") and "no_arguments.jsonl" in captured.out


def test_a_command_that_cannot_start(capsys):
    assert main(["check", "--harness", "no-such-harness-cmd", str(CHAT / "single_call.jsonl")]) == 2
    assert "cannot start it" in capsys.readouterr().err


# -- the pytest plugin -------------------------------------------------------------------------
# (run in process, without pytest-textual-snapshot: its session end reads a folder the outer
# run's has already removed)

INI = "[pytest]\nasyncio_default_fixture_loop_scope = function\n"

TEST_FILE = """
import sys
sys.path.insert(0, {examples!r})
import pytest
from naive_harness import naive_harness
from safe_harness import make_safe_harness
from callscope.core.session import open_input

PLAN = dict(every_byte_up_to=0, window=8, seeds=(1,))

@pytest.mark.callscope_sessions("recordings")
def test_safe(callscope_session, callscope_check):
    tools = open_input(str(callscope_session)).header.tools
    report = callscope_check(make_safe_harness(tools), callscope_session, **PLAN)
    assert report.ok

@pytest.mark.callscope_sessions("recordings/single_call.jsonl")
def test_naive(callscope_session, callscope_check):
    callscope_check(naive_harness, callscope_session, **PLAN)
"""


def test_the_plugin_parametrizes_over_a_folder_and_fails_with_the_finding(pytester):
    pytester.makeini(INI)
    recordings = pytester.path / "recordings"
    recordings.mkdir()
    for name in ("single_call.jsonl", "no_arguments.jsonl"):
        shutil.copy(CHAT / name, recordings / name)
    pytester.makepyfile(test_harness=TEST_FILE.format(examples=str(ROOT / "docs" / "examples")))
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:textual-snapshot", "-v")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*test_safe?no_arguments.jsonl? PASSED*",
                                 "*test_safe?single_call.jsonl? PASSED*",
                                 "*test_naive?single_call.jsonl? FAILED*",
                                 "*executed before the terminal signal: first at cut at byte *"
                                 "reproduce: callscope *single_call.early.lookup_demo_value.cut*"])


def test_the_plugin_says_when_no_sessions_are_given(pytester):
    pytester.makeini(INI)
    pytester.makepyfile("def test_x(callscope_session):\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:textual-snapshot")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*test_x: callscope_session needs sessions: @pytest.mark*"])
    assert "Traceback" not in result.stdout.str()


def test_loading_the_plugin_imports_nothing_of_callscope():
    program = ("import sys, callscope.pytest_plugin\n"
               "print(sorted(m for m in sys.modules if m.startswith('callscope')))")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    assert out.strip() == "['callscope', 'callscope.pytest_plugin']"
