"""The answer rules of Bedrock's Converse API: what a Converse request lets the model answer with.

Tools are offered in `toolConfig.tools[].toolSpec`, strict ones (`strict: true`) guaranteeing their
input; `toolConfig.toolChoice` binds the calls (`any`: at least one, `tool`: the named one); structured
output is `outputConfig.textFormat` (`json_schema`, its schema a JSON string). InvokeModel's Claude body is
held to the Anthropic Messages rules (`_messages_answers`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .._answers import AnswerRule, Choice, Offer, OfferedTool, Output, said
from .._decode import as_list
from .._schema import CORE_SCHEMA

__all__ = ["CONVERSE_ANSWER_FIELDS", "CONVERSE_ANSWER_RULES", "converse_offer"]

_TOOL_USE = "https://docs.aws.amazon.com/bedrock/latest/userguide/tool-use.html"
_STRUCTURED = "https://docs.aws.amazon.com/bedrock/latest/userguide/structured-output.html"
_MODEL = "botocore's service model for bedrock-runtime (`ToolChoice`, `ToolSpecification.strict`, `OutputConfig`)"

CONVERSE_ANSWER_RULES: Sequence[AnswerRule] = (
    AnswerRule(
        "bedrock.answer.tool-not-offered",
        "bedrock",
        "tool_offered",
        "A `toolUse` naming a tool the request's `toolConfig.tools` does not hold (a typo), or any `toolUse` when "
        "the request offers no tools.",
        f"Tool use: the model requests one of the tools the request defines in `toolConfig` ({_TOOL_USE}); strict "
        f"tool use enables 'schema validation on tool names and inputs' ({_STRUCTURED})",
    ),
    AnswerRule(
        "bedrock.answer.tool-choice",
        "bedrock",
        "tool_choice",
        "`toolConfig.toolChoice` not honoured: no tool call for `any` or `tool`, or another tool than the named one.",
        f"{_MODEL}: `any` 'The model must request at least one tool (no text is generated)', `tool` 'The Model must "
        f"request the specified tool' ({_TOOL_USE})",
    ),
    AnswerRule(
        "bedrock.answer.strict-tool-input",
        "bedrock",
        "strict_tool_input",
        "A call's `input` that breaks its tool's `inputSchema.json` when the tool is strict (`strict: true`); held to "
        "the schema's shape (types, required and known properties, enums, `anyOf`, local `$ref`s).",
        f"Structured outputs, strict tool use: 'The model's tool calls will then follow the defined tool input "
        f"schema' ({_STRUCTURED})",
    ),
    AnswerRule(
        "bedrock.answer.tool-input",
        "bedrock",
        "tool_input",
        "A call's `input` that breaks its tool's `inputSchema.json`, for a tool that is not strict (a real model may "
        "send such input).",
        "The tool's own `inputSchema.json` (JSON Schema), which the app declared: not a guarantee of the API's",
    ),
    AnswerRule(
        "bedrock.answer.output-format",
        "bedrock",
        "output",
        "Text that breaks the request's `outputConfig.textFormat` JSON schema, in an answer that ends `end_turn` "
        "without a tool call.",
        f"Structured outputs: 'For Converse APIs, use the outputConfig.textFormat request field. The model's response "
        f"will conform to the specified JSON schema' ({_STRUCTURED})",
    ),
)
"""Converse's answer rules, in the order they are checked."""

CONVERSE_ANSWER_FIELDS = frozenset({"toolConfig", "outputConfig"})


def converse_offer(body: dict[str, Any], model: str | None) -> Offer:
    """What a Converse request lets the model answer with.

    A model id that is a Prompt management prompt (`…:prompt/…`, whose prompt may hold its tools) has its
    tool names unchecked.
    """
    config = body.get("toolConfig")
    config = config if isinstance(config, dict) else {}
    tools: dict[str, OfferedTool] = {}
    unknown = False
    for tool in as_list(config.get("tools")):
        if not isinstance(tool, dict):
            continue
        spec = tool.get("toolSpec")
        if isinstance(spec, dict) and isinstance(spec.get("name"), str):
            schema = spec.get("inputSchema")
            schema = schema.get("json") if isinstance(schema, dict) else None
            tools.setdefault(
                spec["name"],
                OfferedTool(
                    spec["name"],
                    schema if isinstance(schema, dict) else None,
                    strict=spec.get("strict") is True,
                    dialect=CORE_SCHEMA,
                    field="inputSchema.json",
                ),
            )
        system = tool.get("systemTool")
        if isinstance(system, dict) and isinstance(system.get("name"), str):
            tools.setdefault(system["name"], OfferedTool(system["name"]))
    if isinstance(model, str) and ":prompt/" in model:
        unknown = True
    return Offer(
        None if unknown else tools,
        tools_field="toolConfig.tools",
        choice=_choice(config.get("toolChoice")),
        output=_output(body.get("outputConfig")),
        rules=CONVERSE_ANSWER_RULES,
    )


def _choice(value: Any) -> Choice | None:
    if not isinstance(value, dict):
        return None
    text = said("toolConfig.toolChoice", value)
    if isinstance(value.get("any"), dict):
        return Choice(text, required=True)
    named = value.get("tool")
    if isinstance(named, dict) and isinstance(named.get("name"), str):
        return Choice(text, forced=named["name"])
    return None


def _output(config: Any) -> Output | None:
    fmt = config.get("textFormat") if isinstance(config, dict) else None
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
        return None
    structure = fmt.get("structure")
    spec = structure.get("jsonSchema") if isinstance(structure, dict) else None
    text = spec.get("schema") if isinstance(spec, dict) else None
    try:
        schema = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None  # Bedrock refuses a schema that is not JSON: nothing to hold the answer to
    if not isinstance(schema, dict):
        return None
    return Output("`outputConfig.textFormat` (json_schema)", schema, CORE_SCHEMA)
