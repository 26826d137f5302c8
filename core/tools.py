"""Tool definitions in any provider's format, reduced to one: a name and a JSON Schema.

Accepted shapes (one list may mix them):

* Chat Completions: ``{"type": "function", "function": {"name", "parameters"}}``
* Responses and Interactions (flat): ``{"type": "function", "name", "parameters"}``
* Anthropic: ``{"name", "input_schema"}``
* Gemini: ``{"functionDeclarations": [{"name", "parameters" | "parametersJsonSchema"}]}``
  (also ``function_declarations``), or a bare ``{"name", "parameters"}``.
* Bedrock Converse: ``{"toolSpec": {"name", "inputSchema": {"json": schema}}}`` (in the
  request's ``toolConfig.tools``).

Definitions without a schema (server tools such as ``web_search``) accept any object. So do
those whose schema is ``null`` where the provider reads a null as absent: OpenAI's
``parameters`` (Chat: optional, omitted means no parameters; Responses: "object or null") and
Gemini's (proto3 JSON reads a null as the field's default); Anthropic's ``input_schema`` and
Bedrock's ``inputSchema.json`` are required objects, so a null there is a bad definition. A
schema is a JSON Schema: an object (``{}`` accepts anything) or a boolean (``true`` accepts
anything, ``false`` nothing: every call of that tool is refused by schema validation); any
other value (a list, a number, a string) is a bad definition, never read as "any object".
Every tool needs a name, a non-empty string. A bad definition raises
:class:`ToolDefinitionError` naming it by its place in the list (``tools[2]``) or its name.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from copy import copy
from typing import Any

import orjson
from msgspec import Struct

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


class Tool(Struct, frozen=True):
    name: str
    schema: dict[str, Any] | bool
    source_format: str


_ABSENT: Any = object()
"""A definition without the key that holds its schema (or name)."""


class _Declared(Struct, frozen=True):
    """One tool as its definition writes it, before its name and schema are checked."""

    where: str  # its place in the list, for messages: tools[0], tools[1].functionDeclarations[2]
    name: Any
    schema: Any  # _ABSENT when the definition has no schema key
    source_format: str
    null_is_absent: bool  # whether this provider reads a null schema as none given


def _declarations(entry: dict[str, Any], where: str) -> Iterator[_Declared]:
    if "function" in entry:
        fn = entry["function"]
        if not isinstance(fn, dict):
            raise ToolDefinitionError(f"{where}: its function is an object (name, parameters), "
                                      f"not {_quoted(fn)}")
        yield _Declared(f"{where}.function", fn.get("name", _ABSENT),
                        fn.get("parameters", _ABSENT), "chat", True)
        return
    for field in ("functionDeclarations", "function_declarations"):
        if isinstance(entry.get(field), list):
            for i, decl in enumerate(entry[field]):
                if not isinstance(decl, dict):
                    raise ToolDefinitionError(f"{where}.{field}[{i}]: not a function declaration: "
                                              f"{preview(decl, 80)}")
                schema = decl.get("parameters", _ABSENT)
                if schema is _ABSENT or schema is None:  # (the two keys are exclusive in Gemini)
                    schema = decl.get("parametersJsonSchema", schema)
                yield _Declared(f"{where}.{field}[{i}]", decl.get("name", _ABSENT), schema,
                                "gemini", True)
            return
    if "input_schema" in entry:
        yield _Declared(where, entry.get("name", _ABSENT), entry["input_schema"], "anthropic",
                        False)
        return
    if "toolSpec" in entry:
        spec = entry["toolSpec"]
        if not isinstance(spec, dict):
            raise ToolDefinitionError(f"{where}: its toolSpec is an object (name, inputSchema), "
                                      f"not {_quoted(spec)}")
        wrapped = spec.get("inputSchema", _ABSENT)
        if wrapped is not _ABSENT and not isinstance(wrapped, dict):
            raise ToolDefinitionError(f"{where}.toolSpec: its inputSchema is an object holding "
                                      f"the schema in json, not {_quoted(wrapped)}")
        schema = _ABSENT if wrapped is _ABSENT else wrapped.get("json", _ABSENT)
        yield _Declared(f"{where}.toolSpec", spec.get("name", _ABSENT), schema, "converse", False)
        return
    if "name" in entry or entry.get("type") == "function":
        fmt = "flat" if entry.get("type") == "function" else "bare"
        yield _Declared(where, entry.get("name", _ABSENT), entry.get("parameters", _ABSENT), fmt,
                        True)
        return
    kind = entry.get("type")
    if isinstance(kind, str) and kind:  # a provider-side tool named by its type: {"type":"web_search"}
        yield _Declared(where, kind, _ABSENT, "server", True)
        return
    raise ToolDefinitionError(f"{where}: not a tool definition: {preview(entry, 80)}")


def _tool(declared: _Declared) -> Tool:
    """The tool a definition declares: its name checked, its schema resolved by one rule for
    every provider (see the module's docstring)."""
    name = declared.name
    if name is _ABSENT or name is None:
        raise ToolDefinitionError(f"{declared.where}: a tool definition needs a name, and this "
                                  "one has none")
    if not isinstance(name, str) or not name:
        raise ToolDefinitionError(f"{declared.where}: a tool's name is a non-empty string, "
                                  f"not {_quoted(name)}")
    schema = declared.schema
    if schema is _ABSENT or (schema is None and declared.null_is_absent):
        schema = ANY_OBJECT
    return Tool(name, schema, declared.source_format)


def _quoted(value: object) -> str:
    """A bounded preview of a definition's value, in JSON's words for null and the booleans."""
    if value is None or isinstance(value, bool):
        return orjson.dumps(value).decode()
    return preview(value, 40)


class ToolSet:
    """The tools a turn may call, with compiled validators, and the request body they were
    declared in: what the gate checks a call against."""

    def __init__(self, definitions: Iterable[dict[str, Any]] = (), *,
                 request: Any = None) -> None:
        self.request: Any = request
        """The request body, when known (any JSON: untrusted); the gate reads the output-token
        limit it sets (rule ``tokens-spent``, :class:`.providers.budget.TokenBudget`)."""
        self.tools: dict[str, Tool] = {}
        self._validators: dict[str, Any] = {}
        self._where: dict[str, str] = {}
        self.ambiguous: dict[str, str] = {}
        """Names declared more than once with different schemas, with where (``tools[0] and
        tools[2]``): a call to one cannot be validated against *the* tool's schema, so the gate
        refuses it (rule ``ambiguous-tool``). The same definition twice is one tool."""
        for i, entry in enumerate(definitions):
            where = f"tools[{i}]"
            if not isinstance(entry, dict):
                raise ToolDefinitionError(f"{where}: not a tool definition: {preview(entry, 80)}")
            for declared in _declarations(entry, where):
                self.add(_tool(declared), declared.where)

    def add(self, tool: Tool, where: str = "") -> None:
        if not isinstance(tool.schema, dict | bool):
            raise ToolDefinitionError(f"tool {tool.name!r}: a JSON Schema is an object or a boolean, "
                                      f"not {_quoted(tool.schema)}")
        validator = _compile(tool.name, tool.schema)
        first = self.tools.get(tool.name)
        if first is not None:
            if first.schema != tool.schema:
                before = self.ambiguous.get(tool.name, self._where.get(tool.name) or "an earlier one")
                self.ambiguous[tool.name] = f"{before} and {where or 'a later one'}"
            return  # (the first definition is the one shown; an ambiguous name is refused)
        self.tools[tool.name] = tool
        self._validators[tool.name] = validator
        self._where[tool.name] = where

    def with_request(self, request: Any) -> ToolSet:
        """These tools, declared in ``request`` (a ``--tools`` file's, used for a session whose
        header holds the request): the validators are shared."""
        twin = copy(self)
        twin.request = request
        return twin

    def __contains__(self, name: object) -> bool:
        return name in self.tools

    def __len__(self) -> int:
        return len(self.tools)

    def schema_error(self, name: str, arguments: Any) -> str | None:
        """The first JSON Schema violation as ``path: message``, or None when valid.
        A schema that cannot be applied to the arguments is a violation too, so the call is
        never run unchecked: a ``$ref`` that does not resolve, or validation recursing past
        Python's stack (a schema that refers to itself, ``{"$ref": "#"}``, or a recursive one
        over deeply nested arguments)."""
        validator = self._validators[name]
        from referencing.exceptions import Unresolvable

        try:
            if isinstance(validator, SubsetValidator):
                found = validator.first_error(arguments)
                return None if found is None else _located(*found)
            error = next(iter(sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))), None)
        except Unresolvable as exc:
            return f"$: the tool's schema has a $ref that does not resolve ({str(exc)[:120]})"
        except RecursionError:
            return ("$: the tool's schema could not be checked: validation recursed past Python's "
                    "stack (a schema that refers to itself, or arguments nested too deep for it)")
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
