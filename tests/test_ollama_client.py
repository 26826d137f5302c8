"""The ollama Python client (its own httpx streaming and ``iter_lines``) streams
``callscope serve``'s emulated ``/api/chat`` on loopback and gets the calls the engine reads
from the same bytes; an error line after the 200, an HTTP error and a cut stream fail in the
client as they do against Ollama."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from callscope.core.engine import Engine
from callscope.core.session import open_input
from loopback import serving

ollama = pytest.importorskip("ollama")

SESSIONS = Path(__file__).resolve().parent.parent / "sessions" / "ollama-chat"


def engine_calls(path: Path) -> list[tuple[str | None, Any]]:
    engine = Engine()
    for chunk in open_input(str(path)).chunks():
        engine.feed(chunk.data)
    engine.close()
    return [(c.name, orjson.loads(c.text or "{}")) for c in engine.state.calls.values()]


def chat(url: str, fault: str | None = None) -> tuple[list[tuple[str, Any]], list[Any]]:
    headers = {"x-callscope-fault": fault} if fault else None
    client = ollama.Client(host=url, headers=headers)
    parts = list(client.chat(model="llama3.2", messages=[{"role": "user", "content": "hi"}],
                             stream=True))
    calls = [(c.function.name, dict(c.function.arguments)) for p in parts
             for c in p.message.tool_calls or ()]
    return calls, parts


def test_the_ollama_client_streams_the_calls_the_engine_reads() -> None:
    path = SESSIONS / "parallel_calls.jsonl"
    with serving(path) as url:
        calls, parts = chat(url)
    assert calls == engine_calls(path) and len(calls) == 3
    assert parts[-1].done and parts[-1].done_reason == "stop" and parts[-1].eval_count


def test_an_error_line_after_the_200_raises_response_error() -> None:
    with serving(SESSIONS / "provider_error.jsonl") as url:
        with pytest.raises(ollama.ResponseError, match="unexpected EOF"):
            chat(url)


def test_an_http_error_raises_response_error_with_its_status() -> None:
    with serving(SESSIONS / "single_call.jsonl") as url:
        with pytest.raises(ollama.ResponseError) as failure:
            chat(url, fault="status=503")
    assert failure.value.status_code == 503


def test_a_clean_close_before_done_ends_the_client_quietly_and_the_gate_refuses() -> None:
    path = SESSIONS / "parallel_calls.jsonl"
    with serving(path) as url:
        calls, parts = chat(url, fault="frames=2,end=clean")
    # The client hands over two whole calls and never says the turn did not finish.
    assert len(calls) == 2 and not any(p.done for p in parts)
    data = b"".join(c.data for c in open_input(str(path)).chunks())
    engine = Engine("ollama-chat")
    engine.feed(data[:data.index(b"\n", data.index(b"\n") + 1) + 1])
    engine.close()
    assert engine.state.terminal is None
    assert {d.action for d in engine.pipeline.decisions.values()} == {"refuse"}
