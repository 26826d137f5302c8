"""Hostile input, the short run: every fuzz target of scripts/fuzz.py for a few hundred inputs.

The properties live in scripts/fuzz_oracle.py (nothing but CallscopeError escapes; no call runs
without the terminal signal, a strict parse to exactly the executed arguments and a passing
schema; chunking changes nothing; frames keep every byte; loading only reads; errors are one
line naming the file; saving is atomic). The suite runs derandomized, so it is reproducible; the
long run (``scripts/fuzz.py --minutes 10``) draws fresh inputs each time.

Every bug the fuzzers found is pinned by a test at the end of this file: a strict xfail while it
is open, a regression test once fixed. ``KNOWN_BUGS`` in scripts/fuzz_oracle.py lists the open
ones, whose hits the property tests count instead of failing on them.
"""

from __future__ import annotations

import json
import pathlib
import socket
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import HealthCheck, given, settings
from referencing.exceptions import Unresolvable

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import fuzz_oracle as oracle  # noqa: E402
import fuzz_strategies as strategies  # noqa: E402
import hostile_inputs as hostile  # noqa: E402
from callscope.core import calls, harness  # noqa: E402
from callscope.core.demo_tools import DEMO_TOOL_DEFINITIONS  # noqa: E402
from callscope.core.engine import CallStep, DecisionStep, Engine  # noqa: E402
from callscope.core.events import Anomaly  # noqa: E402
from callscope.core.gate import rules  # noqa: E402
from callscope.core.tools import ToolSet  # noqa: E402
from callscope.tui.cli import main as cli_main  # noqa: E402

strategies.set_scale("suite")


def run_target(name: str, examples: int) -> Counter[str]:
    """Run one target for ``examples`` inputs; the counts it added (its ``:engine`` part too)."""
    strategy, check = strategies.TARGETS[name]
    before = {k: Counter(v) for k, v in oracle.STATS.items()}

    @settings(max_examples=examples, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy())
    def prop(case: object) -> None:
        check(case)

    prop()
    added: Counter[str] = Counter()
    for key in (name, f"{name}:engine"):
        added.update(oracle.STATS[key] - before.get(key, Counter()))
    return added


# -- the properties, on every kind of hostile input ---------------------------------------------

def test_random_bytes():
    stats = run_target("bytes", 150)
    assert stats["inputs"] == 150 and stats["frames"] > 0


def test_sse_built_from_the_protocols_vocabulary():
    stats = run_target("grammar", 40)
    assert stats["frames"] > 40 and stats["anomalies"] > 0


def test_byte_mutations_of_every_recording_and_bundled_session():
    stats = run_target("mutate", 200)
    assert stats["executed"] > 0 and stats["refused"] > 0 and stats["terminal"] > 0


def test_json_payloads_mutated_inside_valid_frames():
    stats = run_target("payload", 120)
    assert stats["executed"] > 0 and stats["refused"] > 0


def test_frames_shuffled_dropped_and_duplicated():
    # Reordered frames nearly always leave an anomaly on a call (or an unreadable frame), and
    # the gate denies a disputed call: of these 100 cases none executes (9 of 300 did), so the
    # execute branch is the other targets' to reach; here every call must have been decided.
    stats = run_target("frames", 100)
    assert stats["refused"] > 0 and stats["executed"] + stats["refused"] == stats["calls"]


def test_mutated_session_files_load_cleanly_or_fail_with_one_line():
    stats = run_target("session", 120)
    assert stats["rejected"] > 0 and stats["loaded"] > 0
    assert stats["rejected_with_line"] > 0 and stats["cli_table"] + stats["cli_json"] > 0


def test_faults_while_saving_never_leave_a_half_written_file():
    stats = run_target("save", 100)
    assert stats["faults"] > 0 and stats["saved"] > 0


def test_every_seed_is_in_the_corpus():
    names = [s.name for s in strategies.corpus()]
    fixtures = sorted((ROOT / "tests" / "fixtures").rglob("*.sse"))
    assert sum(n.startswith("fixture:") for n in names) == len(fixtures)
    assert sum(n.startswith("session:") for n in names) == len(list((ROOT / "sessions").rglob("*.jsonl")))


def test_broken_files_through_the_real_command(tmp_path):
    """``callscope replay FILE`` as a process: exit 2, one stderr line naming the file, no
    traceback. A sample of kinds (scripts/hostile_report.py runs all of them); the in-process
    `session` target covers the rest cheaply."""
    sample = {"empty", "binary", "not UTF-8", "bad JSON line", "nesting 100k",
              "invalid tool schema", "unknown protocol", "HAR not JSON"}
    files = [f for f in hostile.broken_files(str(tmp_path)) if f[0] in sample]
    assert len(files) == len(sample)
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda f: oracle.run_cli(f[1]), files))
    for (name, path), done in zip(files, results, strict=True):
        assert done.returncode == 2, (name, done.stderr)
        oracle.check_cli_result(done.returncode, done.stdout, done.stderr, "table", path)


# -- the oracle itself can fail (a gate with a hole is caught) ------------------------------------

def bad_arguments_turn(arguments: str, name: str = "lookup_demo_value") -> bytes:
    return hostile.anthropic_call(name, arguments)


def test_the_oracle_catches_execution_without_the_terminal_signal(monkeypatch):
    data = hostile.anthropic_call("f", "{}")[:-40]  # cut inside the last frame: no message_stop
    oracle.check_stream("self-test", data, (), "anthropic", "permissive")
    monkeypatch.setattr(calls.TurnState, "complete", property(lambda self: True))
    with pytest.raises(oracle.Violation, match="before the terminal signal"):
        oracle.check_stream("self-test", data, (), "anthropic", "permissive")


def test_the_oracle_catches_execution_past_the_schema(monkeypatch):
    data = bad_arguments_turn('{"key": 7}')
    oracle.check_stream("self-test", data, (), "anthropic", "demo")
    monkeypatch.setattr(rules, "RULES", tuple(r for r in rules.RULES if r.id != "schema"))
    with pytest.raises(oracle.Violation, match="schema rejects"):
        oracle.check_stream("self-test", data, (), "anthropic", "demo")


def test_the_oracle_catches_execution_of_text_that_fails_the_strict_parse(monkeypatch):
    data = bad_arguments_turn('{"key": "Objective"')
    oracle.check_stream("self-test", data, (), "anthropic", "demo")
    monkeypatch.setattr(harness, "parse_arguments",
                        lambda call, empty: ({"key": "Objective"}, "repaired"))
    with pytest.raises(oracle.Violation, match="fails the strict parse"):
        oracle.check_stream("self-test", data, (), "anthropic", "demo")


def test_the_oracle_blocks_and_catches_an_engine_that_reaches_the_network(monkeypatch):
    data = hostile.anthropic_call("f", "{}")
    real = oracle.feed_all

    def phoning_home(*args: object) -> object:
        socket.getaddrinfo("example.invalid", 443)  # blocked by the guard, before any lookup
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(oracle, "feed_all", phoning_home)
    with pytest.raises(PermissionError, match="blocked by the fuzz guard"):
        oracle.check_stream("self-test", data, (), "anthropic", "none")


def test_the_oracle_catches_a_loader_that_runs_code(tmp_path, monkeypatch):
    path = tmp_path / "s.jsonl"
    path.write_text('{"callscope":"session","version":1}\n{"end":"clean"}\n')
    oracle.load(str(path))
    real = oracle.open_input
    monkeypatch.setattr(oracle, "open_input", lambda p: (exec("pass"), real(p))[1])
    with pytest.raises(oracle.Violation, match="did more than it should"):
        oracle.load(str(path))


# -- bugs found by fuzzing: regression tests, and strict xfails for the open ones -----------------

def decisions(data: bytes, protocol: str | None = None, tools: ToolSet | None = None) -> list:
    engine = Engine(protocol, tools)
    steps = engine.feed(data) + engine.close()
    return [s.decision for s in steps if isinstance(s, DecisionStep)]


def test_data_after_the_terminal_with_a_list_type():
    decisions(b'event: message_stop\ndata: {"type":"message_stop"}\n\ndata: {"type":["x"]}\n\n',
              "anthropic")


def test_detection_with_an_object_type():
    decisions(b'data: {"type": {"a": 1}}\n\n')


def test_chat_chunk_with_a_list_object():
    decisions(b'data: {"object": [], "choices": []}\n\n', "openai-chat")


def test_responses_item_with_a_list_type():
    decisions(b'data: {"type":"response.output_item.added","output_index":0,"item":{"type":[]}}\n\n',
              "openai-responses")


DEEP = "[" * 300 + "]" * 300


@pytest.mark.parametrize("protocol,frames", [
    ("openai-chat", ['{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":'
                     '{"name":"f","arguments":{"a":' + DEEP + '}}}]}}]}']),
    ("anthropic", ['{"type":"content_block_start","index":0,"content_block":{"type":"tool_use",'
                   '"id":"t","name":"f","input":{"a":' + DEEP + '}}}',
                   '{"type":"content_block_stop","index":0}']),
    ("gemini-interactions", ['{"event_type":"step.start","index":1,"step":{"id":"x","type":'
                             '"function_call","name":"f","arguments":{"a":' + DEEP + '}}}',
                             '{"event_type":"step.stop","index":1}']),
], ids=["openai-chat", "anthropic", "gemini-interactions"])
def test_argument_objects_nested_300_deep(protocol, frames):
    """Readers serialize objects past orjson's 255 levels (core/providers/base.py dumps_compact);
    the gate then refuses them past its own depth limit."""
    found = decisions("".join(f"data: {f}\n\n" for f in frames).encode(), protocol,
                      ToolSet([{"name": "f", "parameters": {"type": "object"}}]))
    assert found and all(d.action == "refuse" for d in found)


def deep_call(depth: int, name: str = "lookup_demo_value") -> bytes:
    return hostile.anthropic_call(name, '{"key":' + "[" * depth + "]" * depth + "}")


def test_deeply_nested_arguments_under_a_strict_schema_are_refused():
    found = decisions(deep_call(1000), "anthropic", ToolSet(DEMO_TOOL_DEFINITIONS))
    assert [d.action for d in found] == ["refuse"]


def replay_cli(tmp_path, data: bytes, *args: str) -> tuple[int, str]:
    path = tmp_path / "deep.sse"
    path.write_bytes(data)
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": "f", "parameters": {"type": "object"}}]))
    rc, out, err = hostile.replay_output(str(path), "--tools", str(tools), *args)
    return rc, out


def test_json_output_of_an_executed_call_nested_300_deep(tmp_path):
    rc, out = replay_cli(tmp_path, deep_call(300, "f"), "--json")
    call = json.loads(out.split("\n")[-2])["calls"][0]
    assert rc == 0 and (call["action"], call["reason"]) == ("refuse", "invalid_json")


def test_table_of_an_executed_call_nested_1000_deep(tmp_path):
    rc, out = replay_cli(tmp_path, deep_call(1000, "f"))
    assert rc == 0 and "REFUSE" in out and "past the limit of 128" in out


def test_a_cut_3mb_argument_string_costs_little_memory():
    code = (
        "import resource, sys\n"
        "from callscope.core.engine import Engine\n"
        "from callscope.core.tools import ToolSet\n"
        "import json\n"
        "def ev(k, p):\n"
        "    return ('event: %s\\ndata: %s\\n\\n' % (k, json.dumps(dict(type=k, **p)))).encode()\n"
        "data = ev('message_start', {'message': {'id': 'm'}}) + ev('content_block_start', {'index': 0, "
        "'content_block': {'type': 'tool_use', 'id': 't', 'name': 'f', 'input': {}}}) + "
        "ev('content_block_delta', {'index': 0, 'delta': {'type': 'input_json_delta', "
        "'partial_json': '{\"a\": \"' + 'x' * 3_000_000}})\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "e = Engine(None, ToolSet([{'name': 'f', 'parameters': {'type': 'object'}}]))\n"
        "e.feed(data); e.close()\n"
        "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) < 150, f"{done.stdout.strip()} MB for a 3 MB argument"


def test_a_call_changed_after_its_close_is_refused():
    ev = hostile._ev
    data = "".join([
        ev("message_start", {"message": {"id": "m"}}),
        ev("content_block_start", {"index": 0, "content_block": {
            "type": "tool_use", "id": "t", "name": "f", "input": {}}}),
        ev("content_block_delta", {"index": 0, "delta": {
            "type": "input_json_delta", "partial_json": '{"path": "notes/todo.txt"'}}),
        ev("content_block_stop", {"index": 0}),
        ev("content_block_delta", {"index": 0, "delta": {
            "type": "input_json_delta", "partial_json": ', "recursive": true}'}}),
        ev("message_delta", {"delta": {"stop_reason": "tool_use"}}),
        ev("message_stop", {})]).encode()
    tools = ToolSet([{"name": "f", "parameters": {"type": "object"}}])
    assert [d.action for d in decisions(data, "anthropic", tools)] == ["refuse"]


def anomaly_messages(data: bytes, protocol: str) -> dict[str, str]:
    engine = Engine(protocol)
    steps = engine.feed(data) + engine.close()
    return {s.event.code: s.event.message for s in steps
            if isinstance(s, CallStep) and isinstance(s.event, Anomaly)}


@pytest.mark.parametrize("protocol,payloads", [
    ("openai-chat", [{"choices": [{"index": 0, "delta": {}, "finish_reason": "x\n" * 500}]}] * 2),
    ("openai-responses", [{"type": "response.function_call_arguments.delta", "item_id": "x\n" * 500,
                           "output_index": 0, "delta": "{}"}]),
    ("openai-responses", [{"type": "response.output_item.added", "output_index": 0, "item": {
        "type": "function_call", "id": "x\n" * 500, "name": "f", "status": "incomplete"}}] * 2),
], ids=["repeated_finish_reason", "delta_for_unknown_call", "duplicate_item"])
def test_anomaly_messages_are_one_bounded_line(protocol, payloads):
    data = "".join(f"data: {json.dumps(p)}\n\n" for p in payloads).encode()
    for code, message in anomaly_messages(data, protocol).items():
        assert "\n" not in message and len(message) <= oracle.MAX_MESSAGE, code


def test_reimporting_a_session_with_malformed_request_headers(tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text('{"callscope":"session","version":1,"request":{"headers":true}}\n'
                      '{"t":0,"text":"data: {}\\n\\n"}\n{"end":"clean"}\n')
    assert cli_main(["import", str(source), "-o", str(tmp_path / "out.jsonl")]) in (0, 2)


def test_an_unknown_protocol_in_a_header_names_the_file(tmp_path, capsys):
    path = tmp_path / "p.jsonl"
    path.write_text('{"callscope":"session","version":1,"protocol":"smtp"}\n{"end":"clean"}\n')
    assert cli_main(["replay", str(path)]) == 2
    assert str(path) in capsys.readouterr().err


def session_with_tools(tmp_path, tools: list) -> str:
    """A session whose header declares ``tools`` and whose stream calls ``f`` with {"a": 1}."""
    path = tmp_path / "tools.jsonl"
    lines = [{"callscope": "session", "version": 1, "tools": tools},
             {"t": 0, "text": hostile.anthropic_call("f", '{"a": 1}').decode()}, {"end": "clean"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


UNTRUSTED_TOOLS = (  # fixed; kept to say what these regression tests guard
    "Tool definitions come from session headers and --tools files (untrusted), and ToolSet only "
    "catches jsonschema's SchemaError: a Gemini functionDeclarations entry that is not an object "
    "raises AttributeError in core/tools.py _declarations; a schema that is neither an object "
    "nor a boolean (`\"parameters\": 5`) raises TypeError in jsonschema.validator_for (ToolSet.add); "
    "a $ref that does not resolve ('#/nope', or a remote URL, which is never fetched) passes "
    "check_schema and raises Unresolvable inside the gate (ToolSet.schema_error). `callscope "
    "replay` dies with a traceback. Found by the long run's `session` target. Fix: ToolSet "
    "rejects non-object entries and non-object/boolean schemas with ToolDefinitionError, and "
    "resolves every $ref at definition time (or schema_error turns referencing errors into a "
    "refusal `schema: unresolvable $ref`).")


@pytest.mark.parametrize("tools", [
    [{"functionDeclarations": [["x"]]}],
    [{"type": "function", "function": {"name": "f", "parameters": 5}}],
], ids=["declaration-not-an-object", "schema-an-integer"])
def test_malformed_tool_definitions_are_a_one_line_error(tmp_path, tools):
    assert cli_main(["replay", session_with_tools(tmp_path, tools)]) == 2


def test_a_schema_ref_that_does_not_resolve_never_crashes_the_gate(tmp_path):
    tools = [{"name": "f", "input_schema": {"type": "object", "properties": {"a": {"$ref": "#/nope"}}}}]
    assert cli_main(["replay", session_with_tools(tmp_path, tools)]) in (0, 2)


def test_a_remote_schema_ref_is_never_fetched(tmp_path, monkeypatch):
    lookups: list[object] = []

    def offline(host: object, *args: object, **kwargs: object) -> None:
        lookups.append(host)
        raise OSError("the tests never reach the network")

    monkeypatch.setattr(socket, "getaddrinfo", offline)
    monkeypatch.setattr(socket, "create_connection", offline)
    ref = {"$ref": "https://example.invalid/schema.json"}
    tools = [{"name": "f", "input_schema": {"type": "object", "properties": {"a": ref}}}]
    try:
        cli_main(["replay", session_with_tools(tmp_path, tools)])
    except Unresolvable:
        pass
    finally:
        assert lookups == [], f"replaying a session looked up {lookups} to fetch a $ref"


NESTED = "[" * 1000 + "]" * 1000


@pytest.mark.parametrize("lines", [
    ['{"callscope":' + NESTED + ',"version":1}'],
    ['{"callscope":"session","version":1}', '{"end":' + NESTED + "}"],
    ['{"callscope":"session","version":1}', '{"t":' + NESTED + ',"text":"x"}'],
    ['{"callscope":"session","version":1,"tools":[{"x":' + NESTED + "}]}"],
    ['{"callscope":"session","version":1,"tools":[{"name":"f","parameters":{"type":' + NESTED + "}}]}"],
], ids=["header-marker", "end-kind", "chunk-time", "tool-entry", "tool-schema"])
def test_deeply_nested_values_in_a_session_file_are_a_one_line_error(tmp_path, lines):
    path = tmp_path / "deep.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert cli_main(["replay", str(path)]) == 2
