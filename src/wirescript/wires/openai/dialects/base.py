"""The host-dialect seam: a Chat Completions host whose answers or refusals differ from OpenAI's.

A dialect is an `OpenAIChatWire` subclass that declares, as data, each way its host differs
(`Quirk`s, each with a `source`): how it answers (`side="answer"`, rendered through the wire's
`ChatShape`) and what it refuses (`side="refusal"`, a strict `Rule` its `check` enforces).
Quirks that changed between releases of a self-hosted server carry the versions they hold for,
and `ChatDialect(version="0.20.4")` renders that release.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from ...._text import did_you_mean
from ....errors import UsageError
from ....recorded import RecordedRequest
from ..._answers import PLAIN_IMPOSSIBILITY, AnswerRule
from ..._caching import Caching
from ..._rules import Rule, Violation
from ..chat import ChatShape, OpenAIChatWire

__all__ = ["DIALECT_TOOL_NOT_OFFERED", "ChatDialect", "Quirk", "parse_version"]

Side = Literal["answer", "refusal"]


@dataclass(frozen=True, slots=True)
class Quirk:
    """One documented or observed way a host differs from OpenAI's Chat Completions.

    Attributes:
        id: Stable, public id (`"ollama.reasoning-field"`); a refusal's is its rule's id.
        side: `"answer"` (how the host answers) or `"refusal"` (what it refuses, a strict rule).
        summary: One line for the docs table.
        source: Where the behaviour is documented or observed (a URL, or quoted text and where).
        versions: The releases it holds for, as `">=0.20.2,<0.20.6"` (None: every release).
        rule: A refusal's strict rule (`Wire.rules`), None for an answer.

    """

    id: str
    side: Side
    summary: str
    source: str
    versions: str | None = None
    rule: Rule | None = None

    def applies(self, version: tuple[int, ...] | None) -> bool:
        """Whether it holds for `version` (None: the newest release, so a quirk fixed since does not)."""
        lower, upper = _bounds(self.versions)
        if version is None:
            return upper is None
        return (lower is None or version >= lower) and (upper is None or version < upper)

    @classmethod
    def refusal(cls, rule: Rule) -> Quirk:
        """The quirk of a strict rule: its id, summary and source."""
        return cls(rule.id, "refusal", rule.summary, rule.source, rule=rule)


def _active(quirks: Sequence[Quirk], version: tuple[int, ...] | None) -> frozenset[str]:
    return frozenset(q.id for q in quirks if q.applies(version))


def _newest(kind: type[ChatDialect]) -> frozenset[str]:
    """`_active` of a dialect class's quirks (a tuple) at its newest release: worked out once per class and quirks."""
    quirks = kind.quirks
    found = _NEWEST.get(kind)
    if found is None or found[0] is not quirks:
        found = _NEWEST[kind] = (quirks, _active(quirks, None))
    return found[1]


_NEWEST: dict[type[ChatDialect], tuple[Sequence[Quirk], frozenset[str]]] = {}
"""Per dialect class: its quirks when last asked, and those that hold at its newest release (every stub's case)."""

_VERSION = re.compile(r"\d+(\.\d+){0,3}")


def parse_version(text: str, *, name: str = "version") -> tuple[int, ...]:
    """`"0.20.4"` as `(0, 20, 4)`.

    Raises:
        UsageError: `text` is not dot-separated numbers (up to four).

    """
    if not isinstance(text, str) or not _VERSION.fullmatch(text.strip()):
        raise UsageError(f"{name}: expected a release number such as '0.20.4', got {text!r}")
    return tuple(int(part) for part in text.strip().split("."))


@functools.lru_cache(maxsize=256)  # every stub builds each built-in dialect's wire: its quirks' bounds parsed once
def _bounds(spec: str | None) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None]:
    lower: tuple[int, ...] | None = None
    upper: tuple[int, ...] | None = None
    for part in (spec or "").split(","):
        part = part.strip()
        if part.startswith(">="):
            lower = parse_version(part[2:], name="Quirk.versions")
        elif part.startswith("<"):
            upper = parse_version(part[1:], name="Quirk.versions")
        elif part:
            raise UsageError(f"Quirk.versions: expected '>=A', '<B' or '>=A,<B', got {spec!r}")
    return lower, upper


DIALECT_TOOL_NOT_OFFERED = AnswerRule(
    "dialect.answer.tool-not-offered",
    "dialect",
    "tool_offered",
    "A tool call naming a tool the request's `tools` does not hold (a typo), or any tool call when the request "
    "offers none, on an OpenAI-compatible host.",
    PLAIN_IMPOSSIBILITY,
)


class ChatDialect(OpenAIChatWire):
    """A host whose Chat Completions differ from OpenAI's: its quirks, as data, rendered and enforced.

    Subclass it with a `name` (the dialect's provider id), its `quirks`, the `addresses` its
    server answers at by default, its public `hosts` (for `stub.intercept()`), and a `shaped`
    that turns the active quirks into a `ChatShape`. Give an instance to `ScriptTransport(dialect=...)`
    (or `wires=[...]`): it then answers every `POST …/chat/completions`, whatever the host.

    Args:
        version: The host's release to render (`"0.20.4"`), for a dialect whose quirks changed
            between releases; None: the newest.

    Raises:
        UsageError: A version for a dialect whose quirks are not versioned, or one that is not a
            release number.

    """

    quirks: ClassVar[Sequence[Quirk]] = ()
    """Every way it differs from OpenAI's Chat Completions, each with its source."""
    own_fields: ClassVar[tuple[str, ...]] = ()  # its bodies are Chat Completions': it owns no field of its own
    unknown_field: ClassVar[str | None] = None  # these servers take fields they do not know: no refusal of them
    field_types: ClassVar[Mapping[str, tuple[str, ...]]] = {}  # no `any.field-type` refusal in OpenAI's words
    hosts: ClassVar[tuple[str, ...]] = ()
    rules: ClassVar[Sequence[Rule]] = ()
    answer_rules: ClassVar[Sequence[AnswerRule]] = (DIALECT_TOOL_NOT_OFFERED,)
    """What a turn is held to: by default only that its tool calls name tools the request offers (a host
    guarantees less than OpenAI: a dialect that documents more declares it)."""
    answer_fields: ClassVar[frozenset[str]] = frozenset()
    caching: ClassVar[Caching] = Caching()
    """No prompt caching is modelled for a host (its rules are its own, not OpenAI's): a dialect may declare some."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "rules" not in cls.__dict__:  # its refusals' rules, unless it declares its rules itself
            cls.rules = tuple(q.rule for q in cls.quirks if q.rule is not None)

    def __init__(self, version: str | None = None) -> None:
        parsed = None
        if version is not None:
            if not any(q.versions for q in self.quirks):
                raise UsageError(
                    f"dialect {self.name!r}: its quirks are not versioned (a hosted API has one current "
                    f"behaviour), so it takes no version; got {version!r}"
                )
            parsed = parse_version(version, name=f"dialect {self.name!r} version")
        self.version = version
        """The release it renders (None: the newest)."""
        newest = parsed is None and self.quirks is type(self).quirks and isinstance(self.quirks, tuple)
        self.active: frozenset[str] = _newest(type(self)) if newest else _active(self.quirks, parsed)
        """The ids of the quirks that hold for its version."""
        self.shape = self.shaped(self.active)

    def shaped(self, active: frozenset[str]) -> ChatShape | None:
        """How its answers differ from OpenAI's, for the quirks in `active` (None: they do not)."""
        return None

    def check(self, record: RecordedRequest, *, skip: frozenset[str]) -> Violation | None:
        """Its refusals (`quirks` of side `refusal`), in order: the first it breaks, or None."""
        body = record.body
        if not isinstance(body, dict):
            return None
        for quirk in self.quirks:
            rule = quirk.rule
            if rule is None or rule.id in skip or quirk.id not in self.active:
                continue
            violation = self.refuse(rule, body)
            if violation is not None:
                return violation
        return None

    def refuse(self, rule: Rule, body: dict[str, Any]) -> Violation | None:
        """Whether `body` breaks `rule` (one of its refusal quirks' rules), as a violation; None: it does not."""
        return None

    @classmethod
    def quirk(cls, quirk_id: str) -> Quirk:
        """One of its quirks by id.

        Raises:
            UsageError: No quirk of it has that id (the message names the closest).

        """
        for quirk in cls.quirks:
            if quirk.id == quirk_id:
                return quirk
        ids = [q.id for q in cls.quirks]
        raise UsageError(f"the {cls.name} dialect has no quirk {quirk_id!r}{did_you_mean(quirk_id, ids)}")
