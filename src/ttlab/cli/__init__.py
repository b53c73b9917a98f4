"""The ``ttlab`` command line: a thin layer over the library.

Each domain registers a sub-command group from its own module. Errors caused by bad input
(:class:`ttlab.errors.TTLabInputError`) are printed as a clear message with exit code 2.
"""

from __future__ import annotations

import errno
import sys
from typing import Annotated

import typer

from ttlab.cli.common import FlagCommand, FlagGroup, console_err, stops_cleanly
from ttlab.errors import TTLabInputError
from ttlab.markup import markup

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


def version() -> str:
    """The installed distribution's version (``importlib.metadata``), else ``ttlab.__version__`` (a source tree run
    without installing), else ``unknown``."""
    from importlib import metadata

    import ttlab

    try:
        return metadata.version("ttlab")
    except metadata.PackageNotFoundError:
        return str(getattr(ttlab, "__version__", "unknown"))


def _print_version(value: bool) -> None:
    if value:
        sys.stdout.write(f"ttlab {version()}\n")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: Annotated[bool, typer.Option("--version", help="Print ttlab's version and exit.", is_eager=True,
                                               callback=_print_version)] = False,
) -> None:
    """The options of ``ttlab`` itself (before a command)."""


def _finish(group: typer.Typer) -> None:
    """Every command of ``group`` (and its sub-groups) prints one line on an interrupt (:func:`stops_cleanly`), and
    every command and group shows its boolean flags without a value placeholder (:class:`FlagCommand`,
    :class:`FlagGroup`)."""
    group.info.cls = FlagGroup
    for command in group.registered_commands:
        if command.callback is not None:
            command.callback = stops_cleanly(command.callback)
        if command.cls in (None, typer.core.TyperCommand):
            command.cls = FlagCommand
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            _finish(sub.typer_instance)


_finish(app)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point; ``argv`` defaults to ``sys.argv[1:]``.

    Always ends with ``SystemExit``: 0 on success, 1 for a negative verdict a command reports
    (e.g. a dataset that violates the assumptions), 2 for bad input.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        app(args=args, prog_name="ttlab")
    except TTLabInputError as exc:
        console_err.print(markup("[bold red]error:[/] {}", with_flags(exc, command_flags(args))), highlight=False,
                          soft_wrap=True)
        sys.exit(2)
    except OSError as exc:
        # The output checks run before any work; this catches what only shows when writing
        # (a disk that fills up, a folder made read-only meanwhile): one line, not a traceback.
        if exc.errno not in _FILE_ERRNOS:
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        console_err.print(markup("[bold red]error:[/] {}", where + (exc.strerror or str(exc))), highlight=False,
                          soft_wrap=True)
        for note in getattr(exc, "__notes__", ()):  # what had happened before the write failed (a part's own cause)
            console_err.print(markup("  {}", note), highlight=False, soft_wrap=True)
        sys.exit(2)


FLAGS = {"out_dir": "--out", "errors": "--decode-errors"}
"""Library parameter names whose command-line flag is not ``--`` + the name with dashes, in any command (a command's own
parameters come first: :func:`command_flags`)."""


def command_flags(args: list[str]) -> dict[str, str]:
    """The flags of the command ``args`` invoke, by parameter name (``{"vocab_size": "--vocab"}`` for ``ntp run``);
    {} when ``args`` name no command."""
    cmd = typer.main.get_command(app)  # a click command (typer may carry its own copy of click: duck-typed here)
    rest = list(args)
    while hasattr(cmd, "get_command"):
        name = next((a for a in rest if not a.startswith("-")), None)
        sub = cmd.get_command(cmd.context_class(cmd), name) if name else None
        if sub is None:
            return {}
        cmd, rest = sub, rest[rest.index(name) + 1:]
    return {p.name: max(p.opts, key=len) for p in cmd.params if p.param_type_name == "option" and p.name and p.opts}


def with_flags(exc: TTLabInputError, flags: dict[str, str] | None = None) -> str:
    """The error's message, followed by the command-line flags of the parameters it names (``exc.params``): the
    invoked command's (``flags``, from :func:`command_flags`), else :data:`FLAGS`, else ``--`` + the name with dashes.
    When the command's flags are known, a flag it does not have is left out (a library parameter with no flag of its
    own in this command, such as the budgets ``compute`` that ``scaling isoflop`` reads from its ``--c`` column)."""
    own = set((flags or {}).values())
    known = {**FLAGS, **(flags or {})}
    named = [known.get(p, "--" + p.replace("_", "-")) for p in getattr(exc, "params", ())]
    flags = [f for f in dict.fromkeys(named) if not own or f in own]
    if not flags:
        return str(exc)
    return f"{exc} (command-line option{'s' if len(flags) > 1 else ''}: {', '.join(flags)})"


_FILE_ERRNOS = {errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT, errno.EISDIR, errno.ENOTDIR,
                errno.EEXIST, errno.ENOENT, errno.ENAMETOOLONG}
