"""``ttlab scaling fit`` as one library call: a scaling law fitted to columns of a CSV file, compared with the
exponent an intrinsic dimension predicts, plotted and written (:func:`fit_csv`).

Its errors name its keyword arguments (``form``, ``x2``, ``plot`` …: ``params`` of :class:`~ttlab.errors.TTLabInputError`),
which are the parameter names of the command ``ttlab scaling fit``; the CLI shows them as its flags. ``method``,
``weights`` (a column), ``asymmetry`` and ``drop_highest`` go to the fit (:func:`_fit_extras`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.outputs import check_out_file, check_plot_file
from ttlab.provenance import atomic_savefig, atomic_write_json, versions
from ttlab.scaling.fit import DEFAULT_BOOTSTRAP, DEFAULT_CI_LEVEL, fit_scaling_law
from ttlab.scaling.fit_checks import check_bootstrap
from ttlab.scaling.fit_models import FORMS, MIN_POINTS, OBJECTIVES
from ttlab.scaling.io import read_columns_csv, read_measurements
from ttlab.scaling.theory import check_beta
from ttlab.validation import check_hours

__all__ = ["KINDS", "SAMPLES_KEPT", "fit_csv", "points_record", "samples_record"]

KINDS = ("data", "model")
"""What the size column is: ``data`` (x = data size, exponent α_D) or ``model`` (x = parameters, α_N)."""


def _check_options(form: str, x2: str | None, kind: str, intrinsic_dim: float | None, objective: str | None,
                   n_starts: int | None) -> None:
    """Raise :class:`TTLabInputError` for options that do not go together."""
    if form not in FORMS:
        raise TTLabInputError(f"unknown form {form!r}; choose one of {', '.join(FORMS)}", params=("form",))
    if form == "chinchilla" and x2 is None:
        raise TTLabInputError("form chinchilla needs x2 (the column of D, the data size) besides x (N) and y (loss)",
                              params=("form", "x2"))
    if form != "chinchilla" and x2 is not None:
        raise TTLabInputError(f"x2 is only used by form chinchilla, not by form {form}", params=("x2", "form"))
    if kind not in KINDS:
        raise TTLabInputError(f"kind must be 'data' or 'model', got {kind!r}", params=("kind",))
    if intrinsic_dim is not None and form == "chinchilla":
        raise TTLabInputError("intrinsic_dim (a predicted exponent) is supported for the power and offset forms only",
                              params=("intrinsic_dim", "form"))
    if objective is not None and objective not in OBJECTIVES:
        raise TTLabInputError(f"unknown objective {objective!r}; choose one of {', '.join(OBJECTIVES)}",
                              params=("objective",))
    if objective is not None and form != "chinchilla":
        raise TTLabInputError(f"objective is only used by form chinchilla, not by form {form}",
                              params=("objective", "form"))
    if n_starts is not None and form == "power":
        raise TTLabInputError("n_starts is only used by the offset and chinchilla forms (power is closed-form)",
                              params=("n_starts", "form"))


def _columns(x: str, y: str, x2: str | None, predict: Mapping[str, float] | None) -> list[str]:
    """The columns to read (x, y and x2), distinct, and ``predict`` naming exactly the size columns."""
    cols = [x, y] + ([x2] if x2 is not None else [])
    if len(set(cols)) != len(cols):
        raise TTLabInputError(f"x, y and x2 must name different columns, got {cols}", params=("x", "y", "x2"))
    sizes = [x] + ([x2] if x2 is not None else [])
    if predict is not None and set(predict) != set(sizes):
        raise TTLabInputError(f"predict names the size columns of the fit, {' and '.join(sizes)} (e.g. "
                              f"{','.join(f'{c}=1e9' for c in sizes)}); got {', '.join(predict) or 'none'}",
                              params=("predict",))
    return cols


def _prediction_at(result: Any, predict: Mapping[str, float], data: Mapping[str, Any], x: str, y: str,
                   x2: str | None, seed: int) -> dict[str, Any]:
    """The loss predicted at ``predict`` with its intervals and distance (:func:`ttlab.scaling.extrapolate.predict_at`)."""
    from ttlab.scaling.extrapolate import predict_at

    return {"at": dict(predict), **predict_at(result, predict[x], None if x2 is None else predict[x2], data[x],
                                              data[y], None if x2 is None else data[x2], seed=seed)}


def _compute_weights(form: str, weights: str | None, how: str, sizes: tuple[Any, Any | None]) -> np.ndarray:
    """The weights ``weight_by_compute`` = ``how`` gives the runs of sizes (N, D): the Chinchilla form only (C = k·N·D
    needs both sizes), never with a ``weights`` column."""
    from ttlab.scaling.fit_checks import compute_weights

    if weights is not None:
        raise TTLabInputError("give one source of weights: weights (a column) or weight_by_compute",
                              params=("weights", "weight_by_compute"))
    if form != "chinchilla" or sizes[1] is None:
        raise TTLabInputError(f"weight_by_compute weights each run by its compute C = k·N·D, which needs the chinchilla "
                              f"form's two sizes (x = N, x2 = D), not form {form}", params=("weight_by_compute", "form"))
    return compute_weights(sizes[0], sizes[1], how)


def _fit_extras(csv_file: Path, form: str, method: str | None, weights: str | None, asymmetry: float | None,
                drop_highest: int, weight_by_compute: str | None = None, sizes: tuple[Any, Any | None] = (None, None),
                **given: Any) -> dict[str, Any]:
    """The fit's keyword arguments (:func:`ttlab.scaling.fit.fit_chinchilla`): those ``given`` that are not None, the
    start ``method``, the ``weights`` column (read, checked: errors name it) or the weights ``weight_by_compute`` gives
    the runs of ``sizes`` (N, D; :func:`ttlab.scaling.fit_checks.compute_weights`), the ``asymmetry`` and
    ``drop_highest`` (the power form refuses a method and an asymmetry); the prediction and the plot then use the rows
    the fit kept (:func:`_kept_rows`)."""
    from ttlab.scaling.fit_checks import check_weights

    out: dict[str, Any] = {k: v for k, v in given.items() if v is not None} | {"drop_highest": drop_highest}
    for name, value in (("method", method), ("asymmetry", asymmetry)):
        if value is not None and form == "power":
            raise TTLabInputError(f"{name} is only used by the offset and chinchilla forms (power is closed-form "
                                  "least squares)", params=(name, "form"))
        if value is not None:
            out[name] = value
    if weight_by_compute is not None:
        out["weights"] = _compute_weights(form, weights, weight_by_compute, sizes)
    elif weights is not None:  # a CSV's column is read without the sizes' positivity check: check_weights says it
        p = Path(csv_file)
        try:
            w = (read_columns_csv(p, [weights], positive=False) if not p.is_dir() and p.suffix.lower() != ".json"
                 and p.name != "metrics.csv" else read_measurements(p, [weights]))[weights]
        except TTLabInputError as exc:
            raise TTLabInputError(f"weights: {exc}", params=("weights",)) from None
        out["weights"] = check_weights(w, w.size, name=f"{csv_file}: weights column {weights!r}")
    return out


def _extras_record(result: Any, weights: str | None, weight_by_compute: str | None) -> dict[str, Any]:
    """The payload config's record of :func:`_fit_extras`' options (and the rows dropped)."""
    return {"method": result.config.get("method"), "weights": weights, "weight_by_compute": weight_by_compute,
            "asymmetry": result.config.get("asymmetry"), "drop_highest": result.config["drop_highest"],
            "dropped": result.config["dropped"]}


def _kept_rows(data: dict[str, Any], result: Any) -> dict[str, Any]:
    """``data`` without the rows the fit dropped (``drop_highest``)."""
    dropped = result.config.get("dropped")
    return {k: np.delete(v, dropped) for k, v in data.items()} if dropped else data


def _prediction(result: Any, intrinsic_dim: float, beta: float, kind: str) -> dict[str, Any]:
    """The exponent predicted from ``intrinsic_dim`` next to the fitted one."""
    from ttlab.scaling.plot import predicted_exponent

    a_pred = predicted_exponent(intrinsic_dim, beta, kind)  # type: ignore[arg-type]
    return {
        "id": intrinsic_dim,
        "beta": beta,
        "kind": kind,
        "alpha_predicted": a_pred,
        "alpha_fitted": result.params["alpha"],
        "fitted_minus_predicted": result.params["alpha"] - a_pred,
        "predicted_in_ci": (
            result.ci["alpha"][0] <= a_pred <= result.ci["alpha"][1] if "alpha" in result.ci else None
        ),
    }


TIMED_ABOVE = 500
"""A bootstrap of more replicates than this is timed before it runs (a few seconds of replicates)."""
TIMING_REPLICATES = 20
FOLLOWED_ABOVE_SECONDS = 10.0
"""A bootstrap timed at this many seconds or more is announced (its estimate) and followed (progress)."""
MIN_REPLICATE_SECONDS = 1e-6
BOOTSTRAP_MAX_HOURS = 1.0
"""A bootstrap estimated above this many hours is refused (``ttlab scaling fit --max-hours``)."""


def _time_bootstrap(fit: Callable[[int], Any], n_boot: int, max_hours: float, note: Callable[[str], None] | None) -> float:
    """Seconds the ``n_boot`` replicates of ``fit(bootstrap)`` will take, from timing :data:`TIMING_REPLICATES` of them
    against none (both after a first fit, whose one-time costs, such as importing scipy's optimisers, are no
    replicate's); refuse above ``max_hours``, tell ``note`` otherwise."""
    import time

    fit(0)
    t0 = time.perf_counter()
    fit(0)
    t1 = time.perf_counter()
    fit(TIMING_REPLICATES)
    # a replicate refits the model: never counted below a microsecond, however noisy the difference of two timings
    per = max((time.perf_counter() - t1 - (t1 - t0)) / TIMING_REPLICATES, MIN_REPLICATE_SECONDS)
    seconds = per * n_boot
    if seconds > max_hours * 3600:
        raise TTLabInputError(f"{n_boot:,} bootstrap replicates would take ≈ {seconds / 3600:,.1f} h (timed on "
                              f"{TIMING_REPLICATES}: {per * 1e3:.1f} ms each), above max_hours = {max_hours:g}; use fewer "
                              f"replicates or raise max_hours", params=("bootstrap", "max_hours"))
    if note is not None and seconds >= FOLLOWED_ABOVE_SECONDS:
        note(f"bootstrap: {n_boot:,} replicates ≈ {seconds:,.0f} s (timed on {TIMING_REPLICATES})")
    return seconds


def fit_csv(
    csv_file: Path,
    x: str,
    y: str,
    x2: str | None = None,
    *,
    form: str = "power",
    bootstrap: int | None = None,
    seed: int = 0,
    ci_level: float = DEFAULT_CI_LEVEL,
    bootstrap_method: str | None = None,
    objective: str | None = None,
    n_starts: int | None = None,
    plot: Path | None = None,
    intrinsic_dim: float | None = None,
    beta: float = 1.0,
    kind: str = "data",
    out: Path | None = None,
    max_hours: float = BOOTSTRAP_MAX_HOURS,
    note: Callable[[str], None] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    predict: Mapping[str, float] | None = None,
    method: str | None = None, weights: str | None = None, asymmetry: float | None = None, drop_highest: int = 0,
    weight_by_compute: str | None = None,
) -> dict[str, Any]:
    """Fit ``form`` to columns ``x``, ``y`` (and ``x2`` = D for the Chinchilla form) of ``csv_file`` — a CSV, or an
    ``lm data-sweep`` / ``model-sweep`` folder or results.json whose points are the rows
    (:func:`ttlab.scaling.io.read_measurements`).

    ``bootstrap`` defaults to :data:`ttlab.scaling.fit.DEFAULT_BOOTSTRAP` of the form. With ``intrinsic_dim``,
    the payload's ``prediction`` compares the fitted α with the one predicted at ``beta`` (``kind``: data or
    model scaling). Writes the log-log ``plot`` and the payload to ``out`` when given (both checked before the
    fit). Returns the payload: :meth:`ttlab.scaling.fit.FitResult.to_dict` plus ``prediction``, ``config``,
    ``versions`` (and ``plot``). A bootstrap of more than :data:`TIMED_ABOVE` replicates is timed first on
    :data:`TIMING_REPLICATES` of them: one above ``max_hours`` is refused; one of :data:`FOLLOWED_ABOVE_SECONDS` or
    more is announced (``note`` gets the estimate) and followed (``progress("bootstrap", done, total)``).
    ``predict`` (``{x: value}``, and ``{x2: value}`` for the Chinchilla form, named as the columns): the payload's
    ``prediction_at`` holds the loss predicted there with confidence and prediction intervals and the decades it lies
    outside the fitted range (:func:`ttlab.scaling.extrapolate.predict_at`). ``weight_by_compute`` (``sqrt`` |
    ``linear``; Chinchilla form, not with ``weights``): runs weighted by √C or C, C = k·N·D
    (:func:`ttlab.scaling.fit_checks.compute_weights`). ``out`` keeps the replicates and runs too (:func:`points_record`).
    """
    _check_options(form, x2, kind, intrinsic_dim, objective, n_starts)
    check_hours(max_hours)  # checked whether or not the bootstrap is timed
    if plot is not None:
        check_plot_file(plot, out=out, inputs=(csv_file,))
    if out is not None:
        check_out_file(out, inputs=(csv_file,))
    n_boot = DEFAULT_BOOTSTRAP[form] if bootstrap is None else bootstrap
    check_bootstrap(n_boot)  # the hard limit before the timing: a timing of ~0 ms must not decide it
    check_beta(beta)  # checked whether or not an ID is given: a wrong value is never silently ignored
    data = read_measurements(csv_file, _columns(x, y, x2, predict))
    if data[x].size < MIN_POINTS[form]:
        raise TTLabInputError(f"{csv_file}: the {form} form needs at least {MIN_POINTS[form]} data rows, the file has "
                              f"{data[x].size}")
    extra = _fit_extras(csv_file, form, method, weights, asymmetry, drop_highest, weight_by_compute,
                        (data[x], data[x2] if x2 is not None else None), n_starts=n_starts, objective=objective)
    seconds = 0.0
    if n_boot > TIMED_ABOVE:
        seconds = _time_bootstrap(lambda b: fit_scaling_law(form, data[x], data[y], data[x2] if x2 is not None else None,
                                                  bootstrap=b, seed=seed, ci_level=ci_level,
                                                  bootstrap_method=bootstrap_method, **extra), n_boot, max_hours, note)
    result = fit_scaling_law(
        form, data[x], data[y], data[x2] if x2 is not None else None,
        bootstrap=n_boot, seed=seed, ci_level=ci_level, bootstrap_method=bootstrap_method, **extra,
        progress=(None if progress is None or seconds < FOLLOWED_ABOVE_SECONDS
                  else (lambda done, total: progress("bootstrap", done, total))),
    )
    payload, data = result.to_dict(), _kept_rows(data, result)
    if predict is not None:
        payload["prediction_at"] = _prediction_at(result, predict, data, x, y, x2, seed)
    if intrinsic_dim is not None:
        payload["prediction"] = _prediction(result, intrinsic_dim, beta, kind)
    payload["config"] = {
        "command": "ttlab scaling fit", "csv": str(csv_file), "x": x, "y": y, "x2": x2, "form": form,
        "bootstrap": n_boot, "bootstrap_method": result.config["bootstrap_method"],
        "objective": result.config.get("objective"), "seed": seed, "ci_level": ci_level,
        "n_starts": result.config.get("n_starts"), "id": intrinsic_dim, "beta": beta, "kind": kind,
        "plot": str(plot) if plot is not None else None, "predict": None if predict is None else dict(predict),
        **_extras_record(result, weights, weight_by_compute),
    }
    payload["versions"] = versions()
    if plot is not None:
        _draw(plot, result, data, x, y, x2, intrinsic_dim=intrinsic_dim, beta=beta, kind=kind,
              title=f"{csv_file.name}: {form} fit")
        payload["plot"] = str(plot)
    if out is not None:  # the file also keeps the replicates and the runs, for ttlab scaling frontier
        atomic_write_json(out, {**payload, **samples_record(result),
                                **points_record(data, x, y, x2, _kept_weights(extra.get("weights"), result))})
    return payload


def _kept_weights(weights: np.ndarray | None, result: Any) -> np.ndarray | None:
    """The weights of the runs the fit kept, rescaled to mean 1 as the fit uses them (None without weights)."""
    if weights is None:
        return None
    kept = _kept_rows({"weights": weights}, result)["weights"]
    return kept / kept.mean()


def points_record(data: Mapping[str, Any], x: str, y: str, x2: str | None,
                  weights: np.ndarray | None = None) -> dict[str, Any]:
    """``{"points": …}``: the runs a fit was fitted to — ``x``, ``y`` (and ``x2``) as lists under those keys,
    ``columns`` naming their CSV columns, ``weights`` as the fit used them (mean 1; None unweighted) — so that a fit
    file can be drawn with its data (``ttlab scaling frontier FIT.json --plot``)."""
    rec: dict[str, Any] = {"columns": {"x": x, "y": y, "x2": x2}, "x": np.asarray(data[x], dtype=float).tolist(),
                           "y": np.asarray(data[y], dtype=float).tolist()}
    if x2 is not None:
        rec["x2"] = np.asarray(data[x2], dtype=float).tolist()
    rec["weights"] = None if weights is None else np.asarray(weights, dtype=float).tolist()
    return {"points": rec}


def _draw(plot: Path, result: Any, data: Mapping[str, Any], x: str, y: str, x2: str | None, **options: Any) -> None:
    """The log-log figure of the fit against the runs it kept (:func:`ttlab.scaling.plot.plot_fit`), written to
    ``plot``."""
    from ttlab.scaling.plot import plot_fit

    atomic_savefig(plot_fit(result, data[x], data[y], x2=data[x2] if x2 is not None else None, xlabel=x, ylabel=y,
                            **options), plot, dpi=120)


SAMPLES_KEPT = 20_000
"""A fit written to a file keeps its bootstrap replicates up to this many (a frontier computes its intervals on them)."""


def samples_record(result: Any) -> dict[str, Any]:
    """``{"bootstrap_samples": {"columns", "rows"}}`` of a fit's replicates (natural parameters), or ``{}`` without
    replicates or above :data:`SAMPLES_KEPT` of them."""
    from ttlab.scaling.fit_models import PARAM_NAMES

    samples = result.bootstrap_samples
    if samples is None or len(samples) > SAMPLES_KEPT:
        return {}
    return {"bootstrap_samples": {"columns": list(PARAM_NAMES[result.form]), "rows": samples.tolist()}}
