"""The configurations of the language models and their training: :class:`GPTConfig` (a model's shape, with the
size presets :data:`MODEL_PRESETS`) and :class:`TrainConfig` (optimisation, evaluation, stopping, runtime).

They hold no tensors and import no torch, so the command line reads its defaults from them at start-up;
:mod:`ttlab.lm.model` and :mod:`ttlab.lm.trainer` re-export them.

Imports: ttlab.configs, ttlab.errors; nothing else of ttlab.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any

from ttlab.configs import DictConfig
from ttlab.errors import TTLabInputError

# Model sizes for sweeps (``--model NAME``). The last three are GPT-2's shapes (124M, 350M, 774M with
# GPT-2's vocabulary); the small ones fit a CPU. ``block_size`` and ``vocab_size`` come from the run.
MODEL_PRESETS: dict[str, dict[str, int]] = {
    "nano": dict(n_layer=2, n_head=2, n_embd=64),
    "micro": dict(n_layer=4, n_head=4, n_embd=128),
    "mini": dict(n_layer=6, n_head=6, n_embd=192),
    "small": dict(n_layer=8, n_head=8, n_embd=256),
    "medium": dict(n_layer=8, n_head=8, n_embd=384),
    "gpt2": dict(n_layer=12, n_head=12, n_embd=768),
    "gpt2-medium": dict(n_layer=24, n_head=16, n_embd=1024),
    "gpt2-large": dict(n_layer=36, n_head=20, n_embd=1280),
}
DEFAULT_MODEL = "micro"
"""The size preset a run or a data sweep uses when none is given."""


@dataclass(frozen=True)
class GPTConfig(DictConfig):
    """Shape of a :class:`GPT`. ``bias`` adds biases to Linear and LayerNorm layers (GPT-2 has them)."""

    vocab_size: int = 2048
    block_size: int = 128
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    dropout: float = 0.0
    bias: bool = False

    def __post_init__(self) -> None:
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise TTLabInputError(f"GPTConfig.{name} must be a positive integer, got {value!r}.")
        if self.n_embd % self.n_head:
            raise TTLabInputError(
                f"n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head}); "
                f"e.g. n_embd={self.n_head * max(1, round(self.n_embd / self.n_head))}."
            )
        if not 0.0 <= self.dropout < 1.0:
            raise TTLabInputError(f"dropout must be in [0, 1), got {self.dropout}.")

    @classmethod
    def from_preset(cls, name: str, **overrides: Any) -> "GPTConfig":
        """A config from :data:`MODEL_PRESETS` with field overrides (``None`` values are ignored)."""
        if name not in MODEL_PRESETS:
            raise TTLabInputError(f"unknown model preset {name!r}; choose one of: {', '.join(MODEL_PRESETS)}.")
        base = dict(MODEL_PRESETS[name])
        base.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**base)

    def replace(self, **changes: Any) -> "GPTConfig":
        """A copy with some fields changed, validated like a new config (as :func:`dataclasses.replace`)."""
        unknown = sorted(set(changes) - {f.name for f in fields(self)})
        if unknown:
            raise TTLabInputError(f"unknown GPTConfig field(s): {', '.join(unknown)}.")
        return replace(self, **changes)


@dataclass(frozen=True)
class TrainConfig(DictConfig):
    """Optimisation, evaluation, stopping and runtime settings of one training run."""

    batch_size: int = 12
    grad_accum: int = 1
    max_iters: int = 2000
    lr: float = 1e-3
    min_lr: float | None = None  # None: lr / 10
    warmup_iters: int = 100
    lr_decay_iters: int | None = None  # schedule length; None: max_iters
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.95
    grad_clip: float = 1.0  # 0 disables clipping
    eval_interval: int = 100
    eval_iters: int = 20  # validation windows = eval_iters × batch_size (or all, if fewer)
    patience: int | None = None  # early stopping after this many evaluations without improvement
    min_delta: float = 0.0
    max_tokens: int | None = None  # use only the first N training tokens (the data-size knob)
    test_max_tokens: int | None = None  # cap on the test tokens evaluated at the end
    eval_test: bool = False  # also evaluate test windows at every evaluation (the paper's "5 lowest test losses")
    seed: int = 0
    keep_best: bool = True
    device: str = "auto"
    dtype: str = "auto"  # float32 | bfloat16 | float16 | auto (float32 on CPU, bf16/fp16 on CUDA)
    compile: bool = False
    threads: int | None = None

    def __post_init__(self) -> None:
        pos_int = ("batch_size", "grad_accum", "max_iters", "eval_interval", "eval_iters")
        for name in pos_int:
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise TTLabInputError(f"{name} must be a positive integer, got {v!r}.")
        if self.warmup_iters < 0:
            raise TTLabInputError(f"warmup_iters must be >= 0, got {self.warmup_iters}.")
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise TTLabInputError(f"lr must be a positive number, got {self.lr}.")
        if self.min_lr is not None and not 0 <= self.min_lr <= self.lr:
            raise TTLabInputError(f"min_lr must be in [0, lr={self.lr}], got {self.min_lr}.")
        if self.lr_decay_iters is not None and self.lr_decay_iters < 1:
            raise TTLabInputError(f"lr_decay_iters must be >= 1, got {self.lr_decay_iters}.")
        if self.weight_decay < 0 or self.grad_clip < 0 or self.min_delta < 0:
            raise TTLabInputError("weight_decay, grad_clip and min_delta must be >= 0.")
        if not (0 <= self.beta1 < 1 and 0 <= self.beta2 < 1):
            raise TTLabInputError(f"betas must be in [0, 1), got ({self.beta1}, {self.beta2}).")
        if self.patience is not None and self.patience < 1:
            raise TTLabInputError(f"patience must be >= 1 (or None to disable early stopping), got {self.patience}.")
        for name in ("max_tokens", "test_max_tokens", "threads"):
            v = getattr(self, name)
            if v is not None and v < 1:
                raise TTLabInputError(f"{name} must be >= 1 when given, got {v}.")
        if self.dtype not in ("auto", "float32", "bfloat16", "float16"):
            raise TTLabInputError(f"dtype must be auto, float32, bfloat16 or float16, got {self.dtype!r}.")

    @property
    def schedule_length(self) -> int:
        """Iterations over which the learning rate decays (``lr_decay_iters`` or ``max_iters``)."""
        return self.lr_decay_iters if self.lr_decay_iters is not None else self.max_iters

    @property
    def final_lr(self) -> float:
        """Learning rate at and after the end of the schedule."""
        return self.min_lr if self.min_lr is not None else self.lr / 10

    def lr_at(self, it: int) -> float:
        """Learning rate of step ``it`` (0-based): linear warmup, cosine decay, then constant ``final_lr``."""
        if it < self.warmup_iters:
            return self.lr * (it + 1) / (self.warmup_iters + 1)
        L = self.schedule_length
        if it >= L:
            return self.final_lr
        ratio = (it - self.warmup_iters) / max(1, L - self.warmup_iters)
        return self.final_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (self.lr - self.final_lr)
