"""core/schema_subset.py is held equal to jsonschema by proof: generated schemas (well formed or
not, in the subset or not) and instances; every schema the subset accepts passes jsonschema's
metaschema check, and every instance gets the same first error, or none."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from callscope.core import tools as tools_module
from callscope.core.schema_subset import SubsetValidator, compile_subset
from callscope.core.tools import ToolSet
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema.exceptions import SchemaError
from referencing import Registry

NAMES = st.sampled_from(["a", "b", "c", "path", "dry_run"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.0, 1.0, 2.5, -1.0]),
                    st.sampled_from(["", "x", "ab", "é", "a" * 5]))
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(NAMES, inner, max_size=3), max_leaves=8)
TYPES = st.sampled_from(["array", "boolean", "integer", "null", "number", "object", "string"])
COUNTS = st.one_of(st.integers(-1, 3), st.sampled_from([0.0, 1.0, 2.0, 1.5, True]))
BOUNDS = st.one_of(st.integers(-2, 2), st.sampled_from([0.5, -1.5, 1.0, False, "1"]))


def keywords(child: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    values: dict[str, st.SearchStrategy[Any]] = {
        "type": st.one_of(TYPES, st.lists(TYPES, max_size=3), st.sampled_from(["OBJECT", 3])),
        "properties": st.dictionaries(NAMES, child, max_size=3),
        "required": st.one_of(st.lists(NAMES, max_size=3), st.just([1]), st.just("a")),
        "additionalProperties": child,
        "items": child,
        "enum": st.one_of(st.lists(JSON, max_size=3), st.just("a")),
        "const": JSON,
        "minimum": BOUNDS, "maximum": BOUNDS, "exclusiveMinimum": BOUNDS, "exclusiveMaximum": BOUNDS,
        "minLength": COUNTS, "maxLength": COUNTS, "minItems": COUNTS, "maxItems": COUNTS,
        "minProperties": COUNTS, "maxProperties": COUNTS,
        "description": st.one_of(st.text(max_size=3), st.just(1)),
        "format": st.sampled_from(["date-time", "email", 3]),
        "deprecated": st.one_of(st.booleans(), st.just("no")),
        "examples": st.one_of(st.lists(JSON, max_size=2), st.just({})),
        "default": JSON,
        # outside the subset: these schemas must go to jsonschema
        "anyOf": st.lists(child, min_size=1, max_size=2),
        "pattern": st.just("^a"),
        "$ref": st.just("#"),
        "nullable": st.booleans(),
        "prefixItems": st.lists(child, max_size=2),
    }
    picked = st.lists(st.sampled_from(sorted(values)), max_size=4, unique=True)
    return picked.flatmap(lambda keys: st.fixed_dictionaries({k: values[k] for k in keys}))


SCHEMAS = st.recursive(st.booleans() | st.just({}), keywords, max_leaves=6)


def instances_for(schema: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """JSON shaped by the schema (its properties and items) often enough to reach nested errors."""
    if not isinstance(schema, dict) or depth > 4:
        return JSON
    shaped: list[st.SearchStrategy[Any]] = [JSON]
    props = schema.get("properties")
    if isinstance(props, dict):
        fields = {name: instances_for(sub, depth + 1) for name, sub in props.items()}
        shaped.append(st.fixed_dictionaries({}, optional={**fields, "extra": JSON}))
    if isinstance(schema.get("additionalProperties"), dict):
        shaped.append(st.dictionaries(NAMES, instances_for(schema["additionalProperties"], depth + 1),
                                      max_size=3))
    if "items" in schema:
        shaped.append(st.lists(instances_for(schema["items"], depth + 1), max_size=3))
    for key in ("enum", "examples"):
        if isinstance(schema.get(key), list) and schema[key]:
            shaped.append(st.sampled_from(schema[key]))
    return st.one_of(*shaped)


LEAVES = st.fixed_dictionaries({"type": st.one_of(TYPES, st.lists(TYPES, min_size=1, max_size=2,
                                                                   unique=True))},
                               optional={"enum": st.lists(SCALARS, min_size=1, max_size=3),
                                         "minimum": BOUNDS, "maxLength": COUNTS, "minItems": COUNTS,
                                         "description": st.just("d")})
# Shaped like tool definitions: objects of typed fields, nested objects and arrays, so that
# errors are found deep in the instance, where the paths and their order matter.
TOOL_SCHEMAS = st.recursive(LEAVES, lambda child: st.one_of(
    st.fixed_dictionaries({"type": st.just("object"),
                           "properties": st.dictionaries(NAMES, child, min_size=1, max_size=3)},
                          optional={"required": st.lists(NAMES, max_size=3, unique=True),
                                    "additionalProperties": st.booleans() | child}),
    st.fixed_dictionaries({"type": st.just("array"), "items": child},
                          optional={"minItems": COUNTS, "maxItems": COUNTS})), max_leaves=6)
SCHEMA_AND_INSTANCE = st.one_of(SCHEMAS, TOOL_SCHEMAS).flatmap(
    lambda s: st.tuples(st.just(s), instances_for(s)))


def jsonschema_first_error(schema: Any, instance: Any) -> tuple[tuple[Any, ...], str] | None:
    validator = jsonschema.Draft202012Validator(schema, registry=Registry())
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.path))
    return (tuple(errors[0].path), errors[0].message) if errors else None


EQUAL = settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@EQUAL
@given(SCHEMAS)
def test_every_schema_the_subset_takes_passes_the_metaschema(schema: Any) -> None:
    if compile_subset(schema) is None:
        return
    assert jsonschema.validators.validator_for(schema) is jsonschema.Draft202012Validator
    jsonschema.Draft202012Validator.check_schema(schema)


@EQUAL
@given(SCHEMA_AND_INSTANCE)
def test_the_subset_finds_the_error_jsonschema_reports(case: tuple[Any, Any]) -> None:
    schema, instance = case
    subset = compile_subset(schema)
    if subset is None:
        return
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except SchemaError:  # (the other test fails on this schema)
        return
    assert subset.first_error(instance) == jsonschema_first_error(schema, instance)


@pytest.mark.parametrize(("schema", "instance"), [
    ({"enum": [1, True]}, True),                    # true is not 1, and 1 is not true
    ({"enum": [1]}, True),
    ({"enum": [1.0]}, 1),                           # but 1.0 is 1
    ({"const": [False]}, [0]),
    ({"type": "integer"}, 2.0),                     # Draft 2020-12: an integer-valued float
    ({"type": "integer"}, True),
    ({"type": ["string", "null"]}, 3),
    ({"items": False}, [1]),
    ({"items": False}, [1, 2]),
    ({"properties": {"a": False}}, {"a": 1}),
    ({"additionalProperties": False, "properties": {"a": {}}}, {"b": 1, "c": 2, "a": 0}),
    ({"additionalProperties": {"type": "string"}}, {"c": 1, "b": 2}),
    ({"required": ["b", "a"], "properties": {"a": {"type": "string"}}}, {"a": 1}),
    ({"properties": {"a": {"items": {"type": "string"}}}}, {"a": ["x", 2, "y", 3]}),
    ({"minLength": 1}, ""), ({"maxLength": 0}, "x"), ({"minItems": 2.0}, [1]),
    ({"minProperties": 1}, {}), ({"maxProperties": 1}, {"a": 1, "b": 2}),
    ({"exclusiveMinimum": 1}, 1), ({"exclusiveMaximum": 1}, 1.0), ({"minimum": 0.5}, 0),
    ({"format": "email", "description": "d"}, "not an email"),  # format is an annotation
])
def test_the_cases_where_the_two_could_differ(schema: Any, instance: Any) -> None:
    subset = compile_subset(schema)
    assert subset is not None
    jsonschema.Draft202012Validator.check_schema(schema)
    assert subset.first_error(instance) == jsonschema_first_error(schema, instance)


@pytest.mark.parametrize("schema", [
    {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
    {"$ref": "#/$defs/a", "$defs": {"a": {}}},
    {"anyOf": [{"type": "string"}]},
    {"type": "OBJECT"},                             # Gemini's OpenAPI spelling: jsonschema refuses it
    {"required": ["a", "a"]},
    {"type": []},
    {"minLength": -1},
    {"nullable": True},                             # unknown keywords go to jsonschema too
    {"properties": {"a": {"pattern": "["}}},
])
def test_a_schema_outside_the_subset_goes_to_jsonschema(schema: Any) -> None:
    assert compile_subset(schema) is None


def test_toolset_reports_the_same_reason_by_either_validator(monkeypatch) -> None:
    definition = {"name": "f", "parameters": {
        "type": "object", "required": ["path"], "additionalProperties": False,
        "properties": {"path": {"type": "string", "minLength": 1}, "n": {"type": "integer"}}}}
    arguments = [{}, {"path": ""}, {"path": "x", "n": 1.5}, {"path": "x", "extra": 1}, {"path": "x"}, []]
    monkeypatch.setattr(tools_module, "_COMPILED", {})
    fast = ToolSet([definition])
    assert isinstance(fast._validators["f"], SubsetValidator)
    monkeypatch.setattr(tools_module, "_COMPILED", {})
    monkeypatch.setattr(tools_module, "compile_subset", lambda schema: None)
    slow = ToolSet([definition])
    assert not isinstance(slow._validators["f"], SubsetValidator)
    reasons = [fast.schema_error("f", a) for a in arguments]
    assert reasons == [slow.schema_error("f", a) for a in arguments]
    assert reasons[0] == "$: 'path' is a required property" and reasons[4] is None
