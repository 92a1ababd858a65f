"""The shared shapes of the strict-request rules: a rule, a violation, and the small JSON helpers.

Provider-neutral and transport-free: the per-provider rule modules import this, and
`wirescript.strict` puts them together.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeGuard

__all__ = ["Rule", "Violation", "dicts", "first_violation", "is_int", "is_number", "json_type"]


@dataclass(frozen=True, slots=True)
class Rule:
    """One thing a real provider API refuses, with a stable public id.

    Attributes:
        id: Stable, public id such as `"anthropic.tool-use-without-result"`; what `strict_skip` names.
        provider: `"anthropic"`, `"openai_chat"`, `"openai_responses"`, `"gemini"` or `"any"`.
        summary: One line for the docs table.
        source: Where the behaviour is documented or observed (a URL, or the quoted error text and
            where it was seen).
        status: The HTTP status the real API answers with.
        code: The `error.code` the real API sends with it, where it is observed (OpenAI), else None.

    """

    id: str
    provider: str
    summary: str
    source: str
    status: int = 400
    code: str | None = None


@dataclass(frozen=True, slots=True)
class Violation:
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
