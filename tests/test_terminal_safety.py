"""Terminal safety of the headless outputs: hostile text stays inert in the table, the JSON lines
and the one-line errors.

Every string of ``scripts/hostile_inputs.HOSTILE`` (SGR and screen-clearing escapes, OSC 8
hyperlinks, OSC 52 clipboard writes, C1 controls, bidi overrides and isolates, invisible
characters, Rich markup, CR, line separators, a 20,000-character line) is appended to every name,
id, text, error message and stop reason of one real recording per protocol, and sent as an
unknown event type, an event name and an error event, and as a tool call's name, id and
arguments. The TUI panes have their own helper (``tui/safe.py``) and tests.
"""

from __future__ import annotations

import json
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import fuzz_oracle as oracle  # noqa: E402
import hostile_inputs as hostile  # noqa: E402

IDS = [f"hostile{i}" for i in range(len(hostile.HOSTILE))]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """Every hostile input replayed once through the table and once as JSON lines."""
    tmp = tmp_path_factory.mktemp("hostile")
    tools = tmp / "tools.json"
    runs: dict[str, list[tuple[str, int, str, str]]] = {}
    for n, (label, data, text) in enumerate(hostile.hostile_inputs()):
        path = tmp / f"hostile{n}.sse"
        path.write_bytes(data)
        names = [str(x) for x in oracle.call_names(data, None)]
        tools.write_text(json.dumps([{"name": x, "parameters": {"type": "object"}} for x in names]))
        for mode in ("table", "json"):
            rc, out, err = hostile.replay_output(str(path), "--tools", str(tools),
                                                 *(["--json"] if mode == "json" else []))
            runs.setdefault(f"{mode}:{text}", []).append((label, rc, out, err))
    return runs


@pytest.mark.parametrize("text", hostile.HOSTILE, ids=IDS)
def test_the_table_keeps_hostile_text_inert(outputs, text):
    for label, rc, out, err in outputs[f"table:{text}"]:
        assert rc == 0 and err == "", (label, err)
        assert hostile.terminal_problems(out, label) == []
        if "\x1b" in text:  # not vacuous: the text reached the table, escaped
            assert any(e in out for e in hostile.ESCAPED_ESC), label


@pytest.mark.parametrize("text", hostile.HOSTILE, ids=IDS)
def test_json_lines_parse_and_never_carry_a_raw_escape(outputs, text):
    for label, rc, out, _ in outputs[f"json:{text}"]:
        assert rc == 0, label
        records = [json.loads(line) for line in out.split("\n")[:-1]]
        assert records[-1]["kind"] == "turn"
        assert not any(c in out for c in "\x1b\x07\x08\r\x00"), label
        if "\x1b" in text:
            assert "\\u001b" in out, label


@pytest.mark.parametrize("text", hostile.HOSTILE, ids=IDS)
def test_json_lines_carry_no_raw_bidi_c1_or_invisible_characters(outputs, text):
    for label, _, out, _ in outputs[f"json:{text}"]:
        assert hostile.terminal_problems(out, label, json_lines=True) == []


@pytest.mark.parametrize("case", range(5), ids=lambda i: f"error{i}")
def test_one_line_errors_quote_hostile_text_inertly(tmp_path, case):
    """Error messages that quote the file: a HAR entry's method and URL, a session marker, an
    end kind, a header protocol, a tool definition, each carrying OSC 52, CSI, bidi and LF."""
    label, path = hostile.hostile_files(str(tmp_path))[case]
    rc, out, err = hostile.replay_output(path)
    assert rc == 2 and err.startswith("callscope: ") and err.count("\n") == 1, (label, err)
    assert not oracle.TERMINAL_UNSAFE.search(err), (label, err)


def test_a_hostile_file_name_is_escaped_in_the_table_header(tmp_path):
    path = tmp_path / "name\x1b]52;c;aGk=\x07\u202e.sse"
    path.write_bytes(hostile.anthropic_call("f", "{}"))
    rc, out, err = hostile.replay_output(str(path))
    header = out.split("\n")[0]
    assert rc == 0 and header.startswith("== ") and any(e in header for e in hostile.ESCAPED_ESC)
    assert hostile.terminal_problems(out, "header") == []


def test_a_hostile_file_name_is_escaped_in_an_error_line(tmp_path):
    path = tmp_path / "name\x1b]52;c;aGk=\x07\u202e.jsonl"
    path.write_bytes(b"")
    rc, out, err = hostile.replay_output(str(path))
    assert rc == 2 and not oracle.TERMINAL_UNSAFE.search(err), err


def test_very_long_values_keep_table_lines_bounded(outputs):
    long_text = hostile.HOSTILE[-1]
    assert len(long_text) >= 20_000
    for label, _, out, _ in outputs[f"table:{long_text}"]:
        assert max(map(len, out.split("\n"))) <= hostile.MAX_TABLE_LINE, label
