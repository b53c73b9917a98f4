"""A fitted scaling law's prediction at a new size, with honest uncertainty and the distance it extrapolates.

For a point (x, and D for the Chinchilla form) :func:`predict_at` gives

* the predicted loss of the fit;
* a **confidence interval** — parameter uncertainty: the percentile interval of the prediction over the fit's
  bootstrap replicates;
* a **prediction interval** — what one new run would measure: each replicate's prediction times the exponential of a
  log residual of the fit drawn at random (seeded), percentile interval;
* how far outside the fitted range the point lies, in decades of each size (and of the compute C = 6·N·D for the
  Chinchilla form): 0 inside the range, positive beyond its largest value, negative below its smallest.

A far extrapolation is reported, never refused: intervals that ignore a change of regime beyond the data cannot be
read as more than the fit's own uncertainty, and the decades say how much is assumed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.scaling.fit import FitResult
from ttlab.scaling.fit_models import log_model, theta_from_natural

__all__ = ["decades_outside", "predict_at"]


def decades_outside(value: float, observed: np.ndarray) -> float:
    """log10 of how far ``value`` lies beyond the range of ``observed``: 0 inside, > 0 above, < 0 below."""
    lo, hi = float(np.min(observed)), float(np.max(observed))
    if value > hi:
        return float(np.log10(value / hi))
    if value < lo:
        return float(np.log10(value / lo))
    return 0.0


def predict_at(fit: FitResult, x: float, x2: float | None, data_x: np.ndarray, data_y: np.ndarray,
               data_x2: np.ndarray | None = None, *, seed: int = 0) -> dict[str, Any]:
    """The loss ``fit`` predicts at ``x`` (and ``x2`` = D for the Chinchilla form), with its confidence and prediction
    intervals at the fit's level, and the decades outside the range of the fitted data (``data_x``, ``data_y``,
    ``data_x2``: the columns the fit was made on; see the module doc)."""
    if (fit.form == "chinchilla") != (x2 is not None):
        raise TTLabInputError("a Chinchilla fit predicts at N and D; the power and offset forms at x alone",
                              params=("predict",))
    point = [float(x)] + ([] if x2 is None else [float(x2)])
    if not all(np.isfinite(v) and v > 0 for v in point):
        raise TTLabInputError(f"a prediction needs positive finite sizes, got {point}", params=("predict",))
    lx = np.log(np.array([point[0]]))
    lx2 = None if x2 is None else np.log(np.array([point[1]]))
    loss = float(np.exp(log_model(fit.form, fit.theta, lx, lx2)[0][0]))
    resid = np.log(data_y) - np.log(fit.predict(data_x, data_x2))
    out: dict[str, Any] = {"loss": loss, "ci": None, "pi": None, "ci_level": fit.ci_level,
                           "residual_sd_log": float(np.std(resid, ddof=min(len(resid) - 1, len(fit.params))))}
    if fit.bootstrap_samples is not None:
        theta = theta_from_natural(fit.form, fit.bootstrap_samples)
        theta = theta[np.all(np.isfinite(theta), axis=1)]
        preds = np.array([log_model(fit.form, t, lx, lx2)[0][0] for t in theta])
        preds = preds[np.isfinite(preds)]
        if preds.size >= 2:
            q = (1 - fit.ci_level) / 2
            draws = preds + np.random.default_rng(seed).choice(resid, size=preds.size)
            out["ci"] = np.exp(np.quantile(preds, [q, 1 - q])).tolist()
            out["pi"] = np.exp(np.quantile(draws, [q, 1 - q])).tolist()
    where = {"x": decades_outside(point[0], data_x)}
    if x2 is not None and data_x2 is not None:
        where["x2"] = decades_outside(point[1], data_x2)
        where["compute"] = decades_outside(6 * point[0] * point[1], 6 * data_x * data_x2)
    out["decades_outside"] = where
    out["point"] = point
    return out
