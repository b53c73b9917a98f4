"""PCA-based intrinsic dimension, numerically equal to scikit-dimension 0.5's ``lPCA``: :class:`LPCA` (``lPCA``).

Global PCA by default (the dimension of the linear span); ``pointwise=True`` fits every kNN neighbourhood.
The signal-rank versions (MP, GD, KN, Minka, parallel, denoised, scRMT) are :mod:`ttlab.intrinsic_dim.pca_rank`'s.
Exported by :mod:`ttlab.intrinsic_dim`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.base import IDEstimator
from ttlab.intrinsic_dim.neighbors import Neighbors
from ttlab.intrinsic_dim.neighbourhoods import (
    FRACTION,
    NEIGHBOURHOOD_CONSTRAINTS,
    POSITIVE,
    SMALL_BLAS,
    batched_gram,
    blas_controller,
    chunk_size,
    combine_pointwise,
)
from ttlab.validation import Options, check_int, validate_params

__all__ = ["LPCA", "LPCA_VERSIONS", "check_spectrum", "lPCA", "lpca_from_spectrum", "pca_spectrum"]

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
    step = chunk_size(k, D)
    for a in range(0, n, step):
        nbh = X[idx[a : a + step]].astype(np.float64)
        C = nbh - nbh.mean(axis=1, keepdims=True)
        G = batched_gram(C, transpose_first=k >= D)
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
        "alpha_fo": FRACTION,
        "alpha_ratio": FRACTION,
        "p_fan": FRACTION,
        "beta_fan": FRACTION,
        "alpha_fan": POSITIVE,
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
            if X.size > SMALL_BLAS:
                return self._global(X)
            with blas_controller().limit(limits=1, user_api="blas"):
                return self._global(X)
        spectra = _local_spectra(X, nb.indices)  # type: ignore[union-attr]
        pw = np.array([self._rule(ev) for ev in spectra])
        return combine_pointwise(pw, self.average, f"lPCA ({self.ver}, pointwise)"), pw, {}

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

    def fit_spectrum(self, spectrum: Any, n_samples: int | None = None) -> "LPCA":
        """Estimate from a precomputed PCA spectrum instead of points (scikit-dimension's
        ``fit_explained_variance=True``): ``spectrum`` holds covariance-scale eigenvalues, descending (e.g.
        ``PCA().fit(X).explained_variance_``; for the signal-rank versions zero-padded to one per feature).
        MP, GD, KN, Minka and denoised need ``n_samples`` (the rows behind it, centred: ``n_eff = n_samples - 1``);
        parallel and scRMT need the data. Sets ``dimension_``, ``explained_variance_`` and the rule's diagnostics."""
        import ttlab.intrinsic_dim.pca_rank as pca_rank

        self._validate_common()
        if self.pointwise:
            raise TTLabInputError("lPCA.fit_spectrum reads one spectrum; use pointwise=False.")
        ev = check_spectrum(spectrum)
        extra: dict[str, Any] = {}
        if self.ver in ("parallel", "scRMT"):
            raise TTLabInputError(f"lPCA ver={self.ver!r} needs the data, not its spectrum.")
        if self.ver in pca_rank.RANK_VERSIONS:
            if n_samples is None:
                raise TTLabInputError(f"lPCA ver={self.ver!r} from a spectrum needs n_samples (the number of rows "
                                      "behind it).", params=("n_samples",))
            check_int(n_samples, "n_samples", 2)
            rank, extra = pca_rank.rank_from_spectrum(ev, self.ver, int(n_samples), noise_var=self.noise_var,
                                                      alpha_kn=self.alpha_kn)
            self.dimension_ = float(rank)
        else:
            self.dimension_ = self._rule(ev)
        self.explained_variance_ = ev
        self.pointwise_dimension_ = None
        for key, value in extra.items():
            setattr(self, key, value)
        return self

    def _needs(self) -> str:
        return f"lPCA ({'pointwise, ' + str(self.k) + ' neighbours' if self.pointwise else 'global'}) needs"


def check_spectrum(spectrum: Any) -> np.ndarray:
    """``spectrum`` as a float64 vector, or a :class:`TTLabInputError`: a PCA spectrum is one-dimensional, has at
    least 2 finite, non-negative eigenvalues, in descending order."""
    ev = np.asarray(spectrum, dtype=np.float64)
    if ev.ndim != 1 or len(ev) < 2:
        raise TTLabInputError(f"a PCA spectrum is a vector of at least 2 eigenvalues; got shape {ev.shape}.")
    if not np.isfinite(ev).all() or (ev < 0).any():
        raise TTLabInputError("a PCA spectrum's eigenvalues are finite and non-negative (clip rounding below 0).")
    if (np.diff(ev) > 0).any():
        raise TTLabInputError("a PCA spectrum is in descending order (sort it: np.sort(ev)[::-1]).")
    return ev


lPCA = LPCA  # scikit-dimension's spelling
