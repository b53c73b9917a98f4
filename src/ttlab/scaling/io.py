"""Reading scaling-law measurements from CSV files, with precise error messages.
"""

from __future__ import annotations

import csv
import math
import os
from pathlib import Path

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.io import is_number

__all__ = ["read_columns_csv", "read_measurements", "read_run_curve", "read_sweep_points"]


def read_columns_csv(
    path: str | os.PathLike,
    columns: list[str] | tuple[str, ...],
    *,
    positive: bool = True,
) -> dict[str, np.ndarray]:
    """Read numeric ``columns`` from a CSV file with a header row (a UTF-8 byte-order mark is ignored).

    A file whose first row is all numbers has no header: that row is data and the columns are named
    by their 0-based index ("0", "1", …); asking for a name then is an error saying so (a row is
    never dropped; the error names ``x`` and ``y``, the column parameters of :func:`ttlab.scaling.fit_csv.fit_csv`).
    Blank lines are skipped. Errors name the file and, for bad values, the column and the file's
    line numbers (line 1 is the header): missing file, empty file, missing column (listing the
    available ones), empty or non-numeric or non-finite cells, and (``positive=True``) values
    ≤ 0, which a log-log fit cannot use.
    """
    path = Path(path)
    if not path.exists():
        raise TTLabInputError(f"CSV file not found: {path}")
    if not path.is_file():
        raise TTLabInputError(f"not a file: {path}")
    if not columns:
        raise TTLabInputError("no columns requested")
    header, rows = _read_rows(path, columns)
    missing = [c for c in columns if c not in header]
    if missing:
        raise TTLabInputError(
            f"{path}: column(s) {', '.join(repr(c) for c in missing)} not found; "
            f"available columns: {', '.join(repr(c) for c in header)}"
        )
    for col in columns:
        where = [i for i, h in enumerate(header) if h == col]
        if len(where) > 1:
            raise TTLabInputError(f"{path}: column {col!r} appears {len(where)} times in the header (positions "
                                  f"{', '.join(str(i + 1) for i in where)}); rename one so that {col!r} names one column")
    if not rows:
        raise TTLabInputError(f"{path} has a header but no data rows")
    return {col: _column(path, rows, header.index(col), col, positive) for col in columns}


def _read_rows(path: Path, columns: list[str] | tuple[str, ...]) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header (the columns' 0-based indices when the first row is data) and the non-blank data rows with
    their line numbers."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            reader = csv.reader(fh)
            header = None
            first_line = 1
            rows: list[tuple[int, list[str]]] = []
            for row in reader:
                if not row or all(not c.strip() for c in row):
                    continue
                if header is None:
                    header = [c.strip() for c in row]
                    first_line = reader.line_num
                    continue
                rows.append((reader.line_num, row))
    except UnicodeDecodeError as exc:
        raise TTLabInputError(f"{path} is not a UTF-8 text CSV file ({exc.reason})") from None
    except csv.Error as exc:
        raise TTLabInputError(f"{path} is not a valid CSV file: {exc}") from None
    if header is None:
        raise TTLabInputError(f"{path} is empty: expected a header row naming the columns")
    if all(is_number(c) for c in header):
        # no header: the first row is data. Columns are then named by their 0-based index.
        indices = [str(j) for j in range(len(header))]
        if not all(c in indices for c in columns):
            raise TTLabInputError(
                f"{path} has no header row (its first row is all numbers: {', '.join(header[:6])}); add a header "
                f"naming the columns, or select columns by 0-based index (e.g. x=0, y=1; this file has "
                f"{len(header)} columns)", params=("x", "y")
            )
        rows.insert(0, (first_line, [c for c in header]))
        header = indices
    return header, rows


def _column(path: Path, rows: list[tuple[int, list[str]]], j: int, col: str, positive: bool) -> np.ndarray:
    """Column ``j`` (named ``col``) of ``rows`` as floats; errors list the bad cells' line numbers."""
    values, non_numeric, non_positive = [], [], []
    for line, row in rows:
        cell = row[j].strip() if j < len(row) else ""
        try:
            v = float(cell)
        except ValueError:
            non_numeric.append(f"line {line} ({cell!r})" if cell else f"line {line} (empty)")
            continue
        if not math.isfinite(v):
            non_numeric.append(f"line {line} ({cell!r})")
            continue
        if positive and v <= 0:
            non_positive.append(f"line {line} ({cell})")
        values.append(v)
    if non_numeric:
        raise TTLabInputError(
            f"{path}: column {col!r} has non-numeric or non-finite values at "
            f"{_shorten(non_numeric)}"
        )
    if non_positive:
        raise TTLabInputError(
            f"{path}: column {col!r} must be > 0 for a log-log fit; non-positive values at "
            f"{_shorten(non_positive)}"
        )
    return np.asarray(values, dtype=float)


def _shorten(items: list[str], limit: int = 10) -> str:
    text = ", ".join(items[:limit])
    if len(items) > limit:
        text += f" and {len(items) - limit} more"
    return text


def read_sweep_points(path: str | os.PathLike, columns: list[str] | tuple[str, ...]) -> dict[str, np.ndarray]:
    """Numeric ``columns`` of the points of an ``lm data-sweep`` / ``lm model-sweep`` result (``path``: its
    ``results.json`` or the folder holding it): each point's numeric fields (``train_tokens``,
    ``params_non_embedding``, ``n_params``, ``loss`` — the sweep's chosen loss, seeds averaged — …) and the metrics
    under its ``all_metrics`` (``test_loss``, ``mean_5_lowest_test`` …), one row per point."""
    from ttlab.provenance import read_json

    p = Path(path)
    file = p / "results.json" if p.is_dir() else p
    if not file.is_file():
        raise TTLabInputError(f"{p}: no sweep result here (expected the results.json of ttlab lm data-sweep or "
                              "model-sweep, or its folder)")
    try:
        payload = read_json(file)
    except (OSError, ValueError) as exc:
        raise TTLabInputError(f"{file}: not a readable JSON file ({exc})") from None
    points = payload.get("points") if isinstance(payload, dict) else None
    if not isinstance(points, list) or not points or not all(isinstance(q, dict) for q in points):
        raise TTLabInputError(f"{file} holds no sweep points (a 'points' list): give the results.json of ttlab lm "
                              "data-sweep or model-sweep, or a CSV")
    rows = [{**{k: v for k, v in q.items() if k != "all_metrics"}, **(q.get("all_metrics") or {})} for q in points]
    numeric = sorted({k for r in rows for k, v in r.items() if isinstance(v, (int, float)) and not isinstance(v, bool)})
    out = {}
    for col in columns:
        if col not in numeric:
            raise TTLabInputError(f"{file}: the sweep points have no numeric field {col!r}; they have "
                                  f"{', '.join(numeric)}", params=("x", "y"))
        values = np.array([r.get(col, math.nan) for r in rows], dtype=float)
        bad = [i for i, v in enumerate(values) if not (math.isfinite(v) and v > 0)]
        if bad:
            raise TTLabInputError(f"{file}: {col} must be positive and finite in every point; not in points {bad[:10]}")
        out[col] = values
    return out


def read_run_curve(path: str | os.PathLike, columns: list[str] | tuple[str, ...]) -> dict[str, np.ndarray]:
    """``columns`` of a training run's learning curve (``ttlab lm train``'s ``metrics.csv``, or the run folder holding
    it): one row per evaluation, the evaluation at iteration 0 left out — nothing was trained yet (0 tokens seen, no
    training loss)."""
    p = Path(path)
    file = p / "metrics.csv" if p.is_dir() else p
    rows = [r for r in _dict_rows(file) if r.get("iter") not in ("0", "0.0")]
    if not rows:
        raise TTLabInputError(f"{file} has no evaluation after iteration 0: train longer (see --eval-interval)")
    out = {}
    for col in columns:
        if col not in rows[0]:
            raise TTLabInputError(f"{file} has no column {col!r}; its columns: {', '.join(rows[0])}", params=("x", "y"))
        try:
            values = np.array([float(r[col]) for r in rows])
        except ValueError:
            raise TTLabInputError(f"{file}: column {col!r} holds a value that is not a number") from None
        bad = np.flatnonzero(~(np.isfinite(values) & (values > 0)))
        if bad.size:
            raise TTLabInputError(f"{file}: {col} must be positive and finite after iteration 0; not in evaluations "
                                  f"{bad[:10].tolist()}")
        out[col] = values
    return out


def _dict_rows(file: Path) -> list[dict[str, str]]:
    """The rows of a CSV file with a header, as dicts (a clear error when it cannot be read)."""
    try:
        with open(file, newline="", encoding="utf-8-sig") as fh:
            return list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise TTLabInputError(f"{file}: not a readable CSV file ({exc})") from None


def read_measurements(path: str | os.PathLike, columns: list[str] | tuple[str, ...]) -> dict[str, np.ndarray]:
    """``columns`` of a CSV file (:func:`read_columns_csv`); of a sweep's or a suite's points when ``path`` is a folder
    holding ``results.json`` or a ``.json`` file (:func:`read_sweep_points`); of a training run's learning curve when
    it is a run folder or a file named ``metrics.csv`` (:func:`read_run_curve`)."""
    p = Path(path)
    if (p.is_dir() and (p / "metrics.csv").is_file() and not (p / "results.json").is_file()) or p.name == "metrics.csv":
        return read_run_curve(p, columns)
    if p.is_dir() or p.suffix.lower() == ".json":
        return read_sweep_points(p, columns)
    return read_columns_csv(p, columns)
