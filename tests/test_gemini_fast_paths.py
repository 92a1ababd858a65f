"""The Gemini wire's per-request shortcuts give what the long way gives, for any request and any text answer.

- `GeminiWire.parse` reads a body in one pass (the model and stream flag kept per path): it must read
  every body as the reference here does (the reading it replaced, field by field).
- `GeminiWire.check` calls the plainly-valid shortcut and the rules itself: it must decide as `check_gemini`.
- A turn of text alone is rendered from JSON kept per answer shape (`GeminiWire._text`): a whole answer,
  and a short stream read in chunks as the one chunk it travels in. Its bytes, status and headers must
  be those of `render`'s general path (held byte for byte by `tests/golden/gemini.json`).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _support import examples
from wirescript._text import text_of
from wirescript.recorded import RecordedRequest
from wirescript.script import Turn, parse_turn
from wirescript.strict import check_gemini
from wirescript.wires.base import OneChunk, Parsed, Rendered
from wirescript.wires.gemini import wire as gemini_wire
from wirescript.wires.gemini.rules import RULES, gemini_rules_violation, plainly_valid_gemini
from wirescript.wires.gemini.wire import GeminiWire

PROPERTY = settings(
    max_examples=examples(400),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


PATH = "/v1beta/models/m:streamGenerateContent"


def _record(**fields: Any) -> RecordedRequest:
    return RecordedRequest(method="POST", path=PATH, **fields)


# ---------------------------------------------------------------- parse


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _field(message: Any, camel: str, snake: str) -> Any:
    value = message.get(camel)
    return message.get(snake) if value is None else value


def reference_parse(body: dict[str, Any], path: str) -> Parsed:
    """The reading `GeminiWire.parse` replaced, as it was: each field by its own helper, a list per content."""
    contents = _as_list(body.get("contents"))
    tools = _as_list(body.get("tools"))
    system = _field(body, "systemInstruction", "system_instruction")
    system = system.get("parts") if isinstance(system, dict) else system
    config = _field(body, "generationConfig", "generation_config")
    config = config if isinstance(config, dict) else {}
    results: list[Any] = []
    newest: list[Any] = []
    for content in contents:
        if not isinstance(content, dict):
            continue
        found = [
            part
            for part in _as_list(content.get("parts"))
            if isinstance(part, dict) and ("functionResponse" in part or "function_response" in part)
        ]
        results += found
        if content.get("role") != "model":
            newest = found
    limit = _field(config, "maxOutputTokens", "max_output_tokens") if config else None
    temperature = config.get("temperature") if config else None
    resource = path.rpartition(":")[0]
    return Parsed(
        model=resource.rpartition("/")[2] or None,
        system=None if system is None else text_of(system, sep="\n"),
        messages=contents,
        tools=tools,
        tool_names=[
            declaration["name"]
            for tool in tools
            if isinstance(tool, dict)
            for declaration in _as_list(_field(tool, "functionDeclarations", "function_declarations"))
            if isinstance(declaration, dict) and isinstance(declaration.get("name"), str)
        ],
        tool_results=newest,
        all_tool_results=results,
        stream=path.endswith(":streamGenerateContent"),
        max_tokens=limit if isinstance(limit, int) and not isinstance(limit, bool) else None,
        temperature=float(temperature)
        if isinstance(temperature, (int, float)) and not isinstance(temperature, bool)
        else None,
    )


scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([0.5, 2.5, "x", "", "model", "user"])
parts = st.one_of(
    st.builds(lambda text: {"text": text}, st.text(max_size=3)),
    st.builds(lambda text: {"text": text, "thought": True}, st.text(max_size=3)),
    st.sampled_from(
        [
            {"functionCall": {"name": "f", "args": {}}},
            {"function_call": {"name": "f"}},
            {"functionResponse": {"name": "f", "response": {"output": "ok"}}},
            {"function_response": {"name": "f", "response": {}}},
            {"functionResponse": None},
            {},
        ]
    ),
    scalars,
)
contents = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "role": st.sampled_from(["user", "model", "function", "", None, 3]),
            "parts": st.lists(parts, max_size=4) | parts,
        },
    ),
    scalars,
)
declarations = st.one_of(
    st.builds(lambda name: {"name": name}, st.sampled_from(["get_weather", "lookup", 3, None])),
    scalars,
)
tools = st.one_of(
    st.fixed_dictionaries({}, optional={"functionDeclarations": st.lists(declarations, max_size=3) | scalars}),
    st.fixed_dictionaries({}, optional={"function_declarations": st.lists(declarations, max_size=3)}),
    st.just({"googleSearch": {}}),
    scalars,
)
configs = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "maxOutputTokens": scalars,
            "max_output_tokens": scalars,
            "temperature": scalars,
        },
    ),
    scalars,
    st.just([]),
)
systems = st.one_of(
    st.fixed_dictionaries({}, optional={"parts": st.lists(parts, max_size=3) | scalars}),
    st.lists(parts, max_size=2),
    scalars,
)
bodies = st.fixed_dictionaries(
    {},
    optional={
        "contents": st.lists(contents, max_size=5) | contents,
        "tools": st.lists(tools, max_size=3) | tools,
        "systemInstruction": systems,
        "system_instruction": systems,
        "generationConfig": configs,
        "generation_config": configs,
    },
)
paths = st.sampled_from(
    [
        "/v1beta/models/gemini-2.5-flash:generateContent",
        "/v1/models/gemini-2.5-flash:streamGenerateContent",
        "/v1beta/tunedModels/my-tune-7:generateContent",
        "/v1beta1/projects/p/locations/us-central1/publishers/google/models/gemini-2.0:streamGenerateContent",
        "/v1beta/models/:generateContent",
        "/:streamGenerateContent",
        "no-colon",
    ]
)


def _same_reading(got: Parsed, expected: Parsed, body: dict[str, Any]) -> None:
    assert got == expected, body
    # The record holds the body's own lists where the body has them, and a fresh list where it has none.
    assert got.messages is expected.messages or (got.messages == [] and got.messages is not body.get("contents"))
    assert (got.tools is body.get("tools")) == (expected.tools is body.get("tools"))
    assert got.tool_results is not got.all_tool_results


@PROPERTY
@given(body=bodies, path=paths)
def test_parse_reads_every_body_as_the_field_by_field_reading(body: dict[str, Any], path: str) -> None:
    wire = GeminiWire()
    _same_reading(wire.parse(body, path), reference_parse(body, path), body)
    _same_reading(wire.parse(body, path), reference_parse(body, path), body)  # the path's reading kept


def test_parse_reads_the_results_and_fields_of_a_tool_turn() -> None:
    """A table of the fields the property could miss by chance: both spellings, the newest results."""
    answer = {"functionResponse": {"name": "f", "response": {"output": "ok"}}}
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
            {"role": "user", "parts": [answer, {"function_response": {"name": "g", "response": {}}}]},
            {"role": "model", "parts": [{"text": "ok"}]},
        ],
        "tools": [{"function_declarations": [{"name": "f"}, {"name": "g"}]}],
        "system_instruction": {"parts": [{"text": "Be"}, {"text": "brief.", "thought": False}]},
        "generation_config": {"max_output_tokens": 64, "temperature": 1},
    }
    parsed = GeminiWire().parse(body, "/v1beta/models/gemini-x:streamGenerateContent")
    assert parsed == reference_parse(body, "/v1beta/models/gemini-x:streamGenerateContent")
    assert (parsed.model, parsed.stream, parsed.system, parsed.max_tokens, parsed.temperature) == (
        "gemini-x",
        True,
        "Be\nbrief.",
        64,
        1.0,
    )
    assert parsed.tool_names == ["f", "g"]
    assert parsed.tool_results == parsed.all_tool_results == body["contents"][2]["parts"]  # type: ignore[index]
    body["contents"].append({"role": "user", "parts": [{"text": "and?"}]})  # type: ignore[attr-defined]
    later = GeminiWire().parse(body, "/v1beta/models/gemini-x:generateContent")
    assert (later.tool_results, len(later.all_tool_results or []), later.stream) == ([], 2, False)


def test_check_decides_as_check_gemini() -> None:
    """`GeminiWire.check` is `check_gemini` over the body, for a plain body and for each rule broken, in order."""
    wire = GeminiWire()
    call = {"functionCall": {"name": "f", "args": {}}}
    answer = {"functionResponse": {"name": "f", "response": {}}}
    text: list[Any] = [{"role": "user", "parts": [{"text": "x"}]}]
    broken: list[dict[str, Any]] = [
        {"contents": []},
        {"contents": [{"role": "system", "parts": [{"text": "x"}]}]},
        {"contents": [{"role": "user", "parts": []}]},
        {"contents": [{"role": "model", "parts": [call]}]},
        {"contents": [*text, {"role": "model", "parts": [call]}, {"role": "user", "parts": [answer, answer]}]},
        {"contents": [{"role": "user", "parts": [answer]}]},
        {"contents": text, "tools": [{"functionDeclarations": [{"name": "a"}, {"name": "a"}]}]},
        {"contents": text, "tools": [{"functionDeclarations": [{"name": "a b"}]}]},
        {"contents": text, "generation_config": {"temperature": 3}},
        {"contents": text, "generationConfig": {"responseMimeType": "x/y"}},
    ]
    plain: dict[str, Any] = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    for body in [plain, *broken]:
        record = _record(index=0, body=body)
        for skip in (frozenset(), frozenset({rule.id for rule in RULES})):
            assert wire.check(record, skip=skip) == check_gemini(body, skip=skip)
    found = [wire.check(_record(index=0, body=body), skip=frozenset()) for body in broken]
    assert [violation.rule.id if violation else None for violation in found] == [rule.id for rule in RULES]
    assert wire.check(_record(index=0, body=["not", "a", "dict"]), skip=frozenset()) is None


@pytest.mark.parametrize("key", ["temperature", "mime"])
def test_the_shortcut_reads_each_config_field_by_the_spelling_the_rules_read(key: str) -> None:
    """Both spellings sent, one good and one bad: the shortcut reads the one the rules read (snake_case first)."""
    user = {"role": "user", "parts": [{"text": "hi"}]}
    good, bad = ({"temperature": 1.0}, {"temperature": 2.5}) if key == "temperature" else ({}, {})
    inner = [("response_mime_type", "responseMimeType"), ("responseMimeType", "response_mime_type")]
    bodies: list[dict[str, Any]] = []
    for first, second in [("generation_config", "generationConfig"), ("generationConfig", "generation_config")]:
        if key == "temperature":
            bodies.append({"contents": [user], first: good, second: bad})
        else:
            for one, other in inner:
                config = {one: "text/plain", other: "text/html"}
                bodies += [{"contents": [user], first: config}, {"contents": [user], first: config, second: {}}]
                bodies.append({"contents": [user], first: {one: None, other: "text/html"}})
    for body in bodies:
        expected = gemini_rules_violation(body)
        if plainly_valid_gemini(body):
            assert expected is None, body
        for skip in (frozenset(), frozenset({RULES[0].id})):
            assert check_gemini(body, skip=skip) == gemini_rules_violation(body, skip=skip)
    refused = [body for body in bodies if gemini_rules_violation(body) is not None]
    assert refused  # the bad spelling is the one the rules read, in some of them
    assert all(not plainly_valid_gemini(body) for body in refused)


names = st.sampled_from(["get_weather", "lookup", "a.b:c-d_9", "", "bad name", "naïve", "x/y", 3, None])
declared = st.one_of(st.builds(lambda name: {"name": name}, names), st.just({"description": "no name"}), scalars)
declaration_lists = st.lists(declared, max_size=3) | declared
tool_values = st.one_of(
    st.fixed_dictionaries(
        {}, optional={"functionDeclarations": declaration_lists, "function_declarations": declaration_lists}
    ),
    st.just({"googleSearch": {}}),
    scalars,
)
PLAIN_CONTENTS = [{"role": "user", "parts": [{"text": "hi"}]}, {"role": "model", "parts": [{"text": "Hello."}]}]


@PROPERTY
@given(
    tools=st.lists(tool_values, max_size=4) | tool_values,
    config=st.none() | st.sampled_from([{"temperature": 1}, {"temperature": 3}]),
    skip=st.sets(st.sampled_from([rule.id for rule in RULES]), max_size=2).map(frozenset),
)
def test_the_shortcut_passes_a_body_with_tools_only_where_every_rule_does(
    tools: Any, config: Any, skip: frozenset[str]
) -> None:
    """Plain contents, any tools: the shortcut says valid only where no rule refuses; the answer is the rules'."""
    body: dict[str, Any] = {"contents": PLAIN_CONTENTS, "tools": tools}
    if config is not None:
        body["generationConfig"] = config
    if plainly_valid_gemini(body):
        assert gemini_rules_violation(body) is None, body
    assert check_gemini(body, skip=skip) == gemini_rules_violation(body, skip=skip)


def test_the_declarations_an_app_sends_take_the_shortcut_and_broken_ones_do_not() -> None:
    weather = {"name": "get_weather", "parameters": {"type": "OBJECT"}}
    taken = [
        [{"functionDeclarations": [weather, {"name": "lookup"}]}],
        [{"function_declarations": [weather]}, {"googleSearch": {}}, {"codeExecution": {}}],
        [{"functionDeclarations": [weather]}, {"functionDeclarations": [{"name": "a.b:c-d_9"}]}],
        [{"function_declarations": [weather], "functionDeclarations": [weather, weather]}],  # snake_case is read
        [],
    ]
    refused = [
        [{"functionDeclarations": [weather, weather]}],
        [{"functionDeclarations": [weather]}, {"function_declarations": [weather]}],
        [{"functionDeclarations": [{"name": "bad name"}]}],
        [{"functionDeclarations": [weather], "function_declarations": [{"name": "x/y"}]}],  # snake_case is read
    ]
    for tools in taken:
        body = {"contents": PLAIN_CONTENTS, "tools": tools}
        assert plainly_valid_gemini(body), tools
        assert gemini_rules_violation(body) is None
    for tools in refused:
        body = {"contents": PLAIN_CONTENTS, "tools": tools}
        assert not plainly_valid_gemini(body), tools
        assert check_gemini(body) == gemini_rules_violation(body) is not None


# ---------------------------------------------------------------- a text answer


def general(wire: GeminiWire, turn: Turn, record: RecordedRequest, joined: bool) -> Rendered:
    """`render` by its general path: each part a dict or a run, encoded by `_stream` (or whole)."""
    fast = GeminiWire._text
    try:
        GeminiWire._text = lambda *args, **kwargs: None  # type: ignore[method-assign]
        return wire.render(turn, record, joined=joined)
    finally:
        GeminiWire._text = fast  # type: ignore[method-assign]


def _bytes(rendered: Rendered) -> bytes:
    if rendered.frames is None:
        return rendered.body
    return b"".join(frame.data for frame in rendered.frames)


texts = st.text(max_size=40) | st.sampled_from(
    ["", "x", "é", "日本", '"\\\n\x00\x1f\u2028', "🦊" * 5, "abcdefgh" * 32, "abcdefgh" * 32 + "i", "ü" * 300]
)
usages = st.none() | st.fixed_dictionaries(
    {},
    optional={
        "input_tokens": st.integers(0, 10**6),
        "output_tokens": st.integers(0, 10**6),
        "cache_read_input_tokens": st.integers(0, 10**6),
    },
)
models = st.none() | st.sampled_from(["gemini-2.5-flash", "", "modèle-日本", "m" * 20000])


@PROPERTY
@given(
    text=texts,
    usage=usages,
    stop=st.sampled_from([None, "end_turn", "max_tokens", "refusal", "RECITATION", "SAFETY", "length"]),
    model=models,
    index=st.integers(0, 12345),
    stream=st.booleans(),
    alt=st.sampled_from([None, "sse", "SSE", "json"]),
    joined=st.booleans(),
)
def test_a_text_answer_is_the_general_paths_bytes(
    text: str,
    usage: dict[str, int] | None,
    stop: str | None,
    model: str | None,
    index: int,
    stream: bool,
    alt: str | None,
    joined: bool,
) -> None:
    spec: dict[str, Any] = {"text": text}
    if usage is not None:
        spec["usage"] = usage
    if stop is not None:
        spec["stop_reason"] = stop
    turn = parse_turn(spec, "turn")
    record = _record(index=index, model=model, stream=stream, query={} if alt is None else {"alt": alt})
    wire = GeminiWire()
    got, expected = wire.render(turn, record, joined=joined), general(wire, turn, record, joined)
    assert (got.status, got.headers) == (expected.status, expected.headers)
    assert _bytes(got) == _bytes(expected)
    assert got.headers is not gemini_wire._JSON_HEADERS
    assert got.headers is not gemini_wire._SSE_HEADERS
    if stream:
        assert got.frames is not None
        assert got.body == b""
        short = joined and len(text) <= gemini_wire._ONE_CHUNK_CHARS and len(model or "") < 1000
        assert (got.frames.__class__ is OneChunk) == short  # rendered at once only where it is one chunk
    else:
        assert got.frames is None
        assert json.loads(got.body)["responseId"] == f"resp_{index:04d}"


_CODE = {"name": "code_execution", "input": {"code": "1"}, "result": {"stdout": "1"}}


@pytest.mark.parametrize(
    ("extra", "marker"),
    [
        ({"thinking": "Let me see."}, b'"thought":true'),
        ({"tool": {"name": "f", "input": {"a": 1}}}, b'"functionCall"'),
        ({"tools": [{"name": "f"}, {"name": "g"}]}, b'"name":"g"'),
        ({"server_tools": [_CODE]}, b"executableCode"),
        ({"citations": [{"url": "https://example.com/paris", "title": "Paris"}]}, b'"groundingMetadata"'),
    ],
)
@pytest.mark.parametrize(("stream", "joined"), [(False, True), (True, True), (True, False)])
def test_a_turn_with_more_than_text_is_left_to_the_general_path(
    extra: dict[str, Any], marker: bytes, stream: bool, joined: bool
) -> None:
    """Text with anything else (each field the shortcut reads) is rendered whole by the general path."""
    turn = parse_turn({"text": "Paris is big.", **extra}, "turn")
    record = _record(index=7, model="m", stream=stream, query={"alt": "sse"})
    wire = GeminiWire()
    got = _bytes(wire.render(turn, record, joined=joined))
    assert got == _bytes(general(wire, turn, record, joined))
    assert marker in got
    assert b"Paris is big." in got or b"Paris " in got


def test_a_lone_surrogate_is_escaped_as_json_dumps_escapes_it() -> None:
    """Scripts refuse lone surrogates; the renderer still escapes one as the general path does, whole or streamed."""
    turn = Turn.model_construct(text="a lone \ud800 surrogate")
    wire = GeminiWire()
    for stream in (False, True):
        record = _record(index=3, model="m", stream=stream, query={"alt": "sse"})
        got = _bytes(wire.render(turn, record, joined=True))
        assert got == _bytes(general(wire, turn, record, True))
        assert b"\\ud800" in got


@pytest.mark.parametrize("stream", [False, True])
def test_text_answers_of_a_stub_differ_in_their_own_values(stream: bool) -> None:
    """What is kept per shape holds no answer's own values: each answer has its id, text, usage and finish."""
    wire = GeminiWire()
    turns = [parse_turn({"text": "one"}, "t"), parse_turn({"text": "two", "stop_reason": "max_tokens"}, "t")]
    seen = []
    for index, turn in enumerate([*turns, *turns]):
        record = _record(index=index, model="m", stream=stream, query={"alt": "sse"})
        data = _bytes(wire.render(turn, record, joined=True))
        seen.append(data)
        assert data == _bytes(general(wire, turn, record, True))
    assert seen[0] != seen[2]
    assert seen[0].replace(b"resp_0000", b"resp_0002") == seen[2]
    assert b'"MAX_TOKENS"' in seen[1]
    assert b'"MAX_TOKENS"' not in seen[0]


def test_a_streamed_text_answer_keeps_its_framing_whatever_the_last_answer_of_its_shape_had() -> None:
    """The same turn, model and usage streamed as SSE, then as a JSON array, then as SSE: each in its own framing."""
    wire = GeminiWire()
    turn = parse_turn({"text": "Hello there"}, "t")
    for index, alt in enumerate(["sse", "json", "sse", "json"]):
        record = _record(index=index, model="framing-test", stream=True, query={"alt": alt})
        data = _bytes(wire.render(turn, record, joined=True))
        assert data == _bytes(general(wire, turn, record, True))
        assert data.startswith(b"data: {" if alt == "sse" else b"[{")


# ---------------------------------------------------------------- the answer rules' offer


def test_a_tool_choice_is_read_and_said_only_where_the_request_binds_one() -> None:
    """No `toolConfig`: no choice. Each binding mode: a choice whose words are the request's config."""
    from wirescript.wires.gemini.answers import gemini_offer

    declared = [{"functionDeclarations": [{"name": "f", "parameters": {"type": "OBJECT"}}, {"name": "g"}]}]
    user = [{"role": "user", "parts": [{"text": "hi"}]}]
    assert gemini_offer({"contents": user, "tools": declared}).choice is None
    assert gemini_offer({"contents": user, "generationConfig": {"temperature": 0.5}}).choice is None
    for auto in ({}, {"mode": "AUTO"}, {"mode": "auto", "allowedFunctionNames": ["f"]}):
        assert gemini_offer({"contents": user, "toolConfig": {"functionCallingConfig": auto}}).choice is None
    said = "`toolConfig.functionCallingConfig` "
    cases = [
        ("toolConfig", "functionCallingConfig", {"mode": "ANY"}, (False, True, None)),
        ("tool_config", "function_calling_config", {"mode": "NONE"}, (True, False, None)),
        (
            "toolConfig",
            "functionCallingConfig",
            {"mode": "VALIDATED", "allowedFunctionNames": ["f"]},
            (False, False, {"f"}),
        ),
        (
            "toolConfig",
            "function_calling_config",
            {"mode": "any", "allowed_function_names": ["g"]},
            (False, True, {"g"}),
        ),
    ]
    for outer, inner, calling, (none, required, allowed) in cases:
        choice = gemini_offer({"contents": user, "tools": declared, outer: {inner: calling}}).choice
        assert choice is not None
        assert (choice.none, choice.required, choice.allowed) == (none, required, allowed)
        assert choice.said == said + json.dumps(calling, separators=(",", ":"))


def test_what_is_kept_per_path_and_shape_is_bounded_and_long_keys_are_not_kept() -> None:
    """A long path or model is worked out each time, not kept (the caches hold a few short keys each)."""
    long_model = "m" * (gemini_wire._KEPT_LONGEST + 1)
    path = f"/v1beta/models/{long_model}:generateContent"
    for _ in range(2):
        assert GeminiWire().parse({"contents": []}, path).model == long_model
    assert path not in gemini_wire._PLACES
    assert len(gemini_wire._PLACES) <= gemini_wire._PLACES_MOST
    turn = parse_turn({"text": "hi"}, "t")
    body = GeminiWire().render(turn, _record(index=1, model=long_model, stream=False)).body
    assert json.loads(body)["modelVersion"] == long_model
    assert all(len(shape[0]) <= gemini_wire._KEPT_LONGEST for shape in gemini_wire._WHOLE)
