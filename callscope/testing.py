"""Put your own harness under test: every chunking and every cut of a recorded stream.

A harness is any callable fed a stream's byte chunks (an iterator of ``bytes``, as the network
delivered them) that returns what it executed, in order: ``(tool name, arguments)`` pairs (or
mappings with ``name`` and ``arguments``, or objects with those attributes). A harness that
raises executed nothing. Build a fresh accumulator inside the callable: it is called once per
variant of the stream.

    from callscope.testing import check_harness, assert_harness_safe

    report = check_harness(my_harness, "sessions/openai-chat/single_call.jsonl")
    print("\\n".join(report.lines()))
    assert_harness_safe(my_harness, "capture.sse")   # AssertionError naming the finding

Each finding names the first failing variant (a chunking, or a cut at byte K) and the session
file written to reproduce it: the variant's exact reads, ended as a cut where it was one, with
the tool definitions the comparison used. ``callscope FILE`` opens it in the debugger, stopped
where the harness went wrong; ``callscope replay FILE`` shows the gate's decisions for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from .core.session import Session
from .core.sweep import (
    EVERY_BYTE_UP_TO,
    WINDOW,
    Executed,
    Finding,
    Harness,
    SweepReport,
    Variant,
)
from .core.sweep_files import check_session, session_files

__all__ = ["EVERY_BYTE_UP_TO", "WINDOW", "Executed", "Finding", "Harness", "HarnessUnsafe",
           "SweepReport", "Variant", "assert_harness_safe", "bundled_sessions", "check_harness",
           "from_factory", "session_files"]

check_harness = check_session
"""Run a harness on every variant of one recorded stream: :func:`.core.sweep_files.check_session`."""


def from_factory(factory: Callable[[], Harness]) -> Harness:
    """A harness that builds a fresh one with ``factory()`` for every variant (a stateful
    accumulator class, an agent loop that must not carry state from one stream to the next)."""
    def harness(chunks: Iterator[bytes]) -> Iterable[object]:
        return factory()(chunks)

    return harness


class HarnessUnsafe(AssertionError):
    """A harness executed what the gate would not: the message holds the report."""

    def __init__(self, report: SweepReport) -> None:
        super().__init__("\n".join(report.lines()))
        self.report = report


def assert_harness_safe(harness: Harness, session: str | Path | Session,
                        **options: Any) -> SweepReport:
    """:func:`check_harness`, raising :class:`HarnessUnsafe` (an AssertionError whose message
    is the report, each finding with its reproduction) when there is a finding."""
    report = check_harness(harness, session, **options)
    if not report.ok:
        raise HarnessUnsafe(report)
    return report


def bundled_sessions(protocol: str | None = None) -> list[Path]:
    """The sessions callscope ships (constructed turns per protocol, and real recordings under
    ``fixtures/``); ``protocol`` keeps one protocol's constructed turns."""
    here = Path(__file__).resolve().parent / "sessions"
    return session_files(here / protocol if protocol else here)
