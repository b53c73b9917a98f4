"""One task and its record: running a task (:func:`execute_task`), the record cached per task, reading it back.

A :class:`Task` is ``fn(config)`` with its key; running it yields a :class:`TaskRecord` — status
``"ok"`` with the JSON-able result, or ``"failed"`` with the traceback — which the runner stores as
``<cache_dir>/<key>.json``. :func:`limit_threads` caps the OpenMP/BLAS/torch threads of a worker
process before a task runs there (both backends use it). torch is imported only when a thread
limit applies to it.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, Iterator

from ttlab.sweep.keys import key_name

__all__ = ["OnDone", "SweepProgress", "Task", "TaskRecord", "execute_task", "failed_record", "limit_threads",
           "load_record"]


@dataclass(frozen=True)
class Task:
    """One unit of work: ``fn(config)``, identified by ``key``."""

    fn: Callable[[dict[str, Any]], Any]
    config: dict[str, Any]
    key: str


@dataclass
class TaskRecord:
    """Outcome of one task, as stored in ``<cache_dir>/<key>.json``.

    ``status`` is ``"ok"`` (``result`` holds the return value) or ``"failed"`` (``error`` holds the
    exception and traceback). ``cached`` is true when the record was read from disk in this call.
    """

    key: str
    fn: str
    config: dict[str, Any]
    status: str
    result: Any = None
    error: str | None = None
    seconds: float = 0.0
    finished_at: float = 0.0
    worker_pid: int = 0
    threads: int | None = None
    cached: bool = False
    versions: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when the task finished without raising."""
        return self.status == "ok"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (without the in-memory ``cached`` flag)."""
        out = asdict(self)
        out.pop("cached")
        return out


OnDone = Callable[[TaskRecord], None]
"""What a backend calls, in the caller's process, with each finished task's record."""


@dataclass(frozen=True)
class SweepProgress:
    """Passed to the ``progress`` callback after each task is finished or found in the cache."""

    done: int
    total: int
    n_cached: int
    n_failed: int
    record: TaskRecord
    elapsed: float


@contextmanager
def _torch_threads(threads: int | None) -> Iterator[None]:
    """Temporarily limit torch's intra-op threads (no-op when ``threads`` is None)."""
    if threads is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def execute_task(task: Task, threads: int | None = None) -> TaskRecord:
    """Run one task and capture its result or its error; never raises for a task's own failure.

    A result that is not JSON-able counts as a failure (it could not be cached).
    ``KeyboardInterrupt``/``SystemExit`` propagate so that Ctrl-C stops the sweep.
    """
    name = key_name(task.fn)
    t0 = time.perf_counter()
    status, result, error = "ok", None, None
    try:
        with _torch_threads(threads):
            result = task.fn(dict(task.config))
        from ttlab.provenance import to_json

        result = json.loads(to_json(result, indent=None))  # JSON round trip: what the cache will hold
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - a task's failure must not stop the sweep
        status, result = "failed", None
        error = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return TaskRecord(
        key=task.key, fn=name, config=task.config, status=status, result=result, error=error,
        seconds=time.perf_counter() - t0, finished_at=time.time(), worker_pid=os.getpid(), threads=threads,
    )


def failed_record(task: Task, error: str) -> TaskRecord:
    """The record of a task that did not run to the end for a reason outside it (``error`` says why)."""
    return TaskRecord(key=task.key, fn=key_name(task.fn), config=task.config, status="failed",
                      error=error, finished_at=time.time())


def load_record(path: str | os.PathLike[str]) -> TaskRecord | None:
    """Read a cached record; ``None`` when the file is missing or unreadable (then the task reruns)."""
    try:
        from ttlab.provenance import read_json

        data = read_json(path)
        data.pop("cached", None)
        return TaskRecord(**data, cached=True)
    except (OSError, ValueError, TypeError):
        return None


def limit_threads(threads: int | None) -> None:
    """In a worker process: cap OpenMP/BLAS threads (read by torch and numpy when they are imported).

    torch itself is limited only if it is already imported (e.g. while unpickling a task), so workers
    that never need torch never pay for importing it.
    """
    if threads is not None:
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ[var] = str(threads)
        if "torch" in sys.modules:  # already imported while unpickling: set it directly
            sys.modules["torch"].set_num_threads(threads)
