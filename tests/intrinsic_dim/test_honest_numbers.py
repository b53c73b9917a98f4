"""Issue 23, wrong numbers without a word: estimates are scale-free, ESS is right on 1-D data, and
`compare` flags what the data cannot support (ID > n − 1, ID > K, tied distances, one feature)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim import MLE, compare
from ttlab.intrinsic_dim.base import prepare_points, scale_to_safe_range
from ttlab.intrinsic_dim.corrint import CorrInt
from ttlab.intrinsic_dim.ess import ESS


@pytest.fixture(scope="module")
def gauss5():
    return np.random.default_rng(0).normal(size=(600, 5))


def test_corrint_is_scale_free(gauss5):
    """Before: 4.55 at ×1, 2.80 at ×1e19 (float32 squares overflow), 0.0 at ×1e-23 (underflow)."""
    base = CorrInt().fit(gauss5)
    assert 3.5 < base.dimension_ < 5.5
    for s in (1e-23, 1e19, 1e-160, 1e160):
        est = CorrInt().fit(gauss5 * s)
        assert est.dimension_ == pytest.approx(base.dimension_, rel=1e-9), s
        np.testing.assert_allclose(est.radii_, base.radii_ * s, rtol=1e-9)  # radii stay in the input's units


def test_safe_range_scaling_is_an_exact_power_of_two():
    X = np.array([[3.0, -5.0], [1e-30, 7.0]]) * 1e100
    Y, scale = scale_to_safe_range(X)
    assert 0.5 <= np.abs(Y).max() < 1 and np.log2(scale).is_integer()
    np.testing.assert_array_equal(Y / scale, X)  # exact: nothing rounded
    Z, one = scale_to_safe_range(np.array([[3.0, 1e5]]))  # ordinary magnitudes are untouched
    assert one == 1.0 and Z[0, 1] == 1e5
    assert prepare_points(X).scale == scale


def test_compare_is_finite_and_scale_free_at_extreme_scales():
    """Before: IndexError/“use a larger K” at ×1e160; TLE and CorrInt 0.0 at ×1e-160."""
    X = np.random.default_rng(1).normal(size=(300, 4))
    methods = "mle,twonn,gride,tle,corrint,ess,mada,mom"
    ref = compare(X, methods).ids()
    for s in (1e160, 1e-160):
        got = compare(X * s, methods).ids()
        assert got.keys() == ref.keys()
        for m in ref:
            assert got[m] == pytest.approx(ref[m], rel=1e-6), (s, m)


def test_ess_on_one_dimensional_data_matches_scikit_dimension_on_the_same_line():
    """Before: ESS returned its skewness (0.000) as the dimension on 1-feature data."""
    skdim = pytest.importorskip("skdim")
    x = np.random.default_rng(2).uniform(size=(120, 1))
    line = np.c_[x, np.zeros_like(x)]  # scikit-dimension refuses one feature; the same line in the plane
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref_a = skdim.id.ESS().fit(line, n_neighbors=30, comb="mean").dimension_
        ref_b = skdim.id.ESS(ver="b").fit(line, n_neighbors=30, comb="mean").dimension_
    assert ESS(k=30).fit(x).dimension_ == pytest.approx(ref_a, abs=1e-6) and ref_a == pytest.approx(1.0, abs=1e-6)
    assert ESS(k=30, ver="b").fit(x).dimension_ == pytest.approx(ref_b, abs=1e-6)
    with pytest.warns(UserWarning, match="cannot tell dimensions 1..2 apart; use d = 1"):
        ESS(d=2, k=20).fit(x)


def test_compare_flags_what_the_data_cannot_support():
    rng = np.random.default_rng(0)
    res = compare(rng.normal(size=(110, 2000)), "mle,twonn,ess,lpca")
    rows = {r.method: r for r in res.rows}
    assert rows["ess"].dimension > 109 and any("exceeds n − 1 = 109" in n for n in rows["ess"].notes)
    assert rows["mle"].dimension > 20 and any("exceeds K = 20" in n for n in rows["mle"].notes)
    assert not any("exceeds K" in n for n in rows["twonn"].notes)  # TwoNN's 2 neighbours bound nothing
    assert rows["lpca"].notes == []  # 109 = n − 1: supported
    quantized = np.round(rng.normal(size=(1500, 3)) * 2)
    res = compare(quantized, "mle,twonn")
    assert all(any("tied distances" in n for n in r.notes) for r in res.rows)
    clean = compare(rng.normal(size=(500, 3)), "mle,twonn")
    assert all(r.notes == [] for r in clean.rows)
    one_feature = compare(rng.uniform(size=(400, 1)), "mle,ess")
    assert all(any("one feature" in n for n in r.notes) for r in one_feature.rows)


def test_compare_on_identical_rows_is_an_error(run_cli, tmp_path):
    """Before: exit 0 and a table without a single number."""
    with pytest.warns(UserWarning, match="duplicate"), pytest.raises(TTLabInputError, match="all 50 rows of X are identical"):
        compare(np.ones((50, 3)))
    path = tmp_path / "same.npy"
    np.save(path, np.ones((50, 3)))
    res = run_cli("id", "compare", path)
    assert res.code == 2 and "identical" in res.err and "Traceback" not in res.err
    few = np.random.default_rng(0).normal(size=(5, 3))  # distinct, but too few for either estimator
    with pytest.raises(TTLabInputError, match="no estimator produced a number .* mle: skipped: .*twonn: skipped"):
        compare(few, "mle,twonn", skip_infeasible=True)


def test_compare_json_carries_the_notes(run_cli, tmp_path):
    path = tmp_path / "wide.npy"
    np.save(path, np.random.default_rng(0).normal(size=(110, 2000)))
    res = run_cli("id", "compare", path, "--methods", "mle", "--json")
    assert res.code == 0, res.err
    row = json.loads(res.out)["rows"][0]
    assert any("exceeds K = 20" in n for n in row["notes"])


def test_mle_still_warns_above_k_when_fitted_alone():
    X = np.random.default_rng(0).normal(size=(200, 500))
    with pytest.warns(UserWarning, match="exceeds K = 20"):
        MLE().fit(X)


def test_an_estimator_undefined_on_the_data_is_a_row_note_in_all_and_a_named_error_alone():
    """Before: one estimator's error (GRIDE on one-hot rows) aborted `compare all` without the others."""
    onehot = np.eye(120)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compare(onehot, "all")
    rows = {r.method: r for r in res.rows}
    assert rows["gride"].dimension is None and rows["gride"].notes[-1].startswith("no estimate: GRIDE")
    assert rows["lpca"].dimension == pytest.approx(119) and rows["lpca_pr"].notes == []  # n − 1 up to rounding
    assert any("tied distances" in n for n in rows["mle"].notes)  # √2 to the last ulp
    with pytest.raises(TTLabInputError, match="^gride: GRIDE"):
        compare(onehot, "gride")


def test_tle_says_when_its_absolute_epsilon_decides_the_result():
    """TLE's epsilon (scikit-dimension's 1e-4) is a distance: at ×1e-4 every estimate was 0.0, silently."""
    from ttlab.intrinsic_dim import TLE, sample_manifold
    from ttlab.intrinsic_dim.knn import kneighbors

    X = sample_manifold("sphere", 3, 10, 500, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning at an ordinary scale
        ref = TLE().fit(X).dimension_
    small = X * 1e-4
    with pytest.warns(UserWarning, match="epsilon = 0.0001 is an absolute distance, and 100% of points") as rec:
        assert TLE().fit(small).dimension_ == 0.0
    r = float(np.median(kneighbors(small, 20).distances[:, -1]))
    assert f"{1e-4 * r:.3g}" in str(rec[0].message)
    assert TLE(epsilon=1e-4 * r).fit(small).dimension_ == pytest.approx(ref, rel=1e-3)  # the advice works
