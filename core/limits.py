"""The engine's limits: stated once, enforced where the data arrives, overridable by flags.

Defaults sit far above real traffic (the largest argument in the benchmarks is 4 MB) and far
below what would exhaust memory. Past a limit on what a call depends on (frame, calls, argument
size) the engine stops interpreting, reports a ``limit_exceeded`` anomaly, and the gate refuses
every call of the turn as ``truncated`` (the turn was not read in full). Past a limit on what
only the reader sees (anomalies of one code, assistant text) the engine counts instead of
keeping, says so once, and reads on. The session file still holds every byte received.
"""

from __future__ import annotations

from msgspec import Struct

MiB = 1024 * 1024


class Limits(Struct, frozen=True):
    """The bounds the engine reads a stream within (the ``--max-*`` flags)."""

    max_block_bytes: int = 64 * MiB
    """One SSE block (a frame, its longest line included)."""
    max_calls: int = 10_000
    """Calls in one turn."""
    max_argument_chars: int = 64 * MiB
    """Argument text of one call."""
    max_undetected_frames: int = 1_000
    """Frames held while the protocol is still unknown; past this the stream is read as
    ``unknown`` (frames only) rather than held without bound."""
    max_session_bytes: int = 1024 * MiB
    """A session that ``check`` and the debugger hold in memory (``replay`` streams instead)."""
    max_argument_depth: int = 128
    """JSON nesting of one call's arguments: deeper arguments are refused as ``invalid_json``
    (they would otherwise exhaust the recursion of validators and serializers downstream)."""
    max_anomalies_per_code: int = 1_000
    """Anomalies of one code kept per turn. Past it they are counted, not kept (an 8-byte frame
    can cause a 200-byte anomaly: without a cap, hostile frames would multiply memory), and one
    ``anomalies_capped`` anomaly says so. Interpretation goes on: the bytes are all kept."""
    max_text_chars: int = 64 * MiB
    """Assistant text (all channels) kept per turn; past it, text is counted, not kept, with one
    ``text_capped`` anomaly. The frames still hold it, and calls are unaffected."""


DEFAULT_LIMITS = Limits()
