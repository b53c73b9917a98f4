"""`estimate_id` / `ttlab id estimate --method` with the estimators that report an interval: twonn_bayes, bid."""

import json

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.api import METHODS, estimate_id
from ttlab.intrinsic_dim.binomial import BID
from ttlab.intrinsic_dim.twonn_bayes import TwoNNBayes


@pytest.fixture(scope="module")
def points():
    return np.random.default_rng(3).normal(size=(1500, 3))


def test_twonn_bayes_is_the_estimator_with_its_credible_interval(points):
    est = TwoNNBayes(level=0.9).fit(points)
    res = estimate_id(points, "twonn_bayes", level=0.9)
    assert res.dimension == est.dimension_
    assert [res.extras["interval"]["low"], res.extras["interval"]["high"]] == list(est.dimension_interval_)
    assert res.extras["interval"]["level"] == 0.9 and res.extras["posterior_std"] == est.posterior_std_
    assert res.config["method"] == "twonn_bayes" and res.config["prior_rate"] == 0.1


def test_bid_takes_k_and_reports_its_wald_interval(points):
    est = BID(k=12).fit(points)
    res = estimate_id(points, "bid", k=12)
    assert res.dimension == est.dimension_ and res.config["k"] == 12
    lo, hi = res.extras["interval"]["low"], res.extras["interval"]["high"]
    assert lo == pytest.approx(est.dimension_ - 1.959964 * est.error_, rel=1e-6)
    assert hi == pytest.approx(est.dimension_ + 1.959964 * est.error_, rel=1e-6)
    assert "Cramér–Rao" in res.extras["interval"]["kind"]


def test_methods_without_an_interval_have_none(points):
    assert "interval" not in estimate_id(points, "mle").extras
    assert set(METHODS) == {"mle", "twonn", "gride", "twonn_bayes", "bid"}


@pytest.mark.parametrize("method, bad, name", [("bid", {"level": 1.5}, "level"), ("twonn_bayes", {"level": 0.0}, "level"),
                                               ("bid", {"k": 1}, "k")])
def test_bad_options_are_refused_naming_them(points, method, bad, name):
    with pytest.raises(TTLabInputError, match=name):
        estimate_id(points, method, **bad)


def test_cli_prints_and_writes_the_interval(points, tmp_path, run_cli):
    f = tmp_path / "x.npy"
    np.save(f, points)
    r = run_cli("id", "estimate", f, "--method", "twonn_bayes")
    assert r.code == 0 and "95% interval" in r.out and "credible" in r.out
    r = run_cli("id", "estimate", f, "--method", "bid", "--json")
    payload = json.loads(r.out)
    assert payload["method"] == "bid" and payload["extras"]["interval"]["level"] == 0.95
    r = run_cli("id", "estimate", f, "--method", "bayes")
    assert r.code == 2 and "twonn_bayes" in r.err
