"""wirescript: a scripted LLM provider on the HTTP wire, for tests that run the real SDK.

`ScriptTransport` is an httpx/httpx2 transport. Give it to the provider SDK's HTTP client and
the SDK, its streaming decoder, its retry loop and the app run for real, against scripted turns.

The public names are imported on first use (PEP 562), so that pytest loading the wirescript
plugin does not import pydantic and the models: add a new name to both `_EXPORTS` and the
`TYPE_CHECKING` block.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._clock import Clock
    from ._core.bill import Bill, BillRow
    from .builder import ScriptBuilder
    from .catalog import ErrorCase, anthropic_errors, gemini_errors, openai_errors
    from .errors import (
        NetworkBlockedError,
        ScriptError,
        StreamValidationError,
        UsageError,
        WaitTimeoutError,
        WirescriptError,
    )
    from .files import load_script, script_json_schema
    from .intercept import KNOWN_HOSTS, Interception
    from .pytest_plugin import StubFactory
    from .recorded import Problem, ProblemKind, RecordedRequest, Secret
    from .recording import RecordingTransport
    from .script import Citation, ErrorSpec, Fault, ServerTool, StreamError, ToolCall, Turn, Usage
    from .server import ScriptServer
    from .side import JobPace, SideScript
    from .transport import PendingTurn, ScriptTransport
    from .validate import validate_anthropic_stream
    from .wires import Wire, dialects
    from .wires.mcp import MCPScript

__version__ = "0.1.0"

__all__ = [
    "KNOWN_HOSTS",
    "Bill",
    "BillRow",
    "Citation",
    "Clock",
    "ErrorCase",
    "ErrorSpec",
    "Fault",
    "Interception",
    "JobPace",
    "MCPScript",
    "NetworkBlockedError",
    "PendingTurn",
    "Problem",
    "ProblemKind",
    "RecordedRequest",
    "RecordingTransport",
    "ScriptBuilder",
    "ScriptError",
    "ScriptServer",
    "ScriptTransport",
    "Secret",
    "ServerTool",
    "SideScript",
    "StreamError",
    "StreamValidationError",
    "StubFactory",
    "ToolCall",
    "Turn",
    "Usage",
    "UsageError",
    "WaitTimeoutError",
    "Wire",
    "WirescriptError",
    "__version__",
    "anthropic_errors",
    "dialects",
    "gemini_errors",
    "load_script",
    "openai_errors",
    "script_json_schema",
    "validate_anthropic_stream",
]

_EXPORTS = {
    "Bill": "_core.bill",
    "BillRow": "_core.bill",
    "Citation": "script",
    "Clock": "_clock",
    "ErrorCase": "catalog",
    "ErrorSpec": "script",
    "Fault": "script",
    "Interception": "intercept",
    "JobPace": "side",
    "KNOWN_HOSTS": "intercept",
    "MCPScript": "wires.mcp",
    "NetworkBlockedError": "errors",
    "PendingTurn": "transport",
    "Problem": "recorded",
    "ProblemKind": "recorded",
    "RecordedRequest": "recorded",
    "RecordingTransport": "recording",
    "ScriptBuilder": "builder",
    "ScriptError": "errors",
    "ScriptServer": "server",
    "ScriptTransport": "transport",
    "Secret": "recorded",
    "ServerTool": "script",
    "SideScript": "side",
    "StreamError": "script",
    "StreamValidationError": "errors",
    "StubFactory": "pytest_plugin",
    "ToolCall": "script",
    "Turn": "script",
    "Usage": "script",
    "UsageError": "errors",
    "WaitTimeoutError": "errors",
    "Wire": "wires",
    "WirescriptError": "errors",
    "anthropic_errors": "catalog",
    "dialects": "wires",
    "gemini_errors": "catalog",
    "load_script": "files",
    "openai_errors": "catalog",
    "script_json_schema": "files",
    "validate_anthropic_stream": "validate",
}
"""Where each public name lives; imported when first asked for."""


_RENAMED = frozenset({"HoldTimeoutError"})
"""Former names (in `wirescript.errors`), resolved on each use with a `DeprecationWarning`."""


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        if name in _RENAMED:
            from .errors import _renamed

            return _renamed(name, stacklevel=2)
        raise AttributeError(f"module 'wirescript' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
