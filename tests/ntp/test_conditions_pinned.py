"""The theorems' preconditions and the stage-2 helpers on fixed numbers, each computed here by hand
(issue 21, item 5: fast tests for the mutation-testing suite, docs/mutation.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ttlab.ntp.diagnostics import (
    RESOLVABLE_ATTENTION_GAP,
    attention_bound,
    fit_exp_vs_power,
    proposition1_conditions,
    resolvable_until,
    smallest_t,
    steps_to_clear,
    theorem1_conditions,
    theorem2_conditions,
)


def _largest_root(coef: float, power: int) -> float:
    """The largest root of t = coef·log^power t, by bisection (independent of ``smallest_t``)."""
    lo, hi = max(coef, math.e), coef * (math.log(coef) + 1) ** power * 10
    for _ in range(400):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if mid < coef * math.log(mid) ** power else (lo, mid)
    return hi


def test_proposition1_conditions():
    assert proposition1_conditions(900) == {
        "met": True, "t": 900, "t_min": 2, "init": "zero",
        "statement": "Assumptions 1–2, t ≥ 2 and the zero start W_ov(0) = 0 (Proposition 1; Proposition 3 in Appendix B)"}
    assert proposition1_conditions(2)["met"] is True and proposition1_conditions(1)["met"] is False
    assert proposition1_conditions(900, "random")["met"] is False  # outside the stated zero start


def test_theorem1_conditions_by_hand():
    c = theorem1_conditions(0.1, 3.0, 6, 4320)
    assert c == {"met": True, "t": 4320, "t_min": 4320, "eta": 0.1, "eta_max": 3.0 / math.e,
                 "statement": "η ≤ ‖W*_kq‖/e (proof of Theorem 1) and t ≥ t0 = ⌈8·L_max·‖W*_kq‖²/η⌉ (Lemma 7)"}
    assert theorem1_conditions(0.1, 3.0, 6, 4319)["met"] is False  # one step short of ⌈8·6·9/0.1⌉
    assert theorem1_conditions(0.3, 1.0, 2, 10)["t_min"] == math.ceil(8 * 2 * 1.0 / 0.3) == 54
    big = theorem1_conditions(1.2, 3.0, 6, 10**9)  # η above ‖W*‖/e = 1.1036
    assert big["met"] is False and big["eta_max"] == pytest.approx(1.103638323514327, rel=1e-12)
    assert theorem1_conditions(3.0 / math.e, 3.0, 6, 10**9)["met"] is True  # η = ‖W*‖/e is allowed


def test_theorem2_conditions_by_hand():
    N, L, V, wo, wk, e0, e = 20, 6, 100, 2.0, 3.0, 0.2, 0.1
    c = theorem2_conditions(N, L, V, wo, wk, e0, e, 900, 10_000)
    a1, a2 = wo**5 * math.log(V) / e0, N * L**4 * wk**6 / e
    assert c["T_min"] == pytest.approx(_largest_root(a1, 1), rel=1e-9)
    assert c["t_min"] == pytest.approx(_largest_root(a2, 2), rel=1e-9)
    assert c["appendix"]["T_min"] == pytest.approx(_largest_root(384 * wo**5 * math.log(2 * V) / e0, 1), rel=1e-9)
    assert c["appendix"]["t_min"] == pytest.approx(_largest_root(1696 * a2, 2), rel=1e-9)
    assert (c["c0"], c["T"], c["t"], c["eta"]) == (1.0, 900, 10_000, 0.1)
    assert c["eta_max"] == pytest.approx(wk / math.e, rel=1e-15)
    assert c["met"] is False
    assert c["statement"] == ("T ≥ c0·‖W*_ov‖⁵·log|V|·log T/η0 and t ≥ c0·N·L_max⁴·‖W*_kq‖⁶·log²t/η with c0 = 1 "
                              "(unspecified in the paper), η ≤ ‖W*_kq‖/e")
    # met exactly at both minima; one short on either is not; c0 scales both coefficients
    T, t = math.ceil(c["T_min"]), math.ceil(c["t_min"])
    assert theorem2_conditions(N, L, V, wo, wk, e0, e, T, t)["met"] is True
    assert theorem2_conditions(N, L, V, wo, wk, e0, e, T - 1, t)["met"] is False
    assert theorem2_conditions(N, L, V, wo, wk, e0, e, T, t - 1)["met"] is False
    assert theorem2_conditions(N, L, V, wo, 3.0, e0, 1.2, T, 10**30)["met"] is False  # η > ‖W*_kq‖/e
    # the minima and η_max themselves are inside the conditions (≥, ≤)
    assert theorem2_conditions(N, L, V, wo, wk, e0, e, c["T_min"], c["t_min"])["met"] is True
    assert theorem2_conditions(N, L, V, wo, wk, e0, wk / math.e, c["T_min"], 10**30)["met"] is True
    half = theorem2_conditions(N, L, V, wo, wk, e0, e, T, t, c0=0.5)
    assert half["t_min"] == pytest.approx(_largest_root(0.5 * a2, 2), rel=1e-9) and half["statement"].count("c0 = 0.5")
    assert half["T_min"] == pytest.approx(_largest_root(0.5 * a1, 1), rel=1e-9)


def test_smallest_t_edges():
    assert smallest_t(0.0, 2) == 2.0 and smallest_t(-1.0, 1) == 2.0
    assert smallest_t(0.5, 2, t_min=3.0) == 3.0
    t = smallest_t(1e6, 2)
    assert t == pytest.approx(1e6 * math.log(t) ** 2, rel=1e-11)


def test_attention_bound_and_steps_to_clear_by_hand():
    assert attention_bound(1e-3, 6, 0.0) == 1 / 7
    assert attention_bound(1e-3, 6, 1000.0) == pytest.approx(1 / (1 + 6 * math.exp(-1.0)), rel=1e-15)
    assert attention_bound(2e-3, 4, 500.0) == pytest.approx(1 / (1 + 4 * math.exp(-1.0)), rel=1e-15)
    assert steps_to_clear(1e-3, 6, 0.2, 0.3) == pytest.approx(math.log(6 / (1 / 0.5 - 1)) / 1e-3, rel=1e-12)
    assert steps_to_clear(1e-3, 6, 0.6, 0.4) == math.inf  # the bound never reaches 1
    assert steps_to_clear(0.0, 6, 0.2, 0.1) == math.inf and steps_to_clear(-1e-3, 6, 0.2, 0.1) == math.inf
    assert steps_to_clear(1e-3, 6, -0.5, 0.1) == 0.0  # a target ≤ 0 holds from the start
    assert steps_to_clear(1e-3, 6, 0.0, 0.0) == 0.0


def test_resolvable_until():
    t = np.array([1, 2, 3, 4, 5])
    gap = np.array([1e-3, 1e-6, 1e-10, 5e-11, 1e-9])
    assert resolvable_until(t, gap) == 5.0  # the last step at or above 1e-10, even after a dip
    assert resolvable_until(t, gap, floor=1e-8) == 2.0
    assert resolvable_until(t, np.zeros(5)) == 1.0  # none resolvable: the first step
    assert resolvable_until(t, np.array([1e-3, 1e-10, 0.0, 0.0, 0.0])) == 2.0  # exactly at the floor counts
    assert RESOLVABLE_ATTENTION_GAP == 1e-10


def test_fit_exp_vs_power_window_and_numbers():
    t = np.arange(0, 2001, dtype=float)
    g = 2.0 * np.exp(-1e-3 * t)
    f = fit_exp_vs_power(t, g, floor=0.0, t_max=1000)
    assert (f["t0"], f["t1"], f["n_points"]) == (100.0, 1000.0, 901)
    assert f["rate"] == pytest.approx(1e-3, rel=1e-9) and f["r2_exp"] == pytest.approx(1.0, abs=1e-12)
    x = np.log(t[100:1001])
    slope = np.polyfit(x, np.log(g[100:1001]), 1)[0]
    resid = np.log(g[100:1001]) - np.polyval(np.polyfit(x, np.log(g[100:1001]), 1), x)
    r2 = 1 - resid.var() / np.log(g[100:1001]).var()
    assert f["power"] == pytest.approx(-slope, rel=1e-9) and f["r2_power"] == pytest.approx(r2, rel=1e-9)
    # t = 0 and non-finite gaps are left out; two points are too few to fit
    few = fit_exp_vs_power(np.array([0.0, 5.0, 10.0]), np.array([1.0, 0.5, np.nan]), floor=0.0)
    assert few == {"t0": 0.5, "t1": 5.0, "n_points": 1}
    assert fit_exp_vs_power(np.array([]), np.array([]), floor=0.0) == {
        "n_points": 0, "note": "the gap is at floating-point zero from the first step"}
    assert fit_exp_vs_power(t, g, floor=10.0)["n_points"] == 0
    # a gap at the floor is not resolvable: the window ends before the exact zeros
    z = fit_exp_vs_power(t, np.where(t <= 1000, g, 0.0), floor=0.0)
    assert (z["t1"], z["n_points"]) == (1000.0, 901) and math.isfinite(z["rate"])
    # t = 1 is the first usable step, and three points are enough to fit
    three = fit_exp_vs_power(np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.5, 0.25]), floor=0.0)
    assert (three["t0"], three["t1"], three["n_points"]) == (0.3, 3.0, 3)
    assert three["rate"] == pytest.approx(math.log(2), rel=1e-12) and three["r2_exp"] == pytest.approx(1.0)
