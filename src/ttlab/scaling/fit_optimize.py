"""Point estimates θ of the three forms: ordinary least squares (power), bounded least squares from a grid
of starts (offset), L-BFGS-B on the Huber objectives from the best points of Epoch AI's grid (Chinchilla).
"""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.scaling.fit_models import (
    MIN_SCALE,
    chinchilla_huber_nll,
    chinchilla_huber_objective,
    huber_loss,
    log_model,
    log_sum_exp,
    profile_scale,
)

__all__ = ["DEFAULT_LBFGSB_OPTIONS", "EXPONENT_BOUNDS", "LBFGSB_KEYS", "fit_theta", "start_points"]

LBFGSB_KEYS = {"ftol", "gtol", "maxiter", "maxfun", "maxcor", "maxls"}
"""The L-BFGS-B options a caller may set."""
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
EXPONENT_BOUNDS: dict[str, tuple[tuple[str, float, float], ...]] = {
    "offset": (("alpha", *_OFFSET_BOUNDS_ALPHA),),
    "chinchilla": (("alpha", 0.0, math.inf), ("beta", 0.0, math.inf)),
}


def _fit_offset_theta(lx, ly, starts: np.ndarray, n_keep: int):
    lo = np.array([ly.min() - 40.0, -np.inf, _OFFSET_BOUNDS_ALPHA[0]])
    hi = np.array([np.inf, np.inf, _OFFSET_BOUNDS_ALPHA[1]])
    from scipy import optimize  # scipy.optimize: here, not when the command line starts

    starts = np.clip(starts, lo + 1e-9, hi - 1e-9)
    if starts.shape[0] > n_keep:
        sse = np.array([np.sum((log_model("offset", s, lx, None)[0] - ly) ** 2) for s in starts])
        starts = starts[np.argsort(sse, kind="stable")[:n_keep]]
    best = None
    for s in starts:
        res = optimize.least_squares(
            lambda th: log_model("offset", th, lx, None)[0] - ly,
            s,
            jac=lambda th: log_model("offset", th, lx, None)[1],
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
        r = log_sum_exp(t)[0] - ly
        if objective == "huber":
            out[i : i + chunk] = huber_loss(delta, r).sum(axis=1)
        else:
            sigma = profile_scale(r, delta)
            out[i : i + chunk] = huber_loss(delta, r / sigma[:, None]).sum(axis=1) + lx.size * np.log(sigma)
    return out


def _fit_chinchilla_theta(
    lx, lx2, ly, starts: np.ndarray, n_keep: int, delta: float, reduction: str, options: dict | None = None,
    objective: str = "huber",
):
    if starts.shape[0] > n_keep:
        vals = _grid_objective(starts, lx, lx2, ly, delta, objective)
        starts = starts[np.argsort(vals, kind="stable")[:n_keep]]
    from scipy import optimize  # scipy.optimize: here, not when the command line starts

    likelihood = objective == "huber-likelihood"
    fun = chinchilla_huber_nll if likelihood else chinchilla_huber_objective
    bounds = [(None, None)] * 5 + [(math.log(MIN_SCALE), None)] if likelihood else None
    best = None
    for s in starts:
        if likelihood:  # the scale starts at its best value for this start's residuals
            r0 = log_model("chinchilla", s, lx, lx2)[0] - ly
            s = np.append(s, math.log(float(profile_scale(r0, delta)[0])))
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


def fit_theta(form, lx, lx2, ly, *, starts, n_keep, delta, reduction, options, objective="huber"):
    """θ of ``form`` fitted to log sizes ``lx`` (and ``lx2``) and log losses ``ly`` from the best ``n_keep`` of
    ``starts``; returns (θ, optimiser info)."""
    if form == "power":
        return _fit_power_theta(lx, ly), {"method": "ordinary least squares on (log x, log L)"}
    if form == "offset":
        return _fit_offset_theta(lx, ly, starts, n_keep)
    return _fit_chinchilla_theta(lx, lx2, ly, starts, n_keep, delta, reduction, options, objective)


def start_points(form: str, lx: np.ndarray, ly: np.ndarray) -> np.ndarray | None:
    """Candidate starting points of the iterative fits (None for the closed-form power law)."""
    if form == "offset":
        return _offset_starts(lx, ly)
    if form == "chinchilla":
        return _chinchilla_grid()
    return None
