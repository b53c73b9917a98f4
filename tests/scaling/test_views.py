"""ttlab.scaling.views: each view built from a real (small) library result, rendered, and showing its numbers."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import view_text as render
from tests.scaling.test_manifold_sweep import ONE, _synthetic_runs
from ttlab.scaling import views
from ttlab.scaling.fit_csv import fit_csv
from ttlab.scaling.manifold_analysis import aggregate
from ttlab.scaling.manifold_config import ManifoldSweepConfig
from ttlab.scaling.manifold_regression import estimate_cost
from ttlab.scaling.predictions import convert_exponents, predict_exponents, table1_payload
from ttlab.scaling.theory import alpha_d
from ttlab.sweep.records import SweepProgress, TaskRecord


def test_prediction_values_and_convert_views():
    out = predict_exponents(8.0, beta=0.5)
    text = render(views.prediction_view(out, 8.0, 0.5))
    assert "d = 8, β = 0.5" in text
    for key in ("alpha_d", "alpha_n", "alpha_n_sharma_kaplan"):
        assert f"{key}" in text and f"{out[key]:.6g}" in text
    conv = convert_exponents(alpha_n=0.34)
    text = render(views.values_view("ID-free conversion", conv))
    assert "ID-free conversion" in text and f"{conv['alpha_d']:.6g}" in text and f"{conv['implied_id']:.6g}" in text


def test_band_view_shows_every_estimator_and_the_ends():
    out = predict_exponents(ids="mle=15.6,twonn=14.2,tle=16.9,lpca=3", beta=1.0)
    text = render(views.prediction_view(out, None, 1.0))
    assert "central (mle)" in text and "band over 3 estimator(s)" in text
    assert f"{out['central']['alpha_d']:.4f}" in text and f"{out['lo']['alpha_d']:.4f}" in text
    assert f"{out['hi']['alpha_n']:.4f}" in text and "16.900" in text and "14.200" in text
    assert "not in the band" in text and "lpca" in text


def test_table1_view_has_a_column_per_source_and_every_row():
    payload = table1_payload(1.0)
    text = render(views.table1_view(payload, 1.0))
    for r in payload["rows"]:
        assert r["short_name"] in text
        assert format(r["alpha_n_observed"], ".4f") in text and format(r["id_from_alpha_d"], ".2f") in text


def test_fit_view_shows_parameters_intervals_and_the_prediction(tmp_path):
    csv = tmp_path / "gpt2.csv"
    csv.write_text("params,val_loss\n124e6,3.12\n350e6,2.84\n774e6,2.67\n1558e6,2.54\n")
    p = fit_csv(csv, "params", "val_loss", bootstrap=20, intrinsic_dim=20.0, kind="model")
    text = render(views.fit_view(p))
    assert "power fit of val_loss vs params (4 points)" in text
    lo, hi = p["ci"]["alpha"]
    assert f"{p['params']['alpha']:.6g}" in text and f"[{lo:.6g}, {hi:.6g}]" in text
    assert f"R² (log) = {p['goodness_of_fit']['r2_log']:.5f}" in text and "bootstrap: 20 × residual" in text
    assert f"{p['prediction']['alpha_predicted']:.4f}; fitted {p['prediction']['alpha_fitted']:.4f}" in text


def _tiny_config() -> ManifoldSweepConfig:
    return ManifoldSweepConfig(ds=(2, 4), ambients=(16,), n_min=64, n_max=1024, points=5, seeds=1, bootstrap=20,
                               bootstrap_offset=10, knn=False, **ONE)


def test_manifold_view_shows_each_fit_and_the_files():
    cfg = _tiny_config()
    agg = aggregate(cfg, _synthetic_runs(cfg, alpha_d), [], [], [])
    payload = {**agg, "files": {"results": "o/results.json", "figure": "o/manifold_scaling.png"}, "wall_seconds": 12.4}
    text = render(views.manifold_view(payload))
    assert "Data scaling on manifolds (softmax, β = 1, noisy)" in text
    for f in agg["fits"]:
        assert f"{f['alpha_hat']:.2f}" in text and f"{f['alpha_pred']:.2f}" in text
        assert f"{f['alpha_hat_ci'][0]:.2f}-{f['alpha_hat_ci'][1]:.2f}" in text and f"{f['mse_at_n_ref']:.3g}" in text
    assert f"MSE: at n = {agg['n_ref']}" in text and "wrote o/results.json and o/manifold_scaling.png in 12 s" in text


def test_manifold_cost_ray_note_and_progress_lines(monkeypatch):
    cfg = _tiny_config()
    cost = estimate_cost(cfg, step_seconds={("softmax", 16, cfg.width): 0.01})
    text = render(views.manifold_cost_view(cfg, Path("o"), cost, None, 1, 2))
    assert f"manifold sweep: {cost['n_train_runs']} training runs (softmax" in text and "d=[2, 4]" in text
    assert "on 1 worker(s) × 2 thread(s)" in text and "full default sweep" not in text
    text = render(views.manifold_cost_view(cfg, Path("o"), cost, {"n_train_runs": 1944, "wall_seconds": 7200.0}, 3, 1))
    assert "full default sweep" in text and "1944 runs, estimated ≈ 120.0 min wall on 3 worker(s)" in text
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert views.ray_note_view(cost, "local", None, 4) == []
    assert "running on Ray: a local Ray with 4 CPU(s)" in render(views.ray_note_view(cost, "ray", None, 4))
    config = {"problem": {"beta": 1.0}, "regime": "noisy", "d": 2, "ambient": 16, "n": 64, "seed": 0,
              "model": {"arch": "mlp", "n_embd": 16}}
    rec = TaskRecord("k1", "train_run", config, "ok", result={"test_mse": 0.012345}, seconds=1.25)
    line = render([views.manifold_progress_line(SweepProgress(3, 7, 0, 0, rec, 2.0))])
    assert line.strip() == "[3/7] mlp w=16 β=1 noisy d=2 D=16 n=64 seed=0: ok (1.2 s) test MSE 0.01235"
    knn = {k: v for k, v in config.items() if k != "model"}
    bad = TaskRecord("k2", "knn_run", knn, "failed", error="Traceback …\nValueError: no")
    line = render([views.manifold_progress_line(SweepProgress(4, 7, 0, 1, bad, 2.0))])
    assert "k-NN oracle" in line and "FAILED" in line and "ValueError: no" in line


def test_a_chinchilla_fit_says_its_beta_is_not_paper_bs(tmp_path):
    """Chinchilla's β (the exponent of D) clashed with paper B's Hölder β in the printed table (issue 34)."""
    import numpy as np

    n, d = np.meshgrid(np.geomspace(1e6, 1e8, 4), np.geomspace(1e8, 1e10, 4))
    loss = 1.7 + 400 * n.ravel() ** -0.34 + 410 * d.ravel() ** -0.28
    csv = tmp_path / "c.csv"
    csv.write_text("N,D,loss\n" + "".join(f"{a:.6g},{b:.6g},{c:.6g}\n" for a, b, c in zip(n.ravel(), d.ravel(), loss)))
    p = fit_csv(csv, "N", "loss", "D", form="chinchilla", bootstrap=0)
    text = render(views.fit_view(p))
    assert "beta (exponent of D; not paper B's Hölder β)" in text and "alpha (exponent of N)" in text
    assert set(p["params"]) == {"E", "A", "B", "alpha", "beta"}  # the JSON keeps Hoffmann et al.'s names
