"""`ttlab scaling fit --method varpro|grid --weights COLUMN --asymmetry A --drop-highest K`: passed to the fit,
recorded in the payload's config, shown by the table, and bad values refused naming the option."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def runs_csv(tmp_path):
    rng = np.random.default_rng(0)
    n, d = np.meshgrid(np.geomspace(1e7, 1e10, 6), np.geomspace(1e9, 1e12, 6))
    n, d = n.ravel(), d.ravel()
    loss = (1.69 + 406.4 / n**0.34 + 410.7 / d**0.28) * np.exp(rng.normal(0, 0.01, n.size))
    w = np.linspace(1, 2, n.size)
    path = tmp_path / "runs.csv"
    lines = ["N,D,loss,w,zero"] + [f"{a:.6g},{b:.6g},{c:.8g},{e:.4g},{0 if i == 4 else 1}"
                                   for i, (a, b, c, e) in enumerate(zip(n, d, loss, w))]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_every_new_option_reaches_the_fit_and_the_config(run_cli, runs_csv):
    res = run_cli("scaling", "fit", str(runs_csv), "--x", "N", "--x2", "D", "--y", "loss", "--form", "chinchilla",
                  "--method", "varpro", "--weights", "w", "--asymmetry", "3", "--drop-highest", "5", "--bootstrap", "4",
                  "--json")
    assert res.code == 0, res.err
    out = res.json()
    cfg = out["config"]
    assert (cfg["method"], cfg["weights"], cfg["asymmetry"], cfg["drop_highest"]) == ("varpro", "w", 3.0, 5)
    assert len(cfg["dropped"]) == 5 and out["n_points"] == 31
    fc = out["fit_config"]
    assert fc["method"] == "varpro" and fc["weighted"] is True and fc["asymmetry"] == 3.0
    assert out["optimizer"]["start_method"] == "varpro" and "varpro" in out["optimizer"]
    table = run_cli("scaling", "fit", str(runs_csv), "--x", "N", "--x2", "D", "--y", "loss", "--form", "chinchilla",
                    "--method", "varpro", "--weights", "w", "--asymmetry", "3", "--drop-highest", "5", "--bootstrap",
                    "0")
    assert table.code == 0, table.err
    assert "fit: starts: varpro; weighted; asymmetry 3; 5 highest-loss point(s) dropped" in " ".join(table.out.split())


def test_the_defaults_are_recorded_too(run_cli, runs_csv):
    out = run_cli("scaling", "fit", str(runs_csv), "--x", "N", "--y", "loss", "--form", "power", "--weights", "w",
                  "--bootstrap", "0", "--json").json()
    cfg = out["config"]
    assert cfg["method"] is None and cfg["asymmetry"] is None and cfg["drop_highest"] == 0 and cfg["dropped"] == []
    assert out["fit_config"]["weighted"] is True and "method" not in out["fit_config"]


@pytest.mark.parametrize("args, match, flag", [
    (["--form", "chinchilla", "--x2", "D", "--weights", "zero"], "weights column 'zero' must be positive and finite",
     "--weights"),
    (["--form", "chinchilla", "--x2", "D", "--weights", "nosuch"], "column(s) 'nosuch' not found", "--weights"),
    (["--form", "power", "--method", "varpro"], "method is only used by the offset and chinchilla forms", "--method"),
    (["--form", "power", "--asymmetry", "2"], "asymmetry is only used by the offset and chinchilla forms",
     "--asymmetry"),
    (["--form", "offset", "--asymmetry", "0.9"], "asymmetry must be a number >= 1", "--asymmetry"),
    (["--form", "offset", "--method", "lbfgs"], "unknown method 'lbfgs'", "--method"),
    (["--form", "offset", "--drop-highest", "33"], "leaves 3 of 36 points", "--drop-highest"),
    (["--form", "chinchilla", "--x2", "D", "--weights", "w", "--weight-by-compute", "sqrt"],
     "give one source of weights", "--weight-by-compute"),
    (["--form", "chinchilla", "--x2", "D", "--weights", "w", "--weight-by-compute", "sqrt"],
     "give one source of weights", "--weights"),
    (["--form", "offset", "--weight-by-compute", "sqrt"], "needs the chinchilla form's two sizes", "--weight-by-compute"),
    (["--form", "chinchilla", "--x2", "D", "--weight-by-compute", "cubic"], "unknown weight_by_compute 'cubic'",
     "--weight-by-compute"),
])
def test_bad_values_are_refused_naming_the_option(run_cli, runs_csv, args, match, flag):
    res = run_cli("scaling", "fit", str(runs_csv), "--x", "N", "--y", "loss", *args, "--bootstrap", "0", "--json")
    assert res.code == 2, res.out
    assert match in res.err and flag in res.err


@pytest.mark.parametrize("how, power", [("linear", 1.0), ("sqrt", 0.5)])
def test_weights_by_compute_are_a_weights_column_of_the_same_numbers(run_cli, runs_csv, tmp_path, how, power):
    """--weight-by-compute: w ∝ C^p, C = k·N·D, mean 1 — the fit (estimate and intervals) of a --weights column holding
    those numbers, recorded in the configuration, and not the unweighted fit."""
    from ttlab.scaling.fit_checks import compute_weights

    lines = runs_csv.read_text().splitlines()
    rows = [line.split(",") for line in lines[1:]]
    n, d = (np.array([float(r[i]) for r in rows]) for i in (0, 1))
    w = compute_weights(n, d, how)
    assert w.mean() == pytest.approx(1.0) and w == pytest.approx((n * d) ** power / np.mean((n * d) ** power))
    assert compute_weights(n * 1e290, d * 1e10, how) == pytest.approx(w)  # log space: no overflow at huge sizes
    csv = tmp_path / "with_c.csv"
    csv.write_text("\n".join([lines[0] + ",c"] + [f"{line},{float(v)!r}" for line, v in zip(lines[1:], w)]) + "\n")
    common = ["scaling", "fit", str(csv), "--x", "N", "--x2", "D", "--y", "loss", "--form", "chinchilla",
              "--bootstrap", "8", "--json"]
    by = run_cli(*common, "--weight-by-compute", how)
    col = run_cli(*common, "--weights", "c")
    plain_fit = run_cli(*common)
    assert by.code == col.code == plain_fit.code == 0, by.err + col.err
    b, c, u = by.json(), col.json(), plain_fit.json()
    assert b["params"] == c["params"] and b["ci"] == c["ci"]
    assert abs(b["params"]["alpha"] - u["params"]["alpha"]) > 1e-4  # the weights change the fit
    assert (b["config"]["weight_by_compute"], b["config"]["weights"], b["fit_config"]["weighted"]) == (how, None, True)
    assert (c["config"]["weight_by_compute"], u["config"]["weight_by_compute"]) == (None, None)
    table = run_cli(*common[:-1], "--weight-by-compute", how)
    assert "weighted by compute (w ∝ " + ("√C" if how == "sqrt" else "C") in " ".join(table.out.split())
