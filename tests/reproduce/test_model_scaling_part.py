"""The model_scaling part's claims: the ``model_rate`` rule driven to every outcome, the harness check, the
exponent-falls-with-d claim at 2 combined standard errors (and its false-decision rate on noise), the report blocks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ttlab.reproduce import PartContext, run_reproduction
from ttlab.reproduce.parts.model_scaling import DECIDE_COMMAND, FRACTION, SE_MULT
from ttlab.reproduce.parts.model_scaling import claims as model_claims
from ttlab.reproduce.verdict_base import HOLDS, INCONCLUSIVE, NOT_REPRODUCED, RULES
from ttlab.reproduce.verdicts import make_claim


def _fit(a: float | None, lo: float = 0.0, hi: float = 0.0) -> dict:
    if a is None:
        return {"error": "needs 3 sizes"}
    return {"alpha_hat": a, "interval": [lo, hi], "local_slopes": [[100, 200, a]], "sizes": [100, 200, 400]}


def _entry(d: int, control: float | None, net: tuple[float, float, float] | None, untrained_hi: float = 0.1,
           target: str = "smooth", beta: float = 1.0) -> dict:
    rate = 4.0 / d if target == "smooth" else 2 * beta / d
    archs = {"mlp": {"fit": _fit(control, (control or 0) - 0.1, (control or 0) + 0.1), "untrained": _fit(0.0, -0.1, 0.1),
                     "data_checks": [{"width": 38, "ratio": 0.97, "limited": False}], "data_check_passed": True,
                     "excluded_widths": [], "n_params": [217, 2167]}}
    if net is not None:
        archs["softmax"] = {"fit": _fit(*net), "untrained": _fit(0.0, -0.1, untrained_hi),
                            "data_checks": [{"width": 24, "ratio": 0.85, "limited": True},
                                                {"width": 16, "ratio": 0.95, "limited": False}],
                            "data_check_passed": True, "excluded_widths": [24], "n_params": [545, 15000]}
    return {"target": target, "d": d, "beta": beta, "alpha_pred": 2 * beta / d, "alpha_4d": 4.0 / d, "alpha_2d": 2.0 / d,
            "control_rate": rate, "archs": archs, "harness_valid": None if control is None else control >= 0.8 * rate,
            "oracles": {"constant": _fit(2.0 / d, 0, 1), "linear": _fit(4.0 / d, 0, 2)}}


def _claims(entries: list[dict]) -> dict[str, dict]:
    r = {"results": entries, "input_ids": [{"d": 2, "mle": 2.1, "twonn": 2.0}]}
    return {c["id"]: c for c in model_claims(r)}


@pytest.mark.parametrize("control, net, untrained_hi, verdict, words", [
    (1.8, (1.2, 0.9, 1.4), 0.1, HOLDS, "lower end"),                      # lo 0.9 ≥ 0.8 × 1
    (1.8, (0.5, 0.4, 0.7), 0.1, NOT_REPRODUCED, "upper end"),             # hi 0.7 < 0.8
    (1.8, (0.9, 0.6, 1.1), 0.1, INCONCLUSIVE, "straddles"),
    (1.5, (1.2, 0.9, 1.4), 0.1, INCONCLUSIVE, "does not reach the known rate"),  # control 1.5 < 1.6
    (None, (1.2, 0.9, 1.4), 0.1, INCONCLUSIVE, "no fit"),
    (1.8, (1.2, 0.9, 1.4), 0.85, INCONCLUSIVE, "trivial model"),
    (1.8, None, 0.1, None, None),
])
def test_rate_claim_every_outcome(control, net, untrained_hi, verdict, words) -> None:
    c = _claims([_entry(2, control, net, untrained_hi)])
    rate = c.get("model_scaling.rate_softmax_smooth_d2")
    if verdict is None:
        assert rate is None
        return
    assert rate["verdict"] == verdict and words in rate["reason"], rate["reason"]
    assert rate["kind"] == "paper" and rate["cite"] == "Theorem 2"
    assert "w=24 ×0.85 (left out), w=16 ×0.95 (passes)" in rate["summary"]


def test_rate_claim_missing_network_fit_is_inconclusive() -> None:
    e = _entry(2, 1.8, (1.0, 0.9, 1.1))
    e["archs"]["softmax"]["fit"] = {"error": "needs 3 sizes"}
    assert _claims([e])["model_scaling.rate_softmax_smooth_d2"]["verdict"] == INCONCLUSIVE


@pytest.mark.parametrize("passed, words", [(False, "no width passes the data check"), (False, "--transformer-spp 16000"),
                                           (None, "did not run")])
def test_rate_claim_needs_a_width_that_passes_the_data_check(passed, words) -> None:
    e = _entry(2, 1.8, (1.2, 0.9, 1.4))
    e["archs"]["softmax"]["data_check_passed"] = passed
    rate = _claims([e])["model_scaling.rate_softmax_smooth_d2"]
    assert rate["verdict"] == INCONCLUSIVE and words in rate["reason"]


def test_an_optimisation_limited_control_validates_nothing() -> None:
    e = _entry(2, 1.8, (1.2, 0.9, 1.4))
    e["archs"]["mlp"]["data_check_passed"] = False
    c = _claims([e])
    assert c["model_scaling.harness_smooth_d2"]["verdict"] == INCONCLUSIVE
    assert "no width passes" in c["model_scaling.harness_smooth_d2"]["reason"]
    rate = c["model_scaling.rate_softmax_smooth_d2"]
    assert rate["verdict"] == INCONCLUSIVE and "harness is not validated" in rate["reason"]


def test_harness_check_uses_the_declared_fraction_and_rates() -> None:
    assert FRACTION == 0.8
    c = _claims([_entry(2, 1.61, None), _entry(4, 0.79, None), _entry(2, 0.41, None, target="holder", beta=0.5)])
    assert c["model_scaling.harness_smooth_d2"]["verdict"] == HOLDS  # 1.61 ≥ 0.8 × 2
    assert c["model_scaling.harness_smooth_d4"]["verdict"] == NOT_REPRODUCED  # 0.79 < 0.8 × 1
    assert c["model_scaling.harness_holder_d2"]["verdict"] == HOLDS  # 0.41 ≥ 0.8 × 0.5
    assert c["model_scaling.harness_smooth_d2"]["kind"] == "check"


def test_exponent_falls_with_d_decides_beyond_two_standard_errors() -> None:
    assert SE_MULT == 2
    # SE = interval width / (2 × 1.96): ±0.196 → SE 0.1; a fall of 0.5 with combined SE 0.141 is > 2 SE
    c = _claims([_entry(2, 1.8, (1.0, 0.804, 1.196)), _entry(4, 0.9, (0.5, 0.304, 0.696))])
    falls = c["model_scaling.falls_with_d_softmax_smooth"]
    assert falls["verdict"] == HOLDS and falls["kind"] == "paper"
    assert c["model_scaling.falls_with_d_mlp_smooth"]["kind"] == "check"
    # a fall of 0.25 (1.8 SE): decided at 1 SE, not at 2
    c = _claims([_entry(2, 1.8, (0.75, 0.554, 0.946)), _entry(4, 0.9, (0.5, 0.304, 0.696))])
    assert c["model_scaling.falls_with_d_softmax_smooth"]["verdict"] == INCONCLUSIVE
    c = _claims([_entry(2, 1.8, (0.3, 0.104, 0.496)), _entry(4, 0.9, (0.9, 0.704, 1.096))])
    assert c["model_scaling.falls_with_d_softmax_smooth"]["verdict"] == NOT_REPRODUCED


def test_exponent_falls_with_d_without_a_fit_is_inconclusive() -> None:
    c = _claims([_entry(2, 1.8, (1.0, 0.804, 1.196)), _entry(4, 0.9, (0.5, 0.304, 0.696))])
    assert c["model_scaling.falls_with_d_softmax_smooth"]["measured"]["se"] == pytest.approx([0.1, 0.1])
    e = _entry(4, 0.9, (0.5, 0.304, 0.696))
    e["archs"]["softmax"]["fit"] = {"error": "needs 3 sizes"}
    c = _claims([_entry(2, 1.8, (1.0, 0.804, 1.196)), e])
    falls = c["model_scaling.falls_with_d_softmax_smooth"]
    assert falls["verdict"] == INCONCLUSIVE and falls["measured"]["se"] == [pytest.approx(0.1), None]


def test_two_se_rule_rarely_decides_on_noise() -> None:
    """Pure noise (equal true exponents, known SE): the 2-SE rule decides about 5 % of the time, the 1-SE rule ~1/3."""
    rng = np.random.default_rng(0)
    decided = {1: 0, 2: 0}
    for _ in range(2000):
        vals = list(1.0 + 0.1 * rng.standard_normal(2))
        for k in decided:
            v, _, _ = RULES["monotone"].judge({"values": vals, "se": [0.1, 0.1]}, {"direction": -1, "se_mult": k}, "x")
            decided[k] += v != INCONCLUSIVE
    assert decided[2] / 2000 < 0.07 and 0.25 < decided[1] / 2000 < 0.40


def test_monotone_default_is_two_se() -> None:
    m = {"values": [1.0, 0.85], "se": [0.1, 0.1]}
    assert RULES["monotone"].judge(m, {"direction": -1, "se_mult": 1}, "x")[0] == HOLDS  # 0.15 > 0.141 (1 SE)
    assert RULES["monotone"].judge(m, {"direction": -1}, "x")[0] == INCONCLUSIVE  # 0.15 < 0.283 (2 SE, the default)
    assert RULES["monotone"].judge(m, {"direction": -1, "se_mult": 2}, "x")[0] == INCONCLUSIVE
    claim = make_claim("x", "s", "monotone", m, {"direction": -1, "se_mult": 2}, kind="check")
    assert "2 × their combined standard error" in claim["rule"]


def test_inputs_id_claim() -> None:
    c = _claims([_entry(2, 1.8, None)])["model_scaling.inputs_id"]
    assert c["verdict"] == HOLDS and math.isclose(c["measured"]["value"], 0.05)


def test_tiny_part_runs_and_renders(tmp_path) -> None:
    r = run_reproduction(tmp_path / "rep", PartContext(mode="tiny"), parts=["model_scaling"])
    part = r["parts"]["model_scaling"]
    assert part["status"] == "ok"
    ids = {c["id"] for c in part["result"]["claims"]}
    assert {"model_scaling.harness_smooth_d2", "model_scaling.rate_softmax_smooth_d2", "model_scaling.inputs_id"} <= ids
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert "Theorem 2 decided" in md and "model_scaling/model_scaling.png" in md


def test_claim_texts_and_records_pinned() -> None:
    """The claims' statements, summaries, quantities and measured numbers word for word; an optimisation-limited
    control before a valid one does not stop the later claims."""
    limited = _entry(2, 1.8, None, target="holder", beta=0.5)
    limited["archs"]["mlp"]["data_check_passed"] = False
    c = _claims([limited, _entry(2, 1.8, (1.2, 0.9, 1.4)), _entry(4, 0.9, (0.5, 0.304, 0.696))])
    h = c["model_scaling.harness_holder_d2"]
    assert (h["rule_id"], h["measured"]["value"], h["quantity"]) == ("unjudgeable", 1.8, "the control's α̂_N")
    assert h["statement"] == ("The harness reaches the known rate: the ReLU-MLP control's α̂_N ≥ 0.8 × 2β/d = 0.4 "
                              "(holder target, d = 2)")
    s = c["model_scaling.harness_smooth_d2"]
    assert s["statement"] == ("The harness reaches the known rate: the ReLU-MLP control's α̂_N ≥ 0.8 × 4/d = 1.6 "
                              "(smooth target, d = 2)")
    assert s["summary"] == ("control α̂_N = 1.8 [1.7, 1.9] vs 4/d = 2; data check: w=38 ×0.97 (passes)")
    assert (s["quantity"], s["thresholds"], s["measured"]) == ("the control's α̂_N", {"holds": 1.6}, {"value": 1.8})
    r = c["model_scaling.rate_softmax_smooth_d2"]
    assert r["statement"] == ("Theorem 2: squared error ∝ N^(−2β/d) — α_N ≥ 2β/d = 1 (a lower bound: the target is "
                              "smooth) for the softmax transformer (smooth target, β = 1, d = 2, online noiseless samples)")
    assert r["summary"] == ("α̂_N = 1.2 [0.9, 1.4] vs 2β/d = 1; reaches 4/d = 2: no; control (MLP) 1.8 [1.7, 1.9]; "
                            "untrained 0 [-0.1, 0.1]; oracles: piecewise-constant 1, piecewise-linear 2; data check: "
                            "w=24 ×0.85 (left out), w=16 ×0.95 (passes)")
    assert r["measured"] == {"fitted": 1.2, "lo": 0.9, "hi": 1.4, "predicted": 1.0, "control": 1.8, "control_rate": 2.0,
                             "control_data_ok": 1, "untrained_hi": 0.1, "reaches_4d": 0, "data_ok": 1,
                             "command": DECIDE_COMMAND}
    assert (r["thresholds"], r["quantity"]) == ({"fraction": 0.8}, "2β/d")
    f = c["model_scaling.falls_with_d_softmax_smooth"]
    assert f["statement"] == "The model-size exponent falls as the intrinsic dimension grows (the softmax transformer's α̂_N, smooth target)"
    assert f["summary"] == "d=2: 1.2 [0.9, 1.4], d=4: 0.5 [0.304, 0.696] (theory: 2β/d 1, 0.5)"
    assert (f["measured"]["values"], f["measured"]["d"], f["thresholds"]) == ([1.2, 0.5], [2, 4],
                                                                              {"direction": -1, "se_mult": 2})
    i = c["model_scaling.inputs_id"]
    assert i["summary"] == "d=2: MLE 2.10, TwoNN 2.00" and i["measured"]["n"] == 1
    assert (i["quantity"], i["thresholds"]) == ("the worst relative error of the MLE", {"holds": 0.10, "partly": 0.20})
    from ttlab.reproduce.parts.model_scaling import checks_text

    assert checks_text({}) == "not run"
    assert checks_text({"data_checks": [{"width": 8, "ratio": 0.5, "limited": True}], "data_check_passed": False}) == (
        "w=8 ×0.5 (left out); no width passes")


def test_rate_claim_on_the_holder_target_and_reaching_4_over_d_at_its_threshold() -> None:
    c = _claims([_entry(2, 0.45, (2.0, 1.6, 2.4), target="holder", beta=0.5)])
    r = c["model_scaling.rate_softmax_holder_d2"]
    assert "α_N ≥ 2β/d = 0.5 (the sharp rate)" in r["statement"]
    assert "reaches 4/d = 2: yes" in r["summary"] and r["measured"]["reaches_4d"] == 1  # lo = 0.8 × 4/d exactly
    assert r["verdict"] == HOLDS
