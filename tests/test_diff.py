"""``callscope diff A B``: call by call, the first differing fragment with its frames, exit 1
when the calls differ; and its side-by-side view."""

from __future__ import annotations

from pathlib import Path

from callscope.core.diff import diff, read_side
from callscope.core.quirks import apply_quirk
from callscope.core.session import Chunk, SessionHeader, StreamEnd, open_input, save_session
from callscope.core.sweep_compare import shown
from callscope.core.tools import ToolSet
from callscope.tui.cli import main
from callscope.tui.diff_view import DiffApp, side_view

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = ROOT / "sessions"


def side(path: Path):
    s = open_input(str(path))
    return read_side(str(path), [(c.t, c.data) for c in s.chunks()], protocol=s.header.protocol,
                     tools=ToolSet(s.header.tools or []), end=s.end)


def quirked(tmp_path: Path, name: str, source: Path) -> Path:
    """``source`` rewritten by a quirk profile, saved as a session (a gateway's downstream)."""
    s = open_input(str(source))
    chunks, _ = apply_quirk(name, s.header.protocol, [(c.t, c.data) for c in s.chunks()])
    out = tmp_path / f"{name}.jsonl"
    save_session(str(out), s.header, [Chunk(t or 0.0, d) for t, d in chunks], s.end)
    return out


def test_the_same_recording_has_the_same_calls(capsys):
    path = str(SESSIONS / "openai-chat/parallel_calls.jsonl")
    assert main(["diff", path, path]) == 0
    assert capsys.readouterr().out.startswith("same calls: ")


def test_a_cut_recording_differs_from_the_whole_one_at_the_cut_fragment(capsys):
    a, b = SESSIONS / "demo.jsonl", SESSIONS / "demo_complete.jsonl"
    assert main(["diff", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "call 1: decision refuse (truncated) / execute" in out
    assert 'ending: terminal signal null / "response.completed"' in out
    report = diff(side(a), side(b))
    first = report.first
    assert first is not None and first.call == 1 and first.offset is not None
    ca, cb = report.a.calls[1], report.b.calls[1]
    assert ca.text[:first.offset] == cb.text[:first.offset] and cb.text.startswith(ca.text)
    frame_b, start, end = cb.fragments[first.fragment_b]
    assert f"B: fragment {first.fragment_b + 1} of {len(cb.fragments)} (characters {start}..{end}): " \
        f"{shown(cb.text[start:end], 120)}" in out
    assert f"B: frame #{frame_b} (response.function_call_arguments.delta)" in out


def test_a_gateway_that_resends_the_arguments_differs_where_they_part(tmp_path, capsys):
    a = SESSIONS / "openai-chat/single_call.jsonl"
    b = quirked(tmp_path, "args-resent", a)
    assert main(["diff", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    text = side(a).calls[0].text
    assert f"first difference: call 1, the arguments part at character {len(text)}" in out
    assert "decision execute / refuse (invalid_json)" in out


def test_ids_can_be_left_out_and_a_missing_call_is_said(tmp_path, capsys):
    a = SESSIONS / "openai-chat/parallel_calls.jsonl"
    b = quirked(tmp_path, "whole-call", a)  # the same calls, whole: ids and texts kept
    assert main(["diff", str(a), str(b)]) == 0
    s = open_input(str(a))
    chunks = [c for c in s.chunks()]
    short = tmp_path / "short.jsonl"
    save_session(str(short), SessionHeader(protocol="openai-chat", tools=s.header.tools),
                 chunks[: len(chunks) // 3], StreamEnd("reset"))
    capsys.readouterr()
    assert main(["diff", str(a), str(short), "--ignore-ids"]) == 1
    assert "only in A: delete_demo_file (execute)" in capsys.readouterr().out


def test_stream_text_is_shown_as_text_in_the_view(tmp_path):
    a, b = SESSIONS / "demo.jsonl", SESSIONS / "demo_complete.jsonl"
    report = diff(side(a), side(b))
    view = side_view(report, report.a, "A", 1)
    assert "▶ ≠ 2. delete_demo_file" in view.plain
    assert "fragments (9)" in view.plain


async def test_the_side_by_side_view_moves_both_sides_to_the_same_call():
    report = diff(side(SESSIONS / "demo.jsonl"), side(SESSIONS / "demo_complete.jsonl"))
    app = DiffApp(report)
    async with app.run_test(size=(200, 50)) as pilot:
        assert app.position == 1  # the first difference in the arguments
        await pilot.press("p")
        assert app.position == 0
        a = str(app.query_one("#a").render())
        b = str(app.query_one("#b").render())
        assert "▶ ≠ 1. lookup_demo_value" in a and "▶ ≠ 1. lookup_demo_value" in b
        await pilot.press("f")
        assert app.position == 1
