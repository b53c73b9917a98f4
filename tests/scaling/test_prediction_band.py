"""Exponent predictions as bands over ID estimators (library and `ttlab scaling predict`)."""

from __future__ import annotations

import json

import pytest

from ttlab.errors import TTLabInputError
from ttlab.scaling import BAND_ESTIMATORS, prediction_band
from ttlab.scaling.band import parse_ids


def test_band_central_and_range():
    ids = {"mle_mean": 15.0, "mle_harmonic": 13.0, "twonn": 14.0, "danco": 18.0, "lpca": 60.0}
    b = prediction_band(ids, beta=1.0)
    assert b.central_estimator == "mle" and b.central["id"] == 15.0
    assert b.central["alpha_d"] == pytest.approx(2 / 17) and b.central["alpha_n"] == pytest.approx(2 / 15)
    assert b.lo["id"] == 18.0 and b.lo["alpha_d"] == pytest.approx(2 / 20)  # lpca (linear span) is not in the band
    assert b.hi["id"] == 13.0 and b.hi["alpha_n"] == pytest.approx(2 / 13)
    assert b.not_in_band == ["lpca"] and set(b.estimator_set) == {"mle", "mle_harmonic", "twonn", "danco"}
    assert b.lo["alpha_d"] <= b.central["alpha_d"] <= b.hi["alpha_d"]
    flat = b.for_exponent("alpha_d")
    assert flat["central"] == b.central["alpha_d"] and flat["lo"] == b.lo["alpha_d"] and flat["hi"] == b.hi["alpha_d"]
    assert flat["estimators"]["twonn"] == {"id": 14.0, "alpha": pytest.approx(2 / 16)}
    # beta enters every prediction
    b5 = prediction_band(ids, beta=0.5)
    assert b5.central["alpha_d"] == pytest.approx(1 / 16)
    # an explicit set, and a central outside the default set
    b2 = prediction_band(ids, central="lpca", estimators=["twonn"])
    assert b2.central["id"] == 60.0 and b2.estimator_set == ["twonn", "lpca"] and b2.hi["id"] == 14.0
    assert "mle" in BAND_ESTIMATORS and "lpca" not in BAND_ESTIMATORS


def test_band_bad_input():
    with pytest.raises(TTLabInputError, match="central estimator"):
        prediction_band({"twonn": 14.0})
    with pytest.raises(TTLabInputError, match="d must be > 0"):
        prediction_band({"mle": -1.0})
    with pytest.raises(TTLabInputError, match="beta"):
        prediction_band({"mle": 5.0}, beta=3)
    with pytest.raises(TTLabInputError, match="name=value"):
        parse_ids("mle:15")
    with pytest.raises(TTLabInputError, match="non-numeric"):
        parse_ids("mle=abc")


def test_cli_predict_band(run_cli, tmp_path):
    res = run_cli("scaling", "predict", "--ids", "mle=15.6,twonn=14.2,tle=16.9", "--json")
    assert res.code == 0, res.err
    j = res.json()
    assert j["central"]["alpha_d"] == pytest.approx(2 / 17.6)
    assert j["lo"]["alpha_d"] == pytest.approx(2 / 18.9) and j["hi"]["alpha_d"] == pytest.approx(2 / 16.2)
    compare_json = {"beta": 1.0, "rows": [{"method": "mle", "dimension": 10.0}, {"method": "ess", "dimension": 12.0},
                                          {"method": "danco", "dimension": None}]}
    path = tmp_path / "c.json"
    path.write_text(json.dumps(compare_json))
    j = run_cli("scaling", "predict", "--from-compare", path, "--json").json()
    assert j["estimator_set"] == ["mle", "ess"] and j["lo"]["alpha_n"] == pytest.approx(2 / 12)
    res = run_cli("scaling", "predict", "--from-compare", path)
    assert res.code == 0 and "central (mle)" in res.out
    res = run_cli("scaling", "predict", "--id", "3", "--ids", "mle=3")
    assert res.code == 2 and "exactly one" in res.err
    res = run_cli("scaling", "predict", "--from-compare", tmp_path / "missing.json")
    assert res.code == 2 and "does not exist" in res.err
