"""Issue 23, wrong numbers without a word: a fit whose design cannot identify the exponent says so
(< 3 distinct sizes, near-constant loss, R²(log) < 0), and `scaling predict` names what it rejects."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.scaling import fit_chinchilla, fit_offset_power_law, fit_power_law
from ttlab.scaling.band import ids_from_compare_json, parse_ids, prediction_band
from ttlab.scaling.fit_checks import design_notes


def test_two_distinct_sizes_are_not_identifiable():
    """Before: x = 1e3, 1e3, 1e4 gave α = 0.176 with a zero-width interval, marked identifiable."""
    r = fit_power_law([1e3, 1e3, 1e4], [3.0, 3.0, 2.0], bootstrap=100)
    assert r.ci["alpha"][1] - r.ci["alpha"][0] < 1e-9  # the interval that looked certain
    assert not r.identifiable and any("only 2 distinct x" in w for w in r.warnings)
    three = fit_power_law([1e3, 1e4, 1e5], [3.0, 2.1, 1.4], bootstrap=0)  # a third size: identifiable
    assert three.identifiable and not three.warnings


def test_chinchilla_needs_three_distinct_sizes_of_each():
    n = np.array([1e7, 1e8, 1e9] * 2, dtype=float)
    d = np.array([1e9] * 3 + [1e10] * 3)
    loss = 1.7 + 400 / n**0.34 + 410 / d**0.28
    r = fit_chinchilla(n, d, loss, bootstrap=0)
    assert not r.identifiable and any("only 2 distinct D" in w for w in r.warnings)


@pytest.mark.parametrize("fitter", [fit_power_law, fit_offset_power_law])
def test_near_constant_loss_is_not_identifiable(fitter):
    """Before: 3 + 1e-9·i was fitted and marked identifiable (the offset form gave an exponent)."""
    x = np.geomspace(1e3, 1.28e5, 8)
    r = fitter(x, 3 + 1e-9 * np.arange(8), bootstrap=50)
    assert not r.identifiable and any("nearly constant" in w for w in r.warnings)
    real = fitter(x, 3 * x**-0.05 + (0.1 if fitter is fit_offset_power_law else 0), bootstrap=0)
    assert real.identifiable and not any("nearly constant" in w for w in real.warnings)


def test_negative_r2_is_not_identifiable():
    lx = np.log(np.geomspace(1, 100, 5))
    ly = np.log(np.array([2.0, 2.5, 1.8, 2.6, 2.1]))
    assert any("R²(log) = -0.5" in w for w in design_notes(lx, ly, None, -0.5, ("x", "y", "x2")))
    assert design_notes(lx, ly, None, 0.3, ("x", "y", "x2")) == []
    assert any("R²(log) = nan" in w for w in design_notes(lx, ly, None, float("nan"), ("x", "y", "x2")))


def test_cli_fit_prints_not_identifiable(run_cli, tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("x,loss\n1000,3.0\n1000,3.0\n10000,2.0\n")
    args = ("scaling", "fit", path, "--x", "x", "--y", "loss", "--form", "power", "--bootstrap", "20")
    res = run_cli(*args, "--json")
    assert res.code == 0, res.err
    j = res.json()
    assert j["identifiable"] is False and any("only 2 distinct x" in w for w in j["warnings"])
    res = run_cli(*args)
    assert res.code == 0 and "not identifiable" in res.out


def test_predict_names_the_estimator_it_rejects(run_cli, tmp_path):
    """Before: ESS at 0.000 (1-D data) made `predict` reject the whole file without naming ESS."""
    with pytest.raises(TTLabInputError, match="estimator 'ess': intrinsic dimension d must be > 0, got 0.0. Leave 'ess' out"):
        prediction_band({"mle": 5.0, "ess": 0.0})
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"rows": [{"method": "mle", "dimension": 1.1}, {"method": "ess", "dimension": 0.0}]}))
    res = run_cli("scaling", "predict", "--from-compare", path)
    assert res.code == 2 and "'ess'" in res.err and "Traceback" not in res.err


def test_predict_refuses_duplicates_and_non_numbers(run_cli, tmp_path):
    with pytest.raises(TTLabInputError, match="ids names 'mle' twice") as info:
        parse_ids("mle=5,mle=9")
    assert info.value.params == ("ids",)
    with pytest.raises(TTLabInputError, match="names 'mle' twice"):
        parse_ids("mle=5,mle_mean=9")  # an alias of the same estimator
    res = run_cli("scaling", "predict", "--ids", "mle=5,mle=9")
    assert res.code == 2 and "twice" in res.err and "(command-line option: --ids)" in " ".join(res.err.split())
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"rows": [{"method": "mle", "dimension": 4.0}, {"method": "twonn", "dimension": "abc"}]}))
    with pytest.raises(TTLabInputError, match=r"rows\[1\] \('twonn'\) has dimension 'abc', not a number"):
        ids_from_compare_json(path)
    res = run_cli("scaling", "predict", "--from-compare", path)
    assert res.code == 2 and "'abc'" in res.err and "Traceback" not in res.err
    path.write_text(json.dumps({"rows": [{"method": "mle", "dimension": 4.0}, {"method": "mle", "dimension": 6.0}]}))
    with pytest.raises(TTLabInputError, match="'mle' appears twice"):
        ids_from_compare_json(path)
