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

Every fit reports goodness of fit (R² and RMSE of log L, RMSE of L) and seeded bootstrap
percentile intervals for every parameter. The default bootstrap of the power and offset forms
resamples leverage-adjusted, centred log residuals around the fitted curve (fixed design; works for
the few points a scaling sweep has); the Chinchilla form's default resamples data points ("pairs"),
the bootstrap whose spread matches Besiroglu et al.'s published standard errors (a residual
bootstrap is about 2x narrower there). See :data:`DEFAULT_BOOTSTRAP_METHOD`.

Imports: numpy, scipy, ttlab.errors; nothing else of ttlab.
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, special, stats

from ttlab.errors import TTLabInputError

__all__ = [
    "FORMS",
    "PARAM_NAMES",
    "MIN_POINTS",
    "DEFAULT_LBFGSB_OPTIONS",
    "FitResult",
    "fit_power_law",
    "fit_offset_power_law",
    "fit_chinchilla",
    "fit_scaling_law",
    "chinchilla_huber_objective",
    "chinchilla_huber_nll",
    "huber_log_normaliser",
    "huber_logpdf",
    "OBJECTIVES",
    "DEFAULT_BOOTSTRAP_METHOD",
]

Form = Literal["power", "offset", "chinchilla"]
FORMS: tuple[str, ...] = ("power", "offset", "chinchilla")
PARAM_NAMES: dict[str, tuple[str, ...]] = {
    "power": ("A", "alpha"),
    "offset": ("E", "A", "alpha"),
    "chinchilla": ("E", "A", "alpha", "B", "beta"),
}
# Internal parameter vector θ per form (log-amplitudes): power (a, α); offset (e, a, α);
# chinchilla (e, a, α, b, β). Natural parameters: E = e^e, A = e^a, B = e^b.
_LOG_PARAMS = {"E", "A", "B"}
MIN_POINTS: dict[str, int] = {"power": 3, "offset": 4, "chinchilla": 6}
"""Fewest points per form: one more than the number of parameters (one residual degree of freedom)."""

CONSTANT_Y_TOL = 1e-9
"""A loss column whose log varies by at most this (relative spread of L) is constant: an error."""
NEAR_CONSTANT_Y_TOL = 1e-6
"""A loss whose log varies by less than this (relative spread of L below 1e-6, about 16 float32 ulps, the
precision losses are recorded with) cannot identify an exponent: the fit is marked not identifiable."""
MIN_DISTINCT_SIZES = 3
"""Fewer distinct sizes than this cannot identify an exponent: a power law through 2 sizes is a line
through 2 points, its exponent fixed by them and untested (its interval only reflects scatter)."""
COLLINEAR_R = 0.99
"""Chinchilla form: |corr(log N, log D)| at or above this is an error (α and β not identifiable)."""
_AT_BOUND = 1e-6  # an exponent this close to a bound makes its term merge with another one

BOOTSTRAP_METHODS = ("residual", "pairs")
DEFAULT_BOOTSTRAP_METHOD: dict[str, str] = {"power": "residual", "offset": "residual", "chinchilla": "pairs"}
"""Bootstrap used when none is given. Chinchilla: pairs, whose spread matches Besiroglu et al. 2024's
published standard errors (their residual-style intervals are about 2x narrower); changed from
"residual" in issue 24 (intervals of the Chinchilla form are wider than before by default)."""
OBJECTIVES = ("huber", "huber-likelihood")
"""Chinchilla-form objectives: ``huber`` = summed Huber loss of log residuals (Hoffmann et al. 2022);
``huber-likelihood`` = Huber negative log-likelihood with a fitted scale (Besiroglu et al. 2024)."""
_MIN_SCALE = 1e-12  # the likelihood's σ is bounded below: an exact fit would send it to 0 (NLL → −∞)
#: bootstrap replicates above which a fit is refused (the replicates are kept for the percentiles)
MAX_BOOTSTRAP = 1_000_000
#: residual-bootstrap resamples are drawn this many values (replicates × points) at a time
BOOTSTRAP_CHUNK = 2**20
_HUBER_DELTA = 1e-3
_LBFGSB_KEYS = {"ftol", "gtol", "maxiter", "maxfun", "maxcor", "maxls"}
DEFAULT_LBFGSB_OPTIONS: dict[str, Any] = {"ftol": 1e-12, "gtol": 1e-8, "maxiter": 15000}
"""L-BFGS-B options of the Chinchilla fit.

L-BFGS-B stops when the decrease of f falls below ftol·max(|f|, |f_new|, 1). A Huber loss of
small log residuals is ≪ 1, so with scipy's default ftol = 2.2e-9 the test is an *absolute*
decrease of 2.2e-9: a mean Huber loss (f ~ 1e-5) stops after a few iterations, and even the summed
loss stops early on small data sets (tens of points) or from a warm start (bootstrap refits,
whose intervals then collapse onto the point estimate). These tighter tolerances make both
reductions reach the same minimum; pass ``lbfgsb_options={}`` to get scipy's defaults.
"""
# Epoch AI's grid of initialisations for the Chinchilla fit.
_CHIN_GRID = {
    "e": np.arange(-1.0, 1.01, 0.5),
    "a": np.arange(0.0, 25.1, 5.0),
    "alpha": np.arange(0.0, 2.01, 0.5),
    "b": np.arange(0.0, 25.1, 5.0),
    "beta": np.arange(0.0, 2.01, 0.5),
}


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
        pred, _ = _log_model(self.form, self.theta, lx, lx2)
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


# --------------------------------------------------------------------------------------------
# validation


def _as_positive_1d(values: ArrayLike, name: str) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TTLabInputError(f"{name} must be numeric") from None
    if arr.ndim != 1:
        raise TTLabInputError(f"{name} must be one-dimensional, got shape {arr.shape}")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise TTLabInputError(f"{name} has non-finite values at indices {bad[:10].tolist()}")
    bad = np.flatnonzero(arr <= 0)
    if bad.size:
        raise TTLabInputError(
            f"{name} must be > 0 (a log-log fit needs positive values); "
            f"non-positive at indices {bad[:10].tolist()}"
        )
    return arr


def _check_options(bootstrap: int, ci_level: float, seed: int, method: str) -> None:
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, (int, np.integer)) or bootstrap < 0:
        raise TTLabInputError(f"bootstrap must be a non-negative integer, got {bootstrap!r}")
    if bootstrap > MAX_BOOTSTRAP:
        raise TTLabInputError(
            f"--bootstrap {bootstrap:,} is above the {MAX_BOOTSTRAP:,}-replicate limit: the replicates alone would "
            f"hold ~{bootstrap * 3 * 8 / 2**30:,.1f} GiB and a percentile interval's Monte-Carlo error is already "
            f"~1 % of its width at 10,000; use at most {MAX_BOOTSTRAP:,}"
        )
    if not isinstance(ci_level, (int, float)) or not 0 < ci_level < 1:
        raise TTLabInputError(f"ci_level must be in (0, 1), got {ci_level!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TTLabInputError(f"seed must be an integer, got {seed!r}")
    if method not in BOOTSTRAP_METHODS:
        raise TTLabInputError(f"bootstrap_method must be one of {BOOTSTRAP_METHODS}, got {method!r}")


def _prepare(form: str, x: ArrayLike, y: ArrayLike, x2: ArrayLike | None, names: tuple[str, str, str]):
    xa = _as_positive_1d(x, names[0])
    ya = _as_positive_1d(y, names[1])
    arrays = [xa, ya]
    if form == "chinchilla":
        arrays.append(_as_positive_1d(x2, names[2]))
    if len({a.size for a in arrays}) != 1:
        sizes = ", ".join(f"{n}: {a.size}" for n, a in zip(names, arrays))
        raise TTLabInputError(f"inputs must have the same length ({sizes})")
    n = xa.size
    if n < MIN_POINTS[form]:
        raise TTLabInputError(
            f"the {form} form has {len(PARAM_NAMES[form])} parameters and needs at least "
            f"{MIN_POINTS[form]} points, got {n}"
        )
    if np.unique(xa).size < 2:
        raise TTLabInputError(f"{names[0]} needs at least 2 distinct values to fit an exponent")
    if form == "offset" and np.unique(xa).size < 3:
        raise TTLabInputError(f"the offset form needs at least 3 distinct {names[0]} values")
    if form == "chinchilla" and np.unique(arrays[2]).size < 2:
        raise TTLabInputError(f"{names[2]} needs at least 2 distinct values to fit its exponent")
    lx, ly = np.log(xa), np.log(ya)
    spread = float(np.ptp(ly))
    if spread <= CONSTANT_Y_TOL:
        raise TTLabInputError(
            f"{names[1]} is constant ({'all values' if spread == 0 else 'relative spread'} "
            f"{ya[0]:.6g}{'' if spread == 0 else f' ± {spread:.1e}'}): a scaling law has nothing to fit and its "
            "exponent is not identifiable"
        )
    lx2 = np.log(arrays[2]) if form == "chinchilla" else None
    if lx2 is not None:
        r = log_correlation(lx, lx2)
        if abs(r) >= COLLINEAR_R:
            raise TTLabInputError(
                f"log {names[0]} and log {names[2]} are collinear (correlation {r:.4f}, |r| ≥ {COLLINEAR_R}): "
                f"along such data A/{names[0]}^α and B/{names[2]}^β cannot be told apart, so α and β are not "
                f"identifiable. Vary {names[0]} and {names[2]} independently (several {names[2]} per "
                f"{names[0]}), or fit the power/offset form against one of them"
            )
    return lx, ly, lx2, n


def log_correlation(lx: np.ndarray, lx2: np.ndarray) -> float:
    """Pearson correlation of two log-size columns (0 when either is constant)."""
    a, b = lx - lx.mean(), lx2 - lx2.mean()
    den = math.sqrt(float(a @ a) * float(b @ b))
    return float(a @ b) / den if den > 0 else 0.0


# --------------------------------------------------------------------------------------------
# models in log space


def _lse(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log Σ_k exp(t_k) over axis 0 and the softmax weights (plain numpy: this is the hot loop)."""
    m = t.max(axis=0)
    ex = np.exp(t - m)
    s = ex.sum(axis=0)
    return m + np.log(s), ex / s


def _huber(delta: float, r: np.ndarray) -> np.ndarray:
    a = np.abs(r)
    return np.where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta))


def _log_model(form: str, theta: np.ndarray, lx: np.ndarray, lx2: np.ndarray | None):
    """log L̂ and its Jacobian with respect to θ (shape (n, p))."""
    if form == "power":
        a, alpha = theta
        return a - alpha * lx, np.column_stack([np.ones_like(lx), -lx])
    if form == "offset":
        e, a, alpha = theta
        pred, w = _lse(np.stack([np.full_like(lx, e), a - alpha * lx]))
        return pred, np.column_stack([w[0], w[1], -w[1] * lx])
    e, a, alpha, b, beta = theta
    pred, w = _lse(np.stack([np.full_like(lx, e), a - alpha * lx, b - beta * lx2]))
    return pred, np.column_stack([w[0], w[1], -w[1] * lx, w[2], -w[2] * lx2])


def chinchilla_huber_objective(
    theta: ArrayLike,
    log_n: ArrayLike,
    log_d: ArrayLike,
    log_loss: ArrayLike,
    delta: float = _HUBER_DELTA,
    reduction: Literal["sum", "mean"] = "sum",
) -> tuple[float, np.ndarray]:
    """Huber loss of log residuals of the Chinchilla form, and its gradient.

    ``theta = (e, a, alpha, b, beta)``; the loss is Σ_i Huber_δ(LSE(e, a − α log N_i,
    b − β log D_i) − log L_i), divided by the number of points when ``reduction="mean"``.
    """
    r, jac = _chinchilla_residuals(theta, log_n, log_d, log_loss)
    return _reduced(float(_huber(delta, r).sum()), jac.T @ np.clip(r, -delta, delta), r.size, reduction)


def _chinchilla_residuals(theta: ArrayLike, log_n: ArrayLike, log_d: ArrayLike, log_loss: ArrayLike):
    """Log residuals log L̂ − log L of the Chinchilla form at θ[:5], and their Jacobian."""
    lx, lx2, ly = (np.asarray(v, dtype=float) for v in (log_n, log_d, log_loss))
    pred, jac = _log_model("chinchilla", np.asarray(theta, dtype=float)[:5], lx, lx2)
    return pred - ly, jac


def _reduced(f: float, grad: np.ndarray, n: int, reduction: str) -> tuple[float, np.ndarray]:
    """(f, grad) summed over the n points, or divided by n for ``reduction="mean"``."""
    return (f / n, grad / n) if reduction == "mean" else (f, grad)


def huber_log_normaliser(delta: float = _HUBER_DELTA) -> float:
    """log Z(δ) of the unit-scale Huber density p(u) = exp(−ρ_δ(u)) / Z(δ).

    Z(δ) = ∫ exp(−ρ_δ(u)) du = √(2π)·(2Φ(δ) − 1) + 2·exp(−δ²/2)/δ: the Gaussian core on |u| ≤ δ,
    plus two exponential tails ∫_δ^∞ exp(δ²/2 − δu) du = exp(−δ²/2)/δ.
    """
    return math.log(math.sqrt(2 * math.pi) * special.erf(delta / math.sqrt(2)) + 2 * math.exp(-0.5 * delta**2) / delta)


def huber_logpdf(r: ArrayLike, delta: float = _HUBER_DELTA, scale: float = 1.0) -> np.ndarray:
    """log density of residuals ``r`` under the Huber distribution with scale σ:
    −ρ_δ(r/σ) − log σ − log Z(δ) (δ applies to the standardised residual r/σ)."""
    u = np.asarray(r, dtype=float) / scale
    return -_huber(delta, u) - math.log(scale) - huber_log_normaliser(delta)


def chinchilla_huber_nll(
    theta: ArrayLike,
    log_n: ArrayLike,
    log_d: ArrayLike,
    log_loss: ArrayLike,
    delta: float = _HUBER_DELTA,
    reduction: Literal["sum", "mean"] = "sum",
) -> tuple[float, np.ndarray]:
    """Huber negative log-likelihood of the Chinchilla form's log residuals, and its gradient.

    ``theta = (e, a, alpha, b, beta, s)`` with scale σ = e^s; with r_i the log residual and
    u_i = r_i/σ, NLL = Σ_i ρ_δ(u_i) + n·s + n·log Z(δ) (:func:`huber_log_normaliser`). Gradient:
    ∂/∂θ_j = Σ_i ψ(u_i)·J_ij/σ, ∂/∂s = n − Σ_i ψ(u_i)·u_i, ψ = clip(·, −δ, δ).
    """
    r, jac = _chinchilla_residuals(theta, log_n, log_d, log_loss)
    s = float(np.asarray(theta, dtype=float)[5])
    u = r * math.exp(-s)
    psi = np.clip(u, -delta, delta)
    n = u.size
    f = float(_huber(delta, u).sum()) + n * (s + huber_log_normaliser(delta))
    return _reduced(f, np.append(jac.T @ psi * math.exp(-s), n - float(psi @ u)), n, reduction)


def _profile_scale(r: np.ndarray, delta: float) -> np.ndarray:
    """The likelihood's σ for fixed residuals (rows of ``r``): the root of mean_i min(u_i², δ|u_i|) = 1,
    u = r/σ (∂NLL/∂s = 0), by bisection in log σ; at least :data:`_MIN_SCALE`."""
    a = np.abs(np.atleast_2d(r))
    n = a.shape[-1]
    amax = np.maximum(a.max(axis=-1), _MIN_SCALE)
    # the mean is ≤ δ·mean|u| and ≤ mean u², so the root is ≤ hi; at lo the largest |u| alone gives ≥ 1
    hi = np.maximum(np.minimum(delta * a.mean(axis=-1), np.sqrt((a * a).mean(axis=-1))), _MIN_SCALE)
    lo = np.minimum(np.minimum(delta * amax / n, amax / math.sqrt(n)), hi)
    llo, lhi = np.log(lo), np.log(hi)
    for _ in range(80):
        mid = 0.5 * (llo + lhi)
        u = a / np.exp(mid)[:, None]
        big = np.minimum(u * u, delta * u).mean(axis=-1) > 1.0
        llo, lhi = np.where(big, mid, llo), np.where(big, lhi, mid)
    return np.maximum(np.exp(0.5 * (llo + lhi)), _MIN_SCALE)


def _fit_power_theta(lx: np.ndarray, ly: np.ndarray) -> np.ndarray:
    X = np.column_stack([np.ones_like(lx), -lx])
    coef, *_ = np.linalg.lstsq(X, ly, rcond=None)
    return coef


def _offset_starts(lx: np.ndarray, ly: np.ndarray) -> np.ndarray:
    ymin = float(np.exp(ly.min()))
    starts = []
    for frac in (1e-6, 0.25, 0.5, 0.75, 0.9, 0.97):
        E = frac * ymin
        rest = np.log(np.exp(ly) - E)
        for alpha in (0.03, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 1.5, 2.5):
            a = float(np.mean(rest + alpha * lx))
            starts.append((math.log(E), a, alpha))
    return np.array(starts)


_OFFSET_BOUNDS_ALPHA = (0.0, 10.0)
# exponents whose estimate at a bound means a term has merged with another (E absorbs A·x^0)
_BOUNDS: dict[str, tuple[tuple[str, float, float], ...]] = {
    "offset": (("alpha", *_OFFSET_BOUNDS_ALPHA),),
    "chinchilla": (("alpha", 0.0, math.inf), ("beta", 0.0, math.inf)),
}


def _fit_offset_theta(lx, ly, starts: np.ndarray, n_keep: int):
    lo = np.array([ly.min() - 40.0, -np.inf, _OFFSET_BOUNDS_ALPHA[0]])
    hi = np.array([np.inf, np.inf, _OFFSET_BOUNDS_ALPHA[1]])
    starts = np.clip(starts, lo + 1e-9, hi - 1e-9)
    if starts.shape[0] > n_keep:
        sse = np.array([np.sum((_log_model("offset", s, lx, None)[0] - ly) ** 2) for s in starts])
        starts = starts[np.argsort(sse, kind="stable")[:n_keep]]
    best = None
    for s in starts:
        res = optimize.least_squares(
            lambda th: _log_model("offset", th, lx, None)[0] - ly,
            s,
            jac=lambda th: _log_model("offset", th, lx, None)[1],
            bounds=(lo, hi),
            method="trf",
            x_scale="jac",
        )
        if best is None or res.cost < best.cost:
            best = res
    info = {
        "method": "scipy.optimize.least_squares (trf), squared log residuals",
        "success": bool(best.success),
        "message": str(best.message),
        "n_starts": int(starts.shape[0]),
        "objective": float(2 * best.cost),
    }
    return best.x, info


def _chinchilla_grid() -> np.ndarray:
    g = _CHIN_GRID
    return np.array(list(itertools.product(g["e"], g["a"], g["alpha"], g["b"], g["beta"])), dtype=float)


def _grid_objective(grid: np.ndarray, lx, lx2, ly, delta: float, objective: str = "huber") -> np.ndarray:
    """The objective at every row of ``grid`` (vectorised, chunked): the summed Huber loss, or the
    Huber NLL at its best scale (less the constant n·log Z(δ))."""
    out = np.empty(grid.shape[0])
    chunk = max(1, 2_000_000 // max(1, lx.size))
    for i in range(0, grid.shape[0], chunk):
        g = grid[i : i + chunk]
        t = np.stack(
            [
                np.broadcast_to(g[:, 0:1], (g.shape[0], lx.size)),
                g[:, 1:2] - g[:, 2:3] * lx,
                g[:, 3:4] - g[:, 4:5] * lx2,
            ]
        )
        r = _lse(t)[0] - ly
        if objective == "huber":
            out[i : i + chunk] = _huber(delta, r).sum(axis=1)
        else:
            sigma = _profile_scale(r, delta)
            out[i : i + chunk] = _huber(delta, r / sigma[:, None]).sum(axis=1) + lx.size * np.log(sigma)
    return out


def _fit_chinchilla_theta(
    lx, lx2, ly, starts: np.ndarray, n_keep: int, delta: float, reduction: str, options: dict | None = None,
    objective: str = "huber",
):
    if starts.shape[0] > n_keep:
        vals = _grid_objective(starts, lx, lx2, ly, delta, objective)
        starts = starts[np.argsort(vals, kind="stable")[:n_keep]]
    likelihood = objective == "huber-likelihood"
    fun = chinchilla_huber_nll if likelihood else chinchilla_huber_objective
    bounds = [(None, None)] * 5 + [(math.log(_MIN_SCALE), None)] if likelihood else None
    best = None
    for s in starts:
        if likelihood:  # the scale starts at its best value for this start's residuals
            r0 = _log_model("chinchilla", s, lx, lx2)[0] - ly
            s = np.append(s, math.log(float(_profile_scale(r0, delta)[0])))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            res = optimize.minimize(
                fun,
                s,
                args=(lx, lx2, ly, delta, reduction),
                jac=True,
                method="L-BFGS-B",
                bounds=bounds,
                options=options,
            )
        if not np.all(np.isfinite(res.x)):
            continue
        if best is None or res.fun < best.fun:
            best = res
    if best is None:
        raise TTLabInputError("the chinchilla fit failed from every starting point (non-finite values)")
    what = "Huber negative log-likelihood (fitted scale)" if likelihood else "Huber loss"
    info = {
        "method": f"scipy.optimize.minimize (L-BFGS-B), {reduction} {what} of log residuals",
        "objective_name": objective,
        "delta": delta,
        "reduction": reduction,
        "success": bool(best.success),
        "message": str(best.message),
        "n_iterations": int(best.nit),
        "n_starts": int(starts.shape[0]),
        "objective": float(best.fun),
    }
    if likelihood:
        info["scale"] = math.exp(float(best.x[5]))
    return best.x[:5], info


# --------------------------------------------------------------------------------------------
# generic fitting + bootstrap


def _fit_theta(form, lx, lx2, ly, *, starts, n_keep, delta, reduction, options, objective="huber"):
    if form == "power":
        return _fit_power_theta(lx, ly), {"method": "ordinary least squares on (log x, log L)"}
    if form == "offset":
        return _fit_offset_theta(lx, ly, starts, n_keep)
    return _fit_chinchilla_theta(lx, lx2, ly, starts, n_keep, delta, reduction, options, objective)


def _natural(form: str, theta: np.ndarray) -> np.ndarray:
    """Natural parameters (A = e^a etc.) from θ; works row-wise on a 2-D array."""
    theta = np.asarray(theta, dtype=float)
    out = theta.copy()
    for j, name in enumerate(PARAM_NAMES[form]):
        if name in _LOG_PARAMS:
            with np.errstate(over="ignore"):
                out[..., j] = np.exp(theta[..., j])
    return out


def _leverage(jac: np.ndarray) -> np.ndarray:
    h = np.einsum("ij,jk,ik->i", jac, np.linalg.pinv(jac.T @ jac), jac)
    return np.clip(h, 0.0, 0.99)


def _refit(form, lx, lx2, ly, warm, *, delta, reduction, options, objective="huber") -> np.ndarray:
    """One bootstrap refit from the point estimate; a failed refit gives NaNs (dropped later)."""
    try:
        return _fit_theta(form, lx, lx2, ly, starts=warm, n_keep=1, delta=delta, reduction=reduction,
                          options=options, objective=objective)[0]
    except TTLabInputError:
        return np.full(warm.shape[1], np.nan)


def _bootstrap(form, lx, lx2, ly, theta_hat, *, n_boot, rng, method, delta, reduction, options, objective="huber"):
    """Bootstrap replicates of θ (rows); returns (samples, n_rejected_draws)."""
    if n_boot == 0:
        return np.empty((0, theta_hat.size)), 0
    pred, jac = _log_model(form, theta_hat, lx, lx2)
    n = lx.size
    warm = theta_hat[None, :]
    if method == "residual":
        r = (ly - pred) / np.sqrt(1.0 - _leverage(jac))
        r = r - r.mean()
        rows = max(1, BOOTSTRAP_CHUNK // n)  # drawn in chunks: the same stream as one (n_boot, n) draw
        out = []
        for start in range(0, n_boot, rows):
            y_star = pred[None, :] + r[rng.integers(0, n, size=(min(rows, n_boot - start), n))]
            if form == "power":
                X = np.column_stack([np.ones_like(lx), -lx])
                out.append(np.linalg.lstsq(X, y_star.T, rcond=None)[0].T)
            else:
                out.append(np.array([_refit(form, lx, lx2, ys, warm, delta=delta, reduction=reduction,
                                            options=options, objective=objective)
                                     for ys in y_star]).reshape(-1, theta_hat.size))
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
        samples.append(
            _refit(form, lx[idx], None if lx2 is None else lx2[idx], ly[idx], warm,
                   delta=delta, reduction=reduction, options=options, objective=objective)
        )
    return np.array(samples), rejected


def _check_optimizer_options(
    form: str, delta: float, reduction: str, lbfgsb_options: dict[str, Any] | None, n_starts: int,
    objective: str = "huber",
) -> dict[str, Any]:
    """Validate the optimiser's options; return the L-BFGS-B options to use."""
    if objective not in OBJECTIVES:
        raise TTLabInputError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    if objective != "huber" and form != "chinchilla":
        raise TTLabInputError(f"objective {objective!r} is only used by the chinchilla form, not by {form!r}")
    if form == "chinchilla":
        if not (isinstance(delta, (int, float)) and delta > 0 and math.isfinite(delta)):
            raise TTLabInputError(f"Huber delta must be a positive number, got {delta!r}")
        if reduction not in ("sum", "mean"):
            raise TTLabInputError(f"reduction must be 'sum' or 'mean', got {reduction!r}")
    if lbfgsb_options is not None:
        if not isinstance(lbfgsb_options, dict):
            raise TTLabInputError(f"lbfgsb_options must be a dict, got {type(lbfgsb_options).__name__}")
        unknown = set(lbfgsb_options) - _LBFGSB_KEYS
        if unknown:
            raise TTLabInputError(
                f"unknown L-BFGS-B option(s) {sorted(unknown)}; allowed: {sorted(_LBFGSB_KEYS)}"
            )
    if isinstance(n_starts, bool) or not isinstance(n_starts, (int, np.integer)) or n_starts < 1:
        raise TTLabInputError(f"n_starts must be a positive integer, got {n_starts!r}")
    return dict(DEFAULT_LBFGSB_OPTIONS if lbfgsb_options is None else lbfgsb_options)


def _starts(form: str, lx: np.ndarray, ly: np.ndarray) -> np.ndarray | None:
    """Candidate starting points of the iterative fits (None for the closed-form power law)."""
    if form == "offset":
        return _offset_starts(lx, ly)
    if form == "chinchilla":
        return _chinchilla_grid()
    return None


def _goodness(ly: np.ndarray, pred: np.ndarray) -> tuple[float, float, float]:
    """(R² of log L, RMSE of log L, RMSE of L) of the fitted log predictions ``pred``."""
    resid = ly - pred
    ss_tot = float(np.sum((ly - ly.mean()) ** 2))
    r2_log = 1.0 - float(np.sum(resid**2)) / ss_tot if ss_tot > 0 else float("nan")
    rmse_log = float(np.sqrt(np.mean(resid**2)))
    rmse = float(np.sqrt(np.mean((np.exp(ly) - np.exp(pred)) ** 2)))
    return r2_log, rmse_log, rmse


def _bound_notes(form: str, params: dict[str, float]) -> list[str]:
    """One note per exponent fitted at its bound (the form's terms are then not identifiable)."""
    notes = []
    for name, lo_b, hi_b in _BOUNDS.get(form, ()):
        v = params[name]
        if v <= lo_b + _AT_BOUND or v >= hi_b - _AT_BOUND:
            notes.append(
                f"{name} = {v:.3g} is at its bound [{lo_b:g}, {hi_b:g}]: the fitted curve does not pin down the "
                f"{'offset form' if form == 'offset' else 'Chinchilla form'}'s terms separately (not identifiable)"
            )
    return notes


def _design_notes(
    lx: np.ndarray, ly: np.ndarray, lx2: np.ndarray | None, r2_log: float, names: tuple[str, str, str]
) -> list[str]:
    """Why the design cannot identify the exponent(s): fewer than :data:`MIN_DISTINCT_SIZES` distinct
    sizes, a near-constant loss (:data:`NEAR_CONSTANT_Y_TOL`), or R²(log) < 0 (worse than a constant)."""
    notes = []
    for name, col in ((names[0], lx), (names[2], lx2)):
        if col is not None and np.unique(col).size < MIN_DISTINCT_SIZES:
            notes.append(
                f"only {np.unique(col).size} distinct {name} value(s): an exponent through fewer than "
                f"{MIN_DISTINCT_SIZES} sizes is fixed by them, not tested, and its interval reflects only the "
                f"scatter at each size (not identifiable); add a third {name}"
            )
    spread = float(np.ptp(ly))
    if spread < NEAR_CONSTANT_Y_TOL:
        notes.append(
            f"{names[1]} is nearly constant (relative spread {spread:.1e} < {NEAR_CONSTANT_Y_TOL:g}, rounding level): "
            "the exponent is not identifiable"
        )
    if not (r2_log >= 0):
        notes.append(
            f"R²(log) = {r2_log:.3g}: the fitted law describes log {names[1]} worse than a constant, so its "
            "exponent is not identifiable"
        )
    return notes


def _percentile_ci(
    form: str, samples: np.ndarray, params: dict[str, float], ci_level: float
) -> tuple[dict[str, tuple[float, float]], list[str], int, list[str]]:
    """Bootstrap percentile intervals (widened to contain the estimate where they miss it).

    Returns (intervals, names of widened intervals, number of finite replicates used, notes)."""
    ci: dict[str, tuple[float, float]] = {}
    widened: list[str] = []
    notes: list[str] = []
    n_used = 0
    if samples.shape[0]:
        finite = np.all(np.isfinite(samples), axis=1)
        n_used = int(finite.sum())
    if n_used:
        nat_s = _natural(form, samples[finite])
        q = [(1 - ci_level) / 2 * 100, (1 + ci_level) / 2 * 100]
        for j, k in enumerate(PARAM_NAMES[form]):
            lo, hi = (float(v) for v in np.percentile(nat_s[:, j], q))
            if not lo <= params[k] <= hi:  # a percentile interval can miss a skewed or bounded estimate
                widened.append(k)
                lo, hi = min(lo, params[k]), max(hi, params[k])
            ci[k] = (lo, hi)
    elif samples.shape[0]:
        notes.append(f"all {samples.shape[0]} bootstrap refits failed: no intervals")
    if widened:
        notes.append(
            f"the bootstrap percentile interval of {', '.join(widened)} did not contain the point estimate "
            "(skewed or bounded bootstrap distribution); it was widened to include it — treat it with caution"
        )
    return ci, widened, n_used, notes


def _analytic_ci(
    form: str, lx: np.ndarray, resid: np.ndarray, theta: np.ndarray, ci_level: float
) -> tuple[dict[str, tuple[float, float]], dict[str, float]]:
    """Student-t intervals and standard errors of the OLS power law (empty for the other forms)."""
    n = lx.size
    if form != "power" or n <= 2:
        return {}, {}
    X = np.column_stack([np.ones_like(lx), -lx])
    s2 = float(np.sum(resid**2)) / (n - 2)
    cov = s2 * np.linalg.inv(X.T @ X)
    se = np.sqrt(np.diag(cov))
    tq = float(stats.t.ppf((1 + ci_level) / 2, df=n - 2))
    stderr = {"log_A": float(se[0]), "alpha": float(se[1])}
    ci_analytic = {
        "A": (float(np.exp(theta[0] - tq * se[0])), float(np.exp(theta[0] + tq * se[0]))),
        "alpha": (float(theta[1] - tq * se[1]), float(theta[1] + tq * se[1])),
    }
    return ci_analytic, stderr


def _diagnostics(lx: np.ndarray, ly: np.ndarray, lx2: np.ndarray | None, ci_widened: list[str]) -> dict[str, Any]:
    """Design diagnostics: distinct sizes, range of log L, collinearity of the two sizes."""
    diagnostics: dict[str, Any] = {"distinct_x": int(np.unique(lx).size), "log_y_range": float(np.ptp(ly))}
    if lx2 is not None:
        diagnostics["distinct_x2"] = int(np.unique(lx2).size)
        diagnostics["corr_log_x_log_x2"] = log_correlation(lx, lx2)
    if ci_widened:
        diagnostics["ci_widened_to_estimate"] = ci_widened
    return diagnostics


def _fit_config(
    form: str, bootstrap: int, bootstrap_method: str, seed: int, ci_level: float,
    delta: float, reduction: str, n_starts: int, options: dict[str, Any], objective: str = "huber",
) -> dict[str, Any]:
    """The options a fit was run with (those the form uses)."""
    config: dict[str, Any] = {
        "form": form,
        "bootstrap": int(bootstrap),
        "bootstrap_method": bootstrap_method,
        "seed": int(seed),
        "ci_level": float(ci_level),
    }
    if form == "offset":
        config["n_starts"] = int(n_starts)
    if form == "chinchilla":
        config.update(
            {
                "objective": objective,
                "huber_delta": float(delta),
                "reduction": reduction,
                "n_starts": int(n_starts),
                "lbfgsb_options": options,
            }
        )
    return config


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
    delta: float = _HUBER_DELTA,
    reduction: str = "sum",
    n_starts: int = 4,
    lbfgsb_options: dict[str, Any] | None = None,
    names: tuple[str, str, str] = ("x", "y", "x2"),
    objective: str = "huber",
) -> FitResult:
    """Validate, fit θ, measure the fit, bootstrap the intervals and assemble the :class:`FitResult`."""
    if bootstrap_method is None:
        bootstrap_method = DEFAULT_BOOTSTRAP_METHOD[form]
    _check_options(bootstrap, ci_level, seed, bootstrap_method)
    lx, ly, lx2, n = _prepare(form, x, y, x2, names)
    options = _check_optimizer_options(form, delta, reduction, lbfgsb_options, n_starts, objective)
    theta, opt_info = _fit_theta(
        form, lx, lx2, ly, starts=_starts(form, lx, ly), n_keep=n_starts, delta=delta, reduction=reduction,
        options=options, objective=objective,
    )
    pred, _ = _log_model(form, theta, lx, lx2)
    r2_log, rmse_log, rmse = _goodness(ly, pred)
    params = {k: float(v) for k, v in zip(PARAM_NAMES[form], _natural(form, theta))}

    samples, rejected = _bootstrap(
        form, lx, lx2, ly, theta, n_boot=bootstrap, rng=np.random.default_rng(seed), method=bootstrap_method,
        delta=delta, reduction=reduction, options=options, objective=objective,
    )
    bound_notes = _bound_notes(form, params) + _design_notes(lx, ly, lx2, r2_log, names)
    ci, ci_widened, n_used, ci_notes = _percentile_ci(form, samples, params, ci_level)
    ci_analytic, stderr = _analytic_ci(form, lx, ly - pred, theta, ci_level)
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
        config=_fit_config(form, bootstrap, bootstrap_method, seed, ci_level, delta, reduction, n_starts, options,
                           objective),
        ci_analytic=ci_analytic,
        stderr=stderr,
        bootstrap_samples=_natural(form, samples) if samples.shape[0] else None,
        identifiable=not bound_notes,
        warnings=bound_notes + ci_notes,
        diagnostics=_diagnostics(lx, ly, lx2, ci_widened),
    )


def fit_power_law(
    x: ArrayLike,
    y: ArrayLike,
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    ci_level: float = 0.95,
    bootstrap_method: str | None = "residual",
) -> FitResult:
    """Fit L = A·x^(−α) by least squares on (log x, log L); bootstrap CIs for A and α."""
    return _fit(
        "power", x, y, None, bootstrap=bootstrap, seed=seed, ci_level=ci_level,
        bootstrap_method=bootstrap_method,
    )


def fit_offset_power_law(
    x: ArrayLike,
    y: ArrayLike,
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    ci_level: float = 0.95,
    bootstrap_method: str | None = "residual",
    n_starts: int = 4,
) -> FitResult:
    """Fit L = E + A·x^(−α) (squared log residuals, least_squares from the best ``n_starts`` of a grid)."""
    return _fit(
        "offset", x, y, None, bootstrap=bootstrap, seed=seed, ci_level=ci_level,
        bootstrap_method=bootstrap_method, n_starts=n_starts,
    )


def fit_chinchilla(
    n_params: ArrayLike,
    n_tokens: ArrayLike,
    loss: ArrayLike,
    *,
    bootstrap: int = 200,
    seed: int = 0,
    ci_level: float = 0.95,
    bootstrap_method: str | None = None,
    delta: float = _HUBER_DELTA,
    reduction: Literal["sum", "mean"] = "sum",
    n_starts: int = 4,
    lbfgsb_options: dict[str, Any] | None = None,
    objective: Literal["huber", "huber-likelihood"] = "huber",
) -> FitResult:
    """Fit L(N, D) = E + A/N^α + B/D^β in log space with a summed Huber loss (δ = 1e-3).

    ``objective="huber-likelihood"`` minimises instead the Huber negative log-likelihood with a
    jointly fitted scale σ (:func:`chinchilla_huber_nll`; σ is reported as ``optimizer["scale"]``).
    The bootstrap defaults to ``"pairs"`` (:data:`DEFAULT_BOOTSTRAP_METHOD`).
    L-BFGS-B runs from the ``n_starts`` best points (by the objective) of Epoch AI's grid
    e ∈ {−1, −.5, …, 1}, a, b ∈ {0, 5, …, 25}, α, β ∈ {0, .5, …, 2}, with
    :data:`DEFAULT_LBFGSB_OPTIONS` unless ``lbfgsb_options`` is given (``{}`` = scipy defaults).
    ``reduction="mean"`` with scipy's default tolerances reproduces the early stop of a mean
    Huber loss; do not use it for real fits. Bootstrap refits start from the point estimate.
    """
    return _fit(
        "chinchilla", n_params, loss, n_tokens, bootstrap=bootstrap, seed=seed, ci_level=ci_level,
        bootstrap_method=bootstrap_method, delta=delta, reduction=reduction, n_starts=n_starts,
        lbfgsb_options=lbfgsb_options, names=("N", "loss", "D"), objective=objective,
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
