"""An aiobotocore bedrock-runtime client served in-process through the same `before-send` hook.

aiobotocore pins botocore releases that the `bedrock` group's boto3 does not match, so these run where
aiobotocore is installed (its own environment) and are skipped elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import Iterable, Mapping
from typing import Any

import pytest

from _blocked import BLOCK_HTTPX
from wirescript import ScriptTransport
from wirescript._adapters import botocore as _botocore
from wirescript.wires.bedrock import eventstream as es

aio_session = pytest.importorskip("aiobotocore.session")
botocore_config = pytest.importorskip("botocore.config")
botocore_exceptions = pytest.importorskip("botocore.exceptions")

USER = [{"role": "user", "content": [{"text": "hi"}]}]
CONVERSE = {
    "output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}},
    "stopReason": "end_turn",
    "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
    "metrics": {"latencyMs": 1},
}


@pytest.fixture(autouse=True)
def _no_aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"a test touched the network: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)


class Canned:
    def __init__(self, *answers: tuple[int, Mapping[str, str], Iterable[bytes]]) -> None:
        self.answers = list(answers)
        self.urls: list[str] = []

    def serve(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Any:
        self.urls.append(url)
        return self.answers.pop(0)


def throttled() -> tuple[int, Mapping[str, str], Iterable[bytes]]:
    headers = {"Content-Type": "application/json", "x-amzn-errortype": "ThrottlingException"}
    return 429, headers, [b'{"message":"slow down"}']


def run(server: Canned | ScriptTransport, call: Any, **config: Any) -> Any:
    """`call(client)` on an aiobotocore bedrock-runtime client served by `server` (a stub: `stub.attach`)."""

    async def main() -> Any:
        session = aio_session.get_session()
        async with session.create_client(
            "bedrock-runtime",
            region_name="us-east-1",
            aws_access_key_id="AKIDTEST",
            aws_secret_access_key="test-secret",
            config=botocore_config.Config(**config) if config else None,
        ) as client:
            if isinstance(server, ScriptTransport):
                server.attach(client)
            else:
                _botocore.attach(client, server)
            return await call(client)

    return asyncio.run(main())


def test_converse_and_invoke_model() -> None:
    raw = json.dumps({"type": "message"}).encode()
    server = Canned(
        (200, {"Content-Type": "application/json"}, [json.dumps(CONVERSE).encode()]),
        (200, {"Content-Type": "application/json", "Content-Length": str(len(raw))}, [raw[:4], raw[4:]]),
    )

    async def call(client: Any) -> Any:
        answer = await client.converse(modelId="m", messages=USER)
        body = await (await client.invoke_model(modelId="m", body=b"{}"))["body"].read()
        return answer, body

    answer, body = run(server, call)
    assert answer["output"] == CONVERSE["output"]
    assert body == raw
    assert [u.rsplit("/", 1)[1] for u in server.urls] == ["converse", "invoke"]


def test_converse_stream_and_an_exception_event() -> None:
    frames = [
        es.event("messageStart", {"role": "assistant"}),
        es.event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "hi"}}),
        es.exception("throttlingException", {"message": "slow"}),
    ]
    server = Canned((200, {"Content-Type": es.CONTENT_TYPE}, frames))

    async def call(client: Any) -> Any:
        seen: list[Any] = []
        response = await client.converse_stream(modelId="m", messages=USER)
        try:
            async for event in response["stream"]:
                seen.append(event)
        except botocore_exceptions.EventStreamError as error:
            return seen, error.response["Error"]
        raise AssertionError("the exception event did not raise")

    seen, error = run(server, call)
    assert seen == [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockDelta": {"delta": {"text": "hi"}, "contentBlockIndex": 0}},
    ]
    assert error == {"Code": "throttlingException", "Message": "slow"}


@pytest.mark.parametrize("mode", ["legacy", "standard", "adaptive"])
def test_retries_run_without_sleeping(mode: str) -> None:
    ok = (200, {"Content-Type": "application/json"}, [json.dumps(CONVERSE).encode()])
    server = Canned(ok, throttled(), throttled(), ok)

    async def call(client: Any) -> Any:
        await client.converse(modelId="m", messages=USER)  # a first call, so that lazy loading is not timed
        started = time.perf_counter()
        answer = await client.converse(modelId="m", messages=USER)
        return answer, time.perf_counter() - started

    answer, elapsed = run(server, call, retries={"mode": mode, "total_max_attempts": 3})
    assert answer["ResponseMetadata"]["RetryAttempts"] == 2
    assert len(server.urls) == 4
    assert elapsed < 0.5, f"{mode} waited: {elapsed:.2f}s"


# A stub serving an aiobotocore client: the same core as every other client, awaited on the client's loop.

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"


async def _ticking(work: Any) -> tuple[Any, int]:
    """`work`'s result, and how often a task of the same loop ran meanwhile (every 10 ms when nothing blocks)."""
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticker = asyncio.ensure_future(tick())
    try:
        return await work, ticks
    finally:
        ticker.cancel()


def test_a_stub_serves_converse_and_converse_stream() -> None:
    stub = ScriptTransport(["Hello.", "Streamed."])

    async def call(client: Any) -> Any:
        answer = await client.converse(modelId=MODEL, messages=USER)
        response = await client.converse_stream(modelId=MODEL, messages=USER)
        texts = [e["contentBlockDelta"]["delta"]["text"] async for e in response["stream"] if "contentBlockDelta" in e]
        return answer["output"]["message"]["content"][0]["text"], "".join(texts)

    assert run(stub, call) == ("Hello.", "Streamed.")
    assert [r.provider for r in stub.requests] == ["bedrock", "bedrock"]
    stub.check()


def test_a_held_request_waits_without_blocking_the_loop_and_is_released_from_it() -> None:
    stub = ScriptTransport(["Held."], hold_timeout=3)

    async def call(client: Any) -> Any:
        stub.hold()
        started = time.perf_counter()
        pending = asyncio.ensure_future(client.converse(modelId=MODEL, messages=USER))
        await stub.wait_for_requests_async(1, timeout=2)  # only runs if the held request does not block the loop
        assert not pending.done()
        stub.release()
        answer = await pending
        return answer["output"]["message"]["content"][0]["text"], time.perf_counter() - started

    text, elapsed = run(stub, call)
    assert text == "Held."
    assert elapsed < 2, f"the held request blocked the loop until hold_timeout ({elapsed:.1f} s)"
    assert stub.problems == []


def test_a_held_request_cancelled_is_abandoned() -> None:
    stub = ScriptTransport(["Held."], hold_timeout=3)

    async def call(client: Any) -> None:
        stub.hold()
        pending = asyncio.ensure_future(client.converse(modelId=MODEL, messages=USER))
        await stub.wait_for_requests_async(1, timeout=2)
        pending.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pending
        stub.release()

    run(stub, call)
    assert [p.kind for p in stub.problems] == ["abandoned"]


@pytest.mark.parametrize("fault", [{"delay": 0.05}, {"first_byte_delay": 0.3}], ids=["delay", "first_byte_delay"])
def test_a_faults_delays_are_awaited_not_slept_on_the_loop(fault: dict[str, Any]) -> None:
    stub = ScriptTransport([{"text": "one two three four five", "fault": fault}])

    async def call(client: Any) -> Any:
        async def stream() -> list[Any]:
            response = await client.converse_stream(modelId=MODEL, messages=USER)
            return [event async for event in response["stream"]]

        return await _ticking(stream())

    events, ticks = run(stub, call)
    assert any("messageStop" in event for event in events)
    assert ticks >= 10, f"the loop ran {ticks} times while the stream waited: the delay blocked it"
    stub.check()


def test_a_disconnect_before_the_response_is_retried_and_one_mid_stream_raises() -> None:
    stub = ScriptTransport(
        [
            {"text": "x", "fault": {"disconnect_after": 0}},
            "Retried.",
            {"text": "a b c", "fault": {"disconnect_after": 2}},
        ]
    )

    async def call(client: Any) -> Any:
        answer = await client.converse(modelId=MODEL, messages=USER)
        response = await client.converse_stream(modelId=MODEL, messages=USER)
        seen = []
        try:
            async for event in response["stream"]:
                seen.append(event)
        except Exception as error:  # what aiohttp's dropped connection raises
            return answer["output"]["message"]["content"][0]["text"], seen, error
        raise AssertionError("the scripted disconnect did not raise")

    text, seen, error = run(stub, call, retries={"mode": "standard", "total_max_attempts": 2})
    assert text == "Retried."
    assert len(seen) == 2
    assert "scripted disconnect after 2 events" in str(error)
    assert stub.requests[1].retry_count == 1
    stub.check()


def test_a_stream_left_early_is_unfinished() -> None:
    stub = ScriptTransport([{"text": "word " * 5_000}])

    async def call(client: Any) -> None:
        response = await client.converse_stream(modelId=MODEL, messages=USER)
        async for _event in response["stream"]:
            break

    run(stub, call)
    with pytest.raises(AssertionError, match="unfinished_stream"):
        stub.check()


_NO_HTTPX = (
    BLOCK_HTTPX
    + """
import asyncio
from aiobotocore.session import get_session
from wirescript import ScriptTransport

async def main():
    stub = ScriptTransport(["Hello without httpx."])
    async with get_session().create_client(
        "bedrock-runtime", region_name="us-east-1", aws_access_key_id="AKIDTEST", aws_secret_access_key="s"
    ) as client:
        stub.attach(client)
        stub.hold()
        pending = asyncio.ensure_future(
            client.converse(modelId="m", messages=[{"role": "user", "content": [{"text": "hi"}]}])
        )
        await stub.wait_for_requests_async(1)
        stub.release()
        answer = await pending
    print(answer["output"]["message"]["content"][0]["text"])
    assert not {"httpx", "httpx2", "anyio"} & set(sys.modules), sorted(sys.modules)

asyncio.run(main())
"""
)


def test_an_aiobotocore_client_is_served_and_held_without_httpx_or_anyio(tmp_path: Any) -> None:
    import os
    import subprocess
    import sys

    env = {"AWS_CONFIG_FILE": str(tmp_path / "none"), "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none")}
    env.update({name: value for name, value in os.environ.items() if name in ("PATH", "PYTHONPATH")})
    result = subprocess.run([sys.executable, "-c", _NO_HTTPX], capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Hello without httpx."
