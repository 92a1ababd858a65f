"""The answer rules of the Anthropic Messages body, shared by Anthropic's API and Bedrock's InvokeModel for Claude.

What a Messages request lets Claude answer with (`offer`): its tools
(strict ones guarantee their input), its `tool_choice` (and `disable_parallel_tool_use`), its JSON output
format (`output_config.format`, or the beta's `output_format`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._answers import AnswerRule, Choice, Offer, OfferedTool, Output, said
from ._schema import CLAUDE

__all__ = ["ANSWER_FIELDS", "ANSWER_RULES", "messages_offer"]

_TOOL_USE = "https://platform.claude.com/docs/en/agents-and-tools/tool-use/define-tools"
_PARALLEL = "https://platform.claude.com/docs/en/agents-and-tools/tool-use/parallel-tool-use"
_STRUCTURED = "https://platform.claude.com/docs/en/build-with-claude/structured-outputs"
_STRICT_TOOLS = "https://platform.claude.com/docs/en/agents-and-tools/tool-use/strict-tool-use"

TOOL_NOT_OFFERED = AnswerRule(
    "anthropic.answer.tool-not-offered",
    "anthropic",
    "tool_offered",
    "A `tool_use` block naming a tool the request's `tools` does not hold (a typo: `lookup_orders` for "
    "`lookup_order`), or any `tool_use` when the request offers no tools.",
    f"Define tools: Claude calls the tools the request defines in `tools` ({_TOOL_USE}); structured outputs, "
    f"strict tool use: 'Guarantee schema validation on tool names and inputs' ({_STRUCTURED})",
)
TOOL_CHOICE = AnswerRule(
    "anthropic.answer.tool-choice",
    "anthropic",
    "tool_choice",
    '`tool_choice` not honoured: no tool call for `{"type": "any"}` or `{"type": "tool"}`, another tool than the '
    'named one, or a tool call for `{"type": "none"}`.',
    f"Forcing tool use: '`any` tells Claude that it must use one of the provided tools', '`tool` allows us to "
    f"force Claude to always use a particular tool', '`none` prevents Claude from using any tools' ({_TOOL_USE}"
    "#forcing-tool-use)",
)
PARALLEL = AnswerRule(
    "anthropic.answer.parallel-tool-calls",
    "anthropic",
    "parallel_tool_calls",
    "Several `tool_use` blocks in one answer while `tool_choice` sets `disable_parallel_tool_use: true`.",
    f"Parallel tool use: with `disable_parallel_tool_use=true` and `auto`, Claude uses at most one tool; with `any` "
    f"or `tool`, exactly one ({_PARALLEL})",
)
STRICT_INPUT = AnswerRule(
    "anthropic.answer.strict-tool-input",
    "anthropic",
    "strict_tool_input",
    "A call's `input` that breaks its tool's `input_schema` when the tool is strict (`strict: true`); held to "
    "the keywords Claude enforces (types, required and known properties, enums, `anyOf`/`allOf`, local `$ref`s).",
    f"Strict tool use: 'Setting `strict: true` on a tool definition guarantees Claude's tool inputs match your JSON "
    f"Schema' ({_STRICT_TOOLS}); JSON Schema limitations: numerical, string and array constraints are not "
    f"supported ({_STRUCTURED}#json-schema-limitations)",
)
TOOL_INPUT = AnswerRule(
    "anthropic.answer.tool-input",
    "anthropic",
    "tool_input",
    "A call's `input` that breaks its tool's `input_schema`, for a tool that is not strict (a real model may send "
    "such input).",
    "The tool's own `input_schema` (JSON Schema), which the app declared: not a guarantee of the API's",
)
OUTPUT = AnswerRule(
    "anthropic.answer.output-format",
    "anthropic",
    "output",
    "Text that is not JSON conforming to the request's `output_config.format` (or the beta's `output_format`) "
    "JSON schema, in an answer that ends `end_turn` without a tool call.",
    f"JSON outputs: 'Structured outputs guarantee schema-compliant responses through constrained decoding'; a "
    f"refusal or `max_tokens` stop may not match the schema ({_STRUCTURED})",
)

ANSWER_RULES: Sequence[AnswerRule] = (TOOL_NOT_OFFERED, TOOL_CHOICE, PARALLEL, STRICT_INPUT, TOOL_INPUT, OUTPUT)
"""The Messages body's answer rules, in the order they are checked."""

ANSWER_FIELDS = frozenset({"tool_choice", "output_config", "output_format"})
"""The Messages fields that bind an answer without tool calls."""


def messages_offer(body: dict[str, Any], tools: list[Any] | None) -> Offer:
    """What a Messages request lets Claude answer with.

    Args:
        body: The request body.
        tools: The tools offered (the record's: a continued thread's tools included); None when the wire
            cannot tell (a continued thread it does not know).

    """
    offered: dict[str, OfferedTool] | None = None
    if tools is not None:
        offered = {}
        for tool in tools:
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                continue
            schema = tool.get("input_schema")
            custom = tool.get("type") in (None, "custom")
            offered.setdefault(
                tool["name"],
                OfferedTool(
                    tool["name"],
                    schema if custom and isinstance(schema, dict) else None,
                    strict=tool.get("strict") is True,
                    dialect=CLAUDE,
                ),
            )
    choice, single = _choice(body.get("tool_choice"))
    return Offer(offered, choice=choice, single_call=single, output=_output(body))


def _choice(value: Any) -> tuple[Choice | None, str | None]:
    if not isinstance(value, dict):
        return None, None
    text = said("tool_choice", value)
    kind = value.get("type")
    single = "`tool_choice.disable_parallel_tool_use` true" if value.get("disable_parallel_tool_use") is True else None
    if kind == "any":
        return Choice(text, required=True), single
    if kind == "tool" and isinstance(value.get("name"), str):
        return Choice(text, forced=value["name"]), single
    if kind == "none":
        return Choice(text, none=True), single
    return None, single


def _output(body: dict[str, Any]) -> Output | None:
    config = body.get("output_config")
    where = "output_config.format"
    found = config.get("format") if isinstance(config, dict) else None
    if found is None:
        found, where = body.get("output_format"), "output_format"
    if not isinstance(found, dict) or found.get("type") != "json_schema" or not isinstance(found.get("schema"), dict):
        return None
    return Output(f"`{where}` (json_schema)", found["schema"], CLAUDE)
