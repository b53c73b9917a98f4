"""`ttlab ntp …` — next-token-prediction dynamics (paper A): check, generate, run, generalize, example.

Each command parses its options, calls one library function and prints what it returns (:mod:`ttlab.ntp.views`
builds the tables and lines). The options set the fields of :mod:`ttlab.ntp.config`'s dataclasses, whose defaults
and help texts they show (:func:`ttlab.cli.common.Setting`; with :mod:`ttlab.ntp.limits`: no numpy or torch, so
`ttlab --help` stays fast), and are named like the library's parameters (errors name those).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Annotated, Iterator, Optional

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from ttlab.cli.common import Setting, console, console_err, exit_on_interrupt, held, print_json, print_view
from ttlab.errors import TTLabInputError
from ttlab.markup import plain
from ttlab.ntp.config import GENERATORS, STEP_SIZES, UNSEEN_SAMPLES, DatasetSource, RandomSpec, TrainConfig
from ttlab.ntp.limits import DEFAULT_MAX_HOURS, DEFAULT_MEMORY_LIMIT_GIB, FAST_CHECK_CHARS
from ttlab.ntp.views import check_view, generalization_view, run_view, svop_view

app = typer.Typer(
    help="Next-token prediction with a one-layer transformer (paper A): datasets, Algorithm 1, "
    "max-margin limits, generalization.",
    no_args_is_help=True,
)

R, T = RandomSpec, TrainConfig  # the options set their fields and show their defaults
Data = Setting(DatasetSource, "data")
Vocab, Sentences = Setting(R, "vocab_size", "--vocab"), Setting(R, "n_sentences", "--sentences")
MinLen, MaxLen, Seed = Setting(R, "min_len"), Setting(R, "max_len"), Setting(R, "seed")
Stage1, Stage2 = Setting(T, "stage1_steps"), Setting(T, "stage2_steps")
Memory = Annotated[float, typer.Option("--memory-limit", help="GiB the dataset and training may use (estimated "
                                       "before the work; above it the command refuses and names the line responsible).")]


def _print_err(msg: str) -> None:
    """One line on stderr (a run's time estimate or warning)."""
    console_err.print(plain(msg), highlight=False)


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


@app.command()
def check(
    file: Annotated[Path, typer.Argument(help="Dataset file to check.")],
    json_out: Annotated[bool, typer.Option(
        "--json", help="Print one JSON object on stdout. For files over 2 MB that pass, and whenever the orders × "
        "|V| exceed 1,000,000, each order lists its optimal, non-optimal and confused tokens and counts the "
        "non-comparable ones (n_non_comparable) instead of listing ~|V| of them. At most 1,000 violations are listed, "
        "each with at most 100 lines (n_violations, violations_by_kind and n_lines count them all).")] = False,
    memory_limit_gib: Memory = DEFAULT_MEMORY_LIMIT_GIB,
) -> None:
    """Check Assumptions 1 and 3 of the paper; exit 0 when they hold, 1 with the violations listed.

    Also states what training on the file would cost and notes stages with nothing to learn. Files over
    2 MB are first checked by array operations (seconds at |V| = 50,257 and 200,000 sentences); when
    that finds a violation, the sentence-by-sentence checker lists every violation with its lines.
    """
    from ttlab.ntp.fastcheck import QuickCheck, check_dataset_file

    found = check_dataset_file(file, memory_limit_gib, fast_check_chars=FAST_CHECK_CHARS)
    quick = isinstance(found, QuickCheck)
    if json_out:
        print_json(found.report() if quick else found.report)
    else:
        print_view(check_view(file, found))
    raise typer.Exit(0 if quick or found.structure.valid else 1)


@app.command()
def generate(
    out: Annotated[Path, typer.Option("--out", help="File to write (explicit lines 'A B => C').")],
    vocab_size: Vocab = R.vocab_size, n_sentences: Sentences = R.n_sentences, min_len: MinLen = R.min_len,
    max_len: MaxLen = R.max_len, seed: Seed = R.seed,
    method: Annotated[str, typer.Option(
        "--generator",
        help="dense: draws every query's roles into a |V|×|V| table first (|V|² bytes: 2.5 GB at |V| = 50,257); "
        "large: builds the sentences query by query in O(|V| + tokens) memory; auto: dense while that table "
        "stays under 64 MiB (|V| ≤ 8,192), else large. Same construction, different random streams: a seed "
        "gives different files with dense and large.")] = GENERATORS[0],
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing --out file (refused without it).")] = False,
    memory_limit_gib: Annotated[float, typer.Option("--memory-limit", help="GiB the generation may use (estimated "
                                                    "from the options first; above it the command refuses).")] = DEFAULT_MEMORY_LIMIT_GIB,
) -> None:
    """Write a seeded random realizable dataset (always passes `ttlab ntp check`)."""
    from ttlab.ntp.generate import write_dataset
    from ttlab.outputs import check_out_file

    check_out_file(out, overwrite=overwrite)
    write_dataset(out, RandomSpec(vocab_size, n_sentences, min_len, max_len, seed), method, memory_limit_gib)
    console.print(plain(f"wrote {out}"))


@app.command()
def run(
    out: Annotated[Path, typer.Option("--out", help="Output directory (metrics.csv, summary.json, dynamics.png).")],
    data: Data = None, vocab_size: Vocab = R.vocab_size, n_sentences: Sentences = R.n_sentences,
    min_len: MinLen = R.min_len, max_len: MaxLen = R.max_len, seed: Seed = R.seed,
    stage1_steps: Stage1 = T.stage1_steps, stage2_steps: Stage2 = T.stage2_steps,
    eta0: Setting(T, "eta0", kind=float, optional=True) = T.eta0,
    eta: Setting(T, "eta", kind=float, optional=True) = T.eta,
    step_sizes: Annotated[str, typer.Option(
        "--step-sizes", help="paper: unset step sizes are 0.2/√d and 0.05/√d (a warning before training when they "
        "cannot reach ‖W*‖, as at large |V|); figure2: unset ones keep Figure 2's ratios T·η/‖W*‖ (9.23, 2.06) at "
        "any |V| (structured path, --optimizer ngd).")] = STEP_SIZES[0],
    init: Setting(T, "init") = T.init, init_scale: Setting(T, "init_scale") = T.init_scale,
    schedule: Setting(T, "schedule") = T.schedule, optimizer: Setting(T, "optimizer") = T.optimizer,
    embeddings: Annotated[str, typer.Option("--embeddings", help="onehot (orthonormal), orthogonal, gaussian or equicorrelated.")] = "onehot",
    dim: Annotated[Optional[int], typer.Option("--dim", help="Embedding dimension d (default |V|).")] = None,
    dtype: Setting(T, "dtype") = T.dtype, impl: Setting(T, "impl") = T.impl,
    generalization_samples: Annotated[int, typer.Option("--generalization-samples", help="Also score this many unseen sentences (Theorem 3).")] = 0,
    json_out: Annotated[bool, typer.Option("--json", help="Print summary.json on stdout.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace the run already in --out (refused without it).")] = False,
    memory_limit_gib: Memory = DEFAULT_MEMORY_LIMIT_GIB,
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

    check = partial(check_out_dir, out, run_markers=("summary.json", "metrics.csv"), overwrite=overwrite,
                    files=("dataset.txt", "dynamics.png"))
    check()
    config = TrainConfig(stage1_steps=stage1_steps, stage2_steps=stage2_steps, eta0=eta0, eta=eta, init=init,
                         init_scale=init_scale, schedule=schedule, optimizer=optimizer, dtype=dtype, impl=impl, seed=seed)
    with exit_on_interrupt("outside the training steps: no complete run was written; re-run with --overwrite"), \
            held(out), _progress(not (quiet or json_out)) as progress:  # during training the steps so far are kept
        check()  # again, holding the folder: a run that finished meanwhile is not replaced
        summary = run_experiment(DatasetSource(data, vocab_size, n_sentences, min_len, max_len, seed), out, config,
                                 embeddings, dim, progress=progress, generalization_samples=generalization_samples,
                                 memory_limit_gib=memory_limit_gib, max_hours=max_hours, announce=_print_err,
                                 step_sizes=step_sizes, started=started)
    public = {k: v for k, v in summary.items() if not k.startswith("_")}
    print_json(public) if json_out else print_view(run_view(public, out, time.perf_counter() - started))
    if "interrupted" in public:
        console_err.print(plain(f"interrupted — at {public['interrupted']}: wrote the "
                                f"{len(summary['_result'].metrics['step']):,} steps recorded so far to {out}/metrics.csv "
                                f"and {out}/summary.json (no resume: re-run with --overwrite to train again)"),
                          highlight=False)
        raise typer.Exit(130)


@app.command()
def generalize(
    out: Annotated[Path, typer.Option("--out", help="Output directory (generalization.json, generalization.png).")],
    data: Data = None, vocab_size: Vocab = R.vocab_size, n_sentences: Sentences = R.n_sentences,
    min_len: MinLen = R.min_len, max_len: MaxLen = R.max_len, seed: Seed = R.seed,
    stage1_steps: Stage1 = T.stage1_steps, stage2_steps: Stage2 = T.stage2_steps,
    samples: Annotated[int, typer.Option("--samples", help="Unseen sentences to sample when there are too many to enumerate.")] = UNSEEN_SAMPLES,
    sentences: Annotated[Optional[Path], typer.Option(
        "--sentences-file", help="Your own unseen sentences instead of drawn ones, in the format of the training data: "
        "an explicit line 'S P => V' is the context S P and the next token you expect; a sequence line 'S V O' gives "
        "each of its prefixes (S, S V) with the token after it. Every token must be in the training vocabulary. Each "
        "sentence is listed with the theory's prediction and the model's top token and probability (--samples is "
        "then unused). --sentences N is the size of the random training dataset.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the result on stdout (with every sentence).")] = False,
    memory_limit_gib: Memory = DEFAULT_MEMORY_LIMIT_GIB,
) -> None:
    """Train with Algorithm 1, then compare the model with Theorem 3 on unseen sentences (drawn from the training
    vocabulary, or your own with --sentences-file); writes generalization.json and a figure, generalization.png."""
    from ttlab.ntp.generalize import generalization_run
    from ttlab.outputs import check_out_dir

    check_out_dir(out, files=("generalization.json", "generalization.png"))
    with exit_on_interrupt("nothing was written; re-run the same command to start again"), \
            _progress(not json_out) as progress:
        report = generalization_run(DatasetSource(data, vocab_size, n_sentences, min_len, max_len, seed), stage1_steps,
                                    stage2_steps, samples, out, memory_limit_gib, progress, sentences=sentences)
    print_json(report) if json_out else print_view(generalization_view(report, out))


@app.command()
def example(name: Annotated[str, typer.Argument(help="Which example: svop (the paper's Examples 1–2).")] = "svop") -> None:
    """Walk through the paper's Examples 1–2 (SVOP) end to end, human-readable."""
    if name != "svop":
        raise TTLabInputError(f"unknown example {name!r}; available: svop")
    from ttlab.ntp.walkthrough import svop_walkthrough

    w = svop_walkthrough()
    print_view(svop_view(w))
    if not all(d["model"] == d["expected"] for d in w["unseen"].values()):
        console_err.print("[red]the trained model disagrees with Example 2[/]")
        raise typer.Exit(1)
