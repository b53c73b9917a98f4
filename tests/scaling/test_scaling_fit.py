"""Scaling-law fits: recovery of known exponents, bootstrap coverage, the Chinchilla Huber fit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import check_grad

from ttlab.errors import TTLabInputError
from ttlab.scaling import (
    DEFAULT_LBFGSB_OPTIONS,
    chinchilla_huber_objective,
    fit_chinchilla,
    fit_offset_power_law,
    fit_power_law,
    fit_scaling_law,
)
from ttlab.scaling.fit_models import log_model

# Chinchilla's published fit (Hoffmann et al. 2022, approach 3).
CHIN = {"E": 1.69, "A": 406.4, "alpha": 0.34, "B": 410.7, "beta": 0.28}


def chinchilla_data(seed: int, k: int = 8, sigma: float = 0.01):
    """k×k grid of N ∈ [1e7, 1e10], D ∈ [1e9, 1e12]; multiplicative log-normal noise."""
    rng = np.random.default_rng(seed)
    n, d = np.meshgrid(np.geomspace(1e7, 1e10, k), np.geomspace(1e9, 1e12, k))
    n, d = n.ravel(), d.ravel()
    loss = CHIN["E"] + CHIN["A"] / n ** CHIN["alpha"] + CHIN["B"] / d ** CHIN["beta"]
    return n, d, loss * np.exp(rng.normal(0.0, sigma, loss.size))


# ------------------------------------------------------------------------------------------
# pure power law


def test_power_law_exact_on_noise_free_data():
    x = np.geomspace(1e3, 1e7, 9)
    r = fit_power_law(x, 20.0 * x**-0.3, bootstrap=0)
    assert r.params["alpha"] == pytest.approx(0.3, abs=1e-12)
    assert r.params["A"] == pytest.approx(20.0, rel=1e-10)
    assert r.r2_log == pytest.approx(1.0, abs=1e-12)
    assert r.rmse_log < 1e-12 and r.rmse < 1e-10
    assert r.ci == {} and r.bootstrap["n_used"] == 0
    assert r.predict([1e4])[0] == pytest.approx(20.0 * 1e4**-0.3)


def test_nanogpt_gpt2_cross_check():
    """SPEC: nanoGPT's GPT-2 OWT losses 3.12, 2.84, 2.67, 2.54 at 124M…1558M give α̂_N ≈ 0.08."""
    n = np.array([124e6, 350e6, 774e6, 1558e6])
    loss = np.array([3.12, 2.84, 2.67, 2.54])
    r = fit_power_law(n, loss, bootstrap=2000, seed=0)
    # independent hand computation of the OLS slope of log L on log N
    lx, ly = [math.log(v) for v in n], [math.log(v) for v in loss]
    mx, my = sum(lx) / 4, sum(ly) / 4
    slope = sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)
    assert r.params["alpha"] == pytest.approx(-slope, rel=1e-10)
    assert r.params["alpha"] == pytest.approx(0.08, abs=0.005)  # 0.0814
    assert r.r2_log > 0.99
    lo, hi = r.ci["alpha"]
    assert lo < r.params["alpha"] < hi and 0.06 < lo and hi < 0.10
    tlo, thi = r.ci_analytic["alpha"]  # t-interval with 2 dof is wider than the bootstrap
    assert tlo < lo and thi > hi


def test_power_law_bootstrap_coverage():
    """Over 40 seeded synthetic data sets the 95% bootstrap CI covers the true α in ≥ 85%."""
    alpha, amp, sigma = 0.3, 20.0, 0.05
    x = np.geomspace(1e3, 1e6, 20)
    lx = np.log(x)
    se_true = sigma / np.sqrt(np.sum((lx - lx.mean()) ** 2))
    covered = covered_t = 0
    widths = []
    for s in range(40):
        rng = np.random.default_rng(1000 + s)
        y = amp * x**-alpha * np.exp(rng.normal(0, sigma, x.size))
        r = fit_power_law(x, y, bootstrap=400, seed=s)
        lo, hi = r.ci["alpha"]
        covered += lo <= alpha <= hi
        covered_t += r.ci_analytic["alpha"][0] <= alpha <= r.ci_analytic["alpha"][1]
        widths.append((hi - lo) / (2 * 1.96 * se_true))
    assert covered >= 34, covered
    assert covered_t >= 34, covered_t
    # not covering by being uselessly wide: the width matches the true sampling spread
    assert 0.7 < float(np.median(widths)) < 1.3


def test_bootstrap_same_seed_same_result_and_seed_matters():
    rng = np.random.default_rng(3)
    x = np.geomspace(10, 1e5, 10)
    y = 5 * x**-0.2 * np.exp(rng.normal(0, 0.03, x.size))
    for method in ("residual", "pairs"):
        a = fit_power_law(x, y, bootstrap=300, seed=7, bootstrap_method=method)
        b = fit_power_law(x, y, bootstrap=300, seed=7, bootstrap_method=method)
        c = fit_power_law(x, y, bootstrap=300, seed=8, bootstrap_method=method)
        assert a.ci == b.ci
        assert a.ci != c.ci
        assert a.bootstrap["n_used"] == 300
        assert a.ci["alpha"][0] < 0.2 < a.ci["alpha"][1]


# ------------------------------------------------------------------------------------------
# offset power law


def test_offset_power_law_exact_on_noise_free_data():
    x = np.geomspace(1e4, 1e8, 10)
    y = 1.8 + 50.0 * x**-0.3
    r = fit_offset_power_law(x, y, bootstrap=0)
    assert r.params["E"] == pytest.approx(1.8, rel=1e-5)
    assert r.params["A"] == pytest.approx(50.0, rel=1e-4)
    assert r.params["alpha"] == pytest.approx(0.3, abs=1e-5)
    assert r.r2_log == pytest.approx(1.0, abs=1e-9)


def test_offset_recovers_alpha_where_plain_slope_understates_it():
    """SPEC: the plain slope understates α when losses are far above the entropy floor."""
    rng = np.random.default_rng(11)
    x = np.geomspace(1e4, 1e8, 14)
    y = (1.8 + 50.0 * x**-0.3) * np.exp(rng.normal(0, 0.005, x.size))
    off = fit_offset_power_law(x, y, bootstrap=100, seed=0)
    plain = fit_power_law(x, y, bootstrap=0)
    lo, hi = off.ci["alpha"]
    assert lo <= 0.3 <= hi
    assert off.ci["E"][0] <= 1.8 <= off.ci["E"][1]
    assert abs(off.params["alpha"] - 0.3) < 0.03
    assert plain.params["alpha"] < 0.15  # the log-log slope is less than half the true exponent
    assert off.r2_log > plain.r2_log


def test_log_model_jacobians_match_finite_differences():
    rng = np.random.default_rng(0)
    lx = np.log(np.geomspace(1e3, 1e6, 7))
    lx2 = np.log(np.geomspace(1e8, 1e11, 7))
    for form, theta in (
        ("power", np.array([2.0, 0.3])),
        ("offset", np.array([0.5, 3.0, 0.25])),
        ("chinchilla", np.array([0.5, 6.0, 0.34, 6.0, 0.28])),
    ):
        _, jac = log_model(form, theta, lx, lx2)
        eps = 1e-6
        for j in range(theta.size):
            step = np.zeros_like(theta)
            step[j] = eps
            fd = (log_model(form, theta + step, lx, lx2)[0] - log_model(form, theta - step, lx, lx2)[0]) / (2 * eps)
            np.testing.assert_allclose(jac[:, j], fd, rtol=1e-6, atol=1e-8)
    n, d, loss = chinchilla_data(0, k=4, sigma=0.05)
    args = (np.log(n), np.log(d), np.log(loss), 1e-3, "sum")
    theta = np.array([0.5, 6.0, 0.34, 6.0, 0.28]) + rng.normal(0, 0.01, 5)
    err = check_grad(lambda t: chinchilla_huber_objective(t, *args)[0],
                     lambda t: chinchilla_huber_objective(t, *args)[1], theta)
    assert err < 1e-6 * max(1.0, np.linalg.norm(chinchilla_huber_objective(theta, *args)[1]))


# ------------------------------------------------------------------------------------------
# Chinchilla: summed Huber loss in log space


@pytest.fixture(scope="module")
def chin64():
    return chinchilla_data(seed=0, k=8, sigma=0.01)


def test_chinchilla_summed_huber_recovers_exponents(chin64):
    n, d, loss = chin64
    r = fit_chinchilla(n, d, loss, bootstrap=20, seed=0)
    assert abs(r.params["alpha"] - CHIN["alpha"]) < 0.02
    assert abs(r.params["beta"] - CHIN["beta"]) < 0.02
    assert abs(r.params["E"] - CHIN["E"]) < 0.1
    for k in ("alpha", "beta", "E"):
        lo, hi = r.ci[k]
        assert lo <= CHIN[k] <= hi, (k, r.ci[k])
        assert lo < r.params[k] < hi
    # intervals are informative, not collapsed onto the estimate and not enormous
    assert 0.005 < r.ci["alpha"][1] - r.ci["alpha"][0] < 0.1
    assert r.r2_log > 0.99 and r.rmse_log < 0.015
    assert r.optimizer["reduction"] == "sum" and r.optimizer["delta"] == 1e-3
    assert r.config["lbfgsb_options"] == DEFAULT_LBFGSB_OPTIONS
    np.testing.assert_allclose(r.predict(n, d), np.exp(log_model("chinchilla", r.theta, np.log(n), np.log(d))[0]))


def test_chinchilla_mean_huber_stops_early_summed_does_not(chin64):
    """SPEC (Epoch 2024): with L-BFGS-B's default tolerances a *mean* Huber loss stops early and
    gives wrong exponents; the *summed* loss, same starts, same optimiser, recovers α and β."""
    n, d, loss = chin64
    scipy_defaults: dict = {}
    s = fit_chinchilla(n, d, loss, bootstrap=0, reduction="sum", lbfgsb_options=scipy_defaults)
    m = fit_chinchilla(n, d, loss, bootstrap=0, reduction="mean", lbfgsb_options=scipy_defaults)
    assert abs(s.params["alpha"] - 0.34) < 0.02 and abs(s.params["beta"] - 0.28) < 0.02
    assert abs(m.params["alpha"] - 0.34) > 0.2  # the mean fit's α is far off (≈ 0.9)
    assert m.optimizer["n_iterations"] < s.optimizer["n_iterations"] / 3
    # Both losses have the same minimiser, so the mean fit merely stopped early: its summed loss
    # is several times higher than at the summed fit's solution.
    args = (np.log(n), np.log(d), np.log(loss))
    f_sum = chinchilla_huber_objective(s.theta, *args)[0]
    f_mean_sol = chinchilla_huber_objective(m.theta, *args)[0]
    assert f_mean_sol > 3 * f_sum


def test_chinchilla_default_tolerances_fix_small_data_sets():
    """On 36 points even the summed loss stops early with scipy's defaults (the stopping rule is
    an absolute 2.2e-9 decrease when f < 1); the module's tighter tolerances fix it, and with
    them sum and mean reach the same minimum."""
    n, d, loss = chinchilla_data(seed=0, k=6, sigma=0.01)
    bad = fit_chinchilla(n, d, loss, bootstrap=0, n_starts=3, lbfgsb_options={})
    good = fit_chinchilla(n, d, loss, bootstrap=0, n_starts=3)
    good_mean = fit_chinchilla(n, d, loss, bootstrap=0, n_starts=3, reduction="mean")
    assert abs(bad.params["alpha"] - 0.34) > 0.2
    assert abs(good.params["alpha"] - 0.34) < 0.03 and abs(good.params["beta"] - 0.28) < 0.03
    assert good_mean.params["alpha"] == pytest.approx(good.params["alpha"], abs=1e-3)
    assert good_mean.params["beta"] == pytest.approx(good.params["beta"], abs=1e-3)


def test_chinchilla_deterministic():
    n, d, loss = chinchilla_data(seed=5, k=5, sigma=0.01)
    a = fit_chinchilla(n, d, loss, bootstrap=4, seed=3, n_starts=1)
    b = fit_chinchilla(n, d, loss, bootstrap=4, seed=3, n_starts=1)
    assert a.params == b.params and a.ci == b.ci


# ------------------------------------------------------------------------------------------
# dispatch and bad input


def test_fit_scaling_law_dispatch():
    x = np.geomspace(1e3, 1e6, 6)
    assert fit_scaling_law("power", x, 3 * x**-0.1, bootstrap=0).form == "power"
    assert fit_scaling_law("offset", x, 1 + 3 * x**-0.1, bootstrap=0).form == "offset"
    with pytest.raises(TTLabInputError, match="unknown form 'cubic'"):
        fit_scaling_law("cubic", x, x)
    with pytest.raises(TTLabInputError, match="needs x2"):
        fit_scaling_law("chinchilla", x, x)
    with pytest.raises(TTLabInputError, match="only used by the chinchilla"):
        fit_scaling_law("power", x, x, x)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: fit_power_law([1, 2], [3, 2], bootstrap=0), r"needs at least 3 points, got 2"),
        (lambda: fit_offset_power_law([1, 2, 3], [3, 2, 1.5], bootstrap=0), r"at least 4 points"),
        (lambda: fit_power_law([1, 2, 3], [3, 2], bootstrap=0), r"same length"),
        (lambda: fit_power_law([1, 0, 3], [3, 2, 1], bootstrap=0), r"x must be > 0.*indices \[1\]"),
        (lambda: fit_power_law([1, 2, 3], [3, -2, 1], bootstrap=0), r"y must be > 0.*indices \[1\]"),
        (lambda: fit_power_law([1, 2, np.nan], [3, 2, 1], bootstrap=0), r"non-finite values at indices \[2\]"),
        (lambda: fit_power_law([5, 5, 5], [3, 2, 1], bootstrap=0), r"2 distinct values"),
        (lambda: fit_power_law([[1, 2, 3]], [[3, 2, 1]], bootstrap=0), r"one-dimensional"),
        (lambda: fit_power_law(["a", "b", "c"], [3, 2, 1], bootstrap=0), r"numeric"),
        (lambda: fit_power_law([1, 2, 3], [3, 2, 1], bootstrap=-1), r"bootstrap must be a non-negative"),
        (lambda: fit_power_law([1, 2, 3], [3, 2, 1], ci_level=95), r"ci_level must be in \(0, 1\)"),
        (lambda: fit_power_law([1, 2, 3], [3, 2, 1], bootstrap_method="jackknife"), r"bootstrap_method"),
        (lambda: fit_power_law([1, 2, 3], [3, 2, 1], seed=1.5), r"seed must be an integer"),
        (lambda: fit_chinchilla([1, 2, 3, 4, 5, 6], [1] * 6, [3, 2, 1, 1, 1, 1]), r"D needs at least 2 distinct"),
        (lambda: fit_chinchilla([1, 2, 3, 4, 5], [1, 2, 3, 4, 5], [3, 2, 1, 1, 1]), r"at least 6 points"),
        (lambda: fit_chinchilla(*chinchilla_data(0, k=3), reduction="median"), r"reduction must be"),
        (lambda: fit_chinchilla(*chinchilla_data(0, k=3), delta=0), r"delta must be a positive"),
        (lambda: fit_chinchilla(*chinchilla_data(0, k=3), lbfgsb_options={"tol": 1}), r"unknown L-BFGS-B"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(TTLabInputError, match=match):
        call()


def test_pairs_bootstrap_rejects_hopeless_designs():
    # 3 points, 2 of them identical in x: most resamples are degenerate, but some are fine
    r = fit_power_law([1.0, 1.0, 10.0, 100.0], [3.0, 3.1, 2.0, 1.0], bootstrap=50, bootstrap_method="pairs")
    assert r.bootstrap["n_used"] == 50 and r.bootstrap["degenerate_draws_rejected"] > 0


@pytest.mark.parametrize("form, method", [("power", "residual"), ("offset", "residual"), ("offset", "pairs"),
                                          ("chinchilla", "pairs")])
def test_the_bootstrap_reports_its_progress_from_0_to_all_and_the_same_numbers(form, method):
    """``progress(done, total)`` climbs from 0 to every replicate, about every 1 %, and following it changes nothing."""
    from ttlab.scaling.fit import fit_scaling_law

    rng = np.random.default_rng(3)
    n = np.repeat(np.geomspace(1e6, 1e8, 4), 3) if form == "chinchilla" else np.geomspace(1e3, 1e7, 10)
    d = np.tile(np.geomspace(1e8, 1e10, 3), 4) if form == "chinchilla" else None
    loss = 1.7 + 400 * n ** -0.34 + (0 if d is None else 400 * d ** -0.28)
    loss = loss * np.exp(rng.normal(0, 0.01, loss.size))
    calls: list[tuple[int, int]] = []
    b = 30 if form == "chinchilla" else 250  # a Chinchilla refit is slow: fewer replicates, every one reported
    kw = dict(bootstrap=b, seed=1, bootstrap_method=method)
    followed = fit_scaling_law(form, n, loss, d, progress=lambda done, total: calls.append((done, total)), **kw)
    plain = fit_scaling_law(form, n, loss, d, **kw)
    assert calls[0] == (0, b) and calls[-1] == (b, b) and all(t == b for _, t in calls)
    done = [c for c, _ in calls]
    assert done == sorted(done) and len(calls) <= b // max(1, b // 100) + 2  # about every 1 % of the replicates
    np.testing.assert_array_equal(followed.bootstrap_samples, plain.bootstrap_samples)
    assert followed.ci == plain.ci
