"""The demo tools of the bundled sessions: small pure functions that really run, in-process.

They touch nothing outside this module (the "files" are a dict), so a demo can show a tool
executing, and show what a lenient harness would have done, without any risk.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

DEMO_VALUES = {
    "Objective": "Ship a debugger that never runs half a tool call",
    "Deadline": "2026-12-01",
    "Owner": "callscope",
}

_DEMO_FILES = {"notes/todo.txt": "write tests", "notes/plan.txt": "step through streams"}


def lookup_demo_value(key: str) -> dict[str, Any]:
    return {"key": key, "value": DEMO_VALUES.get(key), "found": key in DEMO_VALUES}


def add_demo_numbers(a: float, b: float) -> dict[str, Any]:
    return {"sum": a + b}


def delete_demo_file(path: str, dry_run: bool = False) -> dict[str, Any]:
    """Never deletes anything real; reports what it would have done to the in-memory files."""
    exists = path in _DEMO_FILES
    return {"path": path, "existed": exists, "deleted": exists and not dry_run, "dry_run": dry_run}


def list_demo_keys() -> dict[str, Any]:
    return {"keys": sorted(DEMO_VALUES)}


DEMO_TOOLS: dict[str, Callable[..., dict[str, Any]]] = {
    "list_demo_keys": list_demo_keys,
    "lookup_demo_value": lookup_demo_value,
    "add_demo_numbers": add_demo_numbers,
    "delete_demo_file": delete_demo_file,
}

DEMO_TOOL_DEFINITIONS: list[dict[str, Any]] = [
    {"name": "list_demo_keys", "parameters": {"type": "object", "properties": {},
                                              "additionalProperties": False}},
    {"name": "lookup_demo_value", "parameters": {
        "type": "object", "properties": {"key": {"type": "string"}},
        "required": ["key"], "additionalProperties": False}},
    {"name": "add_demo_numbers", "parameters": {
        "type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"], "additionalProperties": False}},
    {"name": "delete_demo_file", "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "dry_run": {"type": "boolean"}},
        "required": ["path", "dry_run"], "additionalProperties": False}},
]


def run_demo_tool(name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    """Run a demo tool: ``(True, result)``; ``(False, None)`` when ``name`` is not a demo tool.

    A tool that raises reports the error as its result; the harness logs it like any result.
    """
    fn = DEMO_TOOLS.get(name)
    if fn is None:
        return False, None
    try:
        return True, fn(**arguments)
    except Exception as exc:  # noqa: BLE001 - a demo tool's failure is a logged result
        return True, {"error": f"{type(exc).__name__}: {exc}"}
