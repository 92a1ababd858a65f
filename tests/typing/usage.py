"""Checked by `mypy --strict` in CI: the documented usage type-checks."""

import anthropic
import httpx
import httpx2

from wirescript import (
    KNOWN_HOSTS,
    Interception,
    NetworkBlockedError,
    RecordedRequest,
    RecordingTransport,
    ScriptBuilder,
    ScriptTransport,
    StubFactory,
    Turn,
    load_script,
)
from wirescript.guard import NetworkGuard


def pick(request: RecordedRequest) -> Turn | None:
    return Turn(text="hi") if request.model else None


stub = ScriptTransport([{"text": "Hello"}, Turn(text="Bye"), "plain"])
client = anthropic.Anthropic(api_key="test", http_client=httpx2.Client(transport=stub))
aclient = anthropic.AsyncAnthropic(api_key="test", http_client=httpx2.AsyncClient(transport=stub))
default = anthropic.Anthropic(api_key="test", http_client=anthropic.DefaultHttpxClient(transport=stub))
legacy = httpx.Client(transport=stub)
alegacy = httpx.AsyncClient(transport=stub)
by_function = ScriptTransport(pick)
by_model = ScriptTransport({"claude-a": ["a"], "*": [{"text": "rest"}]})
count: int = stub.overflow
requests: list[RecordedRequest] = stub.requests

builder_stub: ScriptTransport = ScriptBuilder().says("Hi").calls("f", {"x": 1}).fails(429).build()
loaded = ScriptTransport(load_script("turns.json"))
lenient = ScriptTransport(["x"], strict=False, strict_skip=["anthropic.cache-control-limit"])
skipped: frozenset[str] = lenient.strict_skip
checked: bool = lenient.strict


def test_with_the_fixture(wirescript: StubFactory) -> None:
    made: ScriptTransport = wirescript(["Hello"])
    assert made.overflow == 0
    intercepting: ScriptTransport = wirescript(["Hi"], intercept=True)
    by_hosts: ScriptTransport = wirescript(["Hi"], intercept=["llm.internal"])
    guard: NetworkGuard | None = wirescript.guard
    assert intercepting is not by_hosts
    assert guard is not None


interception: Interception = stub.intercept()
with stub.intercept(hosts=["llm.internal", "*.example.com"]) as opened:
    assert opened.active
    assert opened.routes("api.example.com")
everything = stub.intercept("*")
hosts: frozenset[str] = KNOWN_HOSTS
with NetworkGuard(allowed_hosts=["search.internal"]) as network:
    blocked_hosts: list[str] = [attempt.host for attempt in network.blocked]
failure: ConnectionError = NetworkBlockedError("refused", host="h", port=443)

# Record mode: one RecordingTransport in every client of both stacks, as a stub.
recorder = RecordingTransport("recorded.yaml", upstream=stub)
recording_client = anthropic.Anthropic(api_key="test", http_client=httpx2.Client(transport=recorder))
recording_aclient = httpx2.AsyncClient(transport=recorder)
recording_legacy = httpx.Client(transport=recorder)
recorded_turns: list[Turn] = recorder.turns
