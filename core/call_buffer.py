"""One call's argument buffer: its text exactly as received, fragment by fragment.

Argument text is append-only; each fragment remembers its frame and its span in the text, so a
view can show the text as it was at any earlier step by cutting at a fragment boundary. The
draft status is computed incrementally by :class:`~.jsonprefix.JsonPrefixChecker`, so the cost
of a fragment is proportional to the fragment, never to the buffer. :mod:`.calls` applies a
turn's events to these buffers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import exact_json
from .events import Anomaly, ArgumentPiece, TextOrigin
from .fork import forked, shallow_copy
from .fragments import Fragment, Fragments
from .jsonprefix import NOT_READ, Draft, JsonPrefixChecker

__all__ = ["CallBuffer", "Fragment", "Fragments"]


BLOCK = 256
"""Fragments joined into one string once this many are pending: the text costs its characters
and a string per block, not a string object per fragment (~50 bytes each)."""


@dataclass
class CallBuffer:
    key: str
    opened_frame: int | None
    id: str | None = None
    call_id: str | None = None
    name: str | None = None
    kind: str = "function"
    origin: TextOrigin = "raw"
    closed: bool = False
    closed_frame: int | None = None
    cut_why: str | None = None
    """Why the call ended without the provider vouching that it is whole (see
    :class:`~.events.CallCut`): the gate refuses it as truncated."""
    fragments: Fragments = field(default_factory=Fragments)
    pieces: list[ArgumentPiece] = field(default_factory=list)
    anomalies: list[Anomaly] = field(default_factory=list)
    disputed: Anomaly | None = None
    """The first anomaly on this call whose declared effect is ``disputes``, kept whatever the
    anomaly caps: the gate refuses the call."""
    _wide: int = field(default=0, repr=False)
    """UTF-8 bytes of the text beyond one per character (its non-ASCII characters' extra), or
    -1 until :attr:`byte_length` is asked: a whole text set at once is not encoded for it (a
    megabyte), fragments appended after it are counted then, with it."""
    _parts: list[str] = field(default_factory=list, repr=False)
    _joined: int = field(default=0, repr=False)
    """How many of ``_parts`` (from the first) are blocks already joined."""
    length: int = 0
    """Characters of argument text so far (a field, not a property: read once per event)."""
    _checker: JsonPrefixChecker = field(default_factory=JsonPrefixChecker, repr=False)
    _read: tuple[str, Any, bool] | None = field(default=None, repr=False, compare=False)
    """A whole-object text, the draft checker's parse of it, and whether the text is that
    value's own orjson serialization (the reader said so), held for the gate's strict parse
    (:meth:`parsed`) until it takes it (one text parsed once, not twice)."""

    @property
    def text(self) -> str:
        """The whole argument text (joined once, then cached as a single part)."""
        if len(self._parts) > 1:
            self._parts[:] = ["".join(self._parts)]
            self._joined = 1
        return self._parts[0] if self._parts else ""

    @property
    def byte_length(self) -> int:
        """The text's length in UTF-8 bytes (lone surrogates as they would encode)."""
        if self._wide < 0:
            self._wide = len(self.text.encode("utf-8", "surrogatepass")) - self.length
        return self.length + self._wide

    @property
    def draft(self) -> Draft:
        # Every change of the text appends a fragment that records the status: no recomputation.
        fragments = self.fragments
        return fragments.last_draft if fragments else self._checker.status

    @property
    def max_depth(self) -> int:
        """The deepest nesting of the argument text (kept by the draft checker as it goes)."""
        return self._checker.max_depth

    @property
    def draft_error(self) -> str | None:
        error = self._checker.error
        return None if error is None else f"at char {error.offset}: {error.message}"

    def __deepcopy__(self, memo: dict[int, Any]) -> CallBuffer:
        """A fork for ``callscope check``, which finishes a copy of the turn at every frame
        boundary: the lists are copied, their items (immutable fragments, strings, events) are
        shared, so a fork costs C-speed list copies instead of a walk over every object. A
        held parse stays with the original (the fork parses its text again if it decides the
        call): the arguments of the two sides' decisions are never one object."""
        twin = self.fork_to_finish()
        twin._checker = forked(self._checker, memo)
        return twin

    def fork_to_finish(self) -> CallBuffer:
        """A copy to finish once (the gate reads it, a closing event may change it) before
        this buffer takes another fragment: the deep copy without the draft checker's, which
        it shares (finishing reads the checker and never feeds it; :meth:`replace` makes a new
        one)."""
        twin = shallow_copy(self)
        twin.fragments = self.fragments.copy()
        twin.pieces = list(self.pieces)
        twin.anomalies = list(self.anomalies)
        twin._parts = list(self._parts)
        twin._read = None
        return twin

    def append(self, frame: int | None, fragment: str) -> Draft:
        """Add a fragment; return the draft status it leaves."""
        start = self.length
        parts = self._parts
        parts.append(fragment)
        if len(parts) - self._joined > BLOCK:
            parts[self._joined:] = ["".join(parts[self._joined:])]
            self._joined += 1
        self.length = end = start + len(fragment)
        if not fragment.isascii() and self._wide >= 0:
            self._wide += len(fragment.encode("utf-8", "surrogatepass")) - len(fragment)
        draft = self._checker.feed(fragment)
        self.fragments.append(frame, start, end, draft)
        return draft

    def extend(self, frame: int, fragments: list[str]) -> Draft:
        """:meth:`append` of each fragment in turn, the first from frame ``frame`` and each
        next from the next frame (a run the hot path read at once); the last draft status."""
        start = self.length
        parts = self._parts
        parts += fragments
        if len(parts) - self._joined > BLOCK:
            parts[self._joined:] = ["".join(parts[self._joined:])]
            self._joined += 1
        feed, add = self._checker.feed, self.fragments.append
        for fragment in fragments:
            end = start + len(fragment)
            draft = feed(fragment)
            add(frame, start, end, draft)
            frame += 1
            start = end
        self.length = start
        if self._wide >= 0:
            text = "".join(fragments)
            if not text.isascii():  # (UTF-8 bytes past one a character, as append counts)
                self._wide += len(text.encode("utf-8", "surrogatepass")) - len(text)
        return draft

    def replace(self, frame: int | None, text: str, origin: TextOrigin, parsed: Any = None) -> None:
        """Protocols that send objects set the whole text at once (``parsed``: the object or
        array ``text`` is orjson's serialization of, when the reader says so, else None)."""
        self._parts = [text]
        self._joined = 1
        self.length = len(text)
        self._wide = 0 if text.isascii() else -1
        self._checker = JsonPrefixChecker()
        self.origin = origin
        draft, value = self._checker.read_whole(text, parsed)
        self._read = None if value is NOT_READ else (text, value, value is parsed)
        self.fragments.append(frame, 0, self.length, draft)

    def parsed(self) -> Any:
        """The whole text read by :func:`.exact_json.loads` (orjson's reading, integers exact;
        raising :class:`orjson.JSONDecodeError` as it does): the parse the draft checker made
        of this very text object, handed over once and let go, or else made now."""
        return self.parsed_whole()[0]

    def parsed_whole(self) -> tuple[Any, bool]:
        """:meth:`parsed`, and whether the text is known to be that value's own orjson
        serialization (so no object in it has a key twice: the gate need not look)."""
        read, text = self._read, self.text
        if read is not None:
            self._read = None
            if read[0] is text:  # (the same object: no fragment has changed the text since)
                return read[1], read[2]
        return exact_json.loads(text), False

    def drop_read(self) -> None:
        """Let go of the held parse (the turn holds one at a time: memory as before)."""
        self._read = None
