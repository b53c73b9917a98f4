"""The model-size experiment (docs/model_scaling.md): targets, oracles, fit, data check, config and CLI errors.

Known answers: a power law's slope (against numpy), the oracles' rates on targets of known regularity (2/d and 4/d on
a C² field, 2β/d on the β-Hölder field), the Hölder field's increments ∝ h^(2β), a deliberately data-limited
configuration flagged by the data check.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import torch

from ttlab.errors import TTLabInputError
from ttlab.scaling.lattice_fields import fade, make_field, make_sphere_problem
from ttlab.scaling.model_scaling import aggregate, plan_tasks, run_model_scaling
from ttlab.scaling.model_scaling_analysis import DATA_CHECK_DROP, FLOAT32_FLOOR, data_check, fit_exponent
from ttlab.scaling.model_scaling_config import (
    ModelScalingConfig,
    OnlineSchedule,
    quick_model_config,
    standard_model_config,
    tiny_model_config,
)
from ttlab.scaling.model_scaling_tasks import oracle_errors

# ---------------------------------------------------------------------------------------------- targets


def test_fade_is_c2_and_maps_unit_interval() -> None:
    t = torch.tensor([0.0, 1.0], dtype=torch.float64, requires_grad=True)
    y = fade(t)
    (g,) = torch.autograd.grad(y.sum(), t, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), t)
    assert y.tolist() == [0.0, 1.0] and g.abs().max() < 1e-12 and h.abs().max() < 1e-12


@pytest.mark.parametrize("kind", ["smooth", "holder"])
def test_fields_are_centred_unit_variance_and_deterministic(kind: str) -> None:
    f1 = make_field(kind, 2, spacing=0.5, levels=4, beta=0.5, seed=3)
    f2 = make_field(kind, 2, spacing=0.5, levels=4, beta=0.5, seed=3)
    u = torch.randn(20000, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    u = u / u.norm(dim=1, keepdim=True)
    v = f1(u)
    assert abs(float(v.mean())) < 0.05 and abs(float(v.var()) - 1.0) < 0.06
    assert torch.equal(v, f2(u))
    assert not torch.equal(v, make_field(kind, 2, spacing=0.5, levels=4, beta=0.5, seed=4)(u))


def _increment_slope(kind: str, beta: float) -> float:
    """log-log slope of E|f(u + h e) − f(u)|² against h on R^3 (d = 2), over scales inside the field's range."""
    f = make_field(kind, 2, spacing=1.0 if kind == "holder" else 0.5, levels=12, beta=beta, seed=0)
    g = torch.Generator().manual_seed(0)
    u = torch.rand(20000, 3, generator=g, dtype=torch.float64)
    e = torch.randn(20000, 3, generator=g, dtype=torch.float64)
    e = e / e.norm(dim=1, keepdim=True)
    hs = [2.0 ** -k for k in range(5, 9)] if kind == "holder" else [2.0 ** -k for k in range(8, 12)]
    inc = [float(((f(u + h * e) - f(u)) ** 2).mean()) for h in hs]
    return float(np.polyfit(np.log(hs), np.log(inc), 1)[0])


def test_holder_field_increments_scale_as_h_to_2beta() -> None:
    assert _increment_slope("holder", 0.5) == pytest.approx(1.0, abs=0.15)
    assert _increment_slope("holder", 1.0) == pytest.approx(2.0, abs=0.3)


def test_smooth_field_increments_scale_as_h_squared() -> None:
    assert _increment_slope("smooth", 1.0) == pytest.approx(2.0, abs=0.05)


def test_sphere_problem_embeds_isometrically() -> None:
    p = make_sphere_problem(make_field("smooth", 2, spacing=0.5), 16)
    x, u, y = p.sample(torch.Generator().manual_seed(0), 500)
    assert x.shape == (500, 16) and u.shape == (500, 3) and y.shape == (500,)
    dx = torch.cdist(x[:50].double(), x[:50].double())
    du = torch.cdist(u[:50].double(), u[:50].double())
    assert torch.allclose(dx, 4.0 * du, atol=1e-4)  # x = √16·Qu
    with pytest.raises(TTLabInputError, match="too small"):
        make_sphere_problem(make_field("smooth", 4, spacing=1.0), 3)


# ---------------------------------------------------------------------------------------------- oracles


def _oracle_slopes(kind: str, d: int, sizes: tuple[int, ...], **kw) -> dict[str, float]:
    p = make_sphere_problem(make_field(kind, d, **kw), 16)
    _, u, f = p.sample(torch.Generator().manual_seed(5), 8192)
    errs = [[oracle_errors(p, n, u, f, s) for n in sizes] for s in range(3)]
    return {name: -float(np.polyfit(np.log(sizes), np.mean([[math.log(e[name]) for e in row] for row in errs], 0), 1)[0])
            for name in ("constant", "linear")}


def test_oracles_reach_their_rates_on_a_smooth_curve() -> None:
    s = _oracle_slopes("smooth", 1, (64, 128, 256, 512, 1024), spacing=0.5)
    assert s["constant"] == pytest.approx(2.0, abs=0.3)  # 2/d
    assert s["linear"] > 3.5  # 4/d = 4 (pre-asymptotically steeper)


def test_oracles_reach_2beta_over_d_on_the_holder_field() -> None:
    s = _oracle_slopes("holder", 1, (64, 128, 256, 512, 1024), spacing=1.0, levels=14, beta=0.5)
    assert s["constant"] == pytest.approx(1.0, abs=0.15) and s["linear"] == pytest.approx(1.0, abs=0.15)


# ---------------------------------------------------------------------------------------------- fit


def test_fit_matches_numpy_on_a_power_law_with_seeds() -> None:
    rng = np.random.default_rng(0)
    n = np.repeat([200.0, 400.0, 800.0, 1600.0, 3200.0], 3)
    y = 5.0 * n ** -1.3 * np.exp(0.05 * rng.standard_normal(len(n)))
    fit = fit_exponent(n, y, bootstrap=500, seed=0)
    assert fit["alpha_hat"] == pytest.approx(-np.polyfit(np.log(n), np.log(y), 1)[0], rel=1e-12)
    lo, hi = fit["interval"]
    assert lo <= min(fit["ci_t"][0], fit["ci_bootstrap"][0]) and hi >= max(fit["ci_t"][1], fit["ci_bootstrap"][1])
    assert fit["lowo"][0] <= fit["alpha_hat"] <= fit["lowo"][1]
    assert [round(x[2], 6) for x in fit["local_slopes"]] == [
        round(-(np.mean(np.log(y[3 * i + 3:3 * i + 6])) - np.mean(np.log(y[3 * i:3 * i + 3]))) / math.log(2), 6)
        for i in range(4)]


def test_deciding_interval_covers_the_true_exponent() -> None:
    """Coverage on noisy power laws with 2 seeds per size: the hull is at least as honest as the t-interval."""
    n = np.repeat([200.0, 400.0, 800.0, 1600.0, 3200.0], 2)
    hits = 0
    for s in range(150):
        y = 5.0 * n ** -1.3 * np.exp(0.05 * np.random.default_rng(s).standard_normal(len(n)))
        lo, hi = fit_exponent(n, y, bootstrap=200, seed=s)["interval"]
        hits += lo < 1.3 < hi
    assert hits / 150 >= 0.92


def test_fit_with_one_seed_never_has_zero_width() -> None:
    n = [100.0, 200.0, 400.0, 800.0]
    fit = fit_exponent(n, [1.0 / x * (1.1 if i % 2 else 0.9) for i, x in enumerate(n)], bootstrap=200)
    assert fit["ci_bootstrap"][0] == fit["ci_bootstrap"][1]  # nothing to resample
    assert fit["interval"][1] - fit["interval"][0] > 0.1


def test_fit_drops_the_float32_floor_and_needs_three_sizes() -> None:
    fit = fit_exponent([10, 20, 40, 80], [1e-2, 1e-3, 1e-4 * 0.99, 1e-6], bootstrap=100)
    assert "error" in fit and fit["dropped"] == 2 and FLOAT32_FLOOR == 1e-4
    ok = fit_exponent([10, 20, 40, 80], [1e-1, 1e-2, 1e-3, 1e-5], bootstrap=100)
    assert ok["sizes"] == [10.0, 20.0, 40.0] and ok["alpha_hat"] == pytest.approx(math.log(10) / math.log(2))
    with pytest.raises(TTLabInputError, match="differ in length"):
        fit_exponent([1, 2], [1.0], bootstrap=10)


def test_data_check_flags_a_drop_beyond_ten_percent() -> None:
    assert DATA_CHECK_DROP == 0.10
    assert data_check([0.1, 0.1], [0.089, 0.089])["limited"] is True
    c = data_check([0.1], [0.091])
    assert c["limited"] is False and c["ratio"] == pytest.approx(0.91)
    assert data_check([], [0.1])["limited"] is None


# ---------------------------------------------------------------------------------------------- config, plan, run


def test_schedule_samples_steps_and_learning_rate() -> None:
    s = OnlineSchedule(lr=1e-2, samples_per_param=900, min_samples=200_000, batch=256, batch_large=1024)
    assert s.samples(100) == 200_000 and s.samples(2167) == 1_950_300 and s.samples(100, 2.0) == 400_000
    small, large = s.steps(200_000)
    assert small * 256 >= 100_000 and small * 256 + large * 1024 >= 200_000
    total = 1000
    assert s.lr_at(0, total) == pytest.approx(1e-2 / 20) and s.lr_at(20, total) == pytest.approx(1e-2)
    assert s.lr_at(total - 1, total) == pytest.approx(1e-4)  # cosine to 1 % of the peak


def test_presets_meet_the_declared_design() -> None:
    std = standard_model_config()
    assert std.ds == (2, 4) and set(std.targets) == {"smooth", "holder"} and set(std.archs) == {"softmax", "relu"}
    assert std.seeds >= 2 and std.control_seeds >= 1 and std.n_test >= 16_384
    assert std.mlp_schedule.samples_per_param >= 10_000 and std.transformer_schedule.samples_per_param >= 50
    assert std.all_archs("holder") == ("mlp",) and std.all_archs("smooth") == ("mlp", "softmax", "relu")
    assert std.transformer_schedule.min_samples >= 200_000
    ratios = np.diff(np.log(std.mlp_widths))
    assert len(std.mlp_widths) >= 6 and std.mlp_widths[0] == 8 and 36 <= std.mlp_widths[-1] <= 40
    assert np.all(ratios > math.log(1.2)) and np.all(ratios < math.log(1.4))
    from ttlab.scaling.model_scaling import param_count  # noqa: PLC2701 - the count the design is about

    counts = [param_count(std, "softmax", w) for w in std.transformer_widths]
    assert len(counts) >= 5 and counts[-1] / counts[0] >= 20
    q = quick_model_config()
    assert q.ds == (2,) and q.archs == ("softmax",) and q.targets == ("smooth",)


def test_restated_constants_agree_with_their_homes() -> None:
    from ttlab.reproduce.parts.model_scaling import FRACTION
    from ttlab.scaling.model_scaling import VALID_FRACTION
    from ttlab.scaling.model_scaling_config import CONTROL_ARCH, TRANSFORMER_ARCHS
    from ttlab.scaling.regressor_config import ARCHS

    assert FRACTION == VALID_FRACTION == 0.8
    assert set(TRANSFORMER_ARCHS) == set(ARCHS) - {CONTROL_ARCH}


def test_scheduled_wall_is_longest_first_list_scheduling() -> None:
    from ttlab.scaling.manifold_regression import scheduled_wall

    assert scheduled_wall([5.0, 4.0, 3.0, 3.0], 2) == 8.0  # {5, 3}, {4, 3}
    assert scheduled_wall([5.0, 4.0], 10**18) == 5.0 and scheduled_wall([], 4) == 0.0


def test_plan_has_every_run_and_the_data_check() -> None:
    cfg = tiny_model_config(control_seeds=2)
    t = plan_tasks(cfg)
    checks = [c for c in t["train"] if c.get("check")]
    assert len(t["train"]) == 3 * 2 + 3 * 1 + len(checks) and len(checks) == 2  # one (seed 0) per network
    assert {c["width"] for c in checks if c["arch"] == "mlp"} == {max(cfg.mlp_widths)}
    assert all(c["sample_scale"] == 2.0 for c in checks) and len(t["oracle"]) == cfg.oracle_points


@pytest.mark.parametrize("bad, match", [
    ({"ds": (0,)}, "ds"), ({"targets": ("wavy",)}, "target"), ({"archs": ("mlp",)}, "arch"),
    ({"transformer_widths": (3, 4, 6)}, "multiple of heads"), ({"ambient": 4, "ds": (4,)}, "d must be <= 3"),
    ({"ambient": 1}, "ambient"),
    ({"mlp_widths": (8, 8, 10)}, "duplicates"), ({"holder_beta": 1.5}, "holder_beta"),
    ({"mlp_schedule": {"lr": 1}}, "OnlineSchedule"), ({"device": "gpu"}, "device"), ({"device": "cuda:x"}, "device"),
    ({"seeds": 10**18}, "seeds"), ({"control_seeds": 101}, "control_seeds"), ({"mlp_widths": (8, 10, 10**18)}, "mlp_widths"),
    ({"ds": (2, 16)}, "d must be <= 15"), ({"targets": ("smooth",), "transformer_targets": ("holder",)},
                                                       "transformer_targets"),
])
def test_bad_config_is_refused(bad: dict, match: str) -> None:
    with pytest.raises(TTLabInputError, match=match):
        replace(ModelScalingConfig(), **bad)


def test_bad_schedule_is_refused() -> None:
    with pytest.raises(TTLabInputError, match="batch_large"):
        OnlineSchedule(batch=512, batch_large=256)


def test_tiny_run_flags_its_data_limited_control(tmp_path) -> None:
    """A deliberately data-limited configuration (a few thousand samples): doubling them helps, the data check
    flags the widest width and the fit leaves it out."""
    cfg = tiny_model_config()
    p = run_model_scaling(cfg, tmp_path / "ms")
    (e,) = p["results"]
    ctrl = e["archs"]["mlp"]
    assert ctrl["data_checks"][0]["limited"] is True and ctrl["excluded_widths"][0] == max(cfg.mlp_widths)
    widest = max(r["n_params"] for r in p["runs"] if r["arch"] == "mlp")
    assert widest not in (ctrl["fit"].get("sizes") or [])
    assert abs(p["input_ids"][0]["mle"] - 2) < 0.3
    assert (tmp_path / "ms" / "model_scaling.png").stat().st_size > 0
    again = run_model_scaling(cfg, tmp_path / "ms")  # resumed from the cache: the same numbers
    assert again["results"] == p["results"] and again["sweep"]["n_cached"] == again["sweep"]["n_tasks"]
    # the views the CLI prints, from this real payload (a file name with rich markup prints as text)
    from tests.conftest import view_text
    from ttlab.scaling.views import model_size_cost_view, model_size_view

    text = view_text(model_size_view({**p, "files": {"results": "a[/x].json", "figure": "f.png"}}), cells=True)
    fit = ctrl["fit"]
    assert "mlp (control)" in text and "a[/x].json" in text and "inputs' ID: d=2: MLE" in text
    shown = (f"{fit['alpha_hat']:.3f} [{fit['interval'][0]:.3f}, {fit['interval'][1]:.3f}]" if "alpha_hat" in fit
             else f"— ({fit['error']})")
    assert shown in text
    cost = {"n_train_runs": 9, "n_oracle_runs": 3, "wall_seconds": 120.0, "workers": 2, "n_cached": 4,
            "remaining_wall_seconds": 60.0}
    assert "9 training runs + 3 oracle runs; estimated ≈ 2.0 min wall on 2 worker(s)" in view_text(
        model_size_cost_view(cost, tmp_path / "ms"))


def _row(width: int, nmse: float, check: bool = False) -> dict:
    return {"target_name": "smooth", "d": 2, "arch": "mlp", "width": width, "seed": 0, "check": check,
            "n_params": width * 10, "nmse": nmse, "nmse_init": 1.0}


def test_data_check_walks_down_the_widths() -> None:
    from ttlab.scaling.model_scaling import data_checks, pending_checks

    rows = [_row(w, 1.0 / w) for w in (4, 6, 8, 10, 12)]
    assert data_checks(rows)["needs"] == 12  # the widest first
    rows.append(_row(12, 0.5 / 12, check=True))  # falls 50 %: left out, the next widest is needed
    dc = data_checks(rows)
    assert dc["excluded"] == [12] and dc["needs"] == 10 and dc["passed"] is False
    cfg = tiny_model_config(mlp_widths=(4, 6, 8, 10, 12), archs=())
    assert [(t["width"], t["sample_scale"]) for t in pending_checks(cfg, rows)] == [(10, 2.0)]
    rows.append(_row(10, 0.95 / 10, check=True))  # falls 5 %: passes, the walk stops
    dc = data_checks(rows)
    assert dc["excluded"] == [12] and dc["needs"] is None and dc["passed"] is True
    assert pending_checks(cfg, rows) == []
    # every width fails: the walk stops when fewer than 3 widths would remain
    rows = [_row(w, 1.0 / w) for w in (4, 6, 8)] + [_row(w, 0.5 / w, check=True) for w in (4, 6, 8)]
    dc = data_checks(rows)
    assert dc["excluded"] == [8] and dc["needs"] is None and dc["passed"] is False


def test_harness_validity_uses_the_declared_fraction() -> None:
    cfg = tiny_model_config()
    rows = [{"target_name": "smooth", "d": 2, "arch": "mlp", "width": w, "seed": 0, "check": False,
             "n_params": n, "nmse": 10 * n ** -a, "nmse_init": 1.0} for a in (1.6,) for w, n in ((4, 100), (6, 200), (8, 400))]
    orc = [{"target_name": "smooth", "d": 2, "n_params": n, "nmse_constant": n ** -1.0, "nmse_linear": 100 * n ** -2.0}
           for n in (100, 200, 400)]
    (e,) = aggregate(replace(cfg, check=False), rows, orc)
    assert e["harness_valid"] is True and e["control_rate"] == 2.0  # 1.6 ≥ 0.8 × 4/2
    rows = [{**r, "nmse": r["nmse"] * (r["n_params"] / 100) ** 0.01} for r in rows]
    (e,) = aggregate(replace(cfg, check=False), rows, orc)
    assert e["harness_valid"] is False
    assert e["oracles"]["linear"]["alpha_hat"] == pytest.approx(2.0)


# ---------------------------------------------------------------------------------------------- CLI


def test_cli_refuses_bad_options_with_exit_2(tmp_path, run_cli) -> None:
    r = run_cli("scaling", "model-size", "--out", tmp_path / "o", "--targets", "wavy")
    assert r.code == 2 and "target" in r.err and "Traceback" not in r.err + r.out
    r = run_cli("scaling", "model-size", "--out", tmp_path / "o", "--widths", "3,5,7")
    assert r.code == 2 and "heads" in r.err and "(command-line option: --widths)" in r.err
    for args, flag in ((("--seeds", str(10**18)), "--seeds"), (("--workers", str(10**18)), "--workers"),
                       (("--control-spp", "-1"), "--control-spp"), (("--transformer-spp", "nan"), "--transformer-spp"),
                       (("--d", str(10**18)), "--d")):
        r = run_cli("scaling", "model-size", "--out", tmp_path / "o", "--quick", "--estimate-only", *args)
        assert r.code == 2 and f"(command-line option: {flag})" in r.err and "Traceback" not in r.err, (args, r.err)
    assert not (tmp_path / "o").exists()


def test_a_second_process_on_the_same_out_is_refused_at_once(tmp_path, run_cli) -> None:
    """Two real processes: one holds the folder; the command on the same --out exits 2 before any run; the lock
    dies with its holder (kill -9), and the folder can then be held again."""
    import signal
    import subprocess
    import sys

    from ttlab.outputs import hold_out_dir

    out = tmp_path / "o"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom ttlab.outputs import hold_out_dir\n"
         f"with hold_out_dir({str(out)!r}):\n    print('held', flush=True)\n    time.sleep(60)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        r = run_cli("scaling", "model-size", "--out", out, "--quick")
        assert r.code == 2 and "in use by another ttlab process" in r.err and "(command-line option: --out)" in r.err
        assert not (out / "cache").exists() and not (out / "results.json").exists()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    with hold_out_dir(out):  # released by the holder's death
        pass


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_cli_refuses_a_gpu_it_does_not_have(tmp_path, run_cli) -> None:
    r = run_cli("scaling", "model-size", "--out", tmp_path / "o", "--device", "cuda", "--estimate-only")
    assert r.code == 2 and "no CUDA GPU" in r.err and "--device" in r.err


def test_cpu_task_configs_carry_no_device_key() -> None:
    """CPU runs keep their cache keys; another device is part of the task (a new key)."""
    t = plan_tasks(tiny_model_config())
    assert all("device" not in c for c in t["train"] + t["oracle"])
    assert all(c["device"] == "cuda:1" for c in plan_tasks(tiny_model_config(device="cuda:1"))["train"])


def test_cli_estimate_only_prints_the_cost(tmp_path, run_cli) -> None:
    r = run_cli("scaling", "model-size", "--out", tmp_path / "o", "--quick", "--estimate-only")
    assert r.code == 0, r.err
    assert "training runs" in r.err and "oracle runs" in r.err
    assert not (tmp_path / "o" / "results.json").exists()


# ---------------------------------------------------------------------------------------------- pinned numbers


def test_fit_numbers_are_pinned_against_independent_references() -> None:
    """Every number a verdict reads from a fit, recomputed here: scipy's regression for α̂ and the t-interval, a
    plain loop over the same resamples for the bootstrap, numpy fits for the leave-one-width-out range."""
    from scipy import stats

    n = np.repeat([100.0, 200.0, 400.0, 800.0, 1600.0], 3)
    y = 2 * n ** -0.9 * np.exp(0.1 * np.random.default_rng(3).standard_normal(len(n)))
    fit = fit_exponent(n, y, bootstrap=300, seed=7)
    lx, ly = np.log(n), np.log(y)
    lr = stats.linregress(lx, ly)
    q = stats.t.ppf(0.975, len(n) - 2)
    assert fit["alpha_hat"] == pytest.approx(-lr.slope, rel=1e-12)
    assert fit["ci_t"] == pytest.approx([-lr.slope - q * lr.stderr, -lr.slope + q * lr.stderr], rel=1e-10)
    rng = np.random.default_rng(7)
    draws = [rng.integers(0, 3, size=(300, 3)) for _ in range(5)]
    slopes = [-np.polyfit(lx, np.concatenate([ly[3 * g:3 * g + 3][draws[g][b]] for g in range(5)]), 1)[0]
              for b in range(300)]
    assert fit["ci_bootstrap"] == pytest.approx(list(np.percentile(slopes, [2.5, 97.5])), rel=1e-10)
    loo = [-np.polyfit(np.delete(lx, range(3 * g, 3 * g + 3)), np.delete(ly, range(3 * g, 3 * g + 3)), 1)[0]
           for g in range(5)]
    assert fit["lowo"] == pytest.approx([min(loo), max(loo)], rel=1e-10)
    assert fit["interval"] == [min(fit["ci_t"][0], fit["ci_bootstrap"][0], fit["lowo"][0]),
                               max(fit["ci_t"][1], fit["ci_bootstrap"][1], fit["lowo"][1])]
    assert fit["n_points"] == 15 and fit["dropped"] == 0 and fit["sizes"] == [100.0, 200.0, 400.0, 800.0, 1600.0]
    assert fit_exponent(n, y, bootstrap=300)["ci_bootstrap"] == fit_exponent(n, y, bootstrap=300, seed=0)["ci_bootstrap"]
    assert fit_exponent(n, y, bootstrap=1)["ci_bootstrap"] is not None
    assert fit_exponent(n[:9], y[:9], bootstrap=10)["lowo"] is None  # 3 sizes: nothing to leave out


def test_fit_floor_and_size_edges() -> None:
    fit = fit_exponent([10, 20, 40, 80, 160], [1e-1, 1e-2, 1e-3, FLOAT32_FLOOR, 1e-5], bootstrap=10)
    assert fit["sizes"] == [10.0, 20.0, 40.0, 80.0] and fit["dropped"] == 1  # the floor itself is kept
    bad = fit_exponent([10, 20], [0.1, 0.01], bootstrap=10)
    assert bad["sizes"] == [10.0, 20.0] and bad["dropped"] == 0
    with pytest.raises(TTLabInputError) as err:
        fit_exponent([1, 2], [1.0], bootstrap=10)
    assert err.value.params == ("n_params", "nmse")


def test_geometric_mean_and_data_check_edges() -> None:
    from ttlab.scaling.model_scaling_analysis import geometric_mean

    assert geometric_mean([1.0, 4.0, 0.0, -1.0, float("nan")]) == pytest.approx(2.0)
    assert geometric_mean([2.0, 8.0, 4.0]) == pytest.approx(4.0) and geometric_mean([0.0]) is None
    at = data_check([1.0], [0.9])  # a drop of exactly 10 %: not more than 10 %
    assert at == {"nmse_n": 1.0, "nmse_2n": pytest.approx(0.9), "ratio": pytest.approx(0.9), "limited": False}
    assert data_check([1.0], [0.8999])["limited"] is True


def test_fit_text_format() -> None:
    from ttlab.scaling.model_scaling_analysis import fit_text

    fit = {"alpha_hat": 1.23456, "interval": [1.0, 1.5]}
    assert fit_text(fit) == "1.23 [1, 1.5]" and fit_text(fit, ".3f") == "1.235 [1.000, 1.500]"
    assert fit_text({"error": "needs 3 sizes"}) == "— (needs 3 sizes)" and fit_text({}) == "— (no fit)"
