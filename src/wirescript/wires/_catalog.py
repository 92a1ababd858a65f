"""The shape of the error catalog: an `ErrorCase`, and what it knows of the SDK that raises it (`SDK`).

Each provider's package holds its cases (`anthropic/errors.py`, …); `wirescript.catalog` is the
public door to them. Each `ErrorCase` holds the turn that produces the error (`case.turn`, or `case.turns()` for one
turn per attempt of the SDK's retry loop) and the exception class the installed SDK raises for it
(`case.exception`), resolved when first asked for: anthropic 2.x and 0.x raise different classes
for several statuses, and the SDK is imported only then.

In-stream errors (an error event inside a 200 stream, after the first text) are cases of their
own, with `in_stream=True`; they only happen to streaming requests.
"""

from __future__ import annotations

import builtins
import importlib
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from ..script import ErrorSpec, Fault, StreamError, Turn

__all__ = ["SDK", "ErrorCase", "Provider", "case"]

Provider: TypeAlias = Literal["anthropic", "openai", "gemini"]
"""A provider with an error catalog."""

_PARTIAL_TEXT = "Partial answer"
"""What an in-stream error's turn streams before the error."""


@dataclass(frozen=True, slots=True)
class SDK:
    """What the catalog knows of the SDK that speaks one provider's API: its exceptions and its retry loop."""

    provider: Provider
    module: str
    """The module holding its exception classes (`google.genai.errors`)."""
    package: str
    """Its distribution, for the hint when it is not installed (`google-genai`)."""
    retried: frozenset[int]
    """The statuses its retry loop retries: its wire's `retryable`."""
    retries: int
    """Its documented default `max_retries` (google-genai: 0, it retries only when `retry_options` are given)."""
    reads_retries: bool
    """Whether the installed SDK's `DEFAULT_MAX_RETRIES` says better than `retries`."""
    stream_error_after: int
    """How many stream events go out before an in-stream error: the first text delta has arrived."""

    def default_retries(self) -> int:
        """The installed SDK's default `max_retries` (`DEFAULT_MAX_RETRIES`), or the documented one without it."""
        if not self.reads_retries:
            return self.retries
        try:
            found = getattr(importlib.import_module(self.module), "DEFAULT_MAX_RETRIES", None)
        except ImportError:
            found = None
        return found if isinstance(found, int) and not isinstance(found, bool) else self.retries


@dataclass(frozen=True, slots=True)
class ErrorCase:
    """One documented provider error: the turn that produces it and the exception the SDK raises.

    Use `case.turn` in a script (or `case.turns()` when the SDK retries) and compare the exception
    the app saw with `case.exception`, exactly: `type(exc) is case.exception`.
    """

    id: str
    """A readable id, `<status>-<type or code>` (`429-rate_limit_error`), `stream-<type>` in a stream."""
    provider: Provider
    """The provider whose documented error this is."""
    status: int
    """The HTTP status of the response (200 for an in-stream error)."""
    type: str
    """The provider's error type (Gemini: the `google.rpc` status name)."""
    message: str
    """The error message sent."""
    code: str | None = None
    """The provider's error code, when the error has one (OpenAI `code`, e.g. `invalid_api_key`)."""
    in_stream: bool = False
    """The error arrives as an event inside a 200 stream, after the first text: streaming requests only."""
    _names: tuple[str, str] = field(default=("", ""), repr=False, compare=False)
    # The exception class names: for a current SDK, and for one before 1.0 (anthropic 0.x).
    _sdk: SDK | None = field(default=None, repr=False, compare=False)

    @property
    def turn(self) -> Turn:
        """The scripted turn that produces this error."""
        if self.in_stream:
            error = StreamError(type=self.type, message=self.message, after=self._known.stream_error_after)
            return Turn(text=_PARTIAL_TEXT, fault=Fault(stream_error=error))
        return Turn(error=ErrorSpec(status=self.status, type=self.type, message=self.message, code=self.code))

    @property
    def retried(self) -> bool:
        """Whether the SDK's retry loop retries this error (in-stream errors never are)."""
        return not self.in_stream and self.status in self._known.retried

    def attempts(self, *, max_retries: int | None = None) -> int:
        """How many requests the SDK sends before it raises this error.

        Args:
            max_retries: The client's retry setting; None for the installed SDK's default (its
                `DEFAULT_MAX_RETRIES`: 2 for anthropic and openai today; google-genai: no retries
                unless `retry_options` are given, then pass `attempts - 1`).

        """
        retries = self._known.default_retries() if max_retries is None else max_retries
        if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
            raise ValueError(f"{self.id}: max_retries must be a non-negative int, got {max_retries!r}")
        return 1 + retries if self.retried else 1

    def turns(self, *, max_retries: int | None = None) -> list[Turn]:
        """One error turn per request the SDK sends (see `attempts`), so the error reaches the app.

        With `max_retries=None` the count matches the installed SDK's default retry loop (anthropic
        and openai: 2 retries, so 3 turns for a retried status; google-genai: none). An app whose
        client sets its own `max_retries` passes the same value here. Scripting `case.turn` once
        instead leaves the SDK's retries unscripted: each is then a problem that says it is a retry.
        """
        return [self.turn] * self.attempts(max_retries=max_retries)

    @property
    def exception(self) -> builtins.type[Exception]:
        """The exception class the installed SDK raises for this error (imports the SDK).

        Raises:
            ImportError: The provider's SDK is not installed.

        """
        module_name = self._known.module
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ImportError(
                f"wirescript: error case {self.id!r} needs the {self.provider} SDK: pip install {self._known.package}"
            ) from exc
        current, legacy = self._names
        name = legacy if _major(module) < 1 else current
        found = getattr(module, name)
        if not (isinstance(found, type) and issubclass(found, Exception)):  # pragma: no cover - SDK changed
            raise TypeError(f"{module_name}.{name} is not an exception class")
        return found

    @property
    def _known(self) -> SDK:
        if self._sdk is None:  # pragma: no cover - every case is made by `case`
            raise TypeError(f"error case {self.id!r} was not made by a provider's catalog")
        return self._sdk

    def __str__(self) -> str:
        return self.id


def _major(module: object) -> int:
    version = str(getattr(module, "__version__", "0"))
    return int(version.split(".")[0])


def case(
    sdk: SDK,
    status: int,
    type: str,
    message: str,
    exception: str,
    *,
    legacy: str | None = None,
    code: str | None = None,
    in_stream: bool = False,
) -> ErrorCase:
    """One case of `sdk`'s provider: `exception` names the class it raises, `legacy` the one before 1.0."""
    head = "stream" if in_stream else str(status)
    return ErrorCase(
        id=f"{head}-{code or type}",
        provider=sdk.provider,
        status=200 if in_stream else status,
        type=type,
        message=message,
        code=code,
        in_stream=in_stream,
        _names=(exception, legacy or exception),
        _sdk=sdk,
    )
