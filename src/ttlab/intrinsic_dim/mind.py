"""MiND_ML and DANCo, numerically equal to scikit-dimension 0.5's for the same settings: likelihood of the
ratio of first to (k+1)-th neighbour distances (Rozza et al. 2012), and DANCo's comparison of that estimate and
the von Mises statistics of neighbour angles with those of uniform balls (Ceruti et al. 2012).
Exported by :mod:`ttlab.intrinsic_dim`.
"""

from __future__ import annotations

import math
import sys
import threading
from numbers import Integral
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.base import IDEstimator
from ttlab.intrinsic_dim.knn import kneighbors_prepared
from ttlab.intrinsic_dim.neighbors import Neighbors
from ttlab.intrinsic_dim.neighbourhoods import batched_gram, blas_controller, chunk_size
from ttlab.validation import Interval, Options

__all__ = ["DANCo", "MiND_ML", "danco_stats", "exact_knn_low_dim", "hyperball", "mind_mli", "mind_mlk",
           "table_calibration"]


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



def mind_mlk(rhos: np.ndarray, D: int, k: int, dinit: float) -> float:
    """MiND_MLk: the likelihood maximised over real d in [0, D] (L-BFGS-B from ``dinit``). BLAS is held to
    one thread: L-BFGS-B's tiny BLAS calls were 45x slower with two OpenBLAS threads on a busy machine."""
    from scipy.optimize import minimize

    with blas_controller().limit(limits=1, user_api="blas"):
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
    step = chunk_size(k, X.shape[1])
    for a in range(0, n, step):
        Y = X[idx[a : a + step]].astype(np.float64) - X[a : a + step, None, :].astype(np.float64)
        G = batched_gram(Y)
        ln = np.sqrt(np.einsum("mij,mij->mi", Y, Y))
        cos = G[:, iu, ju] / (ln[:, iu] * ln[:, ju])
        th = np.arccos(np.clip(cos, -1.0, 1.0))
        s, c = np.sin(th), np.cos(th)
        nus[a : a + step] = np.arctan(s.sum(1) / c.sum(1))
        eta = np.sqrt(c.mean(1) ** 2 + s.mean(1) ** 2)
        taus[a : a + step] = _ainv(eta)
    return float(np.mean(nus)), float(np.mean(taus))


def danco_stats(X: np.ndarray, nb: Neighbors, D: int, k: int) -> dict[str, float]:
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


def exact_knn_low_dim(X: np.ndarray, k: int, backend: str, block_size: int, device: str | None) -> Neighbors:
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
    (no calibration); ``calibration_table`` (scikit-dimension's ``ver='DANCoFit'``: a mapping with
    ``cardinalities``, ``k`` and ``dhat``/``mu_nu``/``mu_tau`` of shape (dimensions, cardinalities), e.g. its shipped
    ``danco_fit_table.npz``) gives the calibration of dimensions 1..D by :func:`table_calibration` instead of drawing
    balls.
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
        "calibration_table": "no_validation",  # its k: _check_params; its range: table_calibration
    }

    def __init__(self, k: int = 10, D: int | None = None, fractal: bool = True, random_state: int = 0,
                 ver: str = "DANCo", calibration_data: dict | None = None, calibration_table: Any = None, *,
                 metric: str = "euclidean", batch_size: int | None = None, seed: int = 0, remainder: str = "drop",
                 backend: str = "auto", block_size: int = 2048, device: str | None = None) -> None:
        self._set_common(metric, batch_size, seed, remainder, backend, block_size, device)
        self.k = k
        self.D = D
        self.fractal = fractal
        self.random_state = random_state
        self.ver = ver
        self.calibration_data = calibration_data
        self.calibration_table = calibration_table

    def _check_params(self) -> None:
        cal = self.calibration_data
        if cal is not None and (not isinstance(cal, dict) or cal.get("k") != self.k):
            raise TTLabInputError(
                f"calibration_data must be a dict with k = {self.k} (DANCo's k), N, maxdim and calibration_data; "
                f"got {type(cal).__name__} with k = {cal.get('k') if isinstance(cal, dict) else None}."
            )
        table = self.calibration_table
        if table is not None and int(table["k"]) != self.k:
            raise TTLabInputError(f"DANCo's calibration table is for k={int(table['k'])}; got k={self.k}.",
                                  params=("k",))

    def _n_neighbors(self) -> int:
        return int(self.k) + 1

    def _min_points(self) -> int:
        return int(self.k) + 2

    def __getstate__(self) -> dict[str, Any]:
        """Pickle without the calibration lock (a lock cannot be pickled; a new one is made on demand)."""
        return {k: v for k, v in self.__dict__.items() if k != "_cal_lock"}

    def _calibration(self, N: int, D: int) -> list[dict[str, float]]:
        key = (N, D, int(self.k), int(self.random_state), id(self.calibration_data), id(self.calibration_table))
        with self.__dict__.setdefault("_cal_lock", threading.Lock()):  # batches run in threads: calibrate once
            return self._calibration_locked(key)

    def _calibration_locked(self, key: tuple[int, ...]) -> list[dict[str, float]]:
        N, D = key[0], key[1]
        cache = getattr(self, "_cal_cache", {})
        if key not in cache:
            rs = np.random.RandomState(int(self.random_state))
            cal = list(_given_calibration(self.calibration_data, N))[:D]
            if self.calibration_table is not None and len(cal) < D:
                cal += table_calibration(self.calibration_table, N, int(self.k), D)["calibration_data"][len(cal):]
            for d in range(len(cal) + 1, D + 1):
                ball = hyperball(N, d, rs)
                nb = exact_knn_low_dim(ball, int(self.k) + 1, self.backend, self.block_size, self.device)
                cal.append(danco_stats(ball, nb, 2 * d + 5, int(self.k)))
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
        nocal = danco_stats(X, nb, D, k)  # type: ignore[arg-type]
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


def table_calibration(table: Any, N: int, k: int, D: int) -> dict[str, Any]:
    """scikit-dimension's ``DANCoFit`` calibration: the statistics (``dhat``, ``mu_nu``, ``mu_tau``) of uniform balls of
    dimension 1..``D`` for ``N`` points, PCHIP-interpolated in N from ``table`` (rows: dimensions 1, 2, ...; columns:
    ``table['cardinalities']``; one ``table['k']``), as the dict ``DANCo(calibration_data=...)`` takes."""
    from scipy.interpolate import PchipInterpolator

    card = np.asarray(table["cardinalities"])
    if k != int(table["k"]):
        raise TTLabInputError(f"DANCo's calibration table is for k={int(table['k'])}; got k={k}.", params=("k",))
    if not card[0] <= N <= card[-1]:
        raise TTLabInputError(f"DANCo's calibration table covers {card[0]} <= n_samples <= {card[-1]} (distinct points "
                              f"per batch); got {N}.")
    n_dims = len(table["dhat"])
    if D > n_dims:
        raise TTLabInputError(f"DANCo's calibration table covers D <= {n_dims}; got D={D}.", params=("D",))
    stats = {key: PchipInterpolator(card, np.asarray(table[key])[:D], axis=1)(N) for key in ("dhat", "mu_nu", "mu_tau")}
    return dict(k=k, N=N, maxdim=D,
                calibration_data=[{key: float(v[d]) for key, v in stats.items()} for d in range(D)])
