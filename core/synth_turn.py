"""The turn description for the stream synthesizer: what a synthetic model turn holds.

A :class:`Turn` lists what the model produced (text, reasoning, tool calls whose arguments are
JSON *text*, possibly invalid), how it stopped, how its text is fragmented and where the
connection is cut. Plain frozen data; :mod:`.synth_wire` encodes it, :mod:`.synth` is the public
API and re-exports every name here.
"""

from __future__ import annotations

from typing import Any, Literal

from msgspec import Struct

from .providers import SPECS


class Text(Struct, frozen=True):
    text: str
    channel: Literal["text", "reasoning"] = "text"


class ToolCall(Struct, frozen=True):
    name: str
    arguments: str
    """The argument JSON text exactly as the model writes it (it may be invalid or cut)."""
    closed: bool = True
    """False: the provider never closes this call (output cut by the limit, or an error)."""


Item = Text | ToolCall


class Stop(Struct, frozen=True):
    kind: Literal["normal", "length", "error"] = "normal"
    message: str | None = None
    """For ``error``: the provider's message (None: a typical one for the protocol)."""
    code: str | None = None


class Fragmenting(Struct, frozen=True):
    """Fragment sizes in characters, drawn uniformly in ``[low, high]``."""

    low: int = 1
    high: int = 8

    def __post_init__(self) -> None:
        if not 1 <= self.low <= self.high:
            raise ValueError(f"fragment sizes need 1 <= low <= high, not {self.low}..{self.high}")


REALISTIC = Fragmenting(1, 8)
"""What models send: a token or a few per delta."""
COARSE = Fragmenting(32, 48)


class Cut(Struct, frozen=True):
    """The connection drops inside the frame carrying call ``item``'s fragment that starts at
    character ``at`` of its arguments; everything before that frame was received."""

    item: int
    at: int


class Turn(Struct, frozen=True):
    items: tuple[Item, ...]
    stop: Stop = Stop()
    fragmenting: Fragmenting = REALISTIC
    cut: Cut | None = None
    model: str | None = None
    tools: tuple[dict[str, Any], ...] = ()
    """Provider-format tool definitions, echoed where the protocol echoes them."""
    breaks: tuple[tuple[int, int], ...] = ()
    """(item, character offset): extra fragment boundaries, so that a complete turn can carry
    exactly the fragments of a cut one."""
    output_tokens: int | None = None
    """The output tokens the usage reports; None: about one per four characters of output. A
    turn the token limit cut reports the limit, as a provider does."""


NO_ARGUMENTS: dict[str, str] = {name: spec.synthetic.no_arguments for name, spec in SPECS.items()}
"""What a call of a tool without parameters carries, per protocol: Anthropic streams one empty
partial_json, Gemini sends no args at all; OpenAI sends "{}" (each spec's ``synthetic``)."""

MODELS: dict[str, str] = {name: spec.synthetic.model for name, spec in SPECS.items()}
"""The model a synthetic turn names when it names none, per protocol."""
