"""Provenance and safe output: versions of everything, atomic writes of results, timed calls for estimates.
"""

from __future__ import annotations

import errno
import json
import math
import os
import platform
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any, BinaryIO

_TRACKED = ("ttlab", "numpy", "scipy", "torch", "matplotlib", "clarabel")


def median_call_seconds(fn: Callable[[], object], budget_s: float, max_calls: int = 20) -> float:
    """Median wall time of ``fn()`` after one warm-up call (first calls pay one-off costs): up to
    ``max_calls`` timed calls or ``budget_s`` seconds (at least one). The cost estimates time steps so."""
    import statistics
    import time

    fn()
    times: list[float] = []
    start = time.perf_counter()
    while not times or (len(times) < max_calls and time.perf_counter() - start < budget_s):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def versions(extra: tuple[str, ...] = ()) -> dict[str, str]:
    """Versions of Python, the platform and the packages a result depends on."""
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for name in _TRACKED + tuple(extra):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def source_commit(where: str | os.PathLike | None = None) -> dict[str, Any]:
    """The git commit of the source tree ``where`` (default: this package's folder, i.e. the clone of an editable
    install) and whether tracked files differ from it: ``{"commit": sha, "dirty": bool}``, or ``{"commit": None,
    "why": ...}`` outside a git checkout or without git."""
    import subprocess

    root = Path(where) if where is not None else Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=20)
        if head.returncode != 0:
            return {"commit": None, "why": f"{root} is not in a git checkout"}
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as exc:
        return {"commit": None, "why": f"git could not be run ({type(exc).__name__}: {exc})"}
    return {"commit": head.stdout.strip(), "dirty": bool(status.stdout.strip())}


def load_average() -> list[float] | None:
    """The 1-, 5- and 15-minute load averages of this machine (None where the OS has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (OSError, AttributeError):
        return None


def default_file_mode() -> int:
    """The mode a plain ``open(path, "w")`` would give a new file (0o666 minus the umask).

    ``tempfile.mkstemp`` creates private (0o600) files; atomic writers chmod their temporary file to
    this so that results, figures and checkpoints are as readable as any other file."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextmanager
def atomic_file(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A binary file handle whose content replaces ``path`` atomically when the block ends without
    error (temporary file in the same folder, fsync, rename); on error the temporary file is removed.

    Refuses (``OSError`` EEXIST, before writing anything) to replace what is not ttlab's to replace:
    a device file, FIFO, socket or a link out of its folder (:func:`ttlab.outputs.replace_problem`)."""
    from ttlab.outputs import replace_problem

    path = Path(path)
    why = replace_problem(path)
    if why is not None:
        raise OSError(errno.EEXIST, why, str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:  # name the user's file, not the temporary one
        raise OSError(exc.errno, exc.strerror, str(path)) from exc
    try:
        os.chmod(tmp, default_file_mode())
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        if exc.filename in (None, tmp) and exc.errno is not None:  # a failed write of ours: name the user's file
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_file`)."""
    with atomic_file(path) as fh:
        fh.write(data)


def atomic_write_many(files: dict[Path, bytes]) -> None:
    """Write several files so that either every one is replaced or none is: each new content goes to a temporary
    file in its folder and is synced first (a full disk or a refused path stops here, nothing replaced), then the
    renames follow in the given order. The same refusals as :func:`atomic_file`."""
    from ttlab.outputs import replace_problem

    staged: list[tuple[str, Path]] = []
    try:
        for path, data in files.items():
            path = Path(path)
            why = replace_problem(path)
            if why is not None:
                raise OSError(errno.EEXIST, why, str(path))
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
            staged.append((tmp, path))
            os.chmod(tmp, default_file_mode())
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
            except OSError as exc:  # name the user's file, not the temporary one
                raise OSError(exc.errno, exc.strerror, str(path)) from exc
    except BaseException:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        raise
    for tmp, path in staged:
        os.replace(tmp, path)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see either the old or the new file, never half."""
    atomic_write_bytes(Path(path), text.encode("utf-8"))


def _json_default(obj: Any) -> Any:
    try:
        import numpy as np

        if isinstance(obj, np.generic):
            return obj.item()
        if isinstance(obj, np.ndarray):
            return obj.tolist()
    except ImportError:  # pragma: no cover
        pass
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"cannot serialise {type(obj).__name__} to JSON")


NON_FINITE_KEY = "non_finite_values"
"""Key added to a top-level JSON object listing the values that were NaN or ±inf (written as null)."""


def _strict(obj: Any, path: str, found: dict[str, str]) -> Any:
    """``obj`` with numpy values made plain and every NaN/±inf float replaced by None (noted in ``found``)."""
    if isinstance(obj, float):
        if math.isfinite(obj):
            return obj
        found[path or "/"] = "NaN" if obj != obj else ("Infinity" if obj > 0 else "-Infinity")
        return None
    if isinstance(obj, dict):
        return {k: _strict(v, f"{path}/{k}", found) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_strict(v, f"{path}/{i}", found) for i, v in enumerate(obj)]
    if isinstance(obj, (str, int, bool)) or obj is None:
        return obj
    try:
        plain = _json_default(obj)
    except TypeError:
        return obj  # json.dumps reports it
    return _strict(plain, path, found)


def to_json(obj: Any, indent: int | None = 2) -> str:
    """Serialise ``obj`` (numpy scalars/arrays and paths included) to strict JSON text.

    JSON has no NaN or infinity: such values are written as ``null`` and, when ``obj`` is a dict,
    listed under ``"non_finite_values"`` as {JSON pointer: "NaN" | "Infinity" | "-Infinity"} so a
    reader can tell a missing number from an undefined one."""
    found: dict[str, str] = {}
    clean = _strict(obj, "", found)
    if found and isinstance(clean, dict):
        clean[NON_FINITE_KEY] = {**(clean.get(NON_FINITE_KEY) or {}), **found}
    return json.dumps(clean, indent=indent, default=_json_default, allow_nan=False)


def read_json(path: str | os.PathLike) -> Any:
    """The one reader of JSON files: UTF-8 with or without a leading byte-order mark (the README promises
    BOMs are fine). Raises OSError, or ValueError (UnicodeDecodeError, JSONDecodeError) for bad content."""
    return json.loads(Path(path).read_bytes().decode("utf-8-sig"))


def atomic_write_json(path: str | os.PathLike, obj: Any) -> None:
    """Atomically write ``obj`` as pretty JSON."""
    atomic_write_text(path, to_json(obj) + "\n")


def atomic_savefig(fig: Any, path: str | os.PathLike, **kwargs: Any) -> None:
    """Save a matplotlib figure atomically (format taken from the file suffix)."""
    import io

    path = Path(path)
    buf = io.BytesIO()
    fig.savefig(buf, format=path.suffix.lstrip(".") or "png", **kwargs)
    atomic_write_bytes(path, buf.getvalue())
