"""The base of the intrinsic-dimension estimators: :class:`IDEstimator`, a scikit-learn-style API, and what every
estimator shares — parameter checks, the metric map, duplicate removal, the protocol's batches, the neighbour search.

Every estimator takes its parameters in ``__init__`` and ``fit(X)`` sets ``dimension_`` and
``pointwise_dimension_`` (plus diagnostics). Shared options:

- ``metric``: 'euclidean', 'chord' (Euclidean distance between the unit-scaled rows,
  ``sqrt(2 (1 - cos))``) or 'cosine' (``1 - cos`` as in scipy/scikit-learn, half the chord's MLE;
  only for the estimators that read neighbour distances alone), see
  :data:`ttlab.intrinsic_dim.validate.METRICS`.
- ``batch_size``: ``None`` fits all points at once. An integer runs the paper's protocol:
  the (deduplicated) points are shuffled with ``seed``, split into batches of ``batch_size``,
  the estimator is fitted per batch, and ``dimension_`` is the mean of the batch values
  (``batch_dimensions_``, ``dimension_std_``). A last, smaller batch is dropped
  (``remainder='drop'``, default: every batch then has the same size, so the batch values are
  identically distributed), merged into the previous batch ('merge') or kept ('keep').
- exact duplicates are dropped with a :class:`DuplicatePointsWarning` and counted in
  ``n_duplicates_removed_`` (a zero distance would give an ID of 0 or infinity).
- ``backend``, ``block_size``, ``device``: neighbour search, see :func:`ttlab.intrinsic_dim.knn.kneighbors`.

Parameters are declared in each class's ``_parameter_constraints`` (scikit-learn's convention,
:func:`ttlab.validation.validate_params`) and checked when ``fit`` starts; checks that depend on other
parameters stay in ``_check_params``.

The estimators, one family per module: :mod:`~ttlab.intrinsic_dim.mle`, :mod:`~ttlab.intrinsic_dim.twonn` and
:mod:`~ttlab.intrinsic_dim.gride`; and, numerically equal to scikit-dimension 0.5's for the same settings,
:mod:`~ttlab.intrinsic_dim.lpca`, :mod:`~ttlab.intrinsic_dim.local` (MOM, MADA), :mod:`~ttlab.intrinsic_dim.tle`,
:mod:`~ttlab.intrinsic_dim.ess`, :mod:`~ttlab.intrinsic_dim.corrint`, :mod:`~ttlab.intrinsic_dim.mind` (MiND_ML,
DANCo), :mod:`~ttlab.intrinsic_dim.fisher_s`, :mod:`~ttlab.intrinsic_dim.knn_length` (KNN) and
:mod:`~ttlab.intrinsic_dim.ph`. Those take scikit-dimension's defaults, so the same data give the same number with
no options; where ttlab differs the class docstring says so; in short:

- combination of pointwise estimates: scikit-dimension's ``comb='mean'`` (the default of its
  local estimators' ``fit``) is ``average='mean'``; ``'median'`` is ``comb='median'``.
  Non-finite pointwise values are left out with a :class:`DegeneratePointsWarning`
  (scikit-dimension returns NaN).
- randomised estimators (DANCo's calibration) default to ``random_state=0`` rather than an
  unseeded generator, so the same call gives the same number; with the same integer seed the
  random draws are scikit-dimension's (NumPy ``RandomState``), so the results agree.
- duplicates are dropped (scikit-dimension degenerates on them: zero distances).
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim._params import ParamsMixin
from ttlab.intrinsic_dim.knn import BACKENDS, kneighbors_prepared
from ttlab.intrinsic_dim.neighbors import Neighbors
from ttlab.intrinsic_dim.validate import (
    METRICS,
    apply_metric,
    check_metric,
    check_points,
    drop_duplicates,
    to_metric_distances,
)
from ttlab.validation import Interval, Options, check_choice, validate_params

AVERAGES = ("mean", "harmonic", "median")
REMAINDERS = ("drop", "merge", "keep")


class DegeneratePointsWarning(UserWarning):
    """Some points had undefined pointwise estimates (all K neighbours equidistant) and were skipped."""


def split_batches(n: int, batch_size: int, seed: int, remainder: str = "drop") -> list[np.ndarray]:
    """Shuffle ``range(n)`` with ``seed`` and cut it into batches of ``batch_size``.

    With fewer than ``batch_size`` points there is one batch of all of them. Otherwise a last
    partial batch is dropped, merged into the previous one, or kept (``remainder``).
    """
    check_choice(remainder, "remainder", REMAINDERS)
    perm = np.random.default_rng(seed).permutation(n)
    if n <= batch_size:
        return [perm]
    n_full = n // batch_size
    batches = [perm[i * batch_size : (i + 1) * batch_size] for i in range(n_full)]
    rest = perm[n_full * batch_size :]
    if len(rest):
        if remainder == "merge":
            batches[-1] = np.concatenate([batches[-1], rest])
        elif remainder == "keep":
            batches.append(rest)
    return batches


@dataclass(frozen=True)
class PreparedPoints:
    """Validated points after the metric map and duplicate removal, shared by estimators.

    ``X``: the distinct (mapped) points; ``kept``: their row indices in the input;
    ``n_input``: input rows; ``n_duplicates``: rows dropped as exact duplicates; ``scale``: the
    power of two the input was multiplied by (see :func:`scale_to_safe_range`)."""

    X: np.ndarray
    kept: np.ndarray
    n_input: int
    n_duplicates: int
    metric: str
    scale: float = 1.0

    @property
    def n(self) -> int:
        """Number of distinct points."""
        return int(self.X.shape[0])


SAFE_MAGNITUDE_LOG2 = 40
"""Inputs whose largest absolute coordinate lies outside [2^-40, 2^40] are multiplied by a power of two
first: squared distances (in float32 for the neighbour search and the pair counts) would otherwise
overflow or lose their precision in subnormals (CorrInt read 0.0 at ×1e-23, ESS failed at ×1e160)."""

LENGTH_ATTRIBUTES = ("radii_", "radius_scales_", "radius_")
"""Fitted attributes measured in the input's distance units (divided by ``PreparedPoints.scale``)."""


def scale_to_safe_range(X: np.ndarray) -> tuple[np.ndarray, float]:
    """``(X * 2^e, 2^e)`` with ``e`` chosen so the largest absolute value is about 1, when it lies
    outside [2^-40, 2^40]; otherwise ``(X, 1.0)``. A power of two is exact in floating point, so
    every scale-free estimate is unchanged, up to rounding at ordinary magnitudes."""
    m = float(np.max(np.abs(X)))
    if m == 0 or abs(math.log2(m)) <= SAFE_MAGNITUDE_LOG2:
        return X, 1.0
    e = -math.frexp(m)[1]
    return np.ldexp(X, e).astype(X.dtype, copy=False), math.ldexp(1.0, e)


def prepare_points(X: Any, metric: str = "euclidean") -> PreparedPoints:
    """Validate ``X``, bring extreme magnitudes into a safe range (a power of two), map it for
    ``metric`` and drop exact duplicates (with a warning)."""
    check_metric(metric)
    X = check_points(X)
    n_input = X.shape[0]
    X, scale = scale_to_safe_range(X)
    Xm = apply_metric(X, metric)
    Xm, kept, n_dup = drop_duplicates(Xm, metric)
    return PreparedPoints(Xm, kept, n_input, n_dup, metric, scale if metric == "euclidean" else 1.0)


def truncate_neighbors(nb: Neighbors, k: int) -> Neighbors:
    """The first ``k`` neighbours of a larger exact search (identical to searching with ``k``)."""
    if nb.distances.shape[1] < k:
        raise TTLabInputError(f"precomputed neighbours have {nb.distances.shape[1]} columns; {k} are needed.")
    if nb.distances.shape[1] == k:
        return nb
    return Neighbors(nb.distances[:, :k], nb.indices[:, :k], nb.backend, nb.exact, nb.n_fallback)


class IDEstimator(ParamsMixin):
    """Base class of the ID estimators. Shared fit logic: validation, metric, duplicates, batching, neighbour
    search; the scikit-learn parameter contract (``get_params``, ``set_params``, ``__repr__``) comes from
    :class:`ParamsMixin`, the declared parameter checks from ``_parameter_constraints``."""

    name = "base"
    distance_only = False
    """True when the estimate reads the neighbour distances alone (no coordinates), so it is defined
    for ``metric='cosine'`` (1 − cos, not a Euclidean distance)."""
    _parameter_constraints: dict[str, Any] = {
        "metric": [Options(METRICS)],
        "remainder": [Options(REMAINDERS)],
        "backend": [Options(BACKENDS)],
        "seed": [Interval(Integral, 0, None, closed="left")],
        "batch_size": [Interval(Integral, 2, None, closed="left"), None],
        "block_size": "no_validation",  # checked by the neighbour search
        "device": "no_validation",  # checked by the neighbour search
    }
    """The options every estimator shares; each subclass adds its own (scikit-learn's ``_parameter_constraints``)."""

    def __init__(
        self,
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

    def _set_common(self, metric: str, batch_size: int | None, seed: int, remainder: str, backend: str,
                    block_size: int, device: str | None) -> None:
        """Store the options every estimator shares (metric, batches, neighbour search); each
        estimator's ``__init__`` lists them as keywords (scikit-learn's ``get_params`` reads them there)."""
        self.metric = metric
        self.batch_size = batch_size
        self.seed = seed
        self.remainder = remainder
        self.backend = backend
        self.block_size = block_size
        self.device = device

    # -- to implement -------------------------------------------------------------------------
    def _n_neighbors(self) -> int:
        raise NotImplementedError

    def _min_points(self) -> int:
        return self._n_neighbors() + 1

    def _from_distances(self, dist: np.ndarray) -> tuple[float, np.ndarray, dict[str, Any]]:
        raise NotImplementedError

    def _check_params(self) -> None:
        """Checks that :attr:`_parameter_constraints` cannot declare (one parameter's range set by another)."""

    # -- shared -------------------------------------------------------------------------------
    def check_params(self) -> None:
        """Check every parameter now, as :meth:`fit` does first (a command checks its estimator's settings before a
        long step that precedes the fit); raises :class:`TTLabInputError` naming the first bad one."""
        self._validate_common()

    def _validate_common(self) -> None:
        validate_params(self.get_params(deep=False), self._parameter_constraints)
        if self.metric == "cosine" and not self.distance_only:
            raise TTLabInputError(
                f"{type(self).__name__} uses the points' coordinates, and metric 'cosine' (1 − cos) is not a "
                "Euclidean distance; use metric='chord' (sqrt(2 (1 − cos)), the Euclidean distance between the "
                "unit-scaled rows). 'cosine' works with MLE, TwoNN, GRIDE, MOM, MADA and MiND_ML."
            )
        self._check_params()

    def _from_neighbors(self, X: np.ndarray, nb: Neighbors | None) -> tuple[float, np.ndarray | None, dict[str, Any]]:
        """Estimate from one batch's points ``X`` and their neighbours (``None`` when k = 0).

        Estimators that only need the sorted distances implement :meth:`_from_distances`."""
        return self._from_distances(nb.distances)  # type: ignore[union-attr]

    def _prepare(self, X: Any) -> PreparedPoints:
        """Validate, apply the metric and drop duplicates (shared by every estimator on the same data)."""
        self._validate_common()
        return prepare_points(X, self.metric)

    def _batches(self, prep: PreparedPoints) -> list[np.ndarray]:
        """Check there are enough points and cut them into the protocol's batches."""
        need = self._min_points()
        n = prep.n
        dup_note = f" after removing {prep.n_duplicates} duplicate(s)" if prep.n_duplicates else ""
        if n < need:
            raise TTLabInputError(
                f"{self._needs()} at least {need} distinct points; got {n}{dup_note} (n_samples = {n})."
            )
        if self.batch_size is None:
            return [np.arange(n)]
        if self.batch_size < need and n > self.batch_size:
            raise TTLabInputError(
                f"batch_size={self.batch_size} is too small: {self._needs()} at least {need} points per batch."
            )
        batches = split_batches(n, self.batch_size, self.seed, self.remainder)
        if len(batches[-1]) < need:  # remainder='keep' with a tiny last batch
            raise TTLabInputError(
                f"the last batch has {len(batches[-1])} points; {self._needs()} at least {need}. "
                "Use remainder='drop' or 'merge'."
            )
        return batches

    def fit(self, X: Any, y: Any = None) -> "IDEstimator":
        """Estimate the intrinsic dimension of the rows of ``X`` (n_points, n_features)."""
        prep = self._prepare(X)
        return self.fit_prepared(prep, self._batches(prep))

    # -- several estimators on one neighbour search (ttlab.intrinsic_dim.compare) ---------------
    def neighbors_needed(self) -> int:
        """Neighbours per point this estimator reads (0: it needs no neighbour search)."""
        return self._n_neighbors()

    def plan_batches(self, prep: PreparedPoints) -> list[np.ndarray]:
        """Check the parameters and that ``prep`` has enough points; the protocol's batches (row indices of
        ``prep.X``), which :meth:`fit_prepared` takes."""
        self._validate_common()
        return self._batches(prep)

    def fit_prepared(
        self, prep: PreparedPoints, batches: list[np.ndarray], neighbors: list[Neighbors] | None = None
    ) -> "IDEstimator":
        """Fit on points :func:`prepare_points` made, cut into ``batches`` (:meth:`plan_batches`); ``neighbors`` (one
        per batch, with at least :meth:`neighbors_needed` columns) reuses a search shared with other estimators."""
        self._validate_common()
        Xm = prep.X
        dims, pws, extras, n_fallback, backend = [], [], [], 0, ""
        for nb, dim, pw, extra in self._run_batches(Xm, batches, neighbors):
            if nb is not None:
                n_fallback += nb.n_fallback
                backend = nb.backend
            dims.append(dim)
            pws.append(pw)
            extras.append(extra)
        dims_arr = np.asarray(dims, dtype=float)
        self.dimension_ = float(dims_arr.mean())
        self.pointwise_dimension_ = None if any(p is None for p in pws) else np.concatenate(pws)
        self.point_indices_ = prep.kept[np.concatenate(batches)]
        self.batch_dimensions_ = dims_arr if self.batch_size is not None else None
        self.batch_sizes_ = np.array([len(b) for b in batches])
        self.dimension_std_ = float(dims_arr.std(ddof=1)) if len(dims_arr) > 1 else 0.0
        self.n_points_ = prep.n_input
        self.n_features_in_ = int(prep.X.shape[1])
        self.n_duplicates_removed_ = prep.n_duplicates
        self.n_used_ = int(self.batch_sizes_.sum())
        self.neighbors_backend_ = backend or "none"
        self.n_fallback_ = n_fallback
        for key in extras[0]:
            vals = [e[key] for e in extras]
            setattr(self, key, vals[0] if len(vals) == 1 or key == "scales_" else _mean_of(vals))
            if key in LENGTH_ATTRIBUTES:
                setattr(self, key, getattr(self, key) / prep.scale)
        return self

    def _run_batches(
        self, Xm: np.ndarray, batches: list[np.ndarray], neighbors: list[Neighbors] | None = None
    ) -> list[tuple[Neighbors | None, float, np.ndarray | None, dict]]:
        """Fit every batch. On the CPU, batches run concurrently, one per core, each on one thread:
        the selection steps between matrix products are serial, so whole batches in parallel keep
        every core busy (results are identical to a sequential run)."""
        k = self._n_neighbors()

        def one(i: int) -> tuple[Neighbors | None, float, np.ndarray | None, dict]:
            idx = batches[i]
            # a whole-range batch (no batch_size) is a view, not a copy of every point
            contiguous = idx.size > 0 and bool(np.all(np.diff(idx) == 1))
            Xb = Xm[idx[0]: idx[-1] + 1] if contiguous else Xm[idx]
            if k == 0:
                nb = None
            elif neighbors is not None:
                nb = truncate_neighbors(neighbors[i], k)
            else:
                nb = kneighbors_prepared(Xb, k, backend=self.backend, block_size=self.block_size, device=self.device)
            if nb is not None and self.metric == "cosine":
                nb = Neighbors(to_metric_distances(nb.distances, "cosine"), nb.indices, nb.backend, nb.exact,
                               nb.n_fallback)
            return (nb, *self._from_neighbors(Xb, nb))

        import torch

        on_cpu = self.backend in ("auto", "torch") and (
            self.device == "cpu" or (self.device in (None, "auto") and not torch.cuda.is_available())
        )
        workers = min(len(batches), torch.get_num_threads()) if on_cpu else 1
        if workers <= 1:
            return [one(i) for i in range(len(batches))]
        previous = torch.get_num_threads()

        def job(i: int) -> tuple[Neighbors | None, float, np.ndarray | None, dict]:
            torch.set_num_threads(1)
            return one(i)

        try:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                return list(pool.map(job, range(len(batches))))
        finally:
            torch.set_num_threads(previous)

    def fit_transform(self, X: Any, y: Any = None) -> float:
        """Fit and return the estimate ``dimension_`` (scikit-dimension's ``fit_transform``)."""
        return self.fit(X, y).dimension_

    def fit_transform_pw(self, X: Any, y: Any = None) -> np.ndarray:
        """Fit and return the pointwise estimates (aligned with ``point_indices_``; scikit-dimension's
        ``fit_transform_pw``); raises for an estimator that gives only a global estimate."""
        pw = self.fit(X, y).pointwise_dimension_
        if pw is None:
            raise TTLabInputError(
                f"{self!r} gives one global estimate, no pointwise estimates; use .fit(X).dimension_."
            )
        return pw

    def _needs(self) -> str:
        return f"{type(self).__name__} with {self._n_neighbors()} neighbour(s) needs"


def _mean_of(vals: list[Any]) -> Any:
    if isinstance(vals[0], (int, float, np.floating)):
        return float(np.mean(vals))
    try:
        return np.mean(np.stack(vals), axis=0)
    except ValueError:
        return vals[0]
