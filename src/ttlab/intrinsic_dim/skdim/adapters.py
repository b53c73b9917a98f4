"""The surface every class of :mod:`ttlab.intrinsic_dim.skdim` shares: scikit-dimension's ``GlobalEstimator`` and
``LocalEstimator`` (fit, transform, pointwise fits, smoothing) over a ttlab estimator, and :func:`asPointwise`."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim._params import ParamsMixin
from ttlab.intrinsic_dim.base import IDEstimator, prepare_points
from ttlab.intrinsic_dim.knn import kneighbors
from ttlab.intrinsic_dim.neighbors import Neighbors
from ttlab.intrinsic_dim.pointwise import fit_pw, smooth_pointwise
from ttlab.intrinsic_dim.validate import check_points

__all__ = ["Adapter", "GlobalAdapter", "LocalAdapter", "NotFittedError", "asPointwise", "missing_option",
           "not_fitted_error", "per_row_estimates", "point_of_row", "smooth_per_point"]


class NotFittedError(ValueError, AttributeError):
    """``transform`` / ``transform_pw`` before ``fit`` / ``fit_pw`` (scikit-learn's ``NotFittedError`` contract)."""


def not_fitted_error() -> type[Exception]:
    try:
        from sklearn.exceptions import NotFittedError as SkNotFitted
    except ImportError:  # pragma: no cover - scikit-learn is optional
        return NotFittedError
    return SkNotFitted


def missing_option(cls: str, option: str) -> NotImplementedError:
    return NotImplementedError(
        f"ttlab.intrinsic_dim.skdim.{cls}: scikit-dimension's {option} is not available in ttlab "
        "(docs/scikit_dimension.md, 'A drop-in for skdim.id')."
    )


def point_of_row(X: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """For each input row of ``X``, the position in ``rows`` (the input rows ttlab kept, one per distinct point) of
    its distinct point: a duplicate row points at its first copy's."""
    if len(rows) == len(X) and np.array_equal(rows, np.arange(len(X))):
        return np.arange(len(X))
    _, inverse = np.unique(X, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    position = np.full(inverse.max() + 1, -1)
    position[inverse[rows]] = np.arange(len(rows))
    return position[inverse]


def per_row_estimates(X: np.ndarray, pw: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """ttlab's pointwise estimates (one per distinct point, at input ``rows``) as one per input row: a
    duplicate row gets the estimate of its distinct point."""
    return np.asarray(pw)[point_of_row(X, rows)]


def smooth_per_point(pw: np.ndarray, indices: np.ndarray) -> np.ndarray:
    return smooth_pointwise(pw, np.asarray(indices))


class Adapter(ParamsMixin):
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
            raise not_fitted_error()(
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
                raise ValueError(f"Expected 2D array, got {X.ndim}D array instead. Reshape your data either using "
                                 "X.reshape(-1, 1) if it has a single feature or X.reshape(1, -1) if it contains a "
                                 "single sample.")
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


class GlobalAdapter(Adapter):
    """scikit-dimension's ``GlobalEstimator``: ``fit(X)``; ``fit_pw`` fits on each point's neighbourhood."""

    def fit(self, X: Any, y: Any = None) -> "GlobalAdapter":
        """Estimate the intrinsic dimension of the rows of ``X``."""
        X = check_points(X)
        self._take(self.ttlab_for(len(X)).fit(X))
        return self

    def ttlab_for(self, n_samples: int) -> IDEstimator:
        """The ttlab estimator :meth:`fit` runs on ``n_samples`` rows: :meth:`to_ttlab`, except where
        scikit-dimension lowers a neighbourhood size that ``n_samples`` cannot supply (with a warning)."""
        return self.to_ttlab()

    def fit_transform(self, X: Any, y: Any = None) -> Any:
        """``fit(X).dimension_``."""
        return self.fit(X).dimension_

    def _pointwise(self, X: Any, precomputed_knn: Any, n_neighbors: int) -> tuple[np.ndarray, np.ndarray]:
        if precomputed_knn is None:
            res = fit_pw(self.to_ttlab(), X, k=n_neighbors)
            return res.dimension_pw, res.indices
        X = np.asarray(X, dtype=np.float64)
        knn = np.asarray(precomputed_knn)
        est = self.to_ttlab()  # built once (DANCoFit reads its table there), refitted on each neighbourhood
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pw = np.array([est.fit(X[idx]).dimension_ for idx in knn], dtype=np.float64)
        return pw, knn

    def fit_pw(self, X: Any, precomputed_knn: Any = None, smooth: bool = False, n_neighbors: int = 100,
               n_jobs: int = 1) -> "GlobalAdapter":
        """``dimension_pw_``: the estimator fitted on each point's ``n_neighbors`` nearest neighbours (the point
        excluded) or on the rows of ``precomputed_knn``; ``smooth`` adds ``dimension_pw_smooth_``."""
        pw, knn = self._pointwise(X, precomputed_knn, n_neighbors)
        self.dimension_pw_ = pw
        self.n_features_in_ = int(np.asarray(X).shape[1])
        if smooth:
            self.dimension_pw_smooth_ = smooth_per_point(pw, knn)
        return self

    def fit_transform_pw(self, X: Any, precomputed_knn: Any = None, smooth: bool = False, n_neighbors: int = 100,
                         n_jobs: int = 1) -> Any:
        """:meth:`fit_pw`'s ``dimension_pw_`` (and ``dimension_pw_smooth_`` with ``smooth``), not stored."""
        pw, knn = self._pointwise(X, precomputed_knn, n_neighbors)
        return (pw, smooth_per_point(pw, knn)) if smooth else pw


class LocalAdapter(Adapter):
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
            raise missing_option(type(self).__name__, "precomputed_knn_arrays on data with duplicate rows")
        dists, idx = (np.asarray(a) for a in precomputed_knn_arrays)
        k = est.neighbors_needed()
        nb = Neighbors(np.asarray(dists[:, :k], dtype=np.float64) * prep.scale, np.asarray(idx[:, :k]),
                       "precomputed", True, 0)
        return est.fit_prepared(prep, est.plan_batches(prep), [nb])

    def fit(self, X: Any, y: Any = None, precomputed_knn_arrays: Any = None, smooth: bool = False,
            n_neighbors: int | None = None, comb: str = "mean", n_jobs: int = 1) -> "LocalAdapter":
        """Pointwise estimates on each point's ``n_neighbors`` neighbours (``dimension_pw_``), combined by ``comb``
        into ``dimension_``; ``smooth`` adds ``dimension_pw_smooth_``."""
        if comb not in self._COMBS:
            raise ValueError(f"Invalid comb parameter. It has to be one of {', '.join(map(repr, self._COMBS))}")
        X = check_points(X)
        n = len(X)
        if n < 2:  # scikit-dimension's ensure_min_samples=2, in scikit-learn's wording
            raise TTLabInputError(f"Found array with {n} sample(s) (shape={X.shape}) while a minimum of 2 is "
                                  f"required by {type(self).__name__} (n_samples = {n}).")
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
            self.dimension_pw_ = per_row_estimates(Xa, est.pointwise_dimension_, est.point_indices_)
        self.n_neighbors_, self.comb_ = k, comb
        if smooth and hasattr(self, "dimension_pw_"):
            knn = precomputed_knn_arrays[1][:, :k] if precomputed_knn_arrays is not None else (
                kneighbors(Xa, k).indices)
            self.dimension_pw_smooth_ = smooth_per_point(self.dimension_pw_, knn)
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


def asPointwise(X: Any, class_instance: GlobalAdapter, precomputed_knn: Any = None, n_neighbors: int = 100,
                n_jobs: int = 1) -> np.ndarray:
    """scikit-dimension's ``skdim.asPointwise``: a global estimator fitted on each point's neighbourhood."""
    return class_instance.fit_transform_pw(X, precomputed_knn=precomputed_knn, n_neighbors=n_neighbors)
