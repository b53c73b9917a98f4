"""ttlab.ntp.diagnostics on fixed synthetic curves: every fitted or derived number against numpy by hand.

Fast (no training): a hand-built TrainResult carries metrics whose rates and bounds are known exactly.
These tests are the mutation-testing suite of the module (docs/mutation.md).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from ttlab.ntp.config import METRIC_COLUMNS, TrainConfig, TrainResult
from ttlab.ntp.diagnostics import (
    fit_direction_rate,
    fit_loss_rate,
    format_loss,
    local_loglog_slopes,
    norm_bounds_hold,
    summarize,
    theory_attention_rate,
)
from ttlab.ntp.maxmargin import MaxMarginSolution


def _polyfit(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(slope, intercept) of the least-squares line, from the normal equations."""
    A = np.column_stack([x, np.ones_like(x)])
    slope, intercept = np.linalg.lstsq(A, y, rcond=None)[0]
    return float(slope), float(intercept)


# --------------------------------------------------------------------------------------------- direction


def test_direction_fit_constants_residuals_and_slope():
    t = np.arange(1, 101, dtype=float)
    y = 0.5 * np.log(t) / t * np.exp(0.01 * np.sin(t))  # log t/t up to a small wiggle
    out = fit_direction_rate(t, y)
    k = t >= 10
    tk, ly = t[k], np.log(y[k])
    assert out["n_points"] == 91 and out["t_min"] == 10
    for name, f in (("log_t_over_t", np.log(tk) / tk), ("log2_t_over_t", np.log(tk) ** 2 / tk)):
        r = ly - np.log(f)
        assert out[name]["C"] == pytest.approx(math.exp(r.mean()), rel=1e-12)
        assert out[name]["log_residual_std"] == pytest.approx(float(np.sqrt(((r - r.mean()) ** 2).mean())), rel=1e-9)
    assert out["log_t_over_t"]["C"] == pytest.approx(0.5, rel=0.01)
    assert out["log_t_over_t"]["log_residual_std"] < out["log2_t_over_t"]["log_residual_std"]
    assert out["loglog_slope"] == pytest.approx(_polyfit(np.log(tk), ly)[0], rel=1e-10)
    assert out["final_one_minus_cos"] == y[-1]


def test_direction_fit_window_and_filters():
    t = np.arange(1, 21, dtype=float)
    y = 1.0 / t
    assert fit_direction_rate(t, y, t_min=2)["n_points"] == 18  # t ≥ 3 whatever t_min says
    assert fit_direction_rate(t, y, t_min=5)["n_points"] == 16
    y2 = y.copy()
    y2[[5, 6, 7]] = [np.nan, 0.0, 1e-13]  # non-finite, zero and at the floor: dropped
    y2[8] = 1.01e-13  # just above the floor: kept
    assert fit_direction_rate(t, y2, t_min=3)["n_points"] == 18 - 3


def test_direction_fit_at_floating_point_zero():
    t = np.arange(1, 30, dtype=float)
    y = np.full_like(t, 1e-14)
    y[0] = -3e-14
    out = fit_direction_rate(t, y)
    assert out["n_points"] == 0 and out["t_min"] == 10
    assert out["note"] == "1 − cos is at floating-point zero (the iterate lies on the max-margin ray)"
    assert out["max_one_minus_cos"] == 3e-14
    assert "loglog_slope" not in out
    y[[10, 11]] = 0.1  # two points are not enough for a fit
    assert "note" in fit_direction_rate(t, y)
    y[12] = 0.1
    assert "note" not in fit_direction_rate(t, y)
    assert math.isnan(fit_direction_rate(np.zeros(0), np.zeros(0))["max_one_minus_cos"])


# --------------------------------------------------------------------------------------------- loss


def test_loss_fit_on_the_second_half_with_a_limit():
    t = np.arange(0, 41, dtype=float)
    gap = np.exp(1.0 - 0.02 * t ** 1.3)  # not exactly exponential: the window decides the fitted rate
    out = fit_loss_rate(t, gap + 2.0, limit=2.0)
    k = t >= 20  # the second half, its first point included
    s, b = _polyfit(t[k], np.log(gap[k]))
    pred = b + s * t[k]
    lg = np.log(gap[k])
    assert out["rate"] == pytest.approx(-s, rel=1e-9)
    assert out["r2"] == pytest.approx(1 - ((lg - pred) ** 2).sum() / ((lg - lg.mean()) ** 2).sum(), rel=1e-12)
    assert out["limit"] == 2.0
    assert out["final_gap"] == pytest.approx(gap[-1], rel=1e-9)
    assert out["final_log_gap"] == pytest.approx(math.log(gap[-1]), rel=1e-9)


def test_loss_fit_from_the_log_loss_below_float_range():
    t = np.arange(1, 21, dtype=float)
    log_loss = 5.0 - 90.0 * t  # L = exp(5 − 90 t): 0.0 in float64 from t = 9 on
    loss = np.exp(log_loss)
    out = fit_loss_rate(t, loss, 0.0, log_loss)
    assert out["rate"] == pytest.approx(90.0, rel=1e-12)
    assert out["r2"] == pytest.approx(1.0, abs=1e-12)
    assert out["final_log_gap"] == pytest.approx(5.0 - 90.0 * 20, rel=1e-12)
    # without the log loss only the representable losses above 1e-13 count: too few in the second half
    bad = fit_loss_rate(t, loss, 0.0)
    assert math.isnan(bad["rate"]) and math.isnan(bad["r2"]) and bad["limit"] == 0.0
    assert bad["note"] == "loss gap at floating-point zero"
    # a non-finite log loss is dropped
    ll = log_loss.copy()
    ll[-1] = -np.inf
    assert fit_loss_rate(t, loss, 0.0, ll)["final_log_gap"] == pytest.approx(5.0 - 90.0 * 19, rel=1e-12)


def test_loss_fit_floors_relative_to_the_limit():
    t = np.arange(0, 10, dtype=float)
    limit = 4.0
    gap = np.array([1, 1, 1, 1, 1e-2, 1e-4, 5e-13, 3e-13, 2e-6, 1e-6])  # 3e-13 < 1e-13·4 < 5e-13
    out = fit_loss_rate(t, limit + gap, limit)
    k = np.array([5, 6, 8, 9])  # t ≥ 9/2
    assert out["final_gap"] == pytest.approx(1e-6, rel=1e-6)
    lg = np.log((limit + gap[k]) - limit)
    s, b = _polyfit(t[k], lg)
    assert out["rate"] == pytest.approx(-s, rel=1e-9)
    r2 = 1 - ((lg - b - s * t[k]) ** 2).sum() / ((lg - lg.mean()) ** 2).sum()
    assert out["r2"] == pytest.approx(r2, rel=1e-9)  # 0.0170; with the 3e-13 point kept it would be 0.0105
    # with limit 0 the floor is 1e-13 itself
    g0 = np.array([1, 1, 1, 1, 1e-2, 1e-4, 1.5e-13, 0.9e-13, 2e-6, 1e-6])
    out0 = fit_loss_rate(t, g0, 0.0)
    lg0 = np.log(g0[k])
    s0, b0 = _polyfit(t[k], lg0)
    assert out0["rate"] == pytest.approx(-s0, rel=1e-9)
    assert out0["r2"] == pytest.approx(1 - ((lg0 - b0 - s0 * t[k]) ** 2).sum() / ((lg0 - lg0.mean()) ** 2).sum(), rel=1e-9)
    # at the floor itself: dropped (gap > floor, strictly)
    g1 = g0.copy()
    g1[6] = 1e-13
    out1 = fit_loss_rate(t, g1, 0.0)
    k1 = np.array([5, 8, 9])
    assert out1["rate"] == pytest.approx(-_polyfit(t[k1], np.log(g1[k1]))[0], rel=1e-9)
    # a flat but noisy gap has ss_tot below 1: R² is still computed
    flat = fit_loss_rate(t, 1.0 + 0.01 * np.sin(t))
    assert 0 < flat["r2"] < 1


def test_loss_fit_of_a_flat_curve_has_no_r2():
    t = np.arange(0, 10, dtype=float)
    out = fit_loss_rate(t, np.full(10, 0.5))
    assert out["rate"] == pytest.approx(0.0, abs=1e-12)
    assert math.isnan(out["r2"])
    empty = fit_loss_rate(np.zeros(0), np.zeros(0))
    assert math.isnan(empty["rate"])


# --------------------------------------------------------------------------------------------- norms


def test_norm_bounds_fraction_slack_and_first_failure():
    t = np.arange(0, 8)
    lo, up = 0.5 * t, 1.0 * t
    n = 0.75 * t
    n[0], n[1] = 99.0, -1.0  # steps 0 and 1 are not judged
    n[2] = lo[2] * (1 - 1e-9)  # at the edge of the slack: still within
    n[6] = up[6] * (1 + 1e-9)  # at the edge of the slack: still within
    n[3] = lo[3] * (1 - 0.5e-9)  # within the slack
    n[4] = up[4] * (1 + 0.5e-9)  # within the slack
    n[5] = lo[5] * (1 - 1e-6)  # below the lower bound
    n[7] = up[7] * (1 + 1e-6)  # above the upper bound
    out = norm_bounds_hold(t, n, lo, up)
    assert out == {"fraction": 4 / 6, "n_steps": 6, "first_failure_step": 5}
    ok = norm_bounds_hold(t, 0.75 * t, lo, up)
    assert ok == {"fraction": 1.0, "n_steps": 6, "first_failure_step": None}
    none = norm_bounds_hold(np.array([0, 1]), np.ones(2), np.zeros(2), np.ones(2))
    assert math.isnan(none["fraction"]) and none["n_steps"] == 0


# --------------------------------------------------------------------------------------------- summary


def _solution(W: np.ndarray) -> MaxMarginSolution:
    return MaxMarginSolution(W=W, norm=float(np.linalg.norm(W)), min_margin=1.0, max_violation=0.0,
                             n_constraints=1, method="closed-form")


def _fake_result(schedule: str = "two-stage") -> TrainResult:
    """A hand-built run: stage 1 with log L = 1 − 40 t (L = 0.0 in float64 from t = 19 on), stage 2 with
    L − L∞ = e^(−0.1 t); ‖W*‖ below 1 so that a test of ‖W*‖ > 0 cannot pass as ‖W*‖ > 1."""
    eta0, eta, L_max, T = 0.3, 0.08, 5, 40
    W_ov, W_kq = np.diag([0.3, 0.4]), np.array([[0.1, 0.2], [0.2, 0.0]])  # ‖W*_ov‖ = 0.5, ‖W*_kq‖ = 0.3
    t = np.arange(0, T + 1, dtype=float)
    m = {c: [] for c in METRIC_COLUMNS}
    stages = ("1", "2") if schedule == "two-stage" else ("joint",)
    for stage in stages:
        st_eta, st_norm = (eta0, 0.5) if stage == "1" else (eta, 0.3)
        log_loss = 1.0 - 40 * t if stage == "1" else np.log(0.7 + np.exp(-0.1 * t))
        omc = 0.2 * np.log(t + 2) / (t + 2)
        cols = {
            "stage": [stage] * len(t), "step": t, "loss": np.exp(log_loss), "log_loss": log_loss,
            "cosine": 1 - omc, "norm": st_eta * t,
            "norm_lower_bound": t * st_eta / (2 * st_norm), "norm_upper_bound": t * st_eta,
            "min_optimal_attention": 1 - 0.5 * np.exp(-0.05 * t), "cosine_ov": 0.9 + 0.001 * t,
            "norm_ov": 7.5 + t,
        }
        for c in METRIC_COLUMNS:
            m[c].extend(list(cols[c]))
    cfg = TrainConfig(stage1_steps=T, stage2_steps=T, eta0=eta0, eta=eta, schedule=schedule)
    return TrainResult(config=cfg, W_ov=torch.zeros(2, 2), W_kq=torch.zeros(2, 2), wov_star=_solution(W_ov),
                       wkq_star=_solution(W_kq), metrics=m, limit_loss=0.7, max_len=L_max)


def test_summarize_a_two_stage_run():
    res = _fake_result()
    s = summarize(res)
    assert set(s) == {"stage_1", "stage_2"}
    s1, s2 = s["stage_1"], s["stage_2"]
    assert s1["steps"] == s2["steps"] == 40
    assert s1["final_log_loss"] == pytest.approx(1 - 1600.0)
    assert s1["final_loss"] == 0.0
    assert s1["final_cosine"] == pytest.approx(1 - 0.2 * math.log(42) / 42)
    assert s1["final_norm"] == pytest.approx(0.3 * 40)
    assert s1["loss_fit"]["rate"] == pytest.approx(40.0, rel=1e-10)  # from log L: stage 1's limit is 0
    assert s1["loss_fit"]["limit"] == 0.0
    assert s1["theory_loss_rate"] == pytest.approx(0.3 / (4 * 0.5), rel=1e-12)
    assert s1["norm_bounds"] == {"fraction": 1.0, "n_steps": 39, "first_failure_step": None}
    assert s1["direction_fit"]["n_points"] == 31
    assert s1["direction_fit"]["final_one_minus_cos"] == pytest.approx(0.2 * math.log(42) / 42, rel=1e-9)
    assert "final_min_optimal_attention" not in s1 and "theory_attention_rate_C1" not in s1
    # stage 2: the gap to L∞ = 0.7 decays at 0.1 per step; the attention gap at 0.05
    assert s2["loss_fit"]["rate"] == pytest.approx(0.1, rel=1e-6)
    assert s2["loss_fit"]["limit"] == 0.7 == s2["limit_loss"]
    assert s2["final_min_optimal_attention"] == pytest.approx(1 - 0.5 * math.exp(-2.0))
    assert s2["final_loss"] == pytest.approx(0.7 + math.exp(-4.0), rel=1e-12)
    assert s2["attention_gap_fit"]["rate"] == pytest.approx(0.05, rel=1e-9)
    assert s2["theory_attention_rate_C1"] == pytest.approx(0.08 / (4 * 5 * 0.09), rel=1e-12)
    assert s2["final_cosine_ov"] == pytest.approx(0.94) and s2["final_norm_ov"] == 47.5
    assert s2["final_norm"] == pytest.approx(0.08 * 40)
    assert "theory_loss_rate" not in s2
    # ‖W*_kq‖ = 0.3 < 1/2 puts the lower bound tη/(2‖W*‖) above tη: no step can meet both
    assert s2["norm_bounds"] == {"fraction": 0.0, "n_steps": 39, "first_failure_step": 2}
    assert s2["direction_fit"]["final_one_minus_cos"] == pytest.approx(0.2 * math.log(42) / 42, rel=1e-9)


def test_summarize_a_joint_run_and_a_zero_norm_star():
    res = _fake_result("joint")
    s = summarize(res)
    assert set(s) == {"stage_joint"}
    assert s["stage_joint"]["final_min_optimal_attention"] == pytest.approx(1 - 0.5 * math.exp(-2.0))
    assert s["stage_joint"]["theory_attention_rate_C1"] == pytest.approx(0.08 / (4 * 5 * 0.09), rel=1e-12)
    res = _fake_result()
    zero = _solution(np.zeros((2, 2)))
    res = TrainResult(config=res.config, W_ov=res.W_ov, W_kq=res.W_kq, wov_star=zero, wkq_star=zero,
                      metrics=res.metrics, limit_loss=0.7, max_len=5)
    s = summarize(res)
    assert math.isnan(s["stage_1"]["theory_loss_rate"]) and math.isnan(s["stage_2"]["theory_attention_rate_C1"])
    # a stage without rows is left out
    m = {c: [v for v, st in zip(res.metrics[c], res.metrics["stage"]) if st == "1"] for c in METRIC_COLUMNS}
    res1 = TrainResult(config=res.config, W_ov=res.W_ov, W_kq=res.W_kq, wov_star=_solution(np.eye(2)),
                       wkq_star=_solution(np.eye(2)), metrics=m, limit_loss=0.7, max_len=5)
    assert set(summarize(res1)) == {"stage_1"}
    m2 = {c: [v for v, st in zip(res.metrics[c], res.metrics["stage"]) if st == "2"] for c in METRIC_COLUMNS}
    res2 = TrainResult(config=res.config, W_ov=res.W_ov, W_kq=res.W_kq, wov_star=_solution(np.eye(2)),
                       wkq_star=_solution(np.eye(2)), metrics=m2, limit_loss=0.7, max_len=5)
    assert set(summarize(res2)) == {"stage_2"}


def test_theory_attention_rate_on_fixed_numbers():
    assert theory_attention_rate(0.2, 2.0, 5) == pytest.approx(0.2 / 80)
    assert theory_attention_rate(0.2, 0.5, 5) == pytest.approx(0.2 / 5)
    assert math.isnan(theory_attention_rate(0.2, -1.0, 5))


# --------------------------------------------------------------------------------------------- formatting


@pytest.mark.parametrize(
    "loss, log_loss, digits, text",
    [
        (0.6931, None, 4, "0.6931"),
        (1e-3, None, 4, "0.0010"),
        (9.99e-4, None, 4, "9.990e-04"),
        (9999.0, None, 4, "9999.0000"),
        (1e4, None, 4, "1.000e+04"),
        (-0.5, None, 4, "-0.5000"),
        (0.5, None, 2, "0.50"),
        (float("nan"), None, 4, "nan"),
        (None, None, 4, "nan"),
        (0.0, None, 4, "0"),
        (0.0, math.log(2.5) - 700 * math.log(10), 4, "2.500e-700"),
        (0.0, math.log(2.5) - 700 * math.log(10), 2, "2.5e-700"),
        (0.0, math.log(9.99996) - 500 * math.log(10), 4, "1.000e-499"),
        (0.0, math.log(9.6) - 500 * math.log(10), 4, "9.600e-500"),
        (0.0, math.log(9.996) - 500 * math.log(10), 4, "9.996e-500"),
        (0.0, float("-inf"), 4, "0"),
    ],
)
def test_format_loss(loss, log_loss, digits, text):
    assert format_loss(loss, log_loss, digits) == text
    if digits == 4:  # the default
        assert format_loss(loss, log_loss) == text


# --------------------------------------------------------------------------------------------- local slopes


def test_local_slopes_window_is_inclusive_and_starts_at_three():
    t = np.arange(1, 51, dtype=float)
    y = 2.0 / t ** 1.5
    out = local_loglog_slopes(t, y, 10, 20)
    assert (out["t0"], out["t1"], out["n_points"]) == (10.0, 20.0, 11)
    assert out["slope"] == pytest.approx(-1.5, abs=1e-12)
    lt = np.log(np.arange(10, 21, dtype=float))
    assert out["theory_log2_t_over_t"] == pytest.approx(_polyfit(lt, 2 * np.log(lt) - lt)[0], abs=1e-12)
    assert out["theory_log_t_over_t"] == pytest.approx(_polyfit(lt, np.log(lt) - lt)[0], abs=1e-12)
    assert local_loglog_slopes(t, y, 0, 5)["n_points"] == 3  # t = 3, 4, 5
    y2 = y.copy()
    y2[[11, 12]] = [0.0, np.nan]  # t = 12, 13
    assert local_loglog_slopes(t, y2, 10, 20)["n_points"] == 9
    y2[13] = 1e-13  # at the floor: dropped
    assert local_loglog_slopes(t, y2, 10, 20)["n_points"] == 8
    few = local_loglog_slopes(t, y, 10, 11)
    assert few == {"t0": 10.0, "t1": 11.0, "n_points": 2,
                   "note": "fewer than 3 steps with 1 − cos above floating-point zero"}
    assert local_loglog_slopes(t, y, 10, 12)["n_points"] == 3


def test_three_points_are_enough_for_a_fit():
    t = np.arange(1, 13, dtype=float)
    y = 2.0 / t ** 1.5
    three = local_loglog_slopes(t, y, 10, 12)
    assert three["n_points"] == 3 and three["slope"] == pytest.approx(-1.5, abs=1e-12) and "note" not in three
    # fit_loss_rate: the second half of t = 0…5 is t = 3, 4, 5
    out = fit_loss_rate(np.arange(6, dtype=float), np.exp(-0.5 * np.arange(6.0)))
    assert out["rate"] == pytest.approx(0.5, rel=1e-12) and "note" not in out
    # fit_direction_rate: t = 10, 11, 12
    d = fit_direction_rate(t, y)
    assert d["n_points"] == 3 and d["loglog_slope"] == pytest.approx(-1.5, abs=1e-12)


def test_missing_values_count_as_not_finite():
    # metric columns are lists of Python floats; a missing entry (None) is dropped like NaN, never an error
    t = list(range(1, 21))
    y = [1.0 / s for s in t]
    y[15] = None
    assert fit_direction_rate(t, y, t_min=3)["n_points"] == 17
    assert local_loglog_slopes(t, y, 10, 20)["n_points"] == 10
    loss = [math.exp(-0.2 * s) for s in t]
    loss[12] = None
    out = fit_loss_rate(t, loss)
    assert out["rate"] == pytest.approx(0.2, rel=1e-12)
    log_loss = [-0.2 * s for s in t]
    log_loss[12] = None
    assert fit_loss_rate(t, loss, 0.0, log_loss)["rate"] == pytest.approx(0.2, rel=1e-12)
    norm = [0.75 * s for s in t]
    norm[4] = None
    assert norm_bounds_hold(np.array(t), norm, [0.5 * s for s in t], list(map(float, t)))["fraction"] == pytest.approx(18 / 19)
