"""Run many independent tasks, cache each result on disk, and resume after an interruption.

A *task* is a picklable, module-level function ``fn(config) -> JSON-able result`` plus a JSON-able
``config`` dict. Its key is a stable hash of (the function's task name, the canonical JSON of the
config): the same task has the same key in every process, on every machine, in every session. The
task name is ``module:qualname``, or the name given with :func:`task_name` (``@task_name("...")``),
which keeps the keys — and so the finished work cached under them — when the function moves.

:func:`run_sweep` stores one JSON file per finished task under ``cache_dir`` and, called again, runs
only the tasks without a successful record; a task that raises becomes a failed record and the
others go on. Where the tasks run is the ``backend``:

* ``"local"`` (:class:`LocalBackend`): in this process for ``workers=1``, else a ``spawn`` process
  pool, each worker limited to ``threads_per_task`` torch/OpenMP/BLAS threads;
* ``"ray"`` or ``RayBackend(address=..., gpus_per_task=..., max_retries=...)``: one Ray task per
  task, on a local Ray or a cluster (``pip install 'ttlab[ray]'``; :func:`available_backends` lists
  ``"ray"`` only when Ray is installed).

Modules: :mod:`~ttlab.sweep.keys` (task names and keys), :mod:`~ttlab.sweep.records` (running one
task, its record, the cache file), :mod:`~ttlab.sweep.runner` (:func:`run_sweep`, caching and
resume), :mod:`~ttlab.sweep.local` and :mod:`~ttlab.sweep.ray` (the backends).
"""

from ttlab.sweep.keys import canonical_json, function_name, task_key, task_name
from ttlab.sweep.local import LocalBackend
from ttlab.sweep.ray import RayBackend
from ttlab.sweep.records import SweepProgress, Task, TaskRecord, execute_task, load_record
from ttlab.sweep.runner import (
                                BACKENDS,
                                MAX_WORKERS,
                                Backend,
                                available_backends,
                                cached_keys,
                                check_backend,
                                resolve_backend,
                                run_sweep,
                                summarize,
)

__all__ = [
    "MAX_WORKERS",
    "BACKENDS",
    "Backend",
    "LocalBackend",
    "RayBackend",
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
    "resolve_backend",
    "run_sweep",
    "summarize",
    "task_key",
    "task_name",
]
