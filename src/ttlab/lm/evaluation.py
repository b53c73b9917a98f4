"""What the trainer measures, and how it records it: the fixed evaluation windows of a split
(:func:`eval_windows`), the mean per-token loss over them shared out over the ranks (:class:`Evaluator`), the mean of
the lowest evaluations (:func:`mean_lowest`), metrics.csv (:func:`metrics_csv`) and the weights' digest
(:func:`params_digest`).
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import math
from typing import Callable

import numpy as np
import torch

from ttlab.lm.distributed import DistInfo

__all__ = ["METRICS_COLUMNS", "VAL_WINDOW_SEED", "Evaluator", "eval_windows", "mean_lowest", "metrics_csv",
           "params_digest"]

METRICS_COLUMNS = ("iter", "tokens_seen", "train_loss", "val_loss", "lr", "elapsed_s")
#: The validation windows do not depend on the training seed: every run on a split sees the same ones.
VAL_WINDOW_SEED = 0


def eval_windows(n_tokens: int, block_size: int, max_windows: int | None, seed: int) -> np.ndarray:
    """Start offsets of the aligned, non-overlapping windows of ``block_size + 1`` tokens used to evaluate:
    all of them, or a seeded sample of ``max_windows`` (sorted)."""
    n_full = (n_tokens - 1) // block_size
    starts = np.arange(n_full, dtype=np.int64) * block_size
    if max_windows is not None and n_full > max_windows:
        pick = np.random.default_rng(seed).choice(n_full, size=max_windows, replace=False)
        starts = np.sort(starts[pick])
    return starts


def metrics_csv(history: list[dict[str, float]]) -> str:
    """The text of metrics.csv: one row per evaluation of ``history`` (:data:`METRICS_COLUMNS`, and ``test_loss``
    when evaluated), losses written exactly (``repr``)."""
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


class Evaluator:
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
        """Mean per-token loss of ``model`` over the windows (forward passes inside ``ctx()``), all ranks combined."""
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
