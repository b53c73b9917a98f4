"""One paper-A experiment from dataset to files: metrics.csv, summary.json, dynamics.png.

The checks before training, the memory and time estimates (:mod:`ttlab.ntp.cost`, with the time estimate
:func:`~ttlab.ntp.cost.estimate_seconds`), the step sizes, training on the structured or the dense
path, the rate fits and the files (:func:`run_dynamics`; `ttlab ntp run` is :func:`run_experiment`); and
Figure 2's two extra runs of `ttlab reproduce`: stage 2 continued (:func:`long_stage2`) and stage 1 from a
random start (:func:`random_start_stage1`).
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
from ttlab.ntp.config import (
    FIGURE2_NORM_RATIOS,
    MAX_UNSEEN_SAMPLES,
    METRIC_COLUMNS,
    STEP_SIZES,
    DatasetSource,
    ProgressFn,
    TrainConfig,
    TrainResult,
)
from ttlab.ntp.cost import (
    WRITE_SECONDS,
    TrainingCost,
    duration_text,
    estimate_seconds,
    require_hours,
    require_steps,
    require_trainable,
    training_cost,
)
from ttlab.ntp.dataset import NTPDataset, dataset_info
from ttlab.ntp.diagnostics import (
    TINY_GAP,
    fit_exp_vs_power,
    local_loglog_slopes,
    resolvable_until,
    summarize,
    theory_attention_rate,
)
from ttlab.ntp.generalize import evaluate_generalization, unseen_sentences
from ttlab.ntp.generate import load_dataset
from ttlab.ntp.limits import DEFAULT_MAX_HOURS, DEFAULT_MEMORY_LIMIT_GIB, MATERIALIZE_LIMIT
from ttlab.ntp.maxmargin import solution_info
from ttlab.ntp.model import NTPTransformer, make_embeddings
from ttlab.ntp.structure import DatasetStructure, analyze, require_learnable, require_valid
from ttlab.ntp.structured import StructuredProblem, train_structured
from ttlab.ntp.train import logit_spread_bound, train, use_structured
from ttlab.provenance import atomic_savefig, atomic_write_json, atomic_write_text, versions
from ttlab.validation import check_hours, check_int

#: runs estimated to take longer than this announce their estimate before starting
ANNOUNCE_SECONDS = 10.0




def check_step_sizes(problem: StructuredProblem, config: TrainConfig, step_sizes: str = STEP_SIZES[0],
                     progress: ProgressFn | None = None) -> tuple[TrainConfig, str | None]:
    """The config to train with and a warning when a stage cannot reach its max-margin margins.

    Solves W*_ov and W*_kq (kept on ``problem`` for training). ``"figure2"`` fills unset step sizes by
    :meth:`TrainConfig.figure2_scaled`; with the given ones (``"paper"``), a stage whose ratio
    T·η/‖W*‖ is below 1 cannot leave the neighbourhood of the origin (stage 1's loss stays near log|V|),
    and the warning names the ratios and the step sizes that keep Figure 2's. Both apply to NGD only
    (the bound ‖W(T)‖ ≤ T·η); other optimizers train as given, and "figure2" is refused for them.
    """
    if step_sizes not in STEP_SIZES:
        raise TTLabInputError(f"step_sizes must be one of {', '.join(STEP_SIZES)} (got {step_sizes!r})",
                              params=("step_sizes",))
    if config.optimizer != "ngd":  # ‖W(T)‖ ≤ T·η holds for normalized steps from zero only
        if step_sizes == "figure2":
            raise TTLabInputError(f"step_sizes=figure2 is a rule for normalized GD (optimizer=ngd), not "
                                  f"{config.optimizer}; pass eta0 and eta", params=("step_sizes", "eta0", "eta"))
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
    step_sizes: str = STEP_SIZES[0],
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
    check_hours(max_hours)
    structure = analyze(dataset)
    require_valid(structure)
    require_learnable(structure, config)
    steps = config.stage1_steps + config.stage2_steps + 2
    dim = None if embeddings is None else int(np.asarray(embeddings).shape[0])
    cost = training_cost(dataset, dim, steps)
    require_trainable(cost, dataset.source, memory_limit_gib)
    model, problem = _model_for(dataset, config, structure, embeddings, generalization_samples)
    seconds = estimate_seconds(model, config)
    require_hours(seconds, max_hours, dataset.source, config, cost)
    warning = None
    if problem is not None:
        config, warning = check_step_sizes(problem, config, step_sizes, progress)
        if warning and announce is not None:
            announce(f"warning: {warning}")
    elif step_sizes != "paper":
        raise TTLabInputError(f"step_sizes={step_sizes} sizes the steps from the one-hot max-margin solutions "
                              "of the structured path, which this configuration does not use; pass eta0 and eta",
                              params=("step_sizes", "eta0", "eta"))
    before = time.perf_counter() - (t_start if started is None else started)
    total = before + seconds + WRITE_SECONDS
    if announce is not None and total > ANNOUNCE_SECONDS:
        announce(f"estimated time ~{duration_text(total)} in all: {before:.1f} s so far (reading, checking"
                 f"{', W*' if problem is not None else ''}), ~{duration_text(seconds)} of training ({cost.describe()}), "
                 f"~{WRITE_SECONDS:g} s writing; Ctrl-C stops training and keeps the steps done so far")
    if problem is not None:
        result = train_structured(dataset, config, progress, problem=problem, keep_interrupted=keep_interrupted)
    else:
        result = train(dataset, config, progress=progress, model=model, keep_interrupted=keep_interrupted)
    dim = dataset.vocab_size if embeddings is None else int(np.asarray(embeddings).shape[0])
    summary = _summary(result, structure, cost, {"embeddings": embedding_kind, "dim": dim},
                       {"before_training_s": before, "estimated_training_s": seconds, "estimated_total_s": total})
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


def run_experiment(
    source: DatasetSource,
    out_dir: str | Path | None,
    config: TrainConfig,
    embedding_kind: str = "onehot",
    dim: int | None = None,
    *,
    progress: ProgressFn | None = None,
    generalization_samples: int = 0,
    memory_limit_gib: float = DEFAULT_MEMORY_LIMIT_GIB,
    max_hours: float = DEFAULT_MAX_HOURS,
    announce: Callable[[str], None] | None = None,
    step_sizes: str = STEP_SIZES[0],
    started: float | None = None,
) -> dict:
    """`ttlab ntp run`: load ``source`` (a file or a random dataset), make the ``embedding_kind`` embeddings
    (seed ``source.seed + 1``) and :func:`run_dynamics` with ``config`` and the other options, keeping the steps of an
    interrupted run. The step counts are checked before the dataset is read."""
    require_steps(config.stage1_steps, config.stage2_steps)
    check_int(generalization_samples, "generalization_samples", 0, MAX_UNSEEN_SAMPLES)
    dataset = load_dataset(source, memory_limit_gib)
    embeddings = make_embeddings(embedding_kind, dataset.vocab_size, dim, seed=source.seed + 1)
    return run_dynamics(dataset, config, out_dir, embeddings=embeddings, embedding_kind=embedding_kind,
                        progress=progress, generalization_samples=generalization_samples,
                        memory_limit_gib=memory_limit_gib, max_hours=max_hours, announce=announce,
                        keep_interrupted=True, step_sizes=step_sizes, started=started)


def _model_for(dataset: NTPDataset, config: TrainConfig, structure: DatasetStructure, embeddings: np.ndarray | None,
               generalization_samples: int) -> tuple[NTPTransformer | StructuredProblem, StructuredProblem | None]:
    """The model a run trains and times: the :class:`StructuredProblem` of a structured run (twice: as the
    model and the problem), else the dense model and None."""
    if use_structured(config, embeddings):  # no dense model: its time estimate alone would form |V|² zeros
        if generalization_samples and dataset.vocab_size > MATERIALIZE_LIMIT:
            raise TTLabInputError(
                f"generalization_samples needs the dense matrices, which a structured run keeps only for "
                f"|V| ≤ {MATERIALIZE_LIMIT} (this dataset has |V| = {dataset.vocab_size}); set it to 0",
                params=("generalization_samples",)
            )
        problem = StructuredProblem(dataset, structure)
        return problem, problem
    return NTPTransformer(dataset, embeddings=embeddings, dtype=config.dtype, structure=structure,
                          max_logit_spread=logit_spread_bound(config, dataset.vocab_size, embeddings)), None


def _summary(result: TrainResult, structure: DatasetStructure, cost: TrainingCost, embedding: dict, times: dict) -> dict:
    """summary.json of a run: its config (with the ``embedding`` kind and dim), dataset, W*, fitted stages, the
    ``times`` estimated before it and the memory ``cost``."""
    summary = {
        "config": {**asdict(result.config), **embedding},
        "dataset": dataset_info(structure.dataset),
        "versions": versions(),
        "wov_star_norm": result.wov_star.norm,
        "wkq_star_norm": result.wkq_star.norm,
        "wov_star": solution_info(result.wov_star),
        "wkq_star": solution_info(result.wkq_star),
        "stages": summarize(result),
        "wall_time_s": result.wall_time_s,
        "estimated_time_s": times["estimated_training_s"],
        "time": times,
        "cost": cost.as_dict(),
    }
    if "stage2" in structure.degenerate():  # stage 1 only (require_learnable allowed it): no W*_kq
        summary["stage_2_skipped"] = structure.degenerate()["stage2"]
        summary["wkq_star_norm"] = summary["wkq_star"] = None
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


# ---------------------------------------------------------------------------------------------- Figure 2's extra runs
def long_stage2(ds: NTPDataset, steps: int, long_steps: int, seed: int, progress: ProgressFn | None = None) -> dict:
    """Stage 2 continued to ``long_steps``: the attention at the end against the uniform baseline (W_kq(0) = 0
    attends uniformly); local slopes of 1 − cos over the paper's window and over the last decade of the steps
    float64 resolves (:func:`~ttlab.ntp.diagnostics.resolvable_until`), where the loss gap's exponential is
    also fitted against a power law and the attention gap's rate is measured."""
    t0 = time.perf_counter()  # dense: 1.9× faster than the structured path here (43,900 steps: 111 s vs 207 s, load ~11)
    res = train(ds, TrainConfig(stage1_steps=steps, stage2_steps=long_steps, seed=seed, impl="dense"), progress=progress)
    wall = time.perf_counter() - t0
    rows = res.rows("2")
    t, omc, att = rows["step"], 1.0 - rows["cosine"], rows["min_optimal_attention"]
    lim = res.limit_loss
    t_res = resolvable_until(t, 1.0 - att)
    return {
        "wall_time_s": wall,
        "resolvable_until": t_res,
        "resolvable_cosine": float(rows["cosine"][t == t_res][0]),
        "linear": fit_exp_vs_power(t, rows["loss"] - lim, TINY_GAP * abs(lim), t_max=t_res),
        "stage2_steps": int(t[-1]),
        "final_cosine": float(rows["cosine"][-1]),
        "windows": {"paper": local_loglog_slopes(t, omc, steps / 10, steps),
                    "last_decade": local_loglog_slopes(t, omc, t_res / 10, t_res)},
        "final_min_optimal_attention": float(att[-1]),
        "baseline_attention": float(att[0]),
        "attention_gap_rate": fit_exp_vs_power(t, 1.0 - att, TINY_GAP, t_max=t_res).get("rate"),
        "c1": theory_attention_rate(res.config.eta, res.wkq_star.norm, res.max_len),
    }


#: std of the Gaussian W_ov(0) of the random-start run (‖W_ov(0)‖ ≈ 0.01·|V| = 0.2 at |V| = 20, about
#: four stage-1 steps of η0 = 0.2/√20)
RANDOM_START_SCALE = 0.01


def random_start_stage1(ds: NTPDataset, steps: int, seed: int, progress: ProgressFn | None = None) -> dict:
    """Stage 1 alone from a small random W_ov(0) (seeded): the local log-log slope of 1 − cos(W_ov, W*_ov)
    over the last decade against log t/t's on the same steps (Proposition 1's rate, which a zero start
    meets exactly)."""
    cfg = TrainConfig(stage1_steps=steps, stage2_steps=0, init="random", init_scale=RANDOM_START_SCALE, seed=seed,
                      impl="dense")
    res = train(ds, cfg, progress=progress)
    rows = res.rows("1")
    t, cos = rows["step"], rows["cosine"]
    return {"steps": int(t[-1]), "init_scale": RANDOM_START_SCALE, "initial_cosine": float(cos[0]),
            "final_cosine": float(cos[-1]), "last_decade": local_loglog_slopes(t, 1.0 - cos, steps / 10, steps)}
