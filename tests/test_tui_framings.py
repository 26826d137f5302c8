"""The debugger on the framings beyond SSE (Bedrock's AWS event stream, Ollama's NDJSON): a
frame's detail lists the fields its framing has, never SSE's id, retry and comments, and an
InvokeModel payload's base64 ``bytes`` is shown decoded."""

from __future__ import annotations

import pathlib

from callscope.core.session import open_input
from callscope.core.timeline import Timeline
from callscope.tui.screens import frame_detail

ROOT = pathlib.Path(__file__).resolve().parent.parent


def timeline(name: str) -> Timeline:
    session = open_input(str(ROOT / "sessions" / name))
    return Timeline.build([(c.t, c.data) for c in session.chunks()])


def fields(text: str) -> list[str]:
    return [line.split()[0] for line in text.split("\n\n")[0].splitlines()]


def test_an_sse_frame_has_its_fields() -> None:
    text = frame_detail(timeline("openai-responses/single_call.jsonl"), 2).plain
    assert fields(text)[4:] == ["event", "id", "retry", "dispatch", "terminated", "comments"]


def test_an_event_stream_message_has_its_event_type_and_its_payload_decoded() -> None:
    tl = timeline("bedrock-invoke/single_call.jsonl")
    text = frame_detail(tl, 3).plain
    assert fields(text)[4:] == ["event", "dispatch", "terminated"]
    assert "Raw bytes (a binary message" in text
    decoded = text.split("Bytes, base64-decoded (the event inside)\n", 1)[1]
    assert decoded.startswith('{\n  "type": "content_block_delta"')
    converse = frame_detail(timeline("bedrock-converse/single_call.jsonl"), 2).plain
    assert "base64" not in converse and "contentBlock" in converse


def test_an_ndjson_line_has_no_sse_fields_and_a_cut_one_says_so() -> None:
    tl = timeline("ollama-chat/truncated_mid_arguments.jsonl")
    last = frame_detail(tl, len(tl.frames) - 1).plain
    assert fields(last)[4:] == ["dispatch", "terminated"]
    assert "NO: the stream ended inside this line" in last
    assert "retry" not in last and "comments" not in last and "blank line" not in last


async def test_hex_rows_fit_the_detail_pane_at_80_columns() -> None:
    """Sixteen bytes a row (73 cells) wrapped in the pane at 80 and at 130 columns, each row's
    text under its hex; eight a row fit; the detail window keeps sixteen."""
    from callscope.tui.app import CallscopeApp
    from callscope.tui.panes.frame_view import FrameDetailPane

    session = open_input(str(ROOT / "sessions/demo.jsonl"))
    app = CallscopeApp([(c.t, c.data) for c in session.chunks()], source="demo")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("g", *"#3", "enter")
        await pilot.pause()
        pane = app.query_one(FrameDetailPane)
        text = frame_detail(app.timeline, 3).plain
        rows = text.split("\nHex\n", 1)[1].split("\n\n", 1)[0].splitlines()
        assert rows[0].startswith("0000  65 76 65 6e 74 3a 20 72  event: r")
        assert max(map(len, rows)) <= pane.scrollable_content_region.width
        await pilot.press("enter")  # the frame's own window
        await pilot.pause()
        whole = app.screen.query_one("Static").content.plain
        assert "0000  65 76 65 6e 74 3a 20 72 65 73 70 6f 6e 73 65 2e  event: response." in whole


async def test_an_ndjson_line_is_listed_as_a_line_not_an_sse_message() -> None:
    from callscope.tui.app import CallscopeApp
    from callscope.tui.panes.frames import FramesPane

    session = open_input(str(ROOT / "sessions/ollama-chat/single_call.jsonl"))
    app = CallscopeApp([(c.t, c.data) for c in session.chunks()], source="ollama")
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        pane = app.query_one(FramesPane)
        rows = [pane._frame_strips(i)[0].text for i in range(len(app.timeline.frames))]
        assert all(" line " in row and "message" not in row for row in rows), rows
        assert pane.columns.event == 5  # sized for "line" (and its header), not for "message"
        assert pane.border_title.endswith(" event carries")


async def test_an_ndjson_line_cut_sizes_the_column_for_what_it_shows() -> None:
    from callscope.tui.panes.frame_row import event_width

    tl = timeline("ollama-chat/truncated_mid_arguments.jsonl")
    whole = timeline("ollama-chat/parallel_calls.jsonl")
    assert event_width(whole.frames, 0, "ollama-chat") == len("line")
    assert event_width(tl.frames, 0, "ollama-chat") == len("unterminated")  # (its last row)
    assert event_width(tl.frames[:-1], 0, "ollama-chat") == len("line")


def test_an_invoke_chunk_is_listed_by_the_event_it_carries() -> None:
    """Every InvokeModel frame is a ``chunk``: its row names the Anthropic event inside,
    the engine's frame is left as it is."""
    from callscope.core.providers.bedrock_invoke import carried_event
    from callscope.tui.panes.frame_row import event_width, kind_of, short_event

    tl = timeline("bedrock-invoke/single_call.jsonl")
    kinds = [kind_of(f, "aws-eventstream", "bedrock-invoke") for f in tl.frames]
    assert kinds[0] == "chunk.message_start" and "chunk.content_block_delta" in kinds
    assert all(f.event_type == "chunk" for f in tl.frames if f.dispatch)  # (unchanged)
    assert [kind_of(f) for f in tl.frames if f.dispatch] == ["chunk"] * sum(
        f.dispatch for f in tl.frames)  # (no protocol given: the frame's own event)
    assert event_width(tl.frames, 0, "bedrock-invoke") == 24  # (the widest, at most)
    assert short_event("chunk.content_block_delta", 24) == "c.content_block_delta"
    assert short_event("chunk.content_block_delta", 10) == "c.c…_delta"
    chunk = next(f for f in tl.frames if f.dispatch)  # (a payload that cannot be read: its own)
    for data in ('{"bytes":"not base64!"}', "[1]", '{"bytes":"eyJ4IjoxfQ=="}'):  # ({"x":1})
        assert carried_event(chunk._replace(data=data)) is None
        assert kind_of(chunk._replace(data=data), "aws-eventstream", "bedrock-invoke") == "chunk"
    assert kind_of(chunk, "aws-eventstream", "bedrock-invoke") == f"chunk.{carried_event(chunk)}"


async def test_invoke_rows_show_the_inner_event_at_80x24_and_200x50() -> None:
    from callscope.tui.app import CallscopeApp
    from callscope.tui.panes.frames import FramesPane

    session = open_input(str(ROOT / "sessions/bedrock-invoke/parallel_calls.jsonl"))
    app = CallscopeApp([(c.t, c.data) for c in session.chunks()], source="invoke",
                       protocol="bedrock-invoke")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        pane = app.query_one(FramesPane)
        rows = [pane._frame_strips(i)[0].text for i in range(len(app.timeline.frames))]
        assert " c.m…_start " in rows[0] and any(" c.c…_delta " in row for row in rows), rows
        assert not any(" chunk " in row for row in rows), rows
        await pilot.resize_terminal(200, 50)
        await pilot.pause()
        await pilot.pause()
        rows = [pane._frame_strips(i)[0].text for i in range(len(app.timeline.frames))]
        assert any(" c.content_block_delta " in row for row in rows), rows
        assert any(" chunk.message_start " in row for row in rows), rows


def test_the_row_names_what_the_readers_unwrap_says(monkeypatch) -> None:
    """One unwrap: the row's name is bedrock_invoke.carried_event's (the reader's own), which
    the display filter's ``event`` also reads; the list decodes no payload of its own."""
    from callscope.tui.panes import event_name
    from callscope.tui.panes.frame_row import kind_of

    tl = timeline("bedrock-invoke/single_call.jsonl")
    chunk = next(f for f in tl.frames if f.dispatch)
    monkeypatch.setattr(event_name, "carried_event", lambda frame: "probe")
    assert kind_of(chunk, "aws-eventstream", "bedrock-invoke") == "chunk.probe"
