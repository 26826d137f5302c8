"""Gemini ``generateContent`` streaming (``:streamGenerateContent?alt=sse``), PROTOCOLS.md §4b.

Data-only SSE: every frame is a complete ``GenerateContentResponse`` and there is no event
type, no ``[DONE]`` and no call index. Complete ``functionCall`` parts are keyed by arrival
order (``call:<n>``, ``cand<c>/call:<n>`` for candidates other than 0). Vertex's streamed
arguments (``partialArgs`` + ``willContinue``) belong to the last opened call; the pieces are
placed by ``jsonPath`` into an object owned by the reader and serialized once, when the call
closes, so assembly stays linear in the argument size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import orjson

from ..events import (
    ArgumentPiece,
    ArgumentsSet,
    CallOpened,
    Handover,
    ProviderError,
    StopReported,
    TextAppended,
    UsageReported,
)
from ..frame import Frame
from ..gate.codes import Code
from .base import Handler, ProtocolReader, int_or_none, short
from .jsonpath import BadPath, Placement, parse_json_path, place, plain, unfinished
from .spec import UNKNOWN_STOP
from .specs.gemini_generate import SPEC

# The path parser's names stay importable from the reader that uses them.
__all__ = ["BadPath", "GeminiGenerateReader", "parse_json_path"]

# partialArgs value fields, in the order we prefer when a piece (wrongly) carries several;
# None means any JSON value is accepted (protobuf sends NullValue as null or "NULL_VALUE").
_VALUE_TYPES: dict[str, tuple[type, ...] | None] = {
    "stringValue": (str,), "numberValue": (int, float), "boolValue": (bool,), "nullValue": None,
}

_CUT_FROM = 1 << 12
"""Serialized bytes past which a whole call's non-ASCII text is cut from the frame's text rather
than decoded (below it the decode costs less than finding the spot)."""

# Part fields that carry nothing to show on their own (a bare signature part, metadata).
_QUIET_PART_KEYS = frozenset({"thought", "thoughtSignature", "partMetadata", "videoMetadata",
                              "mediaResolution"})

# place() outcomes worth an anomaly: (code, message).
_PLACEMENT_ANOMALIES: dict[Placement, tuple[Code, str]] = {
    "reopened": (Code.STRING_REOPENED, "more string after a piece without willContinue"),
    "replaced": (Code.VALUE_REPLACED, "a piece replaced an earlier value"),
}




@dataclass
class _Streamed:
    """A Vertex call whose arguments arrive as ``partialArgs`` pieces."""

    key: str
    root: dict[str, Any]
    more: bool = True
    """The call's last part said ``willContinue``: more parts of it were to come."""
    late: str | None = None
    """Set when the call came after its candidate's finishReason: why it is not whole."""


@dataclass
class _Candidate:
    calls: int = 0
    open: _Streamed | None = None
    finished: bool = False


class GeminiGenerateReader(ProtocolReader):
    """Reads ``streamGenerateContent?alt=sse`` chunks into call events."""

    name: ClassVar[str] = SPEC.name
    # A no-argument call is sent as {"name": ...}: no args means the empty object.
    empty_arguments_mean_empty_object: ClassVar[bool] = SPEC.empty_arguments_mean_empty_object

    def __init__(self) -> None:
        super().__init__()
        self._cands: dict[int, _Candidate] = {}
        self._last_usage: Any = None

    def event_type(self, frame: Frame, payload: Any) -> Any:
        # No discriminator on the wire: a dict is a response chunk unless it is an error.
        if not isinstance(payload, dict):
            return None
        return "error" if "error" in payload else "chunk"

    def on_unknown(self, frame: Frame, payload: Any, kind: Any) -> None:
        self.anomaly(frame, Code.NOT_AN_OBJECT,
                     f"payload is {type(payload).__name__}, not a GenerateContentResponse")

    def on_finish(self) -> None:
        # A call cut mid-partialArgs stays open (the gate must see it unfinished), but its
        # assembled text so far is published so the panes can show it.
        for cand in self._cands.values():
            if cand.open is not None:
                text = self._dump(None, cand.open.key, cand.open.root)
                if text is not None:
                    self.emit(ArgumentsSet(None, cand.open.key, text, "assembled"))

    # -- handlers ------------------------------------------------------------------------

    def _on_error(self, frame: Frame, payload: Any) -> None:
        error = payload["error"]
        if not isinstance(error, dict):
            self.error_payload(frame, error)
            return
        code, status = error.get("code"), error.get("status")
        message = error.get("message") or status or short(error)
        code_text = " ".join(str(x) for x in (code, status) if x not in (None, ""))
        self.emit(ProviderError(frame.index, str(message), code_text or None))

    def _on_chunk(self, frame: Frame, payload: dict[str, Any]) -> None:
        candidates = payload.get("candidates")
        if candidates is not None and not isinstance(candidates, list):
            self.anomaly(frame, Code.BAD_CANDIDATES, f"candidates is {short(candidates)}")
            candidates = None
        finishes: list[tuple[int, Any]] = []
        for pos, cand in enumerate(candidates or []):
            if not isinstance(cand, dict):
                self.anomaly(frame, Code.BAD_CANDIDATE, f"candidate {pos} is {short(cand)}")
                continue
            index = int_or_none(cand.get("index", pos))  # Vertex omits index: the position stands in
            if index is None:  # (present but not an integer: whose candidate is unknown)
                self.anomaly(frame, Code.BAD_INDEX, f"candidate {pos} has index "
                                                 f"{short(cand.get('index'))}")
            c = pos if index is None else index
            state = self._cands.setdefault(c, _Candidate())
            content = cand.get("content")
            parts = content.get("parts") if isinstance(content, dict) else None
            if (content is not None and not isinstance(content, dict)) or \
                    (parts is not None and not isinstance(parts, list)):
                # (said, not dropped without a word with the piece it carried)
                self.anomaly(frame, Code.BAD_PART, f"candidate {pos}: content or parts of the wrong "
                                                f"type ({short(content)})")
            for part in parts if isinstance(parts, list) else ():
                self._part(frame, c, state, part)
            if cand.get("finishReason") is not None:
                finishes.append((c, cand["finishReason"]))
        usage = payload.get("usageMetadata")
        if isinstance(usage, dict) and usage != self._last_usage:
            self._last_usage = usage
            self.emit(UsageReported(frame.index, usage))
        feedback = payload.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason") is not None \
                and not candidates:
            self._blocked(frame, feedback)
        for c, reason in finishes:
            self._finish(frame, c, reason)
        if finishes and all(cand.finished for cand in self._cands.values()):
            self.end_turn(frame, f"finishReason {short(finishes[-1][1], 40)}")

    def _blocked(self, frame: Frame, feedback: dict[str, Any]) -> None:
        reason = str(feedback["blockReason"])
        detail = feedback.get("blockReasonMessage")
        message = f"prompt blocked: {reason}" + (f" ({detail})" if isinstance(detail, str) else "")
        self.emit(ProviderError(frame.index, message, reason))
        self.emit(StopReported(frame.index, reason, cut=False, failed=True))
        self.end_turn(frame, f"promptFeedback.blockReason {short(reason, 40)}")

    def _finish(self, frame: Frame, c: int, raw: Any) -> None:
        state = self._cands[c]
        if state.open is not None:
            self._close(frame, state, missing="finishReason")
        state.finished = True
        reason = raw if isinstance(raw, str) else short(raw)
        verdict = SPEC.classify(reason)
        if verdict is None:
            self.anomaly(frame, Code.UNKNOWN_FINISH_REASON,
                         f"finishReason {short(reason)} is not documented; treated as failed")
            verdict = UNKNOWN_STOP
        self.emit(StopReported(frame.index, reason, cut=verdict.cut, failed=verdict.failed))

    # -- parts ---------------------------------------------------------------------------

    def _part(self, frame: Frame, c: int, state: _Candidate, part: Any) -> None:
        if not isinstance(part, dict):
            self.anomaly(frame, Code.BAD_PART, f"part is {short(part)}")
            return
        if "functionCall" in part:
            self._function_call(frame, c, state, part["functionCall"])
            return
        text = part.get("text")
        if isinstance(text, str):
            if text:
                channel = "reasoning" if part.get("thought") is True else "text"
                self.emit(TextAppended(frame.index, channel, text))
            return
        if text is not None:
            self.anomaly(frame, Code.BAD_TEXT, f"part text is not a string: {short(text)}")
            return
        kinds = sorted(set(part) - _QUIET_PART_KEYS)
        if kinds:
            self.anomaly(frame, Code.UNHANDLED_PART, f"part {short(kinds)} is not shown")

    def _function_call(self, frame: Frame, c: int, state: _Candidate, fc: Any) -> None:
        if not isinstance(fc, dict):
            self.anomaly(frame, Code.BAD_FUNCTION_CALL, f"functionCall is {short(fc)}")
            return
        name, pieces = fc.get("name"), fc.get("partialArgs")
        if name is not None:
            if state.open is not None:  # a new name starts a new call (§4b.2, Vertex item 5)
                self._close(frame, state, missing="a new call")
            key, late = self._open(frame, c, state, fc, name)
            if fc.get("willContinue") is True or pieces is not None:
                args = fc.get("args")  # not seen on the wire; kept as the base for the pieces
                state.open = _Streamed(key, dict(args) if isinstance(args, dict) else {},
                                       fc.get("willContinue") is True, late)
                if pieces is not None:
                    self._pieces(frame, state.open, pieces)
            else:
                self._complete(frame, key, fc, late)
        elif pieces is not None:
            if state.open is None:
                key, late = self._open(frame, c, state, fc, None)
                self.anomaly(frame, Code.PIECE_FOR_UNKNOWN_CALL,
                             "partialArgs with no open call; kept in an anonymous call", key=key)
                state.open = _Streamed(key, {}, late=late)
            state.open.more = fc.get("willContinue") is True
            self._pieces(frame, state.open, pieces)
        elif "args" in fc:
            key, late = self._open(frame, c, state, fc, None)
            self.anomaly(frame, Code.CALL_WITHOUT_NAME, "functionCall with args but no name", key=key)
            self._complete(frame, key, fc, late)
        elif state.open is not None:
            self._close(frame, state, missing=None)  # the empty {"functionCall":{}} terminator
        else:
            self.anomaly(frame, Code.TERMINATOR_WITHOUT_CALL,
                         "empty functionCall part with no streamed call open")

    def _open(self, frame: Frame, c: int, state: _Candidate, fc: dict[str, Any],
              name: Any) -> tuple[str, str | None]:
        """Open a call: its key, and why it is not whole when its candidate had finished (its
        finishReason vouched for the calls before it only), else None."""
        key = f"call:{state.calls}" if c == 0 else f"cand{c}/call:{state.calls}"
        state.calls += 1
        call_id = fc.get("id")
        if name is not None and not isinstance(name, str):
            name = short(name)
        self.emit(CallOpened(frame.index, key, name=name,
                             id=call_id if isinstance(call_id, str) else None))
        late = None
        if state.finished:
            late = f"{key} came after candidate {c}'s finishReason"
            self.anomaly(frame, Code.CALL_AFTER_FINISH, late, key=key)
        return key, late

    def _complete(self, frame: Frame, key: str, fc: dict[str, Any], late: str | None) -> None:
        """A whole call in one part: the object is serialized, keys in the order received."""
        args = fc.get("args")
        if args is None:  # {"name": ...} alone is how a no-argument call is sent
            args = {}
        if not isinstance(args, dict):
            self.anomaly(frame, Code.ARGS_NOT_OBJECT, f"args is {short(args)}", key=key)
        text, parsed = self._whole(frame, key, args)
        if text is not None:
            self.emit(ArgumentsSet(frame.index, key, text, "serialized",
                                   None if parsed is None else Handover(parsed)))
            self.close_call(frame, key, late)

    def _close(self, frame: Frame, state: _Candidate, missing: str | None) -> None:
        call, state.open = state.open, None
        if call is None:
            return
        if missing is not None:
            # (one real recording ends a whole call so: not a cut by itself)
            self.anomaly(frame, Code.MISSING_CALL_TERMINATOR,
                         f"streamed call closed by {missing}, without an empty functionCall",
                         key=call.key)
        open_string = unfinished(call.root)
        cut = call.late
        if open_string is not None:
            cut = (f"the string at {short(open_string, 60)} never ended (its last piece said "
                   f"willContinue) when {missing or 'the terminator'} closed the call")
            self.anomaly(frame, Code.STRING_NOT_ENDED, cut, key=call.key)
        elif missing is not None and call.more:
            cut = f"the call's last part said willContinue (more to come) when {missing} closed it"
            self.anomaly(frame, Code.CALL_NOT_ENDED, cut, key=call.key)
        text = self._dump(frame, call.key, call.root)
        if text is not None:
            self.emit(ArgumentsSet(frame.index, call.key, text, "assembled"))
            self.close_call(frame, call.key, cut)

    def _dump(self, frame: Frame | None, key: str, value: Any) -> str | None:
        # None leaves the call without text and unclosed, so the gate can never run it.
        return self.serialized(frame, key, plain(value))

    def _whole(self, frame: Frame, key: str, args: Any) -> tuple[str | None, Any]:
        """:meth:`_dump` of a whole call's ``args`` (parsed values: nothing to make plain), and
        ``args`` itself when the text is orjson's serialization of an object or array (see
        :attr:`.ArgumentsSet.parsed`), else None. When the frame's own text holds those very
        bytes just after the ``"args":`` key (a compact payload, the usual one), the text is
        cut from there: the same string, without decoding a megabyte of non-ASCII text again."""
        try:
            encoded = orjson.dumps(args)
        except (orjson.JSONEncodeError, TypeError):
            # (the fallback and the anomaly are there; its text is not orjson's)
            return self.serialized(frame, key, args), None
        parsed = args if type(args) is dict or type(args) is list else None
        if len(encoded) < _CUT_FROM or encoded.isascii():
            return encoded.decode(), parsed
        data = frame.data
        try:
            raw = data.encode()  # (cheap: orjson's parse of the payload left its UTF-8 cached)
        except UnicodeEncodeError:
            return encoded.decode(), parsed
        at = raw.find(b'"args":') + 7
        if at < 7 or not raw.startswith(encoded, at):
            return encoded.decode(), parsed
        # Equal bytes at a character boundary (both start with an ASCII byte and are whole
        # UTF-8): the characters between are the same string.
        start = len(raw[:at].decode())
        return data[start:len(data) - len(raw[at + len(encoded):].decode())], parsed

    # -- Vertex partialArgs --------------------------------------------------------------

    def _pieces(self, frame: Frame, call: _Streamed, pieces: Any) -> None:
        if not isinstance(pieces, list):
            self.anomaly(frame, Code.BAD_PARTIAL_ARGS, f"partialArgs is {short(pieces)}",
                         key=call.key)
            return
        for piece in pieces:
            found = [k for k in _VALUE_TYPES if isinstance(piece, dict) and k in piece]
            path = piece.get("jsonPath") if isinstance(piece, dict) else None
            if not found or not isinstance(path, str):
                self.anomaly(frame, Code.BAD_PIECE, f"piece {short(piece)} has no jsonPath or value",
                             key=call.key)
                continue
            kind = found[0]
            if len(found) > 1:
                self.anomaly(frame, Code.AMBIGUOUS_PIECE, f"piece has {found}; {kind} used",
                             key=call.key)
            value = None if kind == "nullValue" else piece[kind]
            types = _VALUE_TYPES[kind]
            if types and (not isinstance(value, types)
                          or (kind == "numberValue" and isinstance(value, bool))):
                self.anomaly(frame, Code.BAD_PIECE_VALUE, f"{kind} is {short(value)}", key=call.key)
            will = piece.get("willContinue") is True
            self.emit(ArgumentPiece(frame.index, call.key, path, value, will))
            try:
                placed = place(call.root, parse_json_path(path), value,
                               is_str=kind == "stringValue" and isinstance(value, str), will=will)
            except BadPath as exc:
                self.anomaly(frame, Code.BAD_JSON_PATH, f"{short(path, 60)}: {exc}", key=call.key)
                continue
            if placed in _PLACEMENT_ANOMALIES:
                code, message = _PLACEMENT_ANOMALIES[placed]
                self.anomaly(frame, code, message, key=call.key)

    handlers: ClassVar[dict[str, Handler]] = {"chunk": _on_chunk, "error": _on_error}
