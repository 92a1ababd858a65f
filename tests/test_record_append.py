"""`new_episodes` appends what runs past the end of a recording: the file's own bytes stay as they were.

A recorder whose upstream is an `Episodes` (the script replayed, then a stand-in provider) writes
only the forwarded turns, at the end of the queue that serves them.
"""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from _support import anthropic_client
from wirescript import RecordingTransport, ScriptTransport, UsageError, load_script, script_json_schema
from wirescript.recording import Episodes, drift, recorded_summaries
from wirescript.recording._append import append_yaml

yaml = pytest.importorskip("yaml")


def _untimed(text: str) -> str:
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "<time>", text)


def _ask(client: Any, model: str = "claude-a", prompt: str = "Hi") -> str:
    message = client.messages.create(model=model, max_tokens=10, messages=[{"role": "user", "content": prompt}])
    return "".join(b.text for b in message.content if b.type == "text")


def _record(path: Path, provider: list[Any] | dict[str, Any], asks: list[str]) -> list[str]:
    rec = RecordingTransport(path, upstream=ScriptTransport(provider))
    client = anthropic_client(rec)
    said = [_ask(client, model) for model in asks]
    client.close()
    return said


def _episodes(path: Path, provider: Any, asks: list[str]) -> tuple[list[str], ScriptTransport, RecordingTransport]:
    """A `new_episodes` run: replay the file, forward what runs past its end to `provider`, save."""
    live = ScriptTransport(provider)
    rec = RecordingTransport(path, upstream=Episodes(ScriptTransport(load_script(path)), live))
    client = anthropic_client(rec, max_retries=0)
    said = [_ask(client, model) for model in asks]
    client.close()
    return said, live, rec


HAND_EDITED = """\
# My notes on this recording: keep them!
  # an odd comment, indented
- {"text": "First, edited by hand", "fault": {"delay": 0.001}}   # a flow turn with a trailing comment

"""


def test_hand_edits_survive_byte_for_byte_and_the_new_turns_replay(tmp_path: Path) -> None:
    path = tmp_path / "rec.yaml"
    _record(path, ["First"], ["claude-a"])
    original = path.read_text(encoding="utf-8")
    edited = original.replace("- text: First\n", "- text: First, edited by hand\n  # why I changed it\n")
    edited = edited.replace("# Each turn is", "# A line of my own\n# Each turn is")
    assert edited != original
    path.write_text(edited, encoding="utf-8")

    said, live, rec = _episodes(path, ["Second", "Third"], ["claude-a", "claude-a", "claude-a"])
    assert said == ["First, edited by hand", "Second", "Third"]
    assert len(live.requests) == 2  # only what ran past the end reached the provider
    text = path.read_text(encoding="utf-8")
    assert text.startswith(edited)  # a pure append: every byte of the edited file is still there, in place
    added = text[len(edited) :]
    assert added.startswith("# Appended by wirescript ")
    assert "(new_episodes)" in added.splitlines()[0]
    assert added.count("# requests[") == 2
    pytest.importorskip("jsonschema").Draft202012Validator(script_json_schema()).validate(yaml.safe_load(text))

    replay = ScriptTransport(load_script(path))
    assert [_ask(anthropic_client(replay)) for _ in range(3)] == said
    assert replay.problems == []
    assert replay.pending == []
    rec.save()  # saving again (the fixture saves at teardown too) appends nothing more: only the end time moves
    assert _untimed(path.read_text(encoding="utf-8")) == _untimed(text)


def test_a_plain_list_stays_a_plain_list_when_another_model_runs_past_its_end(tmp_path: Path) -> None:
    """A plain list serves every model in arrival order, so the new turns go at its end."""
    path = tmp_path / "rec.yaml"
    path.write_text(HAND_EDITED, encoding="utf-8")
    said, _, _ = _episodes(path, ["For B"], ["claude-a", "claude-b"])
    text = path.read_text(encoding="utf-8")
    assert text.startswith(HAND_EDITED)
    assert "model='claude-b'" in text[len(HAND_EDITED) :]
    replay = ScriptTransport(load_script(path))
    client = anthropic_client(replay)
    assert [_ask(client, "claude-a"), _ask(client, "claude-b")] == said == ["First, edited by hand", "For B"]
    assert replay.problems == []


def test_per_model_queues_get_their_turns_in_place_and_a_new_model_a_new_queue(tmp_path: Path) -> None:
    path = tmp_path / "rec.yaml"
    _record(path, {"claude-a": ["A1"], "claude-b": ["B1"]}, ["claude-a", "claude-b"])
    original = path.read_text(encoding="utf-8").replace('"claude-b":\n', '# the B queue, by hand\n"claude-b":\n')
    path.write_text(original, encoding="utf-8")

    provider = {"claude-a": ["A2"], "claude-b": ["B2"], "claude-c": ["C1"]}
    said, _, _ = _episodes(path, provider, ["claude-a", "claude-b", "claude-a", "claude-c", "claude-b"])
    assert said[2:] == ["A2", "C1", "B2"]
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    # The original lines are all there, in order; the new ones sit after the last turn of their queue.
    opcodes = difflib.SequenceMatcher(None, original.splitlines(), lines, autojunk=False).get_opcodes()
    assert {op for op, *_ in opcodes} == {"equal", "insert"}  # nothing of the file removed or changed
    marks = ("  - text: A2", "# the B queue, by hand", "  - text: B2", '"claude-c":')
    a2, b_note, b2, c = (lines.index(x) for x in marks)
    assert a2 < b_note < b2 < c

    script = load_script(path)
    assert isinstance(script, dict)
    assert {model: [t.text for t in turns] for model, turns in script.items()} == {
        "claude-a": ["A1", "A2"],
        "claude-b": ["B1", "B2"],
        "claude-c": ["C1"],
    }
    # The appended turns carry their summaries: drift checks them as it checks the recorded ones.
    summaries = recorded_summaries(text)
    assert summaries[("claude-b", 1)].endswith("model='claude-b' last=user:'Hi'")
    assert summaries[("claude-c", 0)].endswith("model='claude-c' last=user:'Hi'")
    replay = ScriptTransport(script)
    client = anthropic_client(replay)
    for model in ["claude-a", "claude-b", "claude-a", "claude-c", "claude-b"]:
        _ask(client, model)
    assert drift(replay.requests, summaries) == []
    assert replay.problems == []


def test_a_model_without_a_queue_goes_to_the_default_queue_that_served_it(tmp_path: Path) -> None:
    path = tmp_path / "rec.yaml"
    path.write_text('"claude-a":\n  - A1\n"*":\n  - Any1\n', encoding="utf-8")
    said, _, _ = _episodes(path, ["Any2"], ["claude-a", "claude-z", "claude-z"])
    assert said == ["A1", "Any1", "Any2"]
    script = load_script(path)
    assert isinstance(script, dict)
    assert [t.text for t in script["*"]] == ["Any1", "Any2"]  # not a new claude-z queue, which would starve "*"


def test_an_empty_recording_gets_its_turns(tmp_path: Path) -> None:
    path = tmp_path / "rec.yaml"
    _record(path, [], [])
    assert path.read_text(encoding="utf-8").endswith("\n[]\n")
    said, _, _ = _episodes(path, ["New"], ["claude-a"])
    text = path.read_text(encoding="utf-8")
    assert "[]" not in text  # the one thing replaced: the empty list, by the block item
    assert said == ["New"]
    assert [t.text for t in load_script(path)] == ["New"]  # type: ignore[union-attr]


def test_a_flow_list_cannot_be_appended_to_and_says_so_when_the_recorder_is_made(tmp_path: Path) -> None:
    path = tmp_path / "rec.yaml"
    path.write_text('"claude-a": [A1, A2]\n', encoding="utf-8")
    with pytest.raises(UsageError, match=r"script\['claude-a'\] \(line 1\) is a flow list .* one '- ' item a line"):
        RecordingTransport(path, upstream=Episodes(ScriptTransport(load_script(path))))


def test_a_json_recording_keeps_its_values_and_gets_the_new_turns(tmp_path: Path) -> None:
    path = tmp_path / "rec.json"
    path.write_text(json.dumps({"claude-a": [{"text": "A1", "fault": {"delay": 0.01}}]}), encoding="utf-8")
    said, _, _ = _episodes(path, ["A2"], ["claude-a", "claude-a"])
    assert said == ["A1", "A2"]
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["claude-a"][0] == {"text": "A1", "fault": {"delay": 0.01}}  # the hand edit, kept as written
    assert data["claude-a"][1]["text"] == "A2"


def test_a_literal_block_at_the_end_of_a_queue_is_appended_after() -> None:
    text = '"m":\n  - text: |\n      one\n      two\n"n":\n  - N1\n'
    out = append_yaml(text, [("m", ["- M2"])], "note", "f.yaml")
    assert out == '"m":\n  - text: |\n      one\n      two\n  # note\n  - M2\n"n":\n  - N1\n'
    assert yaml.safe_load(out) == {"m": [{"text": "one\ntwo\n"}, "M2"], "n": ["N1"]}
    crlf = text.replace("\n", "\r\n")
    assert append_yaml(crlf, [("n", ["- N2"])], "note", "f.yaml") == crlf + "  # note\r\n  - N2\r\n"


def test_an_async_client_appends_too(tmp_path: Path) -> None:
    import asyncio

    path = tmp_path / "rec.yaml"
    path.write_text(HAND_EDITED, encoding="utf-8")
    live = ScriptTransport(["Async second"])
    rec = RecordingTransport(path, upstream=Episodes(ScriptTransport(load_script(path)), live))

    async def main() -> list[str]:
        client = anthropic_client(rec, is_async=True, max_retries=0)
        said = []
        for _ in range(2):
            message = await client.messages.create(
                model="claude-a", max_tokens=10, messages=[{"role": "user", "content": "Hi"}]
            )
            said.append(message.content[0].text)
        await client.close()
        return said

    assert asyncio.run(main()) == ["First, edited by hand", "Async second"]
    assert len(live.requests) == 1
    text = path.read_text(encoding="utf-8")
    assert text.startswith(HAND_EDITED)
    assert [t.text for t in load_script(path)] == ["First, edited by hand", "Async second"]  # type: ignore[union-attr]


def test_a_replayed_answer_is_not_forwarded_because_another_request_ran_past_the_end(tmp_path: Path) -> None:
    """Two requests at once: while the first is replayed, the second adds its problem to the stub's list."""

    class Concurrent:
        """The replaying stub, with another request's problem arriving while this one is answered."""

        def __init__(self, stub: ScriptTransport) -> None:
            self.stub = stub
            self.problems: list[str] = []

        def handle_request(self, request: Any) -> Any:
            response = self.stub.handle_request(request)
            self.problems = [*self.stub.problems, "requests[1] POST /v1/messages: past the end (another request)"]
            return response

    path = tmp_path / "rec.yaml"
    path.write_text(HAND_EDITED, encoding="utf-8")
    live = ScriptTransport(["Forwarded"])
    rec = RecordingTransport(path, upstream=Episodes(Concurrent(ScriptTransport(load_script(path))), live))
    client = anthropic_client(rec, max_retries=0)
    assert _ask(client) == "First, edited by hand"
    assert live.requests == []  # the replayed answer was kept, not sent to the provider
    client.close()
    assert path.read_text(encoding="utf-8") == HAND_EDITED


def test_a_json_file_that_is_not_a_script_is_refused_when_the_recorder_is_made(tmp_path: Path) -> None:
    path = tmp_path / "rec.json"
    path.write_text("[]", encoding="utf-8")
    stub = ScriptTransport(load_script(path))
    path.write_text('"just a string"', encoding="utf-8")
    with pytest.raises(UsageError, match="cannot append turns to it: it is not a list or object of turns"):
        RecordingTransport(path, upstream=Episodes(stub))


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("rec.json", "{nope", r"rec\.json: cannot append to it, it is not JSON \(Expecting property name"),
        ("rec.yaml", '"claude-a": [unclosed\n', r"rec\.yaml: cannot append to it, it is not YAML \(while parsing"),
        ("rec.yaml", '{"claude-a": [A1]}\n', r"the script \(line 1\) is a flow mapping \(\{\.\.\.\}\); new_episodes"),
        ("rec.yaml", "just a string\n", "cannot append turns to it: it is not a list or mapping of turns"),
    ],
    ids=["json-not-json", "yaml-not-yaml", "flow-mapping", "scalar"],
)
def test_a_file_that_cannot_be_appended_to_is_refused_when_the_recorder_is_made(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError, match=message):
        RecordingTransport(path, upstream=Episodes(ScriptTransport([])))
    assert path.read_text(encoding="utf-8") == text


def test_a_json_plain_list_stays_a_plain_list(tmp_path: Path) -> None:
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(["A1"]), encoding="utf-8")
    said, _, _ = _episodes(path, ["A2"], ["claude-a", "claude-b"])
    assert said == ["A1", "A2"]
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, list)
    assert [t if isinstance(t, str) else t["text"] for t in data] == ["A1", "A2"]


def test_an_empty_queue_written_as_a_flow_list_gets_block_items_in_its_place(tmp_path: Path) -> None:
    path = tmp_path / "rec.yaml"
    text = '"claude-a": []\n# my note on claude-b\n"claude-b":\n  - B1\n'
    path.write_text(text, encoding="utf-8")
    said, _, _ = _episodes(path, ["A1"], ["claude-b", "claude-a"])
    assert said == ["B1", "A1"]
    out = path.read_text(encoding="utf-8")
    assert out.startswith('"claude-a":\n  # Appended by wirescript ')
    assert out.endswith(text.removeprefix('"claude-a": []\n'))  # the rest, byte for byte
    assert all(line == line.rstrip() for line in out.splitlines())
    assert {k: [t if isinstance(t, str) else t["text"] for t in v] for k, v in yaml.safe_load(out).items()} == {
        "claude-a": ["A1"],
        "claude-b": ["B1"],
    }


def test_a_file_of_comments_only_gets_its_turns_as_a_plain_list(tmp_path: Path) -> None:
    path = tmp_path / "rec.yaml"
    path.write_text("# nothing recorded yet\n", encoding="utf-8")
    live = ScriptTransport(["First"])
    rec = RecordingTransport(path, upstream=Episodes(ScriptTransport([]), live))
    client = anthropic_client(rec, max_retries=0)
    assert _ask(client) == "First"
    client.close()
    out = path.read_text(encoding="utf-8")
    assert out.startswith("# nothing recorded yet\n# Appended by wirescript ")
    assert [t.text for t in load_script(path)] == ["First"]  # type: ignore[union-attr]
