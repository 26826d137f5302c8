"""Display filters over frames, and text search across fragments.

A display filter is a small language over frame fields, in the spirit of Wireshark's::

    event ~ delta and call = 2
    tool = delete_demo_file or anomaly ~ sequence
    not event = ping and bytes >= 4000
    text ~ "dry_run"

Fields: ``frame`` (its number), ``event`` (the ``event:`` line, else the payload's type; for a
Bedrock InvokeModel ``chunk`` also the event it carries, as ``content_block_delta`` and
``chunk.content_block_delta``),
``call`` (the number of a call the frame touched, 1-based as the lanes show it, or its key),
``tool`` (the name of a call the frame touched), ``anomaly`` (the code of an anomaly reported at
the frame), ``text`` (the frame's raw bytes, as text), ``bytes`` (the frame's start offset;
``bytes = 100-200`` is a range that overlaps the frame). Operators: ``=``, ``!=``, ``~``
(contains, case-insensitive), ``<``, ``<=``, ``>``, ``>=``, combined with ``and``, ``or``,
``not`` and parentheses. A field that holds several values (a frame touching two calls)
matches when any value does.

:func:`text_frames` finds text in what the frames rebuild, not only in their bytes: a call's
arguments or the assistant's text, even when the text spans fragments of several frames.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from .call_buffer import CallBuffer
from .errors import CallscopeError
from .events import CALL_CHANGES, Anomaly, CallIdentified, CallOpened, TextAppended
from .fragments import overlapping
from .frame import Frame, event_name
from .frame_columns import FrameColumns
from .steps import CallStep, FrameStep, Step

FIELDS = ("frame", "event", "call", "tool", "anomaly", "text", "bytes")
_OPS = ("!=", "<=", ">=", "=", "~", "<", ">")
_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<op>!=|<=|>=|=|~|<|>)|(?P<paren>[()])'
                    r"|(?P<word>[^\s()=!<>~\"]+))")


class FilterError(CallscopeError):
    """A display filter that cannot be read: says where."""


@dataclass
class FrameFacts:
    """What the frames carry, by frame number: what the steps say of every frame (read once, by
    :func:`add_steps`), and the event names of the frames being matched (:func:`add_events`,
    a batch at a time: a name may take a frame made again and its payload read)."""

    frames: Sequence[Frame]
    count: int
    """The frames the facts are of (the first ``count``; a live timeline grows meanwhile)."""
    starts: Sequence[int]
    ends: Sequence[int]
    raw: Callable[[int], bytes]
    """A frame's bytes (read from the frame columns, no frame made)."""
    events: dict[int, str] = field(default_factory=dict)
    carried: dict[int, str] = field(default_factory=dict)
    """Per frame that wraps another protocol's event (Bedrock InvokeModel's ``chunk``): that
    event's name, which ``event`` also matches (the frame list shows it)."""
    keys: dict[int, str | tuple[str, ...]] = field(default_factory=dict)
    """Per frame: the key of the call it touched, or the keys of those it touched (no container
    per frame for the collector to walk: a frame touches one call nearly always)."""
    numbers: dict[str, str] = field(default_factory=dict)
    """Per call key: its number (1-based, as the lanes show it), as text."""
    names: dict[str, str] = field(default_factory=dict)
    """Per call key: its tool name (the first it was given), which every frame it touched has."""
    anomalies: dict[int, set[str]] = field(default_factory=dict)

    def _keys(self, i: int) -> tuple[str, ...]:
        touched = self.keys.get(i, ())
        return (touched,) if isinstance(touched, str) else touched

    def calls(self, i: int) -> Iterator[str]:
        """The numbers and keys of the calls frame ``i`` touched."""
        for key in self._keys(i):
            yield self.numbers[key]
            yield key

    def tools(self, i: int) -> set[str]:
        names = self.names
        return {names[key] for key in self._keys(i) if key in names}


STEPS_BATCH = 2000
"""Steps read by :func:`add_steps` between two yields."""


def new_facts(frames: Sequence[Frame], count: int | None = None) -> FrameFacts:
    """Facts of the first ``count`` frames (by default all so far), none read yet."""
    n = len(frames) if count is None else count
    if isinstance(frames, FrameColumns):
        return FrameFacts(frames, n, frames.starts, frames.ends, frames.raw)
    return FrameFacts(frames, n, [f.start for f in frames], [f.end for f in frames],
                      lambda i: frames[i].raw)


def add_steps(facts: FrameFacts, steps: Iterable[Step]) -> Iterator[None]:
    """Read what the call steps say of the frames (the calls each touched, their tools, the
    anomalies at each), yielding every :data:`STEPS_BATCH` steps."""
    n, keys, numbers, names, anomalies = (facts.count, facts.keys, facts.numbers, facts.names,
                                          facts.anomalies)
    for read, step in enumerate(steps, 1):
        if not read % STEPS_BATCH:
            yield
        if isinstance(step, FrameStep) or not isinstance(step, CallStep):
            continue
        event = step.event
        frame = getattr(event, "frame", None)
        if isinstance(event, Anomaly):
            if frame is not None and frame < n:
                anomalies.setdefault(frame, set()).add(str(event.code))
            continue
        if not isinstance(event, CALL_CHANGES):
            continue
        key = event.key
        if key not in numbers:
            numbers[key] = str(len(numbers) + 1)
        if isinstance(event, CallOpened | CallIdentified) and event.name and key not in names:
            names[key] = event.name
        if frame is not None and frame < n:
            touched = keys.get(frame)
            if touched is None:
                keys[frame] = key
            elif isinstance(touched, str):  # (one key so far: `in` on it would test a substring)
                if touched != key:
                    keys[frame] = (touched, key)
            elif key not in touched:
                keys[frame] = (*touched, key)


def add_events(facts: FrameFacts, first: int, stop: int) -> None:
    """The event names of frames ``first`` to ``stop`` (excluded), in place of the last ones."""
    frames = facts.frames
    events: dict[int, str] = {}
    made: Iterable[tuple[int, Frame]]
    if isinstance(frames, FrameColumns):
        others = list(frames.kept_in(first, stop))  # (the frames whose name takes the frame made)
        buf, spans = frames.spans(first, stop)
        for i, start, end in spans:
            name = _name_in(buf, start, end)
            if name is None:
                others.append(i)
            else:
                events[i] = name
        made = ((i, frames[i]) for i in sorted(others))
    else:
        made = enumerate(frames[first:stop], first)
    chunks: list[tuple[int, Frame]] = []  # an InvokeModel stream's chunks
    for i, f in made:
        events[i] = event_name(f)
        if f.headers and f.event == "chunk":
            chunks.append((i, f))
    facts.events = events
    facts.carried = {}
    if chunks:
        from .providers.bedrock_invoke import carried_event

        facts.carried = {i: name for i, f in chunks if (name := carried_event(f))}


def _name_in(buf: bytearray, start: int, end: int) -> str | None:
    """:func:`.frame.event_name` of a frame made again from the columns (``event: E`` then
    ``data: X``, or ``data: X``), from its bytes ``buf[start:end]``, when they tell it at once;
    else None. An ``event:`` line names it (a line end is ASCII: the line decodes alone as in
    the whole). A JSON object that has no ``type`` in its bytes and no escaped letter
    (``\\u00..``) has no ``type`` or ``event_type`` key: it names no event."""
    if buf.startswith(b"event: ", start, end):
        stop = buf.find(b"\n", start, end)
        if buf[stop - 1] == 0x0D:  # (a CRLF frame)
            stop -= 1
        return buf[start + 7:stop].decode("utf-8", "replace") if stop > start + 7 else None
    if (buf.startswith(b"data: {", start, end) and buf.find(b"type", start, end) < 0
            and buf.find(b"\\u00", start, end) < 0):
        return ""
    return None


def frame_facts(steps: Iterable[Step], frames: Sequence[Frame]) -> FrameFacts:
    """Every fact of every frame so far, events included."""
    facts = new_facts(frames)
    for _ in add_steps(facts, steps):
        pass
    add_events(facts, 0, facts.count)
    return facts


# -- the language ------------------------------------------------------------------------------

Predicate = Callable[[FrameFacts, int], bool]


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise FilterError(f"cannot read the filter at character {pos + 1}: {text[pos:pos + 20]!r}")
        kind = match.lastgroup or "word"
        value = match.group(kind)
        if kind == "str":
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        out.append((kind, value, match.start(kind) + 1))
        pos = match.end()
    return out


def looks_like_filter(text: str) -> bool:
    """Whether a search text is meant as a filter (a field followed by an operator)."""
    try:
        tokens = _tokens(text)
    except FilterError:
        return False
    return len(tokens) >= 2 and tokens[0][0] == "word" and tokens[1][0] == "op" or (
        bool(tokens) and tokens[0][1] in ("not", "(") and any(t[0] == "op" for t in tokens))


def parse(text: str) -> Predicate:
    """The predicate of a display filter; :class:`FilterError` names where it cannot be read."""
    tokens = _tokens(text)
    if not tokens:
        raise FilterError("an empty filter")
    position = 0

    def peek() -> tuple[str, str, int] | None:
        return tokens[position] if position < len(tokens) else None

    def take() -> tuple[str, str, int]:
        nonlocal position
        token = peek()
        if token is None:
            raise FilterError("the filter ends too early")
        position += 1
        return token

    def expr() -> Predicate:
        left = term()
        while (token := peek()) is not None and token[1] == "or":
            take()
            right = term()
            left = (lambda a, b: lambda f, i: a(f, i) or b(f, i))(left, right)
        return left

    def term() -> Predicate:
        left = factor()
        while (token := peek()) is not None and token[1] == "and":
            take()
            right = factor()
            left = (lambda a, b: lambda f, i: a(f, i) and b(f, i))(left, right)
        return left

    def factor() -> Predicate:
        kind, value, at = take()
        if value == "not":
            inner = factor()
            return lambda f, i: not inner(f, i)
        if value == "(":
            inner = expr()
            close = peek()
            if close is None or close[1] != ")":
                raise FilterError(f"a '(' at character {at} is not closed")
            take()
            return inner
        if value not in FIELDS:
            raise FilterError(f"unknown field {value!r} at character {at} (one of: {', '.join(FIELDS)})")
        op_kind, op, op_at = take()
        if op_kind != "op":
            raise FilterError(f"an operator ({' '.join(_OPS)}) after {value!r} at character {op_at}")
        _, operand, _ = take()
        return _comparison(value, op, operand)

    predicate = expr()
    if peek() is not None:
        raise FilterError(f"unexpected {peek()[1]!r} at character {peek()[2]}")  # type: ignore[index]
    return predicate


def _compare(have: str, op: str, want: str) -> bool:
    if op == "~":
        return want.lower() in have.lower()
    if op in ("=", "!="):
        return (have == want) == (op == "=")
    try:
        a, b = float(have), float(want)
    except ValueError:
        a, b = have, want  # type: ignore[assignment]
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def _comparison(name: str, op: str, want: str) -> Predicate:
    if name == "bytes" and re.fullmatch(r"\d+-\d+", want) and op in ("=", "!="):
        lo, hi = (int(x) for x in want.split("-"))
        return lambda f, i: (f.starts[i] < hi and f.ends[i] > lo) == (op == "=")

    def values(f: FrameFacts, i: int) -> Iterable[str]:
        if name == "frame":
            return (str(i),)
        if name == "bytes":
            return (str(f.starts[i]),)
        if name == "event":
            inner = f.carried.get(i)
            return (f.events[i],) if inner is None else (f.events[i], inner, f"chunk.{inner}")
        if name == "text":
            return (f.raw(i).decode("utf-8", "replace"),)
        if name == "call":
            return f.calls(i)
        if name == "tool":
            return f.tools(i)
        return f.anomalies.get(i, ())

    if op == "!=":  # none of its values equals
        return lambda f, i: all(v != want for v in values(f, i))
    return lambda f, i: any(_compare(v, op, want) for v in values(f, i))


def matching(facts: FrameFacts, predicate: Predicate) -> list[int]:
    return [i for i in range(facts.count) if predicate(facts, i)]


def fields_of(text: str) -> set[str]:
    """The fields a filter names (an operand that is a field's name counted too: a superset)."""
    return {value for kind, value, _ in _tokens(text) if kind == "word" and value in FIELDS}


# -- text across fragments -------------------------------------------------------------------

def occurrences(text: str, needle: str) -> list[tuple[int, int]]:
    """Where ``needle`` occurs in ``text`` (case-insensitive), as disjoint spans in order:
    occurrences that overlap are one span (a fragment overlaps the span exactly when it
    overlaps one of them)."""
    spans: list[tuple[int, int]] = []
    if not needle:
        return spans
    lowered, want = text.lower(), needle.lower()
    at = lowered.find(want)
    while at >= 0:
        end = at + len(want)
        if spans and at < spans[-1][1]:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((at, end))
        at = lowered.find(want, at + 1)
    return spans


def text_frames(calls: Iterable[CallBuffer], steps: Iterable[Step], needle: str) -> set[int]:
    """Frames whose fragments carry part of an occurrence of ``needle`` in a call's rebuilt
    arguments or in the assistant's text (across fragment boundaries)."""
    found: set[int] = set()
    for _ in add_text_frames(calls, steps, needle, found):
        pass
    return found


def add_text_frames(calls: Iterable[CallBuffer], steps: Iterable[Step], needle: str,
                    found: set[int]) -> Iterator[None]:
    """:func:`text_frames` into ``found``, yielding after each call and every
    :data:`STEPS_BATCH` steps."""
    for call in calls:
        spans = occurrences(call.text, needle)
        if spans:
            found |= call.fragments.frames_over(spans)
        yield
    # Each channel's text and its pieces as columns (frame, start, end: -1 for no frame).
    texts: dict[str, tuple[list[str], list[int], list[int], list[int]]] = {}
    for read, step in enumerate(steps, 1):
        if not read % STEPS_BATCH:
            yield
        if isinstance(step, CallStep) and isinstance(step.event, TextAppended):
            parts, frames, starts, ends = texts.setdefault(step.event.channel, ([], [], [], []))
            start = ends[-1] if ends else 0
            parts.append(step.event.text)
            frames.append(-1 if step.event.frame is None else step.event.frame)
            starts.append(start)
            ends.append(start + len(step.event.text))
    for parts, frames, starts, ends in texts.values():
        overlapping(frames, starts, ends, occurrences("".join(parts), needle), found)
