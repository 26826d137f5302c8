"""The bodies of the headless commands (``replay``, ``check``, ``diff``, ``import``) and of
``open``, the debugger: each takes the parsed flags (:func:`.cli.build_parser`) and the output
stream, and returns the exit code (0; 1 when ``check`` or ``diff`` found something; 2 when an
input was broken).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, TextIO

from ..core.errors import CallscopeError
from ..core.inert import json_dumps, json_safe, plain
from ..core.replay import Chunking
from ..core.tools import ToolSet
from .cli_inputs import (
    DEMO_SESSION,
    LoadedInput,
    limits_from,
    load_keymap,
    load_tools,
    protocol_for,
    saved_keymap,
    sessions_dir,
    toolset_for,
)

Args = Any
"""The parsed flags (an ``argparse.Namespace``: only the command line parses arguments)."""


def cmd_replay(args: Args, out: TextIO) -> int:
    from ..core.ending import EndingWatch
    from ..core.engine import ChunkStep, Engine, FrameStep
    from ..core.records import chunk_record, step_record, turn_record
    from ..core.replay import replay, replay_outcome
    from .table import TableWriter

    chunking = Chunking.parse(args.chunking)
    override = load_tools(args.tools)
    broken = 0
    for path in args.inputs:
        try:
            loaded = LoadedInput(path)
            engine = Engine(protocol_for(loaded, args.protocol), toolset_for(loaded, override),
                            limits_from(args))
            table = None if args.json else TableWriter(out, path)
            watch = EndingWatch()
            if args.summary:  # the outcome only: no step is made
                replay_outcome(loaded.chunks(), engine, watch, chunking=chunking,
                               cut_at=args.cut_at)
            for step in () if args.summary else replay(
                    loaded.chunks(), chunking=chunking, cut_at=args.cut_at, engine=engine):
                if isinstance(step, ChunkStep):
                    watch.chunk(step.end, step.t)
                elif isinstance(step, FrameStep):
                    watch.frame(step.frame)
                if args.json:
                    record = (chunk_record(step) if args.chunks else None) if isinstance(
                        step, ChunkStep) else step_record(step, engine.pipeline)
                    if record is not None:
                        _write_json(out, record, path)
                else:
                    assert table is not None
                    table.step(step, engine.pipeline)
        except CallscopeError as exc:  # one broken input: said, and the others still read
            out.flush()
            print(f"callscope: {plain(str(exc))}", file=sys.stderr)
            broken += 1
            continue
        turn = turn_record(engine.pipeline, _ending(loaded, args.cut_at, watch, engine.state))
        if args.json:
            _write_json(out, turn, path)
        else:
            assert table is not None
            table.turn(turn)
    return 2 if broken else 0


def _ending(loaded: LoadedInput, cut_at: int | None, watch: Any, state: Any) -> Any:
    """The input's ending: the recorded transport end, or the cut asked for."""
    from ..core.ending import transport_of

    end = loaded.session.end
    cut = f"--cut-at {cut_at}" if cut_at is not None and (
        cut_at < watch.received or end.kind == "clean") else None
    return watch.ending(state, *transport_of(end, cut))


def _write_json(out: TextIO, record: dict[str, Any], source: str) -> None:
    record = {"kind": record["kind"], "source": source, **record}
    out.write(json_safe(json_dumps(record).decode("utf-8", "surrogatepass")))
    out.write("\n")


def cmd_check(args: Args, out: TextIO) -> int:
    from ..core.check import check_input

    override = load_tools(args.tools)
    if args.harness is not None:  # the user's harness under test (tui/harness_check.py)
        from .harness_check import cmd_check_harness

        args.tool_definitions = override
        return cmd_check_harness(args, out, limits_from(args))
    failed = broken = 0
    for path in args.inputs:
        try:
            loaded = LoadedInput(path)
            report = check_input(path, loaded.held(args.max_session_bytes),
                                 protocol=protocol_for(loaded, args.protocol),
                                 tools=toolset_for(loaded, override),
                                 seeds=range(1, args.seeds + 1), limits=limits_from(args))
        except CallscopeError as exc:  # one broken input: said, and the others still checked
            out.flush()
            print(f"callscope: {plain(str(exc))}", file=sys.stderr)
            broken += 1
            continue
        tools = toolset_for(loaded, override)
        note = "" if tools.tools else (
            "; no tool definitions (pass --tools FILE): every call is refused as unknown_tool, so "
            "this proves no call runs early, not that the gate lets a whole call run")
        out.write(plain(report.verdict()) + note + "\n")  # (a file name is untrusted text)
        failed += not report.ok
    return 2 if broken else 1 if failed else 0


def cmd_diff(args: Args, out: TextIO) -> int:
    """Exit 1 when the calls differ (endings alone are said, exit 0); ``--open`` shows them."""
    from ..core.diff import diff, read_side

    override, limits = load_tools(args.tools), limits_from(args)
    sides = []
    for path in (args.a, args.b):
        loaded = LoadedInput(path)
        sides.append(read_side(path, loaded.held(args.max_session_bytes),
                               protocol=protocol_for(loaded, args.protocol),
                               tools=toolset_for(loaded, override), end=loaded.session.end,
                               limits=limits))
    report = diff(*sides, ignore_ids=args.ignore_ids)
    if args.open:
        from .diff_view import DiffApp

        DiffApp(report).run()
    else:
        for line in report.lines():
            out.write(line + "\n")
    return 1 if report.calls_differ else 0


def cmd_import(args: Args, out: TextIO) -> int:
    from ..core.session import save_session

    loaded = LoadedInput(args.input)
    header = loaded.session.header
    if args.provenance:
        header = _with(header, provenance=args.provenance)
    if args.protocol:
        header = _with(header, protocol=args.protocol)
    if args.tools:  # (load_tools checks them: a session never carries what replay refuses)
        header = _with(header, tools=load_tools(args.tools) or [])
    else:  # the input's own definitions, checked as replay will check them
        toolset_for(loaded, None)
    save_session(args.output, header, loaded.session.chunks(), loaded.session.end)
    loaded.note()
    out.write(f"wrote {plain(args.output)}\n")
    return 0


def _with(header: Any, **changes: Any) -> Any:
    import msgspec.structs

    return msgspec.structs.replace(header, **changes)


def cmd_open(args: Args, out: TextIO) -> int:
    from .app import CallscopeApp

    note = None
    path = args.input
    if path is None:
        path = str(sessions_dir() / DEMO_SESSION)
        note = ("Bundled demo session. Open your own: callscope FILE (.jsonl session, .sse capture "
                "or .har); more demos in " + str(sessions_dir()))
    keymap = load_keymap(args.keymap)
    if keymap is not None:  # given: kept for the next run
        from . import settings

        settings.save(keymap=keymap)
    else:
        keymap = saved_keymap()
    limits = limits_from(args)
    if Path(path).is_dir():  # a folder: its sessions listed, any of them opened
        from .folder import FolderApp

        override = load_tools(args.tools)
        FolderApp(path, protocol=args.protocol, keymap=keymap, limits=limits,
                  tools=ToolSet(override) if override is not None else None).run()
        return 0
    loaded = LoadedInput(path)
    CallscopeApp(loaded.held(args.max_session_bytes), source=path,
                 protocol=protocol_for(loaded, args.protocol),
                 tools=toolset_for(loaded, load_tools(args.tools)), note=note, keymap=keymap,
                 end=loaded.session.end, header=loaded.session.header, limits=limits).run()
    return 0
