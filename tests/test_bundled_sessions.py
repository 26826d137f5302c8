"""The bundled sessions: every file loads and replays, each scenario gets the gate decision it
was built to show, the imported recordings are byte-exact, and the build is deterministic."""

from __future__ import annotations

import importlib.util
import socket
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from callscope.core.demo_tools import DEMO_TOOL_DEFINITIONS, DEMO_VALUES
from callscope.core.engine import Engine
from callscope.core.framing import framing_of
from callscope.core.harness import Decision
from callscope.core.replay import Chunking, replay
from callscope.core.session import REDACTED, Session, open_input
from callscope.core.synth import PROTOCOLS
from callscope.core.tools import ToolSet, tools_from_request

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = ROOT / "sessions"
FIXTURES = ROOT / "tests" / "fixtures"
ALL = sorted(SESSIONS.rglob("*.jsonl"))
CONSTRUCTED = [p for p in ALL if "fixtures" not in p.parts]
IMPORTED = [p for p in ALL if "fixtures" in p.parts]

LOOKUP, ADD, DELETE = "lookup_demo_value", "add_demo_numbers", "delete_demo_file"
TRUNC = ("refuse", "truncated")
# scenario -> the decisions, in call order: (tool, action, reason); per-protocol overrides.
EXPECTED: dict[str, dict[str, list[tuple[str, str, str | None]]]] = {
    "single_call": {"*": [(LOOKUP, "execute", None)]},
    "parallel_calls": {"*": [(LOOKUP, "execute", None), (ADD, "execute", None),
                             (DELETE, "execute", None)]},
    "text_then_call": {"*": [(LOOKUP, "execute", None)]},
    # gemini-generate and ollama-chat send calls whole: an unfinished call never arrives.
    "truncated_mid_arguments": {"*": [(LOOKUP, *TRUNC), (DELETE, *TRUNC)],
                                "gemini-generate": [(LOOKUP, *TRUNC)],
                                "ollama-chat": [(LOOKUP, *TRUNC)]},
    "max_tokens": {"*": [(LOOKUP, *TRUNC), (DELETE, *TRUNC)],
                   "gemini-generate": [(LOOKUP, *TRUNC)], "ollama-chat": [(LOOKUP, *TRUNC)]},
    # An error reported by the provider names the refusal, with or without a terminal after it.
    "provider_error": {"*": [(LOOKUP, "refuse", "provider_error"), (ADD, "refuse", "provider_error")],
                       "gemini-generate": [(LOOKUP, "refuse", "provider_error")],
                       "ollama-chat": [(LOOKUP, "refuse", "provider_error")]},
    "invalid_json": {"*": [(LOOKUP, "refuse", "invalid_json")], "gemini-generate": [],
                     "ollama-chat": []},
    "no_arguments": {"*": [("list_demo_keys", "execute", None)]},
    "multibyte": {"*": [(LOOKUP, "execute", None)]},
    "schema_violation": {"*": [(ADD, "refuse", "schema")]},
    "unknown_tool": {"*": [("send_demo_email", "refuse", "unknown_tool")]},
}
SECRET_HEADERS = {"authorization", "x-api-key", "x-goog-api-key"}


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing here may open a connection."""
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a bundled-session test tried to reach the network")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def load(path: Path) -> tuple[Session, Engine, list[Decision]]:
    session = open_input(str(path))
    header = session.header
    definitions = header.tools or tools_from_request((header.request or {}).get("body"))
    engine = Engine(header.protocol, ToolSet(definitions))
    list(replay(((c.t, c.data) for c in session.chunks()), engine=engine))
    return session, engine, list(engine.pipeline.decisions.values())


def summary(engine: Engine, decisions: list[Decision]) -> list[tuple[str, str, str | None]]:
    return [(engine.state.calls[d.call].name or "", d.action, d.reason) for d in decisions]


def test_the_bundle_is_complete() -> None:
    names = {p.relative_to(SESSIONS).as_posix() for p in CONSTRUCTED}
    want = {f"{p}/{s}.jsonl" for p in PROTOCOLS for s in EXPECTED} | {"demo.jsonl",
                                                                     "demo_complete.jsonl"}
    assert names == want
    captures = {f"{p.parent.name}/{p.stem}" for p in FIXTURES.glob("*/*.sse")}
    assert {f"{p.parent.name}/{p.stem}" for p in IMPORTED} == captures
    assert (SESSIONS / "README.md").is_file()


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.relative_to(SESSIONS).as_posix())
def test_every_session_loads_and_replays(path: Path) -> None:
    session, engine, _ = load(path)
    chunks = list(session.chunks())
    assert chunks and engine.state.protocol == session.header.protocol
    # the same decisions under another chunking: the files hold streams, not frame lists
    other = Engine(session.header.protocol, engine.pipeline.tools)
    list(replay(((c.t, c.data) for c in chunks), chunking=Chunking.parse("random:5"), engine=other))
    assert [(d.call, d.action, d.reason) for d in other.pipeline.decisions.values()] == \
           [(d.call, d.action, d.reason) for d in engine.pipeline.decisions.values()]


@pytest.mark.parametrize("path", CONSTRUCTED, ids=lambda p: p.relative_to(SESSIONS).as_posix())
def test_constructed_headers(path: Path) -> None:
    header = open_input(str(path)).header
    assert header.source == "constructed"
    assert header.provenance and "scripts/build_sessions.py" in header.provenance
    assert "seed" in header.provenance
    request = header.request or {}
    body = request["body"]
    sent = body["toolConfig"]["tools"] if header.protocol == "bedrock-converse" else body["tools"]
    assert sent == header.tools  # the provider-format tools, where the provider takes them
    names = {t.name for t in ToolSet(header.tools or []).tools.values()}
    assert {d["name"] for d in DEMO_TOOL_DEFINITIONS} <= names
    secrets = {k: v for k, v in request["headers"].items() if k.lower() in SECRET_HEADERS}
    if header.protocol == "ollama-chat":  # (a local server: no key is sent)
        assert not secrets and request["url"].startswith("http://127.0.0.1:11434/")
    else:
        assert secrets and set(secrets.values()) == {REDACTED}
    host = {"bedrock-converse": "bedrock-runtime.", "bedrock-invoke": "bedrock-runtime.",
            "ollama-chat": "127.0.0.1:11434"}.get(header.protocol or "")
    assert host is None or host in request["url"]  # (they had Gemini's URL and key)
    if path.parent != SESSIONS:
        assert header.protocol == path.parent.name


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_scenario_decisions(protocol: str, scenario: str) -> None:
    session, engine, decisions = load(SESSIONS / protocol / f"{scenario}.jsonl")
    table = EXPECTED[scenario]
    assert summary(engine, decisions) == table.get(protocol, table["*"])
    assert session.end.kind == ("reset" if scenario == "truncated_mid_arguments" else "clean")


def test_demo_refuses_both_and_shows_the_lenient_contrast() -> None:
    session, engine, decisions = load(SESSIONS / "demo.jsonl")
    assert session.header.protocol == "openai-responses" and session.end.kind == "reset"
    assert summary(engine, decisions) == [(LOOKUP, *TRUNC), (DELETE, *TRUNC)]
    assert engine.state.terminal is None
    lookup, delete = decisions
    assert lookup.contrast and delete.contrast
    assert delete.lenient is not None and delete.lenient.how == "salvaged"
    assert delete.lenient.arguments == {"path": "notes/todo.txt"}  # dry_run silently dropped
    assert delete.lenient.dropped == ("dry_run",)
    assert engine.state.calls[delete.call].text == '{"path":"notes/todo.txt","dry_run":tr'


def test_demo_complete_executes_both_with_the_demo_tools() -> None:
    session, engine, decisions = load(SESSIONS / "demo_complete.jsonl")
    assert session.end.kind == "clean"
    assert summary(engine, decisions) == [(LOOKUP, "execute", None), (DELETE, "execute", None)]
    lookup, delete = decisions
    assert lookup.ran == delete.ran == "demo"
    assert lookup.result == {"key": "Objective", "value": DEMO_VALUES["Objective"], "found": True}
    assert delete.arguments == {"path": "notes/todo.txt", "dry_run": True}
    assert delete.result == {"path": "notes/todo.txt", "existed": True, "deleted": False,
                             "dry_run": True}


def test_demo_and_demo_complete_carry_the_same_stream_up_to_the_cut() -> None:
    cut = b"".join(c.data for c in open_input(str(SESSIONS / "demo.jsonl")).chunks())
    whole = b"".join(c.data for c in open_input(str(SESSIONS / "demo_complete.jsonl")).chunks())
    assert whole.startswith(cut) and len(cut) < len(whole)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_multibyte_reads_split_inside_characters(protocol: str) -> None:
    session, engine, _ = load(SESSIONS / protocol / "multibyte.jsonl")
    chunks = [c.data for c in session.chunks()]

    def utf8(data: bytes) -> bool:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True

    assert sum(not utf8(c) for c in chunks) >= 4  # stored as b64 lines
    if framing_of(protocol) != "aws-eventstream":  # (binary: lengths and CRCs are not text)
        assert utf8(b"".join(chunks))
    assert "🎯" in "".join(engine.state.text["text"])
    (call,) = engine.state.calls.values()
    assert "締め切り 🎯" in call.text


def test_times_increase_and_arrive_after_a_first_byte_delay() -> None:
    for path in CONSTRUCTED:
        session = open_input(str(path))
        times = [c.t for c in session.chunks()]
        assert times == sorted(times) and times[0] > 0.2
        assert session.end.at is not None and session.end.at >= times[-1]


def source_lines() -> dict[str, str]:
    lines = {}
    for line in (FIXTURES / "SOURCES.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("- `"):
            lines[line[3:line.index("`", 3)]] = line[2:]
    return lines


@pytest.mark.parametrize("path", IMPORTED, ids=lambda p: p.relative_to(SESSIONS).as_posix())
def test_imported_recordings_are_byte_exact(path: Path) -> None:
    capture = FIXTURES / path.parent.name / f"{path.stem}.sse"
    session, engine, decisions = load(path)
    assert b"".join(c.data for c in session.chunks()) == capture.read_bytes()
    assert session.header.provenance == source_lines()[f"{path.parent.name}/{capture.name}"]
    raw = Engine(session.header.protocol)
    list(replay([(0.0, capture.read_bytes())], engine=raw))
    assert [(d.call, d.action, d.reason) for d in raw.pipeline.decisions.values()] == \
           [(d.call, d.action, d.reason) for d in decisions]


def build_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_sessions", ROOT / "scripts" / "build_sessions.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_build_is_deterministic(tmp_path: Path) -> None:
    assert build_script().main(["--out", str(tmp_path)]) == 0
    for name in ("demo.jsonl", "demo_complete.jsonl", "anthropic/multibyte.jsonl",
                 "openai-chat/truncated_mid_arguments.jsonl", "gemini-generate/parallel_calls.jsonl",
                 "fixtures/openai-chat/parallel_tool_calls_two_functions.jsonl", "README.md"):
        assert (tmp_path / name).read_bytes() == (SESSIONS / name).read_bytes(), name
    built = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert built == sorted(p.relative_to(SESSIONS) for p in SESSIONS.rglob("*") if p.is_file())


def test_another_seed_builds_other_bytes_with_the_same_decisions(tmp_path: Path) -> None:
    script = build_script()
    script.build(tmp_path, seed=7)
    for name in ("demo.jsonl", "anthropic/provider_error.jsonl"):
        assert (tmp_path / name).read_bytes() != (SESSIONS / name).read_bytes()
        _, engine_a, a = load(tmp_path / name)
        _, engine_b, b = load(SESSIONS / name)
        assert summary(engine_a, a) == summary(engine_b, b)
