"""Paper B's exponent formulas, their inverses, the ID-free conversions and Table 1."""

from __future__ import annotations

import math

import pytest

from ttlab.errors import TTLabInputError
from ttlab.scaling import (
    PUBLISHED_LAWS,
    alpha_d,
    alpha_d_from_alpha_n,
    alpha_n,
    alpha_n_from_alpha_d,
    alpha_n_sharma_kaplan,
    id_from_alpha_d,
    id_from_alpha_n,
    id_from_alpha_n_sharma_kaplan,
    table1,
)

DS = [0.5, 1.0, 2.0, 5.97, 8.0, 15.56, 20.02, 100.0]
BETAS = [0.1, 0.5, 0.75, 1.0]


def test_closed_forms_beta_one():
    # α_D = 2/(2+d), α_N = 2/d at β = 1
    assert alpha_d(8) == pytest.approx(0.2, abs=1e-15)
    assert alpha_n(8) == pytest.approx(0.25, abs=1e-15)
    assert alpha_d(2) == pytest.approx(0.5, abs=1e-15)
    assert alpha_n(2) == pytest.approx(1.0, abs=1e-15)
    # SPEC pilot: ID 5.97 (arithmetic mean) vs 3.89 (harmonic) → predicted α_D 0.25 vs 0.34
    assert alpha_d(5.97) == pytest.approx(2 / 7.97, rel=1e-14)
    assert alpha_d(3.89) == pytest.approx(2 / 5.89, rel=1e-14)
    assert (round(alpha_d(5.97), 2), round(alpha_d(3.89), 2)) == (0.25, 0.34)


def test_closed_forms_general_beta():
    # β = 0.5, d = 2: α_D = 1/(1+2) = 1/3, α_N = 1/2
    assert alpha_d(2, beta=0.5) == pytest.approx(1 / 3, rel=1e-14)
    assert alpha_n(2, beta=0.5) == pytest.approx(0.5, rel=1e-14)
    assert alpha_d(4, beta=0.25) == pytest.approx(0.5 / 4.5, rel=1e-14)


@pytest.mark.parametrize("d", DS)
@pytest.mark.parametrize("beta", BETAS)
def test_inverse_round_trips(d, beta):
    assert id_from_alpha_d(alpha_d(d, beta), beta) == pytest.approx(d, rel=1e-12)
    assert id_from_alpha_n(alpha_n(d, beta), beta) == pytest.approx(d, rel=1e-12)


@pytest.mark.parametrize("d", DS)
@pytest.mark.parametrize("beta", BETAS)
def test_id_free_relations_hold_for_every_beta(d, beta):
    # β cancels: converting the model exponent gives the data exponent at the same (d, β)
    assert alpha_d_from_alpha_n(alpha_n(d, beta)) == pytest.approx(alpha_d(d, beta), rel=1e-12)
    assert alpha_n_from_alpha_d(alpha_d(d, beta)) == pytest.approx(alpha_n(d, beta), rel=1e-12)


@pytest.mark.parametrize("a", [1e-4, 0.076, 0.34, 1.0, 7.5])
def test_conversions_are_inverse(a):
    assert alpha_n_from_alpha_d(alpha_d_from_alpha_n(a)) == pytest.approx(a, rel=1e-12)
    assert 0 < alpha_d_from_alpha_n(a) < min(a, 1)  # α_D < α_N always
    if a < 1:
        assert alpha_d_from_alpha_n(alpha_n_from_alpha_d(a)) == pytest.approx(a, rel=1e-12)


def test_monotone_in_d():
    vals = [alpha_d(d) for d in DS]
    assert all(x > y for x, y in zip(vals, vals[1:]))
    vals = [alpha_n(d) for d in DS]
    assert all(x > y for x, y in zip(vals, vals[1:]))


def test_sharma_kaplan():
    assert alpha_n_sharma_kaplan(8) == pytest.approx(0.5)
    assert id_from_alpha_n_sharma_kaplan(0.5) == pytest.approx(8.0)
    # at β = 1 Sharma–Kaplan's ID is exactly twice ours for the same α_N
    assert id_from_alpha_n_sharma_kaplan(0.076) == pytest.approx(2 * id_from_alpha_n(0.076))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: alpha_d(0), r"d must be > 0"),
        (lambda: alpha_n(-3), r"d must be > 0"),
        (lambda: alpha_d(float("nan")), r"must be finite"),
        (lambda: alpha_n(float("inf")), r"must be finite"),
        (lambda: alpha_d("eight"), r"must be a number"),
        (lambda: alpha_d(True), r"boolean"),
        (lambda: alpha_d(8, beta=0), r"0 < beta <= 1"),
        (lambda: alpha_n(8, beta=1.5), r"0 < beta <= 1"),
        (lambda: alpha_n(8, beta=-0.2), r"0 < beta <= 1"),
        (lambda: id_from_alpha_d(1.0), r"0 < alpha_D < 1"),
        (lambda: id_from_alpha_d(0.0), r"0 < alpha_D < 1"),
        (lambda: alpha_n_from_alpha_d(1.2), r"0 < alpha_D < 1"),
        (lambda: id_from_alpha_n(0.0), r"alpha_N must be > 0"),
        (lambda: alpha_d_from_alpha_n(-0.1), r"alpha_N must be > 0"),
        (lambda: id_from_alpha_n_sharma_kaplan(0), r"alpha_N must be > 0"),
        (lambda: id_from_alpha_n(0.1, beta=2), r"0 < beta <= 1"),
    ],
)
def test_bad_input_raises_clear_error(call, match):
    with pytest.raises(TTLabInputError, match=match):
        call()


def test_input_error_is_value_error():
    with pytest.raises(ValueError):
        alpha_d(-1)


def test_table1_numbers_by_hand():
    rows = {r.short_name: r for r in table1()}
    k, c = rows["Kaplan 2020"], rows["Chinchilla 2022"]
    # Kaplan et al. 2020: α_N = 0.076, α_D = 0.095
    assert k.alpha_n_observed == 0.076 and k.alpha_d_observed == 0.095
    assert k.alpha_d_predicted_from_alpha_n == pytest.approx(76 / 1076, rel=1e-12)  # 0.07063
    assert k.alpha_n_predicted_from_alpha_d == pytest.approx(95 / 905, rel=1e-12)  # 0.10497
    assert k.id_from_alpha_n == pytest.approx(2000 / 76, rel=1e-12)  # 26.32
    assert k.id_from_alpha_d == pytest.approx(2 * 905 / 95, rel=1e-12)  # 19.05
    assert k.id_from_alpha_n_sharma_kaplan == pytest.approx(4000 / 76, rel=1e-12)  # 52.63
    assert k.alpha_n_sharma_kaplan_from_id_of_alpha_d == pytest.approx(4 * 95 / 1810, rel=1e-12)  # 0.2099
    # Chinchilla: α = 0.34 (N), β = 0.28 (D)
    assert c.alpha_d_predicted_from_alpha_n == pytest.approx(34 / 134, rel=1e-12)  # 0.25373
    assert c.alpha_n_predicted_from_alpha_d == pytest.approx(7 / 18, rel=1e-12)  # 0.38889
    assert c.id_from_alpha_n == pytest.approx(200 / 34, rel=1e-12)  # 5.882
    assert c.id_from_alpha_d == pytest.approx(36 / 7, rel=1e-12)  # 5.143
    assert c.id_from_alpha_n_sharma_kaplan == pytest.approx(400 / 34, rel=1e-12)  # 11.76
    assert c.alpha_n_sharma_kaplan_from_id_of_alpha_d == pytest.approx(7 / 9, rel=1e-12)  # 0.7778
    # the allocation N_opt ∝ C^a: a = α_D/(α_N + α_D), and d/(2d + 2) at d(α_D)
    assert k.allocation_a == pytest.approx(95 / 171, rel=1e-12) and c.allocation_a == pytest.approx(28 / 62, rel=1e-12)
    assert k.allocation_a_from_id_of_alpha_d == pytest.approx((1810 / 95) / (2 * 1810 / 95 + 2), rel=1e-12)
    assert c.allocation_a_from_id_of_alpha_d == pytest.approx((36 / 7) / (72 / 7 + 2), rel=1e-12)  # 0.419
    # the rounded values to print
    assert [round(v, 4) for v in (k.alpha_d_predicted_from_alpha_n, k.alpha_n_predicted_from_alpha_d)] == [
        0.0706,
        0.105,
    ]
    assert [round(v, 4) for v in (c.alpha_d_predicted_from_alpha_n, c.alpha_n_predicted_from_alpha_d)] == [
        0.2537,
        0.3889,
    ]


def test_table1_direction_of_errors():
    """The ID-free prediction under-estimates Kaplan's α_D and over-estimates Chinchilla's α_D."""
    rows = {r.short_name: r for r in table1()}
    assert rows["Kaplan 2020"].alpha_d_predicted_from_alpha_n < 0.095
    assert rows["Chinchilla 2022"].alpha_d_predicted_from_alpha_n < 0.28  # 0.254 < 0.28
    assert rows["Chinchilla 2022"].alpha_n_predicted_from_alpha_d > 0.34  # 0.389 > 0.34


def test_table1_general_beta_scales_ids_only():
    r1 = table1(beta=1.0)
    rh = table1(beta=0.5)
    for a, b in zip(r1, rh):
        assert b.id_from_alpha_n == pytest.approx(a.id_from_alpha_n / 2)
        assert b.id_from_alpha_d == pytest.approx(a.id_from_alpha_d / 2)
        assert b.alpha_d_predicted_from_alpha_n == a.alpha_d_predicted_from_alpha_n  # β-free
    assert len(r1) == len(PUBLISHED_LAWS) == 2
    assert math.isfinite(r1[0].to_dict()["id_from_alpha_d"])
    with pytest.raises(TTLabInputError, match="beta"):
        table1(beta=0)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: alpha_d(-2), "intrinsic dimension d must be > 0, got -2.0"),
        (lambda: alpha_d(8, beta=1.5), "Hölder exponent beta must satisfy 0 < beta <= 1 (the theory's assumption), got 1.5"),
        (lambda: id_from_alpha_d(1.5),
         "data-scaling exponent alpha_D must satisfy 0 < alpha_D < 1 (2β/(2β+d) < 1 for every d > 0), got 1.5"),
        (lambda: id_from_alpha_n(-1), "model-scaling exponent alpha_N must be > 0, got -1.0"),
        (lambda: alpha_n(float("nan")), "intrinsic dimension d must be finite, got nan"),
        (lambda: alpha_n("x"), "intrinsic dimension d must be a number, got 'x'"),
        (lambda: alpha_n(None), "intrinsic dimension d must be a number, got None"),
        (lambda: alpha_n(False), "intrinsic dimension d must be a number, got the boolean False"),
    ],
)
def test_error_messages_name_the_parameter_and_the_requirement(call, message):
    with pytest.raises(TTLabInputError) as info:
        call()
    assert str(info.value) == message


def test_defaults_and_row_fields():
    # β defaults to 1 in every ID-implying function
    assert id_from_alpha_d(0.2) == pytest.approx(8.0, rel=1e-14)
    assert id_from_alpha_n(0.25) == pytest.approx(8.0, rel=1e-14)
    assert alpha_d(8) == alpha_d(8, 1.0) and alpha_n(8) == alpha_n(8, 1.0)
    rows = table1()
    assert [r.law for r in rows] == [law.name for law in PUBLISHED_LAWS]
    assert rows[0].law == "Kaplan et al. 2020 (GPT-2 family)"
    assert rows[0].to_dict()["law"] == rows[0].law and rows[0].to_dict()["beta"] == 1.0


def test_kaplan_data_need_by_hand():
    from ttlab.scaling.theory import kaplan_data_need

    assert kaplan_data_need(1e5) == pytest.approx(5e3 * 10 ** (5 * 0.74), rel=1e-12)  # ≈ 2.5×10⁷ tokens
    assert kaplan_data_need(1) == pytest.approx(5e3, rel=1e-15)
    assert kaplan_data_need(2.0e6) == pytest.approx(5e3 * 2.0e6**0.74, rel=1e-12)
    for bad in (0, -1.0, float("nan"), float("inf"), "1e5", None):
        with pytest.raises(TTLabInputError) as info:
            kaplan_data_need(bad)
        assert str(info.value) == f"n_params must be a positive number of parameters, got {bad!r}."
