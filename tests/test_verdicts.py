"""Every verdict rule of ``ttlab reproduce`` driven to each verdict it can give, from synthetic numbers."""

from __future__ import annotations

import math

import pytest

from ttlab.reproduce.verdicts import (
    HOLDS,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    PARTLY,
    RULES,
    VERDICTS,
    judge,
    make_claim,
    missing_claim,
    rejudge,
)

NAN = float("nan")
EXP = {"holds_rel": 0.10, "partly_rel": 0.35, "min_points": 3}

# (rule, measured, thresholds, expected verdict)
CASES = [
    ("at_least", {"value": 1.0}, {"holds": 0.999, "partly": 0.99}, HOLDS),
    ("at_least", {"value": 0.995}, {"holds": 0.999, "partly": 0.99}, PARTLY),
    ("at_least", {"value": 0.962}, {"holds": 0.999, "partly": 0.99}, NOT_REPRODUCED),
    ("at_least", {"value": NAN}, {"holds": 0.999, "partly": 0.99}, INCONCLUSIVE),
    ("at_least", {"value": 1.0, "n": 3}, {"holds": 0.999, "min_n": 10}, INCONCLUSIVE),
    ("at_most", {"value": 1e-6, "n": 2}, {"holds": 1e-3, "partly": 0.05}, HOLDS),
    ("at_most", {"value": 0.01, "n": 2}, {"holds": 1e-3, "partly": 0.05}, PARTLY),
    ("at_most", {"value": 0.2, "n": 2}, {"holds": 1e-3, "partly": 0.05}, NOT_REPRODUCED),
    ("at_most", {"value": None, "n": 0}, {"holds": 1e-3, "partly": 0.05}, INCONCLUSIVE),  # Prop. 2, no column
    ("count", {"passed": 5, "total": 5}, {"holds": 1.0, "partly": 0.5}, HOLDS),
    ("count", {"passed": 3, "total": 5}, {"holds": 1.0, "partly": 0.5}, PARTLY),
    ("count", {"passed": 1, "total": 5}, {"holds": 1.0, "partly": 0.5}, NOT_REPRODUCED),
    ("count", {"passed": 0, "total": 0}, {"holds": 1.0, "partly": 0.5}, INCONCLUSIVE),
    ("errors_at_most", {"mean": 0.05, "worst": 0.1, "n": 9}, {"holds_mean": 0.1, "holds_worst": 0.15, "partly_mean": 0.2}, HOLDS),
    ("errors_at_most", {"mean": 0.05, "worst": 0.3, "n": 9}, {"holds_mean": 0.1, "holds_worst": 0.15, "partly_mean": 0.2}, PARTLY),
    ("errors_at_most", {"mean": 0.3, "worst": 0.5, "n": 9}, {"holds_mean": 0.1, "holds_worst": 0.15, "partly_mean": 0.2},
     NOT_REPRODUCED),
    ("errors_at_most", {"mean": None, "worst": None, "n": 0}, {"holds_mean": 0.1, "holds_worst": 0.15, "partly_mean": 0.2},
     INCONCLUSIVE),
    ("set_match", {"expected": 5, "shared": 5, "extra": 0}, {}, HOLDS),
    ("set_match", {"expected": 5, "shared": 5, "extra": 1}, {}, PARTLY),
    ("set_match", {"expected": 5, "shared": 1, "extra": 0}, {}, NOT_REPRODUCED),
    ("set_match", {"expected": 0, "shared": 0, "extra": 0}, {}, INCONCLUSIVE),
    ("exp_decay", {"rate": 0.01, "r2": 0.99, "reference_rate": 0.0025}, {"min_r2": 0.9}, HOLDS),
    ("exp_decay", {"rate": 0.001, "r2": 0.99, "reference_rate": 0.0025}, {"min_r2": 0.9}, PARTLY),
    ("exp_decay", {"rate": 0.01, "r2": 0.5, "reference_rate": 0.0025}, {"min_r2": 0.9}, PARTLY),
    ("exp_decay", {"rate": -0.01, "r2": 0.9, "reference_rate": 0.0}, {"min_r2": 0.9}, NOT_REPRODUCED),
    ("exp_decay", {"rate": NAN, "r2": NAN, "reference_rate": 0.0}, {"min_r2": 0.9}, INCONCLUSIVE),
    ("direction_rate", {"final_cosine": 1.0}, {"min_cosine": 0.99, "slack": 0.1}, HOLDS),
    ("direction_rate", {"final_cosine": 0.995, "slope": -1.0, "theory_slope": -0.75}, {"min_cosine": 0.99, "slack": 0.1}, HOLDS),
    ("direction_rate", {"final_cosine": 0.92, "slope": -0.32, "theory_slope": -0.58}, {"min_cosine": 0.99, "slack": 0.1},
     PARTLY),
    ("direction_rate", {"final_cosine": 0.5, "slope": 0.2, "theory_slope": -0.75}, {"min_cosine": 0.99, "slack": 0.1},
     NOT_REPRODUCED),
    ("direction_rate", {"final_cosine": 0.9, "slope": None, "theory_slope": None}, {"min_cosine": 0.99, "slack": 0.1},
     INCONCLUSIVE),
    ("power_law_decay", {"alpha": 0.1, "lo": 0.07, "hi": 0.13, "r2": 0.98, "n_points": 5}, {"min_r2": 0.9, "min_points": 3}, HOLDS),
    ("power_law_decay", {"alpha": 0.1, "lo": 0.07, "hi": 0.13, "r2": 0.6, "n_points": 5}, {"min_r2": 0.9, "min_points": 3}, PARTLY),
    ("power_law_decay", {"alpha": -0.1, "lo": -0.13, "hi": -0.07, "r2": 0.9, "n_points": 5}, {"min_r2": 0.9, "min_points": 3},
     NOT_REPRODUCED),
    # the quick preset's 3 sizes: t-interval [−0.28, 0.42] contains 0
    ("power_law_decay", {"alpha": 0.069, "lo": -0.279, "hi": 0.418, "r2": 0.865, "n_points": 3}, {"min_r2": 0.9, "min_points": 3},
     INCONCLUSIVE),
    ("power_law_decay", {"alpha": 0.1, "lo": 0.07, "hi": 0.13, "r2": 0.98, "n_points": 2}, {"min_r2": 0.9, "min_points": 3},
     INCONCLUSIVE),
    ("exponent_match", {"fitted": 0.19, "lo": 0.17, "hi": 0.21, "predicted": 0.184, "n_points": 5, "n_capped": 0}, EXP, HOLDS),
    ("exponent_match", {"fitted": 0.14, "lo": 0.12, "hi": 0.16, "predicted": 0.184, "n_points": 5, "n_capped": 0}, EXP, PARTLY),
    ("exponent_match", {"fitted": 0.105, "lo": 0.075, "hi": 0.135, "predicted": 0.184, "n_points": 5, "n_capped": 0}, EXP,
     NOT_REPRODUCED),
    # the case: Δ = −0.216 with a t-interval [−0.28, 0.42] from 3 points is not "partly"
    ("exponent_match", {"fitted": 0.069, "lo": -0.279, "hi": 0.418, "predicted": 0.286, "n_points": 3, "n_capped": 0}, EXP,
     INCONCLUSIVE),
    ("exponent_match", {"fitted": 0.19, "lo": 0.17, "hi": 0.21, "predicted": 0.184, "n_points": 5, "n_capped": 2}, EXP,
     INCONCLUSIVE),
    ("exponent_match", {"fitted": 0.19, "predicted": 0.184, "n_points": 2}, EXP, INCONCLUSIVE),
    ("exponent_match", {"fitted": 0.0944, "predicted": 0.0706}, EXP, PARTLY),  # Table 1 without intervals
    ("exponent_match", {"fitted": NAN, "predicted": 0.2}, EXP, INCONCLUSIVE),
    ("monotone", {"values": [4.0, 4.5, 5.0], "se": [0.1, 0.1, 0.1]}, {"direction": 1}, HOLDS),
    ("monotone", {"values": [4.0, 5.5, 5.0], "se": [0.1, 0.1, 0.1]}, {"direction": 1}, PARTLY),
    ("monotone", {"values": [5.0, 4.5, 4.0], "se": [0.1, 0.1, 0.1]}, {"direction": 1}, NOT_REPRODUCED),
    ("monotone", {"values": [4.0, 4.05, 4.1], "se": [0.2, 0.2, 0.2]}, {"direction": 1}, INCONCLUSIVE),
    ("monotone", {"values": [4.0, 4.5, 5.0], "se": [None, None, None]}, {"direction": 1}, INCONCLUSIVE),
    ("monotone", {"values": [6.8, 5.8, 5.1, 4.8], "se": [0.1] * 4}, {"direction": -1}, HOLDS),
    ("monotone", {"values": [0.07, 0.2]}, {"direction": 1, "need_se": False}, HOLDS),
    ("inner_peak", {"values": [3.5, 6.0, 4.0], "se": [0.2, 0.2, 0.2]}, {}, HOLDS),
    ("inner_peak", {"values": [3.5, 6.0, 5.9], "se": [0.2, 0.2, 0.2]}, {}, PARTLY),
    # the case: rising profile 3.55, 4.24, 5.00 (no inner peak) is not "partly"
    ("inner_peak", {"values": [3.55, 4.24, 5.00], "se": [0.1, 0.1, 0.1]}, {}, NOT_REPRODUCED),
    ("inner_peak", {"values": [5.0, 5.05, 5.0], "se": [0.2, 0.2, 0.2]}, {}, INCONCLUSIVE),
    ("inner_peak", {"values": [3.5, 6.0], "se": [0.2, 0.2]}, {}, INCONCLUSIVE),
    ("attention_bound", {"attention": 0.73, "bound": 0.20, "baseline": 0.167, "gap_rate": 0.002, "c1": 2e-5}, {}, HOLDS),
    ("attention_bound", {"attention": 0.73, "bound": 0.20, "baseline": 0.167, "gap_rate": 1e-6, "c1": 2e-5}, {}, PARTLY),
    ("attention_bound", {"attention": 0.15, "bound": 0.20, "baseline": 0.167, "gap_rate": 0.002, "c1": 2e-5}, {},
     NOT_REPRODUCED),
    # the case: bound 0.145 below uniform attention's 1/L_max: meeting it says nothing
    ("attention_bound", {"attention": 0.73, "bound": 0.145, "baseline": 0.167, "gap_rate": 0.002, "c1": 2e-5}, {},
     INCONCLUSIVE),
    ("intervals_agree", {"values": [0.5, 0.52], "intervals": [[0.45, 0.55], [0.47, 0.57]]}, {"max_spread": 0.05}, HOLDS),
    ("intervals_agree", {"values": [0.5, 0.6], "intervals": [[0.4, 0.6], [0.5, 0.7]]}, {"max_spread": 0.05}, PARTLY),
    ("intervals_agree", {"values": [0.5, 0.7], "intervals": [[0.48, 0.52], [0.68, 0.72]]}, {"max_spread": 0.05},
     NOT_REPRODUCED),
    ("intervals_agree", {"values": [0.5], "intervals": [[0.48, 0.52]]}, {"max_spread": 0.05}, INCONCLUSIVE),
    ("unjudgeable", {"why": "the sweep was not run"}, {}, INCONCLUSIVE),
]


@pytest.mark.parametrize("rule, measured, thresholds, expected", CASES)
def test_rule_gives_expected_verdict(rule, measured, thresholds, expected):
    verdict, reason, text = judge(rule, measured, thresholds, "x")
    assert verdict == expected, reason
    assert reason and text


@pytest.mark.parametrize("rule", sorted(RULES))
def test_every_rule_is_driven_to_every_outcome_it_declares(rule):
    reached = {expected for r, _, _, expected in CASES if r == rule}
    assert set(RULES[rule].outcomes) <= set(VERDICTS)
    assert reached == set(RULES[rule].outcomes), f"{rule}: untested outcomes {set(RULES[rule].outcomes) - reached}"


def test_claim_record_is_structured_and_rejudged_from_its_numbers():
    c = make_claim("x.y", "A claim", "at_least", {"value": 0.995}, {"holds": 0.999, "partly": 0.99},
                   quantity="cos", summary="cos = 0.995")
    assert {"id", "statement", "verdict", "rule", "rule_id", "measured", "thresholds", "reason", "summary"} <= set(c)
    assert c["verdict"] == PARTLY and "0.999" in c["rule"] and "0.995" in c["reason"]
    # a stored record judged under a changed threshold gives the new verdict
    stale = {**c, "thresholds": {"holds": 0.99}}
    assert rejudge(stale)["verdict"] == HOLDS
    assert missing_claim("x.z", "Another", "not run")["verdict"] == INCONCLUSIVE


def test_exponent_reason_places_the_fit_in_the_band_and_the_papers_tolerance():
    m = {"fitted": 0.15, "lo": 0.13, "hi": 0.17, "predicted": 0.184, "band_lo": 0.14, "band_hi": 0.25}
    verdict, reason, _ = judge("exponent_match", m, {**EXP, "paper_abs": 0.02})
    assert verdict == PARTLY
    assert "inside the ID estimators' prediction band" in reason and "outside the paper's ±0.02" in reason
    _, reason, _ = judge("exponent_match", {**m, "fitted": 0.18, "band_lo": 0.19}, {**EXP, "paper_abs": 0.02})
    assert "outside the ID estimators' prediction band" in reason and "within the paper's ±0.02" in reason


def test_unknown_rule_is_an_error():
    with pytest.raises(KeyError, match="unknown verdict rule"):
        judge("no_such_rule", {}, {})


def test_non_finite_inputs_never_hold():
    for rule, measured, thresholds, _ in CASES:
        broken = {k: (math.inf if isinstance(v, (int, float)) and not isinstance(v, bool) else v) for k, v in measured.items()}
        if broken != measured:
            assert judge(rule, broken, thresholds)[0] != HOLDS, (rule, broken)
