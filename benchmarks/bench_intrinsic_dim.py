"""Benchmark of ttlab.intrinsic_dim: speed against the matrix-product floor and scikit-dimension,
the paper's batched protocol, optional approximate/GPU neighbours, and an accuracy table.

Run on demand (minutes at full size):

    .venv/bin/python benchmarks/bench_intrinsic_dim.py                 # full: 50,000 x 768 and 128,000 x 768
    .venv/bin/python benchmarks/bench_intrinsic_dim.py --quick         # 8,000 x 768 and 20,480 x 768
    .venv/bin/python benchmarks/bench_intrinsic_dim.py --only accuracy # rewrite docs/intrinsic_dim_accuracy.md

Every timing runs in a fresh subprocess on the same saved data (so peak memory is per method),
methods are interleaved and repeated, and the minimum is reported: the machine may be shared,
and the minimum is the least disturbed run. Ratios are between numbers of the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "intrinsic_dim_accuracy.md"


# ------------------------------------------------------------------------------------------ workers


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _worker(kind: str, data: str, opts: dict) -> dict:
    """Run one timed job in this (fresh) process and return a JSON-able dict."""
    import torch

    X = np.load(data)
    base_rss = _peak_rss_mib()
    k = opts.get("k", 20)
    warnings.simplefilter("ignore")
    if kind == "floor":  # the bare n x n x D float32 product, in row chunks (same FLOPs, bounded memory)
        Xt = torch.from_numpy(X)
        out = torch.empty(4096, len(X))
        Xt[:64] @ Xt[:64].T  # warm up the BLAS
        t0 = time.perf_counter()
        for a in range(0, len(X), 4096):
            b = min(len(X), a + 4096)
            torch.mm(Xt[a:b], Xt.T, out=out[: b - a])
        return {"seconds": time.perf_counter() - t0}
    if kind == "ours":
        from ttlab.intrinsic_dim import MLE

        MLE(k=k).fit(X[:2048])  # warm up
        t0 = time.perf_counter()
        est = MLE(k=k, average="mean", batch_size=opts.get("batch_size"), block_size=opts.get("block", 2048),
                  backend=opts.get("backend", "auto"), device=opts.get("device")).fit(X)
        sec = time.perf_counter() - t0
        return {"seconds": sec, "dimension": est.dimension_, "n_fallback": est.n_fallback_,
                "batches": None if est.batch_dimensions_ is None else est.batch_dimensions_.tolist(),
                "peak_rss_mib": _peak_rss_mib(), "data_rss_mib": base_rss}
    if kind == "skdim":
        import skdim

        from ttlab.intrinsic_dim import split_batches

        skdim.id.MLE().fit(X[:2048], n_neighbors=k, comb="mean", n_jobs=-1)  # warm up
        t0 = time.perf_counter()
        if opts.get("batch_size"):
            dims = [skdim.id.MLE().fit(X[b], n_neighbors=k, comb="mean", n_jobs=-1).dimension_
                    for b in split_batches(len(X), opts["batch_size"], seed=0)]
            dim = float(np.mean(dims))
        else:
            dims, dim = None, float(skdim.id.MLE().fit(X, n_neighbors=k, comb="mean", n_jobs=-1).dimension_)
        return {"seconds": time.perf_counter() - t0, "dimension": dim, "batches": dims,
                "peak_rss_mib": _peak_rss_mib()}
    if kind == "approx":  # faiss HNSW (approximate) or CUDA: recall of neighbours and change of the estimate
        from ttlab.intrinsic_dim import MLE, kneighbors
        from ttlab.intrinsic_dim.estimators import mle_pointwise

        exact = kneighbors(X, k)
        t0 = time.perf_counter()
        other = kneighbors(X, k, backend=opts["backend"], device=opts.get("device"))
        sec = time.perf_counter() - t0
        hits = [len(np.intersect1d(a, b)) for a, b in zip(exact.indices, other.indices)]
        d_exact = float(np.mean(mle_pointwise(exact.distances)))
        d_other = float(np.mean(mle_pointwise(other.distances)))
        t1 = time.perf_counter()
        MLE(k=k).fit(X)
        return {"seconds": sec, "seconds_exact_mle": time.perf_counter() - t1, "recall": float(np.sum(hits) / exact.indices.size),
                "dimension_exact": d_exact, "dimension": d_other}
    raise ValueError(kind)


def _run(kind: str, data: str, **opts) -> dict:
    cmd = [sys.executable, __file__, "--_worker", kind, "--_data", data, "--_opts", json.dumps(opts)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(f"worker {kind} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def _best(runs: list[dict]) -> dict:
    best = min(runs, key=lambda r: r["seconds"])
    return {**best, "all_seconds": [round(r["seconds"], 3) for r in runs]}


# ------------------------------------------------------------------------------------------ sections


def _data(path: Path, n: int, dim: int, seed: int) -> str:
    from ttlab.intrinsic_dim import sample_manifold

    if not path.exists():
        X = sample_manifold("nonlinear", 10, dim, n, noise=0.01, seed=seed, dtype=np.float32)
        np.save(path, X)
    return str(path)


def bench_exact(tmp: Path, n: int, dim: int, repeats: int, skip_skdim: bool) -> dict:
    data = _data(tmp / f"exact_{n}_{dim}.npy", n, dim, 0)
    floor, ours, sk = [], [], []
    for r in range(repeats):
        floor.append(_run("floor", data))
        ours.append(_run("ours", data))
        if not skip_skdim and r == 0:  # one run: it is the slow one
            sk.append(_run("skdim", data))
        print(f"  repeat {r + 1}: floor {floor[-1]['seconds']:.1f}s, ours {ours[-1]['seconds']:.1f}s"
              + (f", skdim {sk[-1]['seconds']:.1f}s" if sk and r == 0 else ""), flush=True)
    out = {"n": n, "dim": dim, "floor": _best(floor), "ours": _best(ours)}
    out["ratio_to_floor"] = out["ours"]["seconds"] / out["floor"]["seconds"]
    if sk:
        out["skdim"] = _best(sk)
        out["speedup_vs_skdim"] = out["skdim"]["seconds"] / out["ours"]["seconds"]
        out["relative_difference"] = abs(out["ours"]["dimension"] - out["skdim"]["dimension"]) / out["skdim"]["dimension"]
    return out


def bench_protocol(tmp: Path, n: int, dim: int, batch: int, repeats: int, skip_skdim: bool) -> dict:
    data = _data(tmp / f"protocol_{n}_{dim}.npy", n, dim, 1)
    ours, sk = [], []
    for r in range(repeats):
        ours.append(_run("ours", data, batch_size=batch))
        if not skip_skdim:
            sk.append(_run("skdim", data, batch_size=batch))
        print(f"  repeat {r + 1}: ours {ours[-1]['seconds']:.1f}s" + (f", skdim {sk[-1]['seconds']:.1f}s" if sk else ""), flush=True)
    out = {"n": n, "dim": dim, "batch_size": batch, "ours": _best(ours)}
    if sk:
        out["skdim"] = _best(sk)
        out["speedup_vs_skdim"] = out["skdim"]["seconds"] / out["ours"]["seconds"]
        b1, b2 = np.array(out["ours"]["batches"]), np.array(out["skdim"]["batches"])
        out["max_relative_batch_difference"] = float(np.max(np.abs(b1 - b2) / b2))
    return out


def bench_optional(tmp: Path, n: int, dim: int) -> dict:
    import torch

    from ttlab.intrinsic_dim import faiss_available

    data = _data(tmp / f"exact_{n}_{dim}.npy", n, dim, 0)
    out: dict = {}
    if faiss_available():
        out["faiss_hnsw"] = _run("approx", data, backend="faiss-hnsw")
        out["faiss_flat"] = _run("approx", data, backend="faiss")
    else:
        out["faiss"] = "not installed (pip install faiss-cpu to measure)"
    if torch.cuda.is_available():
        out["cuda"] = _run("approx", data, backend="torch", device="cuda")
    else:
        out["cuda"] = "no GPU on this machine"
    return out


ACC_CASES = [("sphere", 2), ("sphere", 5), ("sphere", 10), ("cube", 3), ("cube", 8), ("linear", 5),
             ("swiss-roll", 2), ("nonlinear", 4), ("nonlinear", 8)]


def bench_accuracy(n: int, ambient: int, seeds: int, noise_levels: tuple[float, ...]) -> str:
    """Mean relative error |d_hat - d| / d per estimator, ours and scikit-dimension's, as markdown."""
    import skdim

    from ttlab.intrinsic_dim import GRIDE, MLE, TwoNN, sample_manifold, true_dimension
    from ttlab.provenance import versions

    warnings.simplefilter("ignore")
    est = {
        "MLE K=20, mean (paper)": (lambda: MLE(k=20), lambda X: skdim.id.MLE().fit(X, n_neighbors=20, comb="mean").dimension_),
        "MLE K=20, harmonic": (lambda: MLE(k=20, average="harmonic"), lambda X: skdim.id.MLE().fit(X, n_neighbors=20, comb="mle").dimension_),
        "MLE K=20, mean, K-2": (lambda: MLE(k=20, unbiased=True), lambda X: skdim.id.MLE(unbiased=True).fit(X, n_neighbors=20, comb="mean").dimension_),
        "TwoNN (10% discarded)": (lambda: TwoNN(), lambda X: skdim.id.TwoNN().fit(X).dimension_),
        "GRIDE n1=10, n2=20": (lambda: GRIDE(n1=10), lambda X: skdim.id.GRIDE(n1=10, n2=20).fit(X).dimension_),
    }
    rows, per_case = [], {}
    for noise in noise_levels:
        errs = {name: ([], []) for name in est}
        for name_m, d in ACC_CASES:
            true = true_dimension(name_m, d)
            for seed in range(seeds):
                X = sample_manifold(name_m, d, ambient, n, noise=noise, seed=100 + seed)
                for name, (ours, ref) in est.items():
                    o, r = ours().fit(X).dimension_, float(ref(X))
                    errs[name][0].append(abs(o - true) / true)
                    errs[name][1].append(abs(r - true) / true)
                    per_case.setdefault((noise, name_m, d), {}).setdefault(name, []).append(o)
        for name, (o, r) in errs.items():
            rows.append(f"| {noise:g} | {name} | {100 * np.mean(o):.1f} % | {100 * np.mean(r):.1f} % |")
    v = versions(extra=("scikit-dimension", "scikit-learn"))
    lines = [
        "# Intrinsic-dimension estimators: accuracy on manifolds of known dimension",
        "",
        "Generated by `benchmarks/bench_intrinsic_dim.py --only accuracy` "
        f"(ttlab {v['ttlab']}, scikit-dimension {v['scikit-dimension']}, numpy {v['numpy']}).",
        "",
        f"Data: {len(ACC_CASES)} manifolds ({', '.join(f'{m} d={d}' for m, d in ACC_CASES)}), "
        f"n = {n} points each, isometrically rotated into R^{ambient}, {seeds} seeds, Gaussian noise of the "
        "given standard deviation per ambient coordinate (`ttlab.intrinsic_dim.manifolds`).",
        "Entry: mean over manifolds and seeds of the relative error |d̂ − d| / d. "
        "Ours and scikit-dimension's use identical definitions (the test suite checks agreement to 1e-6), "
        "so equal columns are the expected outcome: the point of ttlab is speed, duplicate handling and the "
        "paper's protocol, not a different number.",
        "",
        "| noise | estimator | ttlab | scikit-dimension |",
        "| --- | --- | --- | --- |",
        *rows,
        "",
        "Per manifold (ttlab, mean estimate over seeds):",
        "",
        "| noise | manifold | d | " + " | ".join(est) + " |",
        "| --- | --- | --- | " + " | ".join("---" for _ in est) + " |",
    ]
    for (noise, m, d), vals in per_case.items():
        lines.append(f"| {noise:g} | {m} | {true_dimension(m, d)} | " + " | ".join(f"{np.mean(vals[k]):.2f}" for k in est) + " |")
    lines += [
        "",
        "Reading the table: every estimator under-estimates at d = 8–10 with a few thousand points "
        "(too few neighbours inside the curved region; the well-known negative bias in high d), the "
        "arithmetic mean of MLE pointwise estimates is biased up by (K−1)/(K−2) at low d, and small-scale "
        "estimators (TwoNN, MLE) read noise as extra dimensions while GRIDE at a larger scale (n1 = 10) "
        "is less affected.",
        "",
    ]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------ main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes (8,000 and 20,480 points)")
    ap.add_argument("--n", type=int, help="points for the exact-MLE benchmark (default 50,000)")
    ap.add_argument("--protocol-n", type=int, help="points for the protocol benchmark (default 128,000)")
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--batch-size", type=int, default=4096)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--skip-skdim", action="store_true")
    ap.add_argument("--only", choices=["exact", "protocol", "optional", "accuracy"], action="append")
    ap.add_argument("--json-out", type=Path, help="write all numbers to this JSON file")
    ap.add_argument("--acc-n", type=int, default=2000)
    ap.add_argument("--acc-seeds", type=int, default=3)
    ap.add_argument("--_worker")
    ap.add_argument("--_data")
    ap.add_argument("--_opts", default="{}")
    args = ap.parse_args()
    if args._worker:
        print(json.dumps(_worker(args._worker, args._data, json.loads(args._opts))))
        return
    n = args.n or (8000 if args.quick else 50_000)
    pn = args.protocol_n or (20_480 if args.quick else 128_000)
    sections = args.only or ["exact", "protocol", "optional", "accuracy"]
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="ttlab-bench-id-") as tmpdir:
        tmp = Path(tmpdir)
        if "exact" in sections:
            print(f"== exact MLE, K = 20, {n} x {args.dim} float32", flush=True)
            r = results["exact"] = bench_exact(tmp, n, args.dim, args.repeats, args.skip_skdim)
            print(f"  ours {r['ours']['seconds']:.1f} s, floor (bare {n}x{n}x{args.dim} matmul) {r['floor']['seconds']:.1f} s, "
                  f"ratio {r['ratio_to_floor']:.2f}; peak RSS {r['ours']['peak_rss_mib']:.0f} MiB; "
                  f"fallback rows {r['ours']['n_fallback']}")
            if "skdim" in r:
                print(f"  scikit-dimension {r['skdim']['seconds']:.1f} s -> ours is {r['speedup_vs_skdim']:.2f}x faster; "
                      f"ID {r['ours']['dimension']:.6f} vs {r['skdim']['dimension']:.6f} (rel. diff {r['relative_difference']:.1e})")
        if "protocol" in sections:
            print(f"== paper protocol, {pn} x {args.dim}, batches of {args.batch_size}", flush=True)
            r = results["protocol"] = bench_protocol(tmp, pn, args.dim, args.batch_size, args.repeats, args.skip_skdim)
            print(f"  ours {r['ours']['seconds']:.1f} s, ID {r['ours']['dimension']:.4f}")
            if "skdim" in r:
                print(f"  scikit-dimension batch by batch {r['skdim']['seconds']:.1f} s -> {r['speedup_vs_skdim']:.2f}x; "
                      f"max rel. difference of batch values {r['max_relative_batch_difference']:.1e}")
        if "optional" in sections:
            print("== optional neighbour back-ends", flush=True)
            results["optional"] = bench_optional(tmp, min(n, 50_000), args.dim)
            print("  " + json.dumps(results["optional"], indent=1).replace("\n", "\n  "))
    if "accuracy" in sections:
        print(f"== accuracy table -> {DOC}", flush=True)
        from ttlab.provenance import atomic_write_text

        text = bench_accuracy(args.acc_n, 64, args.acc_seeds, (0.0, 0.01))
        atomic_write_text(DOC, text)
        print(text)
    if args.json_out:
        from ttlab.provenance import atomic_write_json, versions

        atomic_write_json(args.json_out, {"results": results, "args": {k: v for k, v in vars(args).items() if not k.startswith("_")},
                                          "versions": versions(extra=("scikit-dimension", "scikit-learn", "faiss-cpu"))})


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
