"""Hoffmann et al.'s Approach 2: IsoFLOP profiles — the compute-optimal model size read off parabolas, without a
parametric loss law.

Runs are grouped by their compute budget C (a column of the CSV). Within one budget, the loss against log N is fitted
by a parabola L ≈ p₀ + p₁·log N + p₂·(log N)², whose vertex log N* = −p₁/(2p₂) is that budget's optimal size (it
must lie inside the budget's measured sizes: a vertex outside them is an extrapolation and is reported, not used,
and a parabola opening downwards has no minimum). Then log N_opt = a·log C + c across the budgets gives the
allocation exponent a (N_opt ∝ C^a; D_opt = C/(k·N_opt) ∝ C^(1−a) when C = k·N·D, k the FLOPs per parameter and
token the budgets were computed with). Intervals: a pairs bootstrap within each budget (its runs resampled, the
parabolas and the line fitted again), percentile intervals.

:func:`read_isoflop` reads the JSON ``ttlab scaling isoflop --out`` wrote back, checked, for ``ttlab scaling frontier
--isoflop`` (the parametric frontier beside these optima).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ttlab.errors import TTLabInputError
from ttlab.scaling.frontier import DEFAULT_FLOPS_PER_TOKEN, check_flops_per_token
from ttlab.validation import check_int

__all__ = ["COMMAND", "IsoflopResult", "isoflop_file", "isoflop_frontier", "read_isoflop"]

COMMAND = "ttlab scaling isoflop"
"""``config.command`` of the JSON :func:`isoflop_file` writes: how :func:`read_isoflop` knows one."""

MIN_RUNS_PER_BUDGET = 3
"""A parabola needs three sizes per budget."""
MIN_BUDGETS = 2
"""A slope needs two budgets (three or more to see anything but the slope)."""


@dataclass(frozen=True)
class IsoflopResult:
    """The optimal size per budget (``budgets``: ``compute``, ``n_opt`` and ``d_opt`` = C/(k·N_opt), each with ``ci``,
    ``loss_opt``, ``n_runs``, and ``note`` when a budget gave no minimum) and the exponent ``a`` of N_opt ∝ C^a
    (``{"value", "ci"}``); k = ``flops_per_token``."""

    a: dict[str, Any]
    coefficient: float
    budgets: list[dict[str, Any]]
    n_replicates: int
    ci_level: float
    flops_per_token: float = DEFAULT_FLOPS_PER_TOKEN

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
                     ci_level: float = 0.95, flops_per_token: float = DEFAULT_FLOPS_PER_TOKEN) -> IsoflopResult:
    """Approach 2 on runs of sizes ``n`` at budgets ``compute`` with losses ``loss`` (see the module doc);
    ``flops_per_token``: k of C = k·N·D, which gives each budget's D_opt = C/(k·N_opt)."""
    k = check_flops_per_token(flops_per_token)
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
    budgets: list[dict[str, Any]] = []
    used: list[int] = []
    for level, idx in zip(levels, groups):
        vertex = _vertex(np.log(n[idx]), y[idx])
        entry: dict[str, Any] = {"compute": float(level), "n_runs": int(idx.size), "n_opt": None, "d_opt": None,
                                 "loss_opt": None}
        if vertex is None:
            entry["note"] = (f"no minimum inside the measured sizes (fewer than {MIN_RUNS_PER_BUDGET} sizes, a parabola "
                             "opening downwards, or its vertex beyond the sizes): add runs around the optimum")
        else:
            entry["n_opt"], entry["loss_opt"] = {"value": float(np.exp(vertex[0])), "ci": None}, vertex[1]
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
    for i in used:  # D_opt = C/(k·N_opt): the interval's ends swap
        e = budgets[i]
        ci = e["n_opt"]["ci"]
        e["d_opt"] = {"value": e["compute"] / k / e["n_opt"]["value"],
                      "ci": None if ci is None else [e["compute"] / k / ci[1], e["compute"] / k / ci[0]]}
    return IsoflopResult(a={"value": a, "ci": a_ci}, coefficient=float(np.exp(log_coef)), budgets=budgets,
                         n_replicates=len(draws_a), ci_level=ci_level, flops_per_token=k)


def isoflop_file(csv_file: Path, x: str = "N", c: str = "C", y: str = "loss", *, bootstrap: int = 400, seed: int = 0,
                 ci_level: float = 0.95, flops_per_token: float = DEFAULT_FLOPS_PER_TOKEN,
                 out: Path | None = None) -> dict[str, Any]:
    """``ttlab scaling isoflop`` as one call: :func:`isoflop_frontier` on the columns ``x`` (N), ``c`` (the budget) and
    ``y`` (loss) of ``csv_file``, the budgets taken as C = k·N·D with k = ``flops_per_token`` (recorded; ``ttlab scaling
    frontier --isoflop`` checks it); the payload (with ``config`` and ``versions``) is written to ``out`` when given
    (checked before the file is read) and returned."""
    from ttlab.outputs import check_out_file
    from ttlab.provenance import atomic_write_json, versions
    from ttlab.scaling.io import read_columns_csv

    if out is not None:
        check_out_file(out, inputs=(csv_file,))
    if len({x, c, y}) != 3:
        raise TTLabInputError(f"x, c and y must name different columns, got {[x, c, y]}", params=("x", "c", "y"))
    data = read_columns_csv(csv_file, [x, c, y])
    res = isoflop_frontier(data[x], data[c], data[y], bootstrap=bootstrap, seed=seed, ci_level=ci_level,
                           flops_per_token=flops_per_token)
    payload = {**res.to_dict(), "config": {"command": COMMAND, "csv": str(csv_file), "x": x, "c": c, "y": y,
                                          "bootstrap": bootstrap, "seed": seed, "ci_level": ci_level,
                                          "flops_per_token": res.flops_per_token},
               "versions": versions()}
    if out is not None:
        atomic_write_json(out, payload)
    return payload


def _positive(value: Any) -> bool:
    """A finite number > 0 (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def _optimum(entry: Any) -> str | None:
    """What is wrong with one budget of an IsoFLOP JSON (None: nothing): a positive ``compute`` and an ``n_opt`` that is
    None or ``{"value" > 0, "ci": None or [lo, hi] > 0}``."""
    if not isinstance(entry, dict) or not _positive(entry.get("compute")):
        return "a budget without a positive compute"
    n_opt = entry.get("n_opt")
    if n_opt is None:
        return None
    ci = n_opt.get("ci") if isinstance(n_opt, dict) else None
    if not isinstance(n_opt, dict) or not _positive(n_opt.get("value")) or not (
            ci is None or (isinstance(ci, list) and len(ci) == 2 and all(map(_positive, ci)))):
        return f"the optimum of budget {entry['compute']:g} is not {{value > 0, ci: null or [lo, hi]}}"
    return None


def read_isoflop(path: Path, flops_per_token: float | None = None) -> dict[str, Any]:
    """The IsoFLOP optima of the JSON ``ttlab scaling isoflop --out`` wrote (:func:`isoflop_file`): ``source``, ``a``,
    ``ci_level``, ``flops_per_token`` (as recorded; None in a file of an older version) and ``budgets`` (``compute``,
    ``n_opt`` — None where the budget gave none, with its ``note``). Refuses, naming the file (``params``: ``isoflop``),
    a file that is not such a JSON or holds no optimum, and one whose recorded k differs from ``flops_per_token``."""
    from ttlab.provenance import read_json

    def refuse(why: str, *params: str) -> TTLabInputError:
        return TTLabInputError(f"isoflop {path}: {why}", params=("isoflop", *params))

    try:
        payload = read_json(path)
    except (OSError, ValueError) as exc:
        raise refuse(f"not a readable JSON ({exc})") from None
    config = payload.get("config") if isinstance(payload, dict) else None
    if not isinstance(config, dict) or config.get("command") != COMMAND or not isinstance(payload.get("budgets"), list):
        raise refuse("not an IsoFLOP result: give the JSON `ttlab scaling isoflop FILE.csv --out iso.json` writes")
    problems = [p for p in map(_optimum, payload["budgets"]) if p is not None]
    if problems:
        raise refuse(f"not a valid IsoFLOP result: {problems[0]}")
    if not any(e.get("n_opt") for e in payload["budgets"]):
        raise refuse("holds no budget with an optimum")
    recorded = config.get("flops_per_token")
    if recorded is not None and not _positive(recorded):
        raise refuse(f"its recorded flops_per_token {recorded!r} is not a positive number")
    if recorded is not None and flops_per_token is not None and not math.isclose(recorded, flops_per_token,
                                                                                    rel_tol=1e-9):
        raise refuse(f"its budgets were computed with {recorded:g} FLOPs per parameter and token, the frontier uses "
                     f"flops_per_token = {flops_per_token:g}: give --flops-per-token {recorded:g}, or run the IsoFLOP "
                     "analysis again with the frontier's k", "flops_per_token")
    budgets = [{"compute": float(e["compute"]), "n_opt": e.get("n_opt"),
                **({} if e.get("n_opt") else {"note": e.get("note", "no optimum")})} for e in payload["budgets"]]
    return {"source": str(path), "a": payload.get("a"), "ci_level": payload.get("ci_level"),
            "flops_per_token": recorded, "budgets": budgets}
