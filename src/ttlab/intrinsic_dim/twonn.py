"""TwoNN (Facco et al. 2017): :class:`TwoNN`, from the ratio of second to first neighbour distances.

Conventions (identical to scikit-dimension 0.5, checked to 1e-6 in the tests): ``mu = r_2 / r_1``; the largest
``discard_fraction`` of the ratios is discarded and the slope of ``-log(1 - i/N)`` against ``log mu_(i)`` through
the origin is the ID (``method='linear'``, scikit-dimension's default); ``method='mle'`` is the censored
closed-form MLE.
"""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.base import IDEstimator
from ttlab.validation import Interval, Options

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
        with np.errstate(divide="ignore"):
            pw = 1.0 / np.log(dist[:, 1] / dist[:, 0])
        return twonn_from_distances(dist, self.discard_fraction, self.method), pw, {}


def twonn_from_distances(dist: np.ndarray, discard_fraction: float = 0.1, method: str = "linear") -> float:
    """The TwoNN estimate from each point's sorted distances to its first two neighbours (``dist``: (n, >= 2)),
    as :class:`TwoNN` computes it (also used per subset by :func:`ttlab.intrinsic_dim.scale.id_scale`)."""
    mu_all = dist[:, 1] / dist[:, 0]
    N = len(mu_all)
    n_keep = int(N * (1 - discard_fraction))
    if n_keep < 2:
        raise TTLabInputError(
            f"TwoNN keeps {n_keep} of {N} points after discarding {discard_fraction:.0%}; "
            "it needs at least 2 (use more points or a smaller discard_fraction)."
        )
    log_mu = np.log(np.sort(mu_all)[:n_keep])
    if method == "mle":
        return float((n_keep - 1) / (np.sum(log_mu) + (N - n_keep) * log_mu[-1]))
    y = -np.log(1 - np.arange(1, n_keep + 1) / N)
    return float(np.dot(log_mu, y) / np.dot(log_mu, log_mu))
