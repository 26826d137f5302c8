"""Settings that persist between runs: the theme and the keymap, in the user's config directory
(``$XDG_CONFIG_HOME/callscope/settings.json``, else ``~/.config/callscope/settings.json``).

A missing or broken file means the defaults (a broken one is never overwritten in silence: it is
left as it is, and a change is not saved until it is fixed or removed). A ``--keymap FILE``
given on the command line wins over the saved keymap."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson


def settings_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "callscope" / "settings.json"


def load() -> dict[str, Any] | None:
    """The saved settings, {} when there are none, None when the file cannot be read as them."""
    path = settings_path()
    try:
        value = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        return {}
    except (OSError, orjson.JSONDecodeError):
        return None
    return value if isinstance(value, dict) else None


def saved_theme() -> str | None:
    theme = (load() or {}).get("theme")
    return theme if isinstance(theme, str) else None


def saved_keymap() -> dict[str, str]:
    keymap = (load() or {}).get("keymap")
    if not isinstance(keymap, dict):
        return {}
    return {k: v for k, v in keymap.items() if isinstance(k, str) and isinstance(v, str)}


def save(**changes: Any) -> bool:
    """Merge ``changes`` into the saved settings (atomically); False when they could not be."""
    current = load()
    if current is None:
        return False
    current.update(changes)
    path = settings_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.write_bytes(orjson.dumps(current, option=orjson.OPT_INDENT_2))
        partial.replace(path)
    except OSError:
        return False
    return True
