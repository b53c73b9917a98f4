"""Output paths checked before any work starts: one helper for every command that writes.

A command that trains for minutes and then fails to write its result wastes the user's time, and
a Python traceback about ``IsADirectoryError`` does not say which option was wrong. The checks
here run first and raise :class:`~ttlab.errors.TTLabInputError` with a one-line message naming the
parameter (``param``: ``out`` unless the caller says otherwise; ``exc.params`` holds it, and the CLI shows it as the
command's flag):

* a directory is needed but the path is an existing file (or the reverse);
* a parent on the way is a file;
* the nearest existing folder is not writable (permissions, a read-only file system) — tested by
  really creating and removing a probe file, since ``os.access`` says yes to root on a chmod-555
  folder and cannot know every file system's rules;
* an existing run would be silently overwritten (``run_markers`` present and no ``overwrite``);
* the output is not ttlab's to replace (:func:`replace_problem`): a device file, FIFO or socket (as
  root, replacing ``/dev/null`` with a regular file breaks the system), or a symbolic link pointing out
  of the folder it is in; an output that is one of the same command's inputs (same file, by inode);
  an existing file where the command promises not to overwrite without ``overwrite``.

:func:`replace_problem` is also checked by every atomic writer (:func:`ttlab.provenance.atomic_file`),
so no write path can replace such a file even when a command forgets the check.

Nothing is created or deleted except the probe file — and, by :func:`hold_out_dir`, the folder a run holds and
its lock file ``.ttlab.lock``: an exclusive lock for the whole run, so a second process on the same folder is
refused at once (the lock dies with its process, even on kill -9).
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable

from ttlab.errors import TTLabInputError

__all__ = ["LOCK_NAME", "check_out_dir", "check_out_file", "check_plot_file", "check_plot_suffix", "hold_out_dir", "replace_problem", "write_problem"]

LOCK_NAME = ".ttlab.lock"

_KINDS = ((stat.S_ISCHR, "a character device file"), (stat.S_ISBLK, "a block device file"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))


def replace_problem(path: str | os.PathLike) -> str | None:
    """Why ttlab must not replace ``path`` with a new regular file (None when it may, or when it does not exist).

    Refused: a device file, FIFO or socket (or a link to one), and a symbolic link whose target lies
    outside the folder the link is in — an atomic rename would replace the link, so the reason asks for
    the real path. A link to a file in the same folder (or below it) is fine."""
    p = Path(path)
    try:
        st = os.lstat(p)
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode):
        target = Path(os.path.realpath(p))
        folder = Path(os.path.realpath(p.parent))
        if folder not in target.parents:
            return (f"is a symbolic link to {target}, outside its folder {folder}; ttlab replaces only its own "
                    "outputs — give the real path or another name")
        try:
            st = os.stat(p)
        except OSError:  # a dangling link inside the folder: replacing the link loses nothing
            return None
    for test, kind in _KINDS:
        if test(st.st_mode):
            return f"is {kind}, not a regular file; ttlab never replaces it — choose another output path"
    return None


def _same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name the same file (same inode when both exist, else the same resolved path)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def _check_replaceable(p: Path, param: str, inputs: Iterable[str | os.PathLike] = ()) -> None:
    why = replace_problem(p)
    if why is not None:
        raise TTLabInputError(f"{param} {p} {why}.", params=(param,))
    for inp in inputs:
        if inp is not None and _same_file(p, Path(inp)):
            raise TTLabInputError(f"{param} {p} is this command's input {inp}; writing the result there would "
                                  f"replace it — choose another {param}.", params=(param,))


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


def _nearest_existing(path: Path, param: str) -> Path:
    """The nearest existing ancestor of ``path`` (``path`` itself excluded), which must be a folder."""
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise TTLabInputError(f"{param} {path}: {parent} is a file, so no folder can be created under it.",
                                      params=(param,))
            return parent
    return Path(".")  # pragma: no cover - a relative path's parents end in "."


def _check_writable(folder: Path, path: Path, param: str) -> None:
    reason = write_problem(folder)
    if reason is not None:
        where = "" if folder == path else f" (in {folder})"
        raise TTLabInputError(f"{param} {path}: cannot write here{where}: {reason}.", params=(param,))


def check_out_dir(
    path: str | os.PathLike,
    *,
    param: str = "out",
    run_markers: Iterable[str] = (),
    overwrite: bool = False,
    overwrite_hint: str = "pass overwrite to replace it",
    files: Iterable[str] = (),
) -> Path:
    """Check that ``path`` can be used as an output folder before any work starts; returns it as a Path.

    Fails when ``path`` is an existing file (a device file or FIFO is named as such), when a parent is
    a file, when the folder (or, if it does not exist yet, its nearest existing parent) is not writable,
    when one of the files the command writes there (``run_markers`` and ``files``) exists but may not be
    replaced (:func:`replace_problem`), and — when ``run_markers`` are given and ``overwrite`` is false —
    when one of those files already exists in it (an earlier run).

    Errors name ``param`` (the caller's name for the folder) and, for an earlier run, ``overwrite``."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        why = replace_problem(p)
        kind = why.split(";")[0] if why else "is an existing file"
        raise TTLabInputError(f"{param} {p} {kind}; it must be a folder (or a path to create one).", params=(param,))
    if p.is_dir():
        run_markers = tuple(run_markers)
        for name in (*run_markers, *files):
            _check_replaceable(p / name, param)
        found = [m for m in run_markers if (p / m).exists()]
        if found and not overwrite:
            raise TTLabInputError(
                f"{param} {p} already holds a run ({', '.join(found)}); {overwrite_hint} or choose another {param}.",
                params=(param, "overwrite"))
        _check_writable(p, p, param)
    else:
        _check_writable(_nearest_existing(p, param), p, param)
    return p


def check_out_file(
    path: str | os.PathLike,
    *,
    param: str = "out",
    suffixes: Iterable[str] | None = None,
    inputs: Iterable[str | os.PathLike] = (),
    overwrite: bool | None = None,
) -> Path:
    """Check that ``path`` can be written as a file before any work starts; returns it as a Path.

    Fails when ``path`` is an existing folder, when it may not be replaced (:func:`replace_problem`:
    device file, FIFO, socket, link out of its folder), when it is one of the command's ``inputs``,
    when ``suffixes`` are given and the name ends in none of them, when a parent is a file, and when
    the folder it would go in (or its nearest existing parent) is not writable. An existing regular
    file is replaced atomically — unless ``overwrite`` is False (a command that refuses to overwrite
    without ``overwrite``). Errors name ``param`` (the caller's name for the file)."""
    p = Path(path)
    if p.is_dir():
        raise TTLabInputError(f"{param} {p} is a folder; give a file name (e.g. {p / 'result.json'}).", params=(param,))
    _check_replaceable(p, param, inputs)
    if overwrite is False and os.path.lexists(p):
        raise TTLabInputError(f"{param} {p} already exists; pass overwrite to replace it or choose another {param}.",
                              params=(param, "overwrite"))
    if suffixes is not None:
        allowed = tuple(suffixes)
        if p.suffix.lower() not in allowed:
            raise TTLabInputError(f"{param} {p} must end in {' or '.join(allowed)}.", params=(param,))
    parent = p.parent
    if parent.exists():
        if not parent.is_dir():
            raise TTLabInputError(f"{param} {p}: {parent} is a file, not a folder.", params=(param,))
        _check_writable(parent, p, param)
    else:
        _check_writable(_nearest_existing(parent, param), p, param)
    return p


def check_plot_suffix(path: str | os.PathLike, param: str = "plot") -> None:
    """Raise :class:`TTLabInputError` (naming the parameter ``param``) when matplotlib cannot write ``path``'s image
    format (its suffix: png, pdf, svg, …). Imports matplotlib only when called."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    path = Path(path)
    supported = FigureCanvasAgg(Figure()).get_supported_filetypes()
    suffix = path.suffix.lstrip(".").lower()
    if suffix not in supported:
        raise TTLabInputError(
            f"{param} {path}: unsupported image format {suffix or '(none)'!r}; use one of "
            f"{', '.join(sorted(supported))}", params=(param,)
        )


@contextmanager
def hold_out_dir(path: str | os.PathLike, *, param: str = "out") -> Iterator[Path]:
    """Hold the output folder ``path`` for the duration of the ``with`` block: create it and take an exclusive,
    non-blocking lock on ``path/.ttlab.lock``; a second process on the same folder is refused at once with a
    :class:`TTLabInputError` naming ``param``. The lock is the operating system's (``flock``): it is released when the
    block ends or the process dies, so a stale lock file never blocks a later run."""
    import fcntl

    p = Path(path)
    created = not p.exists()
    p.mkdir(parents=True, exist_ok=True)
    fd = os.open(p / LOCK_NAME, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise TTLabInputError(f"{param} {p} is in use by another ttlab process; wait for it to finish (re-running "
                              f"afterwards resumes from its finished work) or choose another {param}.",
                              params=(param,)) from None
    try:
        yield p
    except BaseException:
        # refused before writing anything (bad input, an estimate above the limit): the folder this call created
        # goes again, as a command refused before any work leaves no trace
        if created and [q.name for q in p.iterdir()] == [LOCK_NAME]:
            (p / LOCK_NAME).unlink()
            p.rmdir()
        raise
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def check_plot_file(plot: str | os.PathLike, *, out: str | os.PathLike | None = None,
                    inputs: Iterable[str | os.PathLike] = (), overwrite: bool | None = None) -> Path:
    """A command's figure ``plot``, before any work: an image format matplotlib writes (:func:`check_plot_suffix`), a
    file that may be written (:func:`check_out_file`, naming ``plot``), and not the command's JSON ``out``."""
    check_plot_suffix(plot)
    path = check_out_file(plot, param="plot", inputs=inputs, overwrite=overwrite)
    if out is not None and path.resolve() == Path(out).resolve():
        raise TTLabInputError(f"plot and out are the same file {plot}; give the figure its own name",
                              params=("plot", "out"))
    return path
