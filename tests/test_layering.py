"""The package as the tools see it: one ``callscope`` package (callscope/ links to the top-level
folders), the import contracts of pyproject.toml held by import-linter, and the top-level
folders refusing to load as packages of their own."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("core", "tui", "net", "sessions")
CONTRACTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def lint_imports(cwd: Path, *contracts: str) -> subprocess.CompletedProcess[str]:
    """import-linter on the package found from ``cwd`` (its pyproject.toml holds the contracts)."""
    command = [str(Path(sys.executable).with_name("lint-imports")), "--no-cache", "--no-logo"]
    for contract in contracts:
        command += ["--contract", contract]
    env = {**os.environ, "PYTHONPATH": str(cwd)}  # this folder's callscope, not the installed one
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_the_import_contracts_hold():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in result.stdout


def test_the_contracts_are_the_ones_the_layout_promises():
    by_id = {c["id"]: c for c in CONTRACTS}
    assert by_id["layers"]["layers"] == ["callscope.tui", "callscope.net", "callscope.core"]
    assert {"textual", "httpx", "httpx_sse", "asyncio", "socket", "ssl", "threading"} <= set(
        by_id["sans-io"]["forbidden_modules"])
    assert by_id["cli-in-tui"]["forbidden_modules"] == ["argparse"]


def test_the_contracts_see_relative_and_function_level_imports(tmp_path):
    """A copy of the contracts on a small package that breaks each one the way our code would:
    a relative import up and out of core, a lazy one from net into tui, an IO library two
    modules away, a parser outside the command line."""
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    files = {
        "core/__init__.py": "",
        "core/outward.py": "from ..tui import screen\n",
        "core/middle.py": "from .. import helpers\n",
        "helpers.py": "import asyncio\n",
        "net/__init__.py": "",
        "net/edge.py": "def later():\n    from ..tui.screen import draw\n    return draw\n",
        "net/flags.py": "import argparse\n",
        "tui/__init__.py": "",
        "tui/screen.py": "def draw():\n    pass\n",
        "tui/cli.py": "import argparse\n",
        "tui/net_commands.py": "import argparse\n",
    }
    for name, text in {"__init__.py": "", **files}.items():
        path = tmp_path / "callscope" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    result = lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"Contracts: 0 kept, {len(CONTRACTS)} broken." in result.stdout
    out = result.stdout
    for chain in ("callscope.core.outward -> callscope.tui.screen",
                  "callscope.net.edge -> callscope.tui.screen",
                  "callscope.core.middle -> callscope.helpers", "callscope.helpers -> asyncio",
                  "callscope.net.flags -> argparse"):
        assert chain in out, out
    assert "callscope.tui.cli -> argparse" not in out


@pytest.mark.parametrize("part", PARTS)
def test_the_package_is_links_to_the_top_level_folders(part):
    link = ROOT / "callscope" / part
    assert link.is_symlink() and os.readlink(link) == f"../{part}"  # relative: any clone gets it
    assert link.resolve() == (ROOT / part).resolve()


@pytest.mark.parametrize("part", ["core", "tui", "net"])
def test_a_top_level_folder_refuses_to_load_as_a_package_of_its_own(part):
    """From the checkout, ``import core`` would load every engine module a second time, as a
    different module (its classes not those of ``callscope.core``): it is an ImportError."""
    code = f"import {part}"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 1
    assert (f"ImportError: import callscope.{part}, not the top-level '{part}' folder of the "
            "checkout") in result.stderr
    loaded = subprocess.run([sys.executable, "-c", f"import callscope.{part} as m; print(m.__file__)"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert loaded.returncode == 0, loaded.stderr
    assert Path(loaded.stdout.strip()).resolve() == (ROOT / part / "__init__.py").resolve()


def test_only_the_command_line_runs_as_a_program():
    mains = sorted(str(p.relative_to(ROOT)) for part in ("core", "tui", "net")
                   for p in (ROOT / part).rglob("*.py") if '__name__ == "__main__"' in p.read_text())
    assert mains == ["tui/cli.py"]
