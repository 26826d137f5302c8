"""``serve --quirk NAME`` (or ``quirk=NAME`` in a fault spec): the session served rewritten into
a shape a real system sends (:mod:`..core.quirks` holds the profiles). The rewrite is made once
per session and profile; cuts, chunking and pacing then apply to the rewritten stream."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..core.quirks import QuirkError, apply_quirk, quirks
from ..core.session import StreamEnd

if TYPE_CHECKING:
    from .serve_sessions import Loaded

_MADE: dict[tuple[int, str], Loaded] = {}


def known_quirk(name: str) -> str | None:
    """Why ``name`` is not a quirk profile, or None."""
    return None if name in quirks() else f"unknown quirk {name!r} (one of: {', '.join(quirks())})"


def quirked(session: Loaded, name: str | None) -> Loaded:
    """``session`` rewritten by the profile (itself without one). Raises :class:`QuirkError`
    when the profile does not apply to the session's protocol."""
    if name is None:
        return session
    key = (id(session), name)
    made = _MADE.get(key)
    if made is None or made.name != session.name:
        chunks, end = apply_quirk(name, session.protocol, session.chunks)
        ended = session.end if end is None else StreamEnd("error", detail=f"quirk {name}")
        made = replace(session, chunks=chunks, end=ended, _frame_ends=None)
        _MADE[key] = made
    return made


__all__ = ["QuirkError", "known_quirk", "quirked"]
