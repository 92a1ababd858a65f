"""The exceptions wirescript raises.

```
WirescriptError
 ├── ScriptError (ValueError)        a script, turn or script file is malformed; raised at construction
 ├── StreamValidationError (ValueError)  a hand-written SSE stream breaks the provider's envelope
 ├── WaitTimeoutError (TimeoutError)  `wait_for_requests` gave up waiting
 ├── NetworkBlockedError (ConnectionError)  the fixture's network guard refused a connection
 └── UsageError (TypeError)           the API was called in a way it does not support
      └── NotAClientError (also AttributeError)  a stub was passed as an SDK's `http_client`

UncheckedStubWarning (UserWarning)    a stub was left with unused turns, and nothing ever checked it
```

Problems found while serving a request (a script that ran out, an endpoint no wire knows, a
held request never released) are *not* raised from the transport: the provider SDKs wrap any
exception from a transport into a retried "Connection error.", which hides it. They are answered
with a non-retryable error response instead, and recorded on the stub (`stub.problems`).

`HoldTimeoutError`, the name of `WaitTimeoutError` in 0.1.0, still resolves (here and as
`wirescript.HoldTimeoutError`) with a `DeprecationWarning`; it will be removed in 0.3.0.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

__all__ = [
    "NetworkBlockedError",
    "NotAClientError",
    "ScriptError",
    "StreamValidationError",
    "UncheckedStubWarning",
    "UsageError",
    "WaitTimeoutError",
    "WirescriptError",
]


class WirescriptError(Exception):
    """Base class of every exception wirescript raises."""


class ScriptError(WirescriptError, ValueError):
    """A script, a turn or a script file is malformed.

    The message names where (file, turn index, field) and what was expected.
    """


class StreamValidationError(WirescriptError, ValueError):
    """A server-sent-event stream does not follow its provider's envelope."""


class WaitTimeoutError(WirescriptError, TimeoutError):
    """Waiting for requests to arrive at a stub (`wait_for_requests`) took longer than the timeout."""


class UsageError(WirescriptError, TypeError):
    """The library was used in a way it does not support; the message says what to do instead."""


class NotAClientError(UsageError, AttributeError):
    """A stub was passed as an SDK's HTTP client (`http_client=stub`); the message names the client to build.

    The SDKs read their `http_client`'s `timeout` first: the stub's `timeout` raises this. It is an
    `AttributeError` too, so `hasattr(stub, "timeout")` stays False.
    """


class NetworkBlockedError(WirescriptError, ConnectionError):
    """The network guard of the pytest fixture refused a connection or a DNS lookup during a test.

    It is a `ConnectionError`, so HTTP stacks surface it as their connection error; the message
    names the host and port and the ways to give the app the stub instead.
    """

    def __init__(self, message: str, *, host: str | None = None, port: int | None = None) -> None:
        super().__init__(message)
        self.host = host
        """The host name or address the test tried to reach."""
        self.port = port
        """The port, when known."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class UncheckedStubWarning(UserWarning):
    """A `ScriptTransport` still had scripted turns no request consumed, and nothing ever checked it.

    Warned at the teardown of the test that built it (a test without the `wirescript` fixture),
    or, outside a test, when the stub is garbage collected or the interpreter exits. No
    `stub.check()` and no fixture looked at it, so whatever went wrong (a client that never
    reached it, a script the app stopped short of) passed in silence. Call `stub.check()` when the
    app is done, or build the stub in a test that uses the fixture.
    """


if TYPE_CHECKING:
    HoldTimeoutError = WaitTimeoutError  # the 0.1.0 name, deprecated: resolved by `__getattr__` below

_RENAMED = {"HoldTimeoutError": "WaitTimeoutError"}
"""Former names, each resolved with a `DeprecationWarning` (it is raised by `wait_for_requests`, not by a hold)."""


def _renamed(name: str, *, stacklevel: int) -> Any:
    """The object a former name stands for, with a `DeprecationWarning` pointing at the caller's line."""
    new = _RENAMED[name]
    warnings.warn(
        f"wirescript.{name} is deprecated, use wirescript.{new} (the same class); {name} will be removed in 0.3.0",
        DeprecationWarning,
        stacklevel=stacklevel + 1,
    )
    return globals()[new]


def __getattr__(name: str) -> Any:
    if name not in _RENAMED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _renamed(name, stacklevel=2)
