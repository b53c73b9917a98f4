"""Language-model trainer throughput vs a plain nanoGPT-style loop (run on demand: `python benchmarks/bench_lm.py`).

Setting: nanoGPT's CPU configuration — 4 layers, 4 heads, width 128, block 64, batch 12, no dropout,
AdamW, warmup + cosine, gradient clipping 1.0 — trained on the bundled State of the Union corpus with a
byte-level BPE vocabulary (default 2,048 as in the SPEC's pilot; `--vocab-size 257` is the closest to
nanoGPT's 65-character Shakespeare).

The reference is a self-contained copy of nanoGPT's model and train.py loop (memmap opened per batch,
per-row slicing + torch.stack, AdamW with nanoGPT's CPU settings (non-fused), `loss.item()` every step,
an evaluation every `eval_interval` steps with a checkpoint saved each time). Its evaluation is made to do
the same work as ttlab's: the validation split only (ttlab's train loss is the running mean of the training
batches, free, so nanoGPT's extra pass over train batches is dropped), over as many windows as ttlab
evaluates (`eval_iters × batch_size`, or every aligned window of a smaller split), in batches of
`batch_size`. Ours is `ttlab.lm.train` with its evaluation, best/latest atomic checkpoints, metrics.csv
and early-stopping bookkeeping switched on at the same interval. Both models have the same parameters
(checked: the reference's weights loaded into ours give identical logits).

The two run side by side in one process with the same thread count (set explicitly for both), one step
each in turn (the trainer's per-step hook runs one reference iteration and is not counted in our time),
so load from other processes on the machine hits both alike; both drop the same warm-up steps and time
the same steps (benchmarks/_timing.py). Reported per implementation:
  step      min and median time of a training step (steps without an evaluation)
  wall      mean wall time per iteration over the measured window, evaluations and checkpoints included
Target: ours/reference ≤ 1.0 for the training step (ratio of medians; the ratio of minima is printed too).

    python benchmarks/bench_lm.py [--quick] [--threads 2] [--vocab-size 2048] [--out results.json]
"""

from __future__ import annotations

import argparse
import inspect
import math
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from _timing import Timings, from_series, load_note
from torch.nn import functional as F

# ------------------------------------------------------------------------ nanoGPT reference (model.py)


@dataclass
class RefConfig:
    block_size: int = 64
    vocab_size: int = 2048
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    dropout: float = 0.0
    bias: bool = False


class RefLayerNorm(nn.Module):
    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class RefAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_attn = nn.Linear(c.n_embd, 3 * c.n_embd, bias=c.bias)
        self.c_proj = nn.Linear(c.n_embd, c.n_embd, bias=c.bias)
        self.resid_dropout = nn.Dropout(c.dropout)
        self.n_head, self.n_embd, self.dropout = c.n_head, c.n_embd, c.dropout

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=self.dropout if self.training else 0, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class RefMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_fc = nn.Linear(c.n_embd, 4 * c.n_embd, bias=c.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * c.n_embd, c.n_embd, bias=c.bias)
        self.dropout = nn.Dropout(c.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class RefBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1, self.attn = RefLayerNorm(c.n_embd, c.bias), RefAttention(c)
        self.ln_2, self.mlp = RefLayerNorm(c.n_embd, c.bias), RefMLP(c)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class RefGPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(c.vocab_size, c.n_embd), wpe=nn.Embedding(c.block_size, c.n_embd), drop=nn.Dropout(c.dropout),
            h=nn.ModuleList([RefBlock(c) for _ in range(c.n_layer)]), ln_f=RefLayerNorm(c.n_embd, c.bias)))
        self.lm_head = nn.Linear(c.n_embd, c.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * c.n_layer))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        logits = self.lm_head(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
        decay = [p for p in param_dict.values() if p.dim() >= 2]
        nodecay = [p for p in param_dict.values() if p.dim() < 2]
        groups = [{"params": decay, "weight_decay": weight_decay}, {"params": nodecay, "weight_decay": 0.0}]
        use_fused = "fused" in inspect.signature(torch.optim.AdamW).parameters and device_type == "cuda"
        return torch.optim.AdamW(groups, lr=learning_rate, betas=betas, **(dict(fused=True) if use_fused else {}))


class ReferenceLoop:
    """nanoGPT's train.py loop (single process, CPU), advanced one iteration at a time by :meth:`step`."""

    def __init__(self, bin_dir: Path, cfg: RefConfig, args, seed: int, workdir: Path, eval_windows: int) -> None:
        torch.manual_seed(seed)
        self.bin_dir, self.cfg, self.args, self.workdir = bin_dir, cfg, args, workdir
        self.eval_windows = eval_windows
        self.lr, self.min_lr, self.warmup_iters, self.lr_decay_iters = args.lr, args.lr / 10, 100, 2000
        self.model = RefGPT(cfg)
        self.optimizer = self.model.configure_optimizers(0.1, args.lr, (0.9, 0.95), "cpu")
        self.iter_num = 0
        self.best_val_loss = 1e9
        self.X, self.Y = self.get_batch("train")

    def get_batch(self, split, batch_size=None):
        block_size, batch_size = self.cfg.block_size, batch_size or self.args.batch_size
        data = np.memmap(self.bin_dir / f"{split}.bin", dtype=np.uint16, mode="r")
        ix = torch.randint(len(data) - block_size, (batch_size,))
        x = torch.stack([torch.from_numpy((data[i:i + block_size]).astype(np.int64)) for i in ix])
        y = torch.stack([torch.from_numpy((data[i + 1:i + 1 + block_size]).astype(np.int64)) for i in ix])
        return x, y

    def get_lr(self, it):
        if it < self.warmup_iters:
            return self.lr * (it + 1) / (self.warmup_iters + 1)
        if it > self.lr_decay_iters:
            return self.min_lr
        ratio = (it - self.warmup_iters) / (self.lr_decay_iters - self.warmup_iters)
        return self.min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (self.lr - self.min_lr)

    @torch.no_grad()
    def estimate_loss(self):
        """nanoGPT's estimate_loss on the split ttlab evaluates (val), over as many windows as ttlab's."""
        out = {}
        self.model.eval()
        bs = self.args.batch_size
        sizes = [min(bs, self.eval_windows - a) for a in range(0, self.eval_windows, bs)]
        for split in ["val"]:
            losses = torch.zeros(len(sizes))
            for k, size in enumerate(sizes):
                X, Y = self.get_batch(split, size)
                _, loss = self.model(X, Y)
                losses[k] = loss.item()
            out[split] = losses.mean()
        self.model.train()
        return out

    def step(self) -> tuple[float, bool]:
        """One iteration (evaluation + checkpoint first when due); returns (seconds, evaluated)."""
        t0 = time.perf_counter()
        model, optimizer = self.model, self.optimizer
        for g in optimizer.param_groups:
            g["lr"] = self.get_lr(self.iter_num)
        did_eval = self.iter_num % self.args.eval_interval == 0
        if did_eval:
            losses = self.estimate_loss()
            self.best_val_loss = min(self.best_val_loss, float(losses["val"]))  # always_save_checkpoint
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "iter_num": self.iter_num,
                        "best_val_loss": self.best_val_loss}, self.workdir / "ref_ckpt.pt")
        _, loss = model(self.X, self.Y)
        self.X, self.Y = self.get_batch("train")
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        _ = loss.item()  # log_interval = 1
        self.iter_num += 1
        return time.perf_counter() - t0, did_eval


def side_by_side(data, cfg: RefConfig, args, seed: int, workdir: Path) -> dict[str, dict]:
    """ttlab.lm.train (evaluation, checkpoints, metrics on) and the reference loop, one step each in turn.

    After each of our steps the trainer's ``should_stop`` hook runs one reference iteration, so the two
    alternate step by step and share whatever load the machine has. Our step time excludes the hook.
    Returns, per side, the seconds of iterations 2..n (iteration 1 holds our set-up) and which of them
    began with an evaluation (iteration ``it`` does when ``it - 1`` is a multiple of ``eval_interval``).
    """
    from ttlab.lm import GPTConfig, TrainConfig, train
    from ttlab.lm.evaluation import VAL_WINDOW_SEED, eval_windows

    n = args.warmup + args.iters + 1
    n_windows = int(eval_windows(data.tokens("val").size, cfg.block_size, args.eval_iters * args.batch_size,
                                 VAL_WINDOW_SEED).size)
    ref = ReferenceLoop(data.root, cfg, args, seed, workdir, n_windows)
    mcfg = GPTConfig(vocab_size=cfg.vocab_size, block_size=cfg.block_size, n_layer=cfg.n_layer, n_head=cfg.n_head,
                     n_embd=cfg.n_embd, dropout=0.0, bias=False)
    tcfg = TrainConfig(batch_size=args.batch_size, max_iters=n + 1, lr=args.lr, warmup_iters=100, lr_decay_iters=2000,
                       eval_interval=args.eval_interval, eval_iters=args.eval_iters, seed=seed, device="cpu", patience=1000,
                       threads=torch.get_num_threads())
    ours_t: list[float] = []
    ref_t: list[float] = []
    ref_evals: list[bool] = []
    mark = [0.0]

    def hook(it: int) -> bool:
        now = time.perf_counter()
        sec, evaluated = ref.step()
        if it > 1:  # iteration 1 also holds our set-up
            ours_t.append(now - mark[0])
            ref_t.append(sec)
            ref_evals.append(evaluated)
        mark[0] = time.perf_counter()
        return it >= n

    out = Path(tempfile.mkdtemp(dir=workdir, prefix="ours-"))
    train(data, mcfg, tcfg, out, should_stop=hook)
    evals = [(it - 1) % args.eval_interval == 0 for it in range(2, n + 1)]
    if ref_evals != evals:
        raise RuntimeError("the reference and ttlab evaluated at different iterations")
    return {"ours": {"times": ours_t, "evals": evals}, "reference": {"times": ref_t, "evals": evals},
            "eval_windows": n_windows}


def check_same_model(cfg: RefConfig) -> None:
    """The reference's weights in our GPT give the same logits: the two really are the same model."""
    from ttlab.lm import GPT, GPTConfig

    torch.manual_seed(0)
    ref = RefGPT(cfg).eval()
    ours = GPT(GPTConfig(vocab_size=cfg.vocab_size, block_size=cfg.block_size, n_layer=cfg.n_layer, n_head=cfg.n_head,
                         n_embd=cfg.n_embd)).eval()
    ours.load_state_dict(ref.state_dict())
    idx = torch.randint(cfg.vocab_size, (2, cfg.block_size))
    assert torch.allclose(ours(idx)[0], ref(idx, idx)[0], atol=1e-5), "models differ"
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in ref.parameters())


def summarise(chunks: list[dict], warmup: int) -> tuple[Timings, Timings]:
    """(training steps without an evaluation, all iterations) of every repetition, the first ``warmup``
    iterations of each repetition dropped on both sides alike."""
    steps: dict[str, list[float]] = {"ours": [], "reference": []}
    every: dict[str, list[float]] = {"ours": [], "reference": []}
    for c in chunks:
        for side in steps:
            times, evals = c[side]["times"][warmup:], c[side]["evals"][warmup:]
            every[side] += times
            steps[side] += [t for t, e in zip(times, evals) if not e]
    return from_series(steps, warmup=0), from_series(every, warmup=0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vocab-size", type=int, action="append", help="BPE vocabulary (repeatable; default 2048).")
    ap.add_argument("--iters", type=int, default=100, help="Measured steps per repetition.")
    ap.add_argument("--warmup", type=int, default=5, help="Unmeasured steps at the start of each repetition.")
    ap.add_argument("--reps", type=int, default=2, help="Repetitions (fresh models, other seeds).")
    ap.add_argument("--batch-size", type=int, default=12)
    ap.add_argument("--block-size", type=int, default=64)
    ap.add_argument("--eval-interval", type=int, default=20)
    ap.add_argument("--eval-iters", type=int, default=20)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--threads", type=int, default=None, help="torch threads for both (default: torch's).")
    ap.add_argument("--cache-dir", type=Path, default=None, help="ttlab token cache (default ~/.cache/ttlab/lm).")
    ap.add_argument("--out", type=Path, default=None, help="Also write the results as JSON here.")
    ap.add_argument("--quick", action="store_true", help="20 measured steps, 1 repetition, eval every 10 steps.")
    a = ap.parse_args()
    if a.quick:
        a.iters, a.reps, a.eval_interval, a.eval_iters = 20, 1, 10, 5
    from ttlab.lm import prepare_data
    from ttlab.provenance import atomic_write_json, versions

    torch.set_num_threads(a.threads or torch.get_num_threads())  # both sides run in this process
    print(load_note(), flush=True)
    results = []
    for vocab in a.vocab_size or [2048]:
        prep = prepare_data("builtin:sotu", vocab_size=vocab, cache_dir=a.cache_dir)
        cfg = RefConfig(block_size=a.block_size, vocab_size=prep.tokenizer.vocab_size)
        check_same_model(cfg)
        chunks = []
        with tempfile.TemporaryDirectory() as wd:
            for rep in range(a.reps):
                chunks.append(side_by_side(prep.data, cfg, a, rep, Path(wd)))
        steps, every = summarise(chunks, a.warmup)
        rs, rw = steps.ratio("ours", "reference"), every["ours"].mean / every["reference"].mean
        r = {"vocab_size": cfg.vocab_size, "n_layer": 4, "n_head": 4, "n_embd": 128, "block_size": a.block_size,
             "batch_size": a.batch_size, "eval_interval": a.eval_interval, "eval_iters": a.eval_iters,
             "eval_windows": chunks[0]["eval_windows"], "threads": torch.get_num_threads(), "reps": a.reps,
             "warmup": a.warmup, "steps": steps.to_dict(), "iterations": every.to_dict(),
             "ratio_step_median": rs.of_median, "ratio_step_min": rs.of_min, "ratio_wall_mean": rw,
             "tokens_per_s_ours": a.batch_size * a.block_size / every["ours"].mean}
        results.append(r)
        ms = {side: {k: 1e3 * getattr(steps[side], k) for k in ("min", "median")} for side in ("ours", "reference")}
        wall = {side: 1e3 * every[side].mean for side in ("ours", "reference")}
        print(f"[vocab {cfg.vocab_size}] 4L/4H/128, block {a.block_size}, batch {a.batch_size}, {r['threads']} threads "
              f"on both sides, val evaluation of {r['eval_windows']} windows every {a.eval_interval} steps on both sides; "
              f"{a.reps} repetition(s) of {a.iters} interleaved steps after {a.warmup} warm-up steps each:")
        print(f"    training step ({steps.repeats} steps without evaluation): ours median {ms['ours']['median']:.1f} ms "
              f"(min {ms['ours']['min']:.1f}) vs nanoGPT-style reference median {ms['reference']['median']:.1f} ms "
              f"(min {ms['reference']['min']:.1f}) → ours/reference {rs.of_median:.2f} (medians), {rs.of_min:.2f} (minima) "
              f"[target ≤ 1.0: {'OK' if rs.of_median <= 1.0 else 'SLOWER'}]")
        print(f"    per iteration incl. evaluation + checkpoints ({every.repeats} iterations): ours {wall['ours']:.1f} ms vs "
              f"reference {wall['reference']:.1f} ms (means) → ours/reference {rw:.2f} "
              f"[≤ 1.0: {'OK' if rw <= 1.0 else 'SLOWER'}]; ours {r['tokens_per_s_ours']:,.0f} tokens/s")
        sys.stdout.flush()
    if a.out:
        atomic_write_json(a.out, {"results": results, "versions": versions(("tokenizers",))})

if __name__ == "__main__":
    main()
