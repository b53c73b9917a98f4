"""`ttlab lm data-sweep | model-sweep | id-ablations` — paper B's scaling experiments on real text: option text (comma
lists, model shapes) parsed into the typed settings of :mod:`ttlab.lm.presets`, the results printed. Plain functions;
:mod:`ttlab.cli.lm` registers them.
"""

from pathlib import Path
from typing import Annotated, Optional

import typer

from ttlab.cli.common import (
    START_AGAIN,
    Json,
    Setting,
    held,
    parse_list,
    print_json,
    print_lines,
    print_view,
    run_with_progress,
)
from ttlab.errors import TTLabInputError
from ttlab.lm.configs import MODEL_PRESETS, TrainConfig
from ttlab.lm.presets import DEFAULT_LOSS, DataSweepPreset, Execution, IDOptions, ModelSweepPreset, SweepData

DS, MS, SD, ID, T, E = DataSweepPreset, ModelSweepPreset, SweepData, IDOptions, TrainConfig, Execution  # their fields
Out = Annotated[Path, typer.Option("--out", help="Sweep folder: results.json, the figure, runs/<name>/ and the task cache.")]
Quick = Annotated[bool, typer.Option("--quick", help="Minutes-scale preset: tiny model, early stopping (data sweep: "
                                     "2×2×32, 5 sizes 5k–160k, 2 seeds, 1,200-step cap).")]
Seeds = Annotated[Optional[str], typer.Option("--seeds", help="Comma-separated training seeds (data sweep: 0,1; "
                                              "model-sweep quick: 0; default: 0,1).")]
Lrs = Annotated[Optional[str], typer.Option("--lrs", help="Learning-rate grid; each size keeps the best by validation "
                                            "loss (default: the preset's).")]
Protocol = Annotated[Optional[str], typer.Option("--protocol", help="converged (two-pass, default) | early-stop (quick) "
                                                 "| budget (fixed --max-iters).")]
Loss = Annotated[str, typer.Option("--loss", help="Loss fitted: mean_5_lowest_test (paper) | test_loss | test_loss_best.")]
Block = Annotated[Optional[int], typer.Option("--block-size", help="Context length (quick 64, default 128).")]
IdWindows, IdTokens = Setting(ID, "windows_per_doc", "--id-windows-per-doc"), Setting(ID, "tokens_per_doc", "--id-tokens-per-doc")
IdBatch, IdK = Setting(ID, "batch_size", "--id-batch-size"), Setting(ID, "k", "--id-k")

SWEEP_HELP = {
    "data-sweep": "Data scaling (paper Figure 2): one model on geometrically spaced data sizes → α̂_D vs α_D = 2/(2+d).",
    "model-sweep": "Model scaling (paper Figure 3): several model sizes on fixed data → α̂_N vs α_N = 2/d, and ID vs width.",
}


def parse_model_shapes(text: str | None, what: str) -> tuple[str | tuple[int, int, int], ...] | None:
    """``"nano,4x4x128"`` → ("nano", (4, 4, 128)): model presets by name, other shapes as LAYERSxHEADSxWIDTH."""
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


def sweep_cmd(
    ctx: typer.Context, out: Out, quick: Quick = False, corpus: Setting(SD, "corpus") = SD.corpus,
    sizes: Setting(DS, "sizes", kind=Optional[str], text="data-sweep: training-token counts, comma-separated (default: --n-sizes "
                   "geometric sizes from --min-tokens to the whole training split).") = None,
    n_sizes: Setting(DS, "n_sizes", optional=True) = None, min_tokens: Setting(DS, "min_tokens", optional=True) = None,
    model: Setting(DS, "model", kind=Optional[str], text="data-sweep: model preset (nano, micro, …) or LAYERSxHEADSxWIDTH "
                   "(quick: 2x2x32; default: micro).") = None,
    models: Setting(MS, "models", kind=Optional[str], text="model-sweep: ≥ 3 (4+ recommended) sizes: presets or "
                    "LAYERSxHEADSxWIDTH, comma-separated.") = None,
    max_tokens: Setting(MS, "max_tokens") = None, seeds: Seeds = None, lrs: Lrs = None, protocol: Protocol = None,
    loss: Loss = DEFAULT_LOSS, block_size: Block = None, vocab_size: Setting(SD, "vocab_size", optional=True) = None,
    batch_size: Setting(T, "batch_size", optional=True) = None, max_iters: Setting(T, "max_iters", optional=True) = None,
    lr: Setting(T, "lr", optional=True) = None, warmup_iters: Setting(T, "warmup_iters", optional=True) = None,
    eval_interval: Setting(T, "eval_interval", optional=True) = None,
    eval_iters: Setting(T, "eval_iters", optional=True) = None, patience: Setting(T, "patience") = None,
    test_max_tokens: Setting(T, "test_max_tokens") = None, max_docs: Setting(SD, "max_docs") = SD.max_docs,
    cache_dir: Setting(SD, "cache_dir") = SD.cache_dir, field_name: Setting(SD, "field_name", "--field") = SD.field_name,
    id_windows: IdWindows = ID.windows_per_doc, id_tokens: IdTokens = ID.tokens_per_doc, id_batch: IdBatch = ID.batch_size,
    id_k: IdK = ID.k, id_average: Setting(ID, "average", "--id-average") = ID.average,
    backend: Setting(E, "backend") = E.backend, workers: Setting(E, "workers", optional=True) = None,
    threads_per_task: Setting(E, "threads_per_task") = E.threads_per_task,
    ray_address: Setting(E, "ray_address") = E.ray_address, as_json: Json = False,
) -> None:
    """One implementation of `ttlab lm data-sweep` and `ttlab lm model-sweep` (the command name picks the kind)."""
    named = {k: v for k, v in locals().items() if k in DS.option_names() | MS.option_names()}  # the presets' fields
    from ttlab.cli.common import print_causes
    from ttlab.lm.experiments import run_preset_sweep, sweep_summary
    from ttlab.lm.presets import sweep_preset
    from ttlab.lm.views import failures_view
    from ttlab.outputs import check_out_dir

    shapes = parse_model_shapes(model, "--model")
    if shapes is not None and len(shapes) != 1:
        raise TTLabInputError(f"a data sweep trains one model shape; got {len(shapes)} ({model}).")
    check_out_dir(out)
    overrides = dict(named)
    overrides.update(seeds=parse_list(seeds, "--seeds", int), lrs=parse_list(lrs, "--lrs", float), model=shapes and shapes[0],
                     sizes=parse_list(sizes, "--sizes", int), models=parse_model_shapes(models, "--models"),
                     id_options=IDOptions(windows_per_doc=id_windows, tokens_per_doc=id_tokens, batch_size=id_batch,
                                          k=id_k, average=id_average))
    sweep = sweep_preset("data" if ctx.info_name == "data-sweep" else "model", "quick" if quick else "full", **overrides)
    with held(out):
        res = run_with_progress(run_preset_sweep, preset=sweep, out_dir=out, loss=loss)
    if as_json:
        print_json(res)
    else:
        from ttlab.reproduce.parts.common_lm_sweep import scaling_claims
        from ttlab.reproduce.views import claims_view

        print_lines(sweep_summary(res, out))
        print_view(claims_view(scaling_claims(res), "the report's rules on this sweep (ttlab reproduce judges the same):"))
    if res["n_failed"]:
        print_view(failures_view(res), err=True)
        print_causes((r["name"], r.get("error", "failed")) for r in res["runs"] if r["status"] != "ok")
        raise typer.Exit(1)


def id_ablations_cmd(
    runs: Annotated[list[Path], typer.Option("--run", help="Run folders (repeatable), e.g. a model sweep's DIR/runs/*.")],
    out: Annotated[Path, typer.Option("--out", help="Folder for id_ablations.json and id_ablations.png.")],
    position_groups: Annotated[Optional[str], typer.Option("--position-groups", help="Window-position edges, e.g. "
                                                           "0,8,32,64 (default: 4 geometric ranges).")] = None,
    windows: IdWindows = ID.windows_per_doc, tokens: IdTokens = ID.tokens_per_doc, batch: IdBatch = ID.batch_size,
    k: IdK = ID.k, as_json: Json = False,
) -> None:
    """ID ablations (paper Figure 4): vs model size/width, per layer and per context position."""
    from ttlab.lm.experiments import ablations_summary, id_ablations
    from ttlab.outputs import check_out_dir

    check_out_dir(out)
    res = run_with_progress(id_ablations, on_interrupt=START_AGAIN, run_dirs=runs, out_dir=out,
                            id_options=IDOptions(windows_per_doc=windows, tokens_per_doc=tokens, batch_size=batch, k=k),
                            position_edges=parse_list(position_groups, "--position-groups", int))
    print_json(res) if as_json else print_lines(ablations_summary(res, out))
