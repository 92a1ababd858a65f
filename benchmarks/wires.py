"""The other wires at 1 and 100 deltas: OpenAI Chat and Responses, Gemini, Bedrock Converse and ConverseStream.

Each SDK's own streaming call (`chat.completions.stream`, `responses.stream`,
`models.generate_content_stream`, boto3's `converse` and `converse_stream`), the events iterated and
the final object taken, against its floor in the same run, interleaved round by round:

* ``floor``: the httpx2 SDKs over an ``httpx2.MockTransport`` serving the status, headers and bytes
  wirescript answered that request with (captured once); boto3 over a bare ``before-send`` handler
  returning an ``AWSResponse`` over the same bytes, so botocore's own parsers do the same work (its
  ``Stubber`` would return the parsed dict and skip them).
* ``floor-copy``: the floor again, the A/A control.
* ``wirescript``: a stub with the round's turns (`ScriptTransport(...)`, `stub.attach(client)` for boto3).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx2

from wirescript import ScriptTransport

from .contenders import Canned, _Capture
from .paired import PairedRow, Side, paired_row, run_paired, timed
from .providers import API_KEY, USER, prose

ONE_TARGET = 1.10
"""Every wire at 1 delta: at most 10% over its floor."""
HUNDRED_TARGET = 1.05
"""Every streamed wire at 100 deltas: at most 5% over its floor."""
SIZES = ((1, 1), (100, 800))
"""(deltas, characters of text): wirescript streams text in pieces of at most 8 characters."""


@dataclass(frozen=True)
class Wire:
    """One SDK call on one wire: how to build its client over an http client (or a boto3 one), and the call."""

    name: str
    client: Callable[[Any], Any]
    """httpx2 client -> SDK client; for boto3, None -> a fresh bedrock-runtime client."""
    call: Callable[[Any], Any]
    """One request; returns what the app would use (compared across contenders in the first round)."""
    boto: bool = False
    streamed: bool = True


def _openai_chat() -> Wire:
    import openai

    messages: Any = [{"role": "user", "content": USER}]

    def call(client: Any) -> Any:
        with client.chat.completions.stream(model="gpt-bench", messages=messages) as stream:
            return stream.get_final_completion().choices[0].message.content

    return Wire("OpenAI Chat", lambda http: openai.OpenAI(api_key=API_KEY, max_retries=0, http_client=http), call)


def _openai_responses() -> Wire:
    import openai

    def call(client: Any) -> Any:
        with client.responses.stream(model="gpt-bench", input=USER) as stream:
            return stream.get_final_response().output_text

    return Wire("OpenAI Responses", lambda http: openai.OpenAI(api_key=API_KEY, max_retries=0, http_client=http), call)


def _gemini() -> Wire:
    from google import genai
    from google.genai import types

    def client(http: Any) -> Any:
        return genai.Client(api_key=API_KEY, http_options=types.HttpOptions(httpx_client=http))

    def call(client: Any) -> Any:
        return "".join(
            chunk.text or "" for chunk in client.models.generate_content_stream(model="gemini-bench", contents=USER)
        )

    return Wire("Gemini", client, call)


def _bedrock_client(_: Any = None) -> Any:
    import boto3

    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="AKIDBENCH",
        aws_secret_access_key="bench-secret",
    )


_MODEL = "anthropic.claude-bench-v1:0"
_MESSAGES: Any = [{"role": "user", "content": [{"text": USER}]}]


def _converse() -> Wire:
    def call(client: Any) -> Any:
        return client.converse(modelId=_MODEL, messages=_MESSAGES)["output"]["message"]["content"][0]["text"]

    return Wire("Bedrock Converse", _bedrock_client, call, boto=True, streamed=False)


def _converse_stream() -> Wire:
    def call(client: Any) -> Any:
        pieces = []
        for event in client.converse_stream(modelId=_MODEL, messages=_MESSAGES)["stream"]:
            delta = event.get("contentBlockDelta")
            if delta is not None:
                pieces.append(delta["delta"]["text"])
        return "".join(pieces)

    return Wire("Bedrock ConverseStream", _bedrock_client, call, boto=True)


def available() -> list[Wire]:
    """The wires whose SDK is installed (boto3 is an optional group)."""
    found = [_openai_chat(), _openai_responses()]
    for make in (_gemini, _converse, _converse_stream):
        try:
            found.append(make())
        except ImportError:
            continue
    try:
        import boto3  # noqa: F401
    except ImportError:
        found = [wire for wire in found if not wire.boto]
    return found


class _Raw:
    """The `raw` of the floor's `AWSResponse`: the captured bytes in one chunk, as botocore streams a body."""

    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, amt: int | None = None, decode_content: bool | None = None) -> Iterator[bytes]:
        yield self._body

    def read(self, amt: int | None = None) -> bytes:
        body, self._body = self._body, b""
        return body

    def close(self) -> None:
        pass


def _floor_handler(canned: Canned) -> Callable[..., Any]:
    from botocore.awsrequest import AWSResponse

    def before_send(request: Any, **_: Any) -> Any:
        return AWSResponse(request.url, canned.status, canned.headers, _Raw(canned.body))

    return before_send


def _capture(wire: Wire, text: str) -> tuple[Canned, Any]:
    stub = ScriptTransport([{"text": text}])
    if wire.boto:
        from botocore.awsrequest import AWSResponse

        client = wire.client(None)
        served = stub.attach(client)
        kept: list[Canned] = []
        handler = _botocore_handler(client)
        stub.detach(client)  # the capture calls the stub's handler itself

        def capture(request: Any, **kwargs: Any) -> Any:
            response = handler(request=request, **kwargs)
            body = response.raw.read()
            kept.append(Canned(response.status_code, dict(response.headers), body))
            return AWSResponse(request.url, response.status_code, dict(response.headers), _Raw(body))

        client.meta.events.register_first("before-send.bedrock-runtime", capture)
        result = wire.call(served)
        stub.check()
        return kept[0], result
    recorder = _Capture(stub)
    with wire.client(httpx2.Client(transport=recorder)) as client:
        result = wire.call(client)
    stub.check()
    return recorder.responses[0], result


def _botocore_handler(client: Any) -> Callable[..., Any]:
    from wirescript._adapters import botocore as _botocore

    handler: Callable[..., Any] = _botocore._ATTACHED[client].handler
    return handler


def _checked(call: Callable[[Any], Any], client: Any, expected: Any, name: str) -> Callable[[], Any]:
    """The call on `client`; its first answer must be what wirescript's was (a floor serving other bytes fails)."""
    first = [True]

    def once() -> Any:
        got = call(client)
        if first[0]:
            first[0] = False
            if got != expected:
                raise AssertionError(f"{name} answered {got!r}, wirescript answered {expected!r}")
        return got

    return once


def _sides(wire: Wire, text: str, canned: Canned, expected: Any) -> list[Side]:
    def floor(name: str) -> Side:
        def start(samples: int) -> tuple[Callable[[], float], Callable[[], None]]:
            if wire.boto:
                client = wire.client(None)
                client.meta.events.register_first("before-send.bedrock-runtime", _floor_handler(canned))
            else:
                status, headers, body = canned
                mock = httpx2.MockTransport(lambda request: httpx2.Response(status, headers=headers, content=body))
                client = wire.client(httpx2.Client(transport=mock))
            return timed(_checked(wire.call, client, expected, name)), client.close

        return Side(name, start)

    def wirescript(samples: int) -> tuple[Callable[[], float], Callable[[], None]]:
        stub = ScriptTransport([{"text": text}] * (samples + 1))
        client = stub.attach(wire.client(None)) if wire.boto else wire.client(httpx2.Client(transport=stub))

        def finish() -> None:
            client.close()
            stub.check()  # every turn served, nothing refused

        return timed(_checked(wire.call, client, expected, "wirescript")), finish

    return [floor("floor"), floor("floor-copy"), Side("wirescript", wirescript)]


def measure_wires(
    rounds: int, samples: int, *, long_rounds: int, long_samples: int, names: list[str] | None = None
) -> list[PairedRow]:
    """Every available wire at 1 and 100 deltas: wirescript and the A/A control over the floor."""
    rows = []
    for wire in available():
        if names and wire.name not in names:
            continue
        for deltas, chars in SIZES:
            text = prose(chars)
            canned, expected = _capture(wire, text)
            long = deltas > 1
            stats = run_paired(
                _sides(wire, text, canned, expected),
                rounds=long_rounds if long else rounds,
                samples=long_samples if long else samples,
            )
            target = HUNDRED_TARGET if long and wire.streamed else ONE_TARGET
            plural = "s" if long else ""
            what = f"{deltas} delta{plural}" if wire.streamed else f"{chars} character{plural}"
            rows.append(paired_row("wires", f"{wire.name}, {what}", target, stats))
    return rows
