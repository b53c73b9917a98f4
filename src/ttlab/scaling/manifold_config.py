"""Configuration of the manifold-regression experiment (:mod:`ttlab.scaling.manifold_regression`): the sweep's
grid and problem (:class:`ManifoldSweepConfig`), the optimisation of one run (:class:`TrainSettings`), the presets
(:func:`quick_config`, :func:`standard_config`) and the oracle's design check (:func:`design_check`).
Configs validate when made (``__post_init__``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim import PAPER
from ttlab.scaling.analysis import geometric_sizes
from ttlab.scaling.regressor_config import ARCHS, RegressorConfig
from ttlab.scaling.targets import PROFILES, REGRESSION_MANIFOLDS, SPECTRA, make_problem
from ttlab.validation import check_float, check_int

MAX_SEEDS = 100
"""Seeds (and oracle seeds) per configuration above this are refused before the sweep's plan is built."""
MAX_WIDTH = 4096
"""Transformer widths above this are refused before any model is built (width 4,096, depth 2: ≈ 400M parameters)."""
MAX_DEPTH = 64
"""Transformer depths above this are refused before any model is built."""

__all__ = ["DEFAULT_MAX_HOURS", "DEFAULT_WORKERS", "MAX_DEPTH", "MAX_SEEDS", "MAX_WIDTH", "ORACLE_KS", "ORACLE_TOL", "REGIMES",
           "ManifoldSweepConfig", "TrainSettings", "config_from_options", "design_check", "quick_config",
           "standard_config"]

DEFAULT_WORKERS = 2
"""Worker processes of ``ttlab scaling manifold`` unless ``--workers`` is given."""
DEFAULT_MAX_HOURS = 24.0
"""``ttlab scaling manifold`` refuses a sweep whose estimated remaining wall time is above this (``--max-hours``)."""


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
        for name in ("seeds", "oracle_seeds"):  # before the plan is built: its size is their product
            check_int(getattr(self, name), name, 1, MAX_SEEDS)
        check_int(self.width, "width", 1, MAX_WIDTH)  # before any model is built
        check_int(self.depth, "depth", 1, MAX_DEPTH)
        for w in self.model_widths:
            check_int(w, "model_widths", 1, MAX_WIDTH)
        if self.n_min < 2:
            raise TTLabInputError(f"n_min must be >= 2, got {self.n_min}")
        if self.n_max < self.n_min:
            raise TTLabInputError(f"n_max ({self.n_max}) must be >= n_min ({self.n_min})")
        if self.points > 1 and self.n_max == self.n_min:
            raise TTLabInputError("n_max must be > n_min for more than one size")
        if self.points > self.n_max - self.n_min + 1:  # before the sizes are built: a huge count allocates
            raise TTLabInputError(f"{self.points:,} sizes between {self.n_min} and {self.n_max} would repeat integers; "
                                  "use fewer points", params=("points",))
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
    d ∈ {1, 2} with 2 seeds. It has no model-size sweep: at a fixed n that sweep is data-limited (it measures the
    data axis); α_N = 2β/d is tested by :mod:`ttlab.scaling.model_scaling` (docs/model_scaling.md)."""
    base = quick_config(ds=(1, 2), seeds=2)
    return replace(base, **overrides)


def config_from_options(
    quick: bool,
    options: dict[str, Any],
    *,
    max_steps: int | None = None,
    epochs: float | None = None,
) -> ManifoldSweepConfig:
    """The sweep config of ``ttlab scaling manifold``: the preset (``quick``: :func:`quick_config`, else the full
    default) with the config fields given in ``options`` (None: the preset's; lists as tuples, ``()`` for no
    model-size sweep), and the step limit and epochs of the training schedule."""
    base = quick_config() if quick else ManifoldSweepConfig()
    train = base.train
    if max_steps is not None:
        train = replace(train, max_steps=max_steps, min_steps=min(train.min_steps, max_steps))
    if epochs is not None:
        train = replace(train, epochs=epochs)
    over: dict[str, Any] = {"train": train, **{k: v for k, v in options.items() if v is not None}}
    if "n_min" in over and "n_max" not in over and over["n_min"] > base.n_max:
        raise TTLabInputError(f"n_min {over['n_min']} is above the default n_max {base.n_max}; give n_max too",
                              params=("n_min", "n_max"))
    return replace(base, **over)
