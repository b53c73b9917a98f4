"""Theorem 1 of paper B tested directly: regression of β-Hölder targets on d-dimensional manifolds.

The squared generalisation error of a transformer should fall as n^(−α_D), α_D = 2β/(2β + d),
with the *intrinsic* dimension d, whatever the ambient dimension D. This module

1. builds the problems (:mod:`ttlab.scaling.targets`: sphere S^d isometrically embedded in R^D,
   random ridge targets with a power-law spectrum, label noise σ, clean test targets);
2. trains a regressor per (arch, d, D, n, seed, learning rate) — :func:`train_run`, a sweep task
   with AdamW, warm-up + cosine decay to zero, the best-validation checkpoint, and a flag for runs
   whose best step comes close to the step limit (``step_limited``: more steps could still help,
   so such sizes are left out of the slope fits);
3. runs a k-NN reference (:func:`knn_run`) on the same data — a model-free gauge of difficulty;
4. estimates the ID of every (d, D) point cloud with ttlab's MLE and predicts α_D from it;
5. fits α̂_D (power and offset forms, bootstrap CIs via :mod:`ttlab.scaling.fit`) and, when
   asked, α̂_N from a model-size sweep at the largest n; draws the figure.

Every task goes through :func:`ttlab.sweep.run_sweep`, so results are cached per run and a sweep
that is interrupted resumes where it stopped. :func:`run_manifold_sweep` is the one-call entry
point used by ``ttlab scaling manifold``.

Size grids, learning-rate selection and the power-law fits come from :mod:`ttlab.scaling.analysis`; every
fitted exponent (α̂_D, α̂_N, the oracles') is written with the keys of
:class:`ttlab.scaling.analysis.FittedExponent` (bootstrap interval). The figure is
:func:`ttlab.scaling.figures.plot_manifold_scaling`. Configs validate when made (``__post_init__``).

May import: numpy, torch (inside the tasks), :mod:`ttlab.errors`, :mod:`ttlab.validation`, :mod:`ttlab.provenance`, :mod:`ttlab.sweep`,
:mod:`ttlab.intrinsic_dim` and the other :mod:`ttlab.scaling` modules. Not :mod:`ttlab.lm` or the CLI.
"""

from __future__ import annotations

import copy
import functools
import itertools
import math
import os
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim import PAPER
from ttlab.scaling.analysis import FittedExponent, best_by, geometric_sizes, power_law_fits
from ttlab.scaling.regressors import ARCHS, RegressorConfig
from ttlab.scaling.targets import (
    PROFILES,
    REGRESSION_MANIFOLDS,
    SPECTRA,
    ManifoldProblem,
    make_problem,
    make_splits,
)
from ttlab.validation import check_float, check_int

__all__ = [
    "ORACLE_KS",
    "ORACLE_TOL",
    "REGIMES",
    "ManifoldSweepConfig",
    "TrainSettings",
    "aggregate",
    "approx_run",
    "approximation_error",
    "design_check",
    "estimate_cost",
    "estimate_ids",
    "knn_run",
    "plan_tasks",
    "quick_config",
    "run_manifold_sweep",
    "train_run",
]

SCHEMA = "ttlab.scaling.manifold/1"


# ---------------------------------------------------------------------------------------------
# configuration


@dataclass(frozen=True)
class TrainSettings:
    """Optimisation of one run. Steps: ``clamp(epochs · n / batch, min_steps, max_steps)``.

    The learning rate warms up linearly over ``warmup_frac`` of the steps and then follows a
    cosine to zero at the planned last step. Validation MSE is measured ``eval_points`` times;
    the best checkpoint is kept; training stops once the best is ``patience_frac`` of the
    schedule old. A run whose best step is later than ``limit_frac · max_steps`` is flagged
    ``step_limited`` (it might still improve with a larger step limit; such sizes are left out of
    slope fits). Below the limit every size gets the same number of epochs.
    Validation size: ``clamp(n_val_frac · n, n_val_min, n_val_max)`` — by default 2048 at every n, so the
    choice of the checkpoint (networks) and of k (the k-NN oracle) is equally reliable at every n (a
    validation set growing with n makes the small-n errors relatively worse and steepens the slopes).
    """

    batch_size: int = 128
    epochs: float = 100.0
    min_steps: int = 300
    max_steps: int = 4000
    weight_decay: float = 0.0
    warmup_frac: float = 0.05
    eval_points: int = 40
    patience_frac: float = 0.3
    limit_frac: float = 0.8
    grad_clip: float = 1.0
    n_val_frac: float = 0.25
    n_val_min: int = 2048
    n_val_max: int = 2048

    def __post_init__(self) -> None:
        """Raise :class:`TTLabInputError` for out-of-range settings (an invalid instance cannot be made)."""
        for name in ("batch_size", "min_steps", "max_steps", "eval_points", "n_val_min", "n_val_max"):
            check_int(getattr(self, name), name, 1)
        if self.min_steps > self.max_steps:
            raise TTLabInputError(f"min_steps ({self.min_steps}) must be <= max_steps ({self.max_steps})")
        if self.n_val_min > self.n_val_max:
            raise TTLabInputError(f"n_val_min ({self.n_val_min}) must be <= n_val_max ({self.n_val_max})")
        for name, lo, hi, lo_open in (("epochs", 0, None, True), ("warmup_frac", 0, 0.5, False),
                                      ("patience_frac", 0, 1, True), ("limit_frac", 0, 1, True),
                                      ("n_val_frac", 0, 10, True), ("grad_clip", 0, None, True)):
            check_float(getattr(self, name), name, lo, hi, lo_open=lo_open)
        check_float(self.weight_decay, "weight_decay", 0)

    def steps(self, n: int) -> int:
        """Planned optimisation steps (schedule length) for ``n`` training points."""
        return int(min(self.max_steps, max(self.min_steps, math.ceil(self.epochs * n / self.batch_size))))

    def n_val(self, n: int) -> int:
        """Validation-set size for ``n`` training points."""
        return int(min(self.n_val_max, max(self.n_val_min, round(self.n_val_frac * n))))


REGIMES = ("noisy", "noiseless")
"""*noisy*: label noise σ (default 1, i.e. σ² = the target's variance) — the regime where Theorem 1's
exponent 2β/(2β+d) is the minimax rate; *noiseless*: σ = 0, where the minimax rate is the faster 2β/d
and Theorem 1 is only the bound α_D ≥ 2β/(2β+d)."""

ORACLE_TOL = 0.05
"""A design is acceptable when the oracle's slope is within this of 2β/(2β+d) (noisy regime), or at
least 2β/(2β+d) minus this (noiseless regime, where the theory is a bound)."""


def design_check(fit: dict[str, Any], tol: float = ORACLE_TOL) -> tuple[bool | None, str]:
    """Whether the oracle validates the design of a fit row (``oracle_alpha``, ``alpha_pred``, ``regime``):
    (passed, reason); ``None`` when there is no oracle slope."""
    o, p = fit.get("oracle_alpha"), fit.get("alpha_pred")
    if o is None or p is None or not (math.isfinite(o) and math.isfinite(p)):
        return None, "no oracle slope"
    miss = o - p
    if fit.get("regime") == "noiseless":
        if miss < -tol:
            return False, f"oracle {o:.3f} is shallower than the bound {p:.3f} by {-miss:.3f} > {tol:g}"
        return True, f"oracle {o:.3f} ≥ {p:.3f} − {tol:g}"
    if abs(miss) > tol:
        return False, (f"oracle {o:.3f} is {'steeper' if miss > 0 else 'shallower'} than {p:.3f} by "
                       f"{abs(miss):.3f} > {tol:g}")
    return True, f"oracle {o:.3f} within {tol:g} of {p:.3f}"


ORACLE_KS = tuple(sorted({int(round(v)) for v in np.geomspace(1, 1024, 21)}))
"""Neighbour counts the k-NN oracle chooses from on validation (capped at n)."""


@dataclass(frozen=True)
class ManifoldSweepConfig:
    """A manifold-regression sweep: the grid, the problem, the models, the oracle and the training.

    Grid: every (arch, β, regime, d, D, n, seed, learning rate). ``regimes``: ``"noisy"`` (label
    noise ``noise``) and/or ``"noiseless"`` (σ = 0) — see :data:`REGIMES`. ``tokens`` is the sequence
    length of the transformers (chunk = ⌈D / tokens⌉ coordinates per token).

    The oracle (``knn``): k-NN with k chosen on validation, fitted on the same splits (seeds
    0..``seeds``−1) plus further seeds up to ``oracle_seeds``; its slope validates the design.

    ``model_widths`` (optional) adds a model-size sweep (α̂_N against 2β/d) at n = ``model_n``
    (default ``n_max``), D = min(``ambients``), in regime ``model_regime``, for every (arch, β, d);
    the widest model is also trained at 2n (the data-limit check), and a piecewise-constant
    approximation with N cells (``approx_cells``) is the oracle of the approximation rate N^(−2β/d).
    """

    ds: tuple[int, ...] = (1, 2, 4)
    ambients: tuple[int, ...] = (16, 128, 768)
    n_min: int = 64
    n_max: int = 8192
    points: int = 8
    archs: tuple[str, ...] = ("softmax", "relu", "mlp")
    betas: tuple[float, ...] = (1.0, 0.5)
    regimes: tuple[str, ...] = REGIMES
    seeds: int = 2
    oracle_seeds: int = 6
    lrs: tuple[float, ...] = (2e-3,)
    manifold: str = "sphere"
    profile: str = "sin"
    spectrum: str = "weighted"
    n_features: int = 1024
    min_freq: float | None = None
    max_freq: float = 1024.0
    noise: float = 1.0
    problem_seed: int = 0
    n_test: int = 4096
    width: int = 64
    depth: int = 2
    n_head: int = 4
    tokens: int = 8
    model_widths: tuple[int, ...] = (8, 16, 32, 64, 128)
    model_n: int | None = None
    model_regime: str = "noiseless"
    approx_cells: tuple[int, ...] = (16, 64, 256, 1024, 4096, 16384)
    id_points: int = PAPER.batch_size  # one batch of the paper's protocol
    id_k: int = PAPER.k
    knn: bool = True
    bootstrap: int = 1000
    bootstrap_offset: int = 200
    train: TrainSettings = field(default_factory=TrainSettings)

    def __post_init__(self) -> None:
        """Raise :class:`TTLabInputError` for an invalid sweep (an invalid instance cannot be made)."""
        for name in ("ds", "ambients"):
            vals = getattr(self, name)
            if not vals or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in vals):
                raise TTLabInputError(f"{name} must be a non-empty list of positive integers, got {list(vals)!r}")
            if len(set(vals)) != len(vals):
                raise TTLabInputError(f"{name} has duplicates: {list(vals)!r}")
        for name in ("n_min", "n_max", "points", "seeds", "oracle_seeds", "n_test", "width", "depth", "n_head",
                     "tokens", "n_features", "id_points"):
            check_int(getattr(self, name), name, 1)
        if self.n_min < 2:
            raise TTLabInputError(f"n_min must be >= 2, got {self.n_min}")
        if self.n_max < self.n_min:
            raise TTLabInputError(f"n_max ({self.n_max}) must be >= n_min ({self.n_min})")
        if self.points > 1 and self.n_max == self.n_min:
            raise TTLabInputError("n_max must be > n_min for more than one size")
        if len(geometric_sizes(self.n_min, self.n_max, self.points)) < self.points:
            raise TTLabInputError(
                f"{self.points} sizes between {self.n_min} and {self.n_max} would repeat integers; use fewer points"
            )
        if not self.archs or len(set(self.archs)) != len(self.archs):
            raise TTLabInputError(f"archs must be a non-empty list without duplicates, got {list(self.archs)!r}")
        for a in self.archs:
            if a not in ARCHS:
                raise TTLabInputError(f"unknown arch {a!r}; choose one of {', '.join(ARCHS)}")
        if not self.betas or len(set(self.betas)) != len(self.betas):
            raise TTLabInputError(f"betas must be a non-empty list without duplicates, got {list(self.betas)!r}")
        if not self.regimes or len(set(self.regimes)) != len(self.regimes):
            raise TTLabInputError(f"regimes must be a non-empty list without duplicates, got {list(self.regimes)!r}")
        for rg in (*self.regimes, self.model_regime):
            if rg not in REGIMES:
                raise TTLabInputError(f"unknown regime {rg!r}; choose one of {', '.join(REGIMES)}")
        if "noisy" in self.regimes and not (isinstance(self.noise, (int, float)) and self.noise > 0):
            raise TTLabInputError(f"the noisy regime needs label noise sigma > 0, got {self.noise!r}")
        if self.manifold not in REGRESSION_MANIFOLDS:
            raise TTLabInputError(f"unknown manifold {self.manifold!r}; choose one of {', '.join(REGRESSION_MANIFOLDS)}")
        if self.profile not in PROFILES:
            raise TTLabInputError(f"unknown target profile {self.profile!r}; choose one of {', '.join(PROFILES)}")
        if self.spectrum not in SPECTRA:
            raise TTLabInputError(f"unknown target spectrum {self.spectrum!r}; choose one of {', '.join(SPECTRA)}")
        if not self.lrs or any(not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0) for v in self.lrs):
            raise TTLabInputError(f"learning rates must be positive numbers, got {list(self.lrs)!r}")
        if any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in self.model_widths):
            raise TTLabInputError(f"model widths must be positive integers, got {list(self.model_widths)!r}")
        if self.model_widths and len(self.model_widths) < 3:
            raise TTLabInputError("a model-size sweep needs at least 3 widths to fit an exponent")
        if len(set(self.model_widths)) != len(self.model_widths):
            raise TTLabInputError(f"model widths have duplicates: {list(self.model_widths)!r}")
        if self.model_widths and (len(self.approx_cells) < 3 or any(
                isinstance(v, bool) or not isinstance(v, int) or v < 2 for v in self.approx_cells)):
            raise TTLabInputError(f"approx_cells must list at least 3 integers >= 2, got {list(self.approx_cells)!r}")
        if self.model_n is not None:
            check_int(self.model_n, "model_n", 1)
        if self.id_k < 2 or self.id_k >= self.id_points:
            raise TTLabInputError(f"id_k must be in [2, id_points), got {self.id_k}")
        for name in ("bootstrap", "bootstrap_offset"):
            check_int(getattr(self, name), name, 0)
        if not isinstance(self.train, TrainSettings):
            raise TTLabInputError(f"train must be a TrainSettings, got {type(self.train).__name__}")
        for beta in self.betas:
            for rg in self.regimes:
                for d in self.ds:
                    for D in self.ambients:  # checks β, σ, K, R and that R^D can hold the manifold
                        _check_problem_args(self, d, D, beta, self.noise_of(rg))
        widths = (self.width,) + tuple(self.model_widths)
        for arch in self.archs:
            for D in self.ambients:
                for w in widths:
                    self.model_config(D, w, arch)  # builds (and so validates) every model of the grid

    def min_freq_of(self, d: int) -> float:
        """Smallest target frequency r_0 at intrinsic dimension d: ``min_freq``, or by default max(1, d/2).

        Tuned with the k-NN oracle: the band [r_0, R] must start near the largest scale the estimators
        resolve at the smallest n, which grows with d (≈ n^(−1/(2β+d))); r_0 = 1 leaves d = 4 steep
        by ≈ 0.05, r_0 = 2 leaves d = 1 steep by ≈ 0.07–0.09.
        """
        return float(self.min_freq) if self.min_freq is not None else max(1.0, d / 2.0)

    def noise_of(self, regime: str) -> float:
        """Label-noise σ of a regime (``noise`` when noisy, 0 when noiseless)."""
        return float(self.noise) if regime == "noisy" else 0.0

    def sizes(self) -> list[int]:
        """Training-set sizes: a geometric grid from ``n_min`` to ``n_max``."""
        return geometric_sizes(self.n_min, self.n_max, self.points)

    def model_config(self, ambient: int, width: int | None = None, arch: str | None = None) -> RegressorConfig:
        """Regressor architecture at ambient dimension ``ambient`` (width defaults to ``width``, arch to
        the first of ``archs``)."""
        w = self.width if width is None else width
        chunk = -(-ambient // min(self.tokens, ambient))
        n_head = self.n_head if w % self.n_head == 0 else 1
        return RegressorConfig(arch=arch or self.archs[0], ambient=ambient, n_embd=w, n_layer=self.depth,
                               n_head=n_head, chunk=chunk)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        out = asdict(self)
        out["sizes"] = self.sizes()
        return out


def _check_problem_args(cfg: ManifoldSweepConfig, d: int, D: int, beta: float, noise: float) -> None:
    make_problem(d, D, manifold=cfg.manifold, beta=beta, profile=cfg.profile, n_features=min(cfg.n_features, 4),
                 min_freq=cfg.min_freq_of(d), max_freq=cfg.max_freq, noise=noise, problem_seed=cfg.problem_seed,
                 spectrum=cfg.spectrum)


def quick_config(**overrides: Any) -> ManifoldSweepConfig:
    """The ``--quick`` preset: softmax transformer, β = 1, noisy regime, d ∈ {2, 4}, D ∈ {16, 128}, 5 sizes
    from 128 to 2048, 1 seed (the k-NN oracle: 4 seeds), short schedules, no model-size sweep."""
    base = ManifoldSweepConfig(
        ds=(2, 4), ambients=(16, 128), n_min=128, n_max=2048, points=5, archs=("softmax",), betas=(1.0,),
        regimes=("noisy",), seeds=1, oracle_seeds=4, n_test=2048, width=32, tokens=4, id_points=2048,
        bootstrap=500, model_widths=(),
        train=TrainSettings(epochs=30, min_steps=200, max_steps=1000, eval_points=20),
    )
    return replace(base, **overrides)


def standard_config(**overrides: Any) -> ManifoldSweepConfig:
    """The ``--standard`` preset (``ttlab reproduce --standard``), fixed before its runs: the quick grid on
    d ∈ {1, 2} with 2 seeds, plus the model-size sweep that tests α_N = 2β/d — widths 4…64 at n = 2048, noisy
    regime (σ as in the data sweep), β = 1, with the piecewise-constant approximation oracle (16…4,096 cells) and
    the widest model also trained at 2n (the data-limit check)."""
    base = quick_config(ds=(1, 2), seeds=2, model_widths=(4, 8, 16, 32, 64), model_regime="noisy",
                        approx_cells=(16, 64, 256, 1024, 4096))
    return replace(base, **overrides)


# ---------------------------------------------------------------------------------------------
# tasks (module-level functions of a JSON config: picklable, cacheable)


@functools.lru_cache(maxsize=16)
def _cached_problem(d: int, ambient: int, manifold: str, beta: float, profile: str, n_features: int,
                    min_freq: float, max_freq: float, noise: float, problem_seed: int,
                    spectrum: str) -> ManifoldProblem:
    return make_problem(d, ambient, manifold=manifold, beta=beta, profile=profile, n_features=n_features,
                        min_freq=min_freq, max_freq=max_freq, noise=noise, problem_seed=problem_seed,
                        spectrum=spectrum)


def _problem_from(config: dict[str, Any]) -> ManifoldProblem:
    """The (per-process cached) problem of a task config; the problem is immutable."""
    p = config["problem"]
    return _cached_problem(
        int(config["d"]), int(config["ambient"]), p["manifold"], float(p["beta"]), p["profile"], int(p["n_features"]),
        float(p["min_freq"]), float(p["max_freq"]), float(p["noise"]), int(p["problem_seed"]),
        p.get("spectrum", "sampled"),
    )


def _lr_at(it: int, base: float, warmup: int, total: int) -> float:
    if it < warmup:
        return base * (it + 1) / warmup
    progress = (it - warmup) / max(1, total - warmup)
    return base * 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))


def _mse(model: Any, x: Any, y: Any, batch: int = 4096) -> float:
    import torch

    with torch.no_grad():
        total = 0.0
        for a in range(0, x.shape[0], batch):
            total += float(((model(x[a:a + batch]) - y[a:a + batch]) ** 2).sum())
    return total / x.shape[0]


def _adamw(model: Any, lr: float, weight_decay: float) -> Any:
    """AdamW, fused where this torch build supports it on CPU (same maths, fewer kernel launches)."""
    import torch

    try:
        return torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.99), weight_decay=weight_decay, fused=True)
    except (RuntimeError, TypeError, ValueError):
        return torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.99), weight_decay=weight_decay)


def train_run(config: dict[str, Any]) -> dict[str, Any]:
    """Train one regressor and return its test MSE against the clean target (a sweep task).

    ``config`` keys: ``d``, ``ambient``, ``n``, ``seed``, ``lr``, ``problem`` (make_problem
    arguments), ``model`` (:class:`RegressorConfig` fields), ``train`` (:class:`TrainSettings`
    fields), ``n_test``. The seed fixes the data, the initialisation and the batch order.
    """
    import torch

    t0 = time.perf_counter()
    ts = TrainSettings(**config["train"])
    mcfg = RegressorConfig(**config["model"])
    n, seed, lr = int(config["n"]), int(config["seed"]), float(config["lr"])
    problem = _problem_from(config)
    n_val = ts.n_val(n)
    data = make_splits(problem, n, n_val, int(config["n_test"]), seed)
    xt, yt = torch.from_numpy(data.x_train), torch.from_numpy(data.y_train)
    xv, yv = torch.from_numpy(data.x_val), torch.from_numpy(data.y_val)

    from ttlab.scaling.regressors import build_regressor, count_parameters

    with torch.random.fork_rng(devices=[]):  # seeded initialisation without touching the caller's RNG
        torch.manual_seed(seed)
        model = build_regressor(mcfg)
    opt = _adamw(model, lr, ts.weight_decay)
    steps = ts.steps(n)
    warmup = max(1, int(ts.warmup_frac * steps))
    eval_every = max(1, steps // ts.eval_points)
    gen = torch.Generator().manual_seed(seed)
    batch = min(ts.batch_size, n)

    model.eval()
    history = [[0, _mse(model, xv, yv)]]
    best_val, best_step = history[0][1], 0
    best_state = copy.deepcopy(model.state_dict())
    perm, pos = torch.randperm(n, generator=gen), 0
    stopped_early = diverged = False
    it = 0
    model.train()
    for it in range(steps):
        if pos + batch > n:
            perm, pos = torch.randperm(n, generator=gen), 0
        idx = perm[pos:pos + batch]
        pos += batch
        for group in opt.param_groups:
            group["lr"] = _lr_at(it, lr, warmup, steps)
        loss = torch.mean((model(xt[idx]) - yt[idx]) ** 2)
        if not torch.isfinite(loss):
            diverged = True
            break
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), ts.grad_clip)
        opt.step()
        step = it + 1
        if step % eval_every == 0 or step == steps:
            model.eval()
            val = _mse(model, xv, yv)
            model.train()
            history.append([step, val])
            if val < best_val:
                best_val, best_step = val, step
                best_state = copy.deepcopy(model.state_dict())
            elif step - best_step > ts.patience_frac * steps:
                stopped_early = True
                break
    model.load_state_dict(best_state)
    model.eval()
    test_mse = _mse(model, torch.from_numpy(data.x_test), torch.from_numpy(data.f_test))
    return {
        "test_mse": test_mse,
        "val_mse": best_val,
        "train_mse": _mse(model, xt, yt),
        "train_mse_clean": _mse(model, xt, torch.from_numpy(data.f_train)),
        "n_val": n_val,
        "n_params": count_parameters(model),
        "steps_planned": steps,
        "steps_run": history[-1][0] if not diverged else it,
        "best_step": best_step,
        "step_limited": bool(best_step > ts.limit_frac * ts.max_steps),
        "stopped_early": stopped_early,
        "diverged": diverged,
        "val_history": history,
        "seconds": time.perf_counter() - t0,
        "threads": torch.get_num_threads(),
    }


def knn_run(config: dict[str, Any]) -> dict[str, Any]:
    """The k-NN oracle (k chosen on validation from :data:`ORACLE_KS`) on the same splits as
    :func:`train_run` (a sweep task)."""
    from ttlab.scaling.targets import knn_regression

    t0 = time.perf_counter()
    ts = TrainSettings(**config["train"])
    n, seed = int(config["n"]), int(config["seed"])
    data = make_splits(_problem_from(config), n, ts.n_val(n), int(config["n_test"]), seed)
    out = knn_regression(data.x_train, data.y_train, data.x_val, data.y_val, data.x_test, data.f_test, ks=ORACLE_KS)
    out["seconds"] = time.perf_counter() - t0
    return out


def approximation_error(problem: ManifoldProblem, cells: int, n_test: int, seed: int) -> float:
    """Squared L2 error of the piecewise-constant approximation of the clean target on ``cells`` Voronoi cells.

    Centres: ``cells`` seeded points of the manifold; the value on a cell is the target at its centre.
    For a β-Hölder target on a d-dimensional manifold the error falls as cells^(−2β/d) (cell diameter
    ∝ cells^(−1/d)): the oracle of the approximation rate that α̂_N is compared with.
    """
    import torch

    check_int(cells, "cells", 1)
    centres = make_splits(problem, cells, 1, n_test, seed)
    c = torch.from_numpy(centres.x_train)
    fc = torch.from_numpy(centres.f_train)
    x, f = torch.from_numpy(centres.x_test), torch.from_numpy(centres.f_test)
    idx = torch.cat([torch.cdist(x[a:a + 1024], c).argmin(dim=1) for a in range(0, x.shape[0], 1024)])
    return float(((fc[idx] - f) ** 2).mean())


def approx_run(config: dict[str, Any]) -> dict[str, Any]:
    """:func:`approximation_error` of a task config with ``cells`` (a sweep task)."""
    t0 = time.perf_counter()
    err = approximation_error(_problem_from(config), int(config["cells"]), int(config["n_test"]), int(config["seed"]))
    return {"approx_mse": err, "seconds": time.perf_counter() - t0}


def _base_task(cfg: ManifoldSweepConfig, d: int, D: int, n: int, seed: int, beta: float, regime: str) -> dict[str, Any]:
    return {
        "d": d, "ambient": D, "n": n, "seed": seed, "n_test": cfg.n_test, "regime": regime,
        "problem": {"manifold": cfg.manifold, "beta": beta, "profile": cfg.profile, "n_features": cfg.n_features,
                    "min_freq": cfg.min_freq_of(d), "max_freq": cfg.max_freq, "noise": cfg.noise_of(regime),
                    "problem_seed": cfg.problem_seed, "spectrum": cfg.spectrum},
        "train": asdict(cfg.train),
    }


def plan_tasks(cfg: ManifoldSweepConfig) -> dict[str, list[dict[str, Any]]]:
    """The sweep's task configs: ``{"data": [...], "model": [...], "knn": [...], "approx": [...]}``.

    ``data``: every (arch, β, regime, d, D, n, seed, lr) at the base width; ``knn``: every (β, regime,
    d, n, oracle seed) at D = min(``ambients``) — the inputs at every D are the same intrinsic points
    under a similarity map, which leaves every neighbour order, hence the k-NN prediction, unchanged;
    ``model``: every (arch, β, d, width, seed, lr) at n = ``model_n``, D =
    min(``ambients``), regime ``model_regime``, plus the widest model at 2·``model_n`` (``"check": true``);
    ``approx``: the approximation oracle for every (β, d, cells).
    """
    data, model, knn, approx = [], [], [], []
    model_n = cfg.model_n or cfg.n_max
    D0 = min(cfg.ambients)
    for beta in cfg.betas:
        for regime in cfg.regimes:
            for d in cfg.ds:
                for D in cfg.ambients:
                    for seed in range(max(cfg.seeds, cfg.oracle_seeds if cfg.knn else 0)):
                        for n in cfg.sizes():
                            base = _base_task(cfg, d, D, n, seed, beta, regime)
                            if cfg.knn and D == D0:  # k-NN is invariant to the similarity embedding: one D
                                knn.append(base)
                            if seed >= cfg.seeds:
                                continue
                            for arch in cfg.archs:
                                for lr in cfg.lrs:
                                    data.append({**base, "lr": lr, "model": cfg.model_config(D, arch=arch).to_dict()})
        if not cfg.model_widths:
            continue
        for d in cfg.ds:
            for cells in cfg.approx_cells:
                approx.append({**_base_task(cfg, d, D0, cells, 0, beta, cfg.model_regime), "cells": cells})
            for arch in cfg.archs:
                for seed in range(cfg.seeds):
                    for w in cfg.model_widths:
                        for lr in cfg.lrs:
                            model.append({**_base_task(cfg, d, D0, model_n, seed, beta, cfg.model_regime), "lr": lr,
                                          "model": cfg.model_config(D0, w, arch).to_dict()})
                    for lr in cfg.lrs:  # the data-limit check: the widest model at twice the data
                        model.append({**_base_task(cfg, d, D0, 2 * model_n, seed, beta, cfg.model_regime), "lr": lr,
                                      "model": cfg.model_config(D0, max(cfg.model_widths), arch).to_dict(),
                                      "check": True})
    return {"data": data, "model": model, "knn": knn, "approx": approx}


# ---------------------------------------------------------------------------------------------
# cost


def _time_steps(mcfg: RegressorConfig, batch: int, threads: int, n_steps: int = 8) -> float:
    """Seconds per training step of ``mcfg`` at this batch size, measured with ``threads`` threads."""
    import torch

    from ttlab.scaling.regressors import build_regressor

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        torch.manual_seed(0)
        model = build_regressor(mcfg)
        opt = _adamw(model, 1e-3, 0.0)
        x, y = torch.randn(batch, mcfg.ambient), torch.randn(batch)
        times = []
        for i in range(n_steps + 2):
            t = time.perf_counter()
            loss = torch.mean((model(x) - y) ** 2)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            if i >= 2:
                times.append(time.perf_counter() - t)
        return float(np.median(times))
    finally:
        torch.set_num_threads(before)


def estimate_cost(cfg: ManifoldSweepConfig, workers: int = 1, threads_per_task: int = 1,
                  step_seconds: dict[tuple[str, int, int], float] | None = None,
                  cache_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Estimated cost of a sweep from step times measured now (every run to its full schedule).

    Step times are measured here (a few steps per distinct (arch, D, width)) unless ``step_seconds``
    maps (arch, D, width) to seconds per step. Evaluation adds ``eval_points`` passes over the
    validation set (≈ one third of a training step per batch). Early stopping cuts the real cost;
    other work on the machine raises it. With ``cache_dir``, runs already cached there are counted
    separately and left out of the ``remaining_*`` figures.
    """
    from ttlab.sweep import cached_keys, task_key

    tasks = plan_tasks(cfg)
    runs = tasks["data"] + tasks["model"]
    done = cached_keys(train_run, runs, cache_dir) if cache_dir is not None else set()
    measured = dict(step_seconds or {})
    ts = cfg.train
    total = 0.0
    per_task = []
    remaining = []
    for t in runs:
        key = (t["model"]["arch"], t["ambient"], t["model"]["n_embd"])
        if key not in measured:
            measured[key] = _time_steps(RegressorConfig(**t["model"]), ts.batch_size, threads_per_task)
        n = t["n"]
        steps = ts.steps(n)
        batch = min(ts.batch_size, n)
        sec = measured[key] * (batch / ts.batch_size) ** 0.7
        eval_equiv = ts.eval_points * math.ceil(ts.n_val(n) / ts.batch_size) / 3.0
        cost = sec * (steps + eval_equiv) + 1.0  # + data generation and set-up
        per_task.append(cost)
        total += cost
        if task_key(train_run, t) not in done:
            remaining.append(cost)

    def wall(costs: list[float]) -> float:
        lanes = [0.0] * max(1, workers)  # longest-first list scheduling onto the workers
        for c in sorted(costs, reverse=True):
            lanes[lanes.index(min(lanes))] += c
        return max(lanes) + 5.0 * (workers > 1 and bool(costs))

    return {
        "n_train_runs": len(runs),
        "n_cached": len(runs) - len(remaining),
        "n_knn_runs": len(tasks["knn"]),
        "task_seconds": total,
        "wall_seconds": wall(per_task),
        "remaining_task_seconds": float(sum(remaining)),
        "remaining_wall_seconds": wall(remaining),
        "workers": workers,
        "threads_per_task": threads_per_task,
        "step_seconds": {f"{a},D={D},width={w}": s for (a, D, w), s in measured.items()},
        "note": "every run trained to its full schedule at the step times measured now; early stopping "
                "shortens runs, other jobs on the machine lengthen them",
    }


# ---------------------------------------------------------------------------------------------
# intrinsic dimension


def estimate_ids(cfg: ManifoldSweepConfig, seed: int = 0) -> list[dict[str, Any]]:
    """ttlab's MLE (K = ``id_k``) on ``id_points`` training inputs of every (d, D).

    Both combinations of the pointwise estimates are reported: the arithmetic mean (paper B's
    code; ``MLE(average="mean")``) and the harmonic mean 1/mean(1/·) (MacKay–Ghahramani);
    predictions use the mean, as the paper does.
    """
    import warnings

    from ttlab.intrinsic_dim import MLE
    from ttlab.scaling.theory import alpha_d

    out = []
    for d in cfg.ds:
        for D in cfg.ambients:
            problem = make_problem(d, D, manifold=cfg.manifold, beta=cfg.betas[0], profile=cfg.profile,
                                   n_features=cfg.n_features, min_freq=cfg.min_freq_of(d), max_freq=cfg.max_freq,
                                   noise=0.0, problem_seed=cfg.problem_seed, spectrum=cfg.spectrum)
            x = make_splits(problem, cfg.id_points, 1, 1, seed).x_train.astype(np.float64)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = MLE(k=cfg.id_k, average="mean", seed=seed).fit(x)
            pw = np.asarray(est.pointwise_dimension_, dtype=float)
            pw = pw[np.isfinite(pw) & (pw > 0)]
            row: dict[str, Any] = {"d": d, "ambient": D, "n_points": cfg.id_points, "k": cfg.id_k, "method": "mle",
                                   "id_mean": float(est.dimension_),
                                   "id_harmonic": float(1.0 / np.mean(1.0 / pw)) if pw.size else float("nan")}
            row["alpha_pred_from_id"] = {f"{b:g}": alpha_d(row["id_mean"], b) for b in cfg.betas}
            row["alpha_pred_from_id_harmonic"] = {f"{b:g}": alpha_d(row["id_harmonic"], b) for b in cfg.betas}
            out.append(row)
    return out


# ---------------------------------------------------------------------------------------------
# aggregation and fits


def _select_lr(runs: list[dict[str, Any]], size_key: str) -> list[dict[str, Any]]:
    """Per (arch, β, regime, d, D, size, seed): the learning rate with the lowest validation MSE."""
    key = lambda r: (r["arch"], r.get("beta"), r.get("regime"), r["d"], r["ambient"], r[size_key], r["seed"])  # noqa: E731
    return list(best_by(runs, key, "val_mse").values())


def _offset_summary(offset: dict[str, Any] | None) -> dict[str, Any]:
    """The offset form's α, its bootstrap interval and E (None where the fit was not made)."""
    params = (offset or {}).get("params", {})
    ci = ((offset or {}).get("ci") or {}).get("alpha")
    return {"alpha_hat_offset": params.get("alpha"), "ci_offset": list(ci) if ci is not None else None,
            "offset_E": params.get("E")}


def _curve_fit(rows: list[dict[str, Any]], size_key: str, bootstrap: int, bootstrap_offset: int) -> dict[str, Any]:
    """Points per size (seeds pooled) and fits over sizes where no seed was step-limited."""
    sizes = sorted({r[size_key] for r in rows})
    points = []
    for s in sizes:
        rs = [r for r in rows if r[size_key] == s]
        mses = [r["test_mse"] for r in rs]
        points.append({
            size_key: s, "n_params": rs[0]["n_params"], "test_mse": mses,
            "test_mse_geomean": _geomean(mses), "seeds": [r["seed"] for r in rs],
            "step_limited": any(r["step_limited"] for r in rs), "best_step": [r["best_step"] for r in rs],
            "steps_planned": rs[0]["steps_planned"], "lr": [r["lr"] for r in rs],
        })
    usable = [p for p in points if not p["step_limited"]]
    fallback = len(usable) < 3
    chosen = points if fallback else usable
    xkey = "n_params" if size_key == "width" else size_key
    x = [float(p[xkey]) for p in chosen for _ in p["test_mse"]]
    y = [float(v) for p in chosen for v in p["test_mse"]]
    fits = power_law_fits(x, y, bootstrap=bootstrap, bootstrap_offset=bootstrap_offset)
    if not fallback and len(usable) < len(points):
        x_all = [float(p[xkey]) for p in points for _ in p["test_mse"]]
        y_all = [float(v) for p in points for v in p["test_mse"]]
        power_all = power_law_fits(x_all, y_all, bootstrap=bootstrap, offset=False)["power"]
    else:
        power_all = fits["power"]
    return {"points": points, "sizes_fitted": [p[size_key] for p in chosen],
            "includes_step_limited": fallback and any(p["step_limited"] for p in points), "fits": fits,
            "exponent": FittedExponent.from_fit(fits["power"], "bootstrap").to_dict(),
            "offset": _offset_summary(fits.get("offset")),
            "alpha_hat_all_sizes": (power_all.get("params") or {}).get("alpha")}


def _setting(r: dict[str, Any]) -> tuple:
    return (r["arch"], r["beta"], r["regime"], r["d"], r["ambient"])


def _power_exponent(x: list[float], y: list[float], bootstrap: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """(FittedExponent keys, the power-form fit) of y against x, bootstrap interval."""
    power = power_law_fits(x, y, bootstrap=bootstrap, offset=False)["power"]
    return FittedExponent.from_fit(power, "bootstrap").to_dict(), power


def _oracle_fit(cfg: ManifoldSweepConfig, rows: list[dict[str, Any]], base: dict[str, Any]) -> dict[str, Any]:
    """Power-law fit of the k-NN oracle's test MSE over n (geometric mean over seeds per size)."""
    sizes = sorted({r["n"] for r in rows})
    if len(sizes) < 2:
        return {**base, **FittedExponent().to_dict(), "error": "fewer than 2 oracle sizes"}
    exponent, power = _power_exponent([float(r["n"]) for r in rows], [r["test_mse"] for r in rows], cfg.bootstrap)
    pts = []
    for n in sizes:
        rs = [r for r in rows if r["n"] == n]
        pts.append({"n": n, "test_mse": [r["test_mse"] for r in rs], "k": [r["k"] for r in rs],
                    "seeds": [r["seed"] for r in rs], "test_mse_geomean": _geomean([r["test_mse"] for r in rs])})
    return {**base, **exponent, "r2_log": (power.get("goodness_of_fit") or {}).get("r2_log"),
            "n_seeds": len({r["seed"] for r in rows}), "points": pts}


def _knn_fits(cfg: ManifoldSweepConfig, knn_runs: list[dict[str, Any]], n_ref: int) -> list[dict[str, Any]]:
    """The k-NN oracle's fit per (β, regime, d, D) (one D suffices: the oracle is similarity-invariant)."""
    from ttlab.scaling.theory import alpha_d, alpha_n

    out = []
    for beta in cfg.betas:
        for regime in cfg.regimes:
            for d in cfg.ds:
                for D in cfg.ambients:
                    common = {"beta": beta, "regime": regime, "noise": cfg.noise_of(regime), "d": d, "ambient": D,
                              "alpha_pred": alpha_d(d, beta), "alpha_noiseless": alpha_n(d, beta)}
                    krows = [r for r in knn_runs if r["d"] == d and r["beta"] == beta and r["regime"] == regime
                             and r["ambient"] in (D, min(cfg.ambients))]
                    if any(r["ambient"] == D for r in krows):
                        krows = [r for r in krows if r["ambient"] == D]
                    kf = _oracle_fit(cfg, krows, {**common, "oracle": "k-NN, k chosen on validation"})
                    kf["mse_at_n_ref"] = next((p["test_mse_geomean"] for p in kf.get("points", [])
                                               if p["n"] == n_ref), None)
                    out.append(kf)
    return out


def _data_fits(cfg: ManifoldSweepConfig, data_runs: list[dict[str, Any]], ids: list[dict[str, Any]],
               knn_fits: list[dict[str, Any]], n_ref: int) -> list[dict[str, Any]]:
    """α̂_D per (arch, β, regime, d, D) next to the theory, the ID-based prediction and the oracle."""
    from ttlab.scaling.theory import alpha_d, alpha_n

    id_of = {(r["d"], r["ambient"]): r for r in ids}
    knn_of = {(k["beta"], k["regime"], k["d"], k["ambient"]): k for k in knn_fits}
    data_sel = _select_lr(data_runs, "n")
    fits = []
    for arch, beta, regime, d, D in itertools.product(cfg.archs, cfg.betas, cfg.regimes, cfg.ds, cfg.ambients):
        rows = [r for r in data_sel if _setting(r) == (arch, beta, regime, d, D)]
        idr = id_of.get((d, D), {})
        ofit = knn_of.get((beta, regime, d, D), {})
        base = {"d": d, "ambient": D, "arch": arch, "beta": beta, "regime": regime,
                "noise": cfg.noise_of(regime), "alpha_pred": alpha_d(d, beta),
                "alpha_noiseless": alpha_n(d, beta), "id_hat": idr.get("id_mean"),
                "alpha_pred_from_id": (idr.get("alpha_pred_from_id") or {}).get(f"{beta:g}"),
                "oracle_alpha": ofit.get("alpha_hat"), "oracle_ci": ofit.get("alpha_hat_ci")}
        if len({r["n"] for r in rows}) < 2:
            fits.append({**base, **FittedExponent().to_dict(), "error": "fewer than 2 finished sizes"})
            continue
        cf = _curve_fit(rows, "n", cfg.bootstrap, cfg.bootstrap_offset)
        at_ref = [pt for pt in cf["points"] if pt["n"] == n_ref]
        fits.append({
            **base, **cf["exponent"], **cf["offset"], "alpha_hat_all_sizes": cf["alpha_hat_all_sizes"],
            "n_ref": n_ref, "mse_at_n_ref": at_ref[0]["test_mse_geomean"] if at_ref else None,
            "sizes_fitted": cf["sizes_fitted"], "includes_step_limited": cf["includes_step_limited"],
            "points": cf["points"], "fit_details": cf["fits"],
        })
    return fits


def _approx_fit(cfg: ManifoldSweepConfig, approx_runs: list[dict[str, Any]], beta: float, d: int) -> dict[str, Any]:
    """The approximation oracle's rate over the number of cells at (β, d)."""
    from ttlab.scaling.theory import alpha_n

    arows = [r for r in approx_runs if r["d"] == d and r["beta"] == beta]
    af: dict[str, Any] = {"beta": beta, "d": d, "ambient": min(cfg.ambients), "regime": cfg.model_regime,
                          "alpha_pred": alpha_n(d, beta), "oracle": "piecewise constant on N Voronoi cells"}
    if len({r["cells"] for r in arows}) < 2:
        return {**af, **FittedExponent().to_dict(), "error": "fewer than 2 cell counts"}
    exponent, _ = _power_exponent([float(r["cells"]) for r in arows], [r["approx_mse"] for r in arows], cfg.bootstrap)
    return {**af, **exponent, "points": [{"cells": r["cells"], "approx_mse": r["approx_mse"]}
                                         for r in sorted(arows, key=lambda r: r["cells"])]}


def _model_fit(cfg: ManifoldSweepConfig, model_runs: list[dict[str, Any]], af: dict[str, Any], arch: str) -> dict[str, Any]:
    """α̂_N of one (arch, β, d) over the widths at n = ``model_n``, with the data-limit check at 2n."""
    beta, d = af["beta"], af["d"]
    model_n = cfg.model_n or cfg.n_max
    sel = [r for r in model_runs if r["d"] == d and r["beta"] == beta and r["arch"] == arch]
    mrows = _select_lr([r for r in sel if not r.get("check")], "width")
    crows = _select_lr([r for r in sel if r.get("check")], "width")
    mf: dict[str, Any] = {"d": d, "ambient": af["ambient"], "arch": arch, "beta": beta, "regime": cfg.model_regime,
                          "n": model_n, "alpha_pred": af["alpha_pred"], "oracle_alpha": af["alpha_hat"],
                          "oracle_ci": af["alpha_hat_ci"]}
    wmax = max(cfg.model_widths)
    at_n = [r["test_mse"] for r in mrows if r["width"] == wmax]
    at_2n = [r["test_mse"] for r in crows]
    mf["data_check"] = {"width": wmax, "n": model_n, "mse_n": _geomean(at_n), "mse_2n": _geomean(at_2n),
                        "ratio": (_geomean(at_2n) / _geomean(at_n)) if at_n and at_2n else None}
    if len({r["width"] for r in mrows}) < 2:
        return {**mf, **FittedExponent().to_dict(), "error": "fewer than 2 finished widths"}
    cf = _curve_fit(mrows, "width", cfg.bootstrap, cfg.bootstrap_offset)
    offset = cf["offset"]
    return {**mf, **cf["exponent"], "A": (cf["fits"]["power"].get("params") or {}).get("A"),
            "ci_offset": offset["ci_offset"], "alpha_hat_offset": offset["alpha_hat_offset"],
            "includes_step_limited": cf["includes_step_limited"], "sizes_fitted": cf["sizes_fitted"],
            "points": cf["points"]}


def aggregate(cfg: ManifoldSweepConfig, data_runs: list[dict[str, Any]], model_runs: list[dict[str, Any]],
              knn_runs: list[dict[str, Any]], ids: list[dict[str, Any]],
              approx_runs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Fits of α̂_D per (arch, β, regime, d, D), of the k-NN oracle per (β, regime, d, D), of α̂_N and the
    approximation oracle per (arch, β, d), each next to the theory (2β/(2β+d), noiseless reference 2β/d).
    Every exponent is written with the keys of :class:`ttlab.scaling.analysis.FittedExponent` (bootstrap
    interval)."""
    sizes = cfg.sizes()
    n_ref = sizes[len(sizes) // 2]
    knn_fits = _knn_fits(cfg, knn_runs, n_ref) if cfg.knn else []
    fits = _data_fits(cfg, data_runs, ids, knn_fits, n_ref)
    model_fits, approx_fits = [], []
    if cfg.model_widths:
        for beta in cfg.betas:
            for d in cfg.ds:
                af = _approx_fit(cfg, approx_runs or [], beta, d)
                approx_fits.append(af)
                model_fits += [_model_fit(cfg, model_runs, af, arch) for arch in cfg.archs]
    return {"fits": fits, "model_fits": model_fits, "knn_fits": knn_fits, "approx_fits": approx_fits, "n_ref": n_ref}


def _geomean(values: list[float]) -> float | None:
    return float(np.exp(np.mean(np.log(values)))) if values else None


# ---------------------------------------------------------------------------------------------
# the whole experiment


def _run_rows(records: list[Any], kind: str) -> list[dict[str, Any]]:
    rows = []
    for rec in records:
        if not rec.ok:
            continue
        c = rec.config
        row = {"kind": kind, "d": c["d"], "ambient": c["ambient"], "n": c["n"], "seed": c["seed"], "key": rec.key,
               "beta": c["problem"]["beta"], "regime": c.get("regime"), "noise": c["problem"]["noise"], **rec.result}
        if kind == "approx":
            row["cells"] = c["cells"]
        if c.get("check"):
            row["check"] = True
        if kind in ("data", "model"):
            row.update({"arch": c["model"]["arch"], "width": c["model"]["n_embd"], "lr": c["lr"],
                        "model": c["model"]})
        rows.append(row)
    return rows


def run_manifold_sweep(
    cfg: ManifoldSweepConfig,
    out_dir: str | os.PathLike[str],
    *,
    backend: str = "local",
    workers: int = 1,
    threads_per_task: int | None = None,
    progress: Callable[[Any], None] | None = None,
    write: bool = True,
    ray_address: str | None = None,
) -> dict[str, Any]:
    """Run (or resume) the sweep; write ``results.json`` and ``manifold_scaling.png`` to ``out_dir``.

    Runs are cached under ``out_dir/cache``; re-running the same config reuses them (with either
    backend). Returns the payload written to ``results.json``. ``ray_address`` is the Ray
    cluster's address (``backend="ray"`` only: :class:`ttlab.sweep.RayBackend`).
    """
    from ttlab.provenance import atomic_savefig, atomic_write_json, versions
    from ttlab.sweep import resolve_backend, run_sweep, summarize

    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise TTLabInputError(f"--out {out} exists and is not a directory")
    t0 = time.perf_counter()
    tasks = plan_tasks(cfg)
    cache = out / "cache"
    kw = dict(backend=resolve_backend(backend, ray_address=ray_address), workers=workers,
              threads_per_task=threads_per_task, progress=progress)
    rec_data = run_sweep(train_run, tasks["data"] + tasks["model"], cache, **kw)
    rec_knn = run_sweep(knn_run, tasks["knn"], cache, **kw) if tasks["knn"] else []
    rec_approx = run_sweep(approx_run, tasks["approx"], cache, **kw) if tasks["approx"] else []
    n_data = len(tasks["data"])
    data_runs = _run_rows(rec_data[:n_data], "data")
    model_runs = _run_rows(rec_data[n_data:], "model")
    knn_runs = _run_rows(rec_knn, "knn")
    approx_runs = _run_rows(rec_approx, "approx")
    ids = estimate_ids(cfg)
    agg = aggregate(cfg, data_runs, model_runs, knn_runs, ids, approx_runs)
    summary = summarize(rec_data + rec_knn + rec_approx)
    payload: dict[str, Any] = {
        "schema": SCHEMA,
        "config": {**cfg.to_dict(), "backend": backend, "workers": workers, "threads_per_task": threads_per_task},
        "problems": [make_problem(d, D, manifold=cfg.manifold, beta=beta, profile=cfg.profile,
                                  n_features=cfg.n_features, min_freq=cfg.min_freq_of(d), max_freq=cfg.max_freq,
                                  noise=cfg.noise_of(rg), problem_seed=cfg.problem_seed,
                                  spectrum=cfg.spectrum).describe()
                     for beta in cfg.betas for rg in cfg.regimes for d in cfg.ds for D in cfg.ambients],
        "fits": agg["fits"],
        "model_fits": agg["model_fits"],
        "knn_fits": agg["knn_fits"],
        "approx_fits": agg["approx_fits"],
        "approx_runs": approx_runs,
        "intrinsic_dim": ids,
        "n_ref": agg["n_ref"],
        "runs": data_runs + model_runs,
        "knn_runs": knn_runs,
        "sweep": summary,
        "wall_seconds": time.perf_counter() - t0,
        "versions": versions(extra=("scikit-learn",)),
    }
    if write:
        payload["files"] = {"results": str(out / "results.json"), "figure": str(out / "manifold_scaling.png")}
        from ttlab.scaling.figures import plot_manifold_scaling

        fig = plot_manifold_scaling(payload)
        atomic_savefig(fig, out / "manifold_scaling.png", dpi=120)
        atomic_write_json(out / "results.json", payload)
    return payload
