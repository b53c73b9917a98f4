"""The reason and rule text of every verdict case in tests/reproduce/test_verdicts.py, word for word.

The report prints these texts as the evidence behind each verdict, so a change of wording or of a number
in them must be deliberate: update the tables below with the change (review each line). Cases are keyed
by (rule, measured, thresholds), so a case added to ``CASES`` without an entry here is simply not checked.
Part of the mutation-testing suite (docs/mutation.md).
"""

from __future__ import annotations

import json

import pytest

from tests.reproduce.test_verdicts import CASES
from ttlab.reproduce.verdicts import judge


def _key(*parts) -> str:
    return " ".join(json.dumps(p, sort_keys=True) for p in parts)


REASONS = {
    '"model_rate" {"control": 1.8, "control_data_ok": 0, "control_rate": 2.0, "data_ok": 1, "fitted": 1.1, "hi": 1.3, "lo": 0.9, "predicted": 1.0, "untrained_hi": 0.1} {"fraction": 0.8}':
        ('inconclusive', 'the positive control is optimisation- or data-limited (no width passes the data check): the harness is not validated'),
    '"not_at_this_scale" {"command": "ttlab lm model-sweep", "why": "needs 7e7 tokens"} {}':
        ('inconclusive', 'not judged at this scale: needs 7e7 tokens; judge it with: ttlab lm model-sweep'),
    '"model_rate" {"control": 1.8, "control_rate": 2.0, "data_ok": 1, "fitted": 1.1, "hi": 1.3, "lo": 0.9, "predicted": 1.0, "untrained_hi": 0.1} {"fraction": 0.8}':
        ('holds', 'α̂_N = 1.1 [0.9, 1.3]: lower end ≥ 0.8 = 0.8 × x; untrained ≤ 0.1'),
    '"model_rate" {"control": 1.8, "control_rate": 2.0, "data_ok": 1, "fitted": 0.5, "hi": 0.7, "lo": 0.4, "predicted": 1.0, "untrained_hi": 0.1} {"fraction": 0.8}':
        ('not reproduced', 'α̂_N = 0.5 [0.4, 0.7]: upper end < 0.8 = 0.8 × x'),
    '"model_rate" {"control": 1.2, "control_rate": 2.0, "data_ok": 1, "fitted": 0.5, "hi": 0.7, "lo": 0.4, "predicted": 1.0, "untrained_hi": 0.1} {"fraction": 0.8}':
        ('inconclusive', "the harness does not reach the known rate: the control's α̂_N 1.2 < 1.6"),
    '"model_rate" {"control": 1.8, "control_rate": 2.0, "data_ok": 0, "fitted": 1.1, "hi": 1.3, "lo": 0.9, "predicted": 1.0, "untrained_hi": 0.1} {"fraction": 0.8}':
        ('inconclusive', 'optimisation- or data-limited: no width passes the data check (its MSE still falls by more than 10 % with twice the samples); a longer training budget would decide'),
    '"at_least" {"value": 1.0} {"complement": 1, "holds": 0.999, "partly": 0.99}':
        ('holds', 'x = 1 ≥ 0.999'),
    '"at_least" {"value": 0.995} {"complement": 1, "holds": 0.999, "partly": 0.99}':
        ('partly', 'x = 0.995 is below 0.999 but ≥ 0.99'),
    '"at_least" {"value": 0.962} {"complement": 1, "holds": 0.999, "partly": 0.99}':
        ('not reproduced', 'x = 0.962 < 0.99'),
    '"at_least" {"value": NaN} {"complement": 1, "holds": 0.999, "partly": 0.99}':
        ('inconclusive', 'missing or non-finite input: value'),
    '"at_least" {"controls": {"random": 0.5, "uniform": 0.4}, "value": 0.97} {"complement": 1, "control_margin": 0.1, "holds": 0.95, "partly": 0.8}':
        ('holds', 'x = 0.97 ≥ 0.95; beats every control by ≥ 0.1 (lead +0.47 over random; uniform 0.4, random 0.5)'),
    '"at_least" {"controls": {"random": 0.5, "uniform": 0.4}, "value": 0.85} {"complement": 1, "control_margin": 0.1, "holds": 0.95, "partly": 0.8}':
        ('partly', 'x = 0.85 is below 0.95 but ≥ 0.8; beats every control by ≥ 0.1 (lead +0.35 over random; uniform 0.4, random 0.5)'),
    '"at_least" {"controls": {"random": 0.96, "uniform": 0.4}, "value": 0.97} {"complement": 1, "control_margin": 0.1, "holds": 0.95, "partly": 0.8}':
        ('inconclusive', 'x = 0.97 ≥ 0.95, but the control random reaches 0.96 (lead +0.01 < 0.1; controls: uniform 0.4, random 0.96): a trivial model nearly meets it too'),
    '"at_least" {"controls": {"random": 0.5, "uniform": 0.4}, "value": 0.6} {"complement": 1, "control_margin": 0.1, "holds": 0.95, "partly": 0.8}':
        ('not reproduced', 'x = 0.6 < 0.8'),
    '"at_least" {"n": 3, "value": 1.0} {"holds": 0.999, "min_n": 10}':
        ('inconclusive', 'only 3 item(s) to judge (need ≥ 10)'),
    '"at_most" {"n": 2, "value": 1e-06} {"holds": 0.001, "partly": 0.05}':
        ('holds', 'x = 1e-06 ≤ 0.001'),
    '"at_most" {"n": 2, "value": 0.01} {"holds": 0.001, "partly": 0.05}':
        ('partly', 'x = 0.01 is above 0.001 but ≤ 0.05'),
    '"at_most" {"n": 2, "value": 0.2} {"holds": 0.001, "partly": 0.05}':
        ('not reproduced', 'x = 0.2 > 0.05'),
    '"at_most" {"n": 0, "value": null} {"holds": 0.001, "partly": 0.05}':
        ('inconclusive', 'missing or non-finite input: value'),
    '"count" {"passed": 5, "total": 5} {"holds": 1.0, "partly": 0.5}':
        ('holds', '5/5 cases (x)'),
    '"count" {"passed": 3, "total": 5} {"holds": 1.0, "partly": 0.5}':
        ('partly', 'only 3/5 cases (x); 100 % needed to hold'),
    '"count" {"passed": 1, "total": 5} {"holds": 1.0, "partly": 0.5}':
        ('not reproduced', '1/5 cases (x), below 50 %'),
    '"count" {"passed": 0, "total": 0} {"holds": 1.0, "partly": 0.5}':
        ('inconclusive', 'no case to judge'),
    '"count" {"passed": 19, "total": 20} {"chance": 0.5, "holds": 0.75, "partly": 0.55}':
        ('holds', '19/20 cases (x); beats chance (50 % per case): one-sided binomial p = 2e-05'),
    '"count" {"passed": 27, "total": 40} {"chance": 0.5, "holds": 0.75, "partly": 0.55}':
        ('partly', 'only 27/40 cases (x); 75 % needed to hold; beats chance (50 % per case): one-sided binomial p = 0.0192'),
    '"count" {"passed": 4, "total": 6} {"chance": 0.5, "holds": 0.75, "partly": 0.55}':
        ('inconclusive', 'only 4/6 cases (x); 75 % needed to hold, but chance (50 % per case) gives ≥ 4/6 with p = 0.344 ≥ 0.05: not distinguishable from luck'),
    '"errors_at_most" {"mean": 0.05, "n": 9, "worst": 0.1} {"holds_mean": 0.1, "holds_worst": 0.15, "partly_mean": 0.2}':
        ('holds', 'mean 0.05 ≤ 0.1 and worst 0.1 ≤ 0.15'),
    '"errors_at_most" {"mean": 0.05, "n": 9, "worst": 0.3} {"holds_mean": 0.1, "holds_worst": 0.15, "partly_mean": 0.2}':
        ('partly', 'mean 0.05, worst 0.3: within the partly band (mean ≤ 0.2)'),
    '"errors_at_most" {"mean": 0.3, "n": 9, "worst": 0.5} {"holds_mean": 0.1, "holds_worst": 0.15, "partly_mean": 0.2}':
        ('not reproduced', 'mean 0.3 > 0.2'),
    '"errors_at_most" {"mean": null, "n": 0, "worst": null} {"holds_mean": 0.1, "holds_worst": 0.15, "partly_mean": 0.2}':
        ('inconclusive', 'missing or non-finite input: mean, worst'),
    '"set_match" {"expected": 5, "extra": 0, "shared": 5} {}':
        ('holds', 'all 5 expected x found, none extra'),
    '"set_match" {"expected": 5, "extra": 1, "shared": 5} {}':
        ('partly', '5/5 expected x found, 1 extra'),
    '"set_match" {"expected": 5, "extra": 0, "shared": 1} {}':
        ('not reproduced', 'only 1/5 expected x found, 0 extra'),
    '"set_match" {"expected": 0, "extra": 0, "shared": 0} {}':
        ('inconclusive', 'no expected x to compare with'),
    '"exp_decay" {"r2": 0.99, "rate": 0.01, "reference_rate": 0.0025} {"min_r2": 0.9}':
        ('holds', 'rate 0.01 ≥ reference 0.0025, R² 0.990'),
    '"exp_decay" {"r2": 0.99, "rate": 0.001, "reference_rate": 0.0025} {"min_r2": 0.9}':
        ('partly', 'rate 0.001 (reference 0.0025), R² 0.990 (need ≥ 0.9)'),
    '"exp_decay" {"r2": 0.5, "rate": 0.01, "reference_rate": 0.0025} {"min_r2": 0.9}':
        ('partly', 'rate 0.01 (reference 0.0025), R² 0.500 (need ≥ 0.9)'),
    '"exp_decay" {"r2": 0.5, "rate": -0.01, "reference_rate": 0.0} {"min_r2": 0.9}':
        ('not reproduced', 'x does not decay (fitted rate -0.01)'),
    '"exp_vs_power" {"n_points": 9001, "r2_exp": 0.9997, "r2_power": 0.935, "rate": 0.001} {"min_decades": 1.0, "min_points": 10, "min_r2": 0.99}':
        ('holds', 'the exponential wins clearly: R² exponential 0.99970 vs power law 0.93500 (D = +2.34 decades); rate 0.001 per step'),
    '"exp_vs_power" {"n_points": 9001, "r2_exp": 0.95, "r2_power": 0.2, "rate": 0.001} {"min_decades": 1.0, "min_points": 10, "min_r2": 0.99}':
        ('partly', 'the exponential wins (R² exponential 0.95000 vs power law 0.20000 (D = +1.20 decades)) but R²_exp < 0.99'),
    '"exp_vs_power" {"n_points": 9001, "r2_exp": 0.8, "r2_power": 0.999, "rate": 0.001} {"min_decades": 1.0, "min_points": 10, "min_r2": 0.99}':
        ('not reproduced', 'a power law fits clearly better: R² exponential 0.80000 vs power law 0.99900 (D = -2.30 decades)'),
    '"exp_vs_power" {"n_points": 9001, "r2_exp": 0.9997, "r2_power": 0.935, "rate": -0.001} {"min_decades": 1.0, "min_points": 10, "min_r2": 0.99}':
        ('not reproduced', 'x does not decay (fitted rate -0.001); R² exponential 0.99970 vs power law 0.93500 (D = +2.34 decades)'),
    '"exp_vs_power" {"n_points": 451, "r2_exp": 0.99787, "r2_power": 0.99799, "rate": 0.001} {"min_decades": 1.0, "min_points": 10, "min_r2": 0.99}':
        ('inconclusive', 'neither shape wins by 1 decade(s): R² exponential 0.99787 vs power law 0.99799 (D = -0.03 decades)'),
    '"exp_vs_power" {"n_points": 4, "r2_exp": 0.9997, "r2_power": 0.935, "rate": 0.001} {"min_decades": 1.0, "min_points": 10, "min_r2": 0.99}':
        ('inconclusive', 'only 4 points on the last decade (need ≥ 10)'),
    '"exp_vs_power" {"n_points": 0, "r2_exp": NaN, "r2_power": NaN, "rate": NaN} {"min_decades": 1.0, "min_points": 10, "min_r2": 0.99}':
        ('inconclusive', 'missing or non-finite input: rate, r2_exp, r2_power'),
    '"exp_decay" {"r2": NaN, "rate": NaN, "reference_rate": 0.0} {"min_r2": 0.9}':
        ('inconclusive', 'missing or non-finite input: rate, r2'),
    '"direction_rate" {"final_cosine": 1.0} {"min_cosine": 0.99, "slack": 0.1}':
        ('holds', 'final cosine 1.000000000000: on the max-margin direction to rounding'),
    '"direction_rate" {"final_cosine": 0.995, "slope": -1.0, "theory_slope": -0.75} {"min_cosine": 0.99, "slack": 0.1}':
        ('holds', 'slope -1.000 ≤ theory -0.750 + 0.1, final cosine 0.995000'),
    '"direction_rate" {"final_cosine": 0.92, "slope": -0.32, "theory_slope": -0.58} {"min_cosine": 0.99, "slack": 0.1}':
        ('partly', '1 − cos falls (slope -0.320) but theory -0.580 + 0.1 / cosine 0.920000 not met'),
    '"direction_rate" {"final_cosine": 0.5, "slope": 0.2, "theory_slope": -0.75} {"min_cosine": 0.99, "slack": 0.1}':
        ('not reproduced', '1 − cos does not fall (slope 0.200)'),
    '"direction_rate" {"final_cosine": 0.9, "slope": null, "theory_slope": null} {"min_cosine": 0.99, "slack": 0.1}':
        ('inconclusive', 'missing or non-finite input: slope, theory_slope'),
    '"power_law_decay" {"alpha": 0.1, "hi": 0.13, "lo": 0.07, "n_points": 5, "r2": 0.98} {"min_points": 3, "min_r2": 0.9}':
        ('holds', 'interval [0.07, 0.13] excludes 0, R² 0.980'),
    '"power_law_decay" {"alpha": 0.1, "hi": 0.13, "lo": 0.07, "n_points": 5, "r2": 0.6} {"min_points": 3, "min_r2": 0.9}':
        ('partly', 'interval [0.07, 0.13] excludes 0 but R² 0.600 < 0.9'),
    '"power_law_decay" {"alpha": -0.1, "hi": -0.07, "lo": -0.13, "n_points": 5, "r2": 0.98} {"min_points": 3, "min_r2": 0.9}':
        ('not reproduced', 'interval [-0.13, -0.07] lies below 0: the loss grows'),
    '"power_law_decay" {"alpha": 0.069, "hi": 0.418, "lo": -0.279, "n_points": 3, "r2": 0.865} {"min_points": 3, "min_r2": 0.9}':
        ('inconclusive', 'interval [-0.279, 0.418] contains 0: cannot tell decay from none'),
    '"power_law_decay" {"alpha": 0.1, "hi": 0.13, "lo": 0.07, "n_points": 2, "r2": 0.98} {"min_points": 3, "min_r2": 0.9}':
        ('inconclusive', 'only 2 points (need ≥ 3)'),
    '"exponent_match" {"fitted": 0.19, "hi": 0.21, "lo": 0.17, "n_capped": 0, "n_points": 5, "predicted": 0.184} {"holds_rel": 0.1, "min_points": 3, "partly_rel": 0.35}':
        ('holds', 'fitted 0.19 vs predicted 0.184: Δ = +0.006 (3 %)'),
    '"exponent_match" {"fitted": 0.14, "hi": 0.16, "lo": 0.12, "n_capped": 0, "n_points": 5, "predicted": 0.184} {"holds_rel": 0.1, "min_points": 3, "partly_rel": 0.35}':
        ('partly', 'fitted 0.14 vs predicted 0.184: Δ = -0.044 (24 %)'),
    '"exponent_match" {"fitted": 0.105, "hi": 0.135, "lo": 0.075, "n_capped": 0, "n_points": 5, "predicted": 0.184} {"holds_rel": 0.1, "min_points": 3, "partly_rel": 0.35}':
        ('not reproduced', 'fitted 0.105 vs predicted 0.184: Δ = -0.079 (43 %)'),
    '"exponent_match" {"fitted": 0.069, "hi": 0.418, "lo": -0.279, "n_capped": 0, "n_points": 3, "predicted": 0.286} {"holds_rel": 0.1, "min_points": 3, "partly_rel": 0.35}':
        ('inconclusive', 'the interval [-0.279, 0.418] (width 0.697) is wider than the partly band ±35 % of 0.286: cannot discriminate'),
    '"exponent_match" {"fitted": 0.19, "hi": 0.21, "lo": 0.17, "n_capped": 2, "n_points": 5, "predicted": 0.184} {"holds_rel": 0.1, "min_points": 3, "partly_rel": 0.35}':
        ('inconclusive', '2 fitted run(s) hit the step cap: the exponent is budget-limited'),
    '"exponent_match" {"fitted": 0.19, "n_points": 2, "predicted": 0.184} {"holds_rel": 0.1, "min_points": 3, "partly_rel": 0.35}':
        ('inconclusive', 'only 2 fitted points (need ≥ 3)'),
    '"exponent_match" {"fitted": 0.09, "predicted": 0.0706} {"holds_rel": 0.1, "min_points": 3, "partly_rel": 0.35}':
        ('partly', 'fitted 0.09 vs predicted 0.0706: Δ = +0.0194 (27 %)'),
    '"exponent_match" {"fitted": NaN, "predicted": 0.2} {"holds_rel": 0.1, "min_points": 3, "partly_rel": 0.35}':
        ('inconclusive', 'missing or non-finite input: fitted'),
    '"attention_bound" {"attention": 0.73, "baseline": 0.167, "bound": 0.35, "c1": 2e-05, "gap_rate": 0.002} {"min_clearance": 0.1}':
        ('holds', 'attention 0.7300 ≥ bound 0.3500, which clears the uniform baseline 0.1670 by 0.1830 ≥ 0.1; gap rate 0.002 ≥ C1 2e-05'),
    '"attention_bound" {"attention": 0.73, "baseline": 0.167, "bound": 0.35, "c1": 2e-05, "gap_rate": 1e-06} {"min_clearance": 0.1}':
        ('partly', 'attention 0.7300 ≥ bound 0.3500 (baseline 0.1670 + 0.1830), but gap rate 1e-06 < C1 2e-05'),
    '"attention_bound" {"attention": 0.25, "baseline": 0.167, "bound": 0.35, "c1": 2e-05, "gap_rate": 0.002} {"min_clearance": 0.1}':
        ('not reproduced', 'attention 0.2500 < bound 0.3500'),
    '"attention_bound" {"attention": 0.73, "baseline": 0.167, "bound": 0.145, "c1": 2e-05, "gap_rate": 0.002} {"min_clearance": 0.1}':
        ('inconclusive', 'bound 0.1450 clears the uniform-attention baseline 0.1670 by -0.0220 < 0.1: uniform attention (no training) nearly meets it, so meeting it says nothing (attention 0.7300)'),
    '"attention_bound" {"attention": 0.73, "baseline": 0.167, "bound": 0.2, "c1": 2e-05, "gap_rate": 0.002} {"min_clearance": 0.1}':
        ('inconclusive', 'bound 0.2000 clears the uniform-attention baseline 0.1670 by +0.0330 < 0.1: uniform attention (no training) nearly meets it, so meeting it says nothing (attention 0.7300)'),
    '"intervals_agree" {"intervals": [[0.48, 0.52], [0.49, 0.53]], "values": [0.5, 0.51]} {"max_spread": 0.05}':
        ('holds', 'spread 0.01, intervals overlap'),
    '"intervals_agree" {"intervals": [[0.49, 0.51], [0.52, 0.54]], "values": [0.5, 0.53]} {"max_spread": 0.05}':
        ('partly', 'spread 0.03, intervals do not overlap'),
    '"intervals_agree" {"intervals": [[0.48, 0.52], [0.68, 0.72]], "values": [0.5, 0.7]} {"max_spread": 0.05}':
        ('not reproduced', 'spread 0.2, intervals do not overlap'),
    '"intervals_agree" {"intervals": [[0.48, 0.52]], "values": [0.5]} {"max_spread": 0.05}':
        ('inconclusive', '1 usable interval(s): need ≥ 2'),
    '"intervals_agree" {"intervals": [[0.35, 0.65], [0.45, 0.75]], "values": [0.5, 0.6]} {"max_spread": 0.05}':
        ('inconclusive', 'spread 0.1, intervals overlap, but the widest interval (0.3) is wider than the tolerance 0.05: their overlap cannot show agreement within the tolerance'),
    '"unjudgeable" {"why": "the sweep was not run"} {}':
        ('inconclusive', 'the sweep was not run'),
    '"oracle_validated_exponent" {"fitted": 0.52, "hi": 0.57, "lo": 0.47, "n_capped": 0, "n_points": 5, "oracle": 0.53, "predicted": 0.5} {"bound": 0, "holds_rel": 0.1, "min_points": 3, "oracle_tol": 0.05, "partly_rel": 0.35}':
        ('holds', 'fitted 0.52 vs 0.5: Δ = +0.02 (+4 %); oracle 0.53 within 0.05 of 0.5'),
    '"oracle_validated_exponent" {"fitted": 0.62, "hi": 0.67, "lo": 0.57, "n_capped": 0, "n_points": 5, "oracle": 0.46, "predicted": 0.5} {"bound": 0, "holds_rel": 0.1, "min_points": 3, "oracle_tol": 0.05, "partly_rel": 0.35}':
        ('partly', 'fitted 0.62 vs 0.5: Δ = +0.12 (+24 %); oracle 0.46 within 0.05 of 0.5'),
    '"oracle_validated_exponent" {"fitted": 0.8, "hi": 0.85, "lo": 0.75, "n_capped": 0, "n_points": 5, "oracle": 0.5, "predicted": 0.5} {"bound": 0, "holds_rel": 0.1, "min_points": 3, "oracle_tol": 0.05, "partly_rel": 0.35}':
        ('not reproduced', 'fitted 0.8 vs 0.5: Δ = +0.3 (+60 %); oracle 0.5 within 0.05 of 0.5'),
    '"oracle_validated_exponent" {"fitted": 0.636, "hi": 0.67, "lo": 0.6, "n_capped": 0, "n_points": 5, "oracle": 0.64, "predicted": 0.5} {"bound": 0, "holds_rel": 0.1, "min_points": 3, "oracle_tol": 0.05, "partly_rel": 0.35}':
        ('inconclusive', "design not in the asymptotic regime: the oracle's slope 0.64 is steeper than the theory's 0.5 by 0.14 > 0.05; what would decide it: sizes (or a target function) over which the oracle's slope comes within the tolerance of the theory's"),
    '"oracle_validated_exponent" {"fitted": 0.5, "hi": 0.55, "lo": 0.45, "n_capped": 0, "n_points": 5, "oracle": 0.4, "predicted": 0.5} {"bound": 0, "holds_rel": 0.1, "min_points": 3, "oracle_tol": 0.05, "partly_rel": 0.35}':
        ('inconclusive', "design not in the asymptotic regime: the oracle's slope 0.4 is shallower than the theory's 0.5 by 0.1 > 0.05; what would decide it: sizes (or a target function) over which the oracle's slope comes within the tolerance of the theory's"),
    '"oracle_validated_exponent" {"fitted": 0.5, "hi": 0.9, "lo": 0.1, "n_capped": 0, "n_points": 5, "oracle": 0.5, "predicted": 0.5} {"bound": 0, "holds_rel": 0.1, "min_points": 3, "oracle_tol": 0.05, "partly_rel": 0.35}':
        ('inconclusive', 'oracle 0.5 within 0.05 of 0.5, but the interval [0.1, 0.9] (width 0.8) is wider than the partly band ±35 % of 0.5: cannot discriminate'),
    '"oracle_validated_exponent" {"fitted": 0.5, "hi": 0.55, "lo": 0.45, "n_capped": 1, "n_points": 5, "oracle": 0.5, "predicted": 0.5} {"bound": 0, "holds_rel": 0.1, "min_points": 3, "oracle_tol": 0.05, "partly_rel": 0.35}':
        ('inconclusive', 'oracle 0.5 within 0.05 of 0.5, but 1 fitted run(s) hit the step cap: the exponent is budget-limited'),
    '"oracle_validated_exponent" {"fitted": 0.5, "hi": 0.55, "lo": 0.45, "n_capped": 0, "n_points": 5, "oracle": null, "predicted": 0.5} {"bound": 0, "holds_rel": 0.1, "min_points": 3, "oracle_tol": 0.05, "partly_rel": 0.35}':
        ('inconclusive', 'no oracle check of the design (missing or non-finite input: oracle)'),
    '"oracle_validated_exponent" {"fitted": null, "hi": null, "lo": null, "n_capped": 0, "n_points": 0, "oracle": 0.5, "predicted": 0.5} {"bound": 0, "holds_rel": 0.1, "min_points": 3, "oracle_tol": 0.05, "partly_rel": 0.35}':
        ('inconclusive', 'oracle 0.5 within 0.05 of 0.5, but missing or non-finite input: fitted'),
    '"oracle_validated_exponent" {"fitted": 0.95, "hi": 1.0, "lo": 0.9, "n_capped": 0, "n_points": 5, "oracle": 1.0, "predicted": 0.5} {"bound": 1, "holds_rel": 0.1, "min_points": 3, "oracle_tol": 0.05, "partly_rel": 0.35}':
        ('holds', 'fitted 0.95 vs 0.5: Δ = +0.45 (+90 %); oracle 1 ≥ 0.5 − 0.05 (the bound holds)'),
    '"oracle_validated_exponent" {"fitted": 0.4, "hi": 0.45, "lo": 0.35, "n_capped": 0, "n_points": 5, "oracle": 0.9, "predicted": 0.5} {"bound": 1, "holds_rel": 0.1, "min_points": 3, "oracle_tol": 0.05, "partly_rel": 0.35}':
        ('partly', 'fitted 0.4 vs 0.5: Δ = -0.1 (-20 %); oracle 0.9 ≥ 0.5 − 0.05 (below the bound within the partly band)'),
    '"oracle_validated_exponent" {"fitted": 0.2, "hi": 0.25, "lo": 0.15, "n_capped": 0, "n_points": 5, "oracle": 0.9, "predicted": 0.5} {"bound": 1, "holds_rel": 0.1, "min_points": 3, "oracle_tol": 0.05, "partly_rel": 0.35}':
        ('not reproduced', 'fitted 0.2 vs 0.5: Δ = -0.3 (-60 %); oracle 0.9 ≥ 0.5 − 0.05 (below the bound)'),
    '"oracle_validated_exponent" {"fitted": 0.6, "hi": 0.65, "lo": 0.55, "n_capped": 0, "n_points": 5, "oracle": 0.4, "predicted": 0.5} {"bound": 1, "holds_rel": 0.1, "min_points": 3, "oracle_tol": 0.05, "partly_rel": 0.35}':
        ('inconclusive', "design not in the asymptotic regime: the oracle's slope 0.4 is shallower than the bound 0.5 by 0.1 > 0.05; what would decide it: sizes (or a target function) over which the oracle's slope comes within the tolerance of the theory's"),
    '"oracle_validated_exponent" {"data_ratio": 0.97, "fitted": 0.98, "hi": 1.06, "lo": 0.9, "n_capped": 0, "n_points": 5, "oracle": 1.02, "predicted": 1.0} {"bound": 0, "holds_rel": 0.1, "max_data_change": 0.15, "min_points": 3, "oracle_tol": 0.05, "partly_rel": 0.35}':
        ('holds', 'fitted 0.98 vs 1: Δ = -0.02 (-2 %); oracle 1.02 within 0.05 of 1; widest model not data-limited (loss at 2n / n = 0.97)'),
    '"oracle_validated_exponent" {"data_ratio": 0.6, "fitted": 0.98, "hi": 1.06, "lo": 0.9, "n_capped": 0, "n_points": 5, "oracle": 1.02, "predicted": 1.0} {"bound": 0, "holds_rel": 0.1, "max_data_change": 0.15, "min_points": 3, "oracle_tol": 0.05, "partly_rel": 0.35}':
        ('inconclusive', 'oracle 1.02 within 0.05 of 1, but the widest model is data-limited: its loss at 2n is 0.6 × that at n (more than ±15 %)'),
    '"oracle_validated_exponent" {"data_ratio": null, "fitted": 0.98, "hi": 1.06, "lo": 0.9, "n_capped": 0, "n_points": 5, "oracle": 1.02, "predicted": 1.0} {"bound": 0, "holds_rel": 0.1, "max_data_change": 0.15, "min_points": 3, "oracle_tol": 0.05, "partly_rel": 0.35}':
        ('inconclusive', 'oracle 1.02 within 0.05 of 1, but no data-limit check (loss of the widest model at n and 2n)'),
    '"power_law_decay" {"alpha": 0.1, "hi": 0.13, "lo": 0.07, "n_capped": 4, "n_points": 4, "r2": 0.98} {"min_points": 3, "min_r2": 0.9}':
        ('inconclusive', '4 fitted run(s) hit the step cap: the slope is budget-limited'),
    '"monotone" {"se": [0.1, 0.1, 0.1], "values": [4.0, 4.5, 5.0]} {"direction": 1, "se_mult": 1}':
        ('holds', '4, 4.5, 5: overall change +1 (SE 0.14), no step clearly against'),
    '"monotone" {"se": [0.1, 0.1, 0.1], "values": [4.0, 5.5, 5.0]} {"direction": 1, "se_mult": 1}':
        ('partly', '4, 5.5, 5: overall change +1 (SE 0.14) but 1 step(s) go the other way'),
    '"monotone" {"se": [0.1, 0.1, 0.1], "values": [5.0, 4.5, 4.0]} {"direction": 1, "se_mult": 1}':
        ('not reproduced', '5, 4.5, 4: moves the other way overall (1 > SE 0.14)'),
    '"monotone" {"se": [0.2, 0.2, 0.2], "values": [4.0, 4.05, 4.1]} {"direction": 1, "se_mult": 1}':
        ('inconclusive', '4, 4.05, 4.1: overall change +0.1 within SE 0.28'),
    '"monotone" {"se": [null, null, null], "values": [4.0, 4.5, 5.0]} {"direction": 1, "se_mult": 1}':
        ('inconclusive', 'no standard errors for the values (e.g. a single ID batch): cannot tell a change from noise'),
    '"monotone" {"se": [0.1, 0.1, 0.1, 0.1], "values": [6.8, 5.8, 5.1, 4.8]} {"direction": -1, "se_mult": 1}':
        ('holds', '6.8, 5.8, 5.1, 4.8: overall change -2 (SE 0.14), no step clearly against'),
    '"monotone" {"values": [0.07, 0.2]} {"direction": 1, "need_se": false, "se_mult": 1}':
        ('holds', '0.07, 0.2: overall change +0.13 (SE 0), no step clearly against'),
    '"inner_peak" {"se": [0.2, 0.2, 0.2], "values": [3.5, 6.0, 4.0]} {"se_mult": 1}':
        ('holds', 'inner maximum 6 at position 1 vs ends 3.5, 4 (1 × combined SE to decide): above both ends beyond that'),
    '"inner_peak" {"se": [0.2, 0.2, 0.2], "values": [3.5, 6.0, 5.9]} {"se_mult": 1}':
        ('partly', 'inner maximum 6 at position 1 vs ends 3.5, 5.9 (1 × combined SE to decide): clearly above one end, tied with the other'),
    '"inner_peak" {"se": [0.1, 0.1, 0.1], "values": [3.55, 4.24, 5.0]} {"se_mult": 1}':
        ('not reproduced', 'inner maximum 4.24 at position 1 vs ends 3.55, 5 (1 × combined SE to decide): an end is clearly above every inner value'),
    '"inner_peak" {"se": [0.2, 0.2, 0.2], "values": [5.0, 5.05, 5.0]} {"se_mult": 1}':
        ('inconclusive', 'inner maximum 5.05 at position 1 vs ends 5, 5 (1 × combined SE to decide): within that of both ends'),
    '"inner_peak" {"se": [0.2, 0.2], "values": [3.5, 6.0]} {"se_mult": 1}':
        ('inconclusive', '2 value(s), some missing: need ≥ 3 finite values'),
    '"exceeds_control" {"control_se": [0.1, 0.1, 0.1], "control_values": [10.0, 10.1, 10.2], "se": [0.1, 0.1, 0.1], "values": [4.0, 4.6, 5.2]} {"direction": 1}':
        ('holds', "4, 4.6, 5.2: overall change +1.2 (2·SE 0.28), no step clearly against; the change 1.2 vs the control's 0.2 (SE 0.1414): difference +1, 1 × combined SE 0.2: beyond the control"),
    '"exceeds_control" {"control_se": [0.1, 0.1, 0.1], "control_values": [10.0, 10.0, 10.0], "se": [0.1, 0.1, 0.1], "values": [4.0, 5.6, 5.2]} {"direction": 1}':
        ('partly', "4, 5.6, 5.2: overall change +1.2 (2·SE 0.28) but 1 step(s) go the other way; the change 1.2 vs the control's 0 (SE 0.1414): difference +1.2, 1 × combined SE 0.2: beyond the control"),
    '"exceeds_control" {"control_se": [0.1, 0.1, 0.1], "control_values": [10.0, 10.1, 10.2], "se": [0.1, 0.1, 0.1], "values": [5.2, 4.6, 4.0]} {"direction": 1}':
        ('not reproduced', '5.2, 4.6, 4: moves the other way overall (1.2 > 2·SE 0.28)'),
    '"exceeds_control" {"control_se": [0.1, 0.1, 0.1, 0.1], "control_values": [11.8, 14.0, 15.4, 16.8], "se": [0.1, 0.1, 0.1, 0.1], "values": [3.98, 4.4, 4.9, 5.23]} {"direction": 1}':
        ('inconclusive', "3.98, 4.4, 4.9, 5.23: overall change +1.25 (2·SE 0.28), no step clearly against; the change 1.25 vs the control's 5 (SE 0.1414): difference -3.75, 1 × combined SE 0.2: the control meets it, so it is no evidence"),
    '"exceeds_control" {"control_se": [], "control_values": [], "se": [0.1, 0.1, 0.1], "values": [4.0, 4.6, 5.2]} {"direction": 1}':
        ('inconclusive', '4, 4.6, 5.2: overall change +1.2 (2·SE 0.28), no step clearly against; but no usable control (0 value(s), some missing: need ≥ 2 finite values)'),
    '"exceeds_control" {"control": 0.2, "control_se": 0.01, "hi": 0.44, "lo": 0.36, "n_capped": 0, "n_points": 4, "value": 0.4} {"min_points": 3, "z": 1.96}':
        ('holds', "0.4 (SE 0.02041); it 0.4 vs the control's 0.2 (SE 0.01): difference +0.2, 1.96 × combined SE 0.045: beyond the control"),
    '"exceeds_control" {"control": 0.2, "control_se": 0.01, "hi": 0.12, "lo": 0.08, "n_capped": 0, "n_points": 4, "value": 0.1} {"min_points": 3, "z": 1.96}':
        ('not reproduced', "it 0.1 vs the control's 0.2 (SE 0.01): difference -0.1, 1.96 × combined SE 0.028: clearly below the control"),
    '"exceeds_control" {"control": 0.2, "control_se": 0.01, "hi": 0.27, "lo": 0.15, "n_capped": 0, "n_points": 4, "value": 0.21} {"min_points": 3, "z": 1.96}':
        ('inconclusive', "0.21 (SE 0.03061); it 0.21 vs the control's 0.2 (SE 0.01): difference +0.01, 1.96 × combined SE 0.063: the control meets it, so it is no evidence"),
    '"exceeds_control" {"control": 0.2, "hi": 0.44, "lo": 0.36, "n_capped": 4, "n_points": 4, "value": 0.4} {"min_points": 3, "z": 1.96}':
        ('inconclusive', '4 fitted run(s) hit the step cap: the measurement is budget-limited'),
    '"inner_peak" {"control_se": [0.2, 0.2, 0.2], "control_values": [3.0, 3.1, 3.0], "se": [0.2, 0.2, 0.2], "values": [3.5, 6.0, 4.0]} {"control": true, "se_mult": 1}':
        ('holds', 'inner maximum 6 at position 1 vs ends 3.5, 4 (1 × combined SE to decide): above both ends beyond that; the untrained control does not peak (inner maximum 3.1 at position 1 vs ends 3, 3 (1 × combined SE to decide): within that of both ends)'),
    '"inner_peak" {"control_se": [0.2, 0.2, 0.2], "control_values": [3.0, 3.1, 3.0], "se": [0.2, 0.2, 0.2], "values": [3.5, 6.0, 5.9]} {"control": true, "se_mult": 1}':
        ('partly', 'inner maximum 6 at position 1 vs ends 3.5, 5.9 (1 × combined SE to decide): clearly above one end, tied with the other; the untrained control does not peak (inner maximum 3.1 at position 1 vs ends 3, 3 (1 × combined SE to decide): within that of both ends)'),
    '"inner_peak" {"control_se": [0.2, 0.2, 0.2], "control_values": [3.0, 5.0, 3.0], "se": [0.2, 0.2, 0.2], "values": [3.5, 6.0, 4.0]} {"control": true, "se_mult": 1}':
        ('inconclusive', 'inner maximum 6 at position 1 vs ends 3.5, 4 (1 × combined SE to decide): above both ends beyond that; but the untrained control peaks too (inner maximum 5 at position 1 vs ends 3, 3 (1 × combined SE to decide): above both ends beyond that): no evidence'),
    '"inner_peak" {"se": [0.2, 0.2, 0.2], "values": [3.5, 6.0, 4.0]} {"control": true, "se_mult": 1}':
        ('inconclusive', 'inner maximum 6 at position 1 vs ends 3.5, 4 (1 × combined SE to decide): above both ends beyond that; but no usable control (0 value(s), some missing: need ≥ 3 finite values)'),
    '"inner_peak" {"control_se": [0.1, 0.1, 0.1], "control_values": [3.0, 5.0, 3.0], "se": [0.1, 0.1, 0.1], "values": [3.55, 4.24, 5.0]} {"control": true, "se_mult": 1}':
        ('not reproduced', 'inner maximum 4.24 at position 1 vs ends 3.55, 5 (1 × combined SE to decide): an end is clearly above every inner value'),
    '"exponent_match" {"control_predicted": 0.06, "fitted": 0.19, "hi": 0.21, "lo": 0.17, "n_capped": 0, "n_points": 5, "predicted": 0.184} {"control": true, "holds_rel": 0.1, "min_points": 3, "partly_rel": 0.35}':
        ('holds', "fitted 0.19 vs predicted 0.184: Δ = +0.006 (3 %); the untrained copy's ID predicts 0.06, partly band [0.039, 0.081]: the fitted interval misses it"),
    '"exponent_match" {"control_predicted": 0.2, "fitted": 0.19, "hi": 0.21, "lo": 0.17, "n_capped": 0, "n_points": 5, "predicted": 0.184} {"control": true, "holds_rel": 0.1, "min_points": 3, "partly_rel": 0.35}':
        ('inconclusive', "fitted 0.19 vs predicted 0.184: Δ = +0.006 (3 %); but the untrained copy's ID predicts 0.2, partly band [0.13, 0.27], which holds the fitted exponent: no evidence"),
    '"exponent_match" {"fitted": 0.19, "hi": 0.21, "lo": 0.17, "n_capped": 0, "n_points": 5, "predicted": 0.184} {"control": true, "holds_rel": 0.1, "min_points": 3, "partly_rel": 0.35}':
        ('inconclusive', "fitted 0.19 vs predicted 0.184: Δ = +0.006 (3 %); but no trivial control was measured (an untrained copy's ID)"),
    '"exponent_match" {"control_predicted": 0.02, "fitted": 0.19, "hi": 0.21, "lo": 0.17, "n_capped": 0, "n_points": 5, "predicted": 0.25} {"control": true, "holds_rel": 0.1, "min_points": 3, "partly_rel": 0.35}':
        ('partly', "fitted 0.19 vs predicted 0.25: Δ = -0.06 (24 %); the untrained copy's ID predicts 0.02, partly band [0.013, 0.027]: the fitted interval misses it"),
    '"exponent_match" {"control_predicted": 0.14, "fitted": 0.19, "hi": 0.21, "lo": 0.17, "n_capped": 0, "n_points": 5, "predicted": 0.184} {"control": true, "holds_rel": 0.1, "min_points": 3, "partly_rel": 0.35}':
        ('inconclusive', "fitted 0.19 vs predicted 0.184: Δ = +0.006 (3 %); but the untrained copy's ID predicts 0.14, partly band [0.091, 0.189], which overlaps the fitted interval: no evidence"),
    '"exponent_match" {"control_predicted": 0.1, "fitted": 0.105, "hi": 0.135, "lo": 0.075, "n_capped": 0, "n_points": 5, "predicted": 0.184} {"control": true, "holds_rel": 0.1, "min_points": 3, "partly_rel": 0.35}':
        ('not reproduced', 'fitted 0.105 vs predicted 0.184: Δ = -0.079 (43 %)'),
}

RULE_TEXTS = {
    '"exponent_match" {"control": true, "holds_rel": 0.1, "min_points": 3, "partly_rel": 0.35}':
        "holds if |fitted − predicted| ≤ 10 % of the prediction (x), partly if ≤ 35 %; inconclusive if the fitted exponent's interval is wider than the partly band (2 × 35 % of the prediction), the fit has fewer than 3 points, or any fitted run hit its step cap; a holds or partly stands only if the fitted exponent's interval lies wholly outside the partly band (±35 %) of the prediction from the trivial control's ID (an untrained copy of the measuring network, embedded the same way) — if it does not, or the control was not measured, inconclusive: the agreement is no evidence",
    '"not_at_this_scale" {}':
        "not judged at this scale: the run cannot reach the regime the claim is about (the reason says what it needs and the command that would judge it); listed apart from the paper claims' counts",
    '"model_rate" {"fraction": 0.8}':
        "inconclusive unless the positive control (a ReLU MLP) reaches ≥ 0.8 × its known rate in the same design (the harness does not reach the known rate) and a width passes the data check (its MSE falls by at most 10 % with twice the samples; wider widths that fail are left out of the fit); then holds if the deciding interval's lower end ≥ 0.8 × x and the untrained networks' interval lies wholly below it (a trivial model must fail the claim); not reproduced if its upper end < 0.8 × x; inconclusive otherwise (the interval straddles the threshold, or fewer than 3 widths were fitted)",
    '"at_least" {"complement": 1, "holds": 0.999, "partly": 0.99}':
        'holds if x ≥ 0.999, partly if ≥ 0.99; inconclusive if the measurement is missing or covers no item',
    '"at_least" {"complement": 1, "control_margin": 0.1, "holds": 0.95, "partly": 0.8}':
        'holds if x ≥ 0.95, partly if ≥ 0.8; a holds/partly verdict is inconclusive unless x beats every control measured in the same run (uniform or random attention, an untrained model) by at least 0.1: a trivial model must fail the claim; inconclusive if the measurement is missing or covers no item',
    '"at_least" {"holds": 0.999, "min_n": 10}':
        'holds if x ≥ 0.999; inconclusive if the measurement is missing or covers fewer than 10 items',
    '"at_most" {"holds": 0.001, "partly": 0.05}':
        'holds if x ≤ 0.001, partly if ≤ 0.05; inconclusive if the measurement is missing or covers no item',
    '"count" {"holds": 1.0, "partly": 0.5}':
        'holds if x in at least 100 % of the cases, partly if in at least 50 %; inconclusive if there is no case',
    '"count" {"chance": 0.5, "holds": 0.75, "partly": 0.55}':
        'holds if x in at least 75 % of the cases, partly if in at least 55 %; inconclusive if there is no case, or if a one-sided binomial test does not reject chance (50 % of cases by luck) at 5 % (a holds/partly count must beat chance)',
    '"errors_at_most" {"holds_mean": 0.1, "holds_worst": 0.15, "partly_mean": 0.2}':
        'holds if the mean x ≤ 0.1 and the worst ≤ 0.15, partly if the mean ≤ 0.2; inconclusive without cases',
    '"set_match" {}':
        'holds if the x found equal the expected ones exactly, partly if at least half are found; inconclusive if none is expected',
    '"exp_decay" {"min_r2": 0.9}':
        'holds if x decays exponentially at a fitted rate ≥ the reference rate with R² ≥ 0.9, partly if it decays (rate > 0) but slower or less cleanly; not reproduced if it does not decay; inconclusive without a fit',
    '"exp_vs_power" {"min_decades": 1.0, "min_points": 10, "min_r2": 0.99}':
        'on the last decade of steps, log(x) is fitted linearly in t (exponential: linear convergence) and in log t (power law); with D = log10((1 − R²_power)/(1 − R²_exp)) (decades by which the exponential leaves less unexplained variance): holds if the gap decays, D ≥ 1 and R²_exp ≥ 0.99; partly if D ≥ 1 with a lower R²_exp; not reproduced if the gap does not decay or the power law wins by as much (D ≤ −1); inconclusive when neither shape wins clearly or with fewer than 10 points',
    '"direction_rate" {"min_cosine": 0.99, "slack": 0.1}':
        "holds if 1 − cos is at floating-point zero, or the final cosine ≥ 0.99 and the local log-log slope of 1 − cos over the last decade of steps is at most the theory's (x) + 0.1; partly if 1 − cos falls (slope < −0.1) but slower or not yet close; not reproduced if it does not fall; inconclusive without a slope",
    '"power_law_decay" {"min_points": 3, "min_r2": 0.9}':
        "holds if the 95 % interval of the fitted exponent of x excludes 0 (decay) and R² (log) ≥ 0.9; partly if it excludes 0 with a lower R²; not reproduced if it lies below 0 (the loss grows); inconclusive with fewer than 3 points, an interval containing 0 or any fitted run stopped by its step cap (the slope is then the budget's, not the law's)",
    '"exponent_match" {"holds_rel": 0.1, "min_points": 3, "partly_rel": 0.35}':
        "holds if |fitted − predicted| ≤ 10 % of the prediction (x), partly if ≤ 35 %; inconclusive if the fitted exponent's interval is wider than the partly band (2 × 35 % of the prediction), the fit has fewer than 3 points, or any fitted run hit its step cap",
    '"attention_bound" {"min_clearance": 0.1}':
        "not reproduced if the final minimum attention on optimal tokens is below the theorem's bound 1/(1 + L_max·exp(−C1 t)); inconclusive if the bound does not clear the uniform-attention baseline of the same sentences (the control: W_kq = 0, no training) by at least 0.1 (a bound that uniform attention nearly meets says nothing); otherwise holds if the attention gap decays at a fitted rate ≥ C1, partly if not",
    '"intervals_agree" {"max_spread": 0.05}':
        'holds if the 95 % intervals of x overlap and the point estimates lie within 0.05; partly if only one of the two holds; not reproduced if neither; inconclusive with fewer than 2 intervals or when overlapping intervals include one wider than the tolerance 0.05 (overlap of wide intervals cannot show agreement within the tolerance)',
    '"unjudgeable" {}':
        'inconclusive: the numbers this claim needs are not available (the reason says why)',
    '"oracle_validated_exponent" {"bound": 0, "holds_rel": 0.1, "min_points": 3, "oracle_tol": 0.05, "partly_rel": 0.35}':
        "inconclusive unless the oracle's slope lies within ±0.05 of the theory's exponent (x) — design not in the asymptotic regime; then holds if |fitted − theory| ≤ 10 % of the theory, partly if ≤ 35 %, not reproduced beyond; inconclusive if the fitted interval is wider than 2 × 35 % of the theory, the fit has fewer than 3 points or a fitted run hit its step cap",
    '"oracle_validated_exponent" {"bound": 1, "holds_rel": 0.1, "min_points": 3, "oracle_tol": 0.05, "partly_rel": 0.35}':
        "bound form (noiseless regime): inconclusive if the oracle's slope is below the theory's exponent (x) by more than 0.05 (the design cannot show the bound); otherwise holds if the fitted exponent ≥ (1 − 10 %) × theory, partly if ≥ (1 − 35 %) × theory, not reproduced below; inconclusive if its interval is wider than 2 × 35 % of the theory, the fit has fewer than 3 points or a fitted run hit its step cap",
    '"oracle_validated_exponent" {"bound": 0, "holds_rel": 0.1, "max_data_change": 0.15, "min_points": 3, "oracle_tol": 0.05, "partly_rel": 0.35}':
        "inconclusive unless the oracle's slope lies within ±0.05 of the theory's exponent (x) — design not in the asymptotic regime; then holds if |fitted − theory| ≤ 10 % of the theory, partly if ≤ 35 %, not reproduced beyond; inconclusive if the fitted interval is wider than 2 × 35 % of the theory, the fit has fewer than 3 points or a fitted run hit its step cap; inconclusive if the widest model is data-limited (its loss at 2n differs from that at n by more than 15 %)",
    '"monotone" {"direction": 1, "se_mult": 1}':
        'holds if x rises from the first to the last value by more than their combined standard error and no step goes clearly (beyond its standard error) the other way; partly if it does so overall but some step goes clearly the other way; not reproduced if it moves clearly the other way overall; inconclusive if the overall change is within the standard error (or there are fewer than 2 values or no standard errors)',
    '"monotone" {"direction": -1, "se_mult": 1}':
        'holds if x falls from the first to the last value by more than their combined standard error and no step goes clearly (beyond its standard error) the other way; partly if it does so overall but some step goes clearly the other way; not reproduced if it moves clearly the other way overall; inconclusive if the overall change is within the standard error (or there are fewer than 2 values or no standard errors)',
    '"monotone" {"direction": 1, "need_se": false, "se_mult": 1}':
        'holds if x rises from the first to the last value by more than their combined standard error and no step goes clearly (beyond its standard error) the other way; partly if it does so overall but some step goes clearly the other way; not reproduced if it moves clearly the other way overall; inconclusive if the overall change is within the standard error (or there are fewer than 2 values or no standard errors)',
    '"inner_peak" {"control": true, "se_mult": 1}':
        'with k = 1: holds if an inner x exceeds both the first and the last by more than k × their combined standard error; partly if it clearly exceeds one end and ties the other (within k × the standard error); not reproduced if an end clearly exceeds every inner value; inconclusive otherwise (ties at both ends, fewer than 3 values, no standard errors); a holds or partly stands only if the trivial control measured the same way (untrained copies) does not peak by the same test — if it does, or was not measured, inconclusive: the peak is no evidence',
    '"inner_peak" {"se_mult": 1}':
        'with k = 1: holds if an inner x exceeds both the first and the last by more than k × their combined standard error; partly if it clearly exceeds one end and ties the other (within k × the standard error); not reproduced if an end clearly exceeds every inner value; inconclusive otherwise (ties at both ends, fewer than 3 values, no standard errors)',
    '"exceeds_control" {"direction": 1}':
        "judged as the monotone rule first (x rises, beyond 2 × the combined standard error); then it holds (or stays partly) only if its overall change, first to last value, exceeds the control's (untrained copies measured the same way) by more than 1 × their combined standard error, otherwise inconclusive: the control meets it; inconclusive too when inputs are missing or a fitted run hit its step cap",
    '"exceeds_control" {"min_points": 3, "z": 1.96}':
        "holds if x exceeds the control by more than 1.96 × their combined standard error (a 95 % interval gives the value's), not reproduced if it lies that far below, inconclusive in between; inconclusive too when inputs are missing or a fitted run hit its step cap, or the fit has fewer than 3 points",
}


def test_the_tables_cover_every_rule_of_the_cases():
    covered = {json.loads(k.split(" ", 1)[0]) for k in REASONS}
    assert covered == {rule for rule, *_ in CASES}


@pytest.mark.parametrize("rule, measured, thresholds, expected", CASES)
def test_reason_and_rule_text_word_for_word(rule, measured, thresholds, expected):
    k = _key(rule, measured, thresholds)
    if k not in REASONS:
        pytest.skip("a case without a pinned text")
    verdict, reason, text = judge(rule, measured, thresholds, "x")
    assert (verdict, reason) == REASONS[k]
    assert text == RULE_TEXTS[_key(rule, thresholds)]


@pytest.fixture
def scratch_rules():
    """Rules registered by a test under scratch names, removed afterwards."""
    from ttlab.reproduce.verdict_base import RULES

    before = set(RULES)
    yield RULES
    for name in set(RULES) - before:
        del RULES[name]


def test_threshold_rules_registered_afresh_judge_and_describe_as_the_built_in_ones(scratch_rules):
    """``at_least``/``at_most`` are built at import; building them again under new names (the same code path)
    must give the same verdicts, reasons and rule texts, word for word."""
    from ttlab.reproduce.rules_thresholds import threshold_rule
    from ttlab.reproduce.verdict_base import Rule

    threshold_rule("scratch_at_least", +1)
    threshold_rule("scratch_at_most", -1)
    checked = 0
    for rule, measured, thresholds, _ in CASES:
        if rule not in ("at_least", "at_most") or _key(rule, measured, thresholds) not in REASONS:
            continue
        verdict, reason, text = judge(f"scratch_{rule}", measured, thresholds, "x")
        assert (verdict, reason) == REASONS[_key(rule, measured, thresholds)]
        assert text == RULE_TEXTS[_key(rule, thresholds)]
        checked += 1
    assert checked >= 13
    r = scratch_rules["scratch_at_least"]
    assert isinstance(r, Rule) and r.name == "scratch_at_least"
    assert r.outcomes == ("holds", "partly", "not reproduced", "inconclusive")
    # the slack-free edges: a value equal to a threshold meets it
    assert judge("scratch_at_least", {"value": 0.999}, {"holds": 0.999, "partly": 0.99})[0] == "holds"
    assert judge("scratch_at_least", {"value": 0.99}, {"holds": 0.999, "partly": 0.99})[0] == "partly"
    assert judge("scratch_at_most", {"value": 1e-3}, {"holds": 1e-3, "partly": 0.05})[0] == "holds"
    assert judge("scratch_at_most", {"value": 0.05}, {"holds": 1e-3, "partly": 0.05})[0] == "partly"
    # without a partly threshold: holds or not reproduced, and the reason names the holds threshold
    assert judge("scratch_at_least", {"value": 0.5}, {"holds": 0.9})[:2] == ("not reproduced", "the measured value = 0.5 < 0.9")
    assert judge("scratch_at_most", {"value": 2.0}, {"holds": 1.0}, "x")[:2] == ("not reproduced", "x = 2 > 1")
    assert judge("scratch_at_most", {"value": 1.0}, {"holds": 1.0}, "x")[2] == (
        "holds if x ≤ 1; inconclusive if the measurement is missing or covers no item")
    # min_n: n below it is inconclusive, n equal to it is judged; min_n defaults to 1
    assert judge("scratch_at_least", {"value": 1.0, "n": 10}, {"holds": 0.9, "min_n": 10})[0] == "holds"
    assert judge("scratch_at_least", {"value": 1.0, "n": 9}, {"holds": 0.9, "min_n": 10})[:2] == (
        "inconclusive", "only 9 item(s) to judge (need ≥ 10)")
    assert judge("scratch_at_least", {"value": 1.0, "n": 1}, {"holds": 0.9})[0] == "holds"
    assert judge("scratch_at_least", {"value": 1.0, "n": 0}, {"holds": 0.9})[:2] == (
        "inconclusive", "only 0 item(s) to judge (need ≥ 1)")
    assert judge("scratch_at_least", {"value": 1.0, "n": None}, {"holds": 0.9})[0] == "inconclusive"
    assert judge("scratch_at_least", {"value": 1.0, "n": 2}, {"holds": 0.9, "min_n": 2}, "x")[2] == (
        "holds if x ≥ 0.9; inconclusive if the measurement is missing or covers fewer than 2 items")


def test_a_registered_rule_is_stored_with_its_parts(scratch_rules):
    from ttlab.reproduce.verdict_base import Rule
    from ttlab.reproduce.verdict_base import register_rule as _rule

    def describe(th, q):
        return f"scratch rule on {q}"

    def fn(m, th, q):
        return ("holds", "ok")

    assert _rule("scratch_rule", ["holds", "inconclusive"], describe)(fn) is fn
    assert scratch_rules["scratch_rule"] == Rule(name="scratch_rule", outcomes=("holds", "inconclusive"), judge=fn,
                                                 describe=describe)
    assert judge("scratch_rule", {}, {}, "y") == ("holds", "ok", "scratch rule on y")


def test_missing_claim_record_and_unknown_verdicts_in_counts():
    from ttlab.reproduce.verdicts import count_by_kind, missing_claim

    c = missing_claim("x.z", "Another claim", "the sweep was not run", kind="paper")
    assert (c["statement"], c["cite"], c["summary"], c["verdict"]) == (
        "Another claim", "", "not measured: the sweep was not run", "inconclusive")
    assert c["measured"] == {"why": "the sweep was not run"} and c["reason"] == "the sweep was not run"
    assert missing_claim("x.z", "A", "why", kind="paper", cite="Theorem 2")["cite"] == "Theorem 2"
    # a verdict outside VERDICTS (a future or foreign record) is counted, not dropped
    by = count_by_kind([{"kind": "paper", "verdict": "odd"}, {"kind": "paper", "verdict": "odd"}])
    assert by["paper"]["odd"] == 2


@pytest.mark.parametrize("direction, way, verdict", [(1, "rises", "holds"), (0, "falls", "not reproduced"),
                                                     (-1, "falls", "not reproduced")])
def test_monotone_text_and_judgement_read_the_direction_alike(direction, way, verdict):
    v, _, text = judge("monotone", {"values": [4.0, 4.5, 5.0], "se": [0.1] * 3}, {"direction": direction}, "x")
    assert text.startswith(f"holds if x {way} from the first to the last value")
    assert v == verdict


def test_oracle_rule_text_with_large_tolerances_and_default_min_points():
    th = {"oracle_tol": 0.05, "holds_rel": 0.9, "partly_rel": 0.95, "max_data_change": 0.7}
    assert judge("oracle_validated_exponent", {}, th, "x")[2] == (
        "inconclusive unless the oracle's slope lies within ±0.05 of the theory's exponent (x) — design not in the "
        "asymptotic regime; then holds if |fitted − theory| ≤ 90 % of the theory, partly if ≤ 95 %, not reproduced "
        "beyond; inconclusive if the fitted interval is wider than 2 × 95 % of the theory, the fit has fewer than 2 "
        "points or a fitted run hit its step cap; inconclusive if the widest model is data-limited (its loss at 2n "
        "differs from that at n by more than 70 %)")
    assert judge("oracle_validated_exponent", {}, {**th, "bound": 1}, "x")[2] == (
        "bound form (noiseless regime): inconclusive if the oracle's slope is below the theory's exponent (x) by more "
        "than 0.05 (the design cannot show the bound); otherwise holds if the fitted exponent ≥ (1 − 90 %) × theory, "
        "partly if ≥ (1 − 95 %) × theory, not reproduced below; inconclusive if its interval is wider than 2 × 95 % "
        "of the theory, the fit has fewer than 2 points or a fitted run hit its step cap; inconclusive if the widest "
        "model is data-limited (its loss at 2n differs from that at n by more than 70 %)")


def test_claim_record_defaults_and_kind_error():
    from ttlab.reproduce.verdicts import make_claim, rejudge

    c = make_claim("x.y", "S", "at_least", {"value": 0.5}, {"holds": 0.9}, kind="check")
    assert (c["cite"], c["summary"], c["quantity"]) == ("", "", "the measured value")
    assert c["reason"] == "the measured value = 0.5 < 0.9"
    assert set(c) == {"id", "statement", "kind", "cite", "rule_id", "quantity", "measured", "thresholds", "summary",
                      "verdict", "reason", "rule", "margin", "near_threshold"}
    # margin: |0.5 − 0.9| / 0.9; near_threshold only below 10 % (0.95 is 5.6 % from 0.9)
    assert c["margin"] == pytest.approx(0.4 / 0.9) and c["near_threshold"] is False
    near = make_claim("x.y", "S", "at_least", {"value": 0.95}, {"holds": 0.9}, kind="check")
    assert near["margin"] == pytest.approx(0.05 / 0.9) and near["near_threshold"] is True
    u = make_claim("x.y", "S", "unjudgeable", {"why": "w"}, None, kind="check")
    assert u["thresholds"] == {} and (u["margin"], u["near_threshold"]) == (None, False)
    with pytest.raises(ValueError) as info:
        make_claim("x.w", "No kind", "at_least", {"value": 1.0}, {"holds": 0.5}, kind="claim")
    assert str(info.value) == "claim x.w: kind must be one of paper, check, ablation, got 'claim'"
    # an older record without a quantity is rejudged with the default wording
    old = {k: v for k, v in c.items() if k != "quantity"}
    assert rejudge({**old, "measured": {"value": 0.95}})["reason"] == "the measured value = 0.95 ≥ 0.9"
    assert rejudge({**c, "quantity": "cos"})["reason"] == "cos = 0.5 < 0.9"


def test_edges_of_the_shared_checks():
    th = {"holds_rel": 0.9, "partly_rel": 0.95}
    # a boolean is not a number
    assert judge("at_least", {"value": True}, {"holds": 0.5})[:2] == ("inconclusive", "missing or non-finite input: value")
    # count text at other thresholds
    assert judge("count", {"passed": 1, "total": 1}, {"holds": 0.5, "partly": 0.95}, "x")[2] == (
        "holds if x in at least 50 % of the cases, partly if in at least 95 %; inconclusive if there is no case")
    assert judge("exponent_match", {"fitted": 1.0, "predicted": 1.0}, th, "x")[2] == (
        "holds if |fitted − predicted| ≤ 90 % of the prediction (x), partly if ≤ 95 %; inconclusive if the fitted "
        "exponent's interval is wider than the partly band (2 × 95 % of the prediction)")
    base = {"fitted": 1.0, "predicted": 1.0}
    tight = {"holds_rel": 0.1, "partly_rel": 0.3}
    # min_points defaults to 2: two points are judged; no step-capped run is no problem
    assert judge("exponent_match", {**base, "n_points": 2, "n_capped": 0}, tight)[0] == "holds"
    # an interval needs both ends, whichever is given
    assert judge("exponent_match", {**base, "hi": 1.1}, tight)[:2] == (
        "inconclusive", "no interval for the fitted exponent (missing or non-finite input: lo)")
    assert judge("exponent_match", {**base, "lo": 0.9, "hi": None}, tight)[1] == (
        "no interval for the fitted exponent (missing or non-finite input: hi)")
    # an interval exactly as wide as the partly band is judged; a wider one is not
    assert judge("exponent_match", {**base, "lo": 0.75, "hi": 1.25}, {"holds_rel": 0.1, "partly_rel": 0.25})[0] == "holds"
    wide = judge("exponent_match", {**base, "lo": 0.5, "hi": 1.6}, {"holds_rel": 0.1, "partly_rel": 0.5})
    assert wide[:2] == ("inconclusive", "the interval [0.5, 1.6] (width 1.1) is wider than the partly band ±50 % of 1: "
                                        "cannot discriminate")
    assert judge("exponent_match", {**base, "lo": -0.5, "hi": 1.5}, {"holds_rel": 0.1, "partly_rel": 0.9})[1] == (
        "the interval [-0.5, 1.5] (width 2) is wider than the partly band ±90 % of 1: cannot discriminate")
    # between 2 and 3 partly bands: still too wide
    assert judge("exponent_match", {**base, "lo": 0.5, "hi": 1.5}, {"holds_rel": 0.1, "partly_rel": 0.2})[0] == "inconclusive"
    assert judge("exponent_match", {**base, "lo": 0.5, "hi": 1.5}, {"holds_rel": 0.1, "partly_rel": 0.91})[1].endswith(
        "(0 %)")
    # a peak without standard errors cannot be told from noise
    assert judge("inner_peak", {"values": [1.0, 5.0, 1.0]}, {})[:2] == (
        "inconclusive", "no standard errors for the values (e.g. a single ID batch): cannot tell a peak from noise")


def test_judge_errors_and_default_quantity():
    assert judge("at_least", {"value": 0.5}, {"holds": 0.9})[1] == "the measured value = 0.5 < 0.9"
    with pytest.raises(KeyError) as info:
        judge("no_such_rule", {}, {})
    assert info.value.args[0].startswith("unknown verdict rule 'no_such_rule'; known: at_least, at_most, ")


def test_a_rule_outside_its_declared_outcomes_is_refused(scratch_rules):
    from ttlab.reproduce.verdict_base import register_rule as _rule

    _rule("scratch_liar", ["holds"], lambda th, q: "")(lambda m, th, q: ("partly", "no"))
    with pytest.raises(AssertionError) as info:
        judge("scratch_liar", {}, {})
    assert str(info.value) == "rule scratch_liar gave undeclared verdict 'partly'"


def test_control_chance_and_oracle_texts_at_their_edges():
    th = {"holds": 0.9, "control_margin": 0.1}
    head = "x = 0.95 ≥ 0.9, but the "
    tail = " missing: cannot tell it from a trivial model"
    for controls, who in (({}, "controls (none given) are"), ([0.1], "controls (none given) are"),
                          ({"u": None}, "control u is"), ({"b": None, "a": None, "c": 0.1}, "controls a, b are")):
        assert judge("at_least", {"value": 0.95, "controls": controls}, th, "x")[:2] == ("inconclusive", head + who + tail)
    assert judge("count", {"passed": 1, "total": 1}, {"holds": 0.5, "partly": 0.3, "chance": 0.9}, "x")[2].endswith(
        "does not reject chance (90 % of cases by luck) at 5 % (a holds/partly count must beat chance)")
    for direction in (-1, 0):
        assert judge("exceeds_control", {}, {"direction": direction}, "x")[2].startswith(
            "judged as the monotone rule first (x falls, beyond 2 × the combined standard error); then it holds")
    assert judge("exceeds_control", {}, {}, "x")[2].endswith("or the fit has fewer than 2 points")
    assert judge("exp_vs_power", {}, {"min_decades": 1.0, "min_r2": 0.99}, "x")[2].endswith(
        "inconclusive when neither shape wins clearly or with fewer than 10 points")
    o = {"oracle_tol": 0.05, "holds_rel": 0.1, "partly_rel": 0.35, "min_points": 3}
    assert judge("oracle_validated_exponent", {"fitted": 0.5, "oracle": 0.5}, o)[:2] == (
        "inconclusive", "no oracle check of the design (missing or non-finite input: predicted)")
    assert judge("oracle_validated_exponent", {"fitted": 0.5, "oracle": 0.0, "predicted": 0.0}, o)[:2] == (
        "inconclusive", "the prediction is not positive: no relative tolerance")
    m = {"fitted": 0.98, "lo": 0.9, "hi": 1.06, "n_points": 5, "n_capped": 0, "oracle": 1.0, "predicted": 1.0,
         "data_ratio": 0.2}
    assert judge("oracle_validated_exponent", m, {**o, "max_data_change": 0.7})[1] == (
        "oracle 1 within 0.05 of 1, but the widest model is data-limited: its loss at 2n is 0.2 × that at n (more than "
        "±70 %)")
    # the control's SE is its own (0 when not given), never taken from the value's interval
    assert judge("exceeds_control", {"value": 0.4, "lo": 0.36, "hi": 0.44, "control": 0.2, "n_points": 4,
                                     "n_capped": 0}, {"z": 1.96, "min_points": 3})[:2] == (
        "holds", "0.4 (SE 0.02041); it 0.4 vs the control's 0.2 (SE 0): difference +0.2, 1.96 × combined SE 0.04: "
                 "beyond the control")


def test_exp_vs_power_text_reads_min_points_and_assess_defaults_its_quantity():
    from ttlab.reproduce.verdicts import assess

    assert judge("exp_vs_power", {}, {"min_decades": 1.0, "min_r2": 0.99, "min_points": 12}, "x")[2].endswith(
        "with fewer than 12 points")
    a = assess("at_least", {"value": 0.5}, {"holds": 0.9})
    assert a["reason"] == "the measured value = 0.5 < 0.9" and a["rule"].startswith("holds if the measured value ≥ 0.9")
