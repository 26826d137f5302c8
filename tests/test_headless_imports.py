"""Headless commands never import the network stack, and schema machinery loads when first
needed; a schema is checked and compiled once per process, however many inputs repeat it."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import jsonschema
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


def test_replay_with_tools_loads_the_schema_code_and_still_no_network() -> None:
    got = loaded_by("replay", str(ROOT / "sessions/openai-chat/single_call.jsonl"), "--summary")
    assert got == ["0", "jsonschema"]


def test_a_schema_is_checked_once_per_process(monkeypatch) -> None:
    checked = []
    real = jsonschema.validators.validator_for

    def counting(schema, *args, **kwargs):
        checked.append(schema)
        return real(schema, *args, **kwargs)

    monkeypatch.setattr(tools_module, "_COMPILED", {})
    monkeypatch.setattr(jsonschema.validators, "validator_for", counting)
    definition = {"name": "f", "parameters": {"type": "object", "required": ["a"]}}
    first, second = ToolSet([definition]), ToolSet([dict(definition)])
    assert checked.count(definition["parameters"]) == 1
    assert first.schema_error("f", {}) == second.schema_error("f", {}) == "$: 'a' is a required property"
