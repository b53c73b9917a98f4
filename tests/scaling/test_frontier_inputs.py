"""What `ttlab scaling frontier` reads besides the fit (issue 35): the IsoFLOP optima of `scaling isoflop --out`
(`--isoflop`: drawn on the plot, and the fit's N_opt set beside them), and the runs a fit file keeps (`scaling fit
--out` writes them; the plot of a fit JSON shows them; an older file without them still works)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import view_text
from ttlab.errors import TTLabInputError
from ttlab.scaling.frontier import compute_optimal
from ttlab.scaling.frontier_file import FittedSource, isoflop_comparison, read_source
from ttlab.scaling.isoflop import isoflop_frontier, read_isoflop
from ttlab.scaling.plot import plot_frontier
from ttlab.scaling.views import frontier_view

LAW = {"E": 1.69, "A": 406.4, "B": 410.7, "alpha": 0.34, "beta": 0.28}
BUDGETS = (1e18, 1e19, 1e20, 1e21)


def _loss(n, d):
    return LAW["E"] + LAW["A"] * n ** -LAW["alpha"] + LAW["B"] * d ** -LAW["beta"]


@pytest.fixture
def iso_csv(tmp_path):
    """IsoFLOP sweeps of Hoffmann et al.'s law (9 sizes per budget around its optimum, 0.3 % noise), with D."""
    rng = np.random.default_rng(0)
    lines = ["N,D,C,loss"]
    for e in compute_optimal(LAW, BUDGETS).budgets:
        for f in np.geomspace(1 / 8, 8, 9):
            n = e["n_opt"]["value"] * f
            d = e["compute"] / 6 / n
            noisy = _loss(n, d) * np.exp(rng.normal(0, 0.003))
            lines.append(",".join(repr(float(v)) for v in (n, d, e["compute"], noisy)))
    path = tmp_path / "iso.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _iso_json(path, budgets, k=6.0, command="ttlab scaling isoflop"):
    """An IsoFLOP JSON as `scaling isoflop --out` writes it, with the given budgets (k None: not recorded)."""
    config = {"command": command} | ({} if k is None else {"flops_per_token": k})
    path.write_text(json.dumps({"a": {"value": 0.45, "ci": [0.44, 0.46]}, "budgets": budgets, "config": config}))
    return path


def test_the_fit_s_n_opt_beside_each_isoflop_optimum(tmp_path):
    """Per IsoFLOP budget: both N_opt, their ratio (parametric / IsoFLOP), whether the fit's interval holds the IsoFLOP
    optimum; a budget without an optimum keeps its note."""
    truth = compute_optimal(LAW, [1e19, 1e21])
    n19, n21 = (e["n_opt"]["value"] for e in truth.budgets)
    iso = read_isoflop(_iso_json(tmp_path / "iso.json", [
        {"compute": 1e19, "n_opt": {"value": 2 * n19, "ci": [1.5 * n19, 2.5 * n19]}},
        {"compute": 1e20, "n_opt": None, "note": "no minimum inside the measured sizes"},
        {"compute": 1e21, "n_opt": {"value": n21 / 4, "ci": None}}]), 6.0)
    rows = np.array([[LAW[k] for k in ("E", "A", "alpha", "B", "beta")]] * 50)
    rows[:, 2] *= np.exp(np.random.default_rng(0).normal(0, 0.02, 50))
    fitted = FittedSource(dict(LAW), rows, 0.95, [], None, {})
    cmp_ = isoflop_comparison(fitted, iso, 6.0)
    b19, b20, b21 = cmp_["budgets"]
    assert b19["ratio"] == pytest.approx(0.5, rel=1e-12) and b21["ratio"] == pytest.approx(4.0, rel=1e-12)
    assert b19["n_opt_parametric"]["value"] == pytest.approx(n19, rel=1e-12)
    assert b19["n_opt_isoflop"] == {"value": 2 * n19, "ci": [1.5 * n19, 2.5 * n19]}
    lo, hi = b19["n_opt_parametric"]["ci"]
    assert lo < n19 < hi and b19["isoflop_in_ci"] is (lo <= 2 * n19 <= hi) is False
    assert b20["ratio"] is None and "no minimum" in b20["note"]
    assert cmp_["a_parametric"]["value"] == pytest.approx(truth.a["value"]) and cmp_["a_isoflop"]["value"] == 0.45
    text = view_text(frontier_view({"isoflop": cmp_, "warnings": []}), cells=True)
    assert "parametric N_opt against the IsoFLOP optima" in text and "0.500" in text and "4.000" in text


def test_frontier_isoflop_end_to_end(run_cli, iso_csv, tmp_path):
    """isoflop --out, fit --out, frontier --isoflop: the optima are the IsoFLOP file's, the fit's N_opt its frontier at
    those budgets; on Hoffmann et al.'s law both agree within 10 %; the plot is written."""
    iso, fit = tmp_path / "iso.json", tmp_path / "fit.json"
    assert run_cli("scaling", "isoflop", iso_csv, "--bootstrap", "30", "--out", iso).code == 0
    assert run_cli("scaling", "fit", iso_csv, "--form", "chinchilla", "--x", "N", "--x2", "D", "--y", "loss",
                   "--bootstrap", "10", "--out", fit).code == 0
    r = run_cli("scaling", "frontier", fit, "--isoflop", iso, "--compute", "1e22", "--json", "--plot", tmp_path / "f.png")
    assert r.code == 0, r.err
    p = r.json()
    saved, params = json.loads(iso.read_text()), json.loads(fit.read_text())["params"]
    assert [b["compute"] for b in p["isoflop"]["budgets"]] == list(BUDGETS)
    at = compute_optimal(params, BUDGETS).budgets
    for row, b, want in zip(p["isoflop"]["budgets"], saved["budgets"], at):
        assert row["n_opt_isoflop"] == b["n_opt"]
        assert row["n_opt_parametric"]["value"] == pytest.approx(want["n_opt"]["value"], rel=1e-9)
        assert row["ratio"] == pytest.approx(row["n_opt_parametric"]["value"] / b["n_opt"]["value"], rel=1e-12)
        assert 0.9 < row["ratio"] < 1.1
    assert p["isoflop"]["a_isoflop"] == saved["a"] and p["config"]["isoflop"] == str(iso)
    assert (tmp_path / "f.png").stat().st_size > 0
    table = run_cli("scaling", "frontier", fit, "--isoflop", iso, "--compute", "1e22")
    assert "IsoFLOP profiles" in table.out and "fit / IsoFLOP" in table.out


def test_the_plot_draws_each_isoflop_optimum_on_its_iso_flop_line():
    f = compute_optimal(LAW, [1e20, 1e22], flops_per_token=2.0)  # k = 2: the lines are N·D = C/2
    budgets = [{"compute": 1e18, "n_opt": {"value": 9e7, "ci": [8e7, 1e8]}}, {"compute": 1e19, "n_opt": None},
               {"compute": 1e21, "n_opt": {"value": 2e9, "ci": None}}]
    fig = plot_frontier(f, isoflop=budgets)
    ax = fig.axes[0]
    (marks,) = [ln for ln in ax.get_lines() if ln.get_label().startswith("IsoFLOP optima")]
    assert list(marks.get_xdata()) == [9e7, 2e9]
    assert list(marks.get_ydata()) == pytest.approx([1e18 / 2 / 9e7, 1e21 / 2 / 2e9])
    spans = [ln for ln in ax.get_lines() if ln.get_xdata()[0] == pytest.approx(8e7) and
             ln.get_xdata()[-1] == pytest.approx(1e8)]
    assert len(spans) == 1 and spans[0].get_ydata() == pytest.approx(1e18 / 2 / np.asarray(spans[0].get_xdata()))
    x_lo, _ = ax.get_xlim()
    assert x_lo < 9e7  # the axes hold the IsoFLOP optima, below the frontier's own budgets
    assert not any(ln.get_label().startswith("IsoFLOP") for ln in plot_frontier(f).axes[0].get_lines())


def test_isoflop_records_k_and_d_opt(iso_csv, tmp_path):
    from ttlab.scaling.isoflop import isoflop_file

    p = isoflop_file(iso_csv, "N", "C", "loss", bootstrap=20, flops_per_token=2.0, out=tmp_path / "iso.json")
    assert p["config"]["flops_per_token"] == 2.0 and p["flops_per_token"] == 2.0
    for e in p["budgets"]:
        n = e["n_opt"]
        assert e["d_opt"]["value"] == pytest.approx(e["compute"] / 2 / n["value"], rel=1e-12)
        assert e["d_opt"]["ci"] == pytest.approx([e["compute"] / 2 / n["ci"][1], e["compute"] / 2 / n["ci"][0]])
    with pytest.raises(TTLabInputError, match="flops_per_token must be a positive number"):
        isoflop_frontier([1.0, 2.0, 3.0], [1.0] * 3, [1.0] * 3, flops_per_token=0.0)


def test_bad_isoflop_input_is_refused_naming_the_option_and_the_file(run_cli, iso_csv, tmp_path):
    fit = tmp_path / "fit.json"
    assert run_cli("scaling", "fit", iso_csv, "--form", "chinchilla", "--x", "N", "--x2", "D", "--y", "loss",
                   "--bootstrap", "0", "--out", fit).code == 0
    k2 = tmp_path / "iso_k2.json"
    assert run_cli("scaling", "isoflop", iso_csv, "--bootstrap", "5", "--flops-per-token", "2", "--out", k2).code == 0
    frontier_json = tmp_path / "frontier.json"
    assert run_cli("scaling", "frontier", fit, "--compute", "1e20", "--out", frontier_json).code == 0
    text = tmp_path / "notes.txt"
    text.write_text("not json")
    good = {"compute": 1e19, "n_opt": {"value": 1e8, "ci": None}}
    for iso, match in [(fit, "not an IsoFLOP result"), (frontier_json, "not an IsoFLOP result"),
                       (text, "not a readable JSON"), (tmp_path / "missing.json", "not a readable JSON"),
                       (_iso_json(tmp_path / "neg.json", [{"compute": 1e19, "n_opt": {"value": -1.0, "ci": None}}]),
                        "not a valid IsoFLOP result"),
                       (_iso_json(tmp_path / "none.json", [{"compute": 1e19, "n_opt": None}]), "holds no budget"),
                       (_iso_json(tmp_path / "bad_k.json", [good], k="six"), "is not a positive number"),
                       (k2, "computed with 2 FLOPs per parameter and token")]:
        r = run_cli("scaling", "frontier", fit, "--isoflop", iso)
        err = " ".join(r.err.split())
        assert r.code == 2 and match in err and str(iso) in err and "--isoflop" in err, (iso, r.err)
        assert "Traceback" not in r.err
    assert "--flops-per-token" in " ".join(run_cli("scaling", "frontier", fit, "--isoflop", k2).err.split())
    assert run_cli("scaling", "frontier", fit, "--isoflop", k2, "--flops-per-token", "2").code == 0  # the same k: fine
    old = _iso_json(tmp_path / "old.json", [good], k=None)  # written before k was recorded: taken as is
    assert run_cli("scaling", "frontier", fit, "--isoflop", old).code == 0
    r = run_cli("scaling", "frontier", "--id", "12", "--isoflop", old)
    assert r.code == 2 and "give the fit too" in r.err and "--isoflop" in r.err


def _runs_csv(path):
    rng = np.random.default_rng(1)
    n = np.repeat(np.geomspace(1e7, 3e9, 6), 5)
    d = np.tile(np.geomspace(1e9, 3e11, 5), 6)
    loss = _loss(n, d) * np.exp(rng.normal(0, 0.01, n.size))
    w = np.linspace(1.0, 3.0, n.size)
    path.write_text("N,D,loss,w\n" + "".join(",".join(repr(float(v)) for v in row) + "\n" for row in zip(n, d, loss, w)))
    return n, d, loss, w


def test_a_fit_file_keeps_its_runs_and_the_frontier_draws_them(run_cli, tmp_path, monkeypatch):
    """scaling fit --out records the runs fitted (without the dropped ones; weights as used, mean 1); frontier reads
    them from the file and draws them as it draws a CSV's."""
    import ttlab.scaling.plot as plot_module

    n, d, loss, w = _runs_csv(tmp_path / "runs.csv")
    fit = tmp_path / "fit.json"
    assert run_cli("scaling", "fit", tmp_path / "runs.csv", "--form", "chinchilla", "--x", "N", "--x2", "D", "--y",
                   "loss", "--bootstrap", "5", "--weights", "w", "--drop-highest", "2", "--out", fit).code == 0
    saved = json.loads(fit.read_text())
    kept = np.delete(np.arange(n.size), saved["config"]["dropped"])
    pts = saved["points"]
    assert pts["columns"] == {"x": "N", "y": "loss", "x2": "D"} and len(kept) == n.size - 2
    assert pts["x"] == n[kept].tolist() and pts["x2"] == d[kept].tolist() and pts["y"] == loss[kept].tolist()
    assert pts["weights"] == pytest.approx((w[kept] / w[kept].mean()).tolist())
    data = read_source(fit, "N", "D", "loss").data
    assert data is not None and [c.tolist() for c in data] == [n[kept].tolist(), d[kept].tolist(), loss[kept].tolist()]
    drawn = []
    real = plot_module.plot_frontier
    monkeypatch.setattr(plot_module, "plot_frontier", lambda f, data=None, **kw: drawn.append(data) or real(f, data, **kw))
    r = run_cli("scaling", "frontier", fit, "--plot", tmp_path / "f.png", "--json")
    assert r.code == 0, r.err
    assert drawn[0] is not None and drawn[0][0].tolist() == n[kept].tolist() and r.json()["warnings"] == []
    fig = real(compute_optimal(saved["params"], [1e20]), drawn[0])
    (runs,) = [c for c in fig.axes[0].collections if c.get_label() == "runs"]
    assert runs.get_offsets().data.tolist() == np.column_stack([n[kept], d[kept]]).tolist()


def test_an_older_fit_file_without_runs_still_draws(run_cli, tmp_path, monkeypatch):
    import ttlab.scaling.plot as plot_module

    _runs_csv(tmp_path / "runs.csv")
    fit = tmp_path / "fit.json"
    assert run_cli("scaling", "fit", tmp_path / "runs.csv", "--form", "chinchilla", "--x", "N", "--x2", "D", "--y",
                   "loss", "--bootstrap", "5", "--out", fit).code == 0
    payload = json.loads(fit.read_text())
    old = tmp_path / "old.json"
    old.write_text(json.dumps({k: v for k, v in payload.items() if k != "points"}))
    drawn = []
    real = plot_module.plot_frontier
    monkeypatch.setattr(plot_module, "plot_frontier", lambda f, data=None, **kw: drawn.append(data) or real(f, data, **kw))
    r = run_cli("scaling", "frontier", old, "--plot", tmp_path / "old.png", "--json")
    assert r.code == 0, r.err
    assert drawn == [None] and (tmp_path / "old.png").stat().st_size > 0
    assert any("keeps no runs" in w for w in r.json()["warnings"])
    assert run_cli("scaling", "frontier", old, "--json").json()["warnings"] == []  # without a plot: nothing to say
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({**payload, "points": {**payload["points"], "y": payload["points"]["y"][:-1]}}))
    r = run_cli("scaling", "frontier", broken)
    assert r.code == 2 and "its points are not the runs of a Chinchilla fit" in " ".join(r.err.split())
