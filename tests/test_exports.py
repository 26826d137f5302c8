"""Session exports keep the chunk timing and how the stream ended; a cut is saved as cut."""

from __future__ import annotations

import pathlib

import orjson
from callscope.core.replay import Chunking
from callscope.core.session import open_input
from callscope.core.timeline import Timeline
from callscope.tui import exports

ROOT = pathlib.Path(__file__).resolve().parent.parent


def demo() -> tuple[list, object]:
    session = open_input(str(ROOT / "sessions/demo.jsonl"))
    return [(c.t, c.data) for c in session.chunks()], session.end


def test_a_session_export_keeps_timing_and_the_recorded_end(tmp_path) -> None:
    chunks, end = demo()
    timeline = Timeline.build(chunks, None, None, Chunking("recorded"))
    files = exports.export("session", timeline, "demo.jsonl", tmp_path / "d.jsonl", None, end)
    assert [p.name for p in files] == ["d.jsonl", "d.sse"]
    again = open_input(str(files[0]))
    assert [(c.t, c.data) for c in again.chunks()] == chunks
    assert again.end.kind == "reset" and files[1].read_bytes() == b"".join(d for _, d in chunks)


def test_a_cut_is_saved_as_cut(tmp_path) -> None:
    chunks, end = demo()
    timeline = Timeline.build(chunks, None, None, Chunking("recorded"), cut=1000)
    (path, _) = exports.export("session", timeline, "demo.jsonl", tmp_path / "c.jsonl", None, end)
    again = open_input(str(path))
    assert again.end.kind == "cut" and sum(len(c.data) for c in again.chunks()) == 1000


def test_the_default_names_drop_the_inputs_suffix() -> None:
    chunks, _ = demo()
    timeline = Timeline.build(chunks, None, None, Chunking("recorded"))
    here = pathlib.Path("/out")
    for source in ("sessions/demo.jsonl", "demo.sse", "capture.har"):
        name = exports.default_path("session", timeline, source, here, None, 0).name
        assert name == pathlib.Path(source).name.rsplit(".", 1)[0] + ".jsonl", name
    assert exports.default_path("log", timeline.cut_at(10), "demo.jsonl", here, None, 0).name == (
        "demo.cut10.decisions.json")


def test_the_decision_log_says_the_ending_and_the_lenient_contrast(tmp_path) -> None:
    """The Markdown log printed `frame None` and dropped what a lenient harness would have done;
    the ending is one line in it, as in the debugger's headline and replay."""
    chunks, end = demo()
    timeline = Timeline.build(chunks, None, None, Chunking("recorded"))
    (js, md) = exports.export("log", timeline, "demo.jsonl", tmp_path / "d.decisions.json", None,
                              end)
    text = md.read_text()
    assert "- ending: transport reset by the peer at byte 8329" in text
    assert "response.function_call_arguments.delta at #20 was never dispatched" in text
    assert "⚑ would EXECUTE (salvaged)" in text and "dropped dry_run" in text
    assert "frame None" not in text and "None" not in text.split("## ")[0]
    assert orjson.loads(js.read_bytes())["turn"]["ending"]["transport"] == "reset"
