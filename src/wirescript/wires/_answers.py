"""The answer rules: a scripted turn held against the request it answers, on every wire.

Provider-neutral. A wire reads what its request lets the model answer with into an `Offer` (the
tools offered and which guarantee their input's schema, the tool choice, whether parallel calls are
allowed, the structured output asked for) and declares the `AnswerRule`s it holds a turn to, each
naming one of the checks here and citing where the provider guarantees the behaviour. `hold` runs
them in the wire's order and returns the first broken rule with a message naming what is impossible
and the fix; the transport answers such a turn with a loud error and an `impossible_answer` problem.

Nothing here runs for a turn that cannot break a rule (a text answer to a request with no tool
choice and no structured output): the transport looks at the turn and the body's top-level fields
first (`Wire.answer_fields`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Literal, NamedTuple

from .._plain import Plain
from .._text import clip, did_you_mean
from ..script import Turn
from ..sse import json_dumps
from ._schema import LOOSE, LOOSE_OPENAPI, SchemaDialect, breaks

__all__ = [
    "ANSWER_DOCS",
    "PLAIN_IMPOSSIBILITY",
    "AnswerCheck",
    "AnswerChecks",
    "AnswerRule",
    "AnswerViolation",
    "Choice",
    "Offer",
    "OfferedTool",
    "Output",
    "hold",
    "said",
]

ANSWER_DOCS = "docs/answers.md"
"""Where the answer rules are listed: what an impossible answer's message points to."""

AnswerCheck = Literal["tool_offered", "tool_choice", "parallel_tool_calls", "strict_tool_input", "tool_input", "output"]
"""The checks an answer rule applies:

- `tool_offered`: every tool call names a tool the request offers;
- `tool_choice`: the calls are what the request's tool choice allows (none, at least one, the named tool);
- `parallel_tool_calls`: at most one call when the request turns parallel calls off;
- `strict_tool_input`: a call's input conforms to its tool's schema, for a tool whose input the provider guarantees;
- `tool_input`: the same for every tool with a schema (opt-in: `check_tool_input=True`);
- `output`: text that is JSON conforming to the requested schema, where the request asks for structured output.
"""


class AnswerRule(NamedTuple):
    """One way a real API's answer is bound by the request, with a stable public id.

    Attributes:
        id: Stable, public id such as `"anthropic.answer.tool-not-offered"`; what `strict_skip` names.
        provider: The wire family that holds it (`"anthropic"`, `"openai_chat"`, ...), as strict rules have.
        check: Which check it applies (`AnswerCheck`).
        summary: One line for the docs table: what answer it calls impossible.
        source: Where the provider documents the guarantee (a URL, or quoted text and where).

    """

    id: str
    provider: str
    check: AnswerCheck
    summary: str
    source: str

    @property
    def opt_in(self) -> bool:
        """Whether it holds a turn only when the stub is made with `check_tool_input=True`."""
        return self.check == "tool_input"


class AnswerChecks(NamedTuple):
    """What a stub holds its turns to: the rule ids it skips and whether non-strict tools' input is checked."""

    skip: frozenset[str] = frozenset()
    tool_input: bool = False


class AnswerViolation(NamedTuple):
    """A turn the real API could not give to the request: the broken rule (None: a server tool) and why."""

    rule: AnswerRule | None
    message: str


class OfferedTool(NamedTuple):
    """A tool the request offers, as the answer rules read it."""

    name: str
    schema: object = None
    """Its input schema as sent (None: it has none)."""
    strict: bool = False
    """Whether the provider guarantees a call's input conforms to it (OpenAI and Claude `strict: true`, Gemini's
    constrained modes)."""
    dialect: SchemaDialect = LOOSE
    """The dialect the provider enforces the schema in, for a strict tool (OpenAI's subset, Claude's, Gemini's)."""
    field: str = "input_schema"
    """Where the request gives the schema, for messages (`input_schema`, `function.parameters`)."""


class Choice(NamedTuple):
    """The request's tool choice, read."""

    said: str
    """How the request says it, for messages (`` `tool_choice` {"type": "any"} ``)."""
    none: bool = False
    """No tool may be called."""
    required: bool = False
    """At least one tool must be called."""
    forced: str | None = None
    """The one tool that must be called."""
    allowed: frozenset[str] | None = None
    """The tools the calls are limited to."""


class Output(NamedTuple):
    """The structured output the request asks for, where the provider guarantees it."""

    said: str
    """How the request says it, for messages (`` `response_format` json_schema 'weather' (strict) ``)."""
    schema: object = None
    """The JSON Schema the text conforms to; None: only that it is JSON."""
    dialect: SchemaDialect = LOOSE


class Offer(Plain):
    """What a request lets the model answer with, as its wire reads it."""

    __slots__ = ("choice", "names", "output", "parallel_strict", "rules", "single_call", "tools", "tools_field")
    _fields = ("tools", "tools_field", "choice", "single_call", "parallel_strict", "output", "names", "rules")

    def __init__(
        self,
        tools: Mapping[str, OfferedTool] | None = None,
        tools_field: str = "tools",
        choice: Choice | None = None,
        single_call: str | None = None,
        parallel_strict: bool = True,
        output: Output | None = None,
        names: tuple[str, ...] = (),
        rules: Sequence[AnswerRule] | None = None,
    ) -> None:
        self.tools = tools
        """The tools offered, by name; None: the wire cannot tell every tool the model may call (tools kept in a
        cached content or a stored prompt), so the tool names are not checked."""
        self.tools_field = tools_field
        """Where the request offers them, for messages."""
        self.choice = choice
        self.single_call = single_call
        """How the request allows at most one call (`` `parallel_tool_calls: false` ``), or None."""
        self.parallel_strict = parallel_strict
        """Whether strict tools' input is guaranteed in a turn of several calls (OpenAI: "Structured Outputs is
        not compatible with parallel function calls")."""
        self.output = output
        self.names = names
        """The offered names, in the request's order, for messages (default: the keys of `tools`)."""
        self.rules = rules
        """The rules this request is held to, when not every one of the wire's `answer_rules` (a wire serving
        two APIs, such as Bedrock's Converse and InvokeModel, holds each request to its API's)."""


PLAIN_IMPOSSIBILITY = (
    "Not a guarantee the hosts document: a plain impossibility for the app, which routes a tool call by its "
    "name, so a call of a tool its request never offered reaches no handler; a script naming one is almost "
    "always a typo (`lookup_orders` for `lookup_order`). A host whose parser passes on whatever name a model "
    "writes can send such a call: a test of how the app copes scripts the turn `unchecked`."
)
"""The source of the tool-offered rule where no provider documents a guarantee (the host dialects, Ollama)."""

_COMPLETE = ("end_turn", "tool_use")
"""The stop reasons of a whole answer: a turn cut short (`max_tokens`, a stop sequence, a refusal, a pause) is
held to no schema and to no forced call."""


def hold(
    turn: Turn, offer: Offer, rules: Sequence[AnswerRule], checks: AnswerChecks, stop: str
) -> AnswerViolation | None:
    """The first of `rules` the turn breaks for a request that offers `offer`, or None.

    Args:
        turn: The scripted turn (not an error turn).
        offer: What the request lets the model answer with.
        rules: The wire's answer rules, in the order they are checked.
        checks: The stub's skipped rule ids, and whether the opt-in rules run.
        stop: The turn's stop reason, canonical (`Wire.canonical_stop`).

    """
    for rule in rules:
        if rule.id in checks.skip or (rule.opt_in and not checks.tool_input):
            continue
        why = _CHECKS[rule.check](turn, offer, stop)
        if why is not None:
            problem, fix = why
            joint = " " if problem.endswith("?") else ". "
            return AnswerViolation(rule, f"{problem}{joint}{fix} ({_explain(rule)})")
    return None


def _explain(rule: AnswerRule) -> str:
    return (
        f'answer rule {rule.id}; give the turn "unchecked": true if the test means an answer the API could not '
        f'give, or turn the rule off with strict_skip=["{rule.id}"]: {ANSWER_DOCS}'
    )


def said(field: str, value: object, limit: int = 80) -> str:
    """How a request field reads in a message: `` `tool_choice` {"type": "any"} ``."""
    text = value if isinstance(value, str) else json_dumps(value)
    return f"`{field}` {clip(text, limit)}"


_Why = tuple[str, str] | None


def _names(offer: Offer) -> list[str]:
    return list(offer.names or (offer.tools or {}))


def _offered(turn: Turn, offer: Offer, stop: str) -> _Why:
    tools = offer.tools
    if tools is None:
        return None
    for call in turn.tool_calls:
        if call.name in tools:
            continue
        names = _names(offer)
        if not names:
            return (
                f"it calls the tool {call.name!r}, but the request offers no tools (no `{offer.tools_field}`)",
                "Offer the tool in the request (does the app send its tools?), or take the call out of the turn",
            )
        listed = ", ".join(repr(name) for name in names[:12]) + (", ..." if len(names) > 12 else "")
        return (
            (
                f"it calls the tool {call.name!r}, which the request does not offer (its `{offer.tools_field}`: "
                f"{listed}){did_you_mean(call.name, names)}"
            ),
            "Call one of the offered tools in the turn",
        )
    return None


def _chosen(turn: Turn, offer: Offer, stop: str) -> _Why:
    choice = offer.choice
    if choice is None:
        return None
    calls = turn.tool_calls
    if choice.none and calls:
        return (
            f"it calls the tool {calls[0].name!r}, but the request's {choice.said} lets the model call no tool",
            "Answer with text, or change the request's tool choice",
        )
    if choice.allowed is not None:
        for call in calls:
            if call.name not in choice.allowed:
                allowed = ", ".join(repr(name) for name in sorted(choice.allowed))
                return (
                    (
                        f"it calls the tool {call.name!r}, but the request's {choice.said} lets the model call only "
                        f"{allowed}{did_you_mean(call.name, choice.allowed)}"
                    ),
                    "Call one of those tools in the turn",
                )
    ran = {tool.name for tool in turn.server_tools or ()}
    forced = choice.forced
    if forced is not None and calls and forced not in ran and all(call.name != forced for call in calls):
        return (
            f"it calls the tool {calls[0].name!r}, but the request's {choice.said} forces the tool {forced!r}",
            f"Call {forced!r} in the turn",
        )
    if (choice.required or forced is not None) and not calls and not ran and stop in _COMPLETE:
        must = f"call the tool {forced!r}" if forced is not None else "call a tool"
        return (
            (
                f"it answers without a tool call ({turn.describe()}), but the request's {choice.said} makes the model "
                f"{must}"
            ),
            "Script the tool call the request forces",
        )
    return None


def _single(turn: Turn, offer: Offer, stop: str) -> _Why:
    calls = turn.tool_calls
    if offer.single_call is None or len(calls) < 2:
        return None
    names = ", ".join(repr(call.name) for call in calls)
    return (
        (
            f"it calls {len(calls)} tools at once ({names}), but the request's {offer.single_call} lets the model call "
            "at most one per turn"
        ),
        "Script one call per turn",
    )


def _strict_input(turn: Turn, offer: Offer, stop: str) -> _Why:
    return _input(turn, offer, stop, strict=True)


def _loose_input(turn: Turn, offer: Offer, stop: str) -> _Why:
    return _input(turn, offer, stop, strict=False)


def _input(turn: Turn, offer: Offer, stop: str, *, strict: bool) -> _Why:
    tools = offer.tools
    calls = turn.tool_calls
    if tools is None or not calls or stop not in _COMPLETE:
        return None
    if turn.fault is not None and turn.fault.malformed_tool_json:  # the input is broken on purpose
        return None
    alone = len(calls) == 1 or offer.parallel_strict
    for index, call in enumerate(calls):
        tool = tools.get(call.name)
        # Strict: the tools whose input the API guarantees; loose (opt-in): every other tool with a schema.
        if tool is None or tool.schema is None or (tool.strict and alone) is not strict:
            continue
        dialect = tool.dialect if strict else (LOOSE_OPENAPI if tool.dialect.openapi else LOOSE)
        problem = breaks(call.input, tool.schema, dialect)
        if problem is None:
            continue
        which = f" (tools[{index}])" if len(calls) > 1 else ""
        if strict:
            return (
                (
                    f"the input of its call to {call.name!r}{which} breaks the tool's `{tool.field}`, which the API "
                    f"guarantees for a strict tool: {problem}"
                ),
                "Give the call an input that fits the schema",
            )
        return (
            f"the input of its call to {call.name!r}{which} breaks the tool's `{tool.field}`: {problem}",
            (
                "Give the call an input that fits the schema (this tool is not strict, so a real model may send such "
                "input: this check is on because the stub was made with check_tool_input=True)"
            ),
        )
    return None


def _output(turn: Turn, offer: Offer, stop: str) -> _Why:
    output = offer.output
    text = turn.text
    if output is None or text is None or turn.tool_calls or stop != "end_turn":
        return None
    try:
        value = json.loads(text)
    except ValueError as exc:
        return (
            f"its text {clip(text, 40)!r} is not JSON ({exc}), which the request's {output.said} guarantees",
            "Script the JSON answer",
        )
    if output.schema is None:
        return None
    problem = breaks(value, output.schema, output.dialect)
    if problem is None:
        return None
    return (
        f"its text breaks the schema of the request's {output.said}, which the API guarantees: {problem}",
        "Script text that fits the schema",
    )


_CHECKS = {
    "tool_offered": _offered,
    "tool_choice": _chosen,
    "parallel_tool_calls": _single,
    "strict_tool_input": _strict_input,
    "tool_input": _loose_input,
    "output": _output,
}
