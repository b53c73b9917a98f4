"""The correlation dimension (Grassberger–Procaccia): :class:`CorrInt`, numerically equal to scikit-dimension 0.5's,
from exact counts of the pairs closer than a radius (:func:`count_pairs_below`).
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.base import IDEstimator
from ttlab.intrinsic_dim.neighbors import Neighbors
from ttlab.validation import Interval


def count_pairs_below(X: np.ndarray, radii: np.ndarray, block: int = 2048) -> np.ndarray:
    """Number of unordered pairs of rows at Euclidean distance strictly below each radius, exactly.

    Blocked float32 products; pairs whose float32 squared distance lies within a rigorous
    rounding bound of a threshold are re-measured in float64 from coordinate differences."""
    import torch

    n, D = X.shape
    Xc = X.astype(np.float64) - X.astype(np.float64).mean(axis=0)
    sq = np.einsum("ij,ij->i", Xc, Xc)
    nrm = np.sqrt(sq)
    X32 = torch.from_numpy(Xc.astype(np.float32))
    sq32 = torch.from_numpy(sq.astype(np.float32))
    radii64 = np.asarray(radii, dtype=np.float64)
    r2 = radii64**2
    counts = np.zeros(len(r2), dtype=np.int64)
    u = 2.0**-24
    nmax = nrm.max()
    for I in range(0, n, block):
        bi = min(block, n - I)
        for J in range(I, n, block):
            bj = min(block, n - J)
            Dt = torch.addmm(sq32[None, J : J + bj], X32[I : I + bi], X32[J : J + bj].T, beta=1.0, alpha=-2.0)
            Dt.add_(sq32[I : I + bi, None])
            Dn = Dt.numpy().astype(np.float64)
            eps = 1.05 * (D + 16) * u * (nrm[I : I + bi, None] + nmax) ** 2
            valid = np.ones((bi, bj), dtype=bool) if I != J else np.triu(np.ones((bi, bj), dtype=bool), 1)
            for t, rr in enumerate(r2):
                sure = valid & (Dn < rr - eps)
                unsure = valid & ~sure & (Dn <= rr + eps)
                c = int(sure.sum())
                if unsure.any():
                    a, b = np.nonzero(unsure)
                    diff = X[I + a].astype(np.float64) - X[J + b].astype(np.float64)
                    c += int((np.sqrt(np.einsum("ij,ij->i", diff, diff)) < radii64[t]).sum())
                counts[t] += c
    return counts


class CorrInt(IDEstimator):
    """Correlation dimension (Grassberger–Procaccia), scikit-dimension's ``CorrInt``: with ``r1``,
    ``r2`` the medians of the ``k1``-th and ``k2``-th neighbour distances (defaults 10 and 20),
    ``d = log(C(r2)/C(r1)) / log(r2/r1)`` where ``C(r)`` is the fraction of pairs closer than ``r``.
    Pair counts are exact (float32 products, pairs near a radius re-measured in float64);
    scikit-dimension uses float64 dot-product distances, which can count a pair at distance
    exactly ``r`` (odd number of points: ``r`` is a data distance) differently."""

    name = "corrint"
    _parameter_constraints: dict[str, Any] = {
        **IDEstimator._parameter_constraints,
        "k1": [Interval(Integral, 1, None, closed="left")],
        "k2": [Interval(Integral, 2, None, closed="left")],
    }

    def __init__(self, k1: int = 10, k2: int = 20, *, metric: str = "euclidean", batch_size: int | None = None,
                 seed: int = 0, remainder: str = "drop", backend: str = "auto", block_size: int = 2048,
                 device: str | None = None) -> None:
        self._set_common(metric, batch_size, seed, remainder, backend, block_size, device)
        self.k1 = k1
        self.k2 = k2

    def _check_params(self) -> None:
        if self.k1 >= self.k2:
            raise TTLabInputError(f"CorrInt needs k1 < k2; got k1={self.k1}, k2={self.k2}.")

    def _n_neighbors(self) -> int:
        return int(self.k2)

    def _from_neighbors(self, X: np.ndarray, nb: Neighbors | None) -> tuple[float, np.ndarray | None, dict[str, Any]]:
        d = nb.distances  # type: ignore[union-attr]
        r1 = float(np.median(d[:, int(self.k1) - 1]))
        r2 = float(np.median(d[:, int(self.k2) - 1]))
        n = len(X)
        c1, c2 = count_pairs_below(X, np.array([r1, r2]), block=int(self.block_size))
        Cr = np.array([2 * c1, 2 * c2]) / n**2
        return float(np.diff(np.log(Cr))[0] / np.log(r2 / r1)), None, {"radii_": np.array([r1, r2])}
