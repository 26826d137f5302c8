"""What the command line reads: an input file (its chunks and what its header says), tool
definitions, the limits its flags set, the keymap; and where the bundled sessions are.

Every error here is a :class:`~callscope.core.errors.CallscopeError` naming the file, which the
command line prints as one line (exit 2).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import orjson

from ..core.errors import CallscopeError, InputError
from ..core.inert import plain
from ..core.limits import Limits
from ..core.providers import PROTOCOLS
from ..core.replay import TimedBytes
from ..core.tools import ToolSet, read_tools_file, tools_from_request

DEMO_SESSION = "demo.jsonl"


def sessions_dir() -> Path:
    """The bundled sessions (beside the package in a checkout; installed as package data)."""
    here = Path(__file__).resolve().parent.parent / "sessions"
    if here.is_dir():
        return here
    from importlib import resources  # (here: it costs every command's start-up ~20 ms)

    return Path(str(resources.files("callscope") / "sessions"))


# -- inputs ------------------------------------------------------------------------------------

class LoadedInput:
    """One input file: its chunks (kept lazy), and what its header says."""

    def __init__(self, path: str) -> None:
        from ..core.session import open_input

        self.path = path
        self.session = open_input(path)
        self._noted = False
        header = self.session.header
        self.protocol: str | None = getattr(header, "protocol", None)
        if self.protocol is not None and self.protocol not in PROTOCOLS:
            raise InputError(path, f"unknown protocol {self.protocol!r} in the session header "
                                   f"(one of: {', '.join(PROTOCOLS)})", line=1)
        definitions = list(getattr(header, "tools", None) or [])
        request = getattr(header, "request", None) or {}
        if not definitions and isinstance(request, dict):
            definitions = tools_from_request(request.get("body"))
        self.tool_definitions = definitions
        self.request_body: Any = request.get("body") if isinstance(request, dict) else None
        """The recorded request's body, when the header holds one (its output-token limit is
        one of the gate's rules)."""

    def chunks(self) -> Iterator[TimedBytes]:
        for chunk in self.session.chunks():
            yield chunk.t, chunk.data
        self.note()  # (once every chunk was read: an error in the file says more than the note)

    def note(self) -> None:
        """Say once, on stderr, that the recording stopped before its end line (it is read as
        a cut stream, which it is), and which line of it was cut short, if one was."""
        end = self.session.end
        if end.kind == "missing" and end.detail and not self._noted:
            self._noted = True
            print(f"callscope: note: {plain(self.path)}: {plain(end.detail)}", file=sys.stderr)

    def held(self, limit: int, *, note: bool = True) -> list[TimedBytes]:
        """Every chunk in memory (check and the debugger need them all), up to ``limit`` bytes;
        without ``note``, nothing said on stderr of a recording cut short (a screen is up)."""
        chunks: list[TimedBytes] = []
        size = 0
        read = self.chunks() if note else ((c.t, c.data) for c in self.session.chunks())
        for t, data in read:
            size += len(data)
            if size > limit:
                raise InputError(self.path, f"larger than {limit} bytes, the most check and the "
                                            f"debugger hold in memory (--max-session-bytes; "
                                            f"replay streams any size)")
            chunks.append((t, data))
        return chunks


def load_tools(path: str | None) -> list[dict[str, Any]] | None:
    """The definitions of ``--tools FILE``, checked now: a bad one is an error of FILE, said
    once, not of each input they are used with."""
    if path is None:
        return None
    definitions = read_tools_file(path)
    try:
        ToolSet(definitions)  # (compiled schemas are cached: toolset_for's ToolSet reuses them)
    except CallscopeError as exc:
        raise InputError(path, f"tool definitions: {exc}") from None
    return definitions


def toolset_for(loaded: LoadedInput, override: list[dict[str, Any]] | None) -> ToolSet:
    """The tools of ``loaded``: ``override`` (from :func:`load_tools`, which checked them) or
    its header's own, whose errors name the input and the header's line."""
    if override is not None:
        return ToolSet(override, request=loaded.request_body)
    try:
        return ToolSet(loaded.tool_definitions, request=loaded.request_body)
    except CallscopeError as exc:
        raise InputError(loaded.path, f"tool definitions: {exc}",
                         line=_header_line(loaded.path)) from None


def _header_line(path: str) -> int | None:
    """The line of a session file's header (its first non-blank line); None for an input
    whose definitions are not on a line of it (a HAR's request)."""
    from ..core.importers import sniff, split_selector

    real, selector = split_selector(path)
    if selector is not None:
        return None
    try:
        with open(real, "rb") as f:
            if sniff(f.read(4096), real) != "session":
                return None
            f.seek(0)
            for number, raw in enumerate(f, 1):
                if raw.strip():
                    return number
    except OSError:
        pass
    return None


class LimitFlags(Protocol):
    """The limit flags every command takes (:func:`.cli.build_parser`'s ``common``)."""

    max_frame_bytes: int
    max_calls: int
    max_argument_chars: int
    max_session_bytes: int
    max_anomalies_per_code: int
    max_text_chars: int
    max_argument_depth: int
    max_undetected_frames: int


def limits_from(args: LimitFlags) -> Limits:
    return Limits(max_block_bytes=args.max_frame_bytes, max_calls=args.max_calls,
                  max_argument_chars=args.max_argument_chars,
                  max_session_bytes=args.max_session_bytes,
                  max_anomalies_per_code=args.max_anomalies_per_code,
                  max_text_chars=args.max_text_chars,
                  max_argument_depth=args.max_argument_depth,
                  max_undetected_frames=args.max_undetected_frames)


def protocol_for(loaded: LoadedInput, flag: str | None) -> str | None:
    """``--protocol`` wins, then the session header; None means detect from the stream."""
    return flag or loaded.protocol


# -- the keymap --------------------------------------------------------------------------------

def load_keymap(path: str | None) -> dict[str, str] | None:
    """A JSON object of binding id -> keys, e.g. {"callscope.cut": "ctrl+x"} (ids in f1 help)."""
    if path is None:
        return None
    try:
        value = orjson.loads(Path(path).read_bytes())
    except OSError as exc:
        raise InputError(path, exc.strerror or "cannot read") from None
    except orjson.JSONDecodeError as exc:
        raise InputError(path, f"not JSON ({exc})") from None
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise InputError(path, 'expected a JSON object of binding id -> keys')
    from .commands import BINDINGS

    known = {getattr(b, "id", None) for b in BINDINGS}
    unknown = sorted(k for k in value if k not in known)
    if unknown:  # (a typo would otherwise leave the key where it was, without a word)
        raise InputError(path, f"unknown binding id {unknown[0]!r}: the ids are in the f1 help, "
                               "e.g. 'callscope.cut'")
    for binding, keys in value.items():
        if not _KEYS.fullmatch(keys):
            raise InputError(path, f"{binding}: {plain(keys)!r} is not a key list: keys as "
                                   "Textual names them, comma-separated, modifiers joined by + "
                                   "(e.g. 'ctrl+x' or 'x,ctrl+k')")
    return value


_KEYS = re.compile(r"[A-Za-z0-9_]+(\+[A-Za-z0-9_]+)*(,[A-Za-z0-9_]+(\+[A-Za-z0-9_]+)*)*")
"""What a keymap may bind: Textual's key names (letters, digits, names like ``question_mark``
or ``f1``), modifiers joined by ``+``, several keys by ``,``. An empty string, a stray ``+`` or
an escape sequence would be taken by Textual without a word and saved for the next run."""


def saved_keymap() -> dict[str, str] | None:
    """The keymap saved by an earlier --keymap, its unknown binding ids and any keys that are
    not a key list (:data:`_KEYS`: a settings file edited by hand) left out."""
    from . import settings
    from .commands import BINDINGS

    known = {getattr(b, "id", None) for b in BINDINGS}
    return {k: v for k, v in settings.saved_keymap().items()
            if k in known and isinstance(v, str) and _KEYS.fullmatch(v)} or None
