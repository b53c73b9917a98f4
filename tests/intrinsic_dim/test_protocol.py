"""The paper's protocol: seeded shuffled batches, per-batch MLE, averaged; reproducible."""

from __future__ import annotations

import numpy as np
import pytest

from ttlab.intrinsic_dim import MLE, estimate_id, paper_protocol, sample_manifold, split_batches
from ttlab.intrinsic_dim.mle import mle_pointwise


def test_split_batches():
    b = split_batches(1000, 300, seed=1)
    assert [len(x) for x in b] == [300, 300, 300]
    assert len(np.unique(np.concatenate(b))) == 900
    assert [len(x) for x in split_batches(1000, 300, 1, "merge")] == [300, 300, 400]
    assert [len(x) for x in split_batches(1000, 300, 1, "keep")] == [300, 300, 300, 100]
    assert sorted(np.concatenate(split_batches(1000, 300, 1, "keep"))) == list(range(1000))
    assert [len(x) for x in split_batches(200, 300, 1)] == [200]
    np.testing.assert_array_equal(split_batches(1000, 300, 1)[0], split_batches(1000, 300, 1)[0])
    assert not np.array_equal(split_batches(1000, 300, 1)[0], split_batches(1000, 300, 2)[0])


def test_protocol_result_and_reproducibility():
    X = sample_manifold("linear", 5, 96, 5000, seed=3)
    r1 = paper_protocol(X, batch_size=1200, seed=4)
    r2 = paper_protocol(X, batch_size=1200, seed=4)
    r3 = paper_protocol(X, batch_size=1200, seed=5)
    assert r1.batches == r2.batches and r1.dimension == r2.dimension
    assert r1.batches != r3.batches
    assert len(r1.batches) == 4 and r1.batch_sizes == [1200] * 4 and r1.n_used == 4800
    assert r1.dimension == pytest.approx(np.mean(r1.batches), rel=1e-12)
    assert r1.dimension_std == pytest.approx(np.std(r1.batches, ddof=1), rel=1e-12)
    assert r1.dimension_sem == pytest.approx(r1.dimension_std / 2, rel=1e-12)
    assert r1.config["k"] == 20 and r1.config["average"] == "mean" and r1.config["batch_size"] == 1200
    assert r1.versions["numpy"] == np.__version__
    # harmonic is lower than the arithmetic mean (pointwise estimates are right-skewed)
    rh = paper_protocol(X, batch_size=1200, seed=4, average="harmonic")
    assert rh.dimension < r1.dimension - 0.15
    d = r1.to_dict()
    assert isinstance(d["batches"], list) and d["method"] == "mle"


def test_pointwise_formula_by_hand():
    """(K-1) / sum_{j<K} log(T_K / T_j) on a hand-made distance row."""
    T = np.array([[1.0, 2.0, 4.0]])
    assert mle_pointwise(T)[0] == pytest.approx(2 / (np.log(4) + np.log(2)))
    assert mle_pointwise(T, unbiased=True)[0] == pytest.approx(1 / (np.log(4) + np.log(2)))


def test_batched_pointwise_values_align_with_point_indices():
    import torch

    threads = torch.get_num_threads()
    X = sample_manifold("sphere", 2, 8, 900, seed=6)
    est = MLE(k=10, batch_size=300, seed=0).fit(X)  # batches run concurrently on the CPU
    assert torch.get_num_threads() == threads  # thread setting restored
    for b in range(3):
        sub = MLE(k=10).fit(X[est.point_indices_[300 * b : 300 * (b + 1)]])
        assert est.batch_dimensions_[b] == sub.dimension_
    assert len(est.pointwise_dimension_) == len(est.point_indices_) == 900
    first = np.sort(est.point_indices_[:300])
    direct = MLE(k=10).fit(X[est.point_indices_[:300]])
    np.testing.assert_allclose(est.pointwise_dimension_[:300], direct.pointwise_dimension_, rtol=1e-12)
    assert len(np.unique(first)) == 300


def test_estimate_id_for_each_method():
    X = sample_manifold("cube", 3, 12, 1500, seed=8)
    for method in ("mle", "twonn", "gride"):
        r = estimate_id(X, method)
        assert r.method == method and abs(r.dimension - 3) < 0.4
        assert r.batches is None and r.n_points == 1500
    g = estimate_id(X, "gride", k=8, multiscale=True)
    assert g.config["n1"] == 4 and g.config["n2"] == 8 and "dimension_scales" in g.extras


def test_fit_on_a_shared_neighbour_search_equals_fit():
    """The public protocol `ttlab id compare` uses (plan_batches, neighbors_needed, fit_prepared with a shared
    search) gives what fit gives, and plan_batches checks the parameters and the points first."""
    from ttlab.errors import TTLabInputError
    from ttlab.intrinsic_dim import MLE, TwoNN
    from ttlab.intrinsic_dim.base import prepare_points
    from ttlab.intrinsic_dim.knn import kneighbors_prepared
    from ttlab.intrinsic_dim.manifolds import sample_manifold

    X = sample_manifold("sphere", 3, 10, 900, seed=2)
    prep = prepare_points(X)
    for est in (MLE(k=20, batch_size=300, seed=4), TwoNN(batch_size=300, seed=4)):
        batches = est.plan_batches(prep)
        assert [len(b) for b in batches] == [300, 300, 300]
        nbs = [kneighbors_prepared(prep.X[b], 25) for b in batches]  # more columns than needed: the first are read
        shared = est.fit_prepared(prep, batches, nbs).dimension_
        assert shared == type(est)(**est.get_params()).fit(X).dimension_
    assert MLE(k=20).neighbors_needed() == 20 and TwoNN().neighbors_needed() == 2
    with pytest.raises(TTLabInputError, match="batch_size"):
        MLE(k=20, batch_size=1).plan_batches(prep)
    with pytest.raises(TTLabInputError, match="at least 21 distinct points"):
        MLE(k=20).plan_batches(prepare_points(X[:10]))


def test_fit_estimate_takes_the_estimator_object_and_records_it():
    """The typed path (the CLI's): make_estimator builds the object, fit_estimate fits it; the result is the one
    estimate_id's flat options give, and the config names the method and GRIDE's k (its n2)."""
    import pytest

    from ttlab.errors import TTLabInputError
    from ttlab.intrinsic_dim import LPCA, estimate_id, fit_estimate, make_estimator, sample_manifold

    X = sample_manifold("sphere", 3, 10, 800, seed=1)
    for method, opts in (("mle", dict(k=12, batch_size=300, seed=2)), ("twonn", {}), ("gride", dict(k=14))):
        a, b = fit_estimate(make_estimator(method, **opts), X), estimate_id(X, method, **opts)
        assert a.method == method and a.dimension == b.dimension and a.config == b.config
    assert fit_estimate(make_estimator("gride", k=14), X).config["k"] == 14
    with pytest.raises(TTLabInputError, match="fit_estimate takes one of MLE, TwoNN, GRIDE, TwoNNBayes, BID, got LPCA"):
        fit_estimate(LPCA(), X)
