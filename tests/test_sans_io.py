"""The engine stays sans-IO: no module under core/ may import network or UI libraries."""

import ast
import pathlib

FORBIDDEN = {"textual", "httpx", "httpx_sse", "asyncio"}
CORE = pathlib.Path(__file__).resolve().parent.parent / "core"


def imported_roots(path: pathlib.Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_core_modules_import_no_io_library():
    files = sorted(CORE.rglob("*.py"))
    assert files, "core/ has no modules"
    offenders = {str(f.relative_to(CORE)): sorted(imported_roots(f) & FORBIDDEN) for f in files}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_check_itself_catches_an_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import asyncio\nfrom httpx import Client\n")
    assert imported_roots(bad) & FORBIDDEN == {"asyncio", "httpx"}
