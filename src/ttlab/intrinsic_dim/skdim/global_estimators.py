"""scikit-dimension's global estimators (``fit(X)``, ``fit_pw``) over ttlab's: TwoNN, GRIDE, lPCA, MiND_ML, DANCo,
CorrInt, KNN, PH (FisherS, with its graph and plots, in :mod:`ttlab.intrinsic_dim.skdim.fisher_s`)."""

from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim import corrint, gride, knn_length, lpca, mind, ph, twonn
from ttlab.intrinsic_dim.base import IDEstimator
from ttlab.intrinsic_dim.single_set import danco_statistics
from ttlab.intrinsic_dim.skdim.adapters import GlobalAdapter, missing_option
from ttlab.intrinsic_dim.validate import DuplicatePointsWarning, check_points

__all__ = ["CorrInt", "DANCo", "GRIDE", "KNN", "MiND_ML", "PH", "TwoNN", "danco_fit_table", "lPCA"]


class TwoNN(GlobalAdapter):
    """Two-nearest-neighbour estimator (:class:`ttlab.intrinsic_dim.TwoNN`); with ``dist=True`` the columns of ``X``
    are each point's distances to its first and second neighbours (r1, r2), as in scikit-dimension."""

    def __init__(self, discard_fraction=0.1, dist=False, method="linear"):
        self.discard_fraction = discard_fraction
        self.dist = dist
        self.method = method

    def to_ttlab(self) -> IDEstimator:
        """The ttlab estimator with these settings."""
        return twonn.TwoNN(discard_fraction=self.discard_fraction, method=self.method)

    def fit(self, X: Any, y: Any = None) -> "TwoNN":
        """Estimate from the rows of ``X``, or with ``dist=True`` from its (r1, r2) columns by ttlab's
        :func:`~ttlab.intrinsic_dim.twonn.twonn_from_distances` (the estimate :class:`ttlab.intrinsic_dim.TwoNN`
        computes from its neighbour search); rows with r1 = 0 (duplicate points) are dropped with a warning."""
        if not self.dist:
            return super().fit(X)  # type: ignore[return-value]
        est = self.to_ttlab()
        est.check_params()
        r = check_points(X)
        if r.shape[1] < 2 or (r[:, :2] < 0).any() or (r[:, 1] < r[:, 0]).any():
            raise TTLabInputError("TwoNN(dist=True) reads each row's distances to its first and second neighbours: "
                                  f"at least 2 columns with 0 <= r1 <= r2; got shape {r.shape}.")
        self.n_features_in_ = int(r.shape[1])
        r = r[:, :2].astype(np.float64)
        zero = r[:, 0] == 0
        if zero.any():
            warnings.warn(f"Dropping {int(zero.sum())} points with zero distance to their nearest neighbour "
                          "(duplicate points).", DuplicatePointsWarning, stacklevel=2)
            r = r[~zero]
        if len(r) < twonn.TWONN_MIN_POINTS:
            raise TTLabInputError(f"TwoNN needs at least {twonn.TWONN_MIN_POINTS} points; got {len(r)} "
                                  f"(n_samples = {len(r)}).")
        self.ttlab_estimator_ = est
        self.dimension_ = twonn.twonn_from_distances(r, self.discard_fraction, self.method)
        self.is_fitted_ = True
        return self


class GRIDE(GlobalAdapter):
    """Generalized ratios ID estimator (:class:`ttlab.intrinsic_dim.GRIDE`)."""

    def __init__(self, n1=1, n2=None, multiscale=False, range_max=64):
        self.n1 = n1
        self.n2 = n2
        self.multiscale = multiscale
        self.range_max = range_max

    def to_ttlab(self) -> IDEstimator:
        """The ttlab estimator with these settings."""
        return gride.GRIDE(n1=self.n1, n2=self.n2, multiscale=self.multiscale, range_max=self.range_max)


class lPCA(GlobalAdapter):
    """Local PCA rules (:class:`ttlab.intrinsic_dim.LPCA`); ``fit_explained_variance=True``: ``X`` is a PCA spectrum
    (:meth:`ttlab.intrinsic_dim.LPCA.fit_spectrum`)."""

    def __init__(self, ver="FO", alphaRatio=0.05, alphaFO=0.05, alphaFan=10, betaFan=0.8, PFan=0.95, verbose=True,
                 center=True, fit_explained_variance=False, *, n_samples=None, noise_var=None, alphaKN=0.05,
                 n_permutations=100, quantile=0.95, null="permute", random_state=None):
        self.ver = ver
        self.alphaRatio = alphaRatio
        self.alphaFO = alphaFO
        self.alphaFan = alphaFan
        self.betaFan = betaFan
        self.PFan = PFan
        self.verbose = verbose
        self.center = center
        self.fit_explained_variance = fit_explained_variance
        self.n_samples = n_samples
        self.noise_var = noise_var
        self.alphaKN = alphaKN
        self.n_permutations = n_permutations
        self.quantile = quantile
        self.null = null
        self.random_state = random_state

    def to_ttlab(self) -> IDEstimator:
        """The ttlab estimator with these settings."""
        return lpca.LPCA(ver=self.ver, alpha_ratio=self.alphaRatio, alpha_fo=self.alphaFO, alpha_fan=self.alphaFan,
                         beta_fan=self.betaFan, p_fan=self.PFan, center=self.center, noise_var=self.noise_var,
                         alpha_kn=self.alphaKN, n_permutations=self.n_permutations, quantile=self.quantile,
                         null=self.null, random_state=self.random_state or 0)

    def fit(self, X: Any, y: Any = None) -> "lPCA":
        """As scikit-dimension's: ``dimension_``, ``explained_var_`` and ``gap_``-style attributes."""
        if self.fit_explained_variance:  # X is a spectrum: ttlab's LPCA.fit_spectrum
            self._take(self.to_ttlab().fit_spectrum(X, n_samples=self.n_samples))  # type: ignore[attr-defined]
            return self
        super().fit(X)
        self.explained_var_ = getattr(self.ttlab_estimator_, "explained_variance_")
        return self


class MiND_ML(GlobalAdapter):
    """MiND maximum likelihood (:class:`ttlab.intrinsic_dim.MiND_ML`)."""

    def __init__(self, k=20, D=10, ver="MLk"):
        self.k = k
        self.D = D
        self.ver = ver

    def to_ttlab(self) -> IDEstimator:
        """The ttlab estimator with these settings."""
        return mind.MiND_ML(k=self.k, D=self.D, ver=self.ver)

    def ttlab_for(self, n_samples: int) -> IDEstimator:
        """With ``k + 1 >= n_samples``, scikit-dimension reads ``n_samples - 1`` neighbours (with a warning);
        here ``k`` becomes ``n_samples - 2`` (the same neighbours). scikit-dimension keeps the larger ``k`` in
        the likelihood, so its number differs there (docs/scikit_dimension.md)."""
        if self.k + 1 < n_samples or n_samples < 3:
            return self.to_ttlab()
        warnings.warn("k+1 >= len(X), using k+1 = len(X)-1", stacklevel=3)
        return mind.MiND_ML(k=n_samples - 2, D=self.D, ver=self.ver)


class DANCo(GlobalAdapter):
    """DANCo (:class:`ttlab.intrinsic_dim.DANCo`); ``ver='DANCoFit'`` calibrates from scikit-dimension's shipped table
    (read from the installed scikit-dimension: :func:`danco_fit_table`) by ttlab's ``calibration_table``."""

    def __init__(self, k=10, D=None, calibration_data=None, ver="DANCo", fractal=True, verbose=False,
                 random_state=None):
        self.k = k
        self.D = D
        self.calibration_data = calibration_data
        self.ver = ver
        self.fractal = fractal
        self.verbose = verbose
        self.random_state = random_state

    def to_ttlab(self) -> IDEstimator:
        """The ttlab estimator with these settings."""
        fit = self.ver == "DANCoFit"
        return mind.DANCo(k=self.k, D=self.D, fractal=self.fractal, random_state=self.random_state or 0,
                          ver="DANCo" if fit else self.ver, calibration_data=self.calibration_data,
                          calibration_table=danco_fit_table() if fit else None)

    def _dancoDimEstNoCalibration(self, X: Any, D: int) -> Any:
        """scikit-dimension's private helper (its tests call it after setting ``_k``)."""
        return danco_statistics(X, k=getattr(self, "_k", self.k), D=D)

    def _fit_calibration(self, N: int) -> dict[str, Any]:
        """scikit-dimension's private DANCoFit helper (its tests call it after setting ``_k`` and ``_D``):
        ttlab's :func:`~ttlab.intrinsic_dim.mind.table_calibration` of the shipped table."""
        return mind.table_calibration(danco_fit_table(), N, getattr(self, "_k", self.k), getattr(self, "_D", self.D))


@functools.cache
def danco_fit_table() -> dict[str, np.ndarray]:
    """scikit-dimension's DANCoFit calibration table (``skdim/id/DANCoFit/danco_fit_table.npz``: simulated ball
    statistics, its data), read once from the installed scikit-dimension; ttlab does not ship it."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("skdim")
    path = Path(spec.origin).parent / "id" / "DANCoFit" / "danco_fit_table.npz" if spec and spec.origin else None
    if path is None or not path.is_file():
        raise missing_option("DANCo", "ver='DANCoFit' without scikit-dimension >= 0.5 installed (its calibration "
                             "table)")
    with np.load(path) as table:
        return {key: table[key] for key in table.files}


class CorrInt(GlobalAdapter):
    """Correlation integral (:class:`ttlab.intrinsic_dim.CorrInt`); ``DM=True`` is missing."""

    def __init__(self, k1=10, k2=20, DM=False):
        self.k1 = k1
        self.k2 = k2
        self.DM = DM

    def to_ttlab(self) -> IDEstimator:
        """The ttlab estimator with these settings."""
        if self.DM:
            raise missing_option("CorrInt", "DM=True (X a precomputed distance matrix)")
        return corrint.CorrInt(k1=self.k1, k2=self.k2)

    def ttlab_for(self, n_samples: int) -> IDEstimator:
        """scikit-dimension's: ``k2 >= n_samples`` becomes ``n_samples - 1``, then ``k1 >= n_samples`` or
        ``k1 > k2`` becomes ``k2 - 1``, each with a warning; the same numbers as scikit-dimension's."""
        k1, k2 = self.k1, self.k2
        if k2 >= n_samples >= 3:
            warnings.warn("k2 larger or equal to len(X), using len(X)-1", stacklevel=3)
            k2 = n_samples - 1
        if (k1 >= n_samples or k1 > k2) and k2 >= 2:
            warnings.warn("k1 larger than k2 or len(X), using k2-1", stacklevel=3)
            k1 = k2 - 1
        return corrint.CorrInt(k1=k1, k2=k2) if (k1, k2) != (self.k1, self.k2) else self.to_ttlab()


class KNN(GlobalAdapter):
    """kNN graph length (:class:`ttlab.intrinsic_dim.KNN`)."""

    def __init__(self, k=None, ps=None, M=1, gamma=2, random_state=None):
        self.k = k
        self.ps = ps
        self.M = M
        self.gamma = gamma
        self.random_state = random_state

    def to_ttlab(self) -> IDEstimator:
        """The ttlab estimator with these settings."""
        return knn_length.KNN(k=self.k, ps=self.ps, M=self.M, gamma=self.gamma, random_state=self.random_state or 0)


class PH(GlobalAdapter):
    """Persistent-homology dimension (:class:`ttlab.intrinsic_dim.PH`); ``metric`` is ttlab's ``distance`` (a scipy
    pdist metric name); a sequence ``alpha`` gives one estimate per value, each a ttlab fit on the same subsamples."""

    def __init__(self, alpha=1.0, n_range_min=0.5, n_range_max=1.0, range_type="fraction", nsteps=100,
                 subsamples=10, metric="euclidean", random_state=None, n_jobs=1):
        self.alpha = alpha
        self.n_range_min = n_range_min
        self.n_range_max = n_range_max
        self.range_type = range_type
        self.nsteps = nsteps
        self.subsamples = subsamples
        self.metric = metric
        self.random_state = random_state
        self.n_jobs = n_jobs

    def to_ttlab(self, alpha: Any = None) -> IDEstimator:
        """The ttlab estimator with these settings (``alpha``: one value of a sequence ``self.alpha``)."""
        return ph.PH(alpha=self.alpha if alpha is None else alpha, n_range_min=self.n_range_min,
                     n_range_max=self.n_range_max, range_type=self.range_type, nsteps=self.nsteps,
                     subsamples=self.subsamples, random_state=self.random_state or 0, distance=self.metric)

    def fit(self, X: Any, y: Any = None) -> "PH":
        """As scikit-dimension's; with a sequence ``alpha``, ``dimension_`` and the columns of ``y_`` hold one
        value per alpha (the subsamples are drawn from the same seed, so they are the same for every alpha)."""
        if np.ndim(self.alpha) == 0:
            return super().fit(X)  # type: ignore[return-value]
        X = check_points(X)
        fits = [self.to_ttlab(float(a)).fit(X) for a in np.asarray(self.alpha, dtype=float)]
        self._take(fits[0])
        self.dimension_ = np.array([f.dimension_ for f in fits])
        self.y_ = np.column_stack([getattr(f, "y_") for f in fits])
        return self
