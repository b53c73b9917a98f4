"""`ttlab ntp …` command contract: exit codes, JSON keys, files written, errors."""

from __future__ import annotations

import csv
import json

import pytest

from ttlab.ntp.config import METRIC_COLUMNS
from ttlab.ntp.examples import SVOP_SEQUENCES


@pytest.fixture
def svop_file(tmp_path):
    p = tmp_path / "svop.txt"
    p.write_text("\n".join(SVOP_SEQUENCES) + "\n")
    return p


def test_check_valid_json(run_cli, svop_file):
    res = run_cli("ntp", "check", svop_file, "--json")
    assert res.code == 0, res.err
    out = res.json()
    assert out["valid"] is True and out["violations"] == []
    assert out["vocab"] == ["S", "V", "O", "P"]
    assert out["collocation"] == {"S": "V", "V": "O", "O": "P", "P": "S"}
    assert out["orders"]["P"] == {"optimal": ["O"], "non_optimal": ["P"], "non_comparable": ["S", "V"], "confused": []}


def test_check_invalid_exits_1_and_lists_violations(run_cli, tmp_path):
    p = tmp_path / "bad.txt"
    p.write_text("a => A\nb => B\nq => Q\nA => a\nB => b\nQ => q\na b q => A\na b q => B\n")
    res = run_cli("ntp", "check", p, "--json")
    assert res.code == 1
    out = res.json()
    assert out["valid"] is False
    assert {v["kind"] for v in out["violations"]} == {"confused_token", "cyclic_order"}
    for v in out["violations"]:
        assert set(v) == {"kind", "query", "tokens", "lines", "n_lines", "message"} and v["lines"] == [7, 8]
    human = run_cli("ntp", "check", p)
    assert human.code == 1 and "cyclic_order" in human.out


@pytest.mark.parametrize("content, fragment", [
    (b"", "no training sentences"), (b"S\n", "at least two tokens"), (b"S \xff V\n", "not valid UTF-8"),
])
def test_check_malformed_file_exits_2_with_message(run_cli, tmp_path, content, fragment):
    p = tmp_path / "f.txt"
    p.write_bytes(content)
    res = run_cli("ntp", "check", p)
    assert res.code == 2
    assert fragment in res.err and "Traceback" not in res.err


def test_check_missing_file(run_cli, tmp_path):
    res = run_cli("ntp", "check", tmp_path / "nope.txt")
    assert res.code == 2 and "does not exist" in res.err


def test_run_writes_metrics_summary_and_figure(run_cli, tmp_path):
    out = tmp_path / "run"
    res = run_cli("ntp", "run", "--vocab", "8", "--sentences", "30", "--stage1-steps", "60",
                  "--stage2-steps", "80", "--seed", "3", "--out", out, "--json")
    assert res.code == 0, res.err
    summary = res.json()
    with open(out / "metrics.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert tuple(rows[0]) == METRIC_COLUMNS
    assert [r["stage"] for r in rows].count("1") == 61 and [r["stage"] for r in rows].count("2") == 81
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk["wov_star_norm"] == pytest.approx(summary["wov_star_norm"])
    for key in ("config", "versions", "wov_star_norm", "wkq_star_norm", "stages"):
        assert key in on_disk
    assert on_disk["config"]["eta0"] == pytest.approx(0.2 / 8**0.5)
    assert on_disk["config"]["eta"] == pytest.approx(0.05 / 8**0.5)
    assert (out / "dynamics.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "stage_2" in on_disk["stages"] and "direction_fit" in on_disk["stages"]["stage_2"]


def test_run_is_deterministic(run_cli, tmp_path):
    args = ["ntp", "run", "--vocab", "6", "--sentences", "20", "--stage1-steps", "20", "--stage2-steps", "20",
            "--init", "random", "--seed", "5", "--json"]
    a = run_cli(*args, "--out", tmp_path / "a").json()
    b = run_cli(*args, "--out", tmp_path / "b").json()
    assert (tmp_path / "a" / "metrics.csv").read_text() == (tmp_path / "b" / "metrics.csv").read_text()
    assert a["stages"] == b["stages"]


@pytest.mark.parametrize("opts, fragment", [
    (["--schedule", "weird"], "--schedule"), (["--optimizer", "sgd"], "--optimizer"), (["--init", "ones"], "--init"),
    (["--eta", "-1"], "--eta"), (["--stage1-steps", "-3"], "stage1-steps"), (["--vocab", "1"], "--vocab"),
    (["--embeddings", "onehot", "--dim", "4"], "one-hot"), (["--dtype", "int8"], "dtype"),
])
def test_run_rejects_bad_options(run_cli, tmp_path, opts, fragment):
    res = run_cli("ntp", "run", "--out", tmp_path / "x", "--vocab", "6", "--sentences", "10", *opts)
    assert res.code == 2, res.out
    assert fragment in res.err and "Traceback" not in res.err


def test_run_refuses_invalid_dataset(run_cli, tmp_path):
    p = tmp_path / "bad.txt"
    p.write_text("a => b\nb => a\na c b => a\n")
    res = run_cli("ntp", "run", "--data", p, "--out", tmp_path / "x")
    assert res.code == 2 and "missing_collocation" not in res.err and "no collocation" in res.err


def test_generate_then_check(run_cli, tmp_path):
    p = tmp_path / "gen.txt"
    assert run_cli("ntp", "generate", "--vocab", "12", "--sentences", "40", "--out", p).code == 0
    assert run_cli("ntp", "check", p, "--json").json()["valid"] is True


def test_generalize_json(run_cli, svop_file, tmp_path):
    res = run_cli("ntp", "generalize", "--data", svop_file, "--out", tmp_path / "g", "--json")
    assert res.code == 0, res.err
    out = res.json()
    cases = {c["sentence"]: c for c in out["cases"]}
    assert cases["S P"]["theory_prediction"] == "V" and cases["S P"]["model_prediction"] == "V"
    assert cases["O S P"]["theory_prediction"] == "P" and cases["O S P"]["model_prediction"] == "P"
    assert out["agreement"] == 1.0
    assert (tmp_path / "g" / "generalization.json").exists()
    kq = out["wkq_star"]  # SVOP: 5 constraints, the optimum is tight on some (margin exactly 1), none violated
    assert kq["n_constraints"] == 5 and kq["max_violation"] == 0.0 and abs(kq["min_margin"] - 1) < 1e-12
    text = run_cli("ntp", "generalize", "--data", svop_file, "--out", tmp_path / "g2")
    assert text.code == 0 and "W*_kq certificate: min margin" in text.out and "over 5 constraints" in text.out


def test_example_svop(run_cli):
    res = run_cli("ntp", "example", "svop")
    assert res.code == 0, res.err
    assert "SP → model V" in res.out and "OSP → model P" in res.out
    assert run_cli("ntp", "example", "nope").code == 2


def test_run_prints_the_wkq_certificate(run_cli, tmp_path):
    res = run_cli("ntp", "run", "--vocab", "10", "--sentences", "40", "--stage1-steps", "5", "--stage2-steps", "5",
                  "--out", tmp_path / "r", "--quiet")
    assert res.code == 0, res.err
    line = next(x for x in res.out.splitlines() if "W*_kq certificate" in x)
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    kq = summary["wkq_star"]
    assert f"min margin {kq['min_margin']:.12g}" in line and f"{kq['n_constraints']:,} constraints" in line
    assert kq["max_violation"] == 0.0 and "max violation 0" in line


def test_check_json_lists_a_bounded_number_of_violations_and_counts_them_all(tmp_path, run_cli, monkeypatch):
    """ntp check --json wrote every line of every violation (236 MB for a 760 KB file): it lists at most
    MAX_VIOLATIONS_LISTED violations of at most MAX_LINES_LISTED lines each and counts them all (issue 33)."""
    from ttlab.ntp import structure

    monkeypatch.setattr(structure, "MAX_VIOLATIONS_LISTED", 3)
    monkeypatch.setattr(structure, "MAX_LINES_LISTED", 2)
    f = tmp_path / "bad.txt"
    f.write_text("".join(f"t{i} x{i % 2} => y\n" for i in range(12)), encoding="utf-8")  # no collocation lines
    r = run_cli("ntp", "check", f, "--json")
    out = r.json()
    assert r.code == 1 and len(out["violations"]) == 3 and out["n_violations"] > 3
    assert sum(out["violations_by_kind"].values()) == out["n_violations"]
    assert all(len(v["lines"]) <= 2 and v["n_lines"] >= len(v["lines"]) for v in out["violations"])
    assert any(v["n_lines"] > 2 for v in out["violations"])
