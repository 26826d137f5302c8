"""Headless commands never import the network stack, and schema machinery loads when first
needed; a schema is checked and compiled once per process, however many inputs repeat it."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import jsonschema
import pytest
from callscope.core import tools as tools_module
from callscope.core.tools import ToolSet

ROOT = pathlib.Path(__file__).resolve().parent.parent

PROBE = """
import sys
from callscope.tui.cli import main
code = main(sys.argv[1:])
heavy = sorted(m for m in ("asyncio", "ssl", "httpx", "httpx_sse", "textual", "jsonschema",
                                "importlib.metadata")
               if m in sys.modules)
print(code, *heavy)
"""


def loaded_by(*args: str) -> list[str]:
    run = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    return run.stdout.splitlines()[-1].split()


def test_replay_and_check_without_tools_import_neither_network_nor_schema_code() -> None:
    stream = str(ROOT / "tests/adversarial/a_splice.sse")
    assert loaded_by("replay", stream, "--summary") == ["0"]
    assert loaded_by("check", stream, "--seeds", "1") == ["0"]


def test_replay_with_tools_in_the_schema_subset_imports_no_jsonschema_and_no_network() -> None:
    got = loaded_by("replay", str(ROOT / "sessions/openai-chat/single_call.jsonl"), "--summary")
    assert got == ["0"]


def test_a_schema_outside_the_subset_loads_jsonschema_and_still_no_network(tmp_path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text('[{"name": "lookup_value", "parameters": {"anyOf": [{"type": "object"}]}}]')
    got = loaded_by("replay", str(ROOT / "sessions/openai-chat/single_call.jsonl"), "--summary",
                    "--tools", str(tools))
    assert got[1:] == ["jsonschema"]


@pytest.mark.parametrize(("schema", "reason"), [
    ({"type": "object", "required": ["a"]}, "$: 'a' is a required property"),
    ({"anyOf": [{"required": ["a"]}]}, "$: {} is not valid under any of the given schemas")])
def test_a_schema_is_checked_once_per_process(monkeypatch, schema, reason) -> None:
    checked = []
    real_subset, real_jsonschema = tools_module.compile_subset, jsonschema.validators.validator_for

    def counting(real, by):
        def count(seen, *args, **kwargs):
            if seen == schema:
                checked.append(by)
            return real(seen, *args, **kwargs)
        return count

    monkeypatch.setattr(tools_module, "_COMPILED", {})
    monkeypatch.setattr(tools_module, "compile_subset", counting(real_subset, "subset"))
    monkeypatch.setattr(jsonschema.validators, "validator_for", counting(real_jsonschema, "jsonschema"))
    definition = {"name": "f", "parameters": schema}
    first, second = ToolSet([definition]), ToolSet([dict(definition)])
    # once by the subset, and once more by jsonschema when the schema is outside the subset
    assert checked == (["subset"] if "type" in schema else ["subset", "jsonschema"])
    assert first.schema_error("f", {}) == second.schema_error("f", {}) == reason
