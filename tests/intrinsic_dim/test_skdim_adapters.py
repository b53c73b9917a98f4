"""The drop-in's adapters (:mod:`ttlab.intrinsic_dim.skdim`) where scikit-dimension's shipped tests are coarse:
small inputs, error wording, and the options translated onto ttlab's code paths."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ttlab.intrinsic_dim.skdim as skdim_id

skdim = pytest.importorskip("skdim")


def _ball(n: int, d: int, seed: int = 0) -> np.ndarray:
    return skdim.datasets.hyperBall(n, d, random_state=seed)


def test_corrint_on_fewer_points_than_k2_is_scikit_dimensions_number() -> None:
    X = _ball(15, 3)
    with pytest.warns(UserWarning, match="k2 larger or equal to len"):
        ours = skdim_id.CorrInt().fit(X).dimension_
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = skdim.id.CorrInt().fit(X).dimension_
    assert ours == pytest.approx(theirs, rel=1e-10)


def test_mind_ml_on_fewer_points_than_k_warns_and_fits() -> None:
    X = _ball(15, 3)
    with pytest.warns(UserWarning, match=r"k\+1 >= len\(X\)"):
        est = skdim_id.MiND_ML().fit(X)
    assert est.ttlab_estimator_.k == 13
    assert np.isfinite(est.dimension_)


@pytest.mark.parametrize("cls", ["MLE", "ESS", "TLE", "MOM", "MADA"])
def test_local_estimators_refuse_one_sample_in_scikit_learns_words(cls: str) -> None:
    with pytest.raises(ValueError, match="n_samples = 1"):
        getattr(skdim_id, cls)().fit(np.zeros((1, 5)))


def test_transform_of_a_1d_array_says_reshape() -> None:
    est = skdim_id.TwoNN().fit(_ball(100, 3))
    with pytest.raises(ValueError, match="Reshape your data"):
        est.transform(np.zeros(3))


def test_twonn_dist_reads_r1_r2_as_ttlab_does_from_its_search() -> None:
    from ttlab.intrinsic_dim.knn import kneighbors

    X = _ball(500, 4)
    r = kneighbors(X, 2).distances
    for method in ("linear", "mle"):
        est = skdim_id.TwoNN(method=method, dist=True).fit(r)
        assert est.dimension_ == pytest.approx(skdim_id.TwoNN(method=method).fit(X).dimension_, rel=1e-12)
        assert est.dimension_ == pytest.approx(skdim.id.TwoNN(method=method, dist=True).fit(r).dimension_, rel=1e-10)
    r[:3, 0] = 0
    with pytest.warns(UserWarning, match="duplicate"):
        skdim_id.TwoNN(dist=True).fit(r)
    with pytest.raises(ValueError, match="r1 <= r2"):
        skdim_id.TwoNN(dist=True).fit(r[:, ::-1])


def test_ph_several_alphas_and_a_metric_are_scikit_dimensions_numbers() -> None:
    X = _ball(120, 3)
    opts = dict(alpha=(0.5, 1.0, 1.5), n_range_min=0.2, nsteps=6, subsamples=4, random_state=3, metric="cityblock")
    ours = skdim_id.PH(**opts).fit(X)
    theirs = skdim.id.PH(**opts).fit(X)
    np.testing.assert_allclose(ours.dimension_, theirs.dimension_, rtol=1e-9)
    np.testing.assert_allclose(ours.y_, theirs.y_, rtol=1e-12)
    assert (ours.nmin_, ours.nmax_) == (theirs.nmin_, theirs.nmax_)


def test_ttlab_ph_refuses_an_unknown_distance() -> None:
    from ttlab.errors import TTLabInputError
    from ttlab.intrinsic_dim.ph import PH

    with pytest.raises(TTLabInputError, match="pdist metric"):
        PH(distance="nope").fit(_ball(50, 2))


def test_dancofit_is_scikit_dimensions_number_from_ttlabs_danco() -> None:
    X = np.c_[_ball(300, 4, seed=1), np.zeros((300, 2))]
    for fractal in (True, False):
        ours = skdim_id.DANCo(ver="DANCoFit", fractal=fractal).fit(X).dimension_
        theirs = skdim.id.DANCo(ver="DANCoFit", fractal=fractal).fit(X).dimension_
        assert ours == pytest.approx(theirs, rel=1e-6)


def test_table_calibration_interpolates_as_scikit_dimension_between_grid_sizes() -> None:
    from ttlab.intrinsic_dim.mind import table_calibration
    from ttlab.intrinsic_dim.skdim.global_estimators import danco_fit_table

    theirs = skdim.id.DANCo(ver="DANCoFit")
    theirs._k, theirs._D = 10, 7
    want = theirs._fit_calibration(250)["calibration_data"]
    got = table_calibration(danco_fit_table(), 250, 10, 7)["calibration_data"]
    for key in ("dhat", "mu_nu", "mu_tau"):
        np.testing.assert_allclose([c[key] for c in got], [c[key] for c in want], rtol=1e-12)
