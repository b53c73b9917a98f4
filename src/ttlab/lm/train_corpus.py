"""Training on a corpus, as ``ttlab lm train`` does: the data prepared (by rank 0 first under ``torchrun``, the other
ranks then read its cache), the model's vocabulary set from the tokenizer, a CPU run's duration checked against a
limit, and one protocol run — :func:`ttlab.lm.trainer.train`, or :func:`ttlab.lm.trainer.train_converged` with
``two_pass``. The one place the DDP set-up (torchrun detection, prepare, barrier) lives.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ttlab.errors import TTLabInputError
from ttlab.lm.configs import MAX_HOURS, GPTConfig, TrainConfig
from ttlab.lm.corpus import CorpusSpec
from ttlab.lm.data import PreparedData, prepare_data
from ttlab.lm.distributed import barrier, init_distributed
from ttlab.lm.tokenizer import DEFAULT_MIN_FREQUENCY, DEFAULT_VOCAB_SIZE, TextTokenizer
from ttlab.lm.trainer import EvalFn, TrainResult, estimate_seconds, train, train_converged
from ttlab.validation import check_hours

NoteFn = Callable[[str], None]


@dataclass
class CorpusRun:
    """What :func:`train_on_corpus` returns: the run, the prepared data, and whether this process is rank 0 (the
    one that reports; the others return the same result without writing)."""

    result: TrainResult
    prepared: PreparedData
    is_main: bool

    def summary_line(self) -> str:
        """One plain-text line on the finished run: why it stopped, tokens, losses, speed."""
        s = self.result.summary
        test = "n/a" if s["test_loss"] is None else f"{s['test_loss']:.4f}"
        return (f"{self.result.out_dir}: {s['stop_reason']} after {s['iters']} iterations ({s['tokens_seen']:,} tokens, "
                f"{s['epochs']:.2f} epochs); val final {s['final_val_loss']:.4f}, best {s['best_val_loss']:.4f} @ "
                f"{s['best_iter']}, mean of 5 lowest {s['mean_5_lowest_val']:.4f}; test {test}; {s['tokens_per_s']:,.0f} "
                f"tokens/s, {s['ms_per_iter']:.1f} ms/iter")


MEMORY_SHARE = 0.8
"""A CPU run is refused when its estimated memory exceeds this share of the machine's memory (or ``memory_limit_gib``)."""


def train_memory_bytes(model: GPTConfig, cfg: TrainConfig) -> int:
    """Bytes one training step of ``model`` holds at its peak, by arithmetic (nothing is built): float32 weights,
    gradients and AdamW's two moments (16 bytes per parameter), the activations of one micro-batch kept for the
    backward pass (≈ 2·T·B·C·(34 + 5·H·T/C) bytes per layer, Korthikanti et al. 2022 in float32) and the logits with
    their gradient (2·B·T·V·4 bytes)."""
    B, T, C, L, H, V = cfg.batch_size, model.block_size, model.n_embd, model.n_layer, model.n_head, model.vocab_size
    params = V * C + T * C + L * (12 * C * C + 13 * C) + 2 * C
    activations = L * 2 * T * B * C * (34 + 5 * H * T // C)
    return 16 * params + activations + 2 * B * T * V * 4


def check_train_memory(model: GPTConfig, cfg: TrainConfig, memory_limit_gib: float | None = None) -> int:
    """Refuse (:class:`TTLabInputError`) a CPU run whose :func:`train_memory_bytes` exceed ``memory_limit_gib``
    (default :data:`MEMORY_SHARE` of this machine's memory) before anything is allocated; returns the estimate."""
    import os

    need = train_memory_bytes(model, cfg)
    if memory_limit_gib is None:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        limit, what = MEMORY_SHARE * total, f"{MEMORY_SHARE:.0%} of this machine's {total / 2**30:.1f} GiB"
    else:
        if not (math.isfinite(memory_limit_gib) and memory_limit_gib > 0):
            raise TTLabInputError(f"memory_limit_gib must be a positive number (got {memory_limit_gib})",
                                  params=("memory_limit_gib",))
        limit, what = memory_limit_gib * 2**30, f"memory_limit_gib = {memory_limit_gib:g}"
    if need > limit:
        raise TTLabInputError(
            f"this model and batch need ≈ {need / 2**30:,.1f} GiB to train (n_layer={model.n_layer}, "
            f"n_embd={model.n_embd}, block_size={model.block_size}, vocab {model.vocab_size:,}, batch_size="
            f"{cfg.batch_size}: weights, gradients, AdamW moments and one batch's activations), above {what}; use a "
            "smaller model, block_size or batch_size (grad_accum keeps the tokens per step)",
            params=("n_layer", "n_embd", "block_size", "batch_size") + (() if memory_limit_gib is None else
                                                                          ("memory_limit_gib",)))
    return need


def check_train_time(model: GPTConfig, cfg: TrainConfig, max_hours: float, note: NoteFn | None = None) -> float:
    """Refuse (:class:`TTLabInputError`) a run whose ``cfg.max_iters`` steps are estimated above ``max_hours`` on this
    CPU (:func:`ttlab.lm.trainer.estimate_seconds`); ``note`` gets the estimate; returns it in seconds."""
    check_hours(max_hours)
    seconds = estimate_seconds(model, cfg)
    hours = seconds / 3600
    if hours > max_hours:
        raise TTLabInputError(
            f"max_iters={cfg.max_iters:,} would take ~{hours:,.1f} h on this CPU (extrapolated from timed steps of "
            f"this model and batch; early stopping may end sooner), above max_hours={max_hours:g}; lower max_iters, "
            f"use a smaller model or batch_size, or raise max_hours to {math.ceil(hours)} to run it anyway",
            params=("max_iters", "max_hours", "model", "batch_size"))
    if note is not None:
        note(f"estimated training time ≤ ~{seconds / 60:.1f} min for {cfg.max_iters:,} steps and their "
             "evaluations (timed steps; early stopping can end sooner)")
    return seconds


def train_on_corpus(
    corpus: CorpusSpec,
    out_dir: str | Path,
    *,
    model: GPTConfig,
    train_cfg: TrainConfig,
    tokenizer: str | Path | TextTokenizer | None = None,
    vocab_size: int = DEFAULT_VOCAB_SIZE,
    min_frequency: int = DEFAULT_MIN_FREQUENCY,
    cache_dir: str | Path | None = None,
    resume: bool = False,
    two_pass: bool = False,
    max_hours: float = MAX_HOURS,
    memory_limit_gib: float | None = None,
    on_eval: EvalFn | None = None,
    progress: NoteFn | None = None,
    note: NoteFn | None = None,
) -> CorpusRun:
    """Prepare ``corpus`` (:func:`ttlab.lm.data.prepare_data`) and train ``model`` (its ``vocab_size`` set from the
    tokenizer) with ``train_cfg`` in ``out_dir``; works unchanged under ``torchrun --nproc_per_node N``.

    A CPU run is first checked against ``memory_limit_gib`` by arithmetic (:func:`check_train_memory`), then a new
    (or checkpoint-less) one timed against ``max_hours`` (:func:`check_train_time`). On rank 0,
    ``progress`` receives the data preparation's steps, ``note`` the time estimate, ``on_eval`` every evaluation's row.
    ``two_pass``: :func:`ttlab.lm.trainer.train_converged`. config.json's ``extra`` holds the corpus spec and the
    prepared data's summary."""
    check_hours(max_hours)  # before the data: a bad limit is refused at once
    dist = init_distributed(train_cfg.device)
    if dist.device == "cpu":  # before the data and the model: a size that cannot fit is refused by arithmetic
        check_train_memory(model.replace(vocab_size=max(model.vocab_size, vocab_size)), train_cfg, memory_limit_gib)
    options: dict[str, Any] = dict(tokenizer=tokenizer, vocab_size=vocab_size, min_frequency=min_frequency,
                                   cache_dir=cache_dir)
    if dist.is_main:  # rank 0 builds the cache; the others then find it
        prepared = prepare_data(corpus, progress=progress, **options)
    barrier()
    if not dist.is_main:
        prepared = prepare_data(corpus, **options)
    mcfg = model.replace(vocab_size=prepared.tokenizer.vocab_size)
    out = Path(out_dir)
    if dist.device == "cpu" and not (resume and (out / "ckpt.pt").exists()):
        check_train_time(mcfg, train_cfg, max_hours, note=note if dist.is_main else None)
    extra = {"corpus_spec": str(corpus.source), "data": prepared.describe()}
    run = train_converged if two_pass else train
    res = run(prepared.data, mcfg, train_cfg, out, resume=resume, on_eval=on_eval, extra=extra)
    return CorpusRun(res, prepared, dist.is_main)
