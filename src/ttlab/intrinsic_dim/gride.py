"""GRIDE (Denti et al. 2022): :class:`GRIDE`, the likelihood of the ratio of two neighbour distances
(:func:`gride_mle`), at one scale or several.

The likelihood of ``mu = r_{n2} / r_{n1}``, with DADApy's conventions (``N - 1`` in place of ``N``; ratios above
``q50 + 20 (q95 - q50)`` dropped).
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.base import DegeneratePointsWarning, IDEstimator
from ttlab.validation import Interval, check_int


class GRIDE(IDEstimator):
    """GRIDE (Denti et al. 2022): likelihood of the ratio ``r_{n2} / r_{n1}``.

    Larger ``n1`` looks at a larger scale, which makes the estimate robust to small noise.
    ``n2`` defaults to ``2 * n1``. With ``multiscale=True`` it also reports the estimates at
    ``n1 = 1, 2, 4, ...`` (``n2 = 2 n1 <= range_max``) in ``scales_``, ``dimension_scales_``,
    ``error_scales_`` and ``radius_scales_`` (mean distance to the ``n2``-th neighbour): a plateau
    across scales is the ID; a rise at small scales is noise. ``error_`` is the standard error.
    """

    name = "gride"
    distance_only = True
    _parameter_constraints: dict[str, Any] = {
        **IDEstimator._parameter_constraints,
        "n1": [Interval(Integral, 1, None, closed="left")],
        "n2": [Interval(Integral, 2, None, closed="left"), None],
        "multiscale": "no_validation",
        "range_max": "no_validation",  # >= 2 when multiscale=True (_check_params)
    }

    def __init__(
        self,
        n1: int = 10,
        n2: int | None = None,
        multiscale: bool = False,
        range_max: int = 64,
        *,
        metric: str = "euclidean",
        batch_size: int | None = None,
        seed: int = 0,
        remainder: str = "drop",
        backend: str = "auto",
        block_size: int = 2048,
        device: str | None = None,
    ) -> None:
        self._set_common(metric, batch_size, seed, remainder, backend, block_size, device)
        self.n1 = n1
        self.n2 = n2
        self.multiscale = multiscale
        self.range_max = range_max

    def _n2(self) -> int:
        return 2 * int(self.n1) if self.n2 is None else int(self.n2)

    def _check_params(self) -> None:
        if not self._n2() > self.n1:
            raise TTLabInputError(f"GRIDE needs n2 > n1; got n1={self.n1}, n2={self._n2()}.")
        if self.multiscale:
            check_int(self.range_max, "range_max", 2)

    def _n_neighbors(self) -> int:
        return max(self._n2(), int(self.range_max)) if self.multiscale else self._n2()

    def _min_points(self) -> int:
        return self._n2() + 1 if not self.multiscale else self._n_neighbors() + 1

    def _from_distances(self, dist: np.ndarray) -> tuple[float, np.ndarray, dict[str, Any]]:
        n1, n2 = int(self.n1), self._n2()
        d, err = gride_mle(dist, n1, n2)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_mu = np.log(dist[:, n2 - 1] / dist[:, n1 - 1])
        extra: dict[str, Any] = {"error_": err}
        if self.multiscale:
            rmax = min(int(self.range_max), dist.shape[1])
            scales = 2 ** np.arange(int(np.log2(rmax)))
            res = np.array([gride_mle(dist, s, 2 * s) for s in scales])
            extra.update(
                scales_=scales,
                dimension_scales_=res[:, 0],
                error_scales_=res[:, 1],
                radius_scales_=dist[:, 2 * scales - 1].mean(axis=0),
            )
        return d, _gride_pointwise(log_mu, n1, n2), extra


def gride_mle(dist: np.ndarray, n1: int, n2: int) -> tuple[float, float]:
    """GRIDE estimate and its standard error from sorted neighbour distances (n, >= n2)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        log_mu = np.log(dist[:, n2 - 1] / dist[:, n1 - 1])
    ok = np.isfinite(log_mu) & (log_mu > 0)
    if not ok.all():
        warnings.warn(
            f"GRIDE (n1={n1}, n2={n2}): {int((~ok).sum())} point(s) with tied neighbour distances skipped.",
            DegeneratePointsWarning,
            stacklevel=3,
        )
        log_mu = log_mu[ok]
    if len(log_mu):
        q95, q50 = np.percentile(np.exp(log_mu), [95, 50])
        log_mu = log_mu[np.exp(log_mu) < 20 * (q95 - q50) + q50]
    N = len(log_mu)
    if N < 2:
        raise TTLabInputError(f"GRIDE (n1={n1}, n2={n2}) has fewer than 2 usable points.")
    sum_log = float(np.sum(log_mu))

    def score(d: float) -> float:
        return (N - 1) / d + (n2 - n1 - 1) * float(np.sum(log_mu / -np.expm1(-d * log_mu))) - (n2 - 1) * sum_log

    from scipy.optimize import brentq  # scipy.optimize: here, not when the command line starts

    hi = 1.0
    while score(hi) > 0:
        hi *= 2
    d = brentq(score, 1e-8, hi, xtol=1e-12, rtol=1e-12)
    info = N / d**2 + (n2 - n1 - 1) * float(np.sum((log_mu / (2 * np.sinh(d * log_mu / 2))) ** 2))
    return float(d), float(1 / math.sqrt(info))


def _gride_pointwise(log_mu: np.ndarray, n1: int, n2: int, iters: int = 80) -> np.ndarray:
    """One-point GRIDE likelihood roots (bisection in log d); ``inf`` where ``mu == 1``."""
    out = np.full(log_mu.shape, np.inf)
    ok = np.isfinite(log_mu) & (log_mu > 0)
    L = log_mu[ok]
    if n2 - n1 - 1 == 0:  # Pareto: closed form
        out[ok] = 1.0 / L
        return out
    lo, hi = np.full(L.shape, -30.0), np.full(L.shape, 30.0)  # bracket in log d
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        d = np.exp(mid)
        s = 1.0 / d + (n2 - n1 - 1) * L / -np.expm1(-d * L) - (n2 - 1) * L
        pos = s > 0
        lo = np.where(pos, mid, lo)
        hi = np.where(pos, hi, mid)
    out[ok] = np.exp(0.5 * (lo + hi))
    return out
