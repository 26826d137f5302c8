"""The benchmark command runs, and its peers really rebuild the streamed arguments.

No timing is asserted here: the bench command reports numbers, the tests only check that it
works on small streams (``--quick``), that every peer's result is checked against what was
sent, and that a measurement over its time cap is abandoned and reported, not waited for.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # the bench/ directory is not an installed package

from bench import peers  # noqa: E402
from bench.measure import measure  # noqa: E402
from bench.streams import Spec, build  # noqa: E402

CHUNKED = [peers.httpx_sse_naive, peers.naive_preview, peers.callscope_engine,
           peers.callscope_no_draft]


def _normal(values: list[object]) -> list[object]:
    return [orjson.loads(v) if isinstance(v, str) else v for v in values]


@pytest.mark.parametrize("protocol", ["openai-responses", "openai-chat", "anthropic",
                                      "gemini-interactions"])
def test_every_peer_rebuilds_the_arguments(protocol: str) -> None:
    stream = build(Spec(protocol, 1_500, calls=2))
    expected = [orjson.loads(a) for a in stream.arguments]
    assert len(expected) == 2 and expected[0] != expected[1]
    for peer in CHUNKED:
        assert _normal(peer(stream, peers.Budget(60))) == expected, peer.__name__


def test_sdk_peers_rebuild_the_arguments() -> None:
    for protocol, (_, peer) in peers.SDKS.items():
        pytest.importorskip("anthropic" if protocol == "anthropic" else "openai")
        stream = build(Spec(protocol, 1_500, calls=2))
        assert _normal(peer(stream, peers.Budget(60))) == [orjson.loads(a) for a in stream.arguments]


def test_a_measurement_over_its_cap_is_abandoned() -> None:
    stream = build(Spec("anthropic", 20_000))
    result = measure("preview", peers.naive_preview, stream, cap=0.0)
    assert result.over and result.seconds is None
    assert 0 <= result.done < len(stream.data)
    assert result.cell().startswith("over cap at ")


def test_a_wrong_result_is_reported() -> None:
    stream = build(Spec("openai-chat", 1_000))

    def broken(s: object, budget: peers.Budget) -> list[str]:
        return ['{"path": "elsewhere"}']

    expected = [orjson.loads(stream.arguments[0])]
    assert measure("broken", broken, stream, cap=10, expected=expected).correct is False


def test_the_quick_run_completes(tmp_path: Path) -> None:
    report = tmp_path / "report.md"
    done = subprocess.run([sys.executable, "bench/run.py", "--quick", "--markdown", str(report)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    text = report.read_text()
    assert text == done.stdout
    for needle in ("## Machine", "floor (split + orjson.loads)", "httpx-sse + naive +=",
                   "naive preview (jiter re-parse)", "callscope engine", "callscope, no draft status",
                   "`callscope check` against one replay", "peak memory", "### Targets",
                   "floor (`bench/tui_floor.py`"):
        assert needle in text, needle
    rows = [line for line in text.splitlines() if line.startswith("|  |") or line.startswith("| openai")]
    assert rows and not any("**NO**" in row for row in rows)
    assert sum(row.count("| yes |") for row in rows) >= 8  # peers checked against the sent arguments


def _on_the_floor(check: Callable[[Any, Any, Any, Any], Awaitable[None]]) -> None:
    """``check(app, pilot, frames pane, its whole region)`` on the floor app at 200x50."""
    import asyncio

    from textual.geometry import Region

    from bench.tui_floor import FloorApp, FloorPane

    async def run() -> None:
        app = FloorApp()
        async with app.run_test(size=(200, 50)) as pilot:
            await pilot.pause()
            pane = app.query_one("#frames", FloorPane)
            await check(app, pilot, pane, Region(0, 0, pane.region.width, pane.region.height))

    asyncio.run(run())


def test_the_tui_floor_hands_over_new_rows_or_the_same_ones() -> None:
    """The floor's two moves are what they claim: every row a new strip (a seek's least), or
    the very strips of the last paint (the compositor alone)."""
    from textual.geometry import Region

    from bench.tui_floor import STEP_PANES, FloorPane

    async def check(app: Any, pilot: Any, pane: Any, crop: Any) -> None:
        before = pane.render_lines(crop)
        assert all(s.cell_length == pane.region.width for s in before)
        app.move(1, fresh=False)
        same = pane.render_lines(crop)
        assert all(a is b for a, b in zip(before, same, strict=True))
        y = pane.scroll_y
        app.move(2, fresh=True)
        assert pane.scroll_y != y  # (a seek goes elsewhere: the bar moves)
        new = pane.render_lines(crop)
        assert not any(a is b for a, b in zip(same, new, strict=True))
        assert [s.text for s in new] != [s.text for s in same]
        # A step's shape: only STEP_PANES new, the frame list returns its strips again.
        buffers = app.query_one("#buffers", FloorPane)
        whole = Region(0, 0, buffers.region.width, buffers.region.height)
        others = buffers.render_lines(whole)
        app.move(3, fresh=False, only=STEP_PANES)
        assert all(a is b for a, b in zip(new, pane.render_lines(crop), strict=True))
        assert not any(a is b for a, b in zip(others, buffers.render_lines(whole), strict=True))
        await pilot.pause()
        assert "step 3" in str(app.query_one("#status").render())

    _on_the_floor(check)


def test_the_tui_floor_makes_its_styled_rows_at_the_paint() -> None:
    """The made-rows move makes every row then, from Content, each with a text not made before,
    as wide as the pane and styled in the same four pieces as the rows handed over ready."""
    from bench.tui_floor import _made_row, _row

    assert [s.text for s in _made_row(7, 60)] == [s.text for s in _row(7, 60)]
    assert [s.style for s in _made_row(7, 60)] == [s.style for s in _row(7, 60)]

    async def check(app: Any, pilot: Any, pane: Any, crop: Any) -> None:
        app.move(1, fresh=True, made=True)
        first = pane.render_lines(crop)
        app.move(2, fresh=True, made=True)
        second = pane.render_lines(crop)
        assert all(s.cell_length == pane.region.width for s in first + second)
        assert not {s.text for s in first} & {s.text for s in second}
        app.move(3, fresh=False, made=True)  # (the same rows: made is for new rows only)
        assert all(a is b for a, b in zip(second, pane.render_lines(crop), strict=True))
        await pilot.pause()

    _on_the_floor(check)
