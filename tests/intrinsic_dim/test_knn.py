"""Exact neighbours: equal to a float64 brute force, on every block layout and on hard data."""

from __future__ import annotations

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim import kneighbors, knn_exact, sample_manifold
from ttlab.intrinsic_dim import knn as knn_mod


def brute(X: np.ndarray, k: int):
    """Reference: all pairwise distances from coordinate differences (scipy), float64."""
    from scipy.spatial.distance import cdist

    X = X.astype(np.float64)
    d2 = cdist(X, X, "sqeuclidean")
    np.fill_diagonal(d2, np.inf)
    idx = np.argsort(d2, axis=1, kind="stable")[:, :k]
    return np.sqrt(np.take_along_axis(d2, idx, 1)), idx


@pytest.mark.parametrize(
    "n,D,k,block",
    [
        (700, 12, 20, 64),  # many blocks, ragged last block, both directions of each block
        (1500, 3, 5, 256),  # low dimension: many near-ties
        (1100, 50, 1, 1024),  # two blocks, k = 1
        (300, 7, 20, 4096),  # small: dense path
    ],
)
def test_matches_brute_force(n, D, k, block):
    rng = np.random.default_rng(n + D)
    X = rng.standard_normal((n, D)) @ rng.standard_normal((D, D))
    nb = kneighbors(X, k, block_size=block)
    d, i = brute(X, k)
    np.testing.assert_allclose(nb.distances, d, rtol=1e-9)
    np.testing.assert_array_equal(nb.indices, i)  # no exact ties in continuous data
    assert nb.distances.dtype == np.float64 and nb.exact


def test_far_from_origin_and_float32_input():
    """Float32 products lose precision away from the origin; centring and re-measuring fix it."""
    rng = np.random.default_rng(1)
    X = (1e4 + rng.standard_normal((900, 30))).astype(np.float32)
    nb = kneighbors(X, 10, block_size=128)
    d, i = brute(X, 10)
    np.testing.assert_allclose(nb.distances, d, rtol=1e-9)
    np.testing.assert_array_equal(nb.indices, i)


def test_clustered_data_where_first_thresholds_are_loose():
    rng = np.random.default_rng(2)
    centers = rng.standard_normal((30, 16)) * 50
    X = centers[rng.integers(0, 30, 1200)] + rng.standard_normal((1200, 16))
    nb = kneighbors(X, 15, block_size=100)
    d, _ = brute(X, 15)
    np.testing.assert_allclose(nb.distances, d, rtol=1e-9)


def test_uncertified_rows_fall_back_to_float64():
    """Integer grid: many exactly tied distances. With no margin the float32 selection cannot be
    certified, the fallback runs, and the distances are still exact."""
    g = np.arange(12.0)
    X = np.stack(np.meshgrid(g, g, g), -1).reshape(-1, 3)
    rng = np.random.default_rng(3)
    X = X[rng.permutation(len(X))]
    nb = kneighbors(X, 6, block_size=200, margin=0)
    d, _ = brute(X, 6)
    assert nb.n_fallback > 0
    np.testing.assert_allclose(nb.distances, d, rtol=1e-9)


def test_error_bound_holds():
    """The certified float32 error bound really bounds |float32 d^2 - exact d^2|."""
    import torch

    rng = np.random.default_rng(4)
    X = rng.standard_normal((400, 256)) * rng.uniform(0.1, 10, (400, 1))
    X -= X.mean(0)
    X32 = torch.from_numpy(X.astype(np.float32))
    sq = (X32.double() ** 2).sum(1)
    G = torch.addmm(sq.float()[None, :], X32, X32.T, beta=1.0, alpha=-2.0) + sq.float()[:, None]
    exact = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    err = np.abs(G.numpy().astype(np.float64) - exact)
    eps = knn_exact._error_bound(sq.numpy(), X.shape[1])
    assert (err <= eps[:, None]).all()
    assert err.max() > 0  # the bound is tested against real rounding


def test_too_few_points():
    with pytest.raises(TTLabInputError, match="at least 21 points"):
        kneighbors(np.random.default_rng(0).standard_normal((20, 3)), 20)


def test_faiss_backends_when_installed():
    pytest.importorskip("faiss")
    X = sample_manifold("sphere", 3, 20, 1500, seed=6)
    d, i = brute(X, 10)
    exact = kneighbors(X, 10, backend="faiss")
    np.testing.assert_allclose(exact.distances, d, rtol=1e-9)
    approx = kneighbors(X, 10, backend="faiss-hnsw")
    assert not approx.exact
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(approx.indices, i)])
    assert recall > 0.9


def test_faiss_backend_missing_is_a_clear_error(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "faiss", None)  # import faiss now raises ImportError, installed or not
    assert not knn_mod.faiss_available()
    with pytest.raises(TTLabInputError, match="faiss-cpu"):
        kneighbors(np.zeros((30, 2)) + np.arange(30)[:, None], 3, backend="faiss")
