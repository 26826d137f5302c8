"""The hostile inputs: hypothesis strategies over the real recordings and the bundled sessions.

Every strategy draws a small, printable plan (which seed, which mutations, which chunking, tools
and protocol) and builds the bytes from it, so a failure shrinks to a plan a person can read.
:data:`TARGETS` maps a target name to ``(strategy factory, check)``.
"""

from __future__ import annotations

import os
import random
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fuzz_oracle as oracle
import fuzz_save
import orjson
from callscope.core.sse import decode_all
from fuzz_corpus import PROTOCOLS, Seed, corpus, file_seeds, vocabulary
from fuzz_mutations import (
    SCALE,
    apply_byte_ops,
    apply_frame_ops,
    byte_ops,
    depth,
    dumps,
    frame_ops,
    json_values,
    mutate_json,
    rebuild,
    set_scale,
)
from hypothesis import strategies as st

__all__ = ["TARGETS", "DESCRIPTIONS", "corpus", "set_scale"]


# -- the cases -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class StreamCase:
    target: str
    seed: str
    plan: tuple[Any, ...]
    data: bytes
    sizes: tuple[int, ...]
    protocol: str | None
    tools: str
    declared: tuple[Any, ...] = ()

    def __repr__(self) -> str:
        data = repr(self.data) if len(self.data) <= 1500 else f"<{len(self.data)} bytes>"
        return (f"StreamCase({self.target}, seed={self.seed!r}, plan={self.plan!r}, "
                f"sizes={self.sizes}, protocol={self.protocol!r}, tools={self.tools!r}, data={data})")


@st.composite
def _options(draw: Callable[..., Any], seed: Seed | None, data: bytes,
             target: str, plan: tuple[Any, ...]) -> StreamCase:
    chunkings = [st.just(()), st.lists(st.integers(1, 64), min_size=1, max_size=8).map(tuple)]
    if seed is not None and len(seed.sizes) > 1:
        chunkings.append(st.just(seed.sizes))
    if len(data) <= 4000:
        chunkings.append(st.just((1,)))
    sizes = draw(st.one_of(chunkings))
    own = seed.protocol if seed is not None else None
    protocol = draw(st.sampled_from([None, None, own, *PROTOCOLS]))
    modes = ["none", "permissive", "permissive", "demo"] + (["declared"] if seed and seed.tools else [])
    return StreamCase(target, seed.name if seed else "-", plan, data, sizes, protocol,
                      draw(st.sampled_from(modes)), seed.tools if seed else ())


SSE_ALPHABET = b'data: event:id:retry\n\n\r\n{}[]",:0123456789.-eE truefalsnl\\u\xff\xe2\x80\xae'


@st.composite
def random_bytes_case(draw: Callable[..., Any]) -> StreamCase:
    """Random bytes: uniform, or from an alphabet of SSE and JSON bytes (hypothesis draws the
    generator's seed and the length, so a failure shrinks to a short input)."""
    n = draw(st.integers(0, SCALE["random"]))
    alphabet = draw(st.sampled_from([b"", SSE_ALPHABET]))
    rng = random.Random(draw(st.integers(0, 2**32)))
    data = rng.randbytes(n) if not alphabet else bytes(rng.choices(alphabet, k=n))
    case: StreamCase = draw(_options(None, data, "bytes", (n, "uniform" if not alphabet else "sse")))
    return case


@st.composite
def grammar_case(draw: Callable[..., Any]) -> StreamCase:
    """SSE made of the protocols' own words: known event names and types, keys seen on the wire,
    values from hostile to plausible, line ends of every kind, [DONE], comments and ids."""
    vocab = vocabulary()
    eol = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    parts = []
    for _ in range(draw(st.integers(1, 24))):
        kind = draw(st.sampled_from(["json", "json", "json", "done", "comment", "id", "raw"]))
        if kind == "json":
            payload = draw(st.dictionaries(st.sampled_from(vocab["keys"]), json_values(), max_size=5))
            if draw(st.booleans()):
                payload["type"] = draw(st.sampled_from(vocab["types"]))
            event = draw(st.one_of(st.none(), st.sampled_from(vocab["events"])))
            head = f"event: {event}{eol}" if event else ""
            parts.append(f"{head}data: {dumps(payload)}{eol}{eol}")
        elif kind == "done":
            parts.append(f"data: [DONE]{eol}{eol}")
        elif kind == "comment":
            parts.append(f": ping{eol}")
        elif kind == "id":
            parts.append(f"id: {draw(st.text(max_size=6))}{eol}")
        else:
            parts.append(draw(st.text(max_size=20)))
    case: StreamCase = draw(_options(None, "".join(parts).encode("utf-8", "surrogatepass"), "grammar", ()))
    return case


@st.composite
def byte_case(draw: Callable[..., Any]) -> StreamCase:
    seed = draw(st.sampled_from(corpus()))
    ops = draw(byte_ops())
    case: StreamCase = draw(_options(seed, apply_byte_ops(seed.data, ops), "mutate", tuple(ops)))
    return case


@st.composite
def payload_case(draw: Callable[..., Any], reorder: bool = False) -> StreamCase:
    seed = draw(st.sampled_from(corpus()))
    frames = decode_all(seed.data)
    raws = [f.raw for f in frames]
    plan: list[Any] = []
    editable = [i for i, f in enumerate(frames) if f.dispatch and f.data.strip() != "[DONE]"]
    values: dict[int, Any] = {}
    for _ in range(draw(st.integers(0 if reorder else 1, SCALE["ops"]))):
        if not editable:
            break
        i = draw(st.sampled_from(editable))
        try:
            value = values[i] if i in values else orjson.loads(frames[i].data)
        except orjson.JSONDecodeError:
            continue
        values[i], entry = mutate_json(draw, value)
        raws[i] = rebuild(frames[i], values[i])
        plan.append((i, *entry))
    if reorder:
        ops = draw(frame_ops())
        raws = apply_frame_ops(raws, ops)
        plan.append(("frames", ops))
    case: StreamCase = draw(_options(seed, b"".join(raws), "frames" if reorder else "payload", tuple(plan)))
    return case


@dataclass(frozen=True)
class FileCase:
    name: str
    plan: tuple[Any, ...]
    raw: bytes
    cli: str | None

    def __repr__(self) -> str:
        raw = repr(self.raw) if len(self.raw) <= 1500 else f"<{len(self.raw)} bytes>"
        return f"FileCase({self.name!r}, plan={self.plan!r}, cli={self.cli!r}, raw={raw})"


@st.composite
def file_case(draw: Callable[..., Any],
              cli: tuple[str | None, ...] = (None, None, "table", "json")) -> FileCase:
    """A session file (or HAR, or raw capture) mutated as bytes, as lines, or as JSON records."""
    name, raw = draw(st.sampled_from(file_seeds()))
    how = draw(st.sampled_from(["bytes", "lines", "json", "json"]))
    plan: list[Any] = [how]
    if how == "bytes":
        ops = draw(byte_ops())
        raw, plan = apply_byte_ops(raw, ops), [how, ops]
    elif how == "lines":
        ops = draw(frame_ops())
        raw = b"".join(apply_frame_ops(raw.splitlines(keepends=True), ops))
        plan.append(ops)
    else:
        lines = raw.splitlines(keepends=True)
        for _ in range(draw(st.integers(1, 3))):
            i = draw(st.integers(0, min(len(lines) - 1, 3)) | st.integers(0, len(lines) - 1))
            try:
                value = orjson.loads(lines[i])
            except orjson.JSONDecodeError:
                continue
            if depth(value) > 200:  # made deep by an earlier mutation: serializing it recurses
                continue
            value, entry = mutate_json(draw, value)
            lines[i] = dumps(value).encode() + b"\n"
            plan.append((i, *entry))
        raw = b"".join(lines)
    return FileCase(name, tuple(plan), raw, draw(st.sampled_from(cli)))


def check_case(case: StreamCase) -> None:
    oracle.check_stream(case.target, case.data, case.sizes, case.protocol, case.tools, case.declared)


def check_file(case: FileCase) -> None:
    oracle.check_session_file("session", case.raw, case.name, case.cli)


def check_file_subprocess(case: FileCase) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, case.name)
        Path(path).write_bytes(case.raw)
        rc = oracle.check_cli_subprocess(path, case.cli or "table")
    stats = oracle.STATS["cli"]
    stats["inputs"] += 1
    stats["bytes"] += len(case.raw)
    stats["rejected" if rc == 2 else "loaded"] += 1


TARGETS: dict[str, tuple[Callable[[], st.SearchStrategy[Any]], Callable[[Any], None]]] = {
    "bytes": (random_bytes_case, check_case),
    "grammar": (grammar_case, check_case),
    "mutate": (byte_case, check_case),
    "payload": (payload_case, check_case),
    "frames": (lambda: payload_case(reorder=True), check_case),
    "session": (file_case, check_file),
    "cli": (lambda: file_case(cli=("table", "json")), check_file_subprocess),
    "save": (fuzz_save.save_case, fuzz_save.check_save),
}
DESCRIPTIONS = {
    "bytes": "random bytes through the engine",
    "grammar": "SSE built from the protocols' event names, keys and types, hostile values",
    "mutate": "byte mutations of every recording and bundled session",
    "payload": "JSON payloads mutated inside valid frames",
    "frames": "frames shuffled, dropped, duplicated, moved (and payloads mutated)",
    "session": "mutated session files, HAR and raw captures: loader, engine, re-save, CLI in-process",
    "cli": "mutated input files through `callscope replay` as a real process",
    "save": "faults while saving: exceptions, interrupts, bad times, failing rename and fsync",
}
