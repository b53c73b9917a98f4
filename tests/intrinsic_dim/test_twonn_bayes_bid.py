"""The TwoNN posterior (:class:`TwoNNBayes`) and the binomial estimator (:class:`BID`), issue 36 item 3: each against
its closed form computed here independently, against the known dimension of seeded samples (the posterior interval's
coverage over 50 seeds), their parameter checks and bad input, and their rows in ``compare``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.spatial import cKDTree

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim import BID, TwoNN, TwoNNBayes, compare, random_isometry, sample_manifold
from ttlab.intrinsic_dim.base import DegeneratePointsWarning
from ttlab.intrinsic_dim.binomial import SparseInnerBallsWarning
from ttlab.intrinsic_dim.twonn_bayes import gamma_posterior
from ttlab.intrinsic_dim.validate import DuplicatePointsWarning


def _square(n: int, seed: int, ambient: int = 10) -> np.ndarray:
    """Uniform points of the unit square on a random 2-D linear subspace of R^ambient."""
    rng = np.random.default_rng(seed)
    return rng.random((n, 2)) @ random_isometry(rng, 2, ambient).T


def _two_neighbours(X: np.ndarray) -> np.ndarray:
    dist, _ = cKDTree(X).query(X, 3)
    return dist[:, 1:]


# -- TwoNNBayes ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("a, b", [(1.0, 0.1), (0.0, 0.0), (2.0, 5.0)])
def test_the_posterior_is_the_closed_form_gamma(a, b):
    X = sample_manifold("sphere", 3, 8, 700, seed=4)
    est = TwoNNBayes(prior_shape=a, prior_rate=b, level=0.9).fit(X)
    r = _two_neighbours(X)
    S, N = float(np.log(r[:, 1] / r[:, 0]).sum()), len(r)
    post = stats.gamma(a + N, scale=1 / (b + S))
    assert est.posterior_shape_ == a + N and est.posterior_rate_ == pytest.approx(b + S, rel=1e-12)
    assert est.dimension_ == pytest.approx(post.mean(), rel=1e-12) == est.posterior_mean_
    assert est.posterior_mode_ == pytest.approx((a + N - 1) / (b + S), rel=1e-12)
    assert est.posterior_median_ == pytest.approx(post.median(), rel=1e-12)
    assert est.posterior_std_ == pytest.approx(post.std(), rel=1e-12)
    np.testing.assert_allclose(est.dimension_interval_, post.interval(0.9), rtol=1e-12)
    assert est.radius_ == pytest.approx(r.mean(), rel=1e-12)
    assert TwoNNBayes(point="mode").fit(X).dimension_ == pytest.approx((1 + N - 1) / (0.1 + S), rel=1e-12)
    np.testing.assert_allclose(est.pointwise_dimension_, 1 / np.log(r[:, 1] / r[:, 0]), rtol=1e-12)


def test_the_default_prior_barely_moves_the_estimate_and_dadapys_pulls_it_down():
    X = sample_manifold("linear", 12, 40, 4096, seed=1)
    flat = TwoNNBayes(prior_shape=0, prior_rate=0).fit(X)
    default = TwoNNBayes().fit(X)
    dadapy = TwoNNBayes(prior_shape=2, prior_rate=5).fit(X)
    d = flat.dimension_  # N / S: the likelihood's maximum
    assert abs(default.dimension_ / d - 1) < (1 + 0.1 * d) / 4096 * 1.01  # (1 - b d) / N, stated in the docstring
    assert dadapy.dimension_ / d - 1 == pytest.approx(-5 * d / 4096, rel=0.05)  # Gamma(2, 5): 5 d / N lower
    assert TwoNN(discard_fraction=0.1, method="mle").fit(X).dimension_ == pytest.approx(d, rel=0.05)


def test_under_the_model_the_interval_covers_at_its_level():
    """i.i.d. log-ratios (the model's assumption) drawn directly: Jeffreys' prior gives the exact 95 % interval."""
    rng = np.random.default_rng(0)
    hits = [lo <= 4.0 <= hi for lo, hi in
            (gamma_posterior(rng.exponential(1 / 4.0, 60), 0.0, 0.0, 0.95)["dimension_interval_"] for _ in range(2000))]
    assert np.mean(hits) == pytest.approx(0.95, abs=0.015)


def test_on_points_the_interval_covers_the_true_dimension_in_most_seeds():
    """50 seeded samples of 200 points: the 95 % interval covers d = 2 in 86 % of the squares (edges, and ratios of
    neighbouring points correlated: the model treats them as independent) and 92 % of the 2-spheres."""
    cover_square = [(lambda iv: iv[0] <= 2 <= iv[1])(TwoNNBayes().fit(_square(200, s)).dimension_interval_)
                    for s in range(50)]
    cover_sphere = [(lambda iv: iv[0] <= 2 <= iv[1])(
        TwoNNBayes().fit(sample_manifold("sphere", 2, 10, 200, seed=s)).dimension_interval_) for s in range(50)]
    rates = np.mean(cover_square), np.mean(cover_sphere)
    assert rates[0] >= 0.8 and rates[1] >= 0.85, rates


def test_tied_ratios_are_skipped_with_a_warning_and_all_tied_is_an_error():
    X = np.vstack([_square(300, 0), [[5.0] + [0.0] * 9, [6.0] + [0.0] * 9, [4.0] + [0.0] * 9]])  # 5: equidistant
    with pytest.warns(DegeneratePointsWarning, match="1 point"):
        est = TwoNNBayes().fit(X)
    assert est.n_ratios_ == 302
    with pytest.raises(TTLabInputError, match="every one of the 120 points .* quantized"):
        TwoNNBayes().fit(np.eye(120))


# -- BID -----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("k, ratio", [(20, 0.9), (8, 0.5)])
def test_bid_is_the_binomial_mle_with_its_cramer_rao_error(k, ratio):
    """Macocco et al. 2023 (DADApy's compute_id_binomial_k, bayes=False), recomputed with a k-d tree."""
    X = sample_manifold("sphere", 3, 8, 900, seed=2)
    est = BID(k=k, ratio=ratio, level=0.9).fit(X)
    dist, _ = cKDTree(X).query(X, k + 1)  # column 0: the point itself
    r_k = dist[:, k]
    n = np.array([np.sum(dist[i, 1:k] <= ratio * r_k[i]) for i in range(len(X))])
    d = math.log(n.mean() / (k - 1)) / math.log(ratio)
    se = math.sqrt((ratio**-d - 1) / ((k - 1) * len(X) * math.log(ratio) ** 2))
    assert est.dimension_ == pytest.approx(d, rel=1e-12) and est.error_ == pytest.approx(se, rel=1e-12)
    z = stats.norm.ppf(0.95)
    np.testing.assert_allclose(est.dimension_interval_, [d - z * se, d + z * se], rtol=1e-12)
    assert est.inner_count_ == n.sum() and est.inner_fraction_ == pytest.approx(n.mean() / (k - 1), rel=1e-12)
    assert est.radius_ == pytest.approx((1 + ratio) / 2 * r_k.mean(), rel=1e-12)
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(est.pointwise_dimension_, np.log(n / (k - 1)) / math.log(ratio), rtol=1e-12)


@pytest.mark.parametrize("d", [2, 3])
def test_bid_reads_the_dimension_of_a_sphere(d):
    est = BID().fit(sample_manifold("sphere", d, 10, 4000, seed=d))
    assert abs(est.dimension_ - d) < min(3 * est.error_, 0.06), (est.dimension_, est.error_)


def test_bid_says_when_the_inner_balls_are_empty_or_nearly():
    X = sample_manifold("linear", 10, 12, 300, seed=0)
    with pytest.raises(TTLabInputError, match="none of the 300 points .* use a ratio closer to 1 or a larger k"):
        BID(k=5, ratio=0.2).fit(X)
    with pytest.warns(SparseInnerBallsWarning, match="only .* neighbour"):
        BID(k=5, ratio=0.5).fit(X)


# -- both: bad input ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("est, message", [
    (TwoNNBayes(prior_shape=-1.0), "prior_shape must be a number >= 0, got -1.0"),
    (TwoNNBayes(prior_rate=float("nan")), "prior_rate must be a number >= 0, got nan"),
    (TwoNNBayes(level=1.0), "level must be a number in (0, 1), got 1.0"),
    (TwoNNBayes(point="max"), "unknown point 'max'; choose one of mean, mode, median"),
    (BID(k=1), "k must be an integer >= 2, got 1"),
    (BID(k=2.5), "k must be an integer >= 2, got 2.5"),
    (BID(ratio=1.0), "ratio must be a number in (0, 1), got 1.0"),
    (BID(ratio=0), "ratio must be a number in (0, 1), got 0"),
    (BID(level=0), "level must be a number in (0, 1), got 0"),
])
def test_bad_parameters_are_named(est, message):
    with pytest.raises(TTLabInputError) as exc:
        est.fit(_square(100, 0))
    assert message in str(exc.value)


@pytest.mark.parametrize("est, need", [(TwoNNBayes(), 10), (BID(), 21)])
def test_bad_points(est, need):
    X = _square(need + 5, 0)
    with pytest.raises(TTLabInputError, match=f"at least {need} distinct points; got {need - 1}"):
        est.fit(X[: need - 1])
    with pytest.warns(DuplicatePointsWarning), pytest.raises(TTLabInputError, match="after removing 6 duplicate"):
        est.fit(np.vstack([X[: need - 1], X[:6]]))
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(TTLabInputError, match="NaN"):
        est.fit(bad)
    with pytest.warns(DuplicatePointsWarning):
        assert est.fit(np.vstack([X, X[:4]])).n_duplicates_removed_ == 4


def test_the_cli_refuses_too_few_points_with_one_line(run_cli, tmp_path):
    np.save(tmp_path / "few.npy", _square(15, 0))
    res = run_cli("id", "compare", tmp_path / "few.npy", "--methods", "bid")
    assert res.code == 2 and "bid: BID with 20 neighbour(s) needs at least 21 distinct points; got 15" in res.err
    assert len(res.err.strip().splitlines()) == 1


# -- compare ------------------------------------------------------------------------------------------------------
def test_compare_rows_are_the_separate_fits_with_their_intervals():
    X = sample_manifold("sphere", 3, 10, 1300, seed=5)
    res = compare(X, "mle,twonn_posterior,binomial", batch_size=600, seed=1)
    rows = {r.method: r for r in res.rows}
    assert list(rows) == ["mle", "twonn_bayes", "bid"] and rows["mle"].interval is None
    for name, est in (("twonn_bayes", TwoNNBayes(batch_size=600, seed=1)), ("bid", BID(batch_size=600, seed=1))):
        est.fit(X)
        assert rows[name].dimension == pytest.approx(est.dimension_, rel=1e-12)
        iv = rows[name].interval
        assert [iv["low"], iv["high"]] == pytest.approx(list(est.dimension_interval_), rel=1e-12)
        assert iv["level"] == 0.95 and "of one batch, averaged over the batches" in iv["kind"]
    whole = compare(X, "twonn_bayes,bid").rows
    assert whole[0].interval["kind"] == "equal-tailed posterior credible interval"
    assert whole[1].interval["kind"].startswith("Wald interval")


def test_compare_cli_shows_the_interval_column(run_cli, tmp_path):
    np.save(tmp_path / "x.npy", sample_manifold("sphere", 2, 6, 600, seed=0))
    res = run_cli("id", "compare", tmp_path / "x.npy", "--methods", "twonn,twonn_bayes,bid")
    assert res.code == 0, res.err
    assert "interval (95%)" in res.out and "equal-tailed posterior credible interval" in res.out
    j = run_cli("id", "compare", tmp_path / "x.npy", "--methods", "twonn,bid", "--json").json()
    assert j["rows"][0]["interval"] is None and set(j["rows"][1]["interval"]) == {"low", "high", "level", "kind"}


def test_neither_is_in_the_prediction_band():
    """The band's set is unchanged (docs/intrinsic_dim.md says why)."""
    from ttlab.scaling import BAND_ESTIMATORS, prediction_band

    assert "twonn_bayes" not in BAND_ESTIMATORS and "bid" not in BAND_ESTIMATORS
    band = prediction_band({"mle": 10.0, "twonn_bayes": 30.0, "bid": 3.0}, beta=1)
    assert band.estimator_set == ["mle"] and band.not_in_band == ["bid", "twonn_bayes"]

