"""Write the README's SVG screenshots into screenshots/, from the real app on real inputs.

    python scripts/screenshots.py [--size 150x42] [--out screenshots]

Each scene opens the app headless (``run_test``), moves the cursor the way a user would, clears
notifications, and saves an SVG. Nothing depends on the clock, so re-running gives the same files.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
SESSIONS = ROOT / "sessions"

Action = Callable[["CallscopeApp", "Pilot"], Awaitable[None]]  # type: ignore[name-defined]  # noqa: F821


@dataclass
class Scene:
    name: str
    source: Path
    action: Action
    title: str
    permissive: bool = False
    """Make every call name a known tool (recordings carry no tool definitions)."""
    size: tuple[int, int] | None = None
    """The terminal's size for this scene (else ``--size``)."""


def open_app(scene: Scene):  # type: ignore[no-untyped-def]
    from callscope.core.tools import ToolSet
    from callscope.tui.app import CallscopeApp
    from callscope.tui.cli import LoadedInput, protocol_for, toolset_for

    loaded = LoadedInput(str(scene.source))
    chunks = list(loaded.chunks())
    tools = toolset_for(loaded, None)
    if scene.permissive:
        probe = CallscopeApp(chunks, source=scene.source.name)
        names = sorted({c.name for c in probe.timeline.state.calls.values() if c.name})
        tools = ToolSet([{"name": n, "parameters": {"type": "object"}} for n in names])
    source = scene.source.relative_to(ROOT) if scene.source.is_relative_to(ROOT) else scene.source.name
    return CallscopeApp(chunks, source=str(source), protocol=protocol_for(loaded, None),
                        tools=tools, end=loaded.session.end, header=loaded.session.header)


def to_end():  # type: ignore[no-untyped-def]
    async def go(app, pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("end")

    return go


def to_frame(index: int, *keys: str):  # type: ignore[no-untyped-def]
    async def go(app, pilot) -> None:  # type: ignore[no-untyped-def]
        app.cursor = app.timeline.step_for_frame(index)
        await pilot.pause()
        if keys:
            await pilot.press(*keys)

    return go


def keys(*pressed: str, filter_text: str | None = None):  # type: ignore[no-untyped-def]
    """Type ``filter_text`` at the / prompt first (if given), then press ``pressed``."""
    async def go(app, pilot) -> None:  # type: ignore[no-untyped-def]
        from textual.widgets import Input

        if filter_text is not None:
            await pilot.press("slash")
            app.screen.query_one(Input).value = filter_text
            await pilot.press("enter")
        for key in pressed:
            await pilot.press(key)
        await app.workers.wait_for_complete()

    return go


def hostile_source(out: Path) -> Path:
    """A small stream whose text tries markup, ANSI colours, an OSC 8 link and a bidi override."""
    import orjson

    evil = "[bold red]x[/] \x1b[31mred \x1b]8;;http://x\x07link \u202ertl"

    def chunk(delta: dict[str, object]) -> bytes:
        body = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}
        return b"data: " + orjson.dumps(body) + b"\n\n"

    data = (b": " + evil.encode() + b"\n\n"
            + chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                     "function": {"name": "t" + evil, "arguments": ""}}]})
            + chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"a": "' + evil}}]}))
    path = out / "hostile.sse"
    path.write_bytes(data)
    return path


def scenes(tmp: Path) -> list[Scene]:
    parallel = FIXTURES / "openai-chat" / "parallel_tool_calls_two_functions.sse"
    return [
        Scene("demo-truncated-turn", SESSIONS / "demo.jsonl", to_end(),
              "The bundled demo: the connection drops inside delete_demo_file; nothing executes"),
        Scene("demo-mid-call", SESSIONS / "demo.jsonl", to_frame(14),
              "Mid-stream: the gate waits, the draft is only a draft"),
        Scene("parallel-calls", parallel, to_frame(17), "Two parallel calls, one lane each",
              permissive=True),
        Scene("turn-end-executes", parallel, to_end(), "The terminal signal arrived: both execute",
              permissive=True),
        Scene("cut-here", parallel, to_frame(8, "x"),
              "Cut here (x): the lenient harness would have run a salvaged call", permissive=True),
        Scene("chunk-boundaries", SESSIONS / "demo.jsonl", to_frame(18),
              "Network chunk boundaries inside frames (┊)"),
        Scene("anthropic-max-tokens", FIXTURES / "anthropic" / "max_tokens_mid_tool_input.sse",
              to_end(), "Anthropic: max_tokens inside tool input, no message_stop", permissive=True),
        Scene("gemini-partial-args",
              FIXTURES / "gemini-generatecontent"
              / "vertex_streamFunctionCallArguments_partialArgs.reconstructed.sse", to_end(),
              "Gemini (Vertex) partialArgs assembled by JSON path", permissive=True),
        Scene("frame-detail", parallel, to_frame(2, "enter"), "Frame detail (enter)"),
        Scene("hostile-text", hostile_source(tmp), to_end(),
              "Untrusted text is shown literally: markup, ANSI, OSC 8 and bidi made inert"),
        Scene("help", parallel, to_frame(0, "f1"), "Keys (f1)"),
        Scene("narrow-80x24", SESSIONS / "demo.jsonl", to_frame(3),
              "At 80x24: the list and its frame's detail, the buffers over the decisions",
              size=(80, 24)),
        Scene("narrow-ending-zoomed", SESSIONS / "demo.jsonl",
              keys("end", "tab", "tab", "tab", "z"),
              "At 80x24, the decisions zoomed (z): the headline says how the stream ended",
              size=(80, 24)),
        Scene("expert-info", SESSIONS / "demo.jsonl", keys("home", "e"),
              "Expert info (e): the ending, timing, every decision and anomaly"),
        Scene("request-view", SESSIONS / "demo.jsonl", keys("i"),
              "The request beside the response (i), headers redacted"),
        Scene("display-filter", SESSIONS / "demo.jsonl",
              keys("v", "home", "f", filter_text="event ~ delta and call = 2"),
              "A display filter (/ then v): only matching frames, the counter says 2/9"),
    ]


async def shoot(scene: Scene, out: Path, size: tuple[int, int]) -> Path:
    app = open_app(scene)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await scene.action(app, pilot)
        await pilot.pause()
        app.clear_notifications()
        await pilot.pause()
        path = app.save_screenshot(filename=f"{scene.name}.svg", path=str(out))
    return Path(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="150x42", help="terminal size, COLSxROWS")
    parser.add_argument("--out", default=str(ROOT / "screenshots"))
    parser.add_argument("--only", nargs="*", help="scene names")
    args = parser.parse_args(argv)
    cols, rows = (int(v) for v in args.size.split("x"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        for scene in scenes(Path(tmp)):
            if args.only and scene.name not in args.only:
                continue
            path = asyncio.run(shoot(scene, out, scene.size or (cols, rows)))
            print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {scene.title}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
