"""The seeds every mutation starts from: the real recordings in tests/fixtures and the bundled
sessions in sessions/, plus the words (event names, keys, types, values) they are made of."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import fuzz_oracle as oracle
import orjson
from callscope.core.demo_tools import DEMO_TOOL_DEFINITIONS
from callscope.core.frame import Frame
from callscope.core.session import Chunk, SessionHeader, StreamEnd, open_input, save_session
from callscope.core.sse import decode_all

ROOT = Path(__file__).resolve().parent.parent
PROTOCOLS = ("openai-responses", "openai-chat", "anthropic", "gemini-interactions", "gemini-generate")
FIXTURE_DIRS = {"openai-responses": "openai-responses", "openai-chat": "openai-chat",
                "anthropic": "anthropic", "gemini-interactions": "gemini-interactions",
                "gemini-generatecontent": "gemini-generate"}

# -- the seeds -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Seed:
    name: str
    data: bytes
    sizes: tuple[int, ...]
    """The recorded chunk sizes."""
    protocol: str | None
    tools: tuple[Any, ...] = ()
    file: bytes | None = field(default=None, repr=False)
    """The session file itself (bundled sessions), for the loader targets."""


@lru_cache(maxsize=1)
def corpus() -> tuple[Seed, ...]:
    """Every real recording in tests/fixtures, and every bundled session in sessions/."""
    seeds = []
    for path in sorted((ROOT / "tests" / "fixtures").rglob("*.sse")):
        data = path.read_bytes()
        seeds.append(Seed(f"fixture:{path.parent.name}/{path.name}", data, (len(data),),
                          FIXTURE_DIRS.get(path.parent.name)))
    for path in sorted((ROOT / "sessions").rglob("*.jsonl")):
        session = open_input(str(path))
        chunks = [c.data for c in session.chunks()]
        seeds.append(Seed(f"session:{path.relative_to(ROOT / 'sessions')}", b"".join(chunks),
                          tuple(len(c) for c in chunks if c), session.header.protocol,
                          tuple(oracle.declared_tools(session)), path.read_bytes()))
    return tuple(seeds)


@lru_cache(maxsize=1)
def file_seeds() -> tuple[tuple[str, bytes], ...]:
    """(name, bytes) of whole input files: bundled sessions (or, before they exist, the
    fixtures saved as sessions), a HAR, and raw SSE captures."""
    files = [(s.name.rsplit("/", 1)[-1], s.file) for s in corpus() if s.file is not None]
    fixtures = [s for s in corpus() if s.name.startswith("fixture:")]
    if not files:
        with tempfile.TemporaryDirectory() as tmp:
            for i, seed in enumerate(fixtures):
                path = os.path.join(tmp, f"{i}.jsonl")
                save_session(path, SessionHeader(source="import:sse", protocol=seed.protocol),
                             [Chunk(0.0, seed.data)], StreamEnd("clean"))
                files.append((f"{i}.jsonl", Path(path).read_bytes()))
    files.append(("capture.har", har_document(fixtures[:3])))
    files += [(s.name.rsplit("/", 1)[-1], s.data) for s in fixtures[:4]]
    return tuple((name, data) for name, data in files if data is not None)


def har_document(seeds: list[Seed]) -> bytes:
    entries = [{"startedDateTime": "2026-01-01T00:00:00Z",
                "request": {"method": "POST", "url": "https://api.example.com/v1?key=secret",
                            "headers": [{"name": "x-api-key", "value": "secret"}],
                            "postData": {"text": orjson.dumps({"tools": DEMO_TOOL_DEFINITIONS}).decode()}},
                "response": {"status": 200,
                             "headers": [{"name": "content-type", "value": "text/event-stream"}],
                             "content": {"mimeType": "text/event-stream",
                                         "text": seed.data.decode("utf-8", "replace")}},
                "timings": {"send": 1, "wait": 20, "receive": 5}} for seed in seeds]
    entries.insert(1, {"request": {"method": "GET", "url": "https://example.com/"},
                       "response": {"status": 200, "content": {"mimeType": "text/html", "text": "<p>"}}})
    return orjson.dumps({"log": {"version": "1.2", "entries": entries}}, option=orjson.OPT_INDENT_2)


def payloads(data: bytes) -> Iterator[tuple[Frame, Any]]:
    for frame in decode_all(data):
        if frame.dispatch:
            try:
                yield frame, orjson.loads(frame.data)
            except orjson.JSONDecodeError:
                pass


def _walk(value: Any, key: str = "") -> Iterator[tuple[str, Any]]:
    yield key, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _walk(v, key)


@lru_cache(maxsize=1)
def vocabulary() -> dict[str, tuple[Any, ...]]:
    """Event names, keys, type strings and per-key values seen in the corpus: the words a
    structured input is made of, and the pool that "repeated ids" and "wrong indexes" draw from."""
    events, keys, types = set(), set(), set()
    values: dict[str, set[Any]] = {}
    for seed in corpus():
        for frame, payload in payloads(seed.data):
            events.add(frame.event)
            for key, value in _walk(payload):
                keys.add(key)
                if isinstance(value, str | int) and not isinstance(value, bool) and len(str(value)) < 64:
                    values.setdefault(key, set()).add(value)
                    if key in ("type", "event_type", "object", "finish_reason", "stop_reason"):
                        types.add(value)
    keys.discard("")
    return {"events": tuple(sorted(events, key=str)), "keys": tuple(sorted(keys)),
            "types": tuple(sorted(types, key=str)),
            **{f"values:{k}": tuple(sorted(v, key=repr))[:40] for k, v in values.items()}}


