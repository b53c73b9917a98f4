"""`ttlab ntp generalize --sentences-file FILE` (issue 34, item 8): the user's own unseen sentences, each reported with
the theory's prediction and the trained model's, bad files refused with the file and line; the figure
generalization.png beside generalization.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ttlab.ntp.train as training
from ttlab.ntp.config import DatasetSource
from ttlab.ntp.dataset import NTPDataset
from ttlab.ntp.examples import SVOP_SEQUENCES, SVOP_UNSEEN
from ttlab.ntp.generalize import check_sentences, generalization_run

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Example 2 (S P → V: the non-comparable S; O S P → P: the optimal O), a training sentence, and P P: only the
# non-optimal P under query P, so Theorem 3 predicts nothing
GIVEN = "# the paper's Example 2\nS P => V\nO S P => P\nS V => O\nP P => S\n"


@pytest.fixture
def svop_file(tmp_path):
    p = tmp_path / "svop.txt"
    p.write_text("\n".join(SVOP_SEQUENCES) + "\n")
    return p


@pytest.fixture
def given_file(tmp_path):
    p = tmp_path / "unseen.txt"
    p.write_text(GIVEN)
    return p


def assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert len(data) > 0 and data.startswith(PNG_SIGNATURE), path


def test_given_sentences_are_each_reported_with_the_theory_and_the_model(run_cli, svop_file, given_file, tmp_path):
    out = tmp_path / "g"
    res = run_cli("ntp", "generalize", "--data", svop_file, "--sentences-file", given_file, "--out", out, "--json")
    assert res.code == 0, res.err
    report = res.json()
    rows = {c["sentence"]: c for c in report["cases"]}
    assert list(rows) == ["S P", "O S P", "S V", "P P"]  # only the file's sentences, in its order
    for sentence, expected in SVOP_UNSEEN.items():  # Example 2, as the paper says
        row = rows[" ".join(sentence)]
        assert row["theory_prediction"] == row["model_prediction"] == expected and row["agree"] is True
        assert row["seen"] is False and row["label"] == expected and row["theory_probability"] > 0.9
    assert (rows["S P"]["case"], rows["O S P"]["case"], rows["S P"]["line"], rows["O S P"]["line"]) == \
        ("non-comparable", "optimal", 2, 3)
    assert rows["S V"]["seen"] is True and rows["S V"]["theory_prediction"] == rows["S V"]["model_prediction"] == "O"
    none = rows["P P"]
    assert (none["case"], none["theory_prediction"], none["agree"], none["theory_probability"]) == ("none", None, None, None)
    assert "only non-optimal tokens" in none["reason"] and 0 < none["model_probability"] <= 1
    assert (report["n_sentences"], report["n_with_prediction"], report["agreement"]) == (4, 3, 1.0)
    assert report["sentences"] == {"source": "given", "file": str(given_file), "samples": None}
    written = json.loads((out / "generalization.json").read_text())
    assert written["cases"] == report["cases"] and written["figure"] == str(out / "generalization.png")
    assert_png(out / "generalization.png")


def test_given_sentences_text_lists_each_sentence(run_cli, svop_file, given_file, tmp_path):
    from tests.conftest import view_text
    from ttlab.ntp.views import generalization_view

    res = run_cli("ntp", "generalize", "--data", svop_file, "--sentences-file", given_file, "--out", tmp_path / "g")
    assert res.code == 0, res.err
    assert "given sentences: the model against Theorem 3" in res.out and "generalization.png" in res.out
    report = generalization_run(DatasetSource(svop_file), sentences=given_file)
    text = view_text(generalization_view(report, "G"), cells=True)
    assert "2 S P V V non-comparable V (1.000) ✓" in text and "3 O S P P P optimal P (1.000) ✓" in text
    assert "4 S V (trained on) O O optimal O (1.000) ✓" in text
    assert "5 P P S — none: only non-optimal tokens under 'P' S (1.000) —" in text
    assert "the model's top token is the file's next token for 100.0% of the 4 sentences" in text


def test_the_python_api_takes_a_path_or_parsed_sentences(svop_file, given_file):
    by_path = generalization_run(DatasetSource(svop_file), 300, 300, sentences=given_file)
    parsed = NTPDataset.from_text("S P => V\nO S P => P\n", source="mine")
    by_list = generalization_run(DatasetSource(svop_file), 300, 300, sentences=parsed.sentences)
    by_dataset = generalization_run(DatasetSource(svop_file), 300, 300, sentences=parsed)
    assert [c["model_prediction"] for c in by_path["cases"]][:2] == ["V", "P"]
    assert [(c["sentence"], c["theory_prediction"]) for c in by_list["cases"]] == [("S P", "V"), ("O S P", "P")]
    assert by_dataset["sentences"]["file"] == "mine" and by_dataset["cases"] == by_list["cases"]
    assert "figure" not in by_path  # no out_dir: nothing written


@pytest.mark.parametrize("content, fragments", [
    ("S P => V\nS X P => V\n", ["line 2: 'X' (in 'S X P => V')", "not in the training vocabulary", "S, V, O, P"]),
    ("S P => Z\n", ["line 1: 'Z'", "not in the training vocabulary"]),  # the next token too
    ("", ["no sentences (the file is empty"]),
    ("# a comment\n\n", ["no sentences (the file is empty"]),
    ("S P => V\nS\n", ["line 2: a sequence line needs at least two tokens"]),
    ("S P => V W\n", ["line 1: expected exactly one next token after '=>'"]),
    ("S => => V\n", ["line 1: more than one '=>'"]),
])
def test_bad_sentences_file_exits_2_naming_file_and_line_before_training(run_cli, svop_file, tmp_path, monkeypatch,
                                                                         content, fragments):
    bad = tmp_path / "bad.txt"
    bad.write_text(content)

    def no_training(*args, **kwargs):
        raise AssertionError("trained on a bad sentences file")

    monkeypatch.setattr(training, "train", no_training)
    out = tmp_path / "g"
    res = run_cli("ntp", "generalize", "--data", svop_file, "--sentences-file", bad, "--out", out)
    err = " ".join(res.err.split())
    assert res.code == 2, res.err
    assert str(bad) in err and "--sentences-file" in err and "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, err
    assert not (out / "generalization.json").exists() and not (out / "generalization.png").exists()


def test_unknown_tokens_are_named_on_every_line_up_to_five(svop_file):
    from ttlab.errors import TTLabInputError

    ds = NTPDataset.from_file(svop_file)
    text = "".join(f"S Q{i} P => V\n" for i in range(8))
    with pytest.raises(TTLabInputError) as exc:
        check_sentences(NTPDataset.from_text(text, source="mine.txt"), ds)
    msg = str(exc.value)
    assert msg.startswith("mine.txt, line 1: 'Q0'") and "line 5: 'Q4'" in msg and "Q5" not in msg
    assert "… and 3 more lines" in msg and exc.value.params == ("sentences",)
    with pytest.raises(TTLabInputError, match="non-empty list of its Sentence"):
        check_sentences([("S", "P")], ds)  # type: ignore[list-item]


def test_drawn_sentences_get_a_figure_too(run_cli, svop_file, tmp_path):
    out = tmp_path / "g"
    res = run_cli("ntp", "generalize", "--data", svop_file, "--out", out, "--json", "--stage1-steps", "200",
                  "--stage2-steps", "200")
    assert res.code == 0, res.err
    report = res.json()
    assert report["sentences"]["source"] == "drawn" and len(report["cases"]) == 75
    assert all(0 < c["model_probability"] <= 1 for c in report["cases"])
    assert_png(out / "generalization.png")


def test_generalization_figure_per_sentence_and_aggregated(tmp_path):
    import matplotlib.figure

    from ttlab.ntp.plots import MAX_SENTENCE_ROWS, generalization_figure
    from ttlab.provenance import atomic_savefig

    def case(i: int) -> dict:
        agree = None if i % 3 == 2 else bool(i % 4)
        return {"sentence": f"a$ b{i}", "case": ["optimal", "non-comparable", "none"][i % 3], "agree": agree,
                "theory_prediction": None if agree is None else "A", "model_prediction": "A" if agree else "B",
                "model_probability": 0.9, "theory_probability": None if agree is None else 0.4, "line": i + 1}

    few = generalization_figure([case(i) for i in range(MAX_SENTENCE_ROWS)])
    assert len(few.axes[0].patches) == MAX_SENTENCE_ROWS  # one bar per sentence
    many = [case(i) for i in range(MAX_SENTENCE_ROWS + 1)]
    fig = matplotlib.figure.Figure()
    ax = fig.add_subplot(1, 1, 1)
    assert generalization_figure(many, ax=ax) is fig and len(ax.get_xticklabels()) == 3  # grouped by case
    assert [t.get_text() for t in ax.get_xticklabels()][0] == "optimal\n(n = 17)"
    atomic_savefig(few, tmp_path / "few.png")
    assert_png(tmp_path / "few.png")
