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
ORC = {"oracle_tol": 0.05, "holds_rel": 0.10, "partly_rel": 0.35, "bound": 0, "min_points": 3}
ORC_BOUND = {**ORC, "bound": 1}
ORC_N = {**ORC, "max_data_change": 0.15}

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
    # oracle_validated_exponent, noisy regime: the design passes (oracle within 0.05), then relative tolerances
    ("oracle_validated_exponent", {"fitted": 0.52, "lo": 0.47, "hi": 0.57, "predicted": 0.5, "oracle": 0.53,
                                   "n_points": 5, "n_capped": 0}, ORC, HOLDS),
    ("oracle_validated_exponent", {"fitted": 0.62, "lo": 0.57, "hi": 0.67, "predicted": 0.5, "oracle": 0.46,
                                   "n_points": 5, "n_capped": 0}, ORC, PARTLY),
    ("oracle_validated_exponent", {"fitted": 0.80, "lo": 0.75, "hi": 0.85, "predicted": 0.5, "oracle": 0.5,
                                   "n_points": 5, "n_capped": 0}, ORC, NOT_REPRODUCED),
    # the case: d = 2, α̂ 0.636 vs 0.5 — but the k-NN oracle is as steep (0.64): the design is not asymptotic
    ("oracle_validated_exponent", {"fitted": 0.636, "lo": 0.6, "hi": 0.67, "predicted": 0.5, "oracle": 0.64,
                                   "n_points": 5, "n_capped": 0}, ORC, INCONCLUSIVE),
    ("oracle_validated_exponent", {"fitted": 0.5, "lo": 0.45, "hi": 0.55, "predicted": 0.5, "oracle": 0.40,
                                   "n_points": 5, "n_capped": 0}, ORC, INCONCLUSIVE),  # oracle too shallow
    ("oracle_validated_exponent", {"fitted": 0.5, "lo": 0.1, "hi": 0.9, "predicted": 0.5, "oracle": 0.5,
                                   "n_points": 5, "n_capped": 0}, ORC, INCONCLUSIVE),  # interval too wide
    ("oracle_validated_exponent", {"fitted": 0.5, "lo": 0.45, "hi": 0.55, "predicted": 0.5, "oracle": 0.5,
                                   "n_points": 5, "n_capped": 1}, ORC, INCONCLUSIVE),  # step-capped runs
    ("oracle_validated_exponent", {"fitted": 0.5, "lo": 0.45, "hi": 0.55, "predicted": 0.5, "oracle": None,
                                   "n_points": 5, "n_capped": 0}, ORC, INCONCLUSIVE),  # oracle missing
    ("oracle_validated_exponent", {"fitted": None, "lo": None, "hi": None, "predicted": 0.5, "oracle": 0.5,
                                   "n_points": 0, "n_capped": 0}, ORC, INCONCLUSIVE),  # network fit missing
    # noiseless regime: the bound α̂ ≥ 2β/(2β+d); steeper is fine (2β/d is the noiseless minimax rate)
    ("oracle_validated_exponent", {"fitted": 0.95, "lo": 0.9, "hi": 1.0, "predicted": 0.5, "oracle": 1.0,
                                   "n_points": 5, "n_capped": 0}, ORC_BOUND, HOLDS),
    ("oracle_validated_exponent", {"fitted": 0.4, "lo": 0.35, "hi": 0.45, "predicted": 0.5, "oracle": 0.9,
                                   "n_points": 5, "n_capped": 0}, ORC_BOUND, PARTLY),
    ("oracle_validated_exponent", {"fitted": 0.2, "lo": 0.15, "hi": 0.25, "predicted": 0.5, "oracle": 0.9,
                                   "n_points": 5, "n_capped": 0}, ORC_BOUND, NOT_REPRODUCED),
    ("oracle_validated_exponent", {"fitted": 0.6, "lo": 0.55, "hi": 0.65, "predicted": 0.5, "oracle": 0.4,
                                   "n_points": 5, "n_capped": 0}, ORC_BOUND, INCONCLUSIVE),  # oracle below the bound
    # model size (α_N = 2β/d): the approximation oracle validates the design, the widest model must not be data-limited
    ("oracle_validated_exponent", {"fitted": 0.98, "lo": 0.9, "hi": 1.06, "predicted": 1.0, "oracle": 1.02,
                                   "n_points": 5, "n_capped": 0, "data_ratio": 0.97}, ORC_N, HOLDS),
    ("oracle_validated_exponent", {"fitted": 0.98, "lo": 0.9, "hi": 1.06, "predicted": 1.0, "oracle": 1.02,
                                   "n_points": 5, "n_capped": 0, "data_ratio": 0.6}, ORC_N, INCONCLUSIVE),
    ("oracle_validated_exponent", {"fitted": 0.98, "lo": 0.9, "hi": 1.06, "predicted": 1.0, "oracle": 1.02,
                                   "n_points": 5, "n_capped": 0, "data_ratio": None}, ORC_N, INCONCLUSIVE),
]


# exceeds_control: a paper claim against a trivial control measured in the same run (cases away from thresholds)
_RISE, _SE3 = [4.0, 4.6, 5.2], [0.1] * 3
_Z = {"z": 1.96, "min_points": 3}
CASES += [
    ("exceeds_control", {"values": _RISE, "se": _SE3, "control_values": [10.0, 10.1, 10.2], "control_se": _SE3},
     {"direction": 1}, HOLDS),
    ("exceeds_control", {"values": [4.0, 5.6, 5.2], "se": _SE3, "control_values": [10.0, 10.0, 10.0], "control_se": _SE3},
     {"direction": 1}, PARTLY),  # rises beyond the control, but a step goes clearly down
    ("exceeds_control", {"values": _RISE[::-1], "se": _SE3, "control_values": [10.0, 10.1, 10.2], "control_se": _SE3},
     {"direction": 1}, NOT_REPRODUCED),
    # the case: trained 3.98 → 5.23, untrained copies of the same widths 11.8 → 16.8
    ("exceeds_control", {"values": [3.98, 4.4, 4.9, 5.23], "se": [0.1] * 4, "control_values": [11.8, 14.0, 15.4, 16.8],
                         "control_se": [0.1] * 4}, {"direction": 1}, INCONCLUSIVE),
    ("exceeds_control", {"values": _RISE, "se": _SE3, "control_values": [], "control_se": []}, {"direction": 1},
     INCONCLUSIVE),  # no control measured
    ("exceeds_control", {"value": 0.40, "lo": 0.36, "hi": 0.44, "control": 0.20, "control_se": 0.01, "n_points": 4,
                         "n_capped": 0}, _Z, HOLDS),
    ("exceeds_control", {"value": 0.10, "lo": 0.08, "hi": 0.12, "control": 0.20, "control_se": 0.01, "n_points": 4,
                         "n_capped": 0}, _Z, NOT_REPRODUCED),
    ("exceeds_control", {"value": 0.21, "lo": 0.15, "hi": 0.27, "control": 0.20, "control_se": 0.01, "n_points": 4,
                         "n_capped": 0}, _Z, INCONCLUSIVE),  # the interval straddles the control
    ("exceeds_control", {"value": 0.40, "lo": 0.36, "hi": 0.44, "control": 0.20, "n_points": 4, "n_capped": 4}, _Z,
     INCONCLUSIVE),  # every run step-capped
    ("power_law_decay", {"alpha": 0.1, "lo": 0.07, "hi": 0.13, "r2": 0.98, "n_points": 4, "n_capped": 4},
     {"min_r2": 0.9, "min_points": 3}, INCONCLUSIVE),  # the suite's case: all 4 models step-capped
]


def test_exceeds_control_margin_is_the_distance_to_the_nearer_threshold():
    """The rule's third item: |difference − threshold| / threshold, the threshold being z × combined SE."""
    from ttlab.reproduce.verdicts import RULES

    m = {"value": 0.40, "value_se": 0.03, "control": 0.20, "control_se": 0.04}  # combined SE 0.05, z 2 → 0.1
    verdict, _, margin = RULES["exceeds_control"].judge(m, {"z": 2.0}, "x")
    assert verdict == HOLDS and margin == pytest.approx((0.20 - 0.10) / 0.10)
    verdict, _, margin = RULES["exceeds_control"].judge({**m, "value": 0.25}, {"z": 2.0}, "x")
    assert verdict == INCONCLUSIVE and margin == pytest.approx(0.5)

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
                   quantity="cos", summary="cos = 0.995", kind="paper", cite="Proposition 1")
    assert c["kind"] == "paper" and c["cite"] == "Proposition 1"
    assert {"id", "statement", "kind", "verdict", "rule", "rule_id", "measured", "thresholds", "reason", "summary"} <= set(c)
    assert c["verdict"] == PARTLY and "0.999" in c["rule"] and "0.995" in c["reason"]
    # a stored record judged under a changed threshold gives the new verdict
    stale = {**c, "thresholds": {"holds": 0.99}}
    assert rejudge(stale)["verdict"] == HOLDS
    assert missing_claim("x.z", "Another", "not run", kind="check")["verdict"] == INCONCLUSIVE
    with pytest.raises(ValueError, match="kind must be one of"):
        make_claim("x.w", "No kind", "at_least", {"value": 1.0}, {"holds": 0.5}, kind="claim")


def test_counts_by_kind_keep_checks_and_ablations_out_of_the_paper_headline():
    from ttlab.reproduce.verdicts import count_by_kind, headline

    claims = [{"kind": "paper", "verdict": HOLDS}, {"kind": "paper", "verdict": INCONCLUSIVE},
              {"kind": "check", "verdict": HOLDS}, {"kind": "ablation", "verdict": PARTLY}, {"verdict": HOLDS}]
    by = count_by_kind(claims)
    assert by["paper"] == {HOLDS: 1, PARTLY: 0, "not reproduced": 0, INCONCLUSIVE: 1}
    assert by["check"][HOLDS] == 2 and by["ablation"][PARTLY] == 1  # no kind (old schema) counts as a check
    assert headline(by).startswith("Paper claims (2): 1 hold, 0 partly, 0 not reproduced, 1 inconclusive.")


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


def test_oracle_rule_says_which_way_the_oracle_misses():
    steep = judge("oracle_validated_exponent", {"fitted": 0.636, "lo": 0.6, "hi": 0.67, "predicted": 0.5,
                                                "oracle": 0.64}, ORC)
    shallow = judge("oracle_validated_exponent", {"fitted": 0.5, "lo": 0.45, "hi": 0.55, "predicted": 0.5,
                                                  "oracle": 0.4}, ORC)
    assert "steeper" in steep[1] and "0.14" in steep[1] and "not in the asymptotic regime" in steep[1]
    assert "shallower" in shallow[1]
    # the same numbers judged as a bound (noiseless regime): a steeper oracle is what the theory allows
    assert judge("oracle_validated_exponent", {"fitted": 0.636, "lo": 0.6, "hi": 0.67, "predicted": 0.5,
                                               "oracle": 0.64}, ORC_BOUND)[0] == HOLDS
    assert "bound form" in judge("oracle_validated_exponent", {}, ORC_BOUND)[2]


def test_oracle_rule_reports_a_data_limited_model_sweep():
    m = {"fitted": 0.98, "lo": 0.9, "hi": 1.06, "predicted": 1.0, "oracle": 1.02, "n_points": 5, "data_ratio": 0.6}
    verdict, reason, text = judge("oracle_validated_exponent", m, ORC_N)
    assert verdict == INCONCLUSIVE and "data-limited" in reason and "0.6" in reason and "data-limited" in text
    # the same numbers without the data-limit threshold (a data-scaling claim) are judged on the exponent
    assert judge("oracle_validated_exponent", m, ORC)[0] == HOLDS


@pytest.mark.parametrize(
    "extra, phrase",
    [
        ({"n_points": 1}, "only 1 fitted points (need ≥ 2)"),
        ({"n_capped": 3}, "3 fitted run(s) hit the step cap"),
        ({"lo": 0.1}, "no interval for the fitted exponent"),
        ({"lo": -0.5, "hi": 1.0}, "is wider than the partly band ±30 % of 0.32"),
    ],
)
def test_both_exponent_rules_refuse_the_same_unusable_fits(extra, phrase):
    """exponent_match and oracle_validated_exponent share one check of the fit (points, step cap, interval)."""
    th = {"holds_rel": 0.1, "partly_rel": 0.3, "oracle_tol": 0.05}
    base = {"fitted": 0.31, "predicted": 0.32}
    plain = judge("exponent_match", {**base, **extra}, th)
    oracle = judge("oracle_validated_exponent", {**base, "oracle": 0.32, **extra}, th)
    assert plain[0] == oracle[0] == INCONCLUSIVE
    assert phrase in plain[1] and phrase in oracle[1]
    # without the problem both rules judge the fit: it holds (Δ = 3 %)
    assert judge("exponent_match", base, th)[0] == HOLDS
    assert judge("oracle_validated_exponent", {**base, "oracle": 0.32}, th)[0] == HOLDS
