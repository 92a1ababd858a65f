"""The command line: `schema`, `check` and `audit`, their output and exit statuses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import wirescript
from wirescript import script_json_schema
from wirescript.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_python_dash_m_runs_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "wirescript", "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, f"wirescript {wirescript.__version__}\n", "")


def test_no_command_prints_the_help_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys)
    assert (status, out) == (2, "")
    assert err.startswith("usage: wirescript [-h] [--version] COMMAND ...\n")
    for command in ("schema", "check", "audit", "serve"):
        assert f"\n    {command} " in err


def test_an_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "serv")
    assert (status, out) == (2, "")
    assert err.splitlines()[-1] == (
        "wirescript: error: argument COMMAND: invalid choice: 'serv' "
        "(choose from 'schema', 'check', 'audit', 'serve', 'record')"
    )


def test_schema_prints_the_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "schema")
    assert (status, err) == (0, "")
    assert json.loads(out) == script_json_schema()
    assert out.startswith('{\n  "$schema": "https://json-schema.org/draft/2020-12/schema",\n')


def test_check_reports_each_file_and_fails_when_one_is_bad(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("good.yaml").write_text("- Hi\n- {tool: {name: f}}\n")
    Path("queues.json").write_text('{"claude-big": ["A"], "*": ["B", "C"]}')
    Path("bad.json").write_text('[{"txt": "typo"}]')
    status, out, err = run(capsys, "check", "good.yaml", "queues.json")
    assert (status, out, err) == (0, "good.yaml: ok, 2 turn(s)\nqueues.json: ok, 3 turn(s) in 2 queue(s)\n", "")
    status, out, err = run(capsys, "check", "good.yaml", "bad.json", "nope.yml")
    assert (status, err) == (1, "")
    assert out.splitlines() == [
        "good.yaml: ok, 2 turn(s)",
        (
            "bad.json: invalid script[0]: unknown field 'txt' (expected one of: text, citations, server_tools, "
            "tool, tools, thinking, "
            "thinking_signature, usage, stop_reason, error, fault, unchecked); did you mean 'text'?"
        ),
        "nope.yml: no such script file",
    ]


def test_check_needs_a_file(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "check")
    assert status == 2
    assert err.splitlines()[-1] == "wirescript check: error: the following arguments are required: FILE"


def test_audit_prints_findings_and_fails(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("tests").mkdir()
    Path("tests/test_live.py").write_text('import os\nKEY = os.environ["OPENAI_API_KEY"]\n')
    Path("tests/test_ok.py").write_text("X = 1\n")
    Path("examples").mkdir()
    Path("examples/demo.py").write_text("import httpx\nhttpx.post('https://api.openai.com')\n")
    status, out, err = run(capsys, "audit", "tests", "examples")
    assert status == 1
    assert out.splitlines() == [
        (
            "tests/test_live.py:2: WS102 reads the key variable OPENAI_API_KEY: a test that uses a real key can "
            'reach the real API; pass api_key="test-key" to a client on a ScriptTransport'
        ),
        (
            "examples/demo.py:2: WS105 httpx.post() always uses the real network; "
            "send through a client with transport=ScriptTransport(...)"
        ),
    ]
    assert err == "wirescript audit: 2 finding(s) in 2 file(s); 3 file(s) scanned\n"


def test_audit_exits_zero_when_clean_and_honours_exclude(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("tests/apps").mkdir(parents=True)
    Path("tests/apps/app.py").write_text("import anthropic\nclient = anthropic.Anthropic()\n")
    Path("tests/test_ok.py").write_text("X = 1\n")
    status, out, err = run(capsys, "audit", "tests", "--exclude", "apps")
    assert (status, out, err) == (0, "", "wirescript audit: no findings; 1 file(s) scanned\n")


def test_audit_of_a_missing_path_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    status, out, err = run(capsys, "audit", "nope")
    assert (status, out, err) == (2, "", "wirescript audit: no such file or directory: nope\n")


def test_check_counts_a_side_script_apart_from_the_queues(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("side.json").write_text('{"*": ["Hi"], "$side": {"count_tokens": 3}}')
    Path("bad-side.json").write_text('{"*": [], "$side": {"count_token": 3}}')
    assert run(capsys, "check", "side.json") == (0, "side.json: ok, 1 turn(s) in 1 queue(s) and a side script\n", "")
    status, out, _ = run(capsys, "check", "bad-side.json")
    assert status == 1
    assert out == (
        "bad-side.json: invalid script['$side']: unknown field 'count_token' "
        "(expected one of: count_tokens, embeddings, models, jobs); did you mean 'count_tokens'?\n"
    )
