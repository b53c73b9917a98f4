"""Chinchilla-form objectives as the field runs them: Hoffmann et al.'s summed Huber loss and
Besiroglu et al.'s (Epoch AI) Huber likelihood with a fitted scale; the pairs bootstrap default."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.optimize import check_grad

from ttlab.errors import TTLabInputError
from ttlab.scaling.fit import DEFAULT_BOOTSTRAP_METHOD, fit_chinchilla, fit_power_law
from ttlab.scaling.fit_models import OBJECTIVES, chinchilla_huber_nll, huber_log_normaliser, huber_logpdf, profile_scale

CHIN = {"E": 1.69, "A": 406.4, "alpha": 0.34, "B": 410.7, "beta": 0.28}


def grid(k: int = 8):
    n, d = np.meshgrid(np.geomspace(1e7, 1e10, k), np.geomspace(1e9, 1e12, k))
    n, d = n.ravel(), d.ravel()
    return n, d, CHIN["E"] + CHIN["A"] / n ** CHIN["alpha"] + CHIN["B"] / d ** CHIN["beta"]


def rel_errors(params: dict[str, float]) -> dict[str, float]:
    return {k: abs(params[k] - v) / v for k, v in CHIN.items()}


# ------------------------------------------------------------------------------------------
# the Huber density and its normaliser


@pytest.mark.parametrize("delta", [1e-3, 0.1, 1.345, 4.0])
@pytest.mark.parametrize("scale", [1e-2, 1.0])
def test_huber_density_integrates_to_one(delta, scale):
    edges = [-np.inf, -delta * scale, delta * scale, np.inf]  # quad over the core and the two tails
    total = sum(integrate.quad(lambda r: math.exp(huber_logpdf(r, delta, scale)), a, b, limit=200)[0]
                for a, b in zip(edges[:-1], edges[1:]))
    assert total == pytest.approx(1.0, abs=1e-9)


def test_huber_normaliser_limits():
    # δ → ∞: the Gaussian normaliser √(2π); small δ: the Laplace-like tails dominate, Z ≈ 2/δ
    assert huber_log_normaliser(40.0) == pytest.approx(0.5 * math.log(2 * math.pi), abs=1e-12)
    assert huber_log_normaliser(1e-3) == pytest.approx(math.log(2 / 1e-3), rel=1e-6)


# ------------------------------------------------------------------------------------------
# gradients and the profiled scale


@pytest.mark.parametrize("reduction", ["sum", "mean"])
@pytest.mark.parametrize("log_sigma", [math.log(2e-2), math.log(1e-4)])
def test_likelihood_gradient_matches_finite_differences(reduction, log_sigma):
    rng = np.random.default_rng(1)
    n, d, loss = grid(4)
    args = (np.log(n), np.log(d), np.log(loss) + rng.normal(0, 0.05, n.size), 1e-3, reduction)
    theta = np.array([0.5, 6.0, 0.34, 6.0, 0.28, log_sigma]) + rng.normal(0, 0.01, 6)
    g = chinchilla_huber_nll(theta, *args)[1]
    err = check_grad(lambda t: chinchilla_huber_nll(t, *args)[0], lambda t: chinchilla_huber_nll(t, *args)[1], theta,
                     epsilon=1e-7)
    assert err < 1e-5 * max(1.0, np.linalg.norm(g))


def test_likelihood_equals_sum_of_logpdf():
    rng = np.random.default_rng(2)
    n, d, loss = grid(3)
    ly = np.log(loss) + rng.normal(0, 0.02, n.size)
    theta = np.array([0.52, 6.0, 0.34, 6.0, 0.28, math.log(3e-3)])
    pred = np.log(np.exp(0.52) + np.exp(6.0 - 0.34 * np.log(n)) + np.exp(6.0 - 0.28 * np.log(d)))
    expected = -huber_logpdf(pred - ly, 1e-3, 3e-3).sum()
    assert chinchilla_huber_nll(theta, np.log(n), np.log(d), ly)[0] == pytest.approx(expected, rel=1e-12)


def test_profile_scale_is_the_stationary_point():
    """∂NLL/∂s = 0 ⇔ mean min(u², δ|u|) = 1; the NLL is larger on both sides of the root."""
    rng = np.random.default_rng(3)
    r = rng.standard_t(2.0, size=(3, 40)) * 0.01
    for delta in (1e-3, 1.345):
        sig = profile_scale(r, delta)
        u = np.abs(r) / sig[:, None]
        np.testing.assert_allclose(np.minimum(u * u, delta * u).mean(axis=1), 1.0, rtol=1e-9)
        for row, s in zip(r, sig):
            nll = [-huber_logpdf(row, delta, s * f).sum() for f in (0.99, 1.0, 1.01)]
            assert nll[1] < nll[0] and nll[1] < nll[2]
    # δ → 0 makes the density Laplace-like: σ → δ·mean|r|
    np.testing.assert_allclose(profile_scale(r, 1e-3), 1e-3 * np.abs(r).mean(axis=1), rtol=1e-5)


# ------------------------------------------------------------------------------------------
# recovery, agreement on clean data, disagreement under contamination


@pytest.fixture(scope="module")
def clean_fits():
    n, d, loss = grid(8)
    noisy = loss * np.exp(np.random.default_rng(0).normal(0.0, 0.01, loss.size))
    fits: dict = {obj: fit_chinchilla(n, d, noisy, bootstrap=0, objective=obj) for obj in OBJECTIVES}
    return {**fits, "data": noisy}


def test_both_objectives_recover_known_parameters(clean_fits):
    for obj in OBJECTIVES:
        r = clean_fits[obj]
        assert abs(r.params["alpha"] - CHIN["alpha"]) < 0.02, obj
        assert abs(r.params["beta"] - CHIN["beta"]) < 0.02, obj
        assert abs(r.params["E"] - CHIN["E"]) < 0.1, obj
        assert r.config["objective"] == obj and r.optimizer["objective_name"] == obj
    lik = clean_fits["huber-likelihood"]
    # at the joint optimum the fitted scale is the profile root of the fitted curve's residuals
    n, d, _ = grid(8)
    noisy = clean_fits["data"]
    resid = np.log(lik.predict(n, d)) - np.log(noisy)
    assert lik.optimizer["scale"] == pytest.approx(float(profile_scale(resid, 1e-3)[0]), rel=1e-4)
    assert "scale" not in clean_fits["huber"].optimizer


def test_objectives_agree_on_clean_data(clean_fits):
    h, lik = clean_fits["huber"], clean_fits["huber-likelihood"]
    assert abs(h.params["alpha"] - lik.params["alpha"]) < 5e-3
    assert abs(h.params["beta"] - lik.params["beta"]) < 5e-3
    assert abs(h.params["E"] - lik.params["E"]) < 0.02


def test_objectives_differ_under_contaminated_noise():
    """Noise (1e-5) far below δ = 1e-3: the plain Huber fit is least squares on the bulk, and 8 of 64
    points shifted by +5e-4 pull it; the likelihood's δ applies to r/σ with σ fitted to the bulk, so it
    stays near the truth. The control: the same design without the shifts, where both recover it."""
    n, d, loss = grid(8)
    rng = np.random.default_rng(0)
    eps = rng.normal(0.0, 1e-5, loss.size)
    shifted = eps.copy()
    shifted[rng.choice(loss.size, 8, replace=False)] += 5e-4
    fits = {(name, obj): fit_chinchilla(n, d, loss * np.exp(e), bootstrap=0, objective=obj, n_starts=2).params
            for name, e in (("clean", eps), ("contaminated", shifted)) for obj in OBJECTIVES}
    for obj in OBJECTIVES:  # the control: without the shifts both are within 1e-3 (relative) of the truth
        assert max(rel_errors(fits["clean", obj]).values()) < 1e-3, obj
    pull = {obj: max(abs(fits["contaminated", obj][k] - v) / v for k, v in fits["clean", obj].items())
            for obj in OBJECTIVES}
    assert pull["huber"] > 1e-3
    assert pull["huber-likelihood"] < pull["huber"] / 5


# ------------------------------------------------------------------------------------------
# bootstrap default, options, CLI


def test_chinchilla_bootstrap_defaults_to_pairs_other_forms_to_residual():
    assert DEFAULT_BOOTSTRAP_METHOD == {"power": "residual", "offset": "residual", "chinchilla": "pairs"}
    n, d, loss = grid(4)
    loss = loss * np.exp(np.random.default_rng(4).normal(0.0, 0.01, loss.size))
    r = fit_chinchilla(n, d, loss, bootstrap=3, n_starts=1, objective="huber-likelihood")
    assert r.bootstrap["method"] == "pairs" == r.config["bootstrap_method"] and r.bootstrap["n_used"] == 3
    x = np.geomspace(1e3, 1e6, 6)
    assert fit_power_law(x, 3 * x**-0.3, bootstrap=2).bootstrap["method"] == "residual"


def test_bad_objective_is_refused():
    n, d, loss = grid(3)
    with pytest.raises(TTLabInputError, match="objective must be one of huber, huber-likelihood"):
        fit_chinchilla(n, d, loss, objective="likelihood", bootstrap=0)


@pytest.fixture
def chin_csv(tmp_path):
    n, d, loss = grid(4)
    loss = loss * np.exp(np.random.default_rng(5).normal(0.0, 0.01, loss.size))
    p = tmp_path / "chin.csv"
    p.write_text("N,D,L\n" + "".join(f"{a},{b},{c}\n" for a, b, c in zip(n, d, loss)))
    return p


def test_cli_objective_and_default_bootstrap(run_cli, chin_csv):
    res = run_cli("scaling", "fit", chin_csv, "--x", "N", "--x2", "D", "--y", "L", "--form", "chinchilla",
                  "--objective", "huber-likelihood", "--bootstrap", "2", "--n-starts", "1", "--json")
    assert res.code == 0, res.err
    out = res.json()
    assert out["fit_config"]["objective"] == "huber-likelihood" and out["config"]["objective"] == "huber-likelihood"
    assert out["bootstrap"]["method"] == "pairs" and out["config"]["bootstrap_method"] == "pairs"
    assert out["optimizer"]["scale"] > 0
    table = run_cli("scaling", "fit", chin_csv, "--x", "N", "--x2", "D", "--y", "L", "--form", "chinchilla",
                    "--objective", "huber-likelihood", "--bootstrap", "0", "--n-starts", "1")
    assert table.code == 0 and "fitted scale σ" in table.out


@pytest.mark.parametrize(
    "extra, match",
    [
        (["--form", "chinchilla", "--x2", "D", "--objective", "gauss"],
         "unknown objective 'gauss'; choose one of huber, huber-likelihood (command-line option: --objective)"),
        (["--objective", "huber"], "objective is only used by form chinchilla, not by form power (command-line "
         "options: --objective, --form)"),
    ],
)
def test_cli_bad_objective_exits_2(run_cli, chin_csv, extra, match):
    res = run_cli("scaling", "fit", chin_csv, "--x", "N", "--y", "L", "--bootstrap", "0", *extra)
    assert res.code == 2, (res.out, res.err)
    assert match in " ".join(res.err.split()), res.err


def test_cli_help_documents_the_options(run_cli):
    res = run_cli("scaling", "fit", "--help")
    text = " ".join(res.out.replace("│", " ").split())  # the help panel's borders fall inside wrapped lines
    assert "--objective" in text and "huber-likelihood" in text and "Besiroglu" in text
    assert "pairs for chinchilla" in text
