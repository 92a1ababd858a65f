"""Checked by `mypy --strict` in CI: the documented usage type-checks."""

import anthropic
import httpx
import httpx2

from wirescript import RecordedRequest, ScriptBuilder, ScriptTransport, StubFactory, Turn, load_script


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


def test_with_the_fixture(wirescript: StubFactory) -> None:
    made: ScriptTransport = wirescript(["Hello"])
    assert made.overflow == 0
