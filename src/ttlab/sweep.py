"""Run many independent tasks, cache each result on disk, and resume after an interruption.

A *task* is a picklable, module-level function ``fn(config) -> JSON-able result`` plus a JSON-able
``config`` dict. Its key is a stable hash of (the function's task name, the canonical JSON of the
config): the same task has the same key in every process, on every machine, in every session. The
task name is ``module:qualname``, or the name given with :func:`task_name` (``@task_name("...")``),
which keeps the keys — and so the finished work cached under them — when the function moves.

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
* ``"ray"``: each pending task becomes a Ray task (``num_cpus=threads_per_task or 1``,
  ``num_gpus=gpus_per_task``, ``max_retries`` re-runs after a worker or node crash; a task's own
  exception is *not* retried, it becomes a failed record as with ``"local"``). Records come back
  through ``ray.wait`` as they finish, so caching and progress are the same as for ``"local"``.
  Ray is optional (``pip install 'ttlab[ray]'``): importing this module never imports it, and
  :func:`available_backends` lists ``"ray"`` only when it is installed. Where Ray runs:

  - Ray already initialised in this process (``ray.init(...)`` by the caller): used as it is.
  - ``ray_address="auto"`` or ``"host:port"`` (or the ``RAY_ADDRESS`` environment variable):
    connect to a running cluster (``ray start --head`` on the head node, ``ray start
    --address=HEAD:6379`` on the others). Its resources decide how many tasks run at once;
    ``workers`` is not used. The task's module must be importable on every node (the project
    installed there, or a shared file system: the driver's ``sys.path`` is added to the workers').
  - otherwise a private local Ray instance with ``workers × (threads_per_task or 1)`` CPUs
    (so ``workers`` tasks run at once), a 100 MB object store and no dashboard. It stays up for
    later sweeps in this process (it is restarted when a sweep asks for other CPUs) and stops at
    exit or with ``ray.shutdown()``. Starting it takes several seconds.

  The workers get the same thread limit as ``"local"`` (``OMP_NUM_THREADS`` etc. and
  ``torch.set_num_threads``). Ctrl-C cancels the outstanding Ray tasks and keeps the finished ones.

A runner has the :data:`BackendRunner` signature: it gets the pending tasks and calls
``on_done(record)`` as each finishes (e.g. the record from ``execute_task(task, threads)``);
caching, ordering and failure bookkeeping stay in :func:`run_sweep`. The runner registered as
``"ray"`` also receives the keyword arguments ``ray_address``, ``gpus_per_task`` and ``max_retries``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import math
import multiprocessing
import os
import shutil
import sys
import tempfile
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
    "task_name",
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


_TASK_NAME_ATTR = "__ttlab_task_name__"


def task_name(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: give a task function a fixed name for its cache keys (``"module:qualname"`` style).

    Use it when a task function is moved or renamed, with its old ``module:qualname``, so records cached
    under the old keys are still found.
    """
    if not isinstance(name, str) or ":" not in name:
        raise TTLabInputError(f"a task name looks like 'package.module:function', got {name!r}")

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        setattr(fn, _TASK_NAME_ATTR, name)
        return fn

    return mark


def _key_name(fn: Callable[..., Any]) -> str:
    """The name a task's key is computed from: its :func:`task_name`, else ``module:qualname``."""
    where = function_name(fn)  # checked even when named: workers import the function by reference
    return getattr(fn, _TASK_NAME_ATTR, where)


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
    name = fn if isinstance(fn, str) else _key_name(fn)
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
    name = _key_name(task.fn)
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
        data = json.loads(Path(path).read_text(encoding="utf-8-sig"))
        data.pop("cached", None)
        return TaskRecord(**data, cached=True)
    except (OSError, ValueError, TypeError):
        return None


# ---------------------------------------------------------------------------------------------
# backends

OnDone = Callable[[TaskRecord], None]
BackendRunner = Callable[[list[Task], int, "int | None", OnDone], None]
"""``runner(pending_tasks, workers, threads_per_task, on_done)``: run every task, calling
``on_done(record)`` in the caller's process as each one finishes (any order). The ``"ray"`` runner
also gets the keyword arguments ``ray_address``, ``gpus_per_task`` and ``max_retries``."""


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


# ---------------------------------------------------------------------------------------------
# the ray backend (Ray is imported only when it is used)

RAY_INSTALL_HINT = "pip install 'ttlab[ray]'"
RAY_OBJECT_STORE_BYTES = 100 * 1024 * 1024  # records are small (Ray keeps them inline): a minimal store
_RAY_INTERRUPTED = "ttlab.sweep: task interrupted"  # returned by a Ray task whose function raised KeyboardInterrupt
_ray_started: dict[str, Any] = {}  # the Ray that run_sweep started or connected to: {"want", "identity"}


def _ray_installed() -> bool:
    """True when ``import ray`` would find a package (without importing it)."""
    try:
        return importlib.util.find_spec("ray") is not None
    except (ImportError, ValueError):
        return False


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise TTLabInputError(
            f"the 'ray' sweep backend needs Ray, which is not installed ({exc}); install it with "
            f"{RAY_INSTALL_HINT}, or use backend='local'"
        ) from None
    return ray


def _execute_in_ray(blob: bytes, threads: int | None, driver_path: list[str]) -> TaskRecord | str:
    """Body of each Ray task: limit threads, make the driver's modules importable, run the task.

    The task arrives pickled so that the thread limit is set before unpickling it imports the
    task's module (and maybe torch). A ``KeyboardInterrupt`` raised by the task comes back as
    :data:`_RAY_INTERRUPTED`, so the driver stops the sweep as the local backend does.
    """
    _worker_init(threads)
    for entry in driver_path:  # appended, so the worker's own packages keep precedence
        if entry not in sys.path:
            sys.path.append(entry)
    import pickle

    task: Task = pickle.loads(blob)
    _worker_init(threads)  # unpickling may have imported torch
    try:
        record = execute_task(task, None)
    except KeyboardInterrupt:
        return _RAY_INTERRUPTED
    except SystemExit as exc:  # would end the Ray worker and look like a crash: record it instead
        return _failed_record(task, "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    record.threads = threads
    return record


def _driver_sys_path() -> list[str]:
    out: list[str] = []
    for entry in sys.path:
        entry = os.path.abspath(entry or os.curdir)
        if entry not in out:
            out.append(entry)
    return out


def _check_ray_address(address: str) -> None:
    """Fail fast on an unreachable ``host:port`` (``ray.init`` would retry for minutes, then exit)."""
    if address == "auto" or "://" in address:
        return
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise TTLabInputError(f"ray_address must be 'auto', 'host:port' or 'ray://host:port', got {address!r}")
    import socket

    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as exc:
        raise TTLabInputError(
            f"cannot reach the Ray cluster at {address} ({exc}); start it with `ray start --head` "
            "and pass the address it prints, or leave ray_address unset for a local Ray"
        ) from None


def _ray_store_options() -> dict[str, Any]:
    """Object-store settings that keep Ray quiet when ``/dev/shm`` is small (e.g. Docker's 64 MB)."""
    opts: dict[str, Any] = {"object_store_memory": RAY_OBJECT_STORE_BYTES}
    if sys.platform.startswith("linux"):
        try:
            shm_free = shutil.disk_usage("/dev/shm").free
        except OSError:
            shm_free = 0
        if shm_free < RAY_OBJECT_STORE_BYTES:  # Ray would fall back to /tmp itself, with a loud warning
            opts["_plasma_directory"] = tempfile.gettempdir()
    return opts


def _ray_identity(ray: Any) -> tuple[str, str] | None:
    """(GCS address, job id) of this process's Ray connection: tells our instance from the caller's."""
    try:
        ctx = ray.get_runtime_context()
        return str(ctx.gcs_address), str(ctx.get_job_id())
    except Exception:  # noqa: BLE001 - e.g. Ray Client mode: then treat the connection as the caller's
        return None


def _connect_ray(address: str | None, num_cpus: int) -> Any:
    """The initialised ``ray`` module: the caller's Ray, a cluster at ``address``, or a local Ray."""
    ray = _import_ray()
    address = address or os.environ.get("RAY_ADDRESS") or None
    want = {"address": address, "num_cpus": None if address else num_cpus}
    if ray.is_initialized():
        ours = _ray_started.get("identity") is not None and _ray_started["identity"] == _ray_identity(ray)
        if not ours or _ray_started["want"] == want:  # the caller's own Ray, or ours with these settings
            return ray
        ray.shutdown()  # ours, but for another address or size
    _ray_started.clear()
    quiet = {"log_to_driver": False, "logging_level": logging.WARNING}
    if address:
        _check_ray_address(address)
        try:
            ray.init(address=address, **quiet)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - ConnectionError, AuthenticationError, ...
            raise TTLabInputError(f"cannot connect to the Ray cluster at {address!r}: {exc}") from None
    else:
        # A new local Ray turns on token authentication (unless RAY_AUTH_MODE says otherwise) and
        # logs a warning about it on every start: keep the default, drop the noise.
        auth_log = logging.getLogger("ray._private.authentication.authentication_token_setup")
        level = auth_log.level
        auth_log.setLevel(logging.ERROR)
        try:
            ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, **_ray_store_options(), **quiet)
        finally:
            auth_log.setLevel(level)
    _ray_started.update(want=want, identity=_ray_identity(ray))
    return ray


def _check_ray_resources(ray: Any, cpus: float, gpus: float) -> None:
    """Raise when no node could run a task (Ray would keep such a task pending forever)."""
    try:
        nodes = [n.get("Resources", {}) for n in ray.nodes() if n.get("Alive", True)]
    except Exception:  # noqa: BLE001 - no node list (e.g. some Ray Client setups): let Ray schedule
        return
    for name, need in (("CPU", cpus), ("GPU", gpus)):
        have = max((float(r.get(name, 0)) for r in nodes), default=0.0)
        if need > have:
            what = "threads_per_task" if name == "CPU" else "gpus_per_task"
            raise TTLabInputError(
                f"each sweep task asks Ray for {need:g} {name}(s) ({what}) but the largest node of the Ray "
                f"cluster has {have:g}; lower {what} or add nodes with more {name}s"
            )


def _ray_failure(ray: Any, task: Task, exc: BaseException, max_retries: int) -> TaskRecord:
    if isinstance(exc, ray.exceptions.RayTaskError):  # raised by _execute_in_ray itself, e.g. unpickling
        text = getattr(exc, "traceback_str", None) or str(exc)
        return _failed_record(task, f"{text}\nthe Ray worker could not run the task: is {function_name(task.fn)} "
                                    "importable on the Ray nodes (project installed there or on a shared path)?")
    return _failed_record(task, f"Ray could not finish the task ({type(exc).__name__}: {exc}); it was retried "
                                f"up to {max_retries} time(s) after worker failures (max_retries)")


def _run_ray(tasks: list[Task], workers: int, threads: int | None, on_done: OnDone, *,
             ray_address: str | None = None, gpus_per_task: float = 0, max_retries: int = 2) -> None:
    """The ``ray`` backend: one Ray task per pending task, records delivered as they finish.

    Ctrl-C (or a task raising KeyboardInterrupt) reports the tasks already finished, cancels the
    others and re-raises.
    """
    ray = _connect_ray(ray_address, workers * (threads or 1))
    cpus = threads or 1
    _check_ray_resources(ray, cpus, gpus_per_task)
    from ray import cloudpickle  # pickles functions defined in __main__ by value

    remote = ray.remote(_execute_in_ray)
    path = ray.put(_driver_sys_path())
    refs: dict[Any, Task] = {}
    reported: set[Any] = set()

    def record_of(ref: Any) -> TaskRecord | None:
        try:
            out = ray.get(ref)
        except ray.exceptions.RayError as exc:
            return _ray_failure(ray, refs[ref], exc, max_retries)
        return None if isinstance(out, str) and out == _RAY_INTERRUPTED else out

    try:
        for task in tasks:
            try:
                blob = cloudpickle.dumps(task)
            except Exception as exc:  # noqa: BLE001 - e.g. a config or function that cannot be pickled
                on_done(_failed_record(task, "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))))
                continue
            ref = remote.options(num_cpus=cpus, num_gpus=gpus_per_task, max_retries=max_retries,
                                 retry_exceptions=False, name=f"ttlab.sweep:{task.key}").remote(blob, threads, path)
            refs[ref] = task
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            if pending:
                more, pending = ray.wait(pending, num_returns=len(pending), timeout=0)
                ready += more
            interrupted = False
            for ref in ready:
                reported.add(ref)
                record = record_of(ref)
                if record is None:
                    interrupted = True
                else:
                    on_done(record)
            if interrupted:
                raise KeyboardInterrupt
    except BaseException:
        # Interrupted: keep what finished meanwhile, cancel the rest (force: Ctrl-C should not wait).
        rest = [ref for ref in refs if ref not in reported]
        try:
            ready = ray.wait(rest, num_returns=len(rest), timeout=0)[0] if rest else []
            for ref in ready:
                reported.add(ref)
                record = record_of(ref)
                if record is not None:
                    on_done(record)
        except Exception:  # noqa: BLE001 - Ray itself failing must not hide the original exception
            pass
        for ref in refs:
            if ref not in reported:
                try:
                    ray.cancel(ref, force=True)
                except Exception:  # noqa: BLE001 - already finished or gone
                    pass
        raise


# ---------------------------------------------------------------------------------------------
# the backend registry

BACKENDS: dict[str, BackendRunner] = {"local": _run_local, "ray": _run_ray}


def check_backend(name: str) -> None:
    """Raise :class:`TTLabInputError` unless ``name`` is a registered backend that can run here."""
    if name in BACKENDS:
        if BACKENDS[name] is _run_ray and not _ray_installed():
            raise TTLabInputError(
                f"the 'ray' sweep backend needs Ray, which is not installed; install it with {RAY_INSTALL_HINT}, "
                "or use backend='local'"
            )
        return
    raise TTLabInputError(f"unknown sweep backend {name!r}; choose one of {', '.join(available_backends())}")


def register_backend(name: str, runner: BackendRunner) -> None:
    """Add or replace a backend: ``runner(pending_tasks, workers, threads_per_task, on_done)``.

    A runner registered as ``"ray"`` also receives ``ray_address=``, ``gpus_per_task=`` and
    ``max_retries=`` keyword arguments.
    """
    if not isinstance(name, str) or not name:
        raise TTLabInputError("a backend name must be a non-empty string")
    if not callable(runner):
        raise TTLabInputError(f"backend runner for {name!r} must be callable")
    BACKENDS[name] = runner


def available_backends() -> list[str]:
    """Names of the registered backends that can run here ("ray" only when Ray is installed)."""
    return sorted(n for n, r in BACKENDS.items() if not (r is _run_ray and not _ray_installed()))


def _failed_record(task: Task, error: str) -> TaskRecord:
    return TaskRecord(key=task.key, fn=_key_name(task.fn), config=task.config, status="failed",
                      error=error, finished_at=time.time())


# ---------------------------------------------------------------------------------------------
# the sweep


def _check_int(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise TTLabInputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


def _check_ray_options(backend: str, ray_address: Any, gpus_per_task: Any, max_retries: Any) -> dict[str, Any]:
    """Validate the ``backend="ray"`` options; the keyword arguments for the ray runner (else ``{}``)."""
    if ray_address is not None and (not isinstance(ray_address, str) or not ray_address.strip()):
        raise TTLabInputError(f"ray_address must be None, 'auto' or 'host:port', got {ray_address!r}")
    if isinstance(gpus_per_task, bool) or not isinstance(gpus_per_task, (int, float)) \
            or not math.isfinite(gpus_per_task) or gpus_per_task < 0:
        raise TTLabInputError(f"gpus_per_task must be a number >= 0, got {gpus_per_task!r}")
    if gpus_per_task > 1 and gpus_per_task != int(gpus_per_task):
        raise TTLabInputError(f"gpus_per_task above 1 must be a whole number (Ray's rule), got {gpus_per_task!r}")
    max_retries = _check_int(max_retries, "max_retries", 0)
    if backend != "ray":
        if ray_address is not None:
            raise TTLabInputError(f"ray_address is only used by backend='ray', not {backend!r}")
        if gpus_per_task:
            raise TTLabInputError(f"gpus_per_task is only used by backend='ray', not {backend!r}")
        return {}
    return {"ray_address": ray_address and ray_address.strip(), "gpus_per_task": gpus_per_task,
            "max_retries": max_retries}


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
    ray_address: str | None = None,
    gpus_per_task: float = 0,
    max_retries: int = 2,
) -> list[TaskRecord]:
    """Run ``fn(config)`` for every config, reusing cached results; one record per config, in order.

    ``threads_per_task`` defaults to ``max(1, cpu_count // workers)`` for a process pool and leaves
    the current setting alone for ``workers=1``. Identical configs run once. Failed tasks are
    recorded (and stored) without stopping the others; inspect ``record.ok`` / :func:`summarize`.

    Options of ``backend="ray"`` only (see the module docstring): ``ray_address`` (``None``: the
    Ray already initialised in this process, else ``$RAY_ADDRESS``, else a new local Ray with
    ``workers × (threads_per_task or 1)`` CPUs; ``"auto"`` or ``"host:port"``: a running cluster),
    ``gpus_per_task`` (GPUs reserved per task, fractions allowed; default 0) and ``max_retries``
    (re-runs of a task whose worker or node died; a task's own exception is never retried).
    """
    check_backend(backend)
    workers = _check_int(workers, "workers", 1)
    ray_options = _check_ray_options(backend, ray_address, gpus_per_task, max_retries)
    if threads_per_task is not None:
        threads_per_task = _check_int(threads_per_task, "threads_per_task", 1)
    elif workers > 1:
        threads_per_task = max(1, (os.cpu_count() or 1) // workers)
    if isinstance(configs, dict) or not isinstance(configs, Sequence):
        raise TTLabInputError("configs must be a list of dicts")
    name = _key_name(fn)
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
        BACKENDS[backend](pending, workers, threads_per_task, on_done, **ray_options)
    missing = [k for k in unique if k not in records]
    if missing:  # a backend must report every task; guard against a faulty runner
        raise RuntimeError(f"sweep backend {backend!r} returned no record for {len(missing)} task(s)")
    return [records[k] for k in keys]


def cached_keys(fn: Callable[[dict[str, Any]], Any], configs: Sequence[dict[str, Any]],
                cache_dir: str | os.PathLike[str]) -> set[str]:
    """Keys of the tasks among ``configs`` that already have a successful record in ``cache_dir``."""
    name = _key_name(fn)
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
