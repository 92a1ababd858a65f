"""JSON Schemas as each provider enforces them: what an answer's tool input or text is held to.

A provider that guarantees an answer conforms to a schema (OpenAI strict mode, Anthropic strict tool
use and JSON outputs, Gemini's constrained modes) enforces the part of JSON Schema it documents, in
its own dialect: OpenAI's strict subset, Claude's subset of draft 2020-12, Gemini's OpenAPI `Schema`
(upper-case types, `nullable`). A `SchemaDialect` says which keywords a provider enforces; `breaks`
converts a schema as the request sent it into the draft 2020-12 schema of just those keywords and
validates a value against it with the `jsonschema` library, imported on first use (importing
wirescript does not import it; without it a schema holds a value to nothing, with a warning once).
Keywords a provider does not document as enforced are left out, so a value is never held to more
than the provider promises; a schema the library cannot handle (a remote `$ref`, an invalid
schema) holds the value to nothing.
"""

from __future__ import annotations

import contextlib
import functools
import json
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = [
    "CLAUDE",
    "CORE_SCHEMA",
    "GEMINI",
    "GEMINI_JSON",
    "LOOSE",
    "LOOSE_OPENAPI",
    "MISSING",
    "OPENAI_STRICT",
    "SchemaDialect",
    "breaks",
]

_CORE = frozenset(
    {
        "type",
        "required",
        "enum",
        "const",
        "$ref",
        "properties",
        "$defs",
        "definitions",
        "items",
        "prefixItems",
        "additionalProperties",
        "anyOf",
    }
)
"""The keywords every constrained decoder documents: the shape of the value (types, required and known
properties, enumerations, alternatives, local references)."""


class SchemaDialect(NamedTuple):
    """Which JSON Schema keywords a provider enforces, and how its schemas are written."""

    name: str
    """Its name in messages (`OpenAI strict mode`)."""
    keep: frozenset[str] | None
    """The keywords enforced; None: every keyword the schema has (the opt-in check of non-strict tools)."""
    openapi: bool = False
    """Gemini's OpenAPI `Schema`: types in upper case (`STRING`), `nullable: true` for a null alternative."""
    one_of_as_any: bool = False
    """`oneOf` read as `anyOf` (Gemini's JSON Schema support says so)."""


CORE_SCHEMA = SchemaDialect("structured outputs", _CORE)
"""The shape alone (types, required and known properties, enums, `anyOf`, local references): what a
provider serving many models, such as Bedrock's Converse, enforces for each."""
OPENAI_STRICT = SchemaDialect(
    "OpenAI strict mode",
    _CORE | {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems"},
)
"""OpenAI's Structured Outputs subset: the shape, numeric ranges and array lengths (`pattern` and `format`
are left out: their regular expressions and formats are not Python's)."""
CLAUDE = SchemaDialect("Claude structured outputs", _CORE | {"allOf"})
"""Claude's subset of draft 2020-12: the shape and `allOf`; numeric, string and array constraints are not
supported (the SDKs move them into descriptions)."""
GEMINI = SchemaDialect("Gemini's OpenAPI Schema", _CORE - {"const"}, openapi=True)
"""Gemini's `Schema` (`responseSchema`, a function declaration's `parameters`): the shape."""
GEMINI_JSON = SchemaDialect("Gemini's JSON Schema", _CORE - {"const"}, one_of_as_any=True)
"""Gemini's JSON Schema (`responseJsonSchema`, `parametersJsonSchema`): the shape, `oneOf` as `anyOf`."""
LOOSE = SchemaDialect("JSON Schema", None)
"""The whole schema, as JSON Schema (its `$schema`'s draft, else 2020-12): the opt-in check of tool input."""
LOOSE_OPENAPI = SchemaDialect("Gemini's OpenAPI Schema", None, openapi=True)
"""The whole of a Gemini `Schema`, converted to JSON Schema: the opt-in check of tool input."""


class _Unchecked(Exception):
    """The schema cannot be checked (a remote `$ref`, a part that is no schema): it holds a value to nothing."""


def breaks(value: Any, schema: Any, dialect: SchemaDialect) -> str | None:
    """How `value` breaks `schema` as `dialect` enforces it: the first error and where; None when it conforms.

    None too when the schema cannot be checked (not a schema, a remote reference, invalid once
    converted): such a schema is never a reason to call an answer impossible.

    None too when the `jsonschema` library is not installed: the first such call warns (`MISSING`), once.

    """
    if _jsonschema() is None:
        _missing()
        return None
    validator = _validator(_key(schema), dialect)
    if validator is None:
        return None
    try:
        errors = list(validator.iter_errors(value))
    except Exception:  # an unresolvable reference, a recursion the library cannot follow: not checkable
        return None
    if not errors:
        return None
    error = _best_match()(errors)
    where = error.json_path
    return f"{error.message} (at {where})" if where != "$" else error.message


def _key(schema: Any) -> str:
    try:
        return json.dumps(schema, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        return ""


@functools.lru_cache(maxsize=256)
def _validator(key: str, dialect: SchemaDialect) -> Any:
    """The compiled validator of a schema (by its canonical JSON) in a dialect, or None when it cannot be checked."""
    if not key:
        return None
    schema = json.loads(key)
    library = _jsonschema()
    if library is None:
        return None
    validator_for, base, schema_error = library
    try:
        converted = schema if dialect.keep is None and not dialect.openapi else _convert(schema, dialect, 0)
    except _Unchecked:
        return None
    if not isinstance(converted, (dict, bool)):
        return None
    cls = validator_for(converted, default=base) if dialect.keep is None else base
    try:
        cls.check_schema(converted)
    except schema_error:
        return None
    return _decimal_steps(cls)(converted)


@functools.cache
def _decimal_steps(cls: Any) -> Any:
    """`cls` with `multipleOf` read as the decimals a model writes: 19.99 is a multiple of 0.01.

    jsonschema divides in binary floating point (19.99 / 0.01 is 1998.9999999999998), so it would
    refuse the amounts a strict money field is made of. `validators.extend` is its public way to
    replace one keyword.
    """
    from decimal import Decimal, InvalidOperation

    from jsonschema.exceptions import ValidationError
    from jsonschema.validators import extend

    def multiple_of(validator: Any, step: Any, instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "number") or not validator.is_type(step, "number") or step == 0:
            return
        try:
            whole = Decimal(repr(instance)) % Decimal(repr(step)) == 0
        except (InvalidOperation, ValueError):  # inf, nan, a step too fine for the context: not held
            return
        if not whole:
            yield ValidationError(f"{instance!r} is not a multiple of {step!r}")

    return extend(cls, {"multipleOf": multiple_of})


@functools.cache
def _jsonschema() -> tuple[Callable[..., Any], Any, type[Exception]] | None:
    """`validator_for`, `Draft202012Validator` and `SchemaError`, imported on first use; None when not installed."""
    try:
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import SchemaError
        from jsonschema.validators import validator_for
    except ImportError:
        return None
    return validator_for, Draft202012Validator, SchemaError


MISSING = (
    "wirescript holds a scripted answer to the JSON Schemas its request guarantees (a strict tool's input, a "
    "structured output) with the jsonschema library, which is not installed: those answers are served unchecked. "
    "pip install jsonschema (or wirescript[mcp]) to check them"
)
"""The warning given once per process when a schema check finds no `jsonschema`."""


@functools.cache
def _missing() -> None:
    """Warn, once per process, that the schema checks hold answers to nothing (no `jsonschema`).

    A warnings filter that makes it an error (`-W error`) does not make the answer one: the warning is
    advice, and an exception here would fail the rendering of an answer nothing is wrong with.
    """
    with contextlib.suppress(UserWarning):
        warnings.warn(MISSING, UserWarning, stacklevel=2)


@functools.cache
def _best_match() -> Callable[..., Any]:
    from jsonschema.exceptions import best_match

    return best_match  # type: ignore[no-any-return]


_MAPS = ("properties", "$defs", "definitions")
_LISTS = ("anyOf", "allOf", "oneOf", "prefixItems")
_PROTO_NAMES = {"any_of": "anyOf", "additional_properties": "additionalProperties"}
"""A Gemini `Schema`'s fields by their proto names, which the API reads too (google-genai sends `any_of`)."""


def _convert(schema: Any, dialect: SchemaDialect, depth: int) -> Any:
    """`schema` as a draft 2020-12 schema of the keywords `dialect` enforces."""
    if isinstance(schema, bool):
        return schema
    if not isinstance(schema, dict) or depth > 64:
        raise _Unchecked
    keep = dialect.keep
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if dialect.openapi:
            key = _PROTO_NAMES.get(key, key)
        if key in _MAPS:
            if not isinstance(value, dict):
                raise _Unchecked
            out[key] = {name: _convert(sub, dialect, depth + 1) for name, sub in value.items()}
        elif key in _LISTS:
            if key == "oneOf" and dialect.one_of_as_any:
                key = "anyOf"
            if keep is not None and key not in keep:
                continue
            if not isinstance(value, list):
                raise _Unchecked
            out[key] = [_convert(sub, dialect, depth + 1) for sub in value]
        elif key == "items":
            if isinstance(value, list):  # the tuple form of drafts before 2020-12
                out["prefixItems"] = [_convert(sub, dialect, depth + 1) for sub in value]
            else:
                out["items"] = _convert(value, dialect, depth + 1)
        elif key == "additionalProperties":
            out[key] = value if isinstance(value, bool) else _convert(value, dialect, depth + 1)
        elif key == "$ref":
            if not isinstance(value, str) or not value.startswith("#"):
                raise _Unchecked  # a remote schema: never fetched
            out[key] = value
        elif key == "type" and dialect.openapi:
            kinds = [_openapi_type(kind) for kind in (value if isinstance(value, list) else [value])]
            kinds = [kind for kind in kinds if kind is not None]
            if kinds:
                out["type"] = kinds if isinstance(value, list) else kinds[0]
        elif key == "$schema" or (key == "nullable" and dialect.openapi):
            continue
        elif keep is None or key in keep:
            out[key] = value
    if dialect.openapi and out.get("type") in ("integer", "number") and isinstance(out.get("enum"), list):
        numbers = _numbers(out.pop("enum"))  # `Schema.enum` holds strings: `["101", "201"]` for an INTEGER
        if numbers is not None:
            out["enum"] = numbers
    if dialect.openapi and schema.get("nullable") is True:
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = [kind, "null"]
        elif isinstance(kind, list) and "null" not in kind:
            out["type"] = [*kind, "null"]
        elif kind is None and isinstance(out.get("anyOf"), list):
            out["anyOf"] = [*out["anyOf"], {"type": "null"}]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    return out


def _numbers(values: list[Any]) -> list[Any] | None:
    """An OpenAPI enum of a numeric type, its strings read as the numbers they write; None if one is no number."""
    out = []
    for value in values:
        number = value
        if isinstance(value, str):
            try:
                number = json.loads(value)
            except ValueError:
                return None
        if isinstance(number, bool) or not isinstance(number, (int, float)):
            return None
        out.append(number)
    return out


def _openapi_type(kind: Any) -> str | None:
    """An OpenAPI `Type` (`STRING`, `INTEGER`, ...) as JSON Schema's; None for `TYPE_UNSPECIFIED` or another value."""
    if not isinstance(kind, str):
        return None
    lowered = kind.lower()
    return lowered if lowered in ("string", "number", "integer", "boolean", "array", "object", "null") else None
