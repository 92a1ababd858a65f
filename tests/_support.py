"""Client factories for tests: the real SDKs over a ScriptTransport, on the HTTP library each SDK uses."""

from __future__ import annotations

import importlib.util
import threading
import time
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import anthropic
import pytest
from hypothesis import settings
from hypothesis import strategies as st

ANTHROPIC_MAJOR = int(anthropic.__version__.split(".")[0])


def _module(name: str) -> ModuleType | None:
    if importlib.util.find_spec(name) is None:
        return None
    return importlib.import_module(name)


httpx = _module("httpx")
httpx2 = _module("httpx2")

# anthropic >= 1 runs on httpx2 (and rejects httpx objects); 0.x runs on httpx.
ANTHROPIC_HX: ModuleType = httpx2 if ANTHROPIC_MAJOR >= 1 else httpx  # type: ignore[assignment]
STACKS: list[ModuleType] = [m for m in (httpx2, httpx) if m is not None]


SAMPLE_TURNS: dict[str, dict[str, Any]] = {
    "text": {"text": "The quick brown fox jumps over the lazy dog."},
    "empty": {},
    "empty-text": {"text": ""},
    "tool": {"text": "Filing a card.", "tool": {"name": "create_card", "input": {"title": "x", "tags": ["a", "b"]}}},
    "tool-only": {"tool": {"name": "lookup", "input": {}, "id": "call_fixed"}},
    "thinking": {"thinking": "Let me think about this carefully.", "text": "Answer."},
    "parallel": {
        "thinking": "Two lookups.",
        "text": "Looking both up.",
        "tools": [
            {"name": "weather", "input": {"city": "Paris", "nested": {"deep": [1, 2.5, None, True]}}},
            {"name": "weather", "input": {"city": "Zürich ☃"}},
        ],
    },
    "usage": {
        "text": "Counted.",
        "usage": {
            "input_tokens": 123,
            "output_tokens": 45,
            "cache_read_input_tokens": 6,
            "cache_creation_input_tokens": 7,
        },
    },
}
"""One turn of every shape, shared by the per-wire exactness tests."""

TOOL_NAMES = ("get", "a", "b", "f", "lookup", "create_card", "weather")
"""The tools the tests' requests offer: every name their scripted tool calls use (a real API calls only
the tools its request offers)."""
_ANY_INPUT: dict[str, Any] = {"type": "object"}


def anthropic_tools(names: Sequence[str] = TOOL_NAMES) -> list[dict[str, Any]]:
    """The Messages `tools` offering `names`, any input."""
    return [{"name": name, "input_schema": _ANY_INPUT} for name in names]


def chat_tools(names: Sequence[str] = TOOL_NAMES) -> list[dict[str, Any]]:
    """The Chat Completions `tools` offering `names`, any arguments."""
    return [{"type": "function", "function": {"name": name, "parameters": _ANY_INPUT}} for name in names]


def responses_tools(names: Sequence[str] = TOOL_NAMES) -> list[dict[str, Any]]:
    """The Responses `tools` offering `names`, any arguments."""
    return [{"type": "function", "name": name, "parameters": _ANY_INPUT} for name in names]


def gemini_tools(names: Sequence[str] = TOOL_NAMES) -> list[dict[str, Any]]:
    """The generateContent `tools` declaring `names`, any arguments."""
    return [{"functionDeclarations": [{"name": name} for name in names]}]


def anthropic_client(stub: Any, *, is_async: bool = False, **kwargs: Any) -> Any:
    """A real anthropic client whose HTTP client carries `stub`."""
    kwargs.setdefault("api_key", "test-key")
    if is_async:
        return anthropic.AsyncAnthropic(http_client=ANTHROPIC_HX.AsyncClient(transport=stub), **kwargs)
    return anthropic.Anthropic(http_client=ANTHROPIC_HX.Client(transport=stub), **kwargs)


def openai_client(stub: Any, *, is_async: bool = False, hx: ModuleType | None = None, **kwargs: Any) -> Any:
    """A real openai client whose HTTP client (httpx2 for openai >= 3, else httpx) carries `stub`."""
    import openai

    if hx is None:
        hx = httpx2 if int(openai.__version__.split(".")[0]) >= 3 else httpx
    assert hx is not None
    kwargs.setdefault("api_key", "test-key")
    if is_async:
        return openai.AsyncOpenAI(http_client=hx.AsyncClient(transport=stub), **kwargs)
    return openai.OpenAI(http_client=hx.Client(transport=stub), **kwargs)


def examples(in_ci: int) -> int:
    """A property test's `max_examples`: `in_ci` under hypothesis' `ci` profile, fewer under the quick default.

    The profiles (conftest.py) set `max_examples` for a test of average cost, 100 in `ci` as hypothesis' own
    default; a test states what it runs in CI and runs the same fraction of it elsewhere.
    """
    return max(1, in_ci * settings().max_examples // 100)


def odd_bodies(vocabulary: Sequence[str], fields: Sequence[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Any JSON object as a request body: top-level keys from `vocabulary` and `fields`, values any
    JSON whose object keys are mostly `vocabulary` words (so the wire's parser meets them in odd places)."""
    json_values = st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=5),
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(st.sampled_from(list(vocabulary)) | st.text(max_size=3), inner, max_size=5)
        ),
        max_leaves=20,
    )
    return st.dictionaries(st.sampled_from([*vocabulary, *fields]), json_values)


def no_aws_environment(monkeypatch: Any, tmp_path: Any) -> None:
    """No real AWS credentials, config or instance metadata, and no network: botocore finds only what a test gives."""
    import os
    import socket

    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"a test touched the network: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def thread_sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Observe (not replace) `time.sleep` in the calling thread: the seconds each call asked for.

    Only this thread's: another test's background thread (openai-agents' trace exporter sleeps
    0.2 s) may still run on the same worker, and its sleeps are not the SDK's retries.
    """
    slept: list[float] = []
    real_sleep = time.sleep
    me = threading.get_ident()

    def sleep(seconds: float) -> None:
        if threading.get_ident() == me:
            slept.append(seconds)
        real_sleep(seconds)

    monkeypatch.setattr(time, "sleep", sleep)
    return slept
