"""``ttlab scaling frontier`` as one library call: the compute-optimal frontier of a Chinchilla-form fit — fitted here
from a CSV, or read from the JSON ``ttlab scaling fit --out`` wrote (with the runs it keeps) — the allocation an
intrinsic dimension predicts, and the optima of IsoFLOP profiles (``ttlab scaling isoflop --out``) beside the fit's,
written as JSON and drawn (:func:`frontier_file`).

Its errors name its keyword arguments (``source``, ``compute``, ``flops_per_token`` …), which are the parameter names
of the command; the CLI shows them as its flags.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.outputs import check_out_file, check_plot_file
from ttlab.provenance import atomic_savefig, atomic_write_json, read_json, versions
from ttlab.scaling.fit import DEFAULT_BOOTSTRAP, DEFAULT_CI_LEVEL, fit_chinchilla
from ttlab.scaling.fit_csv import TIMED_ABOVE
from ttlab.scaling.fit_models import PARAM_NAMES
from ttlab.scaling.frontier import DEFAULT_FLOPS_PER_TOKEN, Frontier, check_compute, compute_optimal, id_allocation
from ttlab.scaling.io import read_columns_csv
from ttlab.scaling.isoflop import read_isoflop
from ttlab.scaling.theory import check_beta

__all__ = ["FittedSource", "band_allocation", "frontier_file", "isoflop_comparison", "read_source"]


@dataclass(frozen=True)
class FittedSource:
    """A Chinchilla-form fit to take a frontier from: its parameters, bootstrap replicates (rows in
    :data:`~ttlab.scaling.fit_models.PARAM_NAMES` order, or None), confidence level, notes, the runs (N, D, loss) —
    fitted here, or kept in the fit file (None in a file of an older version) — and a summary of the fit (identifiable,
    warnings, goodness of fit)."""

    params: dict[str, float]
    samples: np.ndarray | None
    ci_level: float
    notes: list[str]
    data: tuple[np.ndarray, np.ndarray, np.ndarray] | None
    fit: dict[str, Any]


def _points(path: Path, payload: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The runs (N, D, loss) a fit file keeps (``points``, :func:`ttlab.scaling.fit_csv.points_record`), checked; None
    in a file without them (written before they were kept)."""
    rec = payload.get("points")
    if rec is None:
        return None
    try:
        cols = tuple(np.asarray(rec[key], dtype=float) for key in ("x", "x2", "y"))
    except (KeyError, TypeError, ValueError):
        cols = ()
    if len(cols) != 3 or any(c.ndim != 1 or c.size != cols[0].size or not np.all(np.isfinite(c) & (c > 0))
                             for c in cols) or not cols[0].size:
        raise TTLabInputError(f"{path}: its points are not the runs of a Chinchilla fit (lists x = N, x2 = D, y = loss "
                              "of one length, positive and finite); write the fit again with ttlab scaling fit --out",
                              params=("source",))
    return cols  # type: ignore[return-value]


def _from_json(path: Path) -> FittedSource:
    try:
        payload = read_json(path)
    except (OSError, ValueError) as exc:
        raise TTLabInputError(f"{path}: not a readable JSON fit ({exc})", params=("source",)) from None
    if not isinstance(payload, dict) or payload.get("form") != "chinchilla" or not isinstance(payload.get("params"), dict):
        form = payload.get("form") if isinstance(payload, dict) else None
        raise TTLabInputError(f"{path}: a frontier needs a Chinchilla-form fit (L = E + A/N^α + B/D^β), this file holds "
                              f"{'a ' + repr(form) + ' fit' if form else 'no fit'}; write one with ttlab scaling fit "
                              "FILE.csv --form chinchilla --x N --x2 D --y loss --out fit.json", params=("source",))
    rec = payload.get("bootstrap_samples") or {}
    samples, notes = None, []
    if rec.get("columns") == list(PARAM_NAMES["chinchilla"]) and rec.get("rows"):
        samples = np.array(rec["rows"], dtype=float)
    else:
        notes.append(f"{path} holds no bootstrap replicates, so the frontier has no intervals: give the CSV instead, or "
                     "a fit written by ttlab scaling fit --out of this version")
    fit = {k: payload.get(k) for k in ("identifiable", "warnings", "goodness_of_fit", "n_points")}
    return FittedSource(payload["params"], samples, float(payload.get("ci_level", DEFAULT_CI_LEVEL)), notes,
                        _points(path, payload), fit)


def read_source(source: Path, x: str, x2: str, y: str, *, bootstrap: int | None = None, seed: int = 0,
                ci_level: float = DEFAULT_CI_LEVEL, objective: str = "huber",
                progress: Callable[[int, int], None] | None = None) -> FittedSource:
    """The fit of ``source``: a ``.json`` written by ``ttlab scaling fit --out`` (Chinchilla form), or a ``.csv`` fitted
    here with :func:`ttlab.scaling.fit.fit_chinchilla` on columns ``x`` (N), ``x2`` (D) and ``y`` (loss)."""
    suffix = source.suffix.lower()
    if suffix == ".json":
        return _from_json(source)
    if suffix != ".csv":
        raise TTLabInputError(f"source {source}: give a .csv of runs (columns N, D, loss) or a .json fit written by "
                              "ttlab scaling fit --out", params=("source",))
    cols = [x, x2, y]
    if len(set(cols)) != 3:
        raise TTLabInputError(f"x, x2 and y must name different columns, got {cols}", params=("x", "x2", "y"))
    data = read_columns_csv(source, cols)
    res = fit_chinchilla(data[x], data[x2], data[y], bootstrap=DEFAULT_BOOTSTRAP["chinchilla"] if bootstrap is None
                         else bootstrap, seed=seed, ci_level=ci_level, objective=objective,  # type: ignore[arg-type]
                         progress=progress)
    notes = [] if res.identifiable else ["the Chinchilla fit is not identifiable (see its warnings): so is not the "
                                         "frontier"]
    fit = {"identifiable": res.identifiable, "warnings": list(res.warnings), "n_points": res.n_points,
           "goodness_of_fit": {"r2_log": res.r2_log, "rmse_log": res.rmse_log}, "ci": res.ci}
    return FittedSource(res.params, res.bootstrap_samples, res.ci_level, notes, (data[x], data[x2], data[y]), fit)


def band_allocation(from_compare: Path, beta: float) -> dict[str, Any]:
    """The allocation exponents each estimator's ID of a ``ttlab id compare`` JSON predicts (the estimators of the
    prediction band, :func:`ttlab.scaling.band.prediction_band`): the central one (the paper's MLE), and the range of
    a over the band (a = d/(2d + 2β) grows with d)."""
    from ttlab.scaling.band import ids_from_compare_json, prediction_band

    band = prediction_band(ids_from_compare_json(from_compare)[0], beta=beta, central="mle_mean")
    per = {name: id_allocation(v["id"], beta) for name, v in band.estimators.items()}
    central = per[band.central_estimator]
    return {**central, "source": str(from_compare), "central_estimator": band.central_estimator,
            "a_lo": min(p["a"] for p in per.values()), "a_hi": max(p["a"] for p in per.values()),
            "estimators": {name: {"id": p["id"], "a": p["a"], "b": p["b"]} for name, p in per.items()}}


def _comparison(frontier: Frontier, predicted: dict[str, float]) -> dict[str, Any]:
    """The ID-predicted exponent a beside the fitted one: the difference and whether the fit's interval holds it."""
    ci = frontier.a["ci"]
    return {"a_fitted": frontier.a["value"], "a_predicted": predicted["a"],
            "difference": frontier.a["value"] - predicted["a"],
            "predicted_in_ci": None if ci is None else bool(ci[0] <= predicted["a"] <= ci[1])}


def isoflop_comparison(fitted: FittedSource, isoflop: dict[str, Any], flops_per_token: float) -> dict[str, Any]:
    """The fit's N_opt beside the IsoFLOP optimum at each budget of ``isoflop`` (:func:`ttlab.scaling.isoflop.
    read_isoflop`): per budget ``n_opt_isoflop`` and ``n_opt_parametric`` (each ``{"value", "ci"}``), their ``ratio``
    (parametric / IsoFLOP) and whether the fit's interval holds the IsoFLOP optimum (``isoflop_in_ci``); a budget
    without an optimum keeps its ``note``. Also both exponents a (``a_isoflop``, ``a_parametric``)."""
    with_opt = [e for e in isoflop["budgets"] if e["n_opt"]]
    par = compute_optimal(fitted.params, [e["compute"] for e in with_opt], flops_per_token=flops_per_token,
                          samples=fitted.samples, ci_level=fitted.ci_level)
    by_c = {e["compute"]: p["n_opt"] for e, p in zip(with_opt, par.budgets)}
    rows = []
    for e in isoflop["budgets"]:
        if not e["n_opt"]:
            rows.append({"compute": e["compute"], "n_opt_isoflop": None, "n_opt_parametric": None, "ratio": None,
                         "isoflop_in_ci": None, "note": e["note"]})
            continue
        p, ci = by_c[e["compute"]], by_c[e["compute"]]["ci"]
        rows.append({"compute": e["compute"], "n_opt_isoflop": e["n_opt"], "n_opt_parametric": p,
                     "ratio": p["value"] / e["n_opt"]["value"],
                     "isoflop_in_ci": None if ci is None else bool(ci[0] <= e["n_opt"]["value"] <= ci[1])})
    return {"source": isoflop["source"], "flops_per_token": isoflop["flops_per_token"], "a_isoflop": isoflop["a"],
            "a_parametric": par.a, "budgets": rows}


def _check_inputs(source: Path | None, isoflop: Path | None, plot: Path | None, out: Path | None) -> None:
    """The output files (never an input, never each other) and what ``plot`` and ``isoflop`` need: a fit."""
    inputs = tuple(p for p in (source, isoflop) if p is not None)
    if plot is not None:
        check_plot_file(plot, out=out, inputs=inputs)
    if out is not None:
        check_out_file(out, inputs=inputs)
    if plot is not None and source is None:
        raise TTLabInputError("a frontier plot needs a fit (a CSV or a fit JSON): the ID alone predicts the exponents, "
                              "not N_opt or the loss", params=("plot",))
    if isoflop is not None and source is None:
        raise TTLabInputError("isoflop compares the IsoFLOP optima with a fit's frontier: give the fit too (a CSV of "
                              "runs or a fit JSON)", params=("isoflop", "source"))


def frontier_file(
    source: Path | None,
    compute: Sequence[float],
    *,
    x: str = "N",
    x2: str = "D",
    y: str = "loss",
    flops_per_token: float = DEFAULT_FLOPS_PER_TOKEN,
    bootstrap: int | None = None,
    seed: int = 0,
    ci_level: float = DEFAULT_CI_LEVEL,
    intrinsic_dim: float | None = None,
    from_compare: Path | None = None,
    beta: float = 1.0,
    plot: Path | None = None,
    out: Path | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    isoflop: Path | None = None,
) -> dict[str, Any]:
    """The frontier of ``source``'s fit at the ``compute`` budgets (see :func:`read_source` and
    :func:`ttlab.scaling.frontier.compute_optimal`), with the allocation ``intrinsic_dim`` predicts beside it (or alone,
    without ``source``; ``from_compare``: a ``ttlab id compare`` JSON, the band of its estimators,
    :func:`band_allocation`). ``isoflop``: the JSON of ``ttlab scaling isoflop --out`` (read and checked before any
    work, :func:`ttlab.scaling.isoflop.read_isoflop`), its optima drawn and set beside the fit's
    (:func:`isoflop_comparison`). Writes the ``plot`` and the JSON ``out`` when given (both checked before any work).
    Returns the payload: ``a``, ``b``, ``budgets`` … of :meth:`Frontier.to_dict`, ``predicted``, ``comparison``,
    ``isoflop``, ``fit``, ``warnings``, ``config`` and ``versions``."""
    budgets, k = check_compute(compute, flops_per_token)
    check_beta(beta)  # checked whether or not an ID is given: a wrong value is never silently ignored
    if intrinsic_dim is not None and from_compare is not None:
        raise TTLabInputError("give one ID source: intrinsic_dim or from_compare", params=("intrinsic_dim", "from_compare"))
    if source is None and intrinsic_dim is None and from_compare is None:
        raise TTLabInputError("give a fit (a CSV of runs or a fit JSON) or an intrinsic dimension (--id or "
                              "--from-compare), or both", params=("source", "intrinsic_dim"))
    predicted = (id_allocation(intrinsic_dim, beta) if intrinsic_dim is not None else
                 band_allocation(from_compare, beta) if from_compare is not None else None)
    _check_inputs(source, isoflop, plot, out)
    iso = None if isoflop is None else read_isoflop(isoflop, k)
    payload: dict[str, Any] = {"predicted": predicted, "warnings": []}
    if source is not None:
        long = bootstrap is not None and bootstrap > TIMED_ABOVE  # a short bootstrap is not followed line by line
        follow = None if progress is None or not long else (lambda done, total: progress("bootstrap", done, total))
        fitted = read_source(source, x, x2, y, bootstrap=bootstrap, seed=seed, ci_level=ci_level, progress=follow)
        frontier = compute_optimal(fitted.params, budgets, flops_per_token=k, samples=fitted.samples,
                                   ci_level=fitted.ci_level)
        payload.update(frontier.to_dict(), fit=fitted.fit, warnings=list(fitted.notes))
        payload["comparison"] = None if predicted is None else _comparison(frontier, predicted)
        payload["isoflop"] = None if iso is None else isoflop_comparison(fitted, iso, k)
        if plot is not None:
            from ttlab.scaling.plot import plot_frontier

            if fitted.data is None:
                payload["warnings"].append(f"{source} keeps no runs (a fit file of an older version): the plot shows "
                                           "none; write the fit again with ttlab scaling fit --out to see them")
            atomic_savefig(plot_frontier(frontier, fitted.data, predicted=predicted,
                                         isoflop=None if iso is None else iso["budgets"]), plot, dpi=120)
            payload["plot"] = str(plot)
    payload["config"] = {"command": "ttlab scaling frontier", "source": None if source is None else str(source),
                         "x": x, "x2": x2, "y": y, "compute": budgets.tolist(), "flops_per_token": k,
                         "bootstrap": bootstrap, "seed": seed, "ci_level": ci_level, "id": intrinsic_dim,
                         "from_compare": None if from_compare is None else str(from_compare), "beta": beta,
                         "isoflop": None if isoflop is None else str(isoflop)}
    payload["versions"] = versions()
    if out is not None:
        atomic_write_json(out, payload)
    return payload
