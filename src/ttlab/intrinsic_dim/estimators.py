"""Intrinsic-dimension estimators with a scikit-learn-style API.

Every estimator takes its parameters in ``__init__`` and ``fit(X)`` sets ``dimension_`` and
``pointwise_dimension_`` (plus diagnostics). Shared options:

- ``metric``: 'euclidean', 'chord' (Euclidean distance between the unit-scaled rows,
  ``sqrt(2 (1 - cos))``) or 'cosine' (``1 - cos`` as in scipy/scikit-learn, half the chord's MLE;
  only for the estimators that read neighbour distances alone), see
  :data:`ttlab.intrinsic_dim._validate.METRICS`.
- ``batch_size``: ``None`` fits all points at once. An integer runs the paper's protocol:
  the (deduplicated) points are shuffled with ``seed``, split into batches of ``batch_size``,
  the estimator is fitted per batch, and ``dimension_`` is the mean of the batch values
  (``batch_dimensions_``, ``dimension_std_``). A last, smaller batch is dropped
  (``remainder='drop'``, default: every batch then has the same size, so the batch values are
  identically distributed), merged into the previous batch ('merge') or kept ('keep').
- exact duplicates are dropped with a :class:`DuplicatePointsWarning` and counted in
  ``n_duplicates_removed_`` (a zero distance would give an ID of 0 or infinity).
- ``backend``, ``block_size``, ``device``: neighbour search, see :func:`ttlab.intrinsic_dim.knn.kneighbors`.

Conventions (identical to scikit-dimension 0.5, checked to 1e-6 in the tests):

- MLE (Levina–Bickel): with ``T_1 <= ... <= T_K`` the distances to the K nearest neighbours
  (the point itself excluded), the pointwise estimate is ``(K - 1) / sum_{j<K} log(T_K / T_j)``
  (``K - 2`` with ``unbiased=True``). ``K`` here is scikit-dimension's ``n_neighbors`` argument of
  ``MLE.fit`` (its constructor's ``K`` is unused in the default neighbourhood mode).
  ``average='mean'`` is scikit-dimension's ``comb='mean'`` (what the paper's code used),
  ``'harmonic'`` is its default ``comb='mle'`` (MacKay–Ghahramani: 1 / mean(1 / pointwise)),
  ``'median'`` is ``comb='median'``.
- TwoNN (Facco et al. 2017): ``mu = r_2 / r_1``; the largest ``discard_fraction`` of the
  ratios is discarded and the slope of ``-log(1 - i/N)`` against ``log mu_(i)`` through the origin
  is the ID (``method='linear'``, scikit-dimension's default); ``method='mle'`` is the censored
  closed-form MLE.
- GRIDE (Denti et al. 2022): likelihood of ``mu = r_{n2} / r_{n1}``, with DADApy's conventions
  (``N - 1`` in place of ``N``; ratios above ``q50 + 20 (q95 - q50)`` dropped).

Parameters are declared in each class's ``_parameter_constraints`` (scikit-learn's convention,
:func:`ttlab.validation.validate_params`) and checked when ``fit`` starts; checks that depend on other
parameters stay in ``_check_params``.

Imports: numpy, scipy, torch (lazily), ttlab.errors, ttlab.validation, ttlab.intrinsic_dim (_params, _validate, knn,
mle_variants, protocol); never ttlab.cli.
"""

from __future__ import annotations

import math
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np
from scipy.optimize import brentq

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim._params import ParamsMixin
from ttlab.intrinsic_dim._validate import (
    METRICS,
    apply_metric,
    check_metric,
    check_points,
    drop_duplicates,
    to_metric_distances,
)
from ttlab.intrinsic_dim.knn import BACKENDS, Neighbors, kneighbors_prepared
from ttlab.intrinsic_dim.mle_variants import DNOISE
from ttlab.intrinsic_dim.protocol import PAPER
from ttlab.validation import Interval, Options, check_choice, check_int, validate_params

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

LENGTH_ATTRIBUTES = ("radii_", "radius_scales_")
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


def _combine(pw: np.ndarray, average: str) -> float:
    finite = pw[np.isfinite(pw)]
    if len(finite) < len(pw):
        warnings.warn(
            f"{len(pw) - len(finite)} point(s) have all K neighbours at the same distance, so their "
            "pointwise estimate is undefined; they are left out of the average.",
            DegeneratePointsWarning,
            stacklevel=4,
        )
    if not len(finite):
        raise TTLabInputError(
            "every point has all K neighbours at the same distance (e.g. one-hot or lattice rows), so the MLE is "
            "undefined: distance ratios carry no dimension here. A larger K helps only if farther neighbours lie "
            "at other distances."
        )
    if average == "mean":
        return float(np.mean(finite))
    if average == "harmonic":
        return float(1.0 / np.mean(1.0 / finite))
    return float(np.median(finite))


class MLE(IDEstimator):
    """Levina–Bickel maximum-likelihood estimator with K neighbours.

    ``average``: 'mean' (arithmetic mean of pointwise estimates; the paper's code), 'harmonic'
    (MacKay–Ghahramani, less biased) or 'median'. ``unbiased=True`` uses K − 2 instead of K − 1.
    scikit-dimension's options (:mod:`ttlab.intrinsic_dim.mle_variants`): ``dnoise='dnoiseGaussH'``
    with ``sigma`` (Haro et al.'s Gaussian noise correction) and ``neighborhood_based=False`` (one
    global estimate from the ``k`` smallest distinct distances among every point's ``global_k``
    nearest neighbours; scikit-dimension's ``K``).
    """

    name = "mle"
    distance_only = True
    _parameter_constraints: dict[str, Any] = {
        **IDEstimator._parameter_constraints,
        "k": [Interval(Integral, 2, None, closed="left")],  # >= 3 with unbiased=True (_check_params)
        "average": [Options(AVERAGES)],
        "unbiased": "no_validation",
        "dnoise": [None, Options(DNOISE)],
        "sigma": "no_validation",  # > 0 when dnoise is given (_check_params)
        "neighborhood_based": "no_validation",
        "global_k": "no_validation",  # >= 1 when neighborhood_based=False (_check_params)
    }

    def __init__(
        self,
        k: int = PAPER.k,
        average: str = "mean",
        unbiased: bool = False,
        dnoise: str | None = None,
        sigma: float = 0.0,
        neighborhood_based: bool = True,
        global_k: int = 5,
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
        self.k = k
        self.average = average
        self.unbiased = unbiased
        self.dnoise = dnoise
        self.sigma = sigma
        self.neighborhood_based = neighborhood_based
        self.global_k = global_k

    def _check_params(self) -> None:
        if self.unbiased:
            check_int(self.k, "k", 3)
        if self.dnoise is not None:
            if isinstance(self.sigma, bool) or not isinstance(self.sigma, (int, float)) or not self.sigma > 0:
                raise TTLabInputError(f"dnoise={self.dnoise!r} needs a noise scale sigma > 0; got sigma={self.sigma!r}.")
        if not self.neighborhood_based:
            check_int(self.global_k, "global_k", 1)

    def fit(self, X: Any, y: Any = None) -> "MLE":
        """Estimate the ID of the rows of ``X``; warns (:class:`SmallKWarning`) when K is too small to trust it."""
        super().fit(X, y)
        for msg in small_k_warnings(int(self.k), self.dimension_, self.average, self.unbiased):
            warnings.warn(msg, SmallKWarning, stacklevel=2)
        return self

    def _n_neighbors(self) -> int:
        return int(self.k) if self.neighborhood_based else int(self.global_k)

    def _from_distances(self, dist: np.ndarray) -> tuple[float, np.ndarray | None, dict[str, Any]]:
        import ttlab.intrinsic_dim.mle_variants as mv

        if not self.neighborhood_based:
            radii = mv.global_radii(dist, int(self.k))
            return mv.mle_from_radii(radii, self.unbiased, float(self.sigma), self.dnoise), None, {}
        if self.dnoise is not None:
            pw = mv.mle_pointwise_noisy(dist, float(self.sigma), self.unbiased)
        else:
            pw = mle_pointwise(dist, unbiased=self.unbiased)
        return _combine(pw, self.average), pw, {}


MLE_MIN_K = 10
"""Below this many neighbours the MLE is flagged (see :func:`small_k_warnings`)."""


class SmallKWarning(UserWarning):
    """The MLE used too few neighbours for its estimate to be trusted."""


def small_k_warnings(k: int, dimension: float, average: str = "mean", unbiased: bool = False) -> list[str]:
    """Why an MLE with ``k`` neighbours that gave ``dimension`` should not be trusted (empty when fine).

    Rule: for locally uniform data the pointwise estimate is (K − 1)/Γ(K − 1, d) (inverse gamma), so
    its relative spread is 1/√(K − 3) (infinite for K ≤ 3) and the arithmetic mean of pointwise
    estimates is biased by the factor (K − 1)/(K − 2) (with the K − 2 numerator, or the harmonic combination, the bias vanishes).
    Flag K < :data:`MLE_MIN_K` (bias ≥ 12.5 %, spread ≥ 38 %), and an estimate above K, which
    K neighbours cannot resolve (the neighbourhood is dominated by curvature, noise and boundaries).
    """
    out = []
    if k < MLE_MIN_K:
        spread = "infinite" if k <= 3 else f"{100 / math.sqrt(k - 3):.0f} %"
        if average == "mean" and not unbiased:
            bias = ("; their mean has no finite expectation" if k <= 2
                    else f"; their mean is biased upwards by {100 / (k - 2):.0f} %")
        else:
            bias = ""
        out.append(
            f"MLE with K = {k} neighbours is unreliable: a pointwise estimate has relative spread {spread}{bias} "
            f"(locally uniform data); use K ≥ {MLE_MIN_K} (the paper uses {PAPER.k})."
        )
    if math.isfinite(dimension) and dimension > k:
        out.append(
            f"the estimate {dimension:.3g} exceeds K = {k}: {k} neighbours cannot resolve a dimension that high; "
            "increase K (and the number of points)."
        )
    return out


def mle_pointwise(dist: np.ndarray, unbiased: bool = False) -> np.ndarray:
    """Levina–Bickel pointwise estimates from sorted neighbour distances ``dist`` (n, K), all > 0.

    ``(K − 1) / sum_{j<K} log(T_K / T_j)`` (``K − 2`` if ``unbiased``); ``inf`` where all K
    distances are equal.
    """
    K = dist.shape[1]
    s = np.log(dist[:, -1:] / dist[:, :-1]).sum(axis=1)
    with np.errstate(divide="ignore"):
        return (K - 2 if unbiased else K - 1) / s


TWONN_MIN_POINTS = 10
"""TwoNN fits a line through the empirical distribution of the ratios r2/r1; with fewer points (after
the discarded fraction, ~8) that line is meaningless (3 points gave 12.6 on planar data)."""


class TwoNN(IDEstimator):
    """TwoNN (Facco et al. 2017) from the ratio of second to first neighbour distances.

    ``discard_fraction`` (default 0.1, the paper's) of the largest ratios is discarded.
    ``method='linear'`` fits the empirical distribution (the paper's estimator);
    ``method='mle'`` is the closed-form censored MLE. ``pointwise_dimension_`` holds the
    one-point estimates ``1 / log(mu)`` (very noisy; for diagnostics).
    """

    name = "twonn"
    distance_only = True
    _parameter_constraints: dict[str, Any] = {
        **IDEstimator._parameter_constraints,
        "discard_fraction": [Interval(Real, 0, 1, closed="left")],
        "method": [Options(("linear", "mle"))],
    }

    def __init__(
        self,
        discard_fraction: float = 0.1,
        method: str = "linear",
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
        self.discard_fraction = discard_fraction
        self.method = method

    def _check_params(self) -> None:
        if self.method == "linear" and self.discard_fraction == 0:
            raise TTLabInputError(
                "TwoNN method='linear' needs discard_fraction > 0: the largest ratio has empirical CDF 1, "
                "and -log(1 - 1) is infinite. Use discard_fraction=0.1 (the paper's) or method='mle'."
            )

    def _n_neighbors(self) -> int:
        return 2

    def _min_points(self) -> int:
        return TWONN_MIN_POINTS

    def _from_distances(self, dist: np.ndarray) -> tuple[float, np.ndarray, dict[str, Any]]:
        mu_all = dist[:, 1] / dist[:, 0]
        with np.errstate(divide="ignore"):
            pw = 1.0 / np.log(mu_all)
        N = len(mu_all)
        n_keep = int(N * (1 - self.discard_fraction))
        if n_keep < 2:
            raise TTLabInputError(
                f"TwoNN keeps {n_keep} of {N} points after discarding {self.discard_fraction:.0%}; "
                "it needs at least 2 (use more points or a smaller discard_fraction)."
            )
        log_mu = np.log(np.sort(mu_all)[:n_keep])
        if self.method == "mle":
            d = (n_keep - 1) / (np.sum(log_mu) + (N - n_keep) * log_mu[-1])
        else:
            y = -np.log(1 - np.arange(1, n_keep + 1) / N)
            d = float(np.dot(log_mu, y) / np.dot(log_mu, log_mu))
        return float(d), pw, {}


class GRIDE(IDEstimator):
    """GRIDE (Denti et al. 2022): likelihood of the ratio ``r_{n2} / r_{n1}``.

    Larger ``n1`` looks at a larger scale, which makes the estimate robust to small noise.
    ``n2`` defaults to ``2 * n1``. With ``multiscale=True`` it also reports the estimates at
    ``n1 = 1, 2, 4, ...`` (``n2 = 2 n1 <= range_max``) in ``scales_``, ``dimension_scales_``,
    ``error_scales_`` and ``radius_scales_`` (mean distance to the ``n2``-th neighbour): a plateau
    across scales is the ID; a rise at small scales is noise. ``error_`` is the standard error.
    """

    name = "gride"
    distance_only = True
    _parameter_constraints: dict[str, Any] = {
        **IDEstimator._parameter_constraints,
        "n1": [Interval(Integral, 1, None, closed="left")],
        "n2": [Interval(Integral, 2, None, closed="left"), None],
        "multiscale": "no_validation",
        "range_max": "no_validation",  # >= 2 when multiscale=True (_check_params)
    }

    def __init__(
        self,
        n1: int = 10,
        n2: int | None = None,
        multiscale: bool = False,
        range_max: int = 64,
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
        self.n1 = n1
        self.n2 = n2
        self.multiscale = multiscale
        self.range_max = range_max

    def _n2(self) -> int:
        return 2 * int(self.n1) if self.n2 is None else int(self.n2)

    def _check_params(self) -> None:
        if not self._n2() > self.n1:
            raise TTLabInputError(f"GRIDE needs n2 > n1; got n1={self.n1}, n2={self._n2()}.")
        if self.multiscale:
            check_int(self.range_max, "range_max", 2)

    def _n_neighbors(self) -> int:
        return max(self._n2(), int(self.range_max)) if self.multiscale else self._n2()

    def _min_points(self) -> int:
        return self._n2() + 1 if not self.multiscale else self._n_neighbors() + 1

    def _from_distances(self, dist: np.ndarray) -> tuple[float, np.ndarray, dict[str, Any]]:
        n1, n2 = int(self.n1), self._n2()
        d, err = gride_mle(dist, n1, n2)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_mu = np.log(dist[:, n2 - 1] / dist[:, n1 - 1])
        extra: dict[str, Any] = {"error_": err}
        if self.multiscale:
            rmax = min(int(self.range_max), dist.shape[1])
            scales = 2 ** np.arange(int(np.log2(rmax)))
            res = np.array([gride_mle(dist, s, 2 * s) for s in scales])
            extra.update(
                scales_=scales,
                dimension_scales_=res[:, 0],
                error_scales_=res[:, 1],
                radius_scales_=dist[:, 2 * scales - 1].mean(axis=0),
            )
        return d, _gride_pointwise(log_mu, n1, n2), extra


def gride_mle(dist: np.ndarray, n1: int, n2: int) -> tuple[float, float]:
    """GRIDE estimate and its standard error from sorted neighbour distances (n, >= n2)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        log_mu = np.log(dist[:, n2 - 1] / dist[:, n1 - 1])
    ok = np.isfinite(log_mu) & (log_mu > 0)
    if not ok.all():
        warnings.warn(
            f"GRIDE (n1={n1}, n2={n2}): {int((~ok).sum())} point(s) with tied neighbour distances skipped.",
            DegeneratePointsWarning,
            stacklevel=3,
        )
        log_mu = log_mu[ok]
    if len(log_mu):
        q95, q50 = np.percentile(np.exp(log_mu), [95, 50])
        log_mu = log_mu[np.exp(log_mu) < 20 * (q95 - q50) + q50]
    N = len(log_mu)
    if N < 2:
        raise TTLabInputError(f"GRIDE (n1={n1}, n2={n2}) has fewer than 2 usable points.")
    sum_log = float(np.sum(log_mu))

    def score(d: float) -> float:
        return (N - 1) / d + (n2 - n1 - 1) * float(np.sum(log_mu / -np.expm1(-d * log_mu))) - (n2 - 1) * sum_log

    hi = 1.0
    while score(hi) > 0:
        hi *= 2
    d = brentq(score, 1e-8, hi, xtol=1e-12, rtol=1e-12)
    info = N / d**2 + (n2 - n1 - 1) * float(np.sum((log_mu / (2 * np.sinh(d * log_mu / 2))) ** 2))
    return float(d), float(1 / math.sqrt(info))


def _gride_pointwise(log_mu: np.ndarray, n1: int, n2: int, iters: int = 80) -> np.ndarray:
    """One-point GRIDE likelihood roots (bisection in log d); ``inf`` where ``mu == 1``."""
    out = np.full(log_mu.shape, np.inf)
    ok = np.isfinite(log_mu) & (log_mu > 0)
    L = log_mu[ok]
    if n2 - n1 - 1 == 0:  # Pareto: closed form
        out[ok] = 1.0 / L
        return out
    lo, hi = np.full(L.shape, -30.0), np.full(L.shape, 30.0)  # bracket in log d
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        d = np.exp(mid)
        s = 1.0 / d + (n2 - n1 - 1) * L / -np.expm1(-d * L) - (n2 - 1) * L
        pos = s > 0
        lo = np.where(pos, mid, lo)
        hi = np.where(pos, hi, mid)
    out[ok] = np.exp(0.5 * (lo + hi))
    return out


METHODS = {"mle": MLE, "twonn": TwoNN, "gride": GRIDE}
