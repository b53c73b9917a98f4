"""kNN graph-length dimension (Carter, Raich & Hero 2010, without block bootstrap), scikit-dimension's ``KNN``.

For sample sizes ``p`` in ``ps`` (default ``k+1 .. k+4``), ``M`` bootstrap samples of ``p`` points
(drawn with replacement, ``numpy.random.RandomState(random_state)``, in scikit-dimension's order) give
the total length ``L`` of their kNN graph with edge weights ``distance**gamma``. For a ``m``-dimensional
set, ``L ≈ c p^{(m − γ)/m}``; the estimate is the ``m`` in 1..n_features whose least-squares fit of ``c``
leaves the smallest residual (``residual_``). Only the sampled points' distances are computed (scikit-
dimension forms the full n × n distance matrix).
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.base import IDEstimator
from ttlab.intrinsic_dim.neighbors import Neighbors
from ttlab.validation import Interval


def graph_lengths(X: np.ndarray, k: int, ps: np.ndarray, M: int, gamma: float, rs: np.random.RandomState) -> np.ndarray:
    """``L[i, j]``: kNN-graph length (edges ``distance**gamma``, ``k`` per point, self excluded) of the
    ``j``-th sample of ``ps[i]`` points drawn with replacement."""
    from scipy.spatial.distance import cdist

    L = np.zeros((len(ps), M))
    for i, p in enumerate(ps):
        for j in range(M):
            idx = rs.randint(0, len(X), int(p))
            Dm = np.sort(cdist(X[idx], X[idx]), axis=1)[:, 1 : k + 1]
            L[i, j] = float(np.sum(Dm**gamma))
    return L


def length_dimension(L: np.ndarray, ps: np.ndarray, gamma: float, max_dim: int) -> tuple[int, float]:
    """The ``m`` in 1..``max_dim`` minimising the least-squares residual of ``L ≈ c p^{(m − γ)/m}``, and that residual."""
    M = L.shape[1]
    eps = np.empty(max_dim)
    for m in range(1, max_dim + 1):
        pa = ps ** ((m - gamma) / m)
        c = np.sum(pa * L.sum(axis=1)) / (np.sum(pa**2) * M)
        eps[m - 1] = np.sum((L - (c * pa)[:, None]) ** 2)
    m = int(np.nanargmin(eps)) + 1
    return m, float(eps[m - 1])


class KNN(IDEstimator):
    """kNN graph-length estimator (scikit-dimension's ``KNN``; :mod:`ttlab.intrinsic_dim.knn_length`).

    ``k`` (default 2) neighbours per point, sample sizes ``ps`` (default ``k+1..k+4``, each in ``(k, n]``),
    ``M`` samples per size, weight exponent ``gamma``; ``random_state`` seeds the samples (ttlab default 0;
    scikit-dimension: unseeded). An integer estimate in 1..n_features."""

    name = "knn"
    _parameter_constraints: dict[str, Any] = {
        **IDEstimator._parameter_constraints,
        "k": [Interval(Integral, 1, None, closed="left"), None],
        "M": [Interval(Integral, 1, None, closed="left")],
        "random_state": [Interval(Integral, 0, None, closed="left")],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "ps": "no_validation",  # sample sizes above k: _check_params
    }

    def __init__(self, k: int | None = None, ps: Any = None, M: int = 1, gamma: float = 2, random_state: int = 0, *,
                 metric: str = "euclidean", batch_size: int | None = None, seed: int = 0, remainder: str = "drop",
                 backend: str = "auto", block_size: int = 2048, device: str | None = None) -> None:
        self._set_common(metric, batch_size, seed, remainder, backend, block_size, device)
        self.k = k
        self.ps = ps
        self.M = M
        self.gamma = gamma
        self.random_state = random_state

    def _k(self) -> int:
        return 2 if self.k is None else int(self.k)

    def _ps(self) -> np.ndarray:
        return np.arange(self._k() + 1, self._k() + 5) if self.ps is None else np.ravel(np.asarray(self.ps))

    def _check_params(self) -> None:
        ps = self._ps()
        if ps.size < 2 or ps.dtype.kind not in "iu" or ps.min() <= self._k():
            raise TTLabInputError(f"ps must be at least two integer sample sizes > k = {self._k()}; got {self.ps!r}.")

    def _n_neighbors(self) -> int:
        return 0

    def _min_points(self) -> int:
        return int(self._ps().max())

    def _needs(self) -> str:
        return f"KNN with sample sizes up to {int(self._ps().max())} needs"

    def _from_neighbors(self, X: np.ndarray, nb: Neighbors | None) -> tuple[float, np.ndarray | None, dict[str, Any]]:
        ps = self._ps()
        L = graph_lengths(X.astype(np.float64, copy=False), self._k(), ps, int(self.M), float(self.gamma),
                          np.random.RandomState(int(self.random_state)))
        m, res = length_dimension(L, ps.astype(np.float64), float(self.gamma), X.shape[1])
        return float(m), None, {"residual_": res}
