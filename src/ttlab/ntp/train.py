"""Algorithm 1 (two-stage normalized gradient descent) and the ablations reviewers asked for.

* ``schedule="two-stage"`` (the paper): stage 1 trains W_ov on the collocation loss L0 for T steps
  from W_ov(0); stage 2 fixes W_ov(T) and trains W_kq on the full loss L.
* ``schedule="joint"``: both layers on L at once for T + T2 steps, each with its own step size.
* ``optimizer``: ``ngd`` (W ← W − η ∇/‖∇‖_F, the paper), ``gd`` (W ← W − η ∇) or ``adam`` (learning
  rate η). ``init``: ``zero`` (the paper) or ``random`` (Gaussian, std ``init_scale``).

Every step records the loss (exact to rounding at any margin, and its natural log ``log_loss``, which
stays finite when the loss itself is below float64's range), the cosine to the max-margin direction, the Frobenius norm, the theorem's
norm bounds t·η/(2‖W*‖) ≤ ‖W(t)‖ ≤ t·η, and the minimum attention on optimal tokens.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import numpy as np
import torch

from ttlab.errors import TTLabInputError
from ttlab.ntp.config import (
    METRIC_COLUMNS,
    ProgressFn,
    TrainConfig,
    TrainResult,
)
from ttlab.ntp.dataset import NTPDataset
from ttlab.ntp.maxmargin import MaxMarginSolution, max_margin_kq, max_margin_ov
from ttlab.ntp.model import AUTO_FLOAT32_MAX_SPREAD, LossGrad, NTPTransformer, softmax_cross_entropy
from ttlab.ntp.structure import analyze, require_learnable, require_valid
from ttlab.ntp.structured import structured_ineligibility, train_structured

SMALL_PROBLEM = 2_000_000  # padded tokens × |V| below which one thread is fastest


def cosine(a: torch.Tensor, b: np.ndarray | torch.Tensor) -> float:
    """Cosine similarity of two matrices (NaN when either is zero), in float64 whatever their dtype, so a
    float32 run's 1 − cos is resolved below float32's rounding (1e-7)."""
    a = a.detach().double()
    b = b.double() if isinstance(b, torch.Tensor) else torch.as_tensor(b, dtype=torch.float64)
    na, nb = float(a.norm()), float(b.norm())
    if na == 0.0 or nb == 0.0:
        return float("nan")
    return float((a * b).sum()) / (na * nb)


class Stepper:
    """One parameter's update rule."""

    def __init__(self, W: torch.Tensor, optimizer: str, lr: float) -> None:
        self.W, self.kind, self.lr = W, optimizer, lr
        self.adam = torch.optim.Adam([W], lr=lr) if optimizer == "adam" else None

    def step(self, lg: LossGrad, grad: torch.Tensor) -> None:
        """Update with ``grad``, one of the (possibly rescaled, see :class:`LossGrad`) gradients of ``lg``."""
        with torch.no_grad():
            if self.kind == "ngd":  # the direction only: any positive common factor cancels
                amax = float(grad.abs().max()) if grad.numel() else 0.0
                if amax > 0:
                    unit = grad / amax  # largest entry 1, so the squares in the norm cannot underflow
                    self.W -= self.lr * unit / float(unit.norm())
            elif self.kind == "gd":
                self.W -= self.lr * lg.true_grad(grad)
            else:
                self.W.grad = lg.true_grad(grad)
                self.adam.step()


def _init_params(model: NTPTransformer, cfg: TrainConfig) -> tuple[torch.Tensor, torch.Tensor]:
    W_ov, W_kq = model.zeros()
    if cfg.init == "random":
        g = torch.Generator().manual_seed(cfg.seed)
        W_ov = cfg.init_scale * torch.randn(W_ov.shape, generator=g, dtype=model.dtype)
        W_kq = cfg.init_scale * torch.randn(W_kq.shape, generator=g, dtype=model.dtype)
    return W_ov, W_kq


def limit_loss(model: NTPTransformer, W_ov: torch.Tensor) -> float:
    """Stage-2 loss when every sentence puts its attention uniformly on its optimal positions."""
    opt = model.optimal_mask.to(model.dtype) * model.counts  # positions of each optimal distinct token
    phi = opt / opt.sum(1, keepdim=True).clamp_min(1)
    logits = model._logits(W_ov, phi, model.tokens, model._X)
    return softmax_cross_entropy(logits, model.labels, model.weights).loss


def logit_spread_bound(config: TrainConfig, vocab_size: int, embeddings: np.ndarray | None = None) -> float:
    """A-priori bound on |l_v − l_y| = |(e_v − e_y)ᵀ W_ov h| over a run (inf when there is none).

    h is a convex combination of embedding columns, so the spread is ≤ √2 · ‖W_ov‖_F · max_x ‖x‖. NGD moves
    W_ov by exactly η0 per step, so ‖W_ov(t)‖_F ≤ ‖W_ov(0)‖_F + η0·t with t ≤ T1 (two-stage) or T1 + T2
    (joint); a random init adds init_scale · (√(|V| d) + 6) (exceeded with probability < 1e-7). GD and Adam
    have no such bound (inf), so ``dtype="auto"`` keeps them in float64.
    """
    cfg = config.resolved(vocab_size if embeddings is None else int(np.shape(embeddings)[0]))
    if cfg.optimizer != "ngd":
        return math.inf
    d = vocab_size if embeddings is None else int(np.shape(embeddings)[0])
    xmax = 1.0 if embeddings is None else float(np.linalg.norm(np.asarray(embeddings, float), axis=0).max())
    steps = cfg.stage1_steps + (cfg.stage2_steps if cfg.schedule == "joint" else 0)
    w0 = cfg.init_scale * (math.sqrt(vocab_size * d) + 6.0) if cfg.init == "random" else 0.0
    return math.sqrt(2.0) * xmax * (w0 + cfg.eta0 * steps)


@contextmanager
def threads_for(model: NTPTransformer) -> Iterator[None]:
    """Use one intra-op thread for small problems, where thread hand-offs cost more than the work."""
    work = int(model.tokens.numel()) * model.vocab_size
    before = torch.get_num_threads()
    if work < SMALL_PROBLEM and before > 1:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def train(
    dataset: NTPDataset,
    config: TrainConfig | None = None,
    embeddings: np.ndarray | None = None,
    progress: ProgressFn | None = None,
    model: NTPTransformer | None = None,
    keep_interrupted: bool = False,
    check_assumptions: bool = True,
) -> TrainResult:
    """Run Algorithm 1 (or an ablation) on ``dataset`` and record the per-step diagnostics.

    ``check_assumptions`` (the default) refuses, as ``ttlab ntp run`` does, a dataset that breaks the paper's
    assumptions or leaves a stage nothing to learn (:func:`ttlab.ntp.structure.require_valid`,
    :func:`~ttlab.ntp.structure.require_learnable`); ``False`` trains anyway — the theorems then say nothing about
    the result.

    A KeyboardInterrupt during training propagates (an interrupted run is never a result), unless
    ``keep_interrupted``: then training ends early, the result holds the steps recorded so far and
    ``interrupted`` names where it stopped — for a caller that writes them and says so (``ntp run``).
    Stage 2 is skipped when W*_kq has no constraint and ``stage2_steps`` is 0, see
    :meth:`DatasetStructure.degenerate`.
    """
    cfg = config or TrainConfig()
    structure = analyze(dataset) if model is None else model.structure
    if check_assumptions:
        require_valid(structure)
        require_learnable(structure, cfg)
    if use_structured(cfg, embeddings if model is None else _embeddings_of(model), model):
        return train_structured(dataset, cfg, progress, structure=structure, keep_interrupted=keep_interrupted)
    t0 = time.perf_counter()
    spread = logit_spread_bound(cfg, dataset.vocab_size, embeddings if model is None else _embeddings_of(model))
    if model is None:
        model = NTPTransformer(dataset, embeddings=embeddings, dtype=cfg.dtype, structure=structure,
                               max_logit_spread=spread)
    elif cfg.dtype == "auto" and model.dtype == torch.float32 and spread > AUTO_FLOAT32_MAX_SPREAD:
        raise TTLabInputError(
            f"this run's logits can spread up to {spread:.3g} (> {AUTO_FLOAT32_MAX_SPREAD:.1f}), where float32 loses "
            "gradient terms; build the model with dtype='float64' or max_logit_spread=logit_spread_bound(config, …)"
        )
    with threads_for(model):
        cfg = replace(cfg.resolved(model.dim), dtype=model.dtype_name, impl="dense")
        state: dict = {}
        try:
            return _train(model, cfg, progress, t0, state)
        except KeyboardInterrupt:
            if not keep_interrupted or "metrics" not in state:
                raise
            m = state["metrics"]
            rows = min(len(v) for v in m.values())  # the interrupt may land between two columns of a row
            m = {k: v[:rows] for k, v in m.items()}
            where = f"stage {m['stage'][-1]}, step {m['step'][-1]}" if m["step"] else "before the first step"
            return TrainResult(
                config=cfg,
                W_ov=state["W_ov"].detach(),
                W_kq=state["W_kq"].detach(),
                wov_star=state["wov_star"],
                wkq_star=state["wkq_star"],
                metrics=m,
                wall_time_s=time.perf_counter() - t0,
                limit_loss=limit_loss(model, state["W_ov"].detach()),
                max_len=dataset.max_len,
                interrupted=where,
            )


def use_structured(cfg: TrainConfig, embeddings: np.ndarray | None, model: NTPTransformer | None = None) -> bool:
    """Whether ``cfg`` runs on the structured path. impl="auto": whenever it applies (one-hot, zero init,
    two-stage, NGD/GD, not float32); "structured": there, else a clear error; "dense": never."""
    if cfg.impl == "dense":
        return False
    why = structured_ineligibility(cfg, embeddings)
    if cfg.impl == "structured" and why:
        raise TTLabInputError(f"impl=structured cannot run this configuration: {why}; use impl=dense or auto",
                              params=("impl",))
    return why is None


def _embeddings_of(model: NTPTransformer) -> np.ndarray | None:
    return None if model.E is None else model.E.double().numpy()


def _train(
    model: NTPTransformer, cfg: TrainConfig, progress: ProgressFn | None, t0: float, state: dict | None = None
) -> TrainResult:
    dataset = model.dataset
    E = None if model.E is None else model.E.double().numpy()
    wov_star = max_margin_ov(model.structure.next_token_array(), E)
    wkq_star = max_margin_kq(model.structure.kq_triples(), model.vocab_size, E)
    W_ov, W_kq = _init_params(model, cfg)
    star_ov = torch.as_tensor(wov_star.W, dtype=torch.float64)
    star_kq = torch.as_tensor(wkq_star.W, dtype=torch.float64)
    m: dict[str, list] = {c: [] for c in METRIC_COLUMNS}
    nan = float("nan")
    if state is not None:  # what an interrupted run still reports (the steppers update W in place)
        state.update(metrics=m, W_ov=W_ov, W_kq=W_kq, wov_star=wov_star, wkq_star=wkq_star)

    frozen_ov: tuple[float, float] | None = None  # (cosine, norm) of W_ov once it stops changing

    def record(stage: str, t: int, lg: LossGrad, W: torch.Tensor, star: MaxMarginSolution, eta: float, att: float) -> None:
        star_t = star_ov if star is wov_star else star_kq
        cos_w, norm_w = cosine(W, star_t), float(W.norm())
        if W is W_ov:
            ov = (cos_w, norm_w)
        else:
            ov = frozen_ov or (cosine(W_ov, star_ov), float(W_ov.norm()))
        vals = (stage, t, lg.loss, cos_w, norm_w, t * eta / (2 * star.norm) if star.norm > 0 else nan, t * eta, att, *ov,
                lg.log_loss)
        for c, v in zip(METRIC_COLUMNS, vals):
            m[c].append(v)

    if cfg.schedule == "two-stage":
        stepper = Stepper(W_ov, cfg.optimizer, cfg.eta0)
        for t in range(cfg.stage1_steps + 1):
            lg = model.collocation_loss_and_grad(W_ov)
            record("1", t, lg, W_ov, wov_star, cfg.eta0, nan)
            if t < cfg.stage1_steps:
                stepper.step(lg, lg.grad_ov)
            if progress:
                progress("stage 1", t, cfg.stage1_steps)
        W_ov = W_ov.detach()
        frozen_ov = (cosine(W_ov, star_ov), float(W_ov.norm()))
        stepper = Stepper(W_kq, cfg.optimizer, cfg.eta)
        for t in range(cfg.stage2_steps + 1 if cfg.stage2_steps or wkq_star.n_constraints else 0):
            lg = model.loss_and_grad(W_ov, W_kq, wrt=("kq",))
            record("2", t, lg, W_kq, wkq_star, cfg.eta, model.min_optimal_attention(lg.attention))
            if t < cfg.stage2_steps:
                stepper.step(lg, lg.grad_kq)
            if progress:
                progress("stage 2", t, cfg.stage2_steps)
    else:
        steps = cfg.stage1_steps + cfg.stage2_steps
        s_ov = Stepper(W_ov, cfg.optimizer, cfg.eta0)
        s_kq = Stepper(W_kq, cfg.optimizer, cfg.eta)
        for t in range(steps + 1):
            lg = model.loss_and_grad(W_ov, W_kq)
            record("joint", t, lg, W_kq, wkq_star, cfg.eta, model.min_optimal_attention(lg.attention))
            if t < steps:
                s_ov.step(lg, lg.grad_ov)
                s_kq.step(lg, lg.grad_kq)
            if progress:
                progress("joint", t, steps)
    W_ov, W_kq = W_ov.detach(), W_kq.detach()
    return TrainResult(
        config=cfg,
        W_ov=W_ov,
        W_kq=W_kq,
        wov_star=wov_star,
        wkq_star=wkq_star,
        metrics=m,
        wall_time_s=time.perf_counter() - t0,
        limit_loss=limit_loss(model, W_ov),
        max_len=dataset.max_len,
    )
