"""The limit flags (``--max-calls``, ``--max-session-bytes``, ...) reach every engine the command
runs, not only ``replay`` and ``check``'s: the debugger's (its cuts and re-chunkings too), a
folder's rows and the sessions opened from it, and both sides of ``diff``. And the keymap an
earlier ``--keymap`` saved applies to ``live`` and ``proxy`` as to ``callscope FILE``. Before,
``open`` and ``diff`` took these flags and built every engine with the default limits, and the
two network debuggers always had the default keys."""

from __future__ import annotations

import io
import pathlib
import shutil
from typing import Any

import pytest
from callscope.core.gate.codes import Code
from callscope.core.limits import DEFAULT_LIMITS, Limits
from callscope.core.replay import Chunking
from callscope.tui import cli, settings
from callscope.tui.app import CallscopeApp
from callscope.tui.folder import FolderApp, summarize

ROOT = pathlib.Path(__file__).resolve().parent.parent
COMPLETE = str(ROOT / "sessions/demo_complete.jsonl")  # two calls, both executed by default


def _opened(monkeypatch: pytest.MonkeyPatch, cls: type[Any], argv: list[str]) -> Any:
    """The app ``callscope ARGV`` would run, built by the command line and not run."""
    apps: list[Any] = []
    monkeypatch.setattr(cls, "run", lambda self, *a, **k: apps.append(self))
    assert cli.main(argv) == 0
    (app,) = apps
    return app


def _actions(timeline: Any) -> list[str]:
    return [d.action for d in timeline.pipeline.decisions.values()]


def test_the_debugger_runs_its_engine_with_the_limits_given(monkeypatch):
    default = _opened(monkeypatch, CallscopeApp, [COMPLETE])
    assert default.timeline.limits == DEFAULT_LIMITS
    assert _actions(default.timeline) == ["execute", "execute"]

    app = _opened(monkeypatch, CallscopeApp, [COMPLETE, "--max-calls", "1"])
    timeline = app.timeline
    assert timeline.limits.max_calls == 1
    assert _actions(timeline) == ["refuse"]  # the turn halts at its second call
    assert Code.LIMIT_EXCEEDED in {a.code for a in timeline.pipeline.state.anomalies}
    # a cut and a re-chunk are the same recording under the same limits
    for rebuilt in (timeline.cut_at(timeline.total_bytes - 1), timeline.rechunked(
            Chunking("bytes:1"))):
        assert rebuilt.limits == timeline.limits
        assert _actions(rebuilt) == ["refuse"]


def test_a_folder_reads_and_opens_its_sessions_with_the_limits_given(monkeypatch, tmp_path):
    shutil.copy(COMPLETE, tmp_path / "complete.jsonl")
    app = _opened(monkeypatch, FolderApp, [str(tmp_path), "--max-calls", "1"])
    assert app.limits.max_calls == 1
    row = summarize(str(tmp_path / "complete.jsonl"), None, app.limits)
    assert (row.executed, row.refused) == (0, 1)
    small = Limits(max_session_bytes=100)
    refused = summarize(str(tmp_path / "complete.jsonl"), None, small)
    assert refused.error is not None and "larger than 100 bytes" in refused.error


async def test_a_folder_refuses_to_open_a_session_over_max_session_bytes(tmp_path):
    shutil.copy(COMPLETE, tmp_path / "complete.jsonl")
    app = FolderApp(str(tmp_path), limits=Limits(max_session_bytes=100))
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        app.open_session(str(tmp_path / "complete.jsonl"))
        await pilot.pause()
        assert app.opened is None
        assert any("larger than 100 bytes" in str(n.message) for n in app._notifications)


def test_diff_reads_both_sides_with_the_limits_given():
    out = io.StringIO()
    cli.HANDLERS["diff"](cli.build_parser(False, only="diff").parse_args(
        ["diff", COMPLETE, COMPLETE, "--max-calls", "1"]), out)
    assert "(openai-responses, 1 calls)" in out.getvalue()
    out = io.StringIO()
    cli.HANDLERS["diff"](cli.build_parser(False, only="diff").parse_args(
        ["diff", COMPLETE, COMPLETE]), out)
    assert "(openai-responses, 2 calls)" in out.getvalue()


def test_live_and_proxy_take_the_saved_keymap(monkeypatch, tmp_path):
    assert settings.save(keymap={"callscope.cut": "ctrl+x"})
    from callscope.tui.captures import ProxyApp
    from callscope.tui.live import LiveApp

    made: list[Any] = []

    def stop(self: Any, *args: Any, **kwargs: Any) -> None:
        made.append(self)
        self.error = "stopped by the test"

    monkeypatch.setattr(ProxyApp, "run", stop)
    monkeypatch.setattr(ProxyApp, "wait_relay", lambda self: None)
    assert cli.main(["proxy", "--upstream", "http://127.0.0.1:9", "--dir", str(tmp_path)]) == 2
    monkeypatch.setattr(LiveApp, "run", stop)
    monkeypatch.setattr(LiveApp, "wait", lambda self: None)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert cli.main(["live", "--provider", "openai", "--model", "m", "--base-url",
                     "http://127.0.0.1:9", "-o", str(tmp_path / "s.jsonl"), "hi"]) == 2
    assert [type(app) for app in made] == [ProxyApp, LiveApp]
    assert all(app.keymap == {"callscope.cut": "ctrl+x"} for app in made)
