"""Shape rules on pure noise: ``monotone`` and ``inner_peak`` at their defaults decide ("holds", "partly" or "not
reproduced") at most 5 % of the time on profiles whose true values are equal; a 1-SE rule decides far more often.
And the defaults' edges: 2 combined standard errors for a trend, max(2, Bonferroni) for a peak."""

from __future__ import annotations

import numpy as np
import pytest

from ttlab.reproduce.rules_shapes import PEAK_FALSE_RATE, peak_se_mult
from ttlab.reproduce.verdict_base import HOLDS, INCONCLUSIVE, RULES, SHAPE_SE_MULT
from ttlab.reproduce.verdicts import make_claim

TRIALS = 3000


def _decision_rate(rule: str, n: int, thresholds: dict, seed: int) -> float:
    rng = np.random.default_rng(seed)
    se = [0.1] * n
    decided = 0
    for _ in range(TRIALS):
        vals = list(5.0 + 0.1 * rng.standard_normal(n))
        decided += RULES[rule].judge({"values": vals, "se": se}, thresholds, "x")[0] != INCONCLUSIVE
    return decided / TRIALS


@pytest.mark.parametrize("n", [2, 4, 8])
def test_monotone_decides_rarely_on_noise(n: int) -> None:
    assert SHAPE_SE_MULT == 2.0
    assert _decision_rate("monotone", n, {"direction": 1}, n) <= 0.05 + 0.012  # 2 SE: ≈ 4.6 % (+ 3 binomial SE)
    assert _decision_rate("monotone", n, {"direction": 1, "se_mult": 1}, n) > 0.25  # 1 SE: about a third


@pytest.mark.parametrize("n", [3, 5, 19])
def test_inner_peak_decides_rarely_on_noise(n: int) -> None:
    assert _decision_rate("inner_peak", n, {}, 10 + n) <= PEAK_FALSE_RATE + 0.012
    assert _decision_rate("inner_peak", n, {"se_mult": 1}, 10 + n) > 0.15  # the old 1-SE rule


def test_peak_multiplier_is_bonferroni_over_the_inner_candidates() -> None:
    assert peak_se_mult(2) == SHAPE_SE_MULT  # 2 comparisons: z(0.975) = 1.96 < 2
    assert peak_se_mult(3) == pytest.approx(2.2414, abs=1e-3)  # 4 comparisons: z(1 − 0.05/4)
    assert peak_se_mult(19) == pytest.approx(2.9913, abs=1e-3)  # 36 comparisons: z(1 − 0.05/36)


def test_defaults_decide_only_beyond_two_standard_errors() -> None:
    trend = {"values": [1.0, 1.5], "se": [0.2, 0.2]}  # change 0.5: > 1 SE (0.28), < 2 SE (0.57)
    assert RULES["monotone"].judge(trend, {"direction": 1, "se_mult": 1}, "x")[0] == HOLDS
    assert RULES["monotone"].judge(trend, {"direction": 1}, "x")[0] == INCONCLUSIVE
    assert RULES["monotone"].judge({**trend, "values": [1.0, 1.6]}, {"direction": 1}, "x")[0] == HOLDS  # 0.6 > 0.57
    peak = {"values": [1.0, 1.6, 1.0], "se": [0.2, 0.2, 0.2]}  # 0.6: > 2 SE (0.57), < 2.24 SE (0.634)
    assert RULES["inner_peak"].judge(peak, {"se_mult": 1}, "x")[0] == HOLDS
    assert RULES["inner_peak"].judge(peak, {"se_mult": 2}, "x")[0] == HOLDS
    assert RULES["inner_peak"].judge(peak, {}, "x")[0] == INCONCLUSIVE
    assert RULES["inner_peak"].judge({**peak, "values": [1.0, 1.65, 1.0]}, {}, "x")[0] == HOLDS
    text = make_claim("x", "s", "inner_peak", peak, {}, kind="check")["rule"]
    assert "k = max(2, the Bonferroni z of 2·(n − 1)" in text and "2.24 for 3 values, 2.99 for 19" in text
