"""Protocol readers, one module per provider, all behind :class:`ProtocolReader`; each
protocol declared once by a :class:`~.spec.ProtocolSpec` in :mod:`.specs`."""

from __future__ import annotations

from ..errors import CallscopeError
from .base import ProtocolReader
from .budget import TokenBudget
from .spec import ProtocolSpec, StopVerdict
from .specs import DETECTION_ORDER, REGISTERED

__all__ = ["DETECTION", "PROTOCOLS", "SPECS", "ProtocolReader", "ProtocolSpec", "StopVerdict",
           "UnknownProtocol", "budget_of", "reader_for", "spec_for"]

SPECS: dict[str, ProtocolSpec] = {spec.name: spec for spec in REGISTERED}
"""name -> spec. Readers are imported lazily, so one reader's import cost is not everyone's."""

DETECTION: tuple[ProtocolSpec, ...] = tuple(SPECS[name] for name in DETECTION_ORDER)
"""The specs in the order detection asks them."""

PROTOCOLS = (*SPECS, "unknown")


class UnknownProtocol(CallscopeError):
    pass


def spec_for(protocol: str) -> ProtocolSpec:
    """The spec of a registered protocol (``unknown`` has none)."""
    try:
        return SPECS[protocol]
    except KeyError:
        raise UnknownProtocol(
            f"unknown protocol {protocol!r} (one of: {', '.join(PROTOCOLS)})") from None


def budget_of(protocol: str) -> TokenBudget | None:
    """The output-token budget a protocol declares (None: ``unknown``, or none declared)."""
    spec = SPECS.get(protocol)
    return spec.token_budget if spec is not None else None


def reader_for(protocol: str) -> ProtocolReader | None:
    """A fresh reader for a protocol name; None for ``unknown`` (frames only)."""
    if protocol == "unknown":
        return None
    return spec_for(protocol).new_reader()
