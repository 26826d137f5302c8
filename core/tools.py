"""Tool definitions in any provider's format, reduced to one: a name and a JSON Schema.

Accepted shapes (one list may mix them):

* Chat Completions: ``{"type": "function", "function": {"name", "parameters"}}``
* Responses and Interactions (flat): ``{"type": "function", "name", "parameters"}``
* Anthropic: ``{"name", "input_schema"}``
* Gemini: ``{"functionDeclarations": [{"name", "parameters" | "parametersJsonSchema"}]}``
  (also ``function_declarations``), or a bare ``{"name", "parameters"}``.
* Bedrock Converse: ``{"toolSpec": {"name", "inputSchema": {"json": schema}}}`` (in the
  request's ``toolConfig.tools``).

Definitions without a schema (server tools such as ``web_search``) accept any object.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from .errors import CallscopeError, InputError
from .inert import nested_deeper, preview
from .schema_subset import SubsetValidator, compile_subset

ANY_OBJECT: dict[str, Any] = {"type": "object"}

# A schema in the subset tool definitions mostly use is validated by core/schema_subset.py
# (held equal to jsonschema by a differential test); any other schema by jsonschema, imported
# when a first one is compiled, not with the engine: its import costs more than a small replay.
# A schema is checked against its metaschema and compiled once per process, however many
# inputs (or session headers) repeat it.
_COMPILED: dict[bytes, Any] = {}
_COMPILED_MAX = 1024


def _compile(name: str, schema: dict[str, Any] | bool) -> Any:
    """A validator for ``schema`` (checked against its metaschema), from the process's cache."""
    try:
        key: bytes | None = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)
    except (orjson.JSONEncodeError, TypeError):
        key = None
    if key is not None and key in _COMPILED:
        return _COMPILED[key]
    validator: Any = compile_subset(schema)
    if validator is None:
        validator = _compile_with_jsonschema(name, schema)
    if key is not None:
        if len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.pop(next(iter(_COMPILED)))
        _COMPILED[key] = validator
    return validator


def _compile_with_jsonschema(name: str, schema: dict[str, Any] | bool) -> Any:
    import jsonschema
    from jsonschema.exceptions import SchemaError
    from referencing import Registry

    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
    except SchemaError as exc:
        raise ToolDefinitionError(f"tool {name!r}: invalid JSON Schema: {exc.message}") from None
    except RecursionError:  # jsonschema quotes the schema in its message, level by level
        raise ToolDefinitionError(f"tool {name!r}: JSON Schema nested too deep") from None
    # Definitions are untrusted (session headers, --tools files): an empty registry means a
    # $ref is resolved inside the schema or not at all; nothing is ever fetched.
    return cls(schema, registry=Registry())


class ToolDefinitionError(CallscopeError):
    pass


@dataclass(frozen=True)
class Tool:
    name: str
    schema: dict[str, Any]
    source_format: str


def _declarations(entry: dict[str, Any]) -> Iterator[Tool]:
    if "function" in entry and isinstance(entry["function"], dict):
        fn = entry["function"]
        yield Tool(str(fn.get("name")), fn.get("parameters") or ANY_OBJECT, "chat")
        return
    for field in ("functionDeclarations", "function_declarations"):
        if isinstance(entry.get(field), list):
            for decl in entry[field]:
                if not isinstance(decl, dict):
                    raise ToolDefinitionError(f"not a function declaration: {preview(decl, 80)}")
                schema = decl.get("parameters") or decl.get("parametersJsonSchema") or ANY_OBJECT
                yield Tool(str(decl.get("name")), schema, "gemini")
            return
    if "input_schema" in entry:
        yield Tool(str(entry.get("name")), entry["input_schema"] or ANY_OBJECT, "anthropic")
        return
    if isinstance(entry.get("toolSpec"), dict):
        spec = entry["toolSpec"]
        wrapped = spec.get("inputSchema")
        schema = wrapped.get("json") if isinstance(wrapped, dict) else None
        yield Tool(str(spec.get("name")), schema or ANY_OBJECT, "converse")
        return
    if "name" in entry:
        fmt = "flat" if entry.get("type") == "function" else "bare"
        yield Tool(str(entry["name"]), entry.get("parameters") or ANY_OBJECT, fmt)
        return
    if entry.get("type"):  # a provider-side tool with no name of its own, e.g. {"type":"web_search"}
        yield Tool(str(entry["type"]), ANY_OBJECT, "server")
        return
    raise ToolDefinitionError(f"not a tool definition: {preview(entry, 80)}")


class ToolSet:
    """The tools a turn may call, with compiled validators."""

    def __init__(self, definitions: Iterable[dict[str, Any]] = ()) -> None:
        self.tools: dict[str, Tool] = {}
        self._validators: dict[str, Any] = {}
        for entry in definitions:
            if not isinstance(entry, dict):
                raise ToolDefinitionError(f"not a tool definition: {preview(entry, 80)}")
            for tool in _declarations(entry):
                self.add(tool)

    def add(self, tool: Tool) -> None:
        if not isinstance(tool.schema, dict | bool):
            raise ToolDefinitionError(f"tool {tool.name!r}: a JSON Schema is an object or a boolean, "
                                      f"not {preview(tool.schema, 40)}")
        validator = _compile(tool.name, tool.schema)
        self.tools[tool.name] = tool
        self._validators[tool.name] = validator

    def __contains__(self, name: object) -> bool:
        return name in self.tools

    def __len__(self) -> int:
        return len(self.tools)

    def schema_error(self, name: str, arguments: Any) -> str | None:
        """The first JSON Schema violation as ``path: message``, or None when valid."""
        validator = self._validators[name]
        if isinstance(validator, SubsetValidator):
            found = validator.first_error(arguments)
            return None if found is None else _located(*found)
        from referencing.exceptions import Unresolvable

        try:
            error = next(iter(sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))), None)
        except Unresolvable as exc:
            return f"$: the tool's schema has a $ref that does not resolve ({str(exc)[:120]})"
        if error is None:
            return None
        return _located(tuple(error.path), error.message)


def _located(path: tuple[str | int, ...], message: str) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path) + f": {message}"


MAX_TOOLS_DEPTH = 200
"""Nesting of a ``--tools FILE`` (its own level included): the file becomes part of a session
header, which holds at most 254 levels (``core/session_reader.py``), below the header's own."""


def read_tools_file(path: str) -> list[Any]:
    """The definitions in a ``--tools FILE``: a JSON list, or an object with a ``tools`` list
    (a request body works as is). Errors name the file (and the line of a JSON error)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise InputError(path, exc.strerror or "cannot read") from None
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InputError(path, f"not JSON ({exc})", line=raw.count(b"\n", 0, exc.pos) + 1) from None
    if nested_deeper(raw, value, MAX_TOOLS_DEPTH):
        # Refused here, not later: a session could not hold these definitions (254 levels), and
        # schema validators recurse on them.
        raise InputError(path, f"nested deeper than {MAX_TOOLS_DEPTH} levels")
    if isinstance(value, dict) and "tools" in value:
        value = value["tools"]
    if not isinstance(value, list):
        raise InputError(path, "expected a JSON list of tool definitions")
    return value


def tools_from_request(body: Any) -> list[dict[str, Any]]:
    """The tool definitions inside a recorded request body, whatever the provider."""
    if not isinstance(body, dict):
        return []
    tools = body.get("tools")
    config = body.get("toolConfig")  # Bedrock Converse keeps its tools there
    if tools is None and isinstance(config, dict):
        tools = config.get("tools")
    return [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
