"""Manifold-regression data: Hölder ridge targets, isometric embedding, seeded nested splits."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.scaling.targets import knn_regression, make_problem, make_splits, sample_frequencies, weighted_frequencies


def test_frequencies_follow_the_power_law():
    rng = np.random.default_rng(0)
    for beta, R in ((1.0, 32.0), (0.5, 32.0)):
        r = sample_frequencies(rng, 200_000, beta, R)
        assert r.min() >= 1.0 and r.max() <= R
        p = 2 * beta
        for t in (1.5, 2.0, 4.0, 8.0):  # P(r > t) = (t^-p - R^-p) / (1 - R^-p) for density ∝ r^-(1+p)
            expected = (t ** -p - R ** -p) / (1 - R ** -p)
            assert np.mean(r > t) == pytest.approx(expected, abs=0.005)
    shifted = sample_frequencies(rng, 10_000, 1.0, 64.0, min_freq=4.0)
    assert shifted.min() >= 4.0 and shifted.max() <= 64.0


def test_weighted_spectrum_covers_every_octave_with_the_power_law_energy():
    rng = np.random.default_rng(0)
    for beta, R in ((1.0, 1024.0), (0.5, 1024.0)):
        k = 1000
        r, a = weighted_frequencies(rng, k, beta, R)
        slices = np.floor(np.log(r) / np.log(R) * k).astype(int)
        assert sorted(slices) == list(range(k))  # one frequency in each equal slice of log r
        assert np.mean(a ** 2) == pytest.approx(1.0) and np.allclose(a * r ** beta, a[0] * r[0] ** beta)
        p = 2 * beta
        for t in (2.0, 16.0, 128.0):  # energy above t: (t^-p - R^-p) / (1 - R^-p), as for density ∝ r^-(1+p)
            share = np.sum(a[r > t] ** 2) / np.sum(a ** 2)
            assert share == pytest.approx((t ** -p - R ** -p) / (1 - R ** -p), rel=0.03)
        # the equal-amplitude sampled spectrum has no feature far out in the tail: the weighted one does
        assert (r > 512).sum() >= 90 and (sample_frequencies(rng, k, beta, R) > 512).sum() <= 3 * (beta < 1) + 1


def test_spectrum_choice_and_errors():
    w = make_problem(2, 16, n_features=64, max_freq=1024.0)
    s = make_problem(2, 16, n_features=64, max_freq=1024.0, spectrum="sampled")
    assert w.describe()["target"]["spectrum"] == "weighted" and s.describe()["target"]["spectrum"] == "sampled"
    assert w.target.frequencies.max() > 8 * s.target.frequencies.max()
    with pytest.raises(TTLabInputError, match="unknown target spectrum 'flat'"):
        make_problem(2, 16, spectrum="flat")


def test_target_is_centred_unit_variance_and_lipschitz():
    pr = make_problem(3, 16, n_features=256)
    u = pr.natural(np.random.default_rng(7), 20_000)  # fresh points, not the normalisation sample
    f = pr.target(u)
    assert abs(f.mean()) < 0.05 and f.var() == pytest.approx(1.0, rel=0.06)
    # empirical slopes between nearby points never exceed the Lipschitz bound
    v = u + 1e-3 * np.random.default_rng(8).standard_normal(u.shape)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    ratio = np.abs(pr.target(u) - pr.target(v)) / np.linalg.norm(u - v, axis=1)
    bound = pr.target.lipschitz_bound()
    assert ratio.max() <= bound and ratio.max() > 0.05 * bound
    assert pr.describe()["target"]["n_features"] == 256


def test_embedding_is_an_isometry_up_to_scale():
    pr = make_problem(2, 32, n_features=64)
    u = pr.natural(np.random.default_rng(1), 200)
    x = pr.embed(u)
    assert x.shape == (200, 32)
    du = np.linalg.norm(u[:, None] - u[None], axis=-1)
    dx = np.linalg.norm(x[:, None] - x[None], axis=-1)
    np.testing.assert_allclose(dx, pr.input_scale * du, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(pr.isometry.T @ pr.isometry, np.eye(3), atol=1e-12)
    assert np.mean(x ** 2) == pytest.approx(1.0, rel=0.15)  # unit mean square per ambient coordinate
    assert np.linalg.matrix_rank(x - x.mean(0), tol=1e-8) == 3  # S^2 spans a 3-dim subspace of R^32


def test_target_and_samples_do_not_depend_on_the_ambient_dimension():
    a = make_splits(make_problem(2, 16, n_features=64), 50, 20, 30, seed=3)
    b = make_splits(make_problem(2, 128, n_features=64), 50, 20, 30, seed=3)
    np.testing.assert_array_equal(a.f_test, b.f_test)
    np.testing.assert_array_equal(a.y_train, b.y_train)
    assert a.x_train.shape == (50, 16) and b.x_train.shape == (50, 128)
    # same intrinsic points: pairwise distances agree after removing the √D scale
    da = np.linalg.norm(a.x_test[:, None] - a.x_test[None], axis=-1) / math.sqrt(16)
    db = np.linalg.norm(b.x_test[:, None] - b.x_test[None], axis=-1) / math.sqrt(128)
    np.testing.assert_allclose(da, db, atol=1e-5)


def test_splits_are_seeded_nested_and_noisy_as_asked():
    pr = make_problem(4, 16, noise=0.3, n_features=64)
    small = make_splits(pr, 100, 40, 50, seed=5)
    big = make_splits(pr, 400, 80, 50, seed=5)
    np.testing.assert_array_equal(small.x_train, big.x_train[:100])  # nested training sets
    np.testing.assert_array_equal(small.y_train, big.y_train[:100])
    np.testing.assert_array_equal(small.x_val, big.x_val[:40])
    np.testing.assert_array_equal(small.x_test, big.x_test)  # common test set
    again = make_splits(pr, 100, 40, 50, seed=5)
    np.testing.assert_array_equal(again.y_train, small.y_train)
    other = make_splits(pr, 100, 40, 50, seed=6)
    assert not np.allclose(other.x_train, small.x_train)
    many = make_splits(pr, 20_000, 1, 1, seed=0)
    assert np.std(many.y_train - many.f_train) == pytest.approx(0.3, rel=0.03)
    clean = make_splits(make_problem(4, 16, noise=0.0, n_features=64), 100, 10, 10, seed=5)
    np.testing.assert_array_equal(clean.y_train, clean.f_train)
    assert small.x_train.dtype == np.float32


def test_difficulty_grows_with_intrinsic_dimension():
    """k-NN regression (no network) at equal n: higher d is clearly harder, also for the β < 1 cusp variant."""

    def knn_mse(d: int, **kw) -> float:
        data = make_splits(make_problem(d, 16, n_features=256, **kw), 2048, 512, 512, seed=0)
        return knn_regression(data.x_train, data.y_train, data.x_val, data.y_val, data.x_test, data.f_test)["test_mse"]

    errs = [knn_mse(d) for d in (1, 2, 4, 8)]
    assert all(b > 1.5 * a for a, b in zip(errs, errs[1:])), errs
    cusp = [knn_mse(d, profile="cusp", beta=0.75) for d in (2, 8)]
    assert cusp[1] > 3 * cusp[0], cusp


def test_knn_regression_is_exact_on_training_points():
    data = make_splits(make_problem(2, 8, noise=0.0, n_features=64), 300, 300, 1, seed=0)
    res = knn_regression(data.x_train, data.y_train, data.x_train, data.y_train, data.x_train, data.f_train)
    assert res["k"] == 1 and res["test_mse"] == pytest.approx(0.0, abs=1e-10)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"d": 4, "ambient": 4}, "need D >= 5"),
        ({"d": 2, "ambient": 8, "manifold": "torus"}, "unknown manifold 'torus'"),
        ({"d": 2, "ambient": 8, "profile": "square"}, "unknown target profile"),
        ({"d": 2, "ambient": 8, "beta": 1.5}, "beta must be a number in"),
        ({"d": 2, "ambient": 8, "beta": 0.0}, "beta must be a number in"),
        ({"d": 0, "ambient": 8}, "intrinsic dimension d must be an integer >= 1"),
        ({"d": 2, "ambient": 8, "noise": -0.1}, "label noise sigma"),
        ({"d": 2, "ambient": 8, "min_freq": 8.0, "max_freq": 4.0}, "must be >= the minimum"),
    ],
)
def test_bad_problems_are_rejected(kwargs, match):
    with pytest.raises(TTLabInputError, match=match):
        make_problem(**kwargs)


def test_cube_and_nonlinear_manifolds():
    for name, m in (("cube", 3), ("nonlinear", 6)):
        pr = make_problem(3, 16, manifold=name, n_features=64)
        assert pr.natural_dim == m
        data = make_splits(pr, 64, 16, 16, seed=0)
        assert data.x_train.shape == (64, 16) and np.isfinite(data.y_train).all()
