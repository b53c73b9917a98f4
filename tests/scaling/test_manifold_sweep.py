"""`ttlab scaling manifold`: fits on known power laws, the JSON contract, caching, the figure, bad input."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.scaling.analysis import geometric_sizes
from ttlab.scaling.figures import plot_manifold_scaling
from ttlab.scaling.manifold_analysis import aggregate
from ttlab.scaling.manifold_config import ManifoldSweepConfig, design_check, quick_config
from ttlab.scaling.manifold_regression import approximation_error, plan_tasks
from ttlab.scaling.theory import alpha_d

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/scaling/conftest.py


ONE = {"archs": ("softmax",), "betas": (1.0,), "regimes": ("noisy",), "model_widths": ()}


def _synthetic_runs(cfg: ManifoldSweepConfig, alpha_of_d, limited_above: int | None = None) -> list[dict]:
    """Runs whose test MSE follows A·n^-alpha exactly (seed-dependent amplitude), for known-answer fits."""
    runs = []
    for arch, beta, regime, d in ((a, b, rg, d) for a in cfg.archs for b in cfg.betas for rg in cfg.regimes
                                  for d in cfg.ds):
        for D in cfg.ambients:
            for seed in range(cfg.seeds):
                for n in cfg.sizes():
                    for lr in cfg.lrs:
                        worse = 1.0 if lr == cfg.lrs[0] else 1.5  # the first lr is better on validation
                        mse = (1 + 0.1 * seed) * worse * 3.0 * n ** -alpha_of_d(d)
                        if limited_above is not None and n > limited_above:
                            mse *= 5  # a step-limited run that must not enter the fit
                        runs.append({"arch": arch, "beta": beta, "regime": regime, "d": d, "ambient": D, "n": n,
                                     "seed": seed, "lr": lr,
                                     "width": cfg.width, "test_mse": mse, "val_mse": mse + 0.09, "n_params": 1000,
                                     "step_limited": limited_above is not None and n > limited_above,
                                     "best_step": 10, "steps_planned": 100})
    return runs


def test_aggregate_recovers_known_exponents_and_drops_step_limited_sizes():
    cfg = ManifoldSweepConfig(ds=(1, 8), ambients=(16, 32), n_min=64, n_max=8192, points=7, seeds=2,
                              lrs=(1e-3, 3e-3), bootstrap=20, bootstrap_offset=10, knn=False, **ONE)
    ids = [{"d": d, "ambient": D, "id_mean": d + 0.3, "alpha_pred_from_id": {"1": alpha_d(d + 0.3)}}
           for d in cfg.ds for D in cfg.ambients]
    runs = _synthetic_runs(cfg, lambda d: alpha_d(d), limited_above=3000)
    agg = aggregate(cfg, runs, [], [], ids)
    assert len(agg["fits"]) == 4
    for f in agg["fits"]:
        assert f["alpha_hat"] == pytest.approx(alpha_d(f["d"]), abs=1e-9)
        assert f["alpha_pred"] == pytest.approx(alpha_d(f["d"]))
        assert f["alpha_hat_ci"][0] <= f["alpha_hat"] <= f["alpha_hat_ci"][1]
        assert max(f["sizes_fitted"]) < 3000 and not f["includes_step_limited"]
        assert f["alpha_hat_all_sizes"] < f["alpha_hat"]  # including the limited sizes would bias the slope
        assert all(lr == 1e-3 for p in f["points"] for lr in p["lr"])  # learning rate chosen on validation
        assert f["id_hat"] == f["d"] + 0.3 and f["mse_at_n_ref"] > 0
        assert f["alpha_pred_from_id"] == pytest.approx(alpha_d(f["d"] + 0.3))
        assert f["regime"] == "noisy" and f["beta"] == 1.0 and f["alpha_noiseless"] == pytest.approx(2 / f["d"])
    # fewer than 3 usable sizes: fall back to all sizes and say so
    agg = aggregate(replace(cfg, ambients=(16,)), _synthetic_runs(replace(cfg, ambients=(16,)), lambda d: 0.5,
                                                                  limited_above=100), [], [], ids)
    assert all(f["includes_step_limited"] and len(f["sizes_fitted"]) == 7 for f in agg["fits"])


def test_aggregate_model_size_fit_oracles_and_data_check():
    cfg = ManifoldSweepConfig(ds=(2,), ambients=(16,), n_min=100, n_max=1600, points=5, seeds=1,
                              bootstrap=20, bootstrap_offset=10, **{**ONE, "model_widths": (8, 16, 32)})
    row = {"arch": "softmax", "beta": 1.0, "regime": "noiseless", "d": 2, "ambient": 16, "seed": 0, "lr": cfg.lrs[0],
           "val_mse": 0.1, "step_limited": False, "best_step": 5, "steps_planned": 10}
    model_runs = [{**row, "n": 1600, "width": w, "n_params": 50 * w * w, "test_mse": 2.0 * (50 * w * w) ** -1.0}
                  for w in (8, 16, 32)]
    model_runs.append({**row, "n": 3200, "width": 32, "n_params": 50 * 32 * 32, "check": True,
                       "test_mse": 0.9 * 2.0 * (50 * 32 * 32) ** -1.0})  # 10 % better with twice the data
    knn = [{"beta": 1.0, "regime": "noisy", "d": 2, "ambient": 16, "n": n, "seed": s, "test_mse": (1 + s) * 0.7 * n ** -0.5,
            "k": 4} for n in cfg.sizes() for s in (0, 1)]
    approx = [{"beta": 1.0, "regime": "noiseless", "d": 2, "ambient": 16, "n": c, "cells": c, "seed": 0,
               "approx_mse": 3.0 * c ** -0.9} for c in cfg.approx_cells]
    agg = aggregate(cfg, [], model_runs, knn, [], approx)
    (mf,) = agg["model_fits"]
    assert mf["alpha_hat"] == pytest.approx(1.0) and mf["alpha_pred"] == pytest.approx(1.0)  # 2β/d at d = 2
    assert mf["oracle_alpha"] == pytest.approx(0.9) and mf["data_check"]["ratio"] == pytest.approx(0.9)
    (kf,) = agg["knn_fits"]
    assert kf["alpha_hat"] == pytest.approx(0.5) and kf["n_seeds"] == 2 and kf["regime"] == "noisy"
    (fit,) = agg["fits"]  # the oracle's slope travels with the network's (missing) fit
    assert fit["alpha_hat"] is None and "fewer than 2" in fit["error"] and fit["oracle_alpha"] == pytest.approx(0.5)
    fig = plot_manifold_scaling({"config": cfg.to_dict(), **agg})
    assert len(fig.axes) == 3 and "α̂_N=1.00" in fig.axes[2].get_legend().get_texts()[0].get_text()


def test_design_check_says_which_way_the_oracle_misses():
    ok, why = design_check({"oracle_alpha": 0.52, "alpha_pred": 0.5, "regime": "noisy"})
    assert ok and "within" in why
    ok, why = design_check({"oracle_alpha": 0.64, "alpha_pred": 0.5, "regime": "noisy"})
    assert ok is False and "steeper" in why
    ok, why = design_check({"oracle_alpha": 0.40, "alpha_pred": 0.5, "regime": "noisy"})
    assert ok is False and "shallower" in why
    assert design_check({"oracle_alpha": 1.0, "alpha_pred": 0.5, "regime": "noiseless"})[0] is True  # a bound
    assert design_check({"oracle_alpha": 0.40, "alpha_pred": 0.5, "regime": "noiseless"})[0] is False
    assert design_check({"oracle_alpha": None, "alpha_pred": 0.5, "regime": "noisy"})[0] is None


def test_approximation_oracle_error_falls_with_cells():
    from ttlab.scaling.targets import make_problem

    pr = make_problem(1, 8, beta=0.5, noise=0.0, n_features=256, max_freq=256.0)
    errs = [approximation_error(pr, c, 2048, seed=0) for c in (16, 64, 256, 1024)]
    assert all(a > b for a, b in zip(errs, errs[1:]))
    slope = -np.polyfit(np.log([16, 64, 256, 1024]), np.log(errs), 1)[0]
    assert 0.6 < slope < 1.4  # 2β/d = 1 for β = 1/2 on the circle
    assert approximation_error(pr, 16, 2048, seed=0) == errs[0]  # seeded


def test_plan_and_sizes():
    assert geometric_sizes(64, 8192, 8) == [64, 128, 256, 512, 1024, 2048, 4096, 8192]
    cfg = quick_config()
    tasks = plan_tasks(cfg)
    assert len(tasks["data"]) == 2 * 2 * 5 * 1 and len(tasks["knn"]) == 2 * 1 * 5 * 4 and tasks["model"] == []
    assert sorted({t["d"] for t in tasks["data"]}) == [2, 4] and {t["ambient"] for t in tasks["data"]} == {16, 128}
    assert {t["problem"]["noise"] for t in tasks["data"]} == {1.0} and {t["regime"] for t in tasks["knn"]} == {"noisy"}
    # the oracle runs on the networks' splits (the same task fields) plus further seeds
    net = {(t["d"], t["n"], t["seed"]) for t in tasks["data"]}
    assert net <= {(t["d"], t["n"], t["seed"]) for t in tasks["knn"]} and {t["ambient"] for t in tasks["knn"]} == {16}
    full = replace(ManifoldSweepConfig(), lrs=(1e-3, 3e-3))
    t = plan_tasks(full)
    n_set = 3 * 2 * 2 * 3 * 3  # arch × β × regime × d × D
    assert len(t["data"]) == n_set * 8 * 2 * 2 and len(t["knn"]) == 2 * 2 * 3 * 1 * 8 * 6
    assert len(t["model"]) == 3 * 2 * 3 * 2 * (5 + 1) * 2  # arch × β × d × seed × (widths + the 2n check) × lr
    assert {m["n"] for m in t["model"]} == {full.n_max, 2 * full.n_max}
    assert {m["model"]["n_embd"] for m in t["model"] if m.get("check")} == {max(full.model_widths)}
    assert {m["regime"] for m in t["model"]} == {"noiseless"} and {m["problem"]["noise"] for m in t["model"]} == {0.0}
    assert {m["ambient"] for m in t["model"]} == {16} and len(t["approx"]) == 2 * 3 * len(full.approx_cells)
    assert {m["model"]["chunk"] for m in t["data"] if m["ambient"] == 128} == {16}  # 8 tokens of 16 coordinates
    assert {m["model"]["arch"] for m in t["data"]} == {"softmax", "relu", "mlp"}
    assert {(m["regime"], m["problem"]["noise"]) for m in t["data"]} == {("noisy", 1.0), ("noiseless", 0.0)}


def test_config_validation():
    with pytest.raises(TTLabInputError, match="ambient dimension D=4 is too small"):
        replace(ManifoldSweepConfig(), ds=(4,), ambients=(4,))
    with pytest.raises(TTLabInputError, match="would repeat integers"):
        replace(ManifoldSweepConfig(), n_min=10, n_max=12, points=5)
    with pytest.raises(TTLabInputError, match="at least 3 widths"):
        replace(ManifoldSweepConfig(), model_widths=(8, 16))
    with pytest.raises(TTLabInputError, match="learning rates must be positive"):
        replace(ManifoldSweepConfig(), lrs=(0.0,))
    with pytest.raises(TTLabInputError, match="bootstrap_offset must be an integer >= 0"):
        replace(ManifoldSweepConfig(), bootstrap_offset=-1)
    with pytest.raises(TTLabInputError, match="unknown regime 'loud'"):
        replace(ManifoldSweepConfig(), regimes=("loud",))
    with pytest.raises(TTLabInputError, match="noisy regime needs label noise"):
        replace(ManifoldSweepConfig(), noise=0.0)
    with pytest.raises(TTLabInputError, match="unknown arch 'cnn'"):
        replace(ManifoldSweepConfig(), archs=("softmax", "cnn"))
    with pytest.raises(TTLabInputError, match="betas must be a non-empty list"):
        replace(ManifoldSweepConfig(), betas=())


TINY = ("--d", "1,2", "--ambient", "8", "--n-min", "48", "--n-max", "192", "--points", "3", "--seeds", "1",
        "--arch", "mlp", "--width", "16", "--max-steps", "60", "--epochs", "5", "--features", "64",
        "--n-test", "256", "--workers", "1", "--beta", "1", "--regime", "noisy", "--model-widths", "none",
        "--oracle-seeds", "1")


def test_cli_manifold_end_to_end_and_resume(run_cli, tmp_path):
    out = tmp_path / "run"
    res = run_cli("scaling", "manifold", *TINY, "--out", out, "--json")
    assert res.code == 0, res.err
    p = res.json()
    assert "estimated cost" in res.err  # printed up front, on stderr so that stdout stays one JSON object
    assert {"fits", "runs", "config", "versions", "intrinsic_dim", "knn_fits", "cost_estimate"} <= set(p)
    assert len(p["fits"]) == 2 and len(p["runs"]) == 6 and p["sweep"]["n_failed"] == 0
    for f in p["fits"]:
        assert {"d", "ambient", "arch", "alpha_hat", "alpha_hat_ci", "alpha_pred"} <= set(f)
        assert f["arch"] == "mlp" and f["ambient"] == 8 and f["alpha_pred"] == pytest.approx(2 / (2 + f["d"]))
        assert np.isfinite(f["alpha_hat"]) and len(f["alpha_hat_ci"]) == 2
        assert f["regime"] == "noisy" and f["noise"] == 1.0 and np.isfinite(f["oracle_alpha"])
    assert {r["d"]: round(r["id_mean"]) for r in p["intrinsic_dim"]} == {1: 1, 2: 2}  # ttlab's MLE recovers d
    assert p["versions"]["torch"] and p["config"]["sizes"] == [48, 96, 192]
    saved = json.loads((out / "results.json").read_text())
    assert saved["fits"][0]["alpha_hat"] == p["fits"][0]["alpha_hat"]
    png = (out / "manifold_scaling.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    # the same command again (table output): every run comes from the cache, same numbers
    table = run_cli("scaling", "manifold", *TINY, "--out", out)
    assert table.code == 0 and "theory" in table.out and "wrote" in table.out and "oracle" in table.out
    assert "6 run(s) already in" in table.err.replace("\n", " ")  # the cost estimate knows what is cached
    again = json.loads((out / "results.json").read_text())
    assert again["sweep"]["n_cached"] == again["sweep"]["n_tasks"] == 12
    assert [r["test_mse"] for r in again["runs"]] == [r["test_mse"] for r in p["runs"]]


def test_cli_estimate_only(run_cli, tmp_path):
    res = run_cli("scaling", "manifold", "--quick", "--estimate-only", "--out", tmp_path / "x", "--json")
    assert res.code == 0, res.err
    p = res.json()
    assert p["cost"]["n_train_runs"] == 20 and p["full_sweep_cost"]["n_train_runs"] == 1728 + 216
    assert p["cost"]["wall_seconds"] > 0 and "full default sweep" in res.err
    assert not (tmp_path / "x" / "results.json").exists()


@pytest.mark.parametrize(
    "args, match",
    [
        (["--d", "a,b"], "--d must be comma-separated integers"),
        (["--arch", "cnn"], "unknown arch 'cnn'"),
        (["--ray-address", "auto"], "ray_address needs backend ray (got backend local) (command-line options: "
         "--ray-address, --backend)"),
        (["--backend", "slurm"], "unknown sweep backend 'slurm'"),
        (["--n-min", "500", "--n-max", "100"], "n_max (100) must be >= n_min (500)"),
        (["--n-min", "5000"], "n_min 5000 is above the default n_max 2048; give n_max too (command-line options: "
         "--n-min, --n-max)"),
        (["--d", "8", "--ambient", "4"], "too small"),
        (["--beta", "1.5"], "beta must be a number in"),
        (["--regime", "loud"], "unknown regime 'loud'"),
        (["--arch", "softmax,cnn"], "unknown arch 'cnn'"),
        (["--lr", "-1"], "learning rates must be positive"),
        (["--workers", "0"], "workers must be >= 1, got 0 (command-line option: --workers)"),
        (["--workers", str(10**18)], f"workers must be <= 4096, got {10**18} (command-line option: --workers)"),
    ],
)
def test_cli_manifold_bad_input(run_cli, tmp_path, args, match):
    res = run_cli("scaling", "manifold", "--quick", "--estimate-only", *args, "--out", tmp_path / "o", "--json")
    assert res.code == 2, res.err
    assert match in res.err.replace("\n", " ") and res.out == ""


def test_figure_from_a_payload():
    cfg = replace(ManifoldSweepConfig(), ds=(2, 4), ambients=(16, 64), bootstrap=10, bootstrap_offset=10, knn=False,
                  **{**ONE, "regimes": ("noisy", "noiseless")})
    runs = _synthetic_runs(cfg, lambda d: alpha_d(d), limited_above=5000)
    agg = aggregate(cfg, runs, [], [], [])
    fig = plot_manifold_scaling({"config": cfg.to_dict(), **agg})
    assert len(fig.axes) == 6  # per regime: one panel per D and the α̂_D-vs-d panel
    assert "α̂=0.50" in " ".join(t.get_text() for t in fig.axes[0].get_legend().get_texts())


def test_knn_oracle_does_not_depend_on_the_ambient_dimension():
    from ttlab.scaling.manifold_regression import knn_run

    cfg = quick_config(ds=(2,), ambients=(16, 128), n_test=256, n_features=64,
                       train=replace(quick_config().train, n_val_min=128, n_val_max=128))
    base = {k: v for k, v in plan_tasks(cfg)["knn"][0].items()}
    a = knn_run({**base, "ambient": 16})
    b = knn_run({**base, "ambient": 128})
    assert a["k"] == b["k"] and a["test_mse"] == pytest.approx(b["test_mse"], rel=1e-4)


def test_task_functions_keep_their_cache_keys():
    """Cached runs are keyed by the task's name: the split of manifold_regression kept the tasks where they were."""
    from ttlab.scaling.manifold_regression import approx_run, knn_run, train_run
    from ttlab.sweep import task_key
    from ttlab.sweep.keys import key_name

    for fn in (train_run, knn_run, approx_run):
        assert key_name(fn) == f"ttlab.scaling.manifold_regression:{fn.__name__}"
    assert task_key(train_run, {"a": 1}) == "d6cf17cc5d503cd46439"  # the value before the split
