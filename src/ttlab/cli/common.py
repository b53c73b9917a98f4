"""Shared helpers for CLI modules: consoles, printing what the library returns (JSON, summary lines, views),
the option aliases several commands share (:func:`Setting`: the option that sets a config field; :data:`Json`),
and the one parser of comma-separated option values (:func:`parse_list`; the library takes typed values and never
parses option text).

May import: typer, rich, :mod:`ttlab.configs`, :mod:`ttlab.errors`, :mod:`ttlab.provenance`. Not typer commands or
other CLI modules.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Optional, get_type_hints

import typer
from rich.console import Console, ConsoleDimensions, RenderableType
from rich.table import Table
from rich.text import Text
from typer.core import TyperCommand, TyperGroup

from ttlab.configs import field_help
from ttlab.errors import Terminated, TTLabInputError
from ttlab.markup import markup, plain
from ttlab.provenance import to_json

LOG_WIDTH = 250
"""Width of a console whose stream is not a terminal (a log file, a pipe, CI, SLURM) while ``$COLUMNS`` is unset: wide
enough for every table at its natural width (rich's default there, 80 columns, cut cells to ``1.0000…``)."""


class LogConsole(Console):
    """A rich console that keeps its output whole in logs: on a terminal, the terminal's width (or ``$COLUMNS``);
    without one, ``$COLUMNS`` when set, else :data:`LOG_WIDTH`. Decided at each print (pytest and shells swap the
    stream after start-up), on the stream itself: ``FORCE_COLOR`` in CI keeps the colours, not rich's 80 columns."""

    @property  # type: ignore[override]
    def size(self) -> ConsoleDimensions:
        size = Console.size.fget(self)  # type: ignore[attr-defined]
        isatty = getattr(self.file, "isatty", None)
        try:
            terminal = bool(isatty and isatty())
        except ValueError:  # a closed stream
            terminal = False
        if terminal:
            return size
        columns = self._environ.get("COLUMNS", "")  # read at each print: rich reads it once, at start-up
        return ConsoleDimensions(int(columns) if columns.isdigit() and int(columns) > 0 else LOG_WIDTH, size.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]


console = LogConsole(stderr=False)
console_err = LogConsole(stderr=True)

OptInt, OptFloat, OptStr, OptPath = Optional[int], Optional[float], Optional[str], Optional[Path]
Json = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")]

_type_hints = cache(get_type_hints)


def bare_flags(params: Iterable[Any]) -> None:
    """Boolean flags among the click ``params`` show no value placeholder in ``--help`` (typer writes ``<bool>`` for a
    flag such as ``--quick``, which takes no value): their metavar becomes empty."""
    for param in params:
        if getattr(param, "is_bool_flag", False) and param.metavar is None:
            param.metavar = ""


class _BareFlags:
    """Boolean flags, ``--help`` included, with no value placeholder (:func:`bare_flags`): a mix-in of a typer command
    or group."""

    params: list[Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        bare_flags(self.params)

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)  # type: ignore[misc]
        bare_flags([option])
        return option


class FlagCommand(_BareFlags, TyperCommand):
    """A typer command whose boolean flags, ``--help`` included, show no value placeholder (:func:`bare_flags`)."""


class FlagGroup(_BareFlags, TyperGroup):
    """A typer group whose boolean flags, ``--help`` included, show no value placeholder (:func:`bare_flags`)."""


def Setting(cls: type, name: str, flag: str | None = None, text: str | None = None, *, kind: Any = None,
            optional: bool = False) -> Any:
    """``Annotated[type, typer.Option(...)]`` of the option that sets field ``name`` of the dataclass ``cls``: the
    field's type (or ``kind``; ``optional``: None allowed, to keep a preset's value), flag ``--name-with-dashes`` (or
    ``flag``), help: the field's description (:func:`ttlab.configs.setting`, or ``text``). The parameter's default is
    the field's."""
    hint = kind or _type_hints(cls)[name]
    return Annotated[Optional[hint] if optional else hint,
                     typer.Option(flag or "--" + name.replace("_", "-"), help=text or field_help(cls, name))]


def print_json(obj: Any) -> None:
    """Print one JSON object on stdout (machine-readable output of ``--json``)."""
    sys.stdout.write(to_json(obj) + "\n")
    sys.stdout.flush()


def print_view(view: Iterable[RenderableType], err: bool = False) -> None:
    """Print a library view (tables and :class:`rich.text.Text` lines, e.g. :func:`ttlab.ntp.views.run_view`) on
    stdout or (``err``) stderr; a line is not wrapped at the console's width (the terminal wraps it), and a table too
    wide for it folds a cell onto more lines rather than cutting it (``1.0000…``): a number is printed whole."""
    for item in view:
        if isinstance(item, Table):
            for column in item.columns:
                column.overflow = "fold" if column.overflow == "ellipsis" else column.overflow
        (console_err if err else console).print(item, soft_wrap=isinstance(item, Text))


def print_lines(lines: Iterable[str], err: bool = False) -> None:
    """Print the library's summary lines as they are (no markup, no highlighting), on stdout or (``err``) stderr."""
    print_view((plain(line) for line in lines), err)


def print_warnings(notes: Iterable[str]) -> None:
    """One ``warning: …`` line per note on stderr; a note's text is printed as it is (brackets are not markup)."""
    print_view((Text.assemble(("warning:", "yellow"), " ", plain(note)) for note in notes), err=True)


def print_causes(failures: Iterable[tuple[str, str]], limit: int = 5) -> None:
    """One line per failure, ``  name: error`` on stderr (at most ``limit``, then how many more), so the cause
    of a failure (a full disk, a missing file) is on the console, not only inside a results file."""
    items = list(failures)
    more = [f"  … and {len(items) - limit} more"] if len(items) > limit else []
    print_lines([*(f"  {name}: {error}" for name, error in items[:limit]), *more], err=True)


INTERRUPT_EXIT = 130
"""Exit code of a command stopped by Ctrl-C (128 + SIGINT, as shells report it)."""

RESUME = "re-run the same command to resume (finished work is reused)"
START_AGAIN = "nothing was written; re-run the same command to start again"
WRITTEN_WHOLE = ("nothing was left half-written (this command writes each file whole, at its end); re-run the same "
                 "command to start again")
"""What an interrupt keeps in a command without a message of its own (:func:`stops_cleanly`)."""


TERMINATE_EXIT = 143
"""Exit code of a command stopped by SIGTERM (128 + 15)."""


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated(f"signal {signum}")


@contextmanager
def exit_on_interrupt(how: str = RESUME) -> Iterator[None]:
    """Ctrl-C (KeyboardInterrupt) inside the block: print ``interrupted — {how}`` on stderr and exit 130; SIGTERM
    (:class:`ttlab.errors.Terminated`, raised by a handler installed for the block): ``terminated — {how}``, exit 143.

    The one place long commands turn an interrupt into a message: the library below has already
    recorded the interrupted work as unfinished (never as a result), so ``how`` says what a re-run does."""
    import signal
    import threading

    main = threading.current_thread() is threading.main_thread()
    old = signal.signal(signal.SIGTERM, _raise_terminated) if main else None
    try:
        yield
    except Terminated:
        console_err.print(markup("[yellow]terminated[/] — {}", how), highlight=False, soft_wrap=True)
        raise SystemExit(TERMINATE_EXIT) from None
    except KeyboardInterrupt:
        console_err.print(markup("[yellow]interrupted[/] — {}", how), highlight=False, soft_wrap=True)
        raise SystemExit(INTERRUPT_EXIT) from None
    finally:
        if main:
            signal.signal(signal.SIGTERM, old)


def stops_cleanly(command: Callable[..., Any]) -> Callable[..., Any]:
    """``command`` inside :func:`exit_on_interrupt` with :data:`WRITTEN_WHOLE`: every command prints one line on Ctrl-C
    or SIGTERM saying what was kept (a command with more to say wraps its own work, which answers first)."""
    import functools

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        with exit_on_interrupt(WRITTEN_WHOLE):
            return command(*args, **kwargs)

    run.stops_cleanly = True  # type: ignore[attr-defined]
    return run


HEARTBEAT_SECONDS = 30.0
"""Without a terminal, a "still running" line is printed after this long with no progress."""
LINE_SECONDS = 1.0
"""Without a terminal, a stage's progress lines are at least this far apart (a new stage and its end always print)."""


@contextmanager
def held(out: Path) -> Iterator[None]:
    """Hold the output folder ``out`` for the block (:func:`ttlab.outputs.hold_out_dir`: a second process on it is
    refused at once). Under ``torchrun`` only rank 0 holds it: the ranks of one run share their folder."""
    import os

    from ttlab.outputs import hold_out_dir

    if int(os.environ.get("RANK", "0") or 0) != 0:
        yield
        return
    with hold_out_dir(out):
        yield


def _of(done: int, total: int | None) -> str:
    """``3/10``, or ``3`` while the total is unknown."""
    return f"{done}" if total is None else f"{done}/{total}"


class _LineProgress:
    """Progress where a live bar shows nothing (stderr is a file or a pipe): one line whenever a stage
    advances, and a "still running" line after every :data:`HEARTBEAT_SECONDS` without one, so a long
    step (one large model of a suite) is never minutes of silence."""

    def __init__(self) -> None:
        import threading

        self.t0 = self.last = time.monotonic()
        self.state: tuple[str, int, int | None] | None = None
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._beat, daemon=True)

    def __enter__(self) -> "_LineProgress":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        self.thread.join()

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        with self.lock:
            if self.state == (stage, done, total):
                return
            now = time.monotonic()
            # a new stage, the end of one, or a second since the last line: a fast counter is not a line per step
            due = self.state is None or self.state[0] != stage or done == total or now - self.last >= LINE_SECONDS
            self.state = (stage, done, total)
            if not due:
                return
            self.last = now
        console_err.print(plain(f"{stage}: {_of(done, total)} ({self.last - self.t0:.0f} s)"), highlight=False)

    def _beat(self) -> None:
        while not self.stop.wait(min(1.0, HEARTBEAT_SECONDS / 4)):
            with self.lock:
                now = time.monotonic()
                if self.state is None or now - self.last < HEARTBEAT_SECONDS:
                    continue
                self.last = now
                stage, done, total = self.state
            console_err.print(plain(f"{stage}: still running, {_of(done, total)} done ({now - self.t0:.0f} s)"),
                              highlight=False)


def run_with_progress(fn: Callable[..., Any], *, on_interrupt: str = RESUME, **kwargs: Any) -> Any:
    """``fn(progress=..., **kwargs)`` with a transient progress bar on stderr, one line per stage
    (``progress(stage, done, total)``, the callback of the sweeps and the suite); without a terminal,
    plain lines and a periodic "still running" line instead (:class:`_LineProgress`). Ctrl-C exits 130
    with ``on_interrupt``, the line of :func:`exit_on_interrupt` saying what was kept."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    if not console_err.is_terminal:
        with exit_on_interrupt(on_interrupt), _LineProgress() as lines:
            return fn(progress=lines, **kwargs)
    bar = Progress(TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=console_err, transient=True)
    with exit_on_interrupt(on_interrupt), bar:
        bar.add_task("total", total=None)  # its clock runs between stages too (fits, plots): never a frozen screen
        stages: dict[str, Any] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in stages:
                stages[stage] = bar.add_task(stage, total=total)
            bar.update(stages[stage], completed=done, total=total)

        return fn(progress=progress, **kwargs)


def _to_int(text: str) -> int:
    """An integer, also written as an integral float (``1e5``)."""
    try:
        return int(text)
    except ValueError:
        value = float(text)
        if not value.is_integer():
            raise ValueError(text) from None
        return int(value)


_ITEMS: dict[type, tuple[Callable[[str], Any], str, str]] = {
    int: (_to_int, "integers", "0,64,256"),
    float: (float, "numbers", "1e-3,3e-3"),
    str: (str, "names", "a,b"),
}


def parse_list(text: str | None, what: str, item: type = int) -> tuple[Any, ...] | None:
    """The one parser of comma-separated option values: ``"0,64,256"`` → (0, 64, 256) for ``item=int``
    (``1e5`` is accepted as an integer), ``float`` or ``str``; spaces are ignored. None or "" → None; a list
    without values or with a bad value is a clear error naming the option ``what``."""
    if item not in _ITEMS:
        raise TypeError(f"parse_list: item must be int, float or str, got {item!r}")
    if text is None or text == "":
        return None
    convert, kind, example = _ITEMS[item]
    parts = [x.strip() for x in text.split(",") if x.strip()]
    if not parts:
        raise TTLabInputError(f"{what} must list at least one value, got {text!r}.")
    try:
        return tuple(convert(x) for x in parts)
    except ValueError:
        raise TTLabInputError(f"{what} must be comma-separated {kind} (e.g. {example}), got {text!r}.") from None
