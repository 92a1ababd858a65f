"""Credential-like header and query names are redacted by pattern, everywhere a record shows; ordinary names are not.

Gateways and clouds carry credentials under names no wire declares (`helicone-auth`,
`cf-aig-authorization`, `?access_token=`, a presigned URL's `X-Amz-Signature`): each is redacted,
case-insensitively, in the record, its `repr`, the control API and record mode's records. Names
that only look close (`max_tokens`, `x-stainless-*`, `anthropic-version`) keep their values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import pytest

from _support import ANTHROPIC_HX as hx
from wirescript import RecordingTransport, ScriptTransport
from wirescript.recorded import REDACTED, RecordedRequest

SECRET_HEADERS = [
    "helicone-auth",
    "cf-aig-authorization",
    "x-auth",
    "X-Auth-Token",
    "api_key",
    "X-Api-Token",
    "x-functions-key",
    "Private-Token",
    "x-amz-security-token",
    "ocp-apim-subscription-key",
    "x-client-secret",
]
SECRET_QUERY = ["access_token", "X-Amz-Signature", "X-Amz-Security-Token", "X-Amz-Credential", "sig", "token", "apiKey"]
ORDINARY_HEADERS = {
    "x-stainless-retry-count": "0",
    "x-stainless-helper-method": "stream",
    "anthropic-version": "2023-06-01",
    "anthropic-beta": "token-counting-2024-11-01",
    "accept-language": "en",
    "idempotency-key": "stainless-python-retry-1",
    "x-author": "someone",
}
ORDINARY_QUERY = {"max_tokens": "5", "max_output_tokens": "9", "api-version": "2024-10-21", "pageToken": "page-2"}


def _value(name: str) -> str:
    return f"cred-{name.lower()}-7f3a9c"


def _send(stub: Any, base_url: str = "https://api.anthropic.com") -> None:
    headers = {name: _value(name) for name in SECRET_HEADERS} | ORDINARY_HEADERS
    params = {name: _value(name) for name in SECRET_QUERY} | ORDINARY_QUERY
    transport = {"transport": stub} if base_url.startswith("https") else {}
    with anthropic.Anthropic(
        api_key="test-key",
        base_url=base_url,
        max_retries=0,
        default_headers=headers,
        default_query=params,
        http_client=hx.Client(**transport),
    ) as client:
        client.messages.create(model="claude-test", max_tokens=5, messages=[{"role": "user", "content": "hi"}])


def _assert_redacted(record: RecordedRequest, *shown: str) -> None:
    for name in SECRET_HEADERS:
        assert record.headers[name.lower()] == REDACTED, name
    for name in SECRET_QUERY:
        assert record.query[name] == REDACTED, name
    for name, value in ORDINARY_HEADERS.items():
        assert record.headers[name] == value, name  # not falsely redacted
    for name, value in ORDINARY_QUERY.items():
        assert record.query[name] == value, name
    for text in (repr(record), str(record), record.model_dump_json(), *shown):
        leaked = [name for name in SECRET_HEADERS + SECRET_QUERY if _value(name) in text]
        assert leaked == []


def test_credential_like_names_are_redacted_in_the_record_and_its_repr() -> None:
    stub = ScriptTransport(["ok"])
    _send(stub)
    [record] = stub.requests
    _assert_redacted(record, repr(stub.requests), str(stub.problems))
    assert record.api_key == "test-key"  # the credential the wire reads is still captured


def test_credential_like_names_are_redacted_by_the_control_api() -> None:
    pytest.importorskip("uvicorn")
    from wirescript.server import ScriptServer

    stub = ScriptTransport(["ok"])
    with ScriptServer(stub) as server:
        _send(stub, server.base_url)
        listed = hx.get(f"{server.base_url}/_wirescript/requests", headers=server.control_headers).text
    _assert_redacted(stub.requests[0], listed)


def test_credential_like_names_are_redacted_in_record_mode(tmp_path: Path) -> None:
    rec = RecordingTransport(tmp_path / "rec.yaml", upstream=ScriptTransport(["ok"]))
    _send(rec)
    rec.save()
    _assert_redacted(rec.requests[0], (tmp_path / "rec.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["HELICONE-AUTH", "Helicone-Auth", "helicone-auth"])
def test_names_are_matched_whatever_their_case(name: str) -> None:
    stub = ScriptTransport(["ok"], strict=False)
    body = b'{"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}'
    request = hx.Request(
        "POST", "https://api.anthropic.com/v1/messages?ACCESS_TOKEN=q-1", headers={name: "h-1"}, content=body
    )
    stub.handle_request(request).read()
    assert (stub.requests[0].headers["helicone-auth"], stub.requests[0].query["ACCESS_TOKEN"]) == (REDACTED, REDACTED)
