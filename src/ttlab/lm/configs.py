"""The configurations of the language models, their training and their token embeddings: :class:`GPTConfig` (a model's
shape, with the size presets :data:`MODEL_PRESETS`), :class:`TrainConfig` (optimisation, evaluation, stopping,
runtime), :class:`SampleConfig` and :class:`EmbedConfig` (what ``ttlab id embed`` samples).

They hold no tensors and import no torch, so the command line reads its defaults from them at start-up; this is
their one home (:mod:`ttlab.lm.model`, :mod:`ttlab.lm.trainer` and :mod:`ttlab.lm.embed` import them from here).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from ttlab.configs import DictConfig, setting
from ttlab.errors import TTLabInputError
from ttlab.validation import POSITIVE_INT, SEED, Declared, Interval, Options

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
DTYPES = ("auto", "float32", "bfloat16", "float16")
"""The floating-point types a run can train in (``auto``: float32 on the CPU, bfloat16/float16 on CUDA)."""
MAX_HOURS = 24.0
"""A CPU run whose steps are estimated above this many hours is refused (``ttlab lm train --max-hours``)."""


@dataclass(frozen=True)
class GPTConfig(DictConfig, Declared):
    """Shape of a :class:`GPT`. ``bias`` adds biases to Linear and LayerNorm layers (GPT-2 has them)."""

    vocab_size: int = 2048
    block_size: int = setting(128, "Context length.")
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    dropout: float = setting(0.0, "Dropout rate.")
    bias: bool = setting(False, "Biases in Linear and LayerNorm layers.")

    parameter_constraints = {**dict.fromkeys(("vocab_size", "block_size", "n_layer", "n_head", "n_embd"), POSITIVE_INT),
                             "dropout": [Interval(numbers.Real, 0, 1, closed="left")], "bias": ["boolean"]}

    def check(self) -> None:
        """``n_embd`` divisible by ``n_head``."""
        if self.n_embd % self.n_head:
            raise TTLabInputError(
                f"n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head}); "
                f"e.g. n_embd={self.n_head * max(1, round(self.n_embd / self.n_head))}.", params=("n_embd", "n_head"))

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
class TrainConfig(DictConfig, Declared):
    """Optimisation, evaluation, stopping and runtime settings of one training run."""

    batch_size: int = setting(12, "Sequences per micro-batch (per process).")
    grad_accum: int = setting(1, "Micro-batches per optimiser step.")
    max_iters: int = setting(2000, "Optimiser steps (upper bound with early stopping).")
    lr: float = setting(1e-3, "Peak learning rate.")
    min_lr: float | None = setting(None, "Final learning rate (default lr/10).")
    warmup_iters: int = setting(100, "Linear warmup steps.")
    lr_decay_iters: int | None = setting(None, "Schedule length: cosine decay ends here (default: max-iters).")
    weight_decay: float = setting(0.1, "AdamW weight decay (matrices and embeddings).")
    beta1: float = setting(0.9, "AdamW beta1.")
    beta2: float = setting(0.95, "AdamW beta2.")
    grad_clip: float = setting(1.0, "Clip the gradient norm (0: off).")
    eval_interval: int = setting(100, "Steps between evaluations (and checkpoints).")
    eval_iters: int = setting(20, "Validation windows = eval-iters × batch-size (all, if fewer).")
    patience: int | None = setting(None, "Early stopping: evaluations without improvement (default: none).")
    min_delta: float = setting(0.0, "Early stopping: smallest improvement that counts.")
    max_tokens: int | None = setting(None, "Train on the first N training tokens only (the data-size knob).")
    test_max_tokens: int | None = setting(None, "Evaluate the test loss on at most N tokens.")
    eval_test: bool = setting(False, "Also evaluate test windows at every evaluation (the paper's mean of the 5 lowest).")
    seed: int = setting(0, "Seed of initialisation, batches and dropout.")
    keep_best: bool = setting(True, "Keep best.pt (lowest validation loss).")
    device: str = setting("auto", "auto | cpu | cuda | cuda:N.")
    dtype: str = setting("auto", "auto (float32 on the CPU, bfloat16/float16 on CUDA) | float32 | bfloat16 | float16 (CUDA).")
    compile: bool = setting(False, "torch.compile the model.")
    threads: int | None = setting(None, "torch CPU threads (during the run only).")

    parameter_constraints = {
        **dict.fromkeys(("batch_size", "grad_accum", "max_iters", "eval_interval", "eval_iters"), POSITIVE_INT),
        "warmup_iters": [Interval(numbers.Integral, 0, None)],
        "lr": [Interval(numbers.Real, 0, None, closed="neither")],
        "min_lr": [Interval(numbers.Real, 0, None), None],
        "lr_decay_iters": [*POSITIVE_INT, None],
        **dict.fromkeys(("weight_decay", "grad_clip", "min_delta"), [Interval(numbers.Real, 0, None)]),
        **dict.fromkeys(("beta1", "beta2"), [Interval(numbers.Real, 0, 1, closed="left")]),
        **dict.fromkeys(("patience", "max_tokens", "test_max_tokens", "threads"), [*POSITIVE_INT, None]),
        "dtype": [Options(DTYPES)],
        **dict.fromkeys(("eval_test", "keep_best", "compile"), ["boolean"]),
        "seed": SEED,
    }

    def check(self) -> None:
        """``min_lr`` at most ``lr``."""
        if self.min_lr is not None and self.min_lr > self.lr:
            raise TTLabInputError(f"min_lr must be in [0, lr={self.lr}], got {self.min_lr}.", params=("min_lr", "lr"))

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


WHICH = ("final", "best", "init")
"""Which weights of a run folder :func:`ttlab.lm.checkpoint.load_model` opens: last checkpoint, best validation, or the
untrained start."""


DEFAULT_PROMPT = "\n"
"""What :func:`ttlab.lm.checkpoint.sample_text` continues when given no prompt: a line break (a fresh start)."""


@dataclass(frozen=True)
class SampleConfig(Declared):
    """How :func:`ttlab.lm.checkpoint.sample_text` continues a prompt: ``tokens`` new tokens sampled at ``temperature``
    among the ``top_k`` most likely (None: all) with the ``seed``, from the ``which`` weights of the run."""

    tokens: int = setting(100, "Tokens to generate.")
    temperature: float = setting(0.8, "Sampling temperature (> 0).")
    top_k: int | None = setting(200, "Sample among the k most likely tokens.")
    seed: int = setting(0, "Sampling seed.")
    which: str = setting("best", "best (best.pt; a run without one: final, with a note) | final (ckpt.pt) | init.")

    parameter_constraints = {"tokens": POSITIVE_INT, "temperature": [Interval(numbers.Real, 0, None, closed="neither")],
                             "top_k": [*POSITIVE_INT, None], "which": [Options(WHICH)], "seed": SEED}


WINDOWS = ("random", "prefix")
"""Where :class:`EmbedConfig` places a document's window."""
SPLITS = ("train", "val", "test")
"""The document splits :class:`EmbedConfig` can embed."""


@dataclass(frozen=True)
class EmbedConfig(Declared):
    """What to sample: layers, tokens per document, window length and placement, documents, seed."""

    layers: tuple[int, ...] | None = (-1,)  # None: every layer (0 … n_layer)
    tokens_per_doc: int = setting(32, "Token positions sampled per document (per group with --position-groups).")
    context: int = setting(1024, "Window length in tokens (clipped to the model's context).")
    window: str = setting("random", "random (a random window per document) | prefix (the document's start, as the "
                          "authors' code).")
    windows_per_doc: int = setting(1, "Non-overlapping windows per document (for corpora of few long documents).")
    max_docs: int | None = setting(None, "Embed at most N documents.")
    seed: int = setting(0, "Seed of window and position sampling.")
    batch_docs: int = setting(8, "Documents per forward pass.")
    position_edges: tuple[int, ...] | None = None  # stratify positions by these window ranges
    split: str = setting("test", "Which document split to embed: train | val | test.")
    shuffle_tokens: bool = False  # control: permute each window's tokens (seeded) before the forward pass

    parameter_constraints = {
        **dict.fromkeys(("tokens_per_doc", "context", "batch_docs", "windows_per_doc"), POSITIVE_INT),
        "max_docs": [*POSITIVE_INT, None], "window": [Options(WINDOWS)], "split": [Options(SPLITS)],
        "shuffle_tokens": ["boolean"], "seed": SEED}

    def check(self) -> None:
        """``layers`` not empty; ``position_edges`` increasing and inside the window."""
        if self.layers is not None and len(self.layers) == 0:
            raise TTLabInputError("layers is empty; give at least one layer index (e.g. -1) or None for all.",
                                  params=("layers",))
        e = self.position_edges
        if e is not None:
            if len(e) < 2 or any(int(a) >= int(b) for a, b in zip(e, e[1:])) or int(e[0]) < 0:
                raise TTLabInputError(
                    f"position_edges must be at least two increasing non-negative integers (e.g. 0,64,256,1024), got {list(e)}.",
                    params=("position_edges",))
            if int(e[-1]) > self.context:
                raise TTLabInputError(f"the last position edge {e[-1]} exceeds the window length context={self.context}.",
                                      params=("position_edges", "context"))

    def to_dict(self) -> dict[str, Any]:
        """Plain dict."""
        d = asdict(self)
        d["layers"] = None if self.layers is None else list(self.layers)
        d["position_edges"] = None if self.position_edges is None else list(self.position_edges)
        return d
