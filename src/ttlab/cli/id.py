"""`ttlab id …` — intrinsic dimension of data (paper B).

Imports: typer, numpy, ttlab.cli._common, ttlab.cli.lm (the shared --decode-errors option), ttlab.errors,
ttlab.intrinsic_dim.protocol (the paper's K and batch size); inside the commands rich,
ttlab.intrinsic_dim, ttlab.lm (embed), ttlab.outputs and ttlab.provenance.
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path
from typing import Optional

import numpy as np
import typer

from ttlab.cli._common import console, console_err, parse_list, print_json
from ttlab.cli.lm import DecodeOpt
from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.protocol import PAPER

app = typer.Typer(
    help="Intrinsic dimension (ID) of point clouds: MLE, TwoNN, GRIDE, the paper's batched protocol; "
    "`compare` runs 17 estimators (scikit-dimension's set) with one shared neighbour search. "
    "Distances (--metric): euclidean (the default; the paper's text), chord = sqrt(2 (1 - cos)) "
    "(Euclidean between unit-scaled rows) or cosine = 1 - cos (scipy/scikit-learn; the paper's released "
    "code): the MLE on cosine is exactly half the MLE on chord.",
    no_args_is_help=True,
)


# options shared by `estimate` and `compare`
MetricOpt = typer.Option(
    "euclidean", "--metric",
    help="euclidean (paper's text) | chord = sqrt(2(1 - cos)) | cosine = 1 - cos (scipy's; the paper's code; "
    "MLE half of chord's).",
)
SeedOpt = typer.Option(0, "--seed", help="Seed of the shuffle into batches.")
KeyOpt = typer.Option(None, "--key", help="Array name inside an .npz or a saved dict.")
DeviceOpt = typer.Option(None, "--device", help="cpu | cuda (default: cuda if present).")
JsonOpt = typer.Option(False, "--json", help="Print the result as JSON on stdout.")


def _report_result(file: Path, res, caught: list, out: Optional[Path], as_json: bool) -> bool:
    """Print the caught warnings, write ``--out``, print ``--json``; True when the JSON was the output."""
    from ttlab.provenance import atomic_write_json

    for msg in dict.fromkeys(str(w.message) for w in caught):
        console_err.print(f"[yellow]warning:[/] {msg}", highlight=False)
    payload = {"file": str(file), **res.to_dict()}
    if out is not None:
        atomic_write_json(out, payload)
    if as_json:
        print_json(payload)
    return as_json


def _atomic_save_npy(path: Path, arr: np.ndarray) -> None:
    from ttlab.provenance import atomic_write_bytes

    buf = io.BytesIO()
    np.save(buf, arr)
    atomic_write_bytes(path, buf.getvalue())


@app.command("estimate")
def estimate(
    file: Path = typer.Argument(..., help="Points, one per row: .npy, .npz, .pt/.pth, .csv or .tsv."),
    method: str = typer.Option("mle", "--method", help="mle | twonn | gride."),
    k: int = typer.Option(PAPER.k, "--k", help="Neighbours: K for MLE; n2 for GRIDE (n1 = k // 2); unused by TwoNN."),
    average: str = typer.Option("mean", "--average", help="MLE: mean (paper's code) | harmonic (MacKay–Ghahramani) | median."),
    unbiased: bool = typer.Option(False, "--unbiased", help="MLE: use K-2 instead of K-1."),
    metric: str = MetricOpt,
    batch_size: Optional[int] = typer.Option(None, "--batch-size", help="Paper's protocol: shuffled batches of N points, averaged."),
    paper: bool = typer.Option(False, "--paper", help=f"Paper's protocol: --batch-size {PAPER.batch_size} unless given."),
    remainder: str = typer.Option("drop", "--remainder", help="Last partial batch: drop | merge | keep."),
    seed: int = SeedOpt,
    key: Optional[str] = KeyOpt,
    backend: str = typer.Option("auto", "--backend", help="Neighbour search: auto (k-d tree at low dimension, else torch) | tree | torch | faiss | faiss-hnsw (approximate)."),
    device: Optional[str] = DeviceOpt,
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the JSON result to this file."),
    as_json: bool = JsonOpt,
) -> None:
    """Estimate the intrinsic dimension of the points in FILE."""
    from ttlab.intrinsic_dim import estimate_id, load_points
    from ttlab.outputs import check_out_file

    if out is not None:
        check_out_file(out, inputs=(file,))
    if paper and batch_size is None:
        batch_size = PAPER.batch_size
    X = load_points(file, key=key)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = estimate_id(
            X, method, k=k, average=average, unbiased=unbiased, metric=metric, batch_size=batch_size,
            seed=seed, remainder=remainder, backend=backend, device=device,
        )
    if _report_result(file, res, caught, out, as_json):
        return
    console.print(f"[bold]{file}[/]: {res.method} ID = [bold]{res.dimension:.3f}[/]")
    console.print(
        f"  points {res.n_points}, duplicates removed {res.n_duplicates_removed}, used {res.n_used}; "
        f"metric {metric}; neighbours {res.neighbors['backend']}"
    )
    if res.batches is not None:
        console.print(
            f"  {len(res.batches)} batch(es) of {res.batch_sizes[0]}: mean {res.dimension:.3f}, "
            f"std {res.dimension_std:.3f}, sem {res.dimension_sem:.3f}"
        )
        console.print("  per batch: " + ", ".join(f"{v:.3f}" for v in res.batches))
    if "error" in res.extras:
        console.print(f"  standard error {res.extras['error']:.3f}")


@app.command("compare")
def compare_cmd(
    file: Path = typer.Argument(..., help="Points, one per row: .npy, .npz, .pt/.pth, .csv or .tsv."),
    methods: str = typer.Option(
        "all", "--methods",
        help=f"'all' or comma-separated: mle (K={PAPER.k}, mean: the paper's), mle_harmonic, mle_median, twonn, gride, tle, "
             "mom, mada, mind_ml, corrint, danco, ess, lpca, lpca_pr. Settings are scikit-dimension's defaults (gride: "
             "n1 = 1; `id estimate` uses n1 = 10) except mind_ml (D = n_features, not 10) and danco (D = min(n_features, 48), seed 0).",
    ),
    paper: bool = typer.Option(False, "--paper", help=f"Paper's protocol for every estimator: seeded batches of {PAPER.batch_size} (or --batch-size), averaged; spread over batches."),
    batch_size: Optional[int] = typer.Option(None, "--batch-size", help="Batch size of the protocol (implies batches)."),
    beta: float = typer.Option(1.0, "--beta", help="Hölder exponent β for the predicted α_D = 2β/(2β+d), α_N = 2β/d."),
    metric: str = MetricOpt,
    seed: int = SeedOpt,
    key: Optional[str] = KeyOpt,
    backend: str = typer.Option("auto", "--backend", help="Neighbour search: auto | torch | faiss | faiss-hnsw (approximate)."),
    device: Optional[str] = DeviceOpt,
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the JSON result to this file (input of `ttlab scaling predict --from-compare`)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing --out file (refused without it)."),
    as_json: bool = JsonOpt,
) -> None:
    """Compare intrinsic-dimension estimators on the points in FILE (one shared neighbour search),
    with the exponents each estimate predicts.

    Exact duplicate rows are dropped and counted first; scikit-dimension keeps them, which breaks
    several of its estimators (docs/scikit_dimension.md)."""
    from rich.table import Table

    from ttlab.intrinsic_dim import compare, load_points
    from ttlab.outputs import check_out_file

    if out is not None:  # before any work: a wrong --out must not cost the whole comparison
        check_out_file(out, inputs=(file,), overwrite=overwrite)
    X = load_points(file, key=key)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = compare(X, methods, paper=paper, batch_size=batch_size, seed=seed, beta=beta, metric=metric,
                      backend=backend, device=device)
    if _report_result(file, res, caught, out, as_json):
        return
    batched = res.batch_size is not None
    t = Table(title=f"{file}: {res.n_points} points × {res.n_features}, {res.n_duplicates_removed} duplicate(s) removed"
                    + (f", {res.n_batches} batch(es) of {res.batch_size}" if batched else ""))
    for col, just in (("estimator", "left"), ("d̂", "right"), ("std over batches" if batched else "", "right"),
                      ("time (s)", "right"), (f"α_D (β={res.beta:g})", "right"), ("α_N", "right"), ("notes", "left")):
        if col:
            t.add_column(col, justify=just)  # type: ignore[arg-type]
    for r in res.rows:
        cells = [r.method, "—" if r.dimension is None else f"{r.dimension:.3f}"]
        if batched:
            cells.append(f"{r.dimension_std:.3f}")
        cells += [f"{r.seconds:.2f}", "—" if r.alpha_d is None else f"{r.alpha_d:.4f}",
                  "—" if r.alpha_n is None else f"{r.alpha_n:.4f}", "; ".join(r.notes)]
        t.add_row(*cells)
    console.print(t)
    console.print(f"shared neighbour search: k = {res.knn_k}, {res.knn_seconds:.2f} s ({res.knn_backend}); "
                  f"total {res.total_seconds:.2f} s")


@app.command("manifold")
def manifold(
    name: str = typer.Argument(..., help="sphere | cube | linear | swiss-roll | nonlinear."),
    d: int = typer.Option(..., "--d", help="Intrinsic dimension (2 for swiss-roll)."),
    ambient: int = typer.Option(..., "--ambient", help="Ambient dimension D."),
    n: int = typer.Option(..., "--n", help="Number of points."),
    noise: float = typer.Option(0.0, "--noise", help="Std of isotropic Gaussian noise in R^D."),
    seed: int = typer.Option(0, "--seed"),
    out: Path = typer.Option(..., "--out", help="Output .npy file."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing --out file (refused without it)."),
    as_json: bool = typer.Option(False, "--json", help="Print what was written as JSON."),
) -> None:
    """Sample a manifold of known intrinsic dimension, isometrically rotated into R^D, to FILE.npy."""
    from ttlab.intrinsic_dim import sample_manifold, true_dimension
    from ttlab.outputs import check_out_file

    check_out_file(out, suffixes=(".npy",), overwrite=overwrite)
    X = sample_manifold(name, d, ambient, n, noise=noise, seed=seed)
    _atomic_save_npy(out, X)
    info = {"out": str(out), "manifold": name, "d": true_dimension(name, d), "ambient": ambient,
            "n": n, "noise": noise, "seed": seed, "shape": list(X.shape)}
    if as_json:
        print_json(info)
    else:
        console.print(f"wrote {n} points of {name} (d = {info['d']}) in R^{ambient} to {out}")


@app.command("embed")
def embed(
    model: str = typer.Option(..., "--model", help="A ttlab run folder, a Hugging Face causal-LM folder, a .gguf file or a registry model (gemma3-270m)."),
    out: Path = typer.Option(..., "--out", help="vectors.npy (one layer) or vectors.npz (several layers + positions); metadata goes to <out>.json."),
    corpus: Optional[str] = typer.Option(None, "--corpus", help="Corpus spec (file, folder, .jsonl, hf:NAME, builtin:sotu). Default for a ttlab run: its own dataset."),
    split: str = typer.Option("test", "--split", help="Which document split to embed: train | val | test."),
    layer: int = typer.Option(-1, "--layer", help="Layer to keep (0 = embeddings, -1 = last, after the final LayerNorm)."),
    layers: Optional[str] = typer.Option(None, "--layers", help="'all' or comma-separated layer indices (overrides --layer; needs an .npz output)."),
    tokens_per_doc: int = typer.Option(32, "--tokens-per-doc", help="Token positions sampled per document (per group with --position-groups)."),
    context: int = typer.Option(1024, "--context", help="Window length in tokens (clipped to the model's context)."),
    window: str = typer.Option("random", "--window", help="random (a random window per document) | prefix (the document's start, as the authors' code)."),
    max_docs: Optional[int] = typer.Option(None, "--max-docs", help="Embed at most N documents."),
    windows_per_doc: int = typer.Option(1, "--windows-per-doc", help="Non-overlapping windows per document (for corpora of few long documents)."),
    position_groups: Optional[str] = typer.Option(None, "--position-groups", help="Window-position edges, e.g. 0,16,64,128: sample --tokens-per-doc positions in each range."),
    seed: int = typer.Option(0, "--seed", help="Seed of window and position sampling."),
    split_seed: int = typer.Option(0, "--split-seed", help="Seed of the document split (use the training run's)."),
    decode_errors: str = DecodeOpt,
    batch_docs: int = typer.Option(8, "--batch-docs", help="Documents per forward pass."),
    which: str = typer.Option("final", "--which", help="ttlab runs: final (ckpt.pt), best (best.pt) or init (the untrained start, from the run's seed: a control)."),
    estimate_id: bool = typer.Option(False, "--estimate/--no-estimate", help="Also estimate each layer's ID with the paper's protocol and print α_D, α_N predictions."),
    k: int = typer.Option(PAPER.k, "--k", help="--estimate: MLE neighbours K."),
    average: str = typer.Option("mean", "--average", help="--estimate: mean | harmonic | median."),
    batch_size: int = typer.Option(PAPER.batch_size, "--batch-size", help="--estimate: protocol batch size."),
    as_json: bool = typer.Option(False, "--json", help="Print the metadata (and estimates) as JSON."),
) -> None:
    """Sample token embeddings of a corpus from a causal LM (the paper's text-ID protocol)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ttlab.lm.embed import EmbedConfig, embed_corpus, text_intrinsic_dimension

    if layers is not None and layers.strip().lower() == "all":
        layer_sel: Optional[tuple[int, ...]] = None
    elif layers is not None:
        layer_sel = parse_list(layers, "--layers", int)
    else:
        layer_sel = (layer,)
    cfg = EmbedConfig(layers=layer_sel, tokens_per_doc=tokens_per_doc, context=context, window=window,
                      windows_per_doc=windows_per_doc, max_docs=max_docs, seed=seed, batch_docs=batch_docs, split=split,
                      position_edges=parse_list(position_groups, "--position-groups", int))
    from ttlab.outputs import check_out_file

    check_out_file(out, suffixes=(".npy", ".npz"))
    if out.suffix == ".npy" and (layer_sel is None or len(layer_sel) > 1):
        raise TTLabInputError(f"several layers need an .npz output: use --out {out.with_suffix('.npz')}.")
    with Progress(TextColumn("embedding"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console_err, transient=True) as bar:
        task = bar.add_task("docs", total=None)
        emb = embed_corpus(model, corpus, cfg, split_seed=split_seed, which=which, errors=decode_errors,
                           progress=lambda done, total: bar.update(task, completed=done, total=total))
    if estimate_id:
        est = [text_intrinsic_dimension(emb, i, batch_size=batch_size, k=k, average=average, seed=seed)
               for i in emb.layers]
        emb.meta["intrinsic_dim"] = est
    emb.save(out)
    if as_json:
        print_json(emb.meta)
        return
    m = emb.meta
    console.print(f"wrote {out} ({m['n_vectors']} vectors × {m['model']['width']}, layers {m['layers']}) "
                  f"from {m['n_docs']} documents in {m['wall_time_s']:.1f} s")
    console.print(f"  model {m['model']['name']} ({m['model']['n_layer']} layers); window {window}, "
                  f"{m['context_used']} tokens; last layer after final norm: {m['model']['final_norm_in_last_layer']}")
    for e in m.get("intrinsic_dim", []):
        console.print(f"  layer {e['layer']}: ID {e['intrinsic_dim']:.2f} (± {e['intrinsic_dim_std']:.2f} over batches, "
                      f"{e['n_vectors']} vectors) → α_D {e['alpha_d_pred']:.3f}, α_N {e['alpha_n_pred']:.3f}")
