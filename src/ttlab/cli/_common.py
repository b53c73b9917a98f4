"""Shared helpers for CLI modules: consoles, JSON output."""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console

from ttlab.provenance import to_json

console = Console(stderr=False)
console_err = Console(stderr=True)


def print_json(obj: Any) -> None:
    """Print one JSON object on stdout (machine-readable output of ``--json``)."""
    sys.stdout.write(to_json(obj) + "\n")
    sys.stdout.flush()
