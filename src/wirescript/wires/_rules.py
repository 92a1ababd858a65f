"""The shared shapes of the strict-request rules: a rule, a violation, and the small JSON helpers.

Provider-neutral and transport-free: the per-provider rule modules import this, and
`wirescript.strict` puts them together.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Generic, NamedTuple, TypeGuard, TypeVar

__all__ = ["ModelTable", "Rule", "Violation", "dicts", "first_violation", "is_int", "is_number", "json_type"]


class Rule(NamedTuple):
    """One thing a real provider API refuses, with a stable public id.

    Attributes:
        id: Stable, public id such as `"anthropic.tool-use-without-result"`; what `strict_skip` names.
        provider: `"anthropic"`, `"openai_chat"`, `"openai_responses"`, `"gemini"` or `"any"`.
        summary: One line for the docs table.
        source: Where the behaviour is documented or observed (a URL, or the quoted error text and
            where it was seen).
        status: The HTTP status the real API answers with.
        code: The `error.code` the real API sends with it, where it is observed (OpenAI), else None.
        retired: Why the rule refuses nothing any more, when it does not (the provider's current docs
            say the body is accepted); None for a rule in force. A retired rule keeps its id, so a
            `strict_skip` naming it stays valid.

    """

    id: str
    provider: str
    summary: str
    source: str
    status: int = 400
    code: str | None = None
    retired: str | None = None


class Violation(NamedTuple):
    """A request a rule refuses.

    Attributes:
        rule: The rule that refused it.
        message: Starts with the real API's wording where it is known. It does not name the rule id
            or the docs page: whoever renders the error adds those.
        param: The offending field path (for example `"messages.2.content.0.tool_use_id"`), when
            there is one.

    """

    rule: Rule
    message: str
    param: str | None = None


def first_violation(
    checks: Iterable[tuple[Rule, Callable[[], Violation | None]]], skip: frozenset[str]
) -> Violation | None:
    """The first violation of the checks whose rule is not skipped, or None."""
    for rule, check in checks:
        if rule.id in skip:
            continue
        violation = check()
        if violation is not None:
            return violation
    return None


def is_int(value: Any) -> TypeGuard[int | float]:
    """A JSON integer (a float with no fraction counts; a boolean does not)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def is_number(value: Any) -> TypeGuard[int | float]:
    """A JSON number (a boolean is not one)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def json_type(value: Any) -> str:
    """The JSON type name of a parsed value: `string`, `integer`, `number`, `boolean`, `array`, `object`, `null`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def dicts(value: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """The (index, item) pairs of the dict items of a list; nothing for anything else."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, dict):
                yield i, item


_T = TypeVar("_T")

_SNAPSHOT = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})(?:-v\d+(?::\d+)?)?|@\d{8}")
"""What may follow a model id in a table and still name that model: a dated snapshot (`-20250514`,
`-2025-04-16`) or a Vertex AI version (`@20250514`); nothing else (`claude-opus-5-5` is not `claude-opus-5`)."""


class ModelTable(Generic[_T]):
    """What a provider documents of its models, keyed by model id, with the date the table was checked.

    A key names a model and its dated snapshots: `claude-sonnet-4` is `claude-sonnet-4` and
    `claude-sonnet-4-20250514`, not `claude-sonnet-4-5` (a model of its own). A model the table does
    not name gets None, and a rule that reads the table refuses nothing for it: the table only ever
    adds refusals for the models it lists, so an old table errs toward acceptance.

    Tables are immutable; `updated` returns a copy with entries added or replaced, which a wire of
    your own declares (`class MyWire(AnthropicWire): models = AnthropicWire.models.updated({...})`).

    Args:
        entries: The model id (without snapshot suffix) and its facts.
        as_of: The date the entries were checked against the provider's docs (`YYYY-MM-DD`).

    """

    __slots__ = ("_cache", "_entries", "as_of")

    def __init__(self, entries: Mapping[str, _T], *, as_of: str) -> None:
        self._entries: dict[str, _T] = dict(entries)
        self.as_of = as_of
        """The date the entries were checked against the provider's docs."""
        self._cache: dict[str, _T | None] = {}

    def __getitem__(self, model: str) -> _T:
        return self._entries[model]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def items(self) -> Iterator[tuple[str, _T]]:
        """The entries, in the order they were given."""
        return iter(self._entries.items())

    def updated(self, entries: Mapping[str, _T], *, as_of: str | None = None) -> ModelTable[_T]:
        """A copy with `entries` added (or replacing the ones of the same id)."""
        return ModelTable({**self._entries, **entries}, as_of=as_of or self.as_of)

    def lookup(self, model: Any) -> _T | None:
        """The entry naming `model` (its id, or a dated snapshot of it), or None for a model the table does not list."""
        if not isinstance(model, str):
            return None
        cache = self._cache
        if model in cache:
            return cache[model]
        found = self._entries.get(model)
        if found is None:
            for key, value in self._entries.items():
                if model.startswith(key) and _SNAPSHOT.fullmatch(model, len(key)):
                    found = value
                    break
        if len(cache) < 512:  # a stub's requests name a few models
            cache[model] = found
        return found
