"""The one error family the engine raises.

Everything the engine can reject (a broken session file, a feed after close, an unknown
protocol name) raises a subclass of :class:`CallscopeError`. The command line turns these into
one-line messages and exit code 2; anything else escaping the engine is a bug.
"""

from __future__ import annotations


class CallscopeError(Exception):
    """Base class of every error raised on purpose by callscope."""


class InputError(CallscopeError):
    """An input file cannot be read as a session: names the file and the line or byte offset."""

    def __init__(self, path: str, message: str, *, line: int | None = None,
                 offset: int | None = None) -> None:
        self.path = path
        self.line = line
        self.offset = offset
        self.message = message
        where = path
        if line is not None:
            where = f"{path}:{line}"
        elif offset is not None:
            where = f"{path}@{offset}"
        super().__init__(f"{where}: {message}")


class DecoderClosed(CallscopeError):
    """Bytes were fed to a decoder after it was closed."""
