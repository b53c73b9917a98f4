"""scikit-dimension's local estimators (``fit(X, n_neighbors=..., comb=...)``) over ttlab's: MLE, ESS, TLE, MOM, MADA."""

from __future__ import annotations

from typing import Any

import numpy as np

from ttlab.intrinsic_dim import ess, local, mle, tle
from ttlab.intrinsic_dim.base import IDEstimator
from ttlab.intrinsic_dim.single_set import ess_single_neighbourhood
from ttlab.intrinsic_dim.skdim.adapters import LocalAdapter, missing_option

__all__ = ["ESS", "MADA", "MLE", "MOM", "TLE"]


class MLE(LocalAdapter):
    """Levina–Bickel maximum likelihood (:class:`ttlab.intrinsic_dim.MLE`); ``comb='mle'`` is the harmonic mean."""

    _N_NEIGHBORS = 20
    _COMBS = {"mle": "harmonic", "mean": "mean", "median": "median"}

    def __init__(self, dnoise=None, sigma=0, n=None, integral_approximation="Haro", unbiased=False,
                 neighborhood_based=True, K=5):
        self.dnoise = dnoise
        self.sigma = sigma
        self.n = n
        self.integral_approximation = integral_approximation
        self.unbiased = unbiased
        self.neighborhood_based = neighborhood_based
        self.K = K

    def _ttlab_local(self, k: int, average: str) -> IDEstimator:
        if self.integral_approximation != "Haro" and self.dnoise is not None:
            raise missing_option("MLE", f"integral_approximation={self.integral_approximation!r}")
        opts: dict[str, Any] = dict(k=k, average=average, unbiased=self.unbiased)
        if self.dnoise is not None:
            opts.update(dnoise=self.dnoise, sigma=self.sigma)
        if not self.neighborhood_based:
            opts.update(neighborhood_based=False, global_k=self.K)
        return mle.MLE(**opts)

    def fit(self, X: Any, y: Any = None, precomputed_knn_arrays: Any = None, smooth: bool = False,
            n_neighbors: int | None = None, comb: str = "mle", n_jobs: int = 1) -> "MLE":
        """As scikit-dimension's ``MLE.fit`` (``comb`` defaults to ``'mle'``)."""
        super().fit(X, precomputed_knn_arrays=precomputed_knn_arrays, smooth=smooth, n_neighbors=n_neighbors,
                    comb=comb, n_jobs=n_jobs)
        return self

    def fit_transform(self, X: Any, y: Any = None, precomputed_knn_arrays: Any = None, smooth: bool = False,
                      n_neighbors: int | None = None, comb: str = "mle", n_jobs: int = 1) -> Any:
        """``fit(...).dimension_``."""
        return super().fit_transform(X, precomputed_knn_arrays=precomputed_knn_arrays, smooth=smooth,
                                     n_neighbors=n_neighbors, comb=comb, n_jobs=n_jobs)

    def fit_once(self, X: Any) -> "MLE":
        """scikit-dimension's single-neighbourhood MLE (not in ttlab)."""
        raise missing_option("MLE", "fit_once")


class ESS(LocalAdapter):
    """Expected simplex skewness (:class:`ttlab.intrinsic_dim.ESS`)."""

    def __init__(self, ver="a", d=1, random_state=None):
        self.ver = ver
        self.d = d
        self.random_state = random_state

    def _ttlab_local(self, k: int, average: str) -> IDEstimator:
        return ess.ESS(k=k, ver=self.ver, d=self.d, average=average, random_state=self.random_state or 0)

    def fit_once(self, X: Any, y: Any = None) -> "ESS":
        """ESS of the whole of ``X`` as one neighbourhood (``dimension_``, ``essval_``)."""
        self.dimension_, self.essval_ = ess_single_neighbourhood(
            np.asarray(X, dtype=np.float64), ver=self.ver, d=self.d, random_state=self.random_state or 0)
        self.is_fitted_ = True
        self.n_features_in_ = int(np.asarray(X).shape[1])
        return self


class TLE(LocalAdapter):
    """Tight local estimator (:class:`ttlab.intrinsic_dim.TLE`)."""

    _N_NEIGHBORS = 20

    def __init__(self, epsilon=1e-4):
        self.epsilon = epsilon

    def _ttlab_local(self, k: int, average: str) -> IDEstimator:
        return tle.TLE(k=k, average=average, epsilon=self.epsilon)


class MOM(LocalAdapter):
    """Method of moments (:class:`ttlab.intrinsic_dim.MOM`)."""

    def __init__(self):
        pass

    def _ttlab_local(self, k: int, average: str) -> IDEstimator:
        return local.MOM(k=k, average=average)


class MADA(LocalAdapter):
    """Manifold-adaptive dimension (:class:`ttlab.intrinsic_dim.MADA`); ``DM=True`` (a distance matrix) is missing."""

    _N_NEIGHBORS = 20

    def __init__(self, DM=False):
        self.DM = DM

    def _ttlab_local(self, k: int, average: str) -> IDEstimator:
        if self.DM:
            raise missing_option("MADA", "DM=True (a precomputed distance matrix)")
        return local.MADA(k=k, average=average)
