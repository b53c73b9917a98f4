"""scikit-dimension's ``skdim.id`` API, computed by ttlab: a drop-in for user code.

::

    import ttlab.intrinsic_dim.skdim as skdim_id     # instead of: from skdim import id as skdim_id
    skdim_id.TwoNN().fit(X).dimension_
    skdim_id.MLE().fit(X, n_neighbors=20, comb="median").dimension_pw_

Every class of ``skdim.id`` 0.5 (:data:`__all__`) with scikit-dimension's class name, constructor parameters (names
and defaults), ``fit`` options (``n_neighbors``, ``comb``, ``smooth``, ``precomputed_knn_arrays`` of the local
estimators), methods (``fit_transform``, ``transform``, ``fit_pw``, ``transform_pw``, ``fit_transform_pw``) and
fitted attributes (``dimension_``, ``dimension_pw_``, ``dimension_pw_smooth_``, ``n_neighbors_``, ...); and
:func:`asPointwise`. Each class is a thin adapter: it translates the options to the ttlab estimator with the same
meaning (:attr:`to_ttlab`) and every number comes from ttlab. Where ttlab deliberately differs the result follows
ttlab (duplicate rows dropped before estimating: a duplicate row's pointwise estimate is that of its first copy);
an option ttlab does not have raises :class:`NotImplementedError` naming it. ``n_jobs`` is accepted and ignored
(ttlab's neighbour search uses every core). docs/scikit_dimension.md, "A drop-in for skdim.id", lists what of
scikit-dimension's own tests does not pass.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ttlab.intrinsic_dim import corrint, ess, fisher_s, gride, knn_length, local, lpca, mind, mle, ph, tle, twonn
from ttlab.intrinsic_dim._params import ParamsMixin
from ttlab.intrinsic_dim.base import IDEstimator, prepare_points
from ttlab.intrinsic_dim.knn import kneighbors
from ttlab.intrinsic_dim.neighbors import Neighbors
from ttlab.intrinsic_dim.pointwise import fit_pw, smooth_pointwise
from ttlab.intrinsic_dim.single_set import danco_statistics, ess_single_neighbourhood

__all__ = [
    "CorrInt",
    "DANCo",
    "ESS",
    "FisherS",
    "GRIDE",
    "KNN",
    "MADA",
    "MLE",
    "MOM",
    "MiND_ML",
    "PH",
    "TLE",
    "TwoNN",
    "lPCA",
    "asPointwise",
    "NotFittedError",
]


class NotFittedError(ValueError, AttributeError):
    """``transform`` / ``transform_pw`` before ``fit`` / ``fit_pw`` (scikit-learn's ``NotFittedError`` contract)."""


def _not_fitted_error() -> type[Exception]:
    try:
        from sklearn.exceptions import NotFittedError as SkNotFitted
    except ImportError:  # pragma: no cover - scikit-learn is optional
        return NotFittedError
    return SkNotFitted


def _missing(cls: str, option: str) -> NotImplementedError:
    return NotImplementedError(
        f"ttlab.intrinsic_dim.skdim.{cls}: scikit-dimension's {option} is not available in ttlab "
        "(docs/scikit_dimension.md, 'A drop-in for skdim.id')."
    )


def _per_row(X: np.ndarray, pw: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """ttlab's pointwise estimates (one per distinct point, at input ``rows``) as one per input row: a
    duplicate row gets the estimate of its distinct point."""
    if len(rows) == len(X) and np.array_equal(rows, np.arange(len(X))):
        return pw
    _, inverse = np.unique(X, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    value = np.full(inverse.max() + 1, np.nan)
    value[inverse[rows]] = pw
    return value[inverse]


def _smooth(pw: np.ndarray, indices: np.ndarray) -> np.ndarray:
    return smooth_pointwise(pw, np.asarray(indices))


class _Adapter(ParamsMixin):
    """scikit-dimension's estimator surface over a ttlab estimator (:meth:`to_ttlab`)."""

    dimension_: Any
    dimension_pw_: np.ndarray
    n_features_in_: int

    def to_ttlab(self) -> IDEstimator:  # pragma: no cover - every adapter overrides it
        raise NotImplementedError

    def __sklearn_tags__(self) -> Any:
        """ttlab's tags, as a transformer (``transform`` returns the estimate), as scikit-dimension's."""
        from sklearn.utils import TransformerTags

        tags = super().__sklearn_tags__()
        tags.transformer_tags = TransformerTags()
        return tags

    def _take(self, est: IDEstimator) -> None:
        """Copy a fitted ttlab estimator's results under scikit-dimension's names."""
        self.ttlab_estimator_ = est
        for key, value in vars(est).items():
            if key.endswith("_") and not key.startswith("_") and key != "pointwise_dimension_":
                setattr(self, key, value)
        self.dimension_ = est.dimension_
        self.is_fitted_ = True

    def _check_fitted(self, attribute: str) -> None:
        if not hasattr(self, attribute):
            raise _not_fitted_error()(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' with appropriate arguments "
                "before using this method."
            )

    def transform(self, X: Any = None) -> Any:
        """The estimate ``dimension_`` of the last ``fit`` (``X`` only checked for its number of features)."""
        self._check_fitted("is_fitted_")
        if X is not None:
            X = np.asarray(X, dtype=np.float64)
            if not np.isfinite(X).all():
                raise ValueError("Input X contains NaN or infinity.")
            if X.ndim != 2:  # scikit-learn's wording, which its checks look for
                raise ValueError(f"Expected 2D array, got {X.ndim}D array instead: reshape your data with "
                                 "X.reshape(-1, 1) for one feature or X.reshape(1, -1) for one sample.")
            if X.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has {X.shape[-1]} features, but {type(self).__name__} is expecting "
                    f"{self.n_features_in_} features as input."
                )
        return self.dimension_

    def transform_pw(self, X: Any = None) -> Any:
        """``dimension_pw_`` (and ``dimension_pw_smooth_`` if it was computed)."""
        self._check_fitted("dimension_pw_")
        if hasattr(self, "dimension_pw_smooth_"):
            return self.dimension_pw_, self.dimension_pw_smooth_
        return self.dimension_pw_


class _Global(_Adapter):
    """scikit-dimension's ``GlobalEstimator``: ``fit(X)``; ``fit_pw`` fits on each point's neighbourhood."""

    def fit(self, X: Any, y: Any = None) -> "_Global":
        """Estimate the intrinsic dimension of the rows of ``X``."""
        self._take(self.to_ttlab().fit(X))
        return self

    def fit_transform(self, X: Any, y: Any = None) -> Any:
        """``fit(X).dimension_``."""
        return self.fit(X).dimension_

    def _pointwise(self, X: Any, precomputed_knn: Any, n_neighbors: int) -> tuple[np.ndarray, np.ndarray]:
        if precomputed_knn is None:
            res = fit_pw(self.to_ttlab(), X, k=n_neighbors)
            return res.dimension_pw, res.indices
        X = np.asarray(X, dtype=np.float64)
        knn = np.asarray(precomputed_knn)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pw = np.array([self.to_ttlab().fit(X[idx]).dimension_ for idx in knn], dtype=np.float64)
        return pw, knn

    def fit_pw(self, X: Any, precomputed_knn: Any = None, smooth: bool = False, n_neighbors: int = 100,
               n_jobs: int = 1) -> "_Global":
        """``dimension_pw_``: the estimator fitted on each point's ``n_neighbors`` nearest neighbours (the point
        excluded) or on the rows of ``precomputed_knn``; ``smooth`` adds ``dimension_pw_smooth_``."""
        pw, knn = self._pointwise(X, precomputed_knn, n_neighbors)
        self.dimension_pw_ = pw
        self.n_features_in_ = int(np.asarray(X).shape[1])
        if smooth:
            self.dimension_pw_smooth_ = _smooth(pw, knn)
        return self

    def fit_transform_pw(self, X: Any, precomputed_knn: Any = None, smooth: bool = False, n_neighbors: int = 100,
                         n_jobs: int = 1) -> Any:
        """:meth:`fit_pw`'s ``dimension_pw_`` (and ``dimension_pw_smooth_`` with ``smooth``), not stored."""
        pw, knn = self._pointwise(X, precomputed_knn, n_neighbors)
        return (pw, _smooth(pw, knn)) if smooth else pw


class _Local(_Adapter):
    """scikit-dimension's ``LocalEstimator``: ``fit(X, n_neighbors=..., comb=..., smooth=...)``."""

    _N_NEIGHBORS = 100
    _COMBS = {"mean": "mean", "median": "median"}

    def _ttlab_local(self, k: int, average: str) -> IDEstimator:  # pragma: no cover - overridden
        raise NotImplementedError

    def to_ttlab(self) -> IDEstimator:
        """The ttlab estimator of ``fit(X)`` with scikit-dimension's default ``n_neighbors`` and ``comb``."""
        return self._ttlab_local(self._N_NEIGHBORS, next(iter(self._COMBS.values())))

    def _fit_with(self, est: IDEstimator, X: Any, precomputed_knn_arrays: Any) -> IDEstimator:
        if precomputed_knn_arrays is None:
            return est.fit(X)
        prep = prepare_points(X, "euclidean")
        if prep.n_duplicates:
            raise _missing(type(self).__name__, "precomputed_knn_arrays on data with duplicate rows")
        dists, idx = (np.asarray(a) for a in precomputed_knn_arrays)
        k = est.neighbors_needed()
        nb = Neighbors(np.asarray(dists[:, :k], dtype=np.float64) * prep.scale, np.asarray(idx[:, :k]),
                       "precomputed", True, 0)
        return est.fit_prepared(prep, est.plan_batches(prep), [nb])

    def fit(self, X: Any, y: Any = None, precomputed_knn_arrays: Any = None, smooth: bool = False,
            n_neighbors: int | None = None, comb: str = "mean", n_jobs: int = 1) -> "_Local":
        """Pointwise estimates on each point's ``n_neighbors`` neighbours (``dimension_pw_``), combined by ``comb``
        into ``dimension_``; ``smooth`` adds ``dimension_pw_smooth_``."""
        if comb not in self._COMBS:
            raise ValueError(f"Invalid comb parameter. It has to be one of {', '.join(map(repr, self._COMBS))}")
        n = len(X)
        k = self._N_NEIGHBORS if n_neighbors is None else int(n_neighbors)
        if k >= n:
            warnings.warn("n_neighbors >= len(X), setting n_neighbors = len(X)-1", stacklevel=2)
            k = n - 1
        for attr in ("dimension_pw_", "dimension_pw_smooth_", "is_fitted_pw_smooth_"):
            self.__dict__.pop(attr, None)
        est = self._fit_with(self._ttlab_local(k, self._COMBS[comb]), X, precomputed_knn_arrays)
        self._take(est)
        Xa = np.asarray(X, dtype=np.float64)
        if est.pointwise_dimension_ is not None:  # MLE with dnoise or neighborhood_based=False has none
            self.dimension_pw_ = _per_row(Xa, est.pointwise_dimension_, est.point_indices_)
        self.n_neighbors_, self.comb_ = k, comb
        if smooth and hasattr(self, "dimension_pw_"):
            knn = precomputed_knn_arrays[1][:, :k] if precomputed_knn_arrays is not None else (
                kneighbors(Xa, k).indices)
            self.dimension_pw_smooth_ = _smooth(self.dimension_pw_, knn)
            self.is_fitted_pw_smooth_ = True
        self.is_fitted_pw_ = True
        return self

    def fit_transform(self, X: Any, y: Any = None, precomputed_knn_arrays: Any = None, smooth: bool = False,
                      n_neighbors: int | None = None, comb: str = "mean", n_jobs: int = 1) -> Any:
        """``fit(...).dimension_``."""
        return self.fit(X, precomputed_knn_arrays=precomputed_knn_arrays, smooth=smooth, n_neighbors=n_neighbors,
                        comb=comb, n_jobs=n_jobs).dimension_

    def fit_transform_pw(self, X: Any, precomputed_knn_arrays: Any = None, smooth: bool = False,
                         n_neighbors: int | None = None, n_jobs: int = 1) -> Any:
        """``fit(...)``'s ``dimension_pw_`` (and ``dimension_pw_smooth_`` with ``smooth``)."""
        self.fit(X, precomputed_knn_arrays=precomputed_knn_arrays, smooth=smooth, n_neighbors=n_neighbors,
                 n_jobs=n_jobs)
        return (self.dimension_pw_, self.dimension_pw_smooth_) if smooth else self.dimension_pw_


def asPointwise(X: Any, class_instance: _Global, precomputed_knn: Any = None, n_neighbors: int = 100,
                n_jobs: int = 1) -> np.ndarray:
    """scikit-dimension's ``skdim.asPointwise``: a global estimator fitted on each point's neighbourhood."""
    return class_instance.fit_transform_pw(X, precomputed_knn=precomputed_knn, n_neighbors=n_neighbors)


# -- local estimators ---------------------------------------------------------------------------------------------
class MLE(_Local):
    """Levina–Bickel maximum likelihood (:class:`ttlab.intrinsic_dim.MLE`); ``comb='mle'`` is the harmonic mean."""

    _N_NEIGHBORS = 20
    _COMBS = {"mle": "harmonic", "mean": "mean", "median": "median"}

    def __init__(self, dnoise=None, sigma=0, n=None, integral_approximation="Haro", unbiased=False,
                 neighborhood_based=True, K=5):
        self.dnoise = dnoise
        self.sigma = sigma
        self.n = n
        self.integral_approximation = integral_approximation
        self.unbiased = unbiased
        self.neighborhood_based = neighborhood_based
        self.K = K

    def _ttlab_local(self, k: int, average: str) -> IDEstimator:
        if self.integral_approximation != "Haro" and self.dnoise is not None:
            raise _missing("MLE", f"integral_approximation={self.integral_approximation!r}")
        opts: dict[str, Any] = dict(k=k, average=average, unbiased=self.unbiased)
        if self.dnoise is not None:
            opts.update(dnoise=self.dnoise, sigma=self.sigma)
        if not self.neighborhood_based:
            opts.update(neighborhood_based=False, global_k=self.K)
        return mle.MLE(**opts)

    def fit(self, X: Any, y: Any = None, precomputed_knn_arrays: Any = None, smooth: bool = False,
            n_neighbors: int | None = None, comb: str = "mle", n_jobs: int = 1) -> "MLE":
        """As scikit-dimension's ``MLE.fit`` (``comb`` defaults to ``'mle'``)."""
        super().fit(X, precomputed_knn_arrays=precomputed_knn_arrays, smooth=smooth, n_neighbors=n_neighbors,
                    comb=comb, n_jobs=n_jobs)
        return self

    def fit_transform(self, X: Any, y: Any = None, precomputed_knn_arrays: Any = None, smooth: bool = False,
                      n_neighbors: int | None = None, comb: str = "mle", n_jobs: int = 1) -> Any:
        """``fit(...).dimension_``."""
        return super().fit_transform(X, precomputed_knn_arrays=precomputed_knn_arrays, smooth=smooth,
                                     n_neighbors=n_neighbors, comb=comb, n_jobs=n_jobs)

    def fit_once(self, X: Any) -> "MLE":
        """scikit-dimension's single-neighbourhood MLE (not in ttlab)."""
        raise _missing("MLE", "fit_once")


class ESS(_Local):
    """Expected simplex skewness (:class:`ttlab.intrinsic_dim.ESS`)."""

    def __init__(self, ver="a", d=1, random_state=None):
        self.ver = ver
        self.d = d
        self.random_state = random_state

    def _ttlab_local(self, k: int, average: str) -> IDEstimator:
        return ess.ESS(k=k, ver=self.ver, d=self.d, average=average, random_state=self.random_state or 0)

    def fit_once(self, X: Any, y: Any = None) -> "ESS":
        """ESS of the whole of ``X`` as one neighbourhood (``dimension_``, ``essval_``)."""
        self.dimension_, self.essval_ = ess_single_neighbourhood(
            np.asarray(X, dtype=np.float64), ver=self.ver, d=self.d, random_state=self.random_state or 0)
        self.is_fitted_ = True
        self.n_features_in_ = int(np.asarray(X).shape[1])
        return self


class TLE(_Local):
    """Tight local estimator (:class:`ttlab.intrinsic_dim.TLE`)."""

    _N_NEIGHBORS = 20

    def __init__(self, epsilon=1e-4):
        self.epsilon = epsilon

    def _ttlab_local(self, k: int, average: str) -> IDEstimator:
        return tle.TLE(k=k, average=average, epsilon=self.epsilon)


class MOM(_Local):
    """Method of moments (:class:`ttlab.intrinsic_dim.MOM`)."""

    def __init__(self):
        pass

    def _ttlab_local(self, k: int, average: str) -> IDEstimator:
        return local.MOM(k=k, average=average)


class MADA(_Local):
    """Manifold-adaptive dimension (:class:`ttlab.intrinsic_dim.MADA`); ``DM=True`` (a distance matrix) is missing."""

    _N_NEIGHBORS = 20

    def __init__(self, DM=False):
        self.DM = DM

    def _ttlab_local(self, k: int, average: str) -> IDEstimator:
        if self.DM:
            raise _missing("MADA", "DM=True (a precomputed distance matrix)")
        return local.MADA(k=k, average=average)


# -- global estimators --------------------------------------------------------------------------------------------
class TwoNN(_Global):
    """Two-nearest-neighbour estimator (:class:`ttlab.intrinsic_dim.TwoNN`); ``dist=True`` (X a distance matrix)
    is missing."""

    def __init__(self, discard_fraction=0.1, dist=False, method="linear"):
        self.discard_fraction = discard_fraction
        self.dist = dist
        self.method = method

    def to_ttlab(self) -> IDEstimator:
        """The ttlab estimator with these settings."""
        if self.dist:
            raise _missing("TwoNN", "dist=True (X a precomputed distance matrix)")
        return twonn.TwoNN(discard_fraction=self.discard_fraction, method=self.method)


class GRIDE(_Global):
    """Generalized ratios ID estimator (:class:`ttlab.intrinsic_dim.GRIDE`)."""

    def __init__(self, n1=1, n2=None, multiscale=False, range_max=64):
        self.n1 = n1
        self.n2 = n2
        self.multiscale = multiscale
        self.range_max = range_max

    def to_ttlab(self) -> IDEstimator:
        """The ttlab estimator with these settings."""
        return gride.GRIDE(n1=self.n1, n2=self.n2, multiscale=self.multiscale, range_max=self.range_max)


class lPCA(_Global):
    """Local PCA rules (:class:`ttlab.intrinsic_dim.LPCA`); ``fit_explained_variance=True`` (a spectrum as input)
    is missing."""

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
        if self.fit_explained_variance:
            raise _missing("lPCA", "fit_explained_variance=True (X a precomputed spectrum)")
        return lpca.LPCA(ver=self.ver, alpha_ratio=self.alphaRatio, alpha_fo=self.alphaFO, alpha_fan=self.alphaFan,
                         beta_fan=self.betaFan, p_fan=self.PFan, center=self.center, noise_var=self.noise_var,
                         alpha_kn=self.alphaKN, n_permutations=self.n_permutations, quantile=self.quantile,
                         null=self.null, random_state=self.random_state or 0)

    def fit(self, X: Any, y: Any = None) -> "lPCA":
        """As scikit-dimension's: ``dimension_``, ``explained_var_`` and ``gap_``-style attributes."""
        super().fit(X)
        self.explained_var_ = getattr(self.ttlab_estimator_, "explained_variance_")
        return self


class MiND_ML(_Global):
    """MiND maximum likelihood (:class:`ttlab.intrinsic_dim.MiND_ML`)."""

    def __init__(self, k=20, D=10, ver="MLk"):
        self.k = k
        self.D = D
        self.ver = ver

    def to_ttlab(self) -> IDEstimator:
        """The ttlab estimator with these settings."""
        return mind.MiND_ML(k=self.k, D=self.D, ver=self.ver)


class DANCo(_Global):
    """DANCo (:class:`ttlab.intrinsic_dim.DANCo`); ``ver='DANCoFit'`` (scikit-dimension's shipped calibration
    table) is missing."""

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
        if self.ver == "DANCoFit":
            raise _missing("DANCo", "ver='DANCoFit' (its shipped calibration table)")
        return mind.DANCo(k=self.k, D=self.D, fractal=self.fractal, random_state=self.random_state or 0,
                          ver=self.ver, calibration_data=self.calibration_data)

    def fit(self, X: Any, y: Any = None) -> "DANCo":
        """As scikit-dimension's; ``calibration_data`` is not overwritten (scikit-learn's rule)."""
        super().fit(X)
        return self

    def _dancoDimEstNoCalibration(self, X: Any, D: int) -> Any:
        """scikit-dimension's private helper (its tests call it after setting ``_k``)."""
        return danco_statistics(X, k=getattr(self, "_k", self.k), D=D)


class CorrInt(_Global):
    """Correlation integral (:class:`ttlab.intrinsic_dim.CorrInt`); ``DM=True`` is missing."""

    def __init__(self, k1=10, k2=20, DM=False):
        self.k1 = k1
        self.k2 = k2
        self.DM = DM

    def to_ttlab(self) -> IDEstimator:
        """The ttlab estimator with these settings."""
        if self.DM:
            raise _missing("CorrInt", "DM=True (X a precomputed distance matrix)")
        return corrint.CorrInt(k1=self.k1, k2=self.k2)


class FisherS(_Global):
    """Fisher separability (:class:`ttlab.intrinsic_dim.FisherS`); plots and separability graphs are missing."""

    def __init__(self, conditional_number=10, project_on_sphere=1, alphas=None, produce_plots=False, verbose=0,
                 limit_maxdim=False):
        self.conditional_number = conditional_number
        self.project_on_sphere = project_on_sphere
        self.alphas = alphas
        self.produce_plots = produce_plots
        self.verbose = verbose
        self.limit_maxdim = limit_maxdim

    def to_ttlab(self) -> IDEstimator:
        """The ttlab estimator with these settings."""
        if self.produce_plots:
            raise _missing("FisherS", "produce_plots=True")
        return fisher_s.FisherS(conditional_number=self.conditional_number,
                                project_on_sphere=bool(self.project_on_sphere), alphas=self.alphas,
                                limit_maxdim=self.limit_maxdim)

    def point_inseparability_to_pointID(self, *args: Any, **kwargs: Any) -> Any:
        """Not in ttlab."""
        raise _missing("FisherS", "point_inseparability_to_pointID")

    def getSeparabilityGraph(self, *args: Any, **kwargs: Any) -> Any:
        """Not in ttlab."""
        raise _missing("FisherS", "getSeparabilityGraph")


class KNN(_Global):
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


class PH(_Global):
    """Persistent-homology dimension (:class:`ttlab.intrinsic_dim.PH`)."""

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

    def to_ttlab(self) -> IDEstimator:
        """The ttlab estimator with these settings."""
        if self.metric != "euclidean":
            raise _missing("PH", f"metric={self.metric!r}")
        return ph.PH(alpha=self.alpha, n_range_min=self.n_range_min, n_range_max=self.n_range_max,
                     range_type=self.range_type, nsteps=self.nsteps, subsamples=self.subsamples,
                     random_state=self.random_state or 0)
