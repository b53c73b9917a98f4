"""docs/scikit_dimension.md: its sentences are computed from the measurements (benchmarks/bench_skdim_notes.py)."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from tests.conftest import benchmark_module


@pytest.fixture(scope="module")
def notes():
    with benchmark_module("bench_skdim_notes.py") as mod:
        yield mod


def _dup(skdim_at_1pct: dict, ttlab_at_1pct: dict) -> dict:
    rows = []
    for f, n_dup in ((0.0, 0), (0.01, 20)):
        for m in ("mle", "twonn", "tle"):
            sk = 5.0 if f == 0.0 else skdim_at_1pct[m]
            tt = 5.1 if f == 0.0 else ttlab_at_1pct[m]
            rows.append({"fraction": f, "n_duplicates": n_dup, "method": m,
                         "skdim": None if sk == "error" else sk, "skdim_error": "ValueError: x" if sk == "error" else None,
                         "ttlab": tt})
    return {"manifold": {"name": "sphere", "d": 5, "ambient": 64, "n": 2000, "noise": 0.01},
            "fractions": [0.0, 0.01], "rows": rows}


def test_duplicate_sentence_names_failures_and_moves(notes) -> None:
    (s,) = notes.duplicate_sentences(_dup({"mle": math.inf, "twonn": "error", "tle": 6.0},
                                          {"mle": 5.1, "twonn": 5.1, "tle": 5.1 * 1.002}))
    assert s.startswith("With 1 % of the points duplicated (20 rows)")
    assert "no finite number for 2 of 3 estimators (mle (inf), twonn (error))" in s
    assert "1 more move by over 1 % (tle 5.00 → 6.00)" in s
    assert "estimates move by at most 0.2 %" in s


def test_duplicate_sentence_when_nothing_breaks(notes) -> None:
    (s,) = notes.duplicate_sentences(_dup({"mle": 5.001, "twonn": 5.0, "tle": 5.0}, {"mle": 5.1, "twonn": 5.1, "tle": 5.1}))
    assert "no finite number for 0 of 3 estimators, and 0 more move" in s and "at most 0 %" in s


def test_cold_and_speed_sentences_follow_the_numbers(notes) -> None:
    cold = {"danco": {"skdim": {"import_s": 3.0, "first_s": 4.5, "second_s": 0.2},
                      "ttlab": {"import_s": 1.0, "first_s": 0.3, "second_s": 0.2}},
            "mle": {"skdim": {"import_s": 3.2, "first_s": 0.3, "second_s": 0.1},
                    "ttlab": {"import_s": 1.2, "first_s": 0.1, "second_s": 0.04}}}
    imp, first, ours = notes.cold_sentences(cold)
    # import + first fit: skdim 7.5 and 3.5 (median 5.5); ttlab 1.3 and 1.3
    assert "scikit-dimension 5.50 s, ttlab 1.30 s" in imp
    assert "over 1 s for 1 of 2 estimators (danco)" in first and "danco's, 4.50 s against 0.20 s" in first
    assert "costs 0.06–0.10 s more than its second" in ours
    cold["mle"]["skdim"]["first_s"] = 1.5  # now both are over 1 s
    assert "over 1 s for 2 of 2 estimators (danco, mle)" in notes.cold_sentences(cold)[1]
    cmp = {"n": 20000, "D": 768, "methods": ["mle", "danco"], "repeats": 2, "ratio_min": 4.0, "ratio_median": 3.9,
           "ours_s": {"min": 50.0}, "skdim_s": {"min": 200.0}, "max_rel_difference": 1e-3,
           "per_method_ours_s": {"mle": 0.1, "danco": 40.0, "(shared kNN)": 9.9},
           "per_method_skdim_s": {"mle": 20.0, "danco": 180.0}}
    total, slow = notes.speed_sentences(cmp)
    assert "scikit-dimension 200 s" in total and "compare 50 s" in total and "4.0×" in total and "9.9 s" in total
    assert "slowest estimator is danco (180 s, 90 %" in slow
    cmp["ess"] = {"n": 300, "ours_s": 1.5, "skdim_s": 36.0, "ratio": 24.0, "rel_difference": 2e-15}
    ess = notes.speed_sentences(cmp)[2]
    assert "on 300 of the points scikit-dimension took 36.0 s and ttlab 1.50 s (24×)" in ess and "2e-15" in ess


def test_with_duplicates_makes_exactly_that_many(notes) -> None:
    from ttlab.intrinsic_dim.validate import find_duplicates

    X = np.random.default_rng(1).standard_normal((500, 6))
    for f, m in ((0.0, 0), (0.01, 5), (0.2, 100)):
        Y = notes.with_duplicates(X, f)
        assert Y.shape == X.shape and find_duplicates(Y)[1] == m


def test_a_wrong_compare_json_is_refused_before_any_work(notes, tmp_path, monkeypatch, capsys) -> None:
    bad = tmp_path / "c.json"
    bad.write_text('{"n": 10}')
    for path, says in ((bad, "no D, methods, per_method_ours_s"), (tmp_path / "absent.json", "No such file")):
        monkeypatch.setattr(sys, "argv", ["bench_skdim_notes.py", "--compare-json", str(path)])
        with pytest.raises(SystemExit) as exc:
            notes.main()
        assert exc.value.code == 2 and says in capsys.readouterr().err


def test_regenerating_keeps_the_hand_written_conformance_section(notes):
    text = "# generated\n\nnumbers\n\n## Conformance\n\n| `key` | why |\n"
    assert notes._kept_sections(text) == "\n## Conformance\n\n| `key` | why |\n"
    assert notes._kept_sections("# generated only\n") == ""
