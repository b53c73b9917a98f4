"""Paper A's verdicts as evidence: the controls measured in the same run, the theorems' conditions and the
numbers the rules consume, each checked against an independent computation (issue 21)."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch

from ttlab.ntp.diagnostics import (
    attention_bound,
    fit_exp_vs_power,
    local_loglog_slopes,
    resolvable_until,
    smallest_t,
    steps_to_clear,
    theorem1_conditions,
    theorem2_conditions,
    theory_attention_rate,
)
from ttlab.ntp.experiment import random_start_stage1 as _random_start_stage1
from ttlab.ntp.generate import generate_dataset
from ttlab.reproduce import PartContext, run_reproduction
from ttlab.reproduce.parts.common_ntp import CONTROL_MARGIN, agreement_claim
from ttlab.reproduce.parts.ntp_figure2 import ATTENTION_CLEARANCE, attention_claim, continuation_steps
from ttlab.reproduce.parts.ntp_figure2 import claims as figure2_claims
from ttlab.reproduce.parts.ntp_generalization import claims as generalization_claims
from ttlab.reproduce.parts.ntp_svop import claims as svop_claims
from ttlab.reproduce.parts.ntp_svop import prop2_columns

# ---------------------------------------------------------------------------------------------
# the numbers


def test_steps_to_clear_is_the_first_step_where_the_bound_clears_the_baseline():
    c1, L, base = 1.952474076222521e-05, 6, 1 / 6  # Figure 2's data, seed 0
    t = steps_to_clear(c1, L, base, 0.1)
    assert t == pytest.approx(39957.43, abs=0.01)  # log(6 / 2.75) / C1, by hand
    assert attention_bound(c1, L, t) == pytest.approx(base + 0.1, abs=1e-12)
    assert attention_bound(c1, L, t - 1) < base + 0.1 <= attention_bound(c1, L, math.ceil(t))
    assert steps_to_clear(c1, L, 0.95, 0.1) == math.inf  # the bound never reaches 1.05
    assert steps_to_clear(c1, 1, 0.3, 0.1) == 0.0  # 1/(1 + 1) = 0.5 ≥ 0.4 from the start
    rule = continuation_steps(c1, L, base, cap=200_000)  # aims at 0.1 plus the 10 % near-threshold band
    assert rule["clearance"] == pytest.approx(0.11) and rule["t_star"] == steps_to_clear(c1, L, base, 0.11)
    assert rule["t_star"] == pytest.approx(math.log(6 / (1 / (1 / 6 + 0.11) - 1)) / c1) and rule["steps"] == 43_000
    assert continuation_steps(c1, L, base, cap=5_000)["steps"] == 5_000  # the cap wins
    assert continuation_steps(c1 * 100, L, base, cap=200_000)["steps"] == 10_000  # never below 10,000


@pytest.mark.parametrize("coef, power", [(2.7e14, 2), (1.5e11, 2), (5e7, 1), (30.0, 1)])
def test_smallest_t_is_the_largest_root_found_by_bisection(coef, power):
    t = smallest_t(coef, power)
    lo, hi = coef, coef * (math.log(coef) + 1) ** power * 10  # f(lo) < 0 < f(hi) for these coefficients
    for _ in range(300):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if mid < coef * math.log(mid) ** power else (lo, mid)
    assert t == pytest.approx(hi, rel=1e-9)
    assert smallest_t(0.5, 2) == 2.0  # t ≥ 0.5·log²t for every t ≥ 2


@pytest.mark.trains
def test_theorem_conditions_on_a_tiny_run_match_the_statements():
    from ttlab.ntp.config import TrainConfig
    from ttlab.ntp.train import train

    ds = generate_dataset(6, 12, 2, 4, seed=1)
    res = train(ds, TrainConfig(stage1_steps=20, stage2_steps=30, impl="dense"))
    N = sum(s.count for s in ds.sentences)
    L, V, wo, wk, e0, e = res.max_len, ds.vocab_size, res.wov_star.norm, res.wkq_star.norm, res.config.eta0, res.config.eta
    c = theorem2_conditions(N, L, V, wo, wk, e0, e, 20, 30)
    a2 = N * L**4 * wk**6 / e  # t ≥ c0·N·L_max⁴·‖W*_kq‖⁶·log²t/η, c0 = 1
    assert c["c0"] == 1.0 and c["t_min"] == pytest.approx(a2 * math.log(c["t_min"]) ** 2, rel=1e-9)
    a1 = wo**5 * math.log(V) / e0  # T ≥ c0·‖W*_ov‖⁵·log|V|·log T/η0
    assert c["T_min"] == 2.0 or c["T_min"] == pytest.approx(a1 * math.log(c["T_min"]), rel=1e-9)
    assert c["appendix"]["t_min"] > c["t_min"]  # 1696 > 1
    assert c["eta_max"] == pytest.approx(wk / math.e) and c["met"] is (20 >= c["T_min"] and 30 >= c["t_min"])
    assert c["met"] is False  # 30 steps are far from ~N·L⁴·‖W*‖⁶/η
    c1 = theorem1_conditions(e, wk, L, 30)
    assert c1["t_min"] == math.ceil(8 * L * wk**2 / e) and c1["met"] is (30 >= c1["t_min"])


def test_exp_vs_power_tells_an_exponential_from_a_power_law():
    t = np.arange(0, 5001, dtype=float)
    exp_gap = 3.0 * np.exp(-2e-3 * t)
    f = fit_exp_vs_power(t, exp_gap, floor=1e-300)
    assert (f["t0"], f["t1"]) == (500.0, 5000.0) and f["n_points"] == 4501
    assert f["rate"] == pytest.approx(2e-3) and f["r2_exp"] == pytest.approx(1.0) and f["r2_power"] < 0.99
    pw = fit_exp_vs_power(t, 5.0 * (t + 1e-9) ** -1.5, floor=1e-300)
    assert pw["power"] == pytest.approx(1.5, rel=1e-6) and pw["r2_power"] == pytest.approx(1.0) and pw["r2_exp"] < 0.99
    # the window ends at the last resolvable step: the gap falls below the floor at t = 3000
    cut = fit_exp_vs_power(t, np.where(t <= 3000, exp_gap, 0.0), floor=1e-12)
    assert (cut["t0"], cut["t1"]) == (300.0, 3000.0)
    assert "rate" not in fit_exp_vs_power(t[:3], exp_gap[:3], floor=0.0)


@pytest.mark.trains
def test_stage2_rates_are_judged_where_float64_resolves_the_step(figure2_tiny):
    t = np.arange(0, 1001, dtype=float)
    gap = np.exp(-0.03 * t)  # 1 − min attention: below 1e-10 from t = log(1e10)/0.03 ≈ 767.5
    assert resolvable_until(t, gap) == 767.0 and resolvable_until(t, gap, floor=1e-3) == 230.0
    assert resolvable_until(t, np.zeros_like(t)) == 0.0
    r = copy.deepcopy(figure2_tiny["ntp_figure2"])
    long = r["long_run"]
    assert long["windows"]["last_decade"]["t1"] == long["resolvable_until"] <= long["stage2_steps"]
    long.update(resolvable_until=150.0, resolvable_cosine=0.995, final_cosine=0.5)  # noise after 150: not judged
    long["windows"]["last_decade"].update(slope=-1.0, theory_log2_t_over_t=-0.75)
    c = next(c for c in figure2_claims(r) if c["id"] == "ntp_figure2.stage2_direction")
    assert c["measured"]["final_cosine"] == 0.995 and c["verdict"] == "holds" and "t = 150" in c["summary"]


# ---------------------------------------------------------------------------------------------
# Figure 2: claims, kinds, controls and conditions


@pytest.fixture(scope="module")
def figure2_tiny(tmp_path_factory):
    res = run_reproduction(tmp_path_factory.mktemp("f2"), PartContext(mode="tiny"), parts=["ntp_figure2", "ntp_generalization",
                                                                               "ntp_svop"])
    assert res["summary"]["failed"] == [], {n: p.get("error") for n, p in res["parts"].items()}
    return {n: p["result"] for n, p in res["parts"].items()}


@pytest.mark.trains
def test_figure2_paper_claims_and_checks(figure2_tiny):
    r = figure2_tiny["ntp_figure2"]
    kinds = {c["id"]: c["kind"] for c in r["claims"]}
    assert kinds == {"ntp_figure2.stage1_direction": "check", "ntp_figure2.prop1_rate": "paper",
                     "ntp_figure2.stage2_direction": "paper", "ntp_figure2.norm_bounds": "check",
                     "ntp_figure2.stage1_loss_rate": "check", "ntp_figure2.stage2_linear": "paper",
                     "ntp_figure2.attention": "paper"}
    for c in r["claims"]:
        if c["kind"] == "paper":
            assert isinstance(c["measured"]["conditions"]["met"], bool), c["id"]
    # Proposition 1 is stated for the zero start (Appendix B): the random-start test is marked outside it
    prop1 = next(c for c in r["claims"] if c["id"] == "ntp_figure2.prop1_rate")["measured"]["conditions"]
    assert prop1["met"] is False and prop1["init"] == "random" and "zero start" in prop1["statement"]
    # tiny mode: the continuation is capped at 200 steps, far below t* ≈ 4·10⁴: the bound cannot clear uniform attention
    rule = r["long_run"]["steps_rule"]
    assert r["long_run"]["stage2_steps"] == 200 == rule["cap"] < rule["t_star"]
    att = next(c for c in r["claims"] if c["id"] == "ntp_figure2.attention")
    assert att["verdict"] == "inconclusive" and att["thresholds"]["min_clearance"] == ATTENTION_CLEARANCE
    assert att["measured"]["baseline"] == pytest.approx(1 / r["dataset"]["max_len"])  # uniform attention on these data


@pytest.mark.trains
def test_random_start_run_tests_the_rate_not_the_zero_start():
    ds = generate_dataset(8, 20, 2, 4, seed=0)
    rs = _random_start_stage1(ds, 300, seed=0, progress=None)
    assert rs["initial_cosine"] < 0.5  # it starts off the max-margin ray (from zero it is on it after one step)
    from ttlab.ntp.config import TrainConfig
    from ttlab.ntp.train import train

    res = train(ds, TrainConfig(stage1_steps=300, stage2_steps=0, init="random", init_scale=0.01, impl="dense"))
    rows = res.rows("1")
    want = local_loglog_slopes(rows["step"], 1.0 - rows["cosine"], 30, 300)
    assert rs["last_decade"]["slope"] == pytest.approx(want["slope"])
    # the reference: log-log slope of log t/t on the same steps, by hand
    t = rows["step"][(rows["step"] >= 30) & (rows["step"] <= 300)].astype(float)
    ref = np.polyfit(np.log(t), np.log(np.log(t) / t), 1)[0]
    assert rs["last_decade"]["theory_log_t_over_t"] == pytest.approx(ref)
    zero = train(ds, TrainConfig(stage1_steps=300, stage2_steps=0, impl="dense")).rows("1")
    assert np.all(1.0 - zero["cosine"][1:] < 1e-12)  # the control: from zero the rate is untestable


@pytest.mark.trains
def test_attention_claim_needs_the_clearance_over_uniform_attention(figure2_tiny):
    r = copy.deepcopy(figure2_tiny["ntp_figure2"])
    long, L = r["long_run"], r["dataset"]["max_len"]
    c1 = long["c1"]
    long.update(final_min_optimal_attention=0.99, attention_gap_rate=10 * c1, baseline_attention=1 / L)
    long["stage2_steps"] = math.ceil(steps_to_clear(c1, L, 1 / L, 0.05))  # clears by 0.05 only
    assert attention_claim(r)["verdict"] == "inconclusive"
    long["stage2_steps"] = math.ceil(steps_to_clear(c1, L, 1 / L, 0.2))  # clears by 0.2
    c = attention_claim(r)
    assert c["verdict"] == "holds" and c["measured"]["bound"] == pytest.approx(attention_bound(c1, L, long["stage2_steps"]))
    assert 1 / L + 0.2 <= c["measured"]["bound"] < 1 / L + 0.2 + 1e-4
    assert c["measured"]["c1"] == pytest.approx(theory_attention_rate(r["config"]["eta"], r["wkq_star_norm"], L))
    long["final_min_optimal_attention"] = 1 / L + 0.1
    assert attention_claim(r)["verdict"] == "not reproduced"


@pytest.mark.trains
def test_linear_convergence_is_judged_against_a_power_law(figure2_tiny):
    r = copy.deepcopy(figure2_tiny["ntp_figure2"])
    lin = r["long_run"]["linear"]

    def verdict(r2e, r2p):
        lin.update(rate=1e-3, r2_exp=r2e, r2_power=r2p, n_points=500)
        return next(c for c in figure2_claims(r) if c["id"] == "ntp_figure2.stage2_linear")["verdict"]

    assert verdict(0.9997, 0.935) == "holds"  # 1,000…10,000 of the issue: the exponential wins by 2.3 decades
    assert verdict(0.99787, 0.99799) == "inconclusive"  # 450…900: a power law fits as well
    del lin["rate"]  # no fit (the gap at floating-point zero): reported, not dropped
    assert next(c for c in figure2_claims(r) if c["id"] == "ntp_figure2.stage2_linear")["verdict"] == "inconclusive"


# ---------------------------------------------------------------------------------------------
# Theorem 3: uniform and random attention beside the trained model


def _by_case(a_opt: float, a_nc: float, n: int = 100) -> dict:
    return {"optimal": {"n": n, "agreement": a_opt}, "non-comparable": {"n": n, "agreement": a_nc}}


def test_agreement_claim_holds_only_beyond_its_controls():
    th = {"holds": 0.95, "partly": 0.8, "min_n": 10}
    trained = _by_case(0.99, 0.97)
    far = {"uniform attention": _by_case(0.4, 0.3), "random attention": _by_case(0.5, 0.45)}
    c = agreement_claim("x.t", "T3", trained, th, "here", far)
    assert c["verdict"] == "holds" and c["measured"]["controls"] == {"uniform attention": 0.3, "random attention": 0.45}
    near = {**far, "random attention": _by_case(0.95, 0.92)}  # within 0.1 of the trained 0.97
    c = agreement_claim("x.t", "T3", trained, th, "here", near)
    assert c["verdict"] == "inconclusive" and "random attention" in c["reason"]
    assert agreement_claim("x.t", "T3", trained, th, "here", None)["verdict"] == "inconclusive"  # no control
    assert agreement_claim("x.t", "T3", _by_case(0.5, 0.4), th, "here", far)["verdict"] == "not reproduced"
    assert CONTROL_MARGIN == 0.1


@pytest.mark.trains
def test_generalization_part_measures_its_controls(figure2_tiny):
    r = figure2_tiny["ntp_generalization"]
    ids = [c["id"] for c in r["claims"]]
    assert ids == ["ntp_generalization.limit", "ntp_generalization.trained", "ntp_generalization.trained_long"]
    assert [row["stage2_steps"] for row in r["rows"]] == [30, 60]  # the paper's length and the longer run, both judged
    for row in r["rows"] + [r["max_margin_limit"]]:
        assert set(row["controls"]) == {"uniform attention", "random attention"}
    # uniform attention does not depend on W_kq's norm: the same at every checkpoint
    assert r["rows"][0]["controls"]["uniform attention"] == r["max_margin_limit"]["controls"]["uniform attention"]
    claims = {c["id"]: c for c in r["claims"]}
    assert claims["ntp_generalization.trained"]["measured"]["conditions"]["t"] == 30
    assert claims["ntp_generalization.limit"]["measured"]["conditions"]["met"] is True
    # the claims follow the stored controls
    r2 = copy.deepcopy(r)
    lim = r2["max_margin_limit"]
    lim["by_case"] = _by_case(1.0, 1.0)
    lim["controls"]["random attention"] = _by_case(0.95, 0.95)
    assert generalization_claims(r2)[0]["verdict"] == "inconclusive"
    lim["controls"]["random attention"] = _by_case(0.3, 0.3)
    lim["controls"]["uniform attention"] = _by_case(0.3, 0.2)
    assert generalization_claims(r2)[0]["verdict"] == "holds"


@pytest.mark.trains
def test_generalization_random_control_has_the_trained_norm(tmp_path):
    """The random-attention control is a seeded Gaussian W_kq rescaled to the checkpoint's norm."""
    from ttlab.ntp.config import TrainConfig
    from ttlab.ntp.generalize import evaluate_generalization, unseen_sentences
    from ttlab.ntp.model import NTPTransformer
    from ttlab.ntp.train import train
    from ttlab.reproduce.registry import PARTS, PartContext

    ctx = PartContext(mode="tiny")
    ds = generate_dataset(20, 100, 2, 6, seed=0)
    model = NTPTransformer(ds)
    sents = unseen_sentences(model.structure, n_samples=100, seed=0)
    res = train(ds, TrainConfig(stage2_steps=30, seed=0, impl="dense"), model=model)
    R = torch.randn(res.W_kq.shape, generator=torch.Generator().manual_seed(ctx.seed), dtype=res.W_kq.dtype)
    want = evaluate_generalization(model, res.W_ov, R * (float(res.W_kq.norm()) / float(R.norm())), sents)["by_case"]
    got = PARTS["ntp_generalization"].fn(tmp_path, ctx)
    assert got["rows"][0]["controls"]["random attention"] == want


# ---------------------------------------------------------------------------------------------
# SVOP: Proposition 2 against the general QP


@pytest.mark.trains
def test_proposition2_is_checked_against_the_qp_not_the_closed_form(figure2_tiny):
    r = copy.deepcopy(figure2_tiny["ntp_svop"])
    assert r["wkq_star_qp_columns"].keys() == r["wkq_star_columns"].keys()
    worst, checked, _ = prop2_columns(r)
    assert checked >= 1 and worst < 1e-6
    r["wkq_star_columns"]["O"]["O"] += 0.5  # the default solver's (closed-form) columns are not what is judged
    assert prop2_columns(r)[0] == worst
    r["wkq_star_qp_columns"]["O"]["O"] += 0.01  # the QP's are
    assert prop2_columns(r)[0] == pytest.approx(0.01, rel=1e-3)
    claims = {c["id"]: c for c in svop_claims(r)}
    assert claims["ntp_svop.proposition2"]["verdict"] == "partly"
    del r["wkq_star_qp_columns"]
    assert {c["id"]: c for c in svop_claims(r)}["ntp_svop.proposition2"]["verdict"] == "inconclusive"


@pytest.mark.trains
def test_svop_unseen_claim_beats_uniform_attention(figure2_tiny):
    r = copy.deepcopy(figure2_tiny["ntp_svop"])
    assert all("uniform_attention" in d for d in r["unseen"].values())
    for d in r["unseen"].values():
        d["model"] = d["expected"]
        d["uniform_attention"] = d["expected"]  # a model without attention gets it right too
    assert {c["id"]: c for c in svop_claims(r)}["ntp_svop.unseen"]["verdict"] == "inconclusive"
    for d in r["unseen"].values():
        d["uniform_attention"] = "?"
    assert {c["id"]: c for c in svop_claims(r)}["ntp_svop.unseen"]["verdict"] == "holds"


@pytest.mark.trains
def test_svop_claims_state_their_conditions(figure2_tiny):
    r = figure2_tiny["ntp_svop"]
    claims = {c["id"]: c for c in r["claims"]}
    run = r["run"]
    want = theorem1_conditions(run["config"]["eta"], run["wkq_star_norm"], run["dataset"]["max_len"], 900)
    assert claims["ntp_svop.unseen"]["measured"]["conditions"] == want
    assert claims["ntp_svop.convergence"]["measured"]["conditions"] == want
    assert claims["ntp_svop.proposition2"]["measured"]["conditions"]["met"] is True
    assert "conditions" not in claims["ntp_svop.orders"]["measured"]  # a check of the tools: no theorem
