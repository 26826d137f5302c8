"""Every test runs with its own empty config directory: a developer's saved theme or keymap
(tui/settings.py) never changes what a test sees, and no test writes to the real one."""

from __future__ import annotations

import os

import pytest

# The suite's child processes (the CLI, serve, the relay) run with their bytecode cached, as an
# installed callscope's do: under PYTHONDONTWRITEBYTECODE every one of them would compile every
# module it imports again (~0.1-0.2 s each, a few hundred of them).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


@pytest.fixture(autouse=True)
def _own_config_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
