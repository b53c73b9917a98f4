"""Shared test helpers."""

from __future__ import annotations

import json
from dataclasses import dataclass

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
