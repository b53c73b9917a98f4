"""More intrinsic-dimension estimators, numerically equal to scikit-dimension 0.5's for the same settings.

Same contract as :mod:`ttlab.intrinsic_dim.estimators` (validation, metric, duplicate removal,
batches, ``dimension_``; neighbours from the exact search of :mod:`ttlab.intrinsic_dim.knn`,
shareable between estimators). Defaults are scikit-dimension's, so the same data give the same
number with no options. Where ttlab differs it says so in the class docstring; in short:

- combination of pointwise estimates: scikit-dimension's ``comb='mean'`` (the default of its
  local estimators' ``fit``) is ``average='mean'``; ``'median'`` is ``comb='median'``.
  Non-finite pointwise values are left out with a :class:`DegeneratePointsWarning`
  (scikit-dimension returns NaN).
- randomised estimators (DANCo's calibration) default to ``random_state=0`` rather than an
  unseeded generator, so the same call gives the same number; with the same integer seed the
  random draws are scikit-dimension's (NumPy ``RandomState``), so the results agree.
- duplicates are dropped (scikit-dimension degenerates on them: zero distances).

Estimators here: :class:`TLE`, :class:`MOM`, :class:`MADA`, :class:`ESS` and :class:`CorrInt`; in their own
modules: :class:`LPCA` (``lPCA``; :mod:`ttlab.intrinsic_dim.lpca`), :class:`MiND_ML` and :class:`DANCo`
(:mod:`ttlab.intrinsic_dim.mind`). Shared machinery: :mod:`ttlab.intrinsic_dim.neighbourhoods`.

Imports: numpy, ttlab.errors, ttlab.validation, ttlab.intrinsic_dim (estimators, knn, lpca, mind, neighbourhoods);
lazily scipy and torch; never ttlab.cli.
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from functools import lru_cache
from numbers import Integral
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.estimators import DegeneratePointsWarning, IDEstimator
from ttlab.intrinsic_dim.knn import Neighbors
from ttlab.intrinsic_dim.lpca import LPCA
from ttlab.intrinsic_dim.mind import DANCo, MiND_ML
from ttlab.intrinsic_dim.neighbourhoods import (
    NEIGHBOURHOOD_CONSTRAINTS,
    POSITIVE,
    batched_gram,
    chunk_size,
    combine_pointwise,
)
from ttlab.validation import Interval, Options

__all__ = [
    "CorrInt", "ESS", "MADA", "MOM", "MORE_METHODS", "TLE",
    "count_pairs_below", "ess_dimension", "ess_value", "sample_combinations", "tle_pointwise",
]

#: ESS's blocks stay below this many bytes (unbounded, k = 100 pairs in 2-D took 4.1 GB on a 9.6 MB input)
_ESS_BLOCK_BYTES = 2**27


# ----------------------------------------------------------------------------- kNN-distance estimators
class _LocalKNN(IDEstimator):
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


class MOM(_LocalKNN):
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


class MADA(_LocalKNN):
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


class TLE(_LocalKNN):
    """Tight local ID estimator (Amsaleg et al. 2019; the variant with central measurements and
    reflections), scikit-dimension's ``TLE``; ``k`` defaults to 20, ``epsilon`` 1e-4.
    Distances between neighbours come from float64 Gram matrices centred at the query point."""

    name = "tle"
    label = "TLE"
    _parameter_constraints: dict[str, Any] = {**_LocalKNN._parameter_constraints, "epsilon": POSITIVE}

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


# --------------------------------------------------------------------------------------------- ESS
@lru_cache(maxsize=64)
def _ess_reference(ver: str, d: int, maxdim: int, mindim: int = 1) -> np.ndarray:
    from scipy.special import gamma

    if ver == "a":
        J1 = np.array([1 + i for i in range(0, maxdim + 2, 2) if 1 + i <= maxdim])
        J2 = np.array([2 + i for i in range(0, maxdim + 2, 2) if 2 + i <= maxdim])
        f1_J1 = gamma(1 / 2) / gamma(2 / 2) * np.concatenate(([1.0], np.cumprod(J1 / (J1 + 1))[:-1]))
        f1_J2 = gamma(2 / 2) / gamma(3 / 2) * np.concatenate(([1.0], np.cumprod(J2 / (J2 + 1))[:-1]))
        factor1 = np.repeat(np.nan, maxdim)
        factor1[J1 - 1] = f1_J1
        factor1[J2 - 1] = f1_J2
        K1 = np.array([d + 1 + i for i in range(0, maxdim + 2, 2) if d + 1 + i <= maxdim])
        K2 = np.array([d + 2 + i for i in range(0, maxdim + 2, 2) if d + 2 + i <= maxdim])
        f2_K1 = gamma((d + 1) / 2) / gamma(1 / 2) * np.concatenate(([1.0], np.cumprod(K1 / (K1 - d))[:-1]))
        f2_K2 = gamma((d + 2) / 2) / gamma(2 / 2) * np.concatenate(([1.0], np.cumprod(K2 / (K2 - d))[:-1]))
        factor2 = np.zeros(maxdim)
        factor2[K1 - 1] = f2_K1
        factor2[K2 - 1] = f2_K2
        return (factor1**d * factor2)[mindim - 1 : maxdim]
    J1 = np.array([1 + i for i in range(0, maxdim + 2, 2) if 1 + i <= maxdim])
    J2 = np.array([2 + i for i in range(0, maxdim + 2, 2) if 2 + i <= maxdim])
    ID_J1 = gamma(3 / 2) / gamma(2 / 2) * np.concatenate(([1.0], np.cumprod((J1 + 2) / (J1 + 1))[:-1]))
    ID_J2 = gamma(4 / 2) / gamma(3 / 2) * np.concatenate(([1.0], np.cumprod((J2 + 2) / (J2 + 1))[:-1]))
    ref = np.repeat(np.nan, maxdim)
    ref[J1 - 1] = ID_J1
    ref[J2 - 1] = ID_J2
    return ref[mindim - 1 : maxdim] * 2 / np.sqrt(np.pi) / np.arange(mindim, maxdim + 1)


def ess_dimension(essval: float, ver: str = "a", d: int = 1) -> float:
    """Invert the expected simplex skewness of a uniform ball (scikit-dimension's lookup)."""
    if np.isnan(essval):
        return math.nan
    mindim, maxdim = 1, 20
    dimvals = _ess_reference(ver, d, maxdim, mindim)
    while (ver == "a" and essval > dimvals[maxdim - 1]) or (ver == "b" and essval < dimvals[maxdim - 1]):
        mindim = maxdim + 1
        maxdim = 2 * (maxdim - 1)
        dimvals = np.append(dimvals, _ess_reference(ver, d, maxdim, mindim))
    if ver == "a":
        i = bisect.bisect(dimvals[mindim - 1 : maxdim], essval)
    else:
        i = len(range(mindim, maxdim + 1)) - bisect.bisect(dimvals[mindim - 1 : maxdim][::-1], essval)
    de_int = mindim + i - 1
    return float(de_int + (essval - dimvals[de_int - 1]) / (dimvals[de_int] - dimvals[de_int - 1]))


class ESS(_LocalKNN):
    """Expected simplex skewness (Johnsson et al. 2015), scikit-dimension's ``ESS``: for each point,
    the vectors from the centroid of its ``k`` neighbours (default 100, the point excluded) form
    simplices with ``d + 1`` vertices; the ratio of their volumes to the products of their edge
    lengths is compared with its value for uniform balls. ``ver='a'`` (default) or ``'b'``
    (``d = 1`` only). With ``C(k, d+1) <= 5000`` every simplex is used, as scikit-dimension does;
    larger neighbourhoods draw 5,000 simplices per point with ``numpy.random.default_rng(random_state)``
    in scikit-dimension's order (ttlab default ``random_state=0``; scikit-dimension: unseeded)."""

    name = "ess"
    label = "ESS"
    _parameter_constraints: dict[str, Any] = {
        **_LocalKNN._parameter_constraints,
        "ver": [Options(("a", "b"))],
        "d": [Interval(Integral, 1, None, closed="left")],
        "random_state": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(self, k: int = 100, ver: str = "a", d: int = 1, random_state: int = 0, average: str = "mean", *,
                 metric: str = "euclidean", batch_size: int | None = None, seed: int = 0, remainder: str = "drop",
                 backend: str = "auto", block_size: int = 2048, device: str | None = None) -> None:
        self._set_common(metric, batch_size, seed, remainder, backend, block_size, device)
        self.k = k
        self.average = average
        self.ver = ver
        self.d = d
        self.random_state = random_state

    def _check_params(self) -> None:
        if self.ver == "b" and self.d != 1:
            raise TTLabInputError("ESS ver='b' supports d = 1 only.")
        if math.comb(int(self.k), int(self.d) + 1) < 1:
            raise TTLabInputError(f"ESS needs k >= d + 1 = {int(self.d) + 1}.")

    def _pointwise(self, X: np.ndarray, nb: Neighbors) -> np.ndarray:
        n, K = nb.indices.shape
        p = int(self.d) + 1
        if p > X.shape[1]:  # d + 1 vectors in fewer dimensions: every simplex is flat (ver a: 0, ver b: 1)
            if int(self.d) > 1:
                warnings.warn(
                    f"ESS with d = {int(self.d)} on {X.shape[1]}-feature data: every simplex of d + 1 = {p} "
                    f"vectors is flat, so ESS cannot tell dimensions 1..{int(self.d)} apart; use d = 1.",
                    DegeneratePointsWarning, stacklevel=6,
                )
            return np.full(n, ess_dimension(0.0 if self.ver == "a" else 1.0, self.ver, int(self.d)))
        ncomb = math.comb(K, p)
        rng = np.random.default_rng(int(self.random_state))
        all_groups = np.array(list(itertools.combinations(range(K), p))) if ncomb <= 5000 else None
        essval = np.empty(n)
        # points per block: the neighbourhoods, their Gram matrices and, for pairs, ~6 arrays over the pairs
        per_point = 8 * (2 * K * X.shape[1] + K * K + 6 * (ncomb if all_groups is not None and p == 2 else 0))
        step = max(1, min(chunk_size(K, X.shape[1]), _ESS_BLOCK_BYTES // per_point))
        for a in range(0, n, step):
            nbh = X[nb.indices[a : a + step]].astype(np.float64)
            V = nbh - nbh.mean(axis=1, keepdims=True)
            G = batched_gram(V)
            ln = np.sqrt(np.einsum("mij,mij->mi", V, V))
            if all_groups is not None and p == 2:  # every pair: vectorised over the chunk
                i, j = all_groups[:, 0], all_groups[:, 1]
                Gij = G[:, i, j]
                weight = (ln[:, i] * ln[:, j]).sum(axis=1)
                if self.ver == "b":
                    essval[a : a + len(V)] = np.abs(Gij).sum(axis=1) / weight
                else:
                    vol = G[:, i, i] * G[:, j, j] - Gij**2
                    essval[a : a + len(V)] = np.sqrt(np.abs(vol)).sum(axis=1) / weight
                continue
            for j in range(len(V)):
                groups = all_groups if all_groups is not None else sample_combinations(K, p, ncomb, rng)
                essval[a + j] = ess_value(G[j], ln[j], groups, self.ver)
        return np.array([ess_dimension(float(e), self.ver, int(self.d)) for e in essval])


def sample_combinations(K: int, p: int, ncomb: int, rng: np.random.Generator) -> np.ndarray:
    """5,000 of the ``C(K, p)`` combinations, chosen as scikit-dimension's ``efficient_indnComb``."""
    targets = np.sort(rng.choice(ncomb, min(ncomb, 5000), replace=False))
    out, t = [], 0
    for i, comb in enumerate(itertools.combinations(range(K), p)):
        if i == targets[t]:
            out.append(comb)
            t += 1
            if t == len(targets):
                break
    return np.array(out)


def ess_value(G: np.ndarray, ln: np.ndarray, groups: np.ndarray, ver: str) -> float:
    """ESS value of one neighbourhood from its Gram matrix ``G``, vector lengths ``ln`` and the simplices
    ``groups`` (rows of vertex indices): volumes over products of edge lengths (ver 'a') or |cosines| (ver 'b')."""
    weight = np.prod(ln[groups], axis=1)
    if groups.shape[1] == 2:
        i, j = groups[:, 0], groups[:, 1]
        if ver == "b":
            return float(np.sum(np.abs(G[i, j])) / np.sum(weight))
        vol = G[i, i] * G[j, j] - G[i, j] ** 2
    else:
        vol = np.linalg.det(G[groups[:, :, None], groups[:, None, :]])
    return float(np.sum(np.sqrt(np.abs(vol))) / np.sum(weight))


# ------------------------------------------------------------------------------------------ CorrInt
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


MORE_METHODS: dict[str, type[IDEstimator]] = {
    "lpca": LPCA,
    "tle": TLE,
    "corrint": CorrInt,
    "danco": DANCo,
    "ess": ESS,
    "mom": MOM,
    "mind_ml": MiND_ML,
    "mada": MADA,
}

