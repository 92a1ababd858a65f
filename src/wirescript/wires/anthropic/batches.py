"""Anthropic's Message Batches: create, retrieve, list, cancel, delete and results, each item a turn of the script.

As the API documents them (platform.claude.com/docs/en/api/creating-message-batches and its
siblings; the anthropic SDK's `resources/messages/batches.py` and `types/messages/message_batch*.py`):

- `POST /v1/messages/batches {"requests": [{"custom_id", "params"}]}` creates a batch
  (`msgbatch_…`), `processing_status: "in_progress"`, every request counted as `processing`;
- it ends at its pace (`SideScript.jobs`: its second retrieve, or a minute on the stub's clock,
  by default): then each item takes the next turn of its model's queue, in order, and is recorded
  as a Messages request of its own (`RecordedRequest.custom_id`, `.batch`); a success is a
  `succeeded` result, an error turn (or a request the script cannot answer) an `errored` one;
- `POST …/cancel` makes it `canceling`; it ends at its next look with every item `canceled`,
  consuming no turn; a batch not ended 24 hours after its creation ends with every item `expired`;
- `results_url` is set only once it ended (the SDK's `results()` raises "No `results_url` for the
  given batch; Has it finished processing?" before), and `GET …/results` answers the JSONL of one
  `{"custom_id", "result"}` per item;
- a batch is deleted only once it ended ("Message Batches can only be deleted once they've finished
  processing", platform.claude.com/docs/en/api/deleting-message-batches).

A batch the app never collected (its results never fetched; a cancelled or expired one never seen
ended) is listed by `check()`.
"""

from __future__ import annotations

from typing import Any

from ...recorded import RecordedRequest
from ...side import SideScript
from ...sse import json_dumps
from .._jobs import Job, Jobs, iso, page
from ..base import Answered, Draw, Item, Rendered, TurnlessWire
from .wire import ANTHROPIC_ERROR_TYPES

__all__ = ["EXPIRES_AFTER", "AnthropicBatchesWire"]

EXPIRES_AFTER = 24 * 3600.0
"""A batch not ended this many seconds after its creation expires: "24 hours after creation" (`expires_at`,
the SDK's `types/messages/message_batch.py`)."""

_PATH = "/v1/messages/batches"
_JSON = {"content-type": "application/json"}


def _route(method: str, path: str) -> tuple[str, str | None] | None:
    """What a Message Batches request asks, and the batch id it names; None: not one of its endpoints."""
    if path.endswith(_PATH):
        return {"POST": ("create", None), "GET": ("list", None)}.get(method)
    _head, found, tail = path.rpartition(_PATH + "/")
    if not found:
        return None
    batch_id, _, rest = tail.partition("/")
    action = {("GET", ""): "retrieve", ("DELETE", ""): "delete", ("POST", "cancel"): "cancel"}.get((method, rest))
    if action is None and (method, rest) == ("GET", "results"):
        action = "results"
    return (action, batch_id) if action is not None and batch_id else None


class AnthropicBatchesWire(TurnlessWire):
    """Message Batches: each batch a job on the stub's clock, its items turns of the script when it ends."""

    name = "anthropic_batches"
    endpoint = "POST …/v1/messages/batches"
    endpoints = (
        "POST /v1/messages/batches",
        "GET /v1/messages/batches",
        "GET /v1/messages/batches/{message_batch_id}",
        "POST /v1/messages/batches/{message_batch_id}/cancel",
        "DELETE /v1/messages/batches/{message_batch_id}",
        "GET /v1/messages/batches/{message_batch_id}/results",
    )
    credential_headers = ("x-api-key",)
    unused_label = "message batch(es)"
    unused_said = "were never collected to their end"

    def __init__(self) -> None:
        self._jobs: Jobs[Job] = Jobs()

    def matches(self, method: str, path: str, *, host: str = "") -> bool:
        """The Message Batches endpoints (the beta ones' `?beta=true` too), on any host."""
        return "/messages/batches" in path and _route(method, path) is not None

    def bodiless(self, method: str, path: str) -> bool:
        """Every request but a create carries no body."""
        route = _route(method, path)
        return route is not None and route[0] != "create"

    def resolve(self, record: RecordedRequest) -> None:
        """A batch's id as `path_params["message_batch_id"]`."""
        route = _route(record.method, record.path)
        if route is not None and route[1] is not None:
            record.path_params = {"message_batch_id": route[1]}

    # ------------------------------------------------------------------ the jobs

    def settle(self, record: RecordedRequest, draw: Draw) -> None:
        """Create a batch, or bring the batches up to now: a retrieve is a poll; an ended batch's items take turns."""
        route = _route(record.method, record.path)
        if route is None:
            return
        action, batch_id = route
        if action == "create":
            requests = _requests(record.body)
            if isinstance(requests, list):
                job = Job(f"msgbatch_{record.index:04d}", record, draw.side.jobs, 1, limit=EXPIRES_AFTER)
                job.data = requests
                self._jobs.add(job)
            return
        for job in self._jobs.named(batch_id):
            if action == "cancel":
                job.cancel(draw.now)  # it ends at its next look
                continue
            if action == "retrieve":
                job.poll()
            if job.settle(draw.now) == "run":
                items = [Item(params, "/v1/messages", custom_id) for custom_id, params in job.data]
                job.answers = draw.items(items, batch=job.id)

    def respond(self, record: RecordedRequest, side: SideScript) -> Rendered:
        """The batch as the API shows it now, a page of batches, its results (JSONL), or its deletion."""
        route = _route(record.method, record.path)
        assert route is not None  # matched when it arrived
        action, batch_id = route
        if action == "create":
            requests = _requests(record.body)
            if not isinstance(requests, list):
                return _error(record, 400, requests)
            job = self._jobs.get(f"msgbatch_{record.index:04d}")
            assert job is not None
            return _json(record, self._batch(job, record))
        if action == "list":
            return _json(record, self._listing(record))
        job = self._jobs.get(batch_id or "")
        if job is None:
            return _error(record, 404, f"No message batch with id '{batch_id}' was found.")
        if action == "delete":
            if job.end is None:
                return _error(
                    record,
                    400,
                    "Message Batches can only be deleted once they've finished processing. If you'd like to delete "
                    "an in-progress batch, you must first cancel it.",
                )
            self._jobs.pop(job.id)
            return _json(record, {"id": job.id, "type": "message_batch_deleted"})
        if action == "results":
            if job.end is None:
                return _error(record, 404, f"Message batch {job.id} has not ended yet: it has no results.")
            job.seen = True
            lines = [_result(job, k, answered) for k, answered in enumerate(self._outcomes(job))]
            headers = {"content-type": "application/binary", "request-id": f"req_{record.index:04d}"}
            return Rendered(200, headers, b"".join(line + b"\n" for line in lines))
        return _json(record, self._batch(job, record))

    def _outcomes(self, job: Job) -> list[Answered | str]:
        """Per item: its answer (it ran), or `canceled` / `expired` (it never did)."""
        if job.end == "done":
            return list(job.answered())
        return [job.end if job.end == "expired" else "canceled"] * len(job.data)

    def _batch(self, job: Job, record: RecordedRequest) -> dict[str, Any]:
        """A `MessageBatch` as the API shows it now (`results_url` only once it ended)."""
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if job.end is None:
            counts["processing"] = len(job.data)
            status = "in_progress" if job.cancel_at is None else "canceling"
        else:
            status = "ended"
            for outcome in self._outcomes(job):
                if isinstance(outcome, str):
                    counts[outcome] += 1
                else:
                    counts["succeeded" if outcome.status < 400 else "errored"] += 1
            if job.end != "done":
                job.seen = True  # a cancelled or expired batch has nothing more to collect
        expires = job.expires_at
        return {
            "id": job.id,
            "type": "message_batch",
            "processing_status": status,
            "request_counts": counts,
            "ended_at": iso(job.ended_at) if job.ended_at is not None else None,
            "created_at": iso(job.created),
            "expires_at": iso(expires) if expires is not None else None,
            "archived_at": None,
            "cancel_initiated_at": iso(job.cancel_at) if job.cancel_at is not None else None,
            "results_url": _results_url(record, job.id) if job.end is not None else None,
        }

    def _listing(self, record: RecordedRequest) -> dict[str, Any]:
        """A page of batches, the most recently created first (`after_id`, `before_id`, `limit`: 20 by default)."""
        jobs = list(self._jobs)[::-1]
        query = record.query
        limit = _int(query.get("limit")) or 20
        ids = [job.id for job in jobs]
        chosen, more = page(jobs, ids, after=query.get("after_id"), before=query.get("before_id"), limit=limit)
        data = [self._batch(job, record) for job in chosen]
        return {
            "data": data,
            "has_more": more,
            "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None,
        }

    def unused(self, side: SideScript) -> list[str]:
        """Each batch the app never collected: its results never fetched, or never seen ended."""

        def line(job: Job) -> str:
            state = "in_progress" if job.end is None else f"ended ({job.end})"
            what = "fetch its results (messages.batches.results)" if job.end in (None, "done") else "retrieve it"
            return (
                f"{job.id} ({len(job.data)} request(s), created by requests[{job.record.index}]): {state}; "
                f"the app never collected it: poll it until it ends and {what}, or cancel it."
            )

        return self._jobs.unseen(line)


def _requests(body: Any) -> list[tuple[str, Any]] | str:
    """A create's `requests` as `(custom_id, params)` pairs, or the API's words for what is wrong with them."""
    if not isinstance(body, dict) or "requests" not in body:
        return "requests: Field required"
    requests = body["requests"]
    if not isinstance(requests, list) or not requests:
        return "requests: expected a non-empty list of {custom_id, params}"
    pairs = []
    for k, request in enumerate(requests):
        if not isinstance(request, dict):
            return f"requests.{k}: Input should be an object"
        for name in ("custom_id", "params"):
            if name not in request:
                return f"requests.{k}.{name}: Field required"
        if not isinstance(request["custom_id"], str):
            return f"requests.{k}.custom_id: Input should be a valid string"
        if not isinstance(request["params"], dict):
            return f"requests.{k}.params: Input should be an object"
        pairs.append((request["custom_id"], request["params"]))
    return pairs


def _result(job: Job, k: int, outcome: Answered | str) -> bytes:
    """One line of a batch's results: `{"custom_id", "result": {"type": …}}`, the item's own answer inside."""
    head = b'{"custom_id":' + json_dumps(job.data[k][0]).encode()
    if isinstance(outcome, str):
        return head + b',"result":{"type":' + json_dumps(outcome).encode() + b"}}"
    if outcome.status < 400:
        return head + b',"result":{"type":"succeeded","message":' + outcome.body + b"}}"
    return head + b',"result":{"type":"errored","error":' + outcome.body + b"}}"


def _results_url(record: RecordedRequest, batch_id: str) -> str:
    """Where its results are: the host the app asked (a loopback server's, plain http), under its path's prefix."""
    host = record.headers.get("host", "api.anthropic.com")
    name = host[1:].partition("]")[0] if host.startswith("[") else host.partition(":")[0]
    scheme = "http" if name in ("127.0.0.1", "localhost", "::1") else "https"
    prefix = record.path.partition(_PATH)[0]
    return f"{scheme}://{host}{prefix}{_PATH}/{batch_id}/results"


def _json(record: RecordedRequest, value: Any) -> Rendered:
    return Rendered(200, {**_JSON, "request-id": f"req_{record.index:04d}"}, json_dumps(value).encode())


def _error(record: RecordedRequest, status: int, message: str) -> Rendered:
    """Anthropic's error envelope, not retried."""
    request_id = f"req_{record.index:04d}"
    body = {
        "type": "error",
        "error": {"type": ANTHROPIC_ERROR_TYPES.get(status, "invalid_request_error"), "message": message},
        "request_id": request_id,
    }
    headers = {**_JSON, "request-id": request_id, "x-should-retry": "false"}
    return Rendered(status, headers, json_dumps(body).encode())


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
