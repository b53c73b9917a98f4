"""Model scaling from an existing suite (ttlab.lm.suite, `ttlab lm suite`) on tiny models made here:
ttlab runs and Hugging Face folders of the same models, byte-level models, a BOS model, broken folders."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from ttlab.errors import TTLabInputError  # noqa: E402
from ttlab.lm.suite import run_suite, split_texts  # noqa: E402
from ttlab.lm.suite_models import non_embedding_params, open_suite_model, resolve_model  # noqa: E402
from ttlab.lm.suite_scoring import chunk_tokens, score_windows  # noqa: E402
from ttlab.lm.suite_windows import SuiteConfig, TextWindow, select_windows  # noqa: E402

from .conftest import make_texts  # noqa: E402

WIDTHS = (16, 32, 48)


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory):
    """Short pseudo-prose documents (blank-line separated), some with non-ASCII characters."""
    texts = make_texts(40, seed=5, words_per_doc=(12, 40))
    texts = [t + (" Café – naïve." if i % 3 == 0 else "") for i, t in enumerate(texts)]
    p = tmp_path_factory.mktemp("corpus") / "docs.txt"
    p.write_text("\n\n".join(texts) + "\n")
    return p


@pytest.fixture(scope="module")
def runs(tmp_path_factory, corpus_file):
    """Three tiny ttlab runs of increasing width (block 32) on the same data, plus the HF export of the middle one."""
    from ttlab.lm import GPTConfig, TrainConfig, prepare_data, train
    from ttlab.lm.hf import export_hf

    tmp = tmp_path_factory.mktemp("suite_runs")
    torch.set_num_threads(1)
    prep = prepare_data(str(corpus_file), vocab_size=300, cache_dir=tmp / "cache")
    out = {}
    for w in WIDTHS:
        cfg = GPTConfig(vocab_size=prep.data.vocab_size, block_size=32, n_layer=1, n_head=2, n_embd=w)
        train(prep.data, cfg, TrainConfig(batch_size=4, max_iters=8, warmup_iters=1, eval_interval=4, eval_iters=1,
                                           device="cpu", threads=1, seed=0), tmp / f"w{w}")
        out[w] = tmp / f"w{w}"
    export_hf(out[32], tmp / "w32_hf")
    out["hf32"] = tmp / "w32_hf"
    return out


def _cfg(corpus_file, **kw):
    base = dict(corpus=str(corpus_file), context=32, window_bytes=200, window="random", id_tokens_per_doc=8,
                id_batch_size=60, id_k=5, batch_tokens=256)
    return SuiteConfig(**{**base, **kw})


# ------------------------------------------------------------------------------------------ windows
def test_windows_are_text_spans_word_aligned_and_deterministic():
    texts = ["alpha beta gamma delta " * 30, "", "short text", "ünïcödé wörds " * 40]
    cfg = SuiteConfig(window_bytes=50, windows_per_doc=3, window="random", seed=1)
    w1, w2 = select_windows(texts, cfg), select_windows(texts, cfg)
    assert w1 == w2
    assert {w.doc_index for w in w1} == {0, 2, 3}  # the empty document is skipped
    for w in w1:
        assert texts[w.doc_index][w.start:w.end] == w.text and w.n_bytes <= 50
        assert w.start == 0 or texts[w.doc_index][w.start - 1].isspace() or w.text[0].isspace()
    assert select_windows(texts, SuiteConfig(window_bytes=50, seed=2, window="random")) != select_windows(
        texts, SuiteConfig(window_bytes=50, seed=3, window="random"))
    # the byte budget stops the selection after the window that reaches it
    sel = select_windows(texts, SuiteConfig(window_bytes=50, windows_per_doc=3, max_bytes=60))
    assert len(sel) == 2 and sum(w.n_bytes for w in sel) >= 60
    prefix = select_windows(texts, SuiteConfig(window_bytes=10_000, window="prefix"))
    assert [w.text for w in prefix] == [t for t in texts if t]


def test_chunks_score_and_embed_every_token_exactly_once():
    for n, C, P in [(1, 2, 2), (5, 8, 8), (7, 8, 8), (8, 8, 8), (8, 8, 7), (9, 8, 8), (30, 8, 8), (30, 8, 3), (31, 4, 1)]:
        toks = list(range(100, 100 + n))
        scored, owned = [], []
        for ch in chunk_tokens(0, toks, 99, C, P):
            assert 1 <= len(ch.inputs) <= C
            for j, t in enumerate(ch.targets):  # input position score_from + j predicts t
                pos = ch.score_from + j
                assert ch.inputs[pos] == ([99] + toks)[toks.index(t)]  # the token just before the target
                scored.append(t)
            for j in range(ch.own_from, ch.own_to):
                owned.append(ch.inputs[j])
                assert toks[ch.token_offset + j - ch.own_from] == ch.inputs[j]
        assert scored == toks and owned == toks, (n, C, P)


# ------------------------------------------------------------------------------------------- models
def test_parameter_counts_follow_kaplan(runs):
    from ttlab.lm.checkpoint import load_model

    m, _ = load_model(runs[32])
    total, non_emb = non_embedding_params(m)
    assert total == m.num_params(non_embedding=False) and non_emb == m.num_params(non_embedding=True)
    hf = transformers.AutoModelForCausalLM.from_pretrained(str(runs["hf32"]))
    t2, n2 = non_embedding_params(hf)
    c = hf.config
    assert t2 - n2 == c.vocab_size * c.n_embd + c.n_positions * c.n_embd  # wte (tied with lm_head) + wpe
    untied = transformers.GPT2LMHeadModel(transformers.GPT2Config(vocab_size=50, n_positions=8, n_embd=8, n_layer=1,
                                                                  n_head=2, tie_word_embeddings=False))
    t3, n3 = non_embedding_params(untied)
    assert t3 - n3 == 2 * 50 * 8 + 8 * 8  # input and output embeddings both dropped


def test_loss_is_exact_and_identical_for_a_run_and_its_hf_export(runs, corpus_file):
    cfg = _cfg(corpus_file, window_bytes=60, context=32, window="prefix")
    windows = [TextWindow(0, 0, 0, t) for t in ("The union and the nation.", "Peace, trade and money – naïve.")]
    res = {}
    for key in (32, "hf32"):
        sm = open_suite_model(resolve_model(str(runs[key])))
        res[key] = score_windows(sm, windows, cfg)
        # an independent computation: each window alone, [eot] + tokens, one forward pass
        total = 0.0
        for w in windows:
            u = [sm.start_token_id, *sm.encode(w.text)]
            assert len(u) <= 32
            logits = sm.forward(torch.tensor([u[:-1]]))
            total += float(torch.nn.functional.cross_entropy(logits[0].float(), torch.tensor(u[1:]), reduction="sum"))
        assert res[key]["nats"] == pytest.approx(total, rel=1e-6)
        assert res[key]["bytes"] == sum(len(w.text.encode()) for w in windows)
    assert res[32]["tokens"] == res["hf32"]["tokens"]
    assert res[32]["nats"] == pytest.approx(res["hf32"]["nats"], rel=1e-5)
    np.testing.assert_allclose(res[32]["vectors"], res["hf32"]["vectors"], rtol=1e-4, atol=1e-4)


def test_hidden_states_without_a_recognised_final_norm_match_the_hook(runs, corpus_file, monkeypatch):
    """When the final norm is not known to produce the last hidden state, the model's own
    output_hidden_states[-1] is used: the same vectors as the forward hook gives."""
    cfg = _cfg(corpus_file, context=16, window_bytes=80)
    windows = select_windows(make_texts(5, seed=2), cfg)
    hooked = open_suite_model(resolve_model(str(runs["hf32"])))
    assert hooked.last_hidden_module is not None
    a = score_windows(hooked, windows, cfg)
    monkeypatch.setattr("ttlab.lm.pretrained.final_norm_applied", lambda model: None)
    plain = open_suite_model(resolve_model(str(runs["hf32"])))
    assert plain.last_hidden_module is None
    b = score_windows(plain, windows, cfg)
    assert a["nats"] == pytest.approx(b["nats"], rel=1e-6) and a["chunks"] > len(windows)
    np.testing.assert_allclose(a["vectors"], b["vectors"], rtol=1e-5, atol=1e-5)
    assert plain.forward.last_hidden is None  # the last batch is not kept alive


def _byte_level_pair(tmp_path):
    """A byte-level GPT-2 (257 ids: <|endoftext|> + 256 bytes) and the same model under a second tokenization
    of the same text: the byte ids permuted, with the embedding rows permuted to match."""
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    from ttlab.lm.tokenizer import train_bpe

    tok = train_bpe(["abc"], vocab_size=257, min_frequency=1000)
    assert tok.vocab_size == 257
    spec = json.loads(tok.tok.to_str())
    vocab = spec["model"]["vocab"]
    perm = np.random.default_rng(0).permutation(np.arange(1, 257))
    new_id = {0: 0, **{i: int(p) for i, p in zip(range(1, 257), perm)}}
    spec2 = json.loads(tok.tok.to_str())
    spec2["model"]["vocab"] = {t: new_id[i] for t, i in vocab.items()}
    tok2 = Tokenizer.from_str(json.dumps(spec2))
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=257, n_positions=64, n_embd=32, n_layer=2, n_head=2, bos_token_id=None,
                                  eos_token_id=None)
    m1 = transformers.GPT2LMHeadModel(cfg).eval()
    m2 = transformers.GPT2LMHeadModel(cfg).eval()
    sd = m1.state_dict()
    w = sd["transformer.wte.weight"].clone()
    w2 = torch.empty_like(w)
    for i, j in new_id.items():
        w2[j] = w[i]
    sd = {**sd, "transformer.wte.weight": w2, "lm_head.weight": w2}
    m2.load_state_dict(sd)
    dirs = []
    for name, model, t in (("bytes_a", m1, tok.tok), ("bytes_b", m2, tok2)):
        model.save_pretrained(tmp_path / name)
        PreTrainedTokenizerFast(tokenizer_object=t, eos_token="<|endoftext|>").save_pretrained(tmp_path / name)
        dirs.append(tmp_path / name)
    return dirs


def test_bits_per_byte_identical_under_two_tokenizations_of_a_byte_level_model(tmp_path, corpus_file):
    a, b = _byte_level_pair(tmp_path)
    cfg = _cfg(corpus_file, context=16, window_bytes=40)  # windows longer than the context: chunked scoring
    windows = select_windows(make_texts(6, seed=9), cfg)
    sa = score_windows(open_suite_model(resolve_model(str(a))), windows, cfg)
    sb_model = open_suite_model(resolve_model(str(b)))
    assert sb_model.encode("ab") != open_suite_model(resolve_model(str(a))).encode("ab")  # different token ids
    sb = score_windows(sb_model, windows, cfg)
    assert sa["tokens"] == sa["bytes"] == sb["bytes"] and sa["chunks"] > len(windows)
    bpb_a = sa["nats"] / math.log(2) / sa["bytes"]
    bpb_b = sb["nats"] / math.log(2) / sb["bytes"]
    assert bpb_a == pytest.approx(bpb_b, rel=1e-6) and 1.0 < bpb_a < 12.0


# ------------------------------------------------------------------------------------------- suite
def test_suite_end_to_end_resume_and_failures_kept(runs, corpus_file, tmp_path):
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text(json.dumps({"model_type": "gpt2", "vocab_size": 300}))
    (tmp_path / "broken" / "model.safetensors").write_bytes(b"not a safetensors file")
    specs = [str(runs[w]) for w in WIDTHS] + [str(tmp_path / "broken")]
    cfg = _cfg(corpus_file, windows_per_doc=3)
    res = run_suite(specs, tmp_path / "out", cfg, bootstrap=50)
    by = {r["name"]: r for r in res["models"]}
    assert by["broken"]["status"] == "failed" and by["broken"]["error"] and res["n_failed"] == 1
    ok = [by[f"w{w}"] for w in WIDTHS]
    assert all(r["status"] == "ok" for r in ok)
    assert len({r["bytes"] for r in ok}) == 1 and ok[0]["bytes"] == res["windows"]["bytes"]  # same bytes for all
    for r in ok:
        assert r["bpb"] == pytest.approx(r["nats"] / math.log(2) / r["bytes"])
        assert r["loss"] == pytest.approx(r["nats"] / r["tokens"])
        assert r["intrinsic_dim"] > 0 and r["n_vectors"] > cfg.id_k
    assert [p["name"] for p in res["points"]] == ["w16", "w32", "w48"]  # ordered by non-embedding N
    assert res["reference"]["name"] == "w48" and res["alpha_pred"] == pytest.approx(2 / ok[2]["intrinsic_dim"])
    assert res["fits"]["loss"]["n_points"] == 3 and res["alpha_hat"] is not None
    assert res["fits"]["loss"]["alpha_hat_ci_method"].startswith("t-interval")
    x = np.log([r["params_non_embedding"] for r in ok])
    assert res["alpha_hat"] == pytest.approx(-np.polyfit(x, np.log([r["loss"] for r in ok]), 1)[0], rel=1e-6)
    assert res["alpha_hat_bpb"] == pytest.approx(-np.polyfit(x, np.log([r["bpb"] for r in ok]), 1)[0], rel=1e-6)
    assert (tmp_path / "out" / "suite_scaling.png").stat().st_size > 1000
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved["versions"]["torch"] and saved["config"]["context"] == 32 and saved["models"][0]["device"] == "cpu"
    # resumed: finished models come from the cache, the broken one is retried (and fails again)
    again = run_suite(specs, tmp_path / "out", cfg, bootstrap=50, reference="w16")
    assert [r["cached"] for r in again["models"]] == [True, True, True, False]
    assert again["alpha_pred"] == pytest.approx(2 / ok[0]["intrinsic_dim"]) and again["reference"]["chosen"] == "given"


def test_id_equals_ttlab_id_embed_on_the_same_windows(tmp_path, corpus_file, run_cli):
    """A BOS model (Llama-style tokenizer that adds <bos>), whole documents as prefix windows."""
    from tokenizers.processors import TemplateProcessing
    from transformers import PreTrainedTokenizerFast

    from ttlab.lm.tokenizer import train_bpe

    tok = train_bpe(make_texts(20), vocab_size=300)
    tok.tok.post_processor = TemplateProcessing(single="<|endoftext|> $A", special_tokens=[("<|endoftext|>", tok.eot_id)])
    hf_tok = PreTrainedTokenizerFast(tokenizer_object=tok.tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>")
    torch.manual_seed(1)
    cfg = transformers.LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                   num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=512,
                                   bos_token_id=tok.eot_id, eos_token_id=tok.eot_id, pad_token_id=None)
    d = tmp_path / "llama_bos"
    transformers.AutoModelForCausalLM.from_config(cfg).save_pretrained(d)
    hf_tok.save_pretrained(d)
    sm = open_suite_model(resolve_model(str(d)))
    assert sm.start_token == "bos"
    scfg = SuiteConfig(corpus=str(corpus_file), context=256, window="prefix", window_bytes=100_000, id_tokens_per_doc=8,
                       id_k=5, id_batch_size=60, seed=3, batch_tokens=512)
    res = run_suite([str(d)], tmp_path / "out", scfg)
    row = res["models"][0]
    assert all(len(sm.encode(t)) < 255 for t in split_texts(scfg)[0])  # whole documents fit both windows
    r = run_cli(*["id", "embed", "--model", str(d), "--corpus", str(corpus_file), "--window", "prefix", "--context", "256",
                 "--tokens-per-doc", "8", "--seed", "3", "--estimate", "--k", "5", "--batch-size", "60",
                 "--out", str(tmp_path / "emb.npy"), "--json"])
    assert r.code == 0, (r.out + r.err)
    est = r.json()["intrinsic_dim"][0]
    assert est["n_vectors"] == row["n_vectors"]
    assert row["intrinsic_dim"] == pytest.approx(est["intrinsic_dim"], rel=1e-4)


def test_bad_input_is_a_clear_error(tmp_path, runs, corpus_file, run_cli):
    with pytest.raises(TTLabInputError, match="not found"):
        resolve_model(str(tmp_path / "no" / "such" / "model"))
    with pytest.raises(TTLabInputError, match="offline"):
        resolve_model("EleutherAI/pythia-70m")  # HF_HUB_OFFLINE=1 in the tests
    (tmp_path / "empty").mkdir()
    with pytest.raises(TTLabInputError, match="holds no model"):
        resolve_model(str(tmp_path / "empty"))
    with pytest.raises(TTLabInputError, match="dtype"):
        SuiteConfig(dtype="float8")
    with pytest.raises(TTLabInputError, match="unique"):
        run_suite([str(runs[16]), str(runs[16])], tmp_path / "o", _cfg(corpus_file))
    base = ["lm", "suite", "--corpus", str(corpus_file), "--out", str(tmp_path / "cli")]
    for extra, msg in ((["--model", str(tmp_path / "nothing-here")], "not found"),
                       (["--model", "EleutherAI/pythia-70m"], "offline"),
                       (["--model", str(runs[16]), "--dtype", "int8"], "dtype"),
                       (["--model", str(runs[16]), "--device", "cuda"] if not torch.cuda.is_available() else
                        ["--model", str(runs[16]), "--device", "gpu"], "device"),
                       ([], "give the models")):
        r = run_cli(*base, *extra)
        assert r.code == 2, (extra, (r.out + r.err))
        assert msg in (r.out + r.err) and "Traceback" not in (r.out + r.err)


def test_cli_suite_file_reports_failed_model_and_keeps_others(tmp_path, runs, corpus_file, run_cli):
    (tmp_path / "nowts").mkdir()
    (tmp_path / "nowts" / "config.json").write_text(json.dumps({"model_type": "gpt2", "vocab_size": 300}))
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps({"models": [{"model": str(runs[16]), "name": "small"}, str(runs[48]), "nowts"],
                                 "reference": "small"}))
    r = run_cli(*["lm", "suite", "--suite", str(suite), "--corpus", str(corpus_file), "--out", str(tmp_path / "o"),
                 "--context", "32", "--window-bytes", "200", "--id-tokens-per-doc", "8", "--id-k", "5",
                 "--id-batch-size", "60", "--windows-per-doc", "3"])
    assert r.code == 1, (r.out + r.err)
    assert "nowts" in (r.out + r.err) and "failed" in (r.out + r.err)
    res = json.loads((tmp_path / "o" / "results.json").read_text())
    assert [m["status"] for m in res["models"]] == ["ok", "ok", "failed"]
    assert res["reference"]["name"] == "small"


def test_untrained_control_spec_loads_the_runs_initial_weights(runs, corpus_file, tmp_path):
    """A ttlab spec with "which": "init" scores and embeds the run's untrained start (the ID control of the
    reproduce suite part): its weights are load_model(which="init")'s, its loss near ln(vocab); no figure asked."""
    from ttlab.lm.checkpoint import load_model

    spec = {**resolve_model(str(runs[32]), label="w32 (untrained)"), "which": "init"}
    sm = open_suite_model(spec)
    init, _ = load_model(runs[32], which="init")
    assert sm.info["weights"] == "init" and all(torch.equal(a, b) for a, b in zip(sm.model.state_dict().values(),
                                                                                 init.state_dict().values()))
    res = run_suite([spec, str(runs[32])], tmp_path / "ctl", _cfg(corpus_file, windows_per_doc=2), bootstrap=0, figure=False)
    untrained, trained = res["models"]
    assert untrained["bytes"] == trained["bytes"] and untrained["n_vectors"] == trained["n_vectors"]
    assert abs(untrained["loss"] - math.log(sm.vocab_size)) < 0.1 < untrained["loss"] - trained["loss"]
    assert untrained["intrinsic_dim"] != trained["intrinsic_dim"]
    assert "figure" not in res and not (tmp_path / "ctl" / "suite_scaling.png").exists()
    with pytest.raises(TTLabInputError, match="needs a ttlab run folder"):
        open_suite_model({**resolve_model(str(runs["hf32"])), "which": "init"})


def test_shuffled_token_control_scores_and_embeds_each_window_permuted(runs, corpus_file):
    """SuiteConfig(shuffle_tokens=True): each window's tokens permuted by default_rng([seed, doc, 1 + j,
    SHUFFLE_STREAM]) before scoring; positions unchanged; the vectors are those of the permuted window."""
    from dataclasses import replace

    from ttlab.lm.embed import SHUFFLE_STREAM
    from ttlab.lm.suite import split_texts
    from ttlab.lm.suite_scoring import score_windows

    cfg = _cfg(corpus_file, window_bytes=30, windows_per_doc=2)
    windows = select_windows(split_texts(cfg)[0], cfg)
    sm = open_suite_model(resolve_model(str(runs[32])))
    plain = score_windows(sm, windows, cfg)
    shuf = score_windows(sm, windows, replace(cfg, shuffle_tokens=True))
    assert (shuf["tokens"], shuf["bytes"]) == (plain["tokens"], plain["bytes"]) and shuf["nats"] != plain["nats"]
    np.testing.assert_array_equal(shuf["positions"], plain["positions"])
    np.testing.assert_array_equal(score_windows(sm, windows, replace(cfg, shuffle_tokens=True))["vectors"], shuf["vectors"])
    # an independent computation for the first window (it fits in one forward pass): permute, prepend the start token
    toks = sm.encode(windows[0].text)
    assert len(toks) + 1 <= 32
    perm = np.random.default_rng([cfg.seed, windows[0].doc_index, 1, SHUFFLE_STREAM]).permutation(toks)
    hs = sm.model.hidden_states(torch.as_tensor([sm.start_token_id, *perm.tolist()])[None])[-1][0]
    k = min(cfg.id_tokens_per_doc, len(toks))
    pos = shuf["positions"][:k]
    np.testing.assert_allclose(shuf["vectors"][:k], hs[1 + pos].detach().numpy(), rtol=1e-5, atol=1e-5)
