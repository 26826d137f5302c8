#!/usr/bin/env python3
"""Build the bundled sessions in ``sessions/``, deterministically.

* ``sessions/<protocol>/<scenario>.jsonl``: one constructed turn per protocol and scenario,
  encoded by ``core/synth.py`` exactly as that provider streams it, then split into network
  reads with arrival times. The demo tools' definitions are in each header, in the provider's
  own tool format, inside the recorded request too.
* ``sessions/demo.jsonl`` (the session the app opens by default) and ``demo_complete.jsonl``.
* ``sessions/fixtures/<provider>/<name>.jsonl``: every real recording of ``tests/fixtures/``,
  imported with ``callscope import`` and its line of ``tests/fixtures/SOURCES.md``.
* ``sessions/README.md``: a table of every session and what the gate decides, computed by
  replaying each one through the engine.

Usage: ``python scripts/build_sessions.py [--out DIR] [--seed N]``. Same seed, same bytes.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from callscope.core.demo_tools import DEMO_TOOL_DEFINITIONS
from callscope.core.engine import DecisionStep, Engine
from callscope.core.harness import Decision
from callscope.core.providers import SPECS
from callscope.core.replay import replay
from callscope.core.session import Chunk, SessionHeader, StreamEnd, open_input, save_session
from callscope.core.synth import (
    MODELS,
    NO_ARGUMENTS,
    PROTOCOLS,
    Cut,
    Item,
    Stop,
    Text,
    ToolCall,
    Turn,
    synthesize,
)
from callscope.core.tools import ToolSet, tools_from_request
from callscope.tui.cli import main as callscope

ROOT = Path(__file__).resolve().parent.parent
SEED = 20260520
CONTENT_TYPES = {name: spec.content_type for name, spec in SPECS.items()
                 if spec.content_type != "text/event-stream"}
"""The response content type of the protocols that are not SSE."""
FIXTURES = ROOT / "tests" / "fixtures"
FIXTURE_PROTOCOLS = {
    "openai-responses": "openai-responses", "openai-chat": "openai-chat",
    "anthropic": "anthropic", "gemini-interactions": "gemini-interactions",
    "gemini-generatecontent": "gemini-generate",
}

# -- tools and requests ----------------------------------------------------------------------

DESCRIPTIONS = {
    "lookup_demo_value": "Look up a value in the demo notebook by its key.",
    "add_demo_numbers": "Add two numbers.",
    "delete_demo_file": "Delete a file of the in-memory demo folder (dry_run only reports).",
    "list_demo_keys": "List the keys of the demo notebook (takes no arguments).",
}

FAKE_KEYS = {  # placeholders: save_session writes "[REDACTED]" in their place
    "openai": "Bearer sk-proj-demo-not-a-real-key", "anthropic": "sk-ant-demo-not-a-real-key",
    "google": "AIza-demo-not-a-real-key",
}


def provider_tools(protocol: str, definitions: list[dict[str, Any]],
                   eager: bool = False) -> list[dict[str, Any]]:
    """The definitions in the provider's own tool format (PROTOCOLS.md §1.1-4b.1)."""
    def described(d: dict[str, Any]) -> dict[str, Any]:
        return {"name": d["name"], "description": DESCRIPTIONS.get(d["name"], ""),
                "parameters": d["parameters"]}
    if protocol == "openai-chat":
        return [{"type": "function", "function": described(d)} for d in definitions]
    if protocol == "anthropic":
        return [{"name": d["name"], "description": DESCRIPTIONS.get(d["name"], ""),
                 "input_schema": d["parameters"]} | ({"eager_input_streaming": True} if eager else {})
                for d in definitions]
    if protocol == "gemini-generate":
        return [{"functionDeclarations": [described(d) for d in definitions]}]
    if protocol in ("bedrock-converse", "bedrock-invoke", "ollama-chat"):
        plain = {"name": "", "description": ""}
        return [SPECS[protocol].live.tool({**plain, "name": d["name"],
                                           "description": DESCRIPTIONS.get(d["name"], "")},
                                          d["parameters"]) for d in definitions]
    flat = [{"type": "function", **described(d)} for d in definitions]
    return [t | {"strict": False} for t in flat] if protocol == "openai-responses" else flat


def request_for(protocol: str, model: str, prompt: str, tools: list[dict[str, Any]],
                max_tokens: int | None) -> dict[str, Any]:
    if SPECS[protocol].framing != "sse":  # (Bedrock's, Ollama's: their own request, not Gemini's)
        return framed_request(protocol, model, prompt, tools, max_tokens)
    user = [{"role": "user", "content": prompt}]
    openai = {"Authorization": FAKE_KEYS["openai"], "Content-Type": "application/json",
              "Accept": "text/event-stream"}
    google = {"x-goog-api-key": FAKE_KEYS["google"], "Content-Type": "application/json"}
    limit: dict[str, Any]
    if protocol == "openai-responses":
        limit = {"max_output_tokens": max_tokens} if max_tokens else {}
        return {"method": "POST", "url": "https://api.openai.com/v1/responses", "headers": openai,
                "body": {"model": model, "input": prompt, "stream": True, "tools": tools,
                         "tool_choice": "auto", **limit}}
    if protocol == "openai-chat":
        limit = {"max_completion_tokens": max_tokens} if max_tokens else {}
        return {"method": "POST", "url": "https://api.openai.com/v1/chat/completions",
                "headers": openai,
                "body": {"model": model, "messages": user, "stream": True,
                         "stream_options": {"include_usage": True}, "tools": tools, **limit}}
    if protocol == "anthropic":
        return {"method": "POST", "url": "https://api.anthropic.com/v1/messages",
                "headers": {"x-api-key": FAKE_KEYS["anthropic"], "anthropic-version": "2023-06-01",
                            "content-type": "application/json"},
                "body": {"model": model, "max_tokens": max_tokens or 1024, "stream": True,
                         "tools": tools, "messages": user}}
    if protocol == "gemini-interactions":
        limit = {"generation_config": {"max_output_tokens": max_tokens}} if max_tokens else {}
        return {"method": "POST",
                "url": "https://generativelanguage.googleapis.com/v1beta/interactions",
                "headers": google | {"Api-Revision": "2026-05-20"},
                "body": {"model": model, "input": prompt, "stream": True, "tools": tools, **limit}}
    limit = {"generationConfig": {"maxOutputTokens": max_tokens}} if max_tokens else {}
    return {"method": "POST",
            "url": f"https://generativelanguage.googleapis.com/v1beta/models/{model}"
                   ":streamGenerateContent?alt=sse",
            "headers": google,
            "body": {"contents": [{"role": "user", "parts": [{"text": prompt}]}], "tools": tools,
                     "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}}, **limit}}


def framed_request(protocol: str, model: str, prompt: str, tools: list[dict[str, Any]],
                   max_tokens: int | None) -> dict[str, Any]:
    """The request of a protocol that is not SSE: its spec's live body and path, the tools
    where the provider takes them (Converse: ``toolConfig``)."""
    live = SPECS[protocol].live
    body = live.body(model, prompt, max_tokens or 1024)
    if protocol == "bedrock-converse":
        body["toolConfig"] = {"tools": tools}
    else:
        body["tools"] = tools
    host = "http://127.0.0.1:11434" if protocol == "ollama-chat" else live.default_base
    headers = {"content-type": "application/json"}
    if protocol != "ollama-chat":  # SigV4, redacted as a recording would have it
        headers |= {"Authorization": "AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE/20260520/"
                    "us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=0",
                    "X-Amz-Date": "20260520T100000Z"}
    return {"method": "POST", "url": host + live.path.replace("{model}", model),
            "headers": headers, "body": body}


# -- scenarios ---------------------------------------------------------------------------------

LOOKUP, ADD, DELETE = "lookup_demo_value", "add_demo_numbers", "delete_demo_file"
CUT_DELETE = '{"path":"notes/plan.txt","dry_run":true}'
INVALID = {  # what fine-grained streaming and sloppy models produce, per protocol
    "anthropic": '{"key": "the "Objective" entry"}',  # an unescaped quote
    "openai-responses": '{"key":"Objective"',  # the closing brace never comes
    "openai-chat": '{"key":"Objective"}}',  # one brace too many
    "gemini-interactions": '{"key": "Objective",}',  # a trailing comma
    "gemini-generate": '{"key": "the "Objective" entry"}',
    "bedrock-converse": '{"key":"Objective"',  # the closing brace never comes
    "bedrock-invoke": '{"key": "the "Objective" entry"}',
    "ollama-chat": '{"key": "the "Objective" entry"}',
}
MULTIBYTE_TEXT = "Voilà ✅ — 締め切りを確認します 🎯. Señor Müller’s «échéance» is in 数据表 🚀."


@dataclass(frozen=True)
class Scenario:
    name: str
    prompt: str
    what: str
    """One line for the provenance: what the turn is."""
    why: str
    """What the gate decides, and why (the README column)."""
    items: Callable[[str], tuple[Item, ...]]
    stop: Stop = Stop()
    cut: tuple[int, str] | None = None
    """(item, argument prefix received before the connection resets)."""
    inside_chars: float = 0.0
    max_tokens: int | None = None
    eager: bool = False
    extra_tools: tuple[dict[str, Any], ...] = ()
    why_for: dict[str, str] = field(default_factory=dict)
    """Where a protocol's wire makes the decision differ."""


def _fixed(*items: Item) -> Callable[[str], tuple[Item, ...]]:
    return lambda _protocol: items


SCENARIOS = (
    Scenario("single_call", "When is the demo deadline?", "one lookup_demo_value call",
             "execute: the turn ended with its terminal signal, the JSON parses, the schema holds",
             _fixed(ToolCall(LOOKUP, '{"key":"Deadline"}'))),
    Scenario("parallel_calls", "Who owns the demo, what is 19.5 + 22.5, and clean up the plan "
             "(dry run)?", "three calls in one turn",
             "execute x3: each call is checked on its own once the turn has ended",
             _fixed(ToolCall(LOOKUP, '{"key":"Owner"}'), ToolCall(ADD, '{"a": 19.5, "b": 22.5}'),
                    ToolCall(DELETE, '{"path":"notes/plan.txt","dry_run":true}'))),
    Scenario("text_then_call", "What is the demo objective?", "assistant text, then a call",
             "execute: text before a call changes nothing",
             _fixed(Text("I'll look up the objective in the demo notebook first."),
                    ToolCall(LOOKUP, '{"key":"Objective"}'))),
    Scenario("truncated_mid_arguments", "Who owns the demo? Then delete the plan (dry run).",
             "the connection resets inside the second call's arguments",
             "refuse truncated (both calls): the terminal signal never came; a lenient harness "
             "would delete notes/plan.txt with dry_run dropped",
             why_for={"gemini-generate": "refuse truncated (lookup): the terminal signal never "
                      "came; calls arrive whole here, so the call cut mid-frame never arrives"},
             items=_fixed(Text("Checking the owner, then cleaning up."), ToolCall(LOOKUP, '{"key":"Owner"}'),
                    ToolCall(DELETE, CUT_DELETE)),
             cut=(2, '{"path":"notes/plan.txt","dry_run":t')),
    Scenario("max_tokens", "Summarize the objective, then delete the todo file.",
             "the token limit cuts the turn inside the second call",
             "refuse truncated: the provider says the output was cut (length / max_tokens / "
             "incomplete / MAX_TOKENS), even for the call whose JSON is complete",
             why_for={"gemini-generate": "refuse truncated: finishReason MAX_TOKENS; the unfinished "
                      "call is never sent (calls arrive whole)"},
             items=_fixed(Text("Summary first: the objective is"), ToolCall(LOOKUP, '{"key":"Objective"}'),
                    ToolCall(DELETE, '{"path":"notes/todo.txt","dr', closed=False)),
             stop=Stop("length"), max_tokens=48),
    Scenario("provider_error", "Look up the deadline and add 1 and 2.",
             "the provider reports an error while the second call streams",
             "refuse provider_error: the provider reported an error and no terminal signal "
             "follows (the gate names both)",
             why_for={"openai-responses": "refuse provider_error: error, then response.failed "
                      "(a terminal signal that reports the failure)",
                      "gemini-generate": "refuse provider_error: the error chunk is not a "
                      "finishReason; the unfinished call is never sent"},
             items=_fixed(ToolCall(LOOKUP, '{"key":"Deadline"}'),
                    ToolCall(ADD, '{"a": 1, "b', closed=False)),
             stop=Stop("error")),
    Scenario("invalid_json", "What is the objective?",
             "the call's argument text is not JSON (fine-grained / eager streaming)",
             "refuse invalid_json: the strict parse fails although the turn ended normally",
             why_for={"gemini-generate": "no call: arguments are objects here, so the server ends "
                      "the turn with finishReason MALFORMED_FUNCTION_CALL instead of sending one",
                      "anthropic": "refuse invalid_json: an unescaped quote, as eager (fine-grained) "
                      "input streaming can send, with a normal tool_use stop"},
             items=lambda p: (ToolCall(LOOKUP, INVALID[p]),), eager=True),
    Scenario("no_arguments", "List the demo keys.", "a call of a tool without parameters",
             "execute with {}: the demo tool list_demo_keys runs; the "
             "wire form differs: OpenAI sends \"{}\", Anthropic one empty partial_json, Gemini "
             "no arguments at all",
             lambda p: (ToolCall("list_demo_keys", NO_ARGUMENTS[p]),)),
    Scenario("multibyte", "Trouve l’échéance 締め切り 🎯", "emoji, CJK and accented text and "
             "arguments; network reads split inside multi-byte characters",
             "execute: characters split across reads are reassembled before any parsing",
             _fixed(Text(MULTIBYTE_TEXT), ToolCall(LOOKUP, '{"key":"Échéance 締め切り 🎯"}')),
             inside_chars=1.0),
    Scenario("schema_violation", "Add 19 and 23.", "a number sent as a string",
             "refuse schema: $.a is not of type number", _fixed(ToolCall(ADD, '{"a":"19","b":23}'))),
    Scenario("unknown_tool", "Email the team.", "a call of a tool the request never declared",
             "refuse unknown_tool: no definition for send_demo_email",
             _fixed(ToolCall("send_demo_email", '{"to":"team@example.com","subject":"Déploiement ✅"}'))),
)

WHOLE_CALLS_WHY = {  # Ollama sends each call whole, its arguments an object, as Gemini does
    "truncated_mid_arguments": "refuse truncated (lookup): the done object never came; calls "
    "arrive whole here, so the call cut mid-line never arrives",
    "max_tokens": "refuse truncated: done_reason length; the unfinished call is never sent",
    "provider_error": "refuse provider_error: an error line, no done object; the unfinished call "
    "is never sent",
    "invalid_json": "no call: Ollama parses the model's call itself and sends objects only",
}
for _scenario in SCENARIOS:
    if _scenario.name in WHOLE_CALLS_WHY:
        _scenario.why_for["ollama-chat"] = WHOLE_CALLS_WHY[_scenario.name]

NORMAL = Stop()
DEMO_TURN = (ToolCall(LOOKUP, '{"key":"Objective"}'),
             ToolCall(DELETE, '{"path":"notes/todo.txt","dry_run":true}'))
DEMO_CUT = '{"path":"notes/todo.txt","dry_run":tr'


# -- building ----------------------------------------------------------------------------------

def seed_for(base: int, name: str) -> int:
    return base + zlib.crc32(name.encode())  # not hash(): that is salted per process


def write_constructed(path: Path, protocol: str, items: tuple[Item, ...], *, seed: int,
                      what: str, prompt: str, stop: Stop = NORMAL, cut: tuple[int, str] | None = None,
                      inside_chars: float = 0.0, max_tokens: int | None = None, eager: bool = False,
                      extra_tools: tuple[dict[str, Any], ...] = (),
                      breaks: tuple[tuple[int, int], ...] = ()) -> None:
    tools = provider_tools(protocol, [*DEMO_TOOL_DEFINITIONS, *extra_tools], eager)
    turn = Turn(items, stop, cut=Cut(cut[0], len(cut[1])) if cut else None, tools=tuple(tools),
                breaks=breaks, output_tokens=max_tokens if stop.kind == "length" else None)
    stream = synthesize(protocol, turn, random.Random(seed), inside_chars=inside_chars)
    header = SessionHeader(
        protocol=protocol, source="constructed", status=200,
        provenance=f"constructed by scripts/build_sessions.py (seed {seed}): {what}",
        request=request_for(protocol, MODELS[protocol], prompt, tools, max_tokens),
        tools=tools, response_headers={"content-type": CONTENT_TYPES.get(
            protocol, "text/event-stream; charset=utf-8")})
    detail = "connection reset by peer in the middle of the body" if stream.end == "reset" else None
    path.parent.mkdir(parents=True, exist_ok=True)
    save_session(str(path), header, (Chunk(t, data) for t, data in stream.chunks),
                 StreamEnd(stream.end, at=stream.end_t, detail=detail))


def source_lines() -> dict[str, str]:
    """``provider/file.sse`` -> its line of SOURCES.md (without the list marker)."""
    lines = {}
    for line in (FIXTURES / "SOURCES.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("- `") and "` — " in line:
            lines[line[3:line.index("` — ")]] = line[2:]
    return lines


def import_fixtures(out: Path) -> list[Path]:
    written = []
    sources = source_lines()
    for capture in sorted(FIXTURES.glob("*/*.sse")):
        provider = capture.parent.name
        key = f"{provider}/{capture.name}"
        if key not in sources:
            raise SystemExit(f"{key} has no line in tests/fixtures/SOURCES.md")
        target = out / "fixtures" / provider / f"{capture.stem}.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.redirect_stdout(io.StringIO()):
            code = callscope(["import", str(capture), "-o", str(target), "--protocol",
                              FIXTURE_PROTOCOLS[provider], "--provenance", sources[key]])
        if code != 0:
            raise SystemExit(f"callscope import {capture} failed ({code})")
        written.append(target)
    return written


def build(out: Path, seed: int = SEED) -> list[tuple[Path, str, str]]:
    """Write every session under ``out``; returns (path, scenario, why) per constructed one."""
    built: list[tuple[Path, str, str]] = []
    prompt = "What is the demo objective? Then delete notes/todo.txt (dry run)."
    write_constructed(out / "demo.jsonl", "openai-responses", DEMO_TURN, seed=seed, prompt=prompt,
                      what="lookup_demo_value complete, then delete_demo_file cut right before "
                           "\"dry_run\" finishes (the connection resets)", cut=(1, DEMO_CUT))
    built.append((out / "demo.jsonl", "demo (cut)", "refuse truncated (both): the connection "
                  "reset before response.completed; a lenient harness would run delete_demo_file "
                  "with dry_run silently dropped"))
    write_constructed(out / "demo_complete.jsonl", "openai-responses", DEMO_TURN, seed=seed,
                      prompt=prompt, what="lookup_demo_value, then delete_demo_file, complete "
                      "(the bytes of demo.jsonl, then the rest)", breaks=((1, len(DEMO_CUT)),))
    built.append((out / "demo_complete.jsonl", "demo (complete)", "execute (both): the demo "
                  "tools really run; delete_demo_file is a dry run and deletes nothing"))
    for protocol in PROTOCOLS:
        for sc in SCENARIOS:
            path = out / protocol / f"{sc.name}.jsonl"
            write_constructed(path, protocol, sc.items(protocol),
                              seed=seed_for(seed, f"{protocol}/{sc.name}"), what=sc.what,
                              prompt=sc.prompt, stop=sc.stop, cut=sc.cut,
                              inside_chars=sc.inside_chars, max_tokens=sc.max_tokens,
                              eager=sc.eager and protocol == "anthropic",
                              extra_tools=sc.extra_tools)
            built.append((path, sc.name, sc.why_for.get(protocol, sc.why)))
    return built


# -- the README ------------------------------------------------------------------------------

def decisions(path: Path) -> tuple[str, list[Decision], Any]:
    session = open_input(str(path))
    header = session.header
    definitions = header.tools or tools_from_request((header.request or {}).get("body"))
    engine = Engine(header.protocol, ToolSet(definitions))
    found = [s.decision for s in replay(((c.t, c.data) for c in session.chunks()), engine=engine)
             if isinstance(s, DecisionStep)]
    return engine.state.protocol, found, engine.state


def verdict(found: list[Decision], state: Any) -> str:
    if not found:
        how = state.terminal.signal if state.terminal else "no terminal signal"
        return f"no call ({how})"
    labels = [d.action if d.action == "execute" else f"refuse {d.reason}" for d in found]
    return ", ".join(f"{label} x{labels.count(label)}" if labels.count(label) > 1 else label
                     for label in dict.fromkeys(labels))


def lenient(found: list[Decision], state: Any) -> str:
    """The calls a lenient harness would have run although the gate refused them."""
    parts = []
    for d in found:
        if d.contrast and d.lenient is not None:
            dropped = f", drops {', '.join(d.lenient.dropped)}" if d.lenient.dropped else ""
            parts.append(f"runs {state.calls[d.call].name} ({d.lenient.how}{dropped})")
    return "; ".join(parts) or "-"


def write_readme(out: Path, built: list[tuple[Path, str, str]], fixtures: list[Path],
                 seed: int) -> None:
    rows = ["| session | protocol | scenario | source | gate decision | lenient harness | why |",
            "|---|---|---|---|---|---|---|"]
    for path, scenario, why in built:
        protocol, found, state = decisions(path)
        rows.append(f"| `{path.relative_to(out)}` | {protocol} | {scenario} | constructed | "
                    f"{verdict(found, state)} | {lenient(found, state)} | {why} |")
    sources = source_lines()
    for path in fixtures:
        protocol, found, state = decisions(path)
        refusal = next((d.detail for d in found if d.action == "refuse"), None)
        if refusal is None:
            refusal = "all checks passed" if found else (
                "the turn ended with its terminal signal" if state.terminal else
                "the stream ended before a dispatched terminal event")
        source = sources[f"{path.parent.name}/{path.stem}.sse"]
        kind = ("synthetic (SDK-authored)" if "SYNTHETIC" in source
                else "real, reconstructed framing" if "RECONSTRUCTED" in source else "real")
        rows.append(f"| `{path.relative_to(out)}` | {protocol} | recording | {kind} | "
                    f"{verdict(found, state)} | {lenient(found, state)} | {refusal.replace('|', '/')} |")
    text = f"""# Bundled sessions

Built by `python scripts/build_sessions.py` (seed {seed}); do not edit by hand. Re-running the
script rewrites every file byte for byte identically.

* `demo.jsonl` is what `callscope` opens without an argument; `demo_complete.jsonl` is the same
  turn received whole.
* `<protocol>/<scenario>.jsonl` are **constructed** turns: `core/synth.py` writes each provider's
  exact wire format (PROTOCOLS.md), fragments the text as models do (1 to 8 characters), and
  splits the bytes into network reads that ignore every boundary, with plausible arrival times.
  Their headers carry the demo tools (`core/demo_tools.py`) in the provider's own tool format,
  also inside the recorded request, whose credential header is redacted.
* `fixtures/<provider>/<name>.jsonl` are the **real recordings** of `tests/fixtures/`, imported
  with `callscope import` (one chunk each: the recordings kept no chunk boundaries); their
  provenance line is the one from `tests/fixtures/SOURCES.md`. The recordings came without
  their requests, so they declare no tools: a call that passes the turn, JSON and schema checks
  is refused `unknown_tool` (replay with `--tools FILE` to supply definitions). Five of them end
  without the blank line after their last event, as their sources stored them; that event is
  then never dispatched and the turn counts as truncated (see `tests/fixtures/SOURCES.md`).

The gate decision and the lenient harness columns are computed by replaying each session
through the engine (`callscope replay FILE`); "lenient harness" lists the calls a harness that
salvages partial JSON and runs on whatever arrived would have executed although the gate refused
them.

{chr(10).join(rows)}
"""
    (out / "README.md").write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "sessions")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    built = build(args.out, args.seed)
    fixtures = import_fixtures(args.out)
    write_readme(args.out, built, fixtures, args.seed)
    print(f"wrote {len(built)} constructed and {len(fixtures)} imported sessions to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
