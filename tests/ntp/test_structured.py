"""The structured two-stage dynamics (ttlab.ntp.structured) against the dense path, metric by metric."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import ttlab.ntp.structured as structured
from ttlab.errors import TTLabInputError
from ttlab.ntp.config import METRIC_COLUMNS, TrainConfig
from ttlab.ntp.dataset import NTPDataset
from ttlab.ntp.examples import svop
from ttlab.ntp.generate import generate_dataset
from ttlab.ntp.maxmargin import max_margin_kq, sparse_max_margin_kq
from ttlab.ntp.model import make_embeddings, softmax_cross_entropy
from ttlab.ntp.structure import analyze
from ttlab.ntp.structured import (
    EXACT_WIDTH,
    StructuredProblem,
    bucket_width,
    compressed_cross_entropy,
    train_structured,
)
from ttlab.ntp.train import train


def _both(ds, **kw):
    dense = train(ds, TrainConfig(dtype="float64", impl="dense", **kw))
    struct = train(ds, TrainConfig(impl="structured", **kw))
    assert (dense.config.impl, struct.config.impl) == ("dense", "structured")
    return dense, struct


def _assert_same_metrics(dense, struct, tol=1e-10):
    for c in METRIC_COLUMNS:
        a, b = dense.metrics[c], struct.metrics[c]
        assert len(a) == len(b), c
        if c == "stage":
            assert a == b
            continue
        a, b = np.asarray(a, float), np.asarray(b, float)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=c)
        ok = ~np.isnan(a)
        if c == "log_loss":  # relative on the loss itself
            np.testing.assert_allclose(b[ok], a[ok], rtol=tol, atol=tol, err_msg=c)
        else:
            np.testing.assert_allclose(b[ok], a[ok], rtol=0, atol=tol, err_msg=c)
    assert struct.limit_loss == pytest.approx(dense.limit_loss, abs=tol)
    assert struct.max_len == dense.max_len
    for name in ("wov_star", "wkq_star"):
        d, s = getattr(dense, name), getattr(struct, name)
        assert s.norm == pytest.approx(d.norm, rel=1e-12)
        assert (s.method, s.n_constraints) == (d.method, d.n_constraints)
        assert s.min_margin == pytest.approx(d.min_margin, rel=1e-12)
        np.testing.assert_allclose(s.W, d.W, atol=1e-14)
    torch.testing.assert_close(struct.W_ov, dense.W_ov, rtol=0, atol=1e-10)
    torch.testing.assert_close(struct.W_kq, dense.W_kq, rtol=0, atol=1e-10)


@pytest.mark.parametrize(
    "vocab,sentences,max_len,seed",
    [(6, 20, 4, 0), (20, 100, 6, 1), (20, 100, 6, 7), (45, 150, 8, 3), (80, 300, 5, 11)],
)
def test_structured_ngd_reproduces_the_dense_run_on_every_metric(vocab, sentences, max_len, seed):
    ds = generate_dataset(vocab, sentences, 2, max_len, seed=seed)
    dense, struct = _both(ds, stage1_steps=120, stage2_steps=150)
    _assert_same_metrics(dense, struct)
    # the run moved: stage 2 changed the loss and the attention (a vacuous comparison would not)
    r = struct.rows("2")
    assert r["loss"][-1] < r["loss"][0] - 1e-3 and r["norm"][-1] > 0


def test_structured_gd_reproduces_the_dense_run():
    ds = generate_dataset(15, 60, 2, 5, seed=4)
    dense, struct = _both(ds, stage1_steps=80, stage2_steps=80, optimizer="gd", eta0=1.0, eta=1.0)
    _assert_same_metrics(dense, struct)


def test_svop_stage1_on_the_ray_past_exp_range_as_dense():
    """η0 = 2 for 3000 steps ends at margin ‖W‖/√3 ≈ 3464 (far past exp's range): loss and log-loss
    follow the closed form log(1 + 3 exp(−‖W_ov‖/√3)) in both paths."""
    dense, struct = _both(svop(), stage1_steps=3000, stage2_steps=50, eta0=2.0)
    _assert_same_metrics(dense, struct)
    r = struct.rows("1")
    assert np.max(1 - r["cosine"][1:]) <= 1e-12
    np.testing.assert_allclose(r["norm"], 2.0 * r["step"], rtol=1e-12)
    x = math.log(3) - r["norm"] / math.sqrt(3)
    closed_log = np.where(x > -700, np.log(np.log1p(np.exp(np.maximum(x, -700)))), x - np.exp(np.maximum(x, -700)) / 2)
    np.testing.assert_allclose(r["log_loss"], closed_log, rtol=1e-12, atol=1e-12)
    assert r["log_loss"][-1] < -3000 and math.isfinite(r["log_loss"][-1])


def test_structured_stage2_exact_at_margins_past_exp_range():
    """A long stage 1 (margins ≈ 6000) makes the stage-2 logit gaps pass exp's range within a few steps:
    the loss is 0.0 in float64 and only its log is finite, and both paths agree on it and the direction."""
    ds = generate_dataset(12, 40, 2, 5, seed=5)
    dense, struct = _both(ds, stage1_steps=4000, stage2_steps=5, eta0=5.0, eta=1.0)
    _assert_same_metrics(dense, struct)
    r = struct.rows("2")
    assert r["loss"][-1] == 0.0 and r["log_loss"][-1] < -800  # measured −862.7
    assert np.all(np.isfinite(r["log_loss"]))


def test_structured_stage1_keeps_the_exact_symmetric_ray_where_rounding_is_amplified():
    """With a per-column margin step > 2 (here η0 = 20, ≈ 6.3 per step) the symmetric NGD trajectory is
    unstable: rounding differences between columns grow ×5 per step, and the dense run leaves the ray
    (measured 1 − cos = 1e-4 at t = 40). Exact arithmetic keeps every column on the ray; the structured
    run does, matching the closed-form loss log(1 + (|V| − 1) exp(−‖W_ov‖/‖W*_ov‖)) all the way."""
    ds = generate_dataset(12, 40, 2, 5, seed=5)
    res = train(ds, TrainConfig(stage1_steps=400, stage2_steps=0, eta0=20.0))
    r = res.rows("1")
    assert np.max(np.abs(1 - r["cosine"][1:])) <= 1e-12
    np.testing.assert_allclose(r["norm"], 20.0 * r["step"], rtol=1e-12)
    x = math.log(11) - r["norm"] / res.wov_star.norm
    closed_log = np.where(x > -700, np.log(np.log1p(np.exp(np.maximum(x, -700)))), x - np.exp(np.maximum(x, -700)) / 2)
    np.testing.assert_allclose(r["log_loss"], closed_log, rtol=1e-12, atol=1e-12)


def _with_repeated_token_sentences(ds: NTPDataset) -> NTPDataset:
    """``ds`` plus multi-token sentences of one repeated token (their attention is 1 whatever W_kq is)."""
    nxt = analyze(ds).collocation
    extra = [(" ".join([t] * k), nxt[t]) for t, k in zip(list(nxt)[:5], (2, 3, 5, 2, 7))]
    return NTPDataset.from_text(ds.to_text() + "".join(f"{x} => {y}\n" for x, y in extra))


def test_batches_of_mixed_widths_and_constant_sentences_reproduce_the_dense_run(monkeypatch):
    """Sentences with 1 to 36 distinct tokens (exact batches and a padded one past EXACT_WIDTH), one-token
    sentences and multi-token sentences of one repeated token (constant rows): every metric as the dense
    run's to 1e-10; padding every batch of more than 16 distinct tokens changes nothing beyond rounding."""
    ds = _with_repeated_token_sentences(generate_dataset(50, 60, 2, 64, seed=3))
    prob = StructuredProblem(ds)
    widths = [b.pair.shape[1] for b in prob.buckets]
    assert max(widths) > EXACT_WIDTH and any(bool((b.count == 0).any()) for b in prob.buckets)  # padding
    const = [b for b in prob.buckets if b.constant]
    assert len(const) == 1 and int(const[0].multi.sum()) >= 5 and int((~const[0].multi).sum()) == ds.vocab_size
    dense, struct = _both(ds, stage1_steps=100, stage2_steps=150)
    _assert_same_metrics(dense, struct)
    r = struct.rows("2")
    assert r["loss"][-1] < r["loss"][0] - 1e-3 and r["min_optimal_attention"][-1] > r["min_optimal_attention"][0]
    monkeypatch.setattr(structured, "EXACT_WIDTH", 0)
    padded = StructuredProblem(ds)
    assert len(padded.buckets) < len(prob.buckets)
    assert sum(int((b.count == 0).sum()) for b in padded.buckets) > sum(int((b.count == 0).sum()) for b in prob.buckets)
    again = train_structured(ds, TrainConfig(stage1_steps=100, stage2_steps=150), problem=padded)
    for c in METRIC_COLUMNS[1:]:
        np.testing.assert_allclose(np.asarray(again.metrics[c], float), np.asarray(struct.metrics[c], float),
                                   rtol=0, atol=1e-12, err_msg=c)


def test_bucket_width_pads_at_most_an_eighth():
    us = np.arange(1, 5000)
    w = np.array([bucket_width(int(u)) for u in us])
    assert np.all(w >= us) and np.all(w[us <= EXACT_WIDTH] == us[us <= EXACT_WIDTH])
    assert np.all(w - us < np.maximum(us / 8, 1)) and np.all(np.diff(w) >= 0)
    assert len(np.unique(w)) < 120  # few batches even for long sentences


def test_compressed_cross_entropy_equals_the_dense_one_on_expanded_rows():
    rng = np.random.default_rng(0)
    V = 9
    counts = torch.tensor([[1.0, 1.0, 7.0], [2.0, 1.0, 6.0], [4.0, 4.0, 1.0], [1.0, 8.0, 0.0]])
    lab = torch.tensor([0, 1, 2, 0])  # the label's entry has count 1
    for scale in (1.0, 30.0, 900.0):  # 900: every competing term underflows, log-space paths
        vals = torch.as_tensor(scale * rng.standard_normal((4, 3))).masked_fill(counts == 0, -math.inf)
        vals[0, 0] = vals[0].max() + scale  # one row with the label far ahead
        w = torch.as_tensor(rng.dirichlet(np.ones(4)))
        full = torch.stack([v.repeat_interleave(c.long()) for v, c in zip(vals, counts)])
        full_lab = torch.tensor([int(counts[i, : lab[i]].sum()) for i in range(4)])
        ce = compressed_cross_entropy(vals, counts, lab, w)
        ref = softmax_cross_entropy(full, full_lab, w)
        assert full.shape == (4, V)
        assert ce.loss == pytest.approx(ref.loss, rel=1e-12, abs=0)
        assert ce.log_loss == pytest.approx(ref.log_loss, rel=1e-12)
        assert ce.log_scale == pytest.approx(ref.log_scale, rel=1e-12, abs=1e-12)
        expanded = torch.stack([g.repeat_interleave(c.long()) for g, c in zip(ce.grad, counts)])
        torch.testing.assert_close(expanded, ref.grad, rtol=1e-12, atol=1e-300)


def test_sparse_w_star_kq_equals_the_dense_solver():
    # the SPEC's non-complete example (a = 0.75, c = 0.5, b = d = e = −0.25, q = −0.5) plus random data
    ds = NTPDataset.from_text("a b d e q => A\nc q => C\n" + "".join(f"{t} => {t.upper()}\n" for t in "abcdeq"))
    st = analyze(ds)
    for triples, V in [(st.kq_triples(), ds.vocab_size)] + [
        (analyze(d).kq_triples(), d.vocab_size) for d in (generate_dataset(30, 120, 2, 7, seed=s) for s in (0, 1))
    ]:
        sp = sparse_max_margin_kq(triples, V)
        ref = max_margin_kq(triples, V)
        W = np.zeros((V, V))
        W[sp.rows, sp.cols] = sp.values
        np.testing.assert_allclose(W, ref.W, atol=1e-14)
        assert (sp.norm, sp.method) == (pytest.approx(ref.norm, rel=1e-13), ref.method)
    sp = sparse_max_margin_kq(st.kq_triples(), ds.vocab_size)
    q = ds.index["q"]
    col = {ds.vocab[t]: v for t, qq, v in zip(sp.rows, sp.cols, sp.values) if qq == q}
    assert col == pytest.approx({"a": 0.75, "c": 0.5, "b": -0.25, "d": -0.25, "e": -0.25, "q": -0.5}, abs=1e-9)


def test_structured_state_has_no_vocab_squared_array():
    ds = generate_dataset(300, 200, 2, 6, seed=2)
    V = ds.vocab_size
    prob = StructuredProblem(ds)
    res = train_structured(ds, TrainConfig(stage1_steps=5, stage2_steps=5), problem=prob)
    arrays = [v for obj in (prob, res.structured, res.structured.W_ov, res.structured.W_kq,
                            res.structured.wov_star, res.structured.wkq_star) for v in vars(obj).values()
              if isinstance(v, (np.ndarray, torch.Tensor))]
    assert len(arrays) > 15
    arrays += [v for b in prob.buckets for v in vars(b).values() if isinstance(v, (np.ndarray, torch.Tensor))]
    biggest = max(int(np.prod(a.shape)) for a in arrays)
    assert biggest <= max(prob.work, prob.n_tokens, 2 * V) < V * V // 10


@pytest.mark.parametrize(
    "kw,reason",
    [
        ({"optimizer": "adam"}, "ngd and gd"),
        ({"init": "random"}, "zero init"),
        ({"schedule": "joint"}, "two-stage"),
        ({"dtype": "float32"}, "float64"),
    ],
)
def test_structured_refuses_configurations_that_leave_the_structure(kw, reason):
    ds = svop()
    with pytest.raises(TTLabInputError, match=reason):
        train(ds, TrainConfig(stage1_steps=3, stage2_steps=3, impl="structured", **kw))
    assert train(ds, TrainConfig(stage1_steps=3, stage2_steps=3, **kw)).config.impl == "dense"  # auto


def test_impl_choice_and_validation():
    ds = svop()
    assert train(ds, TrainConfig(stage1_steps=3, stage2_steps=3)).config.impl == "structured"
    E = make_embeddings("gaussian", ds.vocab_size, dim=3, seed=0)
    with pytest.raises(TTLabInputError, match="one-hot"):
        train(ds, TrainConfig(stage1_steps=3, stage2_steps=3, impl="structured"), embeddings=E)
    assert train(ds, TrainConfig(stage1_steps=3, stage2_steps=3), embeddings=E).config.impl == "dense"
    with pytest.raises(TTLabInputError, match="unknown impl .*; choose one of auto, structured, dense") as info:
        train(ds, TrainConfig(impl="sparse"))
    assert info.value.params == ("impl",)


def test_cli_impl_option(run_cli, tmp_path):
    r = run_cli("ntp", "run", "--vocab", "8", "--sentences", "20", "--stage1-steps", "20", "--stage2-steps", "20",
                "--impl", "dense", "--out", str(tmp_path / "d"), "--quiet")
    assert r.code == 0, r.err
    r = run_cli("ntp", "run", "--vocab", "8", "--sentences", "20", "--stage1-steps", "20", "--stage2-steps", "20",
                "--out", str(tmp_path / "s"), "--quiet")
    assert r.code == 0, r.err
    d = (tmp_path / "d" / "metrics.csv").read_text().splitlines()
    s = (tmp_path / "s" / "metrics.csv").read_text().splitlines()
    assert len(d) == len(s) == 43
    for ld, ls in zip(d[1:], s[1:]):
        np.testing.assert_allclose(np.array(ls.split(","), float), np.array(ld.split(","), float), atol=1e-10)
    r = run_cli("ntp", "run", "--vocab", "8", "--sentences", "20", "--impl", "sparse", "--out", str(tmp_path / "x"))
    assert r.code == 2 and "unknown impl" in r.err and "Traceback" not in r.err
    assert "(command-line option: --impl)" in " ".join(r.err.split())
    r = run_cli("ntp", "run", "--vocab", "8", "--sentences", "20", "--impl", "structured", "--optimizer", "adam",
                "--out", str(tmp_path / "y"))
    assert r.code == 2 and "structured cannot run" in r.err and "Traceback" not in r.err


def test_large_vocabulary_results_carry_no_dense_matrices(monkeypatch):
    import ttlab.ntp.experiment as experiment
    import ttlab.ntp.structured as structured

    ds = generate_dataset(10, 30, 2, 4, seed=1)
    full = train(ds, TrainConfig(stage1_steps=10, stage2_steps=10))
    monkeypatch.setattr(structured, "MATERIALIZE_LIMIT", 5)
    small = train(ds, TrainConfig(stage1_steps=10, stage2_steps=10))
    assert small.W_ov is None and small.W_kq is None and small.wkq_star.W.shape == (0, 0)
    for c in METRIC_COLUMNS:
        np.testing.assert_array_equal(np.asarray(small.metrics[c]), np.asarray(full.metrics[c]), err_msg=c)
    assert small.wkq_star.norm == full.wkq_star.norm
    torch.testing.assert_close(small.structured.W_kq.dense(), full.W_kq, rtol=0, atol=0)
    torch.testing.assert_close(small.structured.W_ov.dense(), full.W_ov, rtol=0, atol=0)
    monkeypatch.setattr(experiment, "MATERIALIZE_LIMIT", 5)
    with pytest.raises(TTLabInputError, match="generalization_samples") as info:
        experiment.run_dynamics(ds, TrainConfig(stage1_steps=10, stage2_steps=10), generalization_samples=5)
    assert info.value.params == ("generalization_samples",)
    s = experiment.run_dynamics(ds, TrainConfig(stage1_steps=10, stage2_steps=10))
    assert s["config"]["impl"] == "structured" and s["config"]["dim"] == ds.vocab_size
