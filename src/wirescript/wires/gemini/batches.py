"""Gemini's batch mode and the Files API it reads: inline and file input, each request a turn of the script.

As the API and google-genai describe them (ai.google.dev/gemini-api/docs/batch-mode,
ai.google.dev/api/batch-mode; google-genai's `batches.py`, `files.py`, `_transformers.py`):

- `POST …/models/{model}:batchGenerateContent {"batch": {"displayName", "inputConfig": {"requests":
  {"requests": [{"request", "metadata"}]}} | {"fileName": "files/…"}}}` answers an operation
  named `batches/…` whose `metadata.state` is `BATCH_STATE_PENDING`; its pace (`SideScript.jobs`)
  moves it to `BATCH_STATE_RUNNING` and `BATCH_STATE_SUCCEEDED` (google-genai maps each
  `BATCH_STATE_*` to the `JOB_STATE_*` of the same name, `t_job_state`);
- when it succeeds each request is recorded as a `generateContent` request of its own
  (`RecordedRequest.custom_id`: its `metadata.key`, or a file line's `key`; `.batch`) and takes the
  next turn of its model's queue; the answers are `metadata.output.inlinedResponses` (`response`
  or `error` per request, its `metadata` echoed) for inline input, a `responsesFile` of JSONL lines
  (`{"key", "response"}` or `{"key", "error"}`) for file input, read with `files.download`;
- `POST …/batches/{name}:cancel` ends it `BATCH_STATE_CANCELLED` at its next look, consuming no
  turn; `batches.list` and `batches.delete` serve the rest;
- `files.upload` is the resumable upload protocol (a `start` answered with `x-goog-upload-url`, then
  `upload, finalize` with the bytes, answered with the file and `x-goog-upload-status: final`).

The stub never expires a Gemini batch (`BATCH_STATE_EXPIRED`): the limit is not documented where
wirescript looked. A batch the app never collected (never seen succeeded, its responses file never
downloaded) is listed by `check()`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from ...recorded import RecordedRequest
from ...side import SideScript
from ...sse import json_dumps
from .._decode import json_body
from .._jobs import Job, Jobs, iso
from ..base import Answered, Draw, Item, Rendered, TurnlessWire
from .wire import GEMINI_ERROR_STATUSES

__all__ = ["BATCH_STATES", "GeminiBatchesWire"]

BATCH_STATES = ("BATCH_STATE_PENDING", "BATCH_STATE_RUNNING")
"""The states a batch shows before it ends, in order; it ends `BATCH_STATE_SUCCEEDED` or `BATCH_STATE_CANCELLED`."""

_ENDS = {"done": "BATCH_STATE_SUCCEEDED", "cancelled": "BATCH_STATE_CANCELLED", "failed": "BATCH_STATE_FAILED"}
_BATCH_TYPE = "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatch"
_OUTPUT_TYPE = "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatchOutput"
_JSON = {"content-type": "application/json; charset=UTF-8"}
_GOOGLE_HEADERS = ("x-goog-api-key", "x-goog-api-client", "x-goog-upload-command", "x-goog-user-project")


def _route(method: str, path: str) -> tuple[str, str | None] | None:
    """What a batch-mode or Files request asks, and the batch or file it names; None for any other request."""
    if method == "POST" and path.endswith(":batchGenerateContent"):
        return "create", None
    if path.endswith(("/upload/v1beta/files", "/upload/v1/files")):
        return ("upload", None) if method == "POST" else None
    for resource in ("/batches", "/files"):
        head, found, tail = path.rpartition(resource)
        if not found or not head or "/" in tail[1:]:
            continue
        if not tail:
            return (resource[1:] + ".list", None) if method == "GET" else None
        name, _, verb = tail[1:].partition(":")
        if not name:
            return None
        actions = {("GET", ""): "get", ("DELETE", ""): "delete"}
        actions[("POST", "cancel") if resource == "/batches" else ("GET", "download")] = (
            "cancel" if resource == "/batches" else "download"
        )
        action = actions.get((method, verb))
        return (f"{resource[1:]}.{action}", f"{resource[1:]}/{name}") if action is not None else None
    return None


class _Upload:
    __slots__ = ("content", "file")

    def __init__(self, file: dict[str, Any]) -> None:
        self.file = file
        self.content = b""


class _Batch:
    """What a batch's job keeps: its model, display name, requests (their keys and metadata), its input kind."""

    __slots__ = ("display", "file", "items", "metadata", "model", "output")

    def __init__(self, model: str, display: str | None, items: list[Item], metadata: list[Any], file: bool) -> None:
        self.model, self.display, self.items, self.metadata, self.file = model, display, items, metadata, file
        self.output: dict[str, Any] | None = None
        """Its output once it succeeded (inlined responses, or the name of its responses file)."""


class GeminiBatchesWire(TurnlessWire):
    """Batch mode and the Files API: each batch a job on the stub's clock, its requests turns when it succeeds."""

    name = "gemini_batches"
    endpoint = "POST …/models/{model}:batchGenerateContent"
    endpoints = (
        "POST /v1beta/models/{model}:batchGenerateContent",
        "GET /v1beta/batches",
        "GET /v1beta/batches/{batch}",
        "POST /v1beta/batches/{batch}:cancel",
        "DELETE /v1beta/batches/{batch}",
        "POST /upload/v1beta/files",
        "GET /v1beta/files",
        "GET /v1beta/files/{file}",
        "GET /v1beta/files/{file}:download",
        "DELETE /v1beta/files/{file}",
    )
    credential_headers = ("x-goog-api-key",)
    credential_query = ("key",)
    any_body = True  # an upload's bytes
    shared_paths = True  # OpenAI's `/v1/files` and `/v1/batches`, Anthropic's `/v1/files`
    unused_label = "Gemini batch(es)"
    unused_said = "were never collected to their end"

    def __init__(self) -> None:
        self._jobs: Jobs[Job] = Jobs()
        self._uploads: dict[str, _Upload] = {}
        self._files: dict[str, tuple[dict[str, Any], bytes]] = {}
        self._finalized: dict[str, str] = {}
        """Each finished upload's file name, by its upload id."""

    def matches(self, method: str, path: str, *, host: str = "") -> bool:
        """`:batchGenerateContent`, `batches/…`, `files/…` and the upload endpoint, any API version, any host."""
        return ("/batches" in path or "/files" in path or path.endswith(":batchGenerateContent")) and _route(
            method, path
        ) is not None

    def owns(self, headers: Mapping[str, str]) -> bool:
        """google-genai's requests: `x-goog-api-key` or `x-goog-api-client` (an upload's bytes: its command)."""
        return any(name in headers for name in _GOOGLE_HEADERS)

    def resolve(self, record: RecordedRequest) -> None:
        """The batch's or file's name as `path_params["name"]` (`batches/…`, `files/…`)."""
        route = _route(record.method, record.path)
        if route is not None and route[1] is not None:
            record.path_params = {"name": route[1]}

    # ------------------------------------------------------------------ the jobs

    def settle(self, record: RecordedRequest, draw: Draw) -> None:
        """Take an upload's bytes; create a batch; move batches on; run one that succeeds."""
        route = _route(record.method, record.path)
        if route is None:
            return
        action, name = route
        if action == "upload":
            self._upload(record, draw.now)
            return
        if action == "create":
            batch = self._read(record)
            if isinstance(batch, _Batch):
                job = Job(f"batches/batch-{record.index:04d}", record, draw.side.jobs, len(BATCH_STATES))
                job.data = batch
                self._jobs.add(job)
            return
        if not action.startswith("batches."):
            return
        for job in self._jobs.named(name):
            if action == "batches.cancel":
                job.cancel(draw.now)  # it ends at its next look
                continue
            if action == "batches.get":
                job.poll()
            if job.settle(draw.now) == "run":
                job.answers = draw.items(job.data.items, batch=job.id)

    def respond(self, record: RecordedRequest, side: SideScript) -> Rendered:
        """An operation (a batch), a page of them, an upload's step, a file, its bytes, or `{}`."""
        route = _route(record.method, record.path)
        assert route is not None  # matched when it arrived
        action, name = route
        if action == "upload":
            return self._uploaded(record)
        if action == "create":
            batch = self._read(record)
            if isinstance(batch, str):
                return _error(400, batch)
            job = self._jobs.get(f"batches/batch-{record.index:04d}")
            assert job is not None
            return _json(self._operation(job, record.received_at))
        if action == "batches.list":
            return _json({"operations": [self._operation(job, record.received_at) for job in self._jobs][::-1]})
        if action == "files.list":
            with self._jobs.lock:
                return _json({"files": [file for file, _ in self._files.values()]})
        if action.startswith("files."):
            with self._jobs.lock:
                found = self._files.get(name or "")
                if found is not None and action == "files.delete":
                    del self._files[name or ""]
            if found is None:
                return _error(403, f"You do not have permission to access the File {name} or it may not exist.")
            if action == "files.download":
                for job in self._jobs:
                    if job.data.output == {"responsesFile": name}:
                        job.seen = True
                return Rendered(200, {"content-type": "application/octet-stream"}, found[1])
            return _json({} if action == "files.delete" else found[0])
        job = self._jobs.get(name or "")
        if job is None:
            return _error(404, f"Batch {name} not found.")
        if action == "batches.delete":
            self._jobs.pop(job.id)
            return _json({})
        if action == "batches.cancel":
            return _json({})
        return _json(self._operation(job, record.received_at))

    def _operation(self, job: Job, now: float) -> dict[str, Any]:
        """The batch as a long-running operation: its `metadata.state`, `batchStats`, and `output` once it succeeded."""
        batch: _Batch = job.data
        total = len(batch.items)
        stats = {"requestCount": str(total)}
        if job.end is None:
            state = BATCH_STATES[job.stage(now)]
            stats["pendingRequestCount"] = str(total)
        else:
            state = _ENDS[job.end]
        metadata: dict[str, Any] = {
            "@type": _BATCH_TYPE,
            "model": batch.model,
            "displayName": batch.display,
            "createTime": iso(job.created),
            "updateTime": iso(job.ended_at if job.ended_at is not None else now),
            "batchStats": stats,
            "state": state,
            "name": job.id,
        }
        operation: dict[str, Any] = {"name": job.id, "metadata": metadata}
        if job.end is not None:
            metadata["endTime"] = iso(job.ended_at or now)
            operation["done"] = True
        if job.end == "done":
            answers = job.answered()
            good = sum(1 for a in answers if a.status < 400)
            stats.update(successfulRequestCount=str(good), failedRequestCount=str(total - good))
            output = self._output(job, answers)
            metadata["output"] = output
            operation["response"] = {"@type": _OUTPUT_TYPE, **output}
            if not batch.file:
                job.seen = True  # the responses came with it
        elif job.end is not None:
            job.seen = True
        return operation

    def _output(self, job: Job, answers: list[Answered]) -> dict[str, Any]:
        """Its output, made once: inlined responses, or a responses file of one JSONL line per request."""
        batch: _Batch = job.data
        if batch.output is not None:
            return batch.output
        if not batch.file:
            inlined = []
            for answered, metadata in zip(answers, batch.metadata, strict=True):
                entry = _answer(answered)
                if metadata is not None:
                    entry["metadata"] = metadata
                inlined.append(entry)
            batch.output = {"inlinedResponses": {"inlinedResponses": inlined}}
            return batch.output
        lines = []
        for item, answered in zip(batch.items, answers, strict=True):
            lines.append(json_dumps({"key": item.custom_id, **_answer(answered)}).encode())
        content = b"".join(line + b"\n" for line in lines)
        name = f"files/{job.id.removeprefix('batches/')}-responses"
        created = iso(job.ended_at or job.created)
        file = _file(name, name, "application/jsonl", content, created, source="GENERATED")
        with self._jobs.lock:
            self._files[name] = (file, content)
        batch.output = {"responsesFile": name}
        return batch.output

    def _read(self, record: RecordedRequest) -> _Batch | str:
        """A create's batch: its model, display name and requests (inline, or the lines of an uploaded file)."""
        body = record.body if isinstance(record.body, dict) else {}
        batch = body.get("batch")
        if not isinstance(batch, dict) or not isinstance(batch.get("inputConfig"), dict):
            return "batch.input_config: Field required."
        model_path = record.path.removesuffix(":batchGenerateContent")
        model = model_path[model_path.rfind("/models/") + 1 :] if "/models/" in model_path else model_path
        item_path = model_path + ":generateContent"
        source = batch["inputConfig"]
        display = batch.get("displayName") if isinstance(batch.get("displayName"), str) else None
        items: list[Item] = []
        metadata: list[Any] = []
        if isinstance(source.get("fileName"), str):
            with self._jobs.lock:
                found = self._files.get(source["fileName"])
            if found is None:
                return f"Input file {source['fileName']} not found."
            for number, raw in enumerate((line for line in found[1].splitlines() if line.strip()), 1):
                line = json_body(raw)
                request = line.get("request") if isinstance(line, dict) else None
                key = line.get("key") if isinstance(line, dict) else None
                items.append(
                    Item(_body(request), _path(request, item_path), str(key) if key is not None else str(number))
                )
                metadata.append(None)
            return _Batch(model, display, items, metadata, file=True)
        requests = source.get("requests")
        requests = requests.get("requests") if isinstance(requests, dict) else None
        if not isinstance(requests, list) or not requests:
            return "batch.input_config.requests: at least one request is required."
        for entry in requests:
            request = entry.get("request") if isinstance(entry, dict) else None
            meta = entry.get("metadata") if isinstance(entry, dict) else None
            key = meta.get("key") if isinstance(meta, dict) else None
            items.append(Item(_body(request), _path(request, item_path), str(key) if key is not None else None))
            metadata.append(meta)
        return _Batch(model, display, items, metadata, file=False)

    # ------------------------------------------------------------------ the Files API (resumable uploads)

    def _upload(self, record: RecordedRequest, now: float) -> None:
        command = record.headers.get("x-goog-upload-command", "")
        if "start" in command:
            body: dict[str, Any] = record.body if isinstance(record.body, dict) else {}
            given = body.get("file")
            asked: dict[str, Any] = given if isinstance(given, dict) else {}
            name = asked.get("name")
            display = asked.get("displayName")
            file = _file(
                name if isinstance(name, str) else f"files/upload-{record.index:04d}",
                display if isinstance(display, str) else None,
                str(record.headers.get("x-goog-upload-header-content-type") or asked.get("mimeType") or ""),
                b"",
                iso(now),
            )
            with self._jobs.lock:
                self._uploads[str(record.index)] = _Upload(file)
            return
        upload_id = record.query.get("upload_id", "")
        with self._jobs.lock:
            upload = self._uploads.get(upload_id)
            if upload is None:
                return
            upload.content += record.content
            if "finalize" in command:
                del self._uploads[upload_id]
                file = {**upload.file, "sizeBytes": str(len(upload.content))}
                file["sha256Hash"] = hashlib.sha256(upload.content).hexdigest()
                self._files[file["name"]] = (file, upload.content)
                self._finalized[upload_id] = file["name"]

    def _uploaded(self, record: RecordedRequest) -> Rendered:
        command = record.headers.get("x-goog-upload-command", "")
        if "start" in command:
            host = record.headers.get("host", "generativelanguage.googleapis.com")
            name = host[1:].partition("]")[0] if host.startswith("[") else host.partition(":")[0]
            scheme = "http" if name in ("127.0.0.1", "localhost", "::1") else "https"
            url = f"{scheme}://{host}{record.path}?upload_id={record.index}&upload_protocol=resumable"
            headers = {"x-goog-upload-url": url, "x-goog-upload-status": "active", **_JSON}
            return Rendered(200, headers, b"")
        upload_id = record.query.get("upload_id", "")
        if "finalize" not in command:
            with self._jobs.lock:
                known = upload_id in self._uploads
            if not known:
                return _error(400, f"Unknown upload_id {quote(upload_id)}.")
            return Rendered(200, {"x-goog-upload-status": "active", **_JSON}, b"")
        with self._jobs.lock:
            stored = self._files.get(self._finalized.get(upload_id, ""))
        if stored is None:
            return _error(400, f"Unknown upload_id {quote(upload_id)}.")
        found = stored[0]
        return Rendered(200, {"x-goog-upload-status": "final", **_JSON}, json_dumps({"file": found}).encode())

    def unused(self, side: SideScript) -> list[str]:
        """Each batch the app never collected: never seen succeeded (or cancelled), or its responses file never read."""

        def line(job: Job) -> str:
            state = _ENDS.get(job.end or "", BATCH_STATES[min(job.polls, len(BATCH_STATES) - 1)])
            what = "download its responses file (files.download)" if job.data.file else "get it until it succeeds"
            return (
                f"{job.id} ({len(job.data.items)} request(s), created by requests[{job.record.index}]): {state}; "
                f"the app never collected it: {what}, or cancel it."
            )

        return self._jobs.unseen(line)


def _body(request: Any) -> Any:
    """A request's `GenerateContentRequest` as `generateContent` takes it (its `model` is the path's)."""
    if not isinstance(request, dict):
        return request
    return {key: value for key, value in request.items() if key != "model"}


def _path(request: Any, default: str) -> str:
    """The `generateContent` path of a request: its own `model`, else the batch's."""
    model = request.get("model") if isinstance(request, dict) else None
    if isinstance(model, str) and model:
        version = default.split("/models/")[0] if "/models/" in default else ""
        return (
            f"{version}/{model if model.startswith(('models/', 'tunedModels/')) else 'models/' + model}:generateContent"
        )
    return default


def _answer(answered: Answered) -> dict[str, Any]:
    """A request's answer as batch output: `{"response": …}`, or `{"error": {"code", "message", "status"}}`."""
    data = json_body(answered.body)
    if answered.status < 400:
        return {"response": data}
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        error = {"code": answered.status, "message": answered.body.decode("utf-8", "replace")}
    return {"error": error}


def _file(
    name: str, display: str | None, mime: str, content: bytes, created: str, *, source: str = "UPLOADED"
) -> dict[str, Any]:
    file = {
        "name": name,
        "mimeType": mime,
        "sizeBytes": str(len(content)),
        "createTime": created,
        "updateTime": created,
        "sha256Hash": hashlib.sha256(content).hexdigest(),
        "uri": f"https://generativelanguage.googleapis.com/v1beta/{name}",
        "state": "ACTIVE",
        "source": source,
    }
    if display is not None:
        file["displayName"] = display
    if source == "GENERATED":
        file["downloadUri"] = f"https://generativelanguage.googleapis.com/download/v1beta/{name}:download?alt=media"
    return file


def _json(value: Any) -> Rendered:
    return Rendered(200, dict(_JSON), json_dumps(value).encode())


def _error(status: int, message: str) -> Rendered:
    body = {"error": {"code": status, "message": message, "status": GEMINI_ERROR_STATUSES.get(status, "UNKNOWN")}}
    return Rendered(status, dict(_JSON), json_dumps(body).encode())
