"""The sans-IO core without HTTP: the script cursor, problems, the wake-up signal."""

from __future__ import annotations

import asyncio
import pickle
import threading
import time

import pytest

from wirescript import Problem, RecordedRequest, ScriptError, Turn
from wirescript._core.cursor import Ask, Cursor, Refusal
from wirescript._core.signal import Signal
from wirescript.wires import default_wires


def record(index: int = 0, model: str | None = "m") -> RecordedRequest:
    return RecordedRequest(index=index, method="POST", path="/v1/messages", model=model)


def test_the_cursor_serves_queues_in_order_then_refuses() -> None:
    cursor = Cursor({"a": ["one", "two"], "*": ["other"]}, None, default_wires())
    first, second, third = record(0, "a"), record(1, "a"), record(2, "a")
    assert cursor.take(first) == Turn(text="one")
    assert (first.queue, first.turn_index) == ("a", 0)
    assert cursor.take(second) == Turn(text="two")
    assert cursor.pending_count() == 1
    refusal = cursor.take(third)
    assert refusal == Refusal(
        "unscripted",
        "is past the end of the queue for model 'a': it has 2 turn(s), all served. The app made a model call the "
        "script does not expect; add a turn for it or find the extra call. It is the 3rd request (requests[2]).",
        lead=" (model 'a') ",
    )
    assert cursor.take(record(3, "b")) == Turn(text="other")
    assert cursor.pending() == []


def test_the_cursor_asks_a_function_outside_the_lock_and_never_raises() -> None:
    def answer(request: RecordedRequest) -> str | None:
        if request.index == 1:
            raise LookupError("no idea")
        return None if request.index == 2 else f"echo {request.model}"

    cursor = Cursor(answer, None, default_wires())
    ask = cursor.take(record(0))
    assert isinstance(ask, Ask)
    assert ask.what == "script function"
    assert cursor.ask(ask, record(0)) == Turn(text="echo m")
    assert cursor.ask(ask, record(1)) == Refusal("script_error", "the script function raised LookupError: no idea")
    assert cursor.ask(ask, record(2)) == Refusal(
        "unscripted", "the script function returned None (unscripted request)."
    )


def test_the_fallback_answers_what_the_queues_cannot() -> None:
    cursor = Cursor({"a": ["one"]}, lambda r: None if r.model == "z" else "fell back", default_wires())
    cursor.take(record(0, "a"))
    ask = cursor.take(record(1, "b"))
    assert isinstance(ask, Ask)
    assert ask.what == "fallback"
    assert cursor.ask(ask, record(1, "b")) == Turn(text="fell back")
    refusal = cursor.ask(ask, record(2, "z"))
    assert isinstance(refusal, Refusal)
    assert refusal.reason.endswith("The fallback returned None for it too.")
    assert refusal.reason.startswith("no queue for model 'b'")


def test_a_function_answer_is_checked_against_the_wires() -> None:
    cursor = Cursor(lambda r: {"stop_reason": "max_token"}, None, default_wires())
    ask = cursor.take(record(0))
    assert isinstance(ask, Ask)
    refusal = cursor.ask(ask, record(0))
    assert isinstance(refusal, Refusal)
    assert refusal.kind == "script_error"
    assert "unknown stop reason 'max_token'; did you mean 'max_tokens'?" in refusal.reason


def test_a_problem_is_its_message_with_its_parts() -> None:
    problem = Problem(3, "POST", "/v1/messages", "unscripted", "is past the end of the script.", lead=" (model 'm') ")
    assert problem == "requests[3] POST /v1/messages (model 'm') is past the end of the script."
    assert str(problem) == problem
    assert (problem.index, problem.method, problem.path, problem.kind) == (3, "POST", "/v1/messages", "unscripted")
    assert problem.reason == "is past the end of the script."
    assert problem.head == "requests[3] POST /v1/messages"
    copy = pickle.loads(pickle.dumps(problem))
    assert (copy, copy.kind, copy.reason, copy.index) == (problem, "unscripted", problem.reason, 3)
    assert Problem(0, "GET", "/x", "unknown_endpoint", "no wire.") == "requests[0] GET /x: no wire."


def test_a_misspelt_fault_event_is_refused_with_a_suggestion() -> None:
    with pytest.raises(ScriptError, match="did you mean 'message_stop'"):
        Cursor([{"text": "x", "fault": {"drop": ["message_stpo"]}}], None, default_wires())


def test_one_signal_wakes_threads_and_tasks() -> None:
    lock = threading.Lock()
    signal = Signal(lock)
    state = {"open": False}
    woke: list[str] = []

    def thread() -> None:
        if signal.wait(lambda: state["open"], 5):
            woke.append("thread")

    async def task() -> None:
        if await signal.wait_async(lambda: state["open"], 5):
            woke.append("task")

    worker = threading.Thread(target=thread)
    worker.start()
    loop_thread = threading.Thread(target=lambda: asyncio.run(task()))
    loop_thread.start()
    deadline = time.monotonic() + 5
    while len(signal._waiters) < 2 and time.monotonic() < deadline:
        time.sleep(0.001)
    with lock:
        state["open"] = True
        signal.notify_all()
    worker.join(5)
    loop_thread.join(5)
    assert sorted(woke) == ["task", "thread"]
    assert not signal.waiting


def test_the_signal_times_out_and_forgets_its_waiters() -> None:
    signal = Signal(threading.Lock())
    assert signal.wait(lambda: False, 0.01) is False
    assert asyncio.run(signal.wait_async(lambda: False, 0.01)) is False
    assert not signal.waiting


def test_the_signal_works_under_trio() -> None:
    trio = pytest.importorskip("trio")
    lock = threading.Lock()
    signal = Signal(lock)
    state = {"open": False}

    def opener() -> None:
        time.sleep(0.05)
        with lock:
            state["open"] = True
            signal.notify_all()

    async def main() -> bool:
        threading.Thread(target=opener).start()
        return await signal.wait_async(lambda: state["open"], 5)

    assert trio.run(main) is True

    async def cancelled() -> None:
        with trio.move_on_after(0.01):
            await signal.wait_async(lambda: False, 5)

    started = time.monotonic()
    trio.run(cancelled)
    assert time.monotonic() - started < 2  # the cancel scope is honoured
    assert not signal.waiting
