"""What the wires' asynchronous surfaces share: a job's pace on the stub's clock, its timestamps, its listing.

A job (a background response, a batch) is created by a request, moved on by the requests that
look at it (`Wire.settle`, under the stub's lock, in arrival order) and ends at its pace
(`SideScript.jobs`: at its `polls`-th retrieve, or once `after` seconds have passed on the stub's
clock), when it is cancelled, or when its API's own limit makes it expire. Its turns are taken only
when it runs (`Draw`), so a job cancelled before it ran consumes none. Provider-neutral: each
provider's package names the states its API shows.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

from ..recorded import RecordedRequest
from ..side import JobPace
from .base import Answered

__all__ = ["Job", "Jobs", "iso", "page"]

ENDED = ("done", "cancelled", "expired", "failed")
"""How a job can end: it ran (`done`), it was cancelled or it expired before it ran, or it never could (`failed`)."""


def iso(seconds: float) -> str:
    """A time on the stub's clock as RFC 3339 in UTC (`2026-12-01T10:00:00.000000Z`), as the APIs write times."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Job:
    """One job: when it was created, how often it was polled, which stage it showed, and how it ended."""

    __slots__ = (
        "answers",
        "cancel_at",
        "created",
        "data",
        "end",
        "ended_at",
        "id",
        "limit",
        "pace",
        "polls",
        "reached",
        "record",
        "seen",
        "stages",
    )

    def __init__(
        self,
        id: str,
        record: RecordedRequest,
        pace: JobPace,
        stages: int,
        *,
        limit: float | None = None,
        data: Any = None,
    ) -> None:
        self.id = id
        self.record = record
        """The request that created it."""
        self.created = record.received_at
        self.pace = pace
        self.stages = stages
        """How many states its API shows before it ends (`queued`, `in_progress`: 2)."""
        self.limit = limit
        """Seconds after its creation when it expires if it has not ended (Anthropic's 24 h); None: never."""
        self.polls = 0
        self.reached: list[float] = [self.created]
        """When each stage was first shown (the first at creation)."""
        self.cancel_at: float | None = None
        """When the app asked to cancel it, if it did."""
        self.end: str | None = None
        """How it ended (`ENDED`), once it has."""
        self.ended_at: float | None = None
        self.answers: list[Answered] = []
        """The answers of the turns it drew when it ran."""
        self.seen = False
        """Whether the app saw it to its end (its results, or its end state when it has none): not listed at check()."""
        self.data = data
        """What its wire keeps with it (its items, its request's body)."""

    @property
    def expires_at(self) -> float | None:
        """When it expires unless it ends first, on the stub's clock."""
        return None if self.limit is None else self.created + self.limit

    def poll(self) -> None:
        """A retrieve of it arrived: one poll nearer its end."""
        self.polls += 1

    def due(self, now: float) -> float | None:
        """When its pace ended it, at or before `now` (None: not yet): its last poll, or its creation plus `after`."""
        after = self.pace.after
        if after is not None and now >= self.created + after:
            return self.created + after
        polls = self.pace.polls
        if polls is not None and self.polls >= polls:
            return now
        return None

    def stage(self, now: float) -> int:
        """The intermediate stage it shows at `now` (0: its first), by its polls or by the clock, the further one."""
        stage = self.polls if self.pace.polls is not None else 0
        after = self.pace.after
        if after:
            stage = max(stage, int((now - self.created) / after * self.stages))
        stage = min(stage, self.stages - 1)
        while len(self.reached) <= stage:
            self.reached.append(now)
        return stage

    def at(self, stage: int) -> float | None:
        """When it first showed `stage` (a later stage reached skips the ones between: they get its time)."""
        if stage < len(self.reached):
            return self.reached[stage]
        return self.ended_at if self.end is not None else None

    def cancel(self, now: float) -> None:
        """The app asked to cancel it: it ends `cancelled` at its next look (asked again, or after its end: moot)."""
        if self.end is None and self.cancel_at is None:
            self.cancel_at = now

    def finish(self, end: str, at: float) -> None:
        """It ended, `end` (`ENDED`), at `at`."""
        self.end = end
        self.ended_at = at

    def settle(self, now: float) -> str | None:
        """Bring it up to `now`: the way it ends now (`cancelled`, `expired`, or `run`: its turns are due), or None.

        A cancel asked for ends it at once; its API's limit passing before its pace ends it expires it.
        """
        if self.end is not None:
            return None
        if self.cancel_at is not None:
            self.finish("cancelled", now)
            return "cancelled"
        due = self.due(now)
        expires = self.expires_at
        if expires is not None and now >= expires and (due is None or due > expires):
            self.finish("expired", expires)
            return "expired"
        if due is not None:
            self.finish("done", due)
            return "run"
        self.stage(now)
        return None

    def answered(self) -> list[Answered]:
        """Its answers, each once filled (they are rendered just after the request that ran it is admitted)."""
        for answer in self.answers:
            answer.ready()
        return self.answers


_Job = TypeVar("_Job", bound=Job)


class Jobs(Generic[_Job]):
    """A wire's jobs by id, in creation order, behind their own lock (the wire's state, not the stub's)."""

    __slots__ = ("_by_id", "lock")

    def __init__(self) -> None:
        self._by_id: dict[str, _Job] = {}
        self.lock = threading.RLock()

    def add(self, job: _Job) -> _Job:
        with self.lock:
            self._by_id[job.id] = job
        return job

    def get(self, id: str) -> _Job | None:
        with self.lock:
            return self._by_id.get(id)

    def pop(self, id: str) -> _Job | None:
        with self.lock:
            return self._by_id.pop(id, None)

    def named(self, id: str | None) -> list[_Job]:
        """The job a request names (none if unknown), or every job when it names none (a listing)."""
        with self.lock:
            if id is None:
                return list(self._by_id.values())
            found = self._by_id.get(id)
        return [found] if found is not None else []

    def __iter__(self) -> Iterator[_Job]:
        with self.lock:
            return iter(list(self._by_id.values()))

    def __len__(self) -> int:
        return len(self._by_id)

    def unseen(self, describe: Any) -> list[str]:
        """One line per job the app never saw to its end (`check()`), by `describe(job)`."""
        return [describe(job) for job in self if not job.seen]


def page(
    items: Sequence[Any], ids: Sequence[str], *, after: str | None, before: str | None, limit: int
) -> tuple[list[Any], bool]:
    """The items of one page of a listing (`after`/`before` a cursor id, at most `limit`), and whether more follow."""
    start, stop = 0, len(items)
    if after is not None and after in ids:
        start = ids.index(after) + 1
    if before is not None and before in ids:
        stop = ids.index(before)
        start = max(start, stop - limit)
    chosen = list(items[start:stop])
    return chosen[:limit], len(chosen) > limit
