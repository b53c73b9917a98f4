"""Run many independent tasks, cache each result on disk, and resume after an interruption.

A *task* is a picklable, module-level function ``fn(config) -> JSON-able result`` plus a JSON-able
``config`` dict. Its key is a stable hash of (the function's qualified name, the canonical JSON of
the config): the same task has the same key in every process, on every machine, in every session.

:func:`run_sweep` stores one JSON file per finished task under ``cache_dir`` (``<key>.json``,
written atomically), so a second call — after a crash, a Ctrl-C or to extend a grid — runs only
the tasks that have no successful record yet. A task that raises is recorded as failed (status
``"failed"`` with the traceback text) and the other tasks go on; failed tasks are retried on the
next call unless ``retry_failed=False``.

Backends (the extension point is :func:`register_backend`):

* ``"local"``: ``workers=1`` runs tasks in this process, one after another; ``workers > 1`` uses a
  :class:`concurrent.futures.ProcessPoolExecutor` with the ``spawn`` start method (safe with
  torch and threads), each worker limited to ``threads_per_task`` torch/OpenMP/BLAS threads
  (``OMP_NUM_THREADS`` etc. are set before the task imports torch, so workers that never need
  torch never pay for importing it).
* ``"ray"``: reserved — not available yet (raises :class:`TTLabInputError`). A Ray runner only has
  to implement the :data:`BackendRunner` signature: submit ``execute_task(task, threads)`` for each
  pending task (e.g. ``ray.remote(num_cpus=threads)(execute_task)``) and call ``on_done(record)``
  as each finishes; caching, ordering and failure bookkeeping stay here.
"""

from __future__ import annotations

import hashlib
import json
import math
import multiprocessing
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ttlab.errors import TTLabInputError
from ttlab.provenance import atomic_write_json, versions

__all__ = [
    "BACKENDS",
    "BackendRunner",
    "SweepProgress",
    "Task",
    "TaskRecord",
    "available_backends",
    "cached_keys",
    "canonical_json",
    "check_backend",
    "execute_task",
    "function_name",
    "load_record",
    "register_backend",
    "run_sweep",
    "summarize",
    "task_key",
]

KEY_LENGTH = 20  # hex characters of the sha256 kept in a key (80 bits)


# ---------------------------------------------------------------------------------------------
# keys


def function_name(fn: Callable[..., Any]) -> str:
    """``module:qualname`` of a task function; raises if it cannot be pickled by reference."""
    if not callable(fn):
        raise TTLabInputError(f"a sweep task must be a function, got {type(fn).__name__}")
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    if not module or not qualname:
        raise TTLabInputError(f"sweep task {fn!r} has no module-level name; define it with `def` at module level")
    if "<locals>" in qualname or "<lambda>" in qualname:
        raise TTLabInputError(
            f"sweep task {module}.{qualname} is a lambda or a nested function; worker processes can only "
            "import module-level functions — move it to the top level of a module"
        )
    return f"{module}:{qualname}"


def canonical_json(obj: Any) -> str:
    """Canonical JSON text of a config (sorted keys, no spaces); raises for non-JSON values."""
    try:
        return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=True)
    except (TypeError, ValueError) as exc:
        raise TTLabInputError(
            f"a sweep config must be JSON-able (dicts, lists, str, int, finite float, bool, None): {exc}"
        ) from None


def task_key(fn: Callable[..., Any] | str, config: dict[str, Any]) -> str:
    """Stable key of a task: sha256 of (function name, canonical config JSON), first 20 hex digits."""
    if not isinstance(config, dict):
        raise TTLabInputError(f"a sweep config must be a dict, got {type(config).__name__}")
    name = fn if isinstance(fn, str) else function_name(fn)
    text = canonical_json({"fn": name, "config": config})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:KEY_LENGTH]


# ---------------------------------------------------------------------------------------------
# records


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
    name = function_name(task.fn)
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


def load_record(path: str | os.PathLike[str]) -> TaskRecord | None:
    """Read a cached record; ``None`` when the file is missing or unreadable (then the task reruns)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        data.pop("cached", None)
        return TaskRecord(**data, cached=True)
    except (OSError, ValueError, TypeError):
        return None


# ---------------------------------------------------------------------------------------------
# backends

OnDone = Callable[[TaskRecord], None]
BackendRunner = Callable[[list[Task], int, "int | None", OnDone], None]
"""``runner(pending_tasks, workers, threads_per_task, on_done)``: run every task, calling
``on_done(record)`` in the caller's process as each one finishes (any order)."""


def _worker_init(threads: int | None) -> None:
    """Process-pool initializer: cap OpenMP/BLAS threads (read by torch and numpy when imported)."""
    if threads is not None:
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ[var] = str(threads)
        if "torch" in sys.modules:  # already imported while unpickling: set it directly
            sys.modules["torch"].set_num_threads(threads)


def _execute_in_worker(task: Task, threads: int | None) -> TaskRecord:
    """Run a task in a pool worker whose thread limit the initializer set (torch is not imported here)."""
    if threads is not None and "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    record = execute_task(task, None)
    record.threads = threads
    return record


def _run_local(tasks: list[Task], workers: int, threads: int | None, on_done: OnDone) -> None:
    """The ``local`` backend: in-process for ``workers == 1``, else a spawn process pool.

    Ctrl-C (KeyboardInterrupt in this process, or in a worker, which sends it back as the task's
    exception) cancels the queued tasks, keeps every record that finished before the pool shut
    down, and re-raises.
    """
    if workers == 1 or len(tasks) <= 1:
        for task in tasks:
            on_done(execute_task(task, threads))
        return
    ctx = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=min(workers, len(tasks)), mp_context=ctx,
                               initializer=_worker_init, initargs=(threads,))
    futures: dict[Future[TaskRecord], Task] = {}
    reported: set[Future[TaskRecord]] = set()

    def record_of(fut: Future[TaskRecord]) -> TaskRecord:
        task = futures[fut]
        try:
            return fut.result()
        except BrokenProcessPool as exc:
            return _failed_record(task, f"worker process died ({exc}); the task was not finished")
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - e.g. the task could not be pickled
            return _failed_record(task, "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))

    try:
        futures = {pool.submit(_execute_in_worker, task, threads): task for task in tasks}
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                reported.add(fut)
                on_done(record_of(fut))
    except BaseException:
        # Interrupted: drop queued tasks, let running ones end, and keep whatever finished meanwhile.
        pool.shutdown(wait=True, cancel_futures=True)
        for fut in futures:
            if fut not in reported and fut.done() and not fut.cancelled():
                try:
                    record = fut.result()
                except BaseException:  # noqa: BLE001 - unfinished or interrupted: nothing to keep
                    continue
                reported.add(fut)
                on_done(record)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


BACKENDS: dict[str, BackendRunner] = {"local": _run_local}
PLANNED_BACKENDS: dict[str, str] = {
    "ray": "the 'ray' sweep backend is not available yet; use backend='local' (a Ray runner can be added with "
    "ttlab.sweep.register_backend('ray', runner))",
}


def check_backend(name: str) -> None:
    """Raise :class:`TTLabInputError` unless ``name`` is a registered backend."""
    if name in BACKENDS:
        return
    if name in PLANNED_BACKENDS:
        raise TTLabInputError(PLANNED_BACKENDS[name])
    raise TTLabInputError(f"unknown sweep backend {name!r}; choose one of {', '.join(available_backends())}")


def register_backend(name: str, runner: BackendRunner) -> None:
    """Add or replace a backend: ``runner(pending_tasks, workers, threads_per_task, on_done)``."""
    if not isinstance(name, str) or not name:
        raise TTLabInputError("a backend name must be a non-empty string")
    if not callable(runner):
        raise TTLabInputError(f"backend runner for {name!r} must be callable")
    BACKENDS[name] = runner


def available_backends() -> list[str]:
    """Names of the registered backends."""
    return sorted(BACKENDS)


def _failed_record(task: Task, error: str) -> TaskRecord:
    return TaskRecord(key=task.key, fn=function_name(task.fn), config=task.config, status="failed",
                      error=error, finished_at=time.time())


# ---------------------------------------------------------------------------------------------
# the sweep


def _check_int(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise TTLabInputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


def run_sweep(
    fn: Callable[[dict[str, Any]], Any],
    configs: Sequence[dict[str, Any]],
    cache_dir: str | os.PathLike[str],
    *,
    backend: str = "local",
    workers: int = 1,
    threads_per_task: int | None = None,
    progress: Callable[[SweepProgress], None] | None = None,
    retry_failed: bool = True,
) -> list[TaskRecord]:
    """Run ``fn(config)`` for every config, reusing cached results; one record per config, in order.

    ``threads_per_task`` defaults to ``max(1, cpu_count // workers)`` for a process pool and leaves
    the current setting alone for ``workers=1``. Identical configs run once. Failed tasks are
    recorded (and stored) without stopping the others; inspect ``record.ok`` / :func:`summarize`.
    """
    check_backend(backend)
    workers = _check_int(workers, "workers", 1)
    if threads_per_task is not None:
        threads_per_task = _check_int(threads_per_task, "threads_per_task", 1)
    elif workers > 1:
        threads_per_task = max(1, (os.cpu_count() or 1) // workers)
    if isinstance(configs, dict) or not isinstance(configs, Sequence):
        raise TTLabInputError("configs must be a list of dicts")
    name = function_name(fn)
    keys = [task_key(name, c) for c in configs]
    cache = Path(cache_dir)
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TTLabInputError(f"cannot create the sweep cache directory {cache}: {exc}") from None

    t0 = time.perf_counter()
    records: dict[str, TaskRecord] = {}
    pending: list[Task] = []
    state = {"done": 0, "cached": 0, "failed": 0}
    unique = list(dict.fromkeys(keys))
    config_of = dict(zip(keys, configs))

    def report(record: TaskRecord) -> None:
        state["done"] += 1
        state["cached"] += record.cached
        state["failed"] += not record.ok
        if progress is not None:
            progress(SweepProgress(state["done"], len(unique), state["cached"], state["failed"], record,
                                   time.perf_counter() - t0))

    for key in unique:
        rec = load_record(cache / f"{key}.json")
        if rec is not None and rec.key == key and (rec.ok or not retry_failed):
            records[key] = rec
            report(rec)
        else:
            pending.append(Task(fn=fn, config=json.loads(canonical_json(config_of[key])), key=key))

    stamp = versions()

    def on_done(record: TaskRecord) -> None:
        record.versions = stamp
        atomic_write_json(cache / f"{record.key}.json", record.to_dict())
        records[record.key] = record
        report(record)

    if pending:
        BACKENDS[backend](pending, workers, threads_per_task, on_done)
    missing = [k for k in unique if k not in records]
    if missing:  # a backend must report every task; guard against a faulty runner
        raise RuntimeError(f"sweep backend {backend!r} returned no record for {len(missing)} task(s)")
    return [records[k] for k in keys]


def cached_keys(fn: Callable[[dict[str, Any]], Any], configs: Sequence[dict[str, Any]],
                cache_dir: str | os.PathLike[str]) -> set[str]:
    """Keys of the tasks among ``configs`` that already have a successful record in ``cache_dir``."""
    name = function_name(fn)
    out = set()
    for config in configs:
        key = task_key(name, config)
        rec = load_record(Path(cache_dir) / f"{key}.json")
        if rec is not None and rec.ok and rec.key == key:
            out.add(key)
    return out


def summarize(records: Sequence[TaskRecord]) -> dict[str, Any]:
    """Counts of finished, cached and failed tasks, total task time, and the failures' first lines."""
    failed = [r for r in records if not r.ok]
    return {
        "n_tasks": len(records),
        "n_ok": len(records) - len(failed),
        "n_failed": len(failed),
        "n_cached": sum(r.cached for r in records),
        "task_seconds": float(math.fsum(r.seconds for r in records)),
        "failures": [
            {"key": r.key, "config": r.config, "error": _last_line(r.error)}
            for r in failed
        ],
    }


def _last_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[-1] if lines else ""
