"""Per-call lanes of a timeline: one call's history, indexed so its state at any step is a bisection.

Argument text is append-only within an *epoch*; an epoch starts when a protocol that sends whole
objects replaces the text (``ArgumentsSet``). Each fragment records its step, its end offset in
its epoch's text, the byte count and the draft status so far; the text at step k is the epoch's
text cut at the last fragment added by then. The index grows while the stream does: the current
epoch's text is joined from its fragments when a view needs it (and kept joined, so the next
join starts from there), which is what lets a timeline be extended read by read.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar, overload

from msgspec import Struct

from .events import Anomaly, CallIdentified, CallOpened
from .harness import Decision
from .jsonprefix import Draft
from .steps import WaitStep

_T = TypeVar("_T")


class Prefix(Sequence[_T], Generic[_T]):
    """The first ``n`` items of a list, without copying it (views stay O(1) to build)."""

    __slots__ = ("_items", "_n")

    def __init__(self, items: Sequence[_T], n: int) -> None:
        self._items, self._n = items, n

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> _T: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[_T]: ...

    def __getitem__(self, i: int | slice) -> _T | Sequence[_T]:
        if isinstance(i, slice):
            return [self._items[j] for j in range(*i.indices(self._n))]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        return self._items[i]


def last_le(steps: Sequence[int], k: int) -> int:
    """Index of the last entry <= k, or -1."""
    return bisect_right(steps, k) - 1


# -- per-call index ----------------------------------------------------------------------------

@dataclass
class CallIndex:
    key: str
    order: int
    created: int
    created_frame: int | None = None
    ident_steps: list[int] = field(default_factory=list)
    idents: list[tuple[str | None, str | None, str | None, str]] = field(default_factory=list)
    frag_steps: list[int] = field(default_factory=list)
    frag_epoch: list[int] = field(default_factory=list)
    frag_end: list[int] = field(default_factory=list)
    frag_bytes: list[int] = field(default_factory=list)
    frag_draft: list[Draft] = field(default_factory=list)
    frag_frame: list[int | None] = field(default_factory=list)
    frag_reset: list[bool] = field(default_factory=list)
    frag_origin: list[str] = field(default_factory=list)
    epochs: list[str] = field(default_factory=list)
    """The text of each epoch (an epoch starts when a whole-object text replaces all); the last
    one is brought up to date by :meth:`seal`."""
    epoch_first: list[int] = field(default_factory=list)
    closed_step: int | None = None
    closed_frame: int | None = None
    anomaly_steps: list[int] = field(default_factory=list)
    anomalies: list[Anomaly] = field(default_factory=list)
    disputed_step: int | None = None
    disputed: Anomaly | None = None
    """The anomaly that disputes this call (the gate refuses it), from the step that said so."""
    piece_steps: list[int] = field(default_factory=list)
    wait_steps: list[int] = field(default_factory=list)
    waits: list[WaitStep] = field(default_factory=list)
    decision_step: int | None = None
    decision: Decision | None = None
    _parts: list[str] = field(default_factory=list)
    _bytes: int = 0
    _stale: bool = False

    def identify(self, step: int, ev: CallOpened | CallIdentified | None) -> None:
        old = self.idents[-1] if self.idents else (None, None, None, "function")
        if ev is None:
            new = old
        elif not self.idents:
            new = (ev.id, ev.call_id, ev.name, ev.kind if isinstance(ev, CallOpened) else "function")
        else:  # the accumulator fills what was missing and never overwrites (calls.TurnState._identify)
            new = (old[0] or ev.id, old[1] or ev.call_id, old[2] or ev.name, old[3])
        if new != old or not self.idents:
            self.ident_steps.append(step)
            self.idents.append(new)

    def dispute(self, step: int, anomaly: Anomaly) -> None:
        if self.disputed_step is None:  # (the first dispute is the call's, as in the turn)
            self.disputed_step, self.disputed = step, anomaly

    def fragment(self, step: int, frame: int | None, text: str, reset: bool, origin: str,
                 draft: Draft) -> None:
        if reset or not self.epochs:
            self.seal()
            self._parts, self._bytes = [], 0
            self.epochs.append("")
            self.epoch_first.append(len(self.frag_steps))
        self._parts.append(text)
        self._stale = True
        self._bytes += len(text.encode("utf-8", "surrogatepass"))
        end = (self.frag_end[-1] if self.frag_end and not reset else 0) + len(text)
        self.frag_steps.append(step)
        self.frag_epoch.append(len(self.epochs) - 1)
        self.frag_end.append(end)
        self.frag_bytes.append(self._bytes)
        self.frag_draft.append(draft)
        self.frag_frame.append(frame)
        self.frag_reset.append(reset)
        self.frag_origin.append(origin)  # text appended to a whole object makes it raw again

    def seal(self) -> None:
        """Bring the current epoch's text up to date (cheap when nothing was added since)."""
        if self._stale and self.epochs:
            joined = self.epochs[-1] = "".join(self._parts)
            self._parts = [joined]
        self._stale = False

    def spans(self, k: int, lo: int = 0) -> list[tuple[int, int, int | None]]:
        """(start, end, frame) of the fragments that make the text at step k, from offset lo."""
        return self.spans_over(k, lo)[1]

    def spans_over(self, k: int, lo: int, hi: int | None = None
                   ) -> tuple[int, list[tuple[int, int, int | None]]]:
        """The fragments of the text at step k that overlap offsets [lo, hi) (each one's end
        after ``lo`` and its start before ``hi``; None: to the end): the index of the first
        (the call's count of fragments before it) and their (start, end, frame)."""
        n = bisect_right(self.frag_steps, k)
        if not n:
            return 0, []
        first = self.epoch_first[self.frag_epoch[n - 1]]
        ends = self.frag_end
        j = bisect_right(ends, lo, first, n)
        # (fragment i starts where fragment i - 1 ends: before hi up to the first end >= hi)
        m = n if hi is None else min(n, bisect_left(ends, hi, j, n) + 1)
        return j, [(ends[i - 1] if i > first else 0, ends[i], self.frag_frame[i])
                   for i in range(j, m)]

    def ident(self, k: int) -> tuple[str | None, str | None, str | None, str]:
        """(id, call_id, name, kind) of this call at step k (cheaper than :meth:`view`)."""
        return self.idents[last_le(self.ident_steps, k)]

    def view(self, k: int, anchor: int) -> CallView:
        """This call at step k; text added after step ``anchor`` is fresh."""
        ident = self.ident(k)
        n = bisect_right(self.frag_steps, k)
        if n:
            j = n - 1
            self.seal()
            text = self.epochs[self.frag_epoch[j]][:self.frag_end[j]]
            nbytes, draft, origin = self.frag_bytes[j], self.frag_draft[j], self.frag_origin[j]
            first_fresh = bisect_right(self.frag_steps, anchor)
            fresh = None
            if first_fresh < n:
                # A whole-object text replaces everything: then all of it is fresh.
                resets = any(self.frag_reset[first_fresh:n]) or first_fresh == 0
                fresh = (0 if resets else self.frag_end[first_fresh - 1], self.frag_end[j])
            last_frame = self.frag_frame[j]
        else:
            text, nbytes, draft, origin, fresh, last_frame = "", 0, Draft.EMPTY, "raw", None, None
        if last_frame is None:
            last_frame = self.created_frame
        closed = self.closed_step is not None and self.closed_step <= k
        iw = last_le(self.wait_steps, k)
        decided = self.decision_step is not None and self.decision_step <= k
        disputed = self.disputed if self.disputed_step is not None and self.disputed_step <= k \
            else None
        return CallView(
            key=self.key, order=self.order, id=ident[0], call_id=ident[1], name=ident[2], kind=ident[3],
            text=text, byte_length=nbytes, fragments=n, fresh=fresh, draft=draft, origin=origin,
            closed=closed, closed_frame=self.closed_frame if closed else None, opened_step=self.created,
            last_frame=last_frame, pieces=bisect_right(self.piece_steps, k),
            anomalies=tuple(self.anomalies[:bisect_right(self.anomaly_steps, k)]), disputed=disputed,
            wait=self.waits[iw] if iw >= 0 else None, decision=self.decision if decided else None,
        )


class CallView(Struct, frozen=True):
    """One call's lane at a step."""

    key: str
    order: int
    id: str | None
    call_id: str | None
    name: str | None
    kind: str
    text: str
    byte_length: int
    fragments: int
    fresh: tuple[int, int] | None
    """Character span of the text added by the current frame (or chunk), if any."""
    draft: Draft
    origin: str
    closed: bool
    closed_frame: int | None
    opened_step: int
    last_frame: int | None
    """The frame of the latest fragment (or the frame that opened the call)."""
    pieces: int
    anomalies: tuple[Anomaly, ...]
    disputed: Anomaly | None
    """The anomaly that disputes this call by this step (the gate refuses a disputed call)."""
    wait: WaitStep | None
    decision: Decision | None


