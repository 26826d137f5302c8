"""Ollama's native chat (``POST /api/chat``): its spec; the reader is :mod:`..ollama_chat`. The
wire is NDJSON (:mod:`core.ndjson`), one ChatResponse object per line (the ollama client's
``ollama/_types.py``), the last with ``"done": true`` and a ``done_reason``.
"""

from __future__ import annotations

from typing import Any

from ...frame import Frame
from ..budget import TokenBudget
from ..spec import CUT, FAILED, OK, LiveShape, ProtocolSpec, StopVerdict, Synthetic
from . import openai_chat


def recognise(frame: Frame, payload: dict[str, Any] | None) -> bool:
    """A ChatResponse: ``done`` is a boolean beside the message or the creation time (no other
    protocol has a top-level ``done``)."""
    return (payload is not None and isinstance(payload.get("done"), bool)
            and ("message" in payload or "created_at" in payload))


STOP_REASONS: dict[str, StopVerdict] = {
    # done_reason, as the Ollama server sets it (llm/server.go, server/routes.go).
    "stop": OK,  # tool-call turns end with "stop" too
    "length": CUT,
    # A request with no messages loads or unloads the model: no generation, nothing vouched.
    "load": FAILED,
    "unload": FAILED,
}


def error_body(status: int) -> dict[str, Any]:
    """Ollama's error object: a bare string."""
    return {"error": f"callscope emulated HTTP {status}"}


def auth(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"} if key else {}


def body(model: str, prompt: str, max_tokens: int) -> dict[str, Any]:
    return {"model": model, "stream": True, "options": {"num_predict": max_tokens},
            "messages": [{"role": "user", "content": prompt}]}


SPEC = ProtocolSpec(
    name="ollama-chat",
    reader="ollama_chat:OllamaChatReader",
    recognise=recognise,
    stop_reasons=STOP_REASONS,
    cut_reasons=frozenset({"length"}),
    # Calls come whole, their arguments an object: a tool without parameters gets {}.
    empty_arguments_mean_empty_object=False,
    route=r"/api/chat\Z",
    error_body=error_body,
    live=LiveShape(("OLLAMA_API_KEY",), "OLLAMA_HOST", "http://127.0.0.1:11434", "/api/chat",
                   auth, body, openai_chat.tool),  # Ollama takes Chat's tool shape
    synthetic=Synthetic("synth_framed:encode_ollama", b"\n", "llama3.2", "{}"),
    framing="ndjson",
    stream_default=True,
    content_type="application/x-ndjson",
    # num_predict -1 (no limit) or -2 (fill the context) sets no limit.
    token_budget=TokenBudget(limits=(("options", "num_predict"),), spent=(("eval_count",),)),
)
