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

Estimators: :class:`LPCA` (``lPCA``; global PCA by default, ``pointwise=True`` fits every kNN
neighbourhood), :class:`TLE`, :class:`CorrInt`, :class:`DANCo`, :class:`ESS`, :class:`MOM`,
:class:`MiND_ML` and :class:`MADA`.

Imports: numpy, ttlab.errors, ttlab.validation, ttlab.intrinsic_dim (estimators, knn); lazily scipy and
torch; never ttlab.cli.
"""

from __future__ import annotations

import bisect
import itertools
import math
import sys
import threading
import warnings
from functools import lru_cache
from numbers import Integral, Real
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.estimators import AVERAGES, DegeneratePointsWarning, IDEstimator
from ttlab.intrinsic_dim.knn import Neighbors, kneighbors_prepared
from ttlab.validation import Interval, Options, check_int, validate_params

_CHUNK = 256  # points per vectorised neighbourhood block (at least)
_CHUNK_ELEMS = 2**22  # ... and up to this many neighbour coordinates per block (32 MiB in float64)
#: ESS's blocks stay below this many bytes (unbounded, k = 100 pairs in 2-D took 4.1 GB on a 9.6 MB input)
_ESS_BLOCK_BYTES = 2**27


def _chunk(k: int, D: int) -> int:
    """Points per block: few large batched products (each call has a fixed cost) in bounded memory."""
    return max(_CHUNK, _CHUNK_ELEMS // max(1, k * D))


def _bgram(A: np.ndarray, transpose_first: bool = False) -> np.ndarray:
    """Batched Gram matrices ``A @ A^T`` (or ``A^T @ A``) in float64 via torch (numpy's stacked
    matmul is tens of times slower)."""
    import torch

    t = torch.from_numpy(np.ascontiguousarray(A, dtype=np.float64))
    if transpose_first:
        return torch.bmm(t.transpose(1, 2), t).numpy()
    return torch.bmm(t, t.transpose(1, 2)).numpy()


def _combine_pw(pw: np.ndarray, average: str, what: str) -> float:
    """Mean / median / harmonic mean of the finite pointwise values (warns about the others)."""
    finite = pw[np.isfinite(pw)]
    if len(finite) < len(pw):
        warnings.warn(
            f"{what}: {len(pw) - len(finite)} point(s) have an undefined pointwise estimate; "
            "they are left out of the average.",
            DegeneratePointsWarning,
            stacklevel=5,
        )
    if not len(finite):
        raise TTLabInputError(f"{what}: every pointwise estimate is undefined (degenerate neighbourhoods).")
    if average == "mean":
        return float(np.mean(finite))
    if average == "median":
        return float(np.median(finite))
    return float(1.0 / np.mean(1.0 / finite))


_POSITIVE = [Interval(Real, 0, None, closed="neither")]
_FRACTION = [Interval(Real, 0, 1, closed="neither")]
NEIGHBOURHOOD_CONSTRAINTS: dict[str, Any] = {
    "k": [Interval(Integral, 2, None, closed="left")],
    "average": [Options(AVERAGES)],
}
"""Constraints of the estimators that combine pointwise estimates over ``k``-neighbourhoods."""


# ---------------------------------------------------------------------------------------------- lPCA
LPCA_VERSIONS = ("FO", "Fan", "maxgap", "ratio", "participation_ratio", "Kaiser", "broken_stick", "MP", "GD", "KN",
                 "Minka", "parallel", "denoised", "scRMT")
"""scikit-dimension 0.5's lPCA versions (the last nine in :mod:`ttlab.intrinsic_dim.pca_rank`)."""


def pca_spectrum(X: np.ndarray) -> np.ndarray:
    """Eigenvalues of the sample covariance (``n - 1`` denominator), descending, ``min(n, D)`` of them
    (scikit-learn's ``PCA().explained_variance_``)."""
    n, D = X.shape
    C = X - X.mean(axis=0)
    if n >= D:
        ev = np.linalg.eigvalsh(C.T @ C)
    else:
        ev = np.linalg.eigvalsh(C @ C.T)
    ev = np.clip(ev[::-1][: min(n, D)], 0.0, None)
    return ev / (n - 1)


def _local_spectra(X: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """PCA spectra of every kNN neighbourhood ``X[idx[i]]`` (the point itself excluded, as
    scikit-dimension's ``fit_pw``), shape (n, min(k, D))."""
    n, k = idx.shape
    D = X.shape[1]
    out = np.empty((n, min(k, D)))
    step = _chunk(k, D)
    for a in range(0, n, step):
        nbh = X[idx[a : a + step]].astype(np.float64)
        C = nbh - nbh.mean(axis=1, keepdims=True)
        G = _bgram(C, transpose_first=k >= D)
        ev = np.linalg.eigvalsh(G)[:, ::-1][:, : min(k, D)]
        out[a : a + step] = np.clip(ev, 0.0, None) / (k - 1)
    return out


def lpca_from_spectrum(ev: np.ndarray, ver: str = "FO", *, alpha_fo: float = 0.05, alpha_fan: float = 10,
                       beta_fan: float = 0.8, p_fan: float = 0.95, alpha_ratio: float = 0.05) -> float:
    """scikit-dimension's lPCA rules applied to a descending eigenvalue spectrum ``ev``."""
    ev = np.asarray(ev, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        if ver == "FO":
            return float(np.sum(ev > alpha_fo * ev[0]))
        if ver == "maxgap":
            gaps = ev[:-1] / ev[1:]
            if np.all(np.isnan(gaps)):
                return math.nan
            return float(np.nanargmax(gaps) + 1)
        if ver == "ratio":
            cs = np.cumsum(ev)
            return float(np.sum(cs / np.max(cs) < alpha_ratio) + 1)
        if ver == "participation_ratio":
            return float(np.sum(ev) ** 2 / np.sum(ev**2))
        if ver in ("Kaiser", "broken_stick"):
            import ttlab.intrinsic_dim.pca_rank as pca_rank

            return pca_rank.kaiser(ev) if ver == "Kaiser" else pca_rank.broken_stick(ev)
        # Fan et al.
        r = np.flatnonzero(np.cumsum(ev) / np.sum(ev) > p_fan)[0]
        e = ev - np.mean(ev[r:])
        gaps = e[:-1] / e[1:]
        cand = np.concatenate((np.flatnonzero(gaps > alpha_fan), np.flatnonzero(np.cumsum(e) / np.sum(e) > beta_fan)))
        return float(1 + np.min(cand))


class LPCA(IDEstimator):
    """PCA-based intrinsic dimension (scikit-dimension's ``lPCA``), versions FO (Fukunaga–Olsen:
    eigenvalues above ``alpha_fo`` × the largest), Fan, maxgap, ratio and participation_ratio.

    ``pointwise=False`` (scikit-dimension's ``fit``): one PCA of all points (per batch). This
    measures the dimension of the *linear span*, not of a curved manifold.
    ``pointwise=True`` (its ``fit_pw(n_neighbors=k)``): PCA of each point's ``k`` nearest
    neighbours (the point excluded, default 100), combined by ``average`` (scikit-dimension
    leaves the combination to the caller; ttlab uses the mean by default).
    Eigenvalues are those of the sample covariance (``n − 1``), like ``PCA().explained_variance_``;
    values below zero from rounding are set to zero. ``center=False``: eigenvalues of ``XᵀX``.
    Kaiser and broken_stick are spectrum rules too; MP, GD, KN, Minka, parallel, denoised and scRMT
    estimate the rank of a linear signal in iid noise (global only; options ``noise_var``, ``alpha_kn``,
    ``n_permutations``, ``quantile``, ``null``, ``random_state``: :mod:`ttlab.intrinsic_dim.pca_rank`).
    """

    name = "lpca"
    _parameter_constraints: dict[str, Any] = {
        **IDEstimator._parameter_constraints,
        "ver": [Options(LPCA_VERSIONS)],
        "alpha_fo": _FRACTION,
        "alpha_ratio": _FRACTION,
        "p_fan": _FRACTION,
        "beta_fan": _FRACTION,
        "alpha_fan": _POSITIVE,
        "pointwise": "no_validation",
        "k": "no_validation",  # >= 2 when pointwise (_check_params)
        "average": "no_validation",  # checked when pointwise
        "center": "no_validation",
        # the signal-rank versions' options: checked for those versions (pca_rank.check_rank_options)
        "noise_var": "no_validation",
        "alpha_kn": "no_validation",
        "n_permutations": "no_validation",
        "quantile": "no_validation",
        "null": "no_validation",
        "random_state": "no_validation",
    }

    def __init__(
        self,
        ver: str = "FO",
        alpha_fo: float = 0.05,
        alpha_fan: float = 10,
        beta_fan: float = 0.8,
        p_fan: float = 0.95,
        alpha_ratio: float = 0.05,
        pointwise: bool = False,
        k: int = 100,
        average: str = "mean",
        center: bool = True,
        noise_var: Any = None,
        alpha_kn: float = 0.05,
        n_permutations: int = 100,
        quantile: float = 0.95,
        null: str = "permute",
        random_state: int = 0,
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
        self.ver = ver
        self.alpha_fo = alpha_fo
        self.alpha_fan = alpha_fan
        self.beta_fan = beta_fan
        self.p_fan = p_fan
        self.alpha_ratio = alpha_ratio
        self.pointwise = pointwise
        self.k = k
        self.average = average
        self.center = center
        self.noise_var = noise_var
        self.alpha_kn = alpha_kn
        self.n_permutations = n_permutations
        self.quantile = quantile
        self.null = null
        self.random_state = random_state

    def _check_params(self) -> None:
        import ttlab.intrinsic_dim.pca_rank as pca_rank

        if self.ver in pca_rank.RANK_VERSIONS:
            if self.pointwise:
                raise TTLabInputError(f"lPCA ver={self.ver!r} estimates a global signal rank; use pointwise=False.")
            pca_rank.check_rank_options(self.ver, self.noise_var, self.alpha_kn, self.null, self.quantile,
                                        self.n_permutations)
            check_int(self.random_state, "random_state", 0)
        if self.pointwise:
            validate_params(self.get_params(deep=False), NEIGHBOURHOOD_CONSTRAINTS)

    def _n_neighbors(self) -> int:
        return int(self.k) if self.pointwise else 0

    def _min_points(self) -> int:
        return int(self.k) + 1 if self.pointwise else 2

    def _rule(self, ev: np.ndarray) -> float:
        return lpca_from_spectrum(ev, self.ver, alpha_fo=self.alpha_fo, alpha_fan=self.alpha_fan, beta_fan=self.beta_fan,
                                  p_fan=self.p_fan, alpha_ratio=self.alpha_ratio)

    def _from_neighbors(self, X: np.ndarray, nb: Neighbors | None) -> tuple[float, np.ndarray | None, dict[str, Any]]:
        if not self.pointwise:
            if X.size > _SMALL_BLAS:
                return self._global(X)
            with _blas_controller().limit(limits=1, user_api="blas"):
                return self._global(X)
        spectra = _local_spectra(X, nb.indices)  # type: ignore[union-attr]
        pw = np.array([self._rule(ev) for ev in spectra])
        return _combine_pw(pw, self.average, f"lPCA ({self.ver}, pointwise)"), pw, {}

    def _global(self, X: np.ndarray) -> tuple[float, np.ndarray | None, dict[str, Any]]:
        """One PCA of all the points (and the signal-rank rules)."""
        import ttlab.intrinsic_dim.pca_rank as pca_rank

        X64 = X.astype(np.float64, copy=False)
        if self.ver in pca_rank.RANK_VERSIONS or not self.center:  # SVD spectrum, as scikit-dimension's
            C = X64 - X64.mean(axis=0) if self.center else X64
            ev = np.linalg.svd(C, compute_uv=False) ** 2 / (len(X64) - 1 if self.center else 1)
        else:
            ev = pca_spectrum(X64)
        if self.ver not in pca_rank.RANK_VERSIONS:
            return self._rule(ev), None, {"explained_variance_": ev}
        rank, extra = pca_rank.signal_rank(
            X64, ev, self.ver, center=bool(self.center), noise_var=self.noise_var, alpha_kn=self.alpha_kn,
            n_permutations=int(self.n_permutations), quantile=self.quantile, null=self.null,
            random_state=self.random_state)
        return float(rank), None, {"explained_variance_": ev, **extra}

    def _needs(self) -> str:
        return f"lPCA ({'pointwise, ' + str(self.k) + ' neighbours' if self.pointwise else 'global'}) needs"


lPCA = LPCA  # scikit-dimension's spelling


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
        return _combine_pw(pw, self.average, self.label), pw, {}


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
    _parameter_constraints: dict[str, Any] = {**_LocalKNN._parameter_constraints, "epsilon": _POSITIVE}

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
        for a in range(0, n, _chunk(K, X.shape[1])):
            idx = nb.indices[a : a + _chunk(K, X.shape[1])]
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
    G = _bgram(Y)
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


# ------------------------------------------------------------------------------- MiND_ML and DANCo
def _mind_lld(d: float, rhos: np.ndarray, N: int, k: int) -> float:
    if d == 0:
        return -1e30
    return float(N * np.log(k * d) + (d - 1) * np.sum(np.log(rhos)) + (k - 1) * np.sum(np.log(1 - rhos**d)))


def _mind_nlld(d: np.ndarray, rhos: np.ndarray, N: int, k: int) -> float:
    return -_mind_lld(float(np.asarray(d).ravel()[0]), rhos, N, k)


def _mind_nlld_gr(d: np.ndarray, rhos: np.ndarray, N: int, k: int) -> np.ndarray:
    dv = float(np.asarray(d).ravel()[0])
    if dv == 0:
        return np.array([-1e30])
    rd = rhos**dv
    lr = np.log(rhos)
    return np.array([-(N / dv + np.sum(lr - (k - 1) * rd * lr / (1 - rd)))])


def mind_mli(rhos: np.ndarray, D: int, k: int) -> int:
    """MiND_MLi: the integer d in 1..D maximising the likelihood of ``rhos = r_1 / r_{k+1}``."""
    N = len(rhos)
    d = np.arange(1, D + 1, dtype=np.float64)
    lld = N * np.log(k * d) + (d - 1) * np.sum(np.log(rhos)) + (k - 1) * np.log1p(-(rhos[:, None] ** d)).sum(axis=0)
    return int(np.argmax(lld) + 1)


_SMALL_BLAS = 2**20
"""Below this many entries, global PCA runs its BLAS on one thread (small SVDs and many tiny calls are
10–100x slower with two OpenBLAS threads on a busy machine; measured on lPCA 'KN', 300 x 64)."""


@lru_cache(maxsize=1)
def _blas_controller() -> Any:
    """threadpoolctl's controller, built once (building it scans the loaded libraries: ~10 ms)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def mind_mlk(rhos: np.ndarray, D: int, k: int, dinit: float) -> float:
    """MiND_MLk: the likelihood maximised over real d in [0, D] (L-BFGS-B from ``dinit``). BLAS is held to
    one thread: L-BFGS-B's tiny BLAS calls were 45x slower with two OpenBLAS threads on a busy machine."""
    from scipy.optimize import minimize

    with _blas_controller().limit(limits=1, user_api="blas"):
        res = minimize(fun=_mind_nlld, x0=np.array([dinit]), jac=_mind_nlld_gr, args=(rhos, len(rhos), k),
                       method="L-BFGS-B", bounds=[(0, D)])
    return float(res["x"][0])


class MiND_ML(IDEstimator):
    """MiND_MLk / MiND_MLi (Rozza et al. 2012), scikit-dimension's ``MiND_ML``: likelihood of
    ``r_1 / r_{k+1}`` with ``k = 20``, maximised over d in [0, ``D``]. scikit-dimension's default
    ``D = 10`` caps the estimate at 10 (kept here for equality; raise ``D`` for data of higher ID —
    ``ttlab id compare`` uses ``D`` = the number of features)."""

    name = "mind_ml"
    distance_only = True
    _parameter_constraints: dict[str, Any] = {
        **IDEstimator._parameter_constraints,
        "k": [Interval(Integral, 1, None, closed="left")],
        "D": [Interval(Integral, 1, None, closed="left")],
        "ver": [Options(("MLk", "MLi"))],
    }

    def __init__(self, k: int = 20, D: int = 10, ver: str = "MLk", *, metric: str = "euclidean",
                 batch_size: int | None = None, seed: int = 0, remainder: str = "drop", backend: str = "auto",
                 block_size: int = 2048, device: str | None = None) -> None:
        self._set_common(metric, batch_size, seed, remainder, backend, block_size, device)
        self.k = k
        self.D = D
        self.ver = ver

    def _n_neighbors(self) -> int:
        return int(self.k) + 1

    def _from_neighbors(self, X: np.ndarray, nb: Neighbors | None) -> tuple[float, np.ndarray | None, dict[str, Any]]:
        d = nb.distances  # type: ignore[union-attr]
        rhos = d[:, 0] / d[:, -1]
        k, D = int(self.k), int(self.D)
        dmli = mind_mli(rhos, D, k)
        if self.ver == "MLi":
            return float(dmli), None, {}
        return mind_mlk(rhos, D, k, dmli), None, {}


def _ainv(eta: np.ndarray) -> np.ndarray:
    """Approximate inverse of A(tau) = I1(tau) / I0(tau) (Best & Fisher), elementwise."""
    with np.errstate(divide="ignore", invalid="ignore"):  # eta = 1 (d = 1): tau = inf, unused
        return np.where(eta < 0.53, 2 * eta + eta**3 + 5 * (eta**5) / 6,
                        np.where(eta < 0.85, -0.4 + 1.39 * eta + 0.43 / (1 - eta),
                                 1 / ((eta**3) - 4 * (eta**2) + 3 * eta)))


def _angle_stats(X: np.ndarray, idx: np.ndarray) -> tuple[float, float]:
    """Mean von Mises location and concentration of the angles between each point's k neighbours."""
    n, k = idx.shape
    iu, ju = np.triu_indices(k, 1)
    nus, taus = np.empty(n), np.empty(n)
    step = _chunk(k, X.shape[1])
    for a in range(0, n, step):
        Y = X[idx[a : a + step]].astype(np.float64) - X[a : a + step, None, :].astype(np.float64)
        G = _bgram(Y)
        ln = np.sqrt(np.einsum("mij,mij->mi", Y, Y))
        cos = G[:, iu, ju] / (ln[:, iu] * ln[:, ju])
        th = np.arccos(np.clip(cos, -1.0, 1.0))
        s, c = np.sin(th), np.cos(th)
        nus[a : a + step] = np.arctan(s.sum(1) / c.sum(1))
        eta = np.sqrt(c.mean(1) ** 2 + s.mean(1) ** 2)
        taus[a : a + step] = _ainv(eta)
    return float(np.mean(nus)), float(np.mean(taus))


def _danco_stats(X: np.ndarray, nb: Neighbors, D: int, k: int) -> dict[str, float]:
    """DANCo's statistics of one data set: MiND_MLk estimate and the angle concentration."""
    d = nb.distances
    rhos = d[:, 0] / d[:, k]
    dmli = mind_mli(rhos, D, k)
    dhat = mind_mlk(rhos, D, k, dmli)
    mu_nu, mu_tau = _angle_stats(X, nb.indices[:, :k])
    if X.shape[1] == 1:
        mu_tau = 1.0
    return {"dhat": dhat, "mu_nu": mu_nu, "mu_tau": mu_tau}


def hyperball(n: int, d: int, rs: np.random.RandomState) -> np.ndarray:
    """Uniform sample of the unit d-ball (scikit-dimension's ``datasets.hyperBall`` draws)."""
    from scipy.special import gammainc

    x = rs.normal(size=(n, d))
    ssq = np.sum(x**2, axis=1)
    fr = gammainc(d / 2, ssq / 2) ** (1 / d) / np.sqrt(ssq)
    return x * fr[:, None]


def _exact_knn_low_dim(X: np.ndarray, k: int, backend: str, block_size: int, device: str | None) -> Neighbors:
    """Exact kNN: a k-d tree (float64 distances) in low dimensions, the blocked search otherwise."""
    if X.shape[1] <= 16:
        from scipy.spatial import cKDTree

        dist, idx = cKDTree(X).query(X, k=k + 1, workers=-1)
        return Neighbors(dist[:, 1:], idx[:, 1:].astype(np.int64), "kdtree")
    return kneighbors_prepared(X, k, backend=backend, block_size=block_size, device=device)


class DANCo(IDEstimator):
    """DANCo (Ceruti et al. 2012), scikit-dimension's ``DANCo``: compares the MiND_MLk estimate and
    the von Mises statistics of neighbour angles (``k = 10``) with those of uniform balls of
    dimension 1..``D`` (``D`` defaults to the number of features), minimising a KL divergence;
    ``fractal=True`` refines the minimiser on a cubic interpolation.

    The calibration balls are drawn with NumPy's ``RandomState(random_state)`` exactly as
    scikit-dimension does, so with the same integer ``random_state`` the numbers agree. ttlab's
    default is ``random_state=0`` (scikit-dimension: unseeded). The calibration for a given batch
    size is computed once per fit and reused for every batch (``calibration_`` stores it).
    Cost grows with ``D`` (one kNN search per calibration dimension).

    scikit-dimension's options: ``calibration_data`` (its dict ``{k, N, maxdim, calibration_data: [{dhat,
    mu_nu, mu_tau}, ...]}``, e.g. R's) replaces the drawn calibration of dimensions 1..maxdim (the rest
    is drawn); ``ver='MIND_MLk'`` / ``'MIND_MLi'`` return the MiND estimate with DANCo's ``k`` and ``D``
    (no calibration).
    """

    name = "danco"
    _parameter_constraints: dict[str, Any] = {
        **IDEstimator._parameter_constraints,
        "k": [Interval(Integral, 2, None, closed="left")],
        "D": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": [Interval(Integral, 0, None, closed="left")],
        "ver": [Options(("DANCo", "MIND_MLk", "MIND_MLi"))],
        "fractal": "no_validation",
        "calibration_data": "no_validation",  # its structure: _check_params
    }

    def __init__(self, k: int = 10, D: int | None = None, fractal: bool = True, random_state: int = 0,
                 ver: str = "DANCo", calibration_data: dict | None = None, *,
                 metric: str = "euclidean", batch_size: int | None = None, seed: int = 0, remainder: str = "drop",
                 backend: str = "auto", block_size: int = 2048, device: str | None = None) -> None:
        self._set_common(metric, batch_size, seed, remainder, backend, block_size, device)
        self.k = k
        self.D = D
        self.fractal = fractal
        self.random_state = random_state
        self.ver = ver
        self.calibration_data = calibration_data

    def _check_params(self) -> None:
        cal = self.calibration_data
        if cal is not None and (not isinstance(cal, dict) or cal.get("k") != self.k):
            raise TTLabInputError(
                f"calibration_data must be a dict with k = {self.k} (DANCo's k), N, maxdim and calibration_data; "
                f"got {type(cal).__name__} with k = {cal.get('k') if isinstance(cal, dict) else None}."
            )

    def _n_neighbors(self) -> int:
        return int(self.k) + 1

    def _min_points(self) -> int:
        return int(self.k) + 2

    def __getstate__(self) -> dict[str, Any]:
        """Pickle without the calibration lock (a lock cannot be pickled; a new one is made on demand)."""
        return {k: v for k, v in self.__dict__.items() if k != "_cal_lock"}

    def _calibration(self, N: int, D: int) -> list[dict[str, float]]:
        key = (N, D, int(self.k), int(self.random_state), id(self.calibration_data))
        with self.__dict__.setdefault("_cal_lock", threading.Lock()):  # batches run in threads: calibrate once
            return self._calibration_locked(key)

    def _calibration_locked(self, key: tuple[int, ...]) -> list[dict[str, float]]:
        N, D = key[0], key[1]
        cache = getattr(self, "_cal_cache", {})
        if key not in cache:
            rs = np.random.RandomState(int(self.random_state))
            cal = list(_given_calibration(self.calibration_data, N))[:D]
            for d in range(len(cal) + 1, D + 1):
                ball = hyperball(N, d, rs)
                nb = _exact_knn_low_dim(ball, int(self.k) + 1, self.backend, self.block_size, self.device)
                cal.append(_danco_stats(ball, nb, 2 * d + 5, int(self.k)))
            cache = {key: cal}  # one batch size at a time
            self._cal_cache = cache
        return cache[key]

    def _kl(self, nocal: dict[str, float], cal: dict[str, float]) -> float:
        from scipy.special import digamma, i0, i1

        k = int(self.k)
        H_k = np.sum(1 / np.arange(1, k + 1))
        quo = cal["dhat"] / nocal["dhat"]
        a = (np.power(-1, np.arange(k + 1)) * np.array([math.comb(k, i) for i in range(k + 1)])
             * digamma(1 + np.arange(k + 1) / quo))
        kld = H_k * quo - np.log(quo) - (k - 1) * np.sum(a)
        big = sys.float_info.max
        t1, t2 = nocal["mu_tau"], cal["mu_tau"]
        klnt = (np.log(min(big, i0(t2)) / min(big, i0(t1)))
                + min(big, i1(t1)) / min(big, i0(t1)) * (t1 - t2 * np.cos(nocal["mu_nu"] - cal["mu_nu"])))
        return float(kld + klnt)

    def _from_neighbors(self, X: np.ndarray, nb: Neighbors | None) -> tuple[float, np.ndarray | None, dict[str, Any]]:
        from scipy.interpolate import interp1d
        from scipy.optimize import minimize

        D = X.shape[1] if self.D is None else int(self.D)
        k = int(self.k)
        if self.ver != "DANCo":  # MiND_MLi / MiND_MLk with DANCo's k and D
            rhos = nb.distances[:, 0] / nb.distances[:, k]  # type: ignore[union-attr]
            dmli = mind_mli(rhos, D, k)
            return (float(dmli) if self.ver == "MIND_MLi" else mind_mlk(rhos, D, k, dmli)), None, {}
        nocal = _danco_stats(X, nb, D, k)  # type: ignore[arg-type]
        if any(np.isnan(v) for v in nocal.values()):
            return math.nan, None, {}
        cal = self._calibration(len(X), D)
        kl = np.array([self._kl(nocal, c) for c in cal])
        de = int(np.argmin(kl)) + 1
        extra = {"kl_divergence_": float(kl[de - 1])}
        if not self.fractal:
            return float(de), None, extra
        nf = min(X.shape[1], D)  # scikit-dimension uses the number of features (and fails when D < 4)
        if nf < 2:
            return float(de), None, extra
        kind = "cubic" if nf > 3 else "quadratic" if nf == 3 else "linear"
        f = interp1d(np.arange(1, D + 1), kl, kind=kind, bounds_error=False, fill_value=(1, D + 1))
        x = minimize(f, de, bounds=[(1, D + 1)], tol=1e-3)["x"]
        return float(x[0]), None, extra


def _given_calibration(cal: dict | None, N: int) -> list[dict[str, float]]:
    """The statistics of a scikit-dimension-style calibration dict, checked against the batch size ``N``."""
    if cal is None:
        return []
    if cal.get("N") != N:
        raise TTLabInputError(
            f"calibration_data was computed for N = {cal.get('N')} points; this fit has {N} (per batch). "
            "Calibrate for this size, or leave calibration_data=None."
        )
    return [{key: float(c[key]) for key in ("dhat", "mu_nu", "mu_tau")} for c in cal["calibration_data"]]


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
        step = max(1, min(_chunk(K, X.shape[1]), _ESS_BLOCK_BYTES // per_point))
        for a in range(0, n, step):
            nbh = X[nb.indices[a : a + step]].astype(np.float64)
            V = nbh - nbh.mean(axis=1, keepdims=True)
            G = _bgram(V)
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
                groups = all_groups if all_groups is not None else _sample_combinations(K, p, ncomb, rng)
                essval[a + j] = _ess_value(G[j], ln[j], groups, self.ver)
        return np.array([ess_dimension(float(e), self.ver, int(self.d)) for e in essval])


def _sample_combinations(K: int, p: int, ncomb: int, rng: np.random.Generator) -> np.ndarray:
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


def _ess_value(G: np.ndarray, ln: np.ndarray, groups: np.ndarray, ver: str) -> float:
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
