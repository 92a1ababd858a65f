"""The schemas an answer is held to, keyword by keyword, as each provider enforces them (`wires/_schema.py`).

Each case goes through the real SDK that sends the schema (google-genai for Gemini's OpenAPI `Schema` and
its JSON Schema, anthropic for Claude's dialect, openai for OpenAI's strict subset) and asserts both
directions: a value the provider's guarantee allows is served, one it rules out is an
`impossible_answer` naming the rule. A schema the checks cannot hold (a remote or dangling `$ref`, an
invalid schema) holds nothing: it is never a reason to refuse an answer. Shapes no SDK sends (a part
that is no schema, a schema nested deeper than the checks follow) are unit cases of `breaks`.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Callable
from typing import Any

import anthropic
import openai
import pytest

from _support import anthropic_client, httpx, httpx2, openai_client
from wirescript import ScriptTransport

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("jsonschema") is None, reason="the schema checks need the jsonschema library"
)

USER = [{"role": "user", "content": "Go."}]


def _served(stub: ScriptTransport) -> None:
    assert stub.problems == [], [problem.reason for problem in stub.problems]


def _refused(stub: ScriptTransport, rule: str, says: str) -> None:
    [problem] = stub.problems
    assert problem.kind == "impossible_answer"
    assert f"answer rule {rule}" in problem.reason, problem.reason
    assert says in problem.reason, problem.reason


# ---------------------------------------------------------------- the SDKs


def _genai() -> Any:
    genai = pytest.importorskip("google.genai")
    if httpx2 is None:
        pytest.skip("google-genai's client here runs on httpx2")
    return genai


def _gemini(stub: ScriptTransport, config: dict[str, Any]) -> Any:
    genai = _genai()
    assert httpx2 is not None
    options = genai.types.HttpOptions(
        httpx_client=httpx2.Client(transport=stub), retry_options=genai.types.HttpRetryOptions(attempts=1)
    )
    client = genai.Client(api_key="test-key", http_options=options)
    return client.models.generate_content(model="gemini-test", contents="Go.", config=config)


def _gemini_output(schema: Any, text: str, *, field: str = "response_schema") -> ScriptTransport:
    """A Gemini request for `application/json` with `schema` (`response_schema` or `response_json_schema`)."""
    stub = ScriptTransport([{"text": text}])
    config = {"response_mime_type": "application/json", field: schema}
    try:
        _gemini(stub, config)
    except _genai().errors.ClientError:
        assert stub.problems, "the SDK's 400 is the stub's impossible answer"
    return stub


def _gemini_call(parameters: dict[str, Any], args: dict[str, Any]) -> ScriptTransport:
    """A Gemini request declaring `f(parameters)` in mode ANY, answered by a call of `f` with `args`."""
    stub = ScriptTransport([{"tool": {"name": "f", "input": args}}])
    config = {
        "tools": [{"function_declarations": [{"name": "f", "parameters": parameters}]}],
        "tool_config": {"function_calling_config": {"mode": "ANY"}},
    }
    try:
        _gemini(stub, config)
    except _genai().errors.ClientError:
        assert stub.problems
    return stub


def _gemini_rest(body: dict[str, Any], text: str) -> ScriptTransport:
    """A generateContent request as an app calling the REST API itself writes it (camelCase, any `Schema`)."""
    hx = httpx2 if httpx2 is not None else httpx
    assert hx is not None
    stub = ScriptTransport([{"text": text}])
    http = hx.Client(transport=stub, base_url="https://generativelanguage.googleapis.com")
    reply = http.post(
        "/v1beta/models/gemini-test:generateContent",
        headers={"x-goog-api-key": "test-key"},
        json={"contents": [{"role": "user", "parts": [{"text": "Go."}]}], **body},
    )
    assert reply.status_code == (400 if stub.problems else 200), reply.text
    return stub


def _strict_chat_call(parameters: dict[str, Any], args: Any, **stub_options: Any) -> ScriptTransport:
    """A Chat Completions request offering the strict function `f(parameters)`, answered by a call with `args`."""
    stub = ScriptTransport([{"tool": {"name": "f", "input": args}}], **stub_options)
    tools = [{"type": "function", "function": {"name": "f", "parameters": parameters, "strict": True}}]
    try:
        openai_client(stub, max_retries=0).chat.completions.create(model="gpt-test", messages=USER, tools=tools)
    except openai.BadRequestError:
        assert stub.problems
    return stub


def _claude_call(input_schema: dict[str, Any], args: Any, *, strict: bool = True, **options: Any) -> ScriptTransport:
    stub = ScriptTransport([{"tool": {"name": "f", "input": args}}], **options)
    tool: dict[str, Any] = {"name": "f", "input_schema": input_schema}
    if strict:
        tool["strict"] = True
    try:
        anthropic_client(stub, max_retries=0).messages.create(
            model="claude-sonnet-5", max_tokens=64, messages=USER, tools=[tool]
        )
    except anthropic.BadRequestError:
        assert stub.problems
    return stub


def _obj(**properties: Any) -> dict[str, Any]:
    """A strict-mode object: every property required, no others."""
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


# ---------------------------------------------------------------- Gemini's OpenAPI Schema

GEMINI_OUTPUT = "gemini.answer.output-format"
GEMINI_INPUT = "gemini.answer.strict-tool-input"


def test_a_nullable_enum_takes_null_and_its_values_only() -> None:
    """OpenAPI `nullable: true` on an enum: null is one of its values (`Schema.nullable`, google-genai)."""
    size = {"type": "OBJECT", "properties": {"size": {"type": "STRING", "enum": ["S", "L"], "nullable": True}}}
    for text in ('{"size": null}', '{"size": "L"}'):
        _served(_gemini_output(size, text))
    _refused(_gemini_output(size, '{"size": "M"}'), GEMINI_OUTPUT, "'M' is not one of ['S', 'L', None]")
    plain = {"type": "OBJECT", "properties": {"size": {"type": "STRING", "enum": ["S", "L"]}}}
    _refused(_gemini_output(plain, '{"size": null}'), GEMINI_OUTPUT, "None is not one of ['S', 'L']")


def test_an_integer_enum_written_as_strings_takes_those_integers() -> None:
    """`Schema.enum` holds strings for every type: `{type: INTEGER, format: enum, enum: ["101", "201"]}` is the
    documented way to ask for one of the integers 101 and 201 (google-genai `types.Schema.enum`)."""
    apartment = {"type": "OBJECT", "properties": {"apt": {"type": "INTEGER", "format": "enum", "enum": ["101", "201"]}}}
    _served(_gemini_output(apartment, '{"apt": 101}'))
    _refused(_gemini_output(apartment, '{"apt": 301}'), GEMINI_OUTPUT, "301 is not one of [101, 201]")
    _refused(_gemini_output(apartment, '{"apt": "101"}'), GEMINI_OUTPUT, "'101' is not of type 'integer'")
    weight = {"type": "NUMBER", "enum": ["0.5", "1"], "nullable": True}
    for text in ("0.5", "1", "null"):
        _served(_gemini_output(weight, text))
    _refused(_gemini_output(weight, "2"), GEMINI_OUTPUT, "2 is not one of")
    for odd in (["one", "2"], ["1", "[2]"]):  # not numbers: the enum holds nothing, the type still does
        _served(_gemini_output({"type": "INTEGER", "enum": odd}, "3"))
        _refused(_gemini_output({"type": "INTEGER", "enum": odd}, '"one"'), GEMINI_OUTPUT, "'one' is not of type")


def test_a_nullable_union_takes_null() -> None:
    """`{anyOf: [...], nullable: true}` (what `Optional[Union[str, int]]` becomes): null is one of its values."""
    schema = {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}], "nullable": True}
    for text in ("null", '"a"', "1"):
        _served(
            _gemini_rest({"generationConfig": {"responseMimeType": "application/json", "responseSchema": schema}}, text)
        )
    refused = _gemini_rest(
        {"generationConfig": {"responseMimeType": "application/json", "responseSchema": schema}}, "true"
    )
    _refused(refused, GEMINI_OUTPUT, "True is not valid under any of the given schemas")
    plain = {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]}
    refused = _gemini_rest(
        {"generationConfig": {"responseMimeType": "application/json", "responseSchema": plain}}, "null"
    )
    _refused(refused, GEMINI_OUTPUT, "None is not valid under any of the given schemas")


def test_an_unspecified_type_holds_its_value_to_no_type() -> None:
    """`TYPE_UNSPECIFIED` (google-genai `types.Type`) names no type: any value fits it; its siblings are held."""
    parameters = {
        "type": "OBJECT",
        "properties": {"anything": {"type": "TYPE_UNSPECIFIED"}, "count": {"type": "INTEGER"}},
        "required": ["count"],
    }
    for value in ("text", 3, [1], {"a": None}):
        _served(_gemini_call(parameters, {"anything": value, "count": 1}))
    _refused(_gemini_call(parameters, {"anything": "x", "count": "1"}), GEMINI_INPUT, "'1' is not of type 'integer'")


# ---------------------------------------------------------------- Gemini's JSON Schema


def test_one_of_is_read_as_any_of() -> None:
    """Gemini's `responseJsonSchema`: '`oneOf` (interpreted the same as `anyOf`)' (google-genai's docs of the
    field): a value fitting both alternatives is served, where JSON Schema's `oneOf` would refuse it."""
    schema = {"oneOf": [{"type": "number"}, {"type": "integer"}]}
    _served(_gemini_output(schema, "3", field="response_json_schema"))
    _refused(
        _gemini_output(schema, '"three"', field="response_json_schema"),
        GEMINI_OUTPUT,
        "'three' is not valid under any of the given schemas",
    )


def test_additional_properties_as_a_schema_holds_every_other_property() -> None:
    """`additionalProperties` is among the keywords Gemini's JSON Schema support lists (a `dict[str, int]`)."""
    scores = {"type": "object", "additionalProperties": {"type": "integer"}}
    _served(_gemini_output(scores, '{"ann": 3, "bo": 4}', field="response_json_schema"))
    _refused(
        _gemini_output(scores, '{"ann": 3, "bo": "four"}', field="response_json_schema"),
        GEMINI_OUTPUT,
        "'four' is not of type 'integer' (at $.bo)",
    )


def test_gemini_does_not_hold_const() -> None:
    """`const` is not among the keywords Gemini's JSON Schema support lists: it holds nothing there."""
    schema = {"type": "object", "properties": {"kind": {"type": "string", "const": "a"}}}
    _served(_gemini_output(schema, '{"kind": "b"}', field="response_json_schema"))
    _refused(
        _gemini_output(schema, '{"kind": 1}', field="response_json_schema"), GEMINI_OUTPUT, "1 is not of type 'string'"
    )


# ---------------------------------------------------------------- Claude's dialect, OpenAI's


def test_claude_holds_all_of_but_no_numeric_range() -> None:
    """Claude's strict tool use holds the shape and `allOf`; numerical constraints are not supported
    (structured outputs, JSON Schema limitations), so a value outside a `minimum` is served."""
    schema = {
        "type": "object",
        "allOf": [{"properties": {"n": {"type": "integer", "minimum": 10}}, "required": ["n"]}],
    }
    _served(_claude_call(schema, {"n": 3}))
    _refused(_claude_call(schema, {}), "anthropic.answer.strict-tool-input", "'n' is a required property")
    _refused(_claude_call(schema, {"n": "3"}), "anthropic.answer.strict-tool-input", "'3' is not of type 'integer'")


def test_openai_strict_holds_a_numeric_range() -> None:
    """OpenAI's strict subset holds `minimum` (Structured Outputs, supported properties)."""
    ranged = _obj(n={"type": "integer", "minimum": 10})
    _served(_strict_chat_call(ranged, {"n": 10}))
    _refused(
        _strict_chat_call(ranged, {"n": 3}), "openai_chat.answer.strict-tool-input", "3 is less than the minimum of 10"
    )


def test_a_dollar_schema_is_dropped_and_the_rest_held() -> None:
    """A `$schema` naming draft-07 (zod-to-json-schema writes one) does not stop a strict schema being held."""
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", **_obj(order_id={"type": "string"})}
    _served(_strict_chat_call(schema, {"order_id": "A-7"}))
    _refused(_strict_chat_call(schema, {"order_id": 7}), "openai_chat.answer.strict-tool-input", "7 is not of type")


def test_the_opt_in_check_reads_a_schema_in_its_own_draft() -> None:
    """`check_tool_input=True` holds a tool's whole schema in the draft its `$schema` names: draft-07's tuple
    `items`; a schema its draft calls invalid (the tuple form in 2020-12) holds nothing."""
    draft7 = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}},
    }
    _served(_claude_call(draft7, {"pair": ["a", 1]}, strict=False, check_tool_input=True))
    _refused(
        _claude_call(draft7, {"pair": ["a", "b"]}, strict=False, check_tool_input=True),
        "anthropic.answer.tool-input",
        "'b' is not of type 'integer' (at $.pair[1])",
    )
    no_draft = {key: value for key, value in draft7.items() if key != "$schema"}
    _served(_claude_call(no_draft, {"pair": ["a", "b"]}, strict=False, check_tool_input=True))


def test_tuple_items_are_held_as_prefix_items_in_a_provider_dialect() -> None:
    """The tuple form of `items` (drafts before 2020-12) converted to `prefixItems`: held position by position."""
    schema = _obj(pair={"type": "array", "items": [{"type": "string"}, {"type": "integer"}]})
    _served(_strict_chat_call(schema, {"pair": ["a", 1]}))
    _refused(_strict_chat_call(schema, {"pair": ["a", "b"]}), "openai_chat.answer.strict-tool-input", "(at $.pair[1])")


# ---------------------------------------------------------------- schemas that hold nothing


@pytest.mark.parametrize(
    "schema",
    [
        pytest.param(_obj(order={"$ref": "#/$defs/Order"}), id="dangling-ref"),
        pytest.param(_obj(order={"$ref": "https://example.com/order.json"}), id="remote-ref"),
        pytest.param(_obj(order={"type": "strng"}), id="invalid-type"),
        pytest.param(_obj(order={"type": "object", "required": "id"}), id="invalid-required"),
    ],
)
def test_a_schema_that_cannot_be_checked_holds_nothing(schema: dict[str, Any]) -> None:
    """A reference never fetched or resolvable, a schema the library calls invalid: the answer is served.

    OpenAI refuses some of these schemas in the request (the stub's request rule does too): skipped here, the
    answer rules are what is under test.
    """
    skip = ["openai_chat.strict-function-schema"]
    _served(_strict_chat_call(schema, {"order": 7}, strict_skip=skip))
    _served(_strict_chat_call(schema, {"order": 7}, strict_skip=skip, check_tool_input=True))
    _served(_claude_call(schema, {"order": 7}))
    _served(_claude_call(schema, {"order": 7}, strict=False, check_tool_input=True))
    # the same tool with a schema that can be checked is held: the rule is live
    _refused(
        _strict_chat_call(_obj(order={"type": "string"}), {"order": 7}), "openai_chat.answer.strict-tool-input", "7"
    )


def test_a_local_ref_is_followed() -> None:
    schema = {**_obj(order={"$ref": "#/$defs/Order"}), "$defs": {"Order": _obj(id={"type": "string"})}}
    _served(_strict_chat_call(schema, {"order": {"id": "A-7"}}))
    _refused(_strict_chat_call(schema, {"order": {"id": 7}}), "openai_chat.answer.strict-tool-input", "(at $.order.id)")


def test_a_step_too_fine_for_decimals_holds_nothing() -> None:
    """`multipleOf` 1e-30 of 1e30: a multiple, though too many steps for the decimal context to count."""
    schema = _obj(n={"type": "number", "multipleOf": 1e-30})
    _served(_strict_chat_call(schema, {"n": 1e30}))
    half = _obj(n={"type": "number", "multipleOf": 0.5})
    _refused(
        _strict_chat_call(half, {"n": 0.7}), "openai_chat.answer.strict-tool-input", "0.7 is not a multiple of 0.5"
    )


# ---------------------------------------------------------------- `breaks` on shapes no SDK sends


def _breaks() -> Callable[..., str | None]:
    from wirescript.wires._schema import breaks

    return breaks


def test_type_lists_under_openapi() -> None:
    from wirescript.wires._schema import GEMINI

    breaks = _breaks()
    either = {"type": ["STRING", "INTEGER"], "nullable": True}
    for value in ("a", 1, None):
        assert breaks(value, either, GEMINI) is None, value
    assert breaks(1.5, either, GEMINI) == "1.5 is not of type 'string', 'integer', 'null'"
    with_null = {"type": ["STRING", "NULL"], "nullable": True}
    assert breaks(None, with_null, GEMINI) is None
    assert breaks(1, with_null, GEMINI) == "1 is not of type 'string', 'null'"
    odd = {"type": [5, "STRING"]}  # a type that is no name: it holds nothing, the others do
    assert breaks("a", odd, GEMINI) is None
    assert breaks(1, odd, GEMINI) == "1 is not of type 'string'"
    assert breaks(1, {"type": [5, "TYPE_UNSPECIFIED"]}, GEMINI) is None


@pytest.mark.parametrize(
    "schema",
    [
        pytest.param({"type": "object", "properties": {"a": 5}}, id="property-not-a-schema"),
        pytest.param({"type": "object", "properties": ["a"]}, id="properties-not-a-map"),
        pytest.param({"anyOf": {"type": "string"}}, id="any-of-not-a-list"),
        pytest.param({"$ref": 7}, id="ref-not-a-string"),
        pytest.param({1: "a", "type": "string"}, id="keys-that-cannot-be-sorted"),
        pytest.param({"type": "string", "enum": {"a", "b"}}, id="not-json"),
        pytest.param(["type", "string"], id="not-a-schema"),
    ],
)
def test_a_part_that_is_no_schema_holds_nothing(schema: Any) -> None:
    from wirescript.wires._schema import CORE_SCHEMA, LOOSE, OPENAI_STRICT

    for dialect in (CORE_SCHEMA, OPENAI_STRICT, LOOSE):
        assert _breaks()(7, schema, dialect) is None, dialect.name


def test_boolean_schemas_and_keywords_a_dialect_leaves_out() -> None:
    from wirescript.wires._schema import CLAUDE, OPENAI_STRICT

    breaks = _breaks()
    anything_or_nothing = {"type": "object", "properties": {"any": True, "never": False}}
    assert breaks({"any": [1]}, anything_or_nothing, OPENAI_STRICT) is None
    assert breaks({"never": 1}, anything_or_nothing, OPENAI_STRICT) == "False schema does not allow 1"
    composed = {"allOf": [{"type": "string"}]}  # OpenAI's strict subset has no `allOf`; Claude's has
    assert breaks(1, composed, OPENAI_STRICT) is None
    assert breaks(1, composed, CLAUDE) == "1 is not of type 'string'"


def test_a_schema_nested_deeper_than_64_holds_nothing() -> None:
    from wirescript.wires._schema import OPENAI_STRICT

    def nested(depth: int) -> tuple[Any, dict[str, Any]]:
        """A value `depth` objects deep whose innermost 7 breaks its schema's innermost `string`."""
        schema: dict[str, Any] = {"type": "string"}
        value: Any = 7
        for _ in range(depth):
            schema = {"type": "object", "properties": {"a": schema}}
            value = {"a": value}
        return value, schema

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))  # room for the library to follow 70 levels: only the cut-off stops it
    try:
        assert _breaks()(*nested(64), OPENAI_STRICT) == "7 is not of type 'string' (at $" + ".a" * 64 + ")"
        assert _breaks()(*nested(70), OPENAI_STRICT) is None
    finally:
        sys.setrecursionlimit(limit)


def test_a_step_is_held_on_numbers_only() -> None:
    from wirescript.wires._schema import OPENAI_STRICT

    breaks = _breaks()
    assert breaks("x", {"multipleOf": 0.5}, OPENAI_STRICT) is None  # not a number: no step to hold it to
    # a step the decimals cannot count (inf, too many steps) holds nothing, and the other keywords still hold
    assert breaks(float("inf"), {"type": "integer", "multipleOf": 0.5}, OPENAI_STRICT) == "inf is not of type 'integer'"
    fine = {"properties": {"n": {"multipleOf": 1e-30}, "m": {"type": "integer"}}}
    assert breaks({"n": 1e30, "m": "x"}, fine, OPENAI_STRICT) == "'x' is not of type 'integer' (at $.m)"
    assert breaks(1.25, {"multipleOf": 0.5}, OPENAI_STRICT) == "1.25 is not a multiple of 0.5"


def test_without_jsonschema_no_validator_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    from wirescript.wires import _schema

    schema = json.dumps({"type": "string"})
    try:
        with monkeypatch.context() as patch:
            patch.setitem(sys.modules, "jsonschema", None)
            _schema._jsonschema.cache_clear()
            _schema._validator.cache_clear()
            assert _schema._validator(schema, _schema.OPENAI_STRICT) is None
    finally:
        _schema._jsonschema.cache_clear()
        _schema._validator.cache_clear()
    assert _schema._validator(schema, _schema.OPENAI_STRICT) is not None


def test_a_union_is_held_by_the_field_name_google_genai_sends() -> None:
    """google-genai writes a `Schema`'s `anyOf` by its proto name `any_of`, which the API reads as `anyOf`: an
    `Optional[Union[str, int]]` field takes null, a string or an integer, and nothing else."""
    from pydantic import BaseModel

    class Row(BaseModel):
        key: str | int | None
        cells: list[str | int]

    stub = _gemini_output(Row, '{"key": null, "cells": ["a", 1]}')
    assert '"any_of"' in json.dumps(stub.requests[0].body)
    _served(stub)
    _served(_gemini_output(Row, '{"key": 7, "cells": []}'))
    _refused(
        _gemini_output(Row, '{"key": "k", "cells": [true]}'),
        GEMINI_OUTPUT,
        "True is not valid under any of the given schemas (at $.cells[0])",
    )
    _refused(
        _gemini_output(Row, '{"key": 1.5, "cells": []}'),
        GEMINI_OUTPUT,
        "1.5 is not valid under any of the given schemas (at $.key)",
    )
