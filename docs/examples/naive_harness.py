"""A naive OpenAI Chat Completions harness, as many are written: callscope catches it.

It parses every ``data:`` line as soon as the line is complete, runs the calls as soon as a
``finish_reason`` arrives (not at ``[DONE]``, the terminal signal), and when the stream just
stops it "salvages" the partial JSON by closing what was left open. Run it under test:

    from callscope.testing import check_harness
    from naive_harness import naive_harness
    report = check_harness(naive_harness, "sessions/openai-chat/single_call.jsonl")
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any


def salvage(text: str) -> Any:
    """Close the strings, objects and arrays left open, as lenient parsers do."""
    try:
        return json.loads(text or "{}")
    except json.JSONDecodeError:
        pass
    closers, in_string, escaped = [], False, False
    for ch in text:
        if in_string:
            escaped = ch == "\\" and not escaped
            in_string = not (ch == '"' and not escaped)
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            closers.append("}" if ch == "{" else "]")
        elif ch in "}]" and closers:
            closers.pop()
    repaired = text.rstrip(",: ") + ('"' if in_string else "") + "".join(reversed(closers))
    try:
        return json.loads(repaired)
    except json.JSONDecodeError:
        return {}


def naive_harness(chunks: Iterator[bytes]) -> list[tuple[str, Any]]:
    calls: dict[int, dict[str, str]] = {}
    pending = b""
    for chunk in chunks:
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            line = line.rstrip(b"\r")
            if not line.startswith(b"data: ") or line == b"data: [DONE]":
                continue
            event = json.loads(line[6:])
            for choice in event.get("choices") or []:
                for part in (choice.get("delta") or {}).get("tool_calls") or []:
                    call = calls.setdefault(part.get("index", 0), {"name": "", "arguments": ""})
                    function = part.get("function") or {}
                    call["name"] += function.get("name") or ""
                    call["arguments"] += function.get("arguments") or ""
                if choice.get("finish_reason"):  # the stop reason: run now
                    return [(c["name"], salvage(c["arguments"])) for c in calls.values()]
    return [(c["name"], salvage(c["arguments"])) for c in calls.values()]  # the stream stopped
