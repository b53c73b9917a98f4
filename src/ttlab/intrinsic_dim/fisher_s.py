"""Fisher separability dimension (Albergante, Bac & Zinovyev 2019), scikit-dimension's ``FisherS``.

The points are centred, reduced to the principal components whose variance exceeds the largest over
``conditional_number``, whitened and projected on the unit sphere. A point ``x`` is *Fisher-separable*
from ``y`` at margin ``α`` when ``⟨x, y⟩ < α ⟨x, x⟩``. For each ``α`` (default 0.60, 0.62, ..., 0.98)
``p_alpha_[j, i]`` is the fraction of the other points from which point ``i`` is not separable; on a
uniform ``n``-sphere its mean is ``(1 − α²)^{(n−1)/2} / (α √(2π n))``, and inverting that (Lambert W)
gives the effective dimension ``n_alpha_`` per ``α``. The estimate is ``n_alpha_`` at the ``α`` nearest
0.9 × the largest ``α`` at which some point is still inseparable (the largest if several tie).
Equal to scikit-dimension / the original MATLAB code (tested on its reference data).

After whitening, the projected points are the rows of the left singular vectors ``U[:, kept]``
normalised to unit length, so no covariance matrix is formed.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.base import IDEstimator
from ttlab.intrinsic_dim.neighbors import Neighbors

DEFAULT_ALPHAS = np.arange(0.6, 1, 0.02)
"""scikit-dimension's margins 0.60, 0.62, ..., 0.98."""


def fisher_preprocess(X: np.ndarray, conditional_number: float = 10, project_on_sphere: bool = True) -> np.ndarray:
    """Centre, keep the principal components with variance > largest / ``conditional_number``, whiten,
    and (by default) scale every row to unit length."""
    C = X.astype(np.float64) - X.astype(np.float64).mean(axis=0)
    U, S, _ = np.linalg.svd(C, full_matrices=False)
    ev = S**2
    kept = np.flatnonzero(ev / ev[0] > 1 / conditional_number)
    Z = U[:, kept] * math.sqrt(len(C) - 1)  # whitened: unit sample variance per component
    if project_on_sphere:
        Z = Z / np.sqrt(np.einsum("ij,ij->i", Z, Z))[:, None]
    return Z


def inseparability(Z: np.ndarray, alphas: np.ndarray, chunk: int = 2000) -> np.ndarray:
    """``p[j, i]``: fraction of the other ``n − 1`` points ``y`` with ``⟨z_i, y⟩ / ⟨z_i, z_i⟩ >= alphas[j]``."""
    n = len(Z)
    sq = np.einsum("ij,ij->i", Z, Z)
    p = np.empty((len(alphas), n))
    for a in range(0, n, chunk):
        R = (Z[a : a + chunk] @ Z.T) / sq[a : a + chunk, None]
        R[np.arange(len(R)), np.arange(a, a + len(R))] = -np.inf  # a point is not compared with itself
        R.sort(axis=1)
        below = np.stack([np.searchsorted(row, alphas, side="left") for row in R], axis=1)
        p[:, a : a + chunk] = (n - below) / (n - 1)
    return p


def sphere_dimension_of(py: np.ndarray, alphas: np.ndarray | float) -> np.ndarray:
    """The dimension ``n`` of the uniform sphere on which a point is inseparable at margin ``alphas`` with probability
    ``py`` (the Lambert-W inversion of ``(1 − α²)^{(n−1)/2} / (α √(2π n))``; elementwise, NaN where ``py`` is 0)."""
    from scipy.special import lambertw

    py = np.asarray(py, dtype=np.float64)
    a2 = np.asarray(alphas, dtype=np.float64) ** 2
    w = np.log(1 - a2)
    with np.errstate(divide="ignore", invalid="ignore"):
        n = np.real(lambertw(-(w / (2 * np.pi * py * py * a2 * (1 - a2))))) / (-w)
    return np.where((py == 0) | np.isinf(n), np.nan, n)


def sphere_dimension(py: np.ndarray, alphas: np.ndarray) -> tuple[np.ndarray, float]:
    """Effective dimension per margin from the mean inseparability ``py`` (NaN where every point is
    separable), and the single estimate (see the module docstring)."""
    n = sphere_dimension_of(py, alphas)
    ok = np.flatnonzero(~np.isnan(n))
    if not len(ok):
        warnings.warn("FisherS: every point is separable at every margin; no estimate.", UserWarning, stacklevel=3)
        return n, math.nan
    ref = 0.9 * alphas[ok].max()
    k = np.flatnonzero(np.abs(alphas[ok] - ref) == np.min(np.abs(alphas - ref)))
    return n, float(np.max(n[ok[k]])) if len(k) else math.nan


def pointwise_dimensions(p_alpha: np.ndarray, alphas: np.ndarray, index: int,
                         force_definite_dim: bool = True) -> np.ndarray:
    """Each point's dimension at margin ``alphas[index]``: :func:`sphere_dimension_of` of its own inseparable fraction
    ``p_alpha[index]`` (scikit-dimension's ``point_inseparability_to_pointID``). With ``force_definite_dim`` a point
    separable from every other (fraction 0, dimension undefined) is given the fraction ``1 / n`` instead, as
    scikit-dimension does (the largest dimension the sample can show); else its dimension is NaN."""
    py = np.array(p_alpha[index], dtype=np.float64)
    if force_definite_dim:
        py[py == 0] = 1 / len(py)
    return sphere_dimension_of(py, float(alphas[index]))


def separability_graph(Z: np.ndarray, alpha: float, top_edges: int = 10000,
                       chunk: int = 2000) -> tuple[list[tuple[int, int]], np.ndarray]:
    """The inseparability graph of the preprocessed points ``Z`` (:func:`fisher_preprocess`) at margin ``alpha``: an
    edge ``(i, j)`` where ``⟨z_i, z_j⟩ / ⟨z_i, z_i⟩ > alpha`` (point ``i`` is not separable from ``j``), weighted by
    the excess over ``alpha``. On the sphere (equal norms) the relation is symmetric and each pair is listed once,
    ``i < j``; otherwise both directions are. With ``top_edges > 0`` only the edges whose weight exceeds the
    ``top_edges + 1``-th largest are kept (scikit-dimension's rule), in the same order. Rows are compared ``chunk`` at
    a time, so memory stays ``chunk × n``."""
    Z = np.asarray(Z, dtype=np.float64)
    n = len(Z)
    sq = np.einsum("ij,ij->i", Z, Z)
    symmetric = bool(np.allclose(sq, sq[0], rtol=1e-05, atol=1e-08)) if n else True
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    weights: list[np.ndarray] = []
    for a in range(0, n, chunk):
        R = (Z[a : a + chunk] @ Z.T) / sq[a : a + chunk, None]
        i_local = np.arange(len(R))
        R[i_local, a + i_local] = -np.inf  # a point is not compared with itself
        if symmetric:
            R[np.arange(n)[None, :] <= (a + i_local)[:, None]] = -np.inf  # each pair once: j > i
        i, j = np.nonzero(R > alpha)
        rows.append(a + i)
        cols.append(j)
        weights.append(R[i, j] - alpha)
    I, J, W = (np.concatenate(v) if v else np.empty(0) for v in (rows, cols, weights))
    if 0 < top_edges < len(W):
        keep = W > np.sort(W)[::-1][top_edges]
        I, J, W = I[keep], J[keep], W[keep]
    return [(int(x), int(y)) for x, y in zip(I, J)], W


class FisherS(IDEstimator):
    """Fisher separability estimate (scikit-dimension's ``FisherS``; see :mod:`ttlab.intrinsic_dim.fisher_s`).

    ``alphas``: margins in (0, 1), increasing (default 0.60..0.98 by 0.02); ``limit_maxdim`` caps the
    estimate at the number of features. Sets ``n_alpha_`` (dimension per margin), ``p_alpha_``
    (inseparable fraction per margin and point), ``separable_fraction_`` and ``alphas_``."""

    name = "fishers"
    _parameter_constraints: dict[str, Any] = {
        **IDEstimator._parameter_constraints,
        # conditional_number may be inf (keep every principal component), which an Interval refuses: _check_params
        "conditional_number": "no_validation",
        "project_on_sphere": "no_validation",
        "alphas": "no_validation",  # margins in (0, 1): _check_params
        "limit_maxdim": "no_validation",
    }

    def __init__(self, conditional_number: float = 10, project_on_sphere: bool = True, alphas: Any = None,
                 limit_maxdim: bool = False, *, metric: str = "euclidean", batch_size: int | None = None,
                 seed: int = 0, remainder: str = "drop", backend: str = "auto", block_size: int = 2048,
                 device: str | None = None) -> None:
        self._set_common(metric, batch_size, seed, remainder, backend, block_size, device)
        self.conditional_number = conditional_number
        self.project_on_sphere = project_on_sphere
        self.alphas = alphas
        self.limit_maxdim = limit_maxdim

    def _alphas(self) -> np.ndarray:
        return DEFAULT_ALPHAS if self.alphas is None else np.ravel(np.asarray(self.alphas, dtype=np.float64))

    def _check_params(self) -> None:
        c = self.conditional_number
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not c >= 1:
            raise TTLabInputError(f"conditional_number must be a number >= 1; got {c!r}.")
        a = self._alphas()
        if a.size == 0 or not np.all((a > 0) & (a < 1)):
            raise TTLabInputError(f"alphas must be margins in (0, 1); got {self.alphas!r}.")

    def _n_neighbors(self) -> int:
        return 0

    def _min_points(self) -> int:
        return 3

    def _needs(self) -> str:
        return "FisherS needs"

    def _from_neighbors(self, X: np.ndarray, nb: Neighbors | None) -> tuple[float, np.ndarray | None, dict[str, Any]]:
        alphas = self._alphas()
        Z = fisher_preprocess(X, float(self.conditional_number), bool(self.project_on_sphere))
        p = inseparability(Z, alphas)
        n_alpha, d = sphere_dimension(p.mean(axis=1), alphas)
        if self.limit_maxdim and math.isfinite(d):
            d = min(d, X.shape[1])
        extra = {"n_alpha_": n_alpha, "p_alpha_": p, "alphas_": alphas,
                 "separable_fraction_": (p == 0).mean(axis=1)}
        return d, None, extra
