"""Strict rules for Amazon Bedrock: Converse (`converse`, `converse_stream`) and Claude's InvokeModel body.

Converse: each rule's source is the ValidationException text Bedrock answers with, as users have
reported it, or a constraint of botocore's service model for bedrock-runtime (2023-09-30) that botocore
itself does not check before sending (it checks `min`, never `max`, `enum` or `pattern`); model-specific
limits are left to the models. InvokeModel for Claude takes the Anthropic Messages body (AWS: "Anthropic
Claude Messages API"), so the Messages rules run on it, minus what Bedrock's body differs in.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection
from typing import Any

from .._messages_rules import RULES as MESSAGES_RULES
from .._messages_rules import check_anthropic
from .._rules import Rule, Violation, dicts, is_number

__all__ = [
    "CONVERSE_RULES",
    "INVOKE_RULES",
    "ROLES_ALTERNATE",
    "RULES",
    "TOOL_CONFIG_MISSING",
    "TOOL_RESULT_WITHOUT_USE",
    "TOOL_USE_WITHOUT_RESULT",
    "check_converse",
    "check_invoke",
]

_SERVICE_MODEL = "botocore `data/bedrock-runtime/2023-09-30/service-2.json`"

ROLES_ALTERNATE = Rule(
    "bedrock.roles-must-alternate",
    "bedrock",
    "Two consecutive messages of the same role in a Converse conversation.",
    "Observed: 'A conversation must alternate between user and assistant roles. Make sure the conversation "
    "alternates between user and assistant roles and try again.' (github.com/langchain-ai/langchain-aws/issues/130, "
    "github.com/microsoft/semantic-kernel/issues/10281)",
)
TOOL_USE_WITHOUT_RESULT = Rule(
    "bedrock.tool-use-without-result",
    "bedrock",
    "An assistant `toolUse` not answered by a `toolResult` in the next (user) message.",
    "Observed: 'Expected toolResult blocks at messages.2.content for the following Ids: tooluse_…' "
    "(github.com/camel-ai/camel/issues/3954, github.com/genkit-ai/aws-bedrock-js-plugin/issues/664)",
)
TOOL_RESULT_WITHOUT_USE = Rule(
    "bedrock.tool-result-without-use",
    "bedrock",
    "More `toolResult` blocks in a message than `toolUse` blocks in the assistant message before it.",
    "Observed: 'The number of toolResult blocks at messages.{n}.content exceeds the number of toolUse blocks of "
    "previous turn.' (github.com/strands-agents/harness-sdk/issues/1435)",
)
TOOL_CONFIG_MISSING = Rule(
    "bedrock.tool-config-missing",
    "bedrock",
    "`toolUse` or `toolResult` blocks in the conversation without a `toolConfig`.",
    "Observed: 'The toolConfig field must be defined when using toolUse and toolResult content blocks.' "
    "(github.com/vxcontrol/pentagi/pull/196)",
)

FIRST_MESSAGE_NOT_USER = Rule(
    "bedrock.first-message-not-user",
    "bedrock",
    "A Converse conversation whose first message is an `assistant` message, for a Claude or Nova model (other "
    "models, such as gpt-oss, accept it).",
    "Observed: 'A conversation must start with a user message. Try again with a conversation that starts with a user "
    "message.' for Nova (github.com/deepgram/deepgram-python-sdk/issues/760, which also shows "
    "openai.gpt-oss-120b accepting it) and Claude (github.com/NousResearch/hermes-agent/pull/63983)",
)
_AWS_WORDS = "the refusal in AWS's validation words ('1 validation error detected: Value ... at ... failed to satisfy "
INVALID_ROLE = Rule(
    "bedrock.invalid-role",
    "bedrock",
    "A message role outside the `ConversationRole` enum (`user`, `assistant`, `system`).",
    f"{_SERVICE_MODEL}: `ConversationRole` enum [user, assistant, system], which botocore does not check; "
    f"{_AWS_WORDS}constraint: Member must satisfy enum value set: [...]')",
)
BLANK_TEXT = Rule(
    "bedrock.blank-text",
    "bedrock",
    "A Converse text content block whose `text` is empty or only whitespace.",
    "Observed: 'The text field in the ContentBlock object at messages.15.content.0 is blank. Add text to the text "
    "field, and try again.' (github.com/aws-samples/bedrock-engineer/issues/8, "
    "github.com/continuedev/continue/issues/9767), whitespace-only text included "
    "(github.com/langchain-ai/langchainjs/pull/8618)",
)
TOOL_NAME_PATTERN = Rule(
    "bedrock.tool-name-pattern",
    "bedrock",
    "A `toolSpec.name` outside the `ToolName` shape: `[a-zA-Z0-9_-]+`, 1 to 64 characters.",
    f"{_SERVICE_MODEL}: `ToolName` (min 1, max 64, pattern `[a-zA-Z0-9_-]+`), of which botocore checks only the "
    f"minimum; {_AWS_WORDS}constraint: Member must satisfy regular expression pattern: ...', '... Member must have "
    "length less than or equal to 64')",
)
INFERENCE_CONFIG_RANGE = Rule(
    "bedrock.inference-config-range",
    "bedrock",
    "`inferenceConfig.temperature` or `inferenceConfig.topP` above 1.",
    f"{_SERVICE_MODEL}: `InferenceConfigurationTemperatureFloat` and `...TopPFloat` (min 0, max 1; botocore checks "
    "only the minimum); observed 'temperature > 1 → Converse ValidationException (ceiling is 1, not 2)' "
    f"(github.com/mnfst/modelparams.dev/pull/305, a live probe); {_AWS_WORDS}constraint: Member must have value "
    "less than or equal to 1')",
)

CONVERSE_RULES: tuple[Rule, ...] = (
    FIRST_MESSAGE_NOT_USER,
    INVALID_ROLE,
    ROLES_ALTERNATE,
    BLANK_TEXT,
    TOOL_USE_WITHOUT_RESULT,
    TOOL_RESULT_WITHOUT_USE,
    TOOL_CONFIG_MISSING,
    TOOL_NAME_PATTERN,
    INFERENCE_CONFIG_RANGE,
)
"""Converse's rules, in the order they are checked."""

_CLAUDE_ON_BEDROCK = (
    "https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html"
)

INVOKE_VERSION_MISSING = Rule(
    "bedrock.invoke-anthropic-version-missing",
    "bedrock",
    "A Claude InvokeModel body without `anthropic_version`.",
    f"AWS, Anthropic Claude Messages API: 'anthropic_version - (Required) The anthropic version.' "
    f"({_CLAUDE_ON_BEDROCK}); observed 'Malformed input request: #: required key [max_tokens] not found, please "
    "reformat your input and try again.' for another required key (github.com/diffbot/code-gpt-docs/issues/300)",
)
INVOKE_EXTRANEOUS_KEY = Rule(
    "bedrock.invoke-extraneous-key",
    "bedrock",
    "`model` or `stream` in a Claude InvokeModel body (the model is in the path, streaming is the operation).",
    f"AWS, Anthropic Claude Messages API: the body has no `model` or `stream` ({_CLAUDE_ON_BEDROCK}); observed "
    "'Malformed input request: #: extraneous key [stream] is not permitted, please reformat your input and try "
    "again.' (github.com/sigoden/aichat/issues/543)",
)
INVOKE_RULES: tuple[Rule, ...] = (INVOKE_VERSION_MISSING, INVOKE_EXTRANEOUS_KEY)
"""InvokeModel's own rules for the Claude body, checked before the Messages rules."""

_MESSAGES_ON_INVOKE: tuple[Rule, ...] = tuple(rule for rule in MESSAGES_RULES if rule.id != "anthropic.model-missing")
"""The Messages rules that apply to InvokeModel's body: all but the model's (the path names it)."""

RULES: tuple[Rule, ...] = (*CONVERSE_RULES, *INVOKE_RULES, *_MESSAGES_ON_INVOKE)
"""Every rule the Bedrock wire checks: Converse's, then InvokeModel's (its own, then the Messages rules)."""

_PATH_NAMES_THE_MODEL = frozenset({"anthropic.model-missing"})
_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]+")
_ROLES = ("user", "assistant", "system")
_MODEL_ERRORS = "The model returned the following errors: "
"""How Bedrock relays a refusal of the model's own API (observed: github.com/skydiscover-ai/skydiscover/issues/15)."""


def check_converse(
    body: dict[str, Any], *, skip: frozenset[str] = frozenset(), model: str | None = None
) -> Violation | None:
    """The first Converse rule the request breaks, or None.

    Args:
        body: A `converse` (or `converse-stream`) request's JSON.
        skip: Rule ids not to check.
        model: The model id (or ARN) of the path, for the rules only some models' validation applies
            (`bedrock.first-message-not-user`); None: those are not checked.

    """
    listed = body.get("messages")
    if _clear(body, listed):  # the usual conversation: no check can refuse it, whatever is skipped
        return None
    return _each(body, listed, skip, model)


_CLEARED_FOR = frozenset(
    {
        "bedrock.first-message-not-user",
        "bedrock.invalid-role",
        "bedrock.roles-must-alternate",
        "bedrock.blank-text",
        "bedrock.tool-use-without-result",
        "bedrock.tool-result-without-use",
        "bedrock.tool-config-missing",
        "bedrock.tool-name-pattern",
        "bedrock.inference-config-range",
    }
)
"""The Converse rules `_clear` reasons about: a rule added to `CONVERSE_RULES` must be added here, and to
`_clear`, or the test that pins the two sets fails (the one pass would otherwise skip it)."""


def _clear(body: dict[str, Any], listed: Any) -> bool:
    """Whether no Converse check can refuse the body, read in one pass; False: each check is asked.

    It is clear when it has neither `toolConfig` nor `inferenceConfig`, and its messages (the dicts
    of a list) are `user` and `assistant` in turn from a `user` one, whose blocks carry no `toolUse`,
    no `toolResult` and no blank text: then every check passes (`_each`), skipped or not. A body of
    any other shape (a subclass of dict or list, a role of another value) is left to the checks.
    """
    if "toolConfig" in body or "inferenceConfig" in body:
        return False
    if listed.__class__ is not list:
        return not isinstance(listed, list)  # no messages: only `toolConfig`'s and `inferenceConfig`'s checks read any
    previous: Any = "assistant"  # the first message must be the user's: `_first_not_user`, for any model
    for message in listed:
        if message.__class__ is not dict:
            if isinstance(message, dict):
                return False
            continue  # not a message: every check skips it
        role = message.get("role")
        if role == previous or (role != "user" and role != "assistant"):
            return False  # `_alternate`, `_invalid_role` (or a role the checks read otherwise)
        previous = role
        content = message.get("content")
        if content.__class__ is not list:
            if isinstance(content, list):
                return False
            continue  # no blocks: the block checks skip it
        for block in content:
            if block.__class__ is not dict:
                if isinstance(block, dict):
                    return False
                continue
            if "toolUse" in block or "toolResult" in block:
                return False  # the tool-block checks
            text = block.get("text")
            if text is not None and (text.__class__ is not str or not text.strip()):
                return False  # `_blank_text` (or a text the checks read otherwise)
    return True


def _each(body: dict[str, Any], listed: Any, skip: frozenset[str], model: str | None) -> Violation | None:
    """`check_converse` asking each check not skipped, in order."""
    messages: list[dict[str, Any]] = []
    every, without_tool_blocks = _checks(skip if skip.__class__ is frozenset else frozenset(skip))
    # Only a conversation with toolUse or toolResult blocks can break the three rules about them.
    checks = without_tool_blocks
    if isinstance(listed, list):
        for message in listed:
            if isinstance(message, dict):
                messages.append(message)
                if checks is not every and _tool_blocks(message):
                    checks = every
    for check, needs in checks:
        if needs is not None and needs not in body:  # a check of a field the body lacks passes
            continue
        violation = check(body, messages, model)
        if violation is not None:
            return violation
    return None


_Planned = tuple[tuple["_Check", str | None], ...]


@functools.lru_cache(maxsize=64)  # a stub skips the same rules on every request
def _checks(skip: frozenset[str]) -> tuple[_Planned, _Planned]:
    """The checks not skipped, in order: all of them, and those a conversation without tool blocks can fail."""
    return (
        tuple((check, needs) for rule, check, needs in _CHECKS if rule.id not in skip),
        tuple((check, needs) for rule, check, needs in _CHECKS_WITHOUT_TOOL_BLOCKS if rule.id not in skip),
    )


def _tool_blocks(message: dict[str, Any]) -> bool:
    """Whether a message's content holds a `toolUse` or a `toolResult` block."""
    content = message.get("content")
    if not isinstance(content, list):
        return False
    for block in content:
        if isinstance(block, dict) and (
            isinstance(block.get("toolUse"), dict) or isinstance(block.get("toolResult"), dict)
        ):
            return True
    return False


def check_invoke(
    body: dict[str, Any], model: str | None, *, skip: frozenset[str] = frozenset(), betas: Collection[str] = ()
) -> Violation | None:
    """The first rule a Claude InvokeModel body breaks, or None: the Messages rules, minus what Bedrock differs in.

    Bedrock's body names no `model` (the path does) and no `stream` (the operation does), and carries
    `anthropic_version` (and `anthropic_beta`) itself. A refusal of the Messages rules is relayed as
    Bedrock relays the model's: "The model returned the following errors: <the Messages API's words>".

    Args:
        body: The parsed JSON body of an `invoke` or `invoke-with-response-stream` request.
        model: The model id (or ARN) of the path: the model-dependent Messages rules know only
            Anthropic's own ids, so they refuse nothing for Bedrock's.
        skip: Rule ids not to check.
        betas: The request's betas, when they came in a header rather than `anthropic_beta`.

    """
    if INVOKE_VERSION_MISSING.id not in skip and "anthropic_version" not in body:
        message = (
            "Malformed input request: #: required key [anthropic_version] not found, please reformat your input and "
            "try again."
        )
        return Violation(INVOKE_VERSION_MISSING, message, "anthropic_version")
    if INVOKE_EXTRANEOUS_KEY.id not in skip:
        for key in ("model", "stream"):
            if key in body:
                message = (
                    f"Malformed input request: #: extraneous key [{key}] is not permitted, please reformat your input "
                    "and try again."
                )
                return Violation(INVOKE_EXTRANEOUS_KEY, message, key)
    version = body.get("anthropic_version")
    listed = body.get("anthropic_beta")
    betas = [*betas, *(b for b in listed if isinstance(b, str))] if isinstance(listed, list) else betas
    violation = check_anthropic(
        {**body, "model": model},
        skip=skip | _PATH_NAMES_THE_MODEL,
        betas=betas,
        anthropic_version=version if isinstance(version, str) else None,
    )
    if violation is None:
        return None
    return Violation(violation.rule, _MODEL_ERRORS + violation.message, violation.param)


def _blocks(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    """The `kind` (`toolUse`, `toolResult`) blocks of a message's content."""
    return [b[kind] for _, b in dicts(message.get("content")) if isinstance(b.get(kind), dict)]


def _member(index: int) -> int:
    """AWS's validation paths number list members from 1 (`messages.1.member` is `messages[0]`)."""
    return index + 1


_USER_FIRST_MODELS = ("anthropic.claude", "amazon.nova")
"""The model families observed to refuse a conversation that starts with an assistant message."""


@functools.lru_cache(maxsize=256)
def _user_first(model: str) -> bool:
    """Whether the model is of a family that refuses a conversation starting with an assistant message."""
    return any(family in model for family in _USER_FIRST_MODELS)


def _first_not_user(body: dict[str, Any], messages: list[dict[str, Any]], model: str | None) -> Violation | None:
    if model is None or not _user_first(model):
        return None
    if messages and messages[0].get("role") == "assistant":
        return Violation(
            FIRST_MESSAGE_NOT_USER,
            "A conversation must start with a user message. Try again with a conversation that starts with a user "
            "message.",
            "messages.0.role",
        )
    return None


def _validation(rule: Rule, value: Any, where: str, constraint: str, param: str) -> Violation:
    """A refusal in AWS's validation words: `1 validation error detected: Value '…' at '…' failed to satisfy …`."""
    message = f"1 validation error detected: Value '{value}' at '{where}' failed to satisfy constraint: {constraint}"
    return Violation(rule, message, param)


def _invalid_role(body: dict[str, Any], messages: list[dict[str, Any]], model: str | None) -> Violation | None:
    for i, message in enumerate(messages):
        role = message.get("role")
        if isinstance(role, str) and role not in _ROLES:
            where = f"messages.{_member(i)}.member.role"
            enum = "Member must satisfy enum value set: [user, assistant, system]"
            return _validation(INVALID_ROLE, role, where, enum, f"messages.{i}.role")
    return None


def _blank_text(body: dict[str, Any], messages: list[dict[str, Any]], model: str | None) -> Violation | None:
    for i, message in enumerate(messages):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for k, block in enumerate(content):  # `dicts(content)`, in line: every request's every block
            text = block.get("text") if isinstance(block, dict) else None
            if isinstance(text, str) and not text.strip():
                return Violation(
                    BLANK_TEXT,
                    f"The text field in the ContentBlock object at messages.{i}.content.{k} is blank. Add text to the "
                    "text field, and try again.",
                    f"messages.{i}.content.{k}.text",
                )
    return None


def _tool_names(body: dict[str, Any], messages: list[dict[str, Any]], model: str | None) -> Violation | None:
    config = body.get("toolConfig")
    for i, tool in dicts(config.get("tools") if isinstance(config, dict) else None):
        spec = tool.get("toolSpec")
        name = spec.get("name") if isinstance(spec, dict) else None
        if not isinstance(name, str) or not name:
            continue  # botocore checks the minimum length itself
        where = f"toolConfig.tools.{_member(i)}.member.toolSpec.name"
        if len(name) > 64:
            constraint = "Member must have length less than or equal to 64"
        elif not _TOOL_NAME.fullmatch(name):
            constraint = "Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+"
        else:
            continue
        return _validation(TOOL_NAME_PATTERN, name, where, constraint, f"toolConfig.tools.{i}.toolSpec.name")
    return None


def _inference_range(body: dict[str, Any], messages: list[dict[str, Any]], model: str | None) -> Violation | None:
    config = body.get("inferenceConfig")
    if not isinstance(config, dict):
        return None
    for key in ("temperature", "topP"):
        value = config.get(key)
        if is_number(value) and value > 1:
            at = f"inferenceConfig.{key}"
            return _validation(INFERENCE_CONFIG_RANGE, value, at, "Member must have value less than or equal to 1", at)
    return None


def _alternate(body: dict[str, Any], messages: list[dict[str, Any]], model: str | None) -> Violation | None:
    for i in range(1, len(messages)):
        role = messages[i].get("role")
        if isinstance(role, str) and role == messages[i - 1].get("role"):
            return Violation(
                ROLES_ALTERNATE,
                "A conversation must alternate between user and assistant roles. Make sure the conversation "
                "alternates between user and assistant roles and try again.",
                f"messages.{i}.role",
            )
    return None


def _unanswered(body: dict[str, Any], messages: list[dict[str, Any]], model: str | None) -> Violation | None:
    for i, message in enumerate(messages[:-1]):
        if message.get("role") != "assistant":
            continue
        used = [str(u["toolUseId"]) for u in _blocks(message, "toolUse") if isinstance(u.get("toolUseId"), str)]
        answered = {r.get("toolUseId") for r in _blocks(messages[i + 1], "toolResult")}
        missing = [tool_id for tool_id in used if tool_id not in answered]
        if missing:
            return Violation(
                TOOL_USE_WITHOUT_RESULT,
                f"Expected toolResult blocks at messages.{i + 1}.content for the following Ids: {', '.join(missing)}",
                f"messages.{i + 1}.content",
            )
    return None


def _extra_results(body: dict[str, Any], messages: list[dict[str, Any]], model: str | None) -> Violation | None:
    for i, message in enumerate(messages):
        results = _blocks(message, "toolResult")
        if not results:
            continue
        uses = _blocks(messages[i - 1], "toolUse") if i > 0 and messages[i - 1].get("role") == "assistant" else []
        if len(results) > len(uses):
            return Violation(
                TOOL_RESULT_WITHOUT_USE,
                f"The number of toolResult blocks at messages.{i}.content exceeds the number of toolUse blocks of "
                "previous turn.",
                f"messages.{i}.content",
            )
    return None


def _tool_config(body: dict[str, Any], messages: list[dict[str, Any]], model: str | None) -> Violation | None:
    if isinstance(body.get("toolConfig"), dict):
        return None
    if any(_blocks(m, "toolUse") or _blocks(m, "toolResult") for m in messages):
        return Violation(
            TOOL_CONFIG_MISSING,
            "The toolConfig field must be defined when using toolUse and toolResult content blocks.",
            "toolConfig",
        )
    return None


_Check = Callable[[dict[str, Any], list[dict[str, Any]], str | None], Violation | None]
_CHECKS: tuple[tuple[Rule, _Check, str | None], ...] = (
    (FIRST_MESSAGE_NOT_USER, _first_not_user, None),
    (INVALID_ROLE, _invalid_role, None),
    (ROLES_ALTERNATE, _alternate, None),
    (BLANK_TEXT, _blank_text, None),
    (TOOL_USE_WITHOUT_RESULT, _unanswered, None),
    (TOOL_RESULT_WITHOUT_USE, _extra_results, None),
    (TOOL_CONFIG_MISSING, _tool_config, None),
    (TOOL_NAME_PATTERN, _tool_names, "toolConfig"),
    (INFERENCE_CONFIG_RANGE, _inference_range, "inferenceConfig"),
)
"""Every Converse check, in the order of `CONVERSE_RULES`."""

_ABOUT_TOOL_BLOCKS = frozenset({TOOL_USE_WITHOUT_RESULT.id, TOOL_RESULT_WITHOUT_USE.id, TOOL_CONFIG_MISSING.id})
_CHECKS_WITHOUT_TOOL_BLOCKS = tuple(entry for entry in _CHECKS if entry[0].id not in _ABOUT_TOOL_BLOCKS)
"""The checks a conversation without `toolUse` or `toolResult` blocks can fail: the others find nothing in it."""
