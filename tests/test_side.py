"""Side endpoints through the real SDKs: token counts, embeddings and model listings, sync and async.

They answer deterministically without a script entry, a side script overrides them, and they never
consume a generation turn; every request is recorded like any other.
"""

from __future__ import annotations

import asyncio
import base64
import json
import math
import struct
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _support import STACKS, anthropic_client, examples, odd_bodies, openai_client
from wirescript import ScriptError, ScriptTransport, SideScript, load_script, script_json_schema
from wirescript.wires.side import count_tokens, embedding

MESSAGES = [{"role": "user", "content": "How many tokens is this?"}]


def _norm(vector: list[float]) -> float:
    return math.sqrt(sum(x * x for x in vector))


def gemini_client(stub: ScriptTransport, *, is_async: bool = False) -> Any:
    """A real google-genai client over `stub`; skips the test where google-genai is not installed."""
    genai = pytest.importorskip("google.genai")
    from google.genai import types

    hx = STACKS[0]  # google-genai takes an httpx2 or an httpx client
    http = hx.AsyncClient(transport=stub) if is_async else hx.Client(transport=stub)
    key = "httpx_async_client" if is_async else "httpx_client"
    return genai.Client(api_key="test-key", http_options=types.HttpOptions(**{key: http}))


# ------------------------------------------------------------------------------------ token counts


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_anthropic_count_tokens_is_deterministic_and_consumes_no_turn(is_async: bool) -> None:
    stub = ScriptTransport(["The one generation turn."])
    client = anthropic_client(stub, is_async=is_async)

    async def run() -> tuple[int, int, int, str]:
        count = client.messages.count_tokens(model="claude-x", messages=MESSAGES)
        again = client.messages.count_tokens(model="claude-x", messages=MESSAGES)
        longer = client.messages.count_tokens(
            model="claude-x", messages=[{"role": "user", "content": "How many tokens is this? " * 20}]
        )
        reply = client.messages.create(model="claude-x", max_tokens=50, messages=MESSAGES)
        if is_async:
            count, again, longer, reply = await count, await again, await longer, await reply
        return count.input_tokens, again.input_tokens, longer.input_tokens, reply.content[0].text

    count, again, longer, text = asyncio.run(run())
    assert count == again == count_tokens({"messages": MESSAGES}) > 0
    assert longer > count
    assert text == "The one generation turn."
    first = stub.requests[0]
    assert (first.provider, first.method, first.path, first.model) == (
        "count_tokens",
        "POST",
        "/v1/messages/count_tokens",
        "claude-x",
    )
    assert first.messages == MESSAGES
    assert first.turn_index is None
    assert stub.problems == []
    stub.check()


def test_a_scripted_count_overrides_and_a_queue_of_counts_runs_out_loudly() -> None:
    fixed = ScriptTransport([], side={"count_tokens": 42})
    assert anthropic_client(fixed).messages.count_tokens(model="m", messages=MESSAGES).input_tokens == 42

    stub = ScriptTransport([], side={"count_tokens": [7, 8]})
    client = anthropic_client(stub, max_retries=0)
    assert [client.messages.count_tokens(model="m", messages=MESSAGES).input_tokens for _ in range(2)] == [7, 8]
    import anthropic

    with pytest.raises(anthropic.BadRequestError, match="past the end of the side script's count_tokens"):
        client.messages.count_tokens(model="m", messages=MESSAGES)
    [problem] = stub.problems
    assert (problem.index, problem.kind) == (2, "unscripted")


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_openai_responses_input_tokens(is_async: bool) -> None:
    stub = ScriptTransport([], side={"count_tokens": 17})
    client = openai_client(stub, is_async=is_async)

    async def run() -> Any:
        result = client.responses.input_tokens.count(model="gpt-x", input="Count me")
        return await result if is_async else result

    result = asyncio.run(run())
    assert (result.object, result.input_tokens) == ("response.input_tokens", 17)
    [record] = stub.requests
    assert (record.provider, record.path, record.model) == ("count_tokens", "/v1/responses/input_tokens", "gpt-x")
    assert record.messages == [{"role": "user", "content": "Count me"}]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_gemini_count_tokens(is_async: bool) -> None:
    stub = ScriptTransport([])
    client = gemini_client(stub, is_async=is_async)

    async def run() -> Any:
        models = client.aio.models if is_async else client.models
        result = models.count_tokens(model="gemini-2.5-flash", contents="Count me, please")
        return await result if is_async else result

    result = asyncio.run(run())
    [record] = stub.requests
    assert result.total_tokens == count_tokens(record.body) > 0
    assert (record.provider, record.model) == ("count_tokens", "gemini-2.5-flash")
    assert record.path.endswith("/models/gemini-2.5-flash:countTokens")
    assert stub.problems == []


# ------------------------------------------------------------------------------------------ embeddings


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("encoding", ["float", "base64", None], ids=["float", "base64", "sdk-default"])
def test_openai_embeddings_are_deterministic_unit_vectors(is_async: bool, encoding: str | None) -> None:
    stub = ScriptTransport([], side={"embeddings": {"scripted": [0.6, 0.8]}})
    client = openai_client(stub, is_async=is_async)
    extra: dict[str, Any] = {} if encoding is None else {"encoding_format": encoding}

    async def run() -> tuple[Any, Any, Any]:
        calls = (
            client.embeddings.create(model="text-embedding-3-small", input=["cat", "dog", "cat"], **extra),
            client.embeddings.create(model="text-embedding-3-large", input="cat", dimensions=8, **extra),
            client.embeddings.create(model="text-embedding-3-small", input="scripted", **extra),
        )
        if is_async:
            return tuple([await c for c in calls])  # type: ignore[return-value]
        return calls

    many, sized, scripted = asyncio.run(run())
    if encoding == "base64":  # asked for explicitly, the SDK hands the base64 text over as is
        for result in (many, sized, scripted):
            for item in result.data:
                assert isinstance(item.embedding, str)
                raw = base64.b64decode(item.embedding)
                item.embedding = list(struct.unpack(f"<{len(raw) // 4}f", raw))
    cat, dog, cat_again = (d.embedding for d in many.data)
    assert isinstance(cat[0], float)  # by default the SDK asked for base64 and decoded it
    assert len(cat) == 1536  # text-embedding-3-small's documented size
    assert cat == cat_again != dog
    assert cat == pytest.approx(embedding("cat", 1536))
    assert _norm(cat) == pytest.approx(1.0, abs=1e-5)
    assert len(sized.data[0].embedding) == 8
    assert _norm(sized.data[0].embedding) == pytest.approx(1.0, abs=1e-5)
    assert scripted.data[0].embedding == pytest.approx([0.6, 0.8])
    first = stub.requests[0]
    assert (first.provider, first.path, first.model, first.messages) == (
        "embeddings",
        "/v1/embeddings",
        "text-embedding-3-small",
        ["cat", "dog", "cat"],
    )
    sent = first.body.get("encoding_format")
    assert sent == (encoding or "base64")  # the SDK asks for base64 unless told otherwise
    assert stub.problems == []


def test_the_large_model_defaults_to_its_documented_size() -> None:
    stub = ScriptTransport([])
    result = openai_client(stub).embeddings.create(model="text-embedding-3-large", input="x")
    assert len(result.data[0].embedding) == 3072


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_gemini_embed_content(is_async: bool) -> None:
    stub = ScriptTransport([])
    client = gemini_client(stub, is_async=is_async)

    async def run() -> tuple[Any, Any]:
        models = client.aio.models if is_async else client.models
        one = models.embed_content(model="gemini-embedding-001", contents="cat")
        many = models.embed_content(
            model="gemini-embedding-001", contents=["cat", "dog"], config={"output_dimensionality": 16}
        )
        if is_async:
            return await one, await many
        return one, many

    one, many = asyncio.run(run())
    [vector] = [e.values for e in one.embeddings]
    assert len(vector) == 3072  # gemini-embedding-001's documented default
    assert vector == pytest.approx(embedding("cat", 3072))
    cat, dog = (e.values for e in many.embeddings)
    assert len(cat) == len(dog) == 16
    assert cat == pytest.approx(embedding("cat", 16))
    assert cat != dog
    assert all(r.provider == "embeddings" for r in stub.requests)
    assert stub.requests[1].messages == ["cat", "dog"]
    assert stub.requests[0].model == "gemini-embedding-001"
    assert stub.requests[0].path.endswith("/models/gemini-embedding-001:batchEmbedContents")  # even for one text
    assert stub.problems == []


@pytest.mark.parametrize("hx", STACKS, ids=lambda m: m.__name__)
def test_gemini_single_embed_content_endpoint(hx: ModuleType) -> None:
    """`:embedContent` (one content) is what REST callers and older SDKs use; served the same way."""
    stub = ScriptTransport([])
    with hx.Client(transport=stub, base_url="https://generativelanguage.googleapis.com") as http:
        response = http.post(
            "/v1beta/models/text-embedding-004:embedContent", json={"content": {"parts": [{"text": "cat"}]}}
        )
    assert response.status_code == 200
    assert response.json()["embedding"]["values"] == pytest.approx(embedding("cat", 768))


# ---------------------------------------------------------------------------------------------- models


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_anthropic_models_list_the_script_models(is_async: bool) -> None:
    stub = ScriptTransport({"claude-a": ["A"], "*": ["rest"]}, side={"models": ["claude-b"]})
    client = anthropic_client(stub, is_async=is_async)

    async def run() -> tuple[list[str], str]:
        if is_async:
            listed = [m.id async for m in client.models.list()]
            return listed, (await client.models.retrieve("claude-z")).id
        return [m.id for m in client.models.list()], client.models.retrieve("claude-z").id

    listed, retrieved = asyncio.run(run())
    assert listed == ["claude-a", "claude-b", "claude-sonnet-4-5"]
    assert retrieved == "claude-z"
    assert [(r.provider, r.method, r.path, r.model) for r in stub.requests] == [
        ("models", "GET", "/v1/models", None),
        ("models", "GET", "/v1/models/claude-z", "claude-z"),
    ]
    assert len(stub.pending) == 2  # no generation turn was consumed
    assert stub.problems == []


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_openai_models_list_and_retrieve(is_async: bool) -> None:
    stub = ScriptTransport({"gpt-a": []})
    client = openai_client(stub, is_async=is_async)

    async def run() -> tuple[list[str], Any]:
        if is_async:
            return [m.id async for m in client.models.list()], await client.models.retrieve("gpt-a")
        return [m.id for m in client.models.list()], client.models.retrieve("gpt-a")

    listed, model = asyncio.run(run())
    assert listed == ["gpt-a", "gpt-4o-mini"]
    assert (model.id, model.object) == ("gpt-a", "model")
    assert stub.problems == []


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_gemini_models_list_and_get(is_async: bool) -> None:
    stub = ScriptTransport({"gemini-a": []})
    client = gemini_client(stub, is_async=is_async)

    async def run() -> tuple[list[str], Any]:
        if is_async:
            pager = await client.aio.models.list()
            return [m.name async for m in pager], await client.aio.models.get(model="gemini-a")
        return [m.name for m in client.models.list()], client.models.get(model="gemini-a")

    listed, model = asyncio.run(run())
    assert listed == ["models/gemini-a", "models/gemini-2.5-flash"]
    assert model.name == "models/gemini-a"
    assert stub.requests[-1].model == "gemini-a"
    assert stub.problems == []


# ----------------------------------------------------------------------------- the side script itself


@pytest.mark.parametrize(
    ("side", "message"),
    [
        ({"count_tokens": -1}, "field 'count_tokens'"),
        ({"embeddings": {"x": []}}, "field 'embeddings'"),
        ({"embeddings": {"x": [float("nan")]}}, "not a finite number"),
        ({"modles": ["m"]}, "unknown field 'modles' .*did you mean 'models'"),
        (["count_tokens"], "expected a mapping"),
        ({"jobs": {"pols": 3}}, r"unknown field 'jobs.pols' \(expected one of: polls, after\); did you mean 'polls'"),
        ({"jobs": {"polls": 0}}, "field 'jobs.polls': Input should be greater than or equal to 1"),
        ({"jobs": {"polls": True}}, "field 'jobs.polls': Input should be a valid integer"),
        ({"jobs": {"after": "soon"}}, "field 'jobs.after': expected seconds or a duration such as '90s'.*got 'soon'$"),
        ({"jobs": 3}, "field 'jobs': Input should be a valid dictionary"),
    ],
)
def test_a_bad_side_script_is_refused_at_construction(side: Any, message: str) -> None:
    with pytest.raises(ScriptError, match=message):
        ScriptTransport([], side=side)


def test_the_side_script_may_be_the_scripts_side_entry_but_not_both() -> None:
    stub = ScriptTransport({"*": ["Hi"], "$side": SideScript(count_tokens=3)})
    assert anthropic_client(stub).messages.count_tokens(model="m", messages=MESSAGES).input_tokens == 3
    with pytest.raises(ScriptError, match="given twice"):
        ScriptTransport({"*": [], "$side": {"count_tokens": 3}}, side={"count_tokens": 4})


def test_a_script_file_carries_a_side_entry_and_the_schema_describes_it(tmp_path: Any) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"*": ["Hi"], "$side": {"count_tokens": 5, "models": ["m-1"]}}), encoding="utf-8")
    loaded = load_script(path)
    assert isinstance(loaded, dict)
    assert loaded["$side"] == SideScript(count_tokens=5, models=["m-1"])
    stub = ScriptTransport(loaded)
    assert anthropic_client(stub).messages.count_tokens(model="m", messages=MESSAGES).input_tokens == 5
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"*": [], "$side": {"count_tokens": "many"}}), encoding="utf-8")
    with pytest.raises(ScriptError, match=r"bad\.json: invalid script\['\$side'\]: field 'count_tokens'"):
        load_script(bad)

    schema = script_json_schema()
    assert schema["anyOf"][1]["properties"]["$side"] == {"$ref": "#/$defs/SideScript"}
    side = schema["$defs"]["SideScript"]
    assert set(side["properties"]) == {"count_tokens", "embeddings", "models", "jobs"}
    assert side["additionalProperties"] is False
    assert "arrival order" in side["properties"]["count_tokens"]["description"]
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate({"*": [], "$side": {"embeddings": {"a": [1.0]}}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"*": [], "$side": {"embedings": {}}}, schema)


# ------------------------------------------------------------------------------- frameworks, untouched


def _framework(module: str, distribution: str) -> Any:
    """Import a framework of the `frameworks` group; skip without it, unless CI requires it."""
    import importlib
    import os

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if os.environ.get("WIRESCRIPT_REQUIRE_FRAMEWORKS") == "1":
            pytest.fail(f"{distribution} is not importable ({exc}); install the 'frameworks' group", pytrace=False)
        pytest.skip(f"{distribution} is not installed: this test needs the 'frameworks' dependency group")


def test_chat_anthropic_counts_tokens_against_the_stub(wirescript: Any) -> None:
    langchain_anthropic = _framework("langchain_anthropic", "langchain-anthropic")
    from langchain_core.messages import HumanMessage

    stub = wirescript([], intercept=True, side={"count_tokens": 14})
    llm = langchain_anthropic.ChatAnthropic(model="claude-sonnet-5", api_key="test-key")
    assert llm.get_num_tokens_from_messages([HumanMessage("Hello there")]) == 14
    [record] = stub.requests
    assert (record.provider, record.model, record.last_user_text) == ("count_tokens", "claude-sonnet-5", "Hello there")


def test_openai_embeddings_embed_query_against_the_stub(wirescript: Any) -> None:
    langchain_openai = _framework("langchain_openai", "langchain-openai")
    stub = wirescript([], intercept=True)
    # check_embedding_ctx_length=False: otherwise langchain tokenizes with tiktoken first, whose
    # encoding files come from the network on first use.
    embeddings = langchain_openai.OpenAIEmbeddings(
        model="text-embedding-3-small", api_key="test-key", check_embedding_ctx_length=False
    )
    vector = embeddings.embed_query("cat")
    assert vector == pytest.approx(embedding("cat", 1536), abs=1e-6)
    assert embeddings.embed_documents(["cat", "dog"])[0] == pytest.approx(vector)
    assert [r.messages for r in stub.requests] == [["cat"], ["cat", "dog"]]


# ------------------------------------------------------------------------------------- odd requests

SIDE_PATHS = {
    "POST": [
        "/v1/messages/count_tokens",
        "/v1/responses/input_tokens",
        "/v1beta/models/m:countTokens",
        "/v1/embeddings",
        "/v1beta/models/m:embedContent",
        "/v1beta/models/m:batchEmbedContents",
    ],
    "GET": ["/v1/models", "/v1/models/m", "/v1beta/models"],
}
VOCABULARY = ["model", "input", "messages", "contents", "content", "parts", "text", "requests", "dimensions"]
FIELDS = ["encoding_format", "outputDimensionality", "system", "anthropic_version"]


@pytest.mark.parametrize("hx", STACKS, ids=lambda m: m.__name__)
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    path=st.sampled_from(SIDE_PATHS["POST"]),
    body=odd_bodies(VOCABULARY, FIELDS),
    side=st.sampled_from([None, {"count_tokens": [1]}, {"embeddings": {"": [1.0]}}]),
)
def test_no_odd_body_makes_a_side_endpoint_raise(hx: ModuleType, path: str, body: dict[str, Any], side: Any) -> None:
    stub = ScriptTransport([], side=side)
    with hx.Client(transport=stub, base_url="https://stub.test") as http:
        response = http.post(path, content=json.dumps(body).encode())
    assert response.status_code in (200, 400)
    response.json()
    if response.status_code == 400:
        [problem] = stub.problems
        assert problem.kind in ("unreadable", "unscripted")  # never a wirescript bug (render_error)
    else:
        assert stub.problems == []


def test_dimensions_out_of_range_are_a_loud_problem_not_a_huge_vector() -> None:
    import openai

    stub = ScriptTransport([])
    with pytest.raises(openai.BadRequestError, match="asks for 1000000 dimensions"):
        openai_client(stub).embeddings.create(model="text-embedding-3-small", input="cat", dimensions=1_000_000)
    assert [p.kind for p in stub.problems] == ["unreadable"]


@pytest.mark.parametrize("hx", STACKS, ids=lambda m: m.__name__)
def test_a_get_with_a_body_and_a_post_without_one(hx: ModuleType) -> None:
    stub = ScriptTransport([])
    with hx.Client(transport=stub, base_url="https://api.openai.com") as http:
        assert http.get("/v1/models").status_code == 200
        assert http.request("GET", "/v1/models", content=b'{"ignored": true}').status_code == 200
        assert http.post("/v1/embeddings").status_code == 400  # an empty POST body is unreadable
    assert [p.kind for p in stub.problems] == ["unreadable"]


def test_check_lists_scripted_counts_never_requested() -> None:
    stub = ScriptTransport([], side={"count_tokens": [7, 8, 9]})
    anthropic_client(stub).messages.count_tokens(model="m", messages=MESSAGES)
    with pytest.raises(AssertionError) as info:
        stub.check()
    assert str(info.value) == (
        "wirescript: 2 side script answer(s) were never requested:\n"
        "  - side['count_tokens'][1]: 8\n"
        "  - side['count_tokens'][2]: 9"
    )
    stub.check(unused_turns=False)
    ScriptTransport([], side={"count_tokens": 7}).check()  # one count for every request: nothing to use up


def test_a_stub_given_no_side_script_serves_the_defaults() -> None:
    # The side script every stub given none shares is built without validation: it must be SideScript()'s.
    from wirescript._core.cursor import _NO_SIDE
    from wirescript.side import SideScript

    made = SideScript()
    assert made == _NO_SIDE
    assert _NO_SIDE.jobs == made.jobs
    assert _NO_SIDE.model_fields_set == made.model_fields_set == set()
    assert _NO_SIDE.model_dump() == made.model_dump()
