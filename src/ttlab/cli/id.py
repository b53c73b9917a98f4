"""`ttlab id …` — intrinsic dimension of data (paper B): each command calls ttlab.intrinsic_dim (or ttlab.lm.embed).

Imports: typer, rich, ttlab.cli._common, ttlab.errors, ttlab.outputs, ttlab.intrinsic_dim (files, io, protocol: the
paper's K, batch size, average, seed, remainder); inside ``embed`` ttlab.lm.embed (torch).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from typer import Argument, Option

from ttlab.cli._common import console, console_err, parse_list, print_json
from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.files import compare_file, estimate_file
from ttlab.intrinsic_dim.io import write_manifold
from ttlab.intrinsic_dim.protocol import PAPER
from ttlab.outputs import check_out_file

app = typer.Typer(no_args_is_help=True, help="Intrinsic dimension (ID) of point clouds: MLE, TwoNN, GRIDE, the paper's "
                  "batched protocol; `compare` runs 17 estimators (scikit-dimension's set) with one shared neighbour "
                  "search. Distances (--metric): euclidean (the default; the paper's text), chord = sqrt(2 (1 - cos)) "
                  "(Euclidean between unit-scaled rows) or cosine = 1 - cos (scipy/scikit-learn; the paper's released "
                  "code): the MLE on cosine is exactly half the MLE on chord.")

# options shared by `estimate` and `compare`
OptInt, OptStr, OptPath = Optional[int], Optional[str], Optional[Path]
FileArg = Annotated[Path, Argument(help="Points, one per row: .npy, .npz, .pt/.pth, .csv or .tsv.")]
MetricOpt = Annotated[str, Option("--metric", help="euclidean (paper's text) | chord = sqrt(2(1 - cos)) | cosine = 1 - cos (scipy's; the paper's code; MLE half of chord's).")]
SeedOpt = Annotated[int, Option("--seed", help="Seed of the shuffle into batches.")]
KeyOpt = Annotated[OptStr, Option("--key", help="Array name inside an .npz or a saved dict.")]
DeviceOpt = Annotated[OptStr, Option("--device", help="cpu | cuda (default: cuda if present).")]
JsonOpt = Annotated[bool, Option("--json", help="Print the result as JSON on stdout.")]


def _num(v: float | None, fmt: str) -> str:
    return "—" if v is None else format(v, fmt)


def _report(payload: dict[str, Any], notes: list[str], as_json: bool) -> bool:
    """Print the warnings and, with ``--json``, the payload; True when the JSON was the output."""
    for msg in notes:
        console_err.print(f"[yellow]warning:[/] {msg}", highlight=False)
    if as_json:
        print_json(payload)
    return as_json


@app.command("estimate")
def estimate(
    file: FileArg,
    method: Annotated[str, Option("--method", help="mle | twonn | gride.")] = "mle",
    k: Annotated[int, Option("--k", help="Neighbours: K for MLE; n2 for GRIDE (n1 = k // 2); unused by TwoNN.")] = PAPER.k,
    average: Annotated[str, Option("--average", help="MLE: mean (paper's code) | harmonic (MacKay–Ghahramani) | median.")] = PAPER.average,
    unbiased: Annotated[bool, Option("--unbiased", help="MLE: use K-2 instead of K-1.")] = False,
    metric: MetricOpt = "euclidean",
    batch_size: Annotated[OptInt, Option("--batch-size", help="Paper's protocol: shuffled batches of N points, averaged.")] = None,
    paper: Annotated[bool, Option("--paper", help=f"Paper's protocol: --batch-size {PAPER.batch_size} unless given.")] = False,
    remainder: Annotated[str, Option("--remainder", help="Last partial batch: drop | merge | keep.")] = PAPER.remainder,
    seed: SeedOpt = PAPER.seed,
    key: KeyOpt = None,
    backend: Annotated[str, Option("--backend", help="Neighbour search: auto (k-d tree at low dimension, else torch) | tree | torch | faiss | faiss-hnsw (approximate).")] = "auto",
    device: DeviceOpt = None,
    out: Annotated[OptPath, Option("--out", help="Also write the JSON result to this file.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Estimate the intrinsic dimension of the points in FILE."""
    res, payload, notes = estimate_file(file, method, key=key, paper=paper, batch_size=batch_size, out=out, k=k, average=average,
                                        unbiased=unbiased, metric=metric, seed=seed, remainder=remainder, backend=backend, device=device)
    if _report(payload, notes, as_json):
        return
    console.print(f"[bold]{file}[/]: {res.method} ID = [bold]{res.dimension:.3f}[/]")
    console.print(f"  points {res.n_points}, duplicates removed {res.n_duplicates_removed}, used {res.n_used}; "
                  f"metric {metric}; neighbours {res.neighbors['backend']}")
    if res.batches is not None:
        console.print(f"  {len(res.batches)} batch(es) of {res.batch_sizes[0]}: mean {res.dimension:.3f}, "
                      f"std {res.dimension_std:.3f}, sem {res.dimension_sem:.3f}")
        console.print("  per batch: " + ", ".join(f"{v:.3f}" for v in res.batches))
    if "error" in res.extras:
        console.print(f"  standard error {res.extras['error']:.3f}")


@app.command("compare")
def compare_cmd(
    file: FileArg,
    methods: Annotated[str, Option(
        "--methods", help=f"'all' or comma-separated: mle (K={PAPER.k}, mean: the paper's), mle_harmonic, mle_median, "
        "twonn, gride, tle, mom, mada, mind_ml, corrint, danco, ess, lpca, lpca_pr. Settings are scikit-dimension's "
        "defaults (gride: n1 = 1; `id estimate` uses n1 = 10) except mind_ml (D = n_features, not 10) and danco (D = "
        "min(n_features, 48), seed 0).")] = "all",
    paper: Annotated[bool, Option(
        "--paper", help=f"Paper's protocol for every estimator: seeded batches of {PAPER.batch_size} (or "
        "--batch-size), averaged; spread over batches.")] = False,
    batch_size: Annotated[OptInt, Option("--batch-size", help="Batch size of the protocol (implies batches).")] = None,
    beta: Annotated[float, Option("--beta", help="Hölder exponent β for the predicted α_D = 2β/(2β+d), α_N = 2β/d.")] = 1.0,
    metric: MetricOpt = "euclidean",
    seed: SeedOpt = PAPER.seed,
    key: KeyOpt = None,
    backend: Annotated[str, Option("--backend", help="Neighbour search: auto | torch | faiss | faiss-hnsw (approximate).")] = "auto",
    device: DeviceOpt = None,
    out: Annotated[OptPath, Option("--out", help="Also write the JSON result to this file (input of `ttlab scaling predict --from-compare`).")] = None,
    overwrite: Annotated[bool, Option("--overwrite", help="Replace an existing --out file (refused without it).")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Compare intrinsic-dimension estimators on the points in FILE (one shared neighbour search),
    with the exponents each estimate predicts.

    Exact duplicate rows are dropped and counted first; scikit-dimension keeps them, which breaks
    several of its estimators (docs/scikit_dimension.md)."""
    res, payload, notes = compare_file(file, methods, key=key, out=out, overwrite=overwrite, paper=paper, batch_size=batch_size,
                                       seed=seed, beta=beta, metric=metric, backend=backend, device=device)
    if _report(payload, notes, as_json):
        return
    batched = res.batch_size is not None
    t = Table(title=f"{file}: {res.n_points} points × {res.n_features}, {res.n_duplicates_removed} duplicate(s) removed"
                    + (f", {res.n_batches} batch(es) of {res.batch_size}" if batched else ""))
    for col in ["estimator", "d̂", *(["std over batches"] if batched else []), "time (s)", f"α_D (β={res.beta:g})", "α_N",
                "notes"]:
        t.add_column(col, justify="left" if col in ("estimator", "notes") else "right")
    for r in res.rows:
        t.add_row(r.method, _num(r.dimension, ".3f"), *([f"{r.dimension_std:.3f}"] if batched else []),
                  f"{r.seconds:.2f}", _num(r.alpha_d, ".4f"), _num(r.alpha_n, ".4f"), "; ".join(r.notes))
    console.print(t)
    console.print(f"shared neighbour search: k = {res.knn_k}, {res.knn_seconds:.2f} s ({res.knn_backend}); "
                  f"total {res.total_seconds:.2f} s")


@app.command("sample-manifold")
def sample(
    *,  # keyword-only: --out (required) comes after options with defaults, as in the help
    name: Annotated[str, Argument(help="sphere | cube | linear | swiss-roll | nonlinear.")],
    d: Annotated[int, Option("--d", help="Intrinsic dimension (2 for swiss-roll).")],
    ambient: Annotated[int, Option("--ambient", help="Ambient dimension D.")],
    n: Annotated[int, Option("--n", help="Number of points.")],
    noise: Annotated[float, Option("--noise", help="Std of isotropic Gaussian noise in R^D.")] = 0.0,
    seed: Annotated[int, Option("--seed")] = 0,
    out: Annotated[Path, Option("--out", help="Output .npy file.")],
    overwrite: Annotated[bool, Option("--overwrite", help="Replace an existing --out file (refused without it).")] = False,
    as_json: Annotated[bool, Option("--json", help="Print what was written as JSON.")] = False,
) -> None:
    """Sample a manifold of known intrinsic dimension, isometrically rotated into R^D, to FILE.npy."""
    info = write_manifold(out, name, d, ambient, n, noise=noise, seed=seed, overwrite=overwrite)
    if as_json:
        print_json(info)
    else:
        console.print(f"wrote {n} points of {name} (d = {info['d']}) in R^{ambient} to {out}")


@app.command("embed")
def embed(
    model: Annotated[str, Option("--model", help="A ttlab run folder, a Hugging Face causal-LM folder, a .gguf file or a registry model (gemma3-270m).")],
    out: Annotated[Path, Option("--out", help="vectors.npy (one layer) or vectors.npz (several layers + positions); metadata goes to <out>.json.")],
    corpus: Annotated[OptStr, Option("--corpus", help="Corpus spec (file, folder, .jsonl, hf:NAME, builtin:sotu). Default for a ttlab run: its own dataset.")] = None,
    split: Annotated[str, Option("--split", help="Which document split to embed: train | val | test.")] = "test",
    layer: Annotated[int, Option("--layer", help="Layer to keep (0 = embeddings, -1 = last, after the final LayerNorm).")] = -1,
    layers: Annotated[OptStr, Option("--layers", help="'all' or comma-separated layer indices (overrides --layer; needs an .npz output).")] = None,
    tokens_per_doc: Annotated[int, Option("--tokens-per-doc", help="Token positions sampled per document (per group with --position-groups).")] = 32,
    context: Annotated[int, Option("--context", help="Window length in tokens (clipped to the model's context).")] = 1024,
    window: Annotated[str, Option("--window", help="random (a random window per document) | prefix (the document's start, as the authors' code).")] = "random",
    max_docs: Annotated[OptInt, Option("--max-docs", help="Embed at most N documents.")] = None,
    windows_per_doc: Annotated[int, Option("--windows-per-doc", help="Non-overlapping windows per document (for corpora of few long documents).")] = 1,
    position_groups: Annotated[OptStr, Option(
        "--position-groups", help="Window-position edges, e.g. 0,16,64,128: sample --tokens-per-doc positions in each "
        "range.")] = None,
    seed: Annotated[int, Option("--seed", help="Seed of window and position sampling.")] = 0,
    split_seed: Annotated[int, Option("--split-seed", help="Seed of the document split (use the training run's).")] = 0,
    decode_errors: Annotated[str, Option("--decode-errors", help="Invalid UTF-8: strict (error) | replace.")] = "strict",
    batch_docs: Annotated[int, Option("--batch-docs", help="Documents per forward pass.")] = 8,
    which: Annotated[str, Option("--which", help="ttlab runs: final (ckpt.pt), best (best.pt) or init (the untrained start, from the run's seed: a control).")] = "final",
    estimate_id: Annotated[bool, Option(
        "--estimate/--no-estimate", help="Also estimate each layer's ID with the paper's protocol and print α_D, α_N "
        "predictions.")] = False,
    k: Annotated[int, Option("--k", help="--estimate: MLE neighbours K.")] = PAPER.k,
    average: Annotated[str, Option("--average", help="--estimate: mean | harmonic | median.")] = PAPER.average,
    batch_size: Annotated[int, Option("--batch-size", help="--estimate: protocol batch size.")] = PAPER.batch_size,
    as_json: Annotated[bool, Option("--json", help="Print the metadata (and estimates) as JSON.")] = False,
) -> None:
    """Sample token embeddings of a corpus from a causal LM (the paper's text-ID protocol)."""
    from ttlab.lm.embed import EmbedConfig, embed_corpus, text_intrinsic_dimension

    every_layer = layers is not None and layers.strip().lower() == "all"
    layer_sel = None if every_layer else parse_list(layers, "--layers", int) if layers is not None else (layer,)
    cfg = EmbedConfig(layers=layer_sel, tokens_per_doc=tokens_per_doc, context=context, window=window, windows_per_doc=windows_per_doc,
                      max_docs=max_docs, seed=seed, batch_docs=batch_docs, split=split, position_edges=parse_list(position_groups, "--position-groups", int))
    check_out_file(out, suffixes=(".npy", ".npz"))
    if out.suffix == ".npy" and (layer_sel is None or len(layer_sel) > 1):
        raise TTLabInputError(f"several layers need an .npz output: use --out {out.with_suffix('.npz')}.")
    with Progress(TextColumn("embedding"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console_err,
                  transient=True) as bar:
        task = bar.add_task("docs", total=None)
        emb = embed_corpus(model, corpus, cfg, split_seed=split_seed, which=which, errors=decode_errors,
                           progress=lambda done, total: bar.update(task, completed=done, total=total))
    if estimate_id:
        emb.meta["intrinsic_dim"] = [text_intrinsic_dimension(emb, i, batch_size=batch_size, k=k, average=average,
                                                              seed=seed) for i in emb.layers]
    emb.save(out)
    if as_json:
        print_json(emb.meta)
        return
    m, mm = emb.meta, emb.meta["model"]
    console.print(f"wrote {out} ({m['n_vectors']} vectors × {mm['width']}, layers {m['layers']}) from {m['n_docs']} documents in {m['wall_time_s']:.1f} s")
    console.print(f"  model {mm['name']} ({mm['n_layer']} layers); window {window}, {m['context_used']} tokens; last layer after final norm: {mm['final_norm_in_last_layer']}")
    for e in m.get("intrinsic_dim", []):
        console.print(f"  layer {e['layer']}: ID {e['intrinsic_dim']:.2f} (± {e['intrinsic_dim_std']:.2f} over batches, {e['n_vectors']} vectors) "
                      f"→ α_D {e['alpha_d_pred']:.3f}, α_N {e['alpha_n_pred']:.3f}")
