"""A power law told from an exponential and a logarithmic curve on the same points (``curve_shapes``) and the shape
clause of the ``power_law_decay`` rule that consumes it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ttlab.errors import TTLabInputError
from ttlab.reproduce.verdict_base import HOLDS, INCONCLUSIVE, NOT_REPRODUCED, PARTLY
from ttlab.reproduce.verdicts import judge
from ttlab.scaling.analysis import curve_shapes

X = np.geomspace(1e4, 1e7, 8)


def _rss_line(u: np.ndarray, v: np.ndarray) -> float:
    fit = stats.linregress(u, v)
    return float(np.sum((v - (fit.intercept + fit.slope * u)) ** 2))


def test_rss_of_each_curve_against_scipy_regressions() -> None:
    rng = np.random.default_rng(0)
    y = 3.0 * X ** -0.1 * np.exp(0.01 * rng.standard_normal(len(X)))
    res = curve_shapes(X, y)
    assert res["rss"]["power"] == pytest.approx(_rss_line(np.log(X), np.log(y)), rel=1e-9)
    assert res["rss"]["exponential"] == pytest.approx(_rss_line(X, np.log(y)), rel=1e-9)
    lin = stats.linregress(np.log(X), y)
    y_log = lin.intercept + lin.slope * np.log(X)
    assert res["rss"]["logarithmic"] == pytest.approx(float(np.sum((np.log(y) - np.log(y_log)) ** 2)), rel=1e-9)
    for alt in ("exponential", "logarithmic"):
        assert res["decades"][alt] == pytest.approx(math.log10(res["rss"][alt] / res["rss"]["power"]), rel=1e-12)
    assert res["closest"] == min(res["decades"], key=res["decades"].get) and res["n_points"] == 8


@pytest.mark.parametrize("y, winner", [
    (2.0 * X ** -0.3, "power"),
    (5.0 * np.exp(-X / 4e6), "exponential"),
    (10.0 - 0.5 * np.log(X), "logarithmic"),
])
def test_each_shape_wins_on_its_own_curve(y: np.ndarray, winner: str) -> None:
    res = curve_shapes(X, y * np.exp(1e-4 * np.sin(np.arange(len(X)))))  # tiny, deterministic wiggle
    if winner == "power":
        assert min(res["decades"].values()) > 1.0
    else:
        assert res["closest"] == winner and res["decades"][winner] < -1.0


def test_a_logarithmic_fit_through_zero_scores_infinity() -> None:
    y = np.array([1.0, 0.5, 0.02, 0.01])
    res = curve_shapes([1.0, 10.0, 100.0, 1000.0], y)
    assert math.isinf(res["rss"]["logarithmic"]) and math.isinf(res["decades"]["logarithmic"])


@pytest.mark.parametrize("x, y", [([1, 2], [1, 2]), ([1, 2, 3], [1, -2, 3]), ([0, 1, 2], [1, 2, 3]), ([5, 5, 5], [1, 2, 3]),
                                  ([1, 2, 3], [1, 2])])
def test_bad_points_are_refused(x: list, y: list) -> None:
    with pytest.raises(TTLabInputError):
        curve_shapes(x, y)


_BASE = {"alpha": 0.1, "lo": 0.08, "hi": 0.12, "r2": 0.98, "n_points": 5}
_TH = {"min_r2": 0.9, "min_points": 3, "min_decades": 1.0}


@pytest.mark.parametrize("extra, verdict, reason", [
    ({"shape_decades": 1.5, "shape_closest": "logarithmic"}, HOLDS,
     "interval [0.08, 0.12] excludes 0, R² 0.980; beats the logarithmic curve by 1.50 decades"),
    ({"shape_decades": 1.0, "shape_closest": "exponential"}, HOLDS,
     "interval [0.08, 0.12] excludes 0, R² 0.980; beats the exponential curve by 1.00 decades"),
    ({"shape_decades": 0.33, "shape_closest": "logarithmic"}, INCONCLUSIVE,
     "interval [0.08, 0.12] excludes 0, but the points do not tell a power law from a logarithmic curve (D = +0.33 "
     "decades, need ≥ 1); what would decide it: sizes over a wider range"),
    ({"shape_decades": -1.0, "shape_closest": "exponential"}, NOT_REPRODUCED,
     "interval [0.08, 0.12] excludes 0, but an exponential curve fits the same points better by 1.00 decade(s) of "
     "residual"),
    ({}, INCONCLUSIVE, "interval [0.08, 0.12] excludes 0, but no alternative curve compared on the same points: a "
                       "power law cannot be told from another shape"),
    ({"shape_decades": 2.0, "shape_closest": "exponential", "r2": 0.5}, PARTLY,
     "interval [0.08, 0.12] excludes 0 but R² 0.500 < 0.9; beats the exponential curve by 2.00 decades"),
])
def test_power_law_rule_with_the_shape_clause(extra: dict, verdict: str, reason: str) -> None:
    got = judge("power_law_decay", {**_BASE, **extra}, _TH, "x")
    assert got[:2] == (verdict, reason)
    assert got[2].endswith("inconclusive unless the power law beats both by 1 (D ≥ 1)")
    # without min_decades the rule is the old one: the shape is not consulted
    assert judge("power_law_decay", {**_BASE, **extra}, {"min_r2": 0.9, "min_points": 3}, "x")[0] == (
        PARTLY if extra.get("r2") == 0.5 else HOLDS)
