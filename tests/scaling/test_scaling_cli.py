"""`ttlab scaling …` commands: JSON contracts, readable output, and bad input (exit code 2)."""

from __future__ import annotations

import json

import numpy as np
import pytest

NANOGPT_CSV = "params,val_loss\n124e6,3.12\n350e6,2.84\n774e6,2.67\n1558e6,2.54\n"


@pytest.fixture
def nano_csv(tmp_path):
    p = tmp_path / "gpt2.csv"
    p.write_text(NANOGPT_CSV)
    return p


def test_predict_json(run_cli):
    res = run_cli("scaling", "predict", "--id", "8", "--json")
    assert res.code == 0, res.err
    out = res.json()
    assert out["id"] == 8 and out["beta"] == 1
    assert out["alpha_d"] == pytest.approx(2 / 10)
    assert out["alpha_n"] == pytest.approx(2 / 8)
    res = run_cli("scaling", "predict", "--id", "2", "--beta", "0.5", "--json")
    assert res.json()["alpha_d"] == pytest.approx(1 / 3) and res.json()["alpha_n"] == pytest.approx(0.5)


def test_predict_table(run_cli):
    res = run_cli("scaling", "predict", "--id", "8")
    assert res.code == 0
    assert "alpha_d" in res.out and "0.25" in res.out and "0.2" in res.out
    with pytest.raises(json.JSONDecodeError):
        json.loads(res.out)


@pytest.mark.parametrize(
    "args, match",
    [
        (["--id", "0"], "d must be > 0"),
        (["--id", "-3"], "d must be > 0"),
        (["--id", "8", "--beta", "2"], "0 < beta <= 1"),
        (["--id", "nan"], "finite"),
    ],
)
def test_predict_bad_input(run_cli, args, match):
    res = run_cli("scaling", "predict", *args, "--json")
    assert res.code == 2
    assert match in res.err and res.out == ""


def test_convert(run_cli):
    out = run_cli("scaling", "convert", "--alpha-n", "0.076", "--json").json()
    assert out["alpha_n"] == 0.076
    assert out["alpha_d"] == pytest.approx(76 / 1076)
    assert out["implied_id"] == pytest.approx(2000 / 76)
    out = run_cli("scaling", "convert", "--alpha-d", "0.28", "--json").json()
    assert out["alpha_d"] == 0.28
    assert out["alpha_n"] == pytest.approx(7 / 18)
    assert out["implied_id"] == pytest.approx(36 / 7)
    out = run_cli("scaling", "convert", "--alpha-d", "0.28", "--beta", "0.5", "--json").json()
    assert out["implied_id"] == pytest.approx(18 / 7)
    res = run_cli("scaling", "convert", "--alpha-n", "0.34")
    assert res.code == 0 and "implied_id" in res.out and "5.88" in res.out


@pytest.mark.parametrize(
    "args, match",
    [
        ([], "exactly one of alpha_n or alpha_d (command-line options: --alpha-n, --alpha-d)"),
        (["--alpha-n", "0.1", "--alpha-d", "0.1"], "exactly one of alpha_n or alpha_d (command-line options: --alpha-n, "
         "--alpha-d)"),
        (["--alpha-d", "1.5"], "0 < alpha_D < 1"),
        (["--alpha-n", "-0.1"], "alpha_N must be > 0"),
    ],
)
def test_convert_bad_input(run_cli, args, match):
    res = run_cli("scaling", "convert", *args, "--json")
    assert res.code == 2
    assert match in res.err


def test_table1(run_cli):
    res = run_cli("scaling", "table1", "--json")
    assert res.code == 0
    rows = {r["short_name"]: r for r in res.json()["rows"]}
    assert set(rows) == {"Kaplan 2020", "Chinchilla 2022"}
    k, c = rows["Kaplan 2020"], rows["Chinchilla 2022"]
    assert k["alpha_d_predicted_from_alpha_n"] == pytest.approx(0.076 / 1.076)
    assert k["alpha_n_predicted_from_alpha_d"] == pytest.approx(0.095 / 0.905)
    assert k["id_from_alpha_n"] == pytest.approx(2 / 0.076)
    assert k["id_from_alpha_n_sharma_kaplan"] == pytest.approx(4 / 0.076)
    assert c["alpha_d_predicted_from_alpha_n"] == pytest.approx(0.34 / 1.34)
    assert c["alpha_n_predicted_from_alpha_d"] == pytest.approx(0.28 / 0.72)
    assert c["id_from_alpha_d"] == pytest.approx(2 * 0.72 / 0.28)
    text = run_cli("scaling", "table1")
    assert text.code == 0
    for s in ("0.0706", "0.1050", "0.2537", "0.3889", "26.32", "19.05", "52.63", "5.88", "5.14", "11.76"):
        assert s in text.out, s


def test_fit_power_json(run_cli, nano_csv, tmp_path):
    plot = tmp_path / "fig" / "gpt2.png"
    out_file = tmp_path / "fit.json"
    res = run_cli(
        "scaling", "fit", nano_csv, "--x", "params", "--y", "val_loss", "--bootstrap", "500",
        "--seed", "1", "--plot", plot, "--out", out_file, "--id", "20", "--kind", "model", "--json",
    )
    assert res.code == 0, res.err
    out = res.json()
    assert out["form"] == "power" and out["n_points"] == 4
    assert out["params"]["alpha"] == pytest.approx(0.0814, abs=5e-4)
    lo, hi = out["ci"]["alpha"]
    assert lo < out["params"]["alpha"] < hi
    assert set(out["ci"]) == {"A", "alpha"}
    assert out["goodness_of_fit"]["r2_log"] > 0.99 and out["goodness_of_fit"]["rmse"] > 0
    assert out["config"]["csv"] == str(nano_csv) and out["config"]["seed"] == 1
    assert out["config"]["bootstrap"] == 500 and out["bootstrap"]["n_used"] == 500
    assert "numpy" in out["versions"] and "scipy" in out["versions"]
    assert out["prediction"]["alpha_predicted"] == pytest.approx(0.1)
    assert plot.read_bytes()[:4] == b"\x89PNG"
    written = json.loads(out_file.read_text())
    samples = written.pop("bootstrap_samples")  # the file also keeps the replicates (for scaling frontier) …
    points = written.pop("points")  # … and the runs fitted
    assert written == out and samples["columns"] == ["A", "alpha"] and len(samples["rows"]) == 500
    assert points == {"columns": {"x": "params", "y": "val_loss", "x2": None}, "x": [124e6, 350e6, 774e6, 1558e6],
                      "y": [3.12, 2.84, 2.67, 2.54], "weights": None}
    # same seed, same numbers
    again = run_cli("scaling", "fit", nano_csv, "--x", "params", "--y", "val_loss", "--bootstrap", "500",
                    "--seed", "1", "--json").json()
    assert again["ci"] == out["ci"] and again["params"] == out["params"]


def test_fit_text_output(run_cli, nano_csv):
    res = run_cli("scaling", "fit", nano_csv, "--x", "params", "--y", "val_loss", "--bootstrap", "50")
    assert res.code == 0
    assert "alpha" in res.out and "0.0813" in res.out and "95% bootstrap CI" in res.out


def test_fit_offset_and_chinchilla(run_cli, tmp_path):
    x = np.geomspace(1e4, 1e8, 8)
    p = tmp_path / "offset.csv"
    p.write_text("tokens,loss\n" + "".join(f"{a},{1.8 + 50 * a ** -0.3}\n" for a in x))
    out = run_cli("scaling", "fit", p, "--x", "tokens", "--y", "loss", "--form", "offset",
                  "--bootstrap", "20", "--json").json()
    assert out["form"] == "offset" and set(out["params"]) == {"E", "A", "alpha"}
    assert out["params"]["alpha"] == pytest.approx(0.3, abs=1e-4)
    assert set(out["ci"]) == {"E", "A", "alpha"}

    rng = np.random.default_rng(0)
    n, d = np.meshgrid(np.geomspace(1e7, 1e10, 5), np.geomspace(1e9, 1e12, 5))
    n, d = n.ravel(), d.ravel()
    loss = (1.69 + 406.4 / n**0.34 + 410.7 / d**0.28) * np.exp(rng.normal(0, 0.002, n.size))
    p = tmp_path / "chin.csv"
    p.write_text("N,D,L\n" + "".join(f"{a},{b},{c}\n" for a, b, c in zip(n, d, loss)))
    res = run_cli("scaling", "fit", p, "--x", "N", "--x2", "D", "--y", "L", "--form", "chinchilla",
                  "--bootstrap", "8", "--n-starts", "2", "--plot", tmp_path / "chin.svg", "--json")
    assert res.code == 0, res.err
    out = res.json()
    assert set(out["params"]) == {"E", "A", "alpha", "B", "beta"}
    assert out["params"]["alpha"] == pytest.approx(0.34, abs=0.03)
    assert out["params"]["beta"] == pytest.approx(0.28, abs=0.03)
    assert set(out["ci"]) == set(out["params"])
    assert out["fit_config"]["huber_delta"] == 1e-3 and out["fit_config"]["reduction"] == "sum"
    assert out["fit_config"]["n_starts"] == 2 and out["config"]["n_starts"] == 2
    assert (tmp_path / "chin.svg").read_text().lstrip().startswith("<?xml")


@pytest.fixture
def bad_csvs(tmp_path):
    files = {
        "nonnum": "params,val_loss\n1e8,3.1\n2e8,oops\n4e8,2.9\n",
        "nonpos": "params,val_loss\n1e8,3.1\n0,3.0\n4e8,-2.9\n",
        "few": "params,val_loss\n1e8,3.1\n2e8,3.0\n",
    }
    out = {}
    for k, v in files.items():
        out[k] = tmp_path / f"{k}.csv"
        out[k].write_text(v)
    return out


@pytest.mark.parametrize(
    "case, extra, match",
    [
        ("missing", [], "CSV file not found"),
        ("nano", ["--y", "loss"], "'loss' not found; available columns: 'params', 'val_loss'"),
        ("nonnum", [], "non-numeric or non-finite values at line 3 ('oops')"),
        ("nonpos", [], "must be > 0 for a log-log fit; non-positive values at line 3 (0)"),
        ("few", [], "the power form needs at least 3 data rows, the file has 2"),
        ("few", ["--form", "offset"], "the offset form needs at least 4 data rows, the file has 2"),
        ("nano", ["--form", "chinchilla"], "needs x2 (the column of D, the data size) besides x (N) and y (loss) "
         "(command-line options: --form, --x2)"),
        ("nano", ["--x2", "params"], "x2 is only used by form chinchilla, not by form power (command-line options: "
         "--x2, --form)"),
        ("nano", ["--form", "cubic"], "unknown form 'cubic'; choose one of power, offset, chinchilla (command-line "
         "option: --form)"),
        ("nano", ["--plot", "out.xyz"], "unsupported image format 'xyz'"),
        ("nano", ["--bootstrap", "-5"], "bootstrap must be a non-negative integer"),
        ("nano", ["--kind", "compute"], "kind must be 'data' or 'model', got 'compute' (command-line option: --kind)"),
        ("nano", ["--id", "-1"], "d must be > 0"),
        ("nano", ["--ci-level", "95"], "ci_level must be in (0, 1)"),
        ("nano", ["--n-starts", "3"], "n_starts is only used by the offset and chinchilla forms (power is "
         "closed-form) (command-line options: --n-starts, --form)"),
        ("nano", ["--bootstrap-method", "jackknife"], "bootstrap_method must be one of"),
    ],
)
def test_fit_bad_input(run_cli, nano_csv, bad_csvs, tmp_path, case, extra, match):
    path = {"missing": tmp_path / "nope.csv", "nano": nano_csv}.get(case) or bad_csvs[case]
    args = ["scaling", "fit", path, "--x", "params", "--y", "val_loss", "--bootstrap", "10"]
    # later options override earlier ones (e.g. --y, --bootstrap)
    res = run_cli(*args, *extra, "--json")
    assert res.code == 2, (res.out, res.err)
    assert match in " ".join(res.err.split()), res.err
    assert res.out == ""


def test_fit_offset_needs_three_distinct_sizes(run_cli, tmp_path):
    p = tmp_path / "dup.csv"
    p.write_text("x,y\n10,3\n10,3.1\n100,2\n100,2.1\n")
    res = run_cli("scaling", "fit", p, "--x", "x", "--y", "y", "--form", "offset", "--json")
    assert res.code == 2 and "at least 3 distinct x values" in res.err


@pytest.mark.parametrize("form", ["power", "offset"])
@pytest.mark.parametrize("as_json", [False, True])
def test_fit_constant_losses_are_an_error_not_nulls(run_cli, tmp_path, form, as_json):
    """A flat loss column has no exponent: exit 2 with one line, never a table + traceback or nulls."""
    p = tmp_path / "flat.csv"
    p.write_text("x,y\n1,2\n10,2\n100,2\n1000,2\n")
    res = run_cli("scaling", "fit", p, "--x", "x", "--y", "y", "--form", form, "--bootstrap", "20",
                  *(["--json"] if as_json else []))
    assert res.code == 2, res.err
    assert "y is constant" in res.err and "not identifiable" in res.err
    assert res.out == "" and "Traceback" not in res.err


def test_one_comma_list_parser():
    from ttlab.cli.common import parse_list
    from ttlab.errors import TTLabInputError

    assert parse_list("0, 64,256", "--x") == (0, 64, 256)
    assert parse_list("1e5,2000", "--sizes", int) == (100_000, 2000)  # integral floats are integers
    assert parse_list("1e-3,3e-3", "--lrs", float) == (1e-3, 3e-3)
    assert parse_list("softmax, relu", "--arch", str) == ("softmax", "relu")
    assert parse_list(None, "--x") is None and parse_list("", "--x") is None
    for text, item, msg in [("1.5", int, "--x must be comma-separated integers"), ("a", float, "comma-separated numbers"),
                            (" , ", int, "at least one value")]:
        with pytest.raises(TTLabInputError, match=msg):
            parse_list(text, "--x", item)


def test_manifold_help_quotes_the_presets_it_reads(run_cli):
    """The `[full; quick: q]` defaults in `scaling manifold --help` are read from the two presets, not restated."""
    from ttlab.scaling.manifold_config import ManifoldSweepConfig, quick_config

    full, quick = ManifoldSweepConfig(), quick_config()
    r = run_cli("scaling", "manifold", "--help")
    text = " ".join(r.out.replace("│", " ").split())
    assert f"[{','.join(map(str, full.ds))}; quick: {','.join(map(str, quick.ds))}]" in text
    assert f"[{full.train.max_steps}; quick: {quick.train.max_steps}]" in text
    assert f"[{full.n_test}; quick: {quick.n_test}]" in text and "quick: none]" in text  # no model sweep in quick
    assert f"{quick.points} sizes {quick.n_min}..{quick.n_max}" in text
