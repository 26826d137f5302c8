"""check's reads (core/check_reads.py) against replay.reads: the same reads, one by one, for
every chunking check uses, cut or not; random sizes drawn as randint draws them, for any most."""

from __future__ import annotations

import random

from callscope.core import check_reads as cr
from callscope.core.replay import Chunking, reads
from hypothesis import given, settings
from hypothesis import strategies as st

chunkings = st.one_of(st.just(Chunking("bytes", size=1)), st.just(Chunking("whole")),
                      st.just(Chunking("recorded")), st.builds(Chunking.parse, st.sampled_from(
                          ["bytes:2", "bytes:7"])),
                      st.integers(0, 2**40).map(lambda s: Chunking("random", seed=s)))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=300), max_size=8), chunkings,
       st.one_of(st.none(), st.integers(0, 3000)))
def test_check_reads_are_replay_reads(pieces: list[bytes], chunking: Chunking,
                                      cut_at: int | None) -> None:
    chunks = [(float(n), piece) for n, piece in enumerate(pieces)]
    assert list(cr.check_reads(chunks, chunking, cut_at)) == list(reads(chunks, chunking, cut_at))


def test_a_long_stream_in_one_byte_reads_crosses_unpack_blocks() -> None:
    data = random.Random(5).randbytes(3 * cr._UNPACK_BLOCK + 11)
    chunks = [(None, data)]
    got = list(cr.check_reads(chunks, Chunking("bytes", size=1)))
    assert got == [data[i:i + 1] for i in range(len(data))]


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 255), st.integers(0, 2**32), st.integers(0, 40_000))
def test_random_sizes_are_randint_draws(most: int, seed: int, size: int) -> None:
    table = cr._size_table(most)
    assert table is not None
    data = bytes(size)
    rng = random.Random(seed)
    expected, at = [], 0
    while at < size:
        drawn = rng.randint(1, most)
        expected.append(min(drawn, size - at))  # (the last read is what is left)
        at += drawn
    assert [len(r) for r in cr._random_reads(data, random.Random(seed), *table)] == expected


def test_sizes_that_do_not_fit_a_byte_have_no_table() -> None:
    assert cr._size_table(256) is None and cr._size_table(0) is None
