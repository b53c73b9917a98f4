"""One-call estimation with a self-describing result (config, versions), and the paper's protocol.

:class:`IDProtocol` and :data:`PAPER` (paper B's K, batch size, average, seed, remainder) live in
:mod:`ttlab.intrinsic_dim.protocol`; :func:`paper_protocol` applies them here.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.binomial import BID
from ttlab.intrinsic_dim.compare import estimator_interval
from ttlab.intrinsic_dim.gride import GRIDE
from ttlab.intrinsic_dim.mle import MLE
from ttlab.intrinsic_dim.protocol import PAPER
from ttlab.intrinsic_dim.twonn import TwoNN
from ttlab.intrinsic_dim.twonn_bayes import TwoNNBayes
from ttlab.provenance import versions
from ttlab.validation import check_choice

METHODS = {"mle": MLE, "twonn": TwoNN, "gride": GRIDE, "twonn_bayes": TwoNNBayes, "bid": BID}
"""The estimators :func:`make_estimator` and :func:`estimate_id` build, by name (``ttlab id estimate --method``):
``twonn_bayes`` (the TwoNN posterior with its credible interval) and ``bid`` (the binomial estimator with its
Cramér–Rao interval) report ``extras['interval']``."""

Estimator = MLE | TwoNN | GRIDE | TwoNNBayes | BID
"""What :func:`make_estimator` builds and :func:`fit_estimate` takes."""


@dataclass
class IDResult:
    """Outcome of :func:`estimate_id`: the estimate, how it was obtained, and provenance."""

    method: str
    dimension: float
    n_points: int
    n_duplicates_removed: int
    n_used: int
    batches: list[float] | None
    batch_sizes: list[int]
    dimension_std: float
    dimension_sem: float
    config: dict[str, Any]
    neighbors: dict[str, Any]
    extras: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    versions: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary (numpy values converted)."""
        out = asdict(self)
        out["extras"] = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in self.extras.items()}
        return out


def make_estimator(
    method: str = "mle",
    *,
    k: int = PAPER.k,
    average: str = PAPER.average,
    unbiased: bool = False,
    metric: str = "euclidean",
    batch_size: int | None = None,
    seed: int = PAPER.seed,
    remainder: str = PAPER.remainder,
    backend: str = "auto",
    block_size: int = 2048,
    device: str | None = None,
    discard_fraction: float = 0.1,
    multiscale: bool = False,
    level: float = 0.95,
) -> Estimator:
    """Build an estimator from flat options; ``k`` means K for MLE and BID, and ``n2`` (with ``n1 = k // 2``) for
    GRIDE; ``level`` is the interval's of ``twonn_bayes`` and ``bid`` (default priors and ratio: see their classes)."""
    check_choice(method, "method", tuple(METHODS))
    common = dict(
        metric=metric, batch_size=batch_size, seed=seed, remainder=remainder,
        backend=backend, block_size=block_size, device=device,
    )
    if method == "mle":
        return MLE(k=k, average=average, unbiased=unbiased, **common)
    if method == "twonn":
        return TwoNN(discard_fraction=discard_fraction, **common)
    if method == "twonn_bayes":
        return TwoNNBayes(level=level, **common)
    if method == "bid":
        return BID(k=k, level=level, **common)
    n1 = max(1, int(k) // 2) if isinstance(k, (int, np.integer)) and not isinstance(k, bool) else k
    return GRIDE(n1=n1, n2=k, multiscale=multiscale, **common)


def estimate_id(X: Any, method: str = "mle", **options: Any) -> IDResult:
    """Estimate the intrinsic dimension of ``X`` and return an :class:`IDResult`.

    ``options`` are those of :func:`make_estimator` (a convenience for one call; :func:`fit_estimate` takes the
    estimator object). Warnings (duplicates dropped, degenerate points) are re-emitted and also recorded in
    ``IDResult.warnings``.
    """
    return fit_estimate(make_estimator(method, **options), X)


def fit_estimate(est: Estimator, X: Any) -> IDResult:
    """Fit the estimator ``est`` (one of :data:`METHODS`, e.g. built by :func:`make_estimator`) to ``X`` and return
    an :class:`IDResult` (its ``config`` names the method and the estimator's parameters)."""
    method = next((name for name, cls in METHODS.items() if type(est) is cls), None)
    if method is None:
        raise TTLabInputError(f"fit_estimate takes one of {', '.join(c.__name__ for c in METHODS.values())}, "
                              f"got {type(est).__name__}", params=("estimator",))
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X)
    seconds = time.perf_counter() - t0
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    extras: dict[str, Any] = {}
    for key in ("error_", "scales_", "dimension_scales_", "error_scales_", "radius_scales_", "posterior_std_"):
        if hasattr(est, key):
            extras[key.rstrip("_")] = getattr(est, key)
    interval = estimator_interval(est)
    if interval is not None:
        extras["interval"] = interval
    nb = len(est.batch_sizes_)
    config = {"method": method, **est.get_params()}
    if method == "gride":
        config["k"] = est.n2  # make_estimator's k is GRIDE's n2
    return IDResult(
        method=method,
        dimension=est.dimension_,
        n_points=est.n_points_,
        n_duplicates_removed=est.n_duplicates_removed_,
        n_used=est.n_used_,
        batches=None if est.batch_dimensions_ is None else [float(v) for v in est.batch_dimensions_],
        batch_sizes=[int(v) for v in est.batch_sizes_],
        dimension_std=est.dimension_std_,
        dimension_sem=est.dimension_std_ / np.sqrt(nb) if nb > 1 else 0.0,
        config=config,
        neighbors={"backend": est.neighbors_backend_, "exact": est.neighbors_backend_ != "faiss-hnsw",
                   "n_fallback_rows": est.n_fallback_},
        extras=extras,
        warnings=[str(w.message) for w in caught],
        seconds=seconds,
        versions=versions(extra=("scikit-learn", "scikit-dimension", "faiss-cpu")),
    )


def paper_protocol(
    X: Any,
    *,
    batch_size: int = PAPER.batch_size,
    k: int = PAPER.k,
    average: str = PAPER.average,
    unbiased: bool = False,
    seed: int = PAPER.seed,
    **options: Any,
) -> IDResult:
    """Havrilla & Liao's ID protocol: shuffle (seeded), batches of ``batch_size``, MLE with ``k``
    neighbours per batch, pointwise estimates combined by ``average`` (the authors: arithmetic
    'mean'; 'harmonic' is MacKay–Ghahramani), batch values averaged. Returns per-batch values,
    their mean (``dimension``) and spread (``dimension_std``, ``dimension_sem``).
    """
    return estimate_id(
        X, "mle", k=k, average=average, unbiased=unbiased, batch_size=batch_size, seed=seed, **options
    )


__all__ = ["METHODS", "Estimator", "IDResult", "estimate_id", "make_estimator", "paper_protocol"]
