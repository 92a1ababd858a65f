"""Strict-request rules of the Anthropic Messages body, checked by the wires that take it.

The Anthropic wire (`POST /v1/messages`, Vertex AI's `rawPredict`) and Bedrock's InvokeModel (Claude on
Bedrock) both take this body, so its rules live beside them, not in either package; the public home of
the names is `wirescript.wires.anthropic.rules`.

Some rules depend on the model (`models.CLAUDE_MODELS`: an unknown model is never refused by them), on
the request's `anthropic-version` (API version `2026-10-21` removed the sampling parameters) and on its
betas (`anthropic-beta`); the wire passes them from the request's headers, or from the body where the
platform carries them there (Bedrock and Vertex AI: `anthropic_version`, `anthropic_beta`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator
from typing import Any

from ._claude_models import CLAUDE_MODELS, ClaudeModel
from ._rules import ModelTable, Rule, Violation, dicts, is_int, is_number

__all__ = ["RETIRED", "RULES", "check_anthropic", "header_betas", "plainly_valid", "rules_violation"]

_DOCS = "https://platform.claude.com/docs/en"
_HANDLE_TOOLS = f"{_DOCS}/agents-and-tools/tool-use/handle-tool-calls"

MODEL_MISSING = Rule(
    "anthropic.model-missing",
    "anthropic",
    "`model` is missing.",
    "API reference: `model` is Required in `MessageCreateParams` (anthropic SDK `types/message_create_params.py`); "
    f"{_DOCS}/api/messages",
)
MAX_TOKENS_INVALID = Rule(
    "anthropic.max-tokens-invalid",
    "anthropic",
    "`max_tokens` is missing or negative (0 is allowed: it pre-warms the prompt cache).",
    "API reference: `max_tokens` is Required; 'Set to `0` to populate the prompt cache without generating a "
    "response' (anthropic SDK `types/message_create_params.py`); " + f"{_DOCS}/api/messages",
)
MESSAGES_MISSING = Rule(
    "anthropic.messages-missing",
    "anthropic",
    "`messages` is missing.",
    f"API reference: `messages` is Required in `MessageCreateParams`; {_DOCS}/api/messages",
)
MESSAGES_EMPTY = Rule(
    "anthropic.messages-empty",
    "anthropic",
    "`messages` is an empty list.",
    "Observed error 'messages: at least one message is required' (invalid_request_error), widely quoted in "
    "client issue trackers; API reference: 'You can specify a single `user`-role message, or ... multiple'.",
)
INVALID_ROLE = Rule(
    "anthropic.invalid-role",
    "anthropic",
    "A message role other than `user`, `assistant` or `system`.",
    'Observed: \'messages: Unexpected role "tool". Allowed roles are "user" or "assistant". For instructions on '
    "how to use tools, see https://docs.anthropic.com/en/docs/tool-use' (github.com/mark3labs/mcphost/issues/36); "
    "anthropic SDK `MessageParam` = UserMessageParam | AssistantMessageParam | SystemMessageParam (the roles let "
    "through)",
)
SYSTEM_ROLE_MISPLACED = Rule(
    "anthropic.system-role-misplaced",
    "anthropic",
    "A `role: system` message first in `messages`, or not right after a user message: use the top-level `system`.",
    'Observed: \'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not '
    '"system" as an input message role.\' (github.com/Maol-1997/cursor-claude-connector/issues/3, '
    "github.com/aaronrussell/anthropix/issues/2). Mid-conversation system messages (Claude Opus 4.8) must "
    f"immediately follow a user message: {_DOCS}/build-with-claude/mid-conversation-system-messages",
)
TOOL_USE_WITHOUT_RESULT = Rule(
    "anthropic.tool-use-without-result",
    "anthropic",
    "An assistant `tool_use` not answered by a `tool_result` in the very next (user) message.",
    "Observed: 'messages.N: `tool_use` ids were found without `tool_result` blocks immediately after: <id>. Each "
    "`tool_use` block must have a corresponding `tool_result` block in the next message.' "
    f"(github.com/anthropics/claude-code/issues/5989, #1237, #2697); docs: {_HANDLE_TOOLS}",
)
TOOL_RESULT_WITHOUT_USE = Rule(
    "anthropic.tool-result-without-use",
    "anthropic",
    "A `tool_result` whose `tool_use_id` matches no `tool_use` of the previous (assistant) message.",
    "Observed: 'messages.N.content.K: unexpected `tool_use_id` found in `tool_result` blocks: <id>. Each "
    "`tool_result` block must have a corresponding `tool_use` block in the previous message.' "
    "(github.com/anthropics/claude-code/issues/13460, #18947, #25959)",
)
TOOL_RESULT_NOT_FIRST = Rule(
    "anthropic.tool-result-not-first",
    "anthropic",
    "In a user message carrying tool results, a non-`tool_result` block comes before a `tool_result`.",
    "Docs, 'Important formatting requirements': 'the tool_result blocks must come FIRST in the content array. Any "
    f"text must come AFTER all tool results.' with 'this will cause a 400 error'; {_HANDLE_TOOLS}",
)
DUPLICATE_TOOL_NAMES = Rule(
    "anthropic.duplicate-tool-names",
    "anthropic",
    "Two tools with the same name.",
    "Observed: 'tools: Tool names must be unique.' (invalid_request_error; "
    "github.com/anthropics/claude-code/issues/10687)",
)
TOOL_NAME_PATTERN = Rule(
    "anthropic.tool-name-pattern",
    "anthropic",
    "A custom tool name outside `^[a-zA-Z0-9_-]{1,128}$`.",
    "Observed: \"tools.N.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'\" "
    "(github.com/home-assistant/core/issues/147760, github.com/netclaw-dev/netclaw/issues/1133) and "
    "'tools.N.custom.name: String should have at most 128 characters' (github.com/anthropics/claude-code/issues/96152)",
)
CACHE_CONTROL_LIMIT = Rule(
    "anthropic.cache-control-limit",
    "anthropic",
    "More than 4 blocks carry `cache_control`.",
    "Observed: 'A maximum of 4 blocks with cache_control may be provided. Found 5.' "
    "(github.com/tghamm/Anthropic.SDK/issues/50, github.com/Wei-Shaw/sub2api/issues/176); "
    f"{_DOCS}/build-with-claude/prompt-caching",
)
THINKING_BUDGET_TOO_SMALL = Rule(
    "anthropic.thinking-budget-too-small",
    "anthropic",
    "`thinking.type: enabled` with `budget_tokens` below 1024.",
    'API reference: \'With `{"type": "enabled"}` (manual extended thinking), you set a `budget_tokens` of at least '
    f"1,024' (anthropic SDK `types/message_create_params.py`); {_DOCS}/build-with-claude/extended-thinking",
)
_GRACEFUL = (
    "Retired: the extended-thinking docs' 'Graceful thinking degradation' paragraph says that toggling thinking "
    "mid-turn 'won't cause an error, but thinking will be silently disabled for that request' (the API strips "
    "thinking blocks or disables thinking instead); "
    f"{_DOCS}/build-with-claude/extended-thinking#toggling-thinking-modes-in-conversations"
)
THINKING_BLOCK_FIRST = Rule(
    "anthropic.thinking-not-first",
    "anthropic",
    "With thinking enabled, the assistant turn of the current tool loop does not start with its thinking block.",
    "Observed: 'messages.N.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`. When "
    "`thinking` is enabled, a final `assistant` message must start with a thinking block ...' "
    "(github.com/n8n-io/n8n/issues/22550, github.com/OpenRouterTeam/ai-sdk-provider/issues/162)",
    retired=_GRACEFUL,
)
THINKING_IN_FINAL_WHEN_DISABLED = Rule(
    "anthropic.thinking-in-final-message-when-disabled",
    "anthropic",
    "With `thinking.type: disabled`, a final (prefill) assistant message that contains a thinking block.",
    "Observed: 'messages.N.content.0: When thinking is disabled, an `assistant` message in the final position "
    "cannot contain `thinking`. ...' (github.com/tailcallhq/forgecode/issues/1853, #1195)",
    retired=_GRACEFUL,
)
TEMPERATURE_RANGE = Rule(
    "anthropic.temperature-range",
    "anthropic",
    "`temperature` outside [0, 1].",
    "Observed: 'temperature: range: -1 or 0..1' (github.com/anthropics/anthropic-sdk-python/issues/893; "
    "'top_p: range: -1 or 0..1', github.com/anthropics/anthropic-sdk-typescript/issues/484); maintainer, 2026-08: "
    "'`temperature=-1` is now rejected with a 400 (`invalid_request_error`) on current models, and the accepted "
    "range is `0.0`-`1.0`' (the same issue), so -1 is refused too, in the same words",
)
SAMPLING_REMOVED = Rule(
    "anthropic.sampling-parameters-removed",
    "anthropic",
    "`temperature`, `top_p` or `top_k` in a request of API version `2026-10-21` (what the anthropic 2.x SDKs send).",
    "API versions: '2026-10-21 ... The temperature, top_p, and top_k request parameters are removed. A request that "
    f"sends any of them returns a 400' ({_DOCS}/api/versioning, {_DOCS}/api/migration-2026-10-21); observed "
    "'temperature: Extra inputs are not permitted' (github.com/ttlequals0/MinusPod release 2.101.10)",
)
EMPTY_CONTENT = Rule(
    "anthropic.empty-content",
    "anthropic",
    'A message with empty `content` (`""` or `[]`), other than a final assistant message.',
    "Observed: 'messages.0: all messages must have non-empty content except for the optional final assistant "
    "message' (github.com/anthropics/claude-code/issues/6774, #3196)",
)
EMPTY_TEXT_BLOCK = Rule(
    "anthropic.empty-text-block",
    "anthropic",
    "A text content block with an empty `text`.",
    "Observed: 'messages: text content blocks must be non-empty' (github.com/anthropics/claude-code/issues/59812, "
    "github.com/anthropics/anthropic-sdk-python/issues/461)",
)
TRAILING_WHITESPACE = Rule(
    "anthropic.final-assistant-trailing-whitespace",
    "anthropic",
    "A final (prefill) assistant message whose text ends with whitespace.",
    "Observed: 'messages: final assistant content cannot end with trailing whitespace' "
    "(github.com/tailcallhq/forgecode/issues/1872, github.com/anomalyco/opencode/issues/1295)",
)
IMAGE_MEDIA_TYPE = Rule(
    "anthropic.image-media-type",
    "anthropic",
    "A base64 image whose `media_type` is not `image/jpeg`, `image/png`, `image/gif` or `image/webp`.",
    'Observed: "messages.62.content.0.tool_result.content.0.image.source.base64.media_type: Input should be '
    "'image/jpeg', 'image/png', 'image/gif' or 'image/webp'\" (github.com/anthropics/claude-code/issues/5955); "
    "anthropic SDK `Base64ImageSourceParam.media_type`",
)
TOOL_INPUT_SCHEMA = Rule(
    "anthropic.tool-input-schema-missing",
    "anthropic",
    "A custom tool without `input_schema`, or with an `input_schema` that has no `type`.",
    "Observed: 'tools.0.custom.input_schema: Field required' (github.com/su-kaka/gcli2api/issues/392, "
    "github.com/mnfst/llm-gateway/issues/1886) and 'tools.0.custom.input_schema.type: Field required' "
    "(github.com/Kilo-Org/kilocode/issues/12238); anthropic SDK `ToolParam.input_schema` is Required",
)
THINKING_BUDGET_NOT_BELOW_MAX = Rule(
    "anthropic.thinking-budget-not-below-max-tokens",
    "anthropic",
    "`thinking.budget_tokens` not below `max_tokens`, on a model that requires it (the model table) and without "
    "the interleaved-thinking beta.",
    "anthropic SDK `ThinkingConfigEnabledParam.budget_tokens`: 'Must be ≥1024 and less than `max_tokens`'; observed "
    "'`max_tokens` must be greater than `thinking.budget_tokens`' (OpenHands' Anthropic proxy spec); interleaved "
    f"thinking lifts it: {_DOCS}/build-with-claude/extended-thinking#interleaved-thinking",
)
THINKING_FORCED_TOOL = Rule(
    "anthropic.thinking-with-forced-tool-choice",
    "anthropic",
    "`thinking.type: enabled` with a `tool_choice` of type `any` or `tool`.",
    'Docs: \'Tool use with thinking only supports tool_choice: {"type": "auto"} (the default) or ... "none". '
    'Attempting to use tool_choice: {"type": "any"} or ... "tool" will result in an error\' '
    f"({_DOCS}/build-with-claude/extended-thinking); observed 'Thinking may not be enabled when tool_choice forces "
    "tool use.' (github.com/mastra-ai/mastra/issues/7507, github.com/can1357/oh-my-pi/issues/341)",
)
THINKING_TEMPERATURE = Rule(
    "anthropic.thinking-with-temperature",
    "anthropic",
    "`thinking.type` `enabled` or `adaptive` with a `temperature` other than 1.",
    "Observed: '`temperature` may only be set to 1 when thinking is enabled or in adaptive mode. Please consult our "
    "documentation at ...' (github.com/mnfst/modelparams.dev/issues/214, "
    f"github.com/dotCipher/opencode-claude-bridge/pull/1); {_DOCS}/build-with-claude/extended-thinking",
)
MAX_TOKENS_ABOVE_MODEL = Rule(
    "anthropic.max-tokens-above-model-limit",
    "anthropic",
    "`max_tokens` above the model's documented output limit (the model table; an unknown model, or an `output-*` "
    "beta, is let through).",
    "Observed: 'max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for "
    "claude-sonnet-4-20250514' (github.com/OpenHands/OpenHands/issues/11090, "
    f"github.com/anthropics/claude-code/issues/24451); the limits: each model's page, {_DOCS}/models/overview",
)
PREFILL_UNSUPPORTED = Rule(
    "anthropic.prefill-unsupported",
    "anthropic",
    "A conversation ending in an assistant text prefill, on a model that refuses prefills (Claude 4.6 and later, "
    "per the model table).",
    "Docs: 'Prefilling assistant messages returns a 400 error on Claude 4.6 models' "
    f"({_DOCS}/about-claude/models/whats-new-claude-4-6#prefill-removal); observed 'This model does not support "
    "assistant message prefill. The conversation must end with a user message.' "
    "(github.com/langchain-ai/deepagents/issues/1585, github.com/smallmain/vscode-unify-chat-provider/issues/249)",
)
TEMPERATURE_WITH_TOP_P = Rule(
    "anthropic.temperature-with-top-p",
    "anthropic",
    "`temperature` and `top_p` together, on a model that refuses both (the model table).",
    "Docs: 'Use only temperature or top_p, not both' (migration to Claude 4.5, "
    f"{_DOCS}/about-claude/models/migrating-to-claude-4); observed '`temperature` and `top_p` cannot both be "
    "specified for this model. Please use only one.' (github.com/langfuse/langfuse/issues/9882, "
    "github.com/maximhq/bifrost/issues/3741)",
)

SERVER_TOOL_VERSION = Rule(
    "anthropic.server-tool-version",
    "anthropic",
    "A server tool `type` that is no version of its tool: a bare `web_search` (OpenAI's form) or a date no version "
    "has (`web_search_20250101`). A date later than the last known version is let through (a new version).",
    "Observed: \"tools.1: Input tag 'web_fetch_20250910' found using 'type' does not match any of the expected tags: "
    "'bash_20250124', 'code_execution_20250522', 'custom', ...\" (invalid_request_error; "
    "github.com/anthropics/anthropic-sdk-go/issues/235, github.com/anthropics/claude-code/issues/61624); the "
    "versions are the anthropic SDK's tool types (`types/web_search_tool_20250305_param.py`, ...) and "
    f"{_DOCS}/agents-and-tools/tool-use/tool-reference",
)
SERVER_TOOL_EMPTY_DOMAINS = Rule(
    "anthropic.server-tool-empty-domains",
    "anthropic",
    "A web search tool with `blocked_domains: []`.",
    "Observed: 'tools.0.web_search_20250305.blocked_domains: Empty list of domains is ambiguous. Provide at least "
    "one domain or null.' (invalid_request_error; github.com/CherryHQ/cherry-studio/pull/10374, "
    "github.com/router-for-me/CLIProxyAPI/issues/2681)",
)
SERVER_TOOL_DOMAINS_BOTH = Rule(
    "anthropic.server-tool-domains-both",
    "anthropic",
    "A web search or web fetch tool with both `allowed_domains` and `blocked_domains`.",
    "Docs, server tools, domain filtering: 'You can use either `allowed_domains` or `blocked_domains`, but not both "
    f"in the same request' ({_DOCS}/agents-and-tools/tool-use/server-tools#domain-filtering); anthropic SDK "
    "`types/web_search_tool_20250305_param.py`: 'Cannot be used alongside `blocked_domains`'; the wording as Claude "
    "Code's web search reports the refusal: 'Cannot specify both allowed_domains and blocked_domains in the same "
    "request' (github.com/anthropics/claude-code/issues/19131; github.com/microsoft/vscode/pull/314275)",
)
MCP_SERVER_TOOLSET = Rule(
    "anthropic.mcp-server-toolset",
    "anthropic",
    "An `mcp_toolset` naming no server of `mcp_servers`, a server two toolsets name, or (when toolsets are used) a "
    "server none names.",
    "Docs, MCP connector, 'Validation rules': 'The API enforces these validation rules: Server must exist ... Server "
    "must be used: Every MCP server defined in `mcp_servers` must be referenced by exactly one MCPToolset ... Unique "
    f"toolset per server' ({_DOCS}/agents-and-tools/mcp-connector). The wording of the refusal is not documented: "
    "the message is wirescript's.",
)

RULES: tuple[Rule, ...] = (
    MODEL_MISSING,
    MAX_TOKENS_INVALID,
    MESSAGES_MISSING,
    MESSAGES_EMPTY,
    SAMPLING_REMOVED,
    INVALID_ROLE,
    SYSTEM_ROLE_MISPLACED,
    EMPTY_CONTENT,
    EMPTY_TEXT_BLOCK,
    TRAILING_WHITESPACE,
    IMAGE_MEDIA_TYPE,
    TOOL_USE_WITHOUT_RESULT,
    TOOL_RESULT_WITHOUT_USE,
    TOOL_RESULT_NOT_FIRST,
    DUPLICATE_TOOL_NAMES,
    TOOL_NAME_PATTERN,
    TOOL_INPUT_SCHEMA,
    CACHE_CONTROL_LIMIT,
    THINKING_BUDGET_TOO_SMALL,
    THINKING_BUDGET_NOT_BELOW_MAX,
    THINKING_FORCED_TOOL,
    THINKING_TEMPERATURE,
    TEMPERATURE_RANGE,
    MAX_TOKENS_ABOVE_MODEL,
    PREFILL_UNSUPPORTED,
    TEMPERATURE_WITH_TOP_P,
    SERVER_TOOL_VERSION,
    SERVER_TOOL_EMPTY_DOMAINS,
    SERVER_TOOL_DOMAINS_BOTH,
    MCP_SERVER_TOOLSET,
    THINKING_BLOCK_FIRST,
    THINKING_IN_FINAL_WHEN_DISABLED,
)
"""Every Anthropic rule, in the order they are checked (the retired ones last: they refuse nothing)."""

RETIRED: tuple[Rule, ...] = tuple(rule for rule in RULES if rule.retired)
"""The rules that refuse nothing any more; their ids stay valid for `strict_skip`."""

_ROLES = ("user", "assistant", "system")
_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,128}")


def _blocks(message: dict[str, Any]) -> list[Any]:
    """A message's content as a list of blocks (a string is one text block)."""
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def _block_types(message: dict[str, Any]) -> list[str | None]:
    return [b.get("type") if isinstance(b, dict) else None for b in _blocks(message)]


def _tool_use_ids(message: dict[str, Any]) -> list[str]:
    return [
        b["id"]
        for b in _blocks(message)
        if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("id"), str)
    ]


class _Conversation:
    """The messages a request gives the model: a thread's earlier messages, then the request's own."""

    def __init__(self, body: dict[str, Any], history: list[Any] | None) -> None:
        own = body.get("messages")
        self.own: list[Any] = own if isinstance(own, list) else []
        thread = body.get("thread")
        continues = isinstance(thread, dict) and thread.get("type") == "continue"
        # A continued thread whose earlier messages are unknown: what precedes messages[0] is unknown too.
        self.blind_start = continues and history is None
        self.offset = len(history) if history else 0
        self.messages: list[Any] = [*(history or []), *self.own]

    def at(self, index: int) -> dict[str, Any] | None:
        if 0 <= index < len(self.messages) and isinstance(self.messages[index], dict):
            message: dict[str, Any] = self.messages[index]
            return message
        return None

    def path(self, index: int) -> str:
        """The body path of conversation message `index` (thread messages before the request's own map to 0)."""
        return f"messages.{max(index - self.offset, 0)}"

    def own_messages(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """The request's own messages that are objects, with their indexes in the conversation."""
        for i in range(self.offset, len(self.messages)):
            message = self.messages[i]
            if isinstance(message, dict):
                yield i, message

    def final_assistant(self) -> dict[str, Any] | None:
        """The request's last message when it is an assistant message (a prefill), else None."""
        if not self.own:
            return None
        last = self.own[-1]
        return last if isinstance(last, dict) and last.get("role") == "assistant" else None


class _Request:
    """One request as the checks read it: the body, its conversation, and what the body alone does not say."""

    __slots__ = ("betas", "body", "conv", "model", "new_version")

    def __init__(
        self,
        body: dict[str, Any],
        history: list[Any] | None,
        betas: Collection[str],
        anthropic_version: str | None,
        models: ModelTable[ClaudeModel],
    ) -> None:
        self.body = body
        self.conv = _Conversation(body, history)
        self.betas = betas
        self.new_version = _removes_sampling(anthropic_version)
        self.model = models.lookup(body.get("model"))


def header_betas(value: str | None) -> tuple[str, ...]:
    """The betas of an `anthropic-beta` header (comma-separated), or none."""
    return tuple(beta.strip() for beta in value.split(",")) if value else ()


def _removes_sampling(version: str | None) -> bool:
    """Whether an API version is `2026-10-21` or later (dated versions compare as strings)."""
    return isinstance(version, str) and len(version) == 10 and version >= "2026-10-21" and version[4] == "-"


def check_anthropic(
    body: dict[str, Any],
    *,
    history: list[Any] | None = None,
    served_without_thinking: Collection[str] = frozenset(),
    skip: frozenset[str] = frozenset(),
    betas: Collection[str] = (),
    anthropic_version: str | None = None,
    models: ModelTable[ClaudeModel] = CLAUDE_MODELS,
) -> Violation | None:
    """The first Anthropic Messages rule the request breaks, or None.

    Args:
        body: The parsed JSON body of a `POST /v1/messages` request.
        history: For a continued server-held thread (`thread: {"type": "continue"}`), the thread's
            earlier messages (what the wire remembered), checked together with `body["messages"]`.
            None when the request is not threaded or the thread is unknown; a continued thread with
            no history is then not checked across its first message.
        served_without_thinking: Accepted for compatibility and not read: the rule that used it
            (`anthropic.thinking-not-first`) is retired.
        skip: Rule ids not to check.
        betas: The request's betas (its `anthropic-beta` header, or Bedrock's `anthropic_beta`):
            `interleaved-thinking-2025-05-14` lets a thinking budget exceed `max_tokens`, an `output-*`
            beta raises a model's output limit.
        anthropic_version: The request's API version (the body's `anthropic_version` on Bedrock and
            Vertex AI, else the `anthropic-version` header); `2026-10-21` and later refuse the sampling
            parameters. None: unknown, not checked.
        models: The model table the model-dependent rules read (an unknown model is never refused by them).

    Returns:
        The violation of the first broken rule, in the order of `RULES`; None when the request passes.

    """
    if history is None and plainly_valid(body, models):  # what nearly every request sends: no rule can refuse it
        return None
    return rules_violation(
        body, history=history, skip=skip, betas=betas, anthropic_version=anthropic_version, models=models
    )


def plainly_valid(body: dict[str, Any], models: ModelTable[ClaudeModel] = CLAUDE_MODELS) -> bool:
    """Whether no rule can refuse `body` (not a continued thread), decided in one pass without running each.

    True only for the shape most requests have, a tool loop's included: a `model`; an integer
    `max_tokens` of at least 0 and within the model's output limit, if the table lists the model; a
    non-empty list of `user` and `assistant` messages ending with a user message, each with a
    non-empty string content or a non-empty list of blocks: text blocks with a non-empty `text`,
    an assistant's `tool_use` blocks with a string `id`, and a user's `tool_result` blocks first in
    its content, answering exactly the tool uses of the assistant message before it (whose every
    use the next message answers), their content a string or text blocks; no block with
    `cache_control` or (but a tool result) a nested `content`; `tools`, if any, custom tools (no
    `type`) with unique names of the documented pattern, an `input_schema` object with a `type` and
    no `cache_control` or `content`; no `thread`, no `tool_choice`, no list `system`, no `thinking`
    of type `enabled` or `adaptive`; no sampling parameter (`temperature`, `top_p`, `top_k`, which
    the API version may refuse). Then no role is foreign or misplaced, no content empty, no prefill,
    no tool use unanswered or result unasked, no thinking block exists, no block counts against the
    cache-control limit and no budget applies. Anything else, and so every request a rule refuses,
    is left to the rules. `tests/test_strict_fast.py` checks that this says True only of bodies
    every rule passes.
    """
    if body.get("model") is None or "thread" in body or "tool_choice" in body:
        return False
    max_tokens = body.get("max_tokens")
    if type(max_tokens) is not int or max_tokens < 0:
        return False
    if "temperature" in body or "top_p" in body or "top_k" in body:
        return False
    thinking = body.get("thinking")
    if isinstance(body.get("system"), list) or (isinstance(thinking, dict) and thinking.get("type") in _THINKS):
        return False
    tools = body.get("tools")
    if tools and not _plain_tools(tools):
        return False
    model = models.lookup(body["model"])
    if model is not None and model.max_output_tokens is not None and max_tokens > model.max_output_tokens:
        return False
    messages = body.get("messages")
    if type(messages) is not list or not messages:
        return False
    asked: list[str] = []  # the tool uses of the message before, when it was an assistant's
    for message in messages:
        if type(message) is not dict:
            return False
        role = message.get("role")
        if role not in _PLAIN_ROLES:
            return False
        content = message.get("content")
        if type(content) is str:
            if not content or asked:
                return False
            continue
        if type(content) is not list or not content:
            return False
        uses: list[str] = []
        answered: list[str] = []
        other = False  # a block other than a tool result came: no tool result may follow
        for block in content:
            if type(block) is not dict or "cache_control" in block:
                return False
            kind = block.get("type")
            if kind == "text":
                if "content" in block or not block.get("text"):
                    return False
                other = True
            elif kind == "tool_use" and role == "assistant":
                use = block.get("id")
                if type(use) is not str or "content" in block:
                    return False
                uses.append(use)
                other = True
            elif kind == "tool_result" and role == "user":
                use = block.get("tool_use_id")
                if other or type(use) is not str or use not in asked or not _plain_result(block.get("content")):
                    return False
                answered.append(use)
            else:
                return False
        if asked and any(use not in answered for use in asked):
            return False
        asked = uses
    return bool(messages[-1].get("role") == "user")


def _plain_tools(tools: Any) -> bool:
    """Whether `tools` are custom tools no rule refuses: unique names of the pattern, an input schema with a type."""
    if type(tools) is not list:
        return False
    names: list[str] = []
    for tool in tools:
        if type(tool) is not dict or "type" in tool or "cache_control" in tool or "content" in tool:
            return False
        name = tool.get("name")
        schema = tool.get("input_schema")
        if type(name) is not str or name in names or _TOOL_NAME.fullmatch(name) is None:
            return False
        if type(schema) is not dict or "type" not in schema:
            return False
        names.append(name)
    return True


def _plain_result(content: Any) -> bool:
    """Whether a tool result's content is plain: absent, a string, or text blocks without `cache_control`."""
    if content is None or type(content) is str:
        return True
    if type(content) is not list:
        return False
    for block in content:
        if type(block) is not dict or block.get("type") != "text" or "cache_control" in block or "content" in block:
            return False
    return True


_PLAIN_ROLES = ("user", "assistant")
_THINKS = ("enabled", "adaptive")


def rules_violation(
    body: dict[str, Any],
    *,
    history: list[Any] | None = None,
    served_without_thinking: Collection[str] = frozenset(),
    skip: frozenset[str] = frozenset(),
    betas: Collection[str] = (),
    anthropic_version: str | None = None,
    models: ModelTable[ClaudeModel] = CLAUDE_MODELS,
) -> Violation | None:
    """`check_anthropic` without its shortcut for plainly valid bodies: every rule, run in turn."""
    request = _Request(body, history, betas, anthropic_version, models)
    for rule, check, needs in _CHECKS:  # a table built once, not closures per request
        if (needs is not None and needs not in body) or rule.id in skip:
            continue  # a check that reads a field the body does not have refuses nothing
        violation = check(request)
        if violation is not None:
            return violation
    return None


def _model_missing(req: _Request) -> Violation | None:
    if req.body.get("model") is None:
        return Violation(MODEL_MISSING, "model: Field required", "model")
    return None


def _max_tokens(req: _Request) -> Violation | None:
    value = req.body.get("max_tokens")
    if value is None:
        return Violation(MAX_TOKENS_INVALID, "max_tokens: Field required", "max_tokens")
    if is_int(value) and value < 0:
        return Violation(MAX_TOKENS_INVALID, "max_tokens: Input should be greater than or equal to 0", "max_tokens")
    return None


def _messages_missing(req: _Request) -> Violation | None:
    if req.body.get("messages") is None:
        return Violation(MESSAGES_MISSING, "messages: Field required", "messages")
    return None


def _messages_empty(req: _Request) -> Violation | None:
    thread = req.body.get("thread")
    if req.body.get("messages") == [] and not (isinstance(thread, dict) and thread.get("type") == "continue"):
        return Violation(MESSAGES_EMPTY, "messages: at least one message is required", "messages")
    return None


def _sampling_removed(req: _Request) -> Violation | None:
    if not req.new_version:
        return None
    for key in ("temperature", "top_p", "top_k"):
        if key in req.body:
            return Violation(SAMPLING_REMOVED, f"{key}: Extra inputs are not permitted", key)
    return None


def _invalid_role(req: _Request) -> Violation | None:
    conv = req.conv
    for i, message in conv.own_messages():
        role = message.get("role")
        if isinstance(role, str) and role not in _ROLES:
            extra = (
                " For instructions on how to use tools, see https://docs.anthropic.com/en/docs/tool-use"
                if role == "tool"
                else ""
            )
            return Violation(
                INVALID_ROLE,
                f'messages: Unexpected role "{role}". Allowed roles are "user" or "assistant".{extra}',
                f"{conv.path(i)}.role",
            )
    return None


def _system_misplaced(req: _Request) -> Violation | None:
    conv = req.conv
    for i, message in conv.own_messages():
        if message.get("role") != "system":
            continue
        if i == 0 and conv.blind_start:
            continue
        before = conv.at(i - 1)
        if before is not None and _may_precede_system(before):
            continue
        return Violation(
            SYSTEM_ROLE_MISPLACED,
            'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, '
            'not "system" as an input message role.',
            f"{conv.path(i)}.role",
        )
    return None


def _may_precede_system(message: dict[str, Any]) -> bool:
    """A user message, or an assistant message ending in a server tool use (the documented placements)."""
    if message.get("role") == "user":
        return True
    types = _block_types(message)
    return message.get("role") == "assistant" and bool(types) and types[-1] == "server_tool_use"


def _empty_content(req: _Request) -> Violation | None:
    conv = req.conv
    final = len(conv.messages) - 1
    for i, message in conv.own_messages():
        if message.get("content") not in ("", []):
            continue
        if i == final and message.get("role") == "assistant":
            continue  # the optional final assistant message
        where = conv.path(i)
        return Violation(
            EMPTY_CONTENT,
            f"{where}: all messages must have non-empty content except for the optional final assistant message",
            f"{where}.content",
        )
    return None


def _empty_text_block(req: _Request) -> Violation | None:
    conv = req.conv
    for i, message in conv.own_messages():
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for k, block in dicts(content):
            if block.get("type") == "text" and block.get("text") == "":
                return Violation(
                    EMPTY_TEXT_BLOCK,
                    "messages: text content blocks must be non-empty",
                    f"{conv.path(i)}.content.{k}.text",
                )
    return None


def _trailing_whitespace(req: _Request) -> Violation | None:
    final = req.conv.final_assistant()
    if final is None:
        return None
    content = final.get("content")
    if isinstance(content, list):
        last = content[-1] if content else None
        content = last.get("text") if isinstance(last, dict) and last.get("type") == "text" else None
    if isinstance(content, str) and content and content[-1].isspace():
        where = req.conv.path(len(req.conv.messages) - 1)
        return Violation(
            TRAILING_WHITESPACE,
            "messages: final assistant content cannot end with trailing whitespace",
            f"{where}.content",
        )
    return None


_MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")


def _bad_image(blocks: Any, where: str) -> str | None:
    """The path of the first base64 image of `blocks` (and of the tool results among them) with a foreign media type."""
    for k, block in dicts(blocks):
        kind = block.get("type")
        if kind == "image":
            source = block.get("source")
            media = source.get("media_type") if isinstance(source, dict) and source.get("type") == "base64" else None
            if isinstance(media, str) and media not in _MEDIA_TYPES:
                return f"{where}.{k}.image.source.base64.media_type"
        elif kind == "tool_result" and isinstance(block.get("content"), list):
            found = _bad_image(block["content"], f"{where}.{k}.tool_result.content")
            if found is not None:
                return found
    return None


def _image_media_type(req: _Request) -> Violation | None:
    conv = req.conv
    for i, message in conv.own_messages():
        content = message.get("content")
        if not isinstance(content, list):
            continue
        found = _bad_image(content, f"{conv.path(i)}.content")
        if found is not None:
            return Violation(
                IMAGE_MEDIA_TYPE,
                f"{found}: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'",
                found,
            )
    return None


def _tool_use_without_result(req: _Request) -> Violation | None:
    conv = req.conv
    for i, message in enumerate(conv.messages):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        ids = _tool_use_ids(message)
        after = conv.at(i + 1)
        if not ids or i + 1 >= len(conv.messages) or i + 1 < conv.offset:
            continue  # a trailing assistant message is a prefill; history was accepted already
        answered = set()
        if after is not None and after.get("role") == "user":
            answered = {
                b.get("tool_use_id") for b in _blocks(after) if isinstance(b, dict) and b.get("type") == "tool_result"
            }
        missing = [x for x in ids if x not in answered]
        if missing:
            return Violation(
                TOOL_USE_WITHOUT_RESULT,
                f"{conv.path(i)}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` block "
                "in the next message.",
                conv.path(i),
            )
    return None


def _tool_result_without_use(req: _Request) -> Violation | None:
    conv = req.conv
    for i, message in conv.own_messages():
        if message.get("role") != "user":
            continue
        if i == 0 and conv.blind_start:
            continue
        before = conv.at(i - 1)
        known = set(_tool_use_ids(before)) if before is not None and before.get("role") == "assistant" else set()
        for k, block in enumerate(_blocks(message)):
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            tool_use_id = block.get("tool_use_id")
            if tool_use_id not in known:
                where = f"{conv.path(i)}.content.{k}"
                return Violation(
                    TOOL_RESULT_WITHOUT_USE,
                    f"{where}: unexpected `tool_use_id` found in `tool_result` blocks: {tool_use_id}. Each "
                    "`tool_result` block must have a corresponding `tool_use` block in the previous message.",
                    f"{where}.tool_use_id",
                )
    return None


def _tool_result_not_first(req: _Request) -> Violation | None:
    conv = req.conv
    for i, message in conv.own_messages():
        if message.get("role") != "user":
            continue
        types = _block_types(message)
        if "tool_result" not in types:
            continue
        first_other = next((k for k, t in enumerate(types) if t != "tool_result"), None)
        last_result = max(k for k, t in enumerate(types) if t == "tool_result")
        if first_other is not None and first_other < last_result:
            where = f"{conv.path(i)}.content.{first_other}"
            return Violation(
                TOOL_RESULT_NOT_FIRST,
                f"{where}: In the user message containing tool results, the tool_result blocks must come first "
                "in the content array. Any text must come after all tool results.",
                where,
            )
    return None


def _tool_names(body: dict[str, Any]) -> list[tuple[int, str, dict[str, Any]]]:
    return [(i, t["name"], t) for i, t in dicts(body.get("tools")) if isinstance(t.get("name"), str)]


def _duplicate_tool_names(req: _Request) -> Violation | None:
    seen: set[str] = set()
    for i, name, _ in _tool_names(req.body):
        if name in seen:
            return Violation(DUPLICATE_TOOL_NAMES, "tools: Tool names must be unique.", f"tools.{i}.name")
        seen.add(name)
    return None


def _tool_name_pattern(req: _Request) -> Violation | None:
    for i, name, tool in _tool_names(req.body):
        if tool.get("type") not in (None, "custom"):
            continue  # server tools have fixed names
        if len(name) > 128:
            message = f"tools.{i}.custom.name: String should have at most 128 characters"
            return Violation(TOOL_NAME_PATTERN, message, f"tools.{i}.name")
        if not _TOOL_NAME.fullmatch(name):
            message = f"tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'"
            return Violation(TOOL_NAME_PATTERN, message, f"tools.{i}.name")
    return None


def _tool_input_schema(req: _Request) -> Violation | None:
    for i, tool in dicts(req.body.get("tools")):
        if tool.get("type") not in (None, "custom") or not isinstance(tool.get("name"), str):
            continue  # server tools (typed) carry no input_schema
        schema = tool.get("input_schema")
        if schema is None:
            return Violation(
                TOOL_INPUT_SCHEMA, f"tools.{i}.custom.input_schema: Field required", f"tools.{i}.input_schema"
            )
        if isinstance(schema, dict) and "type" not in schema:
            message = f"tools.{i}.custom.input_schema.type: Field required"
            return Violation(TOOL_INPUT_SCHEMA, message, f"tools.{i}.input_schema.type")
    return None


def _count_cache_control(value: Any) -> int:
    """Blocks carrying `cache_control` anywhere in a list of blocks (tool_result contents included)."""
    if not isinstance(value, list):  # a string or nothing: no generator for it
        return 0
    count = 0
    for _, block in dicts(value):
        if block.get("cache_control") is not None:
            count += 1
        count += _count_cache_control(block.get("content"))
    return count


def _cache_control_limit(req: _Request) -> Violation | None:
    body = req.body
    found = _count_cache_control(body.get("tools")) + _count_cache_control(body.get("system"))
    for _, message in dicts(body.get("messages")):
        found += _count_cache_control(message.get("content"))
    if found > 4:
        return Violation(
            CACHE_CONTROL_LIMIT, f"A maximum of 4 blocks with cache_control may be provided. Found {found}."
        )
    return None


def _thinking_enabled(body: dict[str, Any]) -> dict[str, Any] | None:
    thinking = body.get("thinking")
    return thinking if isinstance(thinking, dict) and thinking.get("type") == "enabled" else None


def _thinking_budget(req: _Request) -> Violation | None:
    thinking = _thinking_enabled(req.body)
    budget = thinking.get("budget_tokens") if thinking else None
    if is_int(budget) and budget < 1024:
        return Violation(
            THINKING_BUDGET_TOO_SMALL,
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
            "thinking.budget_tokens",
        )
    return None


_INTERLEAVED = "interleaved-thinking-2025-05-14"


def _thinking_budget_below_max(req: _Request) -> Violation | None:
    thinking = _thinking_enabled(req.body)
    if thinking is None or req.model is None or not req.model.budget_below_max_tokens or _INTERLEAVED in req.betas:
        return None
    budget, max_tokens = thinking.get("budget_tokens"), req.body.get("max_tokens")
    if is_int(budget) and is_int(max_tokens) and budget >= max_tokens:
        return Violation(
            THINKING_BUDGET_NOT_BELOW_MAX,
            "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at "
            "https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size",
            "max_tokens",
        )
    return None


def _thinking_forced_tool(req: _Request) -> Violation | None:
    choice = req.body.get("tool_choice")
    if _thinking_enabled(req.body) is None or not isinstance(choice, dict) or choice.get("type") not in ("any", "tool"):
        return None
    return Violation(
        THINKING_FORCED_TOOL, "Thinking may not be enabled when tool_choice forces tool use.", "tool_choice"
    )


def _thinking_temperature(req: _Request) -> Violation | None:
    thinking, value = req.body.get("thinking"), req.body.get("temperature")
    if not isinstance(thinking, dict) or thinking.get("type") not in _THINKS or not is_number(value) or value == 1:
        return None
    return Violation(
        THINKING_TEMPERATURE,
        "`temperature` may only be set to 1 when thinking is enabled or in adaptive mode. Please consult our "
        "documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
        "#important-considerations-when-using-extended-thinking",
        "temperature",
    )


def _temperature(req: _Request) -> Violation | None:
    value = req.body.get("temperature")
    if is_number(value) and not 0 <= value <= 1:
        return Violation(TEMPERATURE_RANGE, "temperature: range: -1 or 0..1", "temperature")
    return None


def _max_tokens_above_model(req: _Request) -> Violation | None:
    model, value = req.model, req.body.get("max_tokens")
    if model is None or model.max_output_tokens is None or not is_int(value) or value <= model.max_output_tokens:
        return None
    if any(isinstance(beta, str) and beta.startswith("output-") for beta in req.betas):
        return None  # an output beta (output-128k-2025-02-19, ...) raises the limit
    return Violation(
        MAX_TOKENS_ABOVE_MODEL,
        f"max_tokens: {int(value)} > {model.max_output_tokens}, which is the maximum allowed number of output tokens "
        f"for {req.body.get('model')}",
        "max_tokens",
    )


def _prefill_unsupported(req: _Request) -> Violation | None:
    if req.model is None or req.model.prefill:
        return None
    final = req.conv.final_assistant()
    if final is None or len(req.conv.messages) < 2:
        return None
    content = final.get("content")
    texts = content if isinstance(content, str) else None
    if isinstance(content, list) and content:
        # A text prefill only: an assistant turn ending in a server tool use is a pause_turn continuation.
        texts = (
            "".join(b.get("text", "") for b in content if isinstance(b, dict))
            if all(isinstance(b, dict) and b.get("type") == "text" for b in content)
            else None
        )
    if not texts:
        return None
    return Violation(
        PREFILL_UNSUPPORTED,
        "This model does not support assistant message prefill. The conversation must end with a user message.",
        req.conv.path(len(req.conv.messages) - 1),
    )


def _temperature_with_top_p(req: _Request) -> Violation | None:
    model, body = req.model, req.body
    if model is None or not model.sampling_exclusive or body.get("temperature") is None or body.get("top_p") is None:
        return None
    return Violation(
        TEMPERATURE_WITH_TOP_P,
        "`temperature` and `top_p` cannot both be specified for this model. Please use only one.",
        "top_p",
    )


_SERVER_TOOL_VERSIONS = {
    "web_search": ("20250305", "20260209", "20260318"),
    "web_fetch": ("20250910", "20260209", "20260309", "20260318"),
    "code_execution": ("20250522", "20250825", "20260120", "20260521"),
    "tool_search_tool_regex": ("20251119",),
    "tool_search_tool_bm25": ("20251119",),
}
"""Each server tool's versions (the anthropic SDK's tool types); the tool search tools also take their bare name."""
_SERVER_TYPE = re.compile(
    r"(web_search|web_fetch|code_execution|tool_search_tool_regex|tool_search_tool_bm25)(?:_(\d{8}))?"
)
_BARE_OK = ("tool_search_tool_regex", "tool_search_tool_bm25")
_DOMAIN_TOOLS = ("web_search_", "web_fetch_")


def _server_tool_version(req: _Request) -> Violation | None:
    for i, tool in dicts(req.body.get("tools")):
        kind = tool.get("type")
        match = _SERVER_TYPE.fullmatch(kind) if isinstance(kind, str) else None
        if match is None:
            continue
        family, date = match.group(1), match.group(2)
        versions = _SERVER_TOOL_VERSIONS[family]
        if (date is None and family in _BARE_OK) or (date is not None and (date in versions or date > versions[-1])):
            continue  # a known version, or one newer than wirescript knows (the API may have released it)
        expected = ", ".join(repr(f"{family}_{v}") for v in versions) + (f", {family!r}" if family in _BARE_OK else "")
        message = f"tools.{i}: Input tag {kind!r} found using 'type' does not match any of the expected tags: "
        return Violation(SERVER_TOOL_VERSION, f"{message}{expected}, ...", f"tools.{i}.type")
    return None


def _server_tool_empty_domains(req: _Request) -> Violation | None:
    for i, tool in dicts(req.body.get("tools")):
        kind = tool.get("type")
        if isinstance(kind, str) and kind.startswith("web_search_") and tool.get("blocked_domains") == []:
            return Violation(
                SERVER_TOOL_EMPTY_DOMAINS,
                f"tools.{i}.{kind}.blocked_domains: Empty list of domains is ambiguous. Provide at least one domain or "
                "null.",
                f"tools.{i}.blocked_domains",
            )
    return None


def _server_tool_domains_both(req: _Request) -> Violation | None:
    for i, tool in dicts(req.body.get("tools")):
        kind = tool.get("type")
        if not (isinstance(kind, str) and kind.startswith(_DOMAIN_TOOLS)):
            continue
        if tool.get("allowed_domains") is not None and tool.get("blocked_domains") is not None:
            return Violation(
                SERVER_TOOL_DOMAINS_BOTH,
                f"tools.{i}.{kind}: Cannot specify both allowed_domains and blocked_domains in the same request",
                f"tools.{i}.blocked_domains",
            )
    return None


def _mcp_server_toolset(req: _Request) -> Violation | None:
    servers = [(i, s.get("name")) for i, s in dicts(req.body.get("mcp_servers"))]
    toolsets = [
        (i, t.get("mcp_server_name")) for i, t in dicts(req.body.get("tools")) if t.get("type") == "mcp_toolset"
    ]
    if not toolsets:
        return None  # the deprecated connector (`mcp-client-2025-04-04`) configures tools on the server itself
    names = [name for _, name in servers]
    seen: list[Any] = []  # a list: a name may be any JSON, which a set cannot always hold
    for i, name in toolsets:
        if name not in names:
            return Violation(
                MCP_SERVER_TOOLSET,
                f"tools.{i}.mcp_server_name: {name!r} is not the name of a server in `mcp_servers`; an MCP toolset "
                "names one of the request's MCP servers",
                f"tools.{i}.mcp_server_name",
            )
        if name in seen:
            return Violation(
                MCP_SERVER_TOOLSET,
                f"tools.{i}.mcp_server_name: the MCP server {name!r} has a toolset already; each server is "
                "referenced by exactly one MCP toolset",
                f"tools.{i}.mcp_server_name",
            )
        seen.append(name)
    for i, name in servers:
        if name not in seen:
            return Violation(
                MCP_SERVER_TOOLSET,
                f"mcp_servers.{i}: the MCP server {name!r} is not referenced by an MCP toolset; every server in "
                "`mcp_servers` is referenced by exactly one",
                f"mcp_servers.{i}",
            )
    return None


_CHECKS: tuple[tuple[Rule, Callable[[_Request], Violation | None], str | None], ...] = (
    (MODEL_MISSING, _model_missing, None),
    (MAX_TOKENS_INVALID, _max_tokens, None),
    (MESSAGES_MISSING, _messages_missing, None),
    (MESSAGES_EMPTY, _messages_empty, "messages"),
    (SAMPLING_REMOVED, _sampling_removed, None),
    (INVALID_ROLE, _invalid_role, None),
    (SYSTEM_ROLE_MISPLACED, _system_misplaced, None),
    (EMPTY_CONTENT, _empty_content, None),
    (EMPTY_TEXT_BLOCK, _empty_text_block, None),
    (TRAILING_WHITESPACE, _trailing_whitespace, None),
    (IMAGE_MEDIA_TYPE, _image_media_type, None),
    (TOOL_USE_WITHOUT_RESULT, _tool_use_without_result, None),
    (TOOL_RESULT_WITHOUT_USE, _tool_result_without_use, None),
    (TOOL_RESULT_NOT_FIRST, _tool_result_not_first, None),
    (DUPLICATE_TOOL_NAMES, _duplicate_tool_names, "tools"),
    (TOOL_NAME_PATTERN, _tool_name_pattern, "tools"),
    (TOOL_INPUT_SCHEMA, _tool_input_schema, "tools"),
    (CACHE_CONTROL_LIMIT, _cache_control_limit, None),
    (THINKING_BUDGET_TOO_SMALL, _thinking_budget, "thinking"),
    (THINKING_BUDGET_NOT_BELOW_MAX, _thinking_budget_below_max, "thinking"),
    (THINKING_FORCED_TOOL, _thinking_forced_tool, "thinking"),
    (THINKING_TEMPERATURE, _thinking_temperature, "temperature"),
    (TEMPERATURE_RANGE, _temperature, "temperature"),
    (MAX_TOKENS_ABOVE_MODEL, _max_tokens_above_model, None),
    (PREFILL_UNSUPPORTED, _prefill_unsupported, None),
    (TEMPERATURE_WITH_TOP_P, _temperature_with_top_p, "top_p"),
    (SERVER_TOOL_VERSION, _server_tool_version, "tools"),
    (SERVER_TOOL_EMPTY_DOMAINS, _server_tool_empty_domains, "tools"),
    (SERVER_TOOL_DOMAINS_BOTH, _server_tool_domains_both, "tools"),
    (MCP_SERVER_TOOLSET, _mcp_server_toolset, "tools"),
)
"""Every Anthropic check, in the order of `RULES` (the retired rules have none), with the top-level field
it reads when it refuses nothing without it (skipped at once for a body without it)."""
