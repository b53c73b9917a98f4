"""Configuration of the model-size experiment (:mod:`ttlab.scaling.model_scaling`): the one home of its settings.

The experiment tests Theorem 2 of paper B — squared error ∝ N^(−2β/d) in the number of parameters N — in the
*approximation-limited* regime: fresh, noiseless samples at every step (online training), so that the data never
limits the fit. Its design, targets, control and verdict thresholds are declared in ``docs/model_scaling.md``; the
defaults here are those declared values (change them there first).

* :class:`OnlineSchedule`: how one network is trained — samples per parameter (never fewer than ``min_samples``),
  Adam with linear warm-up, a batch that grows once (``batch`` → ``batch_large`` after ``grow_frac`` of the samples)
  and a cosine decay of the learning rate to ``final_lr_frac`` of the peak at the last step.
* :class:`ModelScalingConfig`: intrinsic dimensions, targets, architectures and their width grids, seeds, the test
  set, the oracles' N axis and the fit's bootstrap.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ttlab.errors import TTLabInputError
from ttlab.scaling.manifold_config import MAX_SEEDS
from ttlab.scaling.regressor_config import RegressorConfig
from ttlab.validation import check_choice, check_float, check_int

__all__ = [
    "CONTROL_ARCH",
    "HOLDER_LEVELS",
    "HOLDER_SPACING",
    "MAX_WIDTH",
    "SMOOTH_SPACING",
    "TARGETS",
    "TRANSFORMER_ARCHS",
    "ModelScalingConfig",
    "OnlineSchedule",
    "quick_model_config",
    "standard_model_config",
    "tiny_model_config",
]

TARGETS = ("smooth", "holder")
MAX_WIDTH = 1024
"""Widths above this are refused before any model is built (a width-1,024 transformer has ≈ 25M parameters)."""
TRANSFORMER_ARCHS = ("softmax", "relu")
"""The networks judged (ttlab.scaling.regressor_config.ARCHS less the control)."""
CONTROL_ARCH = "mlp"
"""The positive control: a ReLU MLP [D, w, w, 1] (Sharma & Kaplan 2022's student)."""

SMOOTH_SPACING = {1: 0.15, 2: 0.5, 4: 1.0}
"""Lattice spacing of the smooth target per d, calibrated once on the control (docs/model_scaling.md) so that its
smallest model has a normalised MSE of about 0.05–0.3."""
HOLDER_SPACING = 1.0
"""Coarsest lattice spacing of the Hölder target (the sphere has radius 1)."""
HOLDER_LEVELS = {1: 12, 2: 9, 4: 5}
"""Levels of the Hölder target per d: the finest spacing 2^(1−levels) lies below a quarter of the resolution
(area/N)^(1/d) of the largest model of the standard design, so the target is β-Hölder over the whole fitted range."""


def _named(name: str, check: Any, *args: Any) -> Any:
    """``check(value, name, …)`` whose error names the field (``params``), so the CLI can show its flag."""
    try:
        return check(*args[:1], name, *args[1:])
    except TTLabInputError as exc:
        raise TTLabInputError(str(exc), params=(name,)) from None


def _positive_ints(values: tuple[int, ...], name: str, at_least: int = 1, count: int = 1) -> tuple[int, ...]:
    vals = tuple(values)
    for v in vals:
        _named(name, check_int, v, at_least)
    if len(vals) < count:
        raise TTLabInputError(f"{name} needs at least {count} values, got {list(vals)!r}", params=(name,))
    if len(set(vals)) != len(vals):
        raise TTLabInputError(f"{name} has duplicates: {list(vals)!r}", params=(name,))
    return vals


@dataclass(frozen=True)
class OnlineSchedule:
    """How one network is trained on fresh samples (validated when made)."""

    lr: float = 1e-2
    samples_per_param: float = 900.0
    min_samples: int = 200_000
    batch: int = 256
    batch_large: int = 1024
    grow_frac: float = 0.5
    warmup_frac: float = 0.02
    final_lr_frac: float = 0.01
    grad_clip: float = 1.0

    def __post_init__(self) -> None:
        check_float(self.lr, "lr", 0.0, lo_open=True)
        check_float(self.samples_per_param, "samples_per_param", 0.0, lo_open=True)
        check_int(self.min_samples, "min_samples", 1)
        check_int(self.batch, "batch", 1)
        check_int(self.batch_large, "batch_large", self.batch)
        check_float(self.grow_frac, "grow_frac", 0.0, 1.0)
        check_float(self.warmup_frac, "warmup_frac", 0.0, 1.0, hi_open=True)
        check_float(self.final_lr_frac, "final_lr_frac", 0.0, 1.0)
        check_float(self.grad_clip, "grad_clip", 0.0, lo_open=True)

    def samples(self, n_params: int, scale: float = 1.0) -> int:
        """Samples of a run of ``n_params`` parameters: max(min_samples, samples_per_param·N), times ``scale``."""
        return int(math.ceil(scale * max(self.min_samples, self.samples_per_param * n_params)))

    def steps(self, samples: int) -> tuple[int, int]:
        """(steps at ``batch``, steps at ``batch_large``) that see ``samples`` samples."""
        small = int(math.ceil(self.grow_frac * samples / self.batch))
        large = int(math.ceil(max(0, samples - small * self.batch) / self.batch_large))
        return small, large

    def lr_at(self, step: int, total: int) -> float:
        """Linear warm-up over ``warmup_frac`` of the steps, then a cosine from ``lr`` to ``final_lr_frac·lr``."""
        warm = max(1, int(self.warmup_frac * total))
        if step < warm:
            return self.lr * (step + 1) / warm
        progress = min(1.0, (step - warm) / max(1, total - 1 - warm))
        floor = self.final_lr_frac * self.lr
        return floor + (self.lr - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))


MLP_SCHEDULE = OnlineSchedule(samples_per_param=16_000.0)
"""The control's schedule: 16,000 samples per parameter (Sharma & Kaplan: 10⁴–6×10⁴), Adam at 1e-2 (their rate).
At 900 per parameter the MLP's error still fell 30–40 % when the samples doubled (optimisation-limited); at 16,000
it falls ≤ 10 % on most widths (docs/model_scaling.md, "Budget calibration")."""
TRANSFORMER_SCHEDULE = OnlineSchedule(lr=3e-3, samples_per_param=100.0)
"""The transformers': max(2×10⁵, 100·N) samples (the issue asks ≥ 50·N), Adam at 3e-3."""


@dataclass(frozen=True)
class ModelScalingConfig:
    """The model-size experiment. ``archs`` lists the networks judged; the control (``mlp``) always runs.

    ``transformer_targets``: the targets the transformers train on (None: every target). ``device``: where the
    networks train (``cpu``, ``cuda``, ``cuda:N``; samples are drawn on the CPU). Transformers: ``depth`` blocks, ``heads`` heads, ``chunk`` coordinates per token (l = D/chunk tokens), widths
    ``transformer_widths``; the control: widths ``mlp_widths`` with two hidden layers. ``check``: the widest width of
    every (target, d, arch) is re-run with twice the samples (the data check). ``oracle_points`` sizes, log-spaced
    over the networks' parameter counts, for the piecewise-constant and piecewise-linear oracles.
    """

    ds: tuple[int, ...] = (2, 4)
    targets: tuple[str, ...] = TARGETS
    holder_beta: float = 0.5
    archs: tuple[str, ...] = ("softmax", "relu")
    transformer_targets: tuple[str, ...] | None = None
    ambient: int = 16
    mlp_widths: tuple[int, ...] = (8, 10, 14, 18, 23, 30, 38)
    transformer_widths: tuple[int, ...] = (4, 6, 8, 12, 16, 24)
    depth: int = 2
    heads: int = 2
    chunk: int = 2
    seeds: int = 2
    control_seeds: int = 2
    n_test: int = 16_384
    mlp_schedule: OnlineSchedule = field(default_factory=lambda: MLP_SCHEDULE)
    transformer_schedule: OnlineSchedule = field(default_factory=lambda: TRANSFORMER_SCHEDULE)
    check: bool = True
    oracle_points: int = 7
    id_points: int = 4000
    bootstrap: int = 2000
    problem_seed: int = 0
    device: str = "cpu"

    def __post_init__(self) -> None:
        _positive_ints(self.ds, "ds")
        _named("ambient", check_int, self.ambient, 2)
        if max(self.ds) + 1 > self.ambient:
            raise TTLabInputError(f"d = {max(self.ds)} does not fit: the sphere S^d lives in R^(d+1) inside "
                                  f"R^{self.ambient}, so d must be <= {self.ambient - 1}", params=("ds",))
        for t in self.targets:
            _named("targets", check_choice, t, TARGETS)
        if not self.targets or len(set(self.targets)) != len(self.targets):
            raise TTLabInputError(f"targets must list distinct targets of {', '.join(TARGETS)}, got "
                                  f"{list(self.targets)!r}", params=("targets",))
        _named("holder_beta", check_float, self.holder_beta, 0.0, 1.0, True)
        if self.transformer_targets is not None and not set(self.transformer_targets) <= set(self.targets):
            raise TTLabInputError(f"transformer_targets {list(self.transformer_targets)!r} must be among targets "
                                  f"{list(self.targets)!r}", params=("transformer_targets",))
        for a in self.archs:
            if a == CONTROL_ARCH:
                raise TTLabInputError(f"{CONTROL_ARCH} is the positive control and always runs; archs lists the "
                                      "transformers judged: softmax, relu", params=("archs",))
            _named("archs", check_choice, a, TRANSFORMER_ARCHS)
        if len(set(self.archs)) != len(self.archs):
            raise TTLabInputError(f"archs has duplicates: {list(self.archs)!r}", params=("archs",))
        _positive_ints(self.mlp_widths, "mlp_widths", 1, 3)
        _positive_ints(self.transformer_widths, "transformer_widths", 1, 3 if self.archs else 0)
        for name in ("mlp_widths", "transformer_widths"):
            for w in getattr(self, name):
                _named(name, check_int, w, 1, MAX_WIDTH)
        for name in ("depth", "heads", "chunk"):
            _named(name, check_int, getattr(self, name), 1)
        for name in ("seeds", "control_seeds"):
            _named(name, check_int, getattr(self, name), 1, MAX_SEEDS)
        bad = [w for w in self.transformer_widths if w % self.heads]
        if self.archs and bad:
            raise TTLabInputError(f"every transformer width must be a multiple of heads={self.heads}; {bad} are not",
                                  params=("transformer_widths",))
        if self.chunk > self.ambient:
            raise TTLabInputError(f"chunk must be <= ambient={self.ambient}, got {self.chunk}", params=("chunk",))
        for name, least in (("n_test", 256), ("oracle_points", 3), ("id_points", 100), ("bootstrap", 100),
                            ("problem_seed", 0)):
            _named(name, check_int, getattr(self, name), least)
        if not (self.device == "cpu" or self.device == "cuda" or (self.device.startswith("cuda:")
                                                                   and self.device[5:].isdigit())):
            raise TTLabInputError(f"device must be cpu, cuda or cuda:N, got {self.device!r}", params=("device",))
        if not isinstance(self.mlp_schedule, OnlineSchedule) or not isinstance(self.transformer_schedule, OnlineSchedule):
            raise TTLabInputError("mlp_schedule and transformer_schedule must be OnlineSchedule objects",
                                  params=("mlp_schedule", "transformer_schedule"))

    def model_config(self, arch: str, width: int) -> RegressorConfig:
        """The network of ``arch`` at ``width`` (the control: two hidden ReLU layers)."""
        if arch == CONTROL_ARCH:
            return RegressorConfig(arch="mlp", ambient=self.ambient, n_embd=width, n_layer=2)
        return RegressorConfig(arch=arch, ambient=self.ambient, n_embd=width, n_layer=self.depth, n_head=self.heads,
                               chunk=self.chunk)

    def widths(self, arch: str) -> tuple[int, ...]:
        """The width grid of ``arch``."""
        return self.mlp_widths if arch == CONTROL_ARCH else self.transformer_widths

    def schedule(self, arch: str) -> OnlineSchedule:
        """The training schedule of ``arch``."""
        return self.mlp_schedule if arch == CONTROL_ARCH else self.transformer_schedule

    def n_seeds(self, arch: str) -> int:
        """Seeds per width of ``arch``."""
        return self.control_seeds if arch == CONTROL_ARCH else self.seeds

    def all_archs(self, target: str | None = None) -> tuple[str, ...]:
        """The control first, then the judged architectures (those trained on ``target``, when given)."""
        if target is not None and self.transformer_targets is not None and target not in self.transformer_targets:
            return (CONTROL_ARCH,)
        return (CONTROL_ARCH, *self.archs)

    def target_params(self, target: str, d: int) -> dict[str, Any]:
        """:func:`ttlab.scaling.lattice_fields.make_field` arguments of ``target`` at ``d``."""
        if target == "smooth":
            return {"kind": "smooth", "d": d, "spacing": SMOOTH_SPACING.get(d, 0.8), "levels": 1, "beta": 1.0,
                    "seed": self.problem_seed}
        return {"kind": "holder", "d": d, "spacing": HOLDER_SPACING, "levels": HOLDER_LEVELS.get(d, 6),
                "beta": self.holder_beta, "seed": self.problem_seed}

    def beta_of(self, target: str) -> float:
        """The β whose 2β/d the claim on ``target`` tests: 1 on the smooth target (a bound), ``holder_beta``
        on the Hölder target (the sharp rate)."""
        return 1.0 if target == "smooth" else self.holder_beta

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def quick_model_config(**overrides: Any) -> ModelScalingConfig:
    """The quick tier (about 2 min on 2 cores): d = 2, the smooth target, the control (widths 8…18) and the
    softmax network (widths 4…12), one seed — the standard design cut to the demo's budget."""
    base = ModelScalingConfig(ds=(2,), targets=("smooth",), archs=("softmax",), seeds=1, control_seeds=1,
                              mlp_widths=(8, 10, 14, 18), transformer_widths=(4, 6, 8, 12),
                              oracle_points=5, bootstrap=1000)
    return replace(base, **overrides)


def standard_model_config(**overrides: Any) -> ModelScalingConfig:
    """The standard tier: d ∈ {2, 4}, both targets for the control (one seed), the smooth target for both
    transformers (two seeds); the Hölder target's transformers run in the full tier."""
    return replace(ModelScalingConfig(control_seeds=1, transformer_targets=("smooth",)), **overrides)


def tiny_model_config(**overrides: Any) -> ModelScalingConfig:
    """Test size (seconds; numbers not meaningful)."""
    base = ModelScalingConfig(ds=(2,), targets=("smooth",), archs=("softmax",), seeds=1, control_seeds=1,
                              mlp_widths=(4, 6, 8), transformer_widths=(2, 4, 6), n_test=512, oracle_points=3,
                              id_points=300, bootstrap=100,
                              mlp_schedule=OnlineSchedule(samples_per_param=4.0, min_samples=2048, batch=64,
                                                          batch_large=128),
                              transformer_schedule=OnlineSchedule(lr=3e-3, samples_per_param=1.0, min_samples=1024,
                                                                  batch=64, batch_large=128))
    return replace(base, **overrides)
