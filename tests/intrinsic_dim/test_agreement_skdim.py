"""Same data, same K and combination rule => same numbers as scikit-dimension (to 1e-6 relative)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim import GRIDE, LPCA, MLE, TwoNN, sample_manifold, split_batches

skdim = pytest.importorskip("skdim")

RTOL = 1e-6


@pytest.fixture(scope="module")
def wide():
    """Curved 4-dim data in R^40 (> 25 features: scikit-dimension's chunked code path)."""
    return sample_manifold("nonlinear", 4, 40, 1000, noise=0.01, seed=3)


@pytest.fixture(scope="module")
def narrow():
    """3-dim sphere in R^6 (few features: scikit-learn's tree path)."""
    return sample_manifold("sphere", 3, 6, 1200, seed=4)


@pytest.mark.parametrize("k", [5, 20])
@pytest.mark.parametrize("unbiased", [False, True])
def test_mle_matches_skdim(wide, k, unbiased):
    ref = skdim.id.MLE(unbiased=unbiased).fit(wide, n_neighbors=k)  # comb="mle": harmonic
    pw = ref.dimension_pw_
    # scikit-dimension's comb='mean' / 'median' are np.mean / np.median of these pointwise values
    expected = {"harmonic": ref.dimension_, "mean": np.mean(pw), "median": np.median(pw)}
    for average, value in expected.items():
        ours = MLE(k=k, average=average, unbiased=unbiased).fit(wide)
        assert ours.dimension_ == pytest.approx(value, rel=RTOL), average
        np.testing.assert_allclose(ours.pointwise_dimension_, pw, rtol=RTOL)


def test_mle_matches_skdim_low_dim_and_float32(narrow):
    X32 = narrow.astype(np.float32)
    ours = MLE(k=10, average="harmonic").fit(X32)
    ref = skdim.id.MLE().fit(X32, n_neighbors=10, comb="mle")
    assert ours.dimension_ == pytest.approx(ref.dimension_, rel=RTOL)
    np.testing.assert_allclose(ours.pointwise_dimension_, ref.dimension_pw_, rtol=RTOL)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
@pytest.mark.parametrize("method,discard", [("linear", 0.1), ("linear", 0.25), ("mle", 0.1), ("mle", 0.0)])
def test_twonn_matches_skdim(wide, narrow, method, discard):
    for X in (wide, narrow):
        ours = TwoNN(discard_fraction=discard, method=method).fit(X)
        ref = skdim.id.TwoNN(discard_fraction=discard, method=method).fit(X)
        assert ours.dimension_ == pytest.approx(ref.dimension_, rel=RTOL)


@pytest.mark.parametrize("n1,n2", [(1, 2), (4, 8), (10, 20), (3, 11)])
def test_gride_matches_skdim(wide, n1, n2):
    ours = GRIDE(n1=n1, n2=n2).fit(wide)
    ref = skdim.id.GRIDE(n1=n1, n2=n2).fit(wide)
    assert ours.dimension_ == pytest.approx(ref.dimension_, rel=RTOL)
    assert ours.error_ == pytest.approx(ref.error_, rel=1e-5)


def test_gride_multiscale_matches_skdim(narrow):
    ours = GRIDE(n1=1, multiscale=True, range_max=32).fit(narrow)
    ref = skdim.id.GRIDE(n1=1, multiscale=True, range_max=32).fit(narrow)
    np.testing.assert_array_equal(ours.scales_, ref.scales_)
    np.testing.assert_allclose(ours.dimension_scales_, ref.dimension_scales_, rtol=RTOL)
    np.testing.assert_allclose(ours.radius_scales_, ref.radius_scales_, rtol=RTOL)


def test_cosine_metric_is_one_minus_cos_as_in_scikit_learn(wide):
    """metric='cosine' is scipy's / scikit-learn's 1 − cos: equal to scikit-dimension's MLE on the
    neighbours scikit-learn finds with metric='cosine', and exactly half the chord estimate."""
    from sklearn.neighbors import NearestNeighbors

    rng = np.random.default_rng(0)
    scaled = wide * rng.uniform(0.5, 3.0, size=(len(wide), 1))
    dist, idx = NearestNeighbors(n_neighbors=21, metric="cosine").fit(scaled).kneighbors(scaled)
    ref = skdim.id.MLE().fit(scaled, precomputed_knn_arrays=(dist[:, 1:], idx[:, 1:]), n_neighbors=20, comb="mean")
    ours = MLE(k=20, metric="cosine").fit(scaled)
    assert ours.dimension_ == pytest.approx(ref.dimension_, rel=1e-6)
    chord = MLE(k=20, metric="chord").fit(scaled)
    np.testing.assert_allclose(ours.pointwise_dimension_, chord.pointwise_dimension_ / 2, rtol=1e-9)
    with pytest.raises(TTLabInputError, match="metric='chord'"):
        LPCA(metric="cosine").fit(scaled)  # 1 − cos is no Euclidean distance: coordinates-based estimators refuse


def test_chord_metric_equals_euclidean_on_unit_vectors(wide):
    """Chord ID = Euclidean ID of the normalised rows, and is invariant to rescaling each row."""
    rng = np.random.default_rng(0)
    scaled = wide * rng.uniform(0.5, 3.0, size=(len(wide), 1))
    unit = wide / np.linalg.norm(wide, axis=1, keepdims=True)
    ours = MLE(k=20, metric="chord").fit(scaled)
    ref = skdim.id.MLE().fit(unit, n_neighbors=20, comb="mean")
    assert ours.dimension_ == pytest.approx(ref.dimension_, rel=RTOL)
    # Euclidean on the rescaled rows is a different (higher) number: the metric matters
    assert abs(MLE(k=20).fit(scaled).dimension_ - ours.dimension_) > 0.5


def test_paper_protocol_equals_skdim_batch_by_batch():
    X = sample_manifold("linear", 5, 64, 2600, seed=5)
    ours = MLE(k=20, average="mean", batch_size=600, seed=7).fit(X)
    batches = split_batches(len(X), 600, seed=7)
    assert len(batches) == 4  # 2600 = 4 * 600 + 200 dropped
    ref = [skdim.id.MLE().fit(X[b], n_neighbors=20, comb="mean").dimension_ for b in batches]
    np.testing.assert_allclose(ours.batch_dimensions_, ref, rtol=RTOL)
    assert ours.dimension_ == pytest.approx(np.mean(ref), rel=RTOL)


def test_skdim_breaks_on_duplicates_we_do_not(wide):
    """The reason for explicit duplicate handling: scikit-dimension's MLE degenerates."""
    X = np.vstack([wide, wide[:300]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref_harmonic = skdim.id.MLE().fit(X, n_neighbors=20).dimension_  # its default comb
        ref_mean = skdim.id.MLE().fit(X, n_neighbors=20, comb="mean").dimension_
    clean = MLE(k=20).fit(wide).dimension_
    assert ref_harmonic == 0.0
    assert ref_mean < clean - 1.0
    with pytest.warns(UserWarning, match="duplicate"):
        ours = MLE(k=20).fit(X)
    assert ours.dimension_ == pytest.approx(clean, rel=1e-12)
    assert ours.n_duplicates_removed_ == 300
