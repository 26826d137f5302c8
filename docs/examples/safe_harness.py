"""A safe OpenAI Chat Completions harness: callscope finds nothing to say about it.

It frames Server-Sent Events on their blank line (a ``data:`` line alone is not an event yet),
accumulates each call's argument text by its ``index``, and executes only once ``data: [DONE]``
(the terminal signal) has arrived after a ``finish_reason`` of ``tool_calls``, with no error
event, each call's arguments parsed strictly and valid against its declared tool's schema.

    from callscope.testing import check_harness
    from safe_harness import make_safe_harness
    report = check_harness(make_safe_harness(tools), "sessions/openai-chat/single_call.jsonl")

``tools`` are Chat Completions definitions (``{"type": "function", "function": {...}}``).
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import jsonschema


def events(chunks: Iterator[bytes]) -> Iterator[str]:
    """The data of each SSE event, yielded at its blank line; CR, LF and CRLF line ends."""
    decoder = codecs.getincrementaldecoder("utf-8")()  # a character split across reads waits
    text, data = "", []
    for chunk in chunks:
        text += decoder.decode(chunk)
        lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        text = lines.pop()
        for line in lines:
            if line == "":
                if data:
                    yield "\n".join(data)
                data = []
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))


def make_safe_harness(tools: Sequence[dict[str, Any]]) -> Callable[[Iterator[bytes]], list[Any]]:
    schemas = {t["function"]["name"]: t["function"].get("parameters") or {"type": "object"}
               for t in tools}

    def harness(chunks: Iterator[bytes]) -> list[tuple[str, Any]]:
        calls: dict[int, dict[str, str]] = {}
        finish, done = None, False
        for data in events(chunks):
            if data == "[DONE]":
                done = True
                break
            event = json.loads(data)
            if "error" in event:
                return []  # the provider failed the turn
            for choice in event.get("choices") or []:
                for part in (choice.get("delta") or {}).get("tool_calls") or []:
                    call = calls.setdefault(part["index"], {"name": "", "arguments": ""})
                    function = part.get("function") or {}
                    call["name"] += function.get("name") or ""
                    call["arguments"] += function.get("arguments") or ""
                finish = choice.get("finish_reason") or finish
        if not done or finish != "tool_calls":
            return []  # no terminal signal, or the model did not stop to call tools
        parsed = []
        for call in calls.values():
            if call["name"] not in schemas:
                return []
            try:
                arguments = json.loads(call["arguments"] or "{}")
                jsonschema.validate(arguments, schemas[call["name"]])
            except (json.JSONDecodeError, jsonschema.ValidationError):
                return []  # one bad call: run none of the turn (the gate refuses it)
            parsed.append((call["name"], arguments))
        return parsed

    return harness
