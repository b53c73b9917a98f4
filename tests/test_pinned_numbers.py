"""Every number a verdict rule consumes, pinned to an independent computation on fixed data (issue 21, item 5).

Each expected value is computed here from first principles with numpy (or, for W*_kq, with a general QP
solver), never by calling the function under test a second time. Each test names the bug it guards:
C1 without its factor 4, the log²t/t reference slope computed as log t/t, SVOP's cos(W_kq, ·) taken
against W*_ov, the norm lower bound without its 2 (dense and structured paths), the stage-1 reference
rate without its factor, the ID standard error without √batches, and the α predictions of paper B.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from ttlab.intrinsic_dim.api import paper_protocol
from ttlab.ntp.config import TrainConfig
from ttlab.ntp.diagnostics import local_loglog_slopes, summarize, theory_attention_rate
from ttlab.ntp.examples import svop
from ttlab.ntp.generate import generate_dataset
from ttlab.ntp.train import train
from ttlab.reproduce.parts.common_lm_id import id_standard_error
from ttlab.scaling.theory import (
    alpha_d,
    alpha_d_from_alpha_n,
    alpha_n,
    alpha_n_from_alpha_d,
    id_from_alpha_d,
    id_from_alpha_n,
    table1,
)

ETA0, ETA = 0.07, 0.03  # explicit step sizes: the expected numbers below do not go through the defaults


def _np_cos(a, b) -> float:
    a, b = np.asarray(a, float).ravel(), np.asarray(b, float).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def _lstsq_slope(t: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of y on log t (design matrix [log t, 1])."""
    A = np.column_stack([np.log(t), np.ones_like(t)])
    return float(np.linalg.lstsq(A, y, rcond=None)[0][0])


@pytest.fixture(scope="module")
def runs():
    """One small dataset trained on the dense and on the structured path (same steps, explicit η0, η)."""
    torch.set_num_threads(1)
    ds = generate_dataset(12, 40, 2, 5, seed=3)
    cfg = dict(stage1_steps=40, stage2_steps=60, eta0=ETA0, eta=ETA)
    dense = train(ds, TrainConfig(impl="dense", dtype="float64", **cfg))
    struct = train(ds, TrainConfig(impl="structured", **cfg))
    assert (dense.config.impl, struct.config.impl) == ("dense", "structured")
    return ds, {"dense": dense, "structured": struct}


# --------------------------------------------------------------------------------------------- paper A


def test_c1_of_theorem2_on_fixed_numbers():
    # C1 = η / (4 · L_max · ‖W*_kq‖²) with ‖W*_kq‖ the Frobenius norm of a fixed matrix
    W = np.array([[0.5, -1.0, 0.0], [0.25, 2.0, -0.75]])
    norm = float(np.sqrt((W**2).sum()))  # √5.875
    assert theory_attention_rate(0.1, norm, 6) == pytest.approx(0.1 / (4 * 6 * 5.875), rel=1e-12)
    assert theory_attention_rate(0.1, norm, 6) == pytest.approx(7.0922e-4, abs=1e-8)
    assert math.isnan(theory_attention_rate(0.1, 0.0, 6))


@pytest.mark.trains
@pytest.mark.parametrize("path", ["dense", "structured"])
def test_c1_and_stage1_reference_rate_of_a_run(runs, path):
    ds, by_path = runs
    res = by_path[path]
    s = summarize(res)
    L_max = max(len(x.tokens) for x in ds.sentences)
    assert res.max_len == L_max
    wkq = float(np.linalg.norm(np.asarray(res.wkq_star.W, float)))
    wov = float(np.linalg.norm(np.asarray(res.wov_star.W, float)))
    # Theorem 2: C1 = η/(4 L_max ‖W*_kq‖²); Proposition 1: stage-1 loss rate η0/(4‖W*_ov‖)
    assert s["stage_2"]["theory_attention_rate_C1"] == pytest.approx(ETA / (4 * L_max * wkq**2), rel=1e-12)
    assert s["stage_1"]["theory_loss_rate"] == pytest.approx(ETA0 / (4 * wov), rel=1e-12)


@pytest.mark.trains
@pytest.mark.parametrize("path", ["dense", "structured"])
def test_norm_bounds_of_both_training_paths(runs, path):
    # Proposition 1 / Theorem 1: tη/(2‖W*‖) ≤ ‖W(t)‖ ≤ tη, per stage with that stage's η and W*
    _, by_path = runs
    res = by_path[path]
    for stage, eta, star in (("1", ETA0, res.wov_star), ("2", ETA, res.wkq_star)):
        r = res.rows(stage)
        t = r["step"].astype(float)
        w_norm = float(np.linalg.norm(np.asarray(star.W, float)))
        np.testing.assert_allclose(r["norm_lower_bound"], t * eta / (2 * w_norm), rtol=1e-12, atol=0)
        np.testing.assert_allclose(r["norm_upper_bound"], t * eta, rtol=1e-12, atol=0)
        # and the bounds are not vacuous here: both are met by the trained norms
        assert np.all(r["norm"][t >= 2] <= t[t >= 2] * eta * (1 + 1e-9))
        assert np.all(r["norm"][t >= 2] >= t[t >= 2] * eta / (2 * w_norm) * (1 - 1e-9))


def test_reference_slopes_of_log2t_over_t_and_log_t_over_t():
    # least squares over integer t of log f(t) on log t, f = log²t/t and log t/t
    t = np.arange(1, 10_001, dtype=float)
    y = 0.3 * np.log(t) ** 2 / t  # any positive curve: the reference slopes depend only on the window
    expected = {}
    for t0, t1 in ((90, 900), (1_000, 10_000)):
        w = t[(t >= t0) & (t <= t1)]
        expected[(t0, t1)] = (_lstsq_slope(w, 2 * np.log(np.log(w)) - np.log(w)),
                              _lstsq_slope(w, np.log(np.log(w)) - np.log(w)))
        got = local_loglog_slopes(t, y, t0, t1)
        assert got["n_points"] == t1 - t0 + 1
        assert got["theory_log2_t_over_t"] == pytest.approx(expected[(t0, t1)][0], abs=1e-12)
        assert got["theory_log_t_over_t"] == pytest.approx(expected[(t0, t1)][1], abs=1e-12)
        assert got["slope"] == pytest.approx(expected[(t0, t1)][0], abs=1e-9)  # y is log²t/t itself
        assert got["theory_1_over_t"] == -1.0
    # the numbers the report and the issue quote
    assert round(expected[(90, 900)][0], 3) == -0.654
    assert round(expected[(1_000, 10_000)][0], 3) == -0.756
    assert round(expected[(90, 900)][1], 3) == -0.827
    assert round(expected[(1_000, 10_000)][1], 3) == -0.878


def _qp_wkq_star(ds, triples: np.ndarray) -> np.ndarray:
    """W*_kq by a general QP solver: min ‖W‖_F s.t. W[o, q] − W[u, q] ≥ 1 for each (q, o, u) (one-hot)."""
    cp = pytest.importorskip("cvxpy")
    V = ds.vocab_size
    W = cp.Variable((V, V))
    cons = [W[o, q] - W[u, q] >= 1 for q, o, u in triples]
    cp.Problem(cp.Minimize(cp.sum_squares(W)), cons).solve(solver=cp.CLARABEL)
    return np.asarray(W.value)


@pytest.mark.trains
def test_svop_cos_wkq_against_the_qp_solution():
    from ttlab.ntp.structure import analyze
    from ttlab.ntp.walkthrough import svop_walkthrough

    torch.set_num_threads(1)
    r = svop_walkthrough()
    ds = svop()
    res = train(ds, TrainConfig(stage1_steps=900, stage2_steps=900))
    star = _qp_wkq_star(ds, analyze(ds).kq_triples())
    np.testing.assert_allclose(res.wkq_star.W, star, atol=1e-6)  # the solver agrees with the general QP
    want = _np_cos(res.W_kq.numpy(), star)
    assert r["cosine_kq"] == pytest.approx(want, abs=1e-6)
    assert r["cosine_kq"] == pytest.approx(0.99952, abs=5e-6)
    # the same cosine against the wrong target is far off: a W*_ov mix-up cannot pass
    assert abs(_np_cos(res.W_kq.numpy(), res.wov_star.W) - want) > 0.1
    assert r["cosine_ov"] == pytest.approx(_np_cos(res.W_ov.numpy(), res.wov_star.W), abs=1e-12)


# --------------------------------------------------------------------------------------------- paper B


def test_id_standard_error_is_batch_sd_over_root_batches():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((1_100, 4)) @ rng.standard_normal((4, 9))  # a 4-dim linear subspace of R^9
    res = paper_protocol(X, batch_size=250, k=10, seed=0)
    batches = np.asarray(res.batches, float)
    assert len(batches) == 4  # 1,100 // 250: the last, smaller batch is dropped
    row = {"n_vectors": 1_100, "batch_size": 250, "intrinsic_dim_std": res.dimension_std}
    want = float(np.std(batches, ddof=1) / np.sqrt(len(batches)))
    assert id_standard_error(row) == pytest.approx(want, rel=1e-12)
    # fixed numbers: SD 2 over 4 batches → 1
    assert id_standard_error({"n_vectors": 1_000, "batch_size": 250, "intrinsic_dim_std": 2.0}) == pytest.approx(1.0)
    assert id_standard_error({"n_vectors": 1_000, "batch_size": 101, "intrinsic_dim_std": 3.0}) == pytest.approx(1.0)
    # one batch (or none): no standard error
    assert id_standard_error({"n_vectors": 499, "batch_size": 250, "intrinsic_dim_std": 2.0}) is None
    assert id_standard_error({"n_vectors": 500, "batch_size": 250, "intrinsic_dim_std": 2.0}) == pytest.approx(2 / math.sqrt(2))
    assert id_standard_error({"n_vectors": 500, "batch_size": 0, "intrinsic_dim_std": 2.0}) is None
    assert id_standard_error({"n_vectors": 500, "batch_size": 250}) is None
    assert id_standard_error({"batch_size": 250, "intrinsic_dim_std": 2.0}) is None
    assert id_standard_error({"n_vectors": 500, "batch_size": None, "intrinsic_dim_std": 2.0}) is None
    # batches of one vector are batches too: SD over √4
    assert id_standard_error({"n_vectors": 4, "batch_size": 1, "intrinsic_dim_std": 2.0}) == pytest.approx(1.0)


@pytest.mark.parametrize("d,beta", [(1.0, 1.0), (3.89, 1.0), (8.0, 0.5), (17.3, 0.25), (40.0, 1.0)])
def test_alpha_predictions_of_paper_b(d, beta):
    a_d, a_n = 2 * beta / (2 * beta + d), 2 * beta / d
    assert alpha_d(d, beta) == pytest.approx(a_d, rel=1e-14)
    assert alpha_n(d, beta) == pytest.approx(a_n, rel=1e-14)
    # the ID-free relations α_D = α_N/(1+α_N) and α_N = α_D/(1−α_D), on numbers from the closed forms
    assert alpha_d_from_alpha_n(a_n) == pytest.approx(a_n / (1 + a_n), rel=1e-14)
    assert alpha_d_from_alpha_n(a_n) == pytest.approx(a_d, rel=1e-12)
    assert alpha_n_from_alpha_d(a_d) == pytest.approx(a_d / (1 - a_d), rel=1e-14)
    assert alpha_n_from_alpha_d(a_d) == pytest.approx(a_n, rel=1e-12)
    assert id_from_alpha_d(a_d, beta) == pytest.approx(d, rel=1e-12)
    assert id_from_alpha_n(a_n, beta) == pytest.approx(d, rel=1e-12)


def test_table1_recomputed_from_the_published_exponents():
    published = {"Kaplan 2020": (0.076, 0.095), "Chinchilla 2022": (0.34, 0.28)}
    rows = {r.short_name: r for r in table1()}
    assert set(rows) == set(published)
    for name, (a_n, a_d) in published.items():
        r = rows[name]
        assert (r.alpha_n_observed, r.alpha_d_observed, r.beta) == (a_n, a_d, 1.0)
        assert r.alpha_d_predicted_from_alpha_n == pytest.approx(a_n / (1 + a_n), rel=1e-14)
        assert r.alpha_n_predicted_from_alpha_d == pytest.approx(a_d / (1 - a_d), rel=1e-14)
        assert r.id_from_alpha_n == pytest.approx(2 / a_n, rel=1e-14)
        assert r.id_from_alpha_d == pytest.approx(2 * (1 - a_d) / a_d, rel=1e-14)
        assert r.id_from_alpha_n_sharma_kaplan == pytest.approx(4 / a_n, rel=1e-14)
        assert r.alpha_n_sharma_kaplan_from_id_of_alpha_d == pytest.approx(4 / (2 * (1 - a_d) / a_d), rel=1e-14)
    # the rounded figures the report prints
    k, c = rows["Kaplan 2020"], rows["Chinchilla 2022"]
    assert (round(k.alpha_d_predicted_from_alpha_n, 4), round(k.alpha_n_predicted_from_alpha_d, 4)) == (0.0706, 0.105)
    assert (round(c.alpha_d_predicted_from_alpha_n, 4), round(c.alpha_n_predicted_from_alpha_d, 4)) == (0.2537, 0.3889)
    half = {r.short_name: r for r in table1(beta=0.5)}
    assert half["Kaplan 2020"].id_from_alpha_d == pytest.approx(2 * 0.5 * 0.905 / 0.095, rel=1e-14)
