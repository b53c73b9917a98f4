"""The fits of the model-size experiment: α̂_N against log parameter count, its intervals, the data check.

α̂_N is −slope of log normalised MSE against log N (parameter count, not width), least squares over every
(width, seed) point kept. Three intervals, each reported, and their hull decides (docs/model_scaling.md):

* ``ci_bootstrap``: 95 % percentile interval of the slope when the seeds are resampled with replacement within
  each width (``bootstrap`` resamples; zero width with one seed per width — never used alone);
* ``ci_t``: the OLS 95 % t-interval of the slope over all points;
* ``lowo``: the range of the slopes with one width left out (the fit's dependence on any one width).

``interval`` = [min of the lower ends, max of the upper ends]. ``local_slopes`` are the slopes between
neighbouring widths of the per-width geometric means. Points below :data:`FLOAT32_FLOOR` or not finite are left
out; a fit needs 3 distinct sizes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError

__all__ = ["DATA_CHECK_DROP", "FLOAT32_FLOOR", "MIN_SIZES", "data_check", "fit_exponent", "fit_text", "geometric_mean"]

FLOAT32_FLOOR = 1e-4
"""Normalised MSEs below this are left out of fits: float32 training cannot resolve them reliably."""
DATA_CHECK_DROP = 0.10
"""The data check: a width whose MSE falls by more than this fraction when its samples double is optimisation-
or data-limited and is left out of the fit."""
MIN_SIZES = 3


def geometric_mean(values: Sequence[float]) -> float | None:
    """Geometric mean of the positive finite values (None when there is none)."""
    vals = [float(v) for v in values if v is not None and math.isfinite(float(v)) and float(v) > 0]
    return float(math.exp(sum(math.log(v) for v in vals) / len(vals))) if vals else None


def _slope(lx: np.ndarray, ly: np.ndarray) -> float:
    xc = lx - lx.mean()
    return float((xc * (ly - ly.mean())).sum() / (xc * xc).sum())


def _t_interval(lx: np.ndarray, ly: np.ndarray, level: float = 0.95) -> list[float] | None:
    from scipy import stats

    n = len(lx)
    if n < 3:
        return None
    b = _slope(lx, ly)
    a = ly.mean() - b * lx.mean()
    resid = ly - a - b * lx
    se = math.sqrt(float((resid ** 2).sum()) / (n - 2) / float(((lx - lx.mean()) ** 2).sum()))
    q = float(stats.t.ppf(0.5 + level / 2, n - 2))
    return [-b - q * se, -b + q * se]


def _bootstrap(groups: list[tuple[float, np.ndarray]], n_boot: int, seed: int) -> list[float] | None:
    """Percentile interval of −slope with the values resampled within each size."""
    if n_boot < 1:
        return None
    rng = np.random.default_rng(seed)
    lx = np.concatenate([np.full(len(v), lxv) for lxv, v in groups])
    cols = []
    for _, v in groups:
        cols.append(v[rng.integers(0, len(v), size=(n_boot, len(v)))])
    ly = np.concatenate(cols, axis=1)  # (n_boot, n_points)
    xc = lx - lx.mean()
    slopes = -(ly - ly.mean(axis=1, keepdims=True)) @ xc / float((xc * xc).sum())
    lo, hi = np.percentile(slopes, [2.5, 97.5])
    return [float(lo), float(hi)]


def fit_exponent(n_params: Sequence[float], nmse: Sequence[float], *, bootstrap: int = 2000,
                 seed: int = 0) -> dict[str, Any]:
    """α̂_N and its intervals from (parameter count, normalised MSE) points; several points may share a size.

    Returns ``alpha_hat``, ``ci_bootstrap``, ``ci_t``, ``lowo`` ([min, max] of the leave-one-size-out slopes),
    ``interval`` (the hull of the three), ``local_slopes`` ([N_a, N_b, slope] per neighbouring sizes), ``sizes``
    (the sizes fitted), ``n_points``, ``dropped`` (points left out: below the float32 floor or not finite);
    ``{"error": ...}`` when fewer than 3 distinct sizes remain.
    """
    if len(n_params) != len(nmse):
        raise TTLabInputError(f"n_params and nmse differ in length ({len(n_params)} vs {len(nmse)})",
                              params=("n_params", "nmse"))
    keep = [(float(n), float(y)) for n, y in zip(n_params, nmse, strict=True)
            if n is not None and y is not None and math.isfinite(float(y)) and float(y) >= FLOAT32_FLOOR
            and float(n) > 0]
    dropped = len(n_params) - len(keep)
    sizes = sorted({n for n, _ in keep})
    if len(sizes) < MIN_SIZES:
        return {"error": f"needs {MIN_SIZES} sizes with a normalised MSE >= {FLOAT32_FLOOR:g}, got {len(sizes)}",
                "dropped": dropped, "sizes": sizes}
    groups = [(math.log(s), np.log(np.array([y for n, y in keep if n == s]))) for s in sizes]
    lx = np.concatenate([np.full(len(v), a) for a, v in groups])
    ly = np.concatenate([v for _, v in groups])
    alpha = -_slope(lx, ly)
    boot = _bootstrap(groups, bootstrap, seed)
    t = _t_interval(lx, ly)
    lowo = None
    if len(groups) > MIN_SIZES:
        loo = []
        for i in range(len(groups)):
            rest = groups[:i] + groups[i + 1:]
            loo.append(-_slope(np.concatenate([np.full(len(v), a) for a, v in rest]),
                               np.concatenate([v for _, v in rest])))
        lowo = [min(loo), max(loo)]
    ends = [iv for iv in (boot, t, lowo) if iv is not None]
    interval = [min(iv[0] for iv in ends), max(iv[1] for iv in ends)]
    means = [(a, float(v.mean())) for a, v in groups]
    local = [[math.exp(a0), math.exp(a1), -(m1 - m0) / (a1 - a0)] for (a0, m0), (a1, m1) in zip(means, means[1:])]
    return {"alpha_hat": alpha, "ci_bootstrap": boot, "ci_t": t, "lowo": lowo, "interval": interval,
            "local_slopes": local, "sizes": sizes, "n_points": int(len(lx)), "dropped": dropped}


def data_check(nmse_n: Sequence[float], nmse_2n: Sequence[float]) -> dict[str, Any]:
    """The data check of one width: ``ratio`` = geometric mean MSE at twice the samples over that at the planned
    samples; ``limited`` when it fell by more than :data:`DATA_CHECK_DROP` (None when either is missing)."""
    a, b = geometric_mean(nmse_n), geometric_mean(nmse_2n)
    ratio = b / a if a is not None and b is not None else None
    return {"nmse_n": a, "nmse_2n": b, "ratio": ratio,
            "limited": None if ratio is None else bool(ratio < 1.0 - DATA_CHECK_DROP)}


def fit_text(fit: dict[str, Any], spec: str = ".3g") -> str:
    """``"1.57 [1.41, 1.73]"`` — α̂ and its deciding interval in the format ``spec`` — or ``"— (why)"`` without a fit."""
    if "alpha_hat" not in fit:
        return f"— ({fit.get('error', 'no fit')})"
    lo, hi = fit["interval"]
    return f"{fit['alpha_hat']:{spec}} [{lo:{spec}}, {hi:{spec}}]"
