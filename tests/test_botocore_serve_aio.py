"""An aiobotocore bedrock-runtime client served in-process through the same `before-send` hook.

aiobotocore pins botocore releases that the `bedrock` group's boto3 does not match, so these run where
aiobotocore is installed (its own environment) and are skipped elsewhere.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterable, Mapping
from typing import Any

import pytest

from wirescript import _botocore
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


def run(server: Canned, call: Any, **config: Any) -> Any:
    async def main() -> Any:
        session = aio_session.get_session()
        async with session.create_client(
            "bedrock-runtime",
            region_name="us-east-1",
            aws_access_key_id="AKIDTEST",
            aws_secret_access_key="test-secret",
            config=botocore_config.Config(**config) if config else None,
        ) as client:
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
