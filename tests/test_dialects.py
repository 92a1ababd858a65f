"""Host dialects: the OpenAI-compatible servers' documented differences, served to the real openai SDK.

Each test pins one quirk (see `docs/dialects.md` for the table and the sources); the default stub on
OpenAI's own hosts is pinned unchanged at the end.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import openai
import pytest

from _support import STACKS, openai_client
from wirescript import ScriptTransport, UsageError, dialects
from wirescript.recorded import RecordedRequest
from wirescript.wires import ChatDialect, Quirk
from wirescript.wires.openai import ChatShape

pytest_plugins = ["pytester"]

USER = [{"role": "user", "content": "Weather and time in Paris?"}]
TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}
    for name in ("get_weather", "get_time")
]
TWO_CALLS = {
    "tools": [{"name": "get_weather", "input": {"city": "Paris"}}, {"name": "get_time", "input": {"tz": "CET"}}]
}
ONE_CALL = {"tool": {"name": "get_weather", "input": {"city": "Paris"}}}


def client(stub: ScriptTransport, base_url: str = "https://api.example.test/v1", **kwargs: Any) -> Any:
    return openai_client(stub, base_url=base_url, max_retries=0, **kwargs)


def raw_stream(stub: ScriptTransport, base_url: str = "https://api.example.test/v1", **params: Any) -> list[Any]:
    """The data lines of a streamed answer as sent (JSON decoded; comments and `[DONE]` as text)."""
    response = client(stub, base_url).chat.completions.with_raw_response.create(
        model="m", messages=USER, tools=TOOLS, stream=True, **params
    )
    response.http_response.read()
    lines = [line for line in response.http_response.text.split("\n") if line]
    return [json.loads(line[6:]) if line.startswith("data: {") else line for line in lines]


def tool_call_deltas(chunks: list[Any]) -> list[dict[str, Any]]:
    return [
        call
        for chunk in chunks
        if isinstance(chunk, dict)
        for choice in chunk.get("choices", [])
        for call in choice["delta"].get("tool_calls", [])
    ]


def finish_reasons(chunks: list[Any]) -> list[str]:
    return [
        choice["finish_reason"]
        for chunk in chunks
        if isinstance(chunk, dict)
        for choice in chunk.get("choices", [])
        if choice.get("finish_reason")
    ]


# ------------------------------------------------------------------------------------------ the axis


def test_the_dialects_are_listed() -> None:
    assert dialects() == (
        "ollama",
        "vllm",
        "sglang",
        "lmstudio",
        "groq",
        "mistral",
        "deepseek",
        "openrouter",
        "together",
        "xai",
        "gemini-openai",
        "azure",
    )


@pytest.mark.parametrize("dialect", dialects())
def test_every_dialect_serves_the_openai_sdk(dialect: str) -> None:
    stub = ScriptTransport(["Hello.", TWO_CALLS], dialect=dialect)
    sdk = client(stub)
    assert sdk.chat.completions.create(model="m", messages=USER).choices[0].message.content == "Hello."
    with sdk.chat.completions.stream(model="m", messages=USER, tools=TOOLS) as stream:
        final = stream.get_final_completion()
    assert final.choices[0].message.tool_calls  # whatever the quirks, the calls arrive
    assert {record.provider for record in stub.requests} == {dialect}
    assert stub.problems == []


def test_an_unknown_dialect_names_the_closest() -> None:
    with pytest.raises(UsageError, match=r"^dialect: unknown dialect 'olama'; did you mean 'ollama'\?"):
        ScriptTransport([], dialect="olama")
    with pytest.raises(UsageError, match=r"dialect: expected a dialect id .* got int 3"):
        ScriptTransport([], dialect=3)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"dialect 'mistral': its quirks are not versioned"):
        ScriptTransport([], dialect="mistral@1.0")
    with pytest.raises(UsageError, match=r"expected a release number such as '0.20.4', got 'latest'"):
        ScriptTransport([], dialect="ollama@latest")


# ------------------------------------------------------------------------------------------ Mistral

MISTRAL_ID = re.compile(r"[a-zA-Z0-9]{9}")


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_mistral_mints_nine_character_alphanumeric_tool_call_ids(stream: bool) -> None:
    stub = ScriptTransport([TWO_CALLS], dialect="mistral")
    sdk = client(stub)
    if stream:
        with sdk.chat.completions.stream(model="mistral-large-latest", messages=USER, tools=TOOLS) as events:
            calls = events.get_final_completion().choices[0].message.tool_calls
    else:
        calls = (
            sdk.chat.completions.create(model="mistral-large-latest", messages=USER, tools=TOOLS)
            .choices[0]
            .message.tool_calls
        )
    ids = [call.id for call in calls]
    assert len(set(ids)) == 2
    assert all(MISTRAL_ID.fullmatch(found) for found in ids), ids


def test_mistral_is_the_default_at_its_own_host() -> None:
    stub = ScriptTransport([ONE_CALL])
    reply = client(stub, "https://api.mistral.ai/v1").chat.completions.create(model="m", messages=USER, tools=TOOLS)
    assert MISTRAL_ID.fullmatch(reply.choices[0].message.tool_calls[0].id)
    assert stub.requests[0].provider == "mistral"


def resent(call_id: str) -> list[dict[str, Any]]:
    call = {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
    return [
        *USER,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": "Sunny."},
    ]


def test_mistral_refuses_a_tool_call_id_minted_elsewhere_with_its_message() -> None:
    stub = ScriptTransport(["Sunny it is."], dialect="mistral")
    with pytest.raises(openai.BadRequestError) as info:
        client(stub).chat.completions.create(model="m", messages=resent("call_0000_0"), tools=TOOLS)
    assert info.value.status_code == 400
    body = info.value.body
    assert body["object"] == "error"  # Mistral's flat envelope, not OpenAI's {"error": {...}}
    assert body["type"] == "invalid_function_call"
    assert body["code"] == "3280"
    assert body["message"].startswith(
        "Tool call id was call_0000_0 but must be a-z, A-Z, 0-9, with a length of 9. "
        "(wirescript strict rule mistral.tool-call-id-format"
    )
    assert [p.kind for p in stub.problems] == ["strict"]
    assert stub.pending  # the refused request consumed no turn
    # Its own ids pass, and strict_skip turns the refusal off.
    passing = ScriptTransport(["Sunny it is."], dialect="mistral")
    answer = client(passing).chat.completions.create(model="m", messages=resent("aB3xK9mP2"), tools=TOOLS)
    assert answer.choices[0].message.content == "Sunny it is."
    lenient = ScriptTransport(["Sunny."], dialect="mistral", strict_skip=["mistral.tool-call-id-format"])
    assert client(lenient).chat.completions.create(model="m", messages=resent("call_0000_0")).choices[0].message.content


def test_mistral_checks_the_id_of_a_tool_message_too() -> None:
    messages = [*resent("aB3xK9mP2")]
    messages[2] = {**messages[2], "tool_call_id": "toolu_01"}
    stub = ScriptTransport(["x"], dialect="mistral", strict_skip=["openai_chat.tool-message-without-call"])
    with pytest.raises(openai.BadRequestError, match="Tool call id was toolu_01 but must be"):
        client(stub).chat.completions.create(model="m", messages=messages)


# ------------------------------------------------------------------------------------------ Ollama


def test_ollama_0_20_4_streams_two_parallel_calls_at_index_0() -> None:
    stub = ScriptTransport([TWO_CALLS], dialect="ollama@0.20.4")
    chunks = raw_stream(stub, "http://localhost:11434/v1")
    deltas = tool_call_deltas(chunks)
    assert {delta["index"] for delta in deltas} == {0}
    assert [delta["function"]["name"] for delta in deltas if "id" in delta] == ["get_weather", "get_time"]
    assert finish_reasons(chunks) == ["tool_calls"]  # fixed in 0.5.12, long before this one


def test_ollama_0_5_11_ends_a_tool_call_stream_with_stop() -> None:
    stub = ScriptTransport([TWO_CALLS], dialect="ollama@0.5.11")
    chunks = raw_stream(stub, "http://localhost:11434/v1")
    assert finish_reasons(chunks) == ["stop"]
    assert [delta["index"] for delta in tool_call_deltas(chunks) if "id" in delta] == [0, 1]


def test_what_the_openai_sdk_accumulates_from_calls_all_at_index_0() -> None:
    """Documented, not endorsed: `chat.completions.stream()` keys calls by `index`, so the two become one."""
    stub = ScriptTransport([TWO_CALLS], dialect="ollama@0.20.4")
    with client(stub, "http://localhost:11434/v1").chat.completions.stream(
        model="qwen3", messages=USER, tools=TOOLS
    ) as stream:
        events = list(stream)
        final = stream.get_final_completion()
    [merged] = final.choices[0].message.tool_calls
    assert merged.function.name == "get_weatherget_time"  # the names concatenated
    assert merged.function.arguments == '{"city":"Paris"}{"tz":"CET"}'  # not one JSON object
    with pytest.raises(json.JSONDecodeError):
        json.loads(merged.function.arguments)
    # An app that keys the calls by `id` instead gets both, whole.
    by_id: dict[str, dict[str, str]] = {}
    current = ""
    for event in events:
        if event.type != "chunk":
            continue
        for delta in event.chunk.choices[0].delta.tool_calls or []:
            current = delta.id or current
            entry = by_id.setdefault(current, {"name": "", "arguments": ""})
            entry["name"] += (delta.function.name or "") if delta.function else ""
            entry["arguments"] += (delta.function.arguments or "") if delta.function else ""
    assert [(e["name"], json.loads(e["arguments"])) for e in by_id.values()] == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {"tz": "CET"}),
    ]


def test_ollama_today_indexes_its_calls_and_sends_reasoning() -> None:
    stub = ScriptTransport([{**TWO_CALLS, "thinking": "Two lookups."}], dialect="ollama")
    chunks = raw_stream(stub, "http://localhost:11434/v1")
    assert [d["index"] for d in tool_call_deltas(chunks) if "id" in d] == [0, 1]
    assert all(re.fullmatch(r"call_[a-z0-9]{8}", d["id"]) for d in tool_call_deltas(chunks) if "id" in d)
    assert finish_reasons(chunks) == ["tool_calls"]
    reasoning = "".join(
        c["choices"][0]["delta"].get("reasoning", "") for c in chunks if isinstance(c, dict) and c["choices"]
    )
    assert reasoning == "Two lookups."
    assert not any("reasoning_content" in c["choices"][0]["delta"] for c in chunks if isinstance(c, dict))
    assert {c["system_fingerprint"] for c in chunks if isinstance(c, dict)} == {"fp_ollama"}


def test_ollama_is_the_default_at_localhost_11434() -> None:
    stub = ScriptTransport([{"text": "Hi.", "thinking": "Hmm."}, "Elsewhere."])
    reply = client(stub, "http://localhost:11434/v1").chat.completions.create(model="llama3.2", messages=USER)
    assert reply.choices[0].message.model_extra["reasoning"] == "Hmm."
    other = client(stub, "http://localhost:11435/v1").chat.completions.create(model="llama3.2", messages=USER)
    assert other.choices[0].message.content == "Elsewhere."
    assert [r.provider for r in stub.requests] == ["ollama", "openai_chat"]  # another port is not Ollama's


def test_ollama_errors_carry_its_types() -> None:
    stub = ScriptTransport([{"error": {"status": 404, "message": 'model "qwen9" not found, try pulling it first'}}])
    with pytest.raises(openai.NotFoundError) as info:
        client(stub, "http://localhost:11434/v1").chat.completions.create(model="qwen9", messages=USER)
    assert info.value.body == {
        "message": 'model "qwen9" not found, try pulling it first',
        "type": "not_found_error",
        "param": None,
        "code": None,
    }


# ------------------------------------------------------------------------------------------ DeepSeek


def turn_without_reasoning(**message: Any) -> list[dict[str, Any]]:
    call = {"id": "call_00_abc", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
    return [
        *USER,
        {"role": "assistant", "content": None, "tool_calls": [call], **message},
        {"role": "tool", "tool_call_id": "call_00_abc", "content": "Sunny."},
    ]


def test_deepseek_thinking_refuses_a_resent_tool_call_turn_without_reasoning_content() -> None:
    stub = ScriptTransport(["Sunny."], dialect="deepseek")
    sdk = client(stub, "https://api.deepseek.com")
    with pytest.raises(openai.BadRequestError) as info:
        sdk.chat.completions.create(model="deepseek-v4-pro", messages=turn_without_reasoning(), tools=TOOLS)
    assert info.value.body["message"].startswith(
        "The `reasoning_content` in the thinking mode must be passed back to the API. "
        "(wirescript strict rule deepseek.reasoning-content-passed-back"
    )
    assert info.value.body["code"] == "invalid_request_error"
    assert info.value.body["param"] == "messages.[1].reasoning_content"
    # Passed back, it is served; so is the same turn with thinking off, or on the non-thinking model.
    kept = turn_without_reasoning(reasoning_content="Look it up.")
    assert sdk.chat.completions.create(model="deepseek-v4-pro", messages=kept).choices[0].message.content == "Sunny."
    for params in (
        {"model": "deepseek-v4-pro", "extra_body": {"thinking": {"type": "disabled"}}},
        {"model": "deepseek-chat"},
    ):
        off = ScriptTransport(["Sunny."], dialect="deepseek")
        answer = client(off).chat.completions.create(messages=turn_without_reasoning(), **params)
        assert answer.choices[0].message.content == "Sunny."


def test_deepseek_answers_its_thinking_as_reasoning_content_at_its_host() -> None:
    stub = ScriptTransport([{"text": "9.8", "thinking": "Compare the decimals."}])
    reply = client(stub, "https://api.deepseek.com").chat.completions.create(model="deepseek-v4-pro", messages=USER)
    assert reply.choices[0].message.model_extra["reasoning_content"] == "Compare the decimals."
    assert stub.requests[0].provider == "deepseek"


# ------------------------------------------------------------------------------------------ OpenRouter

ROUTER = "https://openrouter.ai/api/v1"
# Five events go out first: the processing comment, the role chunk and the three text pieces.
FAILURE = {"type": "server_error", "message": "Provider disconnected", "after": 5}
BROKEN = {"text": "The answer is", "fault": {"stream_error": FAILURE}}


def test_an_openrouter_stream_can_end_in_a_200_error_chunk_the_app_must_handle() -> None:
    stub = ScriptTransport([BROKEN])
    sdk = client(stub, ROUTER)
    received: list[str] = []
    stream = sdk.chat.completions.create(model="openai/gpt-4o", messages=USER, stream=True)
    with pytest.raises(openai.APIError, match="Provider disconnected") as info:
        received.extend(chunk.choices[0].delta.content or "" for chunk in stream)
    assert not isinstance(info.value, openai.APIStatusError)  # no HTTP error: the status was 200
    assert "".join(received) == "The answer is"
    assert info.value.body == {"code": "server_error", "message": "Provider disconnected"}
    assert stub.requests[0].provider == "openrouter"


def test_openrouter_streams_in_its_own_shape() -> None:
    stub = ScriptTransport([BROKEN])
    chunks = raw_stream(stub, ROUTER)
    assert chunks[0] == ": OPENROUTER PROCESSING"
    error = chunks[-1]
    assert error["error"] == {"code": "server_error", "message": "Provider disconnected"}
    assert error["choices"][0]["finish_reason"] == "error"
    assert all(c["id"].startswith("gen-") and c["provider"] for c in chunks[1:])


def test_openrouter_answers_name_the_provider_and_the_native_finish() -> None:
    stub = ScriptTransport(["Hi."])
    response = client(stub, ROUTER).chat.completions.with_raw_response.create(model="openai/gpt-4o", messages=USER)
    body = json.loads(response.http_response.text)
    assert body["id"].startswith("gen-")
    assert body["provider"] == "OpenAI"
    assert body["choices"][0]["native_finish_reason"] == "stop"
    failing = ScriptTransport([{"error": {"status": 402, "message": "Insufficient credits"}}])
    with pytest.raises(openai.APIStatusError) as info:
        client(failing, ROUTER).chat.completions.create(model="m", messages=USER)
    assert info.value.body == {"code": 402, "message": "Insufficient credits"}


# ------------------------------------------------------------------------------------------ the others


def test_vllm_sends_reasoning_and_its_tool_call_ids() -> None:
    stub = ScriptTransport([{**ONE_CALL, "thinking": "Look it up."}], dialect="vllm")
    reply = client(stub, "http://localhost:8000/v1").chat.completions.create(model="m", messages=USER, tools=TOOLS)
    message = reply.choices[0].message
    assert message.model_extra == {"reasoning": "Look it up."}
    assert re.fullmatch(r"chatcmpl-tool-[0-9a-f]{32}", message.tool_calls[0].id)
    assert re.fullmatch(r"chatcmpl-[0-9a-f]{32}", reply.id)


def test_groq_streams_its_request_id_on_the_first_chunk() -> None:
    chunks = raw_stream(ScriptTransport(["Hi."]), "https://api.groq.com/openai/v1")
    assert re.fullmatch(r"req_[0-9a-z]{26}", chunks[0]["x_groq"]["id"])
    assert all("x_groq" not in c for c in chunks[1:] if isinstance(c, dict))


def test_gemini_openai_ends_a_tool_call_stream_with_stop_and_only_there() -> None:
    base = "https://generativelanguage.googleapis.com/v1beta/openai"
    stub = ScriptTransport([ONE_CALL, ONE_CALL])
    assert finish_reasons(raw_stream(stub, base)) == ["stop"]
    assert (
        client(stub, base)
        .chat.completions.create(model="gemini-3-flash", messages=USER, tools=TOOLS)
        .choices[0]
        .finish_reason
        == "tool_calls"
    )
    assert [r.provider for r in stub.requests] == ["gemini-openai", "gemini-openai"]


def test_azure_adds_its_content_filter_annotations() -> None:
    stub = ScriptTransport(["Seattle.", "Seattle."], dialect="azure")
    sdk = openai.AzureOpenAI(
        api_key="test-key",
        api_version="2024-10-21",
        azure_endpoint="https://example.openai.azure.com",
        http_client=STACKS[0].Client(transport=stub),
        max_retries=0,
    )
    completion = sdk.chat.completions.create(model="gpt-4o", messages=USER)
    safe = {"filtered": False, "severity": "safe"}
    assert completion.model_extra["prompt_filter_results"][0]["content_filter_results"]["hate"] == safe
    assert completion.choices[0].model_extra["content_filter_results"]["violence"] == safe
    chunks = list(sdk.chat.completions.create(model="gpt-4o", messages=USER, stream=True))
    assert chunks[0].choices == []
    assert chunks[0].model_extra["prompt_filter_results"][0]["prompt_index"] == 0
    assert "".join(c.choices[0].delta.content or "" for c in chunks[1:] if c.choices) == "Seattle."
    assert [r.model for r in stub.requests] == ["gpt-4o", "gpt-4o"]  # the deployment, as the chat wire reads it


def test_public_hosts_are_intercepted_and_local_addresses_are_not() -> None:
    hosts = ScriptTransport([]).intercept().hosts
    assert {
        "api.mistral.ai",
        "api.deepseek.com",
        "openrouter.ai",
        "api.groq.com",
        "api.together.xyz",
        "api.x.ai",
    } <= hosts
    assert not any(host.startswith(("localhost", "127.")) for host in hosts)


# ------------------------------------------------------------------------------------------ the seam

ACME_TRIM = Quirk(
    "acme.trims-content",
    "answer",
    "Answers carry `acme_region`.",
    "Acme's API reference (an example quirk, for an example host)",
)


class AcmeWire(ChatDialect):
    name = "acme"
    hosts = ("api.acme.example",)
    quirks = (ACME_TRIM,)

    def shaped(self, active: frozenset[str]) -> ChatShape:
        def region(body: dict[str, Any], where: str, record: RecordedRequest) -> None:
            body["acme_region"] = "eu-1"

        return ChatShape(decorate=region)


def test_an_outside_dialect_is_a_subclass_given_as_dialect() -> None:
    stub = ScriptTransport(["Hi."], dialect=AcmeWire())
    response = client(stub).chat.completions.create(model="m", messages=USER)
    assert response.model_extra == {"acme_region": "eu-1"}
    assert stub.requests[0].provider == "acme"
    assert "api.acme.example" in stub.intercept().hosts


# ------------------------------------------------------------------------------------------ unchanged when unused


def test_the_default_stub_serves_openai_hosts_as_before() -> None:
    stub = ScriptTransport([{**TWO_CALLS, "thinking": "Two lookups."}, {**TWO_CALLS, "thinking": "Two lookups."}])
    sdk = client(stub, "https://api.openai.com/v1")
    reply = sdk.chat.completions.create(model="gpt-4o", messages=USER, tools=TOOLS)
    assert reply.model_extra == {}
    assert reply.choices[0].message.model_extra == {"reasoning_content": "Two lookups."}
    assert [c.id for c in reply.choices[0].message.tool_calls] == ["call_0000_0", "call_0000_1"]
    chunks = raw_stream(stub, "https://api.openai.com/v1")
    assert [d["index"] for d in tool_call_deltas(chunks) if "id" in d] == [0, 1]
    assert finish_reasons(chunks) == ["tool_calls"]
    assert {r.provider for r in stub.requests} == {"openai_chat"}


# ------------------------------------------------------------------------------------------ Ollama's native /api/chat


def ollama_client(stub: ScriptTransport) -> Any:
    ollama = pytest.importorskip("ollama")
    return ollama.Client(host="http://localhost:11434", transport=stub)


def test_ollama_native_chat_streams_ndjson_with_object_arguments() -> None:
    stub = ScriptTransport([{**TWO_CALLS, "text": "Looking."}])
    parts = list(
        ollama_client(stub).chat(model="llama3.2", messages=USER, tools=TOOLS, stream=True)  # type: ignore[arg-type]
    )
    assert "".join(part.message.content or "" for part in parts) == "Looking."
    [with_calls] = [part for part in parts if part.message.tool_calls]
    assert [(c.function.name, dict(c.function.arguments)) for c in with_calls.message.tool_calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {"tz": "CET"}),
    ]
    last = parts[-1]
    assert (last.done, last.done_reason) == (True, "stop")  # `stop`, though the model called tools
    assert last.eval_count
    assert last.prompt_eval_count
    assert not any(part.done for part in parts[:-1])
    [record] = stub.requests
    assert (record.provider, record.stream, record.model) == ("ollama_native", True, "llama3.2")


def test_ollama_native_chat_answers_json_and_its_error_shape() -> None:
    ollama = pytest.importorskip("ollama")
    stub = ScriptTransport(
        [
            {"text": "Hi.", "thinking": "Greet."},
            {"error": {"status": 404, "message": "model 'qwen9' not found"}},
            {
                "text": "Half",
                "fault": {"stream_error": {"message": "an error was encountered while running the model", "after": 1}},
            },
        ]
    )
    sdk = ollama_client(stub)
    reply = sdk.chat(model="llama3.2", messages=USER, stream=False)  # type: ignore[arg-type]
    assert (reply.message.content, reply.message.thinking, reply.done_reason) == ("Hi.", "Greet.", "stop")
    with pytest.raises(ollama.ResponseError) as info:
        sdk.chat(model="qwen9", messages=USER, stream=False)  # type: ignore[arg-type]
    assert (info.value.status_code, info.value.error) == (404, "model 'qwen9' not found")
    with pytest.raises(ollama.ResponseError, match="an error was encountered while running the model"):
        list(sdk.chat(model="llama3.2", messages=USER, stream=True))  # type: ignore[arg-type]
    assert stub.problems == []


def test_ollama_native_chat_is_served_only_at_ollamas_address_by_default() -> None:
    stub = ScriptTransport([])
    with STACKS[0].Client(transport=stub) as http:
        response = http.post("http://localhost:8080/api/chat", json={"model": "m", "messages": USER})
    assert response.status_code == 404
    assert [p.kind for p in stub.problems] == ["unknown_endpoint"]


# ------------------------------------------------------------------------------------------ the fixture and marker


@pytest.mark.wirescript(dialect="mistral", strict_skip=["mistral.tool-call-id-format"])
def test_the_marker_gives_the_fixtures_stubs_a_dialect(wirescript: Any) -> None:
    stub = wirescript(["Sunny."])
    assert client(stub).chat.completions.create(model="m", messages=resent("call_0000_0")).choices[0].message.content
    assert stub.requests[0].provider == "mistral"
    own = wirescript(["Hi."], dialect="groq", strict_skip=())  # the call's arguments win over the marker
    assert client(own).chat.completions.create(model="m", messages=USER).choices[0].message.content == "Hi."
    assert own.requests[0].provider == "groq"


def test_a_marker_naming_an_unknown_dialect_fails_the_setup(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.wirescript(dialect="mistrall")
        def test_x(wirescript):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:xdist")
    result.stdout.fnmatch_lines(["*unknown dialect 'mistrall'; did you mean 'mistral'?*"])


# ------------------------------------------------------------------------------------------ the docs page

PAGE = Path(__file__).resolve().parent.parent / "docs" / "dialects.md"
REGENERATE = (
    "regenerate it: uv run python -c 'from wirescript.wires._dialects import {name}; print({name}())' "
    "and paste it between the markers"
)


def section(name: str) -> str:
    text = PAGE.read_text(encoding="utf-8")
    return text.split(f"<!-- {name}:begin -->\n", 1)[1].split(f"\n<!-- {name}:end -->", 1)[0]


def test_the_docs_tables_are_the_dialects_data() -> None:
    from wirescript.wires._dialects import address_table, quirk_table

    assert section("quirks") == quirk_table(), REGENERATE.format(name="quirk_table")
    assert section("addresses") == address_table(), REGENERATE.format(name="address_table")


def test_the_docs_table_check_can_fail() -> None:
    from wirescript.wires._dialects import quirk_table
    from wirescript.wires.openai.dialects import mistral

    table = quirk_table()
    original = mistral.MistralWire.quirks
    try:
        mistral.MistralWire.quirks = original[:-1]  # a quirk the page lists and the data no longer has
        assert quirk_table() != table
    finally:
        mistral.MistralWire.quirks = original


def test_every_quirk_has_a_source_and_a_unique_id() -> None:
    from wirescript.wires import DIALECTS

    quirks = [q for kinds in DIALECTS.values() for kind in kinds for q in kind.quirks]
    assert len({q.id for q in quirks}) == len(quirks)
    assert all(q.source and q.summary and q.side in ("answer", "refusal") for q in quirks)
    assert all((q.side == "refusal") == (q.rule is not None) for q in quirks)


def test_addresses_route_by_each_wires_own_addresses() -> None:
    # The table is worked out once per list of addresses; a wire whose instance
    # declares other addresses than its class is routed by its own, and a bad one is refused.
    from wirescript.wires import Addresses, hosted_wires
    from wirescript.wires.openai.dialects import MistralWire

    built_in = hosted_wires()
    mine = MistralWire()
    mine.addresses = ("mistral.internal:8080",)  # type: ignore[misc]
    table = Addresses([*built_in, mine])
    path = "/v1/chat/completions"
    url = type("URL", (), {"port": 8080})()
    assert table.find("POST", path, "mistral.internal", url) is mine
    assert table.find("POST", path, "api.mistral.ai", url) is next(w for w in built_in if w.name == mine.name)
    assert Addresses(built_in).find("POST", path, "mistral.internal", url) is None
    mine.addresses = ("http://nowhere/",)  # type: ignore[misc]
    with pytest.raises(UsageError, match="expected 'host' or 'host:port'"):
        Addresses([*built_in, mine])


def test_a_dialects_active_quirks_follow_its_quirks_as_they_are_now() -> None:
    # What holds at the newest release is worked out once per class: a class given other quirks, or an
    # instance that declares its own, is read anew.
    fixed = Quirk("acme.fixed", "answer", "Fixed in 2.0.", "an example", versions="<2.0")

    class Versioned(ChatDialect):
        name = "acme-versioned"
        quirks = (ACME_TRIM, fixed)

    class Own(Versioned):
        def __init__(self) -> None:
            self.quirks = (fixed,)  # type: ignore[misc]
            super().__init__()

    assert Versioned().active == {"acme.trims-content"}
    assert Versioned("1.0").active == {"acme.trims-content", "acme.fixed"}
    assert Own().active == frozenset()
    Versioned.quirks = (fixed,)
    assert Versioned().active == frozenset()
    Versioned.quirks = [ACME_TRIM]
    assert Versioned().active == {"acme.trims-content"}
