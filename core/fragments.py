"""A call's fragments as columns: the sequence of :class:`Fragment` records a call buffer keeps.

A long session has a fragment per argument delta, hundreds of thousands of them: as named tuples
(and their integers) each cost about 160 bytes, so a 105 MB session replayed for its summary
held more memory in fragment records than the file's size. Here a fragment is three machine
words and a byte in typed arrays (frame, start, end, draft status), and a :class:`Fragment` is
made again, equal to the one appended, when asked for. A caller that reads only the outcome
(``replay --summary``) keeps :class:`FragmentCount` instead: how many, and the last status.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from typing import NamedTuple, overload

from .jsonprefix import Draft


class Fragment(NamedTuple):
    """One fragment's place in its call's text."""

    frame: int | None
    start: int
    """Character offset of the fragment in the call's text."""
    end: int
    draft: Draft
    """The draft status once this fragment was added."""


DRAFTS = tuple(Draft)
_CODE = {draft: n for n, draft in enumerate(DRAFTS)}
_NO_FRAME = -1
"""A fragment without a frame (frame indexes are never negative)."""


class Fragments(Sequence[Fragment]):
    """Append-only columns of fragments; item ``i`` is fragment ``i`` as a :class:`Fragment`."""

    __slots__ = ("_frames", "_starts", "_ends", "_drafts")

    def __init__(self) -> None:
        self._frames: array[int] = array("q")
        self._starts: array[int] = array("q")
        self._ends: array[int] = array("q")
        self._drafts = bytearray()

    def append(self, frame: int | None, start: int, end: int, draft: Draft) -> None:
        self._frames.append(_NO_FRAME if frame is None else frame)
        self._starts.append(start)
        self._ends.append(end)
        self._drafts.append(_CODE[draft])

    def copy(self) -> Fragments:
        twin = Fragments.__new__(Fragments)
        twin._frames, twin._starts = array("q", self._frames), array("q", self._starts)
        twin._ends, twin._drafts = array("q", self._ends), bytearray(self._drafts)
        return twin

    @property
    def last_draft(self) -> Draft:
        """The draft status the last fragment left (there must be one)."""
        return DRAFTS[self._drafts[-1]]

    def __len__(self) -> int:
        return len(self._ends)

    def _item(self, i: int) -> Fragment:
        frame = self._frames[i]
        return Fragment(None if frame == _NO_FRAME else frame, self._starts[i], self._ends[i],
                        DRAFTS[self._drafts[i]])

    @overload
    def __getitem__(self, index: int) -> Fragment: ...

    @overload
    def __getitem__(self, index: slice) -> list[Fragment]: ...

    def __getitem__(self, index: int | slice) -> Fragment | list[Fragment]:
        if isinstance(index, slice):
            return [self._item(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("fragment index out of range")
        return self._item(index)

    def __iter__(self) -> Iterator[Fragment]:
        for frame, start, end, draft in zip(self._frames, self._starts, self._ends, self._drafts,
                                            strict=True):
            yield Fragment(None if frame == _NO_FRAME else frame, start, end, DRAFTS[draft])

    def frames_over(self, spans: Sequence[tuple[int, int]]) -> set[int]:
        """The frames of the fragments that overlap any of ``spans`` (character offsets in the
        call's text, ``(start, end)``, disjoint and in order), found by bisection.

        A call's text grows at its end (each fragment starts where the last ended) until it is
        set whole again, which starts at 0: so the fragments' offsets never decrease within
        each run that begins at a fragment starting at 0 (found at C speed, ``array.index``)."""
        found: set[int] = set()
        starts, count = self._starts, len(self._starts)
        lo = 0
        while lo < count:
            try:
                hi = starts.index(0, lo + 1)
            except ValueError:
                hi = count
            overlapping(self._frames, starts, self._ends, spans, found, lo, hi)
            lo = hi
        return found

    def __eq__(self, other: object) -> bool:
        if type(other) is Fragments:
            return (self._ends == other._ends and self._starts == other._starts
                    and self._frames == other._frames and self._drafts == other._drafts)
        return isinstance(other, list) and list(self) == other

    def __repr__(self) -> str:
        return f"Fragments({list(self)!r})"


def overlapping(frames: Sequence[int], starts: Sequence[int], ends: Sequence[int],
                spans: Sequence[tuple[int, int]], found: set[int], lo: int = 0,
                hi: int | None = None) -> None:
    """Add to ``found`` the frames (a negative one is no frame) of the fragments ``lo`` to
    ``hi`` (columns whose starts and ends never decrease) that overlap a span of ``spans``
    (disjoint, in order): a fragment overlaps ``(a, b)`` when it starts before ``b`` and ends
    after ``a``, so those fragments are the ones between two bisections, for each span in the
    fragments' range (spans that end before the first fragment starts are skipped)."""
    hi = len(starts) if hi is None else hi
    if lo >= hi:
        return
    last_end = ends[hi - 1]
    for n in range(bisect_right(spans, starts[lo], key=_span_end), len(spans)):
        a, b = spans[n]
        if a >= last_end:  # (this span and the next ones start after every fragment ends)
            break
        i, j = bisect_right(ends, a, lo, hi), bisect_left(starts, b, lo, hi)
        found.update(f for f in frames[i:j] if f >= 0)


def _span_end(span: tuple[int, int]) -> int:
    return span[1]


_COUNTED = "these fragments were counted, not kept (a replay for the outcome only)"


class FragmentCount(Fragments):
    """A call's fragments for a caller that reads only the outcome: their number and the draft
    status the last one left, which is all the gate and the turn record read of them (their
    frames and spans are for the views). Asking for a fragment itself raises TypeError."""

    __slots__ = ("_count", "_last")

    def __init__(self) -> None:  # (the columns are never made)
        self._count = 0
        self._last = Draft.EMPTY

    def append(self, frame: int | None, start: int, end: int, draft: Draft) -> None:
        self._count += 1
        self._last = draft

    def copy(self) -> FragmentCount:
        twin = FragmentCount.__new__(FragmentCount)
        twin._count, twin._last = self._count, self._last
        return twin

    @property
    def last_draft(self) -> Draft:
        return self._last

    def __len__(self) -> int:
        return self._count

    def _item(self, i: int) -> Fragment:
        raise TypeError(_COUNTED)

    def __iter__(self) -> Iterator[Fragment]:
        raise TypeError(_COUNTED)

    def frames_over(self, spans: Sequence[tuple[int, int]]) -> set[int]:
        raise TypeError(_COUNTED)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, FragmentCount) and self._count == other._count
                and self._last is other._last)

    def __repr__(self) -> str:
        return f"FragmentCount({self._count}, last {self._last.value})"
