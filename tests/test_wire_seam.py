"""The open wire seam: a wire written outside the package serves a real SDK request through `wires=`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import anthropic
import openai
import pytest

from _support import ANTHROPIC_HX, anthropic_client, openai_client
from wirescript import KNOWN_HOSTS, ScriptError, ScriptTransport, UsageError
from wirescript.recorded import RecordedRequest
from wirescript.script import ErrorSpec, StreamError, Turn
from wirescript.side import SideScript
from wirescript.sse import encode_event, json_dumps
from wirescript.strict import Rule, Violation, explain
from wirescript.wires import Frame, OpenAIChatWire, Parsed, Rendered, Wire
from wirescript.wires.base import error_message, retry_headers
from wirescript.wires.side import TokenCountWire

pytest_plugins = ["pytester"]

PARAMS: dict[str, Any] = {"model": "mini-1", "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]}


class MiniMessages(Wire):
    """A small Messages-compatible API on its own host: JSON answers only, its own stop reason."""

    name = "mini"
    endpoint = "POST mini.example/v1/messages"
    events = frozenset({"message"})
    stop_reasons: ClassVar[Mapping[str, str]] = {"done": "end_turn", "out_of_ink": "out_of_ink"}
    credential_headers = ("x-mini-key",)

    def matches(self, method: str, path: str, *, host: str = "") -> bool:
        return method == "POST" and host == "mini.example" and path == "/v1/messages"

    def parse(self, body: Any, path: str) -> Parsed:
        return Parsed(model=body.get("model"), messages=body.get("messages", []), stream=body.get("stream") is True)

    def render(
        self, turn: Turn, record: RecordedRequest, *, malformed_tool_json: bool = False, joined: bool = False
    ) -> Rendered:
        message = {
            "id": f"mini_{record.index}",
            "type": "message",
            "role": "assistant",
            "model": record.model,
            "content": [{"type": "text", "text": turn.text or ""}],
            "stop_reason": turn.stop_reason or "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        return Rendered(200, {"content-type": "application/json"}, json_dumps(message).encode())

    def error(self, spec: ErrorSpec, record: RecordedRequest) -> Rendered:
        body = {"type": "error", "error": {"type": spec.type or "api_error", "message": error_message(spec)}}
        headers = {"content-type": "application/json", **retry_headers(spec, self.retryable)}
        return Rendered(spec.status, headers, json_dumps(body).encode())

    def stream_error(self, spec: StreamError, record: RecordedRequest) -> Frame:
        return Frame("error", encode_event("error", json_dumps({"type": "error"})))


def test_an_external_wire_serves_a_real_sdk_request() -> None:
    stub = ScriptTransport(["Hello from mini.", {"text": "Dry.", "stop_reason": "out_of_ink"}], wires=[MiniMessages()])
    client = anthropic_client(stub, base_url="https://mini.example", max_retries=0)
    first = client.messages.create(**PARAMS)
    second = client.messages.create(**PARAMS)
    assert [b.text for b in first.content if b.type == "text"] == ["Hello from mini."]
    assert second.stop_reason == "out_of_ink"  # the wire's own vocabulary passes construction
    assert [r.provider for r in stub.requests] == ["mini", "mini"]
    assert stub.requests[0].messages == PARAMS["messages"]
    # The same stub still serves the default wires on other hosts.
    stub_default = ScriptTransport(["Hi"], wires=[MiniMessages()])
    anthropic_client(stub_default).messages.create(**PARAMS)
    assert stub_default.requests[0].provider == "anthropic"


def test_an_external_wire_answers_its_errors_in_its_envelope() -> None:
    stub = ScriptTransport([{"error": {"status": 400, "message": "no ink"}}], wires=[MiniMessages()])
    with pytest.raises(anthropic.BadRequestError) as info:
        anthropic_client(stub, base_url="https://mini.example", max_retries=0).messages.create(**PARAMS)
    assert info.value.body == {"type": "error", "error": {"type": "api_error", "message": "no ink"}}


def test_a_stop_reason_no_wire_knows_fails_at_construction() -> None:
    with pytest.raises(Exception, match="unknown stop reason 'out_of_ink'"):
        ScriptTransport([{"text": "x", "stop_reason": "out_of_ink"}])
    ScriptTransport([{"text": "x", "stop_reason": "out_of_ink"}], wires=[MiniMessages()])


class Mistral(OpenAIChatWire):
    """A host dialect: the same path as OpenAI Chat, told apart by the host."""

    name = "mistral"
    hosts = ("api.mistral.ai",)

    def matches(self, method: str, path: str, *, host: str = "") -> bool:
        return host == "api.mistral.ai" and super().matches(method, path)


def test_a_host_dialect_is_told_apart_by_the_host() -> None:
    stub = ScriptTransport(["from mistral", "from openai"], wires=[Mistral()])
    body = {"model": "m", "messages": [{"role": "user", "content": "Hi"}]}
    mistral = openai_client(stub, base_url="https://api.mistral.ai/v1", max_retries=0)
    assert mistral.chat.completions.create(**body).choices[0].message.content == "from mistral"
    assert (
        openai_client(stub, max_retries=0).chat.completions.create(**body).choices[0].message.content == "from openai"
    )
    assert [r.provider for r in stub.requests] == ["mistral", "openai_chat"]


def test_a_wire_with_a_default_name_replaces_the_default() -> None:
    class Quiet(OpenAIChatWire):
        def parse(self, body: Any, path: str) -> Parsed:
            parsed = super().parse(body, path)
            parsed.system = "replaced"
            return parsed

    stub = ScriptTransport(["ok"], wires=[Quiet()])
    openai_client(stub, max_retries=0).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert stub.requests[0].system == "replaced"


def test_wires_must_be_wire_instances() -> None:
    with pytest.raises(
        UsageError, match=r"^wires\[0\]: expected a Wire instance, got the class MiniMessages; call it$"
    ):
        ScriptTransport([], wires=[MiniMessages])  # type: ignore[list-item]
    with pytest.raises(UsageError, match=r"^wires\[1\]: two wires are named 'mini'"):
        ScriptTransport([], wires=[MiniMessages(), MiniMessages()])
    with pytest.raises(UsageError, match=r"^wires\[0\]: expected a wirescript.wires.Wire instance, got str$"):
        ScriptTransport([], wires=["anthropic"])  # type: ignore[list-item]


def test_a_wires_hosts_are_host_patterns_checked_at_construction() -> None:
    class Misdeclared(MiniMessages):
        hosts = ("https://mini.example",)

    with pytest.raises(UsageError, match=r"^wires\[0\]: the mini wire's hosts: 'https://mini.example' is not a host"):
        ScriptTransport([], wires=[Misdeclared()])


def test_an_unknown_path_on_a_wires_host_is_answered_in_its_envelope() -> None:
    stub = ScriptTransport([])
    with ANTHROPIC_HX.Client(transport=stub) as http:
        response = http.get("https://api.openai.com/v1/assistants")
    assert response.status_code == 404
    assert response.headers["x-should-retry"] == "false"
    error = response.json()["error"]
    assert error["code"] == "wirescript_unscripted"
    assert set(error) == {"message", "type", "param", "code"}  # OpenAI's envelope, not the generic one
    assert stub.problems[0].kind == "unknown_endpoint"
    with pytest.raises(openai.NotFoundError):
        openai_client(stub, max_retries=0).vector_stores.list()


# A wire's bug is loud: a problem naming what failed, never an exception out of the transport (which the
# SDK would retry as a connection error).


class MiniStream(MiniMessages):
    """Streams a frame (three of `first` bytes, when given), then fails: a wire's bug mid-stream."""

    def __init__(self, first: int = 0) -> None:
        self.first = first

    def render(
        self, turn: Turn, record: RecordedRequest, *, malformed_tool_json: bool = False, joined: bool = False
    ) -> Rendered:
        def frames() -> Iterator[Frame]:
            for _ in range(3 if self.first else 1):
                yield Frame(
                    "message", encode_event("message", json_dumps({"type": "message", "pad": "x" * self.first}))
                )
            raise RuntimeError("frame two is a bug")

        return Rendered(200, {"content-type": "text/event-stream"}, frames=frames())


class MiniHeaders(MiniMessages):
    """Answers with a header value no HTTP response can carry (beyond Latin-1)."""

    def render(
        self, turn: Turn, record: RecordedRequest, *, malformed_tool_json: bool = False, joined: bool = False
    ) -> Rendered:
        rendered = super().render(turn, record, malformed_tool_json=malformed_tool_json, joined=joined)
        return Rendered(rendered.status, {**rendered.headers, "x-note": "a \u2192 b"}, rendered.body)


class BrokenCount(TokenCountWire):
    def respond(self, record: RecordedRequest, side: SideScript) -> Rendered:
        raise RuntimeError("counting is a bug")


def test_a_wire_failing_in_an_answers_first_chunk_is_the_loud_refusal() -> None:
    # An answer that fits one chunk is rendered before the response exists: the failure is the refusal.
    stub = ScriptTransport(["Hello"], wires=[MiniStream()])
    with ANTHROPIC_HX.Client(transport=stub) as http:
        response = http.post("https://mini.example/v1/messages", json=PARAMS)
    assert response.status_code >= 400
    assert "rendering the answer (RuntimeError: frame two is a bug)" in response.text
    [problem] = stub.problems
    assert problem.kind == "render_error"
    assert "wirescript failed while rendering the answer (RuntimeError: frame two is a bug)" in problem


def test_a_wire_failing_mid_stream_drops_the_connection_and_says_why() -> None:
    # Two chunks are rendered (an answer longer than one chunk), then the wire fails: a dropped connection.
    stub = ScriptTransport(["Hello"], wires=[MiniStream(first=100_000)])
    with (
        ANTHROPIC_HX.Client(transport=stub) as http,
        http.stream("POST", "https://mini.example/v1/messages", json=PARAMS) as response,
    ):
        assert response.status_code == 200
        with pytest.raises(ANTHROPIC_HX.RemoteProtocolError, match="streaming the answer"):
            response.read()
    [problem] = stub.problems
    assert problem.kind == "render_error"
    assert "wirescript failed while streaming the answer (RuntimeError: frame two is a bug)" in problem


def test_a_response_that_cannot_be_built_is_the_loud_refusal() -> None:
    stub = ScriptTransport(["Hello"], wires=[MiniHeaders()])
    with pytest.raises(anthropic.APIStatusError) as info:
        anthropic_client(stub, base_url="https://mini.example", max_retries=0).messages.create(**PARAMS)
    assert "building the response (UnicodeEncodeError" in str(info.value)
    [problem] = stub.problems
    assert problem.kind == "render_error"
    assert "wirescript failed while building the response (UnicodeEncodeError" in problem


def test_a_side_wire_failing_is_the_loud_refusal() -> None:
    stub = ScriptTransport([], wires=[BrokenCount()])
    with pytest.raises(anthropic.APIStatusError, match="answering a side endpoint"):
        anthropic_client(stub, max_retries=0).messages.count_tokens(model="m", messages=PARAMS["messages"])
    [problem] = stub.problems
    assert problem.kind == "render_error"
    assert "wirescript failed while answering a side endpoint (RuntimeError: counting is a bug)" in problem


# Every seam a default wire has, an outside wire gets: the stub learns each provider fact from its own wires.

NO_HELLO = Rule(
    "mini.no-hello",
    "mini",
    "A message that says only `hello`.",
    "Mini's own API refuses it (a rule written for this test).",
)


class StrictMini(MiniMessages):
    """Mini with a strict rule of its own, hosts to be intercepted at, and a credential header no name gives away."""

    rules = (NO_HELLO,)
    hosts = ("mini.example",)
    credential_headers = ("x-mini-auth",)

    def check(self, record: RecordedRequest, *, skip: frozenset[str]) -> Violation | None:
        said = [m.get("content") for m in record.messages if isinstance(m, dict)]
        if NO_HELLO.id not in skip and said[-1:] == ["hello"]:
            return Violation(NO_HELLO, "mini: a bare hello is refused", "messages")
        return None


HELLO: dict[str, Any] = {**PARAMS, "messages": [{"role": "user", "content": "hello"}]}


def test_an_outside_wires_rule_is_enforced_and_skipped_by_its_id() -> None:
    stub = ScriptTransport(["Hi."], wires=[StrictMini()])
    with pytest.raises(anthropic.BadRequestError) as info:
        anthropic_client(stub, base_url="https://mini.example", max_retries=0).messages.create(**HELLO)
    assert info.value.body["error"]["message"] == explain(Violation(NO_HELLO, "mini: a bare hello is refused"))
    assert [p.kind for p in stub.problems] == ["strict"]
    assert stub.pending  # the refused request consumed no turn
    skipping = ScriptTransport(["Hi."], wires=[StrictMini()], strict_skip=["mini.no-hello"])
    reply = anthropic_client(skipping, base_url="https://mini.example", max_retries=0).messages.create(**HELLO)
    assert [b.text for b in reply.content if b.type == "text"] == ["Hi."]
    assert skipping.strict_skip == frozenset({"mini.no-hello"})
    # A default rule is still a rule of this stub, and the outside rule is this stub's alone.
    ScriptTransport([], wires=[StrictMini()], strict_skip=["mini.no-hello", "anthropic.messages-empty"])
    with pytest.raises(ScriptError, match=r"unknown strict rule 'mini.no-hello'"):
        ScriptTransport([], strict_skip=["mini.no-hello"])


def test_an_unknown_rule_id_is_refused_naming_the_closest_rule_of_the_stubs_wires() -> None:
    with pytest.raises(
        ScriptError, match=r"^strict_skip: unknown strict rule 'mini.no-helo'; did you mean 'mini.no-hello'\?"
    ):
        ScriptTransport([], wires=[StrictMini()], strict_skip=["mini.no-helo"])


def test_a_violation_of_a_rule_the_wire_does_not_declare_is_a_loud_problem() -> None:
    class Undeclared(StrictMini):
        rules = ()

    stub = ScriptTransport(["Hi."], wires=[Undeclared()])
    with pytest.raises(anthropic.APIStatusError, match=r"does not declare in Wire\.rules"):
        anthropic_client(stub, base_url="https://mini.example", max_retries=0).messages.create(**HELLO)
    assert [p.kind for p in stub.problems] == ["render_error"]


def test_intercept_with_no_hosts_reaches_an_outside_wires_hosts(wirescript: Any) -> None:
    stub = wirescript(["Intercepted."], wires=[StrictMini()], intercept=True)
    client = anthropic.Anthropic(api_key="test-key", base_url="https://mini.example", max_retries=0)
    reply = client.messages.create(**PARAMS)  # no http_client: the SDK's own, reached by the interception
    assert [b.text for b in reply.content if b.type == "text"] == ["Intercepted."]
    assert stub.requests[0].provider == "mini"
    interception = ScriptTransport([], wires=[StrictMini()]).intercept()  # not opened: one is open already
    assert interception.hosts == KNOWN_HOSTS | {"mini.example"}
    assert interception.routes("mini.example")
    assert interception.routes("api.anthropic.com")
    assert "mini.example" not in ScriptTransport([]).intercept().hosts


def test_an_outside_wires_credential_header_is_redacted_and_read_as_the_key() -> None:
    stub = ScriptTransport(["Hi."], wires=[StrictMini()])
    with ANTHROPIC_HX.Client(transport=stub) as http:
        http.post("https://mini.example/v1/messages", json=PARAMS, headers={"x-mini-auth": "mini-secret-1"})
    record = stub.requests[0]
    assert record.headers["x-mini-auth"] == "<redacted>"
    assert record.api_key is not None
    assert record.api_key.get_secret_value() == "mini-secret-1"
    assert "mini-secret-1" not in record.model_dump_json()


class Halting(MiniMessages):
    """An API whose `halted` means it ran out of tokens."""

    name = "halting"
    stop_reasons: ClassVar[Mapping[str, str]] = {"halted": "max_tokens"}


class Refusing(MiniMessages):
    """Another API, defined later, whose `halted` means it refused."""

    name = "refusing"
    stop_reasons: ClassVar[Mapping[str, str]] = {"halted": "refusal"}


def test_a_wire_with_a_conflicting_stop_reason_changes_only_its_own_stubs_answers() -> None:
    halted = {"text": "Stopped.", "stop_reason": "halted"}
    # The Anthropic wire translates an outside wire's reason as that stub's wires say it means.
    refusing = ScriptTransport([halted], wires=[Refusing()])
    assert anthropic_client(refusing, max_retries=0).messages.create(**PARAMS).stop_reason == "refusal"
    halting = ScriptTransport([halted], wires=[Halting()])
    assert anthropic_client(halting, max_retries=0).messages.create(**PARAMS).stop_reason == "max_tokens"
    with pytest.raises(
        UsageError, match=r"maps the stop reason 'halted' to 'refusal', the halting wire to 'max_tokens'"
    ):
        ScriptTransport([], wires=[Halting(), Refusing()])


# Every member of an outside wire may fail: each failure is the loud, non-retryable answer plus a problem,
# never an exception out of the transport (which the SDK would retry three times as "Connection error.").

_BROKEN_MEMBERS = {
    # member: (what the request or the script does to reach it, the problem's kind)
    "matches": ("a request", "render_error"),
    "parse": ("a request", "unreadable"),
    "api_key": ("a request", "render_error"),
    "claims": ("a request to a path no wire serves", "render_error"),
    "check": ("a request", "render_error"),
    "resolve": ("a request", "render_error"),
    "render": ("a text turn", "render_error"),
    "error": ("an error turn", "render_error"),
    "stream_error": ("a turn with an in-stream error", "render_error"),
    "strict_error": ("a request its rule refuses", "strict"),
    "unscripted": ("a request past the script", "unscripted"),
}


def _broken(member: str) -> StrictMini:
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{member} is a bug")

    return type(f"Broken_{member}", (StrictMini,), {member: fail})()


@pytest.mark.parametrize("member", sorted(_BROKEN_MEMBERS))
def test_an_outside_wire_failing_in_any_member_is_a_loud_answer_and_a_problem(member: str) -> None:
    scenario, kind = _BROKEN_MEMBERS[member]
    script: list[Any] = {
        "an error turn": [{"error": {"status": 400, "message": "no ink"}}],
        "a turn with an in-stream error": [{"text": "x", "fault": {"stream_error": {"message": "cut"}}}],
        "a request past the script": [],
    }.get(scenario, ["Hi."])
    stub = ScriptTransport(script, wires=[_broken(member)])
    client = anthropic_client(stub, base_url="https://mini.example", max_retries=2)

    def call() -> Any:
        if scenario == "a request to a path no wire serves":
            return client.post("/v1/nothing-here", cast_to=object, body={})
        return client.messages.create(**(HELLO if scenario == "a request its rule refuses" else PARAMS))

    with pytest.raises(anthropic.APIStatusError) as info:  # not APIConnectionError: nothing escaped
        call()
    assert info.value.response.headers["x-should-retry"] == "false"
    assert stub.request_count == 1  # answered once, never retried
    [problem] = stub.problems
    assert problem.kind == kind
    assert f"{member} is a bug" in str(problem) or f"{member} is a bug" in info.value.message


def test_a_broken_wire_does_not_stop_the_others() -> None:
    stub = ScriptTransport(["Hi."], wires=[_broken("matches")])
    with pytest.raises(anthropic.APIStatusError, match=r"the mini wire's matches\(\)"):
        anthropic_client(stub, max_retries=0).messages.create(**PARAMS)
    assert stub.problems[0].kind == "render_error"
    assert stub.pending  # nothing was consumed


OUTSIDE_MARKER_TESTS = """
import httpx2
import openai
import pytest

from wirescript.strict import Rule, Violation
from wirescript.wires import OpenAIChatWire

SAFE = Rule("acme.safe-prompt-type", "acme", "`safe_prompt` is not a boolean.", "an example rule")


class AcmeWire(OpenAIChatWire):
    name = "acme"
    rules = (*OpenAIChatWire.rules, SAFE)

    def matches(self, method, path, *, host=""):
        return host == "api.acme.example" and super().matches(method, path)

    def check(self, record, *, skip):
        if SAFE.id not in skip and not isinstance(record.body.get("safe_prompt", False), bool):
            return Violation(SAFE, "safe_prompt: expected a boolean", "safe_prompt")
        return super().check(record, skip=skip)


def ask(stub):
    http = httpx2.Client(transport=stub)
    client = openai.OpenAI(api_key="k", base_url="https://api.acme.example/v1", http_client=http)
    reply = client.chat.completions.create(
        model="acme-1", messages=[{"role": "user", "content": "Hi"}], extra_body={"safe_prompt": "yes"}
    )
    return reply.choices[0].message.content


@pytest.mark.wirescript(strict_skip=["acme.safe-prompt-type"])
def test_an_outside_rule_skipped_by_the_marker(wirescript):
    assert ask(wirescript(["Hello from Acme."], wires=[AcmeWire()])) == "Hello from Acme."


@pytest.mark.wirescript(strict_skip=["acme.safe-prompt-typo"])
def test_an_outside_typo_is_refused_by_the_stub(wirescript):
    with pytest.raises(Exception, match="did you mean 'acme.safe-prompt-type'"):
        wirescript([], wires=[AcmeWire()])


@pytest.mark.wirescript(strict_skip=["openai_chat.messages-emty"])
def test_a_default_wires_typo_is_refused_at_setup(wirescript):
    pass
"""


def test_the_markers_strict_skip_names_an_outside_wires_rule(pytester: pytest.Pytester) -> None:
    """The marker's ids are the stubs' `strict_skip=` default: an outside wire's rule is checked by its stub."""
    pytest.importorskip("httpx2")  # the app below is on openai 3.x's httpx2 (the legacy run has neither)
    pytester.makepyfile(test_app=OUTSIDE_MARKER_TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider", "-n", "0", "-p", "no:langsmith_plugin")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*unknown strict rule 'openai_chat.messages-emty'; did you mean*"])
