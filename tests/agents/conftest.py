"""The agent frameworks are an optional dependency group: skip without them, unless CI requires them.

With `WIRESCRIPT_REQUIRE_AGENTS=1` (CI sets it) a missing framework fails every test that needs
it, so a broken install cannot turn the framework tests into a quiet row of skips.
"""

from __future__ import annotations

import importlib
import os
import socket
import sys
from types import ModuleType
from typing import Any

import pytest

REQUIRE_ENV = "WIRESCRIPT_REQUIRE_AGENTS"


def require(module: str, distribution: str) -> ModuleType:
    """Import a framework; skip the test when it is missing, or fail when `WIRESCRIPT_REQUIRE_AGENTS=1`."""
    try:
        imported = importlib.import_module(module)
    except ImportError as exc:
        problem = str(exc)
    else:
        if getattr(imported, "__file__", None) is not None:
            return imported
        # This very directory is named `agents`: without openai-agents installed, `import agents`
        # finds it as a namespace package instead of failing.
        sys.modules.pop(module, None)
        problem = f"only a directory named {module!r} is on the path, not the package"
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(
            f"{distribution} is not importable ({problem}), and {REQUIRE_ENV}=1 requires the agent frameworks: "
            "install the 'agents' dependency group (uv sync --group agents)",
            pytrace=False,
        )
    pytest.skip(f"{distribution} is not installed: the framework tests need the 'agents' dependency group")


@pytest.fixture
def pydantic_ai() -> ModuleType:
    """The pydantic-ai package (pydantic-ai-slim)."""
    return require("pydantic_ai", "pydantic-ai-slim")


# The first test to ask for a framework pays its import in its setup (openai-agents: about 3 s with bytecode),
# once per xdist worker; it shows among the slowest setups. The import is what the framework tests run on.
@pytest.fixture
def openai_agents() -> ModuleType:
    """The openai-agents package (`agents`)."""
    return require("agents", "openai-agents")


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any socket connection: the frameworks must talk only to the stub (tracing exports included)."""

    def refuse(self: socket.socket, address: Any, *args: Any) -> None:
        raise AssertionError(f"a framework test tried to reach the network: {address!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
