"""The sweep runner: run ``fn(config)`` for many configs on a backend, cache each record, resume.

:func:`run_sweep` stores one JSON file per finished task under ``cache_dir`` (``<key>.json``,
written atomically; keys from :mod:`ttlab.sweep.keys`), so a second call — after a crash, a Ctrl-C
or to extend a grid — runs only the tasks that have no successful record yet. A task that raises is
recorded as failed and the other tasks go on; failed tasks are retried on the next call unless
``retry_failed=False``. Caching, ordering, de-duplication and progress live here; a backend
(:class:`Backend`: :class:`~ttlab.sweep.local.LocalBackend`, :class:`~ttlab.sweep.ray.RayBackend`)
only runs the pending tasks and hands each record back.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from ttlab.errors import TTLabInputError
from ttlab.provenance import atomic_write_json, versions
from ttlab.sweep.keys import canonical_json, key_name, task_key
from ttlab.sweep.local import LocalBackend
from ttlab.sweep.ray import RayBackend
from ttlab.sweep.records import OnDone, SweepProgress, Task, TaskRecord, load_record
from ttlab.validation import check_int

__all__ = ["BACKENDS", "MAX_WORKERS", "Backend", "available_backends", "cached_keys", "check_backend", "resolve_backend",
           "run_sweep", "summarize"]


@runtime_checkable
class Backend(Protocol):
    """Where the pending tasks of a sweep run: ``run`` calls ``on_done(record)`` here for every task.

    ``run(pending_tasks, workers, threads_per_task, on_done)`` may deliver the records in any order
    (e.g. the record from :func:`~ttlab.sweep.records.execute_task`); ``check()`` raises a
    :class:`TTLabInputError` when the backend cannot run on this machine.
    """

    name: ClassVar[str]

    def check(self) -> None:
        """Raise :class:`TTLabInputError` when this backend cannot run here."""

    def run(self, tasks: list[Task], workers: int, threads: int | None, on_done: OnDone) -> None:
        """Run every task; call ``on_done(record)`` in the caller's process as each one finishes."""


MAX_WORKERS = 4096
"""Worker processes, Ray tasks at once or torch threads per task a sweep may ask for (no machine has more; torch's
thread count is a C int); more is refused before any work."""

BACKENDS: dict[str, type[Backend]] = {"local": LocalBackend, "ray": RayBackend}
"""The built-in backends by name; ``backend="ray"`` means ``RayBackend()`` (its default options)."""


def resolve_backend(backend: str | Backend, *, ray_address: str | None = None) -> Backend:
    """The backend object for ``backend`` (a name in :data:`BACKENDS` or a :class:`Backend`).

    ``ray_address`` serves callers that take a backend name and a Ray address as two settings (like
    the CLI's ``--backend`` and ``--ray-address``): ``("ray", ray_address=A)`` gives
    ``RayBackend(address=A)``; with any other backend an address is an error.
    """
    if isinstance(backend, str):
        if backend not in BACKENDS:
            raise TTLabInputError(f"unknown sweep backend {backend!r}; choose one of {', '.join(available_backends())}")
        if backend == "ray":
            return RayBackend(address=ray_address)
        if ray_address is not None:
            raise TTLabInputError(f"ray_address is only used by backend='ray', not {backend!r}")
        return BACKENDS[backend]()
    if not isinstance(backend, Backend):
        raise TTLabInputError(f"a sweep backend is 'local', 'ray' or an object such as RayBackend(address=...), "
                              f"got {backend!r}")
    if ray_address is not None:
        raise TTLabInputError(f"ray_address goes with backend='ray'; the backend object {backend!r} carries its "
                              "own options")
    return backend


def check_backend(backend: str | Backend) -> None:
    """Raise :class:`TTLabInputError` unless ``backend`` is a known backend that can run here."""
    resolve_backend(backend).check()


def available_backends() -> list[str]:
    """Names of the built-in backends that can run here ("ray" only when Ray is installed)."""
    out = []
    for name, cls in sorted(BACKENDS.items()):
        try:
            cls().check()
        except TTLabInputError:
            continue
        out.append(name)
    return out


def run_sweep(
    fn: Callable[[dict[str, Any]], Any],
    configs: Sequence[dict[str, Any]],
    cache_dir: str | os.PathLike[str],
    *,
    backend: str | Backend = "local",
    workers: int = 1,
    threads_per_task: int | None = None,
    progress: Callable[[SweepProgress], None] | None = None,
    retry_failed: bool = True,
) -> list[TaskRecord]:
    """Run ``fn(config)`` for every config, reusing cached results; one record per config, in order.

    ``threads_per_task`` defaults to ``max(1, cpu_count // workers)`` for a process pool and leaves
    the current setting alone for ``workers=1``. Identical configs run once. Failed tasks are
    recorded (and stored) without stopping the others; inspect ``record.ok`` / :func:`summarize`.

    ``backend``: ``"local"`` (this process, or a process pool when ``workers > 1``), ``"ray"``
    (``RayBackend()``: the Ray already initialised in this process, else ``$RAY_ADDRESS``, else a
    new local Ray with ``workers × (threads_per_task or 1)`` CPUs), or a backend object with its own
    options, e.g. ``RayBackend(address="auto", gpus_per_task=1, max_retries=2)``.
    """
    runner = resolve_backend(backend)
    runner.check()
    workers = check_int(workers, "workers", 1)
    if threads_per_task is not None:
        threads_per_task = check_int(threads_per_task, "threads_per_task", 1)
    elif workers > 1:
        threads_per_task = max(1, (os.cpu_count() or 1) // workers)
    if isinstance(configs, dict) or not isinstance(configs, Sequence):
        raise TTLabInputError("configs must be a list of dicts")
    name = key_name(fn)
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
        runner.run(pending, workers, threads_per_task, on_done)
    missing = [k for k in unique if k not in records]
    if missing:  # a backend must report every task; guard against a faulty runner
        raise RuntimeError(f"sweep backend {runner.name!r} returned no record for {len(missing)} task(s)")
    return [records[k] for k in keys]


def cached_keys(fn: Callable[[dict[str, Any]], Any], configs: Sequence[dict[str, Any]],
                cache_dir: str | os.PathLike[str]) -> set[str]:
    """Keys of the tasks among ``configs`` that already have a successful record in ``cache_dir``."""
    name = key_name(fn)
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
