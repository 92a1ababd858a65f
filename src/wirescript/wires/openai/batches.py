"""OpenAI's Files and Batch APIs (Azure OpenAI's too): a JSONL file of requests, run as a job, its lines turns.

As the API and the openai SDK describe them (developers.openai.com/docs/guides/batch; the SDK's
`resources/files.py`, `resources/batches.py`, `types/batch.py`, `types/file_object.py`):

- `files.create(purpose="batch")` uploads a `.jsonl` file (multipart/form-data) of lines
  `{"custom_id", "method": "POST", "url", "body"}`; `files.retrieve/content/delete/list` serve it;
  a batch input file must be named `.jsonl` ("Invalid file format for Batch API. Must be .jsonl",
  observed: BerriAI/litellm#37527), and an unknown id is "No such File object: …"
  (danny-avila/LibreChat#2632);
- `batches.create(input_file_id, endpoint, completion_window="24h")` is `validating`; its pace
  (`SideScript.jobs`) moves it to `in_progress`, `finalizing` and `completed`; a file whose lines
  do not read (not JSON, a `url` that is not the batch's endpoint, a `custom_id` twice, an empty
  file) makes it `failed` with `errors.data` (`invalid_json_line`, `url_mismatch`,
  `duplicate_custom_id`, `empty_file`; stdapi-ai/stdapi.ai#240);
- when it completes each line is recorded as a request of its own (`RecordedRequest.custom_id`,
  `.batch`), served by the stub's wire for its `url`: a Chat Completions or Responses line takes
  the next turn of its model's queue, an embeddings line is answered as the embeddings side
  endpoint answers it; successes go to the `output_file_id` file, failures (an error turn, a line
  the script cannot answer) to the `error_file_id` file, each `None` when it would be empty
  (ProjectTech4DevAI/kaapi-backend#723), `request_counts` counting both;
- `batches.cancel` makes it `cancelling`, then `cancelled` at its next look, consuming no turn;
  a batch not completed within its 24 h window `expired`, its lines in the error file with
  `batch_expired`.

A batch the app never collected (its output or error file never read, or a failed, cancelled or
expired one never seen so) is listed by `check()`.
"""

from __future__ import annotations

from collections.abc import Mapping
from email import policy
from email.parser import BytesParser
from typing import Any

from ...recorded import RecordedRequest
from ...script import ErrorSpec
from ...side import SideScript
from ...sse import json_dumps
from .._decode import json_body
from .._jobs import Job, Jobs, page
from ..base import Draw, Item, Rendered, TurnlessWire
from .common import JSON_HEADERS, openai_error, request_id

__all__ = ["BATCH_ENDPOINTS", "COMPLETION_WINDOW", "BatchFile", "OpenAIBatchesWire"]

COMPLETION_WINDOW = 24 * 3600.0
"""A batch not completed this many seconds after its creation expires: its `completion_window`, "Currently only
`24h` is supported" (the SDK's `batches.create`)."""

BATCH_ENDPOINTS = (
    "/v1/responses",
    "/v1/chat/completions",
    "/v1/embeddings",
    "/v1/completions",
    "/v1/moderations",
    "/v1/images/generations",
    "/v1/images/edits",
    "/v1/videos",
)
"""The endpoints a batch may run (the SDK's `batches.create(endpoint=...)`); the stub serves the lines of those its
wires serve, and records the others as `unknown_endpoint` problems."""

_STAGES = ("validating", "in_progress", "finalizing")
_EXPIRED = json_dumps(
    {"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}
).encode()
"""An expired batch's unfinished request, in its error file (developers.openai.com/docs/guides/batch)."""
_OTHER_SDKS = ("x-goog-api-key", "x-goog-api-client", "x-goog-upload-command", "anthropic-version")
"""Headers another SDK sends to the same paths: google-genai's Files and batch mode, Anthropic's Files API."""
_PREFIXES = ("/v1/", "/openai/")


def _route(method: str, path: str) -> tuple[str, str, str | None] | None:
    """(`files` or `batches`, what is asked, the id) for one of its endpoints; None for any other request."""
    for prefix in _PREFIXES:
        head, found, tail = path.rpartition(prefix)
        if not found or head.endswith("/messages"):
            continue
        resource, _, rest = tail.partition("/")
        if resource not in ("files", "batches"):
            continue
        if not rest:
            action = {"POST": "create", "GET": "list"}.get(method)
            return (resource, action, None) if action is not None else None
        item_id, _, sub = rest.partition("/")
        known = {("GET", ""): "retrieve", ("DELETE", ""): "delete"}
        known.update({("GET", "content"): "content"} if resource == "files" else {("POST", "cancel"): "cancel"})
        action = known.get((method, sub))
        if action is None or (resource, action) == ("batches", "delete"):
            return None
        return (resource, action, item_id) if item_id else None
    return None


class BatchFile:
    """A file the stub holds: uploaded (`purpose`, its bytes), or a batch's output or error file."""

    __slots__ = ("content", "created", "filename", "id", "purpose", "read")

    def __init__(self, id: str, filename: str, purpose: str, content: bytes, created: float) -> None:
        self.id, self.filename, self.purpose, self.content, self.created = id, filename, purpose, content, created
        self.read = False
        """Whether its content was downloaded."""

    def object(self) -> dict[str, Any]:
        """The `FileObject`."""
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.content),
            "created_at": int(self.created),
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "expires_at": None,
            "status_details": None,
        }


class _Batch:
    """What a batch's job keeps: its request, its lines (read once, when it was created), its files."""

    __slots__ = ("body", "errors", "files", "lines")

    def __init__(self, body: dict[str, Any], lines: list[Item], errors: list[dict[str, Any]]) -> None:
        self.body = body
        self.lines = lines
        self.errors = errors
        """Why its input file does not read (`errors.data`); empty: it runs."""
        self.files: tuple[BatchFile | None, BatchFile | None] = (None, None)
        """Its output and error files, once it ended."""


class OpenAIBatchesWire(TurnlessWire):
    """Files and batches: each batch a job on the stub's clock, its lines turns of the script when it completes."""

    name = "openai_batches"
    endpoint = "POST …/v1/batches"
    endpoints = (
        "POST /v1/files",
        "GET /v1/files",
        "GET /v1/files/{file_id}",
        "GET /v1/files/{file_id}/content",
        "DELETE /v1/files/{file_id}",
        "POST /v1/batches",
        "GET /v1/batches",
        "GET /v1/batches/{batch_id}",
        "POST /v1/batches/{batch_id}/cancel",
    )
    credential_headers = ("api-key",)  # Azure OpenAI
    any_body = True  # an upload is multipart/form-data
    shared_paths = True  # google-genai's `/v1/files` and `/v1/batches`, Anthropic's `/v1/files`
    unused_label = "batch(es)"
    unused_said = "were never collected to their end"

    def __init__(self) -> None:
        self._jobs: Jobs[Job] = Jobs()
        self._files: dict[str, BatchFile] = {}

    def matches(self, method: str, path: str, *, host: str = "") -> bool:
        """The Files and Batch endpoints under `/v1` (or Azure's `/openai`), on any host."""
        return ("/files" in path or "/batches" in path) and _route(method, path) is not None

    def owns(self, headers: Mapping[str, str]) -> bool:
        """Not google-genai's requests (`x-goog-*` headers) nor the anthropic SDK's (`anthropic-version`)."""
        return not any(name in headers for name in _OTHER_SDKS)

    def resolve(self, record: RecordedRequest) -> None:
        """The file's or batch's id as `path_params["file_id"]` or `["batch_id"]`."""
        route = _route(record.method, record.path)
        if route is not None and route[2] is not None:
            record.path_params = {"file_id" if route[0] == "files" else "batch_id": route[2]}

    # ------------------------------------------------------------------ the jobs

    def settle(self, record: RecordedRequest, draw: Draw) -> None:
        """Hold an uploaded file; create a batch (reading its file); move batches on; run one that completes."""
        route = _route(record.method, record.path)
        if route is None:
            return
        resource, action, item_id = route
        if resource == "files":
            if action == "create":
                upload = _upload(record)
                if isinstance(upload, tuple):
                    filename, purpose, content = upload
                    file_id = f"file-{record.index:04d}"
                    with self._jobs.lock:
                        self._files[file_id] = BatchFile(file_id, filename, purpose, content, record.received_at)
            return
        if action == "create":
            body = record.body if isinstance(record.body, dict) else {}
            if _invalid(body, self._files) is None:
                with self._jobs.lock:
                    source = self._files[body["input_file_id"]]
                lines, errors = _lines(source.content, body["endpoint"])
                job = Job(f"batch_{record.index:04d}", record, draw.side.jobs, len(_STAGES), limit=COMPLETION_WINDOW)
                job.data = _Batch(body, lines, errors)
                self._jobs.add(job)
            return
        for job in self._jobs.named(item_id):
            batch: _Batch = job.data
            if action == "cancel":
                job.cancel(draw.now)  # it ends at its next look
                continue
            if action == "retrieve":
                job.poll()
            if job.end is None and batch.errors:  # its file was validated: it fails at its first look
                job.finish("failed", draw.now)
                continue
            if job.settle(draw.now) == "run":
                job.answers = draw.items(batch.lines, batch=job.id)

    def respond(self, record: RecordedRequest, side: SideScript) -> Rendered:
        """A file (its object, content, listing or deletion), or a batch as the API shows it now."""
        route = _route(record.method, record.path)
        assert route is not None  # matched when it arrived
        resource, action, item_id = route
        if resource == "files":
            return self._file(record, action, item_id)
        if action == "create":
            body = record.body if isinstance(record.body, dict) else {}
            problem = _invalid(body, self._files)
            if problem is not None:
                status, message, param = problem
                return _error(record, status, message, param)
            job = self._jobs.get(f"batch_{record.index:04d}")
            assert job is not None
            return _json(record, self._batch(job, record.received_at))
        if action == "list":
            jobs = list(self._jobs)[::-1]
            limit = _int(record.query.get("limit")) or 20
            chosen, more = page(jobs, [j.id for j in jobs], after=record.query.get("after"), before=None, limit=limit)
            return _json(record, _listing([self._batch(job, record.received_at) for job in chosen], more))
        job = self._jobs.get(item_id or "")
        if job is None:
            return _error(record, 404, f"No batch found with id '{item_id}'.", None)
        return _json(record, self._batch(job, record.received_at))

    def _file(self, record: RecordedRequest, action: str, file_id: str | None) -> Rendered:
        if action == "create":
            upload = _upload(record)
            if isinstance(upload, str):
                return _error(record, 400, upload, None)
            with self._jobs.lock:
                return _json(record, self._files[f"file-{record.index:04d}"].object())
        if action == "list":
            purpose = record.query.get("purpose")
            with self._jobs.lock:
                files = [f for f in self._files.values() if purpose is None or f.purpose == purpose][::-1]
            limit = _int(record.query.get("limit")) or 10000
            chosen, more = page(files, [f.id for f in files], after=record.query.get("after"), before=None, limit=limit)
            return _json(record, _listing([f.object() for f in chosen], more))
        with self._jobs.lock:
            found = self._files.get(file_id or "")
            if found is not None and action == "delete":
                del self._files[found.id]
        if found is None:
            return _error(record, 404, f"No such File object: {file_id}", "id")
        if action == "delete":
            return _json(record, {"id": found.id, "object": "file", "deleted": True})
        if action == "content":
            found.read = True
            for job in self._jobs:
                if found in job.data.files:
                    job.seen = True  # its output (or errors) collected
            headers = {"content-type": "application/octet-stream", **request_id(record)}
            return Rendered(200, headers, found.content)
        return _json(record, found.object())

    def _batch(self, job: Job, now: float) -> dict[str, Any]:
        """A `Batch` as the API shows it at `now`; its output and error files written once it ended."""
        batch: _Batch = job.data
        body = batch.body
        total = len(batch.lines)
        completed = failed = 0
        if job.end is None:
            status = "cancelling" if job.cancel_at is not None else _STAGES[job.stage(now)]
        elif job.end == "done":
            status = "completed"
            answers = job.answered()
            completed = sum(1 for a in answers if a.status < 400)
            failed = total - completed
            self._write(job, answers)
        else:
            status = job.end
            if job.end == "expired":
                failed = total
                self._write(job, None)
        if job.end in ("failed", "cancelled") or (job.end is not None and batch.files == (None, None)):
            job.seen = True  # nothing more to collect than its end
        output, errors = batch.files
        ended = job.ended_at if job.end is not None else None
        return {
            "id": job.id,
            "object": "batch",
            "endpoint": body.get("endpoint"),
            "errors": {"object": "list", "data": batch.errors} if batch.errors and job.end == "failed" else None,
            "input_file_id": body.get("input_file_id"),
            "completion_window": body.get("completion_window"),
            "status": status,
            "output_file_id": output.id if output is not None else None,
            "error_file_id": errors.id if errors is not None else None,
            "created_at": int(job.created),
            "in_progress_at": _at(job, 1, ("done",)),
            "expires_at": int(job.created + COMPLETION_WINDOW),
            "finalizing_at": _at(job, 2, ("done",)),
            "completed_at": int(ended) if ended is not None and job.end == "done" else None,
            "failed_at": int(ended) if ended is not None and job.end == "failed" else None,
            "expired_at": int(ended) if ended is not None and job.end == "expired" else None,
            "cancelling_at": int(job.cancel_at) if job.cancel_at is not None else None,
            "cancelled_at": int(ended) if ended is not None and job.end == "cancelled" else None,
            "request_counts": {"total": total, "completed": completed, "failed": failed},
            "metadata": body.get("metadata"),
        }

    def _write(self, job: Job, answers: list[Any] | None) -> None:
        """An ended batch's output and error files, written once: one line per request, by where it went."""
        batch: _Batch = job.data
        if batch.files != (None, None) or not batch.lines:
            return
        good: list[bytes] = []
        bad: list[bytes] = []
        for k, line in enumerate(batch.lines):
            custom_id = json_dumps(line.custom_id).encode()
            head = b'{"id":"batch_req_' + f"{job.record.index:04d}_{k}".encode() + b'","custom_id":' + custom_id
            if answers is None:
                error = _EXPIRED
                bad.append(head + b',"response":null,"error":' + error + b"}")
                continue
            answered = answers[k]
            rid = json_dumps(answered.headers.get("x-request-id", f"req_{answered.record.index:04d}")).encode()
            response = b'{"status_code":' + str(answered.status).encode() + b',"request_id":' + rid
            line_bytes = (
                head + b',"response":' + response + b',"body":' + (answered.body or b"null") + b'},"error":null}'
            )
            (good if answered.status < 400 else bad).append(line_bytes)
        created = job.ended_at or job.created
        files: list[BatchFile | None] = []
        for kind, lines in (("output", good), ("error", bad)):
            if not lines:
                files.append(None)
                continue
            file_id = f"file-{job.id.removeprefix('batch_')}-{kind}"
            name = f"{job.id}_{kind}.jsonl"
            made = BatchFile(file_id, name, "batch_output", b"".join(line + b"\n" for line in lines), created)
            with self._jobs.lock:
                self._files[file_id] = made
            files.append(made)
        batch.files = (files[0], files[1])

    def unused(self, side: SideScript) -> list[str]:
        """Each batch the app never collected: its output or error file never read, or its end never seen."""

        def line(job: Job) -> str:
            state = job.end or "not completed"
            return (
                f"{job.id} ({len(job.data.lines)} request(s), created by requests[{job.record.index}]): {state}; "
                "the app never collected it: poll it until it ends and read its output_file_id (and error_file_id) "
                "with files.content, or cancel it."
            )

        return self._jobs.unseen(line)


def _listing(data: list[dict[str, Any]], more: bool) -> dict[str, Any]:
    """A cursor page of the API's objects (batches, files)."""
    return {
        "object": "list",
        "data": data,
        "first_id": data[0]["id"] if data else None,
        "last_id": data[-1]["id"] if data else None,
        "has_more": more,
    }


def _at(job: Job, stage: int, ends: tuple[str, ...]) -> int | None:
    """When it reached `stage`, in whole seconds (ending one of `ends` ways passes every stage on its way)."""
    if stage < len(job.reached):
        return int(job.reached[stage])
    return int(job.ended_at) if job.ended_at is not None and job.end in ends else None


def _upload(record: RecordedRequest) -> tuple[str, str, bytes] | str:
    """A `files.create` upload's file name, purpose and bytes, or what is wrong with it."""
    kind = record.headers.get("content-type", "")
    if "multipart/form-data" not in kind:
        return "The request is not multipart/form-data (files.create sends the file as a form)."
    message = BytesParser(policy=policy.HTTP).parsebytes(
        b"Content-Type: " + kind.encode("latin-1") + b"\r\n\r\n" + record.content
    )
    fields: dict[str, tuple[str | None, bytes]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        fields[str(name)] = (part.get_filename(), payload if isinstance(payload, bytes) else b"")
    if "file" not in fields:
        return "Missing required parameter: 'file'."
    if "purpose" not in fields:
        return "Missing required parameter: 'purpose'."
    filename, content = fields["file"]
    purpose = fields["purpose"][1].decode("utf-8", "replace")
    filename = filename or "upload"
    if purpose == "batch" and not filename.endswith(".jsonl"):
        return "Invalid file format for Batch API. Must be .jsonl"
    return filename, purpose, content


def _invalid(body: dict[str, Any], files: dict[str, BatchFile]) -> tuple[int, str, str | None] | None:
    """Why a `batches.create` is refused at once (status, message, param), or None."""
    for name in ("input_file_id", "endpoint", "completion_window"):
        if name not in body:
            return 400, f"Missing required parameter: '{name}'.", name
    if body["completion_window"] != "24h":
        return 400, "Invalid value for 'completion_window': only '24h' is supported.", "completion_window"
    if body["endpoint"] not in BATCH_ENDPOINTS:
        supported = ", ".join(BATCH_ENDPOINTS)
        return 400, f"Invalid value for 'endpoint': expected one of {supported}.", "endpoint"
    if not isinstance(body["input_file_id"], str) or body["input_file_id"] not in files:
        return 404, f"No such File object: {body['input_file_id']}", "input_file_id"
    return None


def _lines(content: bytes, endpoint: str) -> tuple[list[Item], list[dict[str, Any]]]:
    """A batch input file's lines as items, and the errors that fail the batch (each with its line number)."""
    items: list[Item] = []
    errors: list[dict[str, Any]] = []
    seen: set[str] = set()
    lines = [line for line in content.splitlines() if line.strip()]
    if not lines:
        return [], [{"code": "empty_file", "line": None, "message": "The batch input file is empty.", "param": None}]
    for number, raw in enumerate(lines, 1):
        line = json_body(raw)
        if (
            not isinstance(line, dict)
            or not isinstance(line.get("body"), dict)
            or not isinstance(line.get("custom_id"), str)
        ):
            errors.append(
                {
                    "code": "invalid_json_line",
                    "line": number,
                    "message": "This line is not parseable as valid JSON.",
                    "param": None,
                }
            )
            continue
        url = line.get("url")
        if url != endpoint:
            errors.append(
                {
                    "code": "url_mismatch",
                    "line": number,
                    "param": "url",
                    "message": f"The url for this line ({url!r}) does not match the batch's endpoint ({endpoint!r}).",
                }
            )
            continue
        if line["custom_id"] in seen:
            errors.append(
                {
                    "code": "duplicate_custom_id",
                    "line": number,
                    "param": "custom_id",
                    "message": f"The custom_id {line['custom_id']!r} is used by an earlier line.",
                }
            )
            continue
        seen.add(line["custom_id"])
        items.append(Item(line["body"], str(url), line["custom_id"], str(line.get("method") or "POST")))
    return items, errors


def _json(record: RecordedRequest, value: Any) -> Rendered:
    return Rendered(200, {**JSON_HEADERS, **request_id(record)}, json_dumps(value).encode())


def _error(record: RecordedRequest, status: int, message: str, param: str | None) -> Rendered:
    rendered = openai_error(ErrorSpec(status=status, message=message), record, param=param)
    rendered.headers["x-should-retry"] = "false"
    return rendered


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
