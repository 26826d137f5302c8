"""What every encoder of the stream synthesizer shares: the :class:`Wire` the frames are written
to, and the :class:`Context` of one turn (the generator, ids and token counts, the fragmenter
that also marks the frames of requested fragment boundaries).
"""

from __future__ import annotations

import random
import string
from collections.abc import Iterator
from typing import Any

from .inert import json_dumps
from .synth_turn import MODELS, Text, ToolCall, Turn


class Wire:
    """The stream being written: its frames in order, where each ends, and the marked ones."""

    def __init__(self, eol: bytes) -> None:
        self.eol = eol
        self.parts: list[bytes] = []
        self.size = 0
        self.frame_ends: list[int] = []
        self.marks: dict[tuple[int, int], tuple[int, int]] = {}
        self._heads: dict[str | None, bytes] = {}
        self._tail = eol + eol

    def frame(self, event: str | None, payload: Any) -> None:
        data = payload if isinstance(payload, bytes) else json_dumps(payload)  # (integers exact)
        head = self._heads.get(event)
        if head is None:
            eol = self.eol
            head = self._heads[event] = (b"event: " + event.encode() + eol if event else b"") + b"data: "
        block = head + data + self._tail
        self.parts.append(block)
        self.size += len(block)
        self.frame_ends.append(self.size)


ALNUM = string.ascii_letters + string.digits


def token(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choices(alphabet, k=n))


class Context:
    """What every encoder shares: the turn, the generator, the wire and the fragmenter."""

    def __init__(self, protocol: str, turn: Turn, rng: random.Random, wire: Wire) -> None:
        self.turn, self.rng, self.w = turn, rng, wire
        self.model = turn.model or MODELS[protocol]
        self.breaks: dict[int, list[int]] = {}
        wanted = [*turn.breaks, *([(turn.cut.item, turn.cut.at)] if turn.cut else [])]
        for item, at in wanted:
            self.breaks.setdefault(item, []).append(at)
        self.calls = [i for i, item in enumerate(turn.items) if isinstance(item, ToolCall)]
        chars = sum(len(x.text if isinstance(x, Text) else x.arguments) for x in turn.items)
        self.output_tokens = turn.output_tokens or max(1, chars // 4)
        self.input_tokens = rng.randint(80, 600)
        self.created = 1767000000 + rng.randint(0, 10_000_000)
        self._noise = token(rng, ALNUM, 4096)

    def obfuscation(self, delta: str) -> str:
        # Real captures pad every delta so that delta + padding is 16 characters; longer
        # deltas (coarse fragments) are padded to the next multiple of 16, an assumption.
        # Random padding is sliced from one pre-drawn string: drawing per character would
        # dominate the cost of multi-megabyte streams.
        at = int(self.rng.random() * 4000)
        return self._noise[at:at + 16 - len(delta) % 16]

    def pieces(self, i: int, text: str) -> Iterator[str]:
        """Fragments of ``text`` (item ``i``); marks the frames of the requested boundaries."""
        rand, w, n = self.rng.random, self.w, len(text)
        low, span = self.turn.fragmenting.low, self.turn.fragmenting.high - self.turn.fragmenting.low + 1
        forced = self.breaks.get(i)
        pos = 0
        if not forced:
            while pos < n:
                end = pos + low + int(rand() * span)
                yield text[pos:end]
                pos = end
            return
        marks, stops, j = set(forced), [*sorted(forced), n], 0
        while pos < n:
            while stops[j] <= pos:
                j += 1
            end = min(stops[j], pos + low + int(rand() * span))  # requested boundaries hold
            before = w.size
            yield text[pos:end]
            if pos in marks:
                w.marks[(i, pos)] = (before, w.size)
            pos = end

    def mark_whole(self, i: int, before: int) -> None:
        """Protocols that send a call in one frame: every requested boundary is that frame."""
        for at in self.breaks.get(i, []):
            self.w.marks[(i, at)] = (before, self.w.size)

