"""Strict requests: refuse what the real provider API would refuse.

The provider-neutral engine over a stub's wires. Each wire declares its rules (`Wire.rules`) and
checks them (`Wire.check`); `StrictRules` gathers the rules of one stub's wires, validates
`strict_skip` against them, and adds the two `any.*` rules, computed from what the wires declare of
their request bodies (`own_fields`, `shared_fields`, `unknown_field`, `field_types`). A check
returns the `Violation` of the first rule the body breaks, or None. A violation carries its `Rule` (a
stable id, the provider, the HTTP status, the documented source) and a message that starts with the
real API's own wording where it is known; `explain` adds the rule id and the docs link, and the wire
wraps it in its error envelope. `Rule`, `Violation` and `explain` are what a wire of its own needs.

The default wires' rules are `RULES`, and `check_request` runs them on a bare body (the per-provider
checks live in each provider's package, `wirescript.wires.<provider>.rules`):

```python
from wirescript.strict import check_request

violation = check_request("anthropic", {"model": "m", "max_tokens": 8, "messages": []})
assert violation is not None and violation.rule.id == "anthropic.messages-empty"
```

The rules and their sources are listed in `docs/strict-requests.md`. No false positives is the
contract: a rule exists only where the provider documents the refusal or its error has been
observed, and every check reads only what it must, letting anything else through.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

from ._text import did_you_mean
from .errors import ScriptError, UsageError
from .wires._answers import ANSWER_DOCS, AnswerRule
from .wires._declared import STAND_INS
from .wires._later import LaterWires, made_so_far
from .wires._rules import Rule, Violation, is_int, is_number
from .wires.base import Wire

if TYPE_CHECKING:
    from .wires.anthropic.rules import check_anthropic
    from .wires.bedrock.rules import check_converse
    from .wires.gemini.rules import check_gemini
    from .wires.openai.rules import check_openai_chat, check_openai_responses, previous_response_not_found

__all__ = [
    "ANSWER_DOCS",
    "ANSWER_RULES",
    "BODY_FOR_ANOTHER_WIRE",
    "DIALECT_RULES",
    "DOCS_PAGE",
    "FIELD_TYPE",
    "RULES",
    "WIRES",
    "AnswerRule",
    "Rule",
    "StrictRules",
    "Violation",
    "answer_rules_table",
    "check_anthropic",
    "check_converse",
    "check_gemini",
    "check_openai_chat",
    "check_openai_responses",
    "check_request",
    "check_wire_mismatch",
    "explain",
    "previous_response_not_found",
    "rules_table",
    "skip_ids",
]

DOCS_PAGE = "docs/strict-requests.md"
"""The page listing every rule, its source and how to turn it off: what a refusal's message points to."""

BODY_FOR_ANOTHER_WIRE = Rule(
    "any.body-for-another-wire",
    "any",
    "The body carries a top-level field of another provider's API (Gemini `contents` on `/v1/messages`, ...).",
    "Each API refuses top-level fields it does not define. Observed: Anthropic 'response_format: Extra inputs are "
    "not permitted' (github.com/amrit110/oli/issues/7); OpenAI Chat 'Unrecognized request argument supplied: "
    "<field>' (github.com/nashsu/llm_wiki/issues/336, github.com/coroot/coroot/issues/698); OpenAI Responses "
    "\"Unknown parameter: '<field>'.\" (github.com/fhswf/openai-ui/issues/127); Gemini 'Invalid JSON payload "
    'received. Unknown name "<field>": Cannot find field.\' (github.com/fishjar/kiss-translator/issues/256)',
)
FIELD_TYPE = Rule(
    "any.field-type",
    "any",
    'A well-known field of the wrong JSON type (`"stream": "yes"`, `"max_tokens": "10"`, `"messages": "hi"`).',
    "Observed: Anthropic 'max_tokens: Input should be a valid integer' "
    "(github.com/strands-agents/harness-sdk/pull/588); "
    "OpenAI \"Invalid type for 'max_tokens': expected an integer, but got a string instead.\" "
    "(github.com/diffbot/code-gpt-docs/issues/273); Gemini \"Invalid value at '<field>' (<type>), <value>\"; the "
    "types are those of each SDK's request TypedDicts.",
)

_IS: dict[str, Callable[[Any], bool]] = {
    "integer": is_int,
    "number": is_number,
    "boolean": lambda v: isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}

_EXACT: dict[str, tuple[type, ...]] = {
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "string": (str,),
    "array": (list,),
    "object": (dict,),
}
"""The Python types a parsed JSON value of each kind has (a bool is not an int here: `type` is exact)."""


def _has_type(value: Any, kinds: tuple[str, ...]) -> bool:
    for kind in kinds:  # noqa: SIM110 - a loop, not any(): no generator per field per request
        if _IS[kind](value):
            return True
    return False


class _Shape(NamedTuple):
    """What the `any.*` rules check of one wire's bodies, among the wires of a stub (from their classes)."""

    foreign: tuple[tuple[str, tuple[int, ...]], ...]
    """The top-level fields other wires of the stub own and this one does not take, each with its owners'
    positions among the stub's wires."""
    foreign_keys: frozenset[str]
    types: Mapping[str, tuple[str, ...]]
    plain: dict[str, frozenset[type]]
    """Per field: the exact types of a value that surely has the field's kind, tested in one lookup."""


class _Plan(NamedTuple):
    """The strict rules of a set of wire classes, worked out once and shared by every stub of them (read only)."""

    rules: dict[str, Rule]
    shapes: tuple[tuple[int, _Shape], ...]
    """The body shapes of the wires with one, by position."""
    answers: dict[str, AnswerRule]
    by_class: dict[type[Wire], tuple[int, _Shape]] | None
    """The same shapes by the class of their wire, and for a stand-in also by the class it becomes (a wire's class
    is that one or the other): None when two of the wires could have one class, as each is told by its identity."""


@functools.lru_cache(maxsize=64)
def _plan(kinds: tuple[type[Wire], ...]) -> _Plan:
    """The rules, the body shapes and the answer rules of these classes, once.

    Raises:
        UsageError: Two different rules (request or answer rules) share an id.

    """
    shapes: list[_Shape | None] = []
    for kind in kinds:
        foreign: dict[str, list[int]] = {}
        if kind.unknown_field is not None:
            taken = {*kind.own_fields, *kind.shared_fields}
            for index, other in enumerate(kinds):
                for key in other.own_fields if other is not kind else ():
                    if key not in taken:
                        foreign.setdefault(key, []).append(index)
        types = kind.field_types
        if not foreign and not types:
            shapes.append(None)
            continue
        plain = {key: frozenset(t for k in kinds_ for t in _EXACT[k]) for key, kinds_ in types.items()}
        pairs = tuple((key, tuple(owners)) for key, owners in foreign.items())
        shapes.append(_Shape(pairs, frozenset(foreign), types, plain))
    anys = [
        *([BODY_FOR_ANOTHER_WIRE] if any(shape.foreign for shape in shapes if shape is not None) else []),
        *([FIELD_TYPE] if any(shape.types for shape in shapes if shape is not None) else []),
    ]
    rules: dict[str, Rule] = {}
    for owner, rule in [*(("wirescript", rule) for rule in anys), *((k.name, r) for k in kinds for r in k.rules)]:
        known = rules.setdefault(rule.id, rule)
        if known != rule:
            raise UsageError(f"the {owner} wire declares a rule {rule.id!r} that another rule's id names already")
    answers: dict[str, AnswerRule] = {}
    for kind in kinds:
        for answer in kind.answer_rules:
            if answers.setdefault(answer.id, answer) != answer or answer.id in rules:
                raise UsageError(
                    f"the {kind.name} wire declares an answer rule {answer.id!r} that another rule's id names already"
                )
    shaped = tuple((at, shape) for at, shape in enumerate(shapes) if shape is not None)
    return _Plan(rules, shaped, answers, _by_class(kinds, shapes))


def _by_class(
    kinds: tuple[type[Wire], ...], shapes: list[_Shape | None]
) -> dict[type[Wire], tuple[int, _Shape]] | None:
    """Each shape by its wire's classes (`_Plan.by_class`), or None when two wires could share a class."""
    classes: dict[type[Wire], int] = {}
    for at, kind in enumerate(kinds):
        for named in (kind, kind._later_kind) if kind in STAND_INS else (kind,):
            if classes.setdefault(named, at) != at:
                return None
    return {named: (at, shape) for named, at in classes.items() if (shape := shapes[at]) is not None}


def _mismatch(
    shape: _Shape, wire: Wire, wires: Sequence[Wire], body: dict[str, Any], skip: frozenset[str]
) -> Violation | None:
    """The `any.*` rules of one wire of a stub (`shape`), among the stub's `wires` its foreign fields belong to."""
    if (
        not body.keys().isdisjoint(shape.foreign_keys)  # the usual case (none), decided in one set operation
        and BODY_FOR_ANOTHER_WIRE.id not in skip
        and (violation := _foreign_field(shape, wire, wires, body)) is not None
    ):
        return violation
    return _field_type(shape, wire, body) if shape.types and FIELD_TYPE.id not in skip else None


def _foreign_field(shape: _Shape, wire: Wire, wires: Sequence[Wire], body: dict[str, Any]) -> Violation | None:
    """The violation of a body carrying a field another wire of the stub owns (one of `foreign_keys`), if any."""
    for key, positions in shape.foreign:
        if key not in body:
            continue
        owners = [wires[i] for i in positions]
        labels = list(dict.fromkeys(_label(owner) for owner in owners))
        if len(labels) > 1:  # a field several APIs own: the rest of the body may tell which
            labels = list(dict.fromkeys(_label(owner) for owner in owners if owner.claims_body(body)))
        meant = labels[0] if len(labels) == 1 else "another API"
        unknown = (wire.unknown_field or "").replace("{key}", key)
        message = f"{unknown} (the body looks meant for {meant}, not {_label(wire)})"
        return Violation(BODY_FOR_ANOTHER_WIRE, message, key)
    return None


def _field_type(shape: _Shape, wire: Wire, body: dict[str, Any]) -> Violation | None:
    types, plain = shape.types, shape.plain
    # The fields sent, usually a few; the declared order decides only when one is wrong.
    for key, value in body.items():
        exact = plain.get(key)
        if exact is None or value is None or type(value) in exact:
            continue
        if not _has_type(value, types[key]):
            break
    else:
        return None
    for key, kinds in types.items():
        value = body.get(key)
        if value is not None and not _has_type(value, kinds):
            return Violation(FIELD_TYPE, wire.field_type_message(key, value, kinds), key)
    return None


def _label(wire: Wire) -> str:
    return wire.label or wire.endpoint


class StrictRules:
    """The strict rules of one stub: its wires' declared rules, and the `any.*` rules over their bodies.

    Computed when the stub is made, from what its wires' classes declare: nothing here is worked out
    per request.

    Args:
        wires: The stub's wires, in matching order.

    Raises:
        UsageError: Two different rules of its wires share an id.

    """

    __slots__ = ("_by_class", "_made", "_shapes", "_wires", "answer_rules", "rules")

    def __init__(self, wires: Iterable[Wire], *, kinds: tuple[type[Wire], ...] | None = None) -> None:
        """`kinds`: the classes of `wires`, in order, when known already."""
        wired: Sequence[Wire] = wires if wires.__class__ is LaterWires else tuple(wires)
        # Declared on the classes: worked out once per set of wire classes, shared by every stub of them.
        plan = _plan(kinds if kinds is not None else tuple(map(type, wired)))
        self.rules: Mapping[str, Rule] = plan.rules
        """Every request rule of the stub, by id (read only)."""
        self.answer_rules: Mapping[str, AnswerRule] = plan.answers
        """Every answer rule of the stub's wires (`Wire.answer_rules`), by id (read only): with `rules`, what
        `strict_skip` may name."""
        self._wires = wired
        self._made = made_so_far(wired)
        """What a wire is told apart by, by place: `_wires`, or the stand-ins made of a run of them (none is made
        here: the wire a request reached is made)."""
        # Each wire's shape found by its class, in the plan's table (no table of the stub's own), unless two
        # of the wires could have one class: then by its identity.
        self._by_class = plan.by_class is not None
        self._shapes: Mapping[Any, tuple[int, _Shape]] = (
            plan.by_class if plan.by_class is not None else {id(wired[at]): (at, shape) for at, shape in plan.shapes}
        )

    def _shape(self, wire: Wire) -> _Shape | None:
        """The shape of a body on `wire` if it is one of the stub's wires and has one."""
        found = self._shapes.get(wire.__class__ if self._by_class else id(wire))
        return found[1] if found is not None and self._made[found[0]] is wire else None

    def mismatch(self, wire: Wire, body: dict[str, Any], skip: frozenset[str] = frozenset()) -> Violation | None:
        """The `any.*` rules for a body on `wire`: a field another wire owns, or a field of the wrong JSON type."""
        shape = self._shape(wire)
        return _mismatch(shape, wire, self._wires, body, skip) if shape is not None else None

    def check(self, wire: Wire, record: Any, skip: frozenset[str]) -> Violation | None:
        """Every rule for one request on `wire`: the `any.*` rules first, then the wire's own (`Wire.check`).

        Raises:
            ValueError: The wire refused the request by a rule it does not declare (`Wire.rules`).

        """
        body = record.body
        found = self._shapes.get(wire.__class__ if self._by_class else id(wire))
        if found is not None and self._made[found[0]] is wire:
            shape = found[1]
            if body.__class__ is dict:  # `_mismatch`, written out for the common case
                if not body.keys().isdisjoint(shape.foreign_keys):  # a field another wire owns: the whole of them
                    violation = _mismatch(shape, wire, self._wires, body, skip)
                elif shape.types and FIELD_TYPE.id not in skip:
                    violation = _field_type(shape, wire, body)
                else:
                    violation = None
                if violation is not None:
                    return violation
            elif isinstance(body, dict) and (violation := _mismatch(shape, wire, self._wires, body, skip)) is not None:
                return violation
        violation = wire.check(record, skip=skip)
        if violation is not None and self.rules.get(violation.rule.id) != violation.rule:
            raise ValueError(
                f"the {wire.name} wire refused the request by the rule {violation.rule.id!r}, which it does not "
                "declare in Wire.rules (so strict_skip could not turn it off)"
            )
        return violation


@runtime_checkable
class _BodyChecked(Protocol):
    """A default wire's rules over a bare body, with the context a request would get from the wire's state."""

    def check_body(self, body: dict[str, Any], *, skip: frozenset[str], **context: Any) -> Violation | None:
        """Its rules over `body`; `context` holds `history`, `previous_items`, `betas`, `anthropic_version`, `model`."""


class _Defaults(NamedTuple):
    """The default wires' rules, worked out when first asked for (so that importing this module imports no wire)."""

    wires: tuple[Wire, ...]
    strict: StrictRules
    by_name: dict[str, Wire]
    checked: dict[str, _BodyChecked]
    rules: dict[str, Rule]
    dialect_rules: dict[str, Rule]
    answer_rules: dict[str, AnswerRule]
    names: tuple[str, ...]


@functools.cache
def _defaults() -> _Defaults:
    from .wires import DIALECTS, default_wires

    wires = tuple(default_wires())
    strict = StrictRules(wires)
    kinds = [kind for kinds in DIALECTS.values() for kind in kinds]
    return _Defaults(
        wires,
        strict,
        {wire.name: wire for wire in wires},
        {wire.name: wire for wire in wires if isinstance(wire, _BodyChecked)},
        dict(strict.rules),
        {rule.id: rule for kind in kinds for rule in kind.rules},
        {**strict.answer_rules, **{rule.id: rule for kind in kinds for rule in kind.answer_rules}},
        tuple(wire.name for wire in wires if wire.unknown_field is not None),
    )


_LAZY = {"RULES": "rules", "DIALECT_RULES": "dialect_rules", "ANSWER_RULES": "answer_rules", "WIRES": "names"}
"""The module's tables of the default wires (see their docs below), made on first use."""

_CHECKS = {
    "check_anthropic": ".wires.anthropic.rules",
    "check_converse": ".wires.bedrock.rules",
    "check_gemini": ".wires.gemini.rules",
    "check_openai_chat": ".wires.openai.rules",
    "check_openai_responses": ".wires.openai.rules",
    "previous_response_not_found": ".wires.openai.rules",
}
"""The per-provider checks this module offers, imported from their provider's package on first use."""

if TYPE_CHECKING:
    RULES: dict[str, Rule]
    """Every rule of the default wires, by id (a stub's own rules: `StrictRules(stub.wires).rules`)."""
    DIALECT_RULES: dict[str, Rule]
    """Every rule of the built-in host dialects (`docs/dialects.md`), by id: what a stub serving them checks too."""
    ANSWER_RULES: dict[str, AnswerRule]
    """Every answer rule of the default wires and the built-in host dialects, by id (a stub's own:
    `StrictRules(stub.wires).answer_rules`): what a scripted turn is held to against its request."""
    WIRES: tuple[str, ...]
    """The default wires the `any.*` rules check (the `name` of each wire in `wirescript.wires`)."""


def __getattr__(name: str) -> Any:
    field = _LAZY.get(name)
    if field is not None:
        value = getattr(_defaults(), field)
    elif name in _CHECKS:
        value = getattr(importlib.import_module(_CHECKS[name], __package__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def check_wire_mismatch(wire: str, body: dict[str, Any], *, skip: frozenset[str] = frozenset()) -> Violation | None:
    """The `any.*` rules: a body meant for another wire, or a well-known field of the wrong JSON type.

    Args:
        wire: The default wire the request arrived on: one of `WIRES`.
        body: The parsed JSON body.
        skip: Rule ids not to check.

    Returns:
        The violation, naming the field and (where it can tell) the wire the body looks meant for;
        None when the body fits the wire, or the wire is not one of `WIRES`.

    """
    defaults = _defaults()
    found = defaults.by_name.get(wire)
    return defaults.strict.mismatch(found, body, skip) if found is not None else None


def check_request(
    wire: str,
    body: dict[str, Any],
    *,
    history: list[Any] | None = None,
    previous_items: list[Any] | None = None,
    served_without_thinking: Collection[str] = frozenset(),
    skip: frozenset[str] = frozenset(),
    betas: Collection[str] = (),
    anthropic_version: str | None = None,
    model: str | None = None,
) -> Violation | None:
    """Every rule of a default wire for one bare body: the `any.*` rules first, then the wire's own.

    Args:
        wire: The default wire the request arrived on: one of `WIRES`, or `bedrock` (Converse).
        body: The parsed JSON body.
        history: Anthropic only: a continued thread's earlier messages (see `check_anthropic`).
        previous_items: Responses only: the previous response's stored items (see `check_openai_responses`).
        served_without_thinking: Accepted for compatibility, not read (the rule that read it is retired).
        skip: Rule ids not to check.
        betas: Anthropic only: the request's `anthropic-beta` betas (see `check_anthropic`).
        anthropic_version: Anthropic only: the request's API version, from the `anthropic-version`
            header (see `check_anthropic`); None: the rules that depend on it are not checked.
        model: Bedrock only: the model id of the path, for its model-dependent rule (see `check_converse`).

    Returns:
        The first violation, or None.

    """
    violation = check_wire_mismatch(wire, body, skip=skip)
    if violation is not None:
        return violation
    found = _defaults().checked.get(wire)
    if found is None:
        return None
    return found.check_body(
        body,
        skip=skip,
        history=history,
        previous_items=previous_items,
        betas=betas,
        anthropic_version=anthropic_version,
        model=model,
    )


def explain(violation: Violation) -> str:
    """The error message a refused request gets: the real API's wording, then the rule id and how to skip it.

    ```python
    from wirescript.strict import check_request, explain

    violation = check_request("openai_chat", {"model": "gpt-test", "messages": []})
    assert violation is not None
    assert explain(violation) == (
        "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array "
        'instead. (wirescript strict rule openai_chat.messages-empty; turn it off with '
        'strict_skip=["openai_chat.messages-empty"]: docs/strict-requests.md)'
    )
    ```
    """
    rule = violation.rule.id
    return f'{violation.message} (wirescript strict rule {rule}; turn it off with strict_skip=["{rule}"]: {DOCS_PAGE})'


def skip_ids(
    value: object, name: str = "strict_skip", *, rules: Mapping[str, object] | None = None, outside: bool = False
) -> frozenset[str]:
    """Validate a list of rule ids to skip (`strict_skip`), at construction.

    Args:
        value: The ids: a list, tuple or set of strings, each a key of `rules`.
        name: The option's name, for the message.
        rules: The request and answer rules of the stub (`StrictRules.rules` and `StrictRules.answer_rules`);
            None: the default wires' and the host dialects' (`RULES`, `DIALECT_RULES`, `ANSWER_RULES`).
        outside: Let through an id of a wire the rules do not know (one whose prefix, `acme` of
            `acme.safe-prompt-type`, no rule has): the stub that has that wire checks it (the pytest
            marker's `strict_skip`, given to stubs whose wires are not known yet).

    Returns:
        The ids.

    Raises:
        ScriptError: `value` is a lone string or not a collection of strings, or names a rule none
            of the wires declares; the message names the closest rule id.

    """
    if rules is None:
        defaults = _defaults()
        known: Mapping[str, object] = {**defaults.rules, **defaults.dialect_rules, **defaults.answer_rules}
    else:
        known = rules
    prefixes = {rule.partition(".")[0] for rule in known} if outside else set()
    if isinstance(value, str) or not isinstance(value, Iterable) or isinstance(value, dict):
        hint = f"; write {name}=[{value!r}]" if isinstance(value, str) else ""
        raise ScriptError(f"{name}: expected a list of strict rule ids, got {type(value).__name__} {value!r}{hint}")
    ids = list(value)
    for item in ids:
        if not isinstance(item, str):
            raise ScriptError(f"{name}: expected strict rule ids (strings), got {type(item).__name__} {item!r}")
        if item not in known and (not outside or item.partition(".")[0] in prefixes):
            raise ScriptError(
                f"{name}: unknown strict rule {item!r}{did_you_mean(item, known)} (the stub's wires declare "
                f"{len(known)} rules, each a key of their Wire.rules or Wire.answer_rules; the built-in ones are "
                f"listed in {DOCS_PAGE})"
            )
    return frozenset(ids)


def rules_table(wires: Iterable[Wire] | None = None) -> str:
    """The strict rules of `wires` as Markdown: a table per provider, then the retired rules.

    Each row names the rule's id, the wires that check it, its status, what it refuses and its
    source; the rules are listed in the order their wires check them. What `docs/strict-requests.md`
    shows is this, over the default wires (a test keeps the page and the rules the same).

    Args:
        wires: The wires (a stub's: `stub.wires`); None: the default wires.

    """
    wired = _defaults().wires if wires is None else tuple(wires)
    rules = StrictRules(wired).rules
    owners: dict[str, list[str]] = {rule_id: [] for rule_id in rules}
    for wire in wired:
        for rule in wire.rules:
            if wire.name not in owners[rule.id]:
                owners[rule.id].append(wire.name)
    if BODY_FOR_ANOTHER_WIRE.id in owners:
        owners[BODY_FOR_ANOTHER_WIRE.id] = [wire.name for wire in wired if wire.unknown_field is not None]
    if FIELD_TYPE.id in owners:
        owners[FIELD_TYPE.id] = [wire.name for wire in wired if wire.field_types]
    headings = {wire.name: wire.label or wire.endpoint for wire in wired}
    sections: dict[str, list[Rule]] = {}
    for rule in [
        *(r for r in rules.values() if r.provider != "any"),
        *(r for r in rules.values() if r.provider == "any"),
    ]:
        if rule.retired is None:
            sections.setdefault(rule.provider, []).append(rule)
    out: list[str] = []
    for provider, listed in sections.items():
        title = "Any wire" if provider == "any" else headings.get(provider, provider)
        out += [f"### {title}", "", "| id | checked by | status | refuses | source |", "|---|---|---|---|---|"]
        for rule in listed:
            checked = ", ".join(f"`{name}`" for name in owners[rule.id]) or "every wire"
            out.append(f"| `{rule.id}` | {checked} | {rule.status} | {_cell(rule.summary)} | {_cell(rule.source)} |")
        out.append("")
    retired = [rule for rule in rules.values() if rule.retired is not None]
    if retired:
        out += ["### Retired rules", "", "They refuse nothing; `strict_skip` still takes their ids.", ""]
        out += ["| id | refused | why it refuses nothing | source of the old refusal |", "|---|---|---|---|"]
        for rule in retired:
            out.append(f"| `{rule.id}` | {_cell(rule.summary)} | {_cell(rule.retired or '')} | {_cell(rule.source)} |")
        out.append("")
    return "\n".join(out)


def answer_rules_table(wires: Iterable[Wire] | None = None) -> str:
    """The answer rules of `wires` as Markdown: one table, in the order each wire checks them.

    Each row names the rule's id, the wires that hold a turn to it, what answer it calls impossible
    and where the provider guarantees the behaviour; an opt-in rule (`check_tool_input=True`) says so.
    What `docs/answers.md` shows is this, over the default wires and the built-in host dialects
    (a test keeps the page and the rules the same).

    Args:
        wires: The wires (a stub's: `stub.wires`); None: the default wires and the built-in dialects' wires.

    """
    if wires is None:
        from .wires import DIALECTS, default_wires

        wired: list[Wire] = [*default_wires(), *(kind() for kinds in DIALECTS.values() for kind in kinds)]
    else:
        wired = list(wires)
    owners: dict[str, list[str]] = {}
    listed: dict[str, AnswerRule] = {}
    for wire in wired:
        for rule in wire.answer_rules:
            listed.setdefault(rule.id, rule)
            names = owners.setdefault(rule.id, [])
            if wire.name not in names:
                names.append(wire.name)
    out = ["| id | held by | an impossible answer | source |", "|---|---|---|---|"]
    for rule in listed.values():
        held = ", ".join(f"`{name}`" for name in owners[rule.id])
        summary = f"{rule.summary} *Opt-in: `check_tool_input=True`.*" if rule.opt_in else rule.summary
        out.append(f"| `{rule.id}` | {held} | {_cell(summary)} | {_cell(rule.source)} |")
    return "\n".join([*out, ""])


def _cell(text: str) -> str:
    """Text for a Markdown table cell: its pipes escaped."""
    return text.replace("|", "\\|")
