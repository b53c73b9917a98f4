"""Nothing certain that is not (issue 33): near-duplicate sizes count as one, a floor at its lower limit or under a
point, a collapsed interval and a duplicated CSV column each stop a fit from looking identified."""

from __future__ import annotations

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.scaling.fit import fit_chinchilla, fit_power_law
from ttlab.scaling.fit_checks import SIZE_RTOL, collapse_notes, distinct_sizes, floor_notes
from ttlab.scaling.fit_csv import fit_csv


def test_sizes_within_the_tolerance_are_one_size():
    logs = np.log([1e4, 1e4 * (1 + SIZE_RTOL / 10), 1e6, 1e6, 1e5])
    assert distinct_sizes(logs) == 3 and distinct_sizes(logs[:4]) == 2 and distinct_sizes(np.array([])) == 0
    assert distinct_sizes(np.log([1.0, 1 + 3 * SIZE_RTOL])) == 2  # just outside the tolerance: two sizes


def test_near_duplicate_sizes_are_not_identifiable():
    """The red team's CSV: 10000 and 10000.000000001 (and 1e6 twice) were 3 sizes, α with an interval of width
    4e-15 and identifiable; they are 2 sizes."""
    x = np.array([1e4, 1e4 + 1e-5, 1e6, 1e6])
    r = fit_power_law(x, 3 * x ** -0.1 * np.array([1, 1.001, 0.999, 1.0005]), bootstrap=200)
    assert not r.identifiable and r.diagnostics["distinct_x"] == 2
    assert any("only 2 distinct x value(s)" in w for w in r.warnings)
    with pytest.raises(TTLabInputError, match="at least 2 distinct values .*relative 1e-06 count as one"):
        fit_power_law(np.array([1e4, 1e4 + 1e-6, 1e4]), np.array([3.0, 2.9, 2.8]), bootstrap=50)


def _chinchilla_grid(rng):
    N = np.repeat(np.geomspace(1e6, 1e9, 6), 4)
    D = np.tile(np.geomspace(1e8, 1e11, 4), 6)
    L = 1.69 + 406.4 / N ** 0.34 + 410.7 / D ** 0.28
    return N, D, L * np.exp(rng.normal(0, 0.003, L.size))


def test_a_point_below_the_fitted_floor_is_named():
    N, D, L = _chinchilla_grid(np.random.default_rng(0))
    clean = fit_chinchilla(N, D, L, bootstrap=100)
    assert clean.identifiable and clean.warnings == []  # the control: the same grid without the low point
    L[-1] = 1.0
    r = fit_chinchilla(N, D, L, bootstrap=100)
    assert not r.identifiable and any("1 point(s) lie below the fitted floor" in w and "#23" in w for w in r.warnings)


def test_floor_at_zero_and_collapsed_intervals_are_reported():
    names = ("N", "loss", "D")
    assert floor_notes({"E": 2.56e-75, "A": 1.0}, np.array([2.0, 3.0]), names)[0].startswith("the floor E = 2.56e-75")
    assert floor_notes({"E": 0.5}, np.array([2.0, 3.0]), names) == []
    assert floor_notes({"A": 1.0}, np.array([2.0]), names) == []  # the power form has no floor
    ci = {"E": (2.56e-75, 2.56e-75), "alpha": (0.2, 0.3)}
    notes = collapse_notes(ci, {"E": 2.56e-75, "alpha": 0.24}, rmse_log=0.01)
    assert len(notes) == 1 and "interval of E has collapsed" in notes[0]
    assert collapse_notes(ci, {"E": 2.56e-75, "alpha": 0.24}, rmse_log=0.0) == []  # an exact fit is certain


def test_a_duplicated_column_name_is_refused_with_both_positions(tmp_path):
    f = tmp_path / "runs.csv"
    f.write_text("tokens,loss,loss\n1000,3.0,9\n10000,2.5,9\n100000,2.1,9\n", encoding="utf-8")
    with pytest.raises(TTLabInputError, match="column 'loss' appears 2 times in the header \\(positions 2, 3\\)"):
        fit_csv(f, x="tokens", y="loss", form="power", bootstrap=50)
