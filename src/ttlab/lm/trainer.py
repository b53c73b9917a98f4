"""The training loop: AdamW, linear warmup + cosine decay, gradient clipping, periodic evaluation on
fixed validation windows, early stopping, atomic checkpoints with exact resume, DDP under torchrun.

A run folder holds::

    config.json   model + training config, data summary (written at the start)
    ckpt.pt       latest full state (model, optimizer, RNGs, history) — atomic, resumable
    best.pt       weights with the lowest validation loss so far (``keep_best``)
    metrics.csv   one row per evaluation: iter, tokens_seen, train_loss, val_loss, lr, elapsed_s
    result.json   written at the end: config, versions, losses, test loss, timing
    tokenizer.json  the tokenizer of the data (so the folder is self-contained)

``train_loss`` in metrics.csv is the mean training-batch loss over the steps since the previous
evaluation (free to compute; NaN at iteration 0). ``val_loss`` is the mean per-token loss over a fixed
set of validation windows (every aligned window when the split is small enough, else a seeded sample of
``eval_iters × batch_size`` of them, the same for every seed), so evaluations are comparable. The test loss is
computed once at the end over every aligned window of the test split (or ``test_max_tokens``).

Resume is exact: an interrupted run continued with ``resume=True`` produces the same losses, bit for
bit, as one that never stopped (same device, dtype and thread count).

What it is for: training the GPT language models of the data-scaling experiments (Paper B, Section 3). Its
settings are :class:`ttlab.lm.configs.TrainConfig`; the checkpoint format and reading run folders back
(:func:`ttlab.lm.checkpoint.load_run`, :func:`ttlab.lm.checkpoint.load_model`) are :mod:`ttlab.lm.checkpoint`'s, the
evaluation windows, losses and metrics.csv :mod:`ttlab.lm.evaluation`'s.

How :func:`train` is put together — one small piece each:

* data setup: :func:`_setup_run` checks the configs and the token splits into a frozen :class:`_Run`
  (with the content of config.json); :func:`_saved_state` opens a checkpoint to resume;
* the loop state: :class:`_LoopState` (weights, optimizer, data RNG stream, counters, history) — its
  ``to_state()``/``from_state()`` pair is the checkpoint layout, written once, used for every ckpt.pt
  write and for resume;
* :class:`_Engine`: the compiled / DDP-wrapped model, the loss scaler, the batch sampler, the evaluators;
* the loop (:func:`_loop`) and the step (:func:`_train_step`, shaped like nanoGPT's train.py);
* evaluation and the stop decision (:func:`_evaluate`, :func:`_update_best_and_decide`);
* finalisation (:func:`_finish`: test loss, final checkpoint, result.json).
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from ttlab.errors import TTLabInputError
from ttlab.lm.checkpoint import (
    CKPT_FORMAT,
    load_checkpoint_state,
    read_run_json,
    save_torch_atomic,
)
from ttlab.lm.configs import GPTConfig, TrainConfig
from ttlab.lm.data import TokenizedCorpus
from ttlab.lm.distributed import DistInfo, init_distributed
from ttlab.lm.evaluation import (
    VAL_WINDOW_SEED,
    Evaluator,
    eval_windows,
    mean_lowest,
    metrics_csv,
    params_digest,
)
from ttlab.lm.model import GPT
from ttlab.provenance import atomic_write_json, atomic_write_text, median_call_seconds, versions

RESULT_FORMAT = "ttlab.lm.result/1"
#: TrainConfig fields that may differ when resuming (they do not change what is computed).
RUNTIME_FIELDS = ("device", "compile", "threads")
VERSION_EXTRAS = ("tokenizers", "transformers", "datasets", "ttlab")

EvalFn = Callable[[dict[str, Any]], None]
StopFn = Callable[[int], bool]


@dataclass
class TrainResult:
    """What :func:`train` returns; ``summary`` is the content of result.json (empty if interrupted)."""

    status: str  # "finished" | "interrupted"
    out_dir: Path
    iters: int
    history: list[dict[str, float]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)

    @property
    def test_loss(self) -> float | None:
        """Test loss of the final model (None when interrupted or no test split)."""
        return self.summary.get("test_loss")

    def __repr__(self) -> str:  # one line: the history and the summary stay out
        last = self.history[-1] if self.history else {}
        val = f", val {last['val_loss']:.4f}" if isinstance(last.get("val_loss"), float) else ""
        test = f", test {self.test_loss:.4f}" if isinstance(self.test_loss, float) else ""
        return f"TrainResult({self.status} after {self.iters} iterations{val}{test}; {len(self.history)} evaluations; {self.out_dir})"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: status, folder, iterations, every evaluation row and the summary (result.json)."""
        return {"status": self.status, "out_dir": str(self.out_dir), "iters": self.iters,
                "history": [dict(row) for row in self.history], "summary": dict(self.summary)}

    def to_frame(self) -> Any:
        """The evaluation history as a ``pandas.DataFrame`` (pandas is optional: ``pip install pandas``)."""
        try:
            import pandas as pd
        except ImportError:
            raise TTLabInputError("to_frame needs pandas: pip install pandas (or use history / to_dict()).") from None
        return pd.DataFrame(self.history)


# --------------------------------------------------------------------------------------- helpers
def _autocast(device: str, dtype: str) -> contextlib.AbstractContextManager:
    if dtype == "float32":
        return contextlib.nullcontext()
    return torch.autocast(device_type="cuda" if device.startswith("cuda") else "cpu", dtype=getattr(torch, dtype))


def _resolve_dtype(dtype: str, device: str) -> str:
    if dtype != "auto":
        if dtype == "float16" and not device.startswith("cuda"):
            raise TTLabInputError("dtype float16 needs a CUDA device; use float32 or bfloat16 on the CPU.")
        return dtype
    if device.startswith("cuda"):
        return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
    return "float32"


def _make_optimizer(model: GPT, cfg: TrainConfig, device: str) -> torch.optim.Optimizer:
    groups = model.optimizer_groups(cfg.weight_decay)
    kwargs = dict(lr=cfg.lr, betas=(cfg.beta1, cfg.beta2))
    try:  # the fused kernel is the fastest on CPU and CUDA alike
        return torch.optim.AdamW(groups, fused=True, **kwargs)
    except (RuntimeError, TypeError, ValueError):  # pragma: no cover - older torch / unusual device
        return torch.optim.AdamW(groups, **kwargs)


class _StopFlag:
    """Turns SIGINT / SIGTERM into a flag checked between steps (main thread only)."""

    def __init__(self) -> None:
        self.raised = False
        self._old: dict[int, Any] = {}

    def __enter__(self) -> "_StopFlag":
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old[sig] = signal.signal(sig, self._handler)
        return self

    def _handler(self, signum: int, frame: Any) -> None:
        if self.raised:  # a second signal: stop at once
            raise KeyboardInterrupt
        self.raised = True

    def __exit__(self, *exc: Any) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)


# --------------------------------------------------------------------------------------- train
def estimate_seconds(model_cfg: GPTConfig, cfg: TrainConfig, budget_s: float = 1.0) -> float:
    """Time of ``cfg.max_iters`` optimiser steps and their evaluations on the CPU, extrapolated from
    timed steps (an upper bound when early stopping ends the run sooner; data preparation not counted).

    One micro-batch of random tokens goes forward, backward and through AdamW after one warm-up step,
    repeated up to 5 times or ``budget_s`` seconds (median), with ``cfg.threads`` threads; a step is
    ``grad_accum`` micro-batches; an evaluation is ``eval_iters`` forward passes (a third of a step
    each, twice with ``eval_test``) every ``eval_interval`` steps. Start-up (~0.3 s of imports and
    model construction) is left out.
    """
    threads_before = torch.get_num_threads()
    if cfg.threads is not None:
        torch.set_num_threads(cfg.threads)
    try:
        torch.manual_seed(0)
        model = GPT(model_cfg)
        opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
        idx = torch.randint(model_cfg.vocab_size, (cfg.batch_size, model_cfg.block_size))

        def step() -> None:
            opt.zero_grad(set_to_none=True)
            model(idx, idx)[1].backward()
            opt.step()

        micro = median_call_seconds(step, budget_s, max_calls=5)
    finally:
        torch.set_num_threads(threads_before)
    evals = cfg.max_iters // cfg.eval_interval + 1
    return micro * (cfg.grad_accum * cfg.max_iters + evals * cfg.eval_iters * (2 if cfg.eval_test else 1) / 3)


def train(
    data: TokenizedCorpus,
    model_cfg: GPTConfig,
    cfg: TrainConfig,
    out_dir: str | Path,
    *,
    resume: bool = False,
    on_eval: EvalFn | None = None,
    should_stop: StopFn | None = None,
    extra: dict[str, Any] | None = None,
) -> TrainResult:
    """Train a :class:`GPT` on ``data`` and write the run folder ``out_dir`` (see the module docstring).

    ``model_cfg.vocab_size`` must cover the data's vocabulary. With ``resume`` an existing run
    continues from its checkpoint (a finished run is returned as it is); without it an existing run
    folder is an error. ``on_eval(row)`` is called after every evaluation; ``should_stop(iter)``
    after every step may ask to stop (the state is checkpointed and the run can be resumed).
    ``extra`` is stored in config.json and result.json. ``cfg.threads`` applies during the call only.
    Under ``torchrun`` the model is wrapped in DistributedDataParallel; only rank 0 writes files.
    """
    threads_before = torch.get_num_threads()
    if cfg.threads is not None:
        torch.set_num_threads(cfg.threads)
    try:
        return _train(data, model_cfg, cfg, Path(out_dir), resume, on_eval, should_stop, extra)
    finally:
        if cfg.threads is not None:
            torch.set_num_threads(threads_before)


def _train(
    data: TokenizedCorpus,
    model_cfg: GPTConfig,
    cfg: TrainConfig,
    out: Path,
    resume: bool,
    on_eval: EvalFn | None,
    should_stop: StopFn | None,
    extra: dict[str, Any] | None,
) -> TrainResult:
    """The body of :func:`train`: set up, start or resume, loop, finish."""
    run = _setup_run(data, model_cfg, cfg, out, extra)
    saved = _saved_state(run, resume)
    if saved is not None and saved.get("finished") and run.result_path.exists():
        return TrainResult("finished", out, int(saved["iter"]), list(saved["history"]), read_run_json(run.result_path))
    if saved is None:
        ls = _LoopState.fresh(run)
    else:
        ls = _LoopState.from_state(saved, run)
        ls.resumed_at.append(ls.it)
    if run.dist.is_main and not (out / "config.json").exists():  # a new run, or one seeded from another's checkpoint
        _write_run_header(run)
    eng = _Engine.build(run, ls)
    if not _loop(run, ls, eng, on_eval, should_stop):
        return TrainResult("interrupted", out, ls.it, ls.history)
    return _finish(run, ls, eng)


# ---- data setup
@dataclass(frozen=True)
class _Run:
    """The fixed context of one training run: configs, where it runs, the token splits, the run folder."""

    data: TokenizedCorpus
    model_cfg: GPTConfig
    cfg: TrainConfig
    dist: DistInfo
    dtype: str
    out: Path
    train_tokens: np.ndarray  # the first n_train training tokens
    val_tokens: np.ndarray
    test_tokens: np.ndarray  # capped at test_max_tokens
    config_doc: dict[str, Any]  # config.json, also the head of result.json

    @property
    def device(self) -> str:
        """The torch device of this rank."""
        return self.dist.device

    @property
    def n_train(self) -> int:
        """Training tokens used (``max_tokens`` or all)."""
        return int(self.train_tokens.size)

    @property
    def tokens_per_iter(self) -> int:
        """Training tokens consumed by one optimisation step over all ranks."""
        return self.cfg.batch_size * self.model_cfg.block_size * self.cfg.grad_accum * self.dist.world_size

    @property
    def ckpt_path(self) -> Path:
        """The resumable checkpoint ckpt.pt."""
        return self.out / "ckpt.pt"

    @property
    def result_path(self) -> Path:
        """result.json, written when the run finishes."""
        return self.out / "result.json"

    def ctx(self) -> contextlib.AbstractContextManager:
        """The autocast context of the forward passes (a no-op in float32)."""
        return _autocast(self.device, self.dtype)


def _setup_run(data: TokenizedCorpus, model_cfg: GPTConfig, cfg: TrainConfig, out: Path,
               extra: dict[str, Any] | None) -> _Run:
    """Process placement, dtype and the token splits of a run, checked; the content of config.json."""
    dist = init_distributed(cfg.device)
    dtype = _resolve_dtype(cfg.dtype, dist.device)
    if model_cfg.vocab_size < data.vocab_size:
        raise TTLabInputError(f"model vocab_size {model_cfg.vocab_size} is smaller than the data's {data.vocab_size}.")
    block = model_cfg.block_size
    train_all = data.tokens("train")
    n_train_avail = int(train_all.size)
    n_train = n_train_avail if cfg.max_tokens is None else cfg.max_tokens
    if n_train > n_train_avail:
        raise TTLabInputError(f"max_tokens {cfg.max_tokens} exceeds the {n_train_avail} training tokens available.",
                              params=("max_tokens",))
    if n_train < block + 1:
        raise TTLabInputError(f"{n_train} training tokens are fewer than block_size + 1 = {block + 1}.")
    val_tokens = data.tokens("val")
    if val_tokens.size < block + 1:
        raise TTLabInputError(
            f"the validation split has {val_tokens.size} tokens, fewer than block_size + 1 = {block + 1}; "
            "raise val_frac or lower block_size."
        )
    test_tokens = data.tokens("test")
    if cfg.test_max_tokens is not None:
        test_tokens = test_tokens[: cfg.test_max_tokens]
    config_doc = {
        "model": model_cfg.to_dict(),
        "train": cfg.to_dict(),
        "data": {"dataset_dir": str(data.root), "dataset_key": data.key, "vocab_size": data.vocab_size,
                 "train_tokens_available": n_train_avail, "train_tokens_used": n_train,
                 "val_tokens": int(val_tokens.size), "test_tokens": int(test_tokens.size),
                 "corpus": data.meta.get("corpus", {}).get("source"), "split": data.meta.get("split")},
        "world_size": dist.world_size,
        "extra": extra or {},
    }
    return _Run(data, model_cfg, cfg, dist, dtype, out, train_all[:n_train], val_tokens, test_tokens, config_doc)


def _saved_state(run: _Run, resume: bool) -> dict[str, Any] | None:
    """The checkpoint of an existing run folder, checked against this run (None for a new folder)."""
    if not run.ckpt_path.exists():
        return None
    if not resume:
        raise TTLabInputError(f"{run.out} already holds a run (ckpt.pt); pass resume to continue it or choose another "
                              "out_dir.", params=("resume", "out_dir"))
    state = load_checkpoint_state(run.ckpt_path)
    _check_resumable(state, run.model_cfg, run.cfg, run.data, run.dist, run.n_train)
    return state


def _write_run_header(run: _Run) -> None:
    """config.json and a copy of the data's tokenizer.json, at the start of a new run (rank 0)."""
    atomic_write_json(run.out / "config.json", run.config_doc)
    tok_src = run.data.root / "tokenizer.json"
    if tok_src.exists():
        atomic_write_text(run.out / "tokenizer.json", tok_src.read_text())


# ---- the loop state: everything a checkpoint holds
@dataclass
class _LoopState:
    """The state that changes while training — weights, optimizer, the data RNG stream, counters, history.

    :meth:`to_state` is the checkpoint (ckpt.pt) and :meth:`from_state` its inverse; the two are the only
    place the checkpoint layout is spelled out. ``t_mark`` (start of the wall-time span not yet added to
    ``elapsed``) is not saved."""

    model: GPT  # the bare module (not compiled, not DDP-wrapped)
    optimizer: torch.optim.Optimizer
    gen: torch.Generator  # the training-batch stream of this rank
    acc: torch.Tensor  # sum of the training losses since the last evaluation (float64, on the device)
    acc_n: int = 0
    it: int = 0
    tokens_seen: int = 0
    last_eval: int = -1
    history: list[dict[str, float]] = field(default_factory=list)
    best_val: float = float("inf")
    best_iter: int = -1
    since_best: int = 0
    elapsed: float = 0.0
    train_time: float = 0.0
    eval_time: float = 0.0
    resumed_at: list[int] = field(default_factory=list)
    stop_reason: str | None = None
    t_mark: float = 0.0

    @classmethod
    def fresh(cls, run: _Run) -> "_LoopState":
        """A new model and optimizer from ``cfg.seed``; the data and dropout streams of this rank seeded."""
        cfg, rank = run.cfg, run.dist.rank
        torch.manual_seed(cfg.seed)
        model = GPT(run.model_cfg).to(run.device)
        optimizer = _make_optimizer(model, cfg, run.device)
        gen = torch.Generator().manual_seed(cfg.seed * 1_000_003 + 17 + rank)
        torch.manual_seed(cfg.seed + 7919 * (rank + 1))  # dropout stream of this rank
        return cls(model, optimizer, gen, acc=torch.zeros((), dtype=torch.float64, device=run.device))

    @classmethod
    def from_state(cls, state: dict[str, Any], run: _Run) -> "_LoopState":
        """The loop state saved by :meth:`to_state` (weights, optimizer, RNG streams of this rank, counters)."""
        ls = cls.fresh(run)
        ls.model.load_state_dict(state["model"])
        ls.optimizer.load_state_dict(state["optimizer"])
        rank, rng = run.dist.rank, state["rng"]
        ls.gen.set_state(rng["data"][rank])
        torch.set_rng_state(rng["torch"][rank])
        if run.device.startswith("cuda") and rng.get("cuda"):
            torch.cuda.set_rng_state(rng["cuda"][rank], device=run.device)
        ls.it, ls.tokens_seen, ls.last_eval = int(state["iter"]), int(state["tokens_seen"]), int(state["last_eval"])
        ls.history = list(state["history"])
        ls.best_val, ls.best_iter, ls.since_best = float(state["best_val"]), int(state["best_iter"]), int(state["since_best"])
        ls.acc.fill_(float(state["acc"][0]))
        ls.acc_n = int(state["acc"][1])
        ls.elapsed, ls.train_time, ls.eval_time = (float(state["time"][k]) for k in ("elapsed", "train", "eval"))
        ls.resumed_at = list(state.get("resumed_at", []))
        ls.stop_reason = state.get("stop_reason")
        return ls

    def to_state(self, run: _Run, finished: bool) -> dict[str, Any]:
        """The checkpoint dict. Under DDP a collective (the RNG states of every rank are gathered): call it on all ranks."""
        return {
            "format": CKPT_FORMAT, "model_config": run.model_cfg.to_dict(), "train_config": run.cfg.to_dict(),
            "model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
            "rng": _rng_states(self.gen, run.dist),
            "iter": self.it, "tokens_seen": self.tokens_seen, "last_eval": self.last_eval, "history": self.history,
            "best_val": self.best_val, "best_iter": self.best_iter, "since_best": self.since_best,
            "acc": (float(self.acc), self.acc_n),
            "time": {"elapsed": self.elapsed, "train": self.train_time, "eval": self.eval_time},
            "data_key": run.data.key, "train_tokens_used": run.n_train, "world_size": run.dist.world_size,
            "resumed_at": self.resumed_at, "finished": finished, "stop_reason": self.stop_reason,
        }

    def save(self, run: _Run, finished: bool = False) -> None:
        """Write ckpt.pt atomically (rank 0; every rank must call it, see :meth:`to_state`)."""
        state = self.to_state(run, finished)
        if run.dist.is_main:
            save_torch_atomic(state, run.ckpt_path)

    def train_loss(self) -> float:
        """Mean training-batch loss since the last evaluation (NaN when no step was taken)."""
        return float(self.acc) / self.acc_n if self.acc_n else float("nan")


def _rng_states(gen: torch.Generator, dist: DistInfo) -> dict[str, list[Any]]:
    """The data, torch and CUDA RNG states of every rank (gathered to all ranks under DDP)."""
    device = dist.device
    rng_data = [gen.get_state()]
    rng_torch = [torch.get_rng_state()]
    rng_cuda = [torch.cuda.get_rng_state(device)] if device.startswith("cuda") else []
    if dist.enabled:
        import torch.distributed as tdist

        gathered: list[Any] = [None] * dist.world_size
        tdist.all_gather_object(gathered, (rng_data[0], rng_torch[0], rng_cuda[0] if rng_cuda else None))
        rng_data = [g[0] for g in gathered]
        rng_torch = [g[1] for g in gathered]
        rng_cuda = [g[2] for g in gathered] if rng_cuda else []
    return {"data": rng_data, "torch": rng_torch, "cuda": rng_cuda}


# ---- what computes: the wrapped model, the scaler, batches, evaluators
class _Batches:
    """Random training windows of ``block_size + 1`` tokens, drawn from the generator ``gen``: ``x, y = batches()``."""

    def __init__(self, tokens: np.ndarray, block: int, batch_size: int, gen: torch.Generator, device: str) -> None:
        self.tokens = tokens
        self.offs = np.arange(block + 1)
        self.high = int(tokens.size) - block  # valid starts: 0 .. n_train - block - 1
        self.batch_size = batch_size
        self.gen = gen
        self.device = device
        self.pin = device.startswith("cuda")

    def __call__(self) -> tuple[torch.Tensor, torch.Tensor]:
        ix = torch.randint(self.high, (self.batch_size,), generator=self.gen).numpy()
        buf = torch.from_numpy(self.tokens[ix[:, None] + self.offs].astype(np.int64))
        if self.pin:
            buf = buf.pin_memory().to(self.device, non_blocking=True)
        return buf[:, :-1], buf[:, 1:]


@dataclass
class _Engine:
    """The model as stepped (compiled / DDP-wrapped), the model as evaluated, the loss scaler, the batch
    sampler and the periodic evaluators (validation, and test with ``eval_test``)."""

    model: torch.nn.Module
    eval_model: torch.nn.Module
    scaler: Any
    get_batch: _Batches
    val: Evaluator
    test: Evaluator | None

    @classmethod
    def build(cls, run: _Run, ls: _LoopState) -> "_Engine":
        """Wrap ``ls.model`` for training and set up the batch sampler and evaluators."""
        cfg, dist, block = run.cfg, run.dist, run.model_cfg.block_size
        model: torch.nn.Module = ls.model
        if cfg.compile:
            model = torch.compile(model)  # type: ignore[assignment]
        if dist.enabled:
            from torch.nn.parallel import DistributedDataParallel as DDP

            model = DDP(model, device_ids=[dist.local_rank] if run.device.startswith("cuda") else None)
        try:
            scaler = torch.amp.GradScaler("cuda", enabled=(run.dtype == "float16"))
        except AttributeError:  # pragma: no cover - torch < 2.3
            scaler = torch.cuda.amp.GradScaler(enabled=(run.dtype == "float16"))
        # evaluation runs on the bare module: ranks evaluate different numbers of windows, and DDP's
        # forward must not be entered unevenly
        eval_model: torch.nn.Module = ls.model if dist.enabled else model
        n_eval = cfg.eval_iters * cfg.batch_size
        val = Evaluator(run.val_tokens, eval_windows(run.val_tokens.size, block, n_eval, VAL_WINDOW_SEED),
                         block, cfg.batch_size, dist)
        test = None
        if cfg.eval_test and run.test_tokens.size >= block + 1:
            test = Evaluator(run.test_tokens, eval_windows(run.test_tokens.size, block, n_eval, VAL_WINDOW_SEED + 1),
                              block, cfg.batch_size, dist)
        batches = _Batches(run.train_tokens, block, cfg.batch_size, ls.gen, run.device)
        return cls(model, eval_model, scaler, batches, val, test)


# ---- the loop
def _loop(run: _Run, ls: _LoopState, eng: _Engine, on_eval: EvalFn | None, should_stop: StopFn | None) -> bool:
    """Evaluate when due, stop when decided, else take a step; True when the run ended, False when interrupted
    (SIGINT/SIGTERM or ``should_stop``; the state is checkpointed)."""
    ls.t_mark = time.perf_counter()
    eng.model.train()
    with _StopFlag() as flag:
        while True:
            if ls.it != ls.last_eval and (ls.it % run.cfg.eval_interval == 0 or ls.it >= run.cfg.max_iters):
                _evaluate(run, ls, eng, on_eval)
            if ls.stop_reason:
                return True
            _train_step(run, ls, eng)
            if _stop_requested(flag, should_stop, ls.it, run.dist):
                ls.elapsed += time.perf_counter() - ls.t_mark
                ls.save(run, finished=False)
                return False


def _train_step(run: _Run, ls: _LoopState, eng: _Engine) -> None:
    """One optimisation step, as in nanoGPT's train.py: set the learning rate, accumulate gradients over
    ``grad_accum`` micro-batches (DDP syncs on the last), clip, step, zero the gradients."""
    cfg, model, optimizer, scaler = run.cfg, eng.model, ls.optimizer, eng.scaler
    t0 = time.perf_counter()
    lr = cfg.lr_at(ls.it)
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr
    for micro_step in range(cfg.grad_accum):
        X, Y = eng.get_batch()
        if run.dist.enabled:
            model.require_backward_grad_sync = micro_step == cfg.grad_accum - 1  # type: ignore[assignment]
        with run.ctx():
            _, loss = model(X, Y)
            loss = loss / cfg.grad_accum  # scale the loss to account for gradient accumulation
        scaler.scale(loss).backward()
        ls.acc += loss.detach()
    if cfg.grad_clip > 0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(ls.model.parameters(), cfg.grad_clip)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)  # flush the gradients as soon as we can, no need for this memory anymore
    ls.it += 1
    ls.acc_n += 1
    ls.tokens_seen += run.tokens_per_iter
    ls.train_time += time.perf_counter() - t0


def _stop_requested(flag: _StopFlag, should_stop: StopFn | None, it: int, dist: DistInfo) -> bool:
    """A signal or ``should_stop(it)`` asks to stop; under DDP the ranks agree on it every 10 steps."""
    stop_now = flag.raised or (should_stop is not None and bool(should_stop(it)))
    if dist.enabled and it % 10 == 0:
        import torch.distributed as tdist

        f = torch.tensor([int(stop_now)], device=dist.device)
        tdist.all_reduce(f, op=tdist.ReduceOp.MAX)
        stop_now = bool(f.item())
    elif dist.enabled:
        stop_now = False
    return stop_now


# ---- evaluation and the stop decision
def _evaluate(run: _Run, ls: _LoopState, eng: _Engine, on_eval: EvalFn | None) -> None:
    """One evaluation at ``ls.it``: a metrics row, the best / early-stop bookkeeping, ckpt.pt and metrics.csv."""
    t0 = time.perf_counter()
    val = eng.val(eng.eval_model, run.ctx)
    row = {"iter": ls.it, "tokens_seen": ls.tokens_seen, "train_loss": ls.train_loss(),
           "val_loss": val, "lr": run.cfg.lr_at(max(ls.it - 1, 0)) if ls.it else 0.0}
    if eng.test is not None:
        row["test_loss"] = eng.test(eng.eval_model, run.ctx)
    ls.acc.zero_()
    ls.acc_n = 0
    ls.last_eval = ls.it
    _update_best_and_decide(run, ls, val)
    now = time.perf_counter()
    ls.eval_time += now - t0
    ls.elapsed += now - ls.t_mark
    ls.t_mark = now
    row["elapsed_s"] = ls.elapsed
    ls.history.append(row)
    ls.save(run, finished=False)
    if run.dist.is_main:
        atomic_write_text(run.out / "metrics.csv", metrics_csv(ls.history))
    if on_eval is not None and run.dist.is_main:
        on_eval(dict(row, best_val_loss=ls.best_val, best_iter=ls.best_iter))


def _update_best_and_decide(run: _Run, ls: _LoopState, val: float) -> None:
    """Track the best validation loss (best.pt with ``keep_best``) and set ``stop_reason`` when the run
    should end: ``early_stop`` after ``patience`` evaluations without improvement, ``max_iters``."""
    cfg = run.cfg
    if val < ls.best_val - cfg.min_delta:
        ls.best_val, ls.best_iter, ls.since_best = val, ls.it, 0
        if cfg.keep_best and run.dist.is_main:
            save_torch_atomic({"format": CKPT_FORMAT, "model_config": run.model_cfg.to_dict(),
                                "model": ls.model.state_dict(), "iter": ls.it, "val_loss": val}, run.out / "best.pt")
    else:
        ls.since_best += 1
    if cfg.patience is not None and ls.since_best >= cfg.patience:
        ls.stop_reason = "early_stop"
    elif ls.it >= cfg.max_iters:
        ls.stop_reason = "max_iters"


# ---- finalisation
def _finish(run: _Run, ls: _LoopState, eng: _Engine) -> TrainResult:
    """The end of a run: test loss, final checkpoint, metrics.csv and result.json."""
    t0 = time.perf_counter()
    test_loss, test_loss_best, test_windows = _final_test_losses(run, ls, eng)
    ls.elapsed += time.perf_counter() - ls.t_mark
    ls.eval_time += time.perf_counter() - t0
    digests = _rank_digests(ls.model, run.dist)
    ls.save(run, finished=True)
    summary = _summary(run, ls, eng, digests, test={"test_loss": test_loss, "test_loss_best": test_loss_best,
                                                    "test_windows": test_windows})
    if run.dist.is_main:
        atomic_write_text(run.out / "metrics.csv", metrics_csv(ls.history))
        atomic_write_json(run.result_path, summary)
    return TrainResult("finished", run.out, ls.it, ls.history, summary)


def _final_test_losses(run: _Run, ls: _LoopState, eng: _Engine) -> tuple[float | None, float | None, int]:
    """Test loss of the final model and (``keep_best``) of best.pt over every aligned test window, and the
    number of windows (None, None, 0 when the test split is shorter than one window)."""
    block = run.model_cfg.block_size
    if run.test_tokens.size < block + 1:
        return None, None, 0
    starts = eval_windows(run.test_tokens.size, block, None, 0)
    ev_test = Evaluator(run.test_tokens, starts, block, run.cfg.batch_size, run.dist)
    test_loss = ev_test(eng.eval_model, run.ctx)
    test_loss_best = None
    if run.cfg.keep_best and ls.best_iter != ls.it and (run.out / "best.pt").exists():
        best_state = load_checkpoint_state(run.out / "best.pt")
        best_model = GPT(run.model_cfg).to(run.device)
        best_model.load_state_dict(best_state["model"])
        test_loss_best = ev_test(best_model, run.ctx)
    elif run.cfg.keep_best:
        test_loss_best = test_loss
    return test_loss, test_loss_best, int(starts.size)


def _rank_digests(model: GPT, dist: DistInfo) -> list[str]:
    """:func:`params_digest` of the weights on every rank (one entry without DDP)."""
    digest = params_digest(model)
    if not dist.enabled:
        return [digest]
    import torch.distributed as tdist

    digests: list[Any] = [None] * dist.world_size
    tdist.all_gather_object(digests, digest)
    return digests


def _summary(run: _Run, ls: _LoopState, eng: _Engine, digests: list[str], test: dict[str, Any]) -> dict[str, Any]:
    """The content of result.json."""
    history, it = ls.history, ls.it
    trained = [r for r in history if r["iter"] > 0] or history  # "lowest evaluations" never include the untrained model
    return {
        "format": RESULT_FORMAT,
        "status": "finished",
        "stop_reason": ls.stop_reason,
        **run.config_doc,
        "n_params": ls.model.num_params(non_embedding=False),
        "n_params_non_embedding": ls.model.num_params(non_embedding=True),
        "iters": it,
        "tokens_seen": ls.tokens_seen,
        "tokens_per_iter": run.tokens_per_iter,
        "epochs": ls.tokens_seen / run.n_train,
        "n_evals": len(history),
        "final_val_loss": history[-1]["val_loss"],
        "best_val_loss": ls.best_val,
        "best_iter": ls.best_iter,
        "mean_5_lowest_val": mean_lowest([r["val_loss"] for r in trained], 5),
        "mean_5_lowest_test": mean_lowest([r["test_loss"] for r in trained], 5) if eng.test is not None else None,
        **test,
        "wall_time_s": ls.elapsed,
        "train_time_s": ls.train_time,
        "eval_time_s": ls.eval_time,
        "tokens_per_s": ls.tokens_seen / ls.train_time if ls.train_time > 0 else float("nan"),
        "ms_per_iter": 1e3 * ls.train_time / it if it else float("nan"),
        "device": run.device,
        "dtype": run.dtype,
        "threads": torch.get_num_threads(),
        "resumed_at": ls.resumed_at,
        "ddp": {"world_size": run.dist.world_size, "backend": run.dist.backend, "param_sha256_per_rank": digests,
                "ranks_agree": len(set(digests)) == 1},
        "versions": versions(VERSION_EXTRAS),
    }


def _check_resumable(state: dict[str, Any], model_cfg: GPTConfig, cfg: TrainConfig, data: TokenizedCorpus,
                     dist: DistInfo, n_train: int) -> None:
    if state.get("format") != CKPT_FORMAT:
        raise TTLabInputError(f"checkpoint format {state.get('format')!r} is not {CKPT_FORMAT!r}.")
    if state["model_config"] != model_cfg.to_dict():
        diff = [k for k in model_cfg.to_dict() if state["model_config"].get(k) != getattr(model_cfg, k)]
        raise TTLabInputError(f"cannot resume: the model config differs from the checkpoint's in {', '.join(diff)}.")
    saved = dict(state["train_config"])
    now = cfg.to_dict()
    diff = [k for k in now if k not in RUNTIME_FIELDS and saved.get(k) != now[k]]
    if diff:
        raise TTLabInputError(
            "cannot resume: the training config differs from the checkpoint's in "
            + ", ".join(f"{k} ({saved.get(k)!r} → {now[k]!r})" for k in diff) + "."
        )
    if state["data_key"] != data.key:
        raise TTLabInputError("cannot resume: the data (corpus, split or tokenizer) differs from the checkpoint's.")
    if int(state["world_size"]) != dist.world_size:
        raise TTLabInputError(f"cannot resume: the checkpoint was written by {state['world_size']} process(es), "
                              f"this run has {dist.world_size}; use the same number.")
    if int(state["train_tokens_used"]) != n_train:  # pragma: no cover - implied by the config check
        raise TTLabInputError("cannot resume: the number of training tokens differs.")


# --------------------------------------------------------------------------------------- two-pass
def train_converged(
    data: TokenizedCorpus,
    model_cfg: GPTConfig,
    cfg: TrainConfig,
    out_dir: str | Path,
    *,
    resume: bool = False,
    on_eval: EvalFn | None = None,
    extra: dict[str, Any] | None = None,
) -> TrainResult:
    """Train to convergence with the schedule fitted to the stopping point (the converged protocol a fair small-scale data sweep needs).

    Pass 1 (``out_dir/search``) trains with early stopping (``cfg.patience``, default 5) under a
    schedule of ``cfg.max_iters`` steps and finds the iteration of the best validation loss, S.
    Pass 2 (``out_dir``) retrains from scratch with ``max_iters = lr_decay_iters = S`` (at least
    warmup + one evaluation interval), no early stopping, and an evaluation interval of at most S/10. result.json of pass 2 records pass 1.
    Both passes resume independently.
    """
    out = Path(out_dir)
    search_cfg = replace(cfg, patience=cfg.patience or 5, lr_decay_iters=cfg.schedule_length)
    search = train(data, model_cfg, search_cfg, out / "search", resume=resume,
                   on_eval=(lambda r: on_eval(dict(r, phase="search"))) if on_eval else None,
                   extra={**(extra or {}), "phase": "search"})
    if search.status != "finished":
        return search
    stop = max(int(search.summary["best_iter"]), cfg.warmup_iters + cfg.eval_interval, 1)
    # at least ~10 evaluations in pass 2, so that "the mean of the 5 lowest" is taken over trained models
    final_cfg = replace(cfg, max_iters=stop, lr_decay_iters=stop, patience=None,
                        eval_interval=max(1, min(cfg.eval_interval, stop // 10)))
    search_info = {k: search.summary[k] for k in ("best_iter", "best_val_loss", "iters", "stop_reason", "test_loss")}
    res = train(data, model_cfg, final_cfg, out, resume=resume,
                on_eval=(lambda r: on_eval(dict(r, phase="final"))) if on_eval else None,
                extra={**(extra or {}), "phase": "final", "schedule_search": search_info})
    return res
