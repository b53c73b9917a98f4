"""Bad input gives a clear, specific error; duplicates are handled explicitly; files load."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim import GRIDE, MLE, DuplicatePointsWarning, TwoNN, load_points, sample_manifold


@pytest.fixture(scope="module")
def X():
    return sample_manifold("sphere", 3, 10, 600, seed=0)


def test_nan_and_inf_rows_are_named(X):
    Y = X.copy()
    Y[7, 2] = np.nan
    Y[42, 0] = np.inf
    with pytest.raises(TTLabInputError, match=r"NaN and inf values in 2 row\(s\) \(0-based\): 7, 42"):
        MLE().fit(Y)


def test_too_few_points_says_how_many_are_needed(X):
    with pytest.raises(TTLabInputError, match="at least 21 distinct points; got 20"):
        MLE(k=20).fit(X[:20])
    with pytest.raises(TTLabInputError, match="at least 21 distinct points; got 19 after removing 6 duplicate"):
        with pytest.warns(DuplicatePointsWarning):
            MLE(k=20).fit(np.vstack([X[:19], X[:6]]))
    for n in (2, 3, 9):  # TwoNN on 3 points used to answer 12.6
        with pytest.raises(TTLabInputError, match=f"at least 10 distinct points; got {n}"):
            TwoNN().fit(X[:n])
    with pytest.raises(TTLabInputError, match="batch_size=10 is too small"):
        MLE(k=20, batch_size=10).fit(X)


@pytest.mark.parametrize(
    "bad,match",
    [
        (np.arange(10.0), "1-D"),
        (np.zeros((3, 4, 5)), "3 dimensions"),
        (np.zeros((0, 4)), "empty"),
        (np.zeros((5, 0)), "empty"),
        (np.ones((30, 3), dtype=bool), "boolean"),
        (np.ones((30, 3), dtype=complex), "complex"),
        (np.array([["a", "b"]] * 30), "non-numeric"),
        (np.array([[1, None]] * 30, dtype=object), "non-numeric"),
    ],
)
def test_bad_arrays(bad, match):
    with pytest.raises(TTLabInputError, match=match):
        MLE(k=5).fit(bad)


def test_bad_parameters(X):
    for est, match in [
        (MLE(k=1), "k must be an integer >= 2"),
        (MLE(k=2.5), "k must be an integer"),
        (MLE(average="geometric"), "unknown average"),
        (MLE(metric="manhattan"), "unknown metric"),
        (MLE(batch_size=0), "batch_size must be an integer >= 2"),
        (MLE(remainder="pad"), "unknown remainder"),
        (TwoNN(discard_fraction=1.0), "discard_fraction"),
        (TwoNN(discard_fraction=0.0), "needs discard_fraction > 0"),
        (GRIDE(n1=4, n2=4), "n2 > n1"),
    ]:
        with pytest.raises(TTLabInputError, match=match):
            est.fit(X)


def test_integers_and_tensors_are_accepted(X):
    ref = MLE(k=10).fit(X).dimension_
    assert MLE(k=10).fit(torch.from_numpy(X)).dimension_ == pytest.approx(ref, rel=1e-12)
    ints = np.round(X * 1000).astype(np.int64)
    assert MLE(k=10).fit(ints).dimension_ == pytest.approx(MLE(k=10).fit(ints.astype(float)).dimension_)


@pytest.mark.parametrize("est", [MLE(k=10), MLE(k=10, average="harmonic"), TwoNN(), GRIDE(n1=2)])
def test_duplicates_are_dropped_counted_and_harmless(X, est):
    clean = type(est)(**est.get_params()).fit(X).dimension_
    rng = np.random.default_rng(1)
    Y = np.vstack([X, X[rng.integers(0, len(X), 250)], -0.0 * X[:1] + X[:1]])
    Y = Y[rng.permutation(len(Y))]
    with pytest.warns(DuplicatePointsWarning, match=r"dropped 251 duplicate"):
        est.fit(Y)
    assert est.n_duplicates_removed_ == 251
    assert est.n_points_ == len(Y)
    assert np.isfinite(est.dimension_) and est.dimension_ > 0
    assert est.dimension_ == pytest.approx(clean, rel=1e-12)  # same set of distinct points


@pytest.mark.parametrize("metric", ["chord", "cosine"])
def test_cosine_duplicates_are_parallel_vectors(X, metric):
    Y = np.vstack([X, 3.0 * X[:50]])
    with pytest.warns(DuplicatePointsWarning, match="dropped 50"):
        est = MLE(k=10, metric=metric).fit(Y)
    assert np.isfinite(est.dimension_)
    with pytest.raises(TTLabInputError, match=f"metric '{metric}' is undefined for all-zero rows.*: 3"):
        Z = X.copy()
        Z[3] = 0
        MLE(metric=metric).fit(Z)


def test_no_warning_without_duplicates(X):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MLE(k=10).fit(X)


def test_equidistant_neighbours_are_skipped_not_infinite():
    """Square grid with K = 4: every interior point has 4 neighbours at distance 1."""
    g = np.arange(30.0)
    P = np.stack(np.meshgrid(g, g), -1).reshape(-1, 2)
    with pytest.warns(UserWarning, match="same distance"):
        est = MLE(k=4).fit(P)
    assert np.isfinite(est.dimension_)
    assert np.isinf(est.pointwise_dimension_).sum() > 700


# ----------------------------------------------------------------------------------- files


def test_file_formats_round_trip(tmp_path, X):
    np.save(tmp_path / "a.npy", X)
    np.savez(tmp_path / "b.npz", emb=X, other=X[:3])
    torch.save(torch.from_numpy(X).float(), tmp_path / "c.pt")
    torch.save({"emb": torch.from_numpy(X)}, tmp_path / "d.pt")
    np.savetxt(tmp_path / "e.csv", X, delimiter=",", header="f0,f1,f2,f3,f4,f5,f6,f7,f8,f9", comments="")
    np.savetxt(tmp_path / "f.tsv", X, delimiter="\t")
    np.testing.assert_array_equal(load_points(tmp_path / "a.npy"), X)
    np.testing.assert_array_equal(load_points(tmp_path / "b.npz", key="emb"), X)
    np.testing.assert_allclose(load_points(tmp_path / "c.pt"), X, rtol=1e-6)
    assert load_points(tmp_path / "c.pt").dtype == np.float32
    np.testing.assert_array_equal(load_points(tmp_path / "d.pt"), X)
    np.testing.assert_allclose(load_points(tmp_path / "e.csv"), X, rtol=1e-15)
    np.testing.assert_allclose(load_points(tmp_path / "f.tsv"), X, rtol=1e-15)


def test_file_errors(tmp_path, X):
    (tmp_path / "empty.npy").write_bytes(b"")
    (tmp_path / "blank.csv").write_text("\n\n")
    (tmp_path / "words.csv").write_text("1,2\n3,x\n")
    (tmp_path / "ragged.csv").write_text("1,2\n3\n")
    (tmp_path / "a.txt").write_text("1 2\n")
    np.savez(tmp_path / "two.npz", a=X, b=X)
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    cases = [
        ("missing.npy", "no such file"),
        ("empty.npy", "empty"),
        ("blank.csv", "no data rows"),
        ("words.csv", "line 2: non-numeric"),
        ("ragged.csv", "different numbers of columns"),
        ("a.txt", "unsupported file type"),
        ("two.npz", "holds 2 arrays"),
        ("obj.npy", "could not be read"),
    ]
    for name, match in cases:
        with pytest.raises(TTLabInputError, match=match):
            load_points(tmp_path / name)
    with pytest.raises(TTLabInputError, match="no array 'zz'"):
        load_points(tmp_path / "two.npz", key="zz")
