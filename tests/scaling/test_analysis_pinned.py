"""Paper B's shared scaling analysis (:mod:`ttlab.scaling.analysis`) pinned against independent computations.

The power-form exponent against numpy's least-squares line, its t-interval against scipy's regression and the t
quantile, the interval rule's boundary at :data:`SMALL_FIT` = 6 points, the bootstrap bookkeeping (draws, seed, which
interval is reported), learning-rate selection on the score it is given, the size grid and the curve-shape inputs'
edges. ``step_capped`` is not covered here.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ttlab.errors import TTLabInputError
from ttlab.scaling.analysis import (
    INTERVAL_RULES,
    SMALL_FIT,
    FittedExponent,
    best_by,
    curve_shapes,
    exponent_summary,
    geometric_sizes,
    power_law_fits,
)


def _noisy_power(n: int, alpha: float = 0.5, noise: float = 0.05, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    x = np.geomspace(10, 1e4, n)
    return x, 2.0 * x ** -alpha * np.exp(np.random.default_rng(seed).normal(0, noise, n))


def _t_interval(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """α̂ and its 95 % OLS t-interval from scipy's regression of log y on log x."""
    reg = stats.linregress(np.log(x), np.log(y))
    half = stats.t.ppf(0.975, len(x) - 2) * reg.stderr
    return -reg.slope, -reg.slope - half, -reg.slope + half


# ---------------------------------------------------------------------------------------------
# the size grid


def test_geometric_sizes_known_grids_and_edges():
    assert geometric_sizes(1, 1000, 4) == [1, 10, 100, 1000]
    assert geometric_sizes(1, 10, 2) == [1, 10]  # lo = 1 is allowed
    assert geometric_sizes(2, 8, 2) == [2, 8]
    assert geometric_sizes(2, 8, 3) == [2, 4, 8]
    assert geometric_sizes(7, 7, 3) == [7]  # lo = hi: one size
    assert geometric_sizes(3, 50, 1) == [50]  # one point: the largest size
    assert geometric_sizes(64, 8192, 8) == [int(round(v)) for v in 64 * 2.0 ** np.arange(8)]
    for lo, hi, n in ((0, 10, 3), (-1, 10, 3), (11, 10, 3), (1, 10, 0), (1, 10, -2)):
        with pytest.raises(TTLabInputError, match=f"need 1 <= lo <= hi and n >= 1, got lo={lo}, hi={hi}, n={n}"):
            geometric_sizes(lo, hi, n)


# ---------------------------------------------------------------------------------------------
# learning-rate selection


def test_best_by_selects_on_the_given_score_not_another_loss():
    # per size the validation loss and the test loss disagree on the best learning rate
    rows = [{"n": 10, "lr": 1e-3, "val": 1.0, "test": 9.0}, {"n": 10, "lr": 3e-3, "val": 2.0, "test": 1.0},
            {"n": 20, "lr": 1e-3, "val": 5.0, "test": 0.5}, {"n": 20, "lr": 3e-3, "val": 4.0, "test": 7.0},
            {"n": 20, "lr": 1e-2, "val": 4.5, "test": 0.1}]
    by_val = best_by(rows, lambda r: r["n"], "val")
    assert {k: r["lr"] for k, r in by_val.items()} == {10: 1e-3, 20: 3e-3}
    assert by_val[20] is rows[3]
    by_test = best_by(rows, lambda r: r["n"], "test")
    assert {k: r["lr"] for k, r in by_test.items()} == {10: 3e-3, 20: 1e-2}
    # a later, equal score never replaces the first; a later, lower one always does
    tie = [{"k": 0, "v": 1.0, "i": 0}, {"k": 0, "v": 1.0, "i": 1}, {"k": 0, "v": 0.5, "i": 2}, {"k": 0, "v": 0.5, "i": 3}]
    assert best_by(tie, lambda r: r["k"], "v")[0]["i"] == 2
    assert best_by([], lambda r: r["k"], "v") == {}


# ---------------------------------------------------------------------------------------------
# fits and the interval rule


def test_power_fit_is_the_least_squares_line_with_scipys_t_interval():
    x, y = _noisy_power(5)
    fits = power_law_fits(x, y, bootstrap=40, seed=3)
    alpha, lo, hi = _t_interval(x, y)
    power = fits["power"]
    assert power["params"]["alpha"] == pytest.approx(alpha, rel=1e-9)
    assert power["params"]["alpha"] == pytest.approx(-np.polyfit(np.log(x), np.log(y), 1)[0], rel=1e-9)
    assert power["ci_analytic"]["alpha"] == pytest.approx([lo, hi], rel=1e-7)
    ex = FittedExponent.from_fit(power)  # 5 < SMALL_FIT points: the t-interval
    assert ex.alpha_hat == pytest.approx(alpha, rel=1e-9)
    assert ex.ci == pytest.approx([lo, hi], rel=1e-7) and ex.ci_method == "t-interval (OLS, log-log)"
    assert ex.ci_t == pytest.approx([lo, hi], rel=1e-7) and ex.ci_bootstrap == power["ci"]["alpha"]
    assert ex.ci_bootstrap != ex.ci_t


def test_small_fit_is_six_points():
    assert SMALL_FIT == 6
    for n, method in ((5, "t-interval (OLS, log-log)"), (6, "bootstrap percentile"), (7, "bootstrap percentile")):
        x, y = _noisy_power(n)
        power = power_law_fits(x, y, bootstrap=30, offset=False)["power"]
        ex = FittedExponent.from_fit(power)
        assert power["n_points"] == n and ex.ci_method == method
        assert ex.ci == (ex.ci_t if n < 6 else ex.ci_bootstrap) and ex.ci_t != ex.ci_bootstrap
        always = FittedExponent.from_fit(power, "bootstrap")
        assert always.ci == always.ci_bootstrap == power["ci"]["alpha"]
        assert always.ci_method == "bootstrap percentile"


def test_without_a_bootstrap_auto_reports_the_t_interval_and_bootstrap_reports_none():
    x, y = _noisy_power(9)
    power = power_law_fits(x, y, bootstrap=0, offset=False)["power"]
    _, lo, hi = _t_interval(x, y)
    auto = FittedExponent.from_fit(power)
    assert auto.ci_bootstrap is None and auto.ci == pytest.approx([lo, hi], rel=1e-7)
    assert auto.ci_method == "t-interval (OLS, log-log)"
    boot = FittedExponent.from_fit(power, "bootstrap")
    assert boot.ci is None and boot.ci_method is None and boot.alpha_hat == auto.alpha_hat
    assert boot.ci_t == pytest.approx([lo, hi], rel=1e-7)
    assert INTERVAL_RULES == ("auto", "bootstrap")


def test_interval_bookkeeping_on_records():
    rec = {"params": {"alpha": 0.5}, "n_points": 10, "ci": {"alpha": [0.4, 0.6]}, "ci_analytic": {"alpha": [0.3, 0.7]}}
    assert FittedExponent.from_fit(rec).to_dict() == {
        "alpha_hat": 0.5, "alpha_hat_ci": [0.4, 0.6], "alpha_hat_ci_method": "bootstrap percentile",
        "alpha_hat_ci_bootstrap": [0.4, 0.6], "alpha_hat_ci_t": [0.3, 0.7]}
    # an interval whose ends are both missing is no interval; one with an end is kept as it is
    gone = FittedExponent.from_fit({**rec, "ci": {"alpha": [None, None]}})
    assert gone.ci_bootstrap is None and gone.ci == [0.3, 0.7] and gone.ci_method == "t-interval (OLS, log-log)"
    half = FittedExponent.from_fit({**rec, "ci": {"alpha": [0.4, None]}})
    assert half.ci_bootstrap == [0.4, None] and half.ci == [0.4, None] and half.ci_method == "bootstrap percentile"
    assert FittedExponent.from_fit({**rec, "ci": {}}).ci_bootstrap is None
    assert FittedExponent.from_fit({**rec, "ci": None, "ci_analytic": None}).to_dict() == {
        "alpha_hat": 0.5, "alpha_hat_ci": None, "alpha_hat_ci_method": None, "alpha_hat_ci_bootstrap": None,
        "alpha_hat_ci_t": None}
    few = {**rec, "n_points": 5}
    assert FittedExponent.from_fit(few).ci == [0.3, 0.7]
    assert FittedExponent.from_fit({**few, "ci_analytic": {}}).ci == [0.4, 0.6]  # no t-interval: the bootstrap one
    assert FittedExponent.from_fit({"error": "too few points"}) == FittedExponent()
    assert FittedExponent.from_fit({}) == FittedExponent()
    with pytest.raises(TTLabInputError, match="interval must be one of auto, bootstrap, got 'jackknife'"):
        FittedExponent.from_fit(None, "jackknife")  # type: ignore[arg-type]


def test_bootstrap_draws_and_seed_reach_both_fits():
    x, y = _noisy_power(8)
    fits = power_law_fits(x, y, bootstrap=30, bootstrap_offset=7, seed=2)
    assert fits["power"]["bootstrap"]["n_requested"] == 30 and fits["power"]["bootstrap"]["seed"] == 2
    assert fits["offset"]["bootstrap"]["n_requested"] == 7 and fits["offset"]["bootstrap"]["seed"] == 2
    same = power_law_fits(x, y, bootstrap=12, seed=5)
    assert same["offset"]["bootstrap"]["n_requested"] == 12  # bootstrap_offset defaults to bootstrap
    other = power_law_fits(x, y, bootstrap=30, seed=3, offset=False)
    assert set(other) == {"power"} and other["power"]["ci"]["alpha"] != fits["power"]["ci"]["alpha"]
    assert power_law_fits(x, y, bootstrap=30, seed=2, offset=False)["power"]["ci"] == fits["power"]["ci"]


def test_the_offset_form_needs_four_distinct_sizes():
    x4 = np.array([10.0, 100.0, 1000.0, 10_000.0])
    y4 = 0.1 + 2.0 * x4 ** -0.5
    fits = power_law_fits(np.repeat(x4, 2), np.repeat(y4, 2), bootstrap=0)
    assert "params" in fits["offset"] and fits["offset"]["params"]["alpha"] == pytest.approx(0.5, rel=1e-3)
    three = power_law_fits([10, 10, 100, 100, 1000, 1000], [1.0, 1.1, 0.5, 0.55, 0.25, 0.2], bootstrap=0)
    assert three["offset"] == {"error": "needs at least 4 distinct sizes"} and "params" in three["power"]
    assert exponent_summary(three)["alpha_hat_offset"] is None


def test_fits_that_fail_report_the_fit_error():
    bad = power_law_fits([10, 100, 1000, 10_000], [1.0, 0.5, -0.2, 0.1], bootstrap=0)
    why = "y must be > 0 (a log-log fit needs positive values); non-positive at indices [2]"
    assert bad == {"power": {"error": why}, "offset": {"error": why}}  # the fit module's own message, each form
    two = power_law_fits([10, 100], [1.0, 0.5], bootstrap=0, offset=False)
    assert two == {"power": {"error": "the power form has 2 parameters and needs at least 3 points, got 2"}}
    summary = exponent_summary(bad)
    assert summary["alpha_hat"] is None and summary["alpha_hat_offset"] is None


def test_exponent_summary_carries_both_forms():
    x, y = _noisy_power(8)
    fits = power_law_fits(x, y, bootstrap=20)
    s = exponent_summary(fits)
    assert s == {**FittedExponent.from_fit(fits["power"]).to_dict(),
                 "alpha_hat_offset": fits["offset"]["params"]["alpha"]}
    assert s["alpha_hat"] == pytest.approx(-np.polyfit(np.log(x), np.log(y), 1)[0], rel=1e-9)
    assert exponent_summary(fits, "bootstrap")["alpha_hat_ci_method"] == "bootstrap percentile"
    few = power_law_fits(x[:5], y[:5], bootstrap=20)
    assert exponent_summary(few)["alpha_hat_ci_method"] == "t-interval (OLS, log-log)"
    assert exponent_summary(few, "bootstrap")["alpha_hat_ci_method"] == "bootstrap percentile"
    assert exponent_summary({}) == {**FittedExponent().to_dict(), "alpha_hat_offset": None}


# ---------------------------------------------------------------------------------------------
# curve shapes: the edges of its inputs


def test_curve_shapes_input_edges():
    with pytest.raises(TTLabInputError, match=r"positive x and y of equal length, got x=\[1.0, 2.0, 4.0\], "
                       r"y=\[2.0, 0.0, 1.0\]"):
        curve_shapes([1, 2, 4], [2, 0, 1])  # a zero loss: no log
    with pytest.raises(TTLabInputError, match=r"needs at least 2 distinct x, got \[3.0, 3.0, 3.0\]"):
        curve_shapes([3, 3, 3], [1.0, 0.9, 0.8])
    two = curve_shapes([1, 1, 4], [1.0, 0.8, 0.5])  # two distinct sizes are enough
    assert two["n_points"] == 3 and set(two["decades"]) == {"exponential", "logarithmic"}
    # on two distinct x every 2-parameter line passes through the two group means: the RSS is the within-group spread
    within = (np.log(1.0) - np.log(0.8)) ** 2 / 2
    assert two["rss"]["power"] == pytest.approx(within) and two["rss"]["exponential"] == pytest.approx(within)
