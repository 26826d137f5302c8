"""What the app writes to files: the session's bytes, the decision log (JSON and Markdown), one
call's arguments. Pure functions over a timeline; the app picks the paths and says where."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from ..core.inert import json_dumps, json_text
from ..core.lanes import CallView
from ..core.records import step_record, turn_record
from ..core.session import save_session
from ..core.session_model import Chunk, SessionHeader, StreamEnd
from ..core.timeline import Timeline
from . import safe
from .expert import turn_ending

INPUT_SUFFIXES = (".sse", ".jsonl", ".har")
"""What the name of an input ends with (dropped from the stem of its exports)."""


def stem(source: str, timeline: Timeline) -> str:
    """A file-name stem from the source, safe on any filesystem, marking a cut stream."""
    name = Path(source).name
    for suffix in INPUT_SUFFIXES:  # (an export of demo.jsonl is demo.jsonl, not demo.jsonl.jsonl)
        name = name.removesuffix(suffix)
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:60].strip("._")
    return (base or "session") + (f".cut{timeline.cut}" if timeline.cut is not None else "")


def decision_log(timeline: Timeline, source: str,
                 end: StreamEnd | None = None) -> dict[str, Any]:
    """The whole log, with the step of every entry and the turn record of the records module
    (its ending from ``end``, how the recording's transport ended)."""
    log = []
    for k, step in zip(timeline.by_kind["decision"], timeline.log, strict=True):
        record = step_record(step, timeline.pipeline)
        if record is not None:
            log.append({"step": k, **record})
    anomalies = [{"step": k, "code": a.code, "message": a.message, "call": a.key, "frame": a.frame}
                 for k, a in zip(timeline.by_kind["anomaly"], timeline.anomalies, strict=True)]
    return {
        "kind": "callscope-decision-log", "source": source, "protocol": timeline.state.protocol,
        "chunking": str(timeline.chunking), "cut_at": timeline.cut, "bytes": timeline.total_bytes,
        "frames": len(timeline.frames), "steps": len(timeline), "log": log, "anomalies": anomalies,
        "turn": turn_record(timeline.pipeline, turn_ending(timeline, end)),
    }


def log_json(log: dict[str, Any]) -> bytes:
    return json_dumps(log, orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS) + b"\n"


def _cell(value: object) -> str:
    text = safe.plain("" if value is None else str(value)).replace("\n", " ")
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`")


def _fence(text: str) -> str:
    """A code fence longer than any backtick run in the (untrusted) text."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _frame(index: object) -> str:
    return "end of stream" if index is None else f"#{index}"


def _lenient(record: dict[str, Any]) -> str:
    """What a lenient harness would have done, when it differs from the gate."""
    lenient = record.get("lenient")
    if not record.get("contrast") or not lenient:
        return ""
    dropped = f"; dropped {', '.join(lenient['dropped'])}" if lenient["dropped"] else ""
    return _cell(f"⚑ would EXECUTE ({lenient['how']}) with {json_text(lenient['arguments'])}"
                 f"{dropped}")[:300]


def log_markdown(log: dict[str, Any]) -> str:
    turn = log["turn"]
    ended = turn.get("ending")
    lines = [
        "# callscope decision log", "",
        f"- source: `{_cell(log['source'])}`",
        f"- protocol: {_cell(log['protocol'])}; chunking: {_cell(log['chunking'])}; "
        f"cut at: {_cell(log['cut_at']) or 'not cut'}; {log['bytes']} bytes, {log['frames']} frames",
        f"- turn: {'complete' if turn['complete'] else 'NOT complete'}"
        f" (signal: {_cell(turn['signal']) or 'none'}; stop reason: {_cell(turn['stop_reason']) or '-'})",
        f"- ending: {_cell(ended['line']) if ended else 'the stream is still arriving'}",
        "", "| step | call | action | reason | rule | frame | signal | detail | lenient harness |",
        "|---:|---|---|---|---|---:|---|---|---|",
    ]
    for r in log["log"]:
        detail = r.get("detail") or (f"draft {r['draft']}" if "draft" in r else "")
        signal = _cell(r.get("signal")) or ("none" if r["action"] != "wait" else "")  # (as shown)
        lines.append(f"| {r['step']} | {_cell(r['call'])} | {r['action']} | {_cell(r['reason'])} | "
                     f"{_cell(r.get('rule'))} | {_frame(r['frame'])} | {signal} | "
                     f"{_cell(detail)} | {_lenient(r)} |")
    for call in turn["calls"]:
        text = call["arguments"]
        fence = _fence(text)
        lines += ["", f"## {_cell(call['name'] or call['key'])} (`{_cell(call['key'])}`)", "",
                  f"{call['action']} {call['reason'] or ''}"
                  + (f" (rule `{call['rule']}`)" if call.get("rule") else "")
                  + f" — {_cell(call['detail'])}; "
                  f"{call['bytes']} bytes, draft {call['draft']}", "", fence,
                  "\n".join(safe.plain(line) for line in text.split("\n")), fence]
    if log["anomalies"]:
        lines += ["", "## Anomalies", ""]
        lines += [f"- step {a['step']}, frame {_frame(a['frame'])}: `{_cell(a['code'])}` "
                  f"{_cell(a['message'])}"
                  for a in log["anomalies"]]
    return "\n".join(lines) + "\n"


def write(path: Path, data: bytes | str) -> Path:
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    path.write_bytes(data)
    return path


def default_path(what: str, timeline: Timeline, source: str, folder: Path,
                 call: CallView | None, step: int) -> Path:
    """Where an export goes unless the user says otherwise (its first file)."""
    base = stem(source, timeline)
    if what == "session":
        return folder / f"{base}.jsonl"
    if what == "log":
        return folder / f"{base}.decisions.json"
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", call.key if call else "call")[:60]
    return folder / f"{base}.{name}.step{step}.args.json"


def targets(what: str, path: Path) -> list[Path]:
    """Every file an export to ``path`` writes: a session beside its raw .sse, a JSON log beside
    its Markdown."""
    if what == "session":
        return [path, path.with_suffix(".sse")]
    if what == "log":
        return [path, path.with_suffix(".md")]
    return [path]


def _session_chunks(timeline: Timeline) -> list[Chunk]:
    """The bytes as the timeline saw them, in its chunks, each at its arrival time."""
    data = timeline.data()
    return [Chunk(c.t if c.t is not None else 0.0, data[c.start:c.end])
            for c in timeline.chunks if c.start < len(data)]


def export(what: str, timeline: Timeline, source: str, path: Path, call: CallView | None,
           end: StreamEnd | None = None) -> list[Path]:
    """Write ``session`` (a session file keeping chunk timing, and the raw .sse beside it),
    ``log`` (JSON and Markdown) or ``call`` (its arguments) to ``path`` (and its sibling)."""
    files = targets(what, path)
    if what == "session":
        if timeline.cut is not None:
            end = StreamEnd("cut", detail=f"cut at byte {timeline.cut} in the debugger")
        header = SessionHeader(protocol=timeline.state.protocol, source="export",
                               provenance=f"exported by callscope from {Path(source).name}")
        save_session(str(files[0]), header, _session_chunks(timeline), end or StreamEnd("clean"))
        return [files[0], write(files[1], timeline.data())]
    if what == "log":
        log = decision_log(timeline, source, end)
        return [write(files[0], log_json(log)), write(files[1], log_markdown(log))]
    assert call is not None
    return [write(files[0], call.text)]
