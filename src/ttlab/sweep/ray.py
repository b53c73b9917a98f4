"""The ``ray`` sweep backend: each pending task becomes a Ray task; records come back as they finish.

:class:`RayBackend` holds the backend's options: ``address`` (where Ray runs, below), ``gpus_per_task``
(GPUs reserved per task, fractions allowed; default 0) and ``max_retries`` (re-runs of a task whose
worker or node died; a task's own exception is *not* retried, it becomes a failed record as with the
``local`` backend). Each task asks Ray for ``threads_per_task or 1`` CPUs. Records come back through
``ray.wait`` as they finish, so caching and progress are the same as for ``local``. Ray is optional
(``pip install 'ttlab[ray]'``): this module imports it only when a sweep runs on it. Where Ray runs:

- Ray already initialised in this process (``ray.init(...)`` by the caller): used as it is.
- ``address="auto"`` or ``"host:port"`` (or the ``RAY_ADDRESS`` environment variable): connect to a
  running cluster (``ray start --head`` on the head node, ``ray start --address=HEAD:6379`` on the
  others). Its resources decide how many tasks run at once; ``workers`` is not used. The task's
  module must be importable on every node (the project installed there, or a shared file system:
  the driver's ``sys.path`` is added to the workers').
- otherwise a private local Ray instance with ``workers × (threads_per_task or 1)`` CPUs (so
  ``workers`` tasks run at once), a 100 MB object store and no dashboard. It stays up for later
  sweeps in this process (it is restarted when a sweep asks for other CPUs) and stops at exit or
  with ``ray.shutdown()``. Starting it takes several seconds.

The workers get the same thread limit as ``local`` (``OMP_NUM_THREADS`` etc. and
``torch.set_num_threads``). Ctrl-C cancels the outstanding Ray tasks and keeps the finished ones.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import sys
import tempfile
import traceback
from dataclasses import dataclass
from typing import Any, ClassVar

from ttlab.errors import TTLabInputError
from ttlab.sweep.keys import function_name
from ttlab.sweep.records import OnDone, Task, TaskRecord, execute_task, failed_record, limit_threads
from ttlab.validation import check_float, check_int

__all__ = ["RAY_INSTALL_HINT", "RayBackend"]

RAY_INSTALL_HINT = "pip install 'ttlab[ray]'"
RAY_OBJECT_STORE_BYTES = 100 * 1024 * 1024  # records are small (Ray keeps them inline): a minimal store
_RAY_INTERRUPTED = "ttlab.sweep: task interrupted"  # returned by a Ray task whose function raised KeyboardInterrupt
_ray_started: dict[str, Any] = {}  # the Ray that a sweep started or connected to: {"want", "identity"}


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
    limit_threads(threads)
    for entry in driver_path:  # appended, so the worker's own packages keep precedence
        if entry not in sys.path:
            sys.path.append(entry)
    import pickle

    task: Task = pickle.loads(blob)
    limit_threads(threads)  # unpickling may have imported torch
    try:
        record = execute_task(task, None)
    except KeyboardInterrupt:
        return _RAY_INTERRUPTED
    except SystemExit as exc:  # would end the Ray worker and look like a crash: record it instead
        return failed_record(task, "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
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
        return failed_record(task, f"{text}\nthe Ray worker could not run the task: is {function_name(task.fn)} "
                                    "importable on the Ray nodes (project installed there or on a shared path)?")
    return failed_record(task, f"Ray could not finish the task ({type(exc).__name__}: {exc}); it was retried "
                                f"up to {max_retries} time(s) after worker failures (max_retries)")


@dataclass(frozen=True)
class RayBackend:
    """Run each task as a Ray task; see the module docstring for ``address``.

    ``gpus_per_task``: GPUs reserved per task (fractions allowed, whole numbers above 1);
    ``max_retries``: re-runs of a task whose worker or node died (its own exception is never retried).
    """

    address: str | None = None
    gpus_per_task: float = 0
    max_retries: int = 2
    name: ClassVar[str] = "ray"

    def __post_init__(self) -> None:
        address, gpus = self.address, self.gpus_per_task
        if address is not None and (not isinstance(address, str) or not address.strip()):
            raise TTLabInputError(f"ray_address must be None, 'auto' or 'host:port', got {address!r}")
        check_float(gpus, "gpus_per_task", 0)
        if gpus > 1 and gpus != int(gpus):
            raise TTLabInputError(f"gpus_per_task above 1 must be a whole number (Ray's rule), got {gpus!r}")
        check_int(self.max_retries, "max_retries", 0)
        object.__setattr__(self, "address", address and address.strip())

    def check(self) -> None:
        """Raise :class:`TTLabInputError` when Ray is not installed."""
        if not _ray_installed():
            raise TTLabInputError(
                f"the 'ray' sweep backend needs Ray, which is not installed; install it with {RAY_INSTALL_HINT}, "
                "or use backend='local'"
            )

    def run(self, tasks: list[Task], workers: int, threads: int | None, on_done: OnDone) -> None:
        """Run every task as a Ray task, calling ``on_done(record)`` here as each one finishes.

        Ctrl-C (or a task raising KeyboardInterrupt) reports the tasks already finished, cancels the
        others and re-raises.
        """
        _run_ray(tasks, workers, threads, on_done, self.address, self.gpus_per_task, self.max_retries)


def _run_ray(tasks: list[Task], workers: int, threads: int | None, on_done: OnDone,
             ray_address: str | None, gpus_per_task: float, max_retries: int) -> None:
    """The body of :meth:`RayBackend.run`."""
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
                on_done(failed_record(task, "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))))
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


