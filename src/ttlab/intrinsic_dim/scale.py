"""The intrinsic dimension against the scale it is read at: :func:`id_scale` (``ttlab id scale``), DADApy's two
definitions.

**2NN by decimation** (Facco et al., "Estimating the intrinsic dimension of datasets by a minimal neighborhood
information", Sci. Rep. 7, 12140 (2017); DADApy's ``return_id_scaling_2NN``). TwoNN reads the first two neighbours,
so its scale is the typical neighbour distance, which grows as points are removed. At level ``i = 0, 1, 2, …`` the
(deduplicated) points are shuffled with ``seed`` and cut into ``2^i`` disjoint subsets of ``m = N // 2^i`` points
(the ``N - 2^i m`` left over are not used), while ``m >= min_points``; TwoNN (:func:`~ttlab.intrinsic_dim.twonn.
twonn_from_distances`: the slope of ``-log(1 - i/m)`` against the sorted ``log mu``, the largest ``discard_fraction``
dropped, as DADApy's ``algorithm='base'``) is fitted on each of the first ``max_subsets`` of them. A level reports the
mean over its subsets, their standard deviation (ddof 1) and the standard error of the mean ``std / sqrt(subsets)``
(DADApy's error, which uses ddof 0 and random subsets that may overlap; ttlab's are disjoint), and the scale
``r = mean over points of (r_1 + r_2) / 2`` (DADApy's ``rs_scaling``).

**GRIDE across neighbour orders** (Denti, Doimo, Laio and Mira, "The generalized ratios intrinsic dimension
estimator", Sci. Rep. 12, 20005 (2022); DADApy's ``return_id_scaling_gride``). On all points, the likelihood of
``mu = r_{n2} / r_{n1}`` (:func:`~ttlab.intrinsic_dim.gride.gride_mle`) at ``n1 = 1, 2, 4, …`` with ``n2 = 2 n1 <=
range_max``; each with its standard error (the inverse square root of the Fisher information at the estimate) and
the scale ``r = mean over points of (r_{n1} + r_{n2}) / 2``.

Which scale to read: the plateau. At the smallest scales noise of any amplitude ``σ`` makes the data fill every
direction, so the ID rises toward the ambient dimension for ``r`` below a few ``σ``; at the largest, curvature, the
data's edges and the finite number of points bend it (usually down). Between the two, where the curve is flat,
is the manifold's ID; a curve with no flat part has no single ID, and the plot says at which scale each value holds.
Radii are in the input's distance units (the ``metric``'s).
"""

from __future__ import annotations

import numbers
import time
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.base import PreparedPoints, prepare_points
from ttlab.intrinsic_dim.gride import gride_mle
from ttlab.intrinsic_dim.knn import BACKENDS, kneighbors_prepared
from ttlab.intrinsic_dim.twonn import TWONN_MIN_POINTS, twonn_from_distances
from ttlab.intrinsic_dim.validate import METRICS, to_metric_distances
from ttlab.validation import POSITIVE_INT, SEED, Declared, Interval, Options

__all__ = ["SCALE_METHODS", "GrideScale", "IDScaleResult", "IDScaleSettings", "TwoNNScale", "id_scale", "id_scale_with"]

SCALE_METHODS = ("2nn", "gride", "both")
"""The definitions :func:`id_scale` computes (``ttlab id scale --method``)."""


@dataclass
class TwoNNScale:
    """One decimation level of the 2NN ID: ``n_subsets`` disjoint subsets of ``n_points`` points each."""

    n_points: int
    n_subsets: int
    n_subsets_available: int
    radius: float
    dimension: float
    dimension_std: float
    dimension_sem: float
    dimensions: list[float]


@dataclass
class GrideScale:
    """GRIDE at one pair of neighbour orders ``n1``, ``n2 = 2 n1`` on all points."""

    n1: int
    n2: int
    radius: float
    dimension: float
    error: float


@dataclass
class IDScaleResult:
    """Outcome of :func:`id_scale`: the ID at each scale by 2NN (``twonn``) and GRIDE (``gride``), and provenance."""

    method: str
    twonn: list[TwoNNScale]
    gride: list[GrideScale]
    n_points: int
    n_features: int
    n_duplicates_removed: int
    metric: str
    seed: int
    settings: dict[str, Any]
    knn_backend: str
    seconds: float
    versions: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary."""
        return asdict(self)


@dataclass(frozen=True)
class IDScaleSettings(Declared):
    """What :func:`id_scale` computes and how (its parameters, documented there), checked when built: the one object
    the command and the file runner pass on."""

    method: str = "both"
    min_points: int = 20
    max_subsets: int = 64
    range_max: int = 64
    discard_fraction: float = 0.1
    seed: int = 0
    metric: str = "euclidean"
    backend: str = "auto"
    device: str | None = None

    parameter_constraints = {
        "method": [Options(SCALE_METHODS)],
        "min_points": [Interval(numbers.Integral, TWONN_MIN_POINTS, None, closed="left")],
        "max_subsets": POSITIVE_INT,
        "range_max": [Interval(numbers.Integral, 2, None, closed="left")],
        "discard_fraction": [Interval(numbers.Real, 0.0, 1.0, closed="neither")],
        "seed": SEED,
        "metric": [Options(METRICS)],
        "backend": [Options(BACKENDS)],
        "device": [str, None],
    }


def _distances(X: np.ndarray, k: int, metric: str, backend: str, device: str | None) -> tuple[np.ndarray, str]:
    """Sorted distances to the ``k`` nearest neighbours in ``metric`` (points already mapped), and the backend used."""
    nb = kneighbors_prepared(X, k, backend=backend, device=device)
    return to_metric_distances(nb.distances, metric), nb.backend


def _twonn_scales(prep: PreparedPoints, min_points: int, max_subsets: int, discard_fraction: float, seed: int,
                  backend: str, device: str | None) -> tuple[list[TwoNNScale], str]:
    """The 2NN ID at every decimation level N, N/2, N/4, … down to ``min_points`` points per subset."""
    n = prep.n
    rng = np.random.default_rng(seed)
    rows: list[TwoNNScale] = []
    used = ""
    level = 0
    while n >> level >= min_points:
        m, available = n >> level, 1 << level
        order = np.arange(n) if level == 0 else rng.permutation(n)
        dims, radii = [], []
        for j in range(min(available, max_subsets)):
            dist, used = _distances(prep.X[order[j * m:(j + 1) * m]], 2, prep.metric, backend, device)
            with np.errstate(divide="ignore", invalid="ignore"):  # all ratios 1 (quantized data): NaN, reported
                dims.append(twonn_from_distances(dist, discard_fraction))
            radii.append(float(dist.mean()) / prep.scale)
        d = np.asarray(dims)
        std = float(d.std(ddof=1)) if len(d) > 1 else 0.0
        rows.append(TwoNNScale(m, len(d), available, float(np.mean(radii)), float(d.mean()), std,
                               std / float(np.sqrt(len(d))), [float(v) for v in d]))
        level += 1
    return rows, used


def _gride_scales(prep: PreparedPoints, range_max: int, backend: str, device: str | None
                  ) -> tuple[list[GrideScale], str]:
    """GRIDE at n1 = 1, 2, 4, … (n2 = 2 n1 <= min(range_max, N - 1)) on all points, from one neighbour search."""
    k = min(range_max, prep.n - 1)
    dist, used = _distances(prep.X, k, prep.metric, backend, device)
    rows = []
    for n1 in (1 << i for i in range(int(np.log2(k)))):
        d, err = gride_mle(dist, n1, 2 * n1)
        radius = float(dist[:, [n1 - 1, 2 * n1 - 1]].mean()) / prep.scale
        rows.append(GrideScale(n1, 2 * n1, radius, d, err))
    return rows, used


_DEFAULT = IDScaleSettings()  # one home for the defaults: id_scale's keywords read them


def id_scale(
    X: Any,
    method: str = _DEFAULT.method,
    *,
    min_points: int = _DEFAULT.min_points,
    max_subsets: int = _DEFAULT.max_subsets,
    range_max: int = _DEFAULT.range_max,
    discard_fraction: float = _DEFAULT.discard_fraction,
    seed: int = _DEFAULT.seed,
    metric: str = _DEFAULT.metric,
    backend: str = _DEFAULT.backend,
    device: str | None = _DEFAULT.device,
) -> IDScaleResult:
    """The intrinsic dimension of the rows of ``X`` against the scale ``r`` it is read at (module docstring).

    ``method``: '2nn' (TwoNN on disjoint subsets of N, N/2, N/4, … points, down to ``min_points``, default 20 —
    DADApy's ``N_min`` is 10, but at 10–15 points TwoNN reads about 10 % high on uniform data —; at most
    ``max_subsets`` subsets per level, default 64 — a large number uses every one, as DADApy does —; the shuffle is
    seeded by ``seed``), 'gride' (n1 = 1, 2, 4, … with n2 = 2 n1 <= ``range_max``, default 64 as DADApy's) or
    'both'. ``discard_fraction``: TwoNN's (0.1, DADApy's ``fraction = 0.9``). Exact duplicate rows are dropped first,
    with a warning."""
    return id_scale_with(X, IDScaleSettings(method, min_points, max_subsets, range_max, discard_fraction, seed, metric,
                                            backend, device))


def id_scale_with(X: Any, settings: IDScaleSettings) -> IDScaleResult:
    """:func:`id_scale` with its parameters as one checked :class:`IDScaleSettings`."""
    from ttlab.provenance import versions

    t0 = time.perf_counter()
    method, min_points, metric, seed = settings.method, settings.min_points, settings.metric, settings.seed
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prep = prepare_points(X, metric)
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    need = min_points if method != "gride" else 3
    if prep.n < need:
        dup = f" after removing {prep.n_duplicates} duplicate(s)" if prep.n_duplicates else ""
        what = f"min_points = {min_points} points per subset" if method != "gride" else "GRIDE with n1 = 1, n2 = 2"
        raise TTLabInputError(f"id_scale ({what}) needs at least {need} distinct points; got {prep.n}{dup}.",
                              params=("min_points",) if method != "gride" else ())
    twonn: list[TwoNNScale] = []
    gride: list[GrideScale] = []
    used = ""
    if method in ("2nn", "both"):
        twonn, used = _twonn_scales(prep, min_points, settings.max_subsets, settings.discard_fraction, seed,
                                    settings.backend, settings.device)
    if method in ("gride", "both"):
        gride, used = _gride_scales(prep, settings.range_max, settings.backend, settings.device)
    recorded = {"min_points": min_points, "max_subsets": settings.max_subsets, "range_max": settings.range_max,
                "discard_fraction": settings.discard_fraction, "backend": settings.backend}
    return IDScaleResult(method, twonn, gride, prep.n_input, int(prep.X.shape[1]), prep.n_duplicates, metric, seed,
                         recorded, used, time.perf_counter() - t0, versions())
