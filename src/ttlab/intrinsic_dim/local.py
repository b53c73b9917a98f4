"""Local estimators on the distances to the k nearest neighbours, numerically equal to scikit-dimension 0.5's:
:class:`MOM` (method of moments) and :class:`MADA` (manifold-adaptive dimension); and their base :class:`LocalKNN`
(pointwise estimates combined by ``average``), which :class:`~ttlab.intrinsic_dim.tle.TLE` and
:class:`~ttlab.intrinsic_dim.ess.ESS` share.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ttlab.intrinsic_dim.base import IDEstimator
from ttlab.intrinsic_dim.neighbors import Neighbors
from ttlab.intrinsic_dim.neighbourhoods import NEIGHBOURHOOD_CONSTRAINTS, combine_pointwise


class LocalKNN(IDEstimator):
    """Pointwise estimators on the k nearest neighbours, combined by ``average``."""

    label = "local"
    _parameter_constraints: dict[str, Any] = {**IDEstimator._parameter_constraints, **NEIGHBOURHOOD_CONSTRAINTS}

    def _n_neighbors(self) -> int:
        return int(self.k)

    def _pointwise(self, X: np.ndarray, nb: Neighbors) -> np.ndarray:
        raise NotImplementedError

    def _from_neighbors(self, X: np.ndarray, nb: Neighbors | None) -> tuple[float, np.ndarray | None, dict[str, Any]]:
        pw = self._pointwise(X, nb)  # type: ignore[arg-type]
        return combine_pointwise(pw, self.average, self.label), pw, {}


class MOM(LocalKNN):
    """Method of moments (Amsaleg et al. 2018), scikit-dimension's ``MOM``: pointwise
    ``−m1 / (m1 − w)`` with ``m1`` the mean distance to the ``k`` neighbours and ``w`` the
    largest; ``k`` defaults to 100 (scikit-dimension's neighbourhood default)."""

    name = "mom"
    distance_only = True
    label = "MOM"

    def __init__(self, k: int = 100, average: str = "mean", *, metric: str = "euclidean", batch_size: int | None = None,
                 seed: int = 0, remainder: str = "drop", backend: str = "auto", block_size: int = 2048,
                 device: str | None = None) -> None:
        self._set_common(metric, batch_size, seed, remainder, backend, block_size, device)
        self.k = k
        self.average = average

    def _pointwise(self, X: np.ndarray, nb: Neighbors) -> np.ndarray:
        d = nb.distances
        w = d[:, -1]
        m1 = d.sum(axis=1) / d.shape[1]
        with np.errstate(divide="ignore", invalid="ignore"):
            return -m1 / (m1 - w)


class MADA(LocalKNN):
    """Manifold-adaptive dimension (Farahmand et al. 2007), scikit-dimension's ``MADA``:
    pointwise ``log 2 / log(r_k / r_⌊k/2⌋)``; ``k`` defaults to 20. (scikit-dimension forms the
    full distance matrix; the k nearest distances give the same numbers.)"""

    name = "mada"
    distance_only = True
    label = "MADA"

    def __init__(self, k: int = 20, average: str = "mean", *, metric: str = "euclidean", batch_size: int | None = None,
                 seed: int = 0, remainder: str = "drop", backend: str = "auto", block_size: int = 2048,
                 device: str | None = None) -> None:
        self._set_common(metric, batch_size, seed, remainder, backend, block_size, device)
        self.k = k
        self.average = average

    def _pointwise(self, X: np.ndarray, nb: Neighbors) -> np.ndarray:
        k = int(self.k)
        d = nb.distances
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(2) / np.log(d[:, k - 1] / d[:, k // 2 - 1])
