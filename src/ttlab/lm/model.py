"""A nanoGPT-class decoder-only transformer: pre-LN blocks, causal SDPA attention, tied embeddings.

The whole model fits on one screen, as in nanoGPT: token + position embeddings, ``n_layer`` blocks
``x + attn(ln_1(x))``, ``x + mlp(ln_2(x))``, a final LayerNorm and an output layer that shares its
weight with the token embedding. Initialisation follows GPT-2 (normal(0, 0.02), residual projections
scaled by 1/√(2·n_layer)).

Hidden states follow the Hugging Face convention (``output_hidden_states``): entry 0 is the input
embedding (token + position), entry i the output of block i, and the last entry has the final
LayerNorm applied, so ``hidden_states(idx)[-1]`` is what the output layer reads.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn as nn
from torch.nn import functional as F

from ttlab.errors import TTLabInputError
from ttlab.lm.configs import GPTConfig

__all__ = ["GPT"]


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention through ``F.scaled_dot_product_attention``."""

    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.n_head = cfg.n_head
        self.dropout = cfg.dropout
        self.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)
        self.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        self.resid_dropout = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        hs = C // self.n_head
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)
        y = F.scaled_dot_product_attention(
            q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True
        )
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    """Position-wise feed-forward layer, width 4·n_embd, exact GELU."""

    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.c_fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd, bias=cfg.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    """Pre-LN transformer block."""

    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.mlp = MLP(cfg)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """Decoder-only language model; ``forward(idx, targets)`` returns ``(logits, loss)``."""

    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.config = cfg
        self.transformer = nn.ModuleDict(
            dict(
                wte=nn.Embedding(cfg.vocab_size, cfg.n_embd),
                wpe=nn.Embedding(cfg.block_size, cfg.n_embd),
                drop=nn.Dropout(cfg.dropout),
                h=nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)]),
                ln_f=nn.LayerNorm(cfg.n_embd, bias=cfg.bias),
            )
        )
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg.n_layer))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def num_params(self, non_embedding: bool = True) -> int:
        """Parameter count; ``non_embedding`` drops token and position embeddings (Kaplan et al.'s N).

        The token embedding is shared with the output layer, so it is counted once in the total.
        """
        n = sum(p.numel() for p in self.parameters())
        if non_embedding:
            n -= self.transformer.wte.weight.numel() + self.transformer.wpe.weight.numel()
        return n

    def _embed(self, idx: torch.Tensor) -> torch.Tensor:
        T = idx.size(1)
        if T > self.config.block_size:
            raise TTLabInputError(f"sequence of length {T} is longer than block_size {self.config.block_size}.")
        pos = torch.arange(T, dtype=torch.long, device=idx.device)
        return self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))

    def forward(
        self, idx: torch.Tensor, targets: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Logits (B, T, vocab) for token ids ``idx`` (B, T); mean cross-entropy if ``targets`` given."""
        x = self._embed(idx)
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1), ignore_index=-1)
        return logits, loss

    def hidden_states(self, idx: torch.Tensor) -> list[torch.Tensor]:
        """The ``n_layer + 1`` hidden states (B, T, n_embd), Hugging Face convention (see module doc)."""
        x = self._embed(idx)
        out = [x]
        for i, block in enumerate(self.transformer.h):
            x = block(x)
            out.append(self.transformer.ln_f(x) if i == len(self.transformer.h) - 1 else x)
        if not self.transformer.h:  # pragma: no cover - n_layer >= 1 is enforced
            out[-1] = self.transformer.ln_f(x)
        return out

    def optimizer_groups(self, weight_decay: float) -> list[dict[str, Any]]:
        """AdamW parameter groups as in nanoGPT: decay matrices/embeddings, not biases or norms."""
        params = [p for p in self.parameters() if p.requires_grad]
        decay = [p for p in params if p.dim() >= 2]
        no_decay = [p for p in params if p.dim() < 2]
        return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]

    @torch.no_grad()
    def generate(
        self,
        idx: torch.Tensor,
        max_new_tokens: int,
        temperature: float = 1.0,
        top_k: int | None = None,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        """Sample ``max_new_tokens`` continuations of ``idx`` (B, T); the context is cropped to block_size."""
        if temperature <= 0:
            raise TTLabInputError(f"temperature must be > 0, got {temperature}.")
        for _ in range(max_new_tokens):
            cond = idx[:, -self.config.block_size:]
            logits = self(cond)[0][:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("inf")
            probs = F.softmax(logits, dim=-1)
            nxt = torch.multinomial(probs, num_samples=1, generator=generator)
            idx = torch.cat((idx, nxt), dim=1)
        return idx
