"""The `ttlab lm` command line: registered in one place, its defaults read from the library's configs, and
`sample --which best` on a run without best.pt says what it does instead."""

from __future__ import annotations

import ast
from dataclasses import fields
from pathlib import Path

import typer

import ttlab.cli.lm as cli_lm

from .conftest import make_texts

CLI = Path(cli_lm.__file__).parent


def _click(name: str):
    group = typer.main.get_command(cli_lm.app)
    return group.commands[name]


def _defaults(name: str) -> dict:
    return {p.name: p.default for p in _click(name).params}


def test_commands_are_registered_in_cli_lm_only():
    assert set(typer.main.get_command(cli_lm.app).commands) == {
        "corpus", "prepare", "train", "sample", "export-hf", "suite", "data-sweep", "model-sweep", "id-ablations"}
    for module in ("lm_suite.py", "lm_sweeps.py"):
        tree = ast.parse((CLI / module).read_text())
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert "ttlab.cli.lm" not in imported and "ttlab.cli" not in imported, module
        decorated = [d for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) for d in n.decorator_list]
        assert not decorated, f"{module} registers commands itself"


def test_cli_defaults_are_the_configs_defaults():
    from ttlab.intrinsic_dim.protocol import PAPER
    from ttlab.lm.configs import DEFAULT_PROMPT, GPTConfig, SampleConfig, TrainConfig
    from ttlab.lm.corpus import CorpusSpec
    from ttlab.lm.presets import IDOptions
    from ttlab.lm.suite_windows import SuiteConfig

    train = _defaults("train")
    for f in fields(TrainConfig):
        assert train[f.name] == f.default, f.name
    for name in ("block_size", "dropout", "bias"):
        assert train[name] == getattr(GPTConfig, name)
    for f in fields(CorpusSpec):
        if f.name not in ("source", "data_files", "id_field", "doc_sep"):
            assert train[f.name] == _defaults("prepare")[f.name] == f.default, f.name
    assert train["id_field"] == CorpusSpec.id_field and train["doc_sep"] == CorpusSpec.doc_sep
    suite = _defaults("suite")
    for f in fields(SuiteConfig):
        if f.name not in ("corpus", "shuffle_tokens"):
            assert suite[f.name] == f.default, f.name
    assert suite["id_k"] == PAPER.k and suite["id_batch_size"] == PAPER.batch_size
    sweep = _defaults("data-sweep")
    assert (sweep["id_k"], sweep["id_batch"], sweep["id_average"]) == (IDOptions.k, IDOptions.batch_size, IDOptions.average)
    assert (sweep["id_k"], sweep["id_batch"]) == (PAPER.k, PAPER.batch_size)
    sample = _defaults("sample")
    for f in fields(SampleConfig):
        assert sample[f.name] == f.default, f.name
    assert sample["prompt"] == DEFAULT_PROMPT


def test_sample_best_without_best_pt_says_it_uses_the_final_weights(run_cli, tmp_path):
    from ttlab.lm import GPTConfig, TrainConfig, prepare_data, train

    prep = prepare_data(__import__("ttlab.lm.corpus", fromlist=["Corpus"]).Corpus.from_texts(make_texts(20)),
                        vocab_size=300, cache_dir=tmp_path / "cache")
    cfg = TrainConfig(batch_size=2, max_iters=4, eval_interval=2, eval_iters=1, warmup_iters=1, keep_best=False,
                      device="cpu", threads=1)
    model = GPTConfig(vocab_size=prep.tokenizer.vocab_size, block_size=8, n_layer=1, n_head=1, n_embd=16)
    run = tmp_path / "run"
    train(prep.data, model, cfg, run)
    assert not (run / "best.pt").exists()
    res = run_cli("lm", "sample", "--run", run, "--prompt", "The", "--tokens", "3")
    assert res.code == 0, res.err
    err = " ".join(res.err.split())
    assert "has no best.pt" in err and "sampling from its final weights" in err and res.out.startswith("The")
    final = run_cli("lm", "sample", "--run", run, "--prompt", "The", "--tokens", "3", "--which", "final")
    assert final.code == 0 and final.out == res.out and "best.pt" not in final.err
    bad = run_cli("lm", "sample", "--run", run, "--tokens", "0")
    err = " ".join(bad.err.split())
    assert bad.code == 2 and "tokens must be an integer >= 1" in err and "(command-line option: --tokens)" in err


def test_a_sweep_console_says_what_the_report_would(run_cli, tmp_path, monkeypatch):
    """`lm data-sweep` printed α̂_D against the prediction with no word that runs hit the step cap (issue 34 item 2):
    the console now prints the report's judged claims — verdict, numbers and the rule's reason."""
    import json
    from pathlib import Path

    import ttlab.lm.experiments as ex
    from ttlab.reproduce.parts.common_lm_sweep import scaling_claims

    stored = json.loads((Path(__file__).parents[2] / "docs/results/standard/results.json").read_text())
    res = stored["parts"]["lm_data_scaling"]["result"]
    res = {k: v for k, v in res.items() if k not in ("claims", "more_corpora", "gemma")}  # what a sweep alone returns
    selected = [r for r in res["runs"] if r.get("selected")]
    for r in selected[:3]:  # three runs stopped at their step cap and were not continued
        r.update(stop_reason="max_iters", schedule_search=None, continued_point=None, capped_point=None)
    monkeypatch.setattr(ex, "run_preset_sweep", lambda **kw: res)
    r = run_cli("lm", "data-sweep", "--quick", "--out", tmp_path / "o")
    out = " ".join(r.out.split())
    assert r.code == 0 and "the report's rules on this sweep" in out
    claims = scaling_claims(res)
    assert any(c["verdict"] == "inconclusive" for c in claims)
    for c in claims:  # every claim with its verdict, and the caps named
        assert f"{c['verdict']}: {' '.join(c['statement'].split())}" in out and " ".join(c["reason"].split()) in out
    assert f"3 of {len(selected)} selected runs hit the step cap" in out
