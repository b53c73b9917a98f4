"""The tight local ID estimator (Amsaleg et al. 2019): :class:`TLE`, numerically equal to scikit-dimension 0.5's,
and its pointwise estimates from the neighbourhoods' Gram matrices (:func:`tle_pointwise`).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ttlab.intrinsic_dim.base import DegeneratePointsWarning
from ttlab.intrinsic_dim.local import LocalKNN
from ttlab.intrinsic_dim.neighbors import Neighbors
from ttlab.intrinsic_dim.neighbourhoods import POSITIVE, batched_gram, chunk_size


class TLE(LocalKNN):
    """Tight local ID estimator (Amsaleg et al. 2019; the variant with central measurements and
    reflections), scikit-dimension's ``TLE``; ``k`` defaults to 20, ``epsilon`` 1e-4.
    Distances between neighbours come from float64 Gram matrices centred at the query point."""

    name = "tle"
    label = "TLE"
    _parameter_constraints: dict[str, Any] = {**LocalKNN._parameter_constraints, "epsilon": POSITIVE}

    def __init__(self, k: int = 20, epsilon: float = 1e-4, average: str = "mean", *, metric: str = "euclidean",
                 batch_size: int | None = None, seed: int = 0, remainder: str = "drop", backend: str = "auto",
                 block_size: int = 2048, device: str | None = None) -> None:
        self._set_common(metric, batch_size, seed, remainder, backend, block_size, device)
        self.k = k
        self.average = average
        self.epsilon = epsilon

    def _pointwise(self, X: np.ndarray, nb: Neighbors) -> np.ndarray:
        n, K = nb.indices.shape
        out = np.empty(n)
        for a in range(0, n, chunk_size(K, X.shape[1])):
            idx = nb.indices[a : a + chunk_size(K, X.shape[1])]
            Y = X[idx].astype(np.float64) - X[a : a + len(idx), None, :].astype(np.float64)
            out[a : a + len(idx)] = tle_pointwise(Y, nb.distances[a : a + len(idx)], float(self.epsilon))
        eps = float(self.epsilon)
        hit = (nb.distances < eps).any(axis=1) | (out == 0.0)
        if hit.any():  # epsilon is an absolute distance (scikit-dimension's): on small data it decides the result
            r = float(np.median(nb.distances[:, -1]))
            warnings.warn(
                f"TLE: epsilon = {eps:g} is an absolute distance, and {hit.mean():.0%} of points have neighbours "
                f"closer than it or an estimate zeroed by it (median distance to the {K}-th neighbour {r:.3g}); "
                f"the estimate is not scale-free there. Pass epsilon ≈ {eps:g} × {r:.3g} = {eps * r:.3g}, or rescale X.",
                DegeneratePointsWarning, stacklevel=6,
            )
        return out


def tle_pointwise(Y: np.ndarray, dists: np.ndarray, epsilon: float) -> np.ndarray:
    """TLE estimates for ``m`` points from their neighbours ``Y`` (m, K, D; relative to the point)
    and sorted distances ``dists`` (m, K)."""
    m, K, _ = Y.shape
    G = batched_gram(Y)
    sq = np.einsum("mii->mi", G)
    V2 = np.clip(sq[:, :, None] + sq[:, None, :] - 2 * G, 0.0, None)
    eye = np.eye(K, dtype=bool)
    V2[:, eye] = 0.0
    V = np.sqrt(V2)
    r = dists[:, -1][:, None, None]
    Di = np.broadcast_to(dists[:, :, None], (m, K, K))
    Dj = np.broadcast_to(dists[:, None, :], (m, K, K))
    with np.errstate(divide="ignore", invalid="ignore"):
        Z2 = 2 * Di**2 + 2 * Dj**2 - V2
        den = 2 * (r**2 - Di**2)
        A = Di**2 + V2 - Dj**2
        S = r * ((A**2 + 4 * V2 * (r**2 - Di**2)) ** 0.5 - A) / den
        B = Di**2 + Z2 - Dj**2
        T = r * ((B**2 + 4 * Z2 * (r**2 - Di**2)) ** 0.5 - B) / den
        Dr = dists == dists[:, -1:]  # neighbours at the k-th distance (rows i)
        rowmask = np.broadcast_to(Dr[:, :, None], (m, K, K))
        S = np.where(rowmask, r * V2 / (r**2 + V2 - Dj**2), S)
        T = np.where(rowmask, r * Z2 / (r**2 + Z2 - Dj**2), T)
        Di0, Dj0 = Di == 0, Dj == 0
        T = np.where(Di0, Dj, T)
        S = np.where(Di0, Dj, S)
        T = np.where(Dj0, r * V / (r + V), T)
        S = np.where(Dj0, r * V / (r + V), S)
        V0 = (V == 0) & ~eye
        T = np.where(V0, r, T)
        S = np.where(V0, r, S)
        nV0 = V0.sum(axis=(1, 2))
        TSeps = ((T < epsilon) | (S < epsilon) | np.isnan(T) | np.isnan(S)) & ~eye
        nTSeps = TSeps.sum(axis=(1, 2))
        T = np.log(np.where(TSeps, r, T) / r)
        S = np.log(np.where(TSeps, r, S) / r)
        T[:, eye] = 0.0
        S[:, eye] = 0.0
        s1t = T.sum(axis=(1, 2))
        s1s = S.sum(axis=(1, 2))
        Deps = dists < epsilon
        nDeps = Deps.sum(axis=1)
        logs = np.log(dists / dists[:, -1:])
        s2 = np.where(Deps, 0.0, logs).sum(axis=1)
        ID = -2 * (K**2 - nTSeps - nDeps - nV0) / (s1t + s1s + 2 * s2)
    return np.where(s1t + s1s > -epsilon, 0.0, ID)
