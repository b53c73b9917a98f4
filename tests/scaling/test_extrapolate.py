"""`ttlab scaling fit --predict` (issue 35 item 2): the predicted loss at a new size with a confidence interval
(parameters), a prediction interval (plus the residual scatter), and the decades it extrapolates."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ttlab.scaling.extrapolate import decades_outside, predict_at
from ttlab.scaling.fit import fit_chinchilla, fit_power_law


def test_decades_outside_the_range():
    seen = np.array([1e6, 1e7, 3e9])
    assert decades_outside(5e6, seen) == 0.0
    assert decades_outside(1e11, seen) == pytest.approx(math.log10(1e11 / 3e9))
    assert decades_outside(1e4, seen) == pytest.approx(-2.0)


def test_intervals_inside_the_range_cover_the_truth_and_nest():
    rng = np.random.default_rng(0)
    x = np.geomspace(1e6, 1e9, 12)
    y = 20 * x ** -0.15 * np.exp(rng.normal(0, 0.02, x.size))
    fit = fit_power_law(x, y, bootstrap=400, seed=1)
    p = predict_at(fit, 3e7, None, x, y)
    truth = 20 * 3e7 ** -0.15
    assert p["ci"][0] < p["loss"] < p["ci"][1] and p["ci"][0] < truth < p["ci"][1]
    assert p["pi"][0] < p["ci"][0] and p["ci"][1] < p["pi"][1]  # one new run scatters more than the mean
    assert p["decades_outside"] == {"x": 0.0} and p["loss"] == pytest.approx(float(fit.predict([3e7])[0]))
    far = predict_at(fit, 1e12, None, x, y)
    width = lambda q: math.log(q["ci"][1] / q["ci"][0])  # noqa: E731
    assert far["decades_outside"]["x"] == pytest.approx(3.0) and width(far) > width(p)  # farther, less sure
    assert predict_at(fit_power_law(x, y, bootstrap=0), 3e7, None, x, y)["ci"] is None


def test_a_chinchilla_prediction_reports_n_d_and_compute():
    rng = np.random.default_rng(2)
    n = np.repeat(np.geomspace(1e7, 3e9, 5), 4)
    d = np.tile(np.geomspace(1e9, 3e11, 4), 5)
    loss = (1.69 + 406.4 * n ** -0.34 + 410.7 * d ** -0.28) * np.exp(rng.normal(0, 0.005, n.size))
    fit = fit_chinchilla(n, d, loss, bootstrap=30, seed=0)
    p = predict_at(fit, 1e10, 1e12, n, loss, d)
    assert p["decades_outside"]["x"] == pytest.approx(math.log10(1e10 / 3e9))
    assert p["decades_outside"]["x2"] == pytest.approx(math.log10(1e12 / 3e11))
    assert p["decades_outside"]["compute"] == pytest.approx(math.log10(1e22 / (3e9 * 3e11)))
    assert p["ci"][0] <= p["loss"] <= p["ci"][1]


def test_the_command_predicts_and_refuses_what_it_cannot(run_cli, tmp_path):
    csv = tmp_path / "runs.csv"
    x = np.geomspace(1e6, 1e9, 10)
    csv.write_text("tokens,loss\n" + "".join(f"{a:.6g},{20 * a ** -0.15 * (1 + 0.01 * np.sin(a)):.6g}\n" for a in x))
    r = run_cli("scaling", "fit", csv, "--x", "tokens", "--y", "loss", "--predict", "tokens=1e11", "--json")
    assert r.code == 0, r.err
    p = json.loads(r.out)["prediction_at"]
    assert p["at"] == {"tokens": 1e11} and p["decades_outside"]["x"] == pytest.approx(2.0) and len(p["pi"]) == 2
    r = run_cli("scaling", "fit", csv, "--x", "tokens", "--y", "loss", "--predict", "tokens=1e11")
    assert "predicted loss at tokens = 1e+11" in " ".join(r.out.split()) and "+2.00 decades of tokens" in r.out
    for value, match in [("N=1e9", "predict names the size columns of the fit, tokens"),
                         ("tokens", "predict entries must look like name=value"), ("tokens=-5", "positive finite sizes"),
                         ("tokens=abc", "'tokens' has a non-numeric value 'abc'"),
                         ("tokens=1e9,tokens=1e10", "predict names 'tokens' twice")]:  # no longer the last one silently
        r = run_cli("scaling", "fit", csv, "--x", "tokens", "--y", "loss", "--predict", value)
        assert r.code == 2 and match in " ".join(r.err.split()) and "--predict" in r.err, (value, r.err)


@pytest.mark.parametrize("form", ["power", "offset", "chinchilla"])
def test_theta_from_natural_inverts_natural_params(form):
    from ttlab.scaling.fit_models import PARAM_NAMES, natural_params, theta_from_natural

    theta = np.random.default_rng(0).normal(size=(4, len(PARAM_NAMES[form])))
    np.testing.assert_allclose(theta_from_natural(form, natural_params(form, theta)), theta, rtol=1e-12, atol=1e-12)
