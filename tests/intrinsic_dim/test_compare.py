"""`compare`: many estimators, one shared neighbour search, identical numbers to separate fits."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim import GRIDE, MLE, TLE, TwoNN, compare, paper_protocol, sample_manifold
from ttlab.intrinsic_dim.compare import COMPARE_METHODS, parse_methods
from ttlab.intrinsic_dim.ess import ESS
from ttlab.intrinsic_dim.mind import DANCo, MiND_ML


@pytest.fixture(scope="module")
def X():
    return sample_manifold("nonlinear", 5, 30, 1300, noise=0.01, seed=11)


def test_shared_search_gives_the_numbers_of_separate_fits(X):
    res = compare(X, "mle,mle_harmonic,twonn,gride,tle,mind_ml,danco,ess,lpca", batch_size=600, seed=2)
    got = {r.method: r for r in res.rows}
    assert res.knn_k == 100 and res.n_batches == 2
    common = dict(batch_size=600, seed=2)
    expected = {
        "mle": MLE(k=20, **common), "mle_harmonic": MLE(k=20, average="harmonic", **common),
        "twonn": TwoNN(**common), "gride": GRIDE(n1=1, **common), "tle": TLE(**common), "mind_ml": MiND_ML(D=30, **common),
        "danco": DANCo(D=30, **common), "ess": ESS(**common),
    }
    for name, est in expected.items():
        est.fit(X)
        assert got[name].dimension == pytest.approx(est.dimension_, rel=1e-12), name
        np.testing.assert_allclose(got[name].batches, est.batch_dimensions_, rtol=1e-12)
    assert got["lpca"].dimension is not None and got["lpca"].dimension > got["mle"].dimension  # linear span


def test_paper_mode_and_predictions(X):
    res = compare(X, ["mle", "twonn"], paper=True, batch_size=400, beta=0.5)
    ref = paper_protocol(X, batch_size=400)
    mle = res.rows[0]
    assert mle.dimension == pytest.approx(ref.dimension, rel=1e-12)
    assert mle.batches == pytest.approx(ref.batches, rel=1e-12)
    assert mle.dimension_std == pytest.approx(ref.dimension_std, rel=1e-12)
    d = mle.dimension
    assert mle.alpha_d == pytest.approx(1.0 / (1.0 + d)) and mle.alpha_n == pytest.approx(1.0 / d)
    assert res.batch_size == 400 and res.n_batches == 3 and res.beta == 0.5
    j = json.loads(json.dumps(res.to_dict()))
    assert j["rows"][1]["method"] == "twonn" and res.ids()["mle"] == d


def test_bad_input(X):
    Xd = np.vstack([X[:300], X[:30]])
    with pytest.warns(UserWarning, match="duplicate"):
        res = compare(Xd, "mle")
    assert res.n_duplicates_removed == 30 and res.n_points == 330
    Xn = X[:200].copy()
    Xn[5, 0] = np.nan
    with pytest.raises(TTLabInputError, match="NaN"):
        compare(Xn, "mle")
    with pytest.raises(TTLabInputError, match="ess: ESS with 100 neighbour"):
        compare(X[:80], "mle,ess")
    res = compare(X[:80], "all")  # 'all' skips what cannot run and says why
    ess = next(r for r in res.rows if r.method == "ess")
    assert ess.dimension is None and "100 neighbour" in ess.notes[0]
    assert next(r for r in res.rows if r.method == "mle").dimension is not None
    with pytest.raises(TTLabInputError, match="unknown ID estimator 'nope'"):
        parse_methods("mle,nope")
    with pytest.raises(TTLabInputError, match="beta"):
        compare(X, "mle", beta=2)
    assert parse_methods("all") == list(COMPARE_METHODS)
    assert parse_methods("mle_mean,twonn") == ["mle", "twonn"]


def test_cli_compare(run_cli, tmp_path, X):
    path = tmp_path / "x.npy"
    np.save(path, X[:700])
    res = run_cli("id", "compare", path, "--methods", "mle,twonn,mom", "--json", "--out", tmp_path / "c.json")
    assert res.code == 0, res.err
    j = res.json()
    assert [r["method"] for r in j["rows"]] == ["mle", "twonn", "mom"]
    assert j["rows"][0]["dimension"] == pytest.approx(MLE(k=20).fit(X[:700]).dimension_, rel=1e-12)
    assert (tmp_path / "c.json").exists()
    res = run_cli("id", "compare", path, "--methods", "mle,twonn", "--paper", "--batch-size", "300")
    assert res.code == 0 and "std over batches" in res.out and "α_D" in res.out
    res = run_cli("id", "compare", path, "--methods", "mle,bogus")
    assert res.code == 2 and "bogus" in res.err


def test_a_comparison_is_notebook_friendly(X):
    """A short repr, a flat table, a DataFrame and an HTML table (issue 34 item 7)."""
    res = compare(X, "mle,twonn,tle")
    text = repr(res)
    assert len(text) < 200 and f"mle {res.ids()['mle']:.2f}" in text
    rows = res.table()
    assert [r["method"] for r in rows] == ["mle", "twonn", "tle"] and rows[1]["dimension"] == res.ids()["twonn"]
    pd = pytest.importorskip("pandas")
    assert isinstance(res.to_frame(), pd.DataFrame) and len(res.to_frame()) == 3
    page = res._repr_html_()
    assert page.count("<tr>") == 4 and f"{res.ids()['tle']:.3f}" in page
