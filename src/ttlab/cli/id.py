"""`ttlab id …` — intrinsic dimension of data (paper B): each command calls ttlab.intrinsic_dim (or ttlab.lm.embed).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer
from typer import Argument, Option

from ttlab.cli.common import (
    START_AGAIN,
    Json,
    OptInt,
    OptPath,
    OptStr,
    Setting,
    console,
    parse_list,
    print_json,
    print_view,
    print_warnings,
    run_with_progress,
)
from ttlab.configs import pick_fields
from ttlab.intrinsic_dim.api import make_estimator
from ttlab.intrinsic_dim.compare import compare
from ttlab.intrinsic_dim.files import compare_file, estimate_file, id_scale_file
from ttlab.intrinsic_dim.io import SAMPLE_MEMORY_LIMIT_GIB, write_manifold
from ttlab.intrinsic_dim.knn import BACKENDS as KNN_BACKENDS
from ttlab.intrinsic_dim.protocol import PAPER
from ttlab.intrinsic_dim.scale import IDScaleSettings
from ttlab.intrinsic_dim.views import compare_view, estimate_view, id_scale_view
from ttlab.lm.configs import WHICH, EmbedConfig
from ttlab.lm.corpus import CorpusSpec
from ttlab.markup import plain

app = typer.Typer(no_args_is_help=True, help="Intrinsic dimension (ID) of point clouds: MLE, TwoNN, GRIDE, the paper's "
                  "batched protocol; `compare` runs 19 estimators (scikit-dimension's set, the TwoNN posterior and the "
                  "binomial BID) with one shared neighbour search; `scale` draws the ID against the scale it is read at. Distances (--metric): euclidean (the "
                  "default; the paper's text), chord = sqrt(2 (1 - cos)) (Euclidean between unit-scaled rows) or "
                  "cosine = 1 - cos (scipy/scikit-learn; the paper's released code): the MLE on cosine is exactly half "
                  "the MLE on chord.")

FileArg = Annotated[Path, Argument(help="Points, one per row: .npy, .npz, .pt/.pth, .csv or .tsv.")]
MetricOpt = Annotated[str, Option("--metric", help="euclidean (paper's text) | chord = sqrt(2(1 - cos)) | cosine = 1 - cos (scipy's; the paper's code; MLE half of chord's).")]
SeedOpt = Annotated[int, Option("--seed", help="Seed of the shuffle into batches.")]
KeyOpt = Annotated[OptStr, Option("--key", help="Array name inside an .npz or a saved dict.")]
DeviceOpt = Annotated[OptStr, Option("--device", help="cpu | cuda (default: cuda if present).")]  # shared by estimate, compare
E = EmbedConfig  # embed's options set its fields and show their defaults

BACKEND_HELP = "Neighbour search: " + " | ".join(
    {"auto": "auto (k-d tree at low dimension, else torch)", "faiss-hnsw": "faiss-hnsw (approximate)"}.get(b, b)
    for b in KNN_BACKENDS) + "."
"""The ``--backend`` help of ``id estimate`` and ``id compare``, built from the library's list of backends."""


def _report(payload: dict[str, Any], notes: list[str], as_json: bool) -> bool:
    """Print the warnings and, with ``--json``, the payload; True when the JSON was the output."""
    print_warnings(notes)
    if as_json:
        print_json(payload)
    return as_json


@app.command("estimate")
def estimate(
    file: FileArg,
    method: Annotated[str, Option("--method", help="mle | twonn | gride | twonn_bayes (TwoNN's posterior, with a "
                                  "credible interval) | bid (binomial estimator, with a Cramér–Rao interval).")] = "mle",
    k: Annotated[int, Option("--k", help="Neighbours: K for MLE and BID; n2 for GRIDE (n1 = k // 2); unused by TwoNN "
                             "and twonn_bayes.")] = PAPER.k,
    average: Annotated[str, Option("--average", help="MLE: mean (paper's code) | harmonic (MacKay–Ghahramani) | median.")] = PAPER.average,
    unbiased: Annotated[bool, Option("--unbiased", help="MLE: use K-2 instead of K-1.")] = False,
    metric: MetricOpt = "euclidean",
    batch_size: Annotated[OptInt, Option("--batch-size", help="Paper's protocol: shuffled batches of N points, averaged.")] = None,
    paper: Annotated[bool, Option("--paper", help=f"Paper's protocol: --batch-size {PAPER.batch_size} unless given.")] = False,
    remainder: Annotated[str, Option("--remainder", help="Last partial batch: drop | merge | keep.")] = PAPER.remainder,
    seed: SeedOpt = PAPER.seed,
    key: KeyOpt = None,
    backend: Annotated[str, Option("--backend", help=BACKEND_HELP)] = "auto",
    device: DeviceOpt = None,
    out: Annotated[OptPath, Option("--out", help="Also write the JSON result to this file.")] = None,
    as_json: Json = False,
) -> None:
    """Estimate the intrinsic dimension of the points in FILE."""
    estimator = make_estimator(method, k=k, average=average, unbiased=unbiased, metric=metric, seed=seed,
                               batch_size=PAPER.batch_size if paper and batch_size is None else batch_size,
                               remainder=remainder, backend=backend, device=device)
    res, payload, notes = estimate_file(file, estimator, key=key, out=out)
    if not _report(payload, notes, as_json):
        print_view(estimate_view(res, file, metric))


@app.command("compare")
def compare_cmd(
    file: FileArg,
    methods: Annotated[str, Option(
        "--methods", help=f"'all' or comma-separated: mle (K={PAPER.k}, mean: the paper's), mle_harmonic, mle_median, "
        "twonn, twonn_bayes, gride, tle, mom, mada, mind_ml, corrint, danco, ess, lpca, lpca_pr, fishers, knn, ph, bid. "
        "Settings are scikit-dimension's defaults (gride: n1 = 1; `id estimate` uses n1 = 10) except mind_ml (D = "
        "n_features, not 10) and danco (D = min(n_features, 48), seed 0); twonn_bayes (the TwoNN posterior, Gamma(1, "
        "0.1) prior) and bid (binomial estimator, k = 20, ratio 0.9) also report a 95 % interval.")] = "all",
    paper: Annotated[bool, Option(
        "--paper", help=f"Paper's protocol for every estimator: seeded batches of {PAPER.batch_size} (or "
        "--batch-size), averaged; spread over batches.")] = False,
    batch_size: Annotated[OptInt, Option("--batch-size", help="Batch size of the protocol (implies batches).")] = None,
    beta: Annotated[float, Option("--beta", help="Hölder exponent β for the predicted α_D = 2β/(2β+d), α_N = 2β/d.")] = 1.0,
    metric: MetricOpt = "euclidean",
    seed: SeedOpt = PAPER.seed,
    key: KeyOpt = None,
    backend: Annotated[str, Option("--backend", help=BACKEND_HELP)] = "auto",
    device: DeviceOpt = None,
    out: Annotated[OptPath, Option("--out", help="Also write the JSON result to this file (input of `ttlab scaling predict --from-compare`).")] = None,
    plot: Annotated[OptPath, Option(
        "--plot", help="Also draw every estimator's ID (± its std over batches, with --paper or --batch-size) and the "
        "exponents α_D, α_N each estimate predicts, with the band `scaling predict --from-compare` reports, to this image "
        "(png, pdf or svg; checked before the work).")] = None,
    overwrite: Annotated[bool, Option("--overwrite", help="Replace an existing --out or --plot file (refused without it).")] = False,
    as_json: Json = False,
) -> None:
    """Compare intrinsic-dimension estimators on the points in FILE (one shared neighbour search),
    with the exponents each estimate predicts; --plot draws them.

    Exact duplicate rows are dropped and counted first; scikit-dimension keeps them, which breaks
    several of its estimators (docs/scikit_dimension.md)."""
    run = partial(compare, methods=methods, paper=paper, batch_size=batch_size, seed=seed, beta=beta, metric=metric,
                  backend=backend, device=device)
    res, payload, notes = compare_file(file, run, key=key, out=out, overwrite=overwrite, plot=plot)
    if not _report(payload, notes, as_json):
        print_view(compare_view(res, file, plot))


@app.command("scale")
def scale_cmd(
    file: FileArg,
    method: Annotated[str, Option(
        "--method", help="2nn (TwoNN on N, N/2, N/4, … -point disjoint random subsets) | gride (all points, n1 = 1, 2, 4, "
        "…, n2 = 2 n1) | both.")] = "both",
    min_points: Annotated[int, Option("--min-points", help="2nn: smallest subset (>= 10; DADApy's N_min is 10, but at "
                                      "10–15 points TwoNN reads ~10 % high).")] = 20,
    max_subsets: Annotated[int, Option("--max-subsets", help="2nn: subsets fitted per scale, at most (a large number: "
                                       "all, as DADApy).")] = 64,
    range_max: Annotated[int, Option("--range-max", help="gride: largest neighbour order n2 (DADApy's default).")] = 64,
    discard_fraction: Annotated[float, Option("--discard-fraction", help="2nn: TwoNN's largest ratios discarded.")] = 0.1,
    metric: MetricOpt = "euclidean",
    seed: Annotated[int, Option("--seed", help="Seed of the shuffle into subsets.")] = 0,
    key: KeyOpt = None,
    backend: Annotated[str, Option("--backend", help=BACKEND_HELP)] = "auto",
    device: DeviceOpt = None,
    out: Annotated[OptPath, Option("--out", help="Also write the JSON result to this file.")] = None,
    plot: Annotated[OptPath, Option(
        "--plot", help="Also draw the ID against the scale r (log axis) to this image (png, pdf or svg; checked before "
        "the work).")] = None,
    overwrite: Annotated[bool, Option("--overwrite", help="Replace an existing --out or --plot file (refused without it).")] = False,
    as_json: Json = False,
) -> None:
    """The intrinsic dimension of the points in FILE against the scale r it is read at (DADApy's definitions): 2NN on
    decimated subsets and GRIDE across neighbour orders. Read the ID where it is flat in r: below, noise raises it;
    above, curvature, edges and too few points bend it."""
    settings = IDScaleSettings(method, min_points, max_subsets, range_max, discard_fraction, seed, metric, backend,
                               device)
    res, payload, notes = id_scale_file(file, settings, key=key, out=out, overwrite=overwrite, plot=plot)
    if not _report(payload, notes, as_json):
        print_view(id_scale_view(res, file, plot))


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
    memory_limit_gib: Annotated[float, Option("--memory-limit", help="GiB the sample may hold (refused above, before any "
                                          "allocation).")] = SAMPLE_MEMORY_LIMIT_GIB,
    as_json: Annotated[bool, Option("--json", help="Print what was written as JSON.")] = False,
) -> None:
    """Sample a manifold of known intrinsic dimension, isometrically rotated into R^D, to FILE.npy."""
    info = write_manifold(out, name, d, ambient, n, noise=noise, seed=seed, overwrite=overwrite,
                          memory_limit_gib=memory_limit_gib)
    print_json(info) if as_json else console.print(plain(f"wrote {n} points of {name} (d = {info['d']}) in R^{ambient} to {out}"))


@app.command("embed")
def embed(
    model: Annotated[str, Option("--model", help="A ttlab run folder, a Hugging Face causal-LM folder, a .gguf file or a registry model (gemma3-270m).")],
    out: Annotated[Path, Option("--out", help="vectors.npy (one layer) or vectors.npz (several layers + positions); metadata goes to <out>.json.")],
    corpus: Annotated[OptStr, Option("--corpus", help="Corpus spec (file, folder, .jsonl, hf:NAME, builtin:sotu). Default for a ttlab run: its own dataset.")] = None,
    split: Setting(E, "split") = E.split,
    layer: Annotated[int, Option("--layer", help="Layer to keep (0 = embeddings, -1 = last, after the final LayerNorm).")] = -1,
    layers: Annotated[OptStr, Option("--layers", help="'all' or comma-separated layer indices (overrides --layer; needs an .npz output).")] = None,
    tokens_per_doc: Setting(E, "tokens_per_doc") = E.tokens_per_doc, context: Setting(E, "context") = E.context,
    window: Setting(E, "window") = E.window, max_docs: Setting(E, "max_docs") = E.max_docs,
    windows_per_doc: Setting(E, "windows_per_doc") = E.windows_per_doc,
    position_edges: Annotated[OptStr, Option(
        "--position-groups", help="Window-position edges, e.g. 0,16,64,128: sample --tokens-per-doc positions in each "
        "range.")] = None,
    seed: Setting(E, "seed") = E.seed, batch_docs: Setting(E, "batch_docs") = E.batch_docs,
    split_seed: Annotated[int, Option("--split-seed", help="Seed of the document split (use the training run's).")] = CorpusSpec.split_seed,
    errors: Setting(CorpusSpec, "errors", "--decode-errors") = CorpusSpec.errors,
    which: Annotated[str, Option("--which", help="ttlab runs: final (ckpt.pt), best (best.pt) or init (the untrained start, from the run's seed: a control); pretrained models: final (the released weights) or init (an untrained copy of the architecture, seed 0: a control).")] = WHICH[0],
    estimate_id: Annotated[bool, Option(
        "--estimate/--no-estimate", help="Also estimate each layer's ID with the paper's protocol and print α_D, α_N "
        "predictions.")] = False,
    k: Annotated[int, Option("--k", help="--estimate: MLE neighbours K.")] = PAPER.k,
    average: Annotated[str, Option("--average", help="--estimate: mean | harmonic | median.")] = PAPER.average,
    batch_size: Annotated[int, Option("--batch-size", help="--estimate: protocol batch size.")] = PAPER.batch_size,
    as_json: Annotated[bool, Option("--json", help="Print the metadata (and estimates) as JSON.")] = False,
) -> None:
    """Sample token embeddings of a corpus from a causal LM (the paper's text-ID protocol)."""
    from ttlab.lm.embed import embed_to_file, embed_view

    sel = (layer,) if layers is None else layers if layers.strip().lower() == "all" else parse_list(layers, "--layers", int)
    given = {k: v for k, v in pick_fields(EmbedConfig, locals()).items() if k != "layers"}  # layers: embed_to_file's
    cfg = EmbedConfig(**{**given, "position_edges": parse_list(position_edges, "--position-groups", int)})
    emb = run_with_progress(lambda progress: embed_to_file(
        model, out, corpus, cfg, layers=sel, split_seed=split_seed, which=which, errors=errors, estimate_id=estimate_id,
        k=k, average=average, batch_size=batch_size, progress=lambda done, total: progress("embedding", done, total)),
        on_interrupt=START_AGAIN)
    print_json(emb.meta) if as_json else print_view(embed_view(emb, out))
