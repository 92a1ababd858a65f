"""Prompt caching by OpenAI's, Gemini's and Bedrock's rules, through their real SDKs; answers unchanged without it."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from _support import anthropic_client, no_aws_environment, openai_client
from wirescript import ScriptTransport
from wirescript.wires.openai.caching import cached_in_steps

LINE = "Policy line. "  # 13 characters


def policy(tokens: int) -> str:
    """A system prompt of about `tokens` tokens (the default counter: a token per 4 characters)."""
    return (LINE * (tokens * 4 // len(LINE) + 1))[: tokens * 4]


# ---------------------------------------------------------------------------- OpenAI


def chat_twice(stub: ScriptTransport, system: str, *, model: str = "gpt-4o", **extra: Any) -> list[Any]:
    client = openai_client(stub, max_retries=0)
    messages: list[Any] = [{"role": "system", "content": system}, {"role": "user", "content": "First question?"}]
    first = client.chat.completions.create(model=model, messages=messages, **extra)
    messages += [{"role": "assistant", "content": "One."}, {"role": "user", "content": "Second question?"}]
    second = client.chat.completions.create(model=model, messages=messages, **extra)
    return [first.usage, second.usage]


def test_openai_caches_a_prefix_of_1024_tokens_or_more_in_steps_of_128() -> None:
    stub = ScriptTransport(["One.", "Two."], usage="derive")
    first, second = chat_twice(stub, policy(1_100))
    assert first.prompt_tokens_details.cached_tokens == 0
    assert second.prompt_tokens_details.cached_tokens == 1_024  # 1,100 + the first question: one step of 1,024
    assert second.prompt_tokens > second.prompt_tokens_details.cached_tokens  # prompt_tokens includes them
    stub = ScriptTransport(["One.", "Two."], usage="derive")
    assert chat_twice(stub, policy(1_300))[1].prompt_tokens_details.cached_tokens == 1_280
    stub = ScriptTransport(["One.", "Two."], usage="derive")
    below = chat_twice(stub, policy(900))
    assert [u.prompt_tokens_details.cached_tokens for u in below] == [0, 0]
    assert (
        stub.bill.rows[1].cache_note
        == f"its prompt is {stub.bill.rows[1].prompt_tokens:,} tokens, below the 1,024 OpenAI caches"
    )
    assert [cached_in_steps(n) for n in (1_023, 1_024, 1_151, 1_152, 5_000)] == [0, 1_024, 1_024, 1_152, 4_992]


def test_openai_usage_equals_the_bill_streamed_with_include_usage_and_not() -> None:
    stub = ScriptTransport(["One.", "Two.", "Three."], usage="derive")
    client = openai_client(stub, max_retries=0)
    messages = [{"role": "system", "content": policy(2_000)}, {"role": "user", "content": "Hi"}]
    usages = [client.chat.completions.create(model="gpt-4o", messages=messages).usage]
    for stream_options in ({"include_usage": True}, None):
        extra = {"stream_options": stream_options} if stream_options else {}
        chunks = list(client.chat.completions.create(model="gpt-4o", messages=messages, stream=True, **extra))
        found = [chunk.usage for chunk in chunks if chunk.usage is not None]
        usages += found
        assert len(found) == (1 if stream_options else 0)  # usage only with include_usage, as OpenAI does
    assert [(row.prompt_tokens, row.cache_read_input_tokens, row.output_tokens) for row in stub.bill][:2] == [
        (u.prompt_tokens, u.prompt_tokens_details.cached_tokens, u.completion_tokens) for u in usages
    ]
    stub.check()


def test_openai_responses_report_cached_tokens_in_input_tokens_details() -> None:
    stub = ScriptTransport(["One.", "Two.", "Three."], usage="derive")
    client = openai_client(stub, max_retries=0)
    first = client.responses.create(model="gpt-4o", instructions=policy(1_500), input="Q1")
    second = client.responses.create(model="gpt-4o", instructions=policy(1_500), input="Q2")
    with client.responses.stream(model="gpt-4o", instructions=policy(1_500), input="Q3") as events:
        third = events.get_final_response()
    assert first.usage.input_tokens_details.cached_tokens == 0
    assert second.usage.input_tokens_details.cached_tokens == cached_in_steps(first.usage.input_tokens - 1) > 0
    assert third.usage.input_tokens_details.cached_tokens == second.usage.input_tokens_details.cached_tokens
    assert [row.prompt_tokens for row in stub.bill] == [r.usage.input_tokens for r in (first, second, third)]
    stub.check()


def test_openai_prompt_cache_key_and_retention() -> None:
    stub = ScriptTransport(["One.", "Two."], usage="derive")
    assert chat_twice(stub, policy(2_000), prompt_cache_key="a")[1].prompt_tokens_details.cached_tokens > 0
    stub = ScriptTransport(["One.", "Two."], usage="derive")
    client = openai_client(stub, max_retries=0)
    messages = [{"role": "system", "content": policy(2_000)}, {"role": "user", "content": "Hi"}]
    client.chat.completions.create(model="gpt-4o", messages=messages, prompt_cache_key="tenant-a")
    other = client.chat.completions.create(model="gpt-4o", messages=messages, prompt_cache_key="tenant-b")
    assert other.usage.prompt_tokens_details.cached_tokens == 0  # another key: routed elsewhere
    for retention, hits in (("in_memory", False), ("24h", True)):
        stub = ScriptTransport(["One.", "Two."], usage="derive")
        client = openai_client(stub, max_retries=0)
        client.chat.completions.create(model="gpt-4o", messages=messages, prompt_cache_retention=retention)
        stub.clock.advance("10m")
        later = client.chat.completions.create(model="gpt-4o", messages=messages, prompt_cache_retention=retention)
        assert (later.usage.prompt_tokens_details.cached_tokens > 0) is hits, retention


def test_gpt_5_6_and_later_report_cache_writes_and_round_nothing() -> None:
    stub = ScriptTransport(["One.", "Two."], usage="derive")
    first, second = chat_twice(stub, policy(1_100), model="gpt-5.6")
    assert first.prompt_tokens_details.cache_write_tokens == first.prompt_tokens
    assert second.prompt_tokens_details.cached_tokens == first.prompt_tokens  # not rounded to 1,024
    assert stub.bill.rows[0].cache_creation_input_tokens == first.prompt_tokens
    assert stub.bill.rows[0].input_tokens == 0  # all of it written: billed at the write rate


def test_azure_openai_caches_by_the_same_rules() -> None:
    openai = pytest.importorskip("openai")
    httpx2 = pytest.importorskip("httpx2")

    stub = ScriptTransport(["One.", "Two."], usage="derive")
    client = openai.AzureOpenAI(
        api_key="k",
        api_version="2024-10-21",
        azure_endpoint="https://res.openai.azure.com",
        http_client=httpx2.Client(transport=stub),
        max_retries=0,
    )
    messages = [{"role": "system", "content": policy(2_000)}, {"role": "user", "content": "Hi"}]
    usages = [client.chat.completions.create(model="deploy", messages=messages).usage for _ in range(2)]
    assert usages[1].prompt_tokens_details.cached_tokens == cached_in_steps(usages[0].prompt_tokens)
    assert stub.wires[1].caching.provider_for_prices(stub.requests[0]) == "azure"
    stub.check()


# ---------------------------------------------------------------------------- Gemini


def gemini_client(stub: ScriptTransport) -> Any:
    genai = pytest.importorskip("google.genai")
    import httpx2

    types = genai.types
    return genai.Client(api_key="k", http_options=types.HttpOptions(httpx_client=httpx2.Client(transport=stub)))


def test_gemini_implicit_caching_hits_above_the_models_minimum() -> None:
    genai = pytest.importorskip("google.genai")
    config = genai.types.GenerateContentConfig(system_instruction=policy(2_500))
    stub = ScriptTransport(["One.", "Two."], usage="derive")
    client = gemini_client(stub)
    first = client.models.generate_content(model="gemini-2.5-flash", contents="Q1", config=config).usage_metadata
    second = client.models.generate_content(model="gemini-2.5-flash", contents="Q2", config=config).usage_metadata
    assert first.cached_content_token_count is None  # none read: not sent, as Gemini does
    assert second.cached_content_token_count == 2_500
    assert second.prompt_token_count == first.prompt_token_count  # it includes the cached tokens
    small = genai.types.GenerateContentConfig(system_instruction=policy(1_500))  # below 2.5 Flash's 2,048
    stub = ScriptTransport(["One.", "Two."], usage="derive")
    client = gemini_client(stub)
    for _ in range(2):
        usage = client.models.generate_content(model="gemini-2.5-flash", contents="Q", config=small).usage_metadata
    assert usage.cached_content_token_count is None
    stub.check()


def test_gemini_explicit_caches_are_created_used_listed_updated_and_expire_on_the_stubs_clock() -> None:
    genai = pytest.importorskip("google.genai")
    types = genai.types
    stub = ScriptTransport(["One.", "Two.", "Three."], usage="derive")
    client = gemini_client(stub)
    cache = client.caches.create(
        model="gemini-2.5-flash",
        config=types.CreateCachedContentConfig(system_instruction=policy(3_000), ttl="600s", display_name="policy"),
    )
    assert cache.name.startswith("cachedContents/")
    assert cache.usage_metadata.total_token_count == 3_000
    assert (cache.expire_time - cache.create_time).total_seconds() == 600
    use = types.GenerateContentConfig(cached_content=cache.name)
    usage = client.models.generate_content(model="gemini-2.5-flash", contents="Hi", config=use).usage_metadata
    assert usage.cached_content_token_count == 3_000
    assert usage.prompt_token_count == 3_001
    assert [c.name for c in client.caches.list()] == [cache.name]
    assert client.caches.get(name=cache.name).display_name == "policy"
    client.caches.update(name=cache.name, config=types.UpdateCachedContentConfig(ttl="1200s"))
    stub.clock.advance("15m")  # within the updated ttl
    assert (
        client.models.generate_content(
            model="gemini-2.5-flash", contents="Hi", config=use
        ).usage_metadata.cached_content_token_count
        == 3_000
    )
    stub.clock.advance("10m")  # past it
    with pytest.raises(genai.errors.ClientError, match="404"):
        client.caches.get(name=cache.name)
    assert list(client.caches.list()) == []
    late = client.models.generate_content(model="gemini-2.5-flash", contents="Hi", config=use).usage_metadata
    assert late.cached_content_token_count is None
    assert stub.bill.rows[-1].cache_note == f"its cachedContent {cache.name!r} expired before it arrived"
    # the cache endpoints consume no turn, and are recorded
    assert [r.provider for r in stub.requests].count("gemini_caches") == 6
    assert stub.pending == []
    stub.check()


def test_gemini_deleted_caches_are_gone() -> None:
    genai = pytest.importorskip("google.genai")
    stub = ScriptTransport([], usage="derive")
    client = gemini_client(stub)
    cache = client.caches.create(
        model="gemini-2.5-flash", config=genai.types.CreateCachedContentConfig(system_instruction="x" * 100)
    )
    assert (cache.expire_time - cache.create_time).total_seconds() == 3600  # the default ttl: 1 hour
    client.caches.delete(name=cache.name)
    with pytest.raises(genai.errors.ClientError, match="404"):
        client.caches.get(name=cache.name)
    stub.check()


# ---------------------------------------------------------------------------- Bedrock


@pytest.fixture
def bedrock(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Any:
    boto3 = pytest.importorskip("boto3")
    no_aws_environment(monkeypatch, tmp_path)

    def make(stub: ScriptTransport) -> Any:
        client = boto3.client(
            "bedrock-runtime", region_name="us-east-1", aws_access_key_id="AKID", aws_secret_access_key="s"
        )
        return stub.attach(client)

    return make


CLAUDE = "us.anthropic.claude-sonnet-4-6-v1:0"


def test_bedrock_converse_cache_points_write_then_read_streamed_or_not(bedrock: Any) -> None:
    stub = ScriptTransport(["One.", "Two.", "Three."], usage="derive")
    client = bedrock(stub)
    system = [{"text": policy(1_500)}, {"cachePoint": {"type": "default", "ttl": "1h"}}]
    messages = [{"role": "user", "content": [{"text": "Hi"}]}]
    first = client.converse(modelId=CLAUDE, system=system, messages=messages)["usage"]
    second = client.converse(modelId=CLAUDE, system=system, messages=messages)["usage"]
    events = client.converse_stream(modelId=CLAUDE, system=system, messages=messages)["stream"]
    third = next(event["metadata"]["usage"] for event in events if "metadata" in event)
    assert first["cacheWriteInputTokens"] == 1_500
    assert first["cacheDetails"] == [{"ttl": "1h", "inputTokens": 1_500}]
    assert second["cacheReadInputTokens"] == third["cacheReadInputTokens"] == 1_500
    assert "cacheWriteInputTokens" not in second
    assert [(row.input_tokens, row.cache_creation_input_tokens, row.cache_read_input_tokens) for row in stub.bill] == [
        (u["inputTokens"], u.get("cacheWriteInputTokens", 0), u.get("cacheReadInputTokens", 0))
        for u in (first, second, third)
    ]
    stub.check()


def test_bedrock_each_checkpoint_needs_the_minimum_since_the_last(bedrock: Any) -> None:
    stub = ScriptTransport(["One."], usage="derive")
    system = [
        {"text": policy(1_100)},
        {"cachePoint": {"type": "default"}},
        {"text": policy(500)},  # 1,600 in all, but 500 since the first checkpoint: the second caches nothing
        {"cachePoint": {"type": "default"}},
    ]
    usage = bedrock(stub).converse(
        modelId=CLAUDE, system=system, messages=[{"role": "user", "content": [{"text": "Hi"}]}]
    )["usage"]
    assert usage["cacheWriteInputTokens"] == 1_100
    assert usage["inputTokens"] == 501
    stub.check()


def test_claude_on_bedrock_invoke_caches_by_anthropics_rules(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    anthropic = pytest.importorskip("anthropic")
    pytest.importorskip("botocore")
    import httpx2

    no_aws_environment(monkeypatch, tmp_path)
    stub = ScriptTransport(["One.", "Two."], usage="derive")
    client = anthropic.AnthropicBedrock(
        aws_access_key="AKID",
        aws_secret_key="s",
        aws_region="us-east-1",
        http_client=httpx2.Client(transport=stub),
        max_retries=0,
    )
    system = [{"type": "text", "text": policy(1_500), "cache_control": {"type": "ephemeral"}}]
    usages = [
        client.messages.create(
            model="anthropic.claude-sonnet-4-6",
            max_tokens=10,
            system=system,
            messages=[{"role": "user", "content": "Hi"}],
        ).usage
        for _ in range(2)
    ]
    assert usages[0].cache_creation_input_tokens == usages[1].cache_read_input_tokens == 1_500
    bedrock_wire = next(wire for wire in stub.wires if wire.name == "bedrock")
    assert bedrock_wire.caching.provider_for_prices(stub.requests[0]) == "aws"
    stub.check()


# ---------------------------------------------------------------------------- without usage=, nothing changes

TURNS: list[Any] = [
    {"text": "Hello there, world."},
    {"text": "Calling.", "tool": {"name": "lookup", "input": {"q": "x"}}},
    {
        "thinking": "Hmm.",
        "text": "Done.",
        "usage": {
            "input_tokens": 120,
            "output_tokens": 7,
            "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 20,
        },
    },
]
_HI = [{"role": "user", "content": "hi"}]
_PARTS = [{"role": "user", "parts": [{"text": "hi"}]}]
_CONVERSE = [{"role": "user", "content": [{"text": "hi"}]}]
_INVOKE = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 50, "messages": _HI}
_BEDROCK = "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-x"
_GEMINI = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash"
ANSWERS: list[tuple[str, dict[str, Any], bool]] = [
    ("https://api.anthropic.com/v1/messages", {"model": "claude-sonnet-4-6", "max_tokens": 50, "messages": _HI}, True),
    ("https://api.openai.com/v1/chat/completions", {"model": "gpt-4o", "messages": _HI}, True),
    (
        "https://api.openai.com/v1/chat/completions#u",
        {"model": "gpt-4o", "messages": _HI, "stream_options": {"include_usage": True}},
        True,
    ),
    ("https://api.openai.com/v1/responses", {"model": "gpt-4o", "input": "hi"}, True),
    (f"{_GEMINI}:generateContent", {"contents": _PARTS}, False),
    (f"{_GEMINI}:streamGenerateContent?alt=sse", {"contents": _PARTS}, False),
    (f"{_BEDROCK}/converse", {"messages": _CONVERSE}, False),
    (f"{_BEDROCK}/converse-stream", {"messages": _CONVERSE}, False),
    (f"{_BEDROCK}/invoke", _INVOKE, False),
    (f"{_BEDROCK}/invoke-with-response-stream", _INVOKE, False),
]


def _tools(url: str) -> dict[str, Any]:
    if "anthropic.com" in url or "invoke" in url:
        return {"tools": [{"name": "lookup", "input_schema": {"type": "object"}}]}
    if "chat" in url:
        return {"tools": [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]}
    if "responses" in url:
        return {"tools": [{"type": "function", "name": "lookup", "parameters": {"type": "object"}}]}
    if "gemini" in url:
        return {"tools": [{"functionDeclarations": [{"name": "lookup"}]}]}
    return {"toolConfig": {"tools": [{"toolSpec": {"name": "lookup", "inputSchema": {"json": {"type": "object"}}}}]}}


def answers(**stub_options: Any) -> dict[str, str]:
    """A digest of each answer: every wire, JSON and streamed, a text turn, a tool call and scripted usage."""
    httpx2 = pytest.importorskip("httpx2")

    out = {}
    for url, body, streams in ANSWERS:
        for streamed in (False, True) if streams else (None,):
            for number, turn in enumerate(TURNS):
                stub = ScriptTransport([turn], strict=False, **stub_options)
                sent = {**body, **({"stream": True} if streamed else {}), **(_tools(url) if "tool" in turn else {})}
                headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
                response = stub.handle_request(httpx2.Request("POST", url.split("#")[0], json=sent, headers=headers))
                out[f"{url} {streamed} {number}"] = hashlib.sha256(response.read()).hexdigest()[:16]
    return out


GOLDEN_DIGEST = "1336a4c51f930a1a"
"""The digest of `answers()` as every wire sent them before usage could be derived: without `usage=`, the
answers are byte-identical to those (regenerate it only for a deliberate change to a rendering: the last was
a Response object's `background` field, which the API's carries)."""


def test_without_usage_every_answer_is_byte_identical_and_nothing_is_derived(monkeypatch: pytest.MonkeyPatch) -> None:
    from wirescript._core.bill import Billing

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("derived without usage=")

    monkeypatch.setattr(Billing, "derived_turn", refuse)
    digests = answers()
    assert len(digests) == 42
    whole = hashlib.sha256(repr(sorted(digests.items())).encode()).hexdigest()[:16]
    assert whole == GOLDEN_DIGEST


def test_derived_answers_differ_from_scripted_ones() -> None:
    """The byte check can fail: the same requests with usage="derive" send other counts."""
    assert answers(usage="derive") != answers()


def test_scripted_cache_usage_without_a_split_sends_no_new_fields() -> None:
    stub = ScriptTransport([TURNS[2]])
    message = anthropic_client(stub, max_retries=0).messages.create(
        model="claude-sonnet-4-6", max_tokens=5, messages=_HI
    )
    assert message.usage.cache_creation is None
    assert (message.usage.cache_read_input_tokens, message.usage.cache_creation_input_tokens) == (100, 20)
    stub.check()


def test_gemini_streams_carry_the_cached_count_in_the_last_chunks_usage_metadata() -> None:
    genai = pytest.importorskip("google.genai")
    config = genai.types.GenerateContentConfig(system_instruction=policy(2_500))
    stub = ScriptTransport(["One.", "Two, streamed."], usage="derive")
    client = gemini_client(stub)
    client.models.generate_content(model="gemini-2.5-flash", contents="Q1", config=config)
    chunks = list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="Q2", config=config))
    last = chunks[-1].usage_metadata
    assert last.cached_content_token_count == 2_500
    assert last.prompt_token_count == stub.bill.rows[1].prompt_tokens
    stub.check()


@pytest.mark.parametrize(("tokens", "cached"), [(900, 0), (1_100, 1_100)])
def test_bedrock_nova_caches_from_1000_tokens_a_checkpoint(bedrock: Any, tokens: int, cached: int) -> None:
    stub = ScriptTransport(["One.", "Two."], usage="derive")
    client = bedrock(stub)
    system = [{"text": policy(tokens)}, {"cachePoint": {"type": "default"}}]
    messages = [{"role": "user", "content": [{"text": "Hi"}]}]
    first = client.converse(modelId="amazon.nova-pro-v1:0", system=system, messages=messages)["usage"]
    second = client.converse(modelId="amazon.nova-pro-v1:0", system=system, messages=messages)["usage"]
    assert first.get("cacheWriteInputTokens", 0) == second.get("cacheReadInputTokens", 0) == cached
    stub.check()
