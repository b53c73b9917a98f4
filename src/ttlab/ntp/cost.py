"""What the work of paper A will cost, stated before it is done: memory and time estimates, and their refusals.

A sequence line of L tokens implies L − 1 sentences with ~L²/2 token slots. Reading and checking keep
one view per sentence (O(L), :mod:`ttlab.ntp.reading` states that budget, a reading limit at the bottom of
the package: the dataset parser enforces it); training stores each sentence as its distinct tokens with
counts, (L − 1) × U_max slots where U_max ≤ min(L, |V|) is the most distinct tokens in one sentence
(:mod:`ttlab.ntp.model`), and one step does ~slots × |V| multiply-adds. The constants below were measured
on the product (CPython 3.11, torch CPU) and are rounded up:

* training: :data:`MODEL_BYTES_PER_SLOT` bytes per slot (101 measured, float64, one-hot embeddings),
  plus 8 bytes × d per slot × 3 with general embeddings of dimension d, plus
  :data:`METRIC_BYTES_PER_STEP` per recorded step (:func:`training_cost`, :func:`batch_cost` for a batch
  counted elsewhere, e.g. by :meth:`ttlab.ntp.fastcheck.QuickCheck.training_cost`);
* generating a random dataset: :func:`generation_bytes`;
* the vectorized check of `ntp check`: :data:`FAST_CHECK_BYTES_PER_SLOT` (:func:`quick_check_slots`);
* time: training steps timed and extrapolated (:func:`estimate_seconds`), plus :data:`WRITE_SECONDS` for
  the outputs of `ntp run`.

Above ``memory_limit_gib`` (default :data:`~ttlab.ntp.limits.DEFAULT_MEMORY_LIMIT_GIB`) the work is refused
with the line responsible and how to proceed, instead of being OOM-killed; step counts above
:data:`~ttlab.ntp.limits.MAX_STEPS` are refused outright, and runs estimated above ``max_hours``
(:func:`require_hours`). The limits are :mod:`ttlab.ntp.limits`'s, the reading budget :mod:`ttlab.ntp.reading`'s.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ttlab.errors import TTLabInputError
from ttlab.ntp.config import RandomSpec, TrainConfig
from ttlab.ntp.dataset import NTPDataset, batch_width
from ttlab.ntp.limits import (
    DEFAULT_MEMORY_LIMIT_GIB,
    GIB,
    MAX_STEPS,
    check_limit,
    gib_text,
)
from ttlab.ntp.reading import (
    MAX_SLOTS,
    VALID_CHECK_BYTES_PER_TOKEN,
)
from ttlab.provenance import median_call_seconds

if TYPE_CHECKING:
    from ttlab.ntp.model import NTPTransformer
    from ttlab.ntp.structured import StructuredProblem

MODEL_BYTES_PER_SLOT = 128
METRIC_BYTES_PER_STEP = 600
#: memory of `ntp generate` (see :func:`generation_bytes`)
GENERATE_BYTES_PER_TOKEN = 32
GENERATE_BYTES_PER_TYPE = 256
#: memory of the vectorized checker of `ntp check` per sentence slot (measured ≈ 110 B at |V| = 50,257; rounded up)
FAST_CHECK_BYTES_PER_SLOT = 200
#: writing metrics.csv, summary.json and dynamics.png (measured 1.8–4.9 s, matplotlib's import included)
WRITE_SECONDS = 4.0


# ---------------------------------------------------------------------------------------------- memory
def generation_bytes(spec: RandomSpec, method: str, build_dataset: bool = False) -> int:
    """Peak memory of writing the random dataset ``spec`` (a :class:`ttlab.ntp.config.RandomSpec`) with
    generator ``method`` ("dense" or "large", resolved), and of reading it into a dataset when
    ``build_dataset`` (as `ntp run` without --data does); computed from the spec, nothing generated.

    Expected tokens: 2 per collocation line, (min + max)/2 + 1 per sentence. Measured with tracemalloc
    (|V| = 100 … 200,000): ≤ 14 bytes per token of text and lists, ≤ 205 bytes per vocabulary entry,
    plus the dense generator's |V|² role table; the constants are rounded up to
    :data:`GENERATE_BYTES_PER_TOKEN` and :data:`GENERATE_BYTES_PER_TYPE`.
    """
    V, n = spec.vocab_size, spec.n_sentences
    tokens = 2 * V + n * ((spec.min_len + spec.max_len) / 2 + 1)
    need = tokens * GENERATE_BYTES_PER_TOKEN + V * GENERATE_BYTES_PER_TYPE + (V * V if method == "dense" else 0)
    if build_dataset:
        need += tokens * VALID_CHECK_BYTES_PER_TOKEN
    return int(need)


def require_generable(spec: RandomSpec, method: str, memory_limit_gib: float = DEFAULT_MEMORY_LIMIT_GIB,
                      build_dataset: bool = False) -> None:
    """Refuse a random dataset whose generation (:func:`generation_bytes`) would exceed the limit,
    before anything is drawn, naming the option that dominates and how to proceed."""
    limit = check_limit(memory_limit_gib) * GIB
    need = generation_bytes(spec, method, build_dataset)
    if need <= limit:
        return
    V, n = spec.vocab_size, spec.n_sentences
    parts = {("vocab_size",): V * GENERATE_BYTES_PER_TYPE + (V * V if method == "dense" else 0),
             ("n_sentences", "max_len"): n * ((spec.min_len + spec.max_len) / 2 + 1) * GENERATE_BYTES_PER_TOKEN}
    worst = max(parts, key=parts.get)
    names = " and ".join(worst)
    raise TTLabInputError(
        f"a random dataset with vocab_size {V:,}, n_sentences {n:,} and lengths {spec.min_len:,}…{spec.max_len:,} "
        f"would take ~{gib_text(need)} to generate{' and read' if build_dataset else ''} (limit {gib_text(limit)}; "
        f"{names} dominate{'s' if len(worst) == 1 else ''}). Lower {names}, or raise the limit with "
        f"memory_limit_gib={math.ceil(need / GIB)} if the machine has that much memory.",
        params=(*worst, "memory_limit_gib"),
    )


def quick_check_slots(memory_limit_gib: float) -> int:
    """The most sentence slots the vectorized check of `ntp check` may expand within the limit (at most
    :data:`~ttlab.ntp.reading.MAX_SLOTS`)."""
    return min(MAX_SLOTS, int(check_limit(memory_limit_gib) * GIB / FAST_CHECK_BYTES_PER_SLOT))


@dataclass(frozen=True)
class TrainingCost:
    """Size of the training batch and what it costs, with the line that dominates it."""

    n_sentences: int
    width: int  # U_max: most distinct tokens in one sentence
    vocab_size: int
    dim: int
    steps: int  # recorded steps in all stages
    model_bytes: int
    metric_bytes: int
    products_per_step: int  # slots × |V|: the multiply-adds of one forward pass
    line: int  # source line of the widest sentence (0 = built in code)
    line_sentences: int  # sentences that line contributes
    line_tokens: int  # tokens of the widest sentence

    @property
    def slots(self) -> int:
        return self.n_sentences * self.width

    @property
    def total_bytes(self) -> int:
        return self.model_bytes + self.metric_bytes

    def batch(self) -> str:
        """The batch size and its memory, e.g. '19,999 sentences × 4 distinct tokens = 79,996 slots (~0.01 GiB)'."""
        return (f"{self.n_sentences:,} sentences × {self.width:,} distinct tokens = {self.slots:,} slots "
                f"(~{gib_text(self.model_bytes)})")

    def describe(self) -> str:
        """One sentence stating the cost."""
        return (
            f"{self.batch()}, {self.steps:,} recorded steps (~{gib_text(self.metric_bytes)} of metrics), "
            f"~{self.products_per_step:,} token × vocabulary products per step"
        )

    def as_dict(self) -> dict:
        """The JSON record (`ntp check`'s training_cost, `ntp run`'s summary cost)."""
        return {
            "n_sentences": self.n_sentences,
            "width": self.width,
            "slots": self.slots,
            "estimated_bytes": self.total_bytes,
            "products_per_step": self.products_per_step,
        }


def batch_cost(n_sentences: int, width: int, vocab_size: int, dim: int | None = None, steps: int = 0, line: int = 0,
               line_sentences: int = 0, line_tokens: int = 0) -> TrainingCost:
    """The memory of training on ``n_sentences`` sentences of at most ``width`` distinct tokens (one-hot
    embeddings when ``dim`` is None), ``steps`` recorded steps; the widest sentence's ``line`` (0 = built in
    code), the sentences that line contributes and its tokens name the line responsible."""
    d = vocab_size if dim is None else dim
    slots = n_sentences * width
    per_slot = MODEL_BYTES_PER_SLOT + (0 if dim is None else 3 * 8 * d)
    return TrainingCost(
        n_sentences=n_sentences,
        width=width,
        vocab_size=vocab_size,
        dim=d,
        steps=steps,
        model_bytes=slots * per_slot,
        metric_bytes=steps * METRIC_BYTES_PER_STEP,
        products_per_step=slots * d,
        line=line,
        line_sentences=line_sentences,
        line_tokens=line_tokens,
    )


def training_cost(dataset: NTPDataset, dim: int | None = None, steps: int = 0) -> TrainingCost:
    """Estimate the memory of training on ``dataset`` (O(total tokens) to compute, nothing allocated)."""
    width, widest = batch_width(dataset)
    s = dataset.sentences[widest]
    line = s.lines[0] if s.lines else 0
    per_line = Counter(x for t in dataset.sentences for x in set(t.lines))
    return batch_cost(len(dataset.sentences), width, dataset.vocab_size, dim, steps, line, per_line.get(line, 0),
                      len(s.tokens))


def require_steps(stage1_steps: int, stage2_steps: int) -> None:
    """Refuse absurd step counts before anything is built."""
    for name, v in (("stage1_steps", stage1_steps), ("stage2_steps", stage2_steps)):
        if v > MAX_STEPS:
            raise TTLabInputError(
                f"{name} {v:,} is beyond the {MAX_STEPS:,}-step limit: every step is recorded in metrics.csv "
                f"(~{METRIC_BYTES_PER_STEP} bytes per step in memory, ~{gib_text(v * METRIC_BYTES_PER_STEP)} here) and "
                f"the rates are fitted from a few thousand steps; use at most {MAX_STEPS:,}", params=(name,)
            )


def require_trainable(cost: TrainingCost, source: str, memory_limit_gib: float = DEFAULT_MEMORY_LIMIT_GIB) -> None:
    """Refuse training whose estimated memory exceeds the limit, naming the line responsible."""
    limit = check_limit(memory_limit_gib) * GIB
    if cost.total_bytes <= limit:
        return
    where = (
        f"line {cost.line} ({cost.line_sentences:,} sentences, the longest {cost.line_tokens:,} tokens with "
        f"{cost.width:,} distinct ones)" if cost.line else f"the widest sentence ({cost.line_tokens:,} tokens)"
    )
    if cost.model_bytes >= cost.metric_bytes:
        fix = (
            f"split {'line ' + str(cost.line) if cost.line else 'long sentences'} into shorter sequence lines "
            "(a line of L tokens gives L − 1 sentences, each as wide as its distinct tokens)"
        )
    else:
        fix = "train fewer steps"
    raise TTLabInputError(
        f"{source}: training would need ~{gib_text(cost.total_bytes)} (limit {gib_text(limit)}): {cost.describe()}. "
        f"The batch is set by {where}. To proceed, {fix}, or raise the limit with "
        f"memory_limit_gib={math.ceil(cost.total_bytes / GIB)} if the machine has that much memory.",
        params=("memory_limit_gib",),
    )


# ---------------------------------------------------------------------------------------------- time
def estimate_seconds(model: NTPTransformer | StructuredProblem, config: TrainConfig, budget_s: float = 0.5) -> float:
    """Wall time of ``config``'s steps, extrapolated from timed steps (after one warm-up step).

    A timed step is what training does per step: the loss and gradient, a normalized update and the
    recorded cosine and norms; each kind is repeated up to 20 times or ``budget_s`` seconds. ``model`` is
    the dense model, or the :class:`StructuredProblem` of a structured run (then its steps are timed).
    """
    import torch

    from ttlab.ntp.structured import StructuredProblem
    from ttlab.ntp.train import cosine, threads_for

    if isinstance(model, StructuredProblem):
        return _estimate_structured(model, config, budget_s)
    W_ov, W_kq = model.zeros()

    def stage1() -> None:
        g = model.collocation_loss_and_grad(W_ov).grad_ov
        cosine(W_ov - g / max(float(g.norm()), 1e-300), g)

    def stage2() -> None:
        lg = model.loss_and_grad(W_ov, W_kq, wrt=("kq",))
        cosine(W_kq - lg.grad_kq / max(float(lg.grad_kq.norm()), 1e-300), lg.grad_kq)
        model.min_optimal_attention(lg.attention)

    def joint() -> None:
        lg = model.loss_and_grad(W_ov, W_kq)
        cosine(W_kq - lg.grad_kq / max(float(lg.grad_kq.norm()), 1e-300), lg.grad_kq)
        cosine(W_ov - lg.grad_ov / max(float(lg.grad_ov.norm()), 1e-300), lg.grad_ov)
        model.min_optimal_attention(lg.attention)

    with threads_for(model), torch.no_grad():
        if config.schedule == "two-stage":
            t1 = median_call_seconds(stage1, budget_s) if config.stage1_steps else 0.0
            t2 = median_call_seconds(stage2, budget_s) if config.stage2_steps else 0.0
            return t1 * (config.stage1_steps + 1) + t2 * (config.stage2_steps + 1)
        return median_call_seconds(joint, budget_s) * (config.stage1_steps + config.stage2_steps + 1)


def _estimate_structured(prob: StructuredProblem, config: TrainConfig, budget_s: float) -> float:
    """:func:`estimate_seconds` for the structured path (its steps from W = 0, same timing rule)."""
    import torch

    from ttlab.ntp.structured import SparseKQ, StructuredOV, ngd_unit, one_thread

    m = len(prob.colloc_tokens)
    z = torch.zeros(m, dtype=torch.float64)
    ov = StructuredOV(prob.vocab_size, prob.colloc_tokens, prob.colloc_next, z, z)
    a_tok = prob.position_gain(ov)
    kq = SparseKQ(prob.vocab_size, prob.pair_token, prob.pair_query, torch.zeros(len(prob.pair_keys), dtype=torch.float64))

    mult1 = torch.tensor([1.0, float(prob.vocab_size - 1)], dtype=torch.float64)

    def stage1() -> None:  # as a training step: loss and gradient, the cosine's norms, the NGD update
        if m:
            ce, _ = prob.stage1_loss_grad(ov)
            ov.norm()
            unit, un = ngd_unit(ce.grad, mult1) if prob.vocab_size > 1 else (ce.grad, 1.0)
            ov.label_val - unit[:, 0] / max(un, 1e-300)

    def stage2() -> None:
        _, grad, phi = prob.stage2_loss_grad(a_tok, kq)
        float(kq.values @ kq.values)
        unit, un = ngd_unit(grad)
        kq.values - unit / max(un, 1e-300)
        prob.min_optimal_attention(phi)

    with one_thread():
        t1 = median_call_seconds(stage1, budget_s) if config.stage1_steps else 0.0
        t2 = median_call_seconds(stage2, budget_s) if config.stage2_steps else 0.0
    return t1 * (config.stage1_steps + 1) + t2 * (config.stage2_steps + 1)


def duration_text(seconds: float) -> str:
    """A duration for messages: seconds, minutes, hours or days."""
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    if seconds < 3 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:,.0f} days"


def require_hours(seconds: float, max_hours: float, source: str, config: TrainConfig, cost: TrainingCost) -> None:
    """Refuse a run whose timed steps (``seconds``) plus the writing exceed ``max_hours``."""
    if seconds + WRITE_SECONDS > max_hours * 3600:
        raise TTLabInputError(
            f"{source}: {config.stage1_steps:,} + {config.stage2_steps:,} steps would take ~{duration_text(seconds)} "
            f"(extrapolated from timed steps; {cost.describe()}), above max_hours {max_hours:g}; train fewer "
            f"steps, or raise max_hours to {math.ceil((seconds + WRITE_SECONDS) / 3600)} to run it anyway",
            params=("max_hours",),
        )
