"""The ``ttlab`` command line: a thin layer over the library.

Each domain registers a sub-command group from its own module. Errors caused by bad input
(:class:`ttlab.errors.TTLabInputError`) are printed as a clear message with exit code 2.

Imports: typer, rich, ttlab.errors and the command modules ttlab.cli.*; nothing in the library
imports ttlab.cli (only ``python -m ttlab.lm``).
"""

from __future__ import annotations

import errno
import sys

import typer
from rich.markup import escape

from ttlab.cli._common import console_err
from ttlab.errors import TTLabInputError

app = typer.Typer(
    name="ttlab",
    help="ttlab — the transformer theory lab: next-token-prediction dynamics (paper A) and "
    "intrinsic dimension / scaling laws (paper B).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

from ttlab.cli import id as _id  # noqa: E402
from ttlab.cli import lm as _lm  # noqa: E402
from ttlab.cli import ntp as _ntp  # noqa: E402
from ttlab.cli import reproduce as _reproduce  # noqa: E402
from ttlab.cli import scaling as _scaling  # noqa: E402

app.add_typer(_ntp.app, name="ntp")
app.add_typer(_id.app, name="id")
app.add_typer(_scaling.app, name="scaling")
app.add_typer(_lm.app, name="lm")
app.command("reproduce")(_reproduce.reproduce)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point; ``argv`` defaults to ``sys.argv[1:]``.

    Always ends with ``SystemExit``: 0 on success, 1 for a negative verdict a command reports
    (e.g. a dataset that violates the assumptions), 2 for bad input.
    """
    try:
        app(args=argv, prog_name="ttlab")
    except TTLabInputError as exc:
        console_err.print(f"[bold red]error:[/] {escape(with_flags(exc))}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except OSError as exc:
        # The output checks run before any work; this catches what only shows when writing
        # (a disk that fills up, a folder made read-only meanwhile): one line, not a traceback.
        if exc.errno not in _FILE_ERRNOS:
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        console_err.print(f"[bold red]error:[/] {escape(where + (exc.strerror or str(exc)))}", highlight=False,
                          soft_wrap=True)
        sys.exit(2)


FLAGS = {"out_dir": "--out"}
"""Library parameter names whose command-line flag is not ``--`` + the name with dashes."""


def with_flags(exc: TTLabInputError) -> str:
    """The error's message, followed by the command-line flags of the parameters it names (``exc.params``)."""
    flags = [FLAGS.get(p, "--" + p.replace("_", "-")) for p in getattr(exc, "params", ())]
    if not flags:
        return str(exc)
    return f"{exc} (command-line option{'s' if len(flags) > 1 else ''}: {', '.join(flags)})"


_FILE_ERRNOS = {errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT, errno.EISDIR, errno.ENOTDIR,
                errno.EEXIST, errno.ENOENT, errno.ENAMETOOLONG}
