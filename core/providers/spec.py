"""A protocol as one unit: :class:`ProtocolSpec`, registered once in :mod:`.specs`.

A spec says everything the rest of callscope needs to know about a protocol without importing
its reader: its name, where its reader class lives (imported on first use, so one reader's
import cost is not everyone's), how detection recognises one of its frames, how its stop
reasons classify, whether empty argument text means ``{}``, the emulator's endpoint, error
body and streaming switch, and the live client's request shape. Detection (:mod:`..detect`),
the reader registry (:mod:`.`), the emulator (``net/serve.py``), the live client
(``net/live.py``) and the conformance suite (``tests/test_conformance.py``) all read it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import TYPE_CHECKING, Any, NamedTuple

from msgspec import Struct

from ..frame import Frame
from .budget import TokenBudget

if TYPE_CHECKING:
    from .base import ProtocolReader


class StopVerdict(NamedTuple):
    """What one stop reason says about the turn, the same shape for every protocol."""

    cut: bool
    """The output was cut (a token limit): the gate refuses every call (rule ``stop-cut``)."""
    failed: bool
    """The provider refused or failed the turn (rule ``failed``)."""
    terminal: bool = True
    """Whether the reason ends the turn (Interactions' ``requires_continuation`` does not)."""


UNKNOWN_STOP = StopVerdict(cut=False, failed=True)
"""An undocumented stop reason is not known to be a success: every reader treats it as failed."""

Recogniser = Callable[[Frame, "dict[str, Any] | None"], bool]
"""Whether a frame belongs to the protocol. Detection asks twice: first with the frame alone
(payload None: the ``event:`` field may tell without parsing), then with the parsed object."""


class LiveShape(Struct, frozen=True):
    """How ``callscope live`` asks the provider for a stream (data only: ``net/live.py`` reads
    the environment and sends the request)."""

    key_env: tuple[str, ...]
    """The API key variables, in the order tried."""
    base_env: str
    """The base URL variable (the one the official SDK reads)."""
    default_base: str
    path: str
    """Appended to the base URL; ``{model}`` is replaced."""
    auth: Callable[[str], dict[str, str]]
    """The key -> the authentication headers."""
    body: Callable[[str, str, int], dict[str, Any]]
    """(model, prompt, max_tokens) -> the request body, before ``tools``."""
    tool: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]
    """(``{name, description?}``, JSON Schema) -> one tool definition in the provider's shape."""
    tool_group: str | None = None
    """When set, the converted tools go together, after any others, in one entry under this
    key (Gemini's ``functionDeclarations``)."""
    system: Callable[[dict[str, Any], str], None] | None = None
    """Puts a system prompt into a body (``live --system``); None: not offered for it."""
    tool_choice: Callable[[str], tuple[str, Any]] | None = None
    """``auto``, ``none``, ``required`` or a tool's name -> (body member, value), in the
    provider's words (``live --tool-choice``); None: not offered for it."""


def bearer(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


def function_tool(plain: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """The Responses (and Interactions) shape: ``{"type": "function", name, ..., parameters}``."""
    return {"type": "function", **plain, "parameters": schema}


def input_body(model: str, prompt: str, max_tokens: int) -> dict[str, Any]:
    """The Responses (and Interactions) body: the prompt as ``input``."""
    return {"model": model, "input": prompt, "stream": True}


class Synthetic(Struct, frozen=True):
    """How the stream synthesizer (:mod:`core.synth`) writes the protocol."""

    encoder: str
    """``module:function`` of the encoder, the module relative to ``core`` (imported on use):
    a function over a :class:`core.synth_context.Context`."""
    eol: bytes
    """The line end of its frames (Google's are CRLF)."""
    model: str
    """The model a synthetic turn names when it names none."""
    no_arguments: str
    """What a call of a tool without parameters carries on the wire ("{}", or nothing)."""


class ProtocolSpec(Struct, frozen=True):
    """One protocol, declared once (see docs/adding-a-protocol.md)."""

    name: str
    """The protocol's name: ``--protocol``, session headers, :data:`~core.providers.PROTOCOLS`."""
    reader: str
    """``module:Class`` of the reader, the module relative to ``core.providers``; imported on
    first use only."""
    recognise: Recogniser
    stop_reasons: Mapping[str, StopVerdict]
    """The stop-reason classification, one :class:`StopVerdict` per documented reason: the
    table the reader classifies by (through :meth:`classify`)."""
    cut_reasons: frozenset[str]
    """The documented reasons that mean "the output was cut" (checked against the table)."""
    empty_arguments_mean_empty_object: bool
    """Whether empty argument text documents "no arguments" (Anthropic streams one empty
    ``partial_json``); otherwise empty text is invalid JSON. The reader says the same."""
    route: str
    """The emulator's endpoint: a regular expression matched against the end of a path."""
    error_body: Callable[[int], dict[str, Any]]
    """The JSON body the emulator answers an HTTP error status with, as the provider does."""
    live: LiveShape
    synthetic: Synthetic
    framing: str = "sse"
    """How the stream is cut into frames: a key of :data:`core.framing.FRAMINGS`."""
    stream_query: tuple[str, str] | None = None
    """How a request asks for a stream when not by ``"stream": true`` in its body: a query
    parameter and its value (Gemini's ``?alt=sse``)."""
    stream_default: bool = False
    """Whether a request that says nothing of ``"stream"`` gets a stream (Ollama streams unless
    told ``"stream": false``; Bedrock's ``converse-stream`` route always streams)."""
    content_type: str = "text/event-stream"
    """The content type of the stream the emulator answers with."""
    error_headers: Callable[[int, dict[str, Any]], list[tuple[str, str]]] = lambda status, body: []
    """(status, the body :attr:`error_body` made) -> the headers the provider sends with that
    error (request id, ``retry-after``, ``x-should-retry``: see :mod:`.http_errors`)."""
    token_budget: TokenBudget | None = None
    """Where a request limits the output tokens and the usage counts them (rule
    ``tokens-spent``); None: the protocol reports no count the gate can hold to a limit."""

    def reader_class(self) -> type[ProtocolReader]:
        """The reader class, imported now (and cached by the import system)."""
        module, _, cls = self.reader.partition(":")
        reader: type[ProtocolReader] = getattr(import_module(f".{module}", __package__), cls)
        return reader

    def new_reader(self) -> ProtocolReader:
        """A fresh reader for one stream."""
        return self.reader_class()()

    def encoder(self) -> Callable[[Any], None]:
        """The synthetic encoder, imported now."""
        module, _, name = self.synthetic.encoder.partition(":")
        encode: Callable[[Any], None] = getattr(import_module(f"..{module}", __package__), name)
        return encode

    def classify(self, reason: str) -> StopVerdict | None:
        """The verdict of a documented stop reason; None for one the protocol does not document
        (which the readers report and treat as :data:`UNKNOWN_STOP`)."""
        return self.stop_reasons.get(reason)


def payload_type(payload: dict[str, Any] | None) -> str | None:
    """A payload's ``type`` when it is a string (untrusted: a list or object there must not
    break a lookup)."""
    kind = payload.get("type") if payload is not None else None
    return kind if isinstance(kind, str) else None


OK, CUT, FAILED = StopVerdict(False, False), StopVerdict(True, False), StopVerdict(False, True)
"""The three verdicts nearly every stop reason has (the table entries, in short)."""
