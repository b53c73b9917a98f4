"""Scaling laws from the intrinsic dimension of data (Havrilla & Liao 2024, paper B).

* :mod:`ttlab.scaling.theory` — α_D = 2β/(2β+d), α_N = 2β/d, their inverses, the ID-free
  conversions and the recomputed Table 1.
* :mod:`ttlab.scaling.band` — predictions as bands over ID estimators (:func:`prediction_band`).
* :mod:`ttlab.scaling.fit` — pure, offset and Chinchilla scaling-law fits with bootstrap
  intervals and goodness of fit (the forms and Huber objectives in :mod:`~ttlab.scaling.fit_models`, the
  optimisers in :mod:`~ttlab.scaling.fit_optimize`, checks and intervals in :mod:`~ttlab.scaling.fit_checks`).
* :mod:`ttlab.scaling.io` — reading measurements from CSV.
* :mod:`ttlab.scaling.plot` — log-log plot of data, fit and prediction (imports matplotlib lazily).
* :mod:`ttlab.scaling.analysis` — what both scaling experiments share: size grids, learning-rate
  selection, power-law fits and one JSON schema of a fitted exponent (:class:`FittedExponent`).
* :mod:`ttlab.scaling.figures` — the figures of the LM sweeps, the ID ablations and the manifold sweep.
* :mod:`ttlab.scaling.manifold_regression` — Theorem 1 tested by regression on manifolds (the networks in
  :mod:`~ttlab.scaling.regressors`; their architecture, without torch, in :mod:`~ttlab.scaling.regressor_config`).
"""

from typing import Any

from ttlab.scaling.band import BAND_ESTIMATORS, PredictionBand, prediction_band
from ttlab.scaling.fit import FitResult, fit_chinchilla, fit_offset_power_law, fit_power_law, fit_scaling_law
from ttlab.scaling.fit_models import FORMS, MIN_POINTS, PARAM_NAMES, chinchilla_huber_objective
from ttlab.scaling.fit_optimize import DEFAULT_LBFGSB_OPTIONS
from ttlab.scaling.io import read_columns_csv
from ttlab.scaling.theory import (
    PUBLISHED_LAWS,
    PublishedLaw,
    Table1Row,
    alpha_d,
    alpha_d_from_alpha_n,
    alpha_n,
    alpha_n_from_alpha_d,
    alpha_n_sharma_kaplan,
    id_from_alpha_d,
    id_from_alpha_n,
    id_from_alpha_n_sharma_kaplan,
    table1,
)


def plot_fit(*args: Any, **kwargs: Any) -> Any:
    """See :func:`ttlab.scaling.plot.plot_fit` (imported lazily so matplotlib loads only when plotting)."""
    from ttlab.scaling.plot import plot_fit as _plot_fit

    return _plot_fit(*args, **kwargs)


__all__ = [
    "BAND_ESTIMATORS",
    "PredictionBand",
    "prediction_band",
    "DEFAULT_LBFGSB_OPTIONS",
    "FORMS",
    "MIN_POINTS",
    "PARAM_NAMES",
    "PUBLISHED_LAWS",
    "FitResult",
    "PublishedLaw",
    "Table1Row",
    "alpha_d",
    "alpha_d_from_alpha_n",
    "alpha_n",
    "alpha_n_from_alpha_d",
    "alpha_n_sharma_kaplan",
    "chinchilla_huber_objective",
    "fit_chinchilla",
    "fit_offset_power_law",
    "fit_power_law",
    "fit_scaling_law",
    "id_from_alpha_d",
    "id_from_alpha_n",
    "id_from_alpha_n_sharma_kaplan",
    "plot_fit",
    "read_columns_csv",
    "table1",
]
