"""`ttlab id …` — intrinsic dimension of data (paper B)."""

from __future__ import annotations

import io
import os
import tempfile
import warnings
from pathlib import Path
from typing import Optional

import numpy as np
import typer

from ttlab.cli._common import console, console_err, print_json
from ttlab.errors import TTLabInputError

app = typer.Typer(
    help="Intrinsic dimension (ID) of point clouds: MLE, TwoNN, GRIDE, the paper's batched protocol.",
    no_args_is_help=True,
)


def _atomic_save_npy(path: Path, arr: np.ndarray) -> None:
    buf = io.BytesIO()
    np.save(buf, arr)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(buf.getvalue())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@app.command("estimate")
def estimate(
    file: Path = typer.Argument(..., help="Points, one per row: .npy, .npz, .pt/.pth, .csv or .tsv."),
    method: str = typer.Option("mle", "--method", help="mle | twonn | gride."),
    k: int = typer.Option(20, "--k", help="Neighbours: K for MLE; n2 for GRIDE (n1 = k // 2); unused by TwoNN."),
    average: str = typer.Option("mean", "--average", help="MLE: mean (paper's code) | harmonic (MacKay–Ghahramani) | median."),
    unbiased: bool = typer.Option(False, "--unbiased", help="MLE: use K-2 instead of K-1."),
    metric: str = typer.Option("euclidean", "--metric", help="euclidean | cosine."),
    batch_size: Optional[int] = typer.Option(None, "--batch-size", help="Paper's protocol: shuffled batches of N points, averaged."),
    paper: bool = typer.Option(False, "--paper", help="Paper's protocol: --batch-size 4096 unless given."),
    remainder: str = typer.Option("drop", "--remainder", help="Last partial batch: drop | merge | keep."),
    seed: int = typer.Option(0, "--seed", help="Seed of the shuffle into batches."),
    key: Optional[str] = typer.Option(None, "--key", help="Array name inside an .npz or a saved dict."),
    backend: str = typer.Option("auto", "--backend", help="Neighbour search: auto | torch | faiss | faiss-hnsw (approximate)."),
    device: Optional[str] = typer.Option(None, "--device", help="cpu | cuda (default: cuda if present)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the JSON result to this file."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON on stdout."),
) -> None:
    """Estimate the intrinsic dimension of the points in FILE."""
    from ttlab.intrinsic_dim import PAPER_BATCH_SIZE, estimate_id, load_points
    from ttlab.provenance import atomic_write_json

    if paper and batch_size is None:
        batch_size = PAPER_BATCH_SIZE
    X = load_points(file, key=key)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = estimate_id(
            X, method, k=k, average=average, unbiased=unbiased, metric=metric, batch_size=batch_size,
            seed=seed, remainder=remainder, backend=backend, device=device,
        )
    for msg in dict.fromkeys(str(w.message) for w in caught):
        console_err.print(f"[yellow]warning:[/] {msg}", highlight=False)
    payload = {"file": str(file), **res.to_dict()}
    if out is not None:
        atomic_write_json(out, payload)
    if as_json:
        print_json(payload)
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


@app.command("manifold")
def manifold(
    name: str = typer.Argument(..., help="sphere | cube | linear | swiss-roll | nonlinear."),
    d: int = typer.Option(..., "--d", help="Intrinsic dimension (2 for swiss-roll)."),
    ambient: int = typer.Option(..., "--ambient", help="Ambient dimension D."),
    n: int = typer.Option(..., "--n", help="Number of points."),
    noise: float = typer.Option(0.0, "--noise", help="Std of isotropic Gaussian noise in R^D."),
    seed: int = typer.Option(0, "--seed"),
    out: Path = typer.Option(..., "--out", help="Output .npy file."),
    as_json: bool = typer.Option(False, "--json", help="Print what was written as JSON."),
) -> None:
    """Sample a manifold of known intrinsic dimension, isometrically rotated into R^D, to FILE.npy."""
    from ttlab.intrinsic_dim import sample_manifold, true_dimension

    if out.suffix.lower() != ".npy":
        raise TTLabInputError(f"--out must end in .npy, got {out}.")
    X = sample_manifold(name, d, ambient, n, noise=noise, seed=seed)
    _atomic_save_npy(out, X)
    info = {"out": str(out), "manifold": name, "d": true_dimension(name, d), "ambient": ambient,
            "n": n, "noise": noise, "seed": seed, "shape": list(X.shape)}
    if as_json:
        print_json(info)
    else:
        console.print(f"wrote {n} points of {name} (d = {info['d']}) in R^{ambient} to {out}")
