"""scikit-dimension options ttlab adds (MLE noise model and global mode, DANCo versions and given
calibration, one-set ESS and DANCo statistics): equal to scikit-dimension on the same data."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim import MLE, DANCo, MiND_ML
from ttlab.intrinsic_dim.single_set import danco_statistics, ess_single_neighbourhood

skdim = pytest.importorskip("skdim")


@pytest.fixture(scope="module")
def X():
    ball = skdim.datasets.hyperBall(150, 4, random_state=3)
    return np.c_[ball, 0.02 * np.random.default_rng(3).standard_normal((150, 3))]


def test_mle_noise_model_equals_skdim(X):
    ref = skdim.id.MLE(sigma=0.05, dnoise="dnoiseGaussH").fit(X, n_neighbors=10, comb="mean")
    ours = MLE(k=10, dnoise="dnoiseGaussH", sigma=0.05).fit(X)
    np.testing.assert_allclose(ours.pointwise_dimension_, ref.dimension_pw_, rtol=1e-9)
    plain = MLE(k=10).fit(X)
    assert abs(ours.dimension_ - plain.dimension_) > 1e-3  # the correction changes the number
    with pytest.raises(TTLabInputError, match="sigma > 0"):
        MLE(dnoise="dnoiseGaussH").fit(X)
    with pytest.raises(TTLabInputError, match="unknown dnoise"):
        MLE(dnoise="laplace", sigma=0.1).fit(X)


def test_mle_global_equals_skdim(X):
    ref = skdim.id.MLE(K=8, neighborhood_based=False).fit(X, n_neighbors=20).dimension_
    ours = MLE(k=20, neighborhood_based=False, global_k=8).fit(X)
    assert ours.dimension_ == pytest.approx(ref, rel=1e-12)
    assert ours.pointwise_dimension_ is None


@pytest.mark.parametrize("ver", ["MIND_MLk", "MIND_MLi"])
def test_danco_mind_versions(X, ver):
    ours = DANCo(ver=ver, k=10).fit(X).dimension_
    assert ours == pytest.approx(skdim.id.DANCo(ver=ver, k=10).fit(X).dimension_, rel=1e-9)
    assert ours == pytest.approx(MiND_ML(k=10, D=X.shape[1], ver=ver[-3:]).fit(X).dimension_, rel=1e-12)


def test_danco_given_calibration_is_used(X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = skdim.id.DANCo(k=10, D=5, fractal=False, random_state=1).fit(X)
    cal = ref.calibration_data_
    ours = DANCo(k=10, D=5, fractal=False, random_state=7, calibration_data=cal).fit(X)
    assert ours.dimension_ == ref.dimension_
    assert ours.kl_divergence_ == pytest.approx(ref.kl_divergence_, rel=1e-9)  # seed 7 unused: all 5 given
    with pytest.raises(TTLabInputError, match="computed for N = 150"):
        DANCo(k=10, D=5, calibration_data=cal).fit(X[:100])
    with pytest.raises(TTLabInputError, match="with k = 10"):
        DANCo(k=5, calibration_data=cal).fit(X)


def test_one_set_statistics_equal_skdim(X):
    for ver in ("a", "b"):
        ref = skdim.id.ESS(ver=ver).fit_once(X[:30])
        d, ess = ess_single_neighbourhood(X[:30], ver=ver)
        assert (d, ess) == pytest.approx((ref.dimension_, ref.essval_), rel=1e-9)
    est = skdim.id.DANCo(k=10, D=7)
    est._k = 10
    ref = est._dancoDimEstNoCalibration(X, 7)
    ours = danco_statistics(X, k=10, D=7)
    assert ours == pytest.approx(ref, rel=1e-9)


@pytest.mark.parametrize("ver", ["Kaiser", "broken_stick", "MP", "GD", "KN", "Minka", "denoised", "parallel", "scRMT"])
def test_lpca_versions_equal_skdim(ver):
    from ttlab.intrinsic_dim import LPCA

    rng = np.random.RandomState(0)
    X = rng.randn(300, 40) * np.r_[6, 4, 3, np.ones(37)]  # rank-3 signal in unit noise
    X = X @ np.linalg.qr(rng.randn(40, 40))[0]
    opts = {"n_permutations": 20, "random_state": 1} if ver == "parallel" else {"random_state": 1}
    ref = skdim.id.lPCA(ver=ver, **opts).fit(X)
    ours = LPCA(ver=ver, **opts).fit(X)
    assert ours.dimension_ == ref.dimension_
    if ver in ("MP", "GD", "KN", "Minka", "parallel"):
        assert ours.dimension_ == 3  # the planted rank
    if ver == "scRMT":
        assert ours.threshold_ == pytest.approx(ref.threshold_, rel=1e-10)


def test_lpca_uncentred_and_rank_errors():
    from sklearn.decomposition import PCA

    from ttlab.intrinsic_dim import LPCA

    X = np.random.RandomState(2).randn(200, 20) * np.r_[3, 2.5, 2, 1.5, 1.3, np.ones(15)] + 5.0
    assert LPCA(ver="Minka").fit(X).dimension_ == PCA(n_components="mle").fit(X).n_components_
    pr = LPCA(ver="participation_ratio", center=False).fit(X).dimension_
    assert pr == pytest.approx(skdim.id.lPCA(ver="participation_ratio", center=False).fit(X).dimension_, rel=1e-9)
    assert pr < 1.5  # the uncentred spectrum is dominated by the mean
    with pytest.raises(TTLabInputError, match="alpha_kn must be one of"):
        LPCA(ver="KN", alpha_kn=0.07).fit(X)
    with pytest.raises(TTLabInputError, match="pointwise=False"):
        LPCA(ver="MP", pointwise=True).fit(X)


def test_fishers_equals_skdim_and_reads_the_sphere_dimension():
    from ttlab.intrinsic_dim import FisherS

    X = np.c_[skdim.datasets.hyperSphere(600, 6, random_state=4), np.zeros((600, 3))]  # S^5 in R^9
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = skdim.id.FisherS().fit(X)
    ours = FisherS().fit(X)
    assert ours.dimension_ == pytest.approx(ref.dimension_, rel=1e-9)
    np.testing.assert_allclose(ours.n_alpha_, np.ravel(ref.n_alpha_), rtol=1e-9)
    np.testing.assert_array_equal(ours.p_alpha_, ref.p_alpha_)
    assert ours.separable_fraction_.shape == (20,)  # per margin (scikit-dimension's is per point)
    assert 4.5 < ours.dimension_ < 7.5  # near the sphere's dimension, 5
    with pytest.raises(TTLabInputError, match="alphas must be margins in"):
        FisherS(alphas=[0.5, 1.2]).fit(X)


def test_knn_graph_length_equals_skdim():
    from ttlab.intrinsic_dim import KNN

    X = np.c_[skdim.datasets.hyperBall(400, 3, random_state=5), np.zeros((400, 4))]
    for kw in ({}, {"k": 5, "ps": np.array([50, 100, 200, 400]), "M": 3}, {"gamma": 1}):
        ref = skdim.id.KNN(random_state=2, **kw).fit(X)
        ours = KNN(random_state=2, **kw).fit(X)
        assert ours.dimension_ == ref.dimension_
        assert ours.residual_ == pytest.approx(ref.residual_, rel=1e-9)
    assert KNN(k=5, ps=np.array([50, 100, 200, 400]), M=3, random_state=2).fit(X).dimension_ == 3  # the ball's
    with pytest.raises(TTLabInputError, match="ps must be at least two integer sample sizes > k = 5"):
        KNN(k=5, ps=[4, 10]).fit(X)


def test_pointwise_for_global_estimators_and_smoothing_equal_skdim(X):
    from ttlab.intrinsic_dim import ESS, TwoNN, kneighbors
    from ttlab.intrinsic_dim.pointwise import fit_pw, smooth_pointwise

    ref = skdim.id.TwoNN().fit_pw(X, n_neighbors=40, smooth=True)
    ours = fit_pw(TwoNN(), X, k=40)
    np.testing.assert_allclose(ours.dimension_pw, ref.dimension_pw_, rtol=1e-9)
    np.testing.assert_allclose(ours.dimension_pw_smooth, ref.dimension_pw_smooth_, rtol=1e-9)
    ref = skdim.id.ESS().fit(X, smooth=True, n_neighbors=20)
    pw = ESS(k=20).fit(X).pointwise_dimension_
    np.testing.assert_allclose(smooth_pointwise(pw, kneighbors(X, 20).indices), ref.dimension_pw_smooth_, rtol=1e-9)
    assert np.std(ours.dimension_pw_smooth) < np.std(ours.dimension_pw)  # averaging over neighbours smooths
    with pytest.raises(TTLabInputError, match="needs at least 151 points"):
        fit_pw(TwoNN(), X, k=150)


def test_ph_equals_skdim_and_guards_memory():
    from ttlab.intrinsic_dim import PH
    from ttlab.intrinsic_dim.ph import mst_edge_lengths

    X = skdim.datasets.hyperBall(300, 3, random_state=6)
    for kw in ({"nsteps": 8, "subsamples": 3}, {"nsteps": 5, "subsamples": 2, "alpha": 0.5},
               {"range_type": "num", "n_range_min": 40, "n_range_max": 250, "nsteps": 5, "subsamples": 2}):
        ref = skdim.id.PH(random_state=3, **kw).fit(X).dimension_
        assert PH(random_state=3, **kw).fit(X).dimension_ == pytest.approx(ref, rel=1e-9)
    # a path 0-1-2-3 with unit steps: the MST is the path
    pts = np.arange(4.0)[:, None]
    np.testing.assert_array_equal(np.sort(mst_edge_lengths(np.abs(pts - pts.T))), [1.0, 1.0, 1.0])
    with pytest.raises(TTLabInputError, match="n_range_min < n_range_max"):
        PH(n_range_min=0.9, n_range_max=0.5).fit(X)
