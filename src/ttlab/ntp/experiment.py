"""One paper-A experiment from dataset to files: metrics.csv, summary.json, dynamics.png."""

from __future__ import annotations

import csv
import io
import math
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.ntp.dataset import NTPDataset
from ttlab.ntp.diagnostics import summarize
from ttlab.ntp.generalize import evaluate_generalization, unseen_sentences
from ttlab.ntp.maxmargin import MaxMarginSolution
from ttlab.ntp.model import NTPTransformer
from ttlab.ntp.structure import DatasetStructure, analyze
from ttlab.ntp.structured import MATERIALIZE_LIMIT
from ttlab.ntp.train import METRIC_COLUMNS, ProgressFn, TrainConfig, TrainResult, logit_spread_bound, train
from ttlab.provenance import atomic_savefig, atomic_write_json, atomic_write_text, versions


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
) -> dict:
    """Train on ``dataset``, fit the rates and (when ``out_dir`` is given) write the three outputs.

    Returns the summary dictionary that is written to ``summary.json``.
    """
    structure = analyze(dataset)
    require_valid(structure)
    model = NTPTransformer(dataset, embeddings=embeddings, dtype=config.dtype, structure=structure,
                           max_logit_spread=logit_spread_bound(config, dataset.vocab_size, embeddings))
    result = train(dataset, config, progress=progress, model=model)
    summary = {
        "config": {**asdict(result.config), "embeddings": embedding_kind, "dim": model.dim},
        "dataset": dataset_info(dataset),
        "versions": versions(),
        "wov_star_norm": result.wov_star.norm,
        "wkq_star_norm": result.wkq_star.norm,
        "wov_star": solution_info(result.wov_star),
        "wkq_star": solution_info(result.wkq_star),
        "stages": summarize(result),
        "wall_time_s": result.wall_time_s,
    }
    if generalization_samples:
        if result.W_ov is None:
            raise TTLabInputError(
                f"--generalization-samples needs the dense matrices, which a structured run keeps only for "
                f"|V| ≤ {MATERIALIZE_LIMIT} (this dataset has |V| = {dataset.vocab_size}); drop the option"
            )
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
