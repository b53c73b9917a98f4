"""Statistics of one point set as a whole (scikit-dimension's ``fit_once`` and DANCo's statistics).

- :func:`ess_single_neighbourhood`: ESS of a set that *is* one neighbourhood (scikit-dimension's
  ``ESS.fit_once``): the simplices of the centred points, their volume-to-edge ratio, inverted
  through the uniform-ball reference. Returns the estimate and the raw ESS value.
- :func:`danco_statistics`: DANCo's statistics of a data set (MiND_MLk estimate ``dhat``, the
  mean von Mises location ``mu_nu`` and concentration ``mu_tau`` of neighbour angles), the
  numbers DANCo compares with its calibration (scikit-dimension's ``_dancoDimEstNoCalibration``).

Both reuse the estimators' code in :mod:`ttlab.intrinsic_dim.ess` and :mod:`ttlab.intrinsic_dim.mind`;
nothing is re-derived.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.validate import check_points
from ttlab.validation import check_choice, check_int


def ess_single_neighbourhood(X: Any, ver: str = "a", d: int = 1, random_state: int = 0) -> tuple[float, float]:
    """ESS of the rows of ``X`` as one neighbourhood: ``(dimension, essval)``.

    ``C(n, d + 1) <= 5000`` simplices: all; more: 5,000 drawn with ``numpy.random.default_rng(random_state)``
    in scikit-dimension's order (as :class:`~ttlab.intrinsic_dim.ESS` does per neighbourhood)."""
    from ttlab.intrinsic_dim.ess import ess_dimension, ess_value, sample_combinations

    X = check_points(X).astype(np.float64)
    check_choice(ver, "ESS version", ("a", "b"))
    check_int(d, "d", 1)
    if ver == "b" and d != 1:
        raise TTLabInputError("ESS ver='b' supports d = 1 only.")
    n, D = X.shape
    p = d + 1
    if n < p:
        raise TTLabInputError(f"ESS with d = {d} needs at least {p} points; got {n}.")
    if p > D:
        essval = 0.0 if ver == "a" else 1.0
    else:
        V = X - X.mean(axis=0)
        G = V @ V.T
        ln = np.sqrt(np.einsum("ij,ij->i", V, V))
        ncomb = math.comb(n, p)
        groups = (np.array(list(itertools.combinations(range(n), p))) if ncomb <= 5000
                  else sample_combinations(n, p, ncomb, np.random.default_rng(random_state)))
        essval = ess_value(G, ln, groups, ver)
    return ess_dimension(essval, ver, d), float(essval)


def danco_statistics(X: Any, k: int = 10, D: int | None = None) -> dict[str, float]:
    """DANCo's statistics of the rows of ``X`` with ``k`` neighbours, MiND_MLk maximised over [0, ``D``]
    (default: the number of features): ``{'dhat', 'mu_nu', 'mu_tau'}``."""
    from ttlab.intrinsic_dim.mind import danco_stats, exact_knn_low_dim

    X = check_points(X)
    k = check_int(k, "k", 2)
    D = X.shape[1] if D is None else check_int(D, "D", 1)
    if len(X) < k + 2:
        raise TTLabInputError(f"DANCo statistics with k = {k} need at least {k + 2} points; got {len(X)}.")
    nb = exact_knn_low_dim(X, k + 1, "auto", 2048, None)
    return danco_stats(X, nb, D, k)
