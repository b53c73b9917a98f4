"""The added estimators equal scikit-dimension's for identical settings (curved and noisy data)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim import sample_manifold
from ttlab.intrinsic_dim.corrint import CorrInt, count_pairs_below
from ttlab.intrinsic_dim.ess import ESS
from ttlab.intrinsic_dim.local import MADA, MOM
from ttlab.intrinsic_dim.lpca import LPCA
from ttlab.intrinsic_dim.mind import DANCo, MiND_ML
from ttlab.intrinsic_dim.tle import TLE

skdim = pytest.importorskip("skdim")

RTOL = 1e-6


@pytest.fixture(scope="module")
def curved():
    """Curved 4-dim data in R^40 with noise; an even number of points (CorrInt's medians are then
    averages of two distances, not a distance that a rounding could put on either side)."""
    return sample_manifold("nonlinear", 4, 40, 600, noise=0.01, seed=3)


@pytest.fixture(scope="module")
def sphere():
    return sample_manifold("sphere", 3, 12, 500, noise=0.02, seed=8)


@pytest.mark.parametrize("ver", ["FO", "Fan", "maxgap", "ratio", "participation_ratio"])
def test_lpca_global_and_pointwise(curved, ver):
    ref = skdim.id.lPCA(ver=ver).fit(curved).dimension_
    assert LPCA(ver=ver).fit(curved).dimension_ == pytest.approx(ref, rel=RTOL)
    pw = skdim.id.lPCA(ver=ver).fit_pw(curved, n_neighbors=50).dimension_pw_
    ours = LPCA(ver=ver, pointwise=True, k=50).fit(curved)
    np.testing.assert_allclose(ours.pointwise_dimension_, pw, rtol=RTOL)
    assert ours.dimension_ == pytest.approx(np.mean(pw), rel=RTOL)


def test_lpca_global_is_linear_span_dimension():
    X = sample_manifold("linear", 6, 30, 400, noise=1e-3, seed=1)
    assert LPCA().fit(X).dimension_ == 6
    assert LPCA(ver="maxgap").fit(X).dimension_ == 6


@pytest.mark.parametrize("data", ["curved", "sphere"])
def test_local_knn_estimators(request, data):
    X = request.getfixturevalue(data)
    cases = [
        (TLE(), skdim.id.TLE().fit(X, comb="mean")),
        (TLE(k=10, average="median"), skdim.id.TLE().fit(X, n_neighbors=10, comb="median")),
        (MOM(), skdim.id.MOM().fit(X, comb="mean")),
        (MOM(k=15), skdim.id.MOM().fit(X, n_neighbors=15, comb="mean")),
        (MADA(), skdim.id.MADA().fit(X, comb="mean")),
        (MADA(k=9, average="median"), skdim.id.MADA().fit(X, n_neighbors=9, comb="median")),
    ]
    for ours, ref in cases:
        ours.fit(X)
        assert ours.dimension_ == pytest.approx(ref.dimension_, rel=RTOL), type(ours).__name__
        np.testing.assert_allclose(ours.pointwise_dimension_, ref.dimension_pw_, rtol=RTOL)


def test_ess_matches_skdim(sphere):
    X = sphere[:300]
    for ver in ("a", "b"):
        ref = skdim.id.ESS(ver=ver).fit(X, n_neighbors=30, comb="mean")
        ours = ESS(ver=ver, k=30).fit(X)
        np.testing.assert_allclose(ours.pointwise_dimension_, ref.dimension_pw_, rtol=RTOL)
        assert ours.dimension_ == pytest.approx(ref.dimension_, rel=RTOL)
    ref = skdim.id.ESS(ver="a", d=2).fit(X[:120], n_neighbors=12, comb="mean")
    ours = ESS(ver="a", d=2, k=12).fit(X[:120])
    assert ours.dimension_ == pytest.approx(ref.dimension_, rel=RTOL)


@pytest.mark.parametrize("ver,D", [("MLk", 10), ("MLi", 10), ("MLk", 40)])
def test_mind_ml_matches_skdim(curved, ver, D):
    ref = skdim.id.MiND_ML(ver=ver, D=D).fit(curved).dimension_
    assert MiND_ML(ver=ver, D=D).fit(curved).dimension_ == pytest.approx(ref, rel=RTOL)


def test_mind_ml_default_caps_at_D():
    X = sample_manifold("cube", 14, 30, 2000, seed=2)
    assert MiND_ML().fit(X).dimension_ <= 10 + 1e-12  # scikit-dimension's default D = 10
    assert MiND_ML(D=30).fit(X).dimension_ > 11


@pytest.mark.parametrize("k1,k2", [(10, 20), (5, 12)])
def test_corrint_matches_skdim(curved, sphere, k1, k2):
    for X in (curved, sphere):
        ref = skdim.id.CorrInt(k1=k1, k2=k2).fit(X).dimension_
        assert CorrInt(k1=k1, k2=k2).fit(X).dimension_ == pytest.approx(ref, rel=RTOL)


def test_count_pairs_below_is_exact():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((700, 50)) * 1e3 + 5e3  # large offset: float32 products alone would miscount
    d = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    iu = np.triu_indices(len(X), 1)
    radii = np.quantile(d[iu], [0.01, 0.3, 0.5])
    expected = [(d[iu] < r).sum() for r in radii]
    np.testing.assert_array_equal(count_pairs_below(X, radii, block=128), expected)
    # a radius equal to a pair's distance: that pair is not counted (strict inequality)
    r = d[iu][123]
    assert count_pairs_below(X, np.array([r]), block=128)[0] == (d[iu] < r).sum()


def test_danco_matches_skdim_with_the_same_seed(curved):
    X = curved[:400]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = skdim.id.DANCo(D=8, random_state=5).fit(X)
        ref_int = skdim.id.DANCo(D=8, random_state=5, fractal=False).fit(X)
    ours = DANCo(D=8, random_state=5).fit(X)
    assert ours.kl_divergence_ == pytest.approx(ref.kl_divergence_, rel=1e-9)
    assert DANCo(D=8, random_state=5, fractal=False).fit(X).dimension_ == ref_int.dimension_
    # the fractal refinement is a bounded quasi-Newton search with finite differences and tol = 1e-3:
    # rounding-level differences in the divergences move it by ~1e-5
    assert ours.dimension_ == pytest.approx(ref.dimension_, abs=1e-3)
    # a different seed draws different calibration balls
    assert DANCo(D=8, random_state=6).fit(X).kl_divergence_ != ours.kl_divergence_


def test_danco_same_seed_same_result_and_batches_share_calibration(curved):
    a = DANCo(D=6, batch_size=200, seed=1).fit(curved)
    b = DANCo(D=6, batch_size=200, seed=1).fit(curved)
    assert a.dimension_ == b.dimension_ and len(a.batch_dimensions_) == 3


def test_duplicates_dropped_and_counted(curved):
    X = np.vstack([curved, curved[:50]])
    for est in (TLE(), MOM(), MADA(), ESS(k=20), CorrInt(), LPCA(pointwise=True, k=20)):
        with pytest.warns(UserWarning, match="duplicate"):
            est.fit(X)
        assert est.n_duplicates_removed_ == 50
        clean = type(est)(**est.get_params()).fit(curved).dimension_
        assert est.dimension_ == pytest.approx(clean, rel=1e-12)


def test_bad_input_named():
    X = sample_manifold("sphere", 2, 5, 30, seed=0)
    with pytest.raises(TTLabInputError, match="MOM with 100 neighbour"):
        MOM().fit(X)
    with pytest.raises(TTLabInputError, match="k1 < k2"):
        CorrInt(k1=20, k2=10).fit(X)
    with pytest.raises(TTLabInputError, match="unknown ver 'nope'"):
        LPCA(ver="nope").fit(X)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(TTLabInputError, match="NaN"):
        TLE(k=5).fit(Xn)


def test_skdim_mind_ml_collapses_on_duplicates_we_do_not(curved):
    """A zero first-neighbour distance gives rho = 0 and scikit-dimension's MiND_ML returns 1."""
    X = np.vstack([curved, curved[:60]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref_dup = skdim.id.MiND_ML().fit(X).dimension_
    clean = MiND_ML().fit(curved).dimension_
    assert ref_dup == pytest.approx(1.0) and clean > 3
    with pytest.warns(UserWarning, match="duplicate"):
        assert MiND_ML().fit(X).dimension_ == pytest.approx(clean, rel=1e-12)


@pytest.mark.parametrize("ver", ["FO", "Fan", "maxgap", "ratio", "participation_ratio", "Kaiser", "broken_stick",
                                 "MP", "GD", "KN", "Minka", "denoised"])
def test_lpca_fit_spectrum_matches_skdims_explained_variance_input(ver):
    rng = np.random.RandomState(0)
    n, p = 300, 40
    X = rng.randn(n, p) * np.sqrt(np.r_[6.0, 4.0, 3.0, np.ones(p - 3)])
    ev = LPCA().fit(X).explained_variance_
    ours = LPCA(ver=ver).fit_spectrum(ev, n_samples=n)
    theirs = skdim.id.lPCA(ver=ver, fit_explained_variance=True, n_samples=n).fit(ev.copy())
    assert ours.dimension_ == pytest.approx(float(theirs.dimension_), rel=1e-12)
    assert ours.dimension_ == pytest.approx(LPCA(ver=ver).fit(X).dimension_, rel=1e-12)


def test_lpca_fit_spectrum_refusals():
    ev = np.linspace(2, 1, 10)
    for ver in ("MP", "GD", "KN", "Minka", "denoised"):
        with pytest.raises(TTLabInputError, match="n_samples"):
            LPCA(ver=ver).fit_spectrum(ev)
    for ver in ("parallel", "scRMT"):
        with pytest.raises(TTLabInputError, match="needs the data"):
            LPCA(ver=ver).fit_spectrum(ev, n_samples=50)
    for bad, match in [(ev[::-1], "descending"), (-ev, "non-negative"), (np.ones((2, 3)), "vector"),
                       (ev[:1], "vector")]:
        with pytest.raises(TTLabInputError, match=match):
            LPCA().fit_spectrum(bad)
