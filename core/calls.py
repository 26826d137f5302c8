"""The turn a stream's call events build: the accumulator every protocol shares.

:class:`TurnState` applies call events in order: it opens calls, appends their fragments to
their :class:`~.call_buffer.CallBuffer`, closes them, and keeps what the turn as a whole has
established (its terminal signal, stop reasons, errors, usage, text, anomalies).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .call_buffer import CallBuffer
from .events import (
    CALL_CHANGES,
    Anomaly,
    ArgumentPiece,
    ArgumentsAppended,
    ArgumentsSet,
    CallChange,
    CallClosed,
    CallCut,
    CallEvent,
    CallIdentified,
    CallOpened,
    FinalCopy,
    ProviderError,
    StopReported,
    TextAppended,
    TurnEnded,
    UsageReported,
)
from .fork import forked, shallow_copy
from .fragments import FragmentCount, Fragments
from .gate.codes import Code, Effect
from .jsonprefix import Draft
from .limits import DEFAULT_LIMITS, Limits


@dataclass
class TurnState:
    """Everything the call events of one stream have established so far."""

    protocol: str
    calls: dict[str, CallBuffer] = field(default_factory=dict)
    terminal: TurnEnded | None = None
    stop: StopReported | None = None
    """The last stop reason reported."""
    cut_by: StopReported | None = None
    """The first stop report that said the output was cut. Kept when a later report says
    otherwise (another choice or candidate, a second message_delta): if the last report won, a
    cut or filtered turn would execute."""
    failed_by: StopReported | None = None
    """The first stop report that said generation failed (kept, as :attr:`cut_by` is)."""
    errors: list[ProviderError] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    echoed_limit: int | None = None
    """The output-token limit the stream itself said applied (:attr:`.UsageReported.limit`)."""
    anomalies: list[Anomaly] = field(default_factory=list)
    text: dict[str, list[str]] = field(default_factory=dict)
    limits: Limits = DEFAULT_LIMITS
    outcome_only: bool = False
    """Whether the turn keeps only what its outcome reads (``replay --summary``, the engine's
    one such setting): calls opened from then on keep their fragments' count and last draft
    status (:class:`.fragments.FragmentCount`, all the gate and the turn record read), not
    each fragment's frame and span (:class:`.fragments.Fragments`, what the views show), and
    decisions keep no parsed arguments (:meth:`.Decision.without_arguments`)."""
    halted: str | None = None
    """Why the engine stopped interpreting this turn (a limit), or None."""
    anomaly_counts: dict[str, int] = field(default_factory=dict)
    """Every anomaly seen, by code, including those past ``max_anomalies_per_code``."""
    text_chars: int = 0
    """Assistant text characters seen, including those past ``max_text_chars``."""
    dropped_last: bool = False
    """Whether the last event applied was not kept: an anomaly counted over its cap, a call
    event after the terminal signal (:meth:`apply` reports it instead), the event that crossed
    a limit (its ``limit_exceeded`` is kept) or any event after it (the turn is halted: the
    engine reads no further, so no step may say an event was taken)."""
    late: set[str] = field(default_factory=set)
    """Calls whose events came after the terminal signal (each reported once)."""
    orphans: dict[str, list[Anomaly]] = field(default_factory=dict)
    """Anomalies about a call reported before it was opened (up to the caps): it takes them
    when it is (so the gate sees them)."""
    disputes: dict[str, Anomaly] = field(default_factory=dict)
    """The first disputing anomaly of each call not opened yet (not capped)."""
    parse_held_by: str | None = field(default=None, repr=False, compare=False)
    """The key of the call whose whole-object text's parse is held for the gate
    (:meth:`CallBuffer.parsed`): the last one set, so a turn holds one parse beside the texts,
    as the gate does."""
    unreadable: Anomaly | None = None
    """The first anomaly whose declared effect is ``unreadable`` (not capped): the gate refuses
    every call of the turn."""

    @property
    def anomaly_total(self) -> int:
        return sum(self.anomaly_counts.values())

    def __deepcopy__(self, memo: dict[int, Any]) -> TurnState:
        """A fork (see :meth:`CallBuffer.__deepcopy__`): events and limits are immutable and
        shared; usage values are never mutated in place, only replaced."""
        twin = self._twin()
        twin.calls = {key: forked(call, memo) for key, call in self.calls.items()}
        return twin

    def fork_to_finish(self) -> TurnState:
        """A copy to finish once before this turn reads on (:meth:`CallBuffer.fork_to_finish`:
        the calls share their draft checkers)."""
        twin = self._twin()
        twin.calls = {key: call.fork_to_finish() for key, call in self.calls.items()}
        return twin

    def _twin(self) -> TurnState:
        """A copy whose containers are its own (their items shared), the calls' table aside."""
        twin = shallow_copy(self)
        twin.errors = list(self.errors)
        twin.usage = dict(self.usage)
        twin.anomalies = list(self.anomalies)
        twin.text = {channel: list(parts) for channel, parts in self.text.items()}
        twin.anomaly_counts = dict(self.anomaly_counts)
        twin.late = set(self.late)
        twin.orphans = {key: list(found) for key, found in self.orphans.items()}
        twin.disputes = dict(self.disputes)
        return twin

    def halt(self, frame: int | None, reason: str) -> Anomaly:
        """Stop interpreting at a limit; the gate refuses every call of a halted turn."""
        self.halted = self.halted or reason
        return Anomaly(frame, Code.LIMIT_EXCEEDED, reason)

    def record(self, anomaly: Anomaly) -> list[Anomaly]:
        """Keep an anomaly (on the turn and its call) unless its code is over the cap: then count
        it, and return the one ``anomalies_capped`` notice the first time. Returns what was kept."""
        code = anomaly.code
        seen = self.anomaly_counts.get(code, 0) + 1
        self.anomaly_counts[code] = seen
        # Routed by the declared effect, and marked whatever the cap: a dispute must reach its
        # call even after a thousand anomalies of its code.
        effect = code.effect
        if effect is Effect.DISPUTES and anomaly.key is not None:
            disputed = self.calls.get(anomaly.key)
            if disputed is None:
                self.disputes.setdefault(anomaly.key, anomaly)
            elif disputed.disputed is None:
                disputed.disputed = anomaly
        elif (effect is Effect.UNREADABLE or effect is Effect.DISPUTES) and self.unreadable is None:
            # (a dispute that names no call might concern any of them)
            self.unreadable = anomaly
        cap = self.limits.max_anomalies_per_code
        if seen <= cap:
            self.anomalies.append(anomaly)
            call = self.calls.get(anomaly.key) if anomaly.key is not None else None
            if call is not None:
                call.anomalies.append(anomaly)
            elif anomaly.key is not None:
                self.orphans.setdefault(anomaly.key, []).append(anomaly)
            return [anomaly]
        if seen == cap + 1:
            notice = Anomaly(anomaly.frame, Code.ANOMALIES_CAPPED,
                             f"more than {cap} {code} anomalies in this turn: the rest are "
                             "counted, not kept")
            self.anomaly_counts[Code.ANOMALIES_CAPPED] = self.anomaly_counts.get(Code.ANOMALIES_CAPPED, 0) + 1
            self.anomalies.append(notice)
            return [notice]
        return []

    @property
    def complete(self) -> bool:
        """The terminal signal arrived."""
        return self.terminal is not None

    @property
    def output_cut(self) -> bool:
        """A stop reason said the provider's output was cut (rule ``stop-cut``)."""
        return self.cut_by is not None

    @property
    def truncated(self) -> bool:
        """No terminal signal, or the provider says the output was cut."""
        return not self.complete or self.output_cut

    @property
    def failed(self) -> bool:
        return bool(self.errors) or self.failed_by is not None

    def append_hot(self, key: str, frame: int | None, fragment: str) -> Draft | None:
        """The fast path for the commonest event, a fragment for call ``key``: when the call is
        open, under its limit, and the fragment needs no anomaly, append it and return the draft
        status it leaves; otherwise do nothing and return None (:meth:`apply` must take it)."""
        if len(fragment) > self.hot_room(key):  # (-1: no room for even an empty one)
            return None
        return self.calls[key].append(frame, fragment)

    def hot_room(self, key: str) -> int:
        """:meth:`append_hot`'s question for a run of fragments for call ``key`` (the hot path
        reads several blocks at once): how many characters the call may still take on the
        fast path, -1 when it may take none (:meth:`apply` must take them)."""
        call = self.calls.get(key)
        if (call is None or call.closed or call.origin != "raw" or self.halted is not None
                or self.terminal is not None):
            return -1
        return self.limits.max_argument_chars - call.length

    def apply(self, event: CallEvent) -> list[Anomaly]:
        """Apply one event; return the anomalies the accumulator itself found."""
        found: list[Anomaly] = []
        self.dropped_last = False
        if self.halted is not None:
            self.dropped_last = True
            return found
        limit = self._over_limit(event)
        if limit is not None:
            self.dropped_last = True
            return self.record(self.halt(getattr(event, "frame", None), limit))
        ended = self.terminal.frame if self.terminal is not None else None
        if ended is not None and isinstance(event, CALL_CHANGES) and (
                (event.frame is not None and event.frame > ended) or event.key in self.late):
            # (a late call's events at the end of the stream, frame None, are late too)
            return self._after_terminal(event)
        match event:
            case CallOpened():
                self._open(event, found)
            case CallIdentified():
                self._identify(self._call_for(event.key, event.frame, found), event, found)
            case ArgumentsAppended():
                call = self._call_for(event.key, event.frame, found)
                if call.closed:
                    found.append(Anomaly(event.frame, Code.DELTA_AFTER_CLOSE,
                                         "arguments arrived after the call was closed", call.key))
                if call.origin != "raw":
                    found.append(Anomaly(event.frame, Code.MIXED_ARGUMENT_FORMS,
                                         "text fragments after a whole-object argument", call.key))
                    call.origin = "raw"
                call.append(event.frame, event.fragment)
            case ArgumentsSet():
                call = self._call_for(event.key, event.frame, found)
                if call.closed and event.text != call.text:
                    found.append(Anomaly(event.frame, Code.DELTA_AFTER_CLOSE,
                                         "arguments arrived after the call was closed", call.key))
                if call.origin == "raw" and call.length:
                    found.append(Anomaly(event.frame, Code.MIXED_ARGUMENT_FORMS,
                                         "a whole-object argument replaced text fragments", call.key))
                elif call.length and not call.closed and event.text != call.text:
                    found.append(Anomaly(event.frame, Code.ARGUMENTS_REPLACED,
                                         "a whole-object argument replaced a different one",
                                         call.key))
                call.replace(event.frame, event.text, event.origin,
                             None if event.parsed is None else event.parsed.take())
                held = self.parse_held_by
                if held is not None and held != call.key and held in self.calls:
                    self.calls[held].drop_read()
                self.parse_held_by = call.key
            case ArgumentPiece():
                self._call_for(event.key, event.frame, found).pieces.append(event)
            case CallClosed():
                call = self._call_for(event.key, event.frame, found)
                if call.closed:
                    found.append(Anomaly(event.frame, Code.CLOSED_TWICE, "the call was closed again",
                                         call.key))
                self._mark_closed(call, event.frame)
            case FinalCopy():
                self._final_copy(event, found)
            case CallCut():
                call = self._call_for(event.key, event.frame, found)
                call.cut_why = call.cut_why or event.why
                self._mark_closed(call, event.frame)
            case TurnEnded():
                self.terminal = event
            case StopReported():
                self.stop = event
                if event.cut and self.cut_by is None:
                    self.cut_by = event
                if event.failed and self.failed_by is None:
                    self.failed_by = event
            case ProviderError():
                self.errors.append(event)
            case UsageReported():
                self.usage.update(event.usage)
                if event.limit is not None:
                    self.echoed_limit = event.limit
            case TextAppended():
                self._text(event, found)
            case Anomaly():
                found.append(event)
        kept: list[Anomaly] = []
        for anomaly in found:
            kept += self.record(anomaly)
        if isinstance(event, Anomaly) and event not in kept:
            self.dropped_last = True
        return [a for a in kept if a is not event]

    def _after_terminal(self, event: CallChange) -> list[Anomaly]:
        """The turn ended at its terminal signal: a call event from a later frame is not read
        into it (a call opened there is never decided, let alone executed; a call decided at
        the terminal keeps the text it was decided on). Each call's first such event is
        reported; the frames keep every byte."""
        self.dropped_last = True
        if event.key in self.late:
            return []
        self.late.add(event.key)
        what = (f"call {event.key} ({event.name or 'no name'}) opened"
                if isinstance(event, CallOpened) else f"a change to call {event.key}")
        return self.record(Anomaly(event.frame, Code.CALL_AFTER_TERMINAL,
                                   f"{what} after the terminal signal (frame "
                                   f"{self.terminal.frame if self.terminal else None}): not part "
                                   "of the turn, not read (nor what follows for this call)",
                                   event.key))

    def _text(self, event: TextAppended, found: list[Anomaly]) -> None:
        cap = self.limits.max_text_chars
        before = self.text_chars
        self.text_chars += len(event.text)
        if self.text_chars <= cap:
            self.text.setdefault(event.channel, []).append(event.text)
        elif before <= cap:
            found.append(Anomaly(event.frame, Code.TEXT_CAPPED,
                                 f"assistant text longer than {cap} characters: the rest is "
                                 "counted, not kept (the frames hold it)"))

    def _over_limit(self, event: CallEvent) -> str | None:
        limits = self.limits
        if isinstance(event, CallOpened) and event.key not in self.calls:
            if len(self.calls) >= limits.max_calls:
                return f"more than {limits.max_calls} calls in one turn"
        elif isinstance(event, ArgumentsAppended | ArgumentsSet):
            call = self.calls.get(event.key)
            size = len(event.fragment if isinstance(event, ArgumentsAppended) else event.text)
            current = call.length if call and isinstance(event, ArgumentsAppended) else 0
            if current + size > limits.max_argument_chars:
                return f"arguments of {event.key} longer than {limits.max_argument_chars} characters"
        elif isinstance(event, FinalCopy):
            # (a final copy with no fragments becomes the call's text)
            if len(event.arguments) > limits.max_argument_chars:
                return f"arguments of {event.key} longer than {limits.max_argument_chars} characters"
        return None

    def _open(self, event: CallOpened, found: list[Anomaly]) -> None:
        call = self.calls.get(event.key)
        if call is None:
            call = self.calls[event.key] = CallBuffer(
                event.key, event.frame, event.id, event.call_id, event.name, event.kind,
                fragments=FragmentCount() if self.outcome_only else Fragments())
            call.anomalies.extend(self.orphans.pop(event.key, ()))
            call.disputed = self.disputes.pop(event.key, None)
        else:  # (a reader opens a key once; a hostile stream can make one open it again)
            self._identify(call, event, found)

    @staticmethod
    def _identify(call: CallBuffer, event: CallOpened | CallIdentified, found: list[Anomaly]) -> None:
        """Set what was missing, never concatenate, and say so when the identity changes."""
        for attr in ("id", "call_id", "name"):
            new, old = getattr(event, attr), getattr(call, attr)
            if new is None or new == old:
                continue
            if old is None:
                setattr(call, attr, new)
            else:
                found.append(Anomaly(event.frame, Code.IDENTITY_CHANGED,
                                     f"{attr} changed from {old!r} to {new!r}"[:160], call.key))

    def _call_for(self, key: str, frame: int | None, found: list[Anomaly]) -> CallBuffer:
        call = self.calls.get(key)
        if call is None:
            found.append(Anomaly(frame, Code.DELTA_FOR_UNKNOWN_CALL,
                                 f"arguments for {key}, which was never opened (kept)", key))
            call = self.calls[key] = CallBuffer(
                key, frame, fragments=FragmentCount() if self.outcome_only else Fragments())
            call.anomalies.extend(self.orphans.pop(key, ()))
            call.disputed = self.disputes.pop(key, None)
        return call

    @staticmethod
    def _mark_closed(call: CallBuffer, frame: int | None) -> None:
        call.closed = True
        call.closed_frame = frame if call.closed_frame is None else call.closed_frame

    def _final_copy(self, event: FinalCopy, found: list[Anomaly]) -> None:
        call = self._call_for(event.key, event.frame, found)
        if not call.fragments and call.origin == "raw":
            # No fragments is not a disagreement: the copy is the arguments.
            found.append(Anomaly(event.frame, Code.ARGUMENTS_ONLY_IN_FINAL_COPY,
                                 "no argument fragments were streamed; the final copy is the "
                                 "arguments", call.key))
            call.append(event.frame, event.arguments)
        elif event.arguments != call.text:
            found.append(Anomaly(event.frame, Code.FINAL_COPY_MISMATCH,
                                 "the provider's final copy of the arguments differs from the "
                                 "concatenated fragments", call.key))
