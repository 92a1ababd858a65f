"""The framework tests skip without their frameworks, fail without them under CI, and never reach the network."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

# The runs load every installed plugin but langsmith's (the frameworks group), which imports its client
# again in each run (pytester forgets the modules a run imported): 2-3 s of CPU each, for nothing here.
NO_LANGSMITH = ("-p", "no:langsmith_plugin")

USES_AGENTS = """
import sys

sys.modules["agents"] = None  # as if openai-agents were not installed


def test_runner(openai_agents):
    raise AssertionError("not reached")
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest((Path(__file__).parent / "conftest.py").read_text())
    pytester.makepyfile(test_frameworks=USES_AGENTS)
    return pytester


def test_a_missing_framework_skips_the_tests_that_need_it(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WIRESCRIPT_REQUIRE_AGENTS", raising=False)
    result = project.runpytest("-rs", *NO_LANGSMITH)
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        [
            (
                "SKIPPED [[]1[]] test_frameworks.py:6: openai-agents is not installed: "
                "the framework tests need the 'agents' dependency group"
            )
        ]
    )


def test_a_missing_framework_fails_when_ci_requires_the_frameworks(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WIRESCRIPT_REQUIRE_AGENTS", "1")
    result = project.runpytest(*NO_LANGSMITH)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            (
                "openai-agents is not importable (import of agents halted; None in sys.modules), and "
                "WIRESCRIPT_REQUIRE_AGENTS=1 requires the agent frameworks: install the 'agents' dependency group "
                "(uv sync --group agents)"
            )
        ]
    )


def test_a_directory_named_like_the_framework_is_not_taken_for_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without openai-agents installed, `import agents` finds this very directory (tests/agents) as a
    # namespace package: a module without a file, which must count as missing.
    pytester.makeconftest((Path(__file__).parent / "conftest.py").read_text())
    pytester.makepyfile(test_frameworks=USES_AGENTS.replace("None  #", "type(sys)('agents')  #"))
    monkeypatch.setenv("WIRESCRIPT_REQUIRE_AGENTS", "1")
    result = pytester.runpytest(*NO_LANGSMITH)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            (
                "openai-agents is not importable (only a directory named 'agents' is on the path, not the package), "
                "and WIRESCRIPT_REQUIRE_AGENTS=1 requires the agent frameworks: install the 'agents' dependency group "
                "(uv sync --group agents)"
            )
        ]
    )


def test_the_network_is_refused_in_the_framework_tests() -> None:
    with socket.socket() as sock, pytest.raises(AssertionError) as info:
        sock.connect(("127.0.0.1", 9))
    assert str(info.value) == "a framework test tried to reach the network: ('127.0.0.1', 9)"
