"""Many ID estimators on the same data, with one shared neighbour search: :func:`compare`.

The points are validated, mapped for the metric and deduplicated once; the batches (paper
protocol) are cut once; the exact k nearest neighbours of every batch are computed once with the
largest k any selected estimator needs, and each kNN-based estimator reads its first k columns
(identical to its own search). Each row reports the estimate, its spread over the batches, the
estimator's own time (the shared search is timed separately) and the exponents the estimate
predicts, α_D = 2β/(2β + d̂) and α_N = 2β/d̂ (Havrilla & Liao, Theorems 1–2). The estimators that give an interval
for d (``twonn_bayes``: the posterior's credible interval; ``bid``: the Cramér–Rao Wald interval) report it in the
row's ``interval``.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.base import IDEstimator, PreparedPoints, prepare_points
from ttlab.intrinsic_dim.binomial import BID
from ttlab.intrinsic_dim.corrint import CorrInt
from ttlab.intrinsic_dim.ess import ESS
from ttlab.intrinsic_dim.fisher_s import FisherS
from ttlab.intrinsic_dim.gride import GRIDE
from ttlab.intrinsic_dim.knn import BACKENDS, kneighbors_prepared
from ttlab.intrinsic_dim.knn_length import KNN
from ttlab.intrinsic_dim.local import MADA, MOM
from ttlab.intrinsic_dim.lpca import LPCA
from ttlab.intrinsic_dim.mind import DANCo, MiND_ML
from ttlab.intrinsic_dim.mle import MLE
from ttlab.intrinsic_dim.neighbors import Neighbors
from ttlab.intrinsic_dim.ph import PH
from ttlab.intrinsic_dim.protocol import PAPER
from ttlab.intrinsic_dim.tle import TLE
from ttlab.intrinsic_dim.twonn import TwoNN
from ttlab.intrinsic_dim.twonn_bayes import TwoNNBayes
from ttlab.intrinsic_dim.validate import check_metric
from ttlab.validation import check_choice, check_int

DANCO_MAX_DIM = 48
"""``compare`` calibrates DANCo on balls of dimension 1..min(n_features, 48) (scikit-dimension:
1..n_features, which costs one neighbour search per dimension — 768 for a GPT-2-size model)."""

# name -> (description, factory(n_features) -> estimator options)
_Spec = tuple[str, Callable[[int], tuple[type[IDEstimator], dict[str, Any]]]]
COMPARE_METHODS: dict[str, _Spec] = {
    "mle": (f"MLE, K = {PAPER.k}, arithmetic mean (the paper's)",
            lambda D: (MLE, {"k": PAPER.k, "average": PAPER.average})),
    "mle_harmonic": (f"MLE, K = {PAPER.k}, harmonic mean (MacKay–Ghahramani)",
                     lambda D: (MLE, {"k": PAPER.k, "average": "harmonic"})),
    "mle_median": (f"MLE, K = {PAPER.k}, median", lambda D: (MLE, {"k": PAPER.k, "average": "median"})),
    "twonn": ("TwoNN, 10 % discarded, linear fit", lambda D: (TwoNN, {})),
    "twonn_bayes": ("TwoNN posterior, Gamma(1, 0.1) prior, all ratios: mean and 95 % credible interval (ttlab's; as "
                    "DADApy's compute_id_2NN_wprior)", lambda D: (TwoNNBayes, {})),
    "gride": ("GRIDE, n1 = 1, n2 = 2 (scikit-dimension's default; ttlab's GRIDE class defaults to n1 = 10)",
              lambda D: (GRIDE, {"n1": 1})),
    "tle": ("TLE, k = 20", lambda D: (TLE, {})),
    "mom": ("MOM, k = 100", lambda D: (MOM, {})),
    "mada": ("MADA, k = 20", lambda D: (MADA, {})),
    "mind_ml": ("MiND_MLk, k = 20, D = n_features (scikit-dimension: D = 10)", lambda D: (MiND_ML, {"D": D})),
    "corrint": ("correlation dimension, k1 = 10, k2 = 20", lambda D: (CorrInt, {})),
    "danco": (f"DANCo, k = 10, D = min(n_features, {DANCO_MAX_DIM}), seed 0",
              lambda D: (DANCo, {"D": min(D, DANCO_MAX_DIM)})),
    "ess": ("ESS, ver a, k = 100", lambda D: (ESS, {})),
    "lpca": ("PCA (Fukunaga–Olsen, 5 %), global: dimension of the linear span", lambda D: (LPCA, {})),
    "lpca_pr": ("PCA participation ratio, global", lambda D: (LPCA, {"ver": "participation_ratio"})),
    "fishers": ("Fisher separability, conditional number 10, margins 0.60–0.98", lambda D: (FisherS, {})),
    "knn": ("kNN graph length, k = 2, samples of 3–6 points, seed 0 (scikit-dimension's defaults: noisy)",
            lambda D: (KNN, {})),
    "ph": ("PH0 (minimum spanning tree) dimension, alpha = 1, 20 sizes x 5 subsamples of 50–100 %, seed 0 "
           "(scikit-dimension: 100 x 10)", lambda D: (PH, {"nsteps": 20, "subsamples": 5})),
    "bid": ("binomial ID (BID), k = 20, ratio 0.9: MLE and 95 % Cramér–Rao interval (ttlab's; as DADApy's "
            "compute_id_binomial_k)", lambda D: (BID, {})),
}
"""Estimators of :func:`compare` and their settings (scikit-dimension's defaults, except where noted; ``twonn_bayes``
and ``bid`` are not in scikit-dimension)."""

ALIASES = {"mle_mean": "mle", "mle_mle": "mle_harmonic", "twonn_posterior": "twonn_bayes", "binomial": "bid"}

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
"""The estimators equal to scikit-dimension's, by name (with their own defaults, not :data:`COMPARE_METHODS`' settings)."""


@dataclass
class CompareRow:
    """One estimator's result on the shared data; ``interval`` (estimators that give one, else None):
    ``{"low", "high", "level", "kind"}``."""

    method: str
    description: str
    dimension: float | None
    dimension_std: float
    batches: list[float] | None
    seconds: float
    alpha_d: float | None
    alpha_n: float | None
    n_neighbors: int
    config: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    interval: dict[str, Any] | None = None


@dataclass
class CompareResult:
    """Outcome of :func:`compare`: one row per estimator, the shared search, provenance."""

    rows: list[CompareRow]
    beta: float
    n_points: int
    n_features: int
    n_duplicates_removed: int
    n_used: int
    batch_size: int | None
    n_batches: int
    seed: int
    metric: str
    knn_k: int
    knn_seconds: float
    knn_backend: str
    total_seconds: float
    versions: dict[str, str] = field(default_factory=dict)

    def ids(self) -> dict[str, float]:
        """``{method: d̂}`` of the estimators that produced a number."""
        return {r.method: r.dimension for r in self.rows if r.dimension is not None}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary."""
        return asdict(self)

    def table(self) -> list[dict[str, Any]]:
        """One flat row per estimator: ``method``, ``dimension``, ``dimension_std``, ``alpha_d``, ``alpha_n``,
        ``seconds`` and ``notes`` (joined)."""
        return [{"method": r.method, "dimension": r.dimension, "dimension_std": r.dimension_std, "alpha_d": r.alpha_d,
                 "alpha_n": r.alpha_n, "seconds": r.seconds, "notes": "; ".join(r.notes)} for r in self.rows]

    def to_frame(self) -> Any:
        """:meth:`table` as a ``pandas.DataFrame`` (pandas is optional: ``pip install pandas``)."""
        try:
            import pandas as pd
        except ImportError:
            raise TTLabInputError("to_frame needs pandas: pip install pandas (or use table() / to_dict()).") from None
        return pd.DataFrame(self.table())

    def __repr__(self) -> str:  # one line: the rows and their batches stay out
        shown = ", ".join(f"{m} {d:.2f}" for m, d in list(self.ids().items())[:6])
        more = f", … ({len(self.rows)} estimators)" if len(self.rows) > 6 else ""
        return f"CompareResult({self.n_used} of {self.n_points} points × {self.n_features}: {shown}{more})"

    def _repr_html_(self) -> str:
        import html

        fmt = (lambda v, f: "—" if v is None else format(v, f))  # noqa: E731
        cells = "".join(f"<tr><td>{html.escape(r['method'])}</td><td>{fmt(r['dimension'], '.3f')}</td>"
                        f"<td>{fmt(r['dimension_std'], '.3f')}</td><td>{fmt(r['alpha_d'], '.4f')}</td>"
                        f"<td>{fmt(r['alpha_n'], '.4f')}</td></tr>" for r in self.table())
        return (f"<p>{html.escape(repr(self))}</p><table><tr><th>estimator</th><th>d̂</th><th>std over batches</th>"
                f"<th>α_D</th><th>α_N</th></tr>{cells}</table>")


def parse_methods(methods: str | list[str] | tuple[str, ...] | None) -> list[str]:
    """``'all'``, ``None``, a comma-separated string or a list of names → validated method names."""
    if methods is None or methods == "all" or (not isinstance(methods, str) and list(methods) == ["all"]):
        return list(COMPARE_METHODS)
    names = [m.strip().lower() for m in methods.split(",")] if isinstance(methods, str) else [str(m).lower() for m in methods]
    names = [ALIASES.get(m, m) for m in names if m]
    if not names:
        raise TTLabInputError("no estimator given; use 'all' or names such as mle,twonn.")
    for m in names:
        check_choice(m, "ID estimator", tuple(COMPARE_METHODS))
    return list(dict.fromkeys(names))


def predicted_exponents(d: float | None, beta: float) -> tuple[float | None, float | None]:
    """(α_D, α_N) = (2β/(2β + d), 2β/d) that an ID estimate ``d`` predicts at Hölder exponent ``beta``; (None, None)
    for a missing, non-finite or non-positive ``d``."""
    if d is None or not math.isfinite(d) or d <= 0:
        return None, None
    return 2 * beta / (2 * beta + d), 2 * beta / d


LOCAL_ESTIMATORS = (MLE, TLE, MOM, MADA, ESS)
"""Estimators whose estimate comes from each point's K neighbours alone: above K it is unresolved."""

TIE_NOTE_FRACTION = 0.01
"""Share of points with tied neighbour distances above which a row is flagged (quantized data)."""


def tie_fraction(nbs: list[Neighbors], k: int) -> float:
    """Share of points whose ``k`` nearest distances contain a tie (quantized or rounded data)."""
    if k < 2:
        return 0.0
    # equal to 1e-9 relative: exact ties of quantized data, and ulp-level ones (one-hot rows at √2)
    tied = [np.any(nb.distances[:, 1:k] <= nb.distances[:, : k - 1] * (1 + 1e-9), axis=1) for nb in nbs]
    return float(np.mean(np.concatenate(tied)))


def support_notes(est: IDEstimator, d: float, n_batch: int, n_features: int, ties: float) -> list[str]:
    """Why the data cannot support the estimate ``d`` of ``est`` (fitted on batches of ``n_batch``
    distinct points): above n − 1, above K for a local estimator, tied distances, one feature."""
    notes: list[str] = []
    if not math.isfinite(d):
        return notes
    if d > (n_batch - 1) * (1 + 1e-9):
        notes.append(f"d̂ = {d:.3g} exceeds n − 1 = {n_batch - 1}: {n_batch} points span at most {n_batch - 1} "
                     "dimensions, so the data cannot support it (use more points)")
    k = est.neighbors_needed()
    if isinstance(est, LOCAL_ESTIMATORS) and d > k * (1 + 1e-9):
        notes.append(f"d̂ = {d:.3g} exceeds K = {k}: {k} neighbours cannot resolve a dimension that high "
                     "(increase K and the number of points)")
    if ties > TIE_NOTE_FRACTION:
        notes.append(f"{ties:.0%} of points have tied distances among their {k} nearest neighbours "
                     "(quantized or rounded data?): estimates from distance ratios are biased there")
    if n_features == 1:
        notes.append("the data have one feature, so the ID is at most 1")
    return notes


def _prepare_estimators(
    names: list[str], D: int, common: dict[str, Any], prep: PreparedPoints, skip: bool
) -> tuple[dict[str, IDEstimator], dict[str, list[np.ndarray]], dict[str, list[str]]]:
    """Each estimator of ``names`` (options for ``D`` features), checked and with its batches; with ``skip``,
    one that cannot run on these points gets a note instead of raising. Returns (estimators, batches, notes)."""
    ests: dict[str, IDEstimator] = {}
    batches: dict[str, list[np.ndarray]] = {}
    notes: dict[str, list[str]] = {m: [] for m in names}
    for m in names:
        cls, opts = COMPARE_METHODS[m][1](D)
        est = cls(**opts, **common)
        try:
            batches[m] = est.plan_batches(prep)
            ests[m] = est
        except TTLabInputError as exc:
            if not skip:
                raise TTLabInputError(f"{m}: {exc}") from None
            notes[m].append(f"skipped: {exc}")
    return ests, batches, notes


def _compare_row(
    m: str, est: IDEstimator, prep: PreparedPoints, batches: list[np.ndarray], nbs: list[Neighbors] | None,
    notes: list[str], beta: float, skip: bool,
) -> CompareRow:
    """Fit one estimator on the prepared points (reusing the shared neighbours) and report it as a row."""
    desc = COMPARE_METHODS[m][0]
    D = prep.X.shape[1]
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            est.fit_prepared(prep, batches, nbs if est.neighbors_needed() > 0 else None)
        except TTLabInputError as exc:  # undefined on these data (e.g. every neighbour distance tied)
            if not skip:
                raise TTLabInputError(f"{m}: {exc}") from None
            return CompareRow(m, desc, None, 0.0, None, time.perf_counter() - t0, None, None,
                              int(est.neighbors_needed()), {}, [*notes, f"no estimate: {exc}"])
    secs = time.perf_counter() - t0
    notes.extend(dict.fromkeys(str(w.message) for w in caught))
    d = float(est.dimension_)
    cap = getattr(est, "D", None)
    if isinstance(est, (MiND_ML, DANCo)) and cap is not None and math.isfinite(d) and d >= int(cap) - 0.5:
        notes.append(f"estimate at its upper bound D = {int(cap)}: the ID may be larger")
    ties = tie_fraction(nbs, est.neighbors_needed()) if nbs is not None else 0.0
    notes.extend(support_notes(est, d, min(len(b) for b in batches), D, ties))
    ad, an = predicted_exponents(d, beta)
    params = {k: v for k, v in est.get_params().items() if k not in ("backend", "block_size", "device")}
    return CompareRow(
        m, desc, d if math.isfinite(d) else None, float(est.dimension_std_),
        None if est.batch_dimensions_ is None else [float(v) for v in est.batch_dimensions_],
        secs, ad, an, int(est.neighbors_needed()), params, notes, estimator_interval(est),
    )


def estimator_interval(est: IDEstimator) -> dict[str, Any] | None:
    """The interval for d a fitted estimator gives (``dimension_interval_`` at its ``level``: :class:`TwoNNBayes`,
    :class:`BID`) as ``{"low", "high", "level", "kind"}``, or None. With batches it is one batch's interval,
    averaged over the batches (the spread of the batch estimates is in ``dimension_std``)."""
    iv = getattr(est, "dimension_interval_", None)
    if iv is None:
        return None
    kind = getattr(est, "interval_kind", "interval")
    if getattr(est, "batch_dimensions_", None) is not None:
        kind += " of one batch, averaged over the batches"
    return {"low": float(iv[0]), "high": float(iv[1]), "level": float(getattr(est, "level")), "kind": kind}


def compare(
    X: Any,
    methods: str | list[str] | tuple[str, ...] | None = "all",
    *,
    paper: bool = False,
    batch_size: int | None = None,
    seed: int = 0,
    beta: float = 1.0,
    metric: str = "euclidean",
    remainder: str = "drop",
    backend: str = "auto",
    device: str | None = None,
    skip_infeasible: bool | None = None,
) -> CompareResult:
    """Run several ID estimators on ``X`` with one shared neighbour search.

    ``paper=True`` uses the paper's protocol for every estimator (shuffled, seeded batches of
    ``batch_size``, default ``PAPER.batch_size`` = 4,096; estimates averaged; spread = std over batches).
    ``skip_infeasible`` (default: True for ``methods='all'``, else False): an estimator needing
    more points than a batch has is reported with ``dimension=None`` and a note instead of raising.
    """
    from ttlab.provenance import versions
    from ttlab.scaling.theory import check_beta

    t_start = time.perf_counter()
    all_requested = methods is None or methods == "all"
    names = parse_methods(methods)
    beta = check_beta(beta)
    check_metric(metric)
    check_choice(backend, "backend", BACKENDS)
    check_int(seed, "seed", 0)
    if paper and batch_size is None:
        batch_size = PAPER.batch_size
    if batch_size is not None:
        check_int(batch_size, "batch_size", 2)
    skip = all_requested if skip_infeasible is None else bool(skip_infeasible)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prep = prepare_points(X, metric)
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if prep.n == 1:
        raise TTLabInputError(
            f"all {prep.n_input} rows of X are identical, so there is no intrinsic dimension to estimate; "
            "check that the file holds the points you mean (e.g. embeddings of different tokens)."
        )
    D = prep.X.shape[1]
    common = dict(metric=metric, batch_size=batch_size, seed=seed, remainder=remainder, backend=backend, device=device)
    ests, batches, notes = _prepare_estimators(names, D, common, prep, skip)
    shared = next(iter(batches.values()), None)
    knn_k = max([e.neighbors_needed() for e in ests.values()], default=0)
    nbs: list[Neighbors] | None = None
    t0 = time.perf_counter()
    knn_backend = "none"
    if shared is not None and knn_k > 0:
        nbs = [kneighbors_prepared(prep.X[b], knn_k, backend=backend, device=device) for b in shared]
        knn_backend = nbs[0].backend
    knn_seconds = time.perf_counter() - t0
    rows = [_compare_row(m, ests[m], prep, batches[m], nbs, notes[m], beta, skip) if m in ests
            else CompareRow(m, COMPARE_METHODS[m][0], None, 0.0, None, 0.0, None, None, 0, {}, notes[m])
            for m in names]
    if all(r.dimension is None for r in rows):
        why = "; ".join(f"{r.method}: {' '.join(r.notes) or 'undefined'}" for r in rows)
        raise TTLabInputError(f"no estimator produced a number on these {prep.n} distinct points — {why}")
    n_used = int(sum(len(b) for b in shared)) if shared is not None else 0
    return CompareResult(
        rows=rows, beta=beta, n_points=prep.n_input, n_features=D, n_duplicates_removed=prep.n_duplicates,
        n_used=n_used, batch_size=batch_size, n_batches=len(shared) if shared is not None else 0, seed=seed,
        metric=metric, knn_k=knn_k, knn_seconds=knn_seconds, knn_backend=knn_backend,
        total_seconds=time.perf_counter() - t_start,
        versions=versions(extra=("scikit-learn", "scikit-dimension")),
    )


__all__ = ["COMPARE_METHODS", "DANCO_MAX_DIM", "MORE_METHODS", "CompareResult", "CompareRow", "compare",
           "estimator_interval", "parse_methods", "predicted_exponents"]
