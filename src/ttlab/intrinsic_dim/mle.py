"""The Levina–Bickel maximum-likelihood estimator :class:`MLE`, its pointwise estimates (:func:`mle_pointwise`)
and the warnings of a K too small to trust (:func:`small_k_warnings`).

Conventions (identical to scikit-dimension 0.5, checked to 1e-6 in the tests): with ``T_1 <= ... <= T_K`` the
distances to the K nearest neighbours (the point itself excluded), the pointwise estimate is
``(K - 1) / sum_{j<K} log(T_K / T_j)`` (``K - 2`` with ``unbiased=True``). ``K`` here is scikit-dimension's
``n_neighbors`` argument of ``MLE.fit`` (its constructor's ``K`` is unused in the default neighbourhood mode).
``average='mean'`` is scikit-dimension's ``comb='mean'`` (what the paper's code used), ``'harmonic'`` is its
default ``comb='mle'`` (MacKay–Ghahramani: 1 / mean(1 / pointwise)), ``'median'`` is ``comb='median'``.

scikit-dimension's other options (the noise model, the global estimate) are :mod:`ttlab.intrinsic_dim.mle_variants`'s.
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.base import AVERAGES, DegeneratePointsWarning, IDEstimator
from ttlab.intrinsic_dim.mle_variants import DNOISE
from ttlab.intrinsic_dim.protocol import PAPER
from ttlab.validation import Interval, Options, check_int


def _combine(pw: np.ndarray, average: str) -> float:
    finite = pw[np.isfinite(pw)]
    if len(finite) < len(pw):
        warnings.warn(
            f"{len(pw) - len(finite)} point(s) have all K neighbours at the same distance, so their "
            "pointwise estimate is undefined; they are left out of the average.",
            DegeneratePointsWarning,
            stacklevel=4,
        )
    if not len(finite):
        raise TTLabInputError(
            "every point has all K neighbours at the same distance (e.g. one-hot or lattice rows), so the MLE is "
            "undefined: distance ratios carry no dimension here. A larger K helps only if farther neighbours lie "
            "at other distances."
        )
    if average == "mean":
        return float(np.mean(finite))
    if average == "harmonic":
        return float(1.0 / np.mean(1.0 / finite))
    return float(np.median(finite))


class MLE(IDEstimator):
    """Levina–Bickel maximum-likelihood estimator with K neighbours.

    ``average``: 'mean' (arithmetic mean of pointwise estimates; the paper's code), 'harmonic'
    (MacKay–Ghahramani, less biased) or 'median'. ``unbiased=True`` uses K − 2 instead of K − 1.
    scikit-dimension's options (:mod:`ttlab.intrinsic_dim.mle_variants`): ``dnoise='dnoiseGaussH'``
    with ``sigma`` (Haro et al.'s Gaussian noise correction) and ``neighborhood_based=False`` (one
    global estimate from the ``k`` smallest distinct distances among every point's ``global_k``
    nearest neighbours; scikit-dimension's ``K``).
    """

    name = "mle"
    distance_only = True
    _parameter_constraints: dict[str, Any] = {
        **IDEstimator._parameter_constraints,
        "k": [Interval(Integral, 2, None, closed="left")],  # >= 3 with unbiased=True (_check_params)
        "average": [Options(AVERAGES)],
        "unbiased": "no_validation",
        "dnoise": [None, Options(DNOISE)],
        "sigma": "no_validation",  # > 0 when dnoise is given (_check_params)
        "neighborhood_based": "no_validation",
        "global_k": "no_validation",  # >= 1 when neighborhood_based=False (_check_params)
    }

    def __init__(
        self,
        k: int = PAPER.k,
        average: str = "mean",
        unbiased: bool = False,
        dnoise: str | None = None,
        sigma: float = 0.0,
        neighborhood_based: bool = True,
        global_k: int = 5,
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
        self.k = k
        self.average = average
        self.unbiased = unbiased
        self.dnoise = dnoise
        self.sigma = sigma
        self.neighborhood_based = neighborhood_based
        self.global_k = global_k

    def _check_params(self) -> None:
        if self.unbiased:
            check_int(self.k, "k", 3)
        if self.dnoise is not None:
            if isinstance(self.sigma, bool) or not isinstance(self.sigma, (int, float)) or not self.sigma > 0:
                raise TTLabInputError(f"dnoise={self.dnoise!r} needs a noise scale sigma > 0; got sigma={self.sigma!r}.")
        if not self.neighborhood_based:
            check_int(self.global_k, "global_k", 1)

    def fit(self, X: Any, y: Any = None) -> "MLE":
        """Estimate the ID of the rows of ``X``; warns (:class:`SmallKWarning`) when K is too small to trust it."""
        super().fit(X, y)
        for msg in small_k_warnings(int(self.k), self.dimension_, self.average, self.unbiased):
            warnings.warn(msg, SmallKWarning, stacklevel=2)
        return self

    def _n_neighbors(self) -> int:
        return int(self.k) if self.neighborhood_based else int(self.global_k)

    def _from_distances(self, dist: np.ndarray) -> tuple[float, np.ndarray | None, dict[str, Any]]:
        import ttlab.intrinsic_dim.mle_variants as mv

        if not self.neighborhood_based:
            radii = mv.global_radii(dist, int(self.k))
            return mv.mle_from_radii(radii, self.unbiased, float(self.sigma), self.dnoise), None, {}
        if self.dnoise is not None:
            pw = mv.mle_pointwise_noisy(dist, float(self.sigma), self.unbiased)
        else:
            pw = mle_pointwise(dist, unbiased=self.unbiased)
        return _combine(pw, self.average), pw, {}


MLE_MIN_K = 10
"""Below this many neighbours the MLE is flagged (see :func:`small_k_warnings`)."""


class SmallKWarning(UserWarning):
    """The MLE used too few neighbours for its estimate to be trusted."""


def small_k_warnings(k: int, dimension: float, average: str = "mean", unbiased: bool = False) -> list[str]:
    """Why an MLE with ``k`` neighbours that gave ``dimension`` should not be trusted (empty when fine).

    Rule: for locally uniform data the pointwise estimate is (K − 1)/Γ(K − 1, d) (inverse gamma), so
    its relative spread is 1/√(K − 3) (infinite for K ≤ 3) and the arithmetic mean of pointwise
    estimates is biased by the factor (K − 1)/(K − 2) (with the K − 2 numerator, or the harmonic combination, the bias vanishes).
    Flag K < :data:`MLE_MIN_K` (bias ≥ 12.5 %, spread ≥ 38 %), and an estimate above K, which
    K neighbours cannot resolve (the neighbourhood is dominated by curvature, noise and boundaries).
    """
    out = []
    if k < MLE_MIN_K:
        spread = "infinite" if k <= 3 else f"{100 / math.sqrt(k - 3):.0f} %"
        if average == "mean" and not unbiased:
            bias = ("; their mean has no finite expectation" if k <= 2
                    else f"; their mean is biased upwards by {100 / (k - 2):.0f} %")
        else:
            bias = ""
        out.append(
            f"MLE with K = {k} neighbours is unreliable: a pointwise estimate has relative spread {spread}{bias} "
            f"(locally uniform data); use K ≥ {MLE_MIN_K} (the paper uses {PAPER.k})."
        )
    if math.isfinite(dimension) and dimension > k:
        out.append(
            f"the estimate {dimension:.3g} exceeds K = {k}: {k} neighbours cannot resolve a dimension that high; "
            "increase K (and the number of points)."
        )
    return out


def mle_pointwise(dist: np.ndarray, unbiased: bool = False) -> np.ndarray:
    """Levina–Bickel pointwise estimates from sorted neighbour distances ``dist`` (n, K), all > 0.

    ``(K − 1) / sum_{j<K} log(T_K / T_j)`` (``K − 2`` if ``unbiased``); ``inf`` where all K
    distances are equal.
    """
    K = dist.shape[1]
    s = np.log(dist[:, -1:] / dist[:, :-1]).sum(axis=1)
    with np.errstate(divide="ignore"):
        return (K - 2 if unbiased else K - 1) / s
