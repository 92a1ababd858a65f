"""The pytest plugin, run on temporary projects (pytester) with the real anthropic SDK inside them."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import anthropic
import pytest

import wirescript.builder
import wirescript.catalog

pytest_plugins = ["pytester"]

# pytester restores `sys.modules` after each run: what the temporary tests import is imported
# here first, so that it stays loaded from one run to the next.
assert anthropic
assert wirescript.builder
assert wirescript.catalog

# Prepended to every temporary test module: a real anthropic client on the HTTP library its major
# uses (httpx2 for anthropic >= 1, httpx for 0.x), with no retries so each call is one request.
HEADER = """
import anthropic
import pytest

hx = __import__("httpx2" if int(anthropic.__version__.split(".")[0]) >= 1 else "httpx")


def ask(stub, text, model="claude-test"):
    client = anthropic.Anthropic(api_key="test-key", max_retries=0, http_client=hx.Client(transport=stub))
    message = client.messages.create(model=model, max_tokens=64, messages=[{"role": "user", "content": text}])
    return message.content[0].text
"""


def make_tests(pytester: pytest.Pytester, body: str) -> None:
    pytester.makepyfile(test_app=HEADER + textwrap.dedent(body))


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """Run pytest on the temporary project with only the wirescript plugin (the others cost time)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        return pytester.runpytest("-p", "wirescript.pytest_plugin", *args)


def test_a_scripted_conversation_passes(pytester: pytest.Pytester) -> None:
    make_tests(
        pytester,
        """
        def test_app(wirescript):
            stub = wirescript(["Hello!", {"text": "Bye."}], hold_timeout=2.0)
            assert type(stub).__name__ == "ScriptTransport"
            assert stub.hold_timeout == 2.0
            assert ask(stub, "Hi") == "Hello!"
            assert ask(stub, "Bye") == "Bye."
            assert wirescript.stubs == [stub]
        """,
    )
    # The plugin loads through its entry point (hypothesis' and langsmith's plugins, slow to load, are left out).
    result = pytester.runpytest("-p", "no:hypothesispytest", "-p", "no:langsmith_plugin")
    result.assert_outcomes(passed=1)


def test_an_overflow_the_app_swallowed_fails_the_test(pytester: pytest.Pytester) -> None:
    make_tests(
        pytester,
        """
        def test_app(wirescript):
            stub = wirescript(["Hello!"])
            assert ask(stub, "Hi") == "Hello!"
            try:
                ask(stub, "And again?")
            except anthropic.APIError:
                pass  # the app hides the error
        """,
    )
    result = run(pytester)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*_ ERROR at teardown of test_app _*",
            "wirescript: 1 request(s) were not answered as scripted:",
            "  - requests[1] POST /v1/messages model='claude-test' last=user:'And again?'",
            (
                "    is past the end of the script: it has 1 turn(s), all served. The app made a model call the "
                "script does not expect; add a turn for it or find the extra call. It is the 2nd request (requests[1])."
            ),
            "(If the app is meant to get these errors, mark the test @pytest.mark.wirescript(allow=['unscripted']).)",
            "*= short test summary info =*",
        ],
        consecutive=True,
    )


def test_an_unknown_endpoint_and_unused_turns_are_both_listed(pytester: pytest.Pytester) -> None:
    make_tests(
        pytester,
        """
        def test_app(wirescript):
            stub = wirescript({"claude-test": ["Hello!", "Unused"], "*": [{"tool": {"name": "search"}}]})
            assert ask(stub, "Hi") == "Hello!"
            client = anthropic.Anthropic(api_key="test-key", max_retries=0, http_client=hx.Client(transport=stub))
            with pytest.raises(anthropic.NotFoundError):
                client.beta.files.list()
        """,
    )
    result = run(pytester)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*_ ERROR at teardown of test_app _*",
            "wirescript: 1 request(s) were not answered as scripted:",
            "  - requests[1] GET /v1/files",
            "    no wire serves this endpoint (known: POST …/v1/messages, *). Nothing was consumed from the script.",
            (
                "(If the app is meant to get these errors, mark the test "
                "@pytest.mark.wirescript(allow=['unknown_endpoint']).)"
            ),
            "wirescript: 2 scripted turn(s) were never requested:",
            "  - script['claude-test'][1]: text 'Unused'",
            "  - script[0]: tool search",
            "(If that is on purpose, mark the test @pytest.mark.wirescript(check_unused=False).)",
            "*= short test summary info =*",
        ],
        consecutive=True,
    )


def test_a_failing_test_still_reports_what_the_stub_saw(pytester: pytest.Pytester) -> None:
    make_tests(
        pytester,
        """
        def test_app(wirescript):
            stub = wirescript([])
            ask(stub, "Anyone there?")
        """,
    )
    result = run(pytester)
    result.assert_outcomes(failed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*_ ERROR at teardown of test_app _*",
            "wirescript: 1 request(s) were not answered as scripted:",
            "  - requests[0] POST /v1/messages model='claude-test' last=user:'Anyone there?'",
            "    is past the end of the script: it has 0 turn(s), all served.*",
        ],
        consecutive=True,
    )
    result.stdout.fnmatch_lines(["E *anthropic.BadRequestError: Error code: 400 - *is past the end of the script*"])


def test_every_stub_of_the_test_is_checked_and_named(pytester: pytest.Pytester) -> None:
    make_tests(
        pytester,
        """
        def test_app(wirescript):
            first = wirescript(["One"])
            second = wirescript(["Two", "Three"])
            assert ask(first, "1") == "One"
            assert ask(second, "2") == "Two"
        """,
    )
    result = run(pytester)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*_ ERROR at teardown of test_app _*",
            "wirescript stub 2 of 2:",
            "wirescript: 1 scripted turn(s) were never requested:",
            "  - script[1]: text 'Three'",
            "(If that is on purpose, mark the test @pytest.mark.wirescript(check_unused=False).)",
            "*= short test summary info =*",
        ],
        consecutive=True,
    )


def test_a_batch_the_app_never_collected_fails_at_teardown_unless_unused_checks_are_off(
    pytester: pytest.Pytester,
) -> None:
    make_tests(
        pytester,
        """
        def start_a_batch(wirescript):
            stub = wirescript(["Batched."])
            client = anthropic.Anthropic(api_key="test-key", max_retries=0, http_client=hx.Client(transport=stub))
            item = {"custom_id": "a", "params": {"model": "claude-test", "max_tokens": 8, "messages": []}}
            item["params"]["messages"].append({"role": "user", "content": "Hi"})
            batch = client.messages.batches.create(requests=[item])
            client.messages.batches.retrieve(batch.id)
            assert client.messages.batches.retrieve(batch.id).processing_status == "ended"


        def test_never_collected(wirescript):
            start_a_batch(wirescript)


        @pytest.mark.wirescript(check_unused=False)
        def test_on_purpose(wirescript):
            start_a_batch(wirescript)
        """,
    )
    result = run(pytester)
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*_ ERROR at teardown of test_never_collected _*",
            "wirescript: 1 message batch(es) were never collected to their end:",
            "  - msgbatch_0000 (1 request(s), created by requests[[]0]): ended (done); the app never collected it: *",
            "(If that is on purpose, mark the test @pytest.mark.wirescript(check_unused=False).)",
            "*= short test summary info =*",
        ],
        consecutive=True,
    )


def test_the_marker_turns_each_check_off_and_the_closest_marker_wins(pytester: pytest.Pytester) -> None:
    make_tests(
        pytester,
        """
        pytestmark = pytest.mark.wirescript(check_unused=False)


        def overflow_and_leave_a_turn(wirescript):
            stub = wirescript(["Hello!", "Unused"])
            ask(stub, "Hi")
            stub_2 = wirescript([])
            with pytest.raises(anthropic.BadRequestError):
                ask(stub_2, "Too many")


        @pytest.mark.wirescript(check_overflow=False)
        def test_both_off(wirescript):
            overflow_and_leave_a_turn(wirescript)


        def test_module_turns_unused_off(wirescript):
            overflow_and_leave_a_turn(wirescript)


        @pytest.mark.wirescript(check_overflow=False)
        class TestClass:
            @pytest.mark.wirescript(check_unused=True)
            def test_function_turns_unused_back_on(self, wirescript):
                overflow_and_leave_a_turn(wirescript)
        """,
    )
    result = run(pytester)
    result.assert_outcomes(passed=3, errors=2)
    result.stdout.fnmatch_lines(
        [
            "*_ ERROR at teardown of test_module_turns_unused_off _*",
            "wirescript stub 2 of 2:",
            "wirescript: 1 request(s) were not answered as scripted:",
            "  - requests[0] POST /v1/messages model='claude-test' last=user:'Too many'",
            "*",
            "*",
            "*_ ERROR at teardown of TestClass.test_function_turns_unused_back_on _*",
            "wirescript stub 1 of 2:",
            "wirescript: 1 scripted turn(s) were never requested:",
            "  - script[1]: text 'Unused'",
            "(If that is on purpose, mark the test @pytest.mark.wirescript(check_unused=False).)",
            "*= short test summary info =*",
        ],
        consecutive=True,
    )


def test_a_misspelt_marker_option_points_at_the_users_line(pytester: pytest.Pytester) -> None:
    make_tests(
        pytester,
        """
        @pytest.mark.wirescript(check_overflwo=False)
        def test_typo(wirescript):
            pass


        class TestWrongType:
            pytestmark = pytest.mark.wirescript(check_unused="no")

            def test_app(self, wirescript):
                pass


        @pytest.mark.wirescript(False)
        def test_positional(wirescript):
            pass


        @pytest.mark.wirescript(check_overflwo=False)
        def test_no_fixture_still_checked():
            pass
        """,
    )
    result = run(pytester)
    result.assert_outcomes(errors=4)
    result.stdout.fnmatch_lines(
        [
            "*_ ERROR at setup of test_typo _*",
            (
                "test_app.py:12: @pytest.mark.wirescript(check_overflwo=False): unknown option 'check_overflwo'; "
                "did you mean 'check_overflow'? (options: check_overflow, check_unused, allow_network, allowed_hosts, "
                "strict, strict_skip, check_tool_input, dialect, match_recorded, allow, check_hand_built, usage, "
                "prices, max_cost_usd, min_cache_hit, cache_from_request)"
            ),
            "*_ ERROR at setup of TestWrongType.test_app _*",
            (
                "test_app.py:17: @pytest.mark.wirescript(check_unused='no'): check_unused must be True or False, "
                "got str 'no'"
            ),
            "*_ ERROR at setup of test_positional _*",
            (
                "test_app.py:24: @pytest.mark.wirescript takes keyword options only (check_overflow=..., "
                "check_unused=..., allow_network=..., allowed_hosts=..., strict=..., strict_skip=..., "
                "check_tool_input=..., dialect=..., match_recorded=..., allow=..., check_hand_built=..., usage=..., "
                "prices=..., max_cost_usd=..., min_cache_hit=..., cache_from_request=...), got positional False"
            ),
            "*_ ERROR at setup of test_no_fixture_still_checked _*",
            (
                "test_app.py:29: @pytest.mark.wirescript(check_overflwo=False): unknown option 'check_overflwo'; "
                "did you mean 'check_overflow'? (options: check_overflow, check_unused, allow_network, allowed_hosts, "
                "strict, strict_skip, check_tool_input, dialect, match_recorded, allow, check_hand_built, usage, "
                "prices, max_cost_usd, min_cache_hit, cache_from_request)"
            ),
            "*= short test summary info =*",
        ],
        consecutive=True,
    )


def test_a_bad_module_marker_names_its_pytestmark_line(pytester: pytest.Pytester) -> None:
    make_tests(
        pytester,
        """
        pytestmark = [pytest.mark.filterwarnings("ignore")]
        if True:
            pytestmark = [*pytestmark, pytest.mark.wirescript(check_unused=0)]


        def test_app(wirescript):
            pass
        """,
    )
    source = (pytester.path / "test_app.py").read_text().splitlines()
    line = next(number for number, text in enumerate(source, 1) if "wirescript(" in text)
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*_ ERROR at setup of test_app _*",
            (
                f"test_app.py:{line}: @pytest.mark.wirescript(check_unused=0): check_unused must be True or False, "
                "got int 0"
            ),
        ],
        consecutive=True,
    )


def test_a_module_marker_without_a_pytestmark_line_names_the_module(pytester: pytest.Pytester) -> None:
    """A mark put on the module some other way (here `globals()`) still names the file."""
    make_tests(
        pytester,
        """
        globals()["pytest" + "mark"] = pytest.mark.wirescript(check_unused=0)


        def test_app(wirescript):
            pass
        """,
    )
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["test_app.py: @pytest.mark.wirescript(check_unused=0): check_unused must be True or False, got int 0"]
    )


def test_the_fixture_takes_a_script_builder(pytester: pytest.Pytester) -> None:
    make_tests(
        pytester,
        """
        from wirescript import ScriptBuilder


        def test_app(wirescript):
            stub = wirescript(ScriptBuilder().says("Hello!").says("Unused").for_model("claude-b").echoes_user())
            assert ask(stub, "Hi") == "Hello!"
            assert ask(stub, "Echo this", model="claude-b") == "Echo this"
        """,
    )
    result = run(pytester)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["wirescript: 1 scripted turn(s) were never requested:", "  - script[1]: text 'Unused'"], consecutive=True
    )


def test_error_cases_show_by_id_in_test_ids(pytester: pytest.Pytester) -> None:
    make_tests(
        pytester,
        """
        from wirescript import anthropic_errors


        @pytest.mark.parametrize("err", anthropic_errors())
        def test_app(wirescript, err):
            stub = wirescript([err.turn])
            client = anthropic.Anthropic(api_key="test-key", max_retries=0, http_client=hx.Client(transport=stub))
            with pytest.raises(err.exception) as info:
                if err.in_stream:
                    for _ in client.messages.create(
                        model="m", max_tokens=8, messages=[{"role": "user", "content": "Hi"}], stream=True
                    ):
                        pass
                else:
                    client.messages.create(model="m", max_tokens=8, messages=[{"role": "user", "content": "Hi"}])
            assert type(info.value) is err.exception
        """,
    )
    result = run(pytester, "-v")
    result.assert_outcomes(passed=11)
    result.stdout.fnmatch_lines(
        [
            "test_app.py::test_app[[]400-invalid_request_error] PASSED*",
            "test_app.py::test_app[[]401-authentication_error] PASSED*",
            "test_app.py::test_app[[]402-billing_error] PASSED*",
            "test_app.py::test_app[[]403-permission_error] PASSED*",
            "test_app.py::test_app[[]404-not_found_error] PASSED*",
            "test_app.py::test_app[[]413-request_too_large] PASSED*",
            "test_app.py::test_app[[]429-rate_limit_error] PASSED*",
            "test_app.py::test_app[[]500-api_error] PASSED*",
            "test_app.py::test_app[[]504-timeout_error] PASSED*",
            "test_app.py::test_app[[]529-overloaded_error] PASSED*",
            "test_app.py::test_app[[]stream-overloaded_error] PASSED*",
        ],
        consecutive=True,
    )


def test_the_marker_is_registered(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--markers")
    result.stdout.fnmatch_lines(
        [
            (
                "@pytest.mark.wirescript(*, check_overflow=True, check_unused=True, allow_network=False, "
                "allowed_hosts=(), strict=True, strict_skip=(), check_tool_input=False, match_recorded=False): turn "
                "off the wirescript fixture's teardown check of requests the script did not answer, or of scripted "
                "turns never requested; let the test reach the network, or some hosts; turn the strict request and "
                "answer rules off for the stubs the fixture makes, or some of them, or hold every tool call's input "
                "to its tool's schema (docs/strict-requests.md); fail when a request replayed from "
                "wirescript.recorded() asks something else than the one recorded for its turn. "
                "allow=[problem kinds]: let problems of those kinds pass (check_overflow=False is "
                "allow=['unscripted', 'unknown_endpoint', 'unreadable', 'script_error']); check_hand_built=False: "
                "do not check the ScriptTransports the test builds itself. usage='derive': the stubs derive their "
                "usage from the requests (prompt caching included); prices={model: {...}}: their price table; "
                "max_cost_usd=N: fail when a stub's bill is over N dollars; min_cache_hit=R (cache_from_request=I): "
                "fail when less than R of its input tokens, from requests[I] on, were read from the cache "
                "(docs/usage.md)."
            )
        ]
    )
    make_tests(pytester, "@pytest.mark.wirescript(check_unused=False)\ndef test_app():\n    pass\n")
    run(pytester, "--strict-markers").assert_outcomes(passed=1)


def test_loading_the_plugin_imports_neither_pydantic_nor_the_library() -> None:
    code = (
        "import sys, wirescript.pytest_plugin\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('pydantic', 'wirescript.', 'anthropic')))\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "['wirescript.pytest_plugin']\n"


def test_using_the_factory_as_a_stub_says_to_make_a_stub_first() -> None:
    from wirescript import StubFactory

    with pytest.raises(AttributeError) as info:
        _ = StubFactory().requests
    assert str(info.value) == (
        "'StubFactory' object has no attribute 'requests': the `wirescript` fixture is a factory; "
        "make a stub first (stub = wirescript(script)), then use stub.requests"
    )


# ---------------------------------------------------------------------------------------- stubs built elsewhere


def test_a_stub_built_elsewhere_is_checked_whatever_the_fixture_order(pytester: pytest.Pytester) -> None:
    make_tests(
        pytester,
        """
        from wirescript import ScriptTransport

        SHARED = ScriptTransport(["for the first test", "for the second test"])  # module level: shared
        OVERFLOWING = ScriptTransport([])


        @pytest.fixture
        def prebuilt():
            return ScriptTransport(["built by a fixture", "never asked"])


        @pytest.fixture(scope="module")
        def module_stub():
            return ScriptTransport(["module one", "module two"])


        def swallowed(stub):
            try:
                ask(stub, "once too often")
            except anthropic.APIError:
                pass  # the app hides the error


        def test_fixture_listed_before(prebuilt, wirescript):
            assert ask(prebuilt, "Hi") == "built by a fixture"


        def test_fixture_listed_after(wirescript, prebuilt):
            assert ask(prebuilt, "Hi") == "built by a fixture"


        def test_module_level_overflow(wirescript):
            swallowed(OVERFLOWING)


        def test_shared_first(wirescript):
            assert ask(SHARED, "Hi") == "for the first test"


        def test_shared_second(wirescript):
            assert ask(SHARED, "Hi") == "for the second test"


        def test_module_fixture_first(module_stub, wirescript):
            assert ask(module_stub, "Hi") == "module one"


        def test_module_fixture_second(wirescript, module_stub):
            assert ask(module_stub, "Hi") == "module two"
            swallowed(module_stub)
        """,
    )
    result = run(pytester, "-p", "no:randomly")
    result.assert_outcomes(passed=7, errors=4)
    for name in ("test_fixture_listed_before", "test_fixture_listed_after"):
        result.stdout.fnmatch_lines(
            [f"*_ ERROR at teardown of {name} _*", "wirescript: 1 scripted turn(s) were never requested:"]
        )
    for name, index, turns in (("test_module_level_overflow", 0, 0), ("test_module_fixture_second", 2, 2)):
        result.stdout.re_match_lines(
            [
                rf".*_ ERROR at teardown of {name} _.*",
                (
                    r"wirescript: 1 request\(s\) of this test to a stub built before it \(<ScriptTransport .*>: "
                    r"at module level, or by a fixture of wider scope\) were not answered as scripted:"
                ),
                re.escape(
                    f"  - requests[{index}] POST /v1/messages (model 'claude-test') is past the end of the script: it "
                    f"has {turns} turn(s), all served."
                ),
                re.escape(
                    "(If the app is meant to get these errors, mark the test "
                    "@pytest.mark.wirescript(allow=['unscripted']). Its unused turns are not checked here: other "
                    "tests may use them.)"
                ),
            ],
            consecutive=True,
        )
    assert "ERROR at teardown of test_shared_" not in result.stdout.str()  # a shared stub's turns are for others
    assert "ERROR at teardown of test_module_fixture_first" not in result.stdout.str()


def test_a_stub_nothing_checked_warns(pytester: pytest.Pytester) -> None:
    make_tests(
        pytester,
        """
        from wirescript import ScriptTransport


        def test_unchecked():
            stub = ScriptTransport(["asked", "never asked"])
            assert ask(stub, "Hi") == "asked"


        def test_checked():
            stub = ScriptTransport(["asked", "never asked"])
            assert ask(stub, "Hi") == "asked"
            with pytest.raises(AssertionError):
                stub.check()


        def test_every_turn_used():
            assert ask(ScriptTransport(["asked"]), "Hi") == "asked"


        @pytest.mark.wirescript(check_hand_built=False)
        def test_left_to_the_test_by_the_marker(wirescript):
            ScriptTransport(["never asked"])
        """,
    )
    result = run(pytester, "-W", "error::wirescript.errors.UncheckedStubWarning")
    result.assert_outcomes(passed=4, errors=1)
    result.stdout.re_match_lines(
        [
            ".*_ ERROR at teardown of test_unchecked _.*",
            "E +"
            + re.escape(
                "wirescript.errors.UncheckedStubWarning: wirescript: nothing checked a ScriptTransport whose 1 "
                "scripted turn(s) were never requested (script[1]: text 'never asked'; 1 request(s) reached it). "
                "Call stub.check() when the app is done, or build the stub in a test that uses the wirescript fixture."
            ),
        ]
    )
    assert "def warn(" not in result.stdout.str()  # the plugin's frames are hidden
    code = textwrap.dedent(
        """
        from wirescript import ScriptTransport
        stub = ScriptTransport(["never asked"])
        del stub
        checked = ScriptTransport(["never asked"])
        try:
            checked.check()
        except AssertionError:
            pass
        del checked
        print("done")
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "done\n"
    assert done.stderr.count("UncheckedStubWarning") == 1  # outside pytest: when the stub is collected
    assert "script[0]: text 'never asked'; 0 request(s) reached it" in done.stderr


# ---------------------------------------------------------------------------------------- xfail


def test_a_teardown_failure_under_xfail_is_an_error_not_an_expected_failure(pytester: pytest.Pytester) -> None:
    make_tests(
        pytester,
        """
        @pytest.mark.xfail(reason="a known bug of the app")
        def test_body_fails(wirescript):
            wirescript(["never asked"])
            assert False


        @pytest.mark.xfail(reason="flaky")
        def test_body_passes(wirescript):
            stub = wirescript(["asked", "never asked"])
            assert ask(stub, "Hi") == "asked"


        @pytest.mark.xfail(reason="a known bug of the app")
        def test_expected_failure_alone(wirescript):
            assert ask(wirescript(["asked"]), "Hi") == "something else"
        """,
    )
    result = run(pytester)
    result.assert_outcomes(xfailed=2, xpassed=1, errors=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*_ ERROR at teardown of test_body_fails _*", "wirescript: 1 scripted turn(s) were never requested:"]
    )
    result.stdout.fnmatch_lines(
        ["*_ ERROR at teardown of test_body_passes _*", "wirescript: 1 scripted turn(s) were never requested:"]
    )


# ---------------------------------------------------------------------------------------- what the stub saw


def test_a_failed_assertion_shows_what_the_stub_saw_and_which_requests_the_sdk_retried(
    pytester: pytest.Pytester,
) -> None:
    make_tests(
        pytester,
        """
        def ask_with_backoff(client):
            waited = []
            for _ in range(3):
                try:
                    return client.messages.create(
                        model="claude-test", max_tokens=64, messages=[{"role": "user", "content": "Hi"}]
                    ), waited
                except anthropic.RateLimitError:
                    waited.append(0.5)  # the app's own backoff
            raise RuntimeError("gave up")


        def test_backoff(wirescript):
            stub = wirescript([{"error": {"status": 429}}, "Hello."])
            client = anthropic.Anthropic(api_key="test-key", http_client=hx.Client(transport=stub))  # default retries
            reply, waited = ask_with_backoff(client)
            assert waited == [0.5]
        """,
    )
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["E       assert [] == [0.5]"])
    result.stdout.fnmatch_lines(
        [
            "*- wirescript requests -*",
            "the stub: 2 request(s)",
            "  requests[0] POST /v1/messages model='claude-test' last=user:'Hi' -> script[0]: error 429",
            (
                "  requests[1] POST /v1/messages model='claude-test' last=user:'Hi' -> script[1]: text 'Hello.'  "
                "<- the SDK's own retry 1 of requests[0], whose answer the app never saw"
            ),
            "(The SDK retried on its own: build the client with max_retries=0, or script one turn per attempt.)",
        ],
        consecutive=True,
    )


def test_the_section_is_bounded_and_only_for_failures(pytester: pytest.Pytester) -> None:
    make_tests(
        pytester,
        """
        from wirescript import ScriptTransport


        def test_many(wirescript):
            stub = wirescript(lambda record: "ok")
            other = ScriptTransport(lambda record: "by hand")
            for n in range(100):
                ask(stub, f"question {n}")
            ask(other, "the other one")
            assert False, "the app answered wrong"


        def test_passes(wirescript):
            assert ask(wirescript(["ok"]), "Hi") == "ok"
            print("PASSED-TEST-OUTPUT")
        """,
    )
    result = run(pytester, "-rA")
    result.assert_outcomes(failed=1, passed=1)
    text = result.stdout.str()
    section = text[text.index("- wirescript requests -") :].splitlines()
    assert section[1] == "stub 1 of 2: 100 request(s)"
    assert section[2].startswith("  requests[0] POST /v1/messages model='claude-test' last=user:'question 0' -> ")
    assert section[7] == "  … 80 request(s) not shown …"
    assert section[8].startswith("  requests[85] ")
    assert section[23] == "stub 2 of 2: 1 request(s)"
    assert section[24].endswith("-> the script function's answer")
    assert text.count("- wirescript requests -") == 1  # the passing test has none
