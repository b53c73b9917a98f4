"""Fits that cannot be identified say so: constant losses, collinear N and D, estimates at a bound,
and every bootstrap interval contains its point estimate."""

from __future__ import annotations

import numpy as np
import pytest

import ttlab.scaling.fit as fit_mod
from ttlab.errors import TTLabInputError
from ttlab.scaling import fit_chinchilla, fit_offset_power_law, fit_power_law
from ttlab.scaling.fit_checks import COLLINEAR_R, log_correlation

CHIN = {"E": 1.69, "A": 406.4, "alpha": 0.34, "B": 410.7, "beta": 0.28}


def _chin_loss(n, d):
    return CHIN["E"] + CHIN["A"] / n ** CHIN["alpha"] + CHIN["B"] / d ** CHIN["beta"]


@pytest.mark.parametrize("fitter", [fit_power_law, fit_offset_power_law])
@pytest.mark.parametrize("y", [[2.0] * 6, [2.0, 2.0 + 1e-12, 2.0, 2.0 - 1e-12, 2.0, 2.0]])
def test_constant_or_near_constant_loss_is_an_error(fitter, y):
    with pytest.raises(TTLabInputError, match="y is constant.*not identifiable"):
        fitter(np.geomspace(1, 1e5, 6), y, bootstrap=0)


def test_small_real_variation_is_still_fitted():
    x = np.geomspace(1, 1e5, 6)
    r = fit_power_law(x, 2.0 * x**-1e-4, bootstrap=0)  # tiny but real exponent
    assert r.params["alpha"] == pytest.approx(1e-4, rel=1e-6) and r.identifiable


def test_chinchilla_with_d_proportional_to_n_is_refused_with_the_correlation():
    """D = 20·N: A/N^α and B/D^β are both powers of N. The old fit answered β = 0.309 [0.305, 0.310]
    with R² = 1 while the truth was 0.28; now it refuses and reports corr(log N, log D)."""
    rng = np.random.default_rng(0)
    n = np.geomspace(1e7, 1e10, 12)
    d = 20 * n
    loss = _chin_loss(n, d) * np.exp(rng.normal(0, 0.01, n.size))
    with pytest.raises(TTLabInputError, match=r"collinear \(correlation 1\.0000"):
        fit_chinchilla(n, d, loss, bootstrap=0)
    # nearly proportional (jitter of a few percent) is still refused ...
    d2 = d * np.exp(rng.normal(0, 0.05, n.size))
    assert abs(log_correlation(np.log(n), np.log(d2))) >= COLLINEAR_R
    with pytest.raises(TTLabInputError, match="not identifiable"):
        fit_chinchilla(n, d2, loss, bootstrap=0)


def test_chinchilla_on_independent_n_and_d_reports_the_correlation():
    n, d = np.meshgrid(np.geomspace(1e7, 1e10, 4), np.geomspace(1e9, 1e12, 4))
    n, d = n.ravel(), d.ravel()
    r = fit_chinchilla(n, d, _chin_loss(n, d), bootstrap=0)
    assert r.identifiable and r.warnings == []
    assert r.diagnostics["corr_log_x_log_x2"] == pytest.approx(0.0, abs=1e-12)
    assert r.to_dict()["diagnostics"]["distinct_x2"] == 4


def test_offset_exponent_at_its_bound_is_flagged_not_identifiable():
    x = np.geomspace(10, 1e5, 8)
    r = fit_offset_power_law(x, 1 + 0.1 * np.log(x), bootstrap=30)  # loss *rises*: α̂ pinned at 0
    assert r.params["alpha"] < 1e-6
    assert r.identifiable is False
    assert any("at its bound" in w for w in r.warnings)
    d = r.to_dict()
    assert d["identifiable"] is False and d["warnings"]


def _check_ci_contains_estimate(r):
    assert r.ci, "bootstrap intervals expected"
    for k, (lo, hi) in r.ci.items():
        assert lo <= r.params[k] <= hi, (k, lo, r.params[k], hi)


@pytest.mark.parametrize("method", ["residual", "pairs"])
def test_every_interval_contains_its_estimate_power(method):
    for seed in range(40):
        rng = np.random.default_rng(seed)
        x = np.geomspace(1e2, 1e7, int(rng.integers(3, 12)))
        y = rng.uniform(1, 50) * x ** -rng.uniform(-0.2, 1.0) * np.exp(rng.normal(0, rng.choice([1e-3, 0.05, 0.3]), x.size))
        _check_ci_contains_estimate(fit_power_law(x, y, bootstrap=60, seed=seed, bootstrap_method=method))


@pytest.mark.parametrize("method", ["residual", "pairs"])
def test_every_interval_contains_its_estimate_offset(method):
    for seed in range(6):
        rng = np.random.default_rng(100 + seed)
        x = np.geomspace(1e3, 1e7, int(rng.integers(4, 10)))
        y = (rng.uniform(0.5, 3) + rng.uniform(1, 100) * x ** -rng.uniform(0.05, 0.8)) * np.exp(
            rng.normal(0, rng.choice([0.001, 0.02, 0.1]), x.size))
        _check_ci_contains_estimate(fit_offset_power_law(x, y, bootstrap=30, seed=seed, bootstrap_method=method))


def test_every_interval_contains_its_estimate_chinchilla():
    for seed in range(2):
        rng = np.random.default_rng(seed)
        n, d = np.meshgrid(np.geomspace(1e7, 1e10, 4), np.geomspace(1e9, 1e12, 4))
        n, d = n.ravel(), d.ravel()
        loss = _chin_loss(n, d) * np.exp(rng.normal(0, 0.02, n.size))
        _check_ci_contains_estimate(fit_chinchilla(n, d, loss, bootstrap=15, seed=seed))


def test_interval_that_misses_its_estimate_is_widened_and_flagged(monkeypatch):
    real = fit_mod._bootstrap

    def shifted(*args, **kwargs):  # a bootstrap distribution entirely above the estimate
        samples, rejected = real(*args, **kwargs)
        samples = samples.copy()
        samples[:, 1] += 1.0  # α
        return samples, rejected

    monkeypatch.setattr(fit_mod, "_bootstrap", shifted)
    x = np.geomspace(1, 1e4, 8)
    r = fit_power_law(x, 3 * x**-0.5, bootstrap=50)
    lo, hi = r.ci["alpha"]
    assert lo == pytest.approx(r.params["alpha"]) and hi > 1.4
    assert "alpha" in r.diagnostics["ci_widened_to_estimate"]
    assert any("widened" in w for w in r.warnings)


@pytest.mark.parametrize("as_json", [False, True])
def test_cli_chinchilla_collinear_exits_2_with_the_correlation(run_cli, tmp_path, as_json):
    n = np.geomspace(1e7, 1e10, 8)
    rows = "\n".join(f"{a},{20 * a},{_chin_loss(a, 20 * a)}" for a in n)
    p = tmp_path / "chin.csv"
    p.write_text("N,D,L\n" + rows + "\n")
    res = run_cli("scaling", "fit", p, "--form", "chinchilla", "--x", "N", "--x2", "D", "--y", "L",
                  *(["--json"] if as_json else []))
    assert res.code == 2 and res.out == ""
    assert "log N and log D are collinear (correlation 1.0000" in res.err.replace("\n", " ")
