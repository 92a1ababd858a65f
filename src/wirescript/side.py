"""`SideScript`: what the side endpoints answer (token counts, embeddings, model listings), and how fast jobs run.

Side endpoints never consume a generation turn. Without a side script they answer
deterministically from the request; a side script overrides what it names::

    stub = ScriptTransport(["Hi"], side={"count_tokens": 42, "embeddings": {"cat": [1.0, 0.0]}, "models": ["m-1"]})

In a script file (or a mapping script) the same object is the top-level `"$side"` entry.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ._clock import duration_seconds
from ._text import did_you_mean
from .errors import ScriptError, UsageError

__all__ = ["SIDE_KEY", "JobPace", "SideScript", "parse_side"]

SIDE_KEY = "$side"
"""The key of a mapping script (and of a script file) that holds its `SideScript`."""


class JobPace(BaseModel):
    """How fast the stub's background responses and batches run (`SideScript.jobs`).

    A job ends at its `polls`-th retrieve (the SDK's `retrieve`/`get`), or once `after` has passed
    on the stub's clock since it was created (`stub.clock.advance(...)`), whichever comes first;
    before that it shows its API's intermediate states in turn (`queued`, `in_progress`, …). None
    turns either way off; with both off a job runs only when its API's own limit lets it expire.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built when first validated

    polls: int | None = Field(default=2, ge=1, strict=True)
    """The retrieve at which a job ends (2: the first shows it running, the second ended); None: never by polls."""
    after: float | None = Field(default=60.0)
    """The seconds on the stub's clock after which a job ends (a duration string too: `"90s"`, `"6m"`);
    None: never by the clock."""

    @field_validator("after", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> Any:
        if value is None:
            return None
        try:
            return duration_seconds(value, "after")
        except UsageError as exc:
            raise ValueError(str(exc).removeprefix("after: ")) from None


class SideScript(BaseModel):
    """Scripted answers of the side endpoints; whatever it leaves out is answered deterministically."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built when first validated

    count_tokens: int | list[int] | None = Field(default=None)
    """The token count every count request gets (an int), or one count per request in arrival order
    (a list; a count request past its end is a problem). Unset: counted from the request."""
    embeddings: dict[str, list[float]] = Field(default_factory=dict)
    """A vector per input text, sent as given (in base64 too, when the SDK asks); every other text
    gets its deterministic unit vector."""
    models: list[str] = Field(default_factory=list)
    """Model ids every model listing includes, after the models the script's queues name."""
    jobs: JobPace = Field(default_factory=JobPace)
    """How fast background responses and batches run: `{"polls": 2, "after": "1m"}` by default
    (see `JobPace` and `docs/async-surfaces.md`)."""

    @field_validator("count_tokens")
    @classmethod
    def _counts(cls, value: int | list[int] | None) -> int | list[int] | None:
        counts = [value] if isinstance(value, int) else (value or [])
        if any(c < 0 for c in counts):
            raise ValueError("token counts are >= 0")
        return value

    @field_validator("embeddings")
    @classmethod
    def _vectors(cls, value: dict[str, list[float]]) -> dict[str, list[float]]:
        for text, vector in value.items():
            if not vector:
                raise ValueError(f"the vector for {text!r} is empty")
            if not all(math.isfinite(x) for x in vector):
                raise ValueError(f"the vector for {text!r} holds a value that is not a finite number")
        return value


def parse_side(value: Any, where: str = "side") -> SideScript:
    """A validated `SideScript` from a mapping (or a `SideScript`).

    Raises:
        ScriptError: Naming the field and what was expected.

    """
    if isinstance(value, SideScript):
        return value
    if not isinstance(value, Mapping):
        raise ScriptError(
            f"{where}: expected a mapping with 'count_tokens', 'embeddings', 'models' or 'jobs', "
            f"got {type(value).__name__}"
        )
    try:
        return SideScript.model_validate(dict(value))
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = error["loc"]
        if loc and loc[0] == "count_tokens" and error["type"] != "value_error":  # a union: name both forms
            got = value.get("count_tokens")
            raise ScriptError(
                f"invalid {where}: field 'count_tokens': expected a token count (an int >= 0) or a list of them, "
                f"got {type(got).__name__} {got!r}"
            ) from None
        field = ".".join(str(part) for part in loc)
        if error["type"] == "extra_forbidden":
            known = tuple(JobPace.model_fields if loc[0] == "jobs" else SideScript.model_fields)
            raise ScriptError(
                f"invalid {where}: unknown field {field!r} (expected one of: {', '.join(known)})"
                f"{did_you_mean(str(loc[-1]), known)}"
            ) from None
        message = error["msg"].removeprefix("Value error, ")  # a validator's own words, as it wrote them
        raise ScriptError(f"invalid {where}: field {field!r}: {message}") from None
