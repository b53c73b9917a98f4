"""The compute-optimal frontier (issue 35): closed form against a numerical minimisation, published exponents, the ID's
prediction, intervals from the fit's own replicates, and `ttlab scaling frontier` with its bad input."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from ttlab.errors import TTLabInputError
from ttlab.scaling.frontier import compute_optimal, id_allocation

CHINCHILLA = {"E": 1.69, "A": 406.4, "B": 410.7, "alpha": 0.34, "beta": 0.28}  # Hoffmann et al. 2022, Approach 3


@pytest.mark.parametrize("params", [CHINCHILLA, {"E": 1.82, "A": 482.0, "B": 2085.4, "alpha": 0.3478, "beta": 0.3658},
                                    {"E": 0.5, "A": 30.0, "B": 9000.0, "alpha": 0.9, "beta": 0.2}])
@pytest.mark.parametrize("k", [6.0, 2.0])
def test_the_closed_form_is_the_minimum_on_the_iso_flop_curve(params, k):
    f = compute_optimal(params, [1e17, 1e21, 1e25], flops_per_token=k)
    for e in f.budgets:
        nd = e["compute"] / k

        def loss(log_n: float) -> float:
            return params["E"] + params["A"] * math.exp(log_n) ** -params["alpha"] + params["B"] * (
                nd / math.exp(log_n)) ** -params["beta"]

        best = minimize_scalar(loss, bounds=(0.0, math.log(nd)), method="bounded", options={"xatol": 1e-12})
        assert e["n_opt"]["value"] == pytest.approx(math.exp(best.x), rel=1e-5)
        assert e["loss_opt"]["value"] == pytest.approx(best.fun, rel=1e-12)
        assert e["n_opt"]["value"] * e["d_opt"]["value"] == pytest.approx(nd, rel=1e-12)
        assert e["tokens_per_param"]["value"] == pytest.approx(e["d_opt"]["value"] / e["n_opt"]["value"])
    assert f.a["value"] + f.b["value"] == pytest.approx(1.0)
    assert f.a["value"] == pytest.approx(params["beta"] / (params["alpha"] + params["beta"]))


def test_hoffmann_et_al_s_approach_3_exponent_from_their_fit():
    # Hoffmann et al. report a = 0.46 for Approach 3, from the rounded α = 0.34, β = 0.28 (a = 0.452)
    assert compute_optimal(CHINCHILLA, [1e21]).a["value"] == pytest.approx(0.46, abs=0.01)


@pytest.mark.parametrize("d, beta", [(2.0, 1.0), (20.0, 1.0), (13.6, 0.5)])
def test_the_id_predicts_the_allocation(d, beta):
    p = id_allocation(d, beta)
    assert p["alpha_n"] == pytest.approx(2 * beta / d) and p["alpha_d"] == pytest.approx(2 * beta / (2 * beta + d))
    assert p["a"] == pytest.approx(d / (2 * d + 2 * beta)) and p["a"] + p["b"] == pytest.approx(1.0)
    assert p["a"] == pytest.approx(p["alpha_d"] / (p["alpha_n"] + p["alpha_d"]))
    with pytest.raises(TTLabInputError):
        id_allocation(-1.0)


def test_intervals_are_the_percentiles_of_the_replicates():
    rng = np.random.default_rng(0)
    rows = np.array([[CHINCHILLA[n] for n in ("E", "A", "alpha", "B", "beta")]] * 400)
    rows[:, 2] *= np.exp(rng.normal(0, 0.05, 400))
    rows[:, 4] *= np.exp(rng.normal(0, 0.05, 400))
    rows[3] = np.nan  # a failed refit is left out
    f = compute_optimal(CHINCHILLA, [1e20, 1e22], samples=rows, ci_level=0.9)
    ok = rows[np.isfinite(rows).all(1)]
    a = ok[:, 4] / (ok[:, 2] + ok[:, 4])
    assert f.a["ci"] == pytest.approx(list(np.quantile(a, [0.05, 0.95]))) and f.n_replicates == 399
    assert all(e["n_opt"]["ci"][0] < e["n_opt"]["value"] < e["n_opt"]["ci"][1] for e in f.budgets)
    assert len(repr(f)) < 200 and f.rows()[1]["compute"] == 1e22
    pd = pytest.importorskip("pandas")
    assert isinstance(f.to_frame(), pd.DataFrame) and "loss_opt_hi" in f.to_frame().columns


@pytest.mark.parametrize("compute, k, match", [([], 6.0, "at least one compute budget"),
                                                ([1e20, -1.0], 6.0, "positive finite FLOPs"),
                                                ([1e20, float("nan")], 6.0, "positive finite FLOPs"),
                                                ([1e20], 0.0, "flops_per_token must be a positive number")])
def test_bad_budgets_are_refused(compute, k, match):
    with pytest.raises(TTLabInputError, match=match):
        compute_optimal(CHINCHILLA, compute, flops_per_token=k)
    with pytest.raises(TTLabInputError, match="needs a Chinchilla-form fit"):
        compute_optimal({"A": 1.0, "alpha": 0.3}, [1e20])


def _runs_csv(path, seed=0, noise=0.01):
    rng = np.random.default_rng(seed)
    n = np.repeat(np.geomspace(1e7, 3e9, 6), 5)
    d = np.tile(np.geomspace(1e9, 3e11, 5), 6)
    p = CHINCHILLA
    loss = (p["E"] + p["A"] * n ** -p["alpha"] + p["B"] * d ** -p["beta"]) * np.exp(rng.normal(0, noise, n.size))
    path.write_text("N,D,loss\n" + "".join(f"{a:.6g},{b:.6g},{c:.6g}\n" for a, b, c in zip(n, d, loss)))
    return path


def test_the_command_from_a_csv_and_from_the_fit_json_agree(run_cli, tmp_path):
    csv = _runs_csv(tmp_path / "runs.csv")
    r = run_cli("scaling", "frontier", csv, "--compute", "1e20,1e22", "--bootstrap", "30", "--id", "20", "--json",
                "--plot", tmp_path / "f.png", "--out", tmp_path / "f.json")
    assert r.code == 0, r.err
    p = json.loads(r.out)
    truth = compute_optimal(CHINCHILLA, [1e20, 1e22])
    assert p["a"]["ci"][0] < truth.a["value"] < p["a"]["ci"][1] and p["n_replicates"] == 30
    assert [e["compute"] for e in p["budgets"]] == [1e20, 1e22]
    assert set(p["budgets"][0]) >= {"compute", "n_opt", "d_opt", "loss_opt"} and p["budgets"][0]["loss_opt"]["ci"]
    assert p["predicted"]["a"] == pytest.approx(20 / 42) and p["comparison"]["a_predicted"] == p["predicted"]["a"]
    assert p["config"]["compute"] == [1e20, 1e22] and "numpy" in p["versions"]
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads((tmp_path / "f.json").read_text())["a"] == p["a"]
    fit = tmp_path / "fit.json"  # the same fit, written by scaling fit, then read by frontier: the same intervals
    assert run_cli("scaling", "fit", csv, "--form", "chinchilla", "--x", "N", "--x2", "D", "--y", "loss", "--bootstrap",
                   "30", "--out", fit).code == 0
    r2 = run_cli("scaling", "frontier", fit, "--compute", "1e20,1e22", "--json")
    q = json.loads(r2.out)
    assert q["a"] == p["a"] and q["budgets"] == p["budgets"] and q["warnings"] == []


def test_the_command_says_what_is_wrong(run_cli, tmp_path):
    csv = _runs_csv(tmp_path / "runs.csv")
    power = tmp_path / "power.json"
    assert run_cli("scaling", "fit", csv, "--x", "N", "--y", "loss", "--bootstrap", "10", "--out", power).code == 0
    for args, match in [((power,), "a frontier needs a Chinchilla-form fit"),
                        ((csv, "--compute", "1e20,-5"), "positive finite FLOPs"),
                        ((csv, "--flops-per-token", "0"), "--flops-per-token"),
                        ((), "give a fit"),
                        ((csv, "--y", "nope"), "nope"),
                        ((tmp_path / "runs.txt",), "give a .csv of runs")]:
        r = run_cli("scaling", "frontier", *args)
        assert r.code == 2 and match in " ".join(r.err.split()) and "Traceback" not in r.err, (args, r.err)
    nan = tmp_path / "nan.csv"
    nan.write_text(csv.read_text().replace("\n1e+07,", "\nnan,", 1))
    r = run_cli("scaling", "frontier", nan)
    assert r.code == 2 and "non-finite" in r.err or "nan" in r.err.lower()
    r = run_cli("scaling", "frontier", "--id", "13.6")  # the ID alone: the exponents, no budgets
    assert r.code == 0 and "a = 0.4" in r.out and "compute-optimal allocation" not in r.out


def test_the_frontier_from_an_estimator_band(run_cli, tmp_path):
    """--from-compare: a from the paper's MLE and the range of a over the band's estimators (a grows with d)."""
    compare = tmp_path / "c.json"
    compare.write_text(json.dumps({"rows": [{"method": "mle", "dimension": 12.0}, {"method": "twonn", "dimension": 9.0},
                                            {"method": "tle", "dimension": 15.0}]}))
    r = run_cli("scaling", "frontier", "--from-compare", compare, "--json")
    assert r.code == 0, r.err
    p = json.loads(r.out)["predicted"]
    assert p["a"] == pytest.approx(12 / 26) and p["central_estimator"] == "mle"
    assert p["a_lo"] == pytest.approx(9 / 20) and p["a_hi"] == pytest.approx(15 / 32)
    assert set(p["estimators"]) == {"mle", "twonn", "tle"}
    r = run_cli("scaling", "frontier", "--from-compare", compare, "--id", "12")
    assert r.code == 2 and "one ID source" in r.err


@pytest.mark.parametrize("command", ["fit", "frontier"])
def test_a_figure_is_never_written_over_the_json(run_cli, tmp_path, command):
    """One check of a figure's path for every command (outputs.check_plot_file): --plot equal to --out is refused."""
    csv = _runs_csv(tmp_path / "runs.csv")
    same = tmp_path / "both.png"
    extra = ["--form", "chinchilla", "--x", "N", "--x2", "D", "--y", "loss"] if command == "fit" else []
    r = run_cli("scaling", command, csv, *extra, "--bootstrap", "5", "--plot", same, "--out", same)
    assert r.code == 2 and "plot and out are the same file" in r.err and not same.exists()


EPOCH = {"E": 1.82, "A": 482.01, "B": 2085.43, "alpha": 0.3478, "beta": 0.3658}  # Besiroglu et al. 2024's refit


def test_epoch_ai_s_refit_of_chinchilla_gives_a_near_one_half(run_cli, tmp_path):
    """Besiroglu et al. 2024 (Epoch AI) refit Hoffmann et al.'s data: a = β/(α+β) = 0.3658/0.7136 = 0.5126, b = 1 − a;
    and N_opt(C) is where the loss is least along N·D = C/6 (a numerical minimisation, and both neighbours higher)."""
    f = compute_optimal(EPOCH, [1e21, 1e23, 1e25])
    assert f.a["value"] == pytest.approx(0.5126, abs=0.001) and f.b["value"] == pytest.approx(1 - f.a["value"], abs=1e-12)
    for e in f.budgets:
        nd = e["compute"] / 6

        def loss(n: float) -> float:
            return EPOCH["E"] + EPOCH["A"] * n ** -EPOCH["alpha"] + EPOCH["B"] * (nd / n) ** -EPOCH["beta"]

        best = minimize_scalar(lambda t: loss(math.exp(t)), bounds=(0.0, math.log(nd)), method="bounded",
                               options={"xatol": 1e-10})
        n_opt = e["n_opt"]["value"]
        assert n_opt == pytest.approx(math.exp(best.x), rel=1e-4)
        assert loss(n_opt) <= best.fun + 1e-12 and loss(n_opt * 1.01) > loss(n_opt) < loss(n_opt / 1.01)
        assert e["loss_opt"]["value"] == pytest.approx(loss(n_opt), rel=1e-12)
    fit = tmp_path / "epoch.json"  # the same law as a fit file (the published parameters alone: no runs, no replicates)
    fit.write_text(json.dumps({"form": "chinchilla", "params": EPOCH}))
    r = run_cli("scaling", "frontier", fit, "--compute", "1e21,1e23,1e25", "--json")
    assert r.code == 0, r.err
    p = r.json()
    assert p["a"]["value"] == pytest.approx(0.5126, abs=0.001) and p["a"]["ci"] is None
    assert [e["n_opt"]["value"] for e in p["budgets"]] == pytest.approx([e["n_opt"]["value"] for e in f.budgets])
