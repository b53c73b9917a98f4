"""What the ``ttlab lm`` commands print, built from what the library returns: the built corpus, the prepared data, a
training run's evaluations and its interruption, and the failures of the sweeps and the suite. Plain
summaries are lists of strings (printed as they are: ``catalogue_lines``, ``summary_lines``, ``sweep_summary``,
``suite_summary`` live with the results they sum up); the lines with markup are views, lists of rich renderables
(:class:`rich.text.Text`) that never print and hold no console.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import RenderableType

from ttlab.markup import markup

if TYPE_CHECKING:
    from ttlab.lm.data import PreparedData
    from ttlab.lm.trainer import TrainResult

__all__ = ["build_view", "eval_line", "failures_view", "interrupted_view", "prepare_view"]


def build_view(name: str, meta: dict[str, Any], out: str | Path) -> list[RenderableType]:
    """A corpus built by :func:`ttlab.lm.build.build_corpus` (``meta``, written in ``out``): documents, characters,
    file, size and licence."""
    return [markup("[bold]{}[/]: {:,} documents, {:,} characters → {} ({:,} bytes); licence: {}", name, meta["n_docs"],
                   meta["n_chars"], Path(out) / meta["file"], meta["bytes_file"], meta["licence"])]


def prepare_view(prepared: PreparedData) -> list[RenderableType]:
    """Data prepared by :func:`ttlab.lm.data.prepare_data`: the vocabulary, the tokens per split and the cache folder."""
    d = prepared.describe()
    return [markup("[bold]{}[/]: vocab {}; tokens train {:,}, val {:,}, test {:,}\n  cached in {}", prepared.corpus.name,
                   prepared.tokenizer.vocab_size, d["tokens"]["train"], d["tokens"]["val"], d["tokens"]["test"],
                   d["dataset_dir"])]


def eval_line(row: dict[str, Any]) -> str:
    """One plain-text line per evaluation of a training run (the ``on_eval`` row of :func:`ttlab.lm.trainer.train`):
    its phase (two-pass runs), iteration, tokens seen, losses, learning rate and time."""
    phase = f"[{row['phase']}] " if "phase" in row else ""
    train = row["train_loss"]  # NaN before the first step: no training loss yet, not a diverged one
    train_text = "   —  " if train != train and row["iter"] == 0 else f"{train:.4f}"
    return (f"{phase}iter {row['iter']:6d}  tokens {row['tokens_seen']:>11,d}  "
            f"train {train_text}  val {row['val_loss']:.4f}  (best {row['best_val_loss']:.4f} @ "
            f"{row['best_iter']})  lr {row['lr']:.2e}  {row['elapsed_s']:.0f}s")


def interrupted_view(result: TrainResult) -> list[RenderableType]:
    """An interrupted training run (``result.status != "finished"``): where it stopped and how to resume it."""
    return [markup("[yellow]interrupted[/] — at iteration {}; checkpoint saved in {}. Re-run the same command with "
                   "--resume to continue.", result.iters, result.out_dir)]


def failures_view(res: dict[str, Any]) -> list[RenderableType]:
    """The failed runs of a data or model sweep (``res["runs"]``) or the failed models of a suite (``res["models"]``)
    and what a re-run does; empty when nothing failed. (The sweeps' causes: ``error`` of each failed run.)"""
    if not res["n_failed"]:
        return []
    suite = res.get("kind") == "model_suite"
    failed = ", ".join(r["name"] for r in res["models" if suite else "runs"] if r["status"] != "ok")
    if suite:
        return [markup("[red]{} model(s) failed:[/] {}; the others are kept (re-run the command to retry the failed "
                       "ones).", res["n_failed"], failed)]
    return [markup("[red]{} run(s) failed:[/] {}; re-run the command to retry them.", res["n_failed"], failed)]

