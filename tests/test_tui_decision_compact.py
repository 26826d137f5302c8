"""The compact decisions summary (tui/panes/decision_compact.py): the turn, then a row per call
with its verdict first; a tally first when the calls outnumber the rows; stream text as text."""

from __future__ import annotations

import pathlib

import msgspec.structs
from callscope.core.session import open_input
from callscope.core.timeline import Timeline
from callscope.tui.panes.blocks import OneRow
from callscope.tui.panes.decision_compact import call_row, compact_blocks, compact_head

ROOT = pathlib.Path(__file__).resolve().parent.parent


def timeline(name: str) -> Timeline:
    session = open_input(str(ROOT / "sessions" / name))
    built = Timeline.build([(c.t, c.data) for c in session.chunks()])
    built.end = session.end
    return built


def texts(blocks) -> list[str]:
    return [b.content.plain for b in blocks]


def test_every_call_has_a_row_with_its_verdict_first_at_every_step() -> None:
    tl = timeline("openai-chat/parallel_calls.jsonl")
    for k in range(len(tl)):
        view = tl.view(k)
        rows = texts(compact_blocks(view, tl, rows=8))[1:]
        if not view.calls:
            assert rows == ["no tool call so far"]
            continue
        assert len(rows) == len(view.calls)
        for row, call in zip(rows, view.calls, strict=True):
            action = call.decision.action.upper() if call.decision else "WAIT"
            assert row.startswith(f"{call.order + 1} {action}") and row.endswith(call.name)


def test_more_calls_than_rows_are_tallied_first() -> None:
    tl = timeline("openai-chat/parallel_calls.jsonl")
    view = tl.view(len(tl) - 1)
    n = len(view.calls)
    assert n >= 2
    rows = texts(compact_blocks(view, tl, rows=n - 1))  # (the turn and n - 2 rows)
    actions = [c.decision.action.upper() if c.decision else "WAIT" for c in view.calls]
    head, _, counts = rows[1].partition(": ")
    assert head == f"{n} calls"
    assert sorted(counts.split(", ")) == sorted(f"{actions.count(a)} {a}" for a in set(actions))
    assert len(rows) == 2 + n  # (the calls' rows after it, under the scroll)
    assert texts(compact_blocks(view, tl, rows=n + 1))[1].startswith("1 ")  # (all fit: no tally)


def test_the_turn_says_where_the_transport_ended_and_the_providers_cut() -> None:
    demo = timeline("demo.jsonl")
    assert compact_head(demo.view(len(demo) - 1), demo).plain == (
        "TRUNCATED: reset by the peer at byte 8329, t+1.700s")
    assert compact_head(demo.view(0), demo).plain.startswith("OPEN")
    cut = timeline("anthropic/max_tokens.jsonl")
    head = compact_head(cut.view(len(cut) - 1), cut).plain
    assert head.startswith("ENDED by message_stop at #") and "stop max_tokens (cut)" in head


def test_a_calls_row_shows_its_name_as_text_cut_at_the_width() -> None:
    tl = timeline("demo.jsonl")
    call = tl.view(len(tl) - 1).calls[0]
    hostile = msgspec.structs.replace(call, name="[bold]x[/]\x1b[31m" + "y" * 80)
    row = call_row(hostile)
    assert "[bold]x[/]" in row.plain and "\x1b" not in row.plain  # (the escape made visible)
    block = OneRow(("row",), lambda: row)
    strip = block.render(30, _View())[0]
    assert block.rows(30) == 1 and strip.cell_length == 30 and strip.text.endswith("…")


class _View:
    """What a block's render reads of its view."""

    from textual.style import Style as _Style

    visual_style = _Style()


def test_the_turn_names_the_providers_error_and_how_far_the_gate_is() -> None:
    """The calls below say ``REFUSE provider_error``: the line above them names the error (it
    was only in the whole summary), and while the gate decides, how many of the calls it has."""
    failed = timeline("anthropic/provider_error.jsonl")
    heads = [compact_head(failed.view(k), failed).plain for k in range(len(failed))]
    assert heads[-1] == ("TRUNCATED: closed cleanly at byte 2133, t+0.872s; provider error "
                         "Overloaded")
    assert "TRUNCATED: no terminal signal; provider error Overloaded; deciding: 1 of 2 calls" in heads
    chat = timeline("openai-chat/parallel_calls.jsonl")
    deciding = [h for h in (compact_head(chat.view(k), chat).plain for k in range(len(chat)))
                if "deciding" in h]
    assert deciding == [f"ENDED by [DONE] at #23; deciding: {n} of 3 calls" for n in range(3)]
    assert compact_head(chat.view(len(chat) - 1), chat).plain == "ENDED by [DONE] at #23"
