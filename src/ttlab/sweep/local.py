"""The ``local`` sweep backend: tasks in this process, or in a pool of spawned worker processes.

``workers=1`` runs the tasks here, one after another (torch limited to ``threads_per_task`` threads
while each runs, when given). ``workers > 1`` uses a :class:`concurrent.futures.ProcessPoolExecutor`
with the ``spawn`` start method (safe with torch and threads); each worker is limited to
``threads_per_task`` torch/OpenMP/BLAS threads before a task's module is imported there.
"""

from __future__ import annotations

import multiprocessing
import sys
import traceback
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import ClassVar

from ttlab.errors import Terminated
from ttlab.sweep.records import OnDone, Task, TaskRecord, execute_task, failed_record, limit_threads

__all__ = ["LocalBackend"]


def _execute_in_worker(task: Task, threads: int | None) -> TaskRecord:
    """Run a task in a pool worker whose thread limit the initializer set (torch is not imported here)."""
    if threads is not None and "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    record = execute_task(task, None)
    record.threads = threads
    return record


@dataclass(frozen=True)
class LocalBackend:
    """Run the tasks on this machine: in-process for ``workers == 1``, else a spawn process pool."""

    name: ClassVar[str] = "local"

    def check(self) -> None:
        """The local backend runs everywhere: nothing to check."""

    def run(self, tasks: list[Task], workers: int, threads: int | None, on_done: OnDone) -> None:
        """Run every task, calling ``on_done(record)`` here as each one finishes.

        Ctrl-C (KeyboardInterrupt in this process, or in a worker, which sends it back as the task's
        exception) cancels the queued tasks, keeps every record that finished before the pool shut
        down, and re-raises.
        """
        if workers == 1 or len(tasks) <= 1:
            for task in tasks:
                on_done(execute_task(task, threads))
            return
        _run_pool(tasks, workers, threads, on_done)


def _run_pool(tasks: list[Task], workers: int, threads: int | None, on_done: OnDone) -> None:
    """The process pool of :meth:`LocalBackend.run`."""
    ctx = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=min(workers, len(tasks)), mp_context=ctx,
                               initializer=limit_threads, initargs=(threads,))
    futures: dict[Future[TaskRecord], Task] = {}
    reported: set[Future[TaskRecord]] = set()

    def record_of(fut: Future[TaskRecord]) -> TaskRecord:
        task = futures[fut]
        try:
            return fut.result()
        except BrokenProcessPool as exc:
            return failed_record(task, f"worker process died ({exc}); the task was not finished")
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - e.g. the task could not be pickled
            return failed_record(task, "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))

    try:
        futures = {pool.submit(_execute_in_worker, task, threads): task for task in tasks}
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                reported.add(fut)
                on_done(record_of(fut))
    except BaseException as exc:
        # Interrupted: drop queued tasks, let running ones end, and keep whatever finished meanwhile. Ctrl-C reaches
        # the workers too (one process group); SIGTERM reaches only this process, so it is passed on to them.
        if isinstance(exc, Terminated):
            _terminate_workers(pool)
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


def _terminate_workers(pool: ProcessPoolExecutor) -> None:
    """Send SIGTERM to the pool's live worker processes (a training run checkpoints and stops; others end)."""
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        if proc.is_alive():
            proc.terminate()
