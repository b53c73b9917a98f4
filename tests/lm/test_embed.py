"""Token embeddings for text ID: sampling, exactness against direct forward passes, layers, groups, I/O, CLI."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch

from ttlab.errors import TTLabInputError
from ttlab.lm.configs import EmbedConfig
from ttlab.lm.embed import (
    Embeddings,
    embed_corpus,
    extract_embeddings,
    open_embedding_model,
    sample_windows,
    text_intrinsic_dimension,
)

from .conftest import make_texts


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A tiny trained ttlab run (2 layers, block 32) on pseudo-prose, with its tokenizer."""
    from ttlab.lm import GPTConfig, TrainConfig, prepare_data, train
    from ttlab.lm.corpus import Corpus

    tmp = tmp_path_factory.mktemp("embed")
    torch.set_num_threads(1)
    prep = prepare_data(Corpus.from_texts(make_texts(40, seed=3)), vocab_size=300, cache_dir=tmp / "cache",
                        val_frac=0.1, test_frac=0.25)
    cfg = GPTConfig(vocab_size=prep.data.vocab_size, block_size=32, n_layer=2, n_head=2, n_embd=32)
    train(prep.data, cfg, TrainConfig(batch_size=4, max_iters=6, warmup_iters=1, eval_interval=3, eval_iters=2,
                                       device="cpu", threads=1), tmp / "run")
    return tmp / "run"


@pytest.fixture(scope="module")
def model(run_dir):
    return open_embedding_model(run_dir)


def docs(n=12, seed=0, lo=3, hi=90, vocab=300):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, vocab - 1, size=int(rng.integers(lo, hi))) for _ in range(n)]


def test_vectors_equal_direct_forward_passes_and_batching_does_not_matter(model):
    ds = docs()
    cfg = EmbedConfig(layers=None, tokens_per_doc=5, context=1024, seed=4, batch_docs=5)
    emb = extract_embeddings(model, ds, cfg)
    assert emb.meta["context_used"] == 32  # clipped to the model's block size
    assert emb.layers == [0, 1, 2] and emb.meta["model"]["final_norm_in_last_layer"]
    # an independent computation: each document's window alone, through the raw model
    for i, toks in enumerate(ds):
        rng = np.random.default_rng([4, i])
        [(start, length, pos, _)] = sample_windows(len(toks), cfg, 32, rng)
        assert length == min(len(toks), 32) and 0 <= start <= len(toks) - length
        hs = model.hidden_states(torch.as_tensor(toks[start : start + length], dtype=torch.long)[None])
        mask = emb.doc_index == i
        np.testing.assert_array_equal(emb.positions[mask], pos)
        for layer in (0, 1, 2):
            np.testing.assert_allclose(emb.vectors[layer][mask], hs[layer][0, pos].detach().numpy(), rtol=1e-5, atol=1e-5)
    one = extract_embeddings(model, ds, EmbedConfig(layers=None, tokens_per_doc=5, seed=4, batch_docs=1))
    for layer in emb.layers:
        np.testing.assert_allclose(one.vectors[layer], emb.vectors[layer], rtol=1e-5, atol=1e-5)
    # the last layer is what the LM head sees: ln_f applied
    np.testing.assert_allclose(emb.layer(-1), emb.vectors[2])
    assert emb.meta["n_vectors"] == sum(min(5, min(len(d), 32)) for d in ds)


def test_windows_positions_and_groups(model):
    ds = docs(n=10, lo=40, hi=200)
    pre = extract_embeddings(model, ds, EmbedConfig(window="prefix", tokens_per_doc=8, context=16))
    assert pre.positions.max() < 16 and len(pre.positions) == 80
    # prefix windows start at the document start: the vector at position 0 depends on the first token only
    first = model.hidden_states(torch.as_tensor(ds[0][:1], dtype=torch.long)[None])[-1][0, 0].detach().numpy()
    row = np.flatnonzero((pre.doc_index == 0) & (pre.positions == 0))
    if len(row):
        np.testing.assert_allclose(pre.layer(-1)[row[0]], first, rtol=1e-5, atol=1e-5)
    g = extract_embeddings(model, ds, EmbedConfig(tokens_per_doc=3, context=32, position_edges=(0, 4, 16, 32)))
    for grp, (lo, hi) in enumerate([(0, 4), (4, 16), (16, 32)]):
        sel = g.group == grp
        assert sel.sum() == 30 and g.positions[sel].min() >= lo and g.positions[sel].max() < hi
    # same seed, same sample; another seed, another one
    again = extract_embeddings(model, ds, EmbedConfig(tokens_per_doc=3, context=32, position_edges=(0, 4, 16, 32)))
    np.testing.assert_array_equal(again.positions, g.positions)
    other = extract_embeddings(model, ds, EmbedConfig(tokens_per_doc=3, context=32, position_edges=(0, 4, 16, 32), seed=1))
    assert not np.array_equal(other.positions, g.positions)


def test_several_windows_per_document(model):
    cfg = EmbedConfig(tokens_per_doc=4, context=32, windows_per_doc=3, seed=2)
    for window in ("random", "prefix"):
        c = EmbedConfig(**{**cfg.to_dict(), "window": window, "layers": (-1,)})
        for n in (20, 70, 100, 500):
            ws = sample_windows(n, c, 32, np.random.default_rng(n))
            assert len(ws) == (1 if n < 64 else min(3, n // 32))
            starts = [w[0] for w in ws]
            assert all(b - a >= 32 for a, b in zip(starts, starts[1:])) and starts[-1] + ws[-1][1] <= n
            if window == "prefix":
                assert starts == [32 * j for j in range(len(ws))]
    ds = docs(n=4, lo=200, hi=300)
    emb = extract_embeddings(model, ds, cfg)
    assert emb.meta["n_windows"] == 12 and len(emb.positions) == 48
    assert (np.bincount(emb.doc_index) == 12).all()
    one = extract_embeddings(model, ds, EmbedConfig(tokens_per_doc=4, context=32, seed=2))
    assert one.meta["n_windows"] == 4


def test_embed_corpus_save_load_and_id(run_dir, model, tmp_path):
    emb = embed_corpus(model, None, EmbedConfig(layers=(0, -1), tokens_per_doc=16))
    assert emb.meta["corpus"]["source"] == "run dataset" and emb.meta["n_docs"] == 10
    p = emb.save(tmp_path / "v.npz")
    back = Embeddings.load(p)
    assert back.layers == [0, 2] and np.array_equal(back.vectors[2], emb.vectors[2])
    assert np.array_equal(back.positions, emb.positions) and back.meta["layers"] == [0, 2]
    with pytest.raises(TTLabInputError, match="npz"):
        emb.save(tmp_path / "v.npy")
    one = embed_corpus(model, None, EmbedConfig(tokens_per_doc=16))
    Embeddings.load(one.save(tmp_path / "w.npy"))
    # the text ID is the paper protocol applied to the vectors, and predicts α_D = 2/(2+d), α_N = 2/d
    from ttlab.intrinsic_dim import paper_protocol

    est = text_intrinsic_dimension(emb, -1, batch_size=64, k=10)
    ref = paper_protocol(emb.vectors[2], batch_size=64, k=10)
    assert est["intrinsic_dim"] == pytest.approx(ref.dimension)
    d = est["intrinsic_dim"]
    assert est["alpha_d_pred"] == pytest.approx(2 / (2 + d)) and est["alpha_n_pred"] == pytest.approx(2 / d)
    with pytest.raises(TTLabInputError, match="need more than k"):
        text_intrinsic_dimension(emb, -1, k=len(emb.positions) + 1)
    with pytest.raises(TTLabInputError, match="layer 1 was not extracted"):
        emb.layer(1)


def test_bad_input(model, run_dir, tmp_path):
    with pytest.raises(TTLabInputError, match="does not exist"):
        extract_embeddings(model, docs(), EmbedConfig(layers=(5,)))
    with pytest.raises(TTLabInputError, match="unknown window .middle.; choose one of random, prefix"):
        EmbedConfig(window="middle")
    with pytest.raises(TTLabInputError, match="increasing"):
        EmbedConfig(position_edges=(0, 8, 8))
    with pytest.raises(TTLabInputError, match="exceeds the usable context"):
        extract_embeddings(model, docs(), EmbedConfig(position_edges=(0, 16, 64)))
    with pytest.raises(TTLabInputError, match="no document"):
        extract_embeddings(model, [np.zeros(0, dtype=int)], EmbedConfig())
    with pytest.raises(TTLabInputError, match="run folder"):
        open_embedding_model(run_dir / "ckpt.pt")


def test_cli_embed_and_estimate(run_cli, run_dir, tmp_path):
    out = tmp_path / "vec.npz"
    res = run_cli("id", "embed", "--model", run_dir, "--out", out, "--layers", "all", "--tokens-per-doc", "20",
                  "--estimate", "--batch-size", "100", "--k", "10", "--windows-per-doc", "2", "--json")
    assert res.code == 0, res.err
    meta = res.json()
    assert meta["config"]["windows_per_doc"] == 2 and meta["n_docs"] < meta["n_windows"] <= 2 * meta["n_docs"]
    assert meta["layers"] == [0, 1, 2] and len(meta["intrinsic_dim"]) == 3
    assert json.loads((tmp_path / "vec.npz.json").read_text())["n_vectors"] == meta["n_vectors"]
    res = run_cli("id", "estimate", out, "--key", "layer_2", "--k", "10", "--json")
    assert res.code == 0 and res.json()["dimension"] > 0
    # a corpus given as text goes through the run's tokenizer
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n\n".join(make_texts(30, seed=9)))
    res = run_cli("id", "embed", "--model", run_dir, "--corpus", corpus, "--out", tmp_path / "t.npy", "--window", "prefix")
    assert res.code == 0, res.err
    assert "wrote" in res.out and np.load(tmp_path / "t.npy").shape[1] == 32
    for args, msg in [
        (("--out", tmp_path / "x.npy", "--layers", "all"), "npz"),
        (("--out", tmp_path / "x.npy", "--layer", "7"), "does not exist"),
        (("--out", tmp_path / "x.txt"), ".npy or .npz"),
        (("--out", tmp_path / "x.npy", "--position-groups", "0,a"), "comma-separated"),
        (("--out", tmp_path / "x.npy", "--window", "middle"), "unknown window 'middle'"),
    ]:
        res = run_cli("id", "embed", "--model", run_dir, *args)
        assert res.code == 2 and msg in res.err, (args, res.err)
    res = run_cli("id", "embed", "--model", tmp_path / "missing", "--out", tmp_path / "x.npy", "--corpus", corpus)
    assert res.code == 2 and "missing" in res.err


def test_shuffled_token_control_permutes_each_window_and_keeps_positions(model):
    """The shuffled-token control: the same windows and sampled positions, each window's tokens permuted by the
    documented stream (default_rng([seed, i, SHUFFLE_STREAM])) before the forward pass; seeded, so repeatable."""
    from ttlab.lm.embed import SHUFFLE_STREAM

    ds = docs(n=8, lo=10, hi=60)
    cfg = EmbedConfig(layers=(-1,), tokens_per_doc=6, context=32, seed=3, batch_docs=3)
    plain = extract_embeddings(model, ds, cfg)
    shuf = extract_embeddings(model, ds, replace(cfg, shuffle_tokens=True))
    np.testing.assert_array_equal(shuf.positions, plain.positions)
    np.testing.assert_array_equal(shuf.doc_index, plain.doc_index)
    assert shuf.meta["config"]["shuffle_tokens"] and not plain.meta["config"]["shuffle_tokens"]
    moved = 0
    for i, toks in enumerate(ds):
        [(start, length, pos, _)] = sample_windows(len(toks), cfg, 32, np.random.default_rng([3, i]))
        window = toks[start : start + length]
        perm = np.random.default_rng([3, i, SHUFFLE_STREAM]).permutation(window)
        assert sorted(perm) == sorted(window)  # the same tokens, in another order
        hs = model.hidden_states(torch.as_tensor(perm, dtype=torch.long)[None])
        mask = shuf.doc_index == i
        np.testing.assert_allclose(shuf.vectors[2][mask], hs[-1][0, pos].detach().numpy(), rtol=1e-5, atol=1e-5)
        moved += not np.allclose(shuf.vectors[2][mask], plain.vectors[2][mask], atol=1e-4)
    assert moved == len(ds)  # every document's vectors changed
    again = extract_embeddings(model, ds, replace(cfg, shuffle_tokens=True))
    np.testing.assert_array_equal(again.vectors[2], shuf.vectors[2])


def test_untrained_control_is_the_runs_own_initial_weights(run_dir):
    """load_model(which="init"): the run's architecture initialised from its training seed as the trainer does —
    within the few optimizer steps of the trained weights, far from another seed's start; the caller's RNG kept."""
    from ttlab.lm.checkpoint import load_model
    from ttlab.lm.configs import TrainConfig
    from ttlab.lm.model import GPT

    trained, meta = load_model(run_dir)
    state = torch.get_rng_state()
    init, init_meta = load_model(run_dir, which="init")
    assert torch.equal(state, torch.get_rng_state()) and init_meta["iter"] == 0 and not init.training
    cfg = TrainConfig.from_dict(meta["train_config"])
    steps = sum(cfg.lr_at(i) for i in range(meta["iter"]))  # Adam moves a weight by about lr per step
    a, b = trained.state_dict(), init.state_dict()
    moved = max(float((a[k] - b[k]).abs().max()) for k in a)
    assert 0 < moved <= 2 * steps
    torch.manual_seed(cfg.seed + 1)
    other = GPT(trained.config).state_dict()
    assert max(float((a[k] - other[k]).abs().max()) for k in a) > 10 * steps
    with pytest.raises(TTLabInputError, match="needs the run folder"):
        load_model(run_dir / "ckpt.pt", which="init")
    with pytest.raises(TTLabInputError, match="which must be one of"):
        load_model(run_dir, which="start")


def test_measure_run_id_controls_use_the_same_windows(run_dir):
    """measure_run_id's controls: the untrained weights and the shuffled tokens, on the same vectors' positions."""
    from ttlab.lm.experiments import measure_run_id
    from ttlab.lm.presets import IDOptions

    opts = IDOptions(windows_per_doc=1, tokens_per_doc=16, batch_size=64, k=10)
    real = measure_run_id(run_dir, opts)
    init = measure_run_id(run_dir, opts, which="init")
    shuf = measure_run_id(run_dir, opts, shuffle_tokens=True)
    assert init["options"]["weights"] == "init" and shuf["options"]["shuffle_tokens"] and real["options"]["weights"] == "final"
    rows = [x["rows"][0] for x in (real, init, shuf)]
    assert len({r["n_vectors"] for r in rows}) == 1 and len({r["batch_size"] for r in rows}) == 1
    assert len({round(r["intrinsic_dim"], 6) for r in rows}) == 3
    # layers="all": every layer 0 … n_layer, the last one the same vectors as the default (final) layer
    every = measure_run_id(run_dir, opts, layers="all")
    assert [r["layer"] for r in every["rows"]] == list(range(every["n_layer"] + 1))
    assert every["rows"][-1]["intrinsic_dim"] == pytest.approx(real["rows"][0]["intrinsic_dim"], rel=1e-9)
    with pytest.raises(TTLabInputError, match="layers must be a sequence of layer indices or 'all', got 'every'"):
        measure_run_id(run_dir, opts, layers="every")


def test_cli_embed_untrained_control(run_cli, run_dir, tmp_path):
    """`ttlab id embed --which init`: the run's untrained start embedded the same way; a bad --which is exit 2."""
    res = run_cli("id", "embed", "--model", run_dir, "--out", tmp_path / "init.npy", "--which", "init", "--tokens-per-doc", "8")
    assert res.code == 0, res.err
    lib = embed_corpus(open_embedding_model(run_dir, which="init"), None, EmbedConfig(tokens_per_doc=8))
    np.testing.assert_allclose(np.load(tmp_path / "init.npy"), lib.layer(-1), rtol=1e-6, atol=1e-6)
    trained = embed_corpus(open_embedding_model(run_dir), None, EmbedConfig(tokens_per_doc=8))
    assert not np.allclose(trained.layer(-1), lib.layer(-1), atol=1e-3)
    res = run_cli("id", "embed", "--model", run_dir, "--out", tmp_path / "x.npy", "--which", "start")
    assert res.code == 2 and "which must be one of" in res.err, res.err


def test_embed_to_file_and_its_view(run_dir, tmp_path):
    """`ttlab id embed` as one library call: every layer ("all") saved with the ID estimates; the view shows them."""
    from tests.conftest import view_text
    from ttlab.lm.embed import embed_to_file, embed_view

    out = tmp_path / "v.npz"
    emb = embed_to_file(run_dir, out, None, EmbedConfig(tokens_per_doc=20), layers="all", estimate_id=True, k=10,
                        batch_size=40)
    assert emb.layers == [0, 1, 2] and len(emb.meta["intrinsic_dim"]) == 3
    saved = Embeddings.load(out)
    assert saved.layers == emb.layers and saved.meta["intrinsic_dim"] == emb.meta["intrinsic_dim"]
    text = view_text(embed_view(emb, out), width=400)
    m = emb.meta
    assert f"wrote {out} ({m['n_vectors']} vectors × 32, layers [0, 1, 2]) from {m['n_docs']} documents" in text
    assert f"window random, {m['context_used']} tokens" in text
    for e in m["intrinsic_dim"]:
        assert e["n_batches"] == len(e["batch_dims"]) >= 2
        assert (f"layer {e['layer']}: ID {e['intrinsic_dim']:.2f} (± {e['intrinsic_dim_std']:.2f} over "
                f"{e['n_batches']} batches, {e['n_vectors']} vectors) → α_D {e['alpha_d_pred']:.3f}, "
                f"α_N {e['alpha_n_pred']:.3f}") in text
    few = embed_to_file(run_dir, tmp_path / "few.npy", None, EmbedConfig(tokens_per_doc=20), estimate_id=True, k=10,
                        batch_size=10_000)  # fewer vectors than one batch: no spread is shown as one
    (e,) = few.meta["intrinsic_dim"]
    text = view_text(embed_view(few, tmp_path / "few.npy"), width=400)
    assert e["n_batches"] == 1 and "one batch: no spread; ≥ 20,000 vectors give two" in text and "±" not in text
    one = embed_to_file(run_dir, tmp_path / "one.npy", None, EmbedConfig(tokens_per_doc=4), layers=[1])
    assert one.layers == [1] and np.load(tmp_path / "one.npy").shape == (one.meta["n_vectors"], 32)
    with pytest.raises(TTLabInputError, match="several layers need an .npz output: give out as .*x.npz") as info:
        embed_to_file(run_dir, tmp_path / "x.npy", layers="all")
    assert info.value.params == ("out",) and not (tmp_path / "x.npy").exists()
    with pytest.raises(TTLabInputError, match="layers must be a sequence of layer indices or 'all'") as info:
        embed_to_file(run_dir, tmp_path / "x.npz", layers="every")
    assert info.value.params == ("layers",)


def test_the_cli_shows_the_flag_of_the_out_parameter(run_cli, run_dir, tmp_path):
    res = run_cli("id", "embed", "--model", run_dir, "--out", tmp_path / "x.npy", "--layers", "0,1")
    assert res.code == 2 and "(command-line option: --out)" in " ".join(res.err.split()), res.err


def test_a_model_without_its_own_data_needs_a_corpus(model):
    """Only a ttlab run folder defaults to its own test split; any other model is told to give a corpus (the CLI
    shows --corpus)."""
    assert model.run_dir is not None
    with pytest.raises(TTLabInputError, match="give a corpus: only a ttlab run folder can default") as info:
        embed_corpus(replace(model, run_dir=None), None, EmbedConfig(tokens_per_doc=2))
    assert info.value.params == ("corpus",)


def test_embed_options_are_embedconfigs_fields_and_errors_show_their_flags(run_cli, run_dir, tmp_path):
    """`ttlab id embed`'s options set EmbedConfig's fields (defaults and help from the dataclass); an error names the
    field and the CLI shows the flag, --position-groups for position_edges."""
    from ttlab.cli import command_flags
    from ttlab.lm.configs import EmbedConfig

    flags = command_flags(["id", "embed"])
    assert flags["position_edges"] == "--position-groups" and flags["errors"] == "--decode-errors"
    assert flags["tokens_per_doc"] == "--tokens-per-doc" and flags["batch_docs"] == "--batch-docs"
    res = run_cli("id", "embed", "--model", run_dir, "--out", tmp_path / "x.npz", "--position-groups", "5,3")
    err = " ".join(res.err.split())
    assert res.code == 2 and "position_edges must be at least two increasing" in err
    assert err.endswith("(command-line option: --position-groups)")
    res = run_cli("id", "embed", "--model", run_dir, "--out", tmp_path / "x.npz", "--tokens-per-doc", "0")
    assert res.code == 2 and "(command-line option: --tokens-per-doc)" in " ".join(res.err.split())
    with pytest.raises(TTLabInputError) as info:
        EmbedConfig(window="middle")
    assert info.value.params == ("window",)
