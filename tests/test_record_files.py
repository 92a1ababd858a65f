"""Where recordings go: one file per test whatever its id, saves that never take each other's partial file,
and a recorder that reaches the clients an app builds itself (`intercept`), in pytest too."""

from __future__ import annotations

import shutil
import textwrap
import threading
from pathlib import Path

import anthropic
import pytest

from _loopback import loopback_server
from wirescript import RecordingTransport, ScriptTransport, load_script
from wirescript.recording._files import file_stem

httpx2 = pytest.importorskip("httpx2")  # the legacy run (anthropic 0.x, openai 2.x on httpx) has none

pytest_plugins = ["pytester"]

assert anthropic  # pytester restores `sys.modules`: what the temporary tests import stays loaded

ASK = [{"role": "user", "content": "Hi"}]


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    shutil.rmtree(pytester.path / "__pycache__", ignore_errors=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        return pytester.runpytest("-p", "wirescript.pytest_plugin", "-p", "no:cacheprovider", *args)


# ---------------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("name", "stem"),
    [
        ("test_weather", "test_weather"),
        ("test_weather[paris]", "test_weather_paris"),
        ("test_x[a-b.c_d]", "test_x_a-b.c_d"),
    ],
)
def test_a_tests_own_name_is_its_file_name(name: str, stem: str) -> None:
    assert file_stem(name) == stem


def test_names_that_would_collide_or_overflow_get_a_hash_of_their_own() -> None:
    stems = [file_stem(f"test_collide[a{sep}b]") for sep in ("/", "_", " ", ":", "\\")]
    assert len(set(stems)) == 5
    assert stems[1] == "test_collide_a_b"  # the one that lost nothing keeps its plain name
    assert all(s.startswith("test_collide_a_b-") for s in stems[:1] + stems[2:])
    long = file_stem("test_long[" + "x" * 300 + "]")
    assert len(long) == 120
    assert long != file_stem("test_long[" + "x" * 299 + "]")
    assert file_stem("../../../../tmp/evil").startswith("tmp_evil-")  # never a path out of the folder


def test_parametrized_ids_that_differ_record_and_replay_their_own_files(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_ids=textwrap.dedent(
            """
            import anthropic, pytest
            from wirescript import ScriptTransport

            hx = __import__("httpx2" if int(anthropic.__version__.split(".")[0]) >= 1 else "httpx")
            IDS = ["a/b", "a_b", "a b", "a:b", "x" * 300]
            LIVE = {case: ScriptTransport([f"answer for {case}"]) for case in IDS}  # built outside the tests

            @pytest.mark.parametrize("case", IDS, ids=IDS)
            def test_collide(wirescript, case):
                stub = wirescript.recorded(upstream=LIVE[case])
                client = anthropic.Anthropic(api_key="test-key", max_retries=0, http_client=hx.Client(transport=stub))
                text = client.messages.create(
                    model="claude-test", max_tokens=8, messages=[{"role": "user", "content": "Hi"}]
                ).content[0].text
                assert text == f"answer for {case}"
            """
        )
    )
    _run(pytester, "--wirescript-record=all").assert_outcomes(passed=5)
    files = sorted((pytester.path / "scripts" / "test_ids").iterdir())
    assert len(files) == 5
    assert sorted(load_script(f)[0].text for f in files) == sorted(  # type: ignore[index,union-attr]
        f"answer for {case}" for case in ["a/b", "a_b", "a b", "a:b", "x" * 300]
    )
    _run(pytester).assert_outcomes(passed=5)  # each case replays its own recording


def test_two_tests_that_would_share_a_file_fail_naming_both_and_the_fix(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_shared=textwrap.dedent(
            """
            import pytest
            from wirescript import ScriptTransport

            @pytest.mark.parametrize("case", ["a"])
            def test_x(wirescript, case):
                wirescript.recorded(upstream=ScriptTransport([]))

            def test_x_a(wirescript):
                wirescript.recorded(upstream=ScriptTransport([]))
            """
        )
    )
    result = _run(pytester, "--wirescript-record=all", "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)
    expected = (
        "*wirescript.recorded(): test_shared.py::test_x_a and test_shared.py::test_x[[]a[]] would share the "
        'recorded script *test_x_a.yaml; give one of them its own name: wirescript.recorded("another-name")'
    )
    result.stdout.fnmatch_lines([expected])


# ---------------------------------------------------------------------- saving


def test_recorders_saving_one_path_at_once_never_take_each_others_file(tmp_path: Path) -> None:
    path = tmp_path / "shared.yaml"
    recorders = []
    for n in range(4):
        rec = RecordingTransport(path, upstream=ScriptTransport([f"from recorder {n}"]))
        anthropic.Anthropic(api_key="test-key", http_client=httpx2.Client(transport=rec)).messages.create(
            model="claude-test", max_tokens=8, messages=ASK
        )
        recorders.append(rec)
    failures: list[BaseException] = []

    def save(rec: RecordingTransport) -> None:
        for _ in range(50):
            try:
                rec.save()
            except BaseException as exc:  # FileNotFoundError: another saver moved the shared partial file
                failures.append(exc)

    threads = [threading.Thread(target=save, args=(rec,)) for rec in recorders]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    [turn] = load_script(path)  # type: ignore[misc]
    assert turn.text in {f"from recorder {n}" for n in range(4)}  # one of them, whole
    assert [p.name for p in tmp_path.iterdir()] == ["shared.yaml"]  # no partial file left behind


# ---------------------------------------------------------------------- intercept


def test_intercept_records_a_client_the_app_builds_itself(tmp_path: Path) -> None:
    rec = RecordingTransport(tmp_path / "rec.yaml", upstream=ScriptTransport(["Recorded without http_client."]))
    with rec.intercept():
        client = anthropic.Anthropic(api_key="test-key", max_retries=0)  # no http_client: built by the app
        said = client.messages.create(model="claude-test", max_tokens=8, messages=ASK).content[0].text
    rec.save()
    assert said == "Recorded without http_client."
    assert [t.text for t in load_script(rec.path)] == ["Recorded without http_client."]  # type: ignore[union-attr]
    assert rec.requests[0].api_key == "test-key"


def test_what_an_intercepting_recorder_forwards_goes_to_the_network_not_back_to_it(tmp_path: Path) -> None:
    rec = RecordingTransport(tmp_path / "rec.yaml")  # upstream: the real network (here a loopback server)
    with loopback_server() as (base_url, paths), rec.intercept(["127.0.0.1"]), httpx2.Client() as client:
        answer = client.post(f"{base_url}/v1/messages", json={"model": "m", "messages": ASK})
    rec.close()  # the network transport it forwarded on: its pooled connection would warn in a later test
    assert answer.json() == {"served_by": "loopback"}
    assert paths == ["/v1/messages"]
    assert len(rec.requests) == 1  # recorded once: its forwarding was not intercepted again


def test_recorded_with_intercept_records_once_then_replays(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_app=textwrap.dedent(
            """
            import anthropic
            from wirescript import ScriptTransport

            LIVE = ScriptTransport(["Recorded through intercept."])

            def test_app(wirescript):
                wirescript.recorded(upstream=LIVE, intercept=True)
                client = anthropic.Anthropic(api_key="test-key", max_retries=0)  # the app's own client
                text = client.messages.create(
                    model="claude-test", max_tokens=8, messages=[{"role": "user", "content": "Hi"}]
                ).content[0].text
                assert text == "Recorded through intercept."
            """
        )
    )
    _run(pytester, "--wirescript-record=once").assert_outcomes(passed=1)
    assert [t.text for t in load_script(pytester.path / "scripts/test_app/test_app.yaml")] == [  # type: ignore[union-attr]
        "Recorded through intercept."
    ]
    _run(pytester).assert_outcomes(passed=1)  # replayed by intercept, from the file


def test_options_refused_while_recording_name_what_works(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_app=textwrap.dedent(
            """
            from wirescript import ScriptTransport

            def test_app(wirescript):
                wirescript.recorded(upstream=ScriptTransport([]), hold_timeout=5)
            """
        )
    )
    result = _run(pytester, "--wirescript-record=once")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            (
                "*UsageError: wirescript.recorded(): options (hold_timeout) configure the stub that replays the file, "
                "and --wirescript-record=once records it instead: record without them (a recording takes name=, "
                "path=, upstream= and intercept=), and replay with them (--wirescript-record=none)"
            )
        ]
    )
