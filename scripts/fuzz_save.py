"""Faults while saving a session: the target is either untouched or complete, never half-written.

A drawn list of chunks is saved with one fault injected (an exception or an interrupt from the
chunk source at a drawn point, a chunk time that goes backwards, a header that cannot be
written, a failing fsync or rename), over a target that does or does not exist yet. When only
the final rename fails, every chunk has been written and synced: the partial file is kept, the
error names it, and it loads as the whole session.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import fuzz_oracle as oracle
from callscope.core.errors import CallscopeError
from callscope.core.session import Chunk, SessionHeader, StreamEnd, save_session
from hypothesis import strategies as st

FAULTS = ("none", "raise", "interrupt", "time_backwards", "bad_header", "fsync", "replace", "write")
ORIGINAL = b'{"callscope":"session","version":1}\n{"end":"clean"}\n'


class Boom(Exception):
    """The chunk source failed (a network error while recording, say)."""


@dataclass(frozen=True)
class SaveCase:
    chunks: tuple[tuple[float, bytes], ...]
    fault: str
    at: int
    existing: bool


@st.composite
def save_case(draw: Callable[..., Any]) -> SaveCase:
    gaps = draw(st.lists(st.floats(0, 5, allow_nan=False), max_size=8))
    times = [sum(gaps[:i + 1]) for i in range(len(gaps))]
    data = draw(st.lists(st.binary(max_size=64), min_size=len(times), max_size=len(times)))
    return SaveCase(tuple(zip(times, data, strict=True)), draw(st.sampled_from(FAULTS)),
                    draw(st.integers(0, 8)), draw(st.booleans()))


def check_save(case: SaveCase) -> None:
    stats = oracle.STATS["save"]
    stats["inputs"] += 1
    with tempfile.TemporaryDirectory() as tmp:
        target = os.path.join(tmp, "session.jsonl")
        if case.existing:
            Path(target).write_bytes(ORIGINAL)
        header = SessionHeader(source="fuzz", extra={"x": {1}} if case.fault == "bad_header" else {})
        chunks = [Chunk(t, data) for t, data in case.chunks]
        if case.fault == "time_backwards" and case.at < len(chunks):
            chunks.insert(case.at + 1, Chunk(chunks[case.at].t - 1.0, b"late"))

        def source() -> Iterator[Chunk]:
            for i, chunk in enumerate(chunks):
                if i == case.at and case.fault in ("raise", "interrupt"):
                    raise Boom("the source failed") if case.fault == "raise" else KeyboardInterrupt
                yield chunk

        patches = {"fsync": "os.fsync", "replace": "os.replace"}
        failure: BaseException | None = None
        try:
            with _patched(patches.get(case.fault), len(chunks) if case.fault == "write" else None):
                save_session(target, header, source(), StreamEnd("clean"))
        except (Boom, KeyboardInterrupt, CallscopeError, OSError) as exc:
            failure = exc
        leftovers = [n for n in os.listdir(tmp) if n != "session.jsonl"]
        if case.fault == "replace" and failure is not None:
            oracle.require(len(leftovers) == 1 and leftovers[0] in str(failure),
                           f"replace: the kept session is not named: {leftovers}, {failure}")
            _, kept = oracle.load(os.path.join(tmp, leftovers[0]))
            oracle.require([c.data for c in kept] == [c.data for c in chunks],
                           "replace: the kept session lost bytes")
        else:
            oracle.require(not leftovers, f"{case.fault}: files left behind: {leftovers}")
        expected_fail = _fails(case, len(case.chunks))
        oracle.require((failure is not None) == expected_fail,
                       f"fault {case.fault} at {case.at}: failure {failure!r}, expected {expected_fail}")
        if failure is not None:
            stats["faults"] += 1
            stats[f"fault:{case.fault}"] += 1
            if case.existing:
                oracle.require(Path(target).read_bytes() == ORIGINAL, "the original was changed")
            else:
                oracle.require(not os.path.exists(target), "a failed save created the target")
            return
        stats["saved"] += 1
        session, loaded = oracle.load(target)
        oracle.require([c.data for c in loaded] == [c.data for c in chunks], "saved bytes differ")
        oracle.require(session.end.kind == "clean", "the end was not saved")


def _fails(case: SaveCase, n: int) -> bool:
    if case.fault in ("raise", "interrupt", "time_backwards"):
        return case.at < n
    return case.fault != "none"


class _patched:
    """Make one os function fail, or make the file's write fail after ``lines`` lines."""

    def __init__(self, name: str | None, lines: int | None) -> None:
        self.name, self.lines = name, lines
        self.stack: list[Any] = []

    def __enter__(self) -> None:
        if self.name:
            patch = mock.patch(self.name, side_effect=OSError(28, "No space left on device"))
            self.stack.append(patch)
            patch.start()
        if self.lines is not None:
            real_fdopen = os.fdopen
            budget = [self.lines]

            def fdopen(fd: int, *args: Any, **kwargs: Any) -> Any:
                return _Full(real_fdopen(fd, *args, **kwargs), budget)
            full = mock.patch("os.fdopen", fdopen)
            self.stack.append(full)
            full.start()

    def __exit__(self, *exc: object) -> None:
        for patch in reversed(self.stack):
            patch.stop()


class _Full:
    """A file whose disk fills up after a number of writes."""

    def __init__(self, f: Any, budget: list[int]) -> None:
        self._f, self._budget = f, budget

    def write(self, data: bytes) -> int:
        if self._budget[0] <= 0:
            raise OSError(28, "No space left on device")
        self._budget[0] -= 1
        return int(self._f.write(data))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)
