"""The call events every protocol reader produces: one vocabulary for five wire formats.

Protocol readers map their provider's events onto these immutable records (frozen msgspec structs,
and one named tuple for the commonest, :class:`ArgumentsAppended`); everything after
them (call buffers, draft status, the gate, the timeline, the panes) is shared. ``frame`` is the
index of the SSE frame that carried the fact, or None for facts established at end of stream.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from msgspec import Struct, field
from msgspec.structs import force_setattr

from .gate.codes import Code

TextOrigin = Literal["raw", "serialized", "assembled"]
"""How a call's argument text was formed.

``raw``: the provider sent JSON text fragments, concatenated byte for byte.
``serialized``: the provider sent a JSON object (Gemini); the text is its compact serialization,
keys in the order received.
``assembled``: Vertex ``partialArgs`` pieces placed by ``jsonPath``, serialized when the call
closed (or when the stream ended).
"""


class CallOpened(Struct, frozen=True):
    """A call began: the provider announced it, under the key its deltas will name."""

    frame: int | None
    key: str
    """The key the protocol uses for this call's deltas (e.g. ``item:fc_…``, ``block:1``)."""
    id: str | None = None
    call_id: str | None = None
    name: str | None = None
    kind: str = "function"
    """``function``, or ``server_tool`` for calls the provider runs itself."""


class ArgumentsAppended(NamedTuple):
    """A fragment of argument text. A named tuple, unlike the other events: nearly every event
    of a tool-call stream is one, and a tuple of strings and ints is unpacked where it is read
    and is not tracked by the garbage collector once seen."""

    frame: int | None
    key: str
    fragment: str


class Handover:
    """A value handed over once: the first :meth:`take` has it, and it is let go, so an event
    the timeline keeps for its lifetime does not keep a megabyte object it carried to the state."""

    __slots__ = ("_value",)

    def __init__(self, value: Any) -> None:
        self._value = value

    def take(self) -> Any:
        value, self._value = self._value, None
        return value


class ArgumentsSet(Struct, frozen=True):
    """The whole argument text, for protocols that send objects rather than text."""

    frame: int | None
    key: str
    text: str
    origin: TextOrigin = "serialized"
    parsed: Handover | None = None
    """The object or array ``text`` is orjson's serialization of, when the reader made it so
    (then it is also exactly ``text``'s parse, and holds no key twice), else None: the draft
    checker and the gate take it rather than parse and re-serialize a megabyte again. Taken
    once, by the turn state that applies the event (an event applied again parses its text)."""

    # ``parsed`` is a way of carrying ``text``, not part of the event: two events with the same
    # text are equal whether or not a parse travels with either.
    def __eq__(self, other: object) -> bool:
        if type(other) is not ArgumentsSet:
            return NotImplemented
        return ((self.frame, self.key, self.text, self.origin)
                == (other.frame, other.key, other.text, other.origin))

    def __hash__(self) -> int:
        return hash((self.frame, self.key, self.text, self.origin))


class ArgumentPiece(Struct, frozen=True):
    """A Vertex ``partialArgs`` piece: a value (or a string fragment) at a JSON path."""

    frame: int | None
    key: str
    path: str
    value: Any
    will_continue: bool


class CallIdentified(Struct, frozen=True):
    """The provider named an open call again (a gateway repeating id and name on every chunk, a
    legacy delta carrying the name, a final response). Values the call lacked are filled in; a
    value that differs from the one it has is the ``identity_changed`` dispute."""

    frame: int | None
    key: str
    id: str | None = None
    call_id: str | None = None
    name: str | None = None


class CallClosed(Struct, frozen=True):
    """The provider closed the call: it vouches the arguments are whole."""

    frame: int | None
    key: str


class FinalCopy(Struct, frozen=True):
    """The provider's own copy of a call's whole argument text (a done event, the final
    response). Checked against the fragments; with no fragments at all, it is the text."""

    frame: int | None
    key: str
    arguments: str


class CallCut(Struct, frozen=True):
    """The call ends without the provider vouching it is whole: the stream ended before its
    close, the provider marked it incomplete, a streamed string never ended, or another message
    replaced its own. The gate refuses it as truncated (rule ``call-cut``)."""

    frame: int | None
    key: str
    why: str


class TextAppended(Struct, frozen=True):
    """Assistant text, reasoning or refusal text, kept so the panes can show the whole turn."""

    frame: int | None
    channel: str
    text: str


class StopReported(Struct, frozen=True):
    """The provider said why generation stopped; the turn may still need its terminal event."""

    frame: int | None
    reason: str
    cut: bool
    """The provider says the output was cut (length, max_tokens, incomplete, MAX_TOKENS)."""
    failed: bool = False
    """The provider reports a failure or refusal of the turn."""


class TurnEnded(Struct, frozen=True):
    """The terminal signal: the provider proved the turn is over."""

    frame: int | None
    signal: str


class ProviderError(Struct, frozen=True):
    """The provider reported an error in the stream (an error event or an error body)."""

    frame: int | None
    message: str
    code: str | None = None


class UsageReported(Struct, frozen=True):
    """The provider's token counts, as it sent them."""

    frame: int | None
    usage: dict[str, Any] = field(default_factory=dict)
    limit: int | None = None
    """The output-token limit the stream says applied, where it echoes the request's settings
    (Responses' response object holds ``max_output_tokens``); None where it does not say."""


MESSAGE_LIMIT = 300


class Anomaly(Struct, frozen=True):
    """Something a careful reader should see: never a crash, never silence.

    Messages quote untrusted values, so every message is made one bounded line here, in the one
    place every anomaly passes through."""

    frame: int | None
    code: Code
    """A declared code (:mod:`.gate.codes`): its scope and effect are the registry's."""
    message: str
    key: str | None = None

    def __post_init__(self) -> None:
        if type(self.code) is not Code:  # an undeclared code fails here, where it is raised
            force_setattr(self, "code", Code(self.code))  # type: ignore[call-arg]
        text = self.message.replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\r")
        if len(text) > MESSAGE_LIMIT:
            text = text[: MESSAGE_LIMIT - 1] + "…"
        if text != self.message:
            force_setattr(self, "message", text)


CallEvent = (
    CallOpened | CallIdentified | ArgumentsAppended | ArgumentsSet | ArgumentPiece | CallClosed
    | FinalCopy | CallCut | TextAppended | StopReported | TurnEnded | ProviderError
    | UsageReported | Anomaly
)


CallChange = (CallOpened | CallIdentified | ArgumentsAppended | ArgumentsSet | ArgumentPiece
              | CallClosed | FinalCopy | CallCut)
CALL_CHANGES = (CallOpened, CallIdentified, ArgumentsAppended, ArgumentsSet, ArgumentPiece,
                CallClosed, FinalCopy, CallCut)
"""The events that open, fill or close a call."""


def event_fields(event: CallEvent) -> tuple[str, ...]:
    """The field names of any call event (named tuple or struct), in order."""
    if isinstance(event, ArgumentsAppended):
        return event._fields
    return event.__struct_fields__
