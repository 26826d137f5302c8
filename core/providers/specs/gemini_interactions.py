"""The Gemini Interactions protocol (PROTOCOLS.md §4a): its spec; the reader is
:mod:`..gemini_interactions`."""

from __future__ import annotations

from typing import Any

from ...frame import Frame
from ..spec import ProtocolSpec, StopVerdict
from .gemini_generate import error_body


def recognise(frame: Frame, payload: dict[str, Any] | None) -> bool:
    """Every event carries ``event_type`` (asked first: nothing else does)."""
    return payload is not None and "event_type" in payload


def stop_reasons() -> dict[str, StopVerdict]:
    """``interaction.status`` on ``interaction.completed``."""
    from ..gemini_interactions import STATUSES

    return {status: StopVerdict(*verdict) for status, verdict in STATUSES.items()}


SPEC = ProtocolSpec(
    name="gemini-interactions",
    reader="gemini_interactions:GeminiInteractionsReader",
    recognise=recognise,
    stop_reasons=stop_reasons,
    cut_reasons=frozenset({"incomplete", "budget_exceeded"}),
    empty_arguments_mean_empty_object=True,
    route=r"/v1(?:alpha|beta)?/interactions\Z",
    error_body=error_body,
)
