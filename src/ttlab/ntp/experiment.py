"""One paper-A experiment from dataset to files: metrics.csv, summary.json, dynamics.png.

Imports: numpy, ttlab.errors, ttlab.provenance, ttlab.ntp (every module but walkthrough); lazily
torch and matplotlib; never ttlab.cli.
"""

from __future__ import annotations

import csv
import io
import math
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.ntp.cost import DEFAULT_MEMORY_LIMIT_GIB, require_steps, require_trainable, training_cost
from ttlab.ntp.dataset import NTPDataset
from ttlab.ntp.diagnostics import summarize
from ttlab.ntp.generalize import evaluate_generalization, unseen_sentences
from ttlab.ntp.maxmargin import MaxMarginSolution
from ttlab.ntp.model import NTPTransformer
from ttlab.ntp.structure import DatasetStructure, analyze
from ttlab.ntp.structured import MATERIALIZE_LIMIT, StructuredProblem, train_structured
from ttlab.ntp.train import (
    FIGURE2_NORM_RATIOS,
    METRIC_COLUMNS,
    ProgressFn,
    TrainConfig,
    TrainResult,
    logit_spread_bound,
    train,
    use_structured,
)
from ttlab.provenance import atomic_savefig, atomic_write_json, atomic_write_text, median_call_seconds, versions

#: runs estimated to take longer than this announce their estimate before starting
ANNOUNCE_SECONDS = 10.0
#: writing metrics.csv, summary.json and dynamics.png (measured 1.8–4.9 s, matplotlib's import included)
WRITE_SECONDS = 4.0
#: runs estimated to take longer than this many hours are refused unless the limit is raised
DEFAULT_MAX_HOURS = 24.0


def require_valid(structure: DatasetStructure, max_shown: int = 5) -> None:
    """Raise a clear error listing the violations when the dataset breaks the assumptions."""
    if structure.valid:
        return
    lines = [f"  - {v.message}" for v in structure.violations[:max_shown]]
    more = len(structure.violations) - max_shown
    if more > 0:
        lines.append(f"  … and {more} more")
    raise TTLabInputError(
        f"{structure.dataset.source} breaks the paper's assumptions ({len(structure.violations)} violation(s)):\n"
        + "\n".join(lines)
        + "\nRun `ttlab ntp check` on it for the full list; training needs a realizable dataset."
    )


def require_learnable(structure: DatasetStructure, config: TrainConfig) -> None:
    """Refuse a run in which a stage has nothing to learn (see :meth:`DatasetStructure.degenerate`).

    A one-token vocabulary is always refused. Without W*_kq constraints stage 2 is refused unless
    ``stage2_steps`` is 0 with the two-stage schedule, which trains stage 1 only (no stage-2 rows).
    """
    bad = structure.degenerate()
    src = structure.dataset.source
    if "stage1" in bad:
        raise TTLabInputError(f"{src}: nothing to train: {bad['stage1']}; add sentences over at least two tokens")
    if "stage2" in bad and (config.schedule != "two-stage" or config.stage2_steps > 0):
        raise TTLabInputError(
            f"{src}: stage 2 has nothing to learn: {bad['stage2']}. Add sentences such as 'a b => n(a)' where "
            "b has a different next token, or train stage 1 only with --schedule two-stage --stage2-steps 0"
        )


def estimate_seconds(model: NTPTransformer | StructuredProblem, config: TrainConfig, budget_s: float = 0.5) -> float:
    """Wall time of ``config``'s steps, extrapolated from timed steps (after one warm-up step).

    A timed step is what training does per step: the loss and gradient, a normalized update and the
    recorded cosine and norms; each kind is repeated up to 20 times or ``budget_s`` seconds. ``model`` is
    the dense model, or the :class:`StructuredProblem` of a structured run (then its steps are timed).
    """
    import torch

    from ttlab.ntp.train import _threads_for, cosine

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

    with _threads_for(model), torch.no_grad():
        if config.schedule == "two-stage":
            t1 = median_call_seconds(stage1, budget_s) if config.stage1_steps else 0.0
            t2 = median_call_seconds(stage2, budget_s) if config.stage2_steps else 0.0
            return t1 * (config.stage1_steps + 1) + t2 * (config.stage2_steps + 1)
        return median_call_seconds(joint, budget_s) * (config.stage1_steps + config.stage2_steps + 1)


def _estimate_structured(prob: StructuredProblem, config: TrainConfig, budget_s: float) -> float:
    """:func:`estimate_seconds` for the structured path (its steps from W = 0, same timing rule)."""
    import torch

    from ttlab.ntp.structured import SparseKQ, StructuredOV, _ngd_unit, one_thread

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
            unit, un = _ngd_unit(ce.grad, mult1) if prob.vocab_size > 1 else (ce.grad, 1.0)
            ov.label_val - unit[:, 0] / max(un, 1e-300)

    def stage2() -> None:
        _, grad, phi = prob.stage2_loss_grad(a_tok, kq)
        float(kq.values @ kq.values)
        unit, un = _ngd_unit(grad)
        kq.values - unit / max(un, 1e-300)
        prob.min_optimal_attention(phi)

    with one_thread():
        t1 = median_call_seconds(stage1, budget_s) if config.stage1_steps else 0.0
        t2 = median_call_seconds(stage2, budget_s) if config.stage2_steps else 0.0
    return t1 * (config.stage1_steps + 1) + t2 * (config.stage2_steps + 1)


#: ``step_sizes`` values of :func:`run_dynamics`
STEP_SIZES = ("paper", "figure2")


def check_step_sizes(problem: StructuredProblem, config: TrainConfig, step_sizes: str = "paper",
                     progress: ProgressFn | None = None) -> tuple[TrainConfig, str | None]:
    """The config to train with and a warning when a stage cannot reach its max-margin margins.

    Solves W*_ov and W*_kq (kept on ``problem`` for training). ``"figure2"`` fills unset step sizes by
    :meth:`TrainConfig.figure2_scaled`; with the given ones (``"paper"``), a stage whose ratio
    T·η/‖W*‖ is below 1 cannot leave the neighbourhood of the origin (stage 1's loss stays near log|V|),
    and the warning names the ratios and the step sizes that keep Figure 2's. Both apply to NGD only
    (the bound ‖W(T)‖ ≤ T·η); other optimizers train as given, and "figure2" is refused for them.
    """
    if step_sizes not in STEP_SIZES:
        raise TTLabInputError(f"--step-sizes must be one of {', '.join(STEP_SIZES)} (got {step_sizes!r})")
    if config.optimizer != "ngd":  # ‖W(T)‖ ≤ T·η holds for normalized steps from zero only
        if step_sizes == "figure2":
            raise TTLabInputError(f"--step-sizes figure2 is a rule for normalized GD (--optimizer ngd), not "
                                  f"{config.optimizer}; pass --eta0 and --eta")
        return config, None
    star_ov, star_kq = problem.max_margin(progress)
    if step_sizes == "figure2":
        return config.figure2_scaled(star_ov.norm, star_kq.norm), None
    V = problem.vocab_size
    ratios = config.norm_ratios(V, star_ov.norm, star_kq.norm)
    stuck = [i for i, (r, n) in enumerate(zip(ratios, (config.stage1_steps, config.stage2_steps))) if n and r < 1]
    if not stuck:
        return config, None
    c, f = config.resolved(V), config.figure2_scaled(star_ov.norm, star_kq.norm).resolved(V)
    r1, r2 = FIGURE2_NORM_RATIOS
    names = (f"stage 1: {c.stage1_steps}·η0 = {c.stage1_steps * c.eta0:.3g} vs ‖W*_ov‖ = {star_ov.norm:.4g}",
             f"stage 2: {c.stage2_steps}·η = {c.stage2_steps * c.eta:.3g} vs ‖W*_kq‖ = {star_kq.norm:.4g}")
    return config, (
        f"the step sizes cannot move W far enough to learn ({'; '.join(names[i] for i in stuck)}): NGD grows ‖W‖ "
        f"by at most η a step and W* is the smallest W with every margin 1, so "
        f"{'the loss stays near log|V| = ' + format(math.log(V), '.2f') if 0 in stuck else 'attention barely moves'}."
        f" Figure 2 (|V| = 20) has T·η/‖W*‖ = {r1:g} and {r2:g}; to keep them pass "
        f"--eta0 {f.eta0:.4g} --eta {f.eta:.4g} (or --step-sizes figure2)"
    )


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    if seconds < 3 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:,.0f} days"


def solution_info(sol: MaxMarginSolution) -> dict:
    """JSON summary of a max-margin solution (without the matrix)."""
    return {
        "norm": sol.norm,
        "min_margin": sol.min_margin,
        "max_violation": sol.max_violation,
        "n_constraints": sol.n_constraints,
        "method": sol.method,
    }


def metrics_csv(result: TrainResult) -> str:
    """The per-step metrics as CSV text (columns of :data:`METRIC_COLUMNS`)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(METRIC_COLUMNS)
    m = result.metrics
    for i in range(len(m["step"])):
        w.writerow([_fmt(m[c][i]) for c in METRIC_COLUMNS])
    return buf.getvalue()


def _fmt(v: object) -> object:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else repr(v)
    return v


def dataset_info(dataset: NTPDataset) -> dict:
    return {
        "source": dataset.source,
        "vocab_size": dataset.vocab_size,
        "n_distinct_sentences": len(dataset.sentences),
        "n_occurrences": int(sum(s.count for s in dataset.sentences)),
        "max_len": dataset.max_len,
    }


def run_dynamics(
    dataset: NTPDataset,
    config: TrainConfig,
    out_dir: str | Path | None = None,
    embeddings: np.ndarray | None = None,
    embedding_kind: str = "onehot",
    progress: ProgressFn | None = None,
    generalization_samples: int = 0,
    memory_limit_gib: float = DEFAULT_MEMORY_LIMIT_GIB,
    max_hours: float = DEFAULT_MAX_HOURS,
    announce: Callable[[str], None] | None = None,
    keep_interrupted: bool = False,
    step_sizes: str = "paper",
    started: float | None = None,
) -> dict:
    """Train on ``dataset``, fit the rates and (when ``out_dir`` is given) write the three outputs.

    Before training: the assumptions and degenerate stages are checked, the memory is estimated and
    refused above ``memory_limit_gib``, and the wall time is extrapolated from timed steps and refused
    above ``max_hours``; ``announce`` receives a one-line estimate of the whole run when it will take
    over :data:`ANNOUNCE_SECONDS`: the time since ``started`` (a ``time.perf_counter()`` reading taken
    when the command began, default: this call) plus the timed steps plus :data:`WRITE_SECONDS`
    (``summary["time"]``; measured error in docs/cost_model.md). An interrupted run (KeyboardInterrupt)
    still writes what it recorded and the summary says where it stopped (``summary["interrupted"]``).

    Step sizes (structured path, see :func:`check_step_sizes`): ``step_sizes="paper"`` keeps the given
    ones (default 0.2/√d, 0.05/√d) and, when a stage's norm bound tη stays below ‖W*‖, warns through
    ``announce`` and ``summary["step_size_warning"]`` with the values to pass; ``"figure2"`` fills the
    unset ones by Figure 2's rule (:meth:`TrainConfig.figure2_scaled`).
    Returns the summary dictionary that is written to ``summary.json``.
    """
    t_start = time.perf_counter()
    require_steps(config.stage1_steps, config.stage2_steps)
    if not (math.isfinite(max_hours) and max_hours > 0):
        raise TTLabInputError(f"--max-hours must be a positive number (got {max_hours})")
    structure = analyze(dataset)
    require_valid(structure)
    require_learnable(structure, config)
    steps = config.stage1_steps + config.stage2_steps + 2
    dim = None if embeddings is None else int(np.asarray(embeddings).shape[0])
    cost = training_cost(dataset, dim, steps)
    require_trainable(cost, dataset.source, memory_limit_gib)
    if use_structured(config, embeddings):  # no dense model: its time estimate alone would form |V|² zeros
        if generalization_samples and dataset.vocab_size > MATERIALIZE_LIMIT:
            raise TTLabInputError(
                f"--generalization-samples needs the dense matrices, which a structured run keeps only for "
                f"|V| ≤ {MATERIALIZE_LIMIT} (this dataset has |V| = {dataset.vocab_size}); drop the option"
            )
        model = problem = StructuredProblem(dataset, structure)
    else:
        problem = None
        model = NTPTransformer(dataset, embeddings=embeddings, dtype=config.dtype, structure=structure,
                               max_logit_spread=logit_spread_bound(config, dataset.vocab_size, embeddings))
    seconds = estimate_seconds(model, config)
    if seconds + WRITE_SECONDS > max_hours * 3600:
        raise TTLabInputError(
            f"{dataset.source}: {config.stage1_steps:,} + {config.stage2_steps:,} steps would take ~{_duration(seconds)} "
            f"(extrapolated from timed steps; {cost.describe()}), above --max-hours {max_hours:g}; train fewer "
            f"steps, or raise --max-hours to {math.ceil((seconds + WRITE_SECONDS) / 3600)} to run it anyway"
        )
    warning = None
    if problem is not None:
        config, warning = check_step_sizes(problem, config, step_sizes, progress)
        if warning and announce is not None:
            announce(f"warning: {warning}")
    elif step_sizes != "paper":
        raise TTLabInputError(f"--step-sizes {step_sizes} sizes the steps from the one-hot max-margin solutions "
                              "of the structured path, which this configuration does not use; pass --eta0 and --eta")
    before = time.perf_counter() - (t_start if started is None else started)
    total = before + seconds + WRITE_SECONDS
    if announce is not None and total > ANNOUNCE_SECONDS:
        announce(f"estimated time ~{_duration(total)} in all: {before:.1f} s so far (reading, checking"
                 f"{', W*' if problem is not None else ''}), ~{_duration(seconds)} of training ({cost.describe()}), "
                 f"~{WRITE_SECONDS:g} s writing; Ctrl-C stops training and keeps the steps done so far")
    if problem is not None:
        result = train_structured(dataset, config, progress, problem=problem, keep_interrupted=keep_interrupted)
    else:
        result = train(dataset, config, progress=progress, model=model, keep_interrupted=keep_interrupted)
    dim = dataset.vocab_size if embeddings is None else int(np.asarray(embeddings).shape[0])
    summary = {
        "config": {**asdict(result.config), "embeddings": embedding_kind, "dim": dim},
        "dataset": dataset_info(dataset),
        "versions": versions(),
        "wov_star_norm": result.wov_star.norm,
        "wkq_star_norm": result.wkq_star.norm,
        "wov_star": solution_info(result.wov_star),
        "wkq_star": solution_info(result.wkq_star),
        "stages": summarize(result),
        "wall_time_s": result.wall_time_s,
        "estimated_time_s": seconds,
        "time": {"before_training_s": before, "estimated_training_s": seconds, "estimated_total_s": total},
        "cost": cost.as_dict(),
    }
    if "stage2" in structure.degenerate():  # stage 1 only (require_learnable allowed it): no W*_kq
        summary["stage_2_skipped"] = structure.degenerate()["stage2"]
        summary["wkq_star_norm"] = summary["wkq_star"] = None
    if warning:
        summary["step_size_warning"] = warning
    if result.interrupted:
        summary["interrupted"] = result.interrupted
    if generalization_samples and not result.interrupted:
        if problem is not None:
            model = NTPTransformer(dataset, dtype="float64", structure=structure)
        sents = unseen_sentences(structure, n_samples=generalization_samples, seed=config.seed)
        gen = evaluate_generalization(model, result.W_ov, result.W_kq, sents)
        summary["generalization"] = {k: v for k, v in gen.items() if k != "cases"}
    summary["_result"] = result
    summary["_dataset"] = dataset
    if out_dir is not None:
        write_outputs(summary, out_dir)
    return summary


def write_outputs(summary: dict, out_dir: str | Path) -> None:
    """Write metrics.csv, summary.json, dynamics.png and dataset.txt into ``out_dir`` atomically."""
    from ttlab.ntp.plots import dynamics_figure

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    result: TrainResult = summary["_result"]
    atomic_write_text(out / "metrics.csv", metrics_csv(result))
    atomic_write_text(out / "dataset.txt", summary["_dataset"].to_text())
    fig = dynamics_figure(result)
    atomic_savefig(fig, out / "dynamics.png", dpi=110)
    import matplotlib.pyplot as plt

    plt.close(fig)
    atomic_write_json(out / "summary.json", {k: v for k, v in summary.items() if not k.startswith("_")})
