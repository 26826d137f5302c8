"""Passwords given to a command-line tool by a short flag, in text: ``mysql -u root -pS``,
``sshpass -p S ssh host``, ``redis-cli -a S``. Each flag means a password only to its own
tools, so the rule is a table of tools and their flags, read on the lines that name a tool.
"""

from __future__ import annotations

import re
from functools import cache

from .redact_url import REDACTED

PASSWORD_FLAGS: dict[str, tuple[str, bool]] = {
    "mysql": ("-p", True), "mysqldump": ("-p", True), "mysqladmin": ("-p", True),
    "mariadb": ("-p", True), "mariadb-dump": ("-p", True),
    "sshpass": ("-p", False), "redis-cli": ("-a", False), "smbclient": ("-P", False),
}
"""Tool name -> (its password flag, whether the password is attached to it): MySQL's ``-p``
takes ``-pS`` only (``-p S`` asks for it and ``S`` is the database), sshpass's ``-p`` and
redis-cli's ``-a`` take the next word."""


@cache
def _tool_line() -> re.Pattern[str]:
    """A line naming one of the tools as a word (its path or ``sudo`` before it allowed)."""
    names = "|".join(re.escape(name) for name in sorted(PASSWORD_FLAGS, key=len, reverse=True))
    return re.compile(rf"(?<![\w.-])(?:[\w./-]*/)?({names})(?![\w.-])[^\n]*")


def redact_command_flags(text: str) -> str:
    """``text`` with the password each tool's flag gives (:data:`PASSWORD_FLAGS`) replaced by
    ``[REDACTED]``, on every line that names the tool; the rest keeps its spelling. Each line
    is read once, from the tool's name on."""
    if not any(name in text for name in PASSWORD_FLAGS):
        return text
    return _tool_line().sub(_redacted_line, text)


def _redacted_line(found: re.Match[str]) -> str:
    flag, attached = PASSWORD_FLAGS[found.group(1)]
    line = found.group(0)
    words = line.split(" ")
    for i, word in enumerate(words):
        if attached and word.startswith(flag) and len(word) > len(flag):
            words[i] = flag + REDACTED
        elif not attached and word == flag and i + 1 < len(words) and words[i + 1]:
            words[i + 1] = REDACTED
    return " ".join(words)
