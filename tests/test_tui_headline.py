"""The decision headline never contradicts the calls under it, and says how the stream ended."""

from __future__ import annotations

import pathlib

import pytest
from callscope.core.session import open_input
from callscope.core.timeline import Timeline
from callscope.tui.panes.decisions import head

ROOT = pathlib.Path(__file__).resolve().parent.parent


def timeline(name: str) -> Timeline:
    session = open_input(str(ROOT / name))
    built = Timeline.build([(c.t, c.data) for c in session.chunks()])
    built.end = session.end
    return built


@pytest.mark.parametrize("name", ["sessions/demo.jsonl", "sessions/anthropic/max_tokens.jsonl",
                                  "sessions/openai-chat/parallel_calls.jsonl"])
def test_the_headline_agrees_with_the_calls_at_every_step(name: str) -> None:
    tl = timeline(name)
    for k in range(len(tl)):
        view = tl.view(k)
        text = head(view, tl).plain
        decided = [c for c in view.calls if c.decision is not None]
        waiting = [c for c in view.calls if c.decision is None]
        if decided:
            assert "turn OPEN" not in text, (k, text)
        if ("ENDED" in text or "TRUNCATED" in text) and waiting:
            assert f"{len(decided)} of {len(view.calls)} calls decided" in text, (k, text)


def test_the_ending_is_said_once_the_stream_is_over() -> None:
    tl = timeline("sessions/demo.jsonl")
    text = head(tl.view(len(tl) - 1), tl).plain
    assert "ending transport reset by the peer at byte 8329" in text
    assert "response.function_call_arguments.delta at #20 was never dispatched" in text
    cut = tl.cut_at(3000)
    assert "ending transport cut at byte 3000" in head(cut.view(len(cut) - 1), cut).plain


@pytest.mark.parametrize(("name", "head", "verdicts"), [
    ("sessions/demo.jsonl", "TRUNCATED: reset by the peer at byte 8329, t+1.700s",
     ["1 REFUSE truncated", "2 REFUSE truncated"]),
    ("sessions/ollama-chat/truncated_mid_arguments.jsonl",  # (a status line of three rows)
     "TRUNCATED: reset by the peer at byte 1369, t+1.108s", ["1 REFUSE truncated"]),
    ("sessions/anthropic/max_tokens.jsonl",  # the provider's cut, under three rows of status
     "ENDED by message_stop at #", ["1 REFUSE"])])
async def test_the_ending_and_every_verdict_show_unscrolled_at_80x24(
        name: str, head: str, verdicts: list[str]) -> None:
    """At 80x24 the decisions' summary shows three or four rows: the whole headline said the
    transport's end on its second to fifth rows and the verdicts under the scroll. The compact
    summary says the turn and the transport's end, then each call's verdict on a row."""
    from callscope.tui.app import CallscopeApp
    from callscope.tui.cli import LoadedInput, protocol_for, toolset_for
    from callscope.tui.panes.decision_compact import HINT
    from callscope.tui.panes.decisions_pane import DecisionsPane

    loaded = LoadedInput(str(ROOT / name))
    source = "/a/longer/path/to/the/recordings/" + name
    app = CallscopeApp(loaded.held(10**8), source=source, protocol=protocol_for(loaded, None),
                       tools=toolset_for(loaded, None), end=loaded.session.end)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("end")
        app._search("no such text, long enough to fill a row")  # (the status line's third row)
        await pilot.pause()
        await pilot.pause()
        summary = app.query_one(DecisionsPane).summary_view
        assert summary.scroll_y == 0
        region = summary.region  # (its bottom edge included: the hint)
        rows = [strip.text[region.x:region.right]
                for strip in app.screen._compositor.render_strips()[region.y:region.bottom]]
        shown = " ".join(" ".join(rows).split())
        assert app.query_one("#status").size.height == 3
        assert head in shown, rows
        for verdict in verdicts:
            assert verdict in shown, rows
        assert HINT in rows[-1]
        await pilot.press("tab", "tab", "tab", "z")  # zoomed: the whole summary
        await pilot.pause()
        whole = app.query_one(DecisionsPane).summary_text()
        assert "\nending transport " in whole and "evidence: frame" in whole
        assert HINT not in str(summary.border_subtitle)


def test_the_replay_table_says_the_ending_too(capsys) -> None:
    """The demo's reset mid-body was said nowhere: replay's table says it, in the headline's words."""
    from callscope.tui.cli import main

    assert main(["replay", str(ROOT / "sessions/demo.jsonl")]) == 0
    out = capsys.readouterr().out
    tl = timeline("sessions/demo.jsonl")
    said = head(tl.view(len(tl) - 1), tl).plain
    line = next(row for row in out.splitlines() if row.strip().startswith("ending: "))
    assert "transport reset by the peer at byte 8329" in line
    assert line.strip().removeprefix("ending: ") in said.replace("\n", " ")


def test_an_untimed_recording_says_no_time_of_its_end() -> None:
    """A raw .sse (every read at t=0) said 'cut at byte 2799, t+0.000s': no time is known."""
    data = (ROOT / "tests/fixtures/openai-chat/parallel_tool_calls_two_functions.sse").read_bytes()
    cut = Timeline.build([(0.0, data)]).cut_at(2799)
    text = head(cut.view(len(cut) - 1), cut).plain
    assert "ending transport cut at byte 2799 (" in text and "t+" not in text
    timed = timeline("sessions/demo.jsonl").cut_at(3000)
    assert "t+" in head(timed.view(len(timed) - 1), timed).plain
