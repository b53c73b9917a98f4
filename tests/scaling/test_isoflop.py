"""Hoffmann et al.'s Approach 2 (issue 35 item 3): IsoFLOP parabolas → N_opt per budget → N_opt ∝ C^a."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.scaling.frontier import compute_optimal
from ttlab.scaling.isoflop import isoflop_frontier

LAW = {"E": 1.69, "A": 406.4, "B": 410.7, "alpha": 0.34, "beta": 0.28}


def _runs(budgets=(1e18, 1e19, 1e20, 1e21, 1e22), noise=0.003, seed=0):
    truth = compute_optimal(LAW, budgets)
    rng = np.random.default_rng(seed)
    rows = []
    for e in truth.budgets:
        for f in np.geomspace(1 / 8, 8, 9):  # sizes around the optimum of the budget, as an IsoFLOP sweep has them
            n = e["n_opt"]["value"] * f
            d = e["compute"] / 6 / n
            loss = (LAW["E"] + LAW["A"] * n ** -LAW["alpha"] + LAW["B"] * d ** -LAW["beta"]) * np.exp(rng.normal(0, noise))
            rows.append((n, e["compute"], loss))
    return np.array(rows), truth


def test_the_parabolas_find_the_optimum_and_the_exponent():
    rows, truth = _runs()
    r = isoflop_frontier(rows[:, 0], rows[:, 1], rows[:, 2], bootstrap=200)
    assert r.a["ci"][0] < truth.a["value"] < r.a["ci"][1] and abs(r.a["value"] - truth.a["value"]) < 0.01
    for got, want in zip(r.budgets, truth.budgets):
        assert got["n_opt"]["value"] == pytest.approx(want["n_opt"]["value"], rel=0.08)
        assert got["loss_opt"] == pytest.approx(want["loss_opt"]["value"], rel=0.01)
    exact = isoflop_frontier(*_runs(noise=0.0)[0].T, bootstrap=0)  # without noise: the parabola's own bias only
    assert exact.a["ci"] is None and abs(exact.a["value"] - truth.a["value"]) < 0.005


def test_a_budget_without_a_minimum_is_named_and_too_few_are_refused():
    rows, _ = _runs(budgets=(1e18, 1e19, 1e20))
    rows = rows[(rows[:, 1] != 1e20) | (rows[:, 0] < np.median(rows[rows[:, 1] == 1e20, 0]))]  # 1e20: one side only
    r = isoflop_frontier(rows[:, 0], rows[:, 1], rows[:, 2], bootstrap=20)
    assert r.budgets[2]["n_opt"] is None and "no minimum inside the measured sizes" in r.budgets[2]["note"]
    with pytest.raises(TTLabInputError, match="1 budget.* gave an optimum; a slope needs at least 2"):
        isoflop_frontier(rows[:9, 0], rows[:9, 1], rows[:9, 2])
    with pytest.raises(TTLabInputError, match="loss must be positive and finite; not at rows \\[0\\]"):
        isoflop_frontier([1.0, 2.0], [1.0, 1.0], [float("nan"), 1.0])


def test_the_command(run_cli, tmp_path):
    rows, truth = _runs()
    csv = tmp_path / "iso.csv"
    csv.write_text("N,C,loss\n" + "".join(f"{n:.6g},{c:.6g},{v:.6g}\n" for n, c, v in rows))
    r = run_cli("scaling", "isoflop", csv, "--bootstrap", "50", "--json", "--out", tmp_path / "iso.json")
    assert r.code == 0, r.err
    p = json.loads(r.out)
    assert p["a"]["ci"][0] < truth.a["value"] < p["a"]["ci"][1] and p["config"]["bootstrap"] == 50
    assert json.loads((tmp_path / "iso.json").read_text())["a"] == p["a"] and "numpy" in p["versions"]
    r = run_cli("scaling", "isoflop", csv, "--bootstrap", "20")
    assert r.code == 0 and "N_opt ∝ C^a, a = " in r.out and "optimal size per compute budget" in r.out
    r = run_cli("scaling", "isoflop", csv, "--c", "N")
    assert r.code == 2 and "must name different columns" in r.err
