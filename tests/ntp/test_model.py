"""The one-layer transformer: forward pass against a literal per-sentence implementation, analytic
gradients against autograd of that implementation and against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ttlab.errors import TTLabInputError
from ttlab.ntp.generate import generate_dataset
from ttlab.ntp.model import NTPTransformer, make_embeddings


def literal_loss(model: NTPTransformer, W_ov, W_kq):
    """L(θ) = Σ_n π(n) −log softmax(W_ov X φ(Xᵀ W_kq x_L))[y], one sentence at a time."""
    ds = model.dataset
    E = torch.eye(ds.vocab_size, dtype=torch.float64) if model.E is None else model.E
    total = 0.0
    for s, pi in zip(ds.sentences, ds.weights()):
        X = E[:, ds.encode(list(s.tokens))]  # d × L
        phi = torch.softmax(X.T @ W_kq @ X[:, -1], dim=0)
        logits = W_ov @ X @ phi
        total = total - pi * torch.log_softmax(logits, 0)[ds.index[s.label]]
    return total


def literal_collocation_loss(model: NTPTransformer, W_ov):
    st = model.structure
    ds = model.dataset
    E = torch.eye(ds.vocab_size, dtype=torch.float64) if model.E is None else model.E
    losses = [-torch.log_softmax(W_ov @ E[:, ds.index[x]], 0)[ds.index[y]] for x, y in st.collocation.items()]
    return sum(losses) / len(losses)


CASES = [
    ("onehot", None),
    ("gaussian d<V", ("gaussian", 5)),
    ("orthogonal d>V", ("orthogonal", 11)),
    ("equicorrelated", ("equicorrelated", 8)),
]


@pytest.fixture(params=CASES, ids=[c[0] for c in CASES])
def setup(request):
    ds = generate_dataset(8, 30, 2, 5, seed=3)
    kind = request.param[1]
    E = None if kind is None else make_embeddings(kind[0], 8, kind[1], seed=4)
    model = NTPTransformer(ds, E)
    g = torch.Generator().manual_seed(0)
    W_ov = torch.randn(8, model.dim, dtype=torch.float64, generator=g)
    W_kq = torch.randn(model.dim, model.dim, dtype=torch.float64, generator=g)
    return model, W_ov, W_kq


def test_batched_loss_equals_literal_definition(setup):
    model, W_ov, W_kq = setup
    assert model.loss_and_grad(W_ov, W_kq).loss == pytest.approx(float(literal_loss(model, W_ov, W_kq)), rel=1e-12)
    assert float(model.loss(W_ov, W_kq)) == pytest.approx(float(literal_loss(model, W_ov, W_kq)), rel=1e-12)


def test_analytic_gradients_equal_autograd_of_literal_definition(setup):
    model, W_ov, W_kq = setup
    a = W_ov.clone().requires_grad_()
    b = W_kq.clone().requires_grad_()
    literal_loss(model, a, b).backward()
    lg = model.loss_and_grad(W_ov, W_kq)
    torch.testing.assert_close(lg.grad_ov, a.grad, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(lg.grad_kq, b.grad, rtol=1e-10, atol=1e-12)
    only_kq = model.loss_and_grad(W_ov, W_kq, wrt=("kq",))
    assert only_kq.grad_ov is None
    torch.testing.assert_close(only_kq.grad_kq, b.grad, rtol=1e-10, atol=1e-12)


def test_stage1_gradient_equals_autograd(setup):
    model, W_ov, _ = setup
    a = W_ov.clone().requires_grad_()
    loss = literal_collocation_loss(model, a)
    loss.backward()
    lg = model.collocation_loss_and_grad(W_ov)
    val, grad = lg.loss, lg.grad_ov
    assert lg.grad_log_scale == 0.0
    assert val == pytest.approx(float(loss.detach()), rel=1e-12)
    torch.testing.assert_close(grad, a.grad, rtol=1e-10, atol=1e-12)


def test_kq_gradient_matches_finite_differences():
    ds = generate_dataset(6, 20, 2, 4, seed=5)
    model = NTPTransformer(ds)
    rng = np.random.default_rng(1)
    W_ov = torch.as_tensor(rng.standard_normal((6, 6)))
    W_kq = torch.as_tensor(rng.standard_normal((6, 6)))
    grad = model.loss_and_grad(W_ov, W_kq).grad_kq
    h = 1e-6
    for _ in range(10):
        i, j = rng.integers(6, size=2)
        Wp, Wm = W_kq.clone(), W_kq.clone()
        Wp[i, j] += h
        Wm[i, j] -= h
        fd = (float(model.loss(W_ov, Wp)) - float(model.loss(W_ov, Wm))) / (2 * h)
        assert fd == pytest.approx(float(grad[i, j]), abs=1e-8)


def test_one_sentence_gradient_formula_from_the_spec():
    """∂L/∂W_kq of one sentence = X (diag φ − φφᵀ) Xᵀ W_ovᵀ (p − e_y) x_Lᵀ."""
    from ttlab.ntp.dataset import NTPDataset

    ds = NTPDataset.from_text("a => b\nb => a\nc => a\na b c => b\n")
    ds.sentences = [ds.sentences[-1]]  # keep the three-token sentence only
    model = NTPTransformer(ds)
    rng = np.random.default_rng(2)
    W_ov = torch.as_tensor(rng.standard_normal((3, 3)))
    W_kq = torch.as_tensor(rng.standard_normal((3, 3)))
    X = torch.eye(3, dtype=torch.float64)[:, [0, 1, 2]]
    phi = torch.softmax(X.T @ W_kq @ X[:, -1], 0)
    p = torch.softmax(W_ov @ X @ phi, 0)
    e_y = torch.eye(3, dtype=torch.float64)[1]
    expected = X @ (torch.diag(phi) - torch.outer(phi, phi)) @ X.T @ W_ov.T @ torch.outer(p - e_y, X[:, -1])
    torch.testing.assert_close(model.loss_and_grad(W_ov, W_kq).grad_kq, expected, rtol=1e-10, atol=1e-12)


def test_padding_does_not_leak_attention():
    ds = generate_dataset(6, 20, 2, 5, seed=6)
    model = NTPTransformer(ds)
    W_ov, W_kq = model.zeros()
    _, phi = model.forward(W_ov, W_kq)
    assert torch.all(phi[~model.mask] == 0)
    torch.testing.assert_close(phi.sum(1), torch.ones(len(phi), dtype=torch.float64))
    # zero W_kq → uniform attention over each sentence's own positions: a distinct token gets count / length
    torch.testing.assert_close(phi, model.counts / model.lengths.double()[:, None])
    assert torch.equal(model.counts.sum(1).long(), model.lengths)
    assert [int(n) for n in model.lengths] == [len(s.tokens) for s in ds.sentences]


def test_float32_agrees_with_float64():
    ds = generate_dataset(10, 40, 2, 6, seed=7)
    m64, m32 = NTPTransformer(ds), NTPTransformer(ds, dtype="float32")
    rng = np.random.default_rng(3)
    W_ov, W_kq = rng.standard_normal((10, 10)), rng.standard_normal((10, 10))
    a = m64.loss_and_grad(torch.as_tensor(W_ov), torch.as_tensor(W_kq))
    b = m32.loss_and_grad(torch.as_tensor(W_ov, dtype=torch.float32), torch.as_tensor(W_kq, dtype=torch.float32))
    assert b.loss == pytest.approx(a.loss, rel=1e-5)
    torch.testing.assert_close(b.grad_kq.double(), a.grad_kq, rtol=1e-4, atol=1e-5)


def test_bad_embeddings_and_dtype_are_rejected():
    ds = generate_dataset(5, 10, seed=0)
    with pytest.raises(TTLabInputError, match="shape"):
        NTPTransformer(ds, np.ones((3, 4)))
    bad = np.ones((5, 5))
    bad[0, 0] = np.nan
    with pytest.raises(TTLabInputError, match="NaN"):
        NTPTransformer(ds, bad)
    with pytest.raises(TTLabInputError, match="dtype"):
        NTPTransformer(ds, dtype="float16")
    with pytest.raises(TTLabInputError, match="one-hot"):
        make_embeddings("onehot", 5, 4)
    with pytest.raises(TTLabInputError, match="unknown embedding"):
        make_embeddings("fancy", 5)
    with pytest.raises(TTLabInputError, match="not in the vocabulary"):
        NTPTransformer(ds).predict(*NTPTransformer(ds).zeros(), [("zzz",)])


def test_equicorrelated_embeddings_have_the_requested_gram():
    E = make_embeddings("equicorrelated", 6, 9, rho=0.3, seed=0)
    gram = E.T @ E
    np.testing.assert_allclose(gram, 0.7 * np.eye(6) + 0.3, atol=1e-12)


def test_auto_dtype_is_float64_for_small_and_float32_for_large_problems():
    from ttlab.ntp.model import AUTO_FLOAT32_MAX_SPREAD, AUTO_FLOAT32_WORK, resolve_dtype

    assert NTPTransformer(generate_dataset(6, 20, seed=0)).dtype == torch.float64
    assert resolve_dtype("auto", work=AUTO_FLOAT32_WORK, max_logit_spread=10.0) == torch.float32
    assert resolve_dtype("auto", work=AUTO_FLOAT32_WORK - 1, max_logit_spread=10.0) == torch.float64
    # large margins (or no bound at all) keep float64
    assert resolve_dtype("auto", work=AUTO_FLOAT32_WORK, max_logit_spread=AUTO_FLOAT32_MAX_SPREAD * 1.01) == torch.float64
    assert resolve_dtype("auto", work=AUTO_FLOAT32_WORK) == torch.float64


def test_softmax_cross_entropy_is_finite_when_probabilities_underflow():
    from ttlab.ntp.model import softmax_cross_entropy

    logits = torch.tensor([[0.0, 2000.0], [3.0, 1.0]], dtype=torch.float32)
    loss, _, r, log_scale = softmax_cross_entropy(logits, torch.tensor([0, 0]), torch.tensor([0.5, 0.5]))
    assert log_scale == 0.0
    expected = 0.5 * 2000.0 + 0.5 * float(torch.nn.functional.cross_entropy(logits[1:], torch.tensor([0])))
    assert loss == pytest.approx(expected, rel=1e-6)
    torch.testing.assert_close(r[0], torch.tensor([-0.5, 0.5]))
