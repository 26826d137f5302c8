"""``check``'s recorded real cuts (``check._recorded_cuts``) against the plain way: each cut
replayed from byte 0 by a fresh engine fed the recorded reads up to it."""

from __future__ import annotations

import pathlib
import random

import pytest
from callscope.core import check
from callscope.core.replay import Chunking, TimedBytes
from callscope.core.tools import ToolSet

ROOT = pathlib.Path(__file__).resolve().parent.parent
SESSIONS = sorted((ROOT / "sessions").rglob("*.jsonl"))
FIXTURES = sorted((ROOT / "tests" / "fixtures").rglob("*.sse"))[:12]


def _inputs() -> list[tuple[str, list[TimedBytes], str | None, ToolSet]]:
    from callscope.tui.cli import LoadedInput, toolset_for

    found = []
    for path in SESSIONS:
        loaded = LoadedInput(str(path))
        found.append((path.name, list(loaded.chunks()), loaded.protocol,
                      toolset_for(loaded, None)))
    for path in FIXTURES:  # (one read each as stored: cut into uneven reads, empty ones too)
        data, rng, chunks, at = path.read_bytes(), random.Random(path.name), [], 0
        while at < len(data):
            size = rng.choice((0, 1, 2, 7, 40, 300))
            chunks.append((None, data[at:at + size]))
            at += size
        found.append((path.name, chunks, None, ToolSet()))
    return found


def _cuts(chunks: list[TimedBytes], rng: random.Random) -> list[int]:
    """Both sides of read boundaries, and offsets inside reads, at most 40 of them."""
    size = sum(len(c) for _, c in chunks)
    ends, at = [], 0
    for _, piece in chunks:
        at += len(piece)
        ends += [at - 1, at, at + 1]
    picked = {k for k in ends if 0 <= k < size}
    picked = set(rng.sample(sorted(picked), min(len(picked), 30)))
    picked.update(rng.randint(0, max(size - 1, 0)) for _ in range(10))
    return sorted(k for k in picked if 0 <= k < size)


@pytest.mark.parametrize("fork_after", [0.0, check.FORK_AFTER])
@pytest.mark.parametrize(("name", "chunks", "protocol", "tools"), _inputs(),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_recorded_cuts_are_the_cuts_replayed_from_zero(name, chunks, protocol, tools, fork_after,
                                                       monkeypatch):
    monkeypatch.setattr(check, "FORK_AFTER", fork_after)  # 0: every cut read off a copy
    cuts = _cuts(chunks, random.Random(name))
    full, outcomes = check._recorded_cuts(chunks, cuts, protocol, tools, check.DEFAULT_LIMITS)
    assert full == check._replay_outcome(chunks, Chunking("recorded"), protocol, tools)
    assert sorted(outcomes) == cuts
    for k in cuts:
        assert outcomes[k] == check._replay_outcome(chunks, Chunking("recorded"), protocol,
                                                    tools, cut_at=k), k
