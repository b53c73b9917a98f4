"""What paper A's runs are given and what they return, without training code: the CLI reads its defaults here.

* :class:`TrainConfig`: the hyper-parameters of one run of Algorithm 1 or an ablation (validated on
  construction), with Figure 2's step-size rule; :class:`TrainResult`: trained parameters, the per-step
  metrics (columns :data:`METRIC_COLUMNS`) and the max-margin solutions they are compared with;
* :class:`RandomSpec`: the parameters of a random realizable dataset (:mod:`ttlab.ntp.generate`), and
  :class:`DatasetSource`: a dataset file or such a random dataset (`ntp run` and `ntp generalize`);
* the choices of a run beyond its config: :data:`STEP_SIZES`, :data:`GENERATORS`, :data:`UNSEEN_SAMPLES`.

Nothing here imports numpy or torch at import time (``TrainResult.rows`` imports numpy when called).
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ttlab.configs import setting
from ttlab.errors import TTLabInputError
from ttlab.validation import SEED, Declared, Interval, Options, check_int

if TYPE_CHECKING:
    import numpy as np
    import torch

    from ttlab.ntp.maxmargin import MaxMarginSolution

SCHEDULES = ("two-stage", "joint")
IMPLS = ("auto", "structured", "dense")
OPTIMIZERS = ("ngd", "gd", "adam")
INITS = ("zero", "random")
METRIC_COLUMNS = (
    "stage",
    "step",
    "loss",
    "cosine",
    "norm",
    "norm_lower_bound",
    "norm_upper_bound",
    "min_optimal_attention",
    "cosine_ov",
    "norm_ov",
    "log_loss",
)

ProgressFn = Callable[[str, int, int], None]
#: Figure 2's ratios of the final norm bound tη to ‖W*‖ (stage 1, stage 2) in the paper's Section 7
#: setting: |V| = d = 20, `ttlab ntp run`'s default random dataset (100 sentences, lengths 2–6, seed 0),
#: 900 steps per stage, η0 = 0.2/√d, η = 0.05/√d, ‖W*_ov‖ = 4.3589, ‖W*_kq‖ = 4.8846 (recomputed in
#: tests/ntp/test_train.py). :meth:`TrainConfig.figure2_scaled` keeps them at any size.
FIGURE2_NORM_RATIOS = (9.2338, 2.0600)
#: ``step_sizes`` of :func:`ttlab.ntp.experiment.run_dynamics` (the first is the default): "paper" keeps the
#: given ones (0.2/√d, 0.05/√d), "figure2" fills unset ones by :meth:`TrainConfig.figure2_scaled`
STEP_SIZES = ("paper", "figure2")
#: the random-dataset generators of :mod:`ttlab.ntp.generate` ("auto": dense while its |V|² role table is small)
GENERATORS = ("auto", "dense", "large")
#: unseen sentences sampled for Theorem 3 when there are too many to enumerate (:mod:`ttlab.ntp.generalize`)
UNSEEN_SAMPLES = 2000
#: at most this many unseen sentences are scored (about 2 min of sampling and scoring at |V| = 20; a bound, not a budget)
MAX_UNSEEN_SAMPLES = 1_000_000
#: dtype names a run accepts ("auto": float64 unless a large problem's logits stay within float32's range)
DTYPES = ("auto", "float64", "float32")


def check_dtype(dtype: object) -> None:
    """Refuse a dtype that is neither one of :data:`DTYPES` nor a torch dtype (the message of
    :func:`ttlab.ntp.model.resolve_dtype`, without importing torch)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(dtype, torch.dtype):
        return
    if dtype == "auto":
        return
    if dtype not in dict.fromkeys(DTYPES[1:]):
        raise TTLabInputError(f"dtype must be one of {', '.join(DTYPES)} (got {dtype!r})", params=("dtype",))


@dataclass
class TrainConfig(Declared):
    """Hyper-parameters of one training run; ``eta0``/``eta`` default to 0.2/√d and 0.05/√d.

    Validated on construction (and by :func:`dataclasses.replace`): an out-of-range setting raises
    :class:`TTLabInputError`, so a ``TrainConfig`` that exists is valid."""

    stage1_steps: int = setting(900, "Stage-1 steps T (W_ov).")
    stage2_steps: int = setting(900, "Stage-2 steps (W_kq).")
    eta0: float | None = setting(None, "Stage-1 step size (default 0.2/√d).")
    eta: float | None = setting(None, "Stage-2 step size (default 0.05/√d).")
    init: str = setting("zero", "zero (the paper) or random (Gaussian, std --init-scale).")
    init_scale: float = setting(0.01, "Std of the random init.")
    schedule: str = setting("two-stage", "two-stage (Algorithm 1) or joint (both layers at once).")
    optimizer: str = setting("ngd", "ngd (normalized GD, the paper), gd or adam.")
    seed: int = setting(0, "Seed of the random init and sampling.")
    dtype: str = setting("auto", "auto (float64; float32 only for large problems whose logits stay within float32's "
                         "exp range), float64 or float32.")
    impl: str = setting("auto", "auto (structured where it applies: one-hot, zero init, two-stage NGD/GD), structured "
                        "(exact, O(tokens + |V|) memory) or dense.")  # structured: see ttlab.ntp.structured

    parameter_constraints = {
        "impl": [Options(IMPLS)],
        **dict.fromkeys(("stage1_steps", "stage2_steps"), [Interval(numbers.Integral, 0, None)]),
        **dict.fromkeys(("eta0", "eta"), [Interval(numbers.Real, 0, None, closed="neither"), None]),
        "schedule": [Options(SCHEDULES)], "optimizer": [Options(OPTIMIZERS)], "init": [Options(INITS)],
        "init_scale": [Interval(numbers.Real, 0, None, closed="neither")],
        "seed": SEED,
    }

    def check(self) -> None:
        """``dtype`` a known floating-point type (its own message, shared with the dataset reader)."""
        check_dtype(self.dtype)  # a clear error for an unknown dtype whichever path runs

    def figure2_scaled(self, wov_star_norm: float, wkq_star_norm: float) -> "TrainConfig":
        """A copy whose unset step sizes keep Figure 2's ratios of the final norm bound tη to ‖W*‖
        (:data:`FIGURE2_NORM_RATIOS`): η0 = r1·‖W*_ov‖/T1, η = r2·‖W*_kq‖/T2. Given step sizes are kept."""
        r1, r2 = FIGURE2_NORM_RATIOS

        def rule(given: float | None, ratio: float, star: float, steps: int) -> float | None:
            return given if given is not None or star <= 0 or steps == 0 else ratio * star / steps

        return replace(self, eta0=rule(self.eta0, r1, wov_star_norm, self.stage1_steps),
                       eta=rule(self.eta, r2, wkq_star_norm, self.stage2_steps))

    def norm_ratios(self, dim: int, wov_star_norm: float, wkq_star_norm: float) -> tuple[float, float]:
        """(T1·η0/‖W*_ov‖, T2·η/‖W*_kq‖) with the step sizes resolved for ``dim`` (nan for a zero ‖W*‖).

        Below 1 a stage cannot reach its max-margin solution's margins: NGD moves ‖W‖ by at most η a
        step, and W* is the smallest W with every margin ≥ 1, so the loss stays near log|V|.
        """
        c = self.resolved(dim)
        return (c.stage1_steps * c.eta0 / wov_star_norm if wov_star_norm > 0 else math.nan,
                c.stage2_steps * c.eta / wkq_star_norm if wkq_star_norm > 0 else math.nan)

    def resolved(self, dim: int) -> "TrainConfig":
        """A copy with the default step sizes filled in for embedding dimension ``dim``."""
        return replace(
            self,
            eta0=0.2 / math.sqrt(dim) if self.eta0 is None else self.eta0,
            eta=0.05 / math.sqrt(dim) if self.eta is None else self.eta,
        )


@dataclass
class TrainResult:
    """Trained parameters, per-step metrics and the max-margin solutions they are compared with."""

    config: TrainConfig
    W_ov: torch.Tensor
    W_kq: torch.Tensor
    wov_star: MaxMarginSolution
    wkq_star: MaxMarginSolution
    metrics: dict[str, list] = field(default_factory=dict)
    wall_time_s: float = 0.0
    limit_loss: float = float("nan")  # stage-2 loss with all attention on optimal tokens
    max_len: int = 1  # L_max of the training sentences
    interrupted: str | None = None  # "stage 1, step 41" when a KeyboardInterrupt stopped training
    structured: object | None = None  # ttlab.ntp.structured.StructuredState of a structured run

    def rows(self, stage: str | None = None) -> dict[str, np.ndarray]:
        """Metric columns as arrays, optionally for one stage only."""
        import numpy as np

        st = np.array(self.metrics["stage"])
        keep = np.ones(len(st), bool) if stage is None else st == stage
        return {k: np.asarray(v)[keep] for k, v in self.metrics.items()}

    def final(self) -> dict[str, object]:
        """The last recorded step's metrics (empty before the first step)."""
        return {k: v[-1] for k, v in self.metrics.items() if v}

    def __repr__(self) -> str:  # the weights and every step's metrics stay out: a repr is a line, not 285,000 characters
        steps = {s: self.metrics.get("stage", []).count(s) for s in ("1", "2")}
        last = self.final()
        shown = ", ".join(f"{k} {last[k]:.4g}" for k in ("loss", "cosine", "cosine_ov") if isinstance(last.get(k), float))
        stopped = f", interrupted at {self.interrupted}" if self.interrupted else ""
        vocab = self.structured.W_ov.vocab_size if self.W_ov is None else self.W_ov.shape[0]  # type: ignore[attr-defined]
        return (f"TrainResult(|V| = {vocab}, {self.config.schedule}: stage 1 {steps['1']} steps, stage 2 "
                f"{steps['2']} steps; last: {shown or 'no step'}; ‖W*_kq‖ {self.wkq_star.norm:.4g}{stopped}, "
                f"{self.wall_time_s:.1f} s)")

    def to_dict(self) -> dict[str, object]:
        """JSON-ready: the config, the max-margin norms, the last step and every step's metrics (columns)."""
        from dataclasses import asdict

        return {"config": asdict(self.config), "wov_star_norm": self.wov_star.norm, "wkq_star_norm": self.wkq_star.norm,
                "limit_loss": self.limit_loss, "max_len": self.max_len, "interrupted": self.interrupted,
                "wall_time_s": self.wall_time_s, "final": self.final(), "metrics": {k: list(v) for k, v in self.metrics.items()}}

    def to_frame(self) -> object:
        """The per-step metrics as a ``pandas.DataFrame``, one row per step (pandas is optional: ``pip install pandas``)."""
        try:
            import pandas as pd
        except ImportError:
            raise TTLabInputError("to_frame needs pandas: pip install pandas (or use rows() / to_dict()).") from None
        return pd.DataFrame(self.metrics)


@dataclass(frozen=True)
class RandomSpec:
    """Parameters of a random realizable dataset (see the module docstring)."""

    vocab_size: int = setting(20, "Random dataset: vocabulary size |V|.")
    n_sentences: int = setting(100, "Random dataset: number of multi-token sentences.")
    min_len: int = setting(2, "Random dataset: shortest sentence length.")
    max_len: int = setting(6, "Random dataset: longest sentence length.")
    seed: int = setting(0, "Seed of the random dataset, random init and sampling.")
    optimal_fraction: float = 0.25
    non_optimal_fraction: float = 0.5

    def __post_init__(self) -> None:
        """Raise :class:`TTLabInputError` naming the first bad parameter (an invalid spec cannot be made)."""
        if self.vocab_size < 2:
            raise TTLabInputError(f"vocab_size must be at least 2 (got {self.vocab_size})", params=("vocab_size",))
        check_int(self.seed, "seed", 0)
        if self.n_sentences < 0:
            raise TTLabInputError(f"n_sentences must be ≥ 0 (got {self.n_sentences})", params=("n_sentences",))
        if self.min_len < 2:
            raise TTLabInputError(
                f"min_len must be at least 2 (got {self.min_len}); one-token sentences are the collocation "
                "lines, which the generator always writes", params=("min_len",)
            )
        if self.max_len < self.min_len:
            raise TTLabInputError(f"max_len ({self.max_len}) must be ≥ min_len ({self.min_len})",
                                  params=("max_len", "min_len"))
        f1, f2 = self.optimal_fraction, self.non_optimal_fraction
        if not (0 < f1 <= 1 and 0 <= f2 and f1 + f2 <= 1):
            raise TTLabInputError(
                f"the optimal and non-optimal fractions must satisfy 0 < optimal ≤ 1, non-optimal ≥ 0 and "
                f"optimal + non-optimal ≤ 1 (got {f1} and {f2})"
            )

    def header(self) -> str:
        """The comment line that opens the generated text."""
        return (f"# random realizable dataset: vocab={self.vocab_size} sentences={self.n_sentences} "
                f"len={self.min_len}..{self.max_len} seed={self.seed}")


@dataclass(frozen=True)
class DatasetSource:
    """The dataset of `ntp run` and `ntp generalize`: the file ``data``, or (without it) the random dataset of
    the other fields, made by :func:`ttlab.ntp.generate.load_dataset`. Not validated here: the random fields
    are checked (as a :class:`RandomSpec`) only when no file is given."""

    data: Optional[Path] = setting(None, "Dataset file (sequence lines 'S V O P' or explicit lines 'S V => O'). "
                                   "Without it a random realizable dataset is generated.")
    vocab_size: int = RandomSpec.vocab_size
    n_sentences: int = RandomSpec.n_sentences
    min_len: int = RandomSpec.min_len
    max_len: int = RandomSpec.max_len
    seed: int = RandomSpec.seed
