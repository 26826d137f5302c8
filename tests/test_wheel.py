"""The wheel, built from a copy of the checkout as pip builds it: every module of core/, tui/ and
net/, every bundled session, nothing else; and installed, it runs from its own files."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ("core", "tui", "net", "sessions")
"""The folders whose every file ships, under callscope/ (with the modules of callscope/ itself:
__init__.py, the public testing API and the pytest plugin)."""
NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", "*.pyc",
                                    ".*_cache", ".hypothesis")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    """(the copy of the checkout, the wheel built from it). Offline: no build isolation, so the
    setuptools of the test extra builds it."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"
    shutil.copytree(ROOT, source, symlinks=True, ignore=NOT_SOURCE)
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                             "--no-index", "--wheel-dir", str(tmp / "dist"), str(source)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    wheels = list((tmp / "dist").glob("callscope-*.whl"))
    assert len(wheels) == 1, wheels
    return source, wheels[0]


def expected_files(source: Path) -> set[str]:
    files = {f"callscope/{p.name}" for p in (source / "callscope").iterdir()
             if p.suffix == ".py" and p.is_file() and not p.is_symlink()}
    assert "callscope/__init__.py" in files
    for part in SHIPPED:
        files |= {f"callscope/{p.relative_to(source).as_posix()}"
                  for p in (source / part).rglob("*") if p.is_file()}
    return files


def test_the_wheel_holds_every_module_and_bundled_session(built):
    source, wheel = built
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        entry_points = archive.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt")))
    shipped = {n for n in names if ".dist-info/" not in n}
    expected = expected_files(source)
    assert {n for n in expected if n.endswith(".py")} >= {"callscope/core/harness.py",
                                                         "callscope/tui/cli.py", "callscope/net/serve.py"}
    assert {n for n in expected if n.startswith("callscope/sessions/")} >= {
        "callscope/sessions/demo.jsonl", "callscope/sessions/README.md",
        "callscope/sessions/anthropic/max_tokens.jsonl"}
    assert sorted(expected - shipped) == []  # nothing left out
    assert sorted(shipped - expected) == []  # and nothing else (no top-level core/, no tests)
    assert "callscope = callscope.tui.cli:main" in entry_points.decode()


def test_the_wheel_installed_runs_from_its_own_files(built, tmp_path):
    """Unpacked elsewhere (as an install would put it), the package and its sessions are the
    wheel's, not the checkout's: ``replay`` of the bundled demo works from there."""
    _, wheel = built
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    program = ("import sys, callscope, callscope.tui.cli as cli\n"
               "print(callscope.__file__)\n"
               "print(cli.sessions_dir())\n"
               "sys.exit(cli.main(['replay', str(cli.sessions_dir() / 'demo.jsonl'), '--summary']))\n")
    env = {**os.environ, "PYTHONPATH": str(site)}
    result = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    package, sessions, *table = result.stdout.splitlines()
    assert Path(package) == site / "callscope" / "__init__.py"
    assert Path(sessions) == site / "callscope" / "sessions"
    assert any(line.startswith("-- turn: openai-responses") for line in table), table
