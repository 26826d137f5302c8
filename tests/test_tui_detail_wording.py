"""What the detail views say, in words a user reads: a frame's effects without Python reprs, a
frame within one read said plainly, a frame closing two calls said once with its count, the
call detail's one-line rows without line-end marks, and a folder's list that offers escape only
once a session is open. Each was seen on screen in a walk through the README (tmux, 200x50 and
80x24) and fails on the tree before."""

from __future__ import annotations

import pathlib
import shutil

from callscope.core.engine import CallStep
from callscope.core.events import Anomaly
from callscope.core.lanes import CallView
from callscope.core.session import open_input
from callscope.core.timeline import Timeline
from callscope.core.tools import ToolSet
from callscope.tui.app import CallscopeApp
from callscope.tui.call_detail import call_detail
from callscope.tui.folder import FolderApp
from callscope.tui.panes.frame_row import carries
from callscope.tui.screens import describe_step, frame_detail
from textual.widgets import Static

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"


def _timeline(path: pathlib.Path) -> Timeline:
    session = open_input(str(path))
    tools = ToolSet(list(getattr(session.header, "tools", None) or []))
    return Timeline.build([(c.t, c.data) for c in session.chunks()], tools=tools)


def _complete_app() -> CallscopeApp:
    """The debugger on the demo whose two calls execute (its tools known)."""
    session = open_input(str(ROOT / "sessions/demo_complete.jsonl"))
    return CallscopeApp([(c.t, c.data) for c in session.chunks()], source="complete",
                        tools=ToolSet(list(session.header.tools or [])))


def test_a_frames_effects_name_codes_as_the_registry_does_and_say_no_value_as_a_dash():
    timeline = _timeline(ROOT / "sessions/demo.jsonl")
    anomaly = next(s for s in timeline.steps
                   if isinstance(s, CallStep) and isinstance(s.event, Anomaly))
    said = describe_step(anomaly).plain
    assert said.startswith("Anomaly code=missing_terminal, message='the stream ended")
    assert "<Code." not in said and "key=None" not in said and said.endswith("key=—")


def test_a_frame_inside_one_read_says_so_and_one_across_reads_says_where():
    timeline = _timeline(ROOT / "sessions/demo.jsonl")
    texts = {index: "".join(p if isinstance(p, str) else getattr(p, "plain", str(p[0]))
                            for p in frame_detail(timeline, index))
             for index in range(len(timeline.frames))}
    one_read = [t for t in texts.values() if "no read boundary inside" in t]
    across = [t for t in texts.values() if "boundaries inside at " in t]
    assert one_read and across
    assert not any("boundaries inside at none" in t for t in texts.values())


def test_a_frame_closing_two_calls_says_closed_once_with_its_count():
    path = FIXTURES / "openai-chat" / "parallel_tool_calls_two_functions.sse"
    timeline = _timeline(path)
    said = [[text for text, _ in carries(timeline, i)] for i in range(len(timeline.frames))]
    closing = [s for s in said if any(t.startswith("closed") for t in s)]
    assert closing and all(s.count("closed") == 0 for s in closing)
    assert any("closed ×2" in s for s in closing)


def test_the_call_details_rows_hold_no_line_end_marks():
    timeline = _timeline(ROOT / "sessions/demo.jsonl")
    last = timeline.view(len(timeline) - 1)
    calls: list[CallView] = list(last.calls)
    lenient = [c for c in calls if c.decision is not None and c.decision.lenient is not None]
    assert lenient
    for call in lenient:
        text = call_detail(call).plain
        row = next(line for line in text.splitlines() if line.strip().startswith("lenient"))
        assert "␊" not in text
        assert row.strip() in ('lenient execute (parsed) with {"key":"Objective"}',
                               'lenient execute (salvaged) with {"path":"notes/todo.txt"}')


async def test_a_folder_offers_escape_only_once_a_session_is_open(tmp_path):
    shutil.copy(ROOT / "sessions/demo_complete.jsonl", tmp_path / "complete.jsonl")
    app = FolderApp(str(tmp_path))
    async with app.run_test(size=(120, 30)) as pilot:
        for _ in range(100):
            await pilot.pause(0.05)
            if app.read == 1:
                break
        info = str(app.list_screen.query_one("#folder-info", Static).render())
        assert "enter opens one" in info and "escape goes back" not in info
        app.open_session(str(tmp_path / "complete.jsonl"))
        await pilot.pause(0.3)
        info = str(app.list_screen.query_one("#folder-info", Static).render())
        assert "escape goes back to the one open" in info
        # the panes' key back to the list names what the list holds
        said = {active.binding.description for active in app.screen.active_bindings.values()
                if active.binding.id == "callscope.captures"}
        assert said == {"Sessions"}


async def test_a_cut_says_how_many_calls_it_refused_in_words():
    app = _complete_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        app._cut(app.timeline.total_bytes - 1)
        await pilot.pause()
        said = [str(n.message) for n in app._notifications]
        assert any("; 2 calls refused. u undoes." in m for m in said), said
        assert not any("call(s)" in m for m in said)


def test_the_headline_says_the_stop_reason_once():
    """The ending line names the frame that carried the stop reason when it is not the terminal
    frame; the headline said it again on the next line (anthropic max_tokens at its end)."""
    from callscope.tui.panes.decisions import head

    path = ROOT / "sessions/anthropic/max_tokens.jsonl"
    timeline = _timeline(path)
    session = open_input(str(path))
    timeline.end = session.end
    text = head(timeline.view(len(timeline) - 1), timeline).plain
    assert text.count("max_tokens") == 1 and "the provider cut its output" in text, text


def test_the_markdown_log_says_a_refusal_had_no_signal_as_the_app_does():
    from callscope.tui.exports import decision_log, log_markdown

    timeline = _timeline(ROOT / "sessions/demo.jsonl")
    md = log_markdown(decision_log(timeline, "demo"))
    refusals = [line for line in md.splitlines() if "| refuse |" in line]
    assert len(refusals) == 2 and all("| none |" in line for line in refusals)


async def test_undo_says_what_it_did():
    app = _complete_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        app._cut(3000)
        app._cut(2000)
        await pilot.pause()
        await pilot.press("u")
        await pilot.pause()
        said = [str(n.message) for n in app._notifications]
        assert any(m == "Cut undone: the stream ends at byte 3000 again (1 more cut to undo)."
                   for m in said), said
        await pilot.press("u")
        await pilot.pause()
        said = [str(n.message) for n in app._notifications]
        assert "Cut undone: the whole stream again." in said


async def test_the_cut_prompt_suggests_the_cursors_offset():
    from callscope.tui.app import CallscopeApp
    from textual.widgets import Input

    session = open_input(str(ROOT / "sessions/demo.jsonl"))
    app = CallscopeApp([(c.t, c.data) for c in session.chunks()], source="demo")
    async with app.run_test(size=(160, 45)) as pilot:
        app.action_goto_step(40)
        await pilot.pause()
        here = app.timeline.view(app.cursor).received
        await pilot.press("X")
        await pilot.pause()
        field = app.screen.query_one(Input)
        assert field.placeholder == str(here) and here not in (0, 1024)
        assert f"of {app.timeline.total_bytes}" in str(app.screen.query_one(Static).render())


def test_a_frame_cut_inside_its_data_line_says_its_data_is_not_what_arrived():
    """The demo's last frame was cut inside its data: line: its detail said "Data (not JSON)"
    over an empty line, as if the frame had carried nothing."""
    from callscope.tui.screens import CUT_LINE

    timeline = _timeline(ROOT / "sessions/demo.jsonl")
    last = frame_detail(timeline, len(timeline.frames) - 1).plain
    assert "Data none\n" + CUT_LINE in last and "Data (not JSON)" not in last
    whole = frame_detail(timeline, 3).plain
    assert "Data (parsed JSON, pretty)" in whole and CUT_LINE not in whole
    ndjson = _timeline(ROOT / "sessions/ollama-chat/truncated_mid_arguments.jsonl")
    cut = frame_detail(ndjson, len(ndjson.frames) - 1).plain
    assert "Data (not JSON)" in cut and CUT_LINE not in cut  # (an NDJSON line is its data)


def test_a_vertex_pieces_value_is_shown_as_json_in_the_list_and_the_replay_table(capsys):
    """A partialArgs piece's value was Python's repr: 'A' (and True, None) where the wire says
    "A" (true, null)."""
    from callscope.tui.cli import main

    path = ROOT / ("sessions/fixtures/gemini-generatecontent/"
                   "vertex_partialArgs_parallel_calls_and_no_args_call.reconstructed.jsonl")
    timeline = _timeline(path)
    rows = [" ".join(text for text, _ in carries(timeline, i)) for i in range(len(timeline.frames))]
    assert any('$.id = "A"' in row for row in rows) and not any("'A'" in row for row in rows)
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert '$.id <- "A"' in out and "'A'" not in out


def test_a_fragment_in_the_replay_table_is_a_json_string(capsys):
    """The replay table's appended fragment was Python's repr (``+'{"'``), where the frame
    list and the wire spell a JSON string (``+"{\\""``)."""
    from callscope.tui.cli import main

    assert main(["replay", str(ROOT / "sessions/demo.jsonl")]) == 0
    out = capsys.readouterr().out
    assert 'appended +"{\\"" (2 chars)' in out and "appended +'" not in out
