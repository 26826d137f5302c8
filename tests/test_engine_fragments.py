"""A call's fragments as columns (core/fragments.py) read as the list of records they replace,
and a call's text, joined in blocks as it grows, is every fragment in order."""

from __future__ import annotations

import copy
import random

import pytest
from callscope.core.call_buffer import BLOCK, CallBuffer
from callscope.core.fragments import Fragment, Fragments
from callscope.core.jsonprefix import Draft


def test_the_columns_read_as_the_list_of_records():
    rng = random.Random(5)
    records: list[Fragment] = []
    columns = Fragments()
    for n in range(300):
        record = Fragment(rng.choice([None, n, 0, 2**40]), rng.randint(0, 9), rng.randint(0, 99),
                          rng.choice(list(Draft)))
        records.append(record)
        columns.append(*record)
    assert len(columns) == len(records) and list(columns) == records and columns == records
    for i in (0, 1, 150, 299, -1, -300):
        assert columns[i] == records[i]
    for cut in (slice(None, 40), slice(-5, None), slice(3, 90, 7), slice(None, None, -1)):
        assert columns[cut] == records[cut]
    with pytest.raises(IndexError):
        columns[300]
    assert columns.last_draft is records[-1].draft
    twin = columns.copy()
    twin.append(None, 0, 1, Draft.EMPTY)
    assert len(columns) == 300 and len(twin) == 301 and twin != columns


def test_the_text_is_every_fragment_in_order_across_blocks_and_forks():
    rng = random.Random(9)
    call = CallBuffer("k", 0)
    pieces = []
    for n in range(3 * BLOCK + 17):
        piece = rng.choice(["a", "é", "\\n", "", "xyz", "\U0001f680"])
        pieces.append(piece)
        call.append(n, piece)
        if n in (5, BLOCK + 3):
            assert call.text == "".join(pieces)  # (read mid-way: joined, then grown again)
        if n == 2 * BLOCK:
            fork = copy.deepcopy(call)
            fork.append(None, "!")
            assert fork.text == "".join(pieces) + "!"
    assert call.text == "".join(pieces)
    assert call.length == len(call.text) and len(call.fragments) == len(pieces)
    assert [call.text[f.start:f.end] for f in call.fragments] == pieces
