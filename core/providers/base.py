"""What every protocol reader shares: payload decoding, table dispatch, terminal bookkeeping.

A protocol reader is a small sans-IO machine: :meth:`ProtocolReader.read` takes one dispatched
SSE frame and returns call events; :meth:`ProtocolReader.finish` is told the stream ended. A
provider module only writes what differs on the wire: how to find the event type in a frame,
one handler per event type (a table, not an if-chain), which stop reasons mean "cut" or
"failed", and which frames may follow its terminal event.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

import orjson

from .. import exact_json
from ..events import Anomaly, CallClosed, CallCut, CallEvent, ProviderError, TurnEnded
from ..fork import forked
from ..frame import Frame
from ..gate.codes import Code
from ..hot_path import BlockShape

DONE_SENTINEL = "[DONE]"

_ATOMS = frozenset({bool, int, float, str, type(None)})

Handler = Callable[[Any, Frame, Any], None]


def dumps_compact(value: Any) -> str:
    """Compact JSON of an argument object, keys in the order received. The stdlib fallback
    covers what orjson refuses (nesting deeper than 255 levels); past Python's own recursion
    limit this raises, and :meth:`ProtocolReader.serialized` reports it."""
    try:
        return orjson.dumps(value).decode()
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def int_or_none(value: Any) -> int | None:
    """A JSON integer, or None (booleans are not integers here). ``type(...) is int``: parsed
    JSON holds no other int subclass, and one type test is cheaper than two ``isinstance``."""
    return value if type(value) is int else None


def text_or_none(value: Any) -> str | None:
    """A JSON string (the empty one included), or None."""
    return value if isinstance(value, str) else None


def nonempty_text(value: Any) -> str | None:
    """A JSON string with at least one character, or None: for fields that gateways send as
    ``""`` when they mean "not given" (Chat's ids and names on later chunks)."""
    return value if isinstance(value, str) and value else None


def short(value: Any, limit: int = 80) -> str:
    """A one-line, bounded rendering of an untrusted value for anomaly messages."""
    text = value if isinstance(value, str) else repr(value)
    text = text.replace("\n", "\\n").replace("\r", "\\r")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _forked(value: Any, memo: dict[int, Any]) -> Any:
    """A reader attribute, deep-copied the cheap way. A reader's state is atoms, its own dicts,
    lists and sets (never shared between two attributes), hashable set members and dict keys
    (immutable), and records: containers are rebuilt here, atoms shared, and anything else
    goes to ``copy.deepcopy`` with the memo, so a record two tables hold stays one record.
    Parsed payload values that records keep (a start input) are shared: no reader changes a
    payload after parsing it."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is dict:
        return {key: _forked(item, memo) for key, item in value.items()}
    if kind is list:
        return [_forked(item, memo) for item in value]
    if kind is set:
        return set(value)
    if hasattr(kind, "__deepcopy__"):
        return forked(value, memo)
    return copy.deepcopy(value, memo)


class ProtocolReader:
    """Base class of the five protocol readers."""

    name: ClassVar[str] = "unknown"
    handlers: ClassVar[dict[str, Handler]] = {}
    trailers: ClassVar[frozenset[str]] = frozenset()
    """Event types allowed after the terminal signal without an anomaly (e.g. ``done``)."""
    empty_arguments_mean_empty_object: ClassVar[bool] = False
    """Whether this protocol documents empty argument text as "no arguments" (Anthropic's
    tool without input sends one empty ``partial_json``). Otherwise empty text is invalid JSON."""
    has_hot_frame: ClassVar[bool] = False
    """Whether :meth:`hot_fragment` can say yes: a reader that keeps the base class's (always
    no) has none, and its payloads are not parsed to ask (a generateContent frame can be a
    megabyte). Derived from the class, never declared."""

    hot_shape: ClassVar[BlockShape | None] = None
    """The hot frame's exact block as the provider writes it (:func:`..hot_path.block_shape`), or
    None: a block that is exactly this is read by :meth:`hot_values` without its payload being
    parsed into objects (every other block as before). Declared by a reader with a hot frame
    whose bytes one provider writes the same way every time."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.has_hot_frame = cls.hot_fragment is not ProtocolReader.hot_fragment

    def __init__(self) -> None:
        self.ended = False
        self.terminal_frame: int | None = None
        self.done_frame: int | None = None
        """The first ``[DONE]`` (any protocol): the SDKs stop reading there."""
        self._out: list[CallEvent] = []

    def __deepcopy__(self, memo: dict[int, Any]) -> ProtocolReader:
        """A fork (``callscope check`` finishes a copy at every frame boundary): see
        :func:`_forked`; the scratch list of the last read's events is left behind."""
        twin = object.__new__(type(self))
        memo[id(self)] = twin
        fields = twin.__dict__
        for name, value in self.__dict__.items():
            if name != "_out":
                fields[name] = _forked(value, memo)
        twin._out = []
        return twin

    def fork_to_finish(self) -> ProtocolReader:
        """A copy to call :meth:`finish` on once, and nothing else, before this reader reads
        on: it shares every table with this reader, as finishing changes none of them (an
        ``on_finish`` reads the state and emits, into the copy's own list). Held by
        tests/test_check_fork.py: a reader's state is the same before and after its copy is
        finished, on every bundled input at every frame boundary."""
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin._out = []
        return twin

    # -- the interface the engine uses ---------------------------------------------------

    def read(self, frame: Frame) -> list[CallEvent]:
        """Interpret one dispatched frame."""
        out: list[CallEvent] = []
        self._out = out
        data = frame.data
        if self.done_frame is not None and not self.ended:
            # The SDKs stop reading at [DONE]: what comes after one that did not end the turn is
            # reported, not read (read, it could still complete the turn and run).
            self.anomaly(frame, Code.DATA_AFTER_DONE, f"data after [DONE] at frame "
                                                   f"{self.done_frame}: not read")
            return out
        # The sentinel test must not copy every payload: look at its first bytes first. Like
        # openai-python, any data that starts with [DONE] is the sentinel ("[DONE]x" too).
        if data[:1] != "{" and "[DONE]" in data[:16] and data.lstrip().startswith(DONE_SENTINEL):
            if data.strip() != DONE_SENTINEL:
                self.anomaly(frame, Code.DONE_WITH_MORE, f"{short(data.strip())} read as [DONE]")
            if self.done_frame is None:
                self.done_frame = frame.index
            self.on_done(frame)
            return out
        try:
            payload = exact_json.loads(data)  # surrounding whitespace is allowed (Anthropic pads)
        except orjson.JSONDecodeError as exc:
            self.anomaly(frame, Code.NOT_JSON, f"data is not JSON ({exc})")
            return out
        kind = self.event_type(frame, payload)
        if self.ended and not (isinstance(kind, str) and kind in self.trailers):
            self.anomaly(frame, Code.DATA_AFTER_TERMINAL,
                         f"{short(kind)} after the terminal signal (frame {self.terminal_frame})")
        handler = self.handlers.get(kind) if type(kind) is str else None
        if handler is None:
            self.on_unknown(frame, payload, kind)
        else:
            handler(self, frame, payload)
        return out

    def finish(self) -> list[CallEvent]:
        """The stream ended: close what the protocol leaves open, report a missing terminal."""
        self._out = []
        self.on_finish()
        if not self.ended:
            self.anomaly(None, Code.MISSING_TERMINAL,
                         f"the stream ended without the {self.name} terminal signal")
        return self._out

    def quiet(self) -> bool:
        """Whether :meth:`read` would take a JSON object payload without a word of its own:
        no ``[DONE]`` seen, no terminal signal yet (else every frame is reported). The engine's
        hot path (:mod:`..hot_path`) asks :meth:`hot_fragment` only then."""
        return self.done_frame is None and not self.ended

    def hot_fragment(self, event: str | None, payload: Any, index: int) -> tuple[str, str] | None:
        """The hot path's question for one frame whose data is a JSON object: is it the
        protocol's commonest frame, one argument fragment for an open call that has had its
        first, read exactly as :meth:`read` would read it (no anomaly, no other event)? Then
        return ``(call key, fragment)`` after making the reader's state what :meth:`read` would
        have made it; otherwise return None and change nothing, and the frame takes
        :meth:`read`. ``event`` is the frame's ``event:`` value. By default no frame is hot.
        (tests/test_hot_path_differential.py holds each reader's answer to :meth:`read`'s.)"""
        return None

    def hot_values(self, values: list[Any]) -> tuple[str, str] | None:
        """:meth:`hot_fragment` of a frame whose block is exactly :attr:`hot_shape`, given the
        JSON values of its slots in order: the part of the question the bytes do not answer
        (the reader's state), asked by :meth:`hot_fragment` too once it has found the values in
        a payload."""
        return None

    # -- hooks for provider modules ------------------------------------------------------

    def event_type(self, frame: Frame, payload: Any) -> Any:
        """The discriminator: by default the ``type`` field of the payload."""
        return payload.get("type") if isinstance(payload, dict) else None

    def on_done(self, frame: Frame) -> None:
        """``data: [DONE]``: a terminal sentinel for some protocols, an anomaly for others."""
        self.anomaly(frame, Code.UNEXPECTED_DONE, f"[DONE] is not part of the {self.name} protocol")

    def on_unknown(self, frame: Frame, payload: Any, kind: Any) -> None:
        """Unknown event types are kept and shown, as the providers' docs ask."""
        if isinstance(payload, dict) and "error" in payload:
            self.error_payload(frame, payload["error"])
            return
        self.anomaly(frame, Code.UNKNOWN_EVENT, f"unknown event type {short(kind)}")

    def on_finish(self) -> None:
        """Provider-specific end-of-stream work (close open calls)."""

    # -- helpers ---------------------------------------------------------------------------

    def emit(self, event: CallEvent) -> None:
        self._out.append(event)

    def anomaly(self, frame: Frame | None, code: Code, message: str, key: str | None = None) -> None:
        self.emit(Anomaly(frame.index if frame else None, code, message, key))

    def serialized(self, frame: Frame | None, key: str, value: Any) -> str | None:
        """The text of an argument object, or None (with an anomaly) when it cannot be written:
        the call then has no text, so the gate can never run it."""
        try:
            return dumps_compact(value)
        except (ValueError, TypeError, RecursionError) as exc:
            self.anomaly(frame, Code.UNSERIALIZABLE_ARGUMENTS, short(str(exc)), key=key)
            return None

    def cut_calls(self, frame: Frame, keys: Iterable[str], why: str) -> None:
        """Close as cut each call of ``keys`` (once): the calls of a message or interaction that
        another one replaced before it ended. Nothing vouched for them, so the gate refuses them
        (a superseded message's call must not execute)."""
        for key in dict.fromkeys(keys):
            self.emit(CallCut(frame.index, key, why))

    def close_call(self, frame: Frame | None, key: str, cut: str | None = None) -> None:
        """The call ends: closed by the provider, or cut (``cut`` says why nothing vouched for
        it being whole)."""
        index = frame.index if frame is not None else None
        self.emit(CallClosed(index, key) if cut is None else CallCut(index, key, cut))

    def end_turn(self, frame: Frame, signal: str) -> None:
        """Record the terminal signal (only the first one counts)."""
        if self.ended:
            self.anomaly(frame, Code.REPEATED_TERMINAL, f"second terminal signal {short(signal)}")
            return
        self.ended = True
        self.terminal_frame = frame.index
        self.emit(TurnEnded(frame.index, signal))

    def error_payload(self, frame: Frame, error: Any) -> None:
        """A provider error object, nested (``{"error":{...}}``) or flat, in any protocol."""
        if isinstance(error, dict):
            message = error.get("message") or error.get("type") or short(error)
            code = error.get("code") or error.get("status") or error.get("type")
        else:
            message, code = short(error), None
        self.emit(ProviderError(frame.index, str(message), None if code is None else str(code)))

