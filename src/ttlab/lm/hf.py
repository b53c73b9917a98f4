"""Hugging Face interoperability: ttlab GPT ⇄ ``transformers.GPT2LMHeadModel``, and hidden states of
either kind of model through one call.

The architectures are the same (pre-LN GPT-2 blocks, tied embeddings); the differences are that
GPT-2's ``Conv1D`` layers store weights transposed, GPT-2 always has biases (ours are zero when
``bias=False``), and GPT-2's default activation is the tanh-approximated GELU (the export uses
``activation_function="gelu"``, the exact one we train with). Needs the ``transformers`` package.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from ttlab.errors import TTLabInputError
from ttlab.lm.model import GPT, GPTConfig

_CONV1D = ("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj")


def _transformers() -> Any:
    try:
        import transformers
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise TTLabInputError("this needs the 'transformers' package: pip install 'ttlab[lm]'.") from exc
    return transformers


def to_hf_gpt2(model: GPT) -> Any:
    """An equivalent ``transformers.GPT2LMHeadModel`` (same logits and hidden states), in eval mode."""
    tf = _transformers()
    c = model.config
    hf_cfg = tf.GPT2Config(
        vocab_size=c.vocab_size, n_positions=c.block_size, n_embd=c.n_embd, n_layer=c.n_layer, n_head=c.n_head,
        activation_function="gelu", resid_pdrop=c.dropout, embd_pdrop=c.dropout, attn_pdrop=c.dropout,
        layer_norm_epsilon=1e-5, tie_word_embeddings=True, bos_token_id=None, eos_token_id=None,
    )
    hf = tf.GPT2LMHeadModel(hf_cfg)
    ours = model.state_dict()
    new = {}
    for name, target in hf.state_dict().items():
        src = name
        if src.startswith("lm_head."):
            src = "lm_head.weight"
        if src.endswith(".attn.bias") or src.endswith(".attn.masked_bias"):
            new[name] = target  # GPT-2's causal-mask buffers (older transformers)
            continue
        if src in ours:
            w = ours[src]
            if any(src.endswith(f"{m}.weight") for m in _CONV1D):
                w = w.t()
            new[name] = w.detach().clone()
        elif src.endswith(".bias"):  # our model has no biases: GPT-2's are zero
            new[name] = torch.zeros_like(target)
        else:
            raise TTLabInputError(f"no ttlab parameter for GPT-2 parameter {name}.")  # pragma: no cover
    hf.load_state_dict(new)
    return hf.eval()


def from_hf_gpt2(hf: Any) -> GPT:
    """A ttlab :class:`GPT` (with biases) holding the weights of a ``GPT2LMHeadModel``.

    The model must use the exact GELU (``activation_function="gelu"``) to be equivalent; GPT-2
    checkpoints use ``gelu_new`` and then differ slightly.
    """
    hc = hf.config
    cfg = GPTConfig(vocab_size=hc.vocab_size, block_size=hc.n_positions, n_layer=hc.n_layer, n_head=hc.n_head,
                    n_embd=hc.n_embd, dropout=0.0, bias=True)
    model = GPT(cfg)
    sd = hf.state_dict()
    new = {}
    for name in model.state_dict():
        src = name if name != "lm_head.weight" else "transformer.wte.weight"
        w = sd[src]
        if any(name.endswith(f"{m}.weight") for m in _CONV1D):
            w = w.t()
        new[name] = w.detach().clone()
    model.load_state_dict(new)
    return model.eval()


@torch.no_grad()
def hidden_states(model: Any, idx: torch.Tensor) -> list[torch.Tensor]:
    """The ``n_layer + 1`` hidden states (B, T, width) of a ttlab GPT or a transformers causal LM
    (Hugging Face convention: embeddings first, final LayerNorm applied to the last)."""
    if isinstance(model, GPT):
        return model.hidden_states(idx)
    out = model(input_ids=idx, output_hidden_states=True)
    return list(out.hidden_states)


def export_hf(run_dir: str | Path, out_dir: str | Path, which: str = "final") -> Path:
    """Write a ttlab run as a Hugging Face model folder (``save_pretrained`` + tokenizer)."""
    from ttlab.lm.trainer import load_run

    r = load_run(run_dir, which=which)
    hf = to_hf_gpt2(r.model)
    out = Path(out_dir)
    hf.save_pretrained(out)
    if r.tokenizer is not None:
        r.tokenizer.to_hf().save_pretrained(out)
    return out
