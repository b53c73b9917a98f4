"""The GPT model: shapes, causality, weight tying, parameter counts, hidden states, HF equivalence."""

from __future__ import annotations

import math

import pytest
import torch

from ttlab.errors import TTLabInputError
from ttlab.lm.configs import MODEL_PRESETS, GPTConfig
from ttlab.lm.model import GPT

CFG = GPTConfig(vocab_size=97, block_size=16, n_layer=2, n_head=4, n_embd=32)


def model(cfg=CFG, seed=0):
    torch.manual_seed(seed)
    return GPT(cfg).eval()


def test_shapes_initial_loss_and_seeded_init():
    m = model()
    idx = torch.randint(97, (3, 16))
    logits, loss = m(idx, torch.randint(97, (3, 16)))
    assert logits.shape == (3, 16, 97)
    assert abs(loss.item() - math.log(97)) < 0.1  # small init → near-uniform predictions
    assert m(idx)[1] is None
    assert all(torch.equal(a, b) for a, b in zip(m.state_dict().values(), model().state_dict().values()))
    assert not torch.equal(m.lm_head.weight, model(seed=1).lm_head.weight)
    with pytest.raises(TTLabInputError, match="longer than block_size 16"):
        m(torch.zeros(1, 17, dtype=torch.long))


def test_attention_is_causal():
    m = model()
    idx = torch.randint(97, (2, 16))
    changed = idx.clone()
    changed[:, 10:] = (changed[:, 10:] + 1) % 97
    a, b = m(idx)[0], m(changed)[0]
    assert torch.allclose(a[:, :10], b[:, :10], atol=1e-6)
    assert not torch.allclose(a[:, 10:], b[:, 10:])


def test_weight_tying_and_parameter_counts():
    m = model()
    assert m.lm_head.weight is m.transformer.wte.weight
    C, L = CFG.n_embd, CFG.n_layer
    non_emb = L * (12 * C * C + 2 * C) + C  # attention 4C², MLP 8C², two LayerNorms per block, final LayerNorm
    assert m.num_params(non_embedding=True) == non_emb
    assert m.num_params(non_embedding=False) == non_emb + 97 * C + 16 * C
    with_bias = model(CFG.replace(bias=True))
    assert with_bias.num_params() == non_emb + L * (3 * C + C + 4 * C + C + 2 * C) + C


def test_hidden_states_follow_the_hf_convention():
    m = model()
    idx = torch.randint(97, (2, 16))
    hs = m.hidden_states(idx)
    assert len(hs) == CFG.n_layer + 1 and all(h.shape == (2, 16, 32) for h in hs)
    pos = torch.arange(16)
    assert torch.allclose(hs[0], m.transformer.wte(idx) + m.transformer.wpe(pos))
    assert torch.allclose(m.lm_head(hs[-1]), m(idx)[0], atol=1e-6)  # the last state is what the head reads
    assert torch.allclose(m.transformer.h[0](hs[0]), hs[1], atol=1e-6)


@pytest.mark.parametrize("bias", [False, True])
def test_equivalent_to_transformers_gpt2(bias):
    pytest.importorskip("transformers")
    from ttlab.lm.hf import from_hf_gpt2, hidden_states, to_hf_gpt2

    m = model(CFG.replace(bias=bias))
    with torch.no_grad():  # make biases and LayerNorm gains non-trivial so that a wrong mapping shows
        for name, p in m.named_parameters():
            if name.endswith(".bias"):
                p.normal_(0, 0.1)
            elif "ln" in name:
                p.add_(0.1 * torch.randn_like(p))
    hf = to_hf_gpt2(m)
    idx = torch.randint(97, (2, 16))
    assert torch.allclose(hf(input_ids=idx).logits, m(idx)[0], atol=1e-5)
    ours, theirs = hidden_states(m, idx), hidden_states(hf, idx)
    assert len(ours) == len(theirs) == CFG.n_layer + 1
    assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(ours, theirs))
    back = from_hf_gpt2(hf)
    assert back.config.bias and torch.allclose(back(idx)[0], m(idx)[0], atol=1e-5)


def test_config_validation_and_presets():
    with pytest.raises(TTLabInputError, match="divisible by n_head"):
        GPTConfig(n_embd=30, n_head=4)
    with pytest.raises(TTLabInputError, match="n_layer must be an integer >= 1"):
        GPTConfig(n_layer=0)
    with pytest.raises(TTLabInputError, match="dropout"):
        GPTConfig(dropout=1.0)
    with pytest.raises(TTLabInputError, match="unknown model preset 'huge'"):
        GPTConfig.from_preset("huge")
    with pytest.raises(TTLabInputError, match="unknown GPTConfig field"):
        GPTConfig.from_dict({"n_layers": 3})
    assert GPTConfig.from_dict(CFG.to_dict()) == CFG
    sizes = [GPT(GPTConfig.from_preset(n, vocab_size=64, block_size=8)).num_params() for n in ("nano", "micro", "mini", "small", "medium")]
    assert sizes == sorted(sizes) and len(set(sizes)) == 5  # a ladder for model-size sweeps
    assert GPTConfig.from_preset("gpt2").n_embd == 768 and len(MODEL_PRESETS) >= 4
    assert GPTConfig.from_preset("micro", n_layer=None, n_embd=256).n_embd == 256


def test_replace_is_a_validated_copy():
    wider = CFG.replace(n_embd=2 * CFG.n_embd)
    assert wider.n_embd == 2 * CFG.n_embd and wider.n_layer == CFG.n_layer and CFG.n_embd != wider.n_embd
    with pytest.raises(TTLabInputError, match="divisible by n_head"):
        CFG.replace(n_embd=CFG.n_head * 8 + 1)
    with pytest.raises(TTLabInputError, match="unknown GPTConfig field"):
        CFG.replace(n_layers=3)


def test_generate_is_seeded_and_crops_context():
    m = model()
    start = torch.zeros(1, 1, dtype=torch.long)
    a = m.generate(start, 20, generator=torch.Generator().manual_seed(1))
    b = m.generate(start, 20, generator=torch.Generator().manual_seed(1))
    assert a.shape == (1, 21) and torch.equal(a, b)
    with pytest.raises(TTLabInputError, match="temperature"):
        m.generate(start, 1, temperature=0)


def test_export_trained_run_to_hugging_face(tmp_path, token_data, tiny_model_cfg, tiny_train_cfg, run_cli):
    transformers = pytest.importorskip("transformers")
    from dataclasses import replace

    from ttlab.lm.checkpoint import load_run
    from ttlab.lm.trainer import train

    train(token_data, tiny_model_cfg, replace(tiny_train_cfg, max_iters=5, eval_interval=5), tmp_path / "run")
    res = run_cli("lm", "export-hf", "--run", tmp_path / "run", "--out", tmp_path / "hf")
    assert res.code == 0, res.err
    hf = transformers.AutoModelForCausalLM.from_pretrained(str(tmp_path / "hf"), local_files_only=True).eval()
    run = load_run(tmp_path / "run")
    idx = torch.randint(32, (2, 16))
    assert torch.allclose(hf(input_ids=idx).logits, run.model(idx)[0], atol=1e-5)
    assert run.data().root == token_data.root
