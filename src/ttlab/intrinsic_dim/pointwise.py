"""Pointwise estimates for every estimator (scikit-dimension's ``fit_pw`` and ``smooth=True``).

- :func:`fit_pw`: a global estimator fitted on each point's ``k`` nearest neighbours (the point itself
  excluded, as scikit-dimension), one estimate per point; neighbours from the shared exact search.
- :func:`smooth_pointwise`: each point's estimate averaged with those of its ``k`` neighbours
  (scikit-dimension's ``dimension_pw_smooth_``), for any pointwise estimates.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.base import IDEstimator
from ttlab.intrinsic_dim.knn import kneighbors_prepared
from ttlab.intrinsic_dim.validate import check_points
from ttlab.validation import check_int


@dataclass
class Pointwise:
    """Pointwise estimates (one per row of the input), their neighbourhood average, and the neighbours used."""

    dimension_pw: np.ndarray
    dimension_pw_smooth: np.ndarray
    indices: np.ndarray


def smooth_pointwise(pw: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Mean of each point's estimate and its neighbours' (``indices``: (n, k) neighbour rows)."""
    pw = np.asarray(pw, dtype=np.float64)
    return (pw + pw[indices].sum(axis=1)) / (indices.shape[1] + 1)


def fit_pw(estimator: IDEstimator, X: Any, k: int = 100) -> Pointwise:
    """Fit a copy of ``estimator`` (same parameters) on each point's ``k`` nearest neighbours.

    Exact duplicate rows are not dropped here (the neighbourhoods are of the rows as given); an
    estimator raises on a neighbourhood it cannot handle, naming the point."""
    X = check_points(X)
    k = check_int(k, "k", 2)
    if len(X) <= k:
        raise TTLabInputError(f"fit_pw with k = {k} neighbours needs at least {k + 1} points; got {len(X)}.")
    params = estimator.get_params()
    nb = kneighbors_prepared(X, k, backend=params.get("backend", "auto"), device=params.get("device"))
    out = np.empty(len(X))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one warning per neighbourhood would drown the output
        for i, idx in enumerate(nb.indices):
            try:
                out[i] = type(estimator)(**params).fit(X[idx]).dimension_
            except TTLabInputError as exc:
                raise TTLabInputError(f"point {i}'s neighbourhood: {exc}") from None
    return Pointwise(out, smooth_pointwise(out, nb.indices), nb.indices)
