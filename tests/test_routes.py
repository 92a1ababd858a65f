"""The escape hatch: `ScriptTransport(routes=...)` answers endpoints no wire serves, loudly when it cannot."""

from __future__ import annotations

import datetime
from types import ModuleType
from typing import Any

import anthropic
import openai
import pytest

from _support import STACKS, anthropic_client, openai_client
from wirescript import RecordedRequest, ScriptTransport, UsageError

FILE = {"id": "file-abc", "object": "file", "bytes": 3, "created_at": 0, "filename": "a.txt", "purpose": "assistants"}


def test_a_route_answers_through_the_real_sdk_with_its_placeholders() -> None:
    seen: list[RecordedRequest] = []

    def get_file(record: RecordedRequest) -> dict[str, Any]:
        seen.append(record)
        return {**FILE, "id": record.path_params["file_id"]}

    stub = ScriptTransport(["The generation turn."], routes={"GET /v1/files/{file_id}": get_file})
    client = openai_client(stub)
    assert client.files.retrieve("file-xyz").id == "file-xyz"
    [record] = stub.requests
    assert seen == [record]
    assert (record.provider, record.method, record.path, record.path_params) == (
        "routes",
        "GET",
        "/v1/files/file-xyz",
        {"file_id": "file-xyz"},
    )
    assert record.api_key == "test-key"
    assert len(stub.pending) == 1  # a route consumes no turn
    assert stub.problems == []


@pytest.mark.parametrize("hx", STACKS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_post_route_with_a_status(is_async: bool, hx: ModuleType) -> None:
    import asyncio

    stub = ScriptTransport([], routes={"POST /v1/decisions": lambda r: (201, {"decided": r.body["question"]})})

    async def go() -> Any:
        if is_async:
            async with hx.AsyncClient(transport=stub, base_url="https://api.example.com") as http:
                return await http.post("/v1/decisions", json={"question": "ship it?"})
        with hx.Client(transport=stub, base_url="https://api.example.com") as http:
            return http.post("/v1/decisions", json={"question": "ship it?"})

    response = asyncio.run(go())
    assert (response.status_code, response.json()) == (201, {"decided": "ship it?"})
    assert stub.requests[0].body == {"question": "ship it?"}


def test_a_route_matches_under_a_prefix_and_wins_over_a_wire() -> None:
    listing = {"data": [{"type": "model", "id": "only-me", "display_name": "x", "created_at": "2025-01-01T00:00:00Z"}]}
    stub = ScriptTransport([], routes={"GET /v1/models": lambda r: {**listing, "has_more": False}})
    client = anthropic_client(stub, base_url="https://proxy.example.com/anthropic")
    assert [m.id for m in client.models.list()] == ["only-me"]
    assert stub.requests[0].path == "/anthropic/v1/models"


def test_an_error_status_reaches_the_app_as_the_sdk_error() -> None:
    stub = ScriptTransport(
        [], routes={"GET /v1/files/{file_id}": lambda r: (404, {"error": {"message": "no such file"}})}
    )
    with pytest.raises(openai.NotFoundError, match="no such file"):
        openai_client(stub, max_retries=0).files.retrieve("file-missing")
    assert stub.problems == []


@pytest.mark.parametrize(
    ("handler", "message"),
    [
        (lambda r: 1 / 0, "the handler of route 'GET /v1/files/{file_id}' raised ZeroDivisionError"),
        (lambda r: "text", "returned str; expected a JSON-able dict or list, or (status, dict)"),
        (lambda r: (99, {}), "returned status 99; expected 200 to 599"),
        (lambda r: {"when": object()}, "returned a body JSON cannot carry"),
        # What JSON has no type for is refused, not turned into a string or an array on the way out.
        (
            lambda r: {"when": datetime.date(2026, 12, 1)},
            "returned a body JSON cannot carry: date datetime.date(2026, 12, 1) at 'when' is not a JSON value",
        ),
        (lambda r: {"ids": {1, 2}}, "returned a body JSON cannot carry: set {1, 2} at 'ids' is not a JSON value"),
        (lambda r: [b"raw"], "returned a body JSON cannot carry: bytes b'raw' at '[0]' is not a JSON value"),
    ],
)
def test_a_failing_handler_is_a_loud_problem_never_an_escaped_exception(handler: Any, message: str) -> None:
    stub = ScriptTransport([], routes={"GET /v1/files/{file_id}": handler})
    with pytest.raises(openai.BadRequestError, match="wirescript"):
        openai_client(stub).files.retrieve("file-1")
    [problem] = stub.problems
    assert problem.kind == "script_error"
    assert message in problem.reason
    assert len(stub.requests) == 1  # not retried: the refusal is non-retryable
    with pytest.raises(AssertionError, match=r"raised|returned"):
        stub.check()


def test_what_no_route_serves_stays_loud() -> None:
    stub = ScriptTransport([], routes={"GET /v1/files/{file_id}": lambda r: FILE})
    with pytest.raises(anthropic.NotFoundError):
        anthropic_client(stub).get("/v1/files", cast_to=object)  # the route needs an id
    with pytest.raises(openai.NotFoundError):
        openai_client(stub).post("/files/file-1", cast_to=object)  # another method (the Files API has no POST there)
    assert [p.kind for p in stub.problems] == ["unknown_endpoint", "unknown_endpoint"]


@pytest.mark.parametrize(
    ("routes", "message"),
    [
        ({"FETCH /v1/files": lambda r: {}}, "METHOD one of DELETE, GET"),
        ({"get /v1/files": lambda r: {}}, "METHOD one of"),
        ({"GET v1/files": lambda r: {}}, "expected a path such as"),
        ({"GET /v1/files?limit=1": lambda r: {}}, "no query"),
        ({"GET /v1/files/": lambda r: {}}, "no trailing"),
        ({"GET /v1/{a}/{a}": lambda r: {}}, "a placeholder name repeats"),
        ({"GET /v1/files-{id}": lambda r: {}}, "neither literal text nor one '{name}' placeholder"),
        ({"GET /v1/files": {"id": 1}}, "expected a function"),
        ({1: lambda r: {}}, "expected a 'METHOD /path' string"),
        ([("GET /v1/files", lambda r: {})], "expected a mapping"),
    ],
)
def test_bad_routes_are_refused_at_construction(routes: Any, message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("?", r"\?").replace("{", r"\{").replace("}", r"\}")):
        ScriptTransport([], routes=routes)


def test_an_async_handler_is_refused() -> None:
    async def handler(record: RecordedRequest) -> dict[str, Any]:
        return {}

    with pytest.raises(UsageError, match="the handler is async"):
        ScriptTransport([], routes={"GET /v1/files": handler})


def test_a_route_serves_a_body_that_is_not_json() -> None:
    """An upload is multipart: the route still answers, and the record keeps the bytes."""
    stub = ScriptTransport([], routes={"POST /v1/files": lambda r: FILE})
    uploaded = openai_client(stub).files.create(file=("a.txt", b"abc"), purpose="assistants")
    assert uploaded.id == "file-abc"
    [record] = stub.requests
    assert record.body is None
    assert b'filename="a.txt"' in record.content
    assert stub.problems == []
