"""Regressors R^D → R for the manifold experiment: transformers (softmax and the theory's ReLU
attention) that read x as a sequence of tokens, and an MLP baseline. nanoGPT-style PyTorch.

Tokenisation (Definition 1 of paper B): x ∈ R^D is cut into l = ⌈D / chunk⌉ chunks of ``chunk``
coordinates (zero-padded); each chunk is mapped linearly to a token of width ``n_embd`` and a
positional encoding is added (``chunk=1`` is the paper's one-scalar-per-token embedding E′∘U).

* ``arch="softmax"``: pre-LayerNorm blocks of bidirectional multi-head softmax attention and a
  GELU MLP; the prediction is a linear head on the final-LayerNormed last token.
* ``arch="relu"`` (paper B, Definition 1 / Appendix D): residual blocks of multi-head attention
  with σ = ReLU in place of softmax, A(h_i) = Σ_j ReLU(⟨W_Q h_i, W_K h_j⟩/√d_h) W_V h_j / l, and
  token-wise ReLU feed-forward layers; no normalisation layers; fixed sinusoidal positional
  encoding; the output is the first entry of the last token. (The 1/√d_h and 1/l factors are
  fixed rescalings that the weights could absorb; they keep training stable at initialisation.)
* ``arch="mlp"``: ``n_layer`` hidden ReLU layers of width ``n_embd``.

The architecture of a network is a :class:`ttlab.scaling.regressor_config.RegressorConfig` (no torch there).
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from ttlab.errors import TTLabInputError
from ttlab.scaling.regressor_config import RegressorConfig

__all__ = ["MLPRegressor", "TransformerRegressor", "build_regressor", "count_parameters", "train_step"]


def sinusoidal_positions(n_tokens: int, n_embd: int) -> torch.Tensor:
    """The fixed sinusoidal positional encoding of Vaswani et al., shape (l, n_embd)."""
    pos = torch.arange(n_tokens, dtype=torch.float32)[:, None]
    i = torch.arange(0, n_embd, 2, dtype=torch.float32)
    angle = pos / (10000.0 ** (i / n_embd))
    pe = torch.zeros(n_tokens, n_embd)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : n_embd // 2])
    return pe


class SelfAttention(nn.Module):
    """Bidirectional multi-head self-attention with softmax or ReLU scores."""

    def __init__(self, n_embd: int, n_head: int, kind: str) -> None:
        super().__init__()
        self.n_head, self.kind = n_head, kind
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        if self.kind == "softmax":
            y = F.scaled_dot_product_attention(q, k, v)
        else:  # ReLU in place of softmax (paper B, Definition 1), averaged over the l tokens
            att = F.relu(q @ k.transpose(-2, -1) / math.sqrt(k.size(-1))) / T
            y = att @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    """Residual attention + token-wise feed-forward block (pre-LN for softmax, no norm for ReLU)."""

    def __init__(self, n_embd: int, n_head: int, mlp_ratio: int, kind: str) -> None:
        super().__init__()
        norm = kind == "softmax"
        self.ln_1 = nn.LayerNorm(n_embd) if norm else nn.Identity()
        self.attn = SelfAttention(n_embd, n_head, kind)
        self.ln_2 = nn.LayerNorm(n_embd) if norm else nn.Identity()
        self.mlp = nn.Sequential(
            nn.Linear(n_embd, mlp_ratio * n_embd),
            nn.GELU() if norm else nn.ReLU(),
            nn.Linear(mlp_ratio * n_embd, n_embd),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class TransformerRegressor(nn.Module):
    """x ∈ R^D → tokens (chunks + positions) → blocks → scalar read from the last token."""

    def __init__(self, cfg: RegressorConfig) -> None:
        super().__init__()
        if cfg.arch == "mlp":
            raise TTLabInputError("TransformerRegressor needs arch 'softmax' or 'relu'")
        self.cfg = cfg
        l, C = cfg.n_tokens, cfg.n_embd
        self.pad = l * cfg.chunk - cfg.ambient
        self.wte = nn.Linear(cfg.chunk, C)
        pos = cfg.pos or ("learned" if cfg.arch == "softmax" else "sinusoidal")
        if pos == "learned":
            self.wpe = nn.Parameter(torch.zeros(l, C))
        else:
            self.register_buffer("wpe", sinusoidal_positions(l, C), persistent=False)
        self.blocks = nn.ModuleList(Block(C, cfg.n_head, cfg.mlp_ratio, cfg.arch) for _ in range(cfg.n_layer))
        if cfg.arch == "softmax":
            self.ln_f = nn.LayerNorm(C)
            self.head = nn.Linear(C, 1)
        self.apply(self._init_weights)
        if isinstance(self.wpe, nn.Parameter):
            nn.init.normal_(self.wpe, std=0.02)
        for name, p in self.named_parameters():  # GPT-2 scaled init of residual projections
            if name.endswith("c_proj.weight") or name.endswith("mlp.2.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg.n_layer))
        nn.init.normal_(self.wte.weight, std=1.0 / math.sqrt(cfg.chunk))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)

    def tokens(self, x: torch.Tensor) -> torch.Tensor:
        """Embed a batch (B, D) as a token sequence (B, l, n_embd)."""
        if self.pad:
            x = F.pad(x, (0, self.pad))
        return self.wte(x.view(x.shape[0], self.cfg.n_tokens, self.cfg.chunk)) + self.wpe

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.tokens(x)
        for block in self.blocks:
            h = block(h)
        if self.cfg.arch == "softmax":
            return self.head(self.ln_f(h[:, -1])).squeeze(-1)
        return h[:, -1, 0]  # the decoding layer of Definition 1: first entry of the last token


class MLPRegressor(nn.Module):
    """Fully connected ReLU network with ``n_layer`` hidden layers of width ``n_embd``."""

    def __init__(self, cfg: RegressorConfig) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        width_in = cfg.ambient
        for _ in range(cfg.n_layer):
            layers += [nn.Linear(width_in, cfg.n_embd), nn.ReLU()]
            width_in = cfg.n_embd
        layers.append(nn.Linear(width_in, 1))
        self.net = nn.Sequential(*layers)
        self.cfg = cfg

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x).squeeze(-1)


def build_regressor(cfg: RegressorConfig) -> nn.Module:
    """The model for ``cfg.arch``."""
    return MLPRegressor(cfg) if cfg.arch == "mlp" else TransformerRegressor(cfg)


def count_parameters(model: nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def train_step(model: nn.Module, opt: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor, lr: float,
               grad_clip: float) -> torch.Tensor | None:
    """One optimiser step on the mean squared error of ``model(x)`` against ``y`` at learning rate ``lr``, the
    gradient norm clipped at ``grad_clip``; returns the loss, or None (and no step) when it is not finite."""
    for group in opt.param_groups:
        group["lr"] = lr
    loss = torch.mean((model(x) - y) ** 2)
    if not torch.isfinite(loss):
        return None
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    opt.step()
    return loss
