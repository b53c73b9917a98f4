"""The exact k-d tree backend: identical to the blocked search, chosen by ``auto`` at low dimension."""

from __future__ import annotations

import numpy as np
import pytest

from ttlab.intrinsic_dim import MLE
from ttlab.intrinsic_dim.knn import TREE_MAX_DIM, choose_backend, kneighbors


@pytest.mark.parametrize("n, dim", [(500, 1), (3000, 2), (2500, 3), (2000, 8), (1500, 12)])
def test_tree_and_blocked_search_return_identical_neighbours(n, dim):
    rng = np.random.default_rng(dim)
    X = rng.normal(size=(n, dim)) @ rng.normal(size=(dim, dim)) + 100.0  # anisotropic, off-centre
    a = kneighbors(X, 15, backend="tree")
    b = kneighbors(X, 15, backend="torch")
    assert a.backend == "tree" and b.backend == "torch-cpu" and a.exact
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.distances, b.distances)
    # and both agree with a plain float64 brute force
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) if n <= 1500 else None
    if d2 is not None:
        np.fill_diagonal(d2, np.inf)
        ref = np.sort(d2, axis=1)[:, :15]
        np.testing.assert_allclose(a.distances, np.sqrt(ref), rtol=1e-12)


def test_ties_are_ordered_the_same_way():
    g = np.stack(np.meshgrid(np.arange(30.0), np.arange(30.0)), -1).reshape(-1, 2)  # a grid: many equal distances
    a = kneighbors(g, 4, backend="tree")
    b = kneighbors(g, 4, backend="torch")
    np.testing.assert_array_equal(a.distances, b.distances)
    np.testing.assert_array_equal(a.indices, b.indices)
    assert np.all(a.distances[:, 0] == 1.0)


def test_duplicates_do_not_break_the_tree():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    X = np.vstack([X, X[:50]])
    a = kneighbors(X, 5, backend="tree")
    b = kneighbors(X, 5, backend="torch")
    np.testing.assert_array_equal(a.distances, b.distances)
    assert not (a.indices == np.arange(len(X))[:, None]).any()  # never its own neighbour


def test_auto_picks_the_backend_from_the_shape():
    assert choose_backend(50_000, 2, "cpu") == "tree"
    assert choose_backend(50_000, TREE_MAX_DIM, "cpu") == "tree"
    assert choose_backend(50_000, TREE_MAX_DIM + 1, "cpu") == "torch"
    assert choose_backend(50_000, 768, "cpu") == "torch"
    assert choose_backend(50_000, 2, "cuda") == "torch"  # on a GPU the blocked product wins everywhere
    X2 = np.random.default_rng(1).uniform(size=(3000, 2))
    assert kneighbors(X2, 10).backend == "tree"
    X64 = np.random.default_rng(1).uniform(size=(600, 64))
    assert kneighbors(X64, 10, device="cpu").backend == "torch-cpu"


def test_mle_is_the_same_number_on_either_backend():
    X = np.random.default_rng(3).uniform(size=(4000, 3))
    auto = MLE(k=20).fit(X)
    blocked = MLE(k=20, backend="torch").fit(X)
    assert auto.neighbors_backend_ == "tree"
    assert auto.dimension_ == blocked.dimension_
    np.testing.assert_array_equal(auto.pointwise_dimension_, blocked.pointwise_dimension_)
