"""The ID against scale (issue 36 item 2): :func:`id_scale` (2NN by decimation, GRIDE across neighbour orders) on data
whose answer depends on the scale in a known way, its agreement with the estimators it is built from, bad input, and
``ttlab id scale`` (JSON, figure, options refused before any work)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ttlab.intrinsic_dim.files as files
from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim import GRIDE, TwoNN, id_scale
from ttlab.intrinsic_dim.figures import id_scale_figure
from ttlab.intrinsic_dim.validate import DuplicatePointsWarning

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SIGMA = 0.01


def noisy_circle(n: int, sigma: float = SIGMA, seed: int = 0) -> np.ndarray:
    """Points uniform on the unit circle (a curve: d = 1), moved radially by Gaussian noise of standard deviation
    ``sigma``: below ``sigma`` the points fill the plane (d = 2), well above it they lie on the curve (d = 1)."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, 2 * np.pi, n)
    radius = 1 + sigma * rng.standard_normal(n)
    return np.column_stack([radius * np.cos(t), radius * np.sin(t)])


@pytest.fixture(scope="module")
def circle_2nn():
    return id_scale(noisy_circle(8000), "2nn")


def test_2nn_reads_2_below_the_noise_and_1_well_above(circle_2nn):
    rows = circle_2nn.twonn
    assert [r.n_points for r in rows] == [8000 >> i for i in range(9)]  # 8000 … 31, then 15 < min_points = 20
    assert [r.n_subsets for r in rows] == [1, 2, 4, 8, 16, 32, 64, 64, 64]
    below = [r.dimension for r in rows if r.radius < SIGMA]
    above = [r.dimension for r in rows if r.radius > 10 * SIGMA]
    assert len(below) >= 3 and all(abs(d - 2) < 0.1 for d in below), below  # measured 2.015, 2.007, 1.983
    assert above and all(abs(d - 1) < 0.25 for d in above), above  # measured 1.168 at r = 15 sigma
    crossing = next(r.radius for r in rows if r.dimension < 1.5)
    assert SIGMA < crossing < 8 * SIGMA  # measured 4.1 sigma
    assert np.all(np.diff([r.radius for r in rows]) > 0)


def test_gride_reads_2_below_the_noise_and_1_above():
    rows = id_scale(noisy_circle(8000), "gride", range_max=256).gride
    assert [(r.n1, r.n2) for r in rows] == [(2**i, 2**(i + 1)) for i in range(8)]
    assert abs(rows[0].dimension - 2) < 0.05 and rows[0].radius < SIGMA  # measured 2.026
    above = [r.dimension for r in rows if r.radius > 5 * SIGMA]
    assert above and all(abs(d - 1) < 0.1 for d in above), above  # measured 1.044 at r = 7.7 sigma
    assert SIGMA < next(r.radius for r in rows if r.dimension < 1.5) < 5 * SIGMA


def test_a_uniform_square_reads_2_at_every_scale():
    res = id_scale(np.random.default_rng(0).random((4000, 2)))
    dims = [r.dimension for r in res.twonn] + [r.dimension for r in res.gride]
    assert len(res.twonn) == 8 and len(res.gride) == 6
    assert all(abs(d - 2) < 0.15 for d in dims), dims  # measured 1.908 … 2.031


def test_the_scales_are_the_estimators_fits(circle_2nn):
    X = noisy_circle(8000)
    assert circle_2nn.twonn[0].dimension == pytest.approx(TwoNN().fit(X).dimension_, rel=1e-12)
    for r in circle_2nn.twonn:
        assert r.dimension == pytest.approx(np.mean(r.dimensions), rel=1e-12) and len(r.dimensions) == r.n_subsets
        assert r.dimension_sem == pytest.approx(r.dimension_std / np.sqrt(r.n_subsets), rel=1e-12)
    g = GRIDE(n1=1, multiscale=True, range_max=64).fit(X)
    res = id_scale(X, "gride")
    np.testing.assert_allclose([r.dimension for r in res.gride], g.dimension_scales_, rtol=1e-12)
    np.testing.assert_allclose([r.error for r in res.gride], g.error_scales_, rtol=1e-12)
    again = id_scale(X, "2nn", max_subsets=4)
    assert [r.dimensions for r in again.twonn[:3]] == [r.dimensions for r in circle_2nn.twonn[:3]]  # same seed


def test_radii_are_in_the_inputs_units_and_dimensions_do_not_move():
    X = np.random.default_rng(1).random((600, 3))
    a, b = id_scale(X), id_scale(X * 1000.0)
    np.testing.assert_allclose([r.radius for r in b.twonn], [1000 * r.radius for r in a.twonn], rtol=1e-9)
    np.testing.assert_allclose([r.radius for r in b.gride], [1000 * r.radius for r in a.gride], rtol=1e-9)
    np.testing.assert_allclose([r.dimension for r in b.twonn], [r.dimension for r in a.twonn], rtol=1e-9)
    tiny = id_scale(X * 2.0**-60, "gride")  # scaled into the safe range and back
    np.testing.assert_allclose([r.radius for r in tiny.gride], [2.0**-60 * r.radius for r in a.gride], rtol=1e-9)


@pytest.mark.parametrize("options, message", [
    ({"method": "3nn"}, "unknown method '3nn'; choose one of 2nn, gride, both"),
    ({"min_points": 9}, "min_points must be an integer >= 10, got 9"),
    ({"max_subsets": 0}, "max_subsets must be an integer >= 1, got 0"),
    ({"range_max": 1}, "range_max must be an integer >= 2, got 1"),
    ({"discard_fraction": 0.0}, "discard_fraction must be a number in (0, 1), got 0.0"),
    ({"discard_fraction": float("nan")}, "discard_fraction must be a number in (0, 1), got nan"),
    ({"seed": -1}, "seed must be an integer >= 0, got -1"),
    ({"metric": "manhattan"}, "manhattan"),
])
def test_bad_options_are_named(options, message):
    with pytest.raises(TTLabInputError) as exc:
        id_scale(np.random.default_rng(0).random((100, 2)), **options)
    assert message in str(exc.value)


def test_bad_points():
    X = np.random.default_rng(0).random((40, 3))
    with pytest.raises(TTLabInputError, match="min_points = 20 .* at least 20 distinct points; got 19"):
        id_scale(X[:19])
    with pytest.warns(DuplicatePointsWarning), pytest.raises(TTLabInputError, match="got 19 after removing 5 dup"):
        id_scale(np.vstack([X[:19], X[:5]]))
    assert id_scale(X[:5], "gride").gride[0].n1 == 1  # GRIDE needs 3 points (n2 = 2)
    with pytest.raises(TTLabInputError, match="GRIDE with n1 = 1, n2 = 2.* at least 3 distinct points; got 2"):
        id_scale(X[:2], "gride")
    bad = X.copy()
    bad[7, 2] = np.nan
    with pytest.raises(TTLabInputError, match="NaN"):
        id_scale(bad)
    with pytest.warns(DuplicatePointsWarning):
        assert id_scale(np.vstack([X, X[:3]])).n_duplicates_removed == 3


def test_the_figure_draws_each_row_on_a_log_axis(circle_2nn):
    fig = id_scale_figure(circle_2nn)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    line = ax.containers[0].lines[0]
    np.testing.assert_allclose(np.asarray(line.get_xdata(), float), [r.radius for r in circle_2nn.twonn])
    np.testing.assert_allclose(np.asarray(line.get_ydata(), float), [r.dimension for r in circle_2nn.twonn])


# -- the command ---------------------------------------------------------------------------------------------------
@pytest.fixture
def points(tmp_path):
    path = tmp_path / "circle.npy"
    np.save(path, noisy_circle(2000))
    return path


def test_cli_json_out_and_plot(run_cli, points, tmp_path):
    plot, out = tmp_path / "scale.png", tmp_path / "scale.json"
    res = run_cli("id", "scale", points, "--json", "--out", out, "--plot", plot, "--range-max", "32")
    assert res.code == 0, res.err
    j = res.json()
    for key in ("file", "method", "twonn", "gride", "n_points", "n_features", "n_duplicates_removed", "metric", "seed",
                "settings", "knn_backend", "seconds", "versions", "plot"):
        assert key in j, key
    assert set(j["twonn"][0]) == {"n_points", "n_subsets", "n_subsets_available", "radius", "dimension",
                                  "dimension_std", "dimension_sem", "dimensions"}
    assert set(j["gride"][0]) == {"n1", "n2", "radius", "dimension", "error"}
    assert j["method"] == "both" and [g["n2"] for g in j["gride"]] == [2, 4, 8, 16, 32] and j["plot"] == str(plot)
    assert json.loads(out.read_text())["twonn"] == j["twonn"]
    assert plot.read_bytes().startswith(PNG_SIGNATURE)
    human = run_cli("id", "scale", points, "--method", "2nn")
    assert human.code == 0 and "points per subset" in human.out and "GRIDE" not in human.out
    assert "Read the ID where it is flat in r" in " ".join(human.out.split())


@pytest.mark.parametrize("args, fragment", [
    (["--plot", "ids.txt"], "unsupported image format 'txt'"),
    (["--plot", "same.png", "--out", "same.png"], "plot and out are the same file"),
    (["--plot", "exists.png"], "already exists; pass overwrite"),
    (["--method", "pca"], "unknown method 'pca'"),
    (["--min-points", "5"], "min_points must be an integer >= 10, got 5. (command-line option: --min-points)"),
    (["--discard-fraction", "1"], "discard_fraction must be a number in (0, 1)"),
    (["--metric", "l1"], "l1"),
])
def test_bad_options_are_refused_before_the_points_are_read(run_cli, points, tmp_path, monkeypatch, args, fragment):
    (tmp_path / "exists.png").write_bytes(b"old")

    def no_work(*a, **k):
        raise AssertionError("read the points before checking the options")

    monkeypatch.setattr(files, "load_points", no_work)
    args = [str(tmp_path / a) if a.endswith((".png", ".txt")) else a for a in args]
    res = run_cli("id", "scale", points, *args)
    assert res.code == 2 and fragment in " ".join(res.err.split()), res.err
    assert len(res.err.strip().splitlines()) == 1, res.err
    assert (tmp_path / "exists.png").read_bytes() == b"old"


def test_too_few_points_exit_2_with_one_line(run_cli, tmp_path):
    np.save(tmp_path / "few.npy", np.random.default_rng(0).random((12, 2)))
    res = run_cli("id", "scale", tmp_path / "few.npy")
    assert res.code == 2 and "at least 20 distinct points; got 12" in res.err and "--min-points" in res.err
    assert len(res.err.strip().splitlines()) == 1


def test_against_dadapy_when_installed():
    """DADApy's own functions on the same points (skipped without DADApy: not a dependency)."""
    id_estimation = pytest.importorskip("dadapy.id_estimation")
    from ttlab.intrinsic_dim import BID, TwoNNBayes, sample_manifold

    X = sample_manifold("sphere", 3, 8, 1500, seed=3)
    ie = id_estimation.IdEstimation(coordinates=X, maxk=100)
    ie.compute_distances()
    d, err, scale = ie.compute_id_2NN_wprior(alpha=2, beta=5)
    t = TwoNNBayes(prior_shape=2, prior_rate=5).fit(X)
    assert (t.dimension_, t.posterior_std_, t.radius_) == pytest.approx((d, err, scale), rel=1e-9)
    d, err, scale = ie.compute_id_binomial_k(20, 0.9, bayes=False)[:3]
    b = BID(k=20, ratio=0.9).fit(X)
    assert (b.dimension_, b.error_, b.radius_) == pytest.approx((d, err, scale), rel=1e-9)
    ids, errs, rs = ie.return_id_scaling_gride(range_max=64)
    res = id_scale(X, "gride")
    np.testing.assert_allclose([g.dimension for g in res.gride], ids, rtol=1e-6)
    np.testing.assert_allclose([g.error for g in res.gride], errs, rtol=1e-5)
    np.testing.assert_allclose([g.radius for g in res.gride], rs, rtol=1e-9)
