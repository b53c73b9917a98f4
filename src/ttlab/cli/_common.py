"""Shared helpers for CLI modules: consoles, JSON output, comma-separated option values."""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console

from ttlab.errors import TTLabInputError
from ttlab.provenance import to_json

console = Console(stderr=False)
console_err = Console(stderr=True)


def print_json(obj: Any) -> None:
    """Print one JSON object on stdout (machine-readable output of ``--json``)."""
    sys.stdout.write(to_json(obj) + "\n")
    sys.stdout.flush()


def parse_ints(text: str | None, what: str) -> tuple[int, ...] | None:
    """``"0,64,256"`` → (0, 64, 256); None or "" → None; anything else is a clear error naming ``what``."""
    if not text:
        return None
    try:
        return tuple(int(x) for x in text.replace(" ", "").split(",") if x)
    except ValueError:
        raise TTLabInputError(f"{what} must be comma-separated integers (e.g. 0,64,256), got {text!r}.") from None


def parse_floats(text: str | None, what: str) -> tuple[float, ...] | None:
    """``"1e-3,3e-3"`` → (0.001, 0.003); None or "" → None; anything else is a clear error naming ``what``."""
    if not text:
        return None
    try:
        return tuple(float(x) for x in text.replace(" ", "").split(",") if x)
    except ValueError:
        raise TTLabInputError(f"{what} must be comma-separated numbers (e.g. 1e-3,3e-3), got {text!r}.") from None
