"""wirescript: a scripted LLM provider on the HTTP wire, for tests that run the real SDK.

`ScriptTransport` is an httpx/httpx2 transport. Give it to the provider SDK's HTTP client and
the SDK, its streaming decoder, its retry loop and the app run for real, against scripted turns.
"""

from __future__ import annotations

from .errors import HoldTimeoutError, ScriptError, StreamValidationError, UsageError, WirescriptError
from .recorded import RecordedRequest, Secret
from .script import ErrorSpec, Fault, StreamError, ToolCall, Turn, Usage
from .transport import PendingTurn, ScriptTransport
from .validate import validate_anthropic_stream

__version__ = "0.1.0"

__all__ = [
    "ErrorSpec",
    "Fault",
    "HoldTimeoutError",
    "PendingTurn",
    "RecordedRequest",
    "ScriptError",
    "ScriptTransport",
    "Secret",
    "StreamError",
    "StreamValidationError",
    "ToolCall",
    "Turn",
    "Usage",
    "UsageError",
    "WirescriptError",
    "__version__",
    "validate_anthropic_stream",
]
