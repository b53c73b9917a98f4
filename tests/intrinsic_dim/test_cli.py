"""`ttlab id estimate` and `ttlab id sample-manifold`."""

from __future__ import annotations

import numpy as np
import pytest

from ttlab.intrinsic_dim import MLE


def test_manifold_then_estimate_json(run_cli, tmp_path):
    out = tmp_path / "s.npy"
    res = run_cli("id", "sample-manifold", "sphere", "--d", "3", "--ambient", "20", "--n", "1500", "--seed", "2", "--out", out, "--json")
    assert res.code == 0, res.err
    X = np.load(out)
    assert X.shape == (1500, 20) and res.json()["d"] == 3
    res = run_cli("id", "estimate", out, "--json")
    assert res.code == 0, res.err
    j = res.json()
    for key in ("method", "dimension", "n_points", "n_duplicates_removed", "batches", "config", "versions"):
        assert key in j
    assert j["method"] == "mle" and j["n_points"] == 1500 and j["batches"] is None
    assert j["dimension"] == MLE(k=20).fit(X).dimension_
    assert j["config"]["k"] == 20 and j["config"]["average"] == "mean"


def test_estimate_options_and_batches(run_cli, tmp_path):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2100, 4)) @ rng.standard_normal((4, 30))
    X = np.vstack([X, X[:40]])  # duplicates
    path = tmp_path / "x.npz"
    np.savez(path, emb=X)
    res = run_cli(
        "id", "estimate", path, "--key", "emb", "--k", "10", "--average", "harmonic", "--metric", "cosine",
        "--batch-size", "500", "--seed", "3", "--json", "--out", tmp_path / "r.json",
    )
    assert res.code == 0, res.err
    j = res.json()
    assert j["n_duplicates_removed"] == 40 and "duplicate" in res.err
    assert len(j["batches"]) == 4 and j["config"]["metric"] == "cosine"
    assert (tmp_path / "r.json").exists()
    for method in ("twonn", "gride"):
        r = run_cli("id", "estimate", path, "--key", "emb", "--method", method, "--json")
        assert r.code == 0 and r.json()["method"] == method
    human = run_cli("id", "estimate", path, "--key", "emb", "--paper")
    assert human.code == 0 and "mle ID =" in human.out


def test_bad_input_exits_2_with_message(run_cli, tmp_path):
    X = np.random.default_rng(0).standard_normal((30, 3))
    X[4, 1] = np.nan
    np.save(tmp_path / "nan.npy", X)
    np.save(tmp_path / "small.npy", X[5:15])
    np.save(tmp_path / "flat.npy", X[:, 0])
    (tmp_path / "empty.csv").write_text("")
    for args, msg in [
        (("nan.npy",), "rows"),
        (("small.npy",), "at least 21 distinct points; got 10"),
        (("flat.npy",), "1-D"),
        (("empty.csv",), "empty"),
        (("small.npy", "--method", "pca"), "unknown method"),
        (("small.npy", "--average", "mode"), "unknown average"),
    ]:
        res = run_cli("id", "estimate", tmp_path / args[0], *args[1:])
        assert res.code == 2, (args, res.out, res.err)
        assert msg in res.err, (args, res.err)
    res = run_cli("id", "sample-manifold", "sphere", "--d", "5", "--ambient", "3", "--n", "10", "--out", tmp_path / "m.npy")
    assert res.code == 2 and "too small" in res.err
    res = run_cli("id", "sample-manifold", "sphere", "--d", "2", "--ambient", "3", "--n", "10", "--out", tmp_path / "m.csv")
    assert res.code == 2 and ".npy" in res.err


def test_id_help_names_the_three_metrics(run_cli):
    res = run_cli("id", "--help")
    assert res.code == 0
    text = " ".join(res.out.split())
    for phrase in ("euclidean (the default; the paper's text)", "chord = sqrt(2 (1 - cos))",
                   "cosine = 1 - cos", "exactly half"):
        assert phrase in text, phrase


def test_cosine_is_half_of_chord_on_the_cli(run_cli, tmp_path):
    X = np.random.default_rng(1).standard_normal((600, 6))
    path = tmp_path / "x.npy"
    np.save(path, X)
    cos = run_cli("id", "estimate", path, "--metric", "cosine", "--json").json()["dimension"]
    chord = run_cli("id", "estimate", path, "--metric", "chord", "--json").json()["dimension"]
    assert cos == pytest.approx(chord / 2, rel=1e-9)
    bad = run_cli("id", "compare", path, "--methods", "lpca", "--metric", "cosine")
    assert bad.code == 2 and "metric='chord'" in bad.err


def test_no_two_commands_share_a_name():
    """Every command of every group has a name of its own (`id manifold` was renamed `id sample-manifold`)."""
    import typer.main

    from ttlab.cli import app

    names: dict[str, list[str]] = {}
    root = typer.main.get_group(app)
    for group_name, group in root.commands.items():
        for name in getattr(group, "commands", {None: None}):
            names.setdefault(name or group_name, []).append(group_name)
    assert {n: g for n, g in names.items() if len(g) > 1} == {}
    assert "sample-manifold" in root.commands["id"].commands and "manifold" not in root.commands["id"].commands
