"""Every verdict rule of ``ttlab reproduce`` driven to each verdict it can give, from synthetic numbers."""

from __future__ import annotations

import math

import pytest

from ttlab.reproduce.verdict_base import HOLDS, INCONCLUSIVE, NOT_REPRODUCED, PARTLY, RULES, VERDICTS
from ttlab.reproduce.verdicts import judge, make_claim, missing_claim, rejudge

NAN = float("nan")
EXP = {"holds_rel": 0.10, "partly_rel": 0.35, "min_points": 3}
ORC = {"oracle_tol": 0.05, "holds_rel": 0.10, "partly_rel": 0.35, "bound": 0, "min_points": 3}
ORC_BOUND = {**ORC, "bound": 1}
ORC_N = {**ORC, "max_data_change": 0.15}
COS = {"holds": 0.999, "partly": 0.99, "complement": 1}  # cosines: margins on 1 − cos
CTRL = {"holds": 0.95, "partly": 0.8, "control_margin": 0.1, "complement": 1}
ATT = {"min_clearance": 0.1}
LIN = {"min_decades": 1.0, "min_r2": 0.99, "min_points": 10}

# (rule, measured, thresholds, expected verdict)
CASES = [
    ("at_least", {"value": 1.0}, COS, HOLDS),
    ("at_least", {"value": 0.995}, COS, PARTLY),
    ("at_least", {"value": 0.962}, COS, NOT_REPRODUCED),
    ("at_least", {"value": NAN}, COS, INCONCLUSIVE),
    # a control measured in the same run: the trained value must beat it by control_margin
    ("at_least", {"value": 0.97, "controls": {"uniform": 0.4, "random": 0.5}}, CTRL, HOLDS),
    ("at_least", {"value": 0.85, "controls": {"uniform": 0.4, "random": 0.5}}, CTRL, PARTLY),
    ("at_least", {"value": 0.97, "controls": {"uniform": 0.4, "random": 0.96}}, CTRL, INCONCLUSIVE),
    ("at_least", {"value": 0.6, "controls": {"uniform": 0.4, "random": 0.5}}, CTRL, NOT_REPRODUCED),
    ("at_least", {"value": 1.0, "n": 3}, {"holds": 0.999, "min_n": 10}, INCONCLUSIVE),
    ("at_most", {"value": 1e-6, "n": 2}, {"holds": 1e-3, "partly": 0.05}, HOLDS),
    ("at_most", {"value": 0.01, "n": 2}, {"holds": 1e-3, "partly": 0.05}, PARTLY),
    ("at_most", {"value": 0.2, "n": 2}, {"holds": 1e-3, "partly": 0.05}, NOT_REPRODUCED),
    ("at_most", {"value": None, "n": 0}, {"holds": 1e-3, "partly": 0.05}, INCONCLUSIVE),  # Prop. 2, no column
    ("count", {"passed": 5, "total": 5}, {"holds": 1.0, "partly": 0.5}, HOLDS),
    ("count", {"passed": 3, "total": 5}, {"holds": 1.0, "partly": 0.5}, PARTLY),
    ("count", {"passed": 1, "total": 5}, {"holds": 1.0, "partly": 0.5}, NOT_REPRODUCED),
    ("count", {"passed": 0, "total": 0}, {"holds": 1.0, "partly": 0.5}, INCONCLUSIVE),
    # with a chance level: 19/20 against a coin rejects chance (p = 2e-5); 4/6 does not (p = 0.34)
    ("count", {"passed": 19, "total": 20}, {"holds": 0.75, "partly": 0.55, "chance": 0.5}, HOLDS),
    ("count", {"passed": 27, "total": 40}, {"holds": 0.75, "partly": 0.55, "chance": 0.5}, PARTLY),  # p = 0.019
    ("count", {"passed": 4, "total": 6}, {"holds": 0.75, "partly": 0.55, "chance": 0.5}, INCONCLUSIVE),
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
    ("exp_decay", {"rate": -0.01, "r2": 0.5, "reference_rate": 0.0}, {"min_r2": 0.9}, NOT_REPRODUCED),
    # linear convergence against a power law on the last decade
    # the long run: 0.9997 vs 0.935 on 1,000…10,000 — the exponential wins by 2.3 decades
    ("exp_vs_power", {"rate": 1e-3, "r2_exp": 0.9997, "r2_power": 0.935, "n_points": 9001}, LIN, HOLDS),
    ("exp_vs_power", {"rate": 1e-3, "r2_exp": 0.95, "r2_power": 0.2, "n_points": 9001}, LIN, PARTLY),
    ("exp_vs_power", {"rate": 1e-3, "r2_exp": 0.8, "r2_power": 0.999, "n_points": 9001}, LIN, NOT_REPRODUCED),
    ("exp_vs_power", {"rate": -1e-3, "r2_exp": 0.9997, "r2_power": 0.935, "n_points": 9001}, LIN, NOT_REPRODUCED),
    # the paper window: 0.99787 vs 0.99799 on 450…900 — neither wins
    ("exp_vs_power", {"rate": 1e-3, "r2_exp": 0.99787, "r2_power": 0.99799, "n_points": 451}, LIN, INCONCLUSIVE),
    ("exp_vs_power", {"rate": 1e-3, "r2_exp": 0.9997, "r2_power": 0.935, "n_points": 4}, LIN, INCONCLUSIVE),
    ("exp_vs_power", {"rate": NAN, "r2_exp": NAN, "r2_power": NAN, "n_points": 0}, LIN, INCONCLUSIVE),
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
    ("power_law_decay", {"alpha": -0.1, "lo": -0.13, "hi": -0.07, "r2": 0.98, "n_points": 5}, {"min_r2": 0.9, "min_points": 3},
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
    ("exponent_match", {"fitted": 0.090, "predicted": 0.0706}, EXP, PARTLY),  # Table 1 without intervals
    # with a trivial control (the prediction from an untrained copy's ID): agreement counts only if the control misses
    ("exponent_match", {"fitted": 0.19, "lo": 0.17, "hi": 0.21, "predicted": 0.184, "n_points": 5, "n_capped": 0,
                        "control_predicted": 0.06}, {**EXP, "control": True}, HOLDS),
    ("exponent_match", {"fitted": 0.19, "lo": 0.17, "hi": 0.21, "predicted": 0.184, "n_points": 5, "n_capped": 0,
                        "control_predicted": 0.2}, {**EXP, "control": True}, INCONCLUSIVE),
    ("exponent_match", {"fitted": 0.19, "lo": 0.17, "hi": 0.21, "predicted": 0.184, "n_points": 5, "n_capped": 0},
     {**EXP, "control": True}, INCONCLUSIVE),
    ("exponent_match", {"fitted": 0.19, "lo": 0.17, "hi": 0.21, "predicted": 0.25, "n_points": 5, "n_capped": 0,
                        "control_predicted": 0.02}, {**EXP, "control": True}, PARTLY),
    ("exponent_match", {"fitted": 0.19, "lo": 0.17, "hi": 0.21, "predicted": 0.184, "n_points": 5, "n_capped": 0,
                        "control_predicted": 0.14}, {**EXP, "control": True}, INCONCLUSIVE),  # the interval overlaps
    ("exponent_match", {"fitted": 0.105, "lo": 0.075, "hi": 0.135, "predicted": 0.184, "n_points": 5, "n_capped": 0,
                        "control_predicted": 0.1}, {**EXP, "control": True}, NOT_REPRODUCED),
    ("exponent_match", {"fitted": NAN, "predicted": 0.2}, EXP, INCONCLUSIVE),
    ("monotone", {"values": [4.0, 4.5, 5.0], "se": [0.1, 0.1, 0.1]}, {"se_mult": 1, "direction": 1}, HOLDS),
    ("monotone", {"values": [4.0, 5.5, 5.0], "se": [0.1, 0.1, 0.1]}, {"se_mult": 1, "direction": 1}, PARTLY),
    ("monotone", {"values": [5.0, 4.5, 4.0], "se": [0.1, 0.1, 0.1]}, {"se_mult": 1, "direction": 1}, NOT_REPRODUCED),
    ("monotone", {"values": [4.0, 4.05, 4.1], "se": [0.2, 0.2, 0.2]}, {"se_mult": 1, "direction": 1}, INCONCLUSIVE),
    ("monotone", {"values": [4.0, 4.5, 5.0], "se": [None, None, None]}, {"se_mult": 1, "direction": 1}, INCONCLUSIVE),
    ("monotone", {"values": [6.8, 5.8, 5.1, 4.8], "se": [0.1] * 4}, {"se_mult": 1, "direction": -1}, HOLDS),
    ("monotone", {"values": [0.07, 0.2]}, {"se_mult": 1, "direction": 1, "need_se": False}, HOLDS),
    ("inner_peak", {"values": [3.5, 6.0, 4.0], "se": [0.2, 0.2, 0.2]}, {"se_mult": 1}, HOLDS),
    ("inner_peak", {"values": [3.5, 6.0, 5.9], "se": [0.2, 0.2, 0.2]}, {"se_mult": 1}, PARTLY),
    # the case: rising profile 3.55, 4.24, 5.00 (no inner peak) is not "partly"
    ("inner_peak", {"values": [3.55, 4.24, 5.00], "se": [0.1, 0.1, 0.1]}, {"se_mult": 1}, NOT_REPRODUCED),
    ("inner_peak", {"values": [5.0, 5.05, 5.0], "se": [0.2, 0.2, 0.2]}, {"se_mult": 1}, INCONCLUSIVE),
    ("inner_peak", {"values": [3.5, 6.0], "se": [0.2, 0.2]}, {"se_mult": 1}, INCONCLUSIVE),
    # with a trivial control (untrained copies): a peak counts only when the control does not peak
    ("inner_peak", {"values": [3.5, 6.0, 4.0], "se": [0.2] * 3, "control_values": [3.0, 3.1, 3.0], "control_se": [0.2] * 3},
     {"se_mult": 1, "control": True}, HOLDS),
    ("inner_peak", {"values": [3.5, 6.0, 5.9], "se": [0.2] * 3, "control_values": [3.0, 3.1, 3.0], "control_se": [0.2] * 3},
     {"se_mult": 1, "control": True}, PARTLY),
    ("inner_peak", {"values": [3.5, 6.0, 4.0], "se": [0.2] * 3, "control_values": [3.0, 5.0, 3.0], "control_se": [0.2] * 3},
     {"se_mult": 1, "control": True}, INCONCLUSIVE),
    ("inner_peak", {"values": [3.5, 6.0, 4.0], "se": [0.2] * 3}, {"se_mult": 1, "control": True}, INCONCLUSIVE),
    ("inner_peak", {"values": [3.55, 4.24, 5.00], "se": [0.1] * 3, "control_values": [3.0, 5.0, 3.0], "control_se": [0.1] * 3},
     {"se_mult": 1, "control": True}, NOT_REPRODUCED),
    ("attention_bound", {"attention": 0.73, "bound": 0.35, "baseline": 0.167, "gap_rate": 0.002, "c1": 2e-5}, ATT, HOLDS),
    ("attention_bound", {"attention": 0.73, "bound": 0.35, "baseline": 0.167, "gap_rate": 1e-6, "c1": 2e-5}, ATT, PARTLY),
    ("attention_bound", {"attention": 0.25, "bound": 0.35, "baseline": 0.167, "gap_rate": 0.002, "c1": 2e-5}, ATT,
     NOT_REPRODUCED),
    # the case: bound 0.145 below uniform attention's 1/L_max: meeting it says nothing
    ("attention_bound", {"attention": 0.73, "bound": 0.145, "baseline": 0.167, "gap_rate": 0.002, "c1": 2e-5}, ATT,
     INCONCLUSIVE),
    # … nor does a bound that clears the baseline by less than 0.1 (0.1685 against 0.1667 in the audit: 0.2 here)
    ("attention_bound", {"attention": 0.73, "bound": 0.2, "baseline": 0.167, "gap_rate": 0.002, "c1": 2e-5}, ATT,
     INCONCLUSIVE),
    ("intervals_agree", {"values": [0.5, 0.51], "intervals": [[0.48, 0.52], [0.49, 0.53]]}, {"max_spread": 0.05}, HOLDS),
    # close point estimates, narrow disjoint intervals
    ("intervals_agree", {"values": [0.5, 0.53], "intervals": [[0.49, 0.51], [0.52, 0.54]]}, {"max_spread": 0.05}, PARTLY),
    ("intervals_agree", {"values": [0.5, 0.7], "intervals": [[0.48, 0.52], [0.68, 0.72]]}, {"max_spread": 0.05},
     NOT_REPRODUCED),
    ("intervals_agree", {"values": [0.5], "intervals": [[0.48, 0.52]]}, {"max_spread": 0.05}, INCONCLUSIVE),
    # the case: two wide intervals overlap — that cannot show agreement within 0.05
    ("intervals_agree", {"values": [0.5, 0.6], "intervals": [[0.35, 0.65], [0.45, 0.75]]}, {"max_spread": 0.05},
     INCONCLUSIVE),
    ("unjudgeable", {"why": "the sweep was not run"}, {}, INCONCLUSIVE),
    ("not_at_this_scale", {"why": "needs 7e7 tokens", "command": "ttlab lm model-sweep"}, {}, INCONCLUSIVE),
    # model_rate (Theorem 2 of paper B): control 1.8 vs 0.8 × 2 = 1.6; threshold 0.8 × 1 = 0.8
    ("model_rate", {"fitted": 1.1, "lo": 0.9, "hi": 1.3, "predicted": 1.0, "control": 1.8, "control_rate": 2.0,
                    "untrained_hi": 0.1, "data_ok": 1}, {"fraction": 0.8}, HOLDS),
    ("model_rate", {"fitted": 0.5, "lo": 0.4, "hi": 0.7, "predicted": 1.0, "control": 1.8, "control_rate": 2.0,
                    "untrained_hi": 0.1, "data_ok": 1}, {"fraction": 0.8}, NOT_REPRODUCED),
    ("model_rate", {"fitted": 0.5, "lo": 0.4, "hi": 0.7, "predicted": 1.0, "control": 1.2, "control_rate": 2.0,
                    "untrained_hi": 0.1, "data_ok": 1}, {"fraction": 0.8}, INCONCLUSIVE),  # harness not valid
    ("model_rate", {"fitted": 1.1, "lo": 0.9, "hi": 1.3, "predicted": 1.0, "control": 1.8, "control_rate": 2.0,
                    "untrained_hi": 0.1, "data_ok": 0}, {"fraction": 0.8}, INCONCLUSIVE),  # no width passes the check
    ("model_rate", {"fitted": 1.1, "lo": 0.9, "hi": 1.3, "predicted": 1.0, "control": 1.8, "control_rate": 2.0,
                    "control_data_ok": 0, "untrained_hi": 0.1, "data_ok": 1}, {"fraction": 0.8}, INCONCLUSIVE),
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
    from ttlab.reproduce.verdict_base import RULES

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


def test_rule_cases_sit_away_from_thresholds():
    """A rule test on a threshold proves nothing about the rule; every case with a margin is ≥ 10 % from one."""
    from ttlab.reproduce.verdict_base import NEAR
    from ttlab.reproduce.verdicts import assess

    near = [(r, m) for r, m, t, _ in CASES if (a := assess(r, m, t))["margin"] is not None and a["margin"] < NEAR]
    assert not near


def test_margin_is_the_relative_distance_to_the_nearest_threshold_and_flags_near_verdicts():
    from ttlab.reproduce.verdict_base import closest, rel_distance
    from ttlab.reproduce.verdicts import assess

    assert rel_distance(0.9, 1.0) == pytest.approx(0.1) and rel_distance(1.1, 1.0) == pytest.approx(0.1)
    assert rel_distance(0.9995, 0.999, complement=True) == pytest.approx(0.5)  # 5e-4 against 1e-3 on 1 − cos
    assert rel_distance(1.0, 0.0) is None and rel_distance(NAN, 1.0) is None
    assert closest(None, 0.3, 0.2) == 0.2 and closest(None) is None
    # Table 1 Kaplan: 34.5 % off against a 35 % partly limit → partly, 1.4 % from the limit: flagged
    a = assess("exponent_match", {"fitted": 0.0950, "predicted": 0.0706 * 1.0}, EXP)
    assert a["verdict"] == PARTLY and a["margin"] == pytest.approx(abs(abs(0.095 - 0.0706) / 0.0706 - 0.35) / 0.35)
    assert a["near_threshold"]
    # the audit's attention bound: 0.1685 against 0.1667 — inconclusive now, and 98 % short of the 0.1 clearance
    a = assess("attention_bound", {"attention": 0.73, "bound": 0.1685, "baseline": 1 / 6, "gap_rate": 2e-3,
                                   "c1": 2e-5}, ATT)
    assert a["verdict"] == INCONCLUSIVE and not a["near_threshold"]
    far = assess("at_least", {"value": 0.5}, {"holds": 0.9, "partly": 0.8})
    assert far["margin"] == pytest.approx(0.375) and not far["near_threshold"]
    # a record carries both; a missing input has no margin
    c = make_claim("x.n", "Near", "at_least", {"value": 0.905}, {"holds": 0.9}, kind="paper")
    assert c["near_threshold"] and c["margin"] == pytest.approx(0.005 / 0.9)
    assert missing_claim("x.m", "Gone", "not run", kind="check")["margin"] is None


def test_count_chance_uses_a_one_sided_binomial_test():
    from ttlab.reproduce.rules_thresholds import binomial_tail

    assert binomial_tail(3, 6, 0.5) == pytest.approx(42 / 64)  # C(6,3)+C(6,4)+C(6,5)+C(6,6) = 42
    assert binomial_tail(6, 6, 0.5) == pytest.approx(1 / 64)
    assert binomial_tail(0, 6, 0.5) == 1.0 and binomial_tail(7, 6, 0.5) == 0.0
    # the case: "harmonic less biased" at 3/6 is chance, not "partly"
    v = judge("count", {"passed": 3, "total": 6}, {"holds": 0.75, "partly": 0.5, "chance": 0.5})
    assert v[0] == INCONCLUSIVE and "p = 0.656" in v[1]
    assert judge("count", {"passed": 6, "total": 6}, {"holds": 0.75, "partly": 0.5, "chance": 0.5})[0] == HOLDS


# (rule, measured, thresholds, margin computed by hand: the smallest relative distance to a threshold)
MARGINS = [
    ("at_least", {"value": 0.995}, COS, abs(0.005 - 0.01) / 0.01),  # on 1 − cos
    ("at_most", {"value": 0.01, "n": 2}, {"holds": 1e-3, "partly": 0.05}, abs(0.01 - 0.05) / 0.05),
    ("at_least", {"value": 0.85, "controls": {"uniform": 0.4, "random": 0.5}}, CTRL, abs(0.15 - 0.2) / 0.2),
    ("at_least", {"value": 0.97, "controls": {"uniform": 0.4, "random": 0.885}}, CTRL, abs(0.085 - 0.1) / 0.1),  # lead
    ("count", {"passed": 3, "total": 5}, {"holds": 1.0, "partly": 0.5}, abs(0.4 - 0.5) / 0.5),  # "every case" skipped
    ("count", {"passed": 27, "total": 40}, {"holds": 0.75, "partly": 0.55, "chance": 0.5}, abs(0.325 - 0.45) / 0.45),
    ("count", {"passed": 26, "total": 40}, {"holds": 0.75, "partly": 0.55, "chance": 0.5},
     abs(0.0403452338759962 - 0.05) / 0.05),  # the binomial p against 5 %
    ("errors_at_most", {"mean": 0.05, "worst": 0.1, "n": 9}, {"holds_mean": 0.1, "holds_worst": 0.15, "partly_mean": 0.2},
     abs(0.1 - 0.15) / 0.15),
    ("set_match", {"expected": 5, "shared": 5, "extra": 1}, {}, 1.0),
    ("exp_decay", {"rate": 0.001, "r2": 0.99, "reference_rate": 0.0025}, {"min_r2": 0.9}, 0.0015 / 0.0025),
    ("exp_vs_power", {"rate": 1e-3, "r2_exp": 0.9997, "r2_power": 0.935, "n_points": 9001}, LIN,
     abs(0.0003 - 0.01) / 0.01),
    ("exp_vs_power", {"rate": 1e-3, "r2_exp": 0.998, "r2_power": 0.985, "n_points": 9001}, LIN,
     abs(math.log10(0.015 / 0.002) - 1.0)),  # D = 0.875 decades against 1
    ("direction_rate", {"final_cosine": 0.995, "slope": -1.0, "theory_slope": -0.75}, {"min_cosine": 0.99, "slack": 0.1},
     abs(0.005 - 0.01) / 0.01),
    ("power_law_decay", {"alpha": 0.1, "lo": 0.07, "hi": 0.13, "r2": 0.98, "n_points": 5}, {"min_r2": 0.9, "min_points": 3},
     abs(0.02 - 0.1) / 0.1),
    ("power_law_decay", {"alpha": 0.1, "lo": 0.01, "hi": 0.19, "r2": 0.99, "n_points": 5}, {"min_r2": 0.9, "min_points": 3},
     0.01 / 0.18),  # the interval's end nearest 0, in units of its width
    ("exponent_match", {"fitted": 0.14, "lo": 0.12, "hi": 0.16, "predicted": 0.184, "n_points": 5, "n_capped": 0}, EXP,
     abs(0.044 / 0.184 - 0.35) / 0.35),
    ("exponent_match", {"fitted": 0.19, "lo": 0.05, "hi": 0.17, "predicted": 0.184, "n_points": 5}, EXP,
     abs(0.12 - 2 * 0.35 * 0.184) / (2 * 0.35 * 0.184)),  # the interval's width against the partly band
    ("monotone", {"values": [4.0, 4.5, 5.0], "se": [0.1, 0.1, 0.1]}, {"se_mult": 1, "direction": 1},
     abs(1.0 - math.hypot(0.1, 0.1)) / math.hypot(0.1, 0.1)),
    ("inner_peak", {"values": [3.5, 6.0, 5.9], "se": [0.2, 0.2, 0.2]}, {"se_mult": 1},
     abs(0.1 - math.hypot(0.2, 0.2)) / math.hypot(0.2, 0.2)),
    ("attention_bound", {"attention": 0.73, "bound": 0.35, "baseline": 0.167, "gap_rate": 0.002, "c1": 2e-5}, ATT,
     abs(0.35 - 0.167 - 0.1) / 0.1),
    ("attention_bound", {"attention": 0.37, "bound": 0.35, "baseline": 0.167, "gap_rate": 0.002, "c1": 2e-5}, ATT,
     0.02 / 0.35),  # the attention against the bound
    ("intervals_agree", {"values": [0.5, 0.51], "intervals": [[0.48, 0.52], [0.49, 0.53]]}, {"max_spread": 0.05},
     abs(0.04 - 0.05) / 0.05),
    ("intervals_agree", {"values": [0.5, 0.7], "intervals": [[0.49, 0.51], [0.69, 0.71]]}, {"max_spread": 0.05},
     abs(0.02 - 0.05) / 0.05),
    ("oracle_validated_exponent", {"fitted": 0.52, "lo": 0.47, "hi": 0.57, "predicted": 0.5, "oracle": 0.53,
                                   "n_points": 5, "n_capped": 0}, ORC, abs(0.03 - 0.05) / 0.05),
    ("oracle_validated_exponent", {"fitted": 0.4, "lo": 0.35, "hi": 0.45, "predicted": 0.5, "oracle": 0.9,
                                   "n_points": 5, "n_capped": 0}, ORC_BOUND, abs(0.2 - 0.35) / 0.35),
    ("oracle_validated_exponent", {"fitted": 0.98, "lo": 0.9, "hi": 1.06, "predicted": 1.0, "oracle": 1.02,
                                   "n_points": 5, "n_capped": 0, "data_ratio": 0.9}, ORC_N, abs(0.1 - 0.15) / 0.15),
]


@pytest.mark.parametrize("rule, measured, thresholds, margin", MARGINS)
def test_margin_of_each_rule(rule, measured, thresholds, margin):
    from ttlab.reproduce.verdict_base import NEAR
    from ttlab.reproduce.verdicts import assess

    a = assess(rule, measured, thresholds, "x")
    assert a["margin"] == pytest.approx(margin, rel=1e-9)
    assert a["near_threshold"] == (margin < NEAR)


@pytest.mark.parametrize("rule, measured, thresholds", [
    ("unjudgeable", {"why": "not run"}, {}),
    ("at_least", {"value": None}, {"holds": 0.9}),
    ("direction_rate", {"final_cosine": 1.0}, {"min_cosine": 0.99, "slack": 0.1}),  # exact: on the ray
    ("monotone", {"values": [0.07, 0.2]}, {"se_mult": 1, "direction": 1, "need_se": False}),  # no standard error to compare with
])
def test_verdicts_resting_on_no_number_have_no_margin(rule, measured, thresholds):
    from ttlab.reproduce.verdicts import assess

    a = assess(rule, measured, thresholds)
    assert a["margin"] is None and a["near_threshold"] is False


# Equalities on a threshold, pinning which side each comparison puts them (the rule texts say ≥ / ≤ / "more than");
# these are semantics tests, apart from CASES, whose examples sit away from every threshold. Values are exact in
# binary floating point so that the equality is exact.
BOUNDARIES = [
    ("at_least", {"value": 0.75}, {"holds": 0.75, "partly": 0.5}, HOLDS),
    ("at_least", {"value": 0.5}, {"holds": 0.75, "partly": 0.5}, PARTLY),
    ("at_most", {"value": 0.25}, {"holds": 0.25, "partly": 0.5}, HOLDS),
    ("at_least", {"value": 1.0, "n": 10}, {"holds": 0.75, "min_n": 10}, HOLDS),  # n = min_n is enough
    ("at_least", {"value": 1.0, "n": 1}, {"holds": 0.75}, HOLDS),  # min_n defaults to 1
    ("at_least", {"value": 0.75, "controls": {"c": 0.5}}, {"holds": 0.5, "control_margin": 0.25}, HOLDS),  # lead = margin
    ("at_most", {"value": 0.25, "controls": {"c": 0.5}}, {"holds": 0.5, "control_margin": 0.25}, HOLDS),
    ("at_most", {"value": 0.25, "controls": {"c": 0.375}}, {"holds": 0.5, "control_margin": 0.25}, INCONCLUSIVE),
    ("count", {"passed": 1, "total": 1}, {"holds": 1.0, "partly": 0.5}, HOLDS),
    ("count", {"passed": 2, "total": 4}, {"holds": 1.0, "partly": 0.5}, PARTLY),
    ("count", {"passed": 1, "total": 1}, {"holds": 1.0, "partly": 0.5, "chance": 0.05}, INCONCLUSIVE),  # p = 0.05 exactly
    ("errors_at_most", {"mean": 0.125, "worst": 0.25, "n": 9}, {"holds_mean": 0.125, "holds_worst": 0.25, "partly_mean": 0.5},
     HOLDS),
    ("errors_at_most", {"mean": 0.5, "worst": 1.0, "n": 9}, {"holds_mean": 0.125, "holds_worst": 0.25, "partly_mean": 0.5},
     PARTLY),
    ("set_match", {"expected": 1, "shared": 1, "extra": 0}, {}, HOLDS),
    ("set_match", {"expected": 4, "shared": 2, "extra": 0}, {}, PARTLY),  # half found
    ("set_match", {"expected": 5, "shared": 2, "extra": 0}, {}, NOT_REPRODUCED),  # fewer than half
    ("exp_decay", {"rate": 0.0, "r2": 0.99, "reference_rate": 0.0}, {"min_r2": 0.9}, NOT_REPRODUCED),  # no decay
    ("exp_decay", {"rate": 0.25, "r2": 0.75, "reference_rate": 0.25}, {"min_r2": 0.75}, HOLDS),
    ("exp_vs_power", {"rate": 1e-3, "r2_exp": 0.75, "r2_power": -1.5, "n_points": 10}, {"min_decades": 1.0, "min_r2": 0.75},
     HOLDS),  # D = log10(2.5/0.25) = 1 exactly, R² = min_r2, n = the default 10 points
    ("exp_vs_power", {"rate": 1e-3, "r2_exp": -1.5, "r2_power": 0.75, "n_points": 15}, {"min_decades": 1.0, "min_r2": 0.75},
     NOT_REPRODUCED),  # D = −1 exactly
    ("exp_vs_power", {"rate": 0.0, "r2_exp": 0.9997, "r2_power": 0.935, "n_points": 15}, LIN, NOT_REPRODUCED),
    ("direction_rate", {"final_cosine": 1 - 2**-40}, {"min_cosine": 0.5, "slack": 0.25}, HOLDS),  # 1 − cos ≤ 1e-12
    ("direction_rate", {"final_cosine": 1 - 2**-39, "slope": None, "theory_slope": None}, {"min_cosine": 0.5, "slack": 0.25},
     INCONCLUSIVE),  # 1 − cos = 1.8e-12 > 1e-12: needs a slope
    ("direction_rate", {"final_cosine": 0.75, "slope": -0.5, "theory_slope": -0.75}, {"min_cosine": 0.75, "slack": 0.25}, HOLDS),
    ("direction_rate", {"final_cosine": 0.5, "slope": -1.0, "theory_slope": -0.75}, {"min_cosine": 0.75, "slack": 0.25},
     PARTLY),  # the slope is fast enough but the cosine is not close yet: both are needed
    ("direction_rate", {"final_cosine": 1 - 2**-30}, {"min_cosine": 0.5, "slack": 0.25, "exact": 2**-30}, HOLDS),
    ("direction_rate", {"final_cosine": 0.5, "slope": -0.1, "theory_slope": -0.75}, {"min_cosine": 0.75, "slack": 0.25},
     NOT_REPRODUCED),  # "falls" needs a slope below −0.1
    ("direction_rate", {"final_cosine": 0.5, "slope": -0.125, "theory_slope": -0.75}, {"min_cosine": 0.75, "slack": 0.25},
     PARTLY),
    ("direction_rate", {"final_cosine": 0.5, "slope": -0.09375, "theory_slope": -0.75}, {"min_cosine": 0.75, "slack": 0.25},
     NOT_REPRODUCED),  # −0.094 > −0.1: does not fall
    ("power_law_decay", {"alpha": 0.1, "lo": 0.0, "hi": 0.25, "r2": 0.99, "n_points": 3}, {"min_r2": 0.9, "min_points": 3},
     INCONCLUSIVE),  # lo = 0: the interval contains 0
    ("power_law_decay", {"alpha": -0.1, "lo": -0.25, "hi": 0.0, "r2": 0.99, "n_points": 3}, {"min_r2": 0.9, "min_points": 3},
     INCONCLUSIVE),
    ("power_law_decay", {"alpha": 0.1, "lo": 0.125, "hi": 0.25, "r2": 0.75, "n_points": 3}, {"min_r2": 0.75, "min_points": 3},
     HOLDS),
    ("power_law_decay", {"alpha": 0.1, "lo": 0.125, "hi": 0.125, "r2": 0.99, "n_points": 3}, {"min_r2": 0.9, "min_points": 3},
     HOLDS),  # a zero-width interval has no width margin
    ("exponent_match", {"fitted": 1.5, "predicted": 1.0}, {"holds_rel": 0.5, "partly_rel": 0.75}, HOLDS),
    ("exponent_match", {"fitted": 0.25, "predicted": 1.0}, {"holds_rel": 0.5, "partly_rel": 0.75}, PARTLY),
    ("exponent_match", {"fitted": 1.0, "lo": 0.5, "hi": 1.5, "predicted": 1.0, "n_points": 2},
     {"holds_rel": 0.25, "partly_rel": 0.5}, HOLDS),  # width 1 = the band 2 × 50 % of 1; 2 points = the default minimum
    ("exponent_match", {"fitted": 1.0, "predicted": 1.0, "n_points": 1}, {"holds_rel": 0.25, "partly_rel": 0.5}, INCONCLUSIVE),
    ("exponent_match", {"fitted": 1.0, "predicted": 1.0, "n_points": 3}, {"holds_rel": 0.25, "partly_rel": 0.5, "min_points": 3},
     HOLDS),
    ("exponent_match", {"fitted": 1.0, "predicted": 1.0, "n_capped": 0}, {"holds_rel": 0.25, "partly_rel": 0.5}, HOLDS),
    ("exponent_match", {"fitted": 1.0, "lo": 0.25, "hi": 1.75, "predicted": 1.0}, {"holds_rel": 0.25, "partly_rel": 0.5},
     INCONCLUSIVE),  # width 1.5 > 1 but < 2 (the band's factor 2 is needed)
    ("exponent_match", {"fitted": -0.31, "lo": -0.4, "hi": -0.2, "predicted": -0.3}, {"holds_rel": 0.1, "partly_rel": 0.35},
     HOLDS),  # a negative prediction: tolerances are relative to |p|
    ("exponent_match", {"fitted": -0.6, "lo": -0.7, "hi": -0.5, "predicted": -0.3}, {"holds_rel": 0.1, "partly_rel": 0.35},
     NOT_REPRODUCED),
    ("exponent_match", {"fitted": 0.5, "predicted": 1.0}, {"holds_rel": 0.1, "partly_rel": 0.35}, NOT_REPRODUCED),  # p = 1
    ("monotone", {"values": [1.0, 1.5], "se": [0.25, 0.25]}, {"se_mult": 1, "direction": 1}, HOLDS),
    ("monotone", {"values": [1.0, 1.25], "se": [0.0, 0.25]}, {"se_mult": 1, "direction": 1}, INCONCLUSIVE),  # change = SE
    ("monotone", {"values": [1.25, 1.0], "se": [0.0, 0.25]}, {"se_mult": 1, "direction": 1}, INCONCLUSIVE),  # −change = SE
    ("monotone", {"values": [1.0, 3.0, 2.75, 4.0], "se": [0.0, 0.0, 0.25, 0.0]}, {"se_mult": 1, "direction": 1}, HOLDS),  # a dip = its SE
    ("monotone", {"values": [4.0, 2.0, 1.0], "se": [0.1, 0.1, 0.1]}, {"se_mult": 1, "direction": -1}, HOLDS),
    ("monotone", {"values": [1.0, 3.0, 1.6], "se": [0.1, 5.0, 0.5]}, {"se_mult": 1, "direction": 1}, HOLDS),  # the ends' SEs count
    ("monotone", {"values": [1.0, 2.0, 4.0], "se": [0.1, 0.1, 0.1]}, {"se_mult": 1, "direction": -1}, NOT_REPRODUCED),
    ("inner_peak", {"values": [1.0, 1.25, 1.0], "se": [0.25, 0.0, 0.0]}, {"se_mult": 1}, PARTLY),  # ties the first end exactly
    ("inner_peak", {"values": [1.0, 3.0, 2.0, 1.0], "se": [0.2, 0.2, 0.2, 0.2]}, {"se_mult": 1}, HOLDS),  # the inner maximum counts
    ("inner_peak", {"values": [1.25, 1.0, 2.0], "se": [0.0, 0.0, 0.0]}, {"se_mult": 1}, NOT_REPRODUCED),
    ("inner_peak", {"values": [1.25, 1.0, 1.0], "se": [0.25, 0.0, 0.0]}, {"se_mult": 1}, INCONCLUSIVE),  # an end above by its SE: a tie
    ("inner_peak", {"values": [1.0, 3.0, 1.1, 1.0], "se": [0.2, 0.2, 0.2, 0.2]}, {"se_mult": 1}, HOLDS),  # the largest inner value
    ("inner_peak", {"values": [3.5, 6.0, 4.0]}, {"se_mult": 1}, INCONCLUSIVE),  # no standard errors
    ("attention_bound", {"attention": 0.5, "bound": 0.5, "baseline": 0.25, "gap_rate": 1.0, "c1": 1.0}, {"min_clearance": 0.25},
     HOLDS),  # attention = bound, clearance exact, rate = C1
    ("attention_bound", {"attention": 0.5, "bound": 0.25, "baseline": 0.25, "gap_rate": 1.0, "c1": 1.0}, {}, INCONCLUSIVE),
    ("attention_bound", {"attention": 0.5, "bound": 0.3, "baseline": 0.25, "gap_rate": 1.0, "c1": 1.0}, {}, HOLDS),
    ("intervals_agree", {"values": [0.5, 0.75], "intervals": [[0.375, 0.625], [0.625, 0.875]]}, {"max_spread": 0.25},
     HOLDS),  # touching intervals overlap; spread = width = the tolerance
    ("intervals_agree", {"values": [0.5, 0.52], "intervals": [[0.49, 0.51], [0.3, 0.6]]}, {"max_spread": 0.05},
     INCONCLUSIVE),  # the widest interval decides
    ("intervals_agree", {"values": [0.5, 0.52], "intervals": [[0.49, 0.51], [None, 0.6]]}, {"max_spread": 0.05},
     INCONCLUSIVE),  # an interval without a lower end is not usable
    ("intervals_agree", {"values": [0.5, None], "intervals": [[0.49, 0.51], [0.5, 0.53]]}, {"max_spread": 0.05},
     INCONCLUSIVE),
    ("oracle_validated_exponent", {"fitted": 0.5, "predicted": 0.5, "oracle": 0.75}, {**ORC, "oracle_tol": 0.25}, HOLDS),
    ("oracle_validated_exponent", {"fitted": 0.5, "predicted": 0.5, "oracle": 0.25}, {**ORC_BOUND, "oracle_tol": 0.25}, HOLDS),
    ("oracle_validated_exponent", {"fitted": 0.5, "predicted": 0.0, "oracle": 0.5}, ORC, INCONCLUSIVE),  # p = 0
    ("oracle_validated_exponent", {"fitted": 0.5, "predicted": 0.0, "oracle": 0.0}, ORC, INCONCLUSIVE),  # … oracle on it
    ("oracle_validated_exponent", {"fitted": 0.3, "predicted": 0.5, "oracle": 0.5}, ORC, NOT_REPRODUCED),  # 40 % below
    ("oracle_validated_exponent", {"fitted": 0.75, "predicted": 1.0, "oracle": 1.0}, {**ORC_BOUND, "holds_rel": 0.25}, HOLDS),
    ("oracle_validated_exponent", {"fitted": 0.5, "predicted": 1.0, "oracle": 1.0}, {**ORC_BOUND, "partly_rel": 0.5}, PARTLY),
    ("oracle_validated_exponent", {"fitted": 1.25, "predicted": 1.0, "oracle": 1.0}, {**ORC, "holds_rel": 0.25}, HOLDS),
    ("oracle_validated_exponent", {"fitted": 0.5, "predicted": 1.0, "oracle": 1.0}, {**ORC, "partly_rel": 0.5}, PARTLY),
    ("oracle_validated_exponent", {"fitted": 1.0, "predicted": 1.0, "oracle": 1.0, "data_ratio": 1.25},
     {**ORC_N, "max_data_change": 0.25}, HOLDS),
]


@pytest.mark.parametrize("rule, measured, thresholds, expected", BOUNDARIES)
def test_equality_on_a_threshold_falls_on_the_documented_side(rule, measured, thresholds, expected):
    verdict, reason, _ = judge(rule, measured, thresholds, "x")
    assert verdict == expected, reason


# margins where each comparison of a rule is, in turn, the nearest one
MARGINS_MORE = [
    ("at_least", {"value": 1.125}, {"holds": 1.25}, 0.1),  # exactly NEAR: not flagged (margin < NEAR flags)
    ("exp_vs_power", {"rate": 1e-3, "r2_exp": 0.9, "r2_power": 1 - 0.1 * 10**-1.2, "n_points": 15}, LIN,
     abs(-1.2 + 1.0) / 1.0),  # D = −1.2 against −1
    ("direction_rate", {"final_cosine": 0.92, "slope": -0.12, "theory_slope": -0.75}, {"min_cosine": 0.99, "slack": 0.1},
     abs(-0.12 + 0.1) / 0.1),  # the slope against −0.1 ("falls")
    ("exponent_match", {"fitted": -0.32, "lo": -0.37, "hi": -0.27, "predicted": -0.3}, {"holds_rel": 0.1, "partly_rel": 0.35},
     abs(0.02 / 0.3 - 0.1) / 0.1),  # a negative prediction
    ("exponent_match", {"fitted": 0.1, "lo": 0.0, "hi": 0.2, "predicted": -0.3}, {"holds_rel": 0.1, "partly_rel": 0.35},
     abs(0.2 - 0.21) / 0.21),  # the width against the band 2 × 35 % × |−0.3|
    ("monotone", {"values": [5.0, 4.0], "se": [0.3, 0.4]}, {"se_mult": 1, "direction": 1}, abs(1.0 - 0.5) / 0.5),  # the other way
    ("monotone", {"values": [1.0, 3.0], "se": [0.3, 0.4]}, {"se_mult": 1, "direction": -1}, abs(2.0 - 0.5) / 0.5),
    ("inner_peak", {"values": [5.0, 6.0, 1.0], "se": [0.3, 0.4, 0.0]}, {"se_mult": 1}, abs(1.0 - 0.5) / 0.5),
    ("inner_peak", {"values": [6.3, 6.0, 1.0], "se": [0.3, 0.4, 0.0]}, {"se_mult": 1}, abs(0.3 - 0.5) / 0.5),  # an end above
    ("oracle_validated_exponent", {"fitted": 0.45, "predicted": 0.5, "oracle": 0.5}, {**ORC, "oracle_tol": 1.0},
     0.0),  # |0.45 − 0.5|/0.5 = 0.1 = holds_rel
    ("oracle_validated_exponent", {"fitted": 0.62, "predicted": 0.5, "oracle": 0.5}, {**ORC, "oracle_tol": 1.0},
     abs(0.24 - 0.35) / 0.35),  # fitted above the prediction
    ("oracle_validated_exponent", {"fitted": 0.62, "predicted": 0.5, "oracle": 2.5}, {**ORC_BOUND, "oracle_tol": 1.0},
     abs(-0.24 - 0.35) / 0.35),  # bound form: (p − a)/p = −0.24; the oracle 2 above p: 3 tolerances away
    ("oracle_validated_exponent", {"fitted": 0.5, "predicted": 0.5, "oracle": 0.46}, ORC_BOUND, abs(0.04 - 0.05) / 0.05),
    ("oracle_validated_exponent", {"fitted": 0.5, "predicted": 0.5, "oracle": 0.54}, ORC, abs(0.04 - 0.05) / 0.05),
    ("oracle_validated_exponent", {"fitted": 0.5, "predicted": 0.5, "oracle": 0.46}, ORC, abs(0.04 - 0.05) / 0.05),
    ("oracle_validated_exponent", {"fitted": 0.5, "lo": 0.2, "hi": 0.55, "predicted": 0.5, "oracle": 0.5},
     {**ORC, "oracle_tol": 1.0}, abs(0.35 - 0.35) / 0.35),  # the width against the band
]


@pytest.mark.parametrize("rule, measured, thresholds, margin", MARGINS_MORE)
def test_margin_when_each_comparison_is_the_nearest(rule, measured, thresholds, margin):
    from ttlab.reproduce.verdict_base import NEAR
    from ttlab.reproduce.verdicts import assess

    a = assess(rule, measured, thresholds, "x")
    assert a["margin"] == pytest.approx(margin, rel=1e-9, abs=1e-12)
    assert a["near_threshold"] == (margin < NEAR)


def test_rule_texts_and_odd_inputs():
    from dataclasses import FrozenInstanceError

    from ttlab.reproduce.rules_thresholds import binomial_tail
    from ttlab.reproduce.verdict_base import finite_number as _num
    from ttlab.reproduce.verdicts import assess, count_by_kind

    with pytest.raises(FrozenInstanceError):
        RULES["at_least"].name = "x"  # type: ignore[misc]
    assert _num(True) is None and _num(None) is None and _num("x") is None and _num("2.5") == 2.5
    assert judge("at_least", {"value": True}, {"holds": 0.5})[0] == INCONCLUSIVE  # a bool is not a measurement
    assert "≥ 0.5" in judge("at_least", {"value": 0.7}, {"holds": 0.5})[1]
    assert "≤ 0.5" in judge("at_most", {"value": 0.3}, {"holds": 0.5})[1]
    assert judge("at_least", {}, {"holds": 0.5})[2].endswith("or covers no item")
    assert judge("at_least", {}, {"holds": 0.5, "min_n": 3})[2].endswith("or covers fewer than 3 items")
    assert judge("at_least", {}, {"holds": 0.5, "min_n": 2})[2].endswith("or covers fewer than 2 items")
    empty = judge("at_least", {"value": 0.9, "controls": {}}, {"holds": 0.5, "control_margin": 0.1})
    assert empty[0] == INCONCLUSIVE and "(none given)" in empty[1]
    gone = judge("at_least", {"value": 0.9, "controls": {"u": None}}, {"holds": 0.5, "control_margin": 0.1})
    assert gone[0] == INCONCLUSIVE and "control u is missing" in gone[1]
    assert binomial_tail(1, 6, 0.5) == pytest.approx(63 / 64) and binomial_tail(0, 3, 0.3) == 1.0
    assert judge("errors_at_most", {"mean": 0.01, "worst": 0.01, "n": 2},
                 {"holds_mean": 0.1, "holds_worst": 0.15, "partly_mean": 0.2, "min_n": 5})[0] == INCONCLUSIVE
    assert judge("set_match", {"expected": 0, "shared": 0, "extra": 0}, {})[0] == INCONCLUSIVE
    assert judge("unjudgeable", {}, {})[1] == "inputs missing"
    # a perfect fit's unexplained variance is floored at 1e-300: D = ±299 decades, not a division by zero
    assert "D = +299.00 decades" in judge("exp_vs_power", {"rate": 1e-3, "r2_exp": 1.0, "r2_power": 0.9,
                                                           "n_points": 15}, {**LIN, "min_r2": 0.0})[1]
    assert "D = -299.00 decades" in judge("exp_vs_power", {"rate": 1e-3, "r2_exp": 0.9, "r2_power": 1.0,
                                                           "n_points": 15}, LIN)[1]
    where = judge("exp_vs_power", {"rate": 1e-3, "r2_exp": 0.9997, "r2_power": 0.935, "n_points": 15, "t0": 1000}, LIN)
    assert where[0] == HOLDS and " on t = " not in where[1]  # both ends are needed to quote the window
    assert " on t = 1000…1e+04" in judge("exp_vs_power", {"rate": 1e-3, "r2_exp": 0.9997, "r2_power": 0.935,
                                                          "n_points": 15, "t0": 1000, "t1": 10000}, LIN)[1]
    band = {"fitted": 0.15, "predicted": 0.15, "band_lo": 0.15}
    assert "band" not in judge("exponent_match", band, EXP)[1]  # one end of the band is not a band
    assert "inside the ID estimators' prediction band [0.15, 0.25]" in judge(
        "exponent_match", {**band, "band_hi": 0.25}, EXP)[1]
    assert "inside" in judge("exponent_match", {"fitted": 0.25, "predicted": 0.25, "band_lo": 0.15, "band_hi": 0.25},
                             EXP)[1]
    assert "rises" in judge("monotone", {}, {"direction": 1})[2] and "falls" in judge("monotone", {}, {"direction": -1})[2]
    assert "+1" in judge("monotone", {"values": [1.0, 2.0], "se": [0.1, 0.1]}, {"direction": 1})[1]
    assert "−1" in judge("monotone", {"values": [2.0, 1.0], "se": [0.1, 0.1]}, {"direction": -1})[1] or \
        "-1" in judge("monotone", {"values": [2.0, 1.0], "se": [0.1, 0.1]}, {"direction": -1})[1]
    assert "by at least 0" in judge("attention_bound", {}, {})[2]  # no clearance asked: 0
    assert "by at least 0.1" in judge("attention_bound", {}, {"min_clearance": 0.1})[2]
    assert "steeper" in judge("oracle_validated_exponent", {"fitted": 0.5, "predicted": 0.5, "oracle": 0.7}, ORC)[1]
    assert judge("oracle_validated_exponent", {"fitted": 0.5, "predicted": 0.5, "oracle": 0.5}, ORC)[0] == HOLDS
    assert assess("oracle_validated_exponent", {"fitted": 0.5, "predicted": 0.0, "oracle": 0.5}, ORC)["margin"] is None
    assert count_by_kind([{"kind": "paper", "verdict": "odd"}])["paper"]["odd"] == 1  # reported, not lost


def test_trend_and_overlap_rules_are_inconclusive_on_step_capped_values():
    rising = {"values": [1.0, 2.0, 3.0], "se": [0.1, 0.1, 0.1]}
    assert judge("monotone", rising, {"direction": 1})[0] == HOLDS
    v, reason, _ = judge("monotone", {**rising, "n_capped": 2}, {"direction": 1})
    assert v == INCONCLUSIVE and "2 of the compared values" in reason and "step-capped" in reason
    agree = {"values": [0.50, 0.51], "intervals": [[0.49, 0.51], [0.50, 0.52]]}
    assert judge("intervals_agree", agree, {"max_spread": 0.05})[0] == HOLDS
    assert judge("intervals_agree", {**agree, "n_capped": 1}, {"max_spread": 0.05})[0] == INCONCLUSIVE
