"""`--wirescript-record` and `wirescript.recorded()`, run on temporary projects (pytester).

The provider is a `ScriptTransport` standing in for it (`recorded(upstream=...)`), so nothing
reaches the network; which text it says tells a recording from a replay.
"""

from __future__ import annotations

import shutil
import textwrap

import anthropic
import pytest

import wirescript.files
import wirescript.recording

pytest_plugins = ["pytester"]

assert anthropic
assert wirescript.files
assert wirescript.recording

SCRIPT = "scripts/test_app/test_app.yaml"


def make_tests(
    pytester: pytest.Pytester, live: list[str], asks: int = 1, prompt: str = "question", marker: str = ""
) -> None:
    """A test asking `asks` questions of `wirescript.recorded()`, whose stand-in provider would say `live`."""
    # A module rewritten within the same second at the same size would be imported from its stale bytecode.
    shutil.rmtree(pytester.path / "__pycache__", ignore_errors=True)
    pytester.makepyfile(
        test_app=textwrap.dedent(
            f"""
            import anthropic
            import pytest

            from wirescript import ScriptTransport

            hx = __import__("httpx2" if int(anthropic.__version__.split(".")[0]) >= 1 else "httpx")
            LIVE = ScriptTransport({live!r})

            {marker}
            def test_app(wirescript):
                stub = wirescript.recorded(upstream=LIVE)
                client = anthropic.Anthropic(api_key="test-key", max_retries=0, http_client=hx.Client(transport=stub))
                said = []
                for n in range({asks}):
                    message = client.messages.create(
                        model="claude-test", max_tokens=64, messages=[{{"role": "user", "content": f"{prompt} {{n}}"}}]
                    )
                    said.append(message.content[0].text)
                print("SAID", said, "LIVE", len(LIVE.requests))
            """
        )
    )


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        return pytester.runpytest("-p", "wirescript.pytest_plugin", "-s", *args)


def _texts(pytester: pytest.Pytester) -> list[str]:
    script = wirescript.files.load_script(pytester.path / SCRIPT)
    assert isinstance(script, list)
    return [turn.text or "" for turn in script]


def test_none_is_the_default_and_a_missing_script_fails_with_the_command_that_records_it(
    pytester: pytest.Pytester,
) -> None:
    make_tests(pytester, ["Live"])
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*wirescript: no recorded script at *scripts*test_app*test_app.yaml for test_app.py::test_app.",
            "*Record it (once, against the real provider, with its API key set):",
            "*pytest 'test_app.py::test_app' --wirescript-record=once",
        ]
    )
    assert not (pytester.path / SCRIPT).exists()


def test_once_records_a_missing_script_then_replays_it(pytester: pytest.Pytester) -> None:
    make_tests(pytester, ["Recorded answer"])
    run(pytester, "--wirescript-record=once").assert_outcomes(passed=1)
    assert _texts(pytester) == ["Recorded answer"]
    text = (pytester.path / SCRIPT).read_text(encoding="utf-8")
    assert "# requests[0] POST /v1/messages model='claude-test' last=user:'question 0'" in text

    make_tests(pytester, ["The provider changed its mind"])
    for mode in ("once", "none"):  # the script exists: both replay it, the provider is not asked
        result = run(pytester, f"--wirescript-record={mode}")
        result.assert_outcomes(passed=1)
        assert "SAID ['Recorded answer'] LIVE 0" in result.stdout.str()
    assert _texts(pytester) == ["Recorded answer"]


def test_a_replay_is_a_checked_stub(pytester: pytest.Pytester) -> None:
    make_tests(pytester, ["One"])
    run(pytester, "--wirescript-record=once").assert_outcomes(passed=1)
    make_tests(pytester, ["One", "Two"], asks=2)
    result = run(pytester)  # the app now asks twice: the recording has one turn
    result.assert_outcomes(failed=1, errors=1)  # the API error in the test, the stub's check at teardown
    result.stdout.fnmatch_lines(["*past the end of the script*"])


def test_new_episodes_replays_and_records_what_runs_past_the_end(pytester: pytest.Pytester) -> None:
    make_tests(pytester, ["First"])
    run(pytester, "--wirescript-record=once").assert_outcomes(passed=1)
    make_tests(pytester, ["Second"], asks=2)
    result = run(pytester, "--wirescript-record=new_episodes")
    result.assert_outcomes(passed=1)
    assert "SAID ['First', 'Second'] LIVE 1" in result.stdout.str()  # only the new episode reached the provider
    assert _texts(pytester) == ["First", "Second"]
    run(pytester).assert_outcomes(passed=1)  # and now both replay


def test_new_episodes_keeps_the_hand_edits_of_the_file_it_appends_to(pytester: pytest.Pytester) -> None:
    make_tests(pytester, ["First"])
    run(pytester, "--wirescript-record=once").assert_outcomes(passed=1)
    path = pytester.path / SCRIPT
    edited = path.read_text(encoding="utf-8").replace("- text: First\n", "# my note\n- text: First, by hand\n")
    path.write_text(edited, encoding="utf-8")
    make_tests(pytester, ["Second"], asks=2)
    result = run(pytester, "--wirescript-record=new_episodes")
    result.assert_outcomes(passed=1)
    assert "SAID ['First, by hand', 'Second'] LIVE 1" in result.stdout.str()
    assert path.read_text(encoding="utf-8").startswith(edited)
    assert _texts(pytester) == ["First, by hand", "Second"]


def test_all_records_afresh(pytester: pytest.Pytester) -> None:
    make_tests(pytester, ["Old"])
    run(pytester, "--wirescript-record=once").assert_outcomes(passed=1)
    make_tests(pytester, ["New"])
    result = run(pytester, "--wirescript-record=all")
    result.assert_outcomes(passed=1)
    assert "SAID ['New'] LIVE 1" in result.stdout.str()
    assert _texts(pytester) == ["New"]


def test_only_recording_lets_the_provider_hosts_through_and_only_them(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_recording_guard="""
        import pytest

        from wirescript import KNOWN_HOSTS


        def test_guard(wirescript, request):
            mode = request.config.getoption("wirescript_record")
            recording = mode != "none"
            if recording:
                wirescript.recorded("guard")
            assert wirescript.guard.allows("api.anthropic.com") is recording
            assert wirescript.guard.allows("generativelanguage.googleapis.com") is recording
            assert set(wirescript.guard.allowed_hosts) == (set(KNOWN_HOSTS) if recording else set())
            assert not wirescript.guard.allows("example.com")
            assert not wirescript.guard.allows("93.184.216.34")
        """
    )
    run(pytester).assert_outcomes(passed=1)
    run(pytester, "--wirescript-record=all").assert_outcomes(passed=1)


def test_recorded_names_and_paths(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_recording_names="""
        import pytest

        from wirescript import ScriptTransport


        @pytest.mark.parametrize("city", ["Paris", "São Paulo"])
        def test_city(wirescript, city, tmp_path):
            stub = wirescript.recorded(upstream=ScriptTransport([]))
            print("PATH", stub.path.relative_to(stub.path.parents[2]))
            named = wirescript.recorded(f"second_{len(city)}", upstream=ScriptTransport([]))
            assert named.path.name == f"second_{len(city)}.yaml"  # each test its own: a shared name fails
            given = wirescript.recorded(path=tmp_path / "x.json", upstream=ScriptTransport([]))
            assert given.path == tmp_path / "x.json"
        """
    )
    result = run(pytester, "--wirescript-record=all")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*PATH scripts/test_recording_names/test_city_Paris.yaml",
            "*PATH scripts/test_recording_names/test_city_S_xe3o_Paulo-*.yaml",  # lossy: a hash of the name
        ]
    )


def test_a_bad_mode_is_refused_naming_the_choices(pytester: pytest.Pytester) -> None:
    make_tests(pytester, ["Live"])
    result = run(pytester, "--wirescript-record=sometimes")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*--wirescript-record: invalid choice: 'sometimes'*"])


def test_match_recorded_fails_a_replay_whose_app_now_asks_something_else(pytester: pytest.Pytester) -> None:
    marker = "@pytest.mark.wirescript(match_recorded=True)"
    make_tests(pytester, ["One", "Two"], asks=2, marker=marker)
    run(pytester, "--wirescript-record=once").assert_outcomes(passed=1)
    run(pytester).assert_outcomes(passed=1)  # the same questions: no drift

    make_tests(pytester, ["One", "Two"], asks=2, prompt="changed question", marker=marker)
    result = run(pytester)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*wirescript: the app asks something else than it did when the script was recorded:",
            "*  - requests?0? POST /v1/messages asks something else than the request its turn was recorded for:",
            "*    recorded: POST /v1/messages model='claude-test' last=user:'question 0'",
            "*    now:      POST /v1/messages model='claude-test' last=user:'changed question 0'",
            "*  - requests?1? POST /v1/messages asks something else*",
        ]
    )
    make_tests(pytester, ["One", "Two"], asks=2, prompt="changed question")
    run(pytester).assert_outcomes(passed=1)  # without the option, drift is not looked for
