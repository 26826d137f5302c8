"""``mypy --strict`` over core, tui and net, through the ``callscope`` package, so an import
from one into another resolves to the real types (never to ``Any``)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "tui", "net")


@pytest.fixture(scope="module")
def mypy(request, tmp_path_factory):
    """Run mypy from the checkout, with a cache kept between runs (.pytest_cache) when there is
    one: a second run rechecks only what changed."""
    cache = getattr(request.config, "cache", None)
    cache_dir = cache.mkdir("mypy") if cache is not None else tmp_path_factory.mktemp("mypy")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache_dir),
                               "--no-color-output", *args], cwd=ROOT, capture_output=True, text=True,
                              timeout=540)
    return run


def test_mypy_strict_is_clean_over_core_tui_and_net(mypy):
    targets = ["-m", "callscope"]
    own = sorted(p.stem for p in (ROOT / "callscope").glob("*.py") if p.stem != "__init__")
    for module in own:  # callscope's own modules: the testing API, the pytest plugin
        targets += ["-m", f"callscope.{module}"]
    for package in PACKAGES:
        targets += ["-p", f"callscope.{package}"]
    result = mypy(*targets)
    assert result.returncode == 0, result.stdout + result.stderr
    modules = 1 + len(own) + sum(1 for package in PACKAGES for p in (ROOT / package).rglob("*.py")
                      if "__pycache__" not in p.parts)
    assert f"Success: no issues found in {modules} source files" in result.stdout  # every module


def test_first_party_imports_resolve_to_their_types(mypy):
    """What tui gets from core is core's type, not ``Any`` (a checker that could not find the
    import would say Any, or fail)."""
    program = ("import argparse\n"
               "from callscope.tui.cli import LoadedInput, limits_from\n"
               "from callscope.net.live import build_request\n"
               "reveal_type(LoadedInput('x').session)\n"
               "reveal_type(limits_from(argparse.Namespace()))\n"
               "reveal_type(build_request('anthropic', 'm', 'p'))\n")
    result = mypy("-c", program)
    revealed = re.findall(r'Revealed type is "(.*)"', result.stdout)
    assert len(revealed) == 3, result.stdout + result.stderr
    session, limits, request = revealed
    assert session.startswith("callscope.core.") and "Any" not in session, session
    assert limits == "callscope.core.limits.Limits"
    assert request == "callscope.net.live.LiveRequest"
