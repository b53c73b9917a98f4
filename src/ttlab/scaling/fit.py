"""Fitting scaling laws: pure and offset power laws, and the joint Chinchilla form.

All three forms are fitted in log space, where the noise of measured losses is roughly
multiplicative:

* ``power``:      log L̂ = a − α log x                                  (L = A·x^(−α), A = e^a);
  ordinary least squares on (log x, log L).
* ``offset``:     log L̂ = LSE(e, a − α log x)                          (L = E + A·x^(−α));
  squared log residuals, :func:`scipy.optimize.least_squares` from a grid of starts.
* ``chinchilla``: log L̂ = LSE(e, a − α log N, b − β log D)             (L = E + A/N^α + B/D^β);
  the **summed** Huber loss (δ = 1e-3) of the log residuals minimised by L-BFGS-B from the best
  points of a grid of starts (Hoffmann et al. 2022; Besiroglu et al. 2024, "Chinchilla scaling: a
  replication attempt"). With scipy's default tolerances, dividing the loss by the number of points
  (``reduction="mean"``) stops L-BFGS-B after a few iterations with wrong exponents. The cause is
  the stopping rule (see :data:`DEFAULT_LBFGSB_OPTIONS`), which also stops the *summed* loss early
  on small data sets, so this module tightens the tolerances as well as summing.
  ``objective="huber-likelihood"`` instead minimises the negative log-likelihood of the log
  residuals under a Huber density whose scale σ is fitted jointly (Besiroglu et al. 2024's
  replication; δ = 1e-3 then applies to r/σ, so the fit's robustness is relative to the noise
  level rather than to an absolute 1e-3 in log loss).

The offset and Chinchilla fits take ``method="varpro"`` (variable projection: the coefficients by non-negative least
squares at every exponent of a fine grid, the best local minima of the objective there refined;
:mod:`ttlab.scaling.fit_varpro`) and ``asymmetry`` (over-estimates penalised A times: a lower envelope); every form
takes ``weights`` (each point's loss term multiplied by its weight) and ``drop_highest`` (the K highest losses left
out first).

Every fit reports goodness of fit (R² and RMSE of log L, RMSE of L) and seeded bootstrap
percentile intervals for every parameter. The default bootstrap of the power and offset forms
resamples leverage-adjusted, centred log residuals around the fitted curve (fixed design; works for
the few points a scaling sweep has); the Chinchilla form's default resamples data points ("pairs"),
the bootstrap whose spread matches Besiroglu et al.'s published standard errors (a residual
bootstrap is about 2x narrower there). See :data:`DEFAULT_BOOTSTRAP_METHOD`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

import numpy as np
from numpy.typing import ArrayLike

from ttlab.errors import TTLabInputError
from ttlab.scaling.fit_checks import (
    analytic_ci,
    bound_notes,
    check_fit_method,
    check_optimizer_options,
    check_options,
    check_weights,
    collapse_notes,
    design_notes,
    diagnostics,
    drop_highest_points,
    fit_config,
    floor_notes,
    goodness,
    percentile_ci,
    prepare_data,
    range_notes,
    start_notes,
)
from ttlab.scaling.fit_models import (
    FORMS,
    HUBER_DELTA,
    MIN_POINTS,
    PARAM_NAMES,
    log_model,
    natural_params,
)
from ttlab.scaling.fit_optimize import fit_theta, start_points

__all__ = [
    "FitResult",
    "fit_power_law",
    "fit_offset_power_law",
    "fit_chinchilla",
    "fit_scaling_law",
    "DEFAULT_BOOTSTRAP_METHOD",
    "DEFAULT_BOOTSTRAP",
    "DEFAULT_CI_LEVEL",
]

DEFAULT_BOOTSTRAP_METHOD: dict[str, str] = {"power": "residual", "offset": "residual", "chinchilla": "pairs"}
"""Bootstrap used when none is given. Chinchilla: pairs, whose spread matches Besiroglu et al. 2024's
published standard errors (their residual-style intervals are about 2x narrower); changed from
"residual" in issue 24 (intervals of the Chinchilla form are wider than before by default)."""
#: residual-bootstrap resamples are drawn this many values (replicates × points) at a time
BOOTSTRAP_CHUNK = 2**20
DEFAULT_BOOTSTRAP: dict[str, int] = {"power": 1000, "offset": 1000, "chinchilla": 200}
"""Bootstrap replicates of each form's fit when none are given."""
DEFAULT_CI_LEVEL = 0.95
"""Confidence level of the intervals when none is given."""


@dataclass
class FitResult:
    """A fitted scaling law with uncertainty and goodness of fit.

    ``params`` are natural parameters (``A``, ``alpha``, and ``E``, ``B``, ``beta`` where the form
    has them). ``ci`` maps each parameter to its bootstrap percentile interval at ``ci_level``
    (empty when no bootstrap was run). ``ci_analytic`` (power form only) holds classical
    t-intervals from the OLS covariance of (log A, α), exact under Gaussian log errors.
    """

    form: str
    params: dict[str, float]
    ci: dict[str, tuple[float, float]]
    ci_level: float
    n_points: int
    r2_log: float
    rmse_log: float
    rmse: float
    theta: np.ndarray
    bootstrap: dict[str, Any]
    optimizer: dict[str, Any]
    config: dict[str, Any]
    ci_analytic: dict[str, tuple[float, float]] = field(default_factory=dict)
    stderr: dict[str, float] = field(default_factory=dict)
    bootstrap_samples: np.ndarray | None = field(default=None, repr=False)
    identifiable: bool = True
    warnings: list[str] = field(default_factory=list)
    diagnostics: dict[str, Any] = field(default_factory=dict)

    @property
    def exponents(self) -> dict[str, float]:
        """The fitted exponents only (``alpha``, and ``beta`` for the Chinchilla form)."""
        return {k: v for k, v in self.params.items() if k in ("alpha", "beta")}

    def predict(self, x: ArrayLike, x2: ArrayLike | None = None) -> np.ndarray:
        """Predicted loss at ``x`` (and ``x2`` = D for the Chinchilla form)."""
        lx = np.log(np.asarray(x, dtype=float))
        lx2 = None
        if self.form == "chinchilla":
            if x2 is None:
                raise TTLabInputError("the chinchilla form needs x2 (data size D) to predict")
            lx2 = np.log(np.asarray(x2, dtype=float))
            lx, lx2 = np.broadcast_arrays(lx, lx2)
        pred, _ = log_model(self.form, self.theta, lx, lx2)
        return np.exp(pred)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (no bootstrap samples)."""
        out: dict[str, Any] = {
            "form": self.form,
            "params": dict(self.params),
            "ci": {k: [lo, hi] for k, (lo, hi) in self.ci.items()},
            "ci_level": self.ci_level,
            "n_points": self.n_points,
            "goodness_of_fit": {
                k: (v if math.isfinite(v) else None)
                for k, v in (("r2_log", self.r2_log), ("rmse_log", self.rmse_log), ("rmse", self.rmse))
            },
            "identifiable": self.identifiable,
            "warnings": list(self.warnings),
            "diagnostics": dict(self.diagnostics),
            "bootstrap": dict(self.bootstrap),
            "optimizer": dict(self.optimizer),
            "fit_config": dict(self.config),
        }
        if self.ci_analytic:
            out["ci_analytic"] = {k: [lo, hi] for k, (lo, hi) in self.ci_analytic.items()}
            out["stderr"] = dict(self.stderr)
        return out


def _leverage(jac: np.ndarray) -> np.ndarray:
    h = np.einsum("ij,jk,ik->i", jac, np.linalg.pinv(jac.T @ jac), jac)
    return np.clip(h, 0.0, 0.99)


def _refit(form, lx, lx2, ly, warm, fitkw: dict[str, Any], n_starts: int) -> np.ndarray:
    """One bootstrap refit, by the point estimate's method: from the point estimate (grid), or from variable
    projection's own starts (varpro); a failed refit gives NaNs (dropped later)."""
    varpro = fitkw.get("method") == "varpro"
    try:
        return fit_theta(form, lx, lx2, ly, starts=None if varpro else warm, n_keep=n_starts if varpro else 1,
                         **fitkw)[0]
    except TTLabInputError:
        return np.full(warm.shape[1], np.nan)


BootstrapProgress = Callable[[int, int], None]
"""``progress(done, total)``: called as the bootstrap's replicates finish (about every 1 % of them)."""


def _residual_draws(form, lx, lx2, ly, theta_hat, fitkw):
    """(fitted log L, resampling pool, per-point divisor) of the residual bootstrap: leverage-adjusted log residuals,
    centred unless the fit is asymmetric (a lower envelope's residuals are one-sided by design); with weights the
    residuals are standardised by √w and a draw for point i is divided by √w_i (error variance ∝ 1/weight)."""
    pred, jac = log_model(form, theta_hat, lx, lx2)
    weights = fitkw.get("weights")
    if weights is None:
        r, sw = (ly - pred) / np.sqrt(1.0 - _leverage(jac)), None
    else:
        sw = np.sqrt(weights)
        r = sw * (ly - pred) / np.sqrt(1.0 - _leverage(jac * sw[:, None]))
    if fitkw.get("asymmetry", 1.0) == 1.0:
        r = r - r.mean()
    return pred, r, sw


def _bootstrap(form, lx, lx2, ly, theta_hat, *, n_boot, rng, method, fitkw, n_starts=4,
               progress: BootstrapProgress | None = None):
    """Bootstrap replicates of θ (rows), each refitted as the point estimate was (``fitkw``: :func:`fit_theta`'s
    options); returns (samples, n_rejected_draws)."""
    if n_boot == 0:
        return np.empty((0, theta_hat.size)), 0
    step = max(1, n_boot // 100)

    def report(done: int) -> None:
        if progress is not None and (done % step == 0 or done == n_boot):
            progress(done, n_boot)

    report(0)
    n = lx.size
    warm = theta_hat[None, :]
    weights = fitkw.get("weights")
    if method == "residual":
        pred, r, sw = _residual_draws(form, lx, lx2, ly, theta_hat, fitkw)
        rows = max(1, BOOTSTRAP_CHUNK // n)  # drawn in chunks: the same stream as one (n_boot, n) draw
        out = []
        for start in range(0, n_boot, rows):
            draws = r[rng.integers(0, n, size=(min(rows, n_boot - start), n))]
            y_star = pred[None, :] + (draws if sw is None else draws / sw)
            if form == "power":
                X = np.column_stack([np.ones_like(lx), -lx])
                if sw is None:
                    out.append(np.linalg.lstsq(X, y_star.T, rcond=None)[0].T)
                else:
                    out.append(np.linalg.lstsq(X * sw[:, None], (y_star * sw).T, rcond=None)[0].T)
                report(start + len(y_star))
                continue
            for i, ys in enumerate(y_star):
                out.append(_refit(form, lx, lx2, ys, warm, fitkw, n_starts)[None, :])
                report(start + i + 1)
        return np.concatenate(out), 0
    samples, rejected = [], 0
    max_rejected = 20 * n_boot + 100
    while len(samples) < n_boot:
        idx = rng.integers(0, n, size=n)
        ok = np.unique(idx).size >= MIN_POINTS[form] - 1 and np.unique(lx[idx]).size >= (
            3 if form == "offset" else 2
        )
        if form == "chinchilla":
            ok = ok and np.unique(lx2[idx]).size >= 2
        if not ok:
            rejected += 1
            if rejected > max_rejected:
                raise TTLabInputError(
                    "pairs bootstrap keeps drawing degenerate resamples (too few distinct points); "
                    "use bootstrap_method='residual'"
                )
            continue
        kw = fitkw if weights is None else {**fitkw, "weights": weights[idx]}
        samples.append(_refit(form, lx[idx], None if lx2 is None else lx2[idx], ly[idx], warm, kw, n_starts))
        report(len(samples))
    return np.array(samples), rejected


def _select(form, x, y, x2, names, weights, drop_highest):
    """Validated log columns after dropping the ``drop_highest`` highest losses: (lx, ly, lx2, n, weights, kept
    positions, dropped positions)."""
    lx, ly, lx2, n = prepare_data(form, x, y, x2, names)  # the input as given
    weights = check_weights(weights, n)
    kept, dropped = drop_highest_points(form, ly, drop_highest)
    if dropped.size:  # the design is checked again on the points that are left
        lx, ly, lx2, n = prepare_data(form, np.asarray(x, dtype=float)[kept], np.asarray(y, dtype=float)[kept],
                                      None if x2 is None else np.asarray(x2, dtype=float)[kept], names)
        weights = None if weights is None else weights[kept]
    # weights of mean 1: the same optimum, an objective on the unweighted one's scale (the optimisers' absolute
    # tolerances stay meaningful)
    return lx, ly, lx2, n, None if weights is None else weights / weights.mean(), kept, dropped


def _fit(
    form: str,
    x: ArrayLike,
    y: ArrayLike,
    x2: ArrayLike | None,
    *,
    bootstrap: int,
    seed: int,
    ci_level: float,
    bootstrap_method: str | None,
    delta: float = HUBER_DELTA,
    reduction: str = "sum",
    n_starts: int = 4,
    lbfgsb_options: dict[str, Any] | None = None,
    names: tuple[str, str, str] = ("x", "y", "x2"),
    objective: str = "huber",
    progress: BootstrapProgress | None = None,
    method: str = "grid",
    weights: ArrayLike | None = None,
    asymmetry: float = 1.0,
    drop_highest: int = 0,
) -> FitResult:
    """Validate, fit θ, measure the fit, bootstrap the intervals (``progress(done, total)`` as replicates finish) and
    assemble the :class:`FitResult`."""
    if bootstrap_method is None:
        bootstrap_method = DEFAULT_BOOTSTRAP_METHOD[form]
    check_options(bootstrap, ci_level, seed, bootstrap_method)
    asymmetry = check_fit_method(form, method, asymmetry)
    lx, ly, lx2, n, w, kept, dropped = _select(form, x, y, x2, names, weights, drop_highest)
    options = check_optimizer_options(form, delta, reduction, lbfgsb_options, n_starts, objective)
    fitkw = {"delta": delta, "reduction": reduction, "options": options, "objective": objective, "method": method,
             "weights": w, "asymmetry": asymmetry}
    theta, opt_info = fit_theta(form, lx, lx2, ly, starts=start_points(form, lx, ly) if method == "grid" else None,
                                n_keep=n_starts, **fitkw)
    pred, _ = log_model(form, theta, lx, lx2)
    r2_log, rmse_log, rmse = goodness(ly, pred)
    params = {k: float(v) for k, v in zip(PARAM_NAMES[form], natural_params(form, theta))}

    samples, rejected = _bootstrap(form, lx, lx2, ly, theta, n_boot=bootstrap, rng=np.random.default_rng(seed),
                                   method=bootstrap_method, fitkw=fitkw, n_starts=n_starts, progress=progress)
    ci, ci_widened, n_used, ci_notes = percentile_ci(form, samples, params, ci_level)
    id_notes = (bound_notes(form, params) + range_notes(form, params, opt_info)
                + floor_notes(params, np.exp(ly), names, kept) + design_notes(lx, ly, lx2, r2_log, names)
                + collapse_notes(ci, params, rmse_log))
    ci_analytic, stderr = analytic_ci(form, lx, ly - pred, theta, ci_level, w)
    extras = {"method": method, "asymmetry": asymmetry, "weighted": w is not None, "drop_highest": int(drop_highest),
              "dropped": [int(i) for i in dropped]}
    return FitResult(
        form=form,
        params=params,
        ci=ci,
        ci_level=float(ci_level),
        n_points=int(n),
        r2_log=r2_log,
        rmse_log=rmse_log,
        rmse=rmse,
        theta=np.asarray(theta, dtype=float),
        bootstrap={
            "n_requested": int(bootstrap),
            "n_used": n_used,
            "method": bootstrap_method,
            "seed": int(seed),
            "degenerate_draws_rejected": int(rejected),
            "interval": "percentile",
        },
        optimizer=opt_info,
        config=fit_config(form, bootstrap, bootstrap_method, seed, ci_level, delta, reduction, n_starts, options,
                          objective, extras),
        ci_analytic=ci_analytic,
        stderr=stderr,
        bootstrap_samples=natural_params(form, samples) if samples.shape[0] else None,
        identifiable=not id_notes,
        warnings=id_notes + start_notes(form, opt_info.get("starts", []), float(np.exp(ly.min()))) + ci_notes,
        diagnostics=diagnostics(lx, ly, lx2, ci_widened),
    )


def fit_power_law(
    x: ArrayLike,
    y: ArrayLike,
    *,
    bootstrap: int = DEFAULT_BOOTSTRAP["power"],
    seed: int = 0,
    ci_level: float = DEFAULT_CI_LEVEL,
    bootstrap_method: str | None = "residual",
    progress: BootstrapProgress | None = None,
    weights: ArrayLike | None = None,
    drop_highest: int = 0,
) -> FitResult:
    """Fit L = A·x^(−α) by least squares on (log x, log L); bootstrap CIs for A and α (``progress(done, total)`` as
    the replicates finish). ``weights`` (one per point, positive): weighted least squares; ``drop_highest`` K: the K
    highest losses are left out first (their 0-based positions are in ``config["dropped"]``)."""
    return _fit(
        "power", x, y, None, bootstrap=bootstrap, seed=seed, ci_level=ci_level,
        bootstrap_method=bootstrap_method, progress=progress, weights=weights, drop_highest=drop_highest,
    )


def fit_offset_power_law(
    x: ArrayLike,
    y: ArrayLike,
    *,
    bootstrap: int = DEFAULT_BOOTSTRAP["offset"],
    seed: int = 0,
    ci_level: float = DEFAULT_CI_LEVEL,
    bootstrap_method: str | None = "residual",
    n_starts: int = 4,
    progress: BootstrapProgress | None = None,
    method: Literal["grid", "varpro"] = "grid",
    weights: ArrayLike | None = None,
    asymmetry: float = 1.0,
    drop_highest: int = 0,
) -> FitResult:
    """Fit L = E + A·x^(−α) (squared log residuals, least_squares from the best ``n_starts`` of a grid);
    ``progress(done, total)`` as the bootstrap's replicates finish.

    ``method="varpro"``: the starts are the best local minima of variable projection over α ∈ {0.01, …, 10}
    (:mod:`ttlab.scaling.fit_varpro`; bootstrap refits do the same). ``weights``: each point's squared residual
    multiplied by its weight; ``asymmetry`` A ≥ 1: that of a point the model over-estimates multiplied by A (a lower
    envelope); ``drop_highest`` K: the K highest losses left out first."""
    return _fit(
        "offset", x, y, None, bootstrap=bootstrap, seed=seed, ci_level=ci_level,
        bootstrap_method=bootstrap_method, n_starts=n_starts, progress=progress, method=method, weights=weights,
        asymmetry=asymmetry, drop_highest=drop_highest,
    )


def fit_chinchilla(
    n_params: ArrayLike,
    n_tokens: ArrayLike,
    loss: ArrayLike,
    *,
    bootstrap: int = DEFAULT_BOOTSTRAP["chinchilla"],
    seed: int = 0,
    ci_level: float = DEFAULT_CI_LEVEL,
    bootstrap_method: str | None = None,
    delta: float = HUBER_DELTA,
    reduction: Literal["sum", "mean"] = "sum",
    n_starts: int = 4,
    lbfgsb_options: dict[str, Any] | None = None,
    objective: Literal["huber", "huber-likelihood"] = "huber",
    progress: BootstrapProgress | None = None,
    method: Literal["grid", "varpro"] = "grid",
    weights: ArrayLike | None = None,
    asymmetry: float = 1.0,
    drop_highest: int = 0,
) -> FitResult:
    """Fit L(N, D) = E + A/N^α + B/D^β in log space with a summed Huber loss (δ = 1e-3).

    ``objective="huber-likelihood"`` minimises instead the Huber negative log-likelihood with a
    jointly fitted scale σ (:func:`chinchilla_huber_nll`; σ is reported as ``optimizer["scale"]``).
    The bootstrap defaults to ``"pairs"`` (:data:`DEFAULT_BOOTSTRAP_METHOD`).
    L-BFGS-B runs from the ``n_starts`` best points (by the objective) of Epoch AI's grid
    e ∈ {−1, −.5, …, 1}, a, b ∈ {0, 5, …, 25}, α, β ∈ {0, .5, …, 2}, with
    :data:`DEFAULT_LBFGSB_OPTIONS` unless ``lbfgsb_options`` is given (``{}`` = scipy defaults).
    ``reduction="mean"`` with scipy's default tolerances reproduces the early stop of a mean
    Huber loss; do not use it for real fits. Bootstrap refits start from the point estimate;
    ``progress(done, total)`` is called as they finish.

    ``method="varpro"``: L-BFGS-B runs instead from the ``n_starts`` best local minima of variable projection over
    α, β ∈ {0.03, …, 3}, each first refined by a centred Gauss–Newton fit (:mod:`ttlab.scaling.fit_varpro`); bootstrap
    refits do the same. ``weights``: each point's loss term multiplied by its weight; ``asymmetry`` A ≥ 1: the term of
    a point the model over-estimates (log L̂ > log L) multiplied by A (OLMo-core's overestimate penalty: a lower
    envelope); ``drop_highest`` K: the K highest losses left out first (Epoch AI's replication drops 5).
    """
    return _fit(
        "chinchilla", n_params, loss, n_tokens, bootstrap=bootstrap, seed=seed, ci_level=ci_level,
        bootstrap_method=bootstrap_method, delta=delta, reduction=reduction, n_starts=n_starts,
        lbfgsb_options=lbfgsb_options, names=("N", "loss", "D"), objective=objective, progress=progress,
        method=method, weights=weights, asymmetry=asymmetry, drop_highest=drop_highest,
    )


def fit_scaling_law(
    form: str,
    x: ArrayLike,
    y: ArrayLike,
    x2: ArrayLike | None = None,
    **kwargs: Any,
) -> FitResult:
    """Dispatch to the fitter for ``form`` (``power``, ``offset`` or ``chinchilla``; x2 = D for the last)."""
    if form not in FORMS:
        raise TTLabInputError(f"unknown form {form!r}; choose one of {', '.join(FORMS)}")
    if form == "chinchilla":
        if x2 is None:
            raise TTLabInputError("the chinchilla form needs x2 (data size D) as well as x (model size N)")
        return fit_chinchilla(x, x2, y, **kwargs)
    if x2 is not None:
        raise TTLabInputError(f"x2 is only used by the chinchilla form, not by {form!r}")
    if form == "power":
        return fit_power_law(x, y, **kwargs)
    return fit_offset_power_law(x, y, **kwargs)
