"""Hostile input: fuzzed scripts (dicts, JSON and YAML files) and fuzzed request bodies.

A script either builds or fails with a `ScriptError` naming the problem; a request is recorded
and answered (a turn, or a loud non-retryable error when its body is not a JSON object). Nothing
raises anything else, and nothing hangs. Each fuzz test counts its cases and asserts both
outcomes occurred, so a fuzzer that only ever produced one kind of case would fail.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _support import STACKS, examples
from wirescript import ScriptError, ScriptTransport, Turn
from wirescript.wires import default_wires

HX = STACKS[0]
# Each fuzz test runs FUZZ_EXAMPLES cases: 200 under the `ci` hypothesis profile (CI=true), fewer under the
# quick default. The thresholds on what it saw are stated for 200 cases, and scaled by `share`.
FUZZ_EXAMPLES = examples(200)
FUZZ = settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def share(of_200: int) -> float:
    """A count stated for 200 fuzz cases, for the FUZZ_EXAMPLES this profile runs (the same under `ci`)."""
    return of_200 * FUZZ_EXAMPLES / 200


# --- values of every kind, valid field names among junk ones

FIELDS = list(Turn.model_fields)
SUBFIELDS = ["name", "input", "id", "status", "type", "message", "code", "headers", "after", "input_tokens",
             "output_tokens", "cut_after", "drop", "disconnect_after", "delay", "first_byte_delay", "timeout_after",
             "stream_error", "malformed_tool_json", "raw"]  # fmt: skip
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats()
    | st.text(max_size=12)
    | st.text(st.characters(codec=None, categories=["Cs", "Co", "Cc"]), max_size=3)
    | st.binary(max_size=6)
    | st.sampled_from(["message_stop", "[DONE]", "response.completed", "final_chunk", "nope", "", "429"])
)
keys = st.sampled_from(FIELDS + SUBFIELDS) | st.text(max_size=6)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(keys, inner, max_size=5),
    max_leaves=10,
)
turn_like = st.dictionaries(keys, values, max_size=6) | values


def outcome_of(build: Any) -> str:
    """'ok' or 'rejected'; any other exception fails the test with its traceback."""
    message = None
    try:
        build()
    except ScriptError as exc:
        message = str(exc)
    if message is None:
        return "ok"
    assert message, "a ScriptError with no message"
    return "rejected"


def test_fuzzed_turns_build_or_fail_with_a_script_error() -> None:
    seen: Counter[str] = Counter()

    @FUZZ
    @given(
        script=st.lists(turn_like, max_size=3) | st.dictionaries(st.text(max_size=5), st.lists(turn_like, max_size=2))
    )
    def check(script: Any) -> None:
        seen[outcome_of(lambda: ScriptTransport(script))] += 1

    check()
    assert seen["ok"] >= share(5)
    assert seen["rejected"] > share(60)
    _report("script dicts", seen)


def test_fuzzed_valid_shaped_turns_build_or_fail_with_a_script_error() -> None:
    """Closer to valid: the right field names with values of the wrong kinds."""
    seen: Counter[str] = Counter()
    fields = st.fixed_dictionaries(
        {},
        optional={
            "text": values,
            "thinking": values,
            "tool": st.fixed_dictionaries({"name": values}, optional={"input": values, "id": values}),
            "tools": st.lists(st.fixed_dictionaries({"name": st.text(max_size=4)}, optional={"input": values})),
            "usage": st.dictionaries(st.sampled_from(["input_tokens", "output_tokens", "x"]), values),
            "stop_reason": values,
            "error": st.fixed_dictionaries({"status": st.integers(0, 1000) | values}, optional={"headers": values}),
            "fault": st.dictionaries(st.sampled_from(SUBFIELDS), values, max_size=3),
        },
    )

    @FUZZ
    @given(turn=fields)
    def check(turn: dict[str, Any]) -> None:
        seen[outcome_of(lambda: ScriptTransport([turn]))] += 1

    check()
    assert seen["ok"] >= share(5)
    assert seen["rejected"] > share(60)
    _report("turn fields", seen)


def test_a_lone_surrogate_fails_at_construction_naming_the_field() -> None:
    with pytest.raises(ScriptError) as info:
        ScriptTransport([{"tool": {"name": "f", "input": {"a": ["ok", "\ud800"]}}}])
    assert str(info.value) == (
        "invalid script[0]: field 'tool.input.a[1]' holds the lone surrogate '\\ud800', which UTF-8 cannot encode, "
        "so no provider could send it"
    )
    with pytest.raises(ScriptError, match=r"^invalid script\[0\]: field 'text' holds the lone surrogate '\\udfff'"):
        ScriptTransport(["x\udfff"])


class _Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        # Python writes ints of at most 4,300 digits as text: `repr` of a longer one raises ValueError
        (
            [{"tool": {"name": 10**5000}}],
            r"^invalid script\[0\]: field 'tool\.name': .*got int <an int of 16610 bits>$",
        ),
        ([{"text": 10**5000}], r"^invalid script\[0\]: field 'text': .*got int <an int of 16610 bits>$"),
        ([10**5000], r"^script\[0\]: expected a turn .*got int: <an int of 16610 bits>$"),
        ({"m": [10**5000]}, r"^script\['m'\]\[0\]: expected a turn .*<an int of 16610 bits>$"),
        ([_Unprintable()], r"^script\[0\]: expected a turn .*got _Unprintable: <_Unprintable whose repr fails>$"),
        ([{"text": _Unprintable()}], r"^invalid script\[0\]: field 'text': .*<_Unprintable whose repr fails>$"),
    ],
)
def test_a_value_whose_repr_fails_is_named_in_a_script_error(script: Any, expected: str) -> None:
    with pytest.raises(ScriptError, match=expected):
        ScriptTransport(script)


# --- script files


def _load(text: str | bytes, suffix: str) -> Any:
    from wirescript.files import load_script

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"script{suffix}"
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
        return load_script(path)


VALID_FILE = json.dumps(
    [
        {"text": "Hello"},
        {"tool": {"name": "f", "input": {"a": 1}}, "fault": {"drop": ["message_stop"]}},
        {"error": {"status": 429}},
    ]
)


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_fuzzed_script_files_load_or_fail_with_a_script_error(suffix: str) -> None:
    if suffix == ".yaml":
        pytest.importorskip("yaml")
    seen: Counter[str] = Counter()
    texts = (
        st.text(max_size=200)
        | st.binary(max_size=200)
        | st.builds(lambda v: json.dumps(v, default=repr), st.lists(turn_like, max_size=3))
        | st.builds(
            lambda i, junk: VALID_FILE[:i] + junk + VALID_FILE[i:], st.integers(0, len(VALID_FILE)), st.text(max_size=3)
        )
        | st.sampled_from(
            ["", "[]", "{}", "null", "[[[[", "- a\n- b: [", "*x", "&a [*a]", "!!binary AAAA", "x: !!set {a}"]
        )
    )

    @FUZZ
    @given(text=texts)
    def check(text: str | bytes) -> None:
        seen[outcome_of(lambda: ScriptTransport(_load(text, suffix)))] += 1

    check()
    assert seen["ok"] > share(3)
    assert seen["rejected"] > share(60)
    _report(f"{suffix} files", seen)


# --- request bodies


def _paths() -> dict[str, str]:
    return {
        "anthropic": "/v1/messages",
        "openai_chat": "/v1/chat/completions",
        "openai_responses": "/v1/responses",
        "gemini": "/v1beta/models/gemini-test:streamGenerateContent",
    }


PATHS = _paths()
WRONG_TYPES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.text(max_size=5),
    st.lists(values, max_size=3),
    st.dictionaries(keys, values, max_size=3),
)
PROVIDER_FIELDS = ["model", "messages", "system", "tools", "tool_choice", "stream", "stream_options", "max_tokens",
                   "max_completion_tokens", "max_output_tokens", "temperature", "thread", "input", "instructions",
                   "include", "previous_response_id", "contents", "systemInstruction", "generationConfig",
                   "toolConfig", "metadata"]  # fmt: skip
bodies = st.one_of(
    st.binary(max_size=64),
    st.just(b""),
    st.builds(
        lambda v: json.dumps(v, default=repr).encode(),
        st.lists(values, max_size=3) | st.text(max_size=10) | st.integers(),
    ),
    st.builds(
        lambda d: json.dumps(d, default=repr).encode(),
        st.dictionaries(st.sampled_from(PROVIDER_FIELDS) | keys, WRONG_TYPES | values, max_size=8),
    ),
    st.builds(
        lambda msgs: json.dumps(
            {"model": "m", "messages": msgs, "input": msgs, "contents": msgs}, default=repr
        ).encode(),
        st.lists(
            st.dictionaries(st.sampled_from(["role", "content", "type", "parts", "text", "tool_use_id"]), WRONG_TYPES),
            max_size=3,
        ),
    ),
)


surrogates = st.text(st.characters(codec=None, categories=["Cs"]), min_size=1, max_size=3)
bodies |= st.builds(  # lone surrogates as JSON escapes, in the fields an answer echoes
    lambda text, stream: json.dumps(
        {"model": text, "stream": stream, "messages": [], "input": "x", "instructions": text, "metadata": {text: text}}
    ).encode(),
    surrogates,
    st.booleans(),
)


def _answer_is_loud_or_served(response: Any, record: Any) -> str:
    if record.body_error is not None or not isinstance(record.body, dict):
        assert response.status_code == 400, response.text
        assert record.problem is not None
        assert "the body is not a JSON object" in record.problem
        assert "wirescript:" in response.text
        return "unparseable"
    if response.status_code == 200:
        assert record.problem is None
        return "served"
    assert "wirescript:" in response.text, response.text
    return "loud"


@pytest.mark.parametrize("wire", sorted(PATHS))
def test_fuzzed_request_bodies_are_recorded_and_answered(wire: str) -> None:
    seen: Counter[str] = Counter()
    # strict=False: most fuzzed bodies are no valid request; strict mode meets them in tests/test_strict.py.
    stub = ScriptTransport(lambda request: {"text": "ok", "tool": {"name": "f", "input": {"a": 1}}}, strict=False)
    content_types = st.sampled_from(["application/json", "text/plain", "application/x-www-form-urlencoded", ""])

    http = HX.Client(transport=stub)

    @FUZZ
    @given(content=bodies, content_type=content_types, is_stream=st.booleans())
    def check(content: bytes, content_type: str, is_stream: bool) -> None:
        before = len(stub.requests)
        path = PATHS[wire].replace("streamGenerateContent", "generateContent") if not is_stream else PATHS[wire]
        response = http.post(
            "https://stub.test" + path,
            content=content,
            headers={"content-type": content_type} if content_type else {},
            params={"alt": "sse"} if wire == "gemini" and is_stream else None,
        )
        records = stub.requests
        assert len(records) == before + 1  # recorded exactly once
        record = records[-1]
        assert record.index == before
        assert record.content == content
        seen[_answer_is_loud_or_served(response, record)] += 1

    with http:
        check()
    assert seen["unparseable"] >= share(30)  # the fuzz reaches the unparseable case often (10 of 50 in some runs)
    assert seen["served"] > share(20)
    _report(f"{wire} request bodies", seen)


@pytest.mark.parametrize("wire", sorted(PATHS))
def test_a_huge_body_is_recorded_whole_and_served(wire: str) -> None:
    text = "x" * 8_000_000
    body = {"model": "m", "messages": [{"role": "user", "content": text}], "input": text,
            "contents": [{"role": "user", "parts": [{"text": text}]}]}  # fmt: skip
    stub = ScriptTransport(["ok"], strict=False)  # one body for every wire: each real API refuses the others' fields
    with HX.Client(transport=stub) as http:
        response = http.post(
            "https://stub.test" + PATHS[wire].replace("streamGenerateContent", "generateContent"), json=body
        )
    assert response.status_code == 200
    assert len(stub.requests[0].content) > 8_000_000
    assert stub.problems == []


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"", "empty body"),
        (b"{not json", "not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
        (b"\xff\xfe", "not JSON: Expecting value: line 1 column 1 (char 0)"),  # json reads the BOM as UTF-16
        (b"[1, 2]", "not an object"),
        (b'"text"', "not an object"),
    ],
)
def test_an_unparseable_body_is_recorded_and_answered_loudly(content: bytes, why: str) -> None:
    import anthropic

    stub = ScriptTransport(["never served"])
    with HX.Client(transport=stub) as http:
        response = http.post("https://stub.test/v1/messages", content=content)
    (record,) = stub.requests
    problem = (
        f"requests[0] POST /v1/messages: the body is not a JSON object ({why}); nothing was consumed from the script."
    )
    assert record.problem == problem
    assert stub.problems == [problem]
    assert stub.overflow == 1
    assert response.status_code == 400
    assert response.headers["x-should-retry"] == "false"
    assert response.json()["error"]["message"] == f"wirescript: {problem}"
    assert len(stub.pending) == 1
    assert anthropic.BadRequestError  # the SDK maps that 400 to BadRequestError (see test_anthropic_errors)


def test_unknown_endpoints_and_methods_are_answered_loudly() -> None:
    stub = ScriptTransport(["never served"])
    known = ", ".join(w.endpoint for w in default_wires())
    with HX.Client(transport=stub) as http:
        for method, path in [
            ("GET", "/v1/messages"),
            ("POST", "/v1/images/generations"),
            ("DELETE", "/"),
            ("PUT", "/v1/responses"),
        ]:
            response = http.request(method, "https://stub.test" + path, content=b"{}")
            assert response.status_code == 404
            assert response.json()["error"]["message"] == (
                f"wirescript: requests[{len(stub.requests) - 1}] {method} {path}: no wire serves this endpoint "
                f"(known: {known}). Nothing was consumed from the script."
            )
    assert stub.overflow == 4
    assert len(stub.pending) == 1


# --- counting

_COUNTS: dict[str, Counter[str]] = {}


def _report(name: str, seen: Counter[str]) -> None:
    _COUNTS[name] = seen
    print(f"fuzz {name}: {sum(seen.values())} cases {dict(seen)}")  # shown with -s; docs/reliability.md quotes them


@pytest.mark.parametrize("wire", sorted(PATHS))
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_lone_surrogates_a_request_sends_are_echoed_as_json_escapes(wire: str, stream: bool) -> None:
    content = b'{"model": "m\\ud800", "stream": %s, "messages": [], "input": "x", "instructions": "\\udc00"}' % (
        b"true" if stream else b"false"
    )
    stub = ScriptTransport(["ok"], strict=False)  # one body for every wire, `messages: []`: about the echo
    path = PATHS[wire] if stream else PATHS[wire].replace("streamGenerateContent", "generateContent")
    with HX.Client(transport=stub) as http:
        response = http.post("https://stub.test" + path, content=content, params={"alt": "sse"} if stream else None)
    assert response.status_code == 200
    assert stub.requests[0].body["model"] == "m\ud800"
    assert stub.problems == []
    if wire != "gemini":  # the gemini model comes from the URL
        assert "m\\ud800" in response.text  # escaped: the body stays valid UTF-8
