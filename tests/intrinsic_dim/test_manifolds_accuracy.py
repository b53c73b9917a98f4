"""Known-answer data: the samplers are what they claim, and the estimators recover d.

Stated tolerances (n = 2000 points, seeded): relative error <= 12 % for every estimator
on d <= 5 without noise; GRIDE at scale n1 = 16 within 5 % at noise 0.01 where TwoNN is > 20 % off.
"""

from __future__ import annotations

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim import GRIDE, MANIFOLDS, MLE, TwoNN, kneighbors, sample_manifold, true_dimension
from ttlab.intrinsic_dim.manifolds import random_isometry


def test_samplers_are_seeded_isometric_and_on_the_manifold():
    a = sample_manifold("sphere", 3, 50, 400, seed=9)
    b = sample_manifold("sphere", 3, 50, 400, seed=9)
    c = sample_manifold("sphere", 3, 50, 400, seed=10)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    assert a.shape == (400, 50)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-12)  # rotation keeps the sphere
    assert np.linalg.matrix_rank(a, tol=1e-8) == 4  # spans d + 1 dimensions
    cube = sample_manifold("cube", 4, 9, 300, seed=1)
    assert np.linalg.matrix_rank(cube - cube.mean(0), tol=1e-8) == 4
    Q = random_isometry(np.random.default_rng(0), 5, 30)
    np.testing.assert_allclose(Q.T @ Q, np.eye(5), atol=1e-12)
    noisy = sample_manifold("sphere", 3, 50, 400, seed=9, noise=0.1)
    assert np.std(noisy - a) == pytest.approx(0.1, rel=0.05)


def test_nonlinear_and_swiss_roll_shapes():
    X = sample_manifold("nonlinear", 3, 10, 500, seed=2)
    assert np.linalg.matrix_rank(X, tol=1e-8) == 6  # curved: spans 2d dimensions
    S = sample_manifold("swiss-roll", 2, 3, 500, seed=2)
    assert S.shape == (500, 3)
    assert true_dimension("swiss-roll", 2) == 2


def test_sampler_errors():
    with pytest.raises(TTLabInputError, match="unknown manifold 'torus'"):
        sample_manifold("torus", 2, 5, 10)
    with pytest.raises(TTLabInputError, match="need >= 6"):
        sample_manifold("sphere", 5, 4, 10)
    with pytest.raises(TTLabInputError, match="intrinsic dimension 2; got d=3"):
        sample_manifold("swiss-roll", 3, 5, 10)
    with pytest.raises(TTLabInputError, match="noise"):
        sample_manifold("cube", 2, 5, 10, noise=-1.0)


CASES = [("sphere", 2), ("sphere", 5), ("cube", 3), ("linear", 5), ("swiss-roll", 2), ("nonlinear", 4)]
ESTIMATORS = {
    "mle-mean": MLE(k=20),
    "mle-harmonic": MLE(k=20, average="harmonic"),
    "twonn": TwoNN(),
    "gride": GRIDE(n1=10),
}


@pytest.mark.parametrize("name,d", CASES)
def test_estimates_within_tolerance(name, d):
    X = sample_manifold(name, d, 24, 2000, seed=11)  # distances do not depend on the ambient D
    dist = kneighbors(X, 20).distances  # one exact search shared by the four estimators
    first = MLE(k=20).fit(X).dimension_
    for label, est in ESTIMATORS.items():
        value = est._from_distances(dist[:, : est.neighbors_needed()])[0]
        assert abs(value - d) / d <= 0.12, (label, name, d, value)
    assert first == ESTIMATORS["mle-mean"]._from_distances(dist)[0]  # same as the full fit


def test_spec_cross_check_linear_subspace():
    """SPEC: 5-dim linear subspace in R^768, n = 3600, K = 20: mean ~ 5.3, harmonic ~ 5.0."""
    X = sample_manifold("linear", 5, 768, 3600, seed=0, dtype=np.float32)
    est = MLE(k=20, average="mean").fit(X)
    pw = est.pointwise_dimension_
    assert est.dimension_ == pytest.approx(5.3, abs=0.1)
    assert 1 / np.mean(1 / pw) == pytest.approx(5.0, abs=0.1)  # harmonic (MacKay-Ghahramani)
    assert np.mean(pw * 18 / 19) == pytest.approx(5.0, abs=0.1)  # K-2 variant


def test_gride_at_larger_scale_resists_noise():
    X = sample_manifold("sphere", 4, 64, 2000, noise=0.01, seed=1)
    twonn = TwoNN().fit(X).dimension_
    g = GRIDE(n1=16).fit(X)
    assert abs(twonn - 4) / 4 > 0.2
    assert abs(g.dimension_ - 4) / 4 < 0.05
    ms = GRIDE(n1=1, multiscale=True, range_max=64).fit(X)
    assert ms.dimension_scales_[0] > ms.dimension_scales_[-1] + 0.8  # noise inflates small scales
    assert np.all(np.diff(ms.radius_scales_) > 0)


def test_all_manifolds_listed():
    assert set(MANIFOLDS) == {"sphere", "cube", "linear", "swiss-roll", "nonlinear"}
