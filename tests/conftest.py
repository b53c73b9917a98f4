"""Shared test helpers."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from ttlab.cli import main


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    def json(self):
        return json.loads(self.out)


@pytest.fixture
def run_cli(capsys):
    """Run ``ttlab ARGS…`` in-process; returns exit code, stdout and stderr."""

    def _run(*args: str) -> CliResult:
        capsys.readouterr()
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return _run


BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@contextmanager
def benchmark_module(filename: str) -> Iterator[object]:
    """The script ``benchmarks/<filename>`` loaded as a module (its sibling imports work), unloaded after."""
    name = f"{Path(filename).stem}_for_test"
    before = set(sys.modules)
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / filename)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod  # dataclasses look their module up
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
        yield mod
    finally:
        sys.path.remove(str(BENCHMARKS))
        for added in set(sys.modules) - before:  # the script and the siblings it imported
            if added == name or getattr(sys.modules[added], "__file__", "") and \
                    Path(sys.modules[added].__file__).parent == BENCHMARKS:
                sys.modules.pop(added, None)


def view_text(view: list, width: int = 200, cells: bool = False) -> str:
    """A library view (``ttlab.<package>.views``) rendered as the CLI prints it (each item on its own, as
    :func:`ttlab.cli.common.print_view` does), whitespace collapsed (words one space apart); ``cells``: table
    borders dropped too, so a row reads as its cells' words."""
    import io

    from rich.console import Console

    c = Console(record=True, width=width, file=io.StringIO())
    for item in view:
        c.print(item)
    text = c.export_text()
    return " ".join((text.replace("│", " ").replace("┃", " ") if cells else text).split())


def cli_params() -> list[tuple[str, object]]:
    """``(command, parameter)`` for every parameter of every command of ``ttlab`` (``"id compare"``, its click
    parameter), read from the command line's own definition."""
    import typer

    import ttlab.cli as cli

    def walk(cmd, path):
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                yield from walk(sub, [*path, name])
        else:
            yield from ((" ".join(path), p) for p in cmd.params)

    return list(walk(typer.main.get_command(cli.app), []))
