"""Expert info (e) over the whole turn from any step, and the request beside the response (i)."""

from __future__ import annotations

import pathlib

from callscope.core.session import open_input
from callscope.tui.app import CallscopeApp
from callscope.tui.expert import ExpertScreen, expert_info
from callscope.tui.request_view import RequestScreen
from textual.widgets import Static

ROOT = pathlib.Path(__file__).resolve().parent.parent
KEY = "sk-test-0123456789abcdef0123456789abcdef"


def demo_app(name: str = "sessions/demo.jsonl") -> CallscopeApp:
    session = open_input(str(ROOT / name))
    return CallscopeApp([(c.t, c.data) for c in session.chunks()], source=name,
                        end=session.end, header=session.header)


def text_of(app: CallscopeApp) -> str:
    return str(app.screen.query_one(Static).render())


async def test_expert_info_says_the_whole_turn_from_step_0_and_jumps_to_an_entry() -> None:
    app = demo_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("home", "e")
        await pilot.pause()
        assert isinstance(app.screen, ExpertScreen)
        shown = text_of(app)
        assert "transport reset by the peer at byte 8329" in shown
        assert "Decisions (2)" in shown and "no-terminal" in shown
        assert "missing_terminal" in shown and "The stream ended without its terminal signal." in shown
        assert "first byte" in shown and "␊" not in shown  # (the timing's lines end as lines)
        last = len(app.timeline) - 1
        app.screen.action_jump(last)
        await pilot.pause()
        assert not isinstance(app.screen, ExpertScreen) and app.cursor == last


async def test_expert_info_groups_anomalies_by_their_declared_effect() -> None:
    data = (ROOT / "tests/adversarial/anth_stop_noevent.sse").read_bytes()
    app = CallscopeApp([(0.0, data)], source="x")
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("e")
        await pilot.pause()
        shown = text_of(app)
        assert "unreadable (1)" in shown and "event_name_missing" in shown
        assert "REFUSE provider_error" in shown and "unreadable:" in shown


async def test_the_request_beside_the_response_redacts_and_shows_the_tools() -> None:
    app = demo_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("i")
        await pilot.pause()
        assert isinstance(app.screen, RequestScreen)
        shown = text_of(app)
        assert "POST https://api.openai.com/v1/responses" in shown
        assert "Authorization: [REDACTED]" in shown and KEY not in shown
        assert "tools (4)" in shown and "delete_demo_file" in shown
        assert "ended  reset" in shown
        rows = [strip.text for strip in app.screen._compositor.render_strips()]
        assert any('"additionalProperties": false' in row for row in rows)  # (never broken)
        await pilot.press("escape")
        bare = CallscopeApp([(0.0, b"data: [DONE]\n\n")], source="raw.sse")
    async with bare.run_test(size=(160, 45)) as pilot:
        await pilot.press("i")
        await pilot.pause()
        assert "No session header" in text_of(bare)


def test_timing_says_first_bytes_silences_and_draws_the_arrival() -> None:
    from callscope.core.timeline import Timeline
    from callscope.tui.timing import sparkline, timing_lines

    session = open_input(str(ROOT / "sessions/demo.jsonl"))
    chunks = [(c.t, c.data) for c in session.chunks()]
    lines = timing_lines(Timeline.build(chunks))
    assert lines[0].startswith("bytes over ") and "|" in lines[0]
    assert f"first byte {chunks[0][0] * 1000:.1f} ms after the request" in lines[1]
    assert "longest silence" in lines[1] and "first tool-call byte" in lines[2]
    assert sparkline([0, 1, 8]) == " ▁█" and timing_lines(Timeline.build([(0.0, b"data: x\n\n")])) == []


async def test_many_calls_get_a_compact_list_above_their_lanes_and_a_click_selects_one() -> None:
    import random

    from callscope.core.synth import ToolCall, Turn, encode
    from callscope.tui.panes.buffers import BuffersPane, CallList

    calls = tuple(ToolCall("lookup_demo_value", f'{{"key":"k{i}"}}') for i in range(6))
    data = encode("anthropic", Turn(calls), random.Random(1))
    app = CallscopeApp([(0.0, data)], source="six")
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("end")
        await pilot.pause()
        pane = app.query_one(BuffersPane)
        listed = [b for b in pane.blocks if isinstance(b, CallList)]
        assert listed and [line.plain.split()[0] for line in listed[0].lines] == [
            str(n) for n in range(1, 7)]
        assert "lookup_demo_value" in listed[0].lines[0].plain and "EXECUTE" not in listed[0].lines[0].plain
        top = pane.block_top(pane.blocks.index(listed[0]))
        pane.scroll_to(y=top, animate=False)
        await pilot.pause()
        await pilot.click(BuffersPane, offset=(4, top - round(pane.scroll_y) + 3 + 1))  # (+1: the border)
        await pilot.pause()
        assert app.selected == listed[0].calls[3].key


def test_every_character_of_an_entry_goes_to_its_step() -> None:
    """Found walking the README: only the step number was a link; a click on the rest of the
    entry (the decision, the anomaly's words) did nothing."""
    app = demo_app()
    content = expert_info(app.timeline, app.recorded_end)
    text = content.plain
    links = [(span.start, span.end, span.style) for span in content.spans
             if "@click" in str(getattr(span.style, "meta", "") or span.style)]
    start = text.index("REFUSE truncated")
    line_start, line_end = text.rindex("\n", 0, start) + 1, text.index("\n", start)
    covering = [(a, b) for a, b, _ in links if a <= line_start and b >= line_end]
    assert covering, (line_start, line_end, links[:5])
    anomaly = text.index("missing_terminal end")
    assert any(a <= text.rindex("\n", 0, anomaly) + 1 and b >= text.index("\n", anomaly)
               for a, b, _ in links)


async def test_the_keys_move_between_entries_and_enter_goes_there() -> None:
    """Found walking the README: the window could not be used from the keyboard at all."""
    app = demo_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("home", "e")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ExpertScreen) and screen.selected is None
        steps = screen.entries.steps
        assert len(steps) == 3  # two decisions, one anomaly
        await pilot.press("down")
        assert screen.selected == 0 and "REFUSE" in _selected_line(screen)
        await pilot.press("down", "down", "down")
        assert screen.selected == 2 and "missing_terminal" in _selected_line(screen)
        await pilot.press("up")
        assert screen.selected == 1
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, ExpertScreen) and app.cursor == steps[1]


def _selected_line(screen: ExpertScreen) -> str:
    content = screen.content
    spans = [s for s in content.spans if "reverse" in str(s.style)]
    assert spans
    return content.plain[spans[0].start:spans[0].end]


async def test_the_arrival_strip_fits_its_row_at_80x24() -> None:
    app = demo_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("e")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ExpertScreen)
        strip = next(line for line in screen.content.plain.splitlines()
                     if line.startswith("bytes over"))
        assert strip.endswith("|") and len(strip) <= screen.query_one(Static).size.width


def test_a_decisions_detail_that_repeats_its_rules_statement_is_said_once() -> None:
    """The demo's refusals read "[no-terminal: The provider's terminal signal never came.] —
    the terminal signal never came": the detail adds nothing to the statement."""
    app = demo_app()
    text = expert_info(app.timeline, app.recorded_end).plain
    assert "[no-terminal: The provider's terminal signal never came.]" in text
    assert "never came.] — the terminal signal never came" not in text


async def test_the_selected_entry_is_always_on_screen_however_its_lines_wrap() -> None:
    """The window scrolled to the selection by the proportion of lines before it: with lines
    wrapped at 80 columns, a long turn's selection could sit off the window's rows."""
    from textual.containers import VerticalScroll

    app = demo_app("tests/adversarial/anth_cap_bypass.sse")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("e")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ExpertScreen) and len(screen.entries.steps) > 100
        body = screen.query_one(VerticalScroll)
        for keys in (["down"] * 45, ["up"] * 12, ["down"] * 30):
            for key in keys:
                await pilot.press(key)
                await pilot.pause()
                region = body.content_region
                shown = [strip.text for strip in
                         screen._compositor.render_strips()[region.y:region.bottom]]
                head = " ".join(_selected_line(screen).split())[:24]
                assert any(head in " ".join(row.split()) for row in shown), (screen.selected, head)


async def test_the_request_window_redacts_a_session_another_tool_wrote(tmp_path) -> None:
    """A session file callscope did not write may hold a key in the request, the response
    headers or a member of its own: the window shows none of them (it can end up in a
    screenshot)."""
    import orjson

    keys = ["sk-proj-WINDOW1111", "sk-ant-WINDOW2222", "AIzaWINDOW3333", "WINDOW4444"]
    head = {"callscope": "session", "version": 1, "source": "hand",
            "request": {"method": "POST", "url": f"https://g.example/v1?key={keys[2]}",
                        "headers": {"Authorization": f"Bearer {keys[0]}"}},
            "response_headers": {"x-api-key": keys[1]}, "notes": {"token": keys[3]}}
    path = tmp_path / "hand.jsonl"
    path.write_bytes(orjson.dumps(head) + b"\n" + orjson.dumps({"t": 0, "text": "data: {}\n\n"})
                     + b"\n" + orjson.dumps({"end": "clean"}) + b"\n")
    session = open_input(str(path))
    app = CallscopeApp([(c.t, c.data) for c in session.chunks()], source=str(path),
                       end=session.end, header=session.header)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("i")
        await pilot.pause()
        shown = text_of(app)
        assert "Authorization: [REDACTED]" in shown and '"token": "[REDACTED]"' in shown
        assert [k for k in keys if k in shown] == []
