"""CSV reading with precise errors, and the log-log plot helper."""

from __future__ import annotations

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.provenance import atomic_savefig
from ttlab.scaling import fit_chinchilla, fit_offset_power_law, fit_power_law, plot_fit, read_columns_csv
from ttlab.scaling.plot import predicted_exponent


def write(tmp_path, text, name="data.csv"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_read_columns(tmp_path):
    p = write(tmp_path, "\ufeffN, loss ,note\n1e6,3.5,a\n\n2e6,3.2,b\n")
    cols = read_columns_csv(p, ["N", "loss"])
    np.testing.assert_array_equal(cols["N"], [1e6, 2e6])
    np.testing.assert_array_equal(cols["loss"], [3.5, 3.2])


@pytest.mark.parametrize(
    "text, columns, match",
    [
        ("x,y\n1,2\n", ["x", "z"], r"column\(s\) 'z' not found; available columns: 'x', 'y'"),
        ("x,y\n1,2\n2,abc\n3,\n", ["x", "y"], r"column 'y' has non-numeric .* line 3 \('abc'\), line 4 \(empty\)"),
        ("x,y\n1,2\n2,nan\n", ["x", "y"], r"non-finite values at line 3"),
        ("x,y\n1,2\n0,3\n-4,1\n", ["x", "y"], r"column 'x' must be > 0 .* line 3 \(0\), line 4 \(-4\)"),
        ("", ["x"], r"is empty"),
        ("x,y\n", ["x"], r"no data rows"),
        ("x,y\n1\n", ["x", "y"], r"column 'y' has non-numeric .* line 2 \(empty\)"),
    ],
)
def test_read_columns_bad_input(tmp_path, text, columns, match):
    with pytest.raises(TTLabInputError, match=match):
        read_columns_csv(write(tmp_path, text), columns)


def test_read_columns_missing_file(tmp_path):
    with pytest.raises(TTLabInputError, match="CSV file not found"):
        read_columns_csv(tmp_path / "nope.csv", ["x"])
    with pytest.raises(TTLabInputError, match="not a file"):
        read_columns_csv(tmp_path, ["x"])


def test_read_columns_not_text(tmp_path):
    p = tmp_path / "bin.csv"
    p.write_bytes(b"\xff\xfe\x00\x81garbage")
    with pytest.raises(TTLabInputError, match="not a UTF-8"):
        read_columns_csv(p, ["x"])


def test_predicted_exponent():
    assert predicted_exponent(8, 1.0, "data") == pytest.approx(0.2)
    assert predicted_exponent(8, 1.0, "model") == pytest.approx(0.25)
    with pytest.raises(TTLabInputError, match="kind"):
        predicted_exponent(8, 1.0, "compute")


def _line(ax, label_start):
    (line,) = [ln for ln in ax.get_lines() if str(ln.get_label()).startswith(label_start)]
    return np.asarray(line.get_xdata()), np.asarray(line.get_ydata())


def test_plot_power_fit_with_prediction(tmp_path):
    from matplotlib.figure import Figure

    x = np.geomspace(1e3, 1e6, 8)
    y = 20 * x**-0.3
    fit = fit_power_law(x, y, bootstrap=0)
    fig = plot_fit(fit, x, y, intrinsic_dim=8.0, kind="data", xlabel="tokens")
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlabel() == "tokens"
    # fitted line has slope −0.3, predicted line has slope −α_D(8) = −0.2, in log-log
    fx, fy = _line(ax, "fit")
    px, py = _line(ax, "predicted")
    assert np.polyfit(np.log(fx), np.log(fy), 1)[0] == pytest.approx(-0.3, abs=1e-9)
    assert np.polyfit(np.log(px), np.log(py), 1)[0] == pytest.approx(-0.2, abs=1e-9)
    # anchored on the fit at the geometric mean of x
    x0 = np.exp(np.mean(np.log(x)))
    assert np.interp(np.log(x0), np.log(px), np.log(py)) == pytest.approx(np.log(20 * x0**-0.3), abs=1e-3)
    assert len(ax.collections) == 1 and ax.collections[0].get_offsets().shape == (8, 2)
    out = tmp_path / "p.png"
    atomic_savefig(fig, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_offset_prediction_bends_to_floor():
    x = np.geomspace(1e4, 1e8, 10)
    y = 1.8 + 50 * x**-0.3
    fit = fit_offset_power_law(x, y, bootstrap=0)
    fig = plot_fit(fit, x, y, intrinsic_dim=2.0, kind="model")  # α_N = 1
    px, py = _line(fig.axes[0], "predicted")
    e = fit.params["E"]
    assert np.polyfit(np.log(px), np.log(py - e), 1)[0] == pytest.approx(-1.0, abs=1e-6)


def test_plot_chinchilla_and_errors():
    rng = np.random.default_rng(0)
    n, d = np.meshgrid(np.geomspace(1e7, 1e9, 4), np.geomspace(1e9, 1e11, 3))
    n, d = n.ravel(), d.ravel()
    loss = (1.69 + 406.4 / n**0.34 + 410.7 / d**0.28) * np.exp(rng.normal(0, 0.002, n.size))
    fit = fit_chinchilla(n, d, loss, bootstrap=0, n_starts=1)
    fig = plot_fit(fit, n, loss, x2=d)
    assert len(fig.axes[0].get_lines()) == 3  # one fitted curve per distinct D
    with pytest.raises(TTLabInputError, match="needs x2"):
        plot_fit(fit, n, loss)
    with pytest.raises(TTLabInputError, match="power and offset forms"):
        plot_fit(fit, n, loss, x2=d, intrinsic_dim=5.0)
    pfit = fit_power_law([1, 2, 4], [3, 2, 1.5], bootstrap=0)
    with pytest.raises(TTLabInputError, match="> 0"):
        plot_fit(pfit, [1, 2, 4], [3, 0, 1.5])
    with pytest.raises(TTLabInputError, match="equal length"):
        plot_fit(pfit, [1, 2, 4], [3, 1.5])


def test_library_code_does_not_print(capsys):
    x = np.geomspace(1e3, 1e6, 6)
    fit = fit_power_law(x, 3 * x**-0.2, bootstrap=50)
    fit_offset_power_law(x, 1 + 3 * x**-0.2, bootstrap=5)
    plot_fit(fit, x, 3 * x**-0.2, intrinsic_dim=4.0)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_the_sweep_figure_frames_the_measured_losses_not_the_prediction(tmp_path, monkeypatch):
    """The data-sweep figure's prediction line squeezed the measured points into the bottom fifth (issue 34): the y
    axis now spans the measured losses with a margin, and a far-off prediction line is clipped."""
    from pathlib import Path

    import numpy as np

    import ttlab.scaling.figures as figures

    tokens = np.geomspace(1e4, 3e5, 6)
    loss = 8.0 * tokens ** -0.1
    res = {"kind": "data_sweep", "intrinsic_dim": 1.3, "alpha_pred": 0.6,  # far steeper than the fit: its line leaves
           "alpha_hat_ci": [0.09, 0.11], "config": {"loss": "test_loss", "data": {"corpus": "builtin:sotu"}},
           "fits": {"power": {"params": {"A": 8.0, "alpha": 0.1}}},  # the measured range
           "points": [{"train_tokens": t, "loss": v, "loss_per_seed": [v * 0.99, v * 1.01]} for t, v in zip(tokens, loss)]}
    shown = {}
    monkeypatch.setattr(figures, "_save", lambda fig, path: shown.setdefault("fig", fig) and Path(path))
    figures.plot_lm_scaling(res, tmp_path / "f.png")
    ax = shown["fig"].axes[0]
    lo, hi = np.log10(ax.get_ylim())
    ys = np.log10([v for p in res["points"] for v in (p["loss"], *p["loss_per_seed"])])
    assert lo < ys.min() and ys.max() < hi
    assert (ys.max() - ys.min()) / (hi - lo) == pytest.approx(1 / (1 + 2 * figures.LOG_MARGIN))
    assert figures.measured_ylim([2.0, 2.0]) == pytest.approx((2 / 10 ** 0.02, 2 * 10 ** 0.02))


def test_a_sweep_folder_is_fitted_without_a_hand_made_csv(tmp_path, run_cli):
    """`scaling fit` reads an lm data-sweep's results.json (or its folder): its points are the rows (issue 35 item 5)."""
    import json

    import numpy as np

    tokens = np.geomspace(1e4, 3e5, 6)
    points = [{"train_tokens": int(t), "loss": 8.0 * t ** -0.1, "loss_per_seed": [8.0 * t ** -0.1], "seeds": [0],
               "all_metrics": {"test_loss": 8.1 * t ** -0.1}, "n_params": 1000} for t in tokens]
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    (sweep / "results.json").write_text(json.dumps({"kind": "data_sweep", "points": points}))
    for source in (sweep, sweep / "results.json"):
        r = run_cli("scaling", "fit", source, "--x", "train_tokens", "--y", "test_loss", "--bootstrap", "0", "--json")
        assert r.code == 0, r.err
        out = json.loads(r.out)
        assert out["params"]["alpha"] == pytest.approx(0.1, rel=1e-4) and out["n_points"] == 6
    r = run_cli("scaling", "fit", sweep, "--x", "tokens", "--y", "loss")
    assert r.code == 2 and "no numeric field 'tokens'" in r.err and "train_tokens" in r.err
    (tmp_path / "empty").mkdir()
    r = run_cli("scaling", "fit", tmp_path / "empty", "--x", "train_tokens", "--y", "loss")
    assert r.code == 2 and "no sweep result here" in r.err


def test_a_training_runs_learning_curve_is_fitted_from_its_folder(tmp_path, run_cli):
    """A run folder (its metrics.csv) is a learning curve to fit: the evaluation at iteration 0 (0 tokens, no training
    loss yet) is left out, as documented (issue 35 item 5)."""
    import json

    run = tmp_path / "run"
    run.mkdir()
    rows = [(0, 0, "nan", 7.6)] + [(i, i * 1000, 5.0 * (i * 1000) ** -0.05, 5.1 * (i * 1000) ** -0.05)
                                    for i in (10, 20, 40, 80, 160)]
    (run / "metrics.csv").write_text("iter,tokens_seen,train_loss,val_loss,lr,elapsed_s\n" + "".join(
        f"{i},{t},{a},{b},0.001,1.0\n" for i, t, a, b in rows))
    r = run_cli("scaling", "fit", run, "--x", "tokens_seen", "--y", "val_loss", "--bootstrap", "0", "--json")
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert out["n_points"] == 5 and out["params"]["alpha"] == pytest.approx(0.05, rel=1e-4)
    r = run_cli("scaling", "fit", run / "metrics.csv", "--x", "tokens", "--y", "val_loss")
    assert r.code == 2 and "no column 'tokens'" in r.err and "tokens_seen" in r.err
