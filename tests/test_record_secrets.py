"""Record mode writes no credential a request sent, whatever the upstream echoes back, in any form.

The stand-in upstream here answers each request with the credentials it carried: as sent,
base64-encoded at each alignment, URL-encoded and hex-encoded, in the text, a tool input, the
thinking and its signature, an error message and a model listing. The file holds none of them,
says where they were replaced, and still loads; a key pasted into a prompt stays out of the
summary comment.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote

import anthropic
import openai
import pytest

from wirescript import RecordingTransport, ScriptTransport, load_script
from wirescript.recording import drift, recorded_summaries

httpx2 = pytest.importorskip("httpx2")  # the legacy run (anthropic 0.x, openai 2.x on httpx) has none

KEY = "sk-ant-api03-PLANTEDkey0123456789abcdefghijklmnopqrstuvwxyzABCDEF"  # wirescript: allow[WS101] a planted fake
ASK = [{"role": "user", "content": "Hi"}]


def _sent(request: httpx2.Request) -> list[str]:
    """The credentials `request` carries, read by the stand-in as a real upstream reads them."""
    found = []
    for name in ("x-api-key", "api-key", "x-goog-api-key", "x-amz-security-token"):
        if name in request.headers:
            found.append(request.headers[name])
    authorization = request.headers.get("authorization", "")
    if authorization.startswith("Bearer "):
        found.append(authorization.removeprefix("Bearer "))
    elif "Signature=" in authorization:  # SigV4
        found.append(authorization.split("Signature=", 1)[1])
        found.append(authorization.split("Credential=", 1)[1].split("/", 1)[0])
    found += [value for name, value in parse_qsl(request.url.query.decode()) if name == "key"]
    return found


def _forms(secret: str) -> list[str]:
    raw = secret.encode()
    return [
        secret,
        base64.b64encode(raw).decode(),
        base64.urlsafe_b64encode(b"Bearer " + raw).decode(),  # another alignment, the other alphabet
        base64.b64encode(b"k:" + raw).decode(),
        quote(secret, safe=""),
        raw.hex(),
    ]


def _echo(secrets: list[str]) -> str:
    return "echo " + " | ".join(form for secret in secrets for form in _forms(secret))


def _anthropic(request: httpx2.Request, secrets: list[str]) -> httpx2.Response:
    if json.loads(request.content)["messages"][-1]["content"] == "fail":
        message = f"invalid x-api-key {secrets[0]} ({_echo(secrets)})"
        error = {"type": "authentication_error", "message": message}
        return httpx2.Response(401, json={"type": "error", "error": error})
    content = [
        {"type": "thinking", "thinking": f"thinking about {secrets[0]}", "signature": secrets[0]},
        {"type": "text", "text": _echo(secrets)},
        {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {secrets[0]: f"https://x/?key={secrets[0]}"}},
    ]
    usage = {"input_tokens": 3, "output_tokens": 4}
    return httpx2.Response(
        200,
        json={"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": content}
        | {"stop_reason": "tool_use", "stop_sequence": None, "usage": usage},
    )


def _openai(request: httpx2.Request, secrets: list[str]) -> httpx2.Response:
    if request.url.path.endswith("/models"):
        return httpx2.Response(200, json={"object": "list", "data": [{"id": secrets[0], "object": "model"}]})
    function = {"name": "lookup", "arguments": json.dumps({"k": secrets[0]})}
    call = {"id": "call_1", "type": "function", "function": function}
    message = {"role": "assistant", "content": _echo(secrets), "tool_calls": [call]}
    return httpx2.Response(
        200,
        json={"id": "c1", "object": "chat.completion", "created": 1, "model": "gpt-test"}
        | {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}
        | {"usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}},
    )


def _gemini(request: httpx2.Request, secrets: list[str]) -> httpx2.Response:
    parts = [{"text": f"thought {secrets[0]}", "thought": True}, {"text": _echo(secrets)}]
    return httpx2.Response(
        200,
        json={"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}]}
        | {"usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}},
    )


def _converse(request: httpx2.Request, secrets: list[str]) -> httpx2.Response:
    message = {"role": "assistant", "content": [{"text": _echo(secrets)}]}
    return httpx2.Response(
        200,
        json={"output": {"message": message}, "stopReason": "end_turn"}
        | {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}, "metrics": {"latencyMs": 1}},
    )


def _upstream(answer: Callable[[httpx2.Request, list[str]], httpx2.Response], seen: list[str]) -> Any:
    def handle(request: httpx2.Request) -> httpx2.Response:
        secrets = _sent(request)
        assert secrets, "the request carried no credential"
        seen.extend(secrets)
        return answer(request, secrets)

    return httpx2.MockTransport(handle)


def _anthropic_calls(rec: RecordingTransport, **auth: Any) -> None:
    client = anthropic.Anthropic(**auth, max_retries=0, http_client=httpx2.Client(transport=rec))
    client.messages.create(model="claude-test", max_tokens=64, messages=ASK)
    with pytest.raises(anthropic.AuthenticationError):
        client.messages.create(model="claude-test", max_tokens=64, messages=[{"role": "user", "content": "fail"}])


def _openai_calls(rec: RecordingTransport, azure: bool = False) -> None:
    http = httpx2.Client(transport=rec)
    if azure:
        client: openai.OpenAI = openai.AzureOpenAI(
            api_key=KEY, api_version="2024-10-21", azure_endpoint="https://r.openai.azure.com", http_client=http
        )
    else:
        client = openai.OpenAI(api_key=KEY, http_client=http, max_retries=0)
        assert [m.id for m in client.models.list()]
    client.chat.completions.create(model="gpt-test", messages=ASK)  # type: ignore[arg-type]


def _gemini_calls(rec: RecordingTransport, query: bool = False) -> None:
    if query:  # the key in the URL, as Gemini's REST examples send it
        body = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
        url = f"https://generativelanguage.googleapis.com/v1beta/models/gemini-x:generateContent?key={KEY}"
        httpx2.Client(transport=rec).post(url, json=body).read()
        return
    from google import genai
    from google.genai import types

    client = genai.Client(api_key=KEY, http_options=types.HttpOptions(httpx_client=httpx2.Client(transport=rec)))
    client.models.generate_content(model="gemini-x", contents="Hi")


def _bedrock_calls(rec: RecordingTransport) -> None:
    boto3 = pytest.importorskip("boto3")
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="AKIDPLANTED1234",
        aws_secret_access_key="planted-secret-access-key",
        aws_session_token="planted-session-token-0123456789",
    )
    rec.attach(client).converse(modelId="anthropic.claude-x", messages=[{"role": "user", "content": [{"text": "Hi"}]}])


CASES: dict[str, tuple[Callable[..., httpx2.Response], Callable[[RecordingTransport], None]]] = {
    "anthropic-x-api-key": (_anthropic, lambda rec: _anthropic_calls(rec, api_key=KEY)),
    "anthropic-auth-token": (_anthropic, lambda rec: _anthropic_calls(rec, auth_token=KEY)),
    "openai-bearer": (_openai, _openai_calls),
    "azure-api-key": (_openai, lambda rec: _openai_calls(rec, azure=True)),
    "gemini-x-goog-api-key": (_gemini, _gemini_calls),
    "gemini-query-key": (_gemini, lambda rec: _gemini_calls(rec, query=True)),
    "bedrock-sigv4": (_converse, _bedrock_calls),
}


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
@pytest.mark.parametrize("case", list(CASES))
def test_no_credential_a_request_sent_reaches_the_file_whatever_the_upstream_echoes(
    case: str, suffix: str, tmp_path: Path
) -> None:
    answer, calls = CASES[case]
    seen: list[str] = []
    rec = RecordingTransport(tmp_path / f"rec{suffix}", upstream=_upstream(answer, seen))
    calls(rec)
    text = rec.save().read_text(encoding="utf-8")
    leaked = [form for secret in seen for form in _forms(secret) if form in text]
    assert leaked == []
    assert "<redacted>" in text
    assert "echo " in text  # what the model said around them is kept
    load_script(rec.path)  # and the file still loads
    notes = [note for note in rec.notes if "a credential it sent came back in" in note]
    assert notes
    assert all(note.endswith("replaced by <redacted> in the file") for note in notes)
    if suffix == ".yaml":
        [account] = [line for line in text.splitlines() if line.startswith("# A credential the requests sent")]
        assert "is replaced by <redacted>: requests[" in account
    shown = repr(rec.turns) + repr(rec.script()) + " ".join(rec.notes)
    assert not any(form in shown for secret in seen for form in _forms(secret))


def test_every_field_an_echo_can_reach_is_redacted_and_named(tmp_path: Path) -> None:
    seen: list[str] = []
    rec = RecordingTransport(tmp_path / "rec.yaml", upstream=_upstream(_anthropic, seen))
    _anthropic_calls(rec, api_key=KEY)
    [answered, failed] = rec.turns
    assert (answered.text or "").startswith("echo <redacted> | <redacted>")
    assert (answered.thinking, answered.thinking_signature) == ("thinking about <redacted>", "<redacted>")
    assert answered.tool is not None
    assert answered.tool.input == {"<redacted>": "https://x/?key=<redacted>"}
    assert failed.error is not None
    assert failed.error.message.startswith("invalid x-api-key <redacted> (echo <redacted>")
    assert [n.split(": ", 1)[1] for n in rec.notes] == [
        (
            "a credential it sent came back in text, tool.input, tool.input.<redacted>, thinking, thinking_signature: "
            "replaced by <redacted> in the file"
        ),
        "a credential it sent came back in error.message: replaced by <redacted> in the file",
    ]


def test_a_side_answer_that_echoes_the_key_is_redacted_too(tmp_path: Path) -> None:
    seen: list[str] = []
    rec = RecordingTransport(tmp_path / "rec.yaml", upstream=_upstream(_openai, seen))
    openai.OpenAI(api_key=KEY, http_client=httpx2.Client(transport=rec)).models.list()
    assert rec.side is not None
    assert rec.side.models == ["<redacted>"]
    assert KEY not in rec.save().read_text(encoding="utf-8")


def test_the_recording_server_redacts_what_the_upstream_echoes(tmp_path: Path) -> None:
    pytest.importorskip("uvicorn")
    from wirescript.server import ScriptServer

    seen: list[str] = []
    rec = RecordingTransport(tmp_path / "rec.yaml", upstream=_upstream(_anthropic, seen))
    with (
        ScriptServer(rec) as server,
        anthropic.Anthropic(api_key=KEY, base_url=server.base_url, max_retries=0) as client,
    ):
        client.messages.create(model="claude-test", max_tokens=64, messages=ASK)
    assert seen == [KEY]
    assert KEY not in rec.save().read_text(encoding="utf-8")


def test_a_key_pasted_into_the_prompt_stays_out_of_the_summary_comment(tmp_path: Path) -> None:
    pasted = "sk-proj-Q7vK2mX9pL4rT8wZ3nB6cF1hJ5dS0gYaBcDeFgHiJkLmN"  # wirescript: allow[WS101] a planted fake
    prompt = f"my key is {pasted} please"
    rec = RecordingTransport(tmp_path / "rec.yaml", upstream=ScriptTransport(["Noted.", "Hello."]))
    client = anthropic.Anthropic(api_key="test-key", http_client=httpx2.Client(transport=rec))
    for text in (prompt, "an ordinary question"):
        client.messages.create(model="claude-test", max_tokens=8, messages=[{"role": "user", "content": text}])
    saved = rec.save().read_text(encoding="utf-8")
    assert pasted[:12] not in saved
    assert "last=user:'my key is <redacted>" in saved
    assert "last=user:'an ordinary question'" in saved
    # A replay asking the same is no drift: both sides leave the key out alike.
    replay = ScriptTransport(load_script(rec.path))
    again = anthropic.Anthropic(api_key="test-key", http_client=httpx2.Client(transport=replay))
    for text in (prompt, "an ordinary question"):
        again.messages.create(model="claude-test", max_tokens=8, messages=[{"role": "user", "content": text}])
    assert drift(replay.requests, recorded_summaries(saved)) == []


def test_every_credential_value_is_searched_for_however_many_a_recorder_has_seen() -> None:
    """Each credential value is taken apart once and remembered: a new value under a known name, a value seen
    before, and values past the number remembered are all redacted, Basic passwords and SigV4 parts included."""
    from wirescript.recording._secrets import Credentials

    credentials = Credentials({"x-api-key", "authorization"}, {"key"})
    sent: list[str] = []
    for number in range(1100):  # past what is remembered
        key = f"sk-rotating-{number:06d}-abcdef"
        sent.append(key)
        credentials.add(httpx2.Request("POST", "https://api.example/v1", headers={"x-api-key": key}))
    password = "hunter2-hunter2-hunter2"
    basic = base64.b64encode(f"user:{password}".encode()).decode()
    for _ in range(2):  # the second time from what is remembered
        credentials.add(httpx2.Request("POST", "https://api.example/v1", headers={"authorization": f"Basic {basic}"}))
        credentials.add(httpx2.Request("POST", "https://api.example/v1", headers={"x-api-key": sent[0]}))
    credentials.add(httpx2.Request("GET", "https://api.example/v1?key=query-key-0123456789"))
    scrubber = credentials.scrubber()
    for secret in [*sent, password, basic, "query-key-0123456789"]:
        text, count = scrubber.text(f"echo {secret} and {secret.encode().hex()}")
        assert count == 2, secret
        assert secret not in text
    assert scrubber.text("short sk-1 and ordinary words")[1] == 0
