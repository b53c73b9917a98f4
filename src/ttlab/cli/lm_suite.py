"""`ttlab lm suite` — model scaling from an existing suite of models (paper B's Figure-3 method).

May import: typer, rich, :mod:`ttlab.cli._common`, :mod:`ttlab.cli.lm` (the command group) and, inside
the command, :mod:`ttlab.lm.suite` and :mod:`ttlab.outputs`.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ttlab.cli._common import console, console_err, print_json, run_with_progress
from ttlab.cli.lm import DecodeOpt, app
from ttlab.errors import TTLabInputError


@app.command("suite")
def suite_cmd(
    models: Optional[List[str]] = typer.Option(None, "--model", help="A model (repeatable): ttlab run folder, Hugging Face "
                                               "causal-LM folder, .gguf file, gemma3-270m, or a Hub id (online only)."),
    suite: Optional[Path] = typer.Option(None, "--suite", help="suite.json: a list of models or {\"models\": [...], "
                                         "\"reference\": NAME}; items are specs or {\"model\": SPEC, \"name\": LABEL}."),
    corpus: str = typer.Option(..., "--corpus", help="Corpus spec: builtin:sotu | FILE.txt | FILE.jsonl[.xz] | DIR | hf:PATH."),
    out: Path = typer.Option(..., "--out", help="Folder: results.json, suite_scaling.png, windows.json, tasks/ (cache)."),
    split: str = typer.Option("test", "--split", help="Document split scored: train | val | test."),
    split_seed: int = typer.Option(0, "--split-seed", help="Seed of the document split."),
    val_frac: float = typer.Option(0.1, "--val-frac", help="Fraction of documents in the validation split."),
    test_frac: float = typer.Option(0.1, "--test-frac", help="Fraction of documents in the test split."),
    corpus_docs: Optional[int] = typer.Option(None, "--corpus-docs", help="Use only the first N documents of the corpus (before the split)."),
    field: str = typer.Option("text", "--field", help="JSONL / hf: text field."),
    decode_errors: str = DecodeOpt,
    context: int = typer.Option(1024, "--context", help="Tokens per forward pass (clipped to each model's context)."),
    stride: Optional[int] = typer.Option(None, "--stride", help="New tokens per later chunk of a window longer than the context (default: --context, disjoint chunks)."),
    window: str = typer.Option("random", "--window", help="random (a seeded random span per document) | prefix (the document's start)."),
    window_bytes: Optional[int] = typer.Option(None, "--window-bytes", help="Text window length in UTF-8 bytes (default 4 × --context)."),
    windows_per_doc: int = typer.Option(1, "--windows-per-doc", help="Non-overlapping text windows per document."),
    max_docs: Optional[int] = typer.Option(None, "--max-docs", help="Score at most N documents of the split."),
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", help="Text budget in nominal tokens (4 bytes each; real counts are reported)."),
    max_bytes: Optional[int] = typer.Option(None, "--max-bytes", help="Exact text budget in bytes (overrides --max-tokens)."),
    seed: int = typer.Option(0, "--seed", help="Seed of window placement, ID positions and ID batches."),
    device: str = typer.Option("cpu", "--device", help="cpu | cuda | cuda:N | mps."),
    dtype: str = typer.Option("float32", "--dtype", help="float32 | bfloat16 | float16."),
    batch_tokens: int = typer.Option(8192, "--batch-tokens", help="Input tokens per batch (fewer for large vocabularies)."),
    id_tokens: int = typer.Option(32, "--id-tokens-per-doc", help="ID: token positions sampled per window."),
    id_batch: int = typer.Option(4096, "--id-batch-size", help="ID: protocol batch size."),
    id_k: int = typer.Option(20, "--id-k", help="ID: MLE neighbours K."),
    id_average: str = typer.Option("mean", "--id-average", help="ID: mean (paper) | harmonic | median."),
    reference: Optional[str] = typer.Option(None, "--reference", help="Model whose ID predicts α_N = 2/d (default: the largest)."),
    bootstrap: int = typer.Option(1000, "--bootstrap", help="Bootstrap resamples of the fits (6+ models)."),
    backend: str = typer.Option("local", "--backend", help="local | ray (one task per model)."),
    workers: int = typer.Option(1, "--workers", help="Models evaluated at once (each holds one model in memory)."),
    threads_per_task: Optional[int] = typer.Option(None, "--threads-per-task", help="Torch threads per model evaluation."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="Ray cluster address (with --backend ray)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace a suite run of another configuration already in "
                                   "--out (refused without it; the same configuration resumes)."),
    as_json: bool = typer.Option(False, "--json", help="Print results.json on stdout."),
) -> None:
    """Evaluate an existing model suite on the same text: loss, bits per byte, N, final-layer ID → α̂_N vs α_N = 2/d."""
    from ttlab.lm.experiments import Execution
    from ttlab.lm.suite import SUITE_OUTPUTS, SuiteConfig, read_suite_file, resolve_model, run_suite
    from ttlab.outputs import check_out_dir

    check_out_dir(out, files=SUITE_OUTPUTS)
    specs = []
    file_reference = None
    if suite is not None:
        specs, file_reference = read_suite_file(suite)
    specs += [resolve_model(m) for m in models or []]
    if not specs:
        raise TTLabInputError("give the models: --model PATH (repeatable) or --suite suite.json.")
    cfg = SuiteConfig(corpus=corpus, split=split, split_seed=split_seed, val_frac=val_frac, test_frac=test_frac,
                      max_corpus_docs=corpus_docs, field_name=field, context=context, stride=stride, window=window,
                      window_bytes=window_bytes, windows_per_doc=windows_per_doc, max_docs=max_docs, max_tokens=max_tokens,
                      max_bytes=max_bytes, seed=seed, device=device, dtype=dtype, batch_tokens=batch_tokens,
                      id_tokens_per_doc=id_tokens, id_batch_size=id_batch, id_k=id_k, id_average=id_average,
                      decode_errors=decode_errors)
    res = run_with_progress(run_suite, models=specs, out_dir=out, cfg=cfg, reference=reference or file_reference,
                            bootstrap=bootstrap, execution=Execution(backend=backend, workers=workers,
                                                                     threads_per_task=threads_per_task,
                                                                     ray_address=ray_address),
                            overwrite=overwrite)
    if as_json:
        print_json(res)
    else:
        w = res["windows"]
        console.print(f"{w['n_windows']} windows from {w['n_docs']} documents, {w['bytes']:,} bytes", highlight=False)
        for r in res["models"]:
            if r["status"] != "ok":
                console.print(f"  [red]{r['name']}: failed[/] — {r['error']}", highlight=False)
                continue
            idtxt = f"ID {r['intrinsic_dim']:.2f}" if r.get("intrinsic_dim") is not None else f"ID: {r.get('id_error')}"
            console.print(f"  {r['name']}: N = {r['params_non_embedding']:,} (total {r['params']:,}), {r['tokens']:,} tokens, "
                          f"loss {r['loss']:.4f}, {r['bpb']:.4f} bits/byte, {idtxt}, {r['wall_time_s']:.1f} s", highlight=False)
        for metric, label in (("loss", "loss"), ("bpb", "bits per byte")):
            f = res["fits"][metric]
            if f["alpha_hat"] is not None:
                ci = f["alpha_hat_ci"]
                console.print(f"[bold]α̂_N ({label}) = {f['alpha_hat']:.3f}[/]" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
                              + f" over {f['n_points']} models")
        for note in res.get("warnings", []):
            console_err.print(f"[yellow]warning:[/] {note}", highlight=False)
        if res["alpha_pred"] is not None:
            console.print(f"predicted α_N = 2/d = {res['alpha_pred']:.3f} from the ID {res['intrinsic_dim']:.2f} of "
                          f"{res['reference']['name']} (harmonic: {res['alpha_pred_harmonic']:.3f})")
        console.print(f"wrote {out}/results.json" + (f" and {out}/{res['figure']}" if res.get("figure") else ""))
    if res["n_failed"]:
        failed = [r["name"] for r in res["models"] if r["status"] != "ok"]
        console_err.print(f"[red]{res['n_failed']} model(s) failed:[/] {', '.join(failed)}; the others are kept "
                          "(re-run the command to retry the failed ones).")
        raise typer.Exit(1)
