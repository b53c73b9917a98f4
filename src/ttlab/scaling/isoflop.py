"""Hoffmann et al.'s Approach 2: IsoFLOP profiles — the compute-optimal model size read off parabolas, without a
parametric loss law.

Runs are grouped by their compute budget C (a column of the CSV). Within one budget, the loss against log N is fitted
by a parabola L ≈ p₀ + p₁·log N + p₂·(log N)², whose vertex log N* = −p₁/(2p₂) is that budget's optimal size (it
must lie inside the budget's measured sizes: a vertex outside them is an extrapolation and is reported, not used,
and a parabola opening downwards has no minimum). Then log N_opt = a·log C + c across the budgets gives the
allocation exponent a (N_opt ∝ C^a; D_opt ∝ C^(1−a) when C = k·N·D). Intervals: a pairs bootstrap within each
budget (its runs resampled, the parabolas and the line fitted again), percentile intervals.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ttlab.errors import TTLabInputError
from ttlab.validation import check_int

__all__ = ["IsoflopResult", "isoflop_file", "isoflop_frontier"]

MIN_RUNS_PER_BUDGET = 3
"""A parabola needs three sizes per budget."""
MIN_BUDGETS = 2
"""A slope needs two budgets (three or more to see anything but the slope)."""


@dataclass(frozen=True)
class IsoflopResult:
    """The optimal size per budget (``budgets``: ``compute``, ``n_opt`` with ``ci``, ``loss_opt``, ``n_runs``, and
    ``note`` when a budget gave no minimum) and the exponent ``a`` of N_opt ∝ C^a (``{"value", "ci"}``)."""

    a: dict[str, Any]
    coefficient: float
    budgets: list[dict[str, Any]]
    n_replicates: int
    ci_level: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary of every field."""
        return asdict(self)


def _vertex(log_n: np.ndarray, loss: np.ndarray) -> tuple[float, float] | None:
    """(log N*, loss at it) of the parabola through the points, or None without a minimum inside their range."""
    if np.unique(log_n).size < MIN_RUNS_PER_BUDGET:
        return None
    p2, p1, p0 = np.polyfit(log_n, loss, 2)
    if not p2 > 0:
        return None
    v = -p1 / (2 * p2)
    if not log_n.min() <= v <= log_n.max():
        return None
    return float(v), float(p0 + p1 * v + p2 * v * v)


def _slope(log_c: np.ndarray, log_n: np.ndarray) -> tuple[float, float]:
    """(a, log c) of log N_opt = a·log C + log c."""
    a, c = np.polyfit(log_c, log_n, 1)
    return float(a), float(c)


def isoflop_frontier(n: ArrayLike, compute: ArrayLike, loss: ArrayLike, *, bootstrap: int = 400, seed: int = 0,
                     ci_level: float = 0.95) -> IsoflopResult:
    """Approach 2 on runs of sizes ``n`` at budgets ``compute`` with losses ``loss`` (see the module doc)."""
    n, c, y = (np.asarray(v, dtype=float) for v in (n, compute, loss))
    if not (n.ndim == c.ndim == y.ndim == 1 and n.size == c.size == y.size and n.size > 0):
        raise TTLabInputError("n, compute and loss must be one-dimensional columns of one length")
    for name, v in (("n", n), ("compute", c), ("loss", y)):
        bad = np.flatnonzero(~(np.isfinite(v) & (v > 0)))
        if bad.size:
            raise TTLabInputError(f"{name} must be positive and finite; not at rows {bad[:10].tolist()}", params=(name,))
    check_int(bootstrap, "bootstrap", 0, 100_000)
    check_int(seed, "seed", 0)
    if not 0 < ci_level < 1:
        raise TTLabInputError(f"ci_level must be in (0, 1), got {ci_level!r}", params=("ci_level",))
    levels = np.unique(c)
    groups = [np.flatnonzero(c == level) for level in levels]
    budgets, used = [], []
    for level, idx in zip(levels, groups):
        v = _vertex(np.log(n[idx]), y[idx])
        entry: dict[str, Any] = {"compute": float(level), "n_runs": int(idx.size), "n_opt": None, "loss_opt": None}
        if v is None:
            entry["note"] = (f"no minimum inside the measured sizes (fewer than {MIN_RUNS_PER_BUDGET} sizes, a parabola "
                             "opening downwards, or its vertex beyond the sizes): add runs around the optimum")
        else:
            entry["n_opt"], entry["loss_opt"] = {"value": float(np.exp(v[0])), "ci": None}, v[1]
            used.append(len(budgets))
        budgets.append(entry)
    if len(used) < MIN_BUDGETS:
        raise TTLabInputError(f"{len(used)} budget(s) gave an optimum; a slope needs at least {MIN_BUDGETS} budgets with "
                              f"≥ {MIN_RUNS_PER_BUDGET} sizes around their optimum", params=("compute",))
    log_c = np.log([budgets[i]["compute"] for i in used])
    a, log_coef = _slope(log_c, np.log([budgets[i]["n_opt"]["value"] for i in used]))
    draws_a, draws_n = [], []
    rng = np.random.default_rng(seed)
    for _ in range(bootstrap):
        vs = [_vertex(np.log(n[g]), y[g]) for g in (rng.choice(groups[i], groups[i].size) for i in used)]
        if all(v is not None for v in vs):
            log_opt = np.array([v[0] for v in vs])  # type: ignore[index]
            draws_a.append(_slope(log_c, log_opt)[0])
            draws_n.append(np.exp(log_opt))
    q = (1 - ci_level) / 2
    a_ci = np.quantile(draws_a, [q, 1 - q]).tolist() if len(draws_a) >= 2 else None
    if len(draws_n) >= 2:
        bounds = np.quantile(np.array(draws_n), [q, 1 - q], axis=0)
        for j, i in enumerate(used):
            budgets[i]["n_opt"]["ci"] = bounds[:, j].tolist()
    return IsoflopResult(a={"value": a, "ci": a_ci}, coefficient=float(np.exp(log_coef)), budgets=budgets,
                         n_replicates=len(draws_a), ci_level=ci_level)


def isoflop_file(csv_file: Path, x: str = "N", c: str = "C", y: str = "loss", *, bootstrap: int = 400, seed: int = 0,
                 ci_level: float = 0.95, out: Path | None = None) -> dict[str, Any]:
    """``ttlab scaling isoflop`` as one call: :func:`isoflop_frontier` on the columns ``x`` (N), ``c`` (the budget) and
    ``y`` (loss) of ``csv_file``; the payload (with ``config`` and ``versions``) is written to ``out`` when given (checked
    before the file is read) and returned."""
    from ttlab.outputs import check_out_file
    from ttlab.provenance import atomic_write_json, versions
    from ttlab.scaling.io import read_columns_csv

    if out is not None:
        check_out_file(out, inputs=(csv_file,))
    if len({x, c, y}) != 3:
        raise TTLabInputError(f"x, c and y must name different columns, got {[x, c, y]}", params=("x", "c", "y"))
    data = read_columns_csv(csv_file, [x, c, y])
    res = isoflop_frontier(data[x], data[c], data[y], bootstrap=bootstrap, seed=seed, ci_level=ci_level)
    payload = {**res.to_dict(), "config": {"command": "ttlab scaling isoflop", "csv": str(csv_file), "x": x, "c": c,
                                          "y": y, "bootstrap": bootstrap, "seed": seed, "ci_level": ci_level},
               "versions": versions()}
    if out is not None:
        atomic_write_json(out, payload)
    return payload
