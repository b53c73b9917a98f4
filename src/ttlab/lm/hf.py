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
from ttlab.lm.configs import GPTConfig
from ttlab.lm.model import GPT

_CONV1D = ("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj")


def transformers_module() -> Any:
    """The ``transformers`` package (a clear error naming the extra to install when it is missing)."""
    try:
        import transformers
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise TTLabInputError("this needs the 'transformers' package: pip install 'ttlab[lm]'.") from exc
    return transformers


def to_hf_gpt2(model: GPT) -> Any:
    """An equivalent ``transformers.GPT2LMHeadModel`` (same logits and hidden states), in eval mode."""
    tf = transformers_module()
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


#: Attribute names of the final normalisation layer on a model's backbone, most common first.
_FINAL_NORM_NAMES = ("norm", "ln_f", "final_layer_norm", "final_layernorm", "norm_f", "ln_out")


def final_norm_module(model: Any) -> torch.nn.Module | None:
    """The final norm layer (applied after the last block, before the LM head), or ``None`` if not found.

    ``transformer.ln_f`` for a ttlab GPT and GPT-2, ``model.norm`` for Llama/Gemma-style models.
    """
    if isinstance(model, GPT):
        return model.transformer.ln_f
    for base in (getattr(model, "base_model", None), getattr(model, "model", None),
                 getattr(model, "transformer", None), model):
        if base is None:
            continue
        for name in _FINAL_NORM_NAMES:
            mod = getattr(base, name, None)
            if isinstance(mod, torch.nn.Module):
                return mod
    return None


@torch.no_grad()
def raw_hidden_states(model: Any, idx: torch.Tensor) -> list[torch.Tensor]:
    """The hidden states of ``idx`` as the model returns them (a ttlab GPT's own; a Hugging Face model's backbone
    ``output_hidden_states``), before any convention is applied."""
    if isinstance(model, GPT):
        return model.hidden_states(idx)
    # run the backbone only: the LM head is not needed, and for a large vocabulary it dominates the cost
    # (Gemma 3 270M: 262k x 640 logits per token, ~7x the work of all 18 blocks at 256 tokens)
    base = getattr(model, "base_model", None)
    runner = base if isinstance(base, torch.nn.Module) and base is not model else model
    out = runner(input_ids=idx, output_hidden_states=True, use_cache=False)
    return list(out.hidden_states)


@torch.no_grad()
def hidden_states(model: Any, idx: torch.Tensor, *, final_norm: bool | None = None) -> list[torch.Tensor]:
    """The ``n_layer + 1`` hidden states (B, T, width) of a ttlab GPT or a transformers causal LM.

    Hugging Face convention: the embedding output first, then one per block. ``final_norm=None``
    returns the last one as the model itself does (ttlab GPT, and GPT-2/Llama/Gemma 3 in
    transformers 4.x–5.x: with the final norm applied; :func:`final_norm_applied` checks a model);
    ``True``/``False`` make it the output/input of the final norm layer whatever the model does,
    i.e. normalised features or the raw residual stream of the last block.
    """
    if final_norm is None:
        return raw_hidden_states(model, idx)
    norm = final_norm_module(model)
    if norm is None:
        raise TTLabInputError(
            f"cannot find the final norm layer of {type(model).__name__} (looked for {', '.join(_FINAL_NORM_NAMES)} "
            "on its backbone); call with final_norm=None to take the hidden states as the model returns them."
        )
    seen: dict[str, torch.Tensor] = {}

    def hook(_mod: Any, args: tuple, out: Any) -> None:
        seen["in"], seen["out"] = args[0], out

    handle = norm.register_forward_hook(hook)
    try:
        hs = raw_hidden_states(model, idx)
    finally:
        handle.remove()
    if "out" not in seen:  # pragma: no cover - a model whose forward skips its own norm layer
        raise TTLabInputError(f"the final norm layer of {type(model).__name__} was not called in its forward pass.")
    hs[-1] = seen["out"] if final_norm else seen["in"]
    return hs


@torch.no_grad()
def final_norm_applied(model: Any, idx: torch.Tensor | None = None) -> bool | None:
    """Whether the last hidden state :func:`hidden_states` returns (with ``final_norm=None``) already has
    the final norm applied, found by comparing it with the norm layer's input and output captured by a
    forward hook (one forward pass of 8 tokens). ``None`` when there is no recognisable norm layer or
    the last state is neither."""
    norm = final_norm_module(model)
    if norm is None:
        return None
    if idx is None:
        emb = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
        vocab = int(emb.num_embeddings) if emb is not None else int(model.config.vocab_size)
        device = next(model.parameters()).device
        idx = (torch.arange(1, 9, device=device) * 7919 % vocab)[None]
    seen: dict[str, torch.Tensor] = {}

    def hook(_mod: Any, args: tuple, out: Any) -> None:
        seen["in"], seen["out"] = args[0], out

    handle = norm.register_forward_hook(hook)
    try:
        raw = raw_hidden_states(model, idx)[-1]
    finally:
        handle.remove()
    if "out" not in seen:
        return None
    scale = raw.abs().max().clamp_min(1e-12)
    if (raw - seen["out"]).abs().max() <= 1e-5 * scale:
        return True
    if (raw - seen["in"]).abs().max() <= 1e-5 * scale:
        return False
    return None


def export_hf(run_dir: str | Path, out_dir: str | Path, which: str = "final") -> Path:
    """Write a ttlab run as a Hugging Face model folder (``save_pretrained`` + tokenizer)."""
    from ttlab.lm.checkpoint import load_run

    r = load_run(run_dir, which=which)
    hf = to_hf_gpt2(r.model)
    out = Path(out_dir)
    hf.save_pretrained(out)
    if r.tokenizer is not None:
        r.tokenizer.to_hf().save_pretrained(out)
    return out
