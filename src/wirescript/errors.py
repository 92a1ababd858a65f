"""The exceptions wirescript raises.

```
WirescriptError
 ├── ScriptError (ValueError)        a script, turn or script file is malformed; raised at construction
 ├── StreamValidationError (ValueError)  a hand-written SSE stream breaks the provider's envelope
 ├── WaitTimeoutError (TimeoutError)  `wait_for_requests` gave up waiting (alias: HoldTimeoutError)
 ├── NetworkBlockedError (ConnectionError)  the fixture's network guard refused a connection
 └── UsageError (TypeError)           the API was called in a way it does not support

UncheckedStubWarning (UserWarning)    a stub with unused turns was collected and nothing ever checked it
```

Problems found while serving a request (a script that ran out, an endpoint no wire knows, a
held request never released) are *not* raised from the transport: the provider SDKs wrap any
exception from a transport into a retried "Connection error.", which hides it. They are answered
with a non-retryable error response instead, and recorded on the stub (`stub.problems`).
"""

from __future__ import annotations

__all__ = [
    "HoldTimeoutError",
    "NetworkBlockedError",
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


HoldTimeoutError = WaitTimeoutError
"""The former name of `WaitTimeoutError` (it is raised by `wait_for_requests`, not by a hold)."""


class UsageError(WirescriptError, TypeError):
    """The library was used in a way it does not support; the message says what to do instead."""


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
    """A `ScriptTransport` with scripted turns no request consumed was garbage collected, and nothing checked it.

    No `stub.check()` and no pytest fixture looked at it, so whatever went wrong (a client that
    never reached it, a script the app stopped short of) passed in silence. Call `stub.check()`
    when the app is done, or build the stub in a test that uses the `wirescript` fixture.
    """
