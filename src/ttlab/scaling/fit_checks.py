"""Checks and diagnostics of a scaling-law fit: validation of the data and options, goodness of fit, the notes
that mark a fit not identifiable, the bootstrap percentile and analytic intervals, and the fit's config record.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ttlab.errors import TTLabInputError
from ttlab.scaling.fit_models import MIN_POINTS, OBJECTIVES, PARAM_NAMES, natural_params
from ttlab.scaling.fit_optimize import DEFAULT_LBFGSB_OPTIONS, EXPONENT_BOUNDS, LBFGSB_KEYS
from ttlab.scaling.fit_varpro import METHODS
from ttlab.validation import Options, check_float, check_int, validate_params

__all__ = [
    "BOOTSTRAP_METHODS", "COLLINEAR_R", "COMPUTE_WEIGHTS", "CONSTANT_Y_TOL", "MAX_BOOTSTRAP", "MIN_DISTINCT_SIZES", "NEAR_CONSTANT_Y_TOL",
    "SIZE_RTOL", "STARTS_COMPETING_RTOL", "STARTS_EXPONENT_TOL", "STARTS_FLOOR_RTOL", "STARTS_OBJECTIVE_RTOL", "analytic_ci", "bound_notes",
    "check_bootstrap", "check_fit_method", "check_optimizer_options", "check_options", "check_weights", "collapse_notes",
    "compute_weights", "design_notes", "diagnostics", "distinct_sizes", "drop_highest_points", "fit_config", "floor_notes", "goodness",
    "log_correlation", "percentile_ci", "prepare_data", "range_notes", "start_notes",
]

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
SIZE_RTOL = 1e-6
"""Sizes closer than this (relative) are one size: 10,000 and 10,000.000000001 cannot tell an exponent apart, so a
design's spread, not its count of different numbers, decides whether an exponent is identified."""
FLOOR_AT_ZERO = 1e-6
"""A fitted floor E below this fraction of the smallest loss sits at its lower limit 0: the data do not pin it down."""
COLLAPSED_CI = 1e-9
"""An interval narrower than this fraction of its estimate, while the points scatter around the fit, has collapsed:
the resamples cannot move the parameter, which is false certainty, not precision."""
STARTS_OBJECTIVE_RTOL = 1e-6
"""A start whose final objective lies above the best by more than this (relative: not the same optimum) …"""
STARTS_COMPETING_RTOL = 0.05
"""… but by no more than this (a competing optimum; a start that ended far higher is simply a worse one) …"""
STARTS_EXPONENT_TOL = 0.01
"""… if also an exponent differs by more than this (absolute) …"""
STARTS_FLOOR_RTOL = 0.01
"""… or the floor E by more than this fraction of the smallest loss: the kept starts disagree (a warning)."""
BOOTSTRAP_METHODS = ("residual", "pairs")
#: bootstrap replicates above which a fit is refused (the replicates are kept for the percentiles)
MAX_BOOTSTRAP = 1_000_000


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


def check_bootstrap(bootstrap: int) -> None:
    """Raise :class:`TTLabInputError` for a bootstrap count that is not an integer in [0, :data:`MAX_BOOTSTRAP`]."""
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, (int, np.integer)) or bootstrap < 0:
        raise TTLabInputError(f"bootstrap must be a non-negative integer, got {bootstrap!r}")
    if bootstrap > MAX_BOOTSTRAP:
        raise TTLabInputError(
            f"bootstrap {bootstrap:,} is above the {MAX_BOOTSTRAP:,}-replicate limit: the replicates alone would "
            f"hold ~{bootstrap * 3 * 8 / 2**30:,.1f} GiB and a percentile interval's Monte-Carlo error is already "
            f"~1 % of its width at 10,000; use at most {MAX_BOOTSTRAP:,}", params=("bootstrap",)
        )


def check_options(bootstrap: int, ci_level: float, seed: int, method: str) -> None:
    """Raise :class:`TTLabInputError` for a bad bootstrap count, confidence level, seed or bootstrap method."""
    check_bootstrap(bootstrap)
    if not isinstance(ci_level, (int, float)) or not 0 < ci_level < 1:
        raise TTLabInputError(f"ci_level must be in (0, 1), got {ci_level!r}")
    check_int(seed, "seed", 0)
    if method not in BOOTSTRAP_METHODS:
        raise TTLabInputError(f"bootstrap_method must be one of {BOOTSTRAP_METHODS}, got {method!r}")


def prepare_data(form: str, x: ArrayLike, y: ArrayLike, x2: ArrayLike | None, names: tuple[str, str, str]):
    """Validate the columns of a ``form`` fit (``names``: how to call x, y and x2 in messages); returns
    (log x, log y, log x2 or None, number of points)."""
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
    tol = f" (values closer than a relative {SIZE_RTOL:g} count as one)"
    if distinct_sizes(np.log(xa)) < 2:
        raise TTLabInputError(f"{names[0]} needs at least 2 distinct values to fit an exponent{tol}")
    if form == "offset" and distinct_sizes(np.log(xa)) < 3:
        raise TTLabInputError(f"the offset form needs at least 3 distinct {names[0]} values{tol}")
    if form == "chinchilla" and distinct_sizes(np.log(arrays[2])) < 2:
        raise TTLabInputError(f"{names[2]} needs at least 2 distinct values to fit its exponent{tol}")
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


def distinct_sizes(log_sizes: np.ndarray) -> int:
    """How many sizes ``exp(log_sizes)`` holds, values within a relative :data:`SIZE_RTOL` of their neighbour (in
    sorted order) counted as one."""
    s = np.sort(np.asarray(log_sizes, dtype=float))
    return 0 if s.size == 0 else 1 + int(np.sum(np.diff(s) > math.log1p(SIZE_RTOL)))


def floor_notes(params: dict[str, float], y: np.ndarray, names: tuple[str, str, str],
                positions: np.ndarray | None = None) -> list[str]:
    """A floor ``E`` (offset and Chinchilla forms) pinned at 0, and the points that lie below the fitted floor (named by
    their ``positions`` in the input, default their index in ``y``)."""
    if "E" not in params:
        return []
    E, y = params["E"], np.asarray(y, dtype=float)
    notes = []
    if E < FLOOR_AT_ZERO * float(np.min(y)):
        notes.append(f"the floor E = {E:.3g} sits at its lower limit 0 (below {FLOOR_AT_ZERO:g} × the smallest "
                     f"{names[1]}): the data do not pin the floor down, so E and the exponent(s) are not identifiable "
                     "one by one (an E this small is the power form); fit the power form, or add sizes where the loss "
                     "flattens")
    below = np.flatnonzero(y < E)
    if below.size:
        pos = np.arange(y.size) if positions is None else np.asarray(positions)
        shown = ", ".join(f"#{pos[i]} ({names[1]} = {y[i]:.6g})" for i in below[:5]) + (" …" if below.size > 5 else "")
        notes.append(f"{below.size} point(s) lie below the fitted floor E = {E:.6g}: {shown} (0-based, in input "
                     "order); a loss under the floor contradicts the form — check those points")
    return notes


def collapse_notes(ci: dict[str, tuple[float, float]], params: dict[str, float], rmse_log: float) -> list[str]:
    """Intervals that collapsed (width below :data:`COLLAPSED_CI` of the estimate) although the points scatter."""
    if not rmse_log > 1e-12:  # an exact fit: a zero-width interval is what the data say
        return []
    return [f"the interval of {k} has collapsed to [{lo:.6g}, {hi:.6g}] (width {hi - lo:.1e}) although the points "
            f"scatter around the fit (RMSE of log {rmse_log:.2g}): the resamples cannot move {k}, which is false "
            f"certainty, not precision ({k} is not identifiable)"
            for k, (lo, hi) in ci.items() if hi - lo <= COLLAPSED_CI * max(abs(params[k]), 1e-300)]


def log_correlation(lx: np.ndarray, lx2: np.ndarray) -> float:
    """Pearson correlation of two log-size columns (0 when either is constant)."""
    a, b = lx - lx.mean(), lx2 - lx2.mean()
    den = math.sqrt(float(a @ a) * float(b @ b))
    return float(a @ b) / den if den > 0 else 0.0


def check_optimizer_options(
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
        unknown = set(lbfgsb_options) - LBFGSB_KEYS
        if unknown:
            raise TTLabInputError(
                f"unknown L-BFGS-B option(s) {sorted(unknown)}; allowed: {sorted(LBFGSB_KEYS)}"
            )
    check_int(n_starts, "n_starts", 1)
    return dict(DEFAULT_LBFGSB_OPTIONS if lbfgsb_options is None else lbfgsb_options)


def check_fit_method(form: str, method: str, asymmetry: float) -> float:
    """Raise :class:`TTLabInputError` for a start method or an asymmetry the form does not take; returns the asymmetry."""
    validate_params({"method": method}, {"method": [Options(METHODS)]})
    if form == "power" and method != "grid":
        raise TTLabInputError("method is only used by the offset and chinchilla forms (power is closed-form)",
                              params=("method", "form"))
    asymmetry = check_float(asymmetry, "asymmetry", 1.0)
    if form == "power" and asymmetry != 1.0:
        raise TTLabInputError("asymmetry is only used by the offset and chinchilla forms (the power form is ordinary "
                              "least squares; fit the offset form for a lower envelope)", params=("asymmetry", "form"))
    return asymmetry


def check_weights(weights: ArrayLike | None, n: int, name: str = "weights") -> np.ndarray | None:
    """``weights`` as floats, one per point, each positive and finite (None stays None); ``name`` is how messages call
    them (a CSV column: ``weights column 'w'``)."""
    if weights is None:
        return None
    try:
        w = np.asarray(weights, dtype=float)
    except (TypeError, ValueError):
        raise TTLabInputError(f"{name} must be numeric", params=("weights",)) from None
    if w.ndim != 1 or w.size != n:
        raise TTLabInputError(f"{name} must hold one weight per point ({n}), got shape {w.shape}", params=("weights",))
    bad = np.flatnonzero(~(np.isfinite(w) & (w > 0)))
    if bad.size:
        shown = ", ".join(f"#{i} ({w[i]:g})" for i in bad[:5]) + (" …" if bad.size > 5 else "")
        raise TTLabInputError(f"{name} must be positive and finite (each point's loss term is multiplied by its weight); "
                              f"{bad.size} bad value(s) at 0-based position(s) {shown}", params=("weights",))
    return w


COMPUTE_WEIGHTS: dict[str, float] = {"sqrt": 0.5, "linear": 1.0}
"""How a run is weighted by its compute C = k·N·D (``weight_by_compute``): the power of C its weight is proportional
to — ``sqrt`` √C (OLMo-core's ladder fits weight by √(6ND)), ``linear`` C."""


def compute_weights(n: ArrayLike, d: ArrayLike, how: str) -> np.ndarray:
    """Per-run weights ∝ C^p, C = k·N·D and p = :data:`COMPUTE_WEIGHTS` [``how``], rescaled to mean 1 (so k, the
    FLOPs per parameter and token, drops out); computed in log space, so sizes of 1e12 and more do not overflow."""
    if how not in COMPUTE_WEIGHTS:
        raise TTLabInputError(f"unknown weight_by_compute {how!r}; choose one of {', '.join(COMPUTE_WEIGHTS)}",
                              params=("weight_by_compute",))
    na, da = np.asarray(n, dtype=float), np.asarray(d, dtype=float)
    if na.shape != da.shape or not np.all(np.isfinite(na) & (na > 0) & np.isfinite(da) & (da > 0)):
        raise TTLabInputError("weight_by_compute needs positive, finite N and D of one length",
                              params=("weight_by_compute",))
    log_w = COMPUTE_WEIGHTS[how] * (np.log(na) + np.log(da))
    w = np.exp(log_w - log_w.max())
    return w / w.mean()


def drop_highest_points(form: str, y: ArrayLike, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The positions kept and dropped when the ``k`` highest losses are dropped (Epoch AI's replication drops the 5
    highest-loss runs); refuses a ``k`` that leaves fewer points than the form needs."""
    k = check_int(k, "drop_highest", 0)
    ya = np.asarray(y, dtype=float).ravel()
    if ya.size - k < MIN_POINTS[form]:
        raise TTLabInputError(f"drop_highest = {k} leaves {ya.size - k} of {ya.size} points; the {form} form needs at "
                              f"least {MIN_POINTS[form]}", params=("drop_highest",))
    order = np.argsort(-np.where(np.isfinite(ya), ya, np.inf), kind="stable")
    dropped = np.sort(order[:k])
    return np.setdiff1d(np.arange(ya.size), dropped), dropped


def start_notes(form: str, starts: list[dict[str, float]], min_loss: float) -> list[str]:
    """A warning when the optimiser's kept starts disagree: a start ended at a final objective above the best by more
    than :data:`STARTS_OBJECTIVE_RTOL` and at most :data:`STARTS_COMPETING_RTOL` (relative), with an exponent more than
    :data:`STARTS_EXPONENT_TOL` or the floor E more than :data:`STARTS_FLOOR_RTOL` × ``min_loss`` (the smallest loss)
    away from the best one's."""
    if len(starts) < 2:
        return []
    best = min(starts, key=lambda s: s["objective"])
    f0 = best["objective"]
    scale = max(abs(f0), 1e-300)
    exps = [k for k in PARAM_NAMES[form] if k in ("alpha", "beta")]
    others = [s for s in starts if STARTS_OBJECTIVE_RTOL * scale < s["objective"] - f0 <= STARTS_COMPETING_RTOL * scale
              and (any(abs(s[k] - best[k]) > STARTS_EXPONENT_TOL for k in exps)
                   or abs(s.get("E", 0.0) - best.get("E", 0.0)) > STARTS_FLOOR_RTOL * min_loss)]
    if not others:
        return []
    worst = max(others, key=lambda s: s["objective"])
    where = ", ".join(f"{k} {worst[k]:.4g} against {best[k]:.4g}" for k in exps + (["E"] if "E" in best else []))
    return [f"{len(others)} of {len(starts)} optimiser starts ended at a different optimum within "
            f"{STARTS_COMPETING_RTOL:.0%} of the best objective ({worst['objective']:.6g} against {f0:.6g}; {where}): "
            "the objective has competing local minima or the optimiser stalls, so the fit reported (the best) may not "
            "be the global optimum and its exponents are uncertain beyond their interval — compare with "
            "method='varpro' (variable projection over a fine grid of exponents)"]


def range_notes(form: str, params: dict[str, float], optimizer: dict[str, Any]) -> list[str]:
    """Variable projection's best exponent on the upper edge of the grid it searched, or the fit beyond it: the search
    did not bracket the optimum (the exponent is not identified by the data within the range)."""
    vp = optimizer.get("varpro")
    if not vp:
        return []
    notes = []
    for name, (lo, hi, step) in vp["exponent_grid"].items():
        bound_hi = dict((n, h) for n, _, h in EXPONENT_BOUNDS.get(form, ()))[name]
        if hi >= bound_hi:  # the grid reaches the fit's bound: bound_notes speaks of it
            continue
        if name in vp["at_grid_edge"] or params[name] >= hi:
            notes.append(f"{name} = {params[name]:.4g} sits at or beyond the upper edge {hi:g} of the exponents "
                         f"variable projection searched [{lo:g}, {hi:g}]: the optimum is not bracketed, and an exponent "
                         "this large is not pinned down by the data (not identifiable)")
    return notes


def goodness(ly: np.ndarray, pred: np.ndarray) -> tuple[float, float, float]:
    """(R² of log L, RMSE of log L, RMSE of L) of the fitted log predictions ``pred``."""
    resid = ly - pred
    ss_tot = float(np.sum((ly - ly.mean()) ** 2))
    r2_log = 1.0 - float(np.sum(resid**2)) / ss_tot if ss_tot > 0 else float("nan")
    rmse_log = float(np.sqrt(np.mean(resid**2)))
    rmse = float(np.sqrt(np.mean((np.exp(ly) - np.exp(pred)) ** 2)))
    return r2_log, rmse_log, rmse


def bound_notes(form: str, params: dict[str, float]) -> list[str]:
    """One note per exponent fitted at its bound (the form's terms are then not identifiable)."""
    notes = []
    for name, lo_b, hi_b in EXPONENT_BOUNDS.get(form, ()):
        v = params[name]
        if v <= lo_b + _AT_BOUND or v >= hi_b - _AT_BOUND:
            notes.append(
                f"{name} = {v:.3g} is at its bound [{lo_b:g}, {hi_b:g}]: the fitted curve does not pin down the "
                f"{'offset form' if form == 'offset' else 'Chinchilla form'}'s terms separately (not identifiable)"
            )
    return notes


def design_notes(
    lx: np.ndarray, ly: np.ndarray, lx2: np.ndarray | None, r2_log: float, names: tuple[str, str, str]
) -> list[str]:
    """Why the design cannot identify the exponent(s): fewer than :data:`MIN_DISTINCT_SIZES` distinct
    sizes, a near-constant loss (:data:`NEAR_CONSTANT_Y_TOL`), or R²(log) < 0 (worse than a constant)."""
    notes = []
    for name, col in ((names[0], lx), (names[2], lx2)):
        if col is not None and distinct_sizes(col) < MIN_DISTINCT_SIZES:
            notes.append(
                f"only {distinct_sizes(col)} distinct {name} value(s) (within a relative {SIZE_RTOL:g}): an exponent "
                "through fewer than "
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


def percentile_ci(
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
        nat_s = natural_params(form, samples[finite])
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


def analytic_ci(
    form: str, lx: np.ndarray, resid: np.ndarray, theta: np.ndarray, ci_level: float,
    weights: np.ndarray | None = None,
) -> tuple[dict[str, tuple[float, float]], dict[str, float]]:
    """Student-t intervals and standard errors of the OLS power law (weighted least squares with ``weights``: the
    error variance of a point taken as proportional to 1/weight); empty for the other forms."""
    n = lx.size
    if form != "power" or n <= 2:
        return {}, {}
    X = np.column_stack([np.ones_like(lx), -lx])
    if weights is not None:
        sw = np.sqrt(weights)
        X, resid = X * sw[:, None], resid * sw
    s2 = float(np.sum(resid**2)) / (n - 2)
    cov = s2 * np.linalg.inv(X.T @ X)
    se = np.sqrt(np.diag(cov))
    from scipy import stats  # scipy.stats: here, not when the command line starts

    tq = float(stats.t.ppf((1 + ci_level) / 2, df=n - 2))
    stderr = {"log_A": float(se[0]), "alpha": float(se[1])}
    ci_analytic = {
        "A": (float(np.exp(theta[0] - tq * se[0])), float(np.exp(theta[0] + tq * se[0]))),
        "alpha": (float(theta[1] - tq * se[1]), float(theta[1] + tq * se[1])),
    }
    return ci_analytic, stderr


def diagnostics(lx: np.ndarray, ly: np.ndarray, lx2: np.ndarray | None, ci_widened: list[str]) -> dict[str, Any]:
    """Design diagnostics: distinct sizes, range of log L, collinearity of the two sizes."""
    diagnostics: dict[str, Any] = {"distinct_x": distinct_sizes(lx), "log_y_range": float(np.ptp(ly))}
    if lx2 is not None:
        diagnostics["distinct_x2"] = distinct_sizes(lx2)
        diagnostics["corr_log_x_log_x2"] = log_correlation(lx, lx2)
    if ci_widened:
        diagnostics["ci_widened_to_estimate"] = ci_widened
    return diagnostics


def fit_config(
    form: str, bootstrap: int, bootstrap_method: str, seed: int, ci_level: float,
    delta: float, reduction: str, n_starts: int, options: dict[str, Any], objective: str = "huber",
    extras: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The options a fit was run with (those the form uses); ``extras``: ``weighted``, ``drop_highest``, ``dropped``
    (every form) and ``method``, ``asymmetry`` (offset and Chinchilla forms)."""
    config: dict[str, Any] = {
        "form": form,
        "bootstrap": int(bootstrap),
        "bootstrap_method": bootstrap_method,
        "seed": int(seed),
        "ci_level": float(ci_level),
    }
    extras = dict(extras or {})
    if form == "power":
        extras.pop("method", None)
        extras.pop("asymmetry", None)
    config.update(extras)
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
