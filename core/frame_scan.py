"""A search over a timeline's frames, resumable: the display filter or the text search of
:mod:`.frame_query`, a batch of frames at a time.

:func:`search` returns an iterator that does the work as it is advanced: each item is the part
of the frames searched so far (0 to 1), and the matches found so far are in the list given,
in order, so a caller can stop between two items (the UI's event loop runs keys meanwhile) and
show what is found. Run to its end, it finds what one pass over the frames finds
(:func:`search_all`).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence

from . import frame_query
from .call_buffer import CallBuffer
from .frame import Frame
from .frame_columns import FrameColumns
from .steps import Step
from .timeline import Timeline

BATCH = 500
"""Frames matched between two items."""


def search(timeline: Timeline, text: str, first: int, found: list[int]) -> Iterator[float]:
    """The frames from ``first`` to the last one now that match ``text`` (a display filter when
    it reads as one, :func:`.frame_query.looks_like_filter`, else text: :func:`_text`),
    appended to ``found`` as the iterator is advanced. A filter that cannot be read raises
    :class:`.frame_query.FilterError` here, before any work."""
    frames = timeline.frames
    stop = len(frames)  # (a live timeline grows meanwhile: its new frames are another search)
    if frame_query.looks_like_filter(text):
        predicate = frame_query.parse(text)
        return _filter(timeline.steps.objects(), frames, predicate,
                       "event" in frame_query.fields_of(text), first, stop, found)
    # (the calls as they are now: a live timeline adds some meanwhile)
    return _text(list(timeline.state.calls.values()), timeline.steps.objects(), frames, text, first,
                 stop, found)


def search_all(timeline: Timeline, text: str, first: int = 0) -> list[int]:
    found: list[int] = []
    for _ in search(timeline, text, first, found):
        pass
    return found


def _filter(steps: Iterable[Step], frames: Sequence[Frame], predicate: frame_query.Predicate,
            events: bool, first: int, stop: int, found: list[int]) -> Iterator[float]:
    facts = frame_query.new_facts(frames, stop)
    for _ in frame_query.add_steps(facts, steps):
        yield 0.0
    for a in range(first, stop, BATCH):
        b = min(a + BATCH, stop)
        if events:  # (only for a filter that names them: a name may take a frame made again)
            frame_query.add_events(facts, a, b)
        found.extend(i for i in range(a, b) if predicate(facts, i))
        yield (b - first) / (stop - first)


def _text(calls: Iterable[CallBuffer], steps: Iterable[Step], frames: Sequence[Frame], text: str,
          first: int, stop: int, found: list[int]) -> Iterator[float]:
    """A frame matches when its event is ``text``, its bytes hold it (case-insensitive), or
    its fragments carry part of it in what they rebuild (:func:`.frame_query.text_frames`)."""
    rebuilt: set[int] = set()
    for _ in frame_query.add_text_frames(calls, steps, text, rebuilt):
        yield 0.0
    spread = sorted(rebuilt)
    needle = text.lower().encode("utf-8", "surrogatepass")
    for a in range(first, stop, BATCH):
        b = min(a + BATCH, stop)
        hits = set(spread[bisect_left(spread, a):bisect_left(spread, b)])
        if isinstance(frames, FrameColumns):
            hits.update(frames.find_lower(needle, a, b))
            # A frame made again has its event line in its bytes: an ASCII event equal to the
            # text is found by the needle. A frame kept as it came may have it elsewhere (a
            # binary framing's headers).
            if text.isascii():
                hits.update(i for i in frames.kept_in(a, b) if frames[i].event == text)
            else:
                hits.update(i for i, f in enumerate(frames[a:b], a) if f.event == text)
        else:
            hits.update(i for i, f in enumerate(frames[a:b], a)
                        if f.event == text or needle in f.raw.lower())
        found.extend(sorted(hits))
        yield (b - first) / (stop - first)
