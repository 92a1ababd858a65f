"""Checked by `mypy --strict` in CI: the side script and routes type-check as documented."""

from wirescript import JobPace, RecordedRequest, ScriptTransport, SideScript, load_script


def get_file(record: RecordedRequest) -> dict[str, str] | tuple[int, dict[str, str]]:
    if record.path_params["file_id"] == "gone":
        return 404, {"error": "gone"}
    return {"id": record.path_params["file_id"]}


stub = ScriptTransport(
    ["Hi"],
    side={"count_tokens": [1, 2], "embeddings": {"cat": [1.0, 0.0]}, "models": ["m"]},
    routes={"GET /v1/files/{file_id}": get_file, "POST /v1/decisions": lambda r: {"ok": True}},
)
typed = ScriptTransport({"*": ["Hi"], "$side": SideScript(count_tokens=3)})
from_file = ScriptTransport(load_script("script.json"))
side: SideScript = SideScript(models=["a"])
count: int | list[int] | None = side.count_tokens
paced = ScriptTransport(["Hi"], side=SideScript(jobs=JobPace(polls=5, after=600.0)))
polls: int | None = SideScript(jobs=JobPace(polls=None)).jobs.polls
