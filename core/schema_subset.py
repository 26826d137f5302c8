"""A JSON Schema validator for the keywords tool definitions use, equal to jsonschema's.

jsonschema (with referencing, attrs and its format module) costs a process ~80-200 ms to import:
more than the whole engine on a small session. Most tool schemas use a handful of keywords
(``type``, ``properties``, ``required``, ``additionalProperties``, ``items``, ``enum``, bounds,
annotations), so those are checked here, and a schema with any other keyword, a ``$schema``,
a ``$ref``, or a value this module is not sure the metaschema accepts, goes to jsonschema
exactly as before (:func:`compile_subset` answers None).

Equal by proof, not by reading: ``tests/test_schema_subset.py`` holds this module to jsonschema's
Draft 2020-12 validator (the one ``validator_for`` picks for a schema without ``$schema``) under
generated schemas and instances: every schema accepted here passes jsonschema's metaschema
check, and every instance gets the same first error (path and message, the ordering
``ToolSet.schema_error`` applies) or none. The messages are jsonschema's own wording.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

Path = tuple[str | int, ...]
Error = tuple[Path, str]

SIMPLE_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_SCHEMA_VALUED = frozenset({"additionalProperties", "items"})
_NUMBER_BOUNDS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
_COUNT_BOUNDS = frozenset({"minLength", "maxLength", "minItems", "maxItems",
                           "minProperties", "maxProperties"})
_STRING_ANNOTATIONS = frozenset({"title", "description", "$comment", "format"})
_BOOLEAN_ANNOTATIONS = frozenset({"deprecated", "readOnly", "writeOnly"})
_ANY_VALUE = frozenset({"default", "const"})

MAX_DEPTH = 64
"""Deeper schemas go to jsonschema, which also answers for their recursion limits."""


def compile_subset(schema: object) -> SubsetValidator | None:
    """A validator for ``schema``, or None when it is outside the subset (use jsonschema)."""
    if not _well_formed(schema, 0):
        return None
    return SubsetValidator(schema)


class SubsetValidator:
    """Validates instances (parsed JSON: dict, list, str, int, float, bool, None)."""

    def __init__(self, schema: object) -> None:
        self.schema = schema

    def first_error(self, instance: object) -> Error | None:
        """The error ``ToolSet.schema_error`` reports: jsonschema yields errors in the schema's
        key order, depth first, and the first one of the smallest instance path is kept (a
        stable sort by path)."""
        best: Error | None = None
        for error in _errors(self.schema, instance, ()):
            if best is None or list(error[0]) < list(best[0]):
                best = error
        return best


# -- the metaschema, for the subset ----------------------------------------------------------


def _is_integer(value: object) -> bool:
    """Draft 2020-12's integer: an int (not a bool) or a float with no fractional part."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _well_formed(schema: object, depth: int) -> bool:
    """Whether the metaschema surely accepts ``schema`` and every keyword is in the subset."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return False
    return all(_keyword_well_formed(key, value, depth) for key, value in schema.items())


def _keyword_well_formed(key: object, value: object, depth: int) -> bool:
    if key == "type":
        if isinstance(value, str):
            return value in SIMPLE_TYPES
        return (isinstance(value, list) and len(value) >= 1
                and all(isinstance(t, str) and t in SIMPLE_TYPES for t in value)
                and len(set(value)) == len(value))
    if key == "properties":
        return isinstance(value, dict) and all(_well_formed(v, depth + 1) for v in value.values())
    if key == "required":
        return (isinstance(value, list) and all(isinstance(p, str) for p in value)
                and len(set(value)) == len(value))
    if key in _SCHEMA_VALUED:
        return _well_formed(value, depth + 1)
    if key == "enum" or key == "examples":
        return isinstance(value, list)
    if key in _NUMBER_BOUNDS:
        return _is_number(value)
    if key in _COUNT_BOUNDS:
        return _is_integer(value) and value >= 0  # type: ignore[operator]
    if key in _STRING_ANNOTATIONS:
        return isinstance(value, str)
    if key in _BOOLEAN_ANNOTATIONS:
        return isinstance(value, bool)
    return key in _ANY_VALUE


# -- validation: jsonschema's keyword functions, in its order and words ------------------------


def _is_type(instance: object, name: str) -> bool:
    if name == "object":
        return isinstance(instance, dict)
    if name == "array":
        return isinstance(instance, list)
    if name == "string":
        return isinstance(instance, str)
    if name == "integer":
        return _is_integer(instance)
    if name == "number":
        return _is_number(instance)
    if name == "boolean":
        return isinstance(instance, bool)
    return instance is None  # "null"; the metaschema admits no other name


def _equal(one: object, two: object) -> bool:
    """jsonschema's ``equal``: JSON equality, where true is not 1 and false is not 0."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return one == two
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(_equal(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, dict) and isinstance(two, dict):
        return len(one) == len(two) and all(k in two and _equal(v, two[k]) for k, v in one.items())
    if isinstance(one, bool) or isinstance(two, bool):
        return isinstance(one, bool) and isinstance(two, bool) and one == two
    return one == two


def _errors(schema: object, instance: Any, path: Path) -> Iterator[Error]:
    if schema is True:
        return
    if schema is False:
        # jsonschema reports a false subschema's error at its parent's path (its descend returns
        # before adding the step): the same reason, word for word, is what "equal" means here.
        yield path[:-1], f"False schema does not allow {instance!r}"
        return
    assert isinstance(schema, dict)
    for key, value in schema.items():
        yield from _keyword_errors(key, value, schema, instance, path)


def _keyword_errors(key: str, value: Any, schema: dict[str, Any], instance: Any,
                    path: Path) -> Iterator[Error]:
    if key == "type":
        types = [value] if isinstance(value, str) else value
        if not any(_is_type(instance, t) for t in types):
            yield path, f"{instance!r} is not of type {', '.join(repr(t) for t in types)}"
    elif key == "properties":
        if isinstance(instance, dict):
            for name, subschema in value.items():
                if name in instance:
                    yield from _errors(subschema, instance[name], (*path, name))
    elif key == "required":
        if isinstance(instance, dict):
            for name in value:
                if name not in instance:
                    yield path, f"{name!r} is a required property"
    elif key == "additionalProperties":
        yield from _additional(value, schema, instance, path)
    elif key == "items":
        if isinstance(instance, list) and instance:
            if value is False:
                rest = instance if len(instance) != 1 else instance[0]
                yield path, f"Expected at most 0 items but found {len(instance)} extra: {rest!r}"
            else:
                for index, item in enumerate(instance):
                    yield from _errors(value, item, (*path, index))
    elif key == "enum":
        if all(not _equal(each, instance) for each in value):
            yield path, f"{instance!r} is not one of {value!r}"
    elif key == "const":
        if not _equal(instance, value):
            yield path, f"{value!r} was expected"
    elif key in _NUMBER_BOUNDS:
        yield from _number_bound(key, value, instance, path)
    elif key in _COUNT_BOUNDS:
        yield from _count_bound(key, value, instance, path)


def _additional(allowed: Any, schema: dict[str, Any], instance: Any, path: Path) -> Iterator[Error]:
    if not isinstance(instance, dict):
        return
    declared = schema.get("properties", {})
    extras = [name for name in instance if name not in declared]
    if isinstance(allowed, dict):
        for name in extras:
            yield from _errors(allowed, instance[name], (*path, name))
    elif allowed is False and extras:
        verb = "was" if len(extras) == 1 else "were"
        names = ", ".join(repr(name) for name in sorted(extras, key=str))
        yield path, f"Additional properties are not allowed ({names} {verb} unexpected)"


def _number_bound(key: str, bound: Any, instance: Any, path: Path) -> Iterator[Error]:
    if not _is_number(instance):
        return
    if key == "minimum" and instance < bound:
        yield path, f"{instance!r} is less than the minimum of {bound!r}"
    elif key == "maximum" and instance > bound:
        yield path, f"{instance!r} is greater than the maximum of {bound!r}"
    elif key == "exclusiveMinimum" and instance <= bound:
        yield path, f"{instance!r} is less than or equal to the minimum of {bound!r}"
    elif key == "exclusiveMaximum" and instance >= bound:
        yield path, f"{instance!r} is greater than or equal to the maximum of {bound!r}"


_COUNTED = {"minLength": "string", "maxLength": "string", "minItems": "array",
            "maxItems": "array", "minProperties": "object", "maxProperties": "object"}
_TOO_FEW = {"string": "is too short", "array": "is too short",
            "object": "does not have enough properties"}
_TOO_MANY = {"string": "is too long", "array": "is too long", "object": "has too many properties"}


def _count_bound(key: str, bound: Any, instance: Any, path: Path) -> Iterator[Error]:
    kind = _COUNTED[key]
    if not _is_type(instance, kind):
        return
    if key.startswith("min") and len(instance) < bound:
        words = "should be non-empty" if bound == 1 else _TOO_FEW[kind]
        yield path, f"{instance!r} {words}"
    elif key.startswith("max") and len(instance) > bound:
        words = "is expected to be empty" if bound == 0 else _TOO_MANY[kind]
        yield path, f"{instance!r} {words}"
