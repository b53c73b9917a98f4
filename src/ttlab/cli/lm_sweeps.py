"""`ttlab lm data-sweep | model-sweep | id-ablations` — paper B's scaling experiments on real text.

The CLI of :mod:`ttlab.lm.experiments`: it parses option text (comma lists, model shapes) into the typed
presets of that module and prints the results. May import typer, rich, :mod:`ttlab.cli._common`,
:mod:`ttlab.cli.lm` (the ``lm`` command group) and, inside commands, :mod:`ttlab.lm`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from ttlab.cli._common import console, console_err, parse_list, print_causes, print_json, run_with_progress
from ttlab.cli.lm import app
from ttlab.errors import TTLabInputError

# shared options (None = take the preset's value)
OutOpt = typer.Option(..., "--out", help="Sweep folder: results.json, the figure, runs/<name>/ and the task cache tasks/.")
QuickOpt = typer.Option(False, "--quick", help="Minutes-scale preset: tiny model, early stopping (data sweep: 2×2×32, 5 sizes 5k–160k, 2 seeds, 1,200-step cap).")
CorpusSweepOpt = typer.Option("builtin:sotu", "--corpus", help="Corpus spec: builtin:sotu | FILE.txt | FILE.jsonl[.xz] | DIR | hf:PATH.")
SeedsOpt = typer.Option(None, "--seeds", help="Comma-separated training seeds (data sweep: 0,1; model-sweep quick: 0; default: 0,1).")
LrsOpt = typer.Option(None, "--lrs", help="Learning-rate grid; each size keeps the best by validation loss (default: the preset's).")
ProtocolOpt = typer.Option(None, "--protocol", help="converged (two-pass, default) | early-stop (quick) | budget (fixed --max-iters).")
LossOpt = typer.Option("mean_5_lowest_test", "--loss", help="Loss fitted: mean_5_lowest_test (paper) | test_loss | test_loss_best.")
BlockOpt = typer.Option(None, "--block-size", help="Context length (quick 64, default 128).")
VocabOpt = typer.Option(None, "--vocab-size", help="BPE vocabulary (quick 1024, default 2048).")
BatchOpt = typer.Option(None, "--batch-size", help="Sequences per step.")
MaxItersOpt = typer.Option(None, "--max-iters", help="Step cap (schedule length of the first pass).")
LrOpt = typer.Option(None, "--lr", help="Peak learning rate.")
WarmupOpt = typer.Option(None, "--warmup-iters", help="Warmup steps.")
EvalIntervalOpt = typer.Option(None, "--eval-interval", help="Steps between evaluations.")
EvalItersOpt = typer.Option(None, "--eval-iters", help="Evaluation windows = eval-iters × batch-size.")
PatienceOpt = typer.Option(None, "--patience", help="Early-stopping patience (evaluations).")
TestMaxOpt = typer.Option(None, "--test-max-tokens", help="Test tokens evaluated.")
MaxDocsOpt = typer.Option(None, "--max-docs", help="Use only the first N documents of the corpus.")
CacheOpt = typer.Option(None, "--cache-dir", help="Tokenizer / token cache folder.")
FieldOpt = typer.Option("text", "--field", help="JSONL / hf: text field.")
IdWindowsOpt = typer.Option(16, "--id-windows-per-doc", help="ID: windows per test document.")
IdTokensOpt = typer.Option(32, "--id-tokens-per-doc", help="ID: token positions per window.")
IdBatchOpt = typer.Option(4096, "--id-batch-size", help="ID: protocol batch size.")
IdKOpt = typer.Option(20, "--id-k", help="ID: MLE neighbours K.")
IdAverageOpt = typer.Option("mean", "--id-average", help="ID: mean (paper) | harmonic | median.")
BackendOpt = typer.Option("local", "--backend", help="local (process pool) | ray.")
WorkersOpt = typer.Option(None, "--workers", help="Parallel training runs.")
ThreadsOpt = typer.Option(None, "--threads-per-task", help="Torch threads per run (default: cores / workers).")
RayOpt = typer.Option(None, "--ray-address", help="Ray cluster address (with --backend ray), e.g. auto or HOST:PORT.")
JsonOpt = typer.Option(False, "--json", help="Print results.json on stdout.")


SWEEP_HELP = {
    "data-sweep": "Data scaling (paper Figure 2): one model on geometrically spaced data sizes → α̂_D vs α_D = 2/(2+d).",
    "model-sweep": "Model scaling (paper Figure 3): several model sizes on fixed data → α̂_N vs α_N = 2/d, and ID vs width.",
}


def parse_model_shapes(text: str | None, what: str) -> tuple[str | tuple[int, int, int], ...] | None:
    """``"nano,4x4x128"`` → ("nano", (4, 4, 128)): model presets by name, other shapes as LAYERSxHEADSxWIDTH."""
    from ttlab.lm.model import MODEL_PRESETS

    items = parse_list(text, what, str)
    if items is None:
        return None
    out: list[str | tuple[int, int, int]] = []
    for item in items:
        parts = item.lower().split("x")
        if item in MODEL_PRESETS:
            out.append(item)
        elif len(parts) == 3 and all(p.isdigit() for p in parts):
            out.append((int(parts[0]), int(parts[1]), int(parts[2])))
        else:
            raise TTLabInputError(f"{what} {item!r}: use a preset name ({', '.join(MODEL_PRESETS)}) or "
                                  "LAYERSxHEADSxWIDTH, e.g. 4x4x128.")
    return tuple(out)


def _only_for(kind: str, given: dict[str, Any]) -> None:
    """Options of the other sweep kind are an error, not silently ignored."""
    wrong = [opt for opt, v in given.items() if v is not None]
    if wrong:
        other = "model-sweep" if kind == "data" else "data-sweep"
        raise TTLabInputError(f"{', '.join(wrong)}: option(s) of `ttlab lm {other}`, not of `ttlab lm {kind}-sweep`.")


def sweep_cmd(
    ctx: typer.Context, out: Path = OutOpt, quick: bool = QuickOpt, corpus: str = CorpusSweepOpt,
    sizes: Optional[str] = typer.Option(None, "--sizes", help="data-sweep: training-token counts, comma-separated (default: --n-sizes geometric sizes from --min-tokens to the whole training split)."),
    n_sizes: Optional[int] = typer.Option(None, "--n-sizes", help="data-sweep: number of geometric sizes when --sizes is not given (default 5)."),
    min_tokens: Optional[int] = typer.Option(None, "--min-tokens", help="data-sweep: smallest size when --sizes is not given (default 10000)."),
    model: Optional[str] = typer.Option(None, "--model", help="data-sweep: model preset (nano, micro, …) or LAYERSxHEADSxWIDTH (quick: 2x2x32; default: micro)."),
    models: Optional[str] = typer.Option(None, "--models", help="model-sweep: ≥ 3 (4+ recommended) sizes: presets or LAYERSxHEADSxWIDTH, comma-separated."),
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", help="model-sweep: training tokens for every model (default: quick 1M, else the whole split)."),
    seeds: Optional[str] = SeedsOpt, lrs: Optional[str] = LrsOpt, protocol: Optional[str] = ProtocolOpt, loss: str = LossOpt,
    block_size: Optional[int] = BlockOpt, vocab_size: Optional[int] = VocabOpt, batch_size: Optional[int] = BatchOpt,
    max_iters: Optional[int] = MaxItersOpt, lr: Optional[float] = LrOpt, warmup_iters: Optional[int] = WarmupOpt,
    eval_interval: Optional[int] = EvalIntervalOpt, eval_iters: Optional[int] = EvalItersOpt,
    patience: Optional[int] = PatienceOpt, test_max_tokens: Optional[int] = TestMaxOpt, max_docs: Optional[int] = MaxDocsOpt,
    cache_dir: Optional[Path] = CacheOpt, field: str = FieldOpt, id_windows: int = IdWindowsOpt, id_tokens: int = IdTokensOpt,
    id_batch: int = IdBatchOpt, id_k: int = IdKOpt, id_average: str = IdAverageOpt, backend: str = BackendOpt,
    workers: Optional[int] = WorkersOpt, threads_per_task: Optional[int] = ThreadsOpt, ray_address: Optional[str] = RayOpt,
    as_json: bool = JsonOpt,
) -> None:
    """One implementation of `ttlab lm data-sweep` and `ttlab lm model-sweep` (the command name picks the kind)."""
    from ttlab.lm.experiments import IDOptions, run_data_sweep, run_model_sweep, sweep_kwargs
    from ttlab.outputs import check_out_dir

    kind = "data" if ctx.info_name == "data-sweep" else "model"
    if kind == "data":
        _only_for(kind, {"--models": models, "--max-tokens": max_tokens})
        model_shapes = parse_model_shapes(model, "--model")
        if model_shapes is not None and len(model_shapes) != 1:
            raise TTLabInputError(f"a data sweep trains one model shape; got {len(model_shapes)} ({model}).")
        specific: dict[str, Any] = {"sizes": parse_list(sizes, "--sizes", int), "model": model_shapes and model_shapes[0]}
        extra: dict[str, Any] = {"n_sizes": 5 if n_sizes is None else n_sizes,
                                 "min_tokens": 10_000 if min_tokens is None else min_tokens}
    else:
        _only_for(kind, {"--sizes": sizes, "--n-sizes": n_sizes, "--min-tokens": min_tokens, "--model": model})
        specific, extra = {"models": parse_model_shapes(models, "--models"), "max_tokens": max_tokens}, {}
    check_out_dir(out)
    kw = sweep_kwargs(kind, "quick" if quick else "full", **specific, block_size=block_size, vocab_size=vocab_size,
                      protocol=protocol, seeds=parse_list(seeds, "--seeds", int), max_iters=max_iters, lr=lr,
                      warmup_iters=warmup_iters, eval_interval=eval_interval, eval_iters=eval_iters, patience=patience,
                      test_max_tokens=test_max_tokens, batch_size=batch_size, workers=workers, corpus=corpus,
                      max_docs=max_docs, cache_dir=cache_dir, field_name=field, lrs=parse_list(lrs, "--lrs", float),
                      threads_per_task=threads_per_task, backend=backend, ray_address=ray_address,
                      id_options=IDOptions(windows_per_doc=id_windows, tokens_per_doc=id_tokens, batch_size=id_batch,
                                           k=id_k, average=id_average))
    res = run_with_progress(run_data_sweep if kind == "data" else run_model_sweep, out_dir=out, loss=loss, **extra,
                            **kw)
    _report(res, out, as_json, "D" if kind == "data" else "N")


for _name, _help in SWEEP_HELP.items():
    app.command(_name, help=_help)(sweep_cmd)


def _report(res: dict[str, Any], out: Path, as_json: bool, sym: str) -> None:
    if as_json:
        print_json(res)
    else:
        for p in res["points"]:
            x = p["train_tokens"] if sym == "D" else p["params_non_embedding"]
            console.print(f"  {sym} = {x:>11,d}: test loss {p['loss']:.4f}", highlight=False)
        a, ci = res["alpha_hat"], res["alpha_hat_ci"]
        if a is not None:
            ci_s = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""
            console.print(f"[bold]α̂_{sym} = {a:.3f}{ci_s}[/] (log-log slope)" +
                          (f"; offset form α = {res['alpha_hat_offset']:.3f}" if res.get("alpha_hat_offset") else ""))
        if res.get("intrinsic_dim") is not None:
            console.print(f"ID {res['intrinsic_dim']:.2f} (harmonic {res['intrinsic_dim_harmonic']:.2f}) → predicted "
                          f"α_{sym} = {res['alpha_pred']:.3f} (harmonic {res['alpha_pred_harmonic']:.3f})")
        band = res.get("alpha_pred_band")
        if band:
            console.print(f"band over {len(band['estimators'])} ID estimators: α_{sym} {band['lo']:.3f} – {band['hi']:.3f} "
                          f"(ID {band['id_lo']:.2f} – {band['id_hi']:.2f}; central {band['central']:.3f} from MLE K=20 mean)")
        console.print(f"wrote {out}/results.json and {out}/{res.get('figure', '')} in {res['wall_time_s']:.0f} s")
    if res["n_failed"]:
        failed = [r["name"] for r in res["runs"] if r["status"] != "ok"]
        console_err.print(f"[red]{res['n_failed']} run(s) failed:[/] {', '.join(failed)}; re-run the command to retry them.")
        print_causes((r["name"], r.get("error", "failed")) for r in res["runs"] if r["status"] != "ok")
        raise typer.Exit(1)


@app.command("id-ablations")
def id_ablations_cmd(
    runs: list[Path] = typer.Option(..., "--run", help="Run folders (repeatable), e.g. a model sweep's DIR/runs/*."),
    out: Path = typer.Option(..., "--out", help="Folder for id_ablations.json and id_ablations.png."),
    position_groups: Optional[str] = typer.Option(None, "--position-groups", help="Window-position edges, e.g. 0,8,32,64 (default: 4 geometric ranges)."),
    windows: int = IdWindowsOpt, tokens: int = IdTokensOpt, batch: int = IdBatchOpt, k: int = IdKOpt,
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """ID ablations (paper Figure 4): vs model size/width, per layer and per context position."""
    from ttlab.lm.experiments import IDOptions, id_ablations
    from ttlab.outputs import check_out_dir

    check_out_dir(out)

    res = run_with_progress(id_ablations, run_dirs=runs, out_dir=out,
                             id_options=IDOptions(windows_per_doc=windows, tokens_per_doc=tokens, batch_size=batch, k=k),
                             position_edges=parse_list(position_groups, "--position-groups", int))
    if as_json:
        print_json(res)
        return
    for r in res["by_model"]:
        console.print(f"  {r['n_layer']} layers × {r['n_embd']}: ID {r['intrinsic_dim']:.2f} (harmonic {r['intrinsic_dim_harmonic']:.2f})")
    console.print("  per layer: " + ", ".join(f"{r['layer']}: {r['intrinsic_dim']:.2f}" for r in res["per_layer"]["rows"]))
    console.print("  per position: " + ", ".join(f"{r['positions'][0]}–{r['positions'][1]}: {r['intrinsic_dim']:.2f}"
                                                 for r in res["per_position"]["rows"]))
    console.print(f"wrote {out}/id_ablations.json and {out}/id_ablations.png")
