"""The analysis shared by paper B's scaling experiments: grids, learning-rate selection, exponent schema."""

from __future__ import annotations

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.scaling.analysis import SMALL_FIT, FittedExponent, best_by, exponent_summary, geometric_sizes, power_law_fits


def test_geometric_sizes_are_distinct_inclusive_and_checked():
    assert geometric_sizes(10, 1000, 3) == [10, 100, 1000]
    assert geometric_sizes(5, 5, 1) == [5]
    assert geometric_sizes(1, 3, 10) == [1, 2, 3]  # repeats merged
    for bad in ((0, 10, 3), (100, 10, 3), (1, 10, 0)):
        with pytest.raises(TTLabInputError):
            geometric_sizes(*bad)


def test_best_by_keeps_the_lowest_score_per_key_and_the_first_on_ties():
    rows = [{"x": 1, "lr": 1e-3, "val": 2.0}, {"x": 1, "lr": 3e-3, "val": 1.5}, {"x": 2, "lr": 1e-3, "val": 1.0},
            {"x": 2, "lr": 3e-3, "val": 1.0}]
    best = best_by(rows, lambda r: r["x"], "val")
    assert list(best) == [1, 2]
    assert best[1]["lr"] == 3e-3 and best[2] is rows[2]


def _power_data(n: int, alpha: float = 0.5, noise: float = 0.02, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    x = np.geomspace(100, 1e5, n)
    y = 3.0 * x ** -alpha * np.exp(np.random.default_rng(seed).normal(0, noise, n))
    return x, y


def test_interval_rule_t_below_small_fit_bootstrap_above():
    for n, method in ((SMALL_FIT - 1, "t-interval"), (SMALL_FIT + 2, "bootstrap")):
        x, y = _power_data(n)
        fits = power_law_fits(x, y, bootstrap=200, bootstrap_offset=50)
        auto = FittedExponent.from_fit(fits["power"])
        assert auto.ci_method.startswith(method)
        assert auto.ci == (auto.ci_t if method == "t-interval" else auto.ci_bootstrap)
        assert auto.ci[0] < auto.alpha_hat < auto.ci[1] and auto.alpha_hat == pytest.approx(0.5, abs=0.05)
        boot = FittedExponent.from_fit(fits["power"], "bootstrap")  # the manifold sweep's rule
        assert boot.ci == boot.ci_bootstrap and boot.ci_method == "bootstrap percentile"
        assert "params" in fits["offset"]  # >= 4 distinct sizes: the offset form is fitted too


def test_one_schema_for_a_fitted_exponent():
    keys = {"alpha_hat", "alpha_hat_ci", "alpha_hat_ci_method", "alpha_hat_ci_bootstrap", "alpha_hat_ci_t"}
    x, y = _power_data(8)
    fits = power_law_fits(x, y, bootstrap=100)
    assert set(FittedExponent.from_fit(fits["power"]).to_dict()) == keys
    assert set(FittedExponent().to_dict()) == keys and FittedExponent.from_fit(None).alpha_hat is None
    summary = exponent_summary(fits)
    assert set(summary) == keys | {"alpha_hat_offset"}
    assert summary["alpha_hat_offset"] == fits["offset"]["params"]["alpha"]
    with pytest.raises(TTLabInputError, match="interval"):
        FittedExponent.from_fit(fits["power"], "jackknife")  # type: ignore[arg-type]


def test_fits_that_cannot_be_made_say_why():
    fits = power_law_fits([10, 100, 1000], [1.0, 0.5, 0.25], bootstrap=0)
    assert "params" in fits["power"] and "4 distinct" in fits["offset"]["error"]
    bad = power_law_fits([10, 100, 1000], [1.0, -0.5, 0.25], bootstrap=0, offset=False)
    assert set(bad) == {"power"} and "error" in bad["power"]
    assert FittedExponent.from_fit(bad["power"]) == FittedExponent()
