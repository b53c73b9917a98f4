"""`ttlab lm suite` — model scaling from an existing model suite (paper B's Figure-3 method; a plain function that
:mod:`ttlab.cli.lm` registers).
"""

from pathlib import Path
from typing import Annotated, Optional

import typer

from ttlab.cli.common import Json, Setting, held, print_json, print_lines, print_view, print_warnings, run_with_progress
from ttlab.configs import pick_fields
from ttlab.lm.presets import BOOTSTRAP, Execution
from ttlab.lm.suite_windows import SuiteConfig

S, E = SuiteConfig, Execution  # the suite's options set their fields and show their defaults
Models = Annotated[Optional[list[str]], typer.Option("--model", help="A model (repeatable): ttlab run folder, Hugging "
                                                     "Face causal-LM folder, .gguf file, gemma3-270m, or a Hub id.")]
SuiteFile = Annotated[Optional[Path], typer.Option("--suite", help="suite.json: a list of models or {\"models\": [...], "
                                                   "\"reference\": NAME}; items are specs or {\"model\": SPEC, \"name\": LABEL}.")]


def suite_cmd(
    corpus: Setting(S, "corpus"), out: Annotated[Path, typer.Option("--out", help="Folder: results.json, suite_scaling.png, "
                                                                    "windows.json, tasks/ (cache).")],
    models: Models = None, suite_file: SuiteFile = None, split: Setting(S, "split") = S.split,
    split_seed: Setting(S, "split_seed") = S.split_seed, val_frac: Setting(S, "val_frac") = S.val_frac,
    test_frac: Setting(S, "test_frac") = S.test_frac,
    max_corpus_docs: Setting(S, "max_corpus_docs", "--corpus-docs") = S.max_corpus_docs,
    field_name: Setting(S, "field_name", "--field") = S.field_name, decode_errors: Setting(S, "decode_errors") = S.decode_errors,
    context: Setting(S, "context") = S.context, stride: Setting(S, "stride") = S.stride, window: Setting(S, "window") = S.window,
    window_bytes: Setting(S, "window_bytes") = S.window_bytes, windows_per_doc: Setting(S, "windows_per_doc") = S.windows_per_doc,
    max_docs: Setting(S, "max_docs") = S.max_docs, max_tokens: Setting(S, "max_tokens") = S.max_tokens,
    max_bytes: Setting(S, "max_bytes") = S.max_bytes, seed: Setting(S, "seed") = S.seed, device: Setting(S, "device") = S.device,
    dtype: Setting(S, "dtype") = S.dtype, batch_tokens: Setting(S, "batch_tokens") = S.batch_tokens,
    id_tokens_per_doc: Setting(S, "id_tokens_per_doc") = S.id_tokens_per_doc,
    id_batch_size: Setting(S, "id_batch_size") = S.id_batch_size, id_k: Setting(S, "id_k") = S.id_k,
    id_average: Setting(S, "id_average") = S.id_average,
    reference: Annotated[Optional[str], typer.Option("--reference", help="Model whose ID predicts α_N = 2/d (default: "
                                                     "the largest).")] = None,
    bootstrap: Annotated[int, typer.Option("--bootstrap", help="Bootstrap resamples of the fits (6+ models).")] = BOOTSTRAP,
    backend: Setting(E, "backend", text="local | ray (one task per model).") = E.backend,
    workers: Setting(E, "workers", text="Models evaluated at once (each holds one model in memory).") = E.workers,
    threads_per_task: Setting(E, "threads_per_task") = E.threads_per_task, ray_address: Setting(E, "ray_address") = E.ray_address,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace a suite run of another configuration already in "
                                            "--out (refused without it; the same configuration resumes).")] = False,
    as_json: Json = False,
) -> None:
    """Evaluate an existing model suite on the same text: loss, bits per byte, N, final-layer ID → α̂_N vs α_N = 2/d."""
    from ttlab.lm import suite as lib
    from ttlab.lm.views import failures_view
    from ttlab.outputs import check_out_dir

    check_out_dir(out, files=lib.SUITE_OUTPUTS)
    specs, file_reference = lib.suite_specs(models or [], suite_file)
    cfg = SuiteConfig(**pick_fields(SuiteConfig, locals()))
    execution = Execution(**pick_fields(Execution, locals()))
    with held(out):
        res = run_with_progress(lib.run_suite, models=specs, out_dir=out, cfg=cfg, reference=reference or file_reference,
                                bootstrap=bootstrap, execution=execution, overwrite=overwrite)
    print_json(res) if as_json else print_lines(lib.suite_summary(res, out))
    print_warnings([] if as_json else res.get("warnings", []))
    print_view(failures_view(res), err=True)
    if res["n_failed"]:
        raise typer.Exit(1)
