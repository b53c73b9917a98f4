"""Cross-entropy and its gradient at any margin: no 1 − p_y, no log z that rounds to 0, a defined
normalized direction past exp's range, and the dtype rule of ``dtype="auto"``."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from ttlab.errors import TTLabInputError
from ttlab.ntp.config import TrainConfig
from ttlab.ntp.diagnostics import format_loss
from ttlab.ntp.examples import svop
from ttlab.ntp.generate import generate_dataset
from ttlab.ntp.model import (
    AUTO_FLOAT32_MAX_SPREAD,
    CEBlock,
    NTPTransformer,
    ce_combine,
    cross_entropy_terms,
    softmax_cross_entropy,
)
from ttlab.ntp.structure import analyze
from ttlab.ntp.train import logit_spread_bound, train


def ray_log_loss(norm: np.ndarray, star_norm: float, vocab_size: int) -> np.ndarray:
    """log L0 on the max-margin ray: L0 = log(1 + (|V| − 1)·exp(−‖W_ov‖/‖W*_ov‖)), in log space."""
    c = np.asarray(norm, float) / star_norm
    x = math.log(vocab_size - 1) - c  # log((|V|−1) e^{−c})
    # log(log1p(e^x)): direct while e^x is representable, log(e^x) − e^x/2 below (exact to rounding)
    direct = np.log(np.log1p(np.exp(np.maximum(x, -700.0))))
    return np.where(x > -700.0, direct, x - np.exp(np.maximum(x, -700.0)) / 2)


# --------------------------------------------------------------------------------------------- the function
@pytest.mark.parametrize("scale", [1.0, 40.0, 900.0])  # 900: every competing term underflows (log space)
def test_blocks_combine_to_the_whole(scale):
    """Rows split into blocks give the loss, log-loss, gradient scale and gradients of the whole batch;
    a block left out of the gradient still counts in the loss but not in the common scale."""
    rng = np.random.default_rng(3)
    logits = torch.as_tensor(scale * rng.standard_normal((9, 6)))
    labels = torch.as_tensor(rng.integers(6, size=9))
    logits[torch.arange(9), labels] = logits.max(1).values + scale  # the label ahead by `scale`
    w = torch.as_tensor(rng.dirichlet(np.ones(9)))
    whole = softmax_cross_entropy(logits, labels, w)
    parts = [slice(0, 4), slice(4, 5), slice(5, 9)]
    loss, log_loss, grads, log_scale = ce_combine([CEBlock(logits[p], labels[p], w[p]) for p in parts])
    assert loss == pytest.approx(whole.loss, rel=1e-14, abs=0)
    assert log_loss == pytest.approx(whole.log_loss, rel=1e-14)
    assert log_scale == whole.log_scale and (log_scale < -100) == (scale == 900.0)
    torch.testing.assert_close(torch.cat(grads), whole.grad, rtol=1e-14, atol=0)
    # leave out of the gradient the row holding the largest entry: the scale is then set by the others
    k = int(whole.grad.abs().max(1).values.argmax())
    rest_rows = torch.tensor([i for i in range(9) if i != k])
    blocks = [CEBlock(logits[[k]], labels[[k]], w[[k]]), CEBlock(logits[rest_rows], labels[rest_rows], w[rest_rows])]
    loss2, log_loss2, grads2, log_scale2 = ce_combine(blocks, [False, True])
    assert grads2[0] is None
    assert loss2 == pytest.approx(loss, rel=1e-14) and log_loss2 == pytest.approx(log_loss, rel=1e-14)
    rest = softmax_cross_entropy(logits[rest_rows], labels[rest_rows], w[rest_rows])
    assert log_scale2 == rest.log_scale
    torch.testing.assert_close(grads2[1], rest.grad, rtol=1e-14, atol=0)
    if scale == 900.0:  # rescaled by the others' largest entry, not by the left-out row's
        assert log_scale - log_scale2 > 0.1 and float(grads2[1].abs().max()) == pytest.approx(1.0)


def test_label_entry_and_loss_when_p_y_rounds_to_one():
    logits = torch.tensor([[0.0, -40.0, -50.0], [-3.0, 1.0, 2.0]], dtype=torch.float64)
    w = torch.tensor([0.25, 0.75], dtype=torch.float64)
    ce = softmax_cross_entropy(logits, torch.tensor([0, 1]), w)
    s = math.exp(-40.0) + math.exp(-50.0)  # Σ_{v≠y} exp(l_v − l_y) of row 0
    row1 = math.log(math.exp(-4.0) + 1.0 + math.exp(1.0))  # −log p_1 of row 1 (label not the largest)
    assert ce.loss == pytest.approx(0.25 * math.log1p(s) + 0.75 * row1, rel=1e-14)
    assert ce.grad[0, 0].item() == pytest.approx(-0.25 * s / (1 + s), rel=1e-14)  # p_y − 1 would give 0
    assert ce.grad[0, 1].item() == pytest.approx(0.25 * math.exp(-40.0) / (1 + s), rel=1e-14)
    sums = ce.grad.sum(1)  # rows of w(p − e_y) sum to 0, to rounding of their own entries
    assert abs(float(sums[0])) <= 1e-15 * abs(float(ce.grad[0, 0])) and abs(float(sums[1])) <= 1e-15
    assert ce.log_scale == 0.0


def test_loss_of_1e_200_is_1e_200_and_never_negative():
    m = 200 * math.log(10)
    logits = torch.tensor([[m, 0.0, -5.0]], dtype=torch.float64)
    ce = softmax_cross_entropy(logits, torch.tensor([0]), torch.ones(1, dtype=torch.float64))
    expected = math.exp(-m) + math.exp(-m - 5)
    assert ce.loss == pytest.approx(expected, rel=1e-13)
    assert ce.log_loss == pytest.approx(math.log(expected), rel=1e-14)
    assert format_loss(ce.loss) == "1.007e-200"  # 1e-200 · (1 + e^−5)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_margins_past_exp_range_give_finite_exact_direction(dtype):
    """Margins 800–1200: every exp(l_v − l_y) underflows, yet loss, log-loss and the direction are exact."""
    logits = torch.tensor([[0.0, -800.0, -805.0], [0.0, -1200.0, -801.0]], dtype=dtype)
    w = torch.tensor([0.5, 0.5], dtype=dtype)
    ce = softmax_cross_entropy(logits, torch.tensor([0, 0]), w)
    assert torch.isfinite(ce.grad).all() and ce.grad.abs().max() == 1.0
    assert ce.loss == 0.0  # below float64's range: reported through log_loss
    expected_log = math.log(0.5) + (-800.0) + math.log1p(math.exp(-5.0) + math.exp(-1.0) + math.exp(-400.0))
    assert ce.log_loss == pytest.approx(expected_log, rel=1e-12)
    # true gradient, in log space: log|g_true| = log|g| + log_scale
    log_true = (torch.log(ce.grad.double().abs()) + ce.log_scale).numpy()
    exp = {(0, 1): math.log(0.5) - 800, (0, 2): math.log(0.5) - 805, (1, 1): math.log(0.5) - 1200, (1, 2): math.log(0.5) - 801,
           (0, 0): math.log(0.5) - 800 + math.log1p(math.exp(-5)), (1, 0): math.log(0.5) - 801 + math.log1p(math.exp(-399))}
    tol = 1e-12 if dtype == torch.float64 else 1e-6
    for (i, j), v in exp.items():
        if dtype == torch.float32 and (i, j) == (1, 1):  # e^−400 below the largest entry: 0 in float32
            assert float(ce.grad[i, j]) == 0.0
            continue
        assert log_true[i, j] == pytest.approx(v, rel=tol), (i, j)
    assert float(ce.grad[0, 0]) < 0 and float(ce.grad[0, 1]) > 0


def test_agrees_with_autograd_and_torch_at_moderate_margins():
    g = torch.Generator().manual_seed(0)
    for scale in (1.0, 10.0, 30.0):
        logits = (scale * torch.randn(40, 7, generator=g, dtype=torch.float64)).requires_grad_()
        labels = torch.randint(0, 7, (40,), generator=g)
        w = torch.rand(40, generator=g, dtype=torch.float64)
        ref = (w * torch.nn.functional.cross_entropy(logits, labels, reduction="none")).sum()
        (ref_grad,) = torch.autograd.grad(ref, logits)
        ce = softmax_cross_entropy(logits.detach(), labels, w)
        assert ce.loss == pytest.approx(ref.item(), rel=1e-12)
        torch.testing.assert_close(ce.grad, ref_grad, rtol=1e-10, atol=1e-14)
        terms = (w * cross_entropy_terms(logits, labels)).sum()
        (g2,) = torch.autograd.grad(terms, logits)
        assert terms.item() == pytest.approx(ref.item(), rel=1e-12)
        torch.testing.assert_close(g2, ref_grad, rtol=1e-10, atol=1e-14)


def test_model_gradients_match_autograd_at_large_weights():
    """W_ov scaled so p_y rounds to 1 in many sentences: analytic gradients equal autograd of the exact loss."""
    ds = generate_dataset(6, 20, 2, 4, seed=5)
    model = NTPTransformer(ds)
    rng = np.random.default_rng(1)
    W_ov = torch.as_tensor(25.0 * rng.standard_normal((6, 6)))
    W_kq = torch.as_tensor(rng.standard_normal((6, 6)))
    a, b = W_ov.clone().requires_grad_(), W_kq.clone().requires_grad_()
    model.loss(a, b).backward()
    lg = model.loss_and_grad(W_ov, W_kq)
    assert lg.grad_log_scale == 0.0 and lg.loss > 0
    torch.testing.assert_close(lg.grad_ov, a.grad, rtol=1e-9, atol=1e-300)
    torch.testing.assert_close(lg.grad_kq, b.grad, rtol=1e-9, atol=1e-300)


# --------------------------------------------------------------------------------------------- stage 1 on SVOP
@pytest.mark.parametrize("eta0", [None, 0.2], ids=["eta0=0.2/sqrt4", "eta0=0.2"])
def test_svop_stage1_stays_on_the_max_margin_ray_for_5000_steps(eta0):
    res = train(svop(), TrainConfig(stage1_steps=5000, stage2_steps=0, eta0=eta0))
    r = res.rows("1")
    step = r["step"]
    assert res.config.eta0 == pytest.approx(0.1 if eta0 is None else eta0)
    assert res.wov_star.norm == pytest.approx(math.sqrt(3), rel=1e-12)
    assert np.max(1 - r["cosine"][1:]) <= 1e-9
    np.testing.assert_allclose(r["norm"], res.config.eta0 * step, rtol=1e-9)
    assert np.all(r["loss"] > 0)  # representable all the way (≥ 5e-251)
    closed = np.exp(ray_log_loss(r["norm"], math.sqrt(3), 4))
    np.testing.assert_allclose(r["loss"], closed, rtol=1e-6)
    np.testing.assert_allclose(r["log_loss"], np.log(closed), rtol=1e-9)
    if eta0 is None:  # t = 5000: L0 = log(1 + 3·exp(−500/√3)) ≈ 1.28e-125
        assert r["loss"][-1] == pytest.approx(math.log1p(3 * math.exp(-500 / math.sqrt(3))), rel=1e-6)


def test_svop_stage1_float32_stays_on_the_ray_past_its_exp_range():
    """float32's exp underflows at margins > ~87; this run ends at margin 289 and still follows the ray."""
    res = train(svop(), TrainConfig(stage1_steps=5000, stage2_steps=0, dtype="float32"))
    assert res.W_ov.dtype == torch.float32
    r = res.rows("1")
    assert np.max(1 - r["cosine"][1:]) <= 1e-9  # cosines are computed in float64 from the float32 iterate
    np.testing.assert_allclose(r["norm"], 0.1 * r["step"], rtol=1e-4)
    np.testing.assert_allclose(r["log_loss"], ray_log_loss(r["norm"], math.sqrt(3), 4), rtol=1e-6, atol=1e-6)
    assert np.all(r["loss"] > 0)


def test_svop_margins_beyond_800_keep_moving_along_the_ray():
    """‖W_ov‖ = 2000 → margin 1155: losses underflow float64, yet every NGD step is a full step on the ray."""
    res = train(svop(), TrainConfig(stage1_steps=1000, stage2_steps=0, eta0=2.0))
    r = res.rows("1")
    assert r["norm"][-1] / math.sqrt(3) > 800
    assert np.max(1 - r["cosine"][1:]) <= 1e-9
    np.testing.assert_allclose(r["norm"], 2.0 * r["step"], rtol=1e-9)
    assert r["loss"][-1] == 0.0 and np.all(r["loss"] >= 0)
    assert np.all(np.isfinite(r["log_loss"]))
    np.testing.assert_allclose(r["log_loss"], ray_log_loss(r["norm"], math.sqrt(3), 4), rtol=1e-9)
    assert format_loss(r["loss"][-1], r["log_loss"][-1]).endswith("e-502")


def _min_margin(res) -> float:
    model = NTPTransformer(svop())
    logits, _ = model.forward(res.W_ov, res.W_kq)
    lab = logits[torch.arange(len(model.labels)), model.labels]
    other = logits.clone()
    other[torch.arange(len(model.labels)), model.labels] = -math.inf
    return float((lab - other.max(1).values).min())


def test_joint_and_stage2_beyond_800_stay_finite_and_move():
    cfg = TrainConfig(stage1_steps=300, stage2_steps=100, eta0=8.0, eta=0.1, schedule="joint")
    res = train(svop(), cfg)
    r = res.rows("joint")
    assert _min_margin(res) > 800 and r["loss"][-1] == 0.0
    for col in ("norm", "log_loss", "cosine_ov", "norm_ov", "min_optimal_attention"):
        assert np.all(np.isfinite(r[col][1:])), col
    # both layers moved at every step (W_kq from step 1: at W_ov = 0 its gradient is exactly 0)
    assert np.all(np.diff(r["norm"])[1:] > 0) and np.all(np.diff(r["norm_ov"]) > 0)
    assert r["log_loss"][-1] < -800 and np.all(np.diff(r["log_loss"][200:]) < 0)  # still decreasing past the range
    two = train(svop(), TrainConfig(stage1_steps=1000, stage2_steps=50, eta0=2.0, eta=0.1))
    assert _min_margin(two) > 800
    s2 = two.rows("2")
    assert np.all(np.isfinite(s2["log_loss"])) and s2["loss"][-1] == 0.0 and s2["log_loss"][-1] < -800
    assert np.all(np.diff(s2["norm"]) > 0)  # W_kq moved at every step
    assert s2["cosine"][-1] > s2["cosine"][10]


@pytest.mark.parametrize("optimizer,lr", [("gd", 1.0), ("adam", 0.05)])
def test_gd_and_adam_runs_have_exact_finite_losses(optimizer, lr):
    res = train(svop(), TrainConfig(stage1_steps=300, stage2_steps=5, eta0=lr, eta=lr, optimizer=optimizer))
    r = res.rows("1")
    assert np.all(np.isfinite(r["log_loss"])) and np.all(r["loss"] > 0)
    assert np.all(np.diff(r["log_loss"]) <= 1e-12)
    if optimizer == "gd":  # GD moves along the gradient, which stays on the ray (Adam rescales coordinates)
        assert np.max(1 - r["cosine"][1:]) <= 1e-9


def test_steppers_use_the_direction_or_the_true_scale():
    """NGD needs only the direction of a rescaled gradient; GD and Adam get exp(grad_log_scale) × grad."""
    from ttlab.ntp.model import LossGrad
    from ttlab.ntp.train import Stepper

    g = torch.tensor([[3.0, -4.0]], dtype=torch.float64)
    for log_scale, gd_move in ((-10.0, 0.5 * math.exp(-10.0) * 5.0), (-800.0, 0.0)):
        lg = LossGrad(0.0, g, None, None, log_scale, log_scale)
        moves = {}
        for kind in ("ngd", "gd", "adam"):
            W = torch.zeros_like(g)
            Stepper(W, kind, 0.5).step(lg, g)
            moves[kind] = float(W.norm())
        assert moves["ngd"] == pytest.approx(0.5, rel=1e-15)
        assert moves["gd"] == pytest.approx(gd_move, rel=1e-12, abs=0.0)
        if log_scale == -800.0:
            assert moves["adam"] == 0.0  # the true gradient is 0 in float64
        else:
            assert moves["adam"] == pytest.approx(0.5 * math.sqrt(2), rel=1e-3)  # Adam's first step ≈ lr·sign


def test_random_init_runs_finite_with_exact_losses():
    res = train(svop(), TrainConfig(stage1_steps=600, stage2_steps=50, eta0=2.0, init="random", init_scale=0.1))
    for stage in ("1", "2"):
        r = res.rows(stage)
        assert np.all(np.isfinite(r["log_loss"])) and np.all(r["loss"] >= 0)
    assert res.rows("1")["cosine"][-1] > 0.999


# --------------------------------------------------------------------------------------------- property test
def _cases():
    rng = np.random.default_rng(2024)
    return [(int(rng.integers(3, 9)), int(rng.integers(3, 40)), int(rng.integers(0, 10_000)), float(rng.uniform(0.5, 6.0)))
            for _ in range(20)]


@pytest.mark.parametrize("vocab,sentences,seed,eta0", _cases())
def test_stage1_stays_on_the_ray_on_random_realizable_data(vocab, sentences, seed, eta0):
    ds = generate_dataset(vocab, sentences, 2, 4, seed=seed)
    res = train(ds, TrainConfig(stage1_steps=300, stage2_steps=0, eta0=eta0))
    r = res.rows("1")
    n_colloc = len(analyze(ds).collocation)
    star = res.wov_star.norm
    assert star == pytest.approx(math.sqrt(n_colloc * (vocab - 1) / vocab), rel=1e-9)
    assert np.max(1 - r["cosine"][1:]) <= 1e-9
    np.testing.assert_allclose(r["norm"], eta0 * r["step"], rtol=1e-9)
    closed_log = ray_log_loss(r["norm"], star, vocab)
    np.testing.assert_allclose(r["log_loss"], closed_log, rtol=1e-9, atol=1e-12)
    representable = closed_log > -700
    assert np.all(r["loss"][representable] > 0)
    np.testing.assert_allclose(r["loss"][representable], np.exp(closed_log[representable]), rtol=1e-6)


# --------------------------------------------------------------------------------------------- dtype="auto"
def test_logit_spread_bound():
    cfg = TrainConfig(stage1_steps=900, stage2_steps=500, eta0=0.1)
    assert logit_spread_bound(cfg, 20) == pytest.approx(math.sqrt(2) * 0.1 * 900)
    joint = TrainConfig(stage1_steps=900, stage2_steps=500, eta0=0.1, schedule="joint")
    assert logit_spread_bound(joint, 20) == pytest.approx(math.sqrt(2) * 0.1 * 1400)
    E = 2.0 * np.eye(5)
    assert logit_spread_bound(cfg, 5, E) == pytest.approx(2 * math.sqrt(2) * 0.1 * 900)
    assert logit_spread_bound(TrainConfig(optimizer="gd"), 20) == math.inf
    assert logit_spread_bound(TrainConfig(optimizer="adam"), 20) == math.inf
    # the paper's defaults keep small margins even for a large vocabulary: float32 stays available there
    assert logit_spread_bound(TrainConfig(), 500) < AUTO_FLOAT32_MAX_SPREAD


def test_auto_dtype_never_picks_float32_for_large_margins(monkeypatch):
    import ttlab.ntp.model as model_mod
    from ttlab.ntp.experiment import run_dynamics

    monkeypatch.setattr(model_mod, "AUTO_FLOAT32_WORK", 0)  # treat SVOP as a "large" problem
    ds = svop()
    # the dtype policy is the dense path's (impl="auto" runs this setting structured, always in float64)
    small = TrainConfig(stage1_steps=100, stage2_steps=10, eta0=0.1, impl="dense")  # spread ≤ 14
    big = TrainConfig(stage1_steps=3000, stage2_steps=10, eta0=0.1, impl="dense")  # spread ≤ 424
    auto = run_dynamics(ds, TrainConfig(stage1_steps=100, stage2_steps=10, eta0=0.1))["config"]
    assert (auto["impl"], auto["dtype"]) == ("structured", "float64")
    assert run_dynamics(ds, small)["config"]["dtype"] == "float32"
    s = run_dynamics(ds, big)
    assert s["config"]["dtype"] == "float64"
    assert s["stages"]["stage_1"]["final_cosine"] == pytest.approx(1.0, abs=1e-12)
    assert train(ds, big).W_ov.dtype == torch.float64
    f32 = NTPTransformer(ds, dtype="auto", max_logit_spread=logit_spread_bound(small, 4))
    assert f32.dtype == torch.float32
    with pytest.raises(TTLabInputError, match="float32"):
        train(ds, big, model=f32)


# --------------------------------------------------------------------------------------------- formatting
def test_format_loss_never_prints_zero_for_a_positive_loss():
    assert format_loss(1.279685e-125) == "1.280e-125"
    assert format_loss(0.0, math.log(6.0) - 1254 * math.log(10)) == "6.000e-1254"
    assert format_loss(0.0, math.log(9.9999) - 400 * math.log(10)) == "1.000e-399"
    assert format_loss(0.6931) == "0.6931"
    assert format_loss(-0.0) == "0"
    assert format_loss(2.5e-5) == "2.500e-05"


def test_cli_run_and_example_print_positive_losses(run_cli, tmp_path):
    import csv
    import json

    data = tmp_path / "svop.txt"
    data.write_text("S V O P\nV O P\nO P P\nP S V\n")
    res = run_cli("ntp", "run", "--data", data, "--out", tmp_path / "o", "--json")
    assert res.code == 0, res.err
    s1 = json.loads(res.out)["stages"]["stage_1"]
    assert s1["final_cosine"] == pytest.approx(1.0, abs=1e-12)
    assert s1["final_loss"] == pytest.approx(math.log1p(3 * math.exp(-90 / math.sqrt(3))), rel=1e-9)
    assert s1["final_log_loss"] == pytest.approx(math.log(s1["final_loss"]), rel=1e-12)
    with open(tmp_path / "o" / "metrics.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert all(float(r["loss"]) > 0 for r in rows) and "e-23" in rows[-1]["loss"]
    table = run_cli("ntp", "run", "--data", data, "--out", tmp_path / "p", "--quiet", "--stage2-steps", "5")
    assert table.code == 0 and "-0 " not in table.out and "e-23" in table.out
    ex = run_cli("ntp", "example", "svop")
    assert ex.code == 0, ex.err
    assert "stage-1 cosine 1.000000 (loss L0 8.138e-23)" in ex.out.replace("\n", " ")


def test_rescaled_model_gradients_equal_autograd_where_both_are_representable():
    """Margins ≈ 500: the gradient (~1e-218) is rebuilt in log space, divided by its largest entry, and
    exp(grad_log_scale) × it equals autograd of the exact loss, which is still representable here."""
    from ttlab.ntp.maxmargin import max_margin_kq, max_margin_ov

    model = NTPTransformer(svop())
    st = model.structure
    W_ov = 500.0 * torch.as_tensor(max_margin_ov(st.next_token_array()).W)
    W_kq = 60.0 * torch.as_tensor(max_margin_kq(st.kq_triples(), model.vocab_size).W)
    lg = model.loss_and_grad(W_ov, W_kq)
    assert lg.grad_log_scale < -400
    a, b = W_ov.clone().requires_grad_(), W_kq.clone().requires_grad_()
    loss = model.loss(a, b)
    loss.backward()
    assert lg.loss == pytest.approx(loss.item(), rel=1e-9) and lg.loss > 0
    assert lg.log_loss == pytest.approx(math.log(loss.item()), rel=1e-12)
    torch.testing.assert_close(lg.true_grad(lg.grad_ov), a.grad, rtol=1e-9, atol=0.0)
    torch.testing.assert_close(lg.true_grad(lg.grad_kq), b.grad, rtol=1e-6, atol=1e-12 * float(b.grad.abs().max()))
    s1 = model.collocation_loss_and_grad(W_ov)
    c = W_ov.clone().requires_grad_()
    model.collocation_loss(c).backward()
    assert s1.grad_log_scale < -400
    torch.testing.assert_close(s1.true_grad(s1.grad_ov), c.grad, rtol=1e-9, atol=0.0)
