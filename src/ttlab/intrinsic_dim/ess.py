"""Expected simplex skewness (Johnsson et al. 2015): :class:`ESS`, numerically equal to scikit-dimension 0.5's; the
ESS value of a neighbourhood (:func:`ess_value`), its inversion through the uniform-ball reference
(:func:`ess_dimension`) and scikit-dimension's sample of simplices (:func:`sample_combinations`).
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
from ttlab.intrinsic_dim.base import DegeneratePointsWarning
from ttlab.intrinsic_dim.local import LocalKNN
from ttlab.intrinsic_dim.neighbors import Neighbors
from ttlab.intrinsic_dim.neighbourhoods import batched_gram, chunk_size
from ttlab.validation import Interval, Options

#: ESS's blocks stay below this many bytes (unbounded, k = 100 pairs in 2-D took 4.1 GB on a 9.6 MB input)
_ESS_BLOCK_BYTES = 2**27


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


class ESS(LocalKNN):
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
        **LocalKNN._parameter_constraints,
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
