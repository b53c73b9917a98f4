"""The manifold-regression sweep's analysis (:mod:`ttlab.scaling.manifold_analysis`) pinned against independent
computations on synthetic runs.

Every record of :func:`aggregate` is compared key by key with numbers made separately in the test: the exponent
with numpy's least-squares line over *every* seed's point, the per-size summaries with scipy's geometric mean, the
learning rate chosen on the validation loss where the test loss would choose another, the step-limited sizes left
out (and the fall-back below 3 usable sizes), the oracles' rows (the k-NN oracle's ambient fall-back), the data-limit
check, the intervals against scipy's t-interval and against the fit module called with the sweep's bootstrap
counts, and the theory next to each fit in closed form (2β/(2β+d), 2β/d).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from scipy import stats

from ttlab.scaling.fit import fit_offset_power_law, fit_power_law
from ttlab.scaling.manifold_analysis import aggregate, estimate_ids, geomean, geomean_se
from ttlab.scaling.manifold_config import ManifoldSweepConfig

EXPONENT_KEYS = {"alpha_hat", "alpha_hat_ci", "alpha_hat_ci_method", "alpha_hat_ci_bootstrap", "alpha_hat_ci_t"}
NO_EXPONENT = dict.fromkeys(EXPONENT_KEYS)
GOOD, BAD = 1e-3, 3e-3  # GOOD has the lower validation loss, BAD the lower test loss


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/scaling/conftest.py


def _cfg(**kw: Any) -> ManifoldSweepConfig:
    base: dict[str, Any] = {"ds": (2,), "ambients": (16,), "n_min": 64, "n_max": 4096, "points": 7, "seeds": 3,
                            "lrs": (GOOD, BAD), "archs": ("softmax",), "betas": (0.5,), "regimes": ("noisy",),
                            "noise": 0.5, "model_widths": (), "knn": False, "bootstrap": 30, "bootstrap_offset": 6,
                            "width": 8, "n_head": 2, "tokens": 4}
    return ManifoldSweepConfig(**{**base, **kw})


def _slope(x: list[float], y: list[float]) -> float:
    return float(-np.polyfit(np.log(x), np.log(y), 1)[0])


def _by_size(rows: list[dict[str, Any]], key: str = "n") -> list[dict[str, Any]]:
    """Rows in the order of the fitted points: by size, then by seed."""
    return sorted(rows, key=lambda r: (r[key], r["seed"]))


def _t_ci(x: list[float], y: list[float]) -> list[float]:
    reg = stats.linregress(np.log(x), np.log(y))
    half = stats.t.ppf(0.975, len(x) - 2) * reg.stderr
    return [-reg.slope - half, -reg.slope + half]


def _check_exponent(rec: dict[str, Any], x: list[float], y: list[float], bootstrap: int) -> None:
    """The FittedExponent keys of a record against numpy's slope, scipy's t-interval and the fit module's bootstrap."""
    assert rec["alpha_hat"] == pytest.approx(_slope(x, y), rel=1e-9)
    boot = fit_power_law(x, y, bootstrap=bootstrap, seed=0).ci["alpha"]
    assert rec["alpha_hat_ci"] == pytest.approx(list(boot), rel=1e-12) and rec["alpha_hat_ci_bootstrap"] == rec["alpha_hat_ci"]
    assert rec["alpha_hat_ci_method"] == "bootstrap percentile"  # the sweep's rule, even below 6 points
    assert rec["alpha_hat_ci_t"] == pytest.approx(_t_ci(x, y), rel=1e-7)


# ---------------------------------------------------------------------------------------------
# geometric means


def test_geomean_and_its_standard_error_against_closed_forms():
    v = [0.02, 0.05, 0.011, 0.3]
    assert geomean(v) == pytest.approx(stats.gmean(v), rel=1e-12)
    assert geomean(v) != pytest.approx(statistics.fmean(v), rel=1e-3)  # not the arithmetic mean
    assert geomean([4.0]) == pytest.approx(4.0) and geomean([]) is None
    logs = [math.log(x) for x in v]
    want = stats.gmean(v) * statistics.stdev(logs) / math.sqrt(len(v))  # delta method, ddof = 1
    assert geomean_se(v) == pytest.approx(want, rel=1e-12)
    assert geomean_se([2, 8]) == pytest.approx(4.0 * math.log(4) / math.sqrt(2) / math.sqrt(2), rel=1e-12)
    assert geomean_se([3.0]) is None and geomean_se([]) is None


# ---------------------------------------------------------------------------------------------
# the ID of the inputs


def test_estimate_ids_against_the_estimator_on_the_same_inputs():
    from ttlab.intrinsic_dim import MLE
    from ttlab.scaling.targets import make_problem, make_splits

    cfg = _cfg(ds=(1, 2), ambients=(8,), betas=(0.5, 1.0), id_points=400, id_k=10, manifold="cube")
    rows = estimate_ids(cfg)
    assert [(r["d"], r["ambient"]) for r in rows] == [(1, 8), (2, 8)]
    for r in rows:
        # the inputs: id_points training points of seed 0 (they do not depend on the target's parameters)
        x = make_splits(make_problem(r["d"], 8, manifold="cube"), 400, 5, 5, 0).x_train.astype(np.float64)
        est = MLE(k=10, average="mean").fit(x)
        pw = np.asarray(est.pointwise_dimension_, dtype=float)
        assert r["id_mean"] == pytest.approx(float(est.dimension_), rel=1e-9)
        assert r["id_mean"] == pytest.approx(r["d"], rel=0.3)  # a d-cube reads about d
        assert r["id_harmonic"] == pytest.approx(stats.hmean(pw[np.isfinite(pw) & (pw > 0)]), rel=1e-9)
        assert r["id_harmonic"] < r["id_mean"]  # harmonic ≤ arithmetic mean, strictly for spread estimates
        assert {k: r[k] for k in ("n_points", "k", "method")} == {"n_points": 400, "k": 10, "method": "mle"}
        for key, d_hat in (("alpha_pred_from_id", r["id_mean"]), ("alpha_pred_from_id_harmonic", r["id_harmonic"])):
            assert r[key] == pytest.approx({"0.5": 1.0 / (1.0 + d_hat), "1": 2.0 / (2.0 + d_hat)}, rel=1e-12)
        assert set(r) == {"d", "ambient", "n_points", "k", "method", "id_mean", "id_harmonic", "alpha_pred_from_id",
                          "alpha_pred_from_id_harmonic"}


def test_estimate_ids_harmonic_rule_reads_only_finite_positive_pointwise_estimates(monkeypatch):
    import ttlab.intrinsic_dim

    calls = []

    class FakeMLE:  # the estimator's pointwise output replaced by values with every kind of bad entry
        def __init__(self, k: int = 20, average: str = "mean", seed: int = 0) -> None:
            calls.append(k)

        def fit(self, x: np.ndarray) -> FakeMLE:
            self.dimension_ = 2.5
            self.pointwise_dimension_ = [0.5, 2.0, 4.0, float("nan"), float("inf"), -1.0, 0.0]
            return self

    monkeypatch.setattr(ttlab.intrinsic_dim, "MLE", FakeMLE)
    (row,) = estimate_ids(_cfg(ds=(2,), ambients=(8,), id_points=50, id_k=9))
    assert calls == [9]
    assert row["id_harmonic"] == pytest.approx(stats.hmean([0.5, 2.0, 4.0]), rel=1e-12)  # 3 / 2.75
    assert row["id_mean"] == 2.5 and row["alpha_pred_from_id"] == {"0.5": pytest.approx(1 / 3.5)}


# ---------------------------------------------------------------------------------------------
# α̂_D: learning rate on validation, every seed, step-limited sizes left out


def _data_runs(cfg: ManifoldSweepConfig, limited: set[tuple[int, int]] = frozenset(),  # type: ignore[assignment]
               setting: dict[str, Any] | None = None, alpha: float = 0.4) -> list[dict[str, Any]]:
    """Noisy power laws, seed-dependent amplitude; the BAD learning rate has the lower test loss but the higher
    validation loss and a different slope; a (seed, n) in ``limited`` is step-limited and 5× too high."""
    rng = np.random.default_rng(11)
    s = setting or {"arch": "softmax", "beta": 0.5, "regime": "noisy", "d": 2}
    runs = []
    for D in cfg.ambients:
        for seed in range(cfg.seeds):
            for n in cfg.sizes():
                good = 2.0 * (1 + 0.3 * seed) * n ** -alpha * math.exp(rng.normal(0, 0.08))
                lim = (seed, n) in limited
                for lr in cfg.lrs:
                    test = good * (5.0 if lim else 1.0) if lr == GOOD else 0.1 * good * (n / 64) ** -0.5
                    runs.append({**s, "ambient": D, "n": n, "seed": seed, "lr": lr, "width": cfg.width,
                                 "n_params": 999, "test_mse": test, "val_mse": 1.0 if lr == GOOD else 2.0,
                                 "step_limited": lim, "best_step": 10 * seed + n % 7, "steps_planned": n // 2})
    return runs


def _expected_points(runs: list[dict[str, Any]], D: int) -> list[dict[str, Any]]:
    pts = []
    for n in sorted({r["n"] for r in runs}):
        rs = [r for r in runs if r["ambient"] == D and r["n"] == n and r["lr"] == GOOD]
        mses = [r["test_mse"] for r in rs]
        pts.append({"n": n, "n_params": 999, "test_mse": mses, "test_mse_geomean": pytest.approx(stats.gmean(mses)),
                    "seeds": [r["seed"] for r in rs], "step_limited": any(r["step_limited"] for r in rs),
                    "best_step": [r["best_step"] for r in rs], "steps_planned": n // 2, "lr": [GOOD] * len(rs)})
    return pts


def test_data_fit_record_against_independent_numbers():
    cfg = _cfg(ambients=(16, 32))
    sizes = cfg.sizes()
    assert sizes == [64, 128, 256, 512, 1024, 2048, 4096]
    limited = {(1, 4096), (2, 2048)}  # one seed each: the whole size leaves the fit
    runs = _data_runs(cfg, limited)
    ids = [{"d": 2, "ambient": 16, "id_mean": 2.5, "alpha_pred_from_id": {"0.5": 0.286, "1": 0.444}}]
    agg = aggregate(cfg, runs, [], [], ids)
    assert agg["n_ref"] == 512 and agg["knn_fits"] == [] and agg["model_fits"] == [] and agg["approx_fits"] == []
    assert len(agg["fits"]) == 2
    for f, D in zip(agg["fits"], (16, 32)):
        good = [r for r in runs if r["ambient"] == D and r["lr"] == GOOD]
        fitted = _by_size([r for r in good if r["n"] < 2048])
        x, y = [float(r["n"]) for r in fitted], [r["test_mse"] for r in fitted]
        _check_exponent(f, x, y, cfg.bootstrap)
        assert f["alpha_hat"] == pytest.approx(0.4, abs=0.05)
        assert f["alpha_hat_all_sizes"] == pytest.approx(_slope([r["n"] for r in good], [r["test_mse"] for r in good]))
        off = fit_offset_power_law(x, y, bootstrap=cfg.bootstrap_offset, seed=0)
        assert f["alpha_hat_offset"] == pytest.approx(off.params["alpha"], rel=1e-9)
        assert f["ci_offset"] == pytest.approx(list(off.ci["alpha"]), rel=1e-9)
        assert f["offset_E"] == pytest.approx(off.params["E"], rel=1e-9, abs=1e-15)
        assert f["points"] == _expected_points(runs, D)
        at_ref = [r["test_mse"] for r in good if r["n"] == 512]
        assert f["mse_at_n_ref"] == pytest.approx(stats.gmean(at_ref), rel=1e-12) and f["n_ref"] == 512
        assert f["sizes_fitted"] == [64, 128, 256, 512, 1024] and f["includes_step_limited"] is False
        assert f["fit_details"]["power"]["params"]["alpha"] == f["alpha_hat"]
        assert f["fit_details"]["offset"]["bootstrap"]["n_requested"] == cfg.bootstrap_offset
        want_base = {"d": 2, "ambient": D, "arch": "softmax", "beta": 0.5, "regime": "noisy", "noise": 0.5,
                     "alpha_pred": pytest.approx(1 / 3), "alpha_noiseless": pytest.approx(0.5),
                     "id_hat": 2.5 if D == 16 else None, "alpha_pred_from_id": 0.286 if D == 16 else None,
                     "oracle_alpha": None, "oracle_ci": None}
        assert {k: f[k] for k in want_base} == want_base
        assert set(f) == set(want_base) | EXPONENT_KEYS | {
            "alpha_hat_offset", "ci_offset", "offset_E", "alpha_hat_all_sizes", "n_ref", "mse_at_n_ref", "sizes_fitted",
            "includes_step_limited", "points", "fit_details"}


def test_three_usable_sizes_are_enough_fewer_fall_back_to_all():
    cfg = _cfg(n_max=512, points=4, seeds=2)  # sizes 64, 128, 256, 512
    three = aggregate(cfg, _data_runs(cfg, {(0, 512)}), [], [], [])["fits"][0]
    assert three["sizes_fitted"] == [64, 128, 256] and three["includes_step_limited"] is False
    runs = _data_runs(cfg, {(0, 512), (1, 256)})
    (two,) = aggregate(cfg, runs, [], [], [])["fits"]
    assert two["sizes_fitted"] == [64, 128, 256, 512] and two["includes_step_limited"] is True
    good = _by_size([r for r in runs if r["lr"] == GOOD])
    x, y = [float(r["n"]) for r in good], [r["test_mse"] for r in good]
    _check_exponent(two, x, y, cfg.bootstrap)
    assert two["alpha_hat_all_sizes"] == two["alpha_hat"]
    # nothing limited: no fall-back, nothing limited included
    clean = aggregate(cfg, _data_runs(cfg), [], [], [])["fits"][0]
    assert clean["sizes_fitted"] == [64, 128, 256, 512] and clean["includes_step_limited"] is False
    assert clean["alpha_hat_all_sizes"] == clean["alpha_hat"]


def test_a_fit_needs_two_sizes():
    cfg = _cfg(n_max=512, points=4, seeds=2)
    runs = [r for r in _data_runs(cfg) if r["n"] in (64, 128)]
    (two,) = aggregate(cfg, runs, [], [], [])["fits"]
    good = _by_size([r for r in runs if r["lr"] == GOOD])
    _check_exponent(two, [float(r["n"]) for r in good], [r["test_mse"] for r in good], cfg.bootstrap)
    assert two["alpha_hat_offset"] is None and two["ci_offset"] is None and two["offset_E"] is None  # < 4 sizes
    assert two["mse_at_n_ref"] is None and two["n_ref"] == 256  # the reference size was not run
    (one,) = aggregate(cfg, [r for r in runs if r["n"] == 64], [], [], [])["fits"]
    assert one == {"d": 2, "ambient": 16, "arch": "softmax", "beta": 0.5, "regime": "noisy", "noise": 0.5,
                   "alpha_pred": pytest.approx(1 / 3), "alpha_noiseless": pytest.approx(0.5), "id_hat": None,
                   "alpha_pred_from_id": None, "oracle_alpha": None, "oracle_ci": None, **NO_EXPONENT,
                   "error": "fewer than 2 finished sizes"}


def test_runs_of_other_settings_stay_out_of_a_fit():
    cfg = _cfg(n_max=512, points=4, seeds=2, regimes=("noisy", "noiseless"), betas=(0.5, 1.0))
    mine = _data_runs(cfg)
    others = [*_data_runs(cfg, setting={"arch": "softmax", "beta": 1.0, "regime": "noisy", "d": 2}, alpha=1.2),
              *_data_runs(cfg, setting={"arch": "softmax", "beta": 1.0, "regime": "noiseless", "d": 2}, alpha=0.1)]
    fits = aggregate(cfg, mine + others, [], [], [])["fits"]
    assert [(f["beta"], f["regime"]) for f in fits] == [(0.5, "noisy"), (0.5, "noiseless"), (1.0, "noisy"),
                                                       (1.0, "noiseless")]
    for f, runs in ((fits[0], mine), (fits[2], others[: len(mine)]), (fits[3], others[len(mine):])):
        good = [r for r in runs if r["lr"] == GOOD]
        assert f["alpha_hat"] == pytest.approx(_slope([r["n"] for r in good], [r["test_mse"] for r in good]))
    assert fits[3]["noise"] == 0.0 and fits[0]["noise"] == 0.5
    assert fits[1]["error"] == "fewer than 2 finished sizes" and fits[1]["noise"] == 0.0  # the settings after it go on
    assert fits[2]["alpha_pred"] == pytest.approx(0.5) and fits[2]["alpha_noiseless"] == pytest.approx(1.0)


# ---------------------------------------------------------------------------------------------
# the k-NN oracle


def _knn_rows(D: int, alpha: float, sizes: list[int], seeds: int = 4, **kw: Any) -> list[dict[str, Any]]:
    rng = np.random.default_rng(D)
    return [{"beta": 0.5, "regime": "noisy", "d": 2, **kw, "ambient": D, "n": n, "seed": s, "k": 4 + s + n % 3,
             "test_mse": (1 + 0.2 * s) * 0.7 * n ** -alpha * math.exp(rng.normal(0, 0.05))}
            for s in range(seeds) for n in sizes]


def test_knn_oracle_records_with_the_ambient_fall_back():
    cfg = _cfg(ambients=(16, 32, 64), n_max=512, points=4, seeds=1, knn=True)
    sizes = cfg.sizes()
    rows16, rows64 = _knn_rows(16, 0.5, sizes), _knn_rows(64, 0.65, sizes)
    noise = [*_knn_rows(16, 2.0, sizes, beta=1.0), *_knn_rows(16, 2.0, sizes, regime="noiseless"),
             *_knn_rows(16, 2.0, sizes, d=1)]  # other settings: never part of this oracle
    agg = aggregate(cfg, _data_runs(cfg), [], rows64 + noise + rows16, [])
    assert [k["ambient"] for k in agg["knn_fits"]] == [16, 32, 64]
    for kf, rows in zip(agg["knn_fits"], (rows16, rows16, rows64)):  # D = 32 has no runs: D = 16's (similarity-invariant)
        x, y = [float(r["n"]) for r in rows], [r["test_mse"] for r in rows]
        _check_exponent(kf, x, y, cfg.bootstrap)
        ly, fitted = np.log(y), np.polyval(np.polyfit(np.log(x), np.log(y), 1), np.log(x))
        assert kf["r2_log"] == pytest.approx(1 - np.sum((ly - fitted) ** 2) / np.sum((ly - ly.mean()) ** 2), rel=1e-9)
        assert kf["n_seeds"] == 4
        pts = []
        for n in sizes:
            rs = [r for r in rows if r["n"] == n]
            pts.append({"n": n, "test_mse": [r["test_mse"] for r in rs], "k": [r["k"] for r in rs],
                        "seeds": [0, 1, 2, 3], "test_mse_geomean": pytest.approx(stats.gmean([r["test_mse"] for r in rs]))})
        assert kf["points"] == pts
        assert kf["mse_at_n_ref"] == pytest.approx(stats.gmean([r["test_mse"] for r in rows if r["n"] == 256]))
        common = {"beta": 0.5, "regime": "noisy", "noise": 0.5, "d": 2, "alpha_pred": pytest.approx(1 / 3),
                  "alpha_noiseless": pytest.approx(0.5), "oracle": "k-NN, k chosen on validation"}
        assert {k: kf[k] for k in common} == common
        assert set(kf) == set(common) | EXPONENT_KEYS | {"ambient", "r2_log", "n_seeds", "points", "mse_at_n_ref"}
    for f, kf in zip(agg["fits"], agg["knn_fits"]):  # each network fit carries its oracle's slope
        assert f["oracle_alpha"] == kf["alpha_hat"] and f["oracle_ci"] == kf["alpha_hat_ci"]


def test_knn_oracle_needs_two_sizes():
    cfg = _cfg(n_max=512, points=4, seeds=1, knn=True)
    (kf,) = aggregate(cfg, [], [], _knn_rows(16, 0.5, [64, 256]), [])["knn_fits"]
    assert kf["alpha_hat"] is not None and kf["mse_at_n_ref"] is not None and len(kf["points"]) == 2
    (kf,) = aggregate(cfg, [], [], _knn_rows(16, 0.5, [256]), [])["knn_fits"]
    assert kf == {"beta": 0.5, "regime": "noisy", "noise": 0.5, "d": 2, "ambient": 16, "alpha_pred": pytest.approx(1 / 3),
                  "alpha_noiseless": pytest.approx(0.5), "oracle": "k-NN, k chosen on validation", **NO_EXPONENT,
                  "error": "fewer than 2 oracle sizes", "mse_at_n_ref": None}


# ---------------------------------------------------------------------------------------------
# α̂_N, the approximation oracle and the data-limit check


WIDTHS = (4, 8, 12, 16)


def _n_params(w: int) -> int:
    return 12 * w * w + 5 * w


def _model_runs(cfg: ManifoldSweepConfig, arch: str = "softmax", d: int = 2, beta: float = 0.5, alpha: float = 0.8,
                widths: tuple[int, ...] = WIDTHS, check: bool = True) -> list[dict[str, Any]]:
    rng = np.random.default_rng(3)
    n = cfg.model_n or cfg.n_max
    runs = []
    for seed in range(2):
        for w in widths:
            good = 3.0 * (1 + 0.2 * seed) * _n_params(w) ** -alpha * math.exp(rng.normal(0, 0.05))
            for lr in cfg.lrs:
                test = good if lr == GOOD else 0.2 * good * w ** -0.5
                runs.append({"arch": arch, "beta": beta, "regime": cfg.model_regime, "d": d, "ambient": 16, "n": n,
                             "width": w, "n_params": _n_params(w), "seed": seed, "lr": lr, "test_mse": test,
                             "val_mse": 1.0 if lr == GOOD else 2.0, "step_limited": False, "best_step": 3 + seed,
                             "steps_planned": 50})
        if check:
            for lr in cfg.lrs:
                runs.append({**runs[-1], "n": 2 * n, "check": True, "lr": lr, "val_mse": 0.5 if lr == GOOD else 1.5,
                             "test_mse": (0.7 if lr == GOOD else 0.01) * runs[-1]["test_mse"] * (1 + seed)})
    return runs


def _approx_rows(d: int = 2, beta: float = 0.5, alpha: float = 0.9, cells: tuple[int, ...] = (256, 16, 64, 1024)):
    return [{"beta": beta, "d": d, "cells": c, "approx_mse": 3.0 * c ** -alpha * (1.05 if c == 64 else 1.0)}
            for c in cells]


def test_model_fit_records_against_independent_numbers():
    cfg = _cfg(ambients=(16, 32), n_max=512, points=4, model_widths=WIDTHS, betas=(0.5, 1.0))
    runs = _model_runs(cfg)
    distract = [*_model_runs(cfg, arch="mlp", alpha=2.0), *_model_runs(cfg, d=1, alpha=2.0),
                *_model_runs(cfg, beta=1.0, alpha=2.0)]
    approx = [*_approx_rows(), *_approx_rows(d=1, alpha=3.0), *_approx_rows(beta=1.0, alpha=3.0)]
    agg = aggregate(cfg, [], distract + runs, [], [], approx)
    assert [(a["beta"], a["d"]) for a in agg["approx_fits"]] == [(0.5, 2), (1.0, 2)]
    assert [(m["beta"], m["d"]) for m in agg["model_fits"]] == [(0.5, 2), (1.0, 2)]
    assert agg["model_fits"][1]["alpha_hat"] == pytest.approx(2.0, abs=0.1)
    assert agg["approx_fits"][1]["alpha_hat"] == pytest.approx(3.0, abs=0.1)
    af = agg["approx_fits"][0]
    rows = _approx_rows()
    _check_exponent(af, [float(r["cells"]) for r in rows], [r["approx_mse"] for r in rows], cfg.bootstrap)
    assert {k: af[k] for k in ("beta", "d", "ambient", "regime", "oracle", "points")} == {
        "beta": 0.5, "d": 2, "ambient": 16, "regime": "noiseless", "oracle": "piecewise constant on N Voronoi cells",
        "points": [{"cells": c, "approx_mse": r["approx_mse"]} for c in (16, 64, 256, 1024)
                   for r in rows if r["cells"] == c]}
    assert af["alpha_pred"] == pytest.approx(0.5)  # 2β/d
    mf = agg["model_fits"][0]
    good = _by_size([r for r in runs if r["lr"] == GOOD and not r.get("check")], "width")
    x, y = [float(r["n_params"]) for r in good], [r["test_mse"] for r in good]
    _check_exponent(mf, x, y, cfg.bootstrap)
    assert mf["A"] == pytest.approx(math.exp(np.polyfit(np.log(x), np.log(y), 1)[1]), rel=1e-9)
    off = fit_offset_power_law(x, y, bootstrap=cfg.bootstrap_offset, seed=0)
    assert mf["alpha_hat_offset"] == pytest.approx(off.params["alpha"], rel=1e-9)
    assert mf["ci_offset"] == pytest.approx(list(off.ci["alpha"]), rel=1e-9)
    at_n = [r["test_mse"] for r in good if r["width"] == 16]
    at_2n = [r["test_mse"] for r in runs if r.get("check") and r["lr"] == GOOD]
    assert mf["data_check"] == {"width": 16, "n": 512, "mse_n": pytest.approx(stats.gmean(at_n)),
                                "mse_2n": pytest.approx(stats.gmean(at_2n)),
                                "ratio": pytest.approx(stats.gmean(at_2n) / stats.gmean(at_n))}
    want = {"d": 2, "ambient": 16, "arch": "softmax", "beta": 0.5, "regime": "noiseless", "n": 512,
            "alpha_pred": pytest.approx(0.5), "oracle_alpha": af["alpha_hat"], "oracle_ci": af["alpha_hat_ci"],
            "includes_step_limited": False, "sizes_fitted": list(WIDTHS)}
    assert {k: mf[k] for k in want} == want
    assert [p["width"] for p in mf["points"]] == list(WIDTHS)
    assert [p["n_params"] for p in mf["points"]] == [_n_params(w) for w in WIDTHS]
    assert set(mf) == set(want) | EXPONENT_KEYS | {"A", "ci_offset", "alpha_hat_offset", "points", "data_check"}


def test_model_fit_edges():
    cfg = _cfg(n_max=512, points=4, model_widths=WIDTHS, model_n=300)
    runs = _model_runs(cfg, widths=(4, 16), check=False)
    (mf,) = aggregate(cfg, [], runs, [], [], [])["model_fits"]
    good = _by_size([r for r in runs if r["lr"] == GOOD], "width")
    _check_exponent(mf, [float(r["n_params"]) for r in good], [r["test_mse"] for r in good], cfg.bootstrap)
    assert mf["alpha_hat_offset"] is None and mf["ci_offset"] is None  # 2 widths: no offset form
    assert mf["data_check"] == {"width": 16, "n": 300, "mse_n": pytest.approx(stats.gmean(
        [r["test_mse"] for r in good if r["width"] == 16])), "mse_2n": None, "ratio": None}
    assert mf["oracle_alpha"] is None and mf["oracle_ci"] is None
    (af,) = aggregate(cfg, [], runs, [], [], _approx_rows(cells=(16, 64)))["approx_fits"]
    # two cell counts pass the count check; the power fit itself needs 3 points and says so only by no exponent
    assert "error" not in af and af["alpha_hat"] is None and [p["cells"] for p in af["points"]] == [16, 64]
    agg = aggregate(cfg, [], _model_runs(cfg, widths=(4,), check=False), [], [], _approx_rows(cells=(16,)))
    (mf,) = agg["model_fits"]
    (af,) = agg["approx_fits"]
    assert af == {"beta": 0.5, "d": 2, "ambient": 16, "regime": "noiseless", "alpha_pred": pytest.approx(0.5),
                  "oracle": "piecewise constant on N Voronoi cells", **NO_EXPONENT, "error": "fewer than 2 cell counts"}
    assert mf["error"] == "fewer than 2 finished widths" and mf["alpha_hat"] is None
    assert mf["data_check"]["mse_2n"] is None and mf["data_check"]["ratio"] is None
    assert mf["oracle_alpha"] is None and mf["oracle_ci"] is None
    # no check runs and no runs at all: the check has no numbers
    (mf,) = aggregate(replace(cfg, model_n=None), [], [], [], [], None)["model_fits"]
    assert mf["data_check"] == {"width": 16, "n": 512, "mse_n": None, "mse_2n": None, "ratio": None}


def test_estimate_ids_without_a_usable_pointwise_estimate_gives_no_harmonic_id(monkeypatch):
    """Every pointwise estimate NaN or ≤ 0: the harmonic ID and its predictions are None (it used to raise on NaN)."""
    import ttlab.intrinsic_dim as id_pkg

    class NoPointwise:
        def __init__(self, **kw: Any) -> None:
            pass

        def fit(self, x: np.ndarray) -> "NoPointwise":
            self.dimension_, self.pointwise_dimension_ = 2.5, np.array([np.nan, -1.0, 0.0])
            return self

    monkeypatch.setattr(id_pkg, "MLE", NoPointwise)
    [row] = estimate_ids(_cfg(betas=(0.5, 1.0), id_points=50, id_k=5, manifold="cube"))
    assert row["id_mean"] == 2.5 and row["id_harmonic"] is None
    assert row["alpha_pred_from_id"] == pytest.approx({"0.5": 1 / 3.5, "1": 2 / 4.5}, rel=1e-12)
    assert row["alpha_pred_from_id_harmonic"] == {"0.5": None, "1": None}
