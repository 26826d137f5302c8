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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from .call_buffer import CallBuffer
from .engine import CallStep, FrameStep, Step
from .errors import CallscopeError
from .events import CALL_CHANGES, Anomaly, CallIdentified, CallOpened, TextAppended
from .frame import Frame, event_name

FIELDS = ("frame", "event", "call", "tool", "anomaly", "text", "bytes")
_OPS = ("!=", "<=", ">=", "=", "~", "<", ">")
_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<op>!=|<=|>=|=|~|<|>)|(?P<paren>[()])'
                    r"|(?P<word>[^\s()=!<>~\"]+))")


class FilterError(CallscopeError):
    """A display filter that cannot be read: says where."""


@dataclass
class FrameFacts:
    """What each frame carries, by frame number (built once per timeline)."""

    events: list[str] = field(default_factory=list)
    calls: list[set[str]] = field(default_factory=list)
    """Per frame: the call numbers (1-based) and keys it touched."""
    tools: list[set[str]] = field(default_factory=list)
    anomalies: list[set[str]] = field(default_factory=list)
    frames: Sequence[Frame] = ()
    carried: dict[int, str] = field(default_factory=dict)
    """Per frame that wraps another protocol's event (Bedrock InvokeModel's ``chunk``): that
    event's name, which ``event`` also matches (the frame list shows it)."""


def frame_facts(steps: Iterable[Step], frames: Sequence[Frame]) -> FrameFacts:
    facts = FrameFacts(frames=frames)
    n = len(frames)
    # One pass over the frames: a timeline's are made on demand (core/frame_columns.py).
    chunks: list[tuple[int, Frame]] = []  # an InvokeModel stream's chunks
    for i, f in enumerate(frames):
        facts.events.append(event_name(f))
        if f.headers and f.event == "chunk":
            chunks.append((i, f))
    if chunks:
        from .providers.bedrock_invoke import carried_event

        facts.carried = {i: name for i, f in chunks if (name := carried_event(f))}
    facts.calls = [set() for _ in range(n)]
    facts.tools = [set() for _ in range(n)]
    facts.anomalies = [set() for _ in range(n)]
    numbers: dict[str, int] = {}
    names: dict[str, str] = {}
    touched: dict[str, list[int]] = {}
    for step in steps:
        if isinstance(step, FrameStep) or not isinstance(step, CallStep):
            continue
        event = step.event
        frame = getattr(event, "frame", None)
        if isinstance(event, Anomaly):
            if frame is not None and frame < n:
                facts.anomalies[frame].add(str(event.code))
            continue
        if not isinstance(event, CALL_CHANGES):
            continue
        key = event.key
        number = numbers.setdefault(key, len(numbers) + 1)
        if isinstance(event, CallOpened | CallIdentified) and event.name and key not in names:
            names[key] = event.name
            for earlier in touched.get(key, ()):
                facts.tools[earlier].add(event.name)
        if frame is not None and frame < n:
            facts.calls[frame].update((str(number), key))
            touched.setdefault(key, []).append(frame)
            if key in names:
                facts.tools[frame].add(names[key])
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
        return lambda f, i: (f.frames[i].start < hi and f.frames[i].end > lo) == (op == "=")

    def values(f: FrameFacts, i: int) -> Iterable[str]:
        if name == "frame":
            return (str(i),)
        if name == "bytes":
            return (str(f.frames[i].start),)
        if name == "event":
            inner = f.carried.get(i)
            return (f.events[i],) if inner is None else (f.events[i], inner, f"chunk.{inner}")
        if name == "text":
            return (f.frames[i].raw.decode("utf-8", "replace"),)
        return {"call": f.calls, "tool": f.tools, "anomaly": f.anomalies}[name][i]

    if op == "!=":  # none of its values equals
        return lambda f, i: all(v != want for v in values(f, i))
    return lambda f, i: any(_compare(v, op, want) for v in values(f, i))


def matching(facts: FrameFacts, predicate: Predicate) -> list[int]:
    return [i for i in range(len(facts.frames)) if predicate(facts, i)]


# -- text across fragments -------------------------------------------------------------------

def _occurrence_frames(text: str, spans: Sequence[tuple[int | None, int, int]], needle: str) -> set[int]:
    """The frames of the fragments (frame, start, end) an occurrence of ``needle`` overlaps."""
    found: set[int] = set()
    if not needle:
        return found
    lowered, want = text.lower(), needle.lower()
    at = lowered.find(want)
    while at >= 0:
        end = at + len(want)
        found.update(frame for frame, start, stop in spans
                     if frame is not None and start < end and stop > at)
        at = lowered.find(want, at + 1)
    return found


def text_frames(calls: Iterable[CallBuffer], steps: Iterable[Step], needle: str) -> set[int]:
    """Frames whose fragments carry part of an occurrence of ``needle`` in a call's rebuilt
    arguments or in the assistant's text (across fragment boundaries)."""
    found: set[int] = set()
    for call in calls:
        found |= _occurrence_frames(call.text, [(f.frame, f.start, f.end) for f in call.fragments],
                                    needle)
    texts: dict[str, tuple[list[str], list[tuple[int | None, int, int]]]] = {}
    for step in steps:
        if isinstance(step, CallStep) and isinstance(step.event, TextAppended):
            parts, spans = texts.setdefault(step.event.channel, ([], []))
            start = spans[-1][2] if spans else 0
            parts.append(step.event.text)
            spans.append((step.event.frame, start, start + len(step.event.text)))
    for parts, spans in texts.values():
        found |= _occurrence_frames("".join(parts), spans, needle)
    return found
