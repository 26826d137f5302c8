"""The user's harness under test, on one input file: load it, sweep it (:mod:`.sweep`), and
write a session that reproduces each finding.

A reproduction holds exactly the reads of the finding's variant (a cut stream ends with the end
kind ``cut`` and says where), the tool definitions the comparison used and a provenance line
saying what the harness did: ``callscope FILE`` opens it in the debugger where the harness went
wrong. :mod:`callscope.testing` (Python), ``callscope check --harness`` (a process) and the
pytest plugin all come here.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec.structs

from .errors import CallscopeError, InputError
from .limits import DEFAULT_LIMITS, Limits
from .quirks import apply_quirk
from .replay import TimedBytes
from .session import Chunk, Session, StreamEnd, open_input, save_session
from .sweep import EVERY_BYTE_UP_TO, WINDOW, Finding, Harness, SweepReport, sweep, variant_chunks
from .tools import ToolSet, tools_from_request

SESSION_SUFFIXES = (".jsonl", ".sse", ".har")


def declared_tools(session: Session) -> list[Any]:
    header = session.header
    definitions = list(header.tools or [])
    if not definitions and isinstance(header.request, dict):
        definitions = tools_from_request(header.request.get("body"))
    return definitions


def check_session(harness: Harness, session: str | Path | Session, *,
                  tools: Sequence[dict[str, Any]] | None = None, protocol: str | None = None,
                  seeds: Sequence[int] = (1, 2, 3), out_dir: str | Path | None = None,
                  every_byte_up_to: int = EVERY_BYTE_UP_TO, window: int = WINDOW,
                  chunkings: Sequence[str] | None = None, quirk: str | None = None,
                  limits: Limits = DEFAULT_LIMITS) -> SweepReport:
    """Run ``harness`` on every variant of one recorded stream (a session file, a raw ``.sse``
    capture, a HAR, or a :class:`Session`) and compare it with the gate. ``tools`` overrides
    the definitions the session declares; ``protocol`` its protocol. ``chunkings`` replaces
    the full-stream chunkings (``recorded``, ``whole``, ``bytes:1``, ``random:SEED`` per seed;
    also ``bytes:N``), the first being the baseline; the cut plan: every offset of a stream up
    to ``every_byte_up_to`` bytes, else frame boundaries and ``window`` bytes before the
    terminal signal. ``quirk`` first rewrites the stream by that profile (:mod:`.quirks`: the
    shape a real system sends). Findings get a reproducing session in ``out_dir`` (a new
    temporary folder when not given)."""
    loaded = session if isinstance(session, Session) else open_input(str(session))
    source = str(session) if not isinstance(session, Session) else (session.path or "session")
    definitions = list(tools) if tools is not None else declared_tools(loaded)
    try:
        toolset = ToolSet(definitions, request=(loaded.header.request or {}).get("body"))
    except CallscopeError as exc:
        raise CallscopeError(f"{source}: tool definitions: {exc}") from None
    chunks: list[TimedBytes] = []
    size = 0
    for chunk in loaded.chunks():
        size += len(chunk.data)
        if size > limits.max_session_bytes:  # (every variant needs the whole stream in memory)
            raise InputError(source, f"larger than {limits.max_session_bytes} bytes, the most a "
                                     "sweep holds in memory (--max-session-bytes)")
        chunks.append((chunk.t, chunk.data))
    protocol = protocol or loaded.header.protocol
    end = loaded.end
    if quirk is not None:
        chunks, quirk_end = apply_quirk(quirk, protocol, chunks)
        source = f"{source}+{quirk}"
        if quirk_end is not None:
            end = StreamEnd("error", detail=f"quirk {quirk}: the connection closes mid-body")
    report = sweep(source, chunks, harness, protocol=protocol,
                   tools=toolset, seeds=seeds, limits=limits,
                   every_byte_up_to=every_byte_up_to, window=window, modes=chunkings)
    if report.findings:
        folder = Path(out_dir) if out_dir is not None else Path(
            tempfile.mkdtemp(prefix="callscope-findings-"))
        folder.mkdir(parents=True, exist_ok=True)
        used = report.inferred_tools or definitions
        for finding in report.findings:
            finding.reproduction = str(write_reproduction(folder, source, loaded, chunks,
                                                          finding, used, end))
    return report


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)[:40].strip("._") or "x"


def write_reproduction(folder: Path, source: str, session: Session,
                       chunks: Sequence[tuple[float | None, bytes]], finding: Finding,
                       tools: Sequence[Any], end: StreamEnd | None = None) -> Path:
    """A session holding exactly the reads of the finding's variant: the stream cut where the
    variant was cut (end ``cut``, saying why), else as it ended when recorded."""
    variant = finding.variant
    where = f"cut{variant.cut}" if variant.cut is not None else _slug(variant.chunking)
    stem = _slug(Path(source).name.replace(".jsonl", "").replace(".sse", ""))
    path = folder / f"{stem}.{finding.kind}.{_slug(finding.call)}.{where}.jsonl"
    pieces, last = [], 0.0
    for t, data in variant_chunks(chunks, variant):
        last = max(last, t if t is not None else last)
        pieces.append(Chunk(last, data))
    why = f"callscope testing of {source}: the harness {finding.line()}"[:500]
    if variant.cut is not None:
        end = StreamEnd("cut", detail=f"cut at byte {variant.cut} by callscope testing", at=last)
    else:
        end = end or session.end
    header = msgspec.structs.replace(session.header, tools=list(tools) or session.header.tools,
                                     provenance=why)
    save_session(str(path), header, pieces, end)
    return path


def session_files(folder: str | Path) -> list[Path]:
    """Every session file, raw SSE capture and HAR under ``folder``, sorted."""
    root = Path(folder)
    if root.is_file():
        return [root]
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in SESSION_SUFFIXES)
