"""PH0 dimension (Schweinhart 2020; Jaquette & Schweinhart 2020), scikit-dimension's ``PH``.

For random subsamples of increasing size ``s`` (``nsteps`` sizes evenly spaced between ``n_range_min``
and ``n_range_max``, ``subsamples`` draws each, without replacement, ``numpy.random.RandomState(
random_state)`` in scikit-dimension's order), the total ``alpha``-weighted length ``E = Σ l^alpha`` of the
Euclidean minimum spanning tree (the 0-dimensional total persistence) grows as ``s^{(d − alpha)/d}``;
the estimate is ``alpha / (1 − slope)`` with the slope of the least-squares line of ``log E`` on
``log s`` (``x_``, ``y_``: the points of that fit). Every minimum spanning tree has the same multiset of
edge lengths, so ``E`` does not depend on the algorithm: here Prim's, vectorised over the subsample's
distance matrix (scikit-dimension builds a sparse graph of all pairs for each subsample).
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.base import IDEstimator
from ttlab.intrinsic_dim.neighbors import Neighbors
from ttlab.validation import Interval, Options, check_int

PH_MAX_POINTS = 8192
"""Largest batch PH accepts: its n x n float64 distance matrix is then 512 MiB."""


def mst_edge_lengths(D: np.ndarray) -> np.ndarray:
    """Edge lengths of a minimum spanning tree of the complete graph with distance matrix ``D`` (Prim)."""
    n = len(D)
    best = D[0].copy()
    in_tree = np.zeros(n, dtype=bool)
    in_tree[0] = True
    best[0] = np.inf
    out = np.empty(n - 1)
    for t in range(n - 1):
        j = int(np.argmin(best))
        out[t] = best[j]
        in_tree[j] = True
        best[j] = np.inf
        np.minimum(best, np.where(in_tree, np.inf, D[j]), out=best)
    return out


def subsample_sizes(n: int, n_range_min: float, n_range_max: float, range_type: str, nsteps: int,
                    subsamples: int) -> np.ndarray:
    """The subsample size of every draw (scikit-dimension's ``sizes``), checked."""
    if range_type == "fraction":
        if not 0 < n_range_min < n_range_max <= 1:
            raise TTLabInputError("PH needs 0 < n_range_min < n_range_max <= 1 for range_type='fraction'.")
        lo, hi = int(np.ceil(n_range_min * n)), int(np.ceil(n_range_max * n))
    else:
        lo, hi = check_int(n_range_min, "n_range_min", 2), check_int(n_range_max, "n_range_max", 3)
    if not 2 <= lo < hi <= n:
        raise TTLabInputError(f"PH needs 2 <= smallest subsample < largest subsample <= n_samples; got {lo}, {hi}, {n}.")
    return np.repeat(np.ceil(np.linspace(lo, hi, nsteps)).astype(int), subsamples)


class PH(IDEstimator):
    """PH0 (minimum-spanning-tree) dimension, scikit-dimension's ``PH`` (:mod:`ttlab.intrinsic_dim.ph`).

    ``alpha`` (> 0, one value), ``n_range_min``/``n_range_max`` (fractions of the points, or counts
    with ``range_type='num'``), ``nsteps`` sizes × ``subsamples`` draws, ``random_state`` (ttlab
    default 0; scikit-dimension: unseeded). ``distance``: the metric of the MST's distance matrix, any name
    :func:`scipy.spatial.distance.pdist` takes (scikit-dimension's ``metric``; default 'euclidean'), applied to the
    points after ``metric``'s map. Memory: the n × n distance matrix, as scikit-dimension."""

    name = "ph"
    _parameter_constraints: dict[str, Any] = {
        **IDEstimator._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "range_type": [Options(("fraction", "num"))],
        "nsteps": [Interval(Integral, 2, None, closed="left")],
        "subsamples": [Interval(Integral, 1, None, closed="left")],
        "random_state": [Interval(Integral, 0, None, closed="left")],
        "distance": [str],
        "n_range_min": "no_validation",  # a fraction or a count by range_type: subsample_sizes
        "n_range_max": "no_validation",
    }

    def __init__(self, alpha: float = 1.0, n_range_min: float = 0.5, n_range_max: float = 1.0,
                 range_type: str = "fraction", nsteps: int = 100, subsamples: int = 10, random_state: int = 0,
                 distance: str = "euclidean", *, metric: str = "euclidean", batch_size: int | None = None,
                 seed: int = 0, remainder: str = "drop",
                 backend: str = "auto", block_size: int = 2048, device: str | None = None) -> None:
        self._set_common(metric, batch_size, seed, remainder, backend, block_size, device)
        self.alpha = alpha
        self.n_range_min = n_range_min
        self.n_range_max = n_range_max
        self.range_type = range_type
        self.nsteps = nsteps
        self.subsamples = subsamples
        self.random_state = random_state
        self.distance = distance

    def _check_params(self) -> None:
        from scipy.spatial.distance import pdist

        try:
            pdist(np.zeros((2, 1)), metric=self.distance)
        except ValueError as exc:
            raise TTLabInputError(f"PH distance={self.distance!r} is not a scipy pdist metric ({exc}).",
                                  params=("distance",)) from exc

    def _n_neighbors(self) -> int:
        return 0

    def _min_points(self) -> int:
        return 3

    def _batches(self, prep: Any) -> list[np.ndarray]:
        batches = super()._batches(prep)
        largest = max(len(b) for b in batches)
        if largest > PH_MAX_POINTS:
            raise TTLabInputError(
                f"PH forms the n x n distance matrix; {largest} points per batch would need "
                f"{largest**2 * 8 / 2**30:.1f} GiB. Use batch_size <= {PH_MAX_POINTS} (e.g. the paper's protocol)."
            )
        return batches

    def _needs(self) -> str:
        return "PH needs"

    def _from_neighbors(self, X: np.ndarray, nb: Neighbors | None) -> tuple[float, np.ndarray | None, dict[str, Any]]:
        from scipy.spatial.distance import pdist, squareform

        n = len(X)
        sizes = subsample_sizes(n, self.n_range_min, self.n_range_max, self.range_type, int(self.nsteps),
                                int(self.subsamples))
        rng = np.random.RandomState(int(self.random_state))
        idx = [rng.choice(n, size=s, replace=False) for s in sizes]
        D = squareform(pdist(X.astype(np.float64, copy=False), metric=self.distance))
        alpha = float(self.alpha)
        E = np.array([np.sum(mst_edge_lengths(D[np.ix_(i, i)]) ** alpha) for i in idx])
        x, y = np.log(sizes.astype(np.float64)), np.log(E)
        slope = float(np.sum((x - x.mean()) * (y - y.mean())) / np.sum((x - x.mean()) ** 2))
        return alpha / (1 - slope), None, {"x_": x, "y_": y, "slope_": slope, "nmin_": int(sizes.min()),
                                           "nmax_": int(sizes.max())}
