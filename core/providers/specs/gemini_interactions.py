"""The Gemini Interactions protocol (PROTOCOLS.md §4a): its spec; the reader is
:mod:`..gemini_interactions`."""

from __future__ import annotations

from typing import Any

from ...frame import Frame
from ..budget import TokenBudget
from ..spec import CUT, FAILED, OK, LiveShape, ProtocolSpec, StopVerdict, Synthetic, function_tool, input_body
from .gemini_generate import GEMINI_BASE, GEMINI_BASE_ENV, GEMINI_KEYS, error_body, google_auth


def recognise(frame: Frame, payload: dict[str, Any] | None) -> bool:
    """Every event carries ``event_type`` (asked first: nothing else does)."""
    return payload is not None and "event_type" in payload


STOP_REASONS: dict[str, StopVerdict] = {
    # interaction.status on interaction.completed (SDK 3.6.1 status enum, PROTOCOLS.md §4a.2)
    "requires_action": OK,
    "completed": OK,
    "incomplete": CUT,  # e.g. max tokens (Vertex Status enum)
    "budget_exceeded": CUT,
    "failed": FAILED,
    "cancelled": FAILED,
    # The per-request decode limit: the output goes on in the next hop of the same stream.
    "requires_continuation": StopVerdict(cut=False, failed=False, terminal=False),
}


SPEC = ProtocolSpec(
    name="gemini-interactions",
    reader="gemini_interactions:GeminiInteractionsReader",
    recognise=recognise,
    stop_reasons=STOP_REASONS,
    cut_reasons=frozenset({"incomplete", "budget_exceeded"}),
    empty_arguments_mean_empty_object=True,
    route=r"/v1(?:alpha|beta)?/interactions\Z",
    error_body=error_body,
    live=LiveShape(GEMINI_KEYS, GEMINI_BASE_ENV, GEMINI_BASE, "/v1beta/interactions", google_auth,
                   input_body, function_tool),
    synthetic=Synthetic("synth_wire:encode_interactions", b"\n", "gemini-2.5-flash", ""),
    token_budget=TokenBudget(limits=(("generation_config", "max_output_tokens"),),
                             spent=(("total_output_tokens",), ("total_thought_tokens",))),
)
