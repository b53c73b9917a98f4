"""Weights, the asymmetric (overestimate-penalising) loss and dropping the highest losses, in every form that takes
them: what each does to the objective, that the fits honour it, and the checks of their values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.optimize import check_grad

from ttlab.errors import TTLabInputError
from ttlab.scaling.fit import fit_chinchilla, fit_offset_power_law, fit_power_law
from ttlab.scaling.fit_models import (
    chinchilla_huber_nll,
    chinchilla_huber_objective,
    huber_log_normaliser,
    huber_loss,
    log_model,
)

CHIN = {"E": 1.69, "A": 406.4, "alpha": 0.34, "B": 410.7, "beta": 0.28}


def chin_data(seed=0, k=6, sigma=0.01):
    rng = np.random.default_rng(seed)
    n, d = np.meshgrid(np.geomspace(1e7, 1e10, k), np.geomspace(1e9, 1e12, k))
    n, d = n.ravel(), d.ravel()
    loss = CHIN["E"] + CHIN["A"] / n ** CHIN["alpha"] + CHIN["B"] / d ** CHIN["beta"]
    return n, d, loss * np.exp(rng.normal(0.0, sigma, loss.size))


def offset_data(seed=0, sigma=0.01):
    x = np.geomspace(1e4, 1e9, 12)
    return x, (1.8 + 50.0 * x**-0.3) * np.exp(np.random.default_rng(seed).normal(0, sigma, x.size))


# ------------------------------------------------------------------------------------------
# the objectives


def test_weighted_asymmetric_objectives_are_the_weighted_terms_with_exact_gradients():
    n, d, loss = chin_data(k=4, sigma=0.05)
    args = (np.log(n), np.log(d), np.log(loss), 1e-3, "sum")
    w = np.random.default_rng(1).uniform(0.5, 3.0, n.size)
    theta = np.array([0.5, 6.0, 0.34, 6.0, 0.28])
    r = log_model("chinchilla", theta, *args[:2])[0] - args[2]
    f, _ = chinchilla_huber_objective(theta, *args, weights=w, asymmetry=4.0)
    assert f == pytest.approx(float(np.sum(w * np.where(r > 0, 4.0, 1.0) * huber_loss(1e-3, r))), rel=1e-12)
    assert 0 < (r > 0).sum() < r.size  # both sides of the asymmetry are exercised
    for fun, t in ((chinchilla_huber_objective, theta), (chinchilla_huber_nll, np.append(theta, math.log(0.03)))):
        err = check_grad(lambda t_: fun(t_, *args, weights=w, asymmetry=4.0)[0],
                         lambda t_: fun(t_, *args, weights=w, asymmetry=4.0)[1], t)
        assert err < 1e-5 * max(1.0, float(np.linalg.norm(fun(t, *args, weights=w, asymmetry=4.0)[1])))


@pytest.mark.parametrize("asymmetry", [1.0, 3.0, 10.0])
def test_the_asymmetric_huber_density_integrates_to_one(asymmetry):
    delta = 1e-3
    logz = huber_log_normaliser(delta, asymmetry)
    dens = lambda u: math.exp(-(asymmetry if u > 0 else 1.0) * float(huber_loss(delta, np.array(u))) - logz)  # noqa: E731
    total = sum(integrate.quad(dens, a, b, limit=400)[0] for a, b in ((-np.inf, -delta), (-delta, 0), (0, delta),
                                                                       (delta, np.inf)))
    assert total == pytest.approx(1.0, rel=1e-6)
    assert huber_log_normaliser(delta, 1.0) == huber_log_normaliser(delta)


# ------------------------------------------------------------------------------------------
# weights: a weight of 2 is the point counted twice


@pytest.mark.parametrize("form", ["power", "offset", "chinchilla", "chinchilla-likelihood"])
def test_a_weight_of_two_is_the_point_counted_twice(form):
    if form.startswith("chinchilla"):
        n, d, loss = chin_data()
        # the likelihood by variable projection (fast), the summed Huber loss from Epoch's grid: both paths weighted
        kw = {"objective": "huber-likelihood", "method": "varpro"} if form.endswith("likelihood") else {"n_starts": 2}
        fit = lambda xs, ys, **k: fit_chinchilla(xs[0], xs[1], ys, bootstrap=0, **kw, **k)  # noqa: E731
        cols = (n, d)
    else:
        x, loss = offset_data()
        fit = (lambda xs, ys, **k: (fit_power_law if form == "power" else fit_offset_power_law)(  # noqa: E731
            xs[0], ys, bootstrap=0, **k))
        cols = (x,)
    w = np.ones(loss.size)
    w[[2, 5]] = 2.0
    dup = np.r_[np.arange(loss.size), [2, 5]]
    weighted = fit(cols, loss, weights=w)
    doubled = fit(tuple(c[dup] for c in cols), loss[dup])
    unweighted = fit(cols, loss)
    for k, v in doubled.params.items():
        assert weighted.params[k] == pytest.approx(v, rel=2e-4), k
    assert any(abs(weighted.params[k] / unweighted.params[k] - 1) > 1e-4 for k in weighted.params)  # it did move
    assert weighted.config["weighted"] is True and unweighted.config["weighted"] is False


def test_weighted_power_law_intervals_are_weighted_least_squares():
    x = np.geomspace(10, 1e5, 12)
    y = 5 * x**-0.2 * np.exp(np.random.default_rng(3).normal(0, 0.02, x.size))
    w = np.linspace(1, 4, x.size)
    r = fit_power_law(x, y, bootstrap=200, weights=w)
    X = np.column_stack([np.ones_like(x), -np.log(x)]) * np.sqrt(w)[:, None]
    coef = np.linalg.lstsq(X, np.log(y) * np.sqrt(w), rcond=None)[0]
    assert r.params["alpha"] == pytest.approx(coef[1], rel=1e-10)
    resid = (np.log(y) - np.column_stack([np.ones_like(x), -np.log(x)]) @ coef) * np.sqrt(w)
    se = math.sqrt(resid @ resid / (x.size - 2) * np.linalg.inv(X.T @ X)[1, 1])
    assert r.stderr["alpha"] == pytest.approx(se, rel=1e-8)
    assert r.ci["alpha"][0] < coef[1] < r.ci["alpha"][1]


@pytest.mark.parametrize("bad, match", [
    ([1.0] * 11 + [0.0], r"positive and finite .*#11 \(0\)"),
    ([1.0] * 11 + [np.nan], r"#11 \(nan\)"),
    ([-1.0] + [1.0] * 11, r"#0 \(-1\)"),
    ([1.0] * 5, r"one weight per point \(12\)"),
    (["a"] * 12, r"weights must be numeric"),
])
def test_bad_weights_are_refused_naming_them(bad, match):
    x, y = offset_data()
    with pytest.raises(TTLabInputError, match=match) as exc:
        fit_offset_power_law(x, y, bootstrap=0, weights=bad)
    assert exc.value.params == ("weights",)


# ------------------------------------------------------------------------------------------
# asymmetry: a lower envelope


@pytest.mark.parametrize("form", ["offset", "chinchilla"])
def test_an_asymmetric_fit_is_a_lower_envelope(form):
    if form == "chinchilla":
        n, d, loss = chin_data(sigma=0.02)
        sym = fit_chinchilla(n, d, loss, bootstrap=0)
        low = fit_chinchilla(n, d, loss, bootstrap=0, asymmetry=10.0)
        over = lambda r: np.mean(r.predict(n, d) > loss)  # noqa: E731
    else:
        x, loss = offset_data(sigma=0.02)
        sym = fit_offset_power_law(x, loss, bootstrap=0)
        low = fit_offset_power_law(x, loss, bootstrap=0, asymmetry=10.0)
        over = lambda r: np.mean(r.predict(x) > loss)  # noqa: E731
    assert over(sym) > 0.3 and over(low) <= over(sym) / 2  # it sits under most points
    assert low.config["asymmetry"] == 10.0 and sym.config["asymmetry"] == 1.0
    # and the objective it minimised is the asymmetric one: the symmetric fit is worse by it
    if form == "offset":
        r_low = np.log(low.predict(x)) - np.log(loss)
        r_sym = np.log(sym.predict(x)) - np.log(loss)
        cost = lambda r: float(np.sum(np.where(r > 0, 10.0, 1.0) * r * r))  # noqa: E731
        assert low.optimizer["objective"] == pytest.approx(cost(r_low), rel=1e-9) and cost(r_low) < cost(r_sym)


def test_asymmetry_is_checked():
    x, y = offset_data()
    with pytest.raises(TTLabInputError, match="asymmetry must be a number >= 1, got 0.5") as exc:
        fit_offset_power_law(x, y, bootstrap=0, asymmetry=0.5)
    assert exc.value.params == ("asymmetry",)
    with pytest.raises(TTLabInputError, match="asymmetry must be"):
        fit_offset_power_law(x, y, bootstrap=0, asymmetry=math.inf)


def test_an_asymmetric_residual_bootstrap_resamples_the_one_sided_residuals():
    x, y = offset_data(sigma=0.02)
    r = fit_offset_power_law(x, y, bootstrap=150, asymmetry=10.0, seed=1)
    # centring the residuals would shift every replicate's envelope down; uncentred, the interval holds the estimate
    for k in ("E", "alpha"):
        lo, hi = r.ci[k]
        assert lo <= r.params[k] <= hi
    assert "ci_widened_to_estimate" not in r.diagnostics


# ------------------------------------------------------------------------------------------
# drop the K highest losses


def test_drop_highest_is_the_fit_without_those_runs_and_is_recorded():
    n, d, loss = chin_data()
    r = fit_chinchilla(n, d, loss, bootstrap=0, drop_highest=5)
    top = np.sort(np.argsort(-loss)[:5])
    keep = np.setdiff1d(np.arange(loss.size), top)
    ref = fit_chinchilla(n[keep], d[keep], loss[keep], bootstrap=0)
    assert r.config["drop_highest"] == 5 and r.config["dropped"] == top.tolist() and r.n_points == loss.size - 5
    for k, v in ref.params.items():
        assert r.params[k] == pytest.approx(v, rel=1e-9)
    x, y = offset_data()
    assert fit_power_law(x, y, bootstrap=0, drop_highest=2).config["dropped"] == [0, 1]  # the smallest x lose most


def test_drop_highest_refuses_too_few_points_and_bad_values():
    x, y = offset_data()
    with pytest.raises(TTLabInputError, match="drop_highest = 9 leaves 3 of 12 points; the offset form needs at least 4") \
            as exc:
        fit_offset_power_law(x, y, bootstrap=0, drop_highest=9)
    assert exc.value.params == ("drop_highest",)
    with pytest.raises(TTLabInputError, match="drop_highest must be"):
        fit_offset_power_law(x, y, bootstrap=0, drop_highest=-1)


def test_a_point_below_the_floor_is_named_by_its_input_position_after_a_drop():
    n, d, loss = chin_data(sigma=0.003)
    loss[-1] = 1.0  # far under the floor
    r = fit_chinchilla(n, d, loss, bootstrap=0, drop_highest=3)
    assert any("lie below the fitted floor" in w and f"#{loss.size - 1} " in w for w in r.warnings)
