"""`ttlab ntp …` — next-token-prediction dynamics (paper A): check, generate, run, generalize, example.

May import: typer, rich, :mod:`ttlab.cli._common`, :mod:`ttlab.errors`, and (inside the commands, so that
`ttlab --help` stays fast) :mod:`ttlab.ntp`, :mod:`ttlab.outputs` and :mod:`ttlab.provenance`. The only
module of paper A that prints.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Optional

import typer
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ttlab.cli._common import console, console_err, exit_on_interrupt, print_json
from ttlab.errors import TTLabInputError

app = typer.Typer(
    help="Next-token prediction with a one-layer transformer (paper A): datasets, Algorithm 1, "
    "max-margin limits, generalization.",
    no_args_is_help=True,
)

# ---------------------------------------------------------------------------------------------- options
DataOpt = typer.Option(None, "--data", help="Dataset file (sequence lines 'S V O P' or explicit lines 'S V => O'). "
                       "Without it a random realizable dataset is generated.")
VocabOpt = typer.Option(20, "--vocab", help="Random dataset: vocabulary size |V|.")
SentencesOpt = typer.Option(100, "--sentences", help="Random dataset: number of multi-token sentences.")
MinLenOpt = typer.Option(2, "--min-len", help="Random dataset: shortest sentence length.")
MaxLenOpt = typer.Option(6, "--max-len", help="Random dataset: longest sentence length.")
SeedOpt = typer.Option(0, "--seed", help="Seed of the random dataset, random init and sampling.")
#: = ttlab.ntp.cost.DEFAULT_MEMORY_LIMIT_GIB (not imported here: the CLI loads numpy only when a command runs;
#: tests/ntp/test_bounds.py checks they agree)
DEFAULT_MEMORY_LIMIT_GIB = 4.0
MemoryOpt = typer.Option(DEFAULT_MEMORY_LIMIT_GIB, "--memory-limit", help="GiB the dataset and training may use (estimated before "
                         "the work; above it the command refuses and names the line responsible).")
#: violations listed by `ntp check` in text mode (all of them with --json)
SHOW_VIOLATIONS = 40


@dataclass(frozen=True)
class DatasetArgs:
    """The dataset options shared by `ntp run` and `ntp generalize`: a file, or a random dataset's spec."""

    data: Optional[Path]
    vocab: int
    sentences: int
    min_len: int
    max_len: int
    seed: int

    def load(self, memory_limit: float = DEFAULT_MEMORY_LIMIT_GIB):
        """The file's dataset, or the random one (generator picked as `ntp generate --generator auto` does)."""
        from ttlab.ntp.cost import require_generable
        from ttlab.ntp.dataset import NTPDataset
        from ttlab.ntp.generate import RandomSpec, generate_dataset, resolve_method

        if self.data is not None:
            return NTPDataset.from_file(self.data, memory_limit_gib=memory_limit)
        spec = RandomSpec(self.vocab, self.sentences, self.min_len, self.max_len, self.seed)
        require_generable(spec, resolve_method("auto", self.vocab), memory_limit, build_dataset=True)
        return generate_dataset(self.vocab, self.sentences, self.min_len, self.max_len, self.seed, method="auto")


_DATASET_OPTIONS = (("data", Optional[Path], DataOpt), ("vocab", int, VocabOpt), ("sentences", int, SentencesOpt),
                    ("min_len", int, MinLenOpt), ("max_len", int, MaxLenOpt), ("seed", int, SeedOpt))


def _dataset_options(fn: Callable) -> Callable:
    """Give a command ``fn(…, src: DatasetArgs, …)`` the options --data, --vocab, --sentences, --min-len,
    --max-len and --seed in place of ``src`` (typer reads the rewritten signature)."""
    sig = inspect.signature(fn, eval_str=True)
    params = list(sig.parameters.values())
    at = [p.name for p in params].index("src")
    added = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=d, annotation=t)
             for n, t, d in _DATASET_OPTIONS]

    @functools.wraps(fn)
    def command(**kwargs):
        src = DatasetArgs(**{n: kwargs.pop(n) for n, _, _ in _DATASET_OPTIONS})
        return fn(src=src, **kwargs)

    command.__signature__ = sig.replace(parameters=params[:at] + added + params[at + 1:])  # type: ignore[attr-defined]
    return command


def _embeddings(kind: str, dim: Optional[int], vocab_size: int, seed: int):
    from ttlab.ntp.model import make_embeddings

    return make_embeddings(kind, vocab_size, dim, seed=seed + 1)


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


def _config(stage1_steps, stage2_steps, eta0, eta, init, init_scale, schedule, optimizer, seed, dtype, impl="auto"):
    from ttlab.ntp.train import TrainConfig

    return TrainConfig(stage1_steps=stage1_steps, stage2_steps=stage2_steps, eta0=eta0, eta=eta, init=init,
                       init_scale=init_scale, schedule=schedule, optimizer=optimizer, seed=seed, dtype=dtype,
                       impl=impl)


# ---------------------------------------------------------------------------------------------- check
#: `ntp check` runs the vectorized checker first on texts longer than this many characters
FAST_CHECK_CHARS = 2_000_000
#: memory of the vectorized checker per sentence slot (measured ≈ 110 B at |V| = 50,257; rounded up)
FAST_CHECK_BYTES_PER_SLOT = 200


def _collocation_text(pairs: list[tuple[str, str]]) -> str:
    shown = ", ".join(f"{k}→{v}" for k, v in pairs[:SHOW_VIOLATIONS])
    more = len(pairs) - SHOW_VIOLATIONS
    return "collocation: " + shown + (f" … and {more:,} more (--json lists them)" if more > 0 else "")


@app.command()
def check(
    file: Path = typer.Argument(..., help="Dataset file to check."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object on stdout. For files over 2 MB that "
                                  "pass, and whenever the orders × |V| exceed 1,000,000, each order lists its optimal, "
                                  "non-optimal and confused tokens and counts the non-comparable ones "
                                  "(n_non_comparable) instead of listing ~|V| of them."),
    memory_limit: float = MemoryOpt,
) -> None:
    """Check Assumptions 1 and 3 of the paper; exit 0 when they hold, 1 with the violations listed.

    Also states what training on the file would cost and notes stages with nothing to learn. Files over
    2 MB are first checked by array operations (seconds at |V| = 50,257 and 200,000 sentences); when
    that finds a violation, the sentence-by-sentence checker lists every violation with its lines.
    """
    from ttlab.ntp.cost import check_limit
    from ttlab.ntp.dataset import NTPDataset, read_dataset_text
    from ttlab.ntp.fastcheck import MAX_SLOTS, quick_check

    text = read_dataset_text(file, memory_limit)
    if len(text) > FAST_CHECK_CHARS:
        budget = int(check_limit(memory_limit) * 2**30 / FAST_CHECK_BYTES_PER_SLOT)
        qc = quick_check(text, str(file), max_slots=min(MAX_SLOTS, budget))
        if qc is not None and qc.valid:
            _print_quick_check(file, qc, json_out)
            raise typer.Exit(0)
    _print_full_check(file, NTPDataset.from_text(text, source=str(file), memory_limit_gib=memory_limit), json_out)


def _print_quick_check(file: Path, qc, json_out: bool) -> None:
    cost = qc.training_cost()
    colloc = [(qc.vocab[x], qc.vocab[y]) for x, y in enumerate(qc.collocation.tolist()) if y >= 0]
    if json_out:
        print_json({"valid": True, "source": qc.source, "n_sentences": qc.n_sentences,
                    "n_occurrences": qc.n_occurrences, "vocab": qc.vocab, "collocation": dict(colloc),
                    "orders": qc.orders(), "violations": [], "degenerate": qc.degenerate(),
                    "training_cost": cost.as_dict()})
        return
    console.print(f"[bold]{file}[/]: {qc.n_sentences:,} distinct sentences, |V| = {qc.vocab_size:,}; "
                  f"training batch {cost.batch()}", highlight=False)
    console.print(_collocation_text(colloc), highlight=False)
    console.print(f"{qc.n_orders:,} query-dependent orders (--json lists them)")
    console.print("[green]valid[/]: Assumptions 1 and 3 hold.")
    for stage, why in qc.degenerate().items():
        console.print(f"[yellow]note[/]: {stage.replace('stage', 'stage ')} has nothing to learn: {escape(why)}",
                      highlight=False)


def _print_full_check(file: Path, ds, json_out: bool) -> None:
    from ttlab.ntp.cost import training_cost
    from ttlab.ntp.structure import analyze

    structure = analyze(ds)
    report = structure.report()
    cost = training_cost(structure.dataset)
    report["training_cost"] = cost.as_dict()
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


# ---------------------------------------------------------------------------------------------- generate
@app.command()
def generate(
    out: Path = typer.Option(..., "--out", help="File to write (explicit lines 'A B => C')."),
    vocab: int = VocabOpt,
    sentences: int = SentencesOpt,
    min_len: int = MinLenOpt,
    max_len: int = MaxLenOpt,
    seed: int = SeedOpt,
    generator: str = typer.Option(
        "auto", "--generator",
        help="dense: draws every query's roles into a |V|×|V| table first (|V|² bytes: 2.5 GB at |V| = 50,257); "
        "large: builds the sentences query by query in O(|V| + tokens) memory; auto: dense while that table "
        "stays under 64 MiB (|V| ≤ 8,192), else large. Same construction, different random streams: a seed "
        "gives different files with dense and large."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing --out file (refused without it)."),
    memory_limit: float = typer.Option(DEFAULT_MEMORY_LIMIT_GIB, "--memory-limit", help="GiB the generation may use "
                                       "(estimated from the options first; above it the command refuses)."),
) -> None:
    """Write a seeded random realizable dataset (always passes `ttlab ntp check`)."""
    from ttlab.ntp.cost import require_generable
    from ttlab.ntp.generate import RandomSpec, generate_text, resolve_method
    from ttlab.outputs import check_out_file
    from ttlab.provenance import atomic_write_text

    check_out_file(out, overwrite=overwrite)
    spec = RandomSpec(vocab, sentences, min_len, max_len, seed)
    require_generable(spec, resolve_method(generator, vocab), memory_limit)
    atomic_write_text(out, generate_text(spec, generator, require_stage2=True))
    console.print(f"wrote {out}")


# ---------------------------------------------------------------------------------------------- run
@app.command()
@_dataset_options
def run(
    out: Path = typer.Option(..., "--out", help="Output directory (metrics.csv, summary.json, dynamics.png)."),
    src: DatasetArgs = None,  # type: ignore[assignment]  # set by @_dataset_options from the dataset options
    stage1_steps: int = typer.Option(900, "--stage1-steps", help="Stage-1 steps T (W_ov)."),
    stage2_steps: int = typer.Option(900, "--stage2-steps", help="Stage-2 steps (W_kq)."),
    eta0: Optional[float] = typer.Option(None, "--eta0", help="Stage-1 step size (default 0.2/√d)."),
    eta: Optional[float] = typer.Option(None, "--eta", help="Stage-2 step size (default 0.05/√d)."),
    step_sizes: str = typer.Option("paper", "--step-sizes", help="paper: unset step sizes are 0.2/√d and 0.05/√d "
                                   "(a warning before training when they cannot reach ‖W*‖, as at large |V|); "
                                   "figure2: unset ones keep Figure 2's ratios T·η/‖W*‖ (9.23, 2.06) at any |V| "
                                   "(structured path, --optimizer ngd)."),
    init: str = typer.Option("zero", "--init", help="zero (the paper) or random (Gaussian, std --init-scale)."),
    init_scale: float = typer.Option(0.01, "--init-scale", help="Std of the random init."),
    schedule: str = typer.Option("two-stage", "--schedule", help="two-stage (Algorithm 1) or joint (both layers at once)."),
    optimizer: str = typer.Option("ngd", "--optimizer", help="ngd (normalized GD, the paper), gd or adam."),
    embeddings: str = typer.Option("onehot", "--embeddings", help="onehot (orthonormal), orthogonal, gaussian or equicorrelated."),
    dim: Optional[int] = typer.Option(None, "--dim", help="Embedding dimension d (default |V|)."),
    dtype: str = typer.Option("auto", "--dtype", help="auto (float64; float32 only for large problems whose logits stay within float32's exp range), float64 or float32."),
    impl: str = typer.Option("auto", "--impl", help="auto (structured where it applies: one-hot, zero init, two-stage NGD/GD), structured (exact, O(tokens + |V|) memory) or dense."),
    generalization_samples: int = typer.Option(0, "--generalization-samples", help="Also score this many unseen sentences (Theorem 3)."),
    json_out: bool = typer.Option(False, "--json", help="Print summary.json on stdout."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace the run already in --out (refused without it)."),
    memory_limit: float = MemoryOpt,
    max_hours: float = typer.Option(24.0, "--max-hours", help="Refuse runs whose time, extrapolated from timed "
                                    "steps, exceeds this many hours."),
) -> None:
    """Train with Algorithm 1 (or an ablation), compare with the max-margin solutions, draw Figure 2.

    Defaults are the paper's Section 7 setting: random realizable data, |V| = 20, d = |V|,
    900 steps per stage, η0 = 0.2/√d, η = 0.05/√d. Without sentences that order two tokens under a
    query (W*_kq undefined) only stage 1 can run: pass --stage2-steps 0. Ctrl-C stops training, writes
    the steps done so far and exits with 130.
    """
    started = time.perf_counter()
    from ttlab.ntp.cost import require_steps
    from ttlab.ntp.experiment import run_dynamics
    from ttlab.outputs import check_out_dir

    check_out_dir(out, run_markers=("summary.json", "metrics.csv"), overwrite=overwrite,
                  files=("dataset.txt", "dynamics.png"))
    require_steps(stage1_steps, stage2_steps)
    ds = src.load(memory_limit)
    E = _embeddings(embeddings, dim, ds.vocab_size, src.seed)
    cfg = _config(stage1_steps, stage2_steps, eta0, eta, init, init_scale, schedule, optimizer, src.seed, dtype, impl)

    def announce(msg: str) -> None:
        console_err.print(msg, highlight=False)

    with exit_on_interrupt("outside the training steps: no complete run was written; re-run with --overwrite"), \
            _progress(not (quiet or json_out)) as progress:  # during training the steps so far are kept (below)
        summary = run_dynamics(ds, cfg, out, embeddings=E, embedding_kind=embeddings, progress=progress,
                               generalization_samples=generalization_samples, memory_limit_gib=memory_limit,
                               max_hours=max_hours, announce=announce, keep_interrupted=True, step_sizes=step_sizes,
                               started=started)
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


def certificate_line(name: str, sol: dict) -> str:
    """The feasibility certificate of a max-margin solution (``solution_info`` dict) in one line."""
    return (f"{name} certificate: min margin {sol['min_margin']:.12g}, max violation {sol['max_violation']:.3g} over "
            f"{sol['n_constraints']:,} constraints ({sol['method']}; feasible when the violation is 0)")


def _print_run(summary: dict, out: Path, took_s: float) -> None:
    from ttlab.ntp.diagnostics import format_loss

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
        console.print(certificate_line("W*_kq", summary["wkq_star"]), highlight=False)
    if "generalization" in summary:
        g = summary["generalization"]
        console.print(f"generalization: agreement {g['agreement']} on {g['n_with_prediction']} unseen sentences")
    console.print(f"wrote {out}/metrics.csv, {out}/summary.json, {out}/dynamics.png")


# ---------------------------------------------------------------------------------------------- generalize
@app.command()
@_dataset_options
def generalize(
    out: Path = typer.Option(..., "--out", help="Output directory (generalization.json)."),
    src: DatasetArgs = None,  # type: ignore[assignment]  # set by @_dataset_options from the dataset options
    stage1_steps: int = typer.Option(900, "--stage1-steps"),
    stage2_steps: int = typer.Option(900, "--stage2-steps"),
    samples: int = typer.Option(2000, "--samples", help="Unseen sentences to sample when there are too many to enumerate."),
    json_out: bool = typer.Option(False, "--json", help="Print the result on stdout."),
    memory_limit: float = MemoryOpt,
) -> None:
    """Train with Algorithm 1, then compare the model with Theorem 3 on unseen sentences."""
    from ttlab.ntp.cost import require_steps, require_trainable, training_cost
    from ttlab.ntp.experiment import dataset_info, require_learnable, require_valid, solution_info
    from ttlab.ntp.generalize import evaluate_generalization, unseen_sentences
    from ttlab.ntp.model import NTPTransformer
    from ttlab.ntp.structure import analyze
    from ttlab.ntp.train import logit_spread_bound, train
    from ttlab.outputs import check_out_dir
    from ttlab.provenance import atomic_write_json, versions

    check_out_dir(out)
    require_steps(stage1_steps, stage2_steps)
    ds = src.load(memory_limit)
    seed = src.seed
    structure = analyze(ds)
    require_valid(structure)
    cfg = _config(stage1_steps, stage2_steps, None, None, "zero", 0.01, "two-stage", "ngd", seed, "auto")
    if "stage2" in structure.degenerate():
        raise TTLabInputError(f"{ds.source}: nothing to generalize: {structure.degenerate()['stage2']}")
    require_learnable(structure, cfg)
    require_trainable(training_cost(ds, None, stage1_steps + stage2_steps + 2), ds.source, memory_limit)
    model = NTPTransformer(ds, structure=structure, max_logit_spread=logit_spread_bound(cfg, ds.vocab_size))
    with exit_on_interrupt("nothing was written; re-run the same command to start again"):
        with _progress(not json_out) as progress:
            result = train(ds, cfg, progress=progress, model=model)
        sents = unseen_sentences(structure, n_samples=samples, seed=seed)  # Ctrl-C here too: exit 130, not click's 1
        report = evaluate_generalization(model, result.W_ov, result.W_kq, sents)
    report = {"dataset": dataset_info(ds), "config": {"stage1_steps": stage1_steps, "stage2_steps": stage2_steps,
              "seed": seed, "samples": samples}, "versions": versions(), "wkq_star": solution_info(result.wkq_star),
              **report}
    atomic_write_json(Path(out) / "generalization.json", report)
    if json_out:
        print_json(report)
        return
    table = Table("case", "sentences", "agreement with theory", title="Theorem 3 on unseen sentences")
    for case, v in report["by_case"].items():
        table.add_row(case, str(v["n"]), "—" if v["agreement"] is None else f"{100 * v['agreement']:.1f}%")
    console.print(table)
    console.print(certificate_line("W*_kq", report["wkq_star"]), highlight=False)
    console.print(f"overall agreement: {report['agreement']}; wrote {out}/generalization.json")


# ---------------------------------------------------------------------------------------------- example
@app.command()
def example(name: str = typer.Argument("svop", help="Which example: svop (the paper's Examples 1–2).")) -> None:
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
