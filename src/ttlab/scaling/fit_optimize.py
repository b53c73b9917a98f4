"""Point estimates θ of the three forms: ordinary least squares (power), bounded least squares from a grid
of starts (offset), L-BFGS-B on the Huber objectives from the best points of Epoch AI's grid (Chinchilla).

``method="varpro"`` replaces the grid of starts of the offset and Chinchilla forms by variable projection's
(:mod:`ttlab.scaling.fit_varpro`). Every objective takes per-point weights and an overestimate asymmetry
(:func:`ttlab.scaling.fit_models.loss_weights`); the optimiser's info keeps every kept start's end (``starts``).
"""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.scaling.fit_models import (
    HUBER_DELTA,
    MIN_SCALE,
    PARAM_NAMES,
    chinchilla_huber_nll,
    chinchilla_huber_objective,
    log_model,
    loss_weights,
    natural_params,
    objective_rows,
    profile_scale,
)
from ttlab.scaling.fit_varpro import polish, varpro_starts

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


def _fit_power_theta(lx: np.ndarray, ly: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    X = np.column_stack([np.ones_like(lx), -lx])
    if weights is None:
        coef, *_ = np.linalg.lstsq(X, ly, rcond=None)
        return coef
    sw = np.sqrt(weights)  # weighted least squares: each squared residual multiplied by its weight
    coef, *_ = np.linalg.lstsq(X * sw[:, None], ly * sw, rcond=None)
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


def _offset_residuals(lx, ly, weights, asymmetry):
    """The offset fit's residual function and Jacobian: log residuals, times √ω (:func:`loss_weights`) when weighted."""
    if weights is None and asymmetry == 1.0:
        return (lambda th: log_model("offset", th, lx, None)[0] - ly), (lambda th: log_model("offset", th, lx, None)[1])

    def scaled(th):
        pred, jac = log_model("offset", th, lx, None)
        r = pred - ly
        f = np.sqrt(loss_weights(r, weights, asymmetry))
        return f * r, jac * f[:, None]

    return (lambda th: scaled(th)[0]), (lambda th: scaled(th)[1])


def _start_record(form: str, value: float, theta: np.ndarray) -> dict[str, float]:
    """One start's end: its objective and natural parameters (for the optimiser's ``starts``)."""
    return {"objective": float(value), **{k: float(v) for k, v in zip(PARAM_NAMES[form], natural_params(form, theta))}}


def _fit_offset_theta(lx, ly, starts: np.ndarray | None, n_keep: int, weights=None, asymmetry: float = 1.0,
                      method: str = "grid"):
    lo = np.array([ly.min() - 40.0, -np.inf, _OFFSET_BOUNDS_ALPHA[0]])
    hi = np.array([np.inf, np.inf, _OFFSET_BOUNDS_ALPHA[1]])
    from scipy import optimize  # scipy.optimize: here, not when the command line starts

    fun, jac = _offset_residuals(lx, ly, weights, asymmetry)
    vp_info: dict[str, Any] = {}
    if method == "varpro":
        starts, vp_info = varpro_starts("offset", lx, None, ly, n_keep=n_keep, objective="squares", delta=HUBER_DELTA,
                                        weights=weights, asymmetry=asymmetry)
        starts = np.array([polish("offset", s, lx, None, ly, objective="squares", delta=HUBER_DELTA, weights=weights,
                                  asymmetry=asymmetry, bounds=(lo, hi)) for s in starts])
    starts = np.clip(_offset_starts(lx, ly) if starts is None else starts, lo + 1e-9, hi - 1e-9)
    if starts.shape[0] > n_keep:
        sse = np.array([np.sum(fun(s) ** 2) for s in starts])
        starts = starts[np.argsort(sse, kind="stable")[:n_keep]]
    best, ends = None, []
    for s in starts:
        res = optimize.least_squares(fun, s, jac=jac, bounds=(lo, hi), method="trf", x_scale="jac")
        if method == "varpro" and np.sum(fun(s) ** 2) < 2 * res.cost:  # least_squares did not improve the polish
            res.x, res.cost = s, 0.5 * float(np.sum(fun(s) ** 2))
        ends.append(_start_record("offset", 2 * res.cost, res.x))
        if best is None or res.cost < best.cost:
            best = res
    info = {
        "method": "scipy.optimize.least_squares (trf), squared log residuals" + (", weighted" if vp_info or
                                                                                weights is not None else ""),
        "success": bool(best.success),
        "message": str(best.message),
        "n_starts": int(starts.shape[0]),
        "objective": float(2 * best.cost),
        "start_method": method,
        "starts": ends,
        **({"varpro": vp_info} if vp_info else {}),
    }
    return best.x, info


def _chinchilla_grid() -> np.ndarray:
    g = _CHIN_GRID
    return np.array(list(itertools.product(g["e"], g["a"], g["alpha"], g["b"], g["beta"])), dtype=float)


def _chinchilla_starts(lx, lx2, ly, starts, n_keep, delta, objective, weights, asymmetry, method):
    """The starts L-BFGS-B runs from: the best ``n_keep`` of ``starts`` by the objective (grid), or variable
    projection's best local minima refined by :func:`polish` (varpro; a likelihood start carries its log scale)."""
    if method == "varpro":
        starts, info = varpro_starts("chinchilla", lx, lx2, ly, n_keep=n_keep, objective=objective, delta=delta,
                                     weights=weights, asymmetry=asymmetry)
        return [polish("chinchilla", s, lx, lx2, ly, objective=objective, delta=delta, weights=weights,
                       asymmetry=asymmetry) for s in starts], info
    if starts is None:
        starts = _chinchilla_grid()
    if starts.shape[0] > n_keep:
        vals = objective_rows("chinchilla", starts, lx, lx2, ly, objective=objective, delta=delta, weights=weights,
                              asymmetry=asymmetry)
        starts = starts[np.argsort(vals, kind="stable")[:n_keep]]
    out = []
    for s in starts:
        if objective == "huber-likelihood":  # the scale starts at its best value for this start's residuals
            r0 = log_model("chinchilla", s, lx, lx2)[0] - ly
            s = np.append(s, math.log(float(profile_scale(r0, delta, weights, asymmetry)[0])))
        out.append(s)
    return out, {}


def _fit_chinchilla_theta(
    lx, lx2, ly, starts, n_keep: int, delta: float, reduction: str, options: dict | None = None,
    objective: str = "huber", weights=None, asymmetry: float = 1.0, method: str = "grid",
):
    from scipy import optimize  # scipy.optimize: here, not when the command line starts

    likelihood = objective == "huber-likelihood"
    fun = chinchilla_huber_nll if likelihood else chinchilla_huber_objective
    bounds = [(None, None)] * 5 + [(math.log(MIN_SCALE), None)] if likelihood else None
    kept, vp_info = _chinchilla_starts(lx, lx2, ly, starts, n_keep, delta, objective, weights, asymmetry, method)
    best, ends = None, []
    for s in kept:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            res = optimize.minimize(
                fun,
                s,
                args=(lx, lx2, ly, delta, reduction) + (() if weights is None and asymmetry == 1.0
                                                        else (weights, asymmetry)),
                jac=True,
                method="L-BFGS-B",
                bounds=bounds,
                options=options,
            )
        if not np.all(np.isfinite(res.x)):
            continue
        ends.append(_start_record("chinchilla", res.fun, res.x[:5]))
        if best is None or res.fun < best.fun:
            best = res
    if best is None:
        raise TTLabInputError("the chinchilla fit failed from every starting point (non-finite values)")
    what = "Huber negative log-likelihood (fitted scale)" if likelihood else "Huber loss"
    info = {
        "method": f"scipy.optimize.minimize (L-BFGS-B), {reduction} {what} of log residuals"
                  + ("" if weights is None else ", weighted") + ("" if asymmetry == 1.0 else ", asymmetric"),
        "objective_name": objective,
        "delta": delta,
        "reduction": reduction,
        "success": bool(best.success),
        "message": str(best.message),
        "n_iterations": int(best.nit),
        "n_starts": len(kept),
        "objective": float(best.fun),
        "start_method": method,
        "starts": ends,
        **({"varpro": vp_info} if vp_info else {}),
    }
    if likelihood:
        info["scale"] = math.exp(float(best.x[5]))
    return best.x[:5], info


# --------------------------------------------------------------------------------------------
# generic fitting + bootstrap


def fit_theta(form, lx, lx2, ly, *, starts, n_keep, delta, reduction, options, objective="huber", method="grid",
              weights=None, asymmetry=1.0):
    """θ of ``form`` fitted to log sizes ``lx`` (and ``lx2``) and log losses ``ly`` from the best ``n_keep`` of
    ``starts`` (``method="grid"``; None: :func:`start_points`) or of variable projection's local minima (``"varpro"``;
    ``starts`` unused), each point's loss term multiplied by its weight (``weights``) and by ``asymmetry`` where the
    model over-estimates; returns (θ, optimiser info)."""
    if form == "power":
        return _fit_power_theta(lx, ly, weights), {"method": "ordinary least squares on (log x, log L)"
                                                   + ("" if weights is None else ", weighted")}
    if form == "offset":
        return _fit_offset_theta(lx, ly, starts, n_keep, weights, asymmetry, method)
    return _fit_chinchilla_theta(lx, lx2, ly, starts, n_keep, delta, reduction, options, objective, weights,
                                 asymmetry, method)


def start_points(form: str, lx: np.ndarray, ly: np.ndarray) -> np.ndarray | None:
    """Candidate starting points of the iterative fits (None for the closed-form power law)."""
    if form == "offset":
        return _offset_starts(lx, ly)
    if form == "chinchilla":
        return _chinchilla_grid()
    return None
