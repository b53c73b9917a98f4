"""The views of the ``ttlab lm`` commands (ttlab.lm.views), built from real small results and rendered."""

from __future__ import annotations

import json

from tests.conftest import view_text as render
from tests.lm.conftest import make_texts
from tests.lm.test_build import make_tar
from ttlab.lm.views import build_view, eval_line, failures_view, interrupted_view, prepare_view


def test_build_view(tmp_path):
    from ttlab.lm.build import build_corpus

    files = {f"package/data/{1790 + i}_george_washington_n.json": json.dumps(
        {"year": 1790 + i, "name": "George Washington", "party": "none", "text": "Fellow citizens. " * (i + 1)}).encode()
        for i in range(3)}
    meta = build_corpus("sotu", tmp_path / "out", package_file=make_tar(tmp_path / "sotu.tgz", files))
    text = render(build_view("sotu", meta, tmp_path / "out"))
    assert text == (f"sotu: 3 documents, {meta['n_chars']:,} characters → {tmp_path / 'out' / meta['file']} "
                    f"({meta['bytes_file']:,} bytes); licence: {meta['licence']}")


def test_prepare_view(tmp_path):
    from ttlab.lm.data import prepare_data

    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(make_texts(20))))
    p = prepare_data(str(corpus), vocab_size=300, cache_dir=tmp_path / "cache")
    d = p.describe()
    text = render(prepare_view(p))
    assert text == (f"c: vocab {p.tokenizer.vocab_size}; tokens train {d['tokens']['train']:,}, val "
                    f"{d['tokens']['val']:,}, test {d['tokens']['test']:,} cached in {d['dataset_dir']}")
    assert p.tokenizer.vocab_size == 300 and d["tokens"]["train"] > d["tokens"]["val"] > 0


def test_eval_line_and_interrupted_view(tmp_path, token_data, tiny_model_cfg, tiny_train_cfg):
    from ttlab.lm.trainer import train

    rows = []
    res = train(token_data, tiny_model_cfg, tiny_train_cfg, tmp_path / "run",
                on_eval=rows.append, should_stop=lambda it: it == 23)
    row = rows[-1]
    assert row["iter"] == 20
    line = eval_line(row)
    assert line.startswith("iter     20  tokens ") and f"{row['tokens_seen']:,d}" in line
    assert f"train {row['train_loss']:.4f}  val {row['val_loss']:.4f}" in line
    assert f"(best {row['best_val_loss']:.4f} @ {row['best_iter']})  lr {row['lr']:.2e}" in line
    assert eval_line({**row, "phase": "search"}).startswith("[search] iter     20")
    first = eval_line(rows[0])  # before the first step there is no training loss: a dash, not "nan"
    assert rows[0]["iter"] == 0 and "train    —    val" in first and "nan" not in first
    assert "nan" in eval_line({**row, "train_loss": float("nan")})  # a NaN later on is a diverged run: shown
    assert res.status == "interrupted"
    text = render(interrupted_view(res))
    assert text == (f"interrupted — at iteration 23; checkpoint saved in {tmp_path / 'run'}. Re-run the same "
                    "command with --resume to continue.")


def test_failures_view():
    runs = [{"name": "n1000_s0", "status": "ok"}, {"name": "n2000_s0", "status": "failed"},
            {"name": "n4000_s1", "status": "failed"}]
    sweep = {"kind": "data_sweep", "runs": runs, "n_failed": 2}
    assert render(failures_view(sweep)) == "2 run(s) failed: n2000_s0, n4000_s1; re-run the command to retry them."
    suite = {"kind": "model_suite", "models": [{**r, "name": f"m{i}"} for i, r in enumerate(runs[:2])], "n_failed": 1}
    assert render(failures_view(suite)) == ("1 model(s) failed: m1; the others are kept (re-run the command to retry "
                                            "the failed ones).")
    assert failures_view({**sweep, "n_failed": 0}) == []


def test_a_results_warnings_are_printed_as_they_are(capsys):
    """`lm suite`, `scaling fit` and `id estimate/compare` print a result's warnings with one helper; a note's
    brackets are text, never rich markup (an unmatched closing tag used to end the command with a traceback)."""
    from ttlab.cli.common import print_warnings
    from ttlab.lm.suite import suite_design_notes

    ok = [{"name": n, "tokens": 100, "params_non_embedding": p} for n, p in (("a", 10), ("b", 10), ("c", 20))]
    notes = suite_design_notes(ok)
    print_warnings(notes["warnings"])
    text = " ".join(capsys.readouterr().err.split())
    assert text.count("warning:") == len(notes["warnings"]) == 2
    assert "models a, b have the same non-embedding N = 10" in text
    print_warnings(["values [bold] and [/x] here"])
    assert "warning: values [bold] and [/x] here" in capsys.readouterr().err
    print_warnings([])
    assert capsys.readouterr().err == ""
