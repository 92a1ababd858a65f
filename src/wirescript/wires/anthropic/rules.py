"""Strict-request rules of the Anthropic Messages API (`POST /v1/messages`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from typing import Any

from .._rules import Rule, Violation, dicts, is_int, is_number

__all__ = ["RULES", "check_anthropic"]

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
    "anthropic SDK `MessageParam` = UserMessageParam | AssistantMessageParam | SystemMessageParam "
    "(roles 'user', 'assistant', 'system'); observed 'messages: Unexpected role \"system\"' for a foreign role.",
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
THINKING_BLOCK_FIRST = Rule(
    "anthropic.thinking-not-first",
    "anthropic",
    "With thinking enabled, the assistant turn of the current tool loop does not start with its thinking block "
    "(a turn the stub itself served without thinking is let through).",
    "Observed: 'messages.N.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`. When "
    "`thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost "
    "set of `tool_use` and `tool_result` blocks). ...' (github.com/n8n-io/n8n/issues/22550, "
    "github.com/OpenRouterTeam/ai-sdk-provider/issues/162)",
)
THINKING_IN_FINAL_WHEN_DISABLED = Rule(
    "anthropic.thinking-in-final-message-when-disabled",
    "anthropic",
    "With `thinking.type: disabled`, a final (prefill) assistant message that contains a thinking block.",
    "Observed: 'messages.N.content.0: When thinking is disabled, an `assistant` message in the final position "
    "cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request.' "
    "(github.com/tailcallhq/forgecode/issues/1853, #1195). Only an explicit `disabled` is checked: what an omitted "
    "`thinking` means depends on the model.",
)
TEMPERATURE_RANGE = Rule(
    "anthropic.temperature-range",
    "anthropic",
    "`temperature` outside [0, 1].",
    "Maintainer, 2026-08: '`temperature=-1` is now rejected with a 400 (`invalid_request_error`) on current models, "
    "and the accepted range is `0.0`-`1.0` as documented in the Messages API reference' "
    "(github.com/anthropics/anthropic-sdk-python/issues/893); earlier observed text 'temperature: range: -1 or 0..1'",
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
    INVALID_ROLE,
    SYSTEM_ROLE_MISPLACED,
    TOOL_USE_WITHOUT_RESULT,
    TOOL_RESULT_WITHOUT_USE,
    TOOL_RESULT_NOT_FIRST,
    DUPLICATE_TOOL_NAMES,
    TOOL_NAME_PATTERN,
    CACHE_CONTROL_LIMIT,
    THINKING_BUDGET_TOO_SMALL,
    THINKING_BLOCK_FIRST,
    THINKING_IN_FINAL_WHEN_DISABLED,
    TEMPERATURE_RANGE,
    SERVER_TOOL_VERSION,
    SERVER_TOOL_EMPTY_DOMAINS,
    SERVER_TOOL_DOMAINS_BOTH,
    MCP_SERVER_TOOLSET,
)

_ROLES = ("user", "assistant", "system")
_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,128}")
_THINKING_TYPES = ("thinking", "redacted_thinking")


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

    def own_indexes(self) -> range:
        return range(self.offset, len(self.messages))


def check_anthropic(
    body: dict[str, Any],
    *,
    history: list[Any] | None = None,
    served_without_thinking: Collection[str] = frozenset(),
    skip: frozenset[str] = frozenset(),
) -> Violation | None:
    """The first Anthropic Messages rule the request breaks, or None.

    Args:
        body: The parsed JSON body of a `POST /v1/messages` request.
        history: For a continued server-held thread (`thread: {"type": "continue"}`), the thread's
            earlier messages (what the wire remembered), checked together with `body["messages"]`.
            None when the request is not threaded or the thread is unknown; a continued thread with
            no history is then not checked across its first message.
        served_without_thinking: The `tool_use` ids the server itself sent in an assistant turn that had
            no thinking block. `anthropic.thinking-not-first` does not refuse a tool loop whose assistant
            message carries one: the app passed back what it was given (a scripted turn without
            `thinking`), which the real model, always thinking first when thinking is enabled, never sends.
        skip: Rule ids not to check.

    Returns:
        The violation of the first broken rule, in the order of `RULES`; None when the request passes.

    """
    if history is None and plainly_valid(body):  # what nearly every request sends: no rule can refuse it
        return None
    return rules_violation(body, history=history, served_without_thinking=served_without_thinking, skip=skip)


def plainly_valid(body: dict[str, Any]) -> bool:
    """Whether no rule can refuse `body` (not a continued thread), decided in one pass without running each.

    True only for the shape most requests have: a `model`; an integer `max_tokens` of at least 0;
    a non-empty list of `user` and `assistant` messages, each with a string content or a list of
    text blocks that carry neither `cache_control` nor a nested `content`; no `thread`, no `tools`,
    no list `system`, no `thinking` of type `enabled`; a `temperature`, if any, in [0, 1]. Then
    no role is foreign or misplaced, no tool block or thinking block exists, no block counts
    against the cache-control limit and no budget applies. Anything else, and so every request a
    rule refuses, is left to the rules. `tests/test_strict_fast.py` checks that this says True
    only of bodies every rule passes.
    """
    if body.get("model") is None or "thread" in body or body.get("tools"):
        return False
    max_tokens = body.get("max_tokens")
    if type(max_tokens) is not int or max_tokens < 0:
        return False
    temperature = body.get("temperature")
    if temperature is not None and not (type(temperature) in (int, float) and 0 <= temperature <= 1):
        return False
    thinking = body.get("thinking")
    if isinstance(body.get("system"), list) or (isinstance(thinking, dict) and thinking.get("type") == "enabled"):
        return False
    messages = body.get("messages")
    if type(messages) is not list or not messages:
        return False
    for message in messages:
        if type(message) is not dict or message.get("role") not in _PLAIN_ROLES:
            return False
        content = message.get("content")
        if type(content) is str:
            continue
        if type(content) is not list:
            return False
        for block in content:
            if type(block) is not dict or block.get("type") != "text" or "cache_control" in block or "content" in block:
                return False
    return True


_PLAIN_ROLES = ("user", "assistant")


def rules_violation(
    body: dict[str, Any],
    *,
    history: list[Any] | None = None,
    served_without_thinking: Collection[str] = frozenset(),
    skip: frozenset[str] = frozenset(),
) -> Violation | None:
    """`check_anthropic` without its shortcut for plainly valid bodies: every rule, run in turn."""
    conv = _Conversation(body, history)
    for rule, check, reads in _CHECKS:  # a table built once, not closures per request
        if rule.id in skip:
            continue
        if reads == _BODY:
            violation = check(body)
        elif reads == _CONV:
            violation = check(conv)
        else:
            violation = check(body, conv, served_without_thinking)
        if violation is not None:
            return violation
    return None


def _model_missing(body: dict[str, Any]) -> Violation | None:
    if body.get("model") is None:
        return Violation(MODEL_MISSING, "model: Field required", "model")
    return None


def _max_tokens(body: dict[str, Any]) -> Violation | None:
    value = body.get("max_tokens")
    if value is None:
        return Violation(MAX_TOKENS_INVALID, "max_tokens: Field required", "max_tokens")
    if is_int(value) and value < 0:
        return Violation(MAX_TOKENS_INVALID, "max_tokens: Input should be greater than or equal to 0", "max_tokens")
    return None


def _messages_missing(body: dict[str, Any]) -> Violation | None:
    if body.get("messages") is None:
        return Violation(MESSAGES_MISSING, "messages: Field required", "messages")
    return None


def _messages_empty(body: dict[str, Any]) -> Violation | None:
    thread = body.get("thread")
    if body.get("messages") == [] and not (isinstance(thread, dict) and thread.get("type") == "continue"):
        return Violation(MESSAGES_EMPTY, "messages: at least one message is required", "messages")
    return None


def _invalid_role(conv: _Conversation) -> Violation | None:
    for i in conv.own_indexes():
        message = conv.at(i)
        if message is None:
            continue
        role = message.get("role")
        if isinstance(role, str) and role not in _ROLES:
            return Violation(
                INVALID_ROLE,
                f'messages: Unexpected role "{role}". Allowed roles are "user", "assistant" and "system".',
                f"{conv.path(i)}.role",
            )
    return None


def _system_misplaced(conv: _Conversation) -> Violation | None:
    for i in conv.own_indexes():
        message = conv.at(i)
        if message is None or message.get("role") != "system":
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


def _tool_use_without_result(conv: _Conversation) -> Violation | None:
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


def _tool_result_without_use(conv: _Conversation) -> Violation | None:
    for i in conv.own_indexes():
        message = conv.at(i)
        if message is None or message.get("role") != "user":
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


def _tool_result_not_first(conv: _Conversation) -> Violation | None:
    for i in conv.own_indexes():
        message = conv.at(i)
        if message is None or message.get("role") != "user":
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


def _duplicate_tool_names(body: dict[str, Any]) -> Violation | None:
    seen: set[str] = set()
    for i, name, _ in _tool_names(body):
        if name in seen:
            return Violation(DUPLICATE_TOOL_NAMES, "tools: Tool names must be unique.", f"tools.{i}.name")
        seen.add(name)
    return None


def _tool_name_pattern(body: dict[str, Any]) -> Violation | None:
    for i, name, tool in _tool_names(body):
        if tool.get("type") not in (None, "custom"):
            continue  # server tools have fixed names
        if len(name) > 128:
            message = f"tools.{i}.custom.name: String should have at most 128 characters"
            return Violation(TOOL_NAME_PATTERN, message, f"tools.{i}.name")
        if not _TOOL_NAME.fullmatch(name):
            message = f"tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'"
            return Violation(TOOL_NAME_PATTERN, message, f"tools.{i}.name")
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


def _cache_control_limit(body: dict[str, Any]) -> Violation | None:
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


def _thinking_budget(body: dict[str, Any]) -> Violation | None:
    thinking = _thinking_enabled(body)
    budget = thinking.get("budget_tokens") if thinking else None
    if is_int(budget) and budget < 1024:
        return Violation(
            THINKING_BUDGET_TOO_SMALL,
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
            "thinking.budget_tokens",
        )
    return None


def _is_tool_results_only(message: dict[str, Any]) -> bool:
    types = _block_types(message)
    return message.get("role") == "user" and bool(types) and all(t == "tool_result" for t in types)


def _thinking_first(body: dict[str, Any], conv: _Conversation, served: Collection[str]) -> Violation | None:
    """The current tool loop: the assistant messages since the last user message that is not only tool results.

    Refused when the conversation ends in a tool loop (its last message carries tool results) and
    no assistant message of that loop starts with a thinking block. Interleaved thinking may leave
    later assistant messages of the loop without one, so any of them starting with thinking passes.
    """
    if _thinking_enabled(body) is None or not conv.own:
        return None
    last = conv.messages[-1]
    if not isinstance(last, dict) or "tool_result" not in _block_types(last) or last.get("role") != "user":
        return None
    loop: list[int] = []
    i = len(conv.messages) - 2
    while i >= 0:
        message = conv.at(i)
        if message is None:
            break
        if message.get("role") == "assistant":
            loop.append(i)
        elif not _is_tool_results_only(message):
            break
        i -= 1
    if not loop or (i < 0 and conv.blind_start):
        return None
    if not _tool_use_ids(conv.at(loop[0]) or {}):
        return None
    firsts = [(_block_types(conv.at(j) or {}) or [None])[0] for j in loop]
    if any(t in _THINKING_TYPES for t in firsts):
        return None
    if served and any(x in served for j in loop for x in _tool_use_ids(conv.at(j) or {})):
        return None  # the server sent that turn without thinking: the app passed back what it got
    final = loop[0]
    found = firsts[0] or "nothing"
    where = f"{conv.path(final)}.content.0.type"
    return Violation(
        THINKING_BLOCK_FIRST,
        f"{where}: Expected `thinking` or `redacted_thinking`, but found `{found}`. When `thinking` is enabled, a "
        "final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and "
        "`tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this "
        "requirement, disable `thinking`.",
        where,
    )


def _thinking_in_final(body: dict[str, Any], conv: _Conversation) -> Violation | None:
    thinking = body.get("thinking")
    if not (isinstance(thinking, dict) and thinking.get("type") == "disabled") or not conv.own:
        return None
    last = len(conv.messages) - 1
    message = conv.at(last)
    if message is None or message.get("role") != "assistant":
        return None
    for k, kind in enumerate(_block_types(message)):
        if kind in _THINKING_TYPES:
            where = f"{conv.path(last)}.content.{k}"
            return Violation(
                THINKING_IN_FINAL_WHEN_DISABLED,
                f"{where}: When thinking is disabled, an `assistant` message in the final position cannot contain "
                "`thinking`. To use thinking blocks, enable `thinking` in your request.",
                where,
            )
    return None


def _temperature(body: dict[str, Any]) -> Violation | None:
    value = body.get("temperature")
    if is_number(value) and not 0 <= value <= 1:
        return Violation(TEMPERATURE_RANGE, "temperature: range: 0..1", "temperature")
    return None


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


def _server_tool_version(body: dict[str, Any]) -> Violation | None:
    for i, tool in dicts(body.get("tools")):
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


def _server_tool_empty_domains(body: dict[str, Any]) -> Violation | None:
    for i, tool in dicts(body.get("tools")):
        kind = tool.get("type")
        if isinstance(kind, str) and kind.startswith("web_search_") and tool.get("blocked_domains") == []:
            return Violation(
                SERVER_TOOL_EMPTY_DOMAINS,
                f"tools.{i}.{kind}.blocked_domains: Empty list of domains is ambiguous. Provide at least one domain or "
                "null.",
                f"tools.{i}.blocked_domains",
            )
    return None


def _server_tool_domains_both(body: dict[str, Any]) -> Violation | None:
    for i, tool in dicts(body.get("tools")):
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


def _mcp_server_toolset(body: dict[str, Any]) -> Violation | None:
    servers = [(i, s.get("name")) for i, s in dicts(body.get("mcp_servers"))]
    toolsets = [(i, t.get("mcp_server_name")) for i, t in dicts(body.get("tools")) if t.get("type") == "mcp_toolset"]
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


_BODY, _CONV, _ALL = "body", "conversation", "all"
"""What a check reads: the body, the conversation, or both and the ids served without thinking."""

_CHECKS: tuple[tuple[Rule, Callable[..., Violation | None], str], ...] = (
    (MODEL_MISSING, _model_missing, _BODY),
    (MAX_TOKENS_INVALID, _max_tokens, _BODY),
    (MESSAGES_MISSING, _messages_missing, _BODY),
    (MESSAGES_EMPTY, _messages_empty, _BODY),
    (INVALID_ROLE, _invalid_role, _CONV),
    (SYSTEM_ROLE_MISPLACED, _system_misplaced, _CONV),
    (TOOL_USE_WITHOUT_RESULT, _tool_use_without_result, _CONV),
    (TOOL_RESULT_WITHOUT_USE, _tool_result_without_use, _CONV),
    (TOOL_RESULT_NOT_FIRST, _tool_result_not_first, _CONV),
    (DUPLICATE_TOOL_NAMES, _duplicate_tool_names, _BODY),
    (TOOL_NAME_PATTERN, _tool_name_pattern, _BODY),
    (CACHE_CONTROL_LIMIT, _cache_control_limit, _BODY),
    (THINKING_BUDGET_TOO_SMALL, _thinking_budget, _BODY),
    (THINKING_BLOCK_FIRST, _thinking_first, _ALL),
    (THINKING_IN_FINAL_WHEN_DISABLED, lambda body, conv, served: _thinking_in_final(body, conv), _ALL),
    (TEMPERATURE_RANGE, _temperature, _BODY),
    (SERVER_TOOL_VERSION, _server_tool_version, _BODY),
    (SERVER_TOOL_EMPTY_DOMAINS, _server_tool_empty_domains, _BODY),
    (SERVER_TOOL_DOMAINS_BOTH, _server_tool_domains_both, _BODY),
    (MCP_SERVER_TOOLSET, _mcp_server_toolset, _BODY),
)
"""Every Anthropic check, in the order of `RULES`."""
