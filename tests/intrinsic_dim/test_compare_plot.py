"""`ttlab id compare --plot FILE` (issue 34, item 7): every estimator's ID with its spread over batches and the
exponents it predicts, drawn to an image whose format is checked before any work."""

from __future__ import annotations

import json
from functools import partial

import numpy as np
import pytest

import ttlab.intrinsic_dim.files as files
from ttlab.intrinsic_dim.compare import compare
from ttlab.intrinsic_dim.figures import compare_figure

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
METHODS = "mle,twonn,lpca"


@pytest.fixture
def points(tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "x.npy"
    np.save(path, rng.standard_normal((600, 3)) @ rng.standard_normal((3, 8)))
    return path


def test_compare_plot_writes_a_png_and_names_it(run_cli, points, tmp_path):
    plot, out = tmp_path / "ids.png", tmp_path / "r.json"
    res = run_cli("id", "compare", points, "--methods", METHODS, "--batch-size", "200", "--plot", plot, "--out", out,
                  "--json")
    assert res.code == 0, res.err
    data = plot.read_bytes()
    assert len(data) > 0 and data.startswith(PNG_SIGNATURE)
    assert res.json()["plot"] == str(plot) and json.loads(out.read_text())["plot"] == str(plot)
    text = run_cli("id", "compare", points, "--methods", "mle", "--plot", tmp_path / "b.svg")
    assert text.code == 0 and "wrote the figure" in text.out and (tmp_path / "b.svg").read_text().startswith("<?xml")


def test_the_figure_shows_each_estimate_its_spread_and_exponents(points):
    res = compare(np.load(points), METHODS, batch_size=200)
    fig = compare_figure(res)
    ids, exps = fig.axes
    assert [t.get_text() for t in ids.get_yticklabels()] == [r.method + (" †" if r.notes else "") for r in res.rows]
    points_bar = ids.containers[0]  # d̂ ± std over batches
    np.testing.assert_allclose(points_bar.lines[0].get_xdata(), [r.dimension for r in res.rows])
    assert points_bar.has_xerr
    alpha_d = exps.containers[0].lines[0].get_xdata()
    np.testing.assert_allclose(alpha_d, [r.alpha_d for r in res.rows])
    from ttlab.scaling import prediction_band

    band = prediction_band(res.ids(), res.beta)  # the band `scaling predict --from-compare` reports
    labels = exps.get_legend_handles_labels()[1]
    assert f"α_D band over 2 estimators {band.lo['alpha_d']:.3f}–{band.hi['alpha_d']:.3f}" in labels  # lpca: not in it
    assert f"α_N of mle (the paper's) {band.central['alpha_n']:.3f}" in labels


def test_the_figure_draws_on_a_given_axis(points):
    from matplotlib.figure import Figure

    res = compare(np.load(points), "mle,twonn")
    fig = Figure()
    ax = fig.add_subplot(1, 1, 1)
    assert compare_figure(res, ax=ax) is fig and len(fig.axes) == 1
    assert not ax.containers[0].has_xerr  # one batch: no spread to draw
    two = Figure().subplots(1, 2)
    compare_figure(compare(np.load(points), "twonn,lpca"), ax=two[0], ax_exponents=two[1])
    assert "no band without mle" in two[1].get_title() and len(two[1].containers) == 2


@pytest.mark.parametrize("plot, extra, fragment", [
    ("ids.txt", [], "unsupported image format 'txt'"),
    ("ids", [], "unsupported image format '(none)'"),
    ("same.png", ["--out", "same.png"], "plot and out are the same file"),
    ("exists.png", [], "already exists; pass overwrite"),
])
def test_a_bad_plot_is_refused_before_the_points_are_read(run_cli, points, tmp_path, monkeypatch, plot, extra,
                                                          fragment):
    (tmp_path / "exists.png").write_bytes(b"old")

    def no_work(*args, **kwargs):
        raise AssertionError("read the points before checking --plot")

    monkeypatch.setattr(files, "load_points", no_work)
    extra = [tmp_path / e if e.endswith(".png") else e for e in extra]
    res = run_cli("id", "compare", points, "--methods", "mle", "--plot", tmp_path / plot, *extra)
    err = " ".join(res.err.split())
    assert res.code == 2 and fragment in err and "--plot" in err, res.err
    assert (tmp_path / "exists.png").read_bytes() == b"old"


def test_compare_file_takes_the_plot_path(points, tmp_path):
    plot = tmp_path / "f.png"
    res, payload, _ = files.compare_file(points, partial(compare, methods="mle"), plot=plot)
    assert payload["plot"] == str(plot) and plot.read_bytes().startswith(PNG_SIGNATURE)
    assert res.rows[0].method == "mle"
