"""`ttlab ntp …` — next-token-prediction dynamics (paper A): check, generate, run, generalize, example.

Each command parses its options, calls one library function and prints (the only module of paper A that
prints). Options are ``Annotated`` types, one alias per option several commands share, with the library's
defaults (:mod:`ttlab.ntp.config`, :mod:`ttlab.ntp.limits`: no numpy or torch, so `ttlab --help` stays fast).

Imports: typer, rich, ttlab.cli._common, ttlab.errors, ttlab.ntp.config and ttlab.ntp.limits; inside the
commands ttlab.ntp (diagnostics, examples, experiment, fastcheck, generalize, generate, maxmargin, walkthrough)
and ttlab.outputs.
"""

from __future__ import annotations

import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Iterator, Optional

import typer
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ttlab.cli._common import console, console_err, exit_on_interrupt, print_json
from ttlab.errors import TTLabInputError
from ttlab.ntp.config import GENERATORS, STEP_SIZES, UNSEEN_SAMPLES, DatasetSource, RandomSpec, TrainConfig
from ttlab.ntp.limits import DEFAULT_MAX_HOURS, DEFAULT_MEMORY_LIMIT_GIB, FAST_CHECK_CHARS

app = typer.Typer(
    help="Next-token prediction with a one-layer transformer (paper A): datasets, Algorithm 1, "
    "max-margin limits, generalization.",
    no_args_is_help=True,
)

DataOpt = Annotated[Optional[Path], typer.Option(
    "--data", help="Dataset file (sequence lines 'S V O P' or explicit lines 'S V => O'). "
    "Without it a random realizable dataset is generated.")]
VocabOpt = Annotated[int, typer.Option("--vocab", help="Random dataset: vocabulary size |V|.")]
SentencesOpt = Annotated[int, typer.Option("--sentences", help="Random dataset: number of multi-token sentences.")]
MinLenOpt = Annotated[int, typer.Option("--min-len", help="Random dataset: shortest sentence length.")]
MaxLenOpt = Annotated[int, typer.Option("--max-len", help="Random dataset: longest sentence length.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the random dataset, random init and sampling.")]
MemoryOpt = Annotated[float, typer.Option("--memory-limit", help="GiB the dataset and training may use (estimated "
                                          "before the work; above it the command refuses and names the line responsible).")]
#: violations listed by `ntp check` in text mode (all of them with --json)
SHOW_VIOLATIONS = 40


def _print_err(msg: str) -> None:
    """One line on stderr (a run's time estimate or warning)."""
    console_err.print(msg, highlight=False)


@contextmanager
def _progress(enabled: bool) -> Iterator:
    if not enabled:
        yield None
        return
    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(), console=console_err, transient=True,
    ) as prog:
        tasks: dict[str, int] = {}

        last = [0.0]

        def update(stage: str, t: int, total: int) -> None:  # stages: "stage 1", "stage 2", "W*_kq" (columns)
            if stage not in tasks:
                tasks[stage] = prog.add_task(stage, total=total)
            now = time.monotonic()
            if now - last[0] >= 0.1 or t == total:  # at most ~10 redraws a second
                last[0] = now
                prog.update(tasks[stage], completed=t)

        yield update


def _collocation_text(pairs: list[tuple[str, str]]) -> str:
    shown = ", ".join(f"{k}→{v}" for k, v in pairs[:SHOW_VIOLATIONS])
    more = len(pairs) - SHOW_VIOLATIONS
    return "collocation: " + shown + (f" … and {more:,} more (--json lists them)" if more > 0 else "")


@app.command()
def check(
    file: Annotated[Path, typer.Argument(help="Dataset file to check.")],
    json_out: Annotated[bool, typer.Option(
        "--json", help="Print one JSON object on stdout. For files over 2 MB that pass, and whenever the orders × "
        "|V| exceed 1,000,000, each order lists its optimal, non-optimal and confused tokens and counts the "
        "non-comparable ones (n_non_comparable) instead of listing ~|V| of them.")] = False,
    memory_limit: MemoryOpt = DEFAULT_MEMORY_LIMIT_GIB,
) -> None:
    """Check Assumptions 1 and 3 of the paper; exit 0 when they hold, 1 with the violations listed.

    Also states what training on the file would cost and notes stages with nothing to learn. Files over
    2 MB are first checked by array operations (seconds at |V| = 50,257 and 200,000 sentences); when
    that finds a violation, the sentence-by-sentence checker lists every violation with its lines.
    """
    from ttlab.ntp.fastcheck import QuickCheck, check_dataset_file

    found = check_dataset_file(file, memory_limit, fast_check_chars=FAST_CHECK_CHARS)
    if isinstance(found, QuickCheck):
        _print_quick_check(file, found, json_out)
        raise typer.Exit(0)
    _print_full_check(file, found, json_out)


def _print_quick_check(file: Path, qc, json_out: bool) -> None:
    """Print a :class:`ttlab.ntp.fastcheck.QuickCheck` of a valid file."""
    if json_out:
        print_json(qc.report())
        return
    cost = qc.training_cost()
    console.print(f"[bold]{file}[/]: {qc.n_sentences:,} distinct sentences, |V| = {qc.vocab_size:,}; "
                  f"training batch {cost.batch()}", highlight=False)
    console.print(_collocation_text(qc.collocation_pairs()), highlight=False)
    console.print(f"{qc.n_orders:,} query-dependent orders (--json lists them)")
    console.print("[green]valid[/]: Assumptions 1 and 3 hold.")
    for stage, why in qc.degenerate().items():
        console.print(f"[yellow]note[/]: {stage.replace('stage', 'stage ')} has nothing to learn: {escape(why)}",
                      highlight=False)


def _print_full_check(file: Path, full, json_out: bool) -> None:
    """Print a :class:`ttlab.ntp.fastcheck.FullCheck` and exit 0 when the file is valid, 1 otherwise."""
    structure, report, cost = full
    ds = structure.dataset
    if json_out:
        print_json(report)
    else:
        console.print(f"[bold]{file}[/]: {len(ds.sentences):,} distinct sentences, |V| = {ds.vocab_size:,}; "
                      f"training batch {cost.batch()}", highlight=False)
        console.print(_collocation_text(list(structure.collocation.items())), highlight=False)
        table = Table("query", "optimal", "non-optimal", "non-comparable", "confused", title="query-dependent orders")
        for q, cats in report["orders"].items():
            table.add_row(q, " ".join(cats["optimal"]), " ".join(cats["non_optimal"]),
                          " ".join(cats["non_comparable"]) if "non_comparable" in cats
                          else f"({cats['n_non_comparable']:,} tokens)", " ".join(cats["confused"]))
        if len(report["orders"]) <= SHOW_VIOLATIONS:
            console.print(table)
        else:
            console.print(f"{len(report['orders']):,} query-dependent orders (--json lists them)")
        if structure.valid:
            console.print("[green]valid[/]: Assumptions 1 and 3 hold.")
        else:
            console.print(f"[red]invalid[/]: {len(structure.violations):,} violation(s)")
            for v in structure.violations[:SHOW_VIOLATIONS]:
                console.print(f"  [red]{v.kind}[/] {escape(v.message)}", highlight=False)
            more = len(structure.violations) - SHOW_VIOLATIONS
            if more > 0:
                kinds = Counter(v.kind for v in structure.violations)
                console.print(f"  … and {more:,} more ({', '.join(f'{n:,} {k}' for k, n in kinds.items())} in "
                              "all); --json lists every one", highlight=False)
        for stage, why in report["degenerate"].items():
            console.print(f"[yellow]note[/]: {stage.replace('stage', 'stage ')} has nothing to learn: {escape(why)}",
                          highlight=False)
    raise typer.Exit(0 if structure.valid else 1)


@app.command()
def generate(
    out: Annotated[Path, typer.Option("--out", help="File to write (explicit lines 'A B => C').")],
    vocab: VocabOpt = RandomSpec.vocab_size,
    sentences: SentencesOpt = RandomSpec.n_sentences,
    min_len: MinLenOpt = RandomSpec.min_len,
    max_len: MaxLenOpt = RandomSpec.max_len,
    seed: SeedOpt = RandomSpec.seed,
    generator: Annotated[str, typer.Option(
        "--generator",
        help="dense: draws every query's roles into a |V|×|V| table first (|V|² bytes: 2.5 GB at |V| = 50,257); "
        "large: builds the sentences query by query in O(|V| + tokens) memory; auto: dense while that table "
        "stays under 64 MiB (|V| ≤ 8,192), else large. Same construction, different random streams: a seed "
        "gives different files with dense and large.")] = GENERATORS[0],
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing --out file (refused without it).")] = False,
    memory_limit: Annotated[float, typer.Option("--memory-limit", help="GiB the generation may use (estimated from "
                                                "the options first; above it the command refuses).")] = DEFAULT_MEMORY_LIMIT_GIB,
) -> None:
    """Write a seeded random realizable dataset (always passes `ttlab ntp check`)."""
    from ttlab.ntp.generate import write_dataset
    from ttlab.outputs import check_out_file

    check_out_file(out, overwrite=overwrite)
    write_dataset(out, RandomSpec(vocab, sentences, min_len, max_len, seed), generator, memory_limit)
    console.print(f"wrote {out}")


@app.command()
def run(
    out: Annotated[Path, typer.Option("--out", help="Output directory (metrics.csv, summary.json, dynamics.png).")],
    data: DataOpt = DatasetSource.data,
    vocab: VocabOpt = RandomSpec.vocab_size,
    sentences: SentencesOpt = RandomSpec.n_sentences,
    min_len: MinLenOpt = RandomSpec.min_len,
    max_len: MaxLenOpt = RandomSpec.max_len,
    seed: SeedOpt = RandomSpec.seed,
    stage1_steps: Annotated[int, typer.Option("--stage1-steps", help="Stage-1 steps T (W_ov).")] = TrainConfig.stage1_steps,
    stage2_steps: Annotated[int, typer.Option("--stage2-steps", help="Stage-2 steps (W_kq).")] = TrainConfig.stage2_steps,
    eta0: Annotated[Optional[float], typer.Option("--eta0", help="Stage-1 step size (default 0.2/√d).")] = TrainConfig.eta0,
    eta: Annotated[Optional[float], typer.Option("--eta", help="Stage-2 step size (default 0.05/√d).")] = TrainConfig.eta,
    step_sizes: Annotated[str, typer.Option(
        "--step-sizes", help="paper: unset step sizes are 0.2/√d and 0.05/√d (a warning before training when they "
        "cannot reach ‖W*‖, as at large |V|); figure2: unset ones keep Figure 2's ratios T·η/‖W*‖ (9.23, 2.06) at "
        "any |V| (structured path, --optimizer ngd).")] = STEP_SIZES[0],
    init: Annotated[str, typer.Option("--init", help="zero (the paper) or random (Gaussian, std --init-scale).")] = TrainConfig.init,
    init_scale: Annotated[float, typer.Option("--init-scale", help="Std of the random init.")] = TrainConfig.init_scale,
    schedule: Annotated[str, typer.Option("--schedule", help="two-stage (Algorithm 1) or joint (both layers at once).")] = TrainConfig.schedule,
    optimizer: Annotated[str, typer.Option("--optimizer", help="ngd (normalized GD, the paper), gd or adam.")] = TrainConfig.optimizer,
    embeddings: Annotated[str, typer.Option("--embeddings", help="onehot (orthonormal), orthogonal, gaussian or equicorrelated.")] = "onehot",
    dim: Annotated[Optional[int], typer.Option("--dim", help="Embedding dimension d (default |V|).")] = None,
    dtype: Annotated[str, typer.Option("--dtype", help="auto (float64; float32 only for large problems whose logits stay within float32's exp range), float64 or float32.")] = TrainConfig.dtype,
    impl: Annotated[str, typer.Option("--impl", help="auto (structured where it applies: one-hot, zero init, two-stage NGD/GD), structured (exact, O(tokens + |V|) memory) or dense.")] = TrainConfig.impl,
    generalization_samples: Annotated[int, typer.Option("--generalization-samples", help="Also score this many unseen sentences (Theorem 3).")] = 0,
    json_out: Annotated[bool, typer.Option("--json", help="Print summary.json on stdout.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace the run already in --out (refused without it).")] = False,
    memory_limit: MemoryOpt = DEFAULT_MEMORY_LIMIT_GIB,
    max_hours: Annotated[float, typer.Option("--max-hours", help="Refuse runs whose time, extrapolated from timed "
                                             "steps, exceeds this many hours.")] = DEFAULT_MAX_HOURS,
) -> None:
    """Train with Algorithm 1 (or an ablation), compare with the max-margin solutions, draw Figure 2.

    Defaults are the paper's Section 7 setting: random realizable data, |V| = 20, d = |V|,
    900 steps per stage, η0 = 0.2/√d, η = 0.05/√d. Without sentences that order two tokens under a
    query (W*_kq undefined) only stage 1 can run: pass --stage2-steps 0. Ctrl-C stops training, writes
    the steps done so far and exits with 130.
    """
    started = time.perf_counter()
    from ttlab.ntp.experiment import run_experiment
    from ttlab.outputs import check_out_dir

    check_out_dir(out, run_markers=("summary.json", "metrics.csv"), overwrite=overwrite,
                  files=("dataset.txt", "dynamics.png"))
    train = dict(stage1_steps=stage1_steps, stage2_steps=stage2_steps, eta0=eta0, eta=eta, init=init,
                 init_scale=init_scale, schedule=schedule, optimizer=optimizer, dtype=dtype, impl=impl)
    with exit_on_interrupt("outside the training steps: no complete run was written; re-run with --overwrite"), \
            _progress(not (quiet or json_out)) as progress:  # during training the steps so far are kept (below)
        summary = run_experiment(DatasetSource(data, vocab, sentences, min_len, max_len, seed), out, train, embeddings,
                                 dim, progress=progress, generalization_samples=generalization_samples,
                                 memory_limit_gib=memory_limit, max_hours=max_hours, announce=_print_err,
                                 step_sizes=step_sizes, started=started)
    public = {k: v for k, v in summary.items() if not k.startswith("_")}
    if json_out:
        print_json(public)
    else:
        _print_run(public, out, time.perf_counter() - started)
    if "interrupted" in public:
        console_err.print(f"interrupted — at {public['interrupted']}: wrote the {len(summary['_result'].metrics['step']):,} "
                          f"steps recorded so far to {out}/metrics.csv and {out}/summary.json (no resume: re-run "
                          "with --overwrite to train again)", highlight=False)
        raise typer.Exit(130)


def _print_run(summary: dict, out: Path, took_s: float) -> None:
    """Print the summary of `ntp run`: the stages' table, the batch, the times, ‖W*‖ and what was written."""
    from ttlab.ntp.diagnostics import format_loss
    from ttlab.ntp.maxmargin import certificate_text

    table = Table("stage", "steps", "final loss", "final cosine", "final norm", "1−cos fit C (log t/t)",
                  "loss rate", "norm bounds hold", title="training dynamics")
    table.columns[2].min_width = 10  # tiny losses print in full scientific notation (e.g. 8.138e-23)
    if "stage_2_skipped" in summary:
        console.print(f"stage 2 skipped: {summary['stage_2_skipped']}", highlight=False)
    for name, s in summary["stages"].items():
        fit = s["direction_fit"].get("log_t_over_t", {})
        table.add_row(name, str(s["steps"]), format_loss(s["final_loss"], s.get("final_log_loss")), f"{s['final_cosine']:.6f}",
                      f"{s['final_norm']:.4f}", f"{fit.get('C', float('nan')):.3g}",
                      f"{s['loss_fit']['rate']:.3g}", f"{100 * s['norm_bounds']['fraction']:.0f}%")
    console.print(table)
    c = summary["cost"]
    console.print(f"training batch {c['n_sentences']:,} sentences × {c['width']:,} distinct tokens = {c['slots']:,} "
                  f"slots (estimated {c['estimated_bytes'] / 2**30:.2f} GiB)", highlight=False)
    tm = summary["time"]
    console.print(f"time: training {summary['wall_time_s']:.1f} s (estimated {tm['estimated_training_s']:.1f} s); "
                  f"the whole command {took_s:.1f} s (estimated {tm['estimated_total_s']:.1f} s)", highlight=False)
    kq = "—" if summary["wkq_star_norm"] is None else f"{summary['wkq_star_norm']:.4f}"
    console.print(f"‖W*_ov‖ = {summary['wov_star_norm']:.4f}, ‖W*_kq‖ = {kq}")
    if summary.get("wkq_star"):
        console.print(certificate_text("W*_kq", summary["wkq_star"]), highlight=False)
    if "generalization" in summary:
        g = summary["generalization"]
        console.print(f"generalization: agreement {g['agreement']} on {g['n_with_prediction']} unseen sentences")
    console.print(f"wrote {out}/metrics.csv, {out}/summary.json, {out}/dynamics.png")


@app.command()
def generalize(
    out: Annotated[Path, typer.Option("--out", help="Output directory (generalization.json).")],
    data: DataOpt = DatasetSource.data,
    vocab: VocabOpt = RandomSpec.vocab_size,
    sentences: SentencesOpt = RandomSpec.n_sentences,
    min_len: MinLenOpt = RandomSpec.min_len,
    max_len: MaxLenOpt = RandomSpec.max_len,
    seed: SeedOpt = RandomSpec.seed,
    stage1_steps: Annotated[int, typer.Option("--stage1-steps")] = TrainConfig.stage1_steps,
    stage2_steps: Annotated[int, typer.Option("--stage2-steps")] = TrainConfig.stage2_steps,
    samples: Annotated[int, typer.Option("--samples", help="Unseen sentences to sample when there are too many to enumerate.")] = UNSEEN_SAMPLES,
    json_out: Annotated[bool, typer.Option("--json", help="Print the result on stdout.")] = False,
    memory_limit: MemoryOpt = DEFAULT_MEMORY_LIMIT_GIB,
) -> None:
    """Train with Algorithm 1, then compare the model with Theorem 3 on unseen sentences."""
    from ttlab.ntp.generalize import generalization_run
    from ttlab.ntp.maxmargin import certificate_text
    from ttlab.outputs import check_out_dir

    check_out_dir(out)
    with exit_on_interrupt("nothing was written; re-run the same command to start again"), \
            _progress(not json_out) as progress:
        report = generalization_run(DatasetSource(data, vocab, sentences, min_len, max_len, seed), stage1_steps,
                                    stage2_steps, samples, out, memory_limit, progress)
    if json_out:
        print_json(report)
        return
    table = Table("case", "sentences", "agreement with theory", title="Theorem 3 on unseen sentences")
    for case, v in report["by_case"].items():
        table.add_row(case, str(v["n"]), "—" if v["agreement"] is None else f"{100 * v['agreement']:.1f}%")
    console.print(table)
    console.print(certificate_text("W*_kq", report["wkq_star"]), highlight=False)
    console.print(f"overall agreement: {report['agreement']}; wrote {out}/generalization.json")


@app.command()
def example(name: Annotated[str, typer.Argument(help="Which example: svop (the paper's Examples 1–2).")] = "svop") -> None:
    """Walk through the paper's Examples 1–2 (SVOP) end to end, human-readable."""
    if name != "svop":
        raise TTLabInputError(f"unknown example {name!r}; available: svop")
    from ttlab.ntp.examples import SVOP_SEQUENCES
    from ttlab.ntp.walkthrough import svop_walkthrough

    w = svop_walkthrough()
    console.print(f"[bold]Example 1[/]: training sequences {', '.join(s.replace(' ', '') for s in SVOP_SEQUENCES)}")
    console.print("sentences: " + ", ".join(w["sentences"]))
    console.print("collocation: " + ", ".join(f"n({k}) = {v}" for k, v in w["collocation"].items()))
    for q, rel in w["orders"].items():
        console.print(f"  order under query {q}: {rel}")
    console.print(f"W*_kq column values (Proposition 2): {w['wkq_star_columns']}")
    from ttlab.ntp.diagnostics import format_loss

    console.print(f"trained: stage-1 cosine {w['cosine_ov']:.6f} (loss L0 {format_loss(w['loss_ov'], w['log_loss_ov'])}), "
                  f"stage-2 cosine {w['cosine_kq']:.6f} (loss L {format_loss(w['loss_kq'], w['log_loss_kq'])})")
    console.print("[bold]Example 2[/]: unseen sentences")
    for sent, d in w["unseen"].items():
        mark = "[green]✓[/]" if d["model"] == d["expected"] else "[red]✗[/]"
        console.print(f"  {sent} → model {d['model']} (p = {d['prob']:.3f}), paper {d['expected']} {mark}")
    if not all(d["model"] == d["expected"] for d in w["unseen"].values()):
        console_err.print("[red]the trained model disagrees with Example 2[/]")
        raise typer.Exit(1)
