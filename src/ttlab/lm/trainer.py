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
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import math
import signal
import threading
import time
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from ttlab.errors import TTLabInputError
from ttlab.lm.data import TokenizedCorpus
from ttlab.lm.distributed import DistInfo, init_distributed
from ttlab.lm.model import GPT, GPTConfig
from ttlab.provenance import atomic_file, atomic_write_json, atomic_write_text, versions

CKPT_FORMAT = "ttlab.lm.ckpt/1"
RESULT_FORMAT = "ttlab.lm.result/1"
METRICS_COLUMNS = ("iter", "tokens_seen", "train_loss", "val_loss", "lr", "elapsed_s")
#: TrainConfig fields that may differ when resuming (they do not change what is computed).
RUNTIME_FIELDS = ("device", "compile", "threads")
VERSION_EXTRAS = ("tokenizers", "transformers", "datasets", "ttlab")
#: The validation windows do not depend on the training seed: every run on a split sees the same ones.
VAL_WINDOW_SEED = 0

EvalFn = Callable[[dict[str, Any]], None]
StopFn = Callable[[int], bool]


@dataclass(frozen=True)
class TrainConfig:
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

    def to_dict(self) -> dict[str, Any]:
        """Plain dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "TrainConfig":
        """Inverse of :meth:`to_dict`."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise TTLabInputError(f"unknown TrainConfig field(s): {', '.join(unknown)}.")
        return cls(**d)


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


def eval_windows(n_tokens: int, block_size: int, max_windows: int | None, seed: int) -> np.ndarray:
    """Start offsets of the aligned, non-overlapping windows of ``block_size + 1`` tokens used to evaluate:
    all of them, or a seeded sample of ``max_windows`` (sorted)."""
    n_full = (n_tokens - 1) // block_size
    starts = np.arange(n_full, dtype=np.int64) * block_size
    if max_windows is not None and n_full > max_windows:
        pick = np.random.default_rng(seed).choice(n_full, size=max_windows, replace=False)
        starts = np.sort(starts[pick])
    return starts


def _save_torch_atomic(obj: Any, path: Path) -> None:
    with atomic_file(path) as fh:
        torch.save(obj, fh)


def _metrics_csv(history: list[dict[str, float]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    cols = METRICS_COLUMNS + (("test_loss",) if history and "test_loss" in history[0] else ())
    w.writerow(cols)
    for row in history:
        w.writerow([row["iter"], row["tokens_seen"]] + [repr(float(row[c])) for c in cols[2:]])
    return buf.getvalue()


def mean_lowest(values: list[float], k: int = 5) -> float:
    """Mean of the ``k`` lowest finite values (the paper's "mean of the 5 lowest evaluations")."""
    finite = sorted(v for v in values if math.isfinite(v))
    if not finite:
        return float("nan")
    return float(np.mean(finite[:k]))


def params_digest(model: torch.nn.Module) -> str:
    """SHA-256 of all parameter bytes (equal digests = identical weights)."""
    h = hashlib.sha256()
    for name, p in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(p.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


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


class _Evaluator:
    """Mean per-token loss over fixed windows of a split, shared out over the ranks."""

    def __init__(self, tokens: np.ndarray, starts: np.ndarray, block: int, batch: int, dist: DistInfo) -> None:
        self.tokens = tokens
        self.starts = starts[dist.rank :: dist.world_size]
        self.block = block
        self.batch = batch
        self.dist = dist
        self.n_windows = int(starts.size)

    @torch.no_grad()
    def __call__(self, model: torch.nn.Module, ctx: contextlib.AbstractContextManager | Callable) -> float:
        was_training = model.training
        model.eval()
        total = torch.zeros(2, dtype=torch.float64)
        offs = np.arange(self.block + 1)
        for i in range(0, self.starts.size, self.batch):
            idx = self.starts[i : i + self.batch, None] + offs
            buf = torch.from_numpy(self.tokens[idx].astype(np.int64)).to(self.dist.device)
            with ctx():
                logits, _ = model(buf[:, :-1])
            loss = torch.nn.functional.cross_entropy(
                logits.float().reshape(-1, logits.size(-1)), buf[:, 1:].reshape(-1), reduction="sum"
            )
            total[0] += loss.double().cpu()
            total[1] += buf[:, 1:].numel()
        if self.dist.enabled:
            import torch.distributed as dist

            dist.all_reduce(total)
        model.train(was_training)
        return float(total[0] / total[1]) if total[1] > 0 else float("nan")


# --------------------------------------------------------------------------------------- train
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
    dist = init_distributed(cfg.device)
    device = dist.device
    dtype = _resolve_dtype(cfg.dtype, device)
    if model_cfg.vocab_size < data.vocab_size:
        raise TTLabInputError(f"model vocab_size {model_cfg.vocab_size} is smaller than the data's {data.vocab_size}.")

    block = model_cfg.block_size
    train_all = data.tokens("train")
    n_train_avail = int(train_all.size)
    n_train = n_train_avail if cfg.max_tokens is None else cfg.max_tokens
    if n_train > n_train_avail:
        raise TTLabInputError(f"--max-tokens {cfg.max_tokens} exceeds the {n_train_avail} training tokens available.")
    if n_train < block + 1:
        raise TTLabInputError(f"{n_train} training tokens are fewer than block_size + 1 = {block + 1}.")
    train_tokens = train_all[:n_train]
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

    ckpt_path, result_path = out / "ckpt.pt", out / "result.json"
    state: dict[str, Any] | None = None
    if ckpt_path.exists():
        if not resume:
            raise TTLabInputError(f"{out} already holds a run (ckpt.pt); pass --resume to continue it or choose another --out.")
        state = load_checkpoint_state(ckpt_path)
        _check_resumable(state, model_cfg, cfg, data, dist, n_train)
        if state.get("finished") and result_path.exists():
            summary = read_run_json(result_path)
            return TrainResult("finished", out, int(state["iter"]), list(state["history"]), summary)

    # ---- model, optimizer, RNGs
    torch.manual_seed(cfg.seed)
    raw_model = GPT(model_cfg).to(device)
    optimizer = _make_optimizer(raw_model, cfg, device)
    gen = torch.Generator().manual_seed(cfg.seed * 1_000_003 + 17 + dist.rank)
    torch.manual_seed(cfg.seed + 7919 * (dist.rank + 1))  # dropout stream of this rank
    it, tokens_seen, last_eval = 0, 0, -1
    history: list[dict[str, float]] = []
    best_val, best_iter, since_best = float("inf"), -1, 0
    acc = torch.zeros((), dtype=torch.float64, device=device)
    acc_n = 0
    elapsed = train_time = eval_time = 0.0
    resumed_at: list[int] = []
    if state is not None:
        raw_model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        gen.set_state(state["rng"]["data"][dist.rank])
        torch.set_rng_state(state["rng"]["torch"][dist.rank])
        if device.startswith("cuda") and state["rng"].get("cuda"):
            torch.cuda.set_rng_state(state["rng"]["cuda"][dist.rank], device=device)
        it, tokens_seen, last_eval = int(state["iter"]), int(state["tokens_seen"]), int(state["last_eval"])
        history = list(state["history"])
        best_val, best_iter, since_best = float(state["best_val"]), int(state["best_iter"]), int(state["since_best"])
        acc.fill_(float(state["acc"][0]))
        acc_n = int(state["acc"][1])
        elapsed, train_time, eval_time = (float(state["time"][k]) for k in ("elapsed", "train", "eval"))
        resumed_at = list(state.get("resumed_at", [])) + [it]
    elif dist.is_main:
        atomic_write_json(out / "config.json", config_doc)
        tok_src = data.root / "tokenizer.json"
        if tok_src.exists():
            atomic_write_text(out / "tokenizer.json", tok_src.read_text())

    model: torch.nn.Module = raw_model
    if cfg.compile:
        model = torch.compile(model)  # type: ignore[assignment]
    if dist.enabled:
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(model, device_ids=[dist.local_rank] if device.startswith("cuda") else None)
    try:
        scaler = torch.amp.GradScaler("cuda", enabled=(dtype == "float16"))
    except AttributeError:  # pragma: no cover - torch < 2.3
        scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))

    def ctx() -> contextlib.AbstractContextManager:
        return _autocast(device, dtype)

    # evaluation runs on the bare module: ranks evaluate different numbers of windows, and DDP's
    # forward must not be entered unevenly
    eval_model: torch.nn.Module = raw_model if dist.enabled else model

    evaluator_val = _Evaluator(val_tokens, eval_windows(val_tokens.size, block, cfg.eval_iters * cfg.batch_size, VAL_WINDOW_SEED),
                               block, cfg.batch_size, dist)
    evaluator_test = None
    if cfg.eval_test and test_tokens.size >= block + 1:
        evaluator_test = _Evaluator(test_tokens, eval_windows(test_tokens.size, block, cfg.eval_iters * cfg.batch_size,
                                                              VAL_WINDOW_SEED + 1), block, cfg.batch_size, dist)
    tokens_per_iter = cfg.batch_size * block * cfg.grad_accum * dist.world_size
    offs = np.arange(block + 1)
    high = n_train - block  # valid starts: 0 .. n_train - block - 1
    pin = device.startswith("cuda")

    def get_batch() -> tuple[torch.Tensor, torch.Tensor]:
        ix = torch.randint(high, (cfg.batch_size,), generator=gen).numpy()
        buf = torch.from_numpy(train_tokens[ix[:, None] + offs].astype(np.int64))
        if pin:
            buf = buf.pin_memory().to(device, non_blocking=True)
        return buf[:, :-1], buf[:, 1:]

    def checkpoint(finished: bool = False) -> None:
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
        if not dist.is_main:
            return
        _save_torch_atomic({
            "format": CKPT_FORMAT, "model_config": model_cfg.to_dict(), "train_config": cfg.to_dict(),
            "model": raw_model.state_dict(), "optimizer": optimizer.state_dict(),
            "rng": {"data": rng_data, "torch": rng_torch, "cuda": rng_cuda},
            "iter": it, "tokens_seen": tokens_seen, "last_eval": last_eval, "history": history,
            "best_val": best_val, "best_iter": best_iter, "since_best": since_best,
            "acc": (float(acc), acc_n), "time": {"elapsed": elapsed, "train": train_time, "eval": eval_time},
            "data_key": data.key, "train_tokens_used": n_train, "world_size": dist.world_size,
            "resumed_at": resumed_at, "finished": finished, "stop_reason": stop_reason,
        }, ckpt_path)

    stop_reason: str | None = state.get("stop_reason") if state is not None else None
    t_mark = time.perf_counter()
    model.train()
    with _StopFlag() as flag:
        while True:
            if it != last_eval and (it % cfg.eval_interval == 0 or it >= cfg.max_iters):
                t0 = time.perf_counter()
                val = evaluator_val(eval_model, ctx)
                row = {"iter": it, "tokens_seen": tokens_seen, "train_loss": float(acc) / acc_n if acc_n else float("nan"),
                       "val_loss": val, "lr": cfg.lr_at(max(it - 1, 0)) if it else 0.0}
                if evaluator_test is not None:
                    row["test_loss"] = evaluator_test(eval_model, ctx)
                acc.zero_()
                acc_n = 0
                last_eval = it
                improved = val < best_val - cfg.min_delta
                if improved:
                    best_val, best_iter, since_best = val, it, 0
                    if cfg.keep_best and dist.is_main:
                        _save_torch_atomic({"format": CKPT_FORMAT, "model_config": model_cfg.to_dict(),
                                            "model": raw_model.state_dict(), "iter": it, "val_loss": val}, out / "best.pt")
                else:
                    since_best += 1
                if cfg.patience is not None and since_best >= cfg.patience:
                    stop_reason = "early_stop"
                elif it >= cfg.max_iters:
                    stop_reason = "max_iters"
                now = time.perf_counter()
                eval_time += now - t0
                elapsed += now - t_mark
                t_mark = now
                row["elapsed_s"] = elapsed
                history.append(row)
                checkpoint(finished=False)
                if dist.is_main:
                    atomic_write_text(out / "metrics.csv", _metrics_csv(history))
                if on_eval is not None and dist.is_main:
                    on_eval(dict(row, best_val_loss=best_val, best_iter=best_iter))
            if stop_reason:
                break
            # ---- one optimisation step
            t0 = time.perf_counter()
            lr = cfg.lr_at(it)
            for group in optimizer.param_groups:
                group["lr"] = lr
            for micro in range(cfg.grad_accum):
                x, y = get_batch()
                if dist.enabled:
                    model.require_backward_grad_sync = micro == cfg.grad_accum - 1  # type: ignore[assignment]
                with ctx():
                    _, loss = model(x, y)
                    loss = loss / cfg.grad_accum
                scaler.scale(loss).backward()
                acc += loss.detach()
            if cfg.grad_clip > 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(raw_model.parameters(), cfg.grad_clip)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            it += 1
            acc_n += 1
            tokens_seen += tokens_per_iter
            train_time += time.perf_counter() - t0
            stop_now = flag.raised or (should_stop is not None and bool(should_stop(it)))
            if dist.enabled and it % 10 == 0:
                import torch.distributed as tdist

                f = torch.tensor([int(stop_now)], device=device)
                tdist.all_reduce(f, op=tdist.ReduceOp.MAX)
                stop_now = bool(f.item())
            elif dist.enabled:
                stop_now = False
            if stop_now:
                elapsed += time.perf_counter() - t_mark
                checkpoint(finished=False)
                return TrainResult("interrupted", out, it, history)

    # ---- the end: test loss, final checkpoint, result.json
    t0 = time.perf_counter()
    test_loss = test_loss_best = None
    test_windows = 0
    if test_tokens.size >= block + 1:
        starts = eval_windows(test_tokens.size, block, None, 0)
        test_windows = int(starts.size)
        ev_test = _Evaluator(test_tokens, starts, block, cfg.batch_size, dist)
        test_loss = ev_test(eval_model, ctx)
        if cfg.keep_best and best_iter != it and (out / "best.pt").exists():
            best_state = load_checkpoint_state(out / "best.pt")
            best_model = GPT(model_cfg).to(device)
            best_model.load_state_dict(best_state["model"])
            test_loss_best = ev_test(best_model, ctx)
        elif cfg.keep_best:
            test_loss_best = test_loss
    elapsed += time.perf_counter() - t_mark
    eval_time += time.perf_counter() - t0
    digest = params_digest(raw_model)
    digests = [digest]
    if dist.enabled:
        import torch.distributed as tdist

        digests = [None] * dist.world_size  # type: ignore[list-item]
        tdist.all_gather_object(digests, digest)
    checkpoint(finished=True)
    vals = [r["val_loss"] for r in history]
    trained = [r for r in history if r["iter"] > 0] or history  # "lowest evaluations" never include the untrained model
    summary = {
        "format": RESULT_FORMAT,
        "status": "finished",
        "stop_reason": stop_reason,
        **config_doc,
        "n_params": raw_model.num_params(non_embedding=False),
        "n_params_non_embedding": raw_model.num_params(non_embedding=True),
        "iters": it,
        "tokens_seen": tokens_seen,
        "tokens_per_iter": tokens_per_iter,
        "epochs": tokens_seen / n_train,
        "n_evals": len(history),
        "final_val_loss": vals[-1],
        "best_val_loss": best_val,
        "best_iter": best_iter,
        "mean_5_lowest_val": mean_lowest([r["val_loss"] for r in trained], 5),
        "mean_5_lowest_test": mean_lowest([r["test_loss"] for r in trained], 5) if evaluator_test is not None else None,
        "test_loss": test_loss,
        "test_loss_best": test_loss_best,
        "test_windows": test_windows,
        "wall_time_s": elapsed,
        "train_time_s": train_time,
        "eval_time_s": eval_time,
        "tokens_per_s": tokens_seen / train_time if train_time > 0 else float("nan"),
        "ms_per_iter": 1e3 * train_time / it if it else float("nan"),
        "device": device,
        "dtype": dtype,
        "threads": torch.get_num_threads(),
        "resumed_at": resumed_at,
        "ddp": {"world_size": dist.world_size, "backend": dist.backend, "param_sha256_per_rank": digests,
                "ranks_agree": len(set(digests)) == 1},
        "versions": versions(VERSION_EXTRAS),
    }
    if dist.is_main:
        atomic_write_text(out / "metrics.csv", _metrics_csv(history))
        atomic_write_json(result_path, summary)
    return TrainResult("finished", out, it, history, summary)


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


# --------------------------------------------------------------------------------------- loading
def load_checkpoint_state(path: str | Path) -> dict[str, Any]:
    """The state dict saved in a ttlab checkpoint (ckpt.pt / best.pt).

    A file that cannot be unpickled (truncated by a crash or a full disk, or empty) or that is not
    a ttlab checkpoint is a clear :class:`TTLabInputError` naming it; nothing is deleted."""
    p = Path(path)
    try:
        state = torch.load(p, map_location="cpu", weights_only=False)
    except Exception as exc:  # torch/pickle raise EOFError, RuntimeError, UnpicklingError, … for damaged files
        size = p.stat().st_size if p.exists() else 0
        detail = (str(exc).strip().splitlines() or [""])[0][:200]
        reason = "empty file, 0 bytes" if size == 0 else f"{size:,} bytes; {type(exc).__name__}: {detail}"
        raise TTLabInputError(f"{p} is corrupt ({reason}); delete it or start a new --out.") from None
    if not isinstance(state, dict) or state.get("format") != CKPT_FORMAT:
        raise TTLabInputError(f"{p} is not a ttlab language-model checkpoint (no format {CKPT_FORMAT!r}); "
                              "delete it or start a new --out.")
    return state


def read_run_json(path: str | Path) -> dict[str, Any]:
    """A JSON object from a run folder (config.json, result.json); a damaged file is a clear error."""
    p = Path(path)
    try:
        obj = json.loads(p.read_text(encoding="utf-8-sig"))
    except (ValueError, UnicodeDecodeError) as exc:
        size = p.stat().st_size
        reason = "empty file, 0 bytes" if size == 0 else f"{size:,} bytes; {exc}"
        raise TTLabInputError(f"{p} is corrupt ({reason}); delete it or start a new --out.") from None
    if not isinstance(obj, dict):
        raise TTLabInputError(f"{p} is corrupt (not a JSON object); delete it or start a new --out.")
    return obj


def load_model(path: str | Path, device: str = "cpu", which: str = "final") -> tuple[GPT, dict[str, Any]]:
    """A trained :class:`GPT` (in eval mode) and its checkpoint metadata.

    ``path`` is a run folder (``which`` = ``final`` → ckpt.pt, ``best`` → best.pt) or a .pt file.
    """
    p = Path(path)
    if p.is_dir():
        if which not in ("final", "best"):
            raise TTLabInputError(f"which must be 'final' or 'best', got {which!r}.")
        p = p / ("ckpt.pt" if which == "final" else "best.pt")
    if not p.is_file():
        raise TTLabInputError(f"checkpoint {p} not found.")
    state = load_checkpoint_state(p)
    model = GPT(GPTConfig.from_dict(state["model_config"]))
    model.load_state_dict(state["model"])
    model.to(device).eval()
    meta = {k: v for k, v in state.items() if k not in ("model", "optimizer", "rng")}
    meta["path"] = str(p)
    return model, meta


@dataclass
class LoadedRun:
    """A run folder opened for use: model (eval mode), tokenizer, config and result (if finished)."""

    model: GPT
    tokenizer: Any
    config: dict[str, Any]
    result: dict[str, Any] | None
    meta: dict[str, Any]

    def data(self) -> TokenizedCorpus:
        """The token dataset the run was trained on (its cache folder must still exist)."""
        root = self.config.get("data", {}).get("dataset_dir")
        if not root or not Path(root).is_dir():
            raise TTLabInputError(f"the run's dataset folder {root!r} no longer exists; prepare the corpus again "
                                  "with the same options (ttlab lm prepare) to recreate it.")
        return TokenizedCorpus(root)


def load_run(run_dir: str | Path, device: str = "cpu", which: str = "final") -> LoadedRun:
    """Open a run folder written by :func:`train` (model from ckpt.pt or best.pt, tokenizer.json)."""
    from ttlab.lm.tokenizer import load_tokenizer

    d = Path(run_dir)
    model, meta = load_model(d, device=device, which=which)
    tok = load_tokenizer(d / "tokenizer.json") if (d / "tokenizer.json").exists() else None
    config = read_run_json(d / "config.json") if (d / "config.json").exists() else {}
    result = read_run_json(d / "result.json") if (d / "result.json").exists() else None
    return LoadedRun(model, tok, config, result, meta)

