"""Issue 23, wrong numbers without a word, in `lm suite`: N counted the same for a run and its export,
no loss-per-token fit across tokenizers, no silent choice between models of equal N, a reason when
there are too few sizes."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")

from ttlab.lm.suite import run_suite, suite_design_notes  # noqa: E402
from ttlab.lm.suite_models import non_embedding_params  # noqa: E402

from .test_suite import _byte_level_pair, _cfg, corpus_file, runs  # noqa: E402,F401  (fixtures)


def test_n_is_the_same_for_a_run_and_its_hf_export(runs):  # noqa: F811
    """Before: the GPT-2 export's zero biases (bias-free run) were counted into N."""
    import transformers

    from ttlab.lm.checkpoint import load_model

    m, _ = load_model(runs[32])
    hf = transformers.AutoModelForCausalLM.from_pretrained(str(runs["hf32"]))
    zero_biases = sum(p.numel() for n, p in hf.named_parameters() if n.endswith("bias"))
    assert zero_biases > 0 and all(not p.any() for n, p in hf.named_parameters() if n.endswith("bias"))
    assert non_embedding_params(hf) == non_embedding_params(m)
    assert non_embedding_params(m)[1] == m.num_params(non_embedding=True)


def _row(name, n, tokens, loss=3.0, bpb=1.5):
    return {"name": name, "params_non_embedding": n, "tokens": tokens, "loss": loss, "bpb": bpb}


def test_design_notes():
    same = [_row("a", 100, 50), _row("b", 200, 50), _row("c", 400, 50)]
    assert suite_design_notes(same) == {"loss": None, "bpb": None, "reference_tie": None, "warnings": []}
    mixed = suite_design_notes([_row("a", 100, 50), _row("b", 200, 61), _row("c", 400, 50)])
    assert "different numbers of tokens (a, c: 50 tokens; b: 61 tokens)" in mixed["loss"] and mixed["bpb"] is None
    tie = suite_design_notes([_row("a", 100, 50), _row("b", 100, 50), _row("c", 200, 50), _row("d", 400, 50)])
    assert tie["reference_tie"] is None and any("a, b have the same non-embedding N = 100" in w for w in tie["warnings"])
    top = suite_design_notes([_row("a", 100, 50), _row("b", 200, 50), _row("c", 400, 50), _row("d", 400, 50)])
    assert "c, d tie for the largest N" in top["reference_tie"]
    two = suite_design_notes([_row("a", 100, 50), _row("b", 200, 50)])
    assert "only 2 distinct model size(s)" in two["loss"] and two["loss"] == two["bpb"]


def test_suite_across_tokenizers_fits_bits_per_byte_only(runs, corpus_file, tmp_path):  # noqa: F811
    """Before: α̂_N was fitted on loss per token across a byte-level model and BPE models."""
    byte_model, _ = _byte_level_pair(tmp_path)
    specs = [str(runs[w]) for w in (16, 32, 48)] + [str(byte_model)]
    res = run_suite(specs, tmp_path / "out", _cfg(corpus_file), bootstrap=20)
    assert len({r["tokens"] for r in res["models"]}) == 2
    assert res["alpha_hat"] is None and res["fits"]["loss"]["fits"] == {}
    assert "bits per byte only" in res["fits"]["loss"]["reason"] and res["fits"]["bpb"]["reason"] is None
    assert res["alpha_hat_bpb"] is not None and res["fits"]["bpb"]["n_points"] == 4
    assert any("bits per byte only" in w for w in res["warnings"])


def test_suite_tie_for_the_largest_n_has_no_silent_reference(runs, corpus_file, tmp_path, run_cli):  # noqa: F811
    specs = [str(runs[16]), str(runs[32]), str(runs["hf32"])]  # the run and its export: equal N
    res = run_suite(specs, tmp_path / "out", _cfg(corpus_file), bootstrap=20)
    assert res["reference"] is None and res["alpha_pred"] is None
    assert any("tie for the largest N" in w and "--reference" in w for w in res["warnings"])
    assert res["fits"]["loss"]["reason"].startswith("only 2 distinct model size(s)")
    given = run_suite(specs, tmp_path / "out", _cfg(corpus_file), bootstrap=20, reference="w32")
    assert given["reference"]["name"] == "w32" and given["alpha_pred"] is not None
    cli = run_cli("lm", "suite", "--model", runs[16], "--model", runs[32], "--model", runs["hf32"],
                  "--corpus", corpus_file, "--context", "32", "--window-bytes", "200", "--id-tokens-per-doc", "8",
                  "--id-batch-size", "60", "--id-k", "5", "--batch-tokens", "256", "--bootstrap", "20",
                  "--out", tmp_path / "cli")
    assert cli.code == 0, cli.err
    assert "tie for the largest N" in cli.err and "only 2 distinct model size(s)" in cli.err


def test_nan_weights_are_named_not_blamed_on_the_points(runs, corpus_file, tmp_path, run_cli):  # noqa: F811
    """Before: “X contains NaN values … impute those rows” — the points were blamed for the weights."""
    import shutil

    import torch

    from ttlab.errors import TTLabInputError
    from ttlab.lm.embed import open_embedding_model
    from ttlab.lm.suite_models import open_suite_model, resolve_model

    bad = tmp_path / "diverged"
    shutil.copytree(runs[16], bad)
    state = torch.load(bad / "ckpt.pt", weights_only=False)
    state["model"]["transformer.h.0.mlp.c_fc.weight"][0, 0] = float("nan")
    torch.save(state, bad / "ckpt.pt")
    with pytest.raises(TTLabInputError, match=r"weights hold NaN or inf in 1 parameter tensor\(s\) \(transformer.h.0.mlp.c_fc.weight\)"):
        open_embedding_model(bad)
    with pytest.raises(TTLabInputError, match="diverged"):
        open_suite_model(resolve_model(str(bad)))
    res = run_cli("id", "embed", "--model", bad, "--corpus", corpus_file, "--out", tmp_path / "v.npy", "--estimate")
    assert res.code == 2 and "c_fc.weight" in res.err and "impute" not in res.err
    assert not (tmp_path / "v.npy").exists()
