"""Output paths checked before any work starts: one helper for every command that writes.

A command that trains for minutes and then fails to write its result wastes the user's time, and
a Python traceback about ``IsADirectoryError`` does not say which option was wrong. The checks
here run first and raise :class:`~ttlab.errors.TTLabInputError` with a one-line message naming the
option:

* a directory is needed but the path is an existing file (or the reverse);
* a parent on the way is a file;
* the nearest existing folder is not writable (permissions, a read-only file system) — tested by
  really creating and removing a probe file, since ``os.access`` says yes to root on a chmod-555
  folder and cannot know every file system's rules;
* an existing run would be silently overwritten (``run_markers`` present and no ``--overwrite``).

Nothing is created or deleted except the probe file.

Imports: the standard library and ttlab.errors only.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Iterable

from ttlab.errors import TTLabInputError

__all__ = ["check_out_dir", "check_out_file", "write_problem"]


def write_problem(folder: Path) -> str | None:
    """Why files cannot be created in the existing folder ``folder`` (None when they can).

    Creates and removes a hidden probe file; the reason is the operating system's message
    (e.g. "Read-only file system", "Permission denied")."""
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".ttlab-write-probe-")
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    os.close(fd)
    try:
        os.unlink(probe)
    except OSError:  # pragma: no cover - created but not removable: still writable
        pass
    return None


def _nearest_existing(path: Path, option: str) -> Path:
    """The nearest existing ancestor of ``path`` (``path`` itself excluded), which must be a folder."""
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise TTLabInputError(f"{option} {path}: {parent} is a file, so no folder can be created under it.")
            return parent
    return Path(".")  # pragma: no cover - a relative path's parents end in "."


def _check_writable(folder: Path, path: Path, option: str) -> None:
    reason = write_problem(folder)
    if reason is not None:
        where = "" if folder == path else f" (in {folder})"
        raise TTLabInputError(f"{option} {path}: cannot write here{where}: {reason}.")


def check_out_dir(
    path: str | os.PathLike,
    *,
    option: str = "--out",
    run_markers: Iterable[str] = (),
    overwrite: bool = False,
    overwrite_hint: str = "pass --overwrite to replace it",
) -> Path:
    """Check that ``path`` can be used as an output folder before any work starts; returns it as a Path.

    Fails when ``path`` is an existing file, when a parent is a file, when the folder (or, if it does
    not exist yet, its nearest existing parent) is not writable, and — when ``run_markers`` are given
    and ``overwrite`` is false — when one of those files already exists in it (an earlier run)."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise TTLabInputError(f"{option} {p} is an existing file; it must be a folder (or a path to create one).")
    if p.is_dir():
        found = [m for m in run_markers if (p / m).exists()]
        if found and not overwrite:
            raise TTLabInputError(
                f"{option} {p} already holds a run ({', '.join(found)}); {overwrite_hint} or choose another {option}."
            )
        _check_writable(p, p, option)
    else:
        _check_writable(_nearest_existing(p, option), p, option)
    return p


def check_out_file(
    path: str | os.PathLike,
    *,
    option: str = "--out",
    suffixes: Iterable[str] | None = None,
) -> Path:
    """Check that ``path`` can be written as a file before any work starts; returns it as a Path.

    Fails when ``path`` is an existing folder, when ``suffixes`` are given and the name ends in none
    of them, when a parent is a file, and when the folder it would go in (or its nearest existing
    parent) is not writable. An existing file is fine (files are replaced atomically)."""
    p = Path(path)
    if p.is_dir():
        raise TTLabInputError(f"{option} {p} is a folder; give a file name (e.g. {p / 'result.json'}).")
    if suffixes is not None:
        allowed = tuple(suffixes)
        if p.suffix.lower() not in allowed:
            raise TTLabInputError(f"{option} {p} must end in {' or '.join(allowed)}.")
    parent = p.parent
    if parent.exists():
        if not parent.is_dir():
            raise TTLabInputError(f"{option} {p}: {parent} is a file, not a folder.")
        _check_writable(parent, p, option)
    else:
        _check_writable(_nearest_existing(parent, option), p, option)
    return p
