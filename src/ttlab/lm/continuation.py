"""Continue a run that stopped at its step cap: from its last checkpoint, at its final learning rate, until
early stopping fires.

A run stopped by ``max_iters`` has not converged. Re-training it from scratch with a larger cap changes its
cosine schedule (the schedule's length is the cap), so the longer run is a different experiment. A
continuation instead keeps everything the run had — weights, optimizer moments, data stream, best
validation loss and the evaluations since it — and raises only the cap: the schedule keeps its length, so
after the old cap the learning rate stays at the schedule's final value (:meth:`TrainConfig.lr_at`), a
schedule-free tail. Early stopping counts on from where the run was.

The continuation is a new run folder (the source is left as it was), seeded with the source's ckpt.pt and
best.pt and then trained with :func:`ttlab.lm.trainer.train` (``resume=True``), so it is resumable like any
run. Its result.json records where it came from under ``extra.continued_from``.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

from ttlab.errors import TTLabInputError
from ttlab.lm import trainer
from ttlab.lm.checkpoint import load_checkpoint_state, read_run_json, save_torch_atomic
from ttlab.lm.configs import GPTConfig, TrainConfig
from ttlab.lm.data import TokenizedCorpus
from ttlab.lm.trainer import RUNTIME_FIELDS, TrainResult

__all__ = ["continuation_config", "continue_run"]


def continuation_config(source: TrainConfig, max_iters: int) -> TrainConfig:
    """``source`` with the step cap raised to ``max_iters`` and the schedule's length kept, so that every step
    after ``source.max_iters`` runs at ``source.final_lr``; early stopping (``patience``) must be on."""
    if isinstance(max_iters, bool) or not isinstance(max_iters, int) or max_iters <= source.max_iters:
        raise TTLabInputError(f"a continuation's max_iters must be an integer above the source run's cap "
                              f"{source.max_iters}, got {max_iters!r}.", params=("max_iters",))
    if source.patience is None:
        raise TTLabInputError("a continuation runs until early stopping fires, but the source run has no patience "
                              "(early stopping off); continue only runs trained with patience.", params=("patience",))
    return replace(source, max_iters=max_iters, lr_decay_iters=source.schedule_length)


def _seed_folder(source: Path, out: Path, max_iters: int, runtime: TrainConfig | None) -> TrainConfig:
    """Write ``out``'s ckpt.pt (and best.pt) from the source's final checkpoint, with the continuation config;
    returns that config."""
    ckpt = source / "ckpt.pt"
    if not ckpt.exists():
        raise TTLabInputError(f"{source} holds no ckpt.pt: there is no run to continue.", params=("source_dir",))
    state = load_checkpoint_state(ckpt)
    if not state.get("finished") or state.get("stop_reason") != "max_iters":
        raise TTLabInputError(f"{source} did not stop at its step cap (finished: {state.get('finished')}, stop "
                              f"reason: {state.get('stop_reason')!r}); only a run stopped by max_iters is continued.",
                              params=("source_dir",))
    cfg = continuation_config(TrainConfig.from_dict(state["train_config"]), max_iters)
    if runtime is not None:
        cfg = replace(cfg, **{k: getattr(runtime, k) for k in RUNTIME_FIELDS})
    out.mkdir(parents=True, exist_ok=True)
    if (source / "best.pt").exists():
        tmp = out / "best.pt.tmp"
        shutil.copyfile(source / "best.pt", tmp)
        tmp.replace(out / "best.pt")
    # ckpt.pt last: its presence says the folder is seeded
    save_torch_atomic({**state, "train_config": cfg.to_dict(), "finished": False, "stop_reason": None}, out / "ckpt.pt")
    return cfg


def continue_run(
    data: TokenizedCorpus,
    model_cfg: GPTConfig,
    source_dir: str | Path,
    out_dir: str | Path,
    max_iters: int,
    *,
    runtime: TrainConfig | None = None,
    extra: dict[str, Any] | None = None,
) -> TrainResult:
    """Continue the step-capped run in ``source_dir`` into ``out_dir`` up to ``max_iters`` steps in all, at its
    final learning rate, until early stopping fires (see the module docstring).

    ``runtime`` supplies the runtime fields (device, compile, threads) when they should differ from the
    source's. Calling it again on the same ``out_dir`` resumes the continuation (or returns it when finished).
    """
    src, out = Path(source_dir), Path(out_dir)
    if src.resolve() == out.resolve():
        raise TTLabInputError("a continuation needs its own folder: out_dir is the source run's.", params=("out_dir",))
    if (out / "ckpt.pt").exists():  # seeded before: resume it (its config is the one it was seeded with)
        cfg = TrainConfig.from_dict(load_checkpoint_state(out / "ckpt.pt")["train_config"])
    else:
        cfg = _seed_folder(src, out, max_iters, runtime)
    if cfg.max_iters != max_iters:
        raise TTLabInputError(f"{out} holds a continuation to {cfg.max_iters} steps, not {max_iters}; choose another "
                              "out_dir.", params=("out_dir", "max_iters"))
    src_result = src / "result.json"
    info = {"continued_from": str(src), "continued_at": read_run_json(src_result)["iters"] if src_result.exists() else None}
    # trainer.train looked up at call time (not bound at import), as every caller of the trainer sees it
    return trainer.train(data, model_cfg, cfg, out, resume=True, extra={**(extra or {}), "continuation": info})
