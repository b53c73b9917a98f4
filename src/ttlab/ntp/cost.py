"""What reading, checking and training on a dataset will cost, stated before the work, and the limits.

A sequence line of L tokens implies L − 1 sentences with ~L²/2 token slots. Reading and checking keep
one view per sentence (O(L), :mod:`ttlab.ntp.dataset`); training stores each sentence as its distinct
tokens with counts, (L − 1) × U_max slots where U_max ≤ min(L, |V|) is the most distinct tokens in one
sentence (:mod:`ttlab.ntp.model`), and one step does ~slots × |V| multiply-adds. The constants below
were measured on the product (CPython 3.11, torch CPU) and are rounded up:

* reading and checking: ≤ :data:`CHECK_BYTES_PER_TOKEN` bytes per token of the file (2.3 kB measured
  with one violation per sentence, 0.6 kB for a valid line); a valid file needs ≤
  :data:`VALID_CHECK_BYTES_PER_TOKEN` (0.6 kB for one long line, 0.33 kB measured for 200,000 short
  sentences at |V| = 50,257), so a text over the worst-case budget is first checked by the vectorized
  checker (:mod:`ttlab.ntp.fastcheck`, ~0.14 kB per token) and read when it is valid and fits the valid budget;
* training: :data:`MODEL_BYTES_PER_SLOT` bytes per slot (101 measured, float64, one-hot embeddings),
  plus 8 bytes × d per slot × 3 with general embeddings of dimension d, plus
  :data:`METRIC_BYTES_PER_STEP` per recorded step.

Above ``memory_limit_gib`` (default :data:`DEFAULT_MEMORY_LIMIT_GIB`) the work is refused with the
line responsible and how to proceed, instead of being OOM-killed; step counts above :data:`MAX_STEPS`
are refused outright.

Imports: ttlab.errors, ttlab.ntp (dataset, structure); never ttlab.cli.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from ttlab.errors import TTLabInputError
from ttlab.ntp.dataset import NTPDataset
from ttlab.ntp.structure import _groups

#: the budget of paper A at GPT-2 vocabulary size (|V| = 50,257, 200,000 sentences: ≤ 4 GiB peak)
DEFAULT_MEMORY_LIMIT_GIB = 4.0
CHECK_BYTES_PER_TOKEN = 3000
VALID_CHECK_BYTES_PER_TOKEN = 600
MODEL_BYTES_PER_SLOT = 128
METRIC_BYTES_PER_STEP = 600
#: memory of `ntp generate` (see :func:`generation_bytes`)
GENERATE_BYTES_PER_TOKEN = 32
GENERATE_BYTES_PER_TYPE = 256
#: steps per stage above which a run is refused whatever the budget (1e8 rows of metrics alone ≈ 60 GB)
MAX_STEPS = 100_000_000
_GIB = 2**30


def _gib(n_bytes: float) -> str:
    g = n_bytes / _GIB
    return f"{g:.2f} GiB" if g < 10 else f"{g:,.0f} GiB"


def check_limit(memory_limit_gib: float) -> float:
    """Validate a memory limit in GiB."""
    if not (isinstance(memory_limit_gib, (int, float)) and math.isfinite(memory_limit_gib) and memory_limit_gib > 0):
        raise TTLabInputError(f"--memory-limit must be a positive number of GiB (got {memory_limit_gib})")
    return float(memory_limit_gib)


def require_readable(text: str, source: str, memory_limit_gib: float = DEFAULT_MEMORY_LIMIT_GIB) -> int:
    """Refuse a dataset text whose reading and checking would exceed the limit; returns its token count.

    Counts tokens line by line (no sentence is built), so the refusal itself is cheap. A text over the
    worst-case budget (violations recorded for every sentence) but within the valid-file budget is checked
    first with the vectorized checker, and accepted when it is valid.
    """
    limit = check_limit(memory_limit_gib) * _GIB
    total, longest, longest_line = 0, 0, 0
    for lineno, raw in enumerate(text.splitlines(), start=1):
        n = len(raw.split("#", 1)[0].split())
        total += n
        if n > longest:
            longest, longest_line = n, lineno
    need = total * CHECK_BYTES_PER_TOKEN
    if need > limit and total * VALID_CHECK_BYTES_PER_TOKEN <= limit and _valid_by_quick_check(text, source):
        return total
    if need > limit:
        raise TTLabInputError(
            f"{source}: {total:,} tokens would take up to ~{_gib(need)} to read and check "
            f"(~{CHECK_BYTES_PER_TOKEN:,} bytes per token; limit {_gib(limit)}); the longest line is line "
            f"{longest_line} with {longest:,} tokens ({max(longest - 1, 0):,} sentences). Split the file, or "
            f"raise the limit with --memory-limit {math.ceil(need / _GIB)} if the machine has that much memory."
        )
    return total


def generation_bytes(spec, method: str, build_dataset: bool = False) -> int:
    """Peak memory of writing the random dataset ``spec`` (a :class:`ttlab.ntp.generate.RandomSpec`) with
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


def require_generable(spec, method: str, memory_limit_gib: float = DEFAULT_MEMORY_LIMIT_GIB,
                      build_dataset: bool = False) -> None:
    """Refuse a random dataset whose generation (:func:`generation_bytes`) would exceed the limit,
    before anything is drawn, naming the option that dominates and how to proceed."""
    limit = check_limit(memory_limit_gib) * _GIB
    need = generation_bytes(spec, method, build_dataset)
    if need <= limit:
        return
    V, n = spec.vocab_size, spec.n_sentences
    parts = {"--vocab": V * GENERATE_BYTES_PER_TYPE + (V * V if method == "dense" else 0),
             "--sentences and --max-len": n * ((spec.min_len + spec.max_len) / 2 + 1) * GENERATE_BYTES_PER_TOKEN}
    worst = max(parts, key=parts.get)
    raise TTLabInputError(
        f"a random dataset with --vocab {V:,}, --sentences {n:,} and lengths {spec.min_len:,}…{spec.max_len:,} "
        f"would take ~{_gib(need)} to generate{' and read' if build_dataset else ''} (limit {_gib(limit)}; "
        f"{worst} dominate{'s' if worst == '--vocab' else ''}). Lower {worst}, or raise the limit with "
        f"--memory-limit {math.ceil(need / _GIB)} if the machine has that much memory."
    )


def _valid_by_quick_check(text: str, source: str) -> bool:
    """True when the vectorized checker applies to ``text`` and finds Assumptions 1 and 3 hold."""
    from ttlab.ntp.fastcheck import quick_check

    qc = quick_check(text, source)
    return qc is not None and qc.valid


def batch_width(dataset: NTPDataset) -> tuple[int, int]:
    """U_max (most distinct tokens in one sentence) and the index of a sentence that has that many.

    One pass over each line's tokens (O(total tokens)), so the cost of a model can be stated before it
    is built.
    """
    best, arg = 0, 0
    sentences = dataset.sentences
    for base, members in _groups(sentences):
        members = sorted(members, key=lambda i: len(sentences[i].tokens))
        seen: set[str] = set()
        pos = 0
        for i in members:
            ell = len(sentences[i].tokens)
            while pos < ell:
                seen.add(base[pos])
                pos += 1
            if len(seen) > best:
                best, arg = len(seen), i
    return best, arg


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
                f"(~{_gib(self.model_bytes)})")

    def describe(self) -> str:
        """One sentence stating the cost."""
        return (
            f"{self.batch()}, {self.steps:,} recorded steps (~{_gib(self.metric_bytes)} of metrics), "
            f"~{self.products_per_step:,} token × vocabulary products per step"
        )

    def as_dict(self) -> dict:
        return {
            "n_sentences": self.n_sentences,
            "width": self.width,
            "slots": self.slots,
            "estimated_bytes": self.total_bytes,
            "products_per_step": self.products_per_step,
        }


def training_cost(dataset: NTPDataset, dim: int | None = None, steps: int = 0) -> TrainingCost:
    """Estimate the memory of training on ``dataset`` (O(total tokens) to compute, nothing allocated)."""
    width, widest = batch_width(dataset)
    V = dataset.vocab_size
    d = V if dim is None else dim
    slots = len(dataset.sentences) * width
    per_slot = MODEL_BYTES_PER_SLOT + (0 if dim is None else 3 * 8 * d)
    s = dataset.sentences[widest]
    line = s.lines[0] if s.lines else 0
    per_line = Counter(x for t in dataset.sentences for x in set(t.lines))
    return TrainingCost(
        n_sentences=len(dataset.sentences),
        width=width,
        vocab_size=V,
        dim=d,
        steps=steps,
        model_bytes=slots * per_slot,
        metric_bytes=steps * METRIC_BYTES_PER_STEP,
        products_per_step=slots * d,
        line=line,
        line_sentences=per_line.get(line, 0),
        line_tokens=len(s.tokens),
    )


def require_steps(stage1_steps: int, stage2_steps: int) -> None:
    """Refuse absurd step counts before anything is built."""
    for name, v in (("--stage1-steps", stage1_steps), ("--stage2-steps", stage2_steps)):
        if v > MAX_STEPS:
            raise TTLabInputError(
                f"{name} {v:,} is beyond the {MAX_STEPS:,}-step limit: every step is recorded in metrics.csv "
                f"(~{METRIC_BYTES_PER_STEP} bytes per step in memory, ~{_gib(v * METRIC_BYTES_PER_STEP)} here) and "
                f"the rates are fitted from a few thousand steps; use at most {MAX_STEPS:,}"
            )


def require_trainable(cost: TrainingCost, source: str, memory_limit_gib: float = DEFAULT_MEMORY_LIMIT_GIB) -> None:
    """Refuse training whose estimated memory exceeds the limit, naming the line responsible."""
    limit = check_limit(memory_limit_gib) * _GIB
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
        f"{source}: training would need ~{_gib(cost.total_bytes)} (limit {_gib(limit)}): {cost.describe()}. "
        f"The batch is set by {where}. To proceed, {fix}, or raise the limit with "
        f"--memory-limit {math.ceil(cost.total_bytes / _GIB)} if the machine has that much memory."
    )
