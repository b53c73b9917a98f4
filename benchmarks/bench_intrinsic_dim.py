"""Benchmark of ttlab.intrinsic_dim: speed against the matrix-product floor and scikit-dimension,
the paper's batched protocol, optional approximate/GPU neighbours, and an accuracy table.

Run on demand (minutes at full size):

    .venv/bin/python benchmarks/bench_intrinsic_dim.py                 # full: 20,000 and 50,000 x 768, protocol 128,000 x 768
    .venv/bin/python benchmarks/bench_intrinsic_dim.py --quick         # 4,000 x 768 and protocol 20,480 x 768
    .venv/bin/python benchmarks/bench_intrinsic_dim.py --only accuracy # rewrite docs/intrinsic_dim_accuracy.md

Every timing runs in a fresh subprocess on the same saved data (so peak memory is per method), and
every method gets the same treatment (benchmarks/_timing.py): the same warm-up inside its process (a
fit on 2,048 rows, or a small product for the floor), the same number of timed repeats, interleaved
(floor, ttlab, scikit-dimension, floor, ...), the same thread count (torch threads, BLAS/OpenMP threads
via threadpoolctl, and scikit-dimension's n_jobs). Min and median are reported, with the ratios of both.
Target: ttlab ≥ 2x faster than scikit-dimension on the exact MLE at 20,000 and 50,000 x 768 (min and median).
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
from _timing import interleave, load_note

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "intrinsic_dim_accuracy.md"


# ------------------------------------------------------------------------------------------ workers


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _worker(kind: str, data: str, opts: dict) -> dict:
    """Run one timed job in this (fresh) process and return a JSON-able dict."""
    import torch

    from threadpoolctl import threadpool_limits

    threads = int(opts.get("threads") or os.cpu_count() or 1)
    torch.set_num_threads(threads)
    threadpool_limits(threads)
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
                "peak_rss_mib": _peak_rss_mib(), "data_rss_mib": base_rss, "threads": torch.get_num_threads()}
    if kind == "skdim":
        import skdim

        from ttlab.intrinsic_dim import split_batches

        skdim.id.MLE().fit(X[:2048], n_neighbors=k, comb="mean", n_jobs=threads)  # warm up
        t0 = time.perf_counter()
        if opts.get("batch_size"):
            dims = [skdim.id.MLE().fit(X[b], n_neighbors=k, comb="mean", n_jobs=threads).dimension_
                    for b in split_batches(len(X), opts["batch_size"], seed=0)]
            dim = float(np.mean(dims))
        else:
            dims, dim = None, float(skdim.id.MLE().fit(X, n_neighbors=k, comb="mean", n_jobs=threads).dimension_)
        return {"seconds": time.perf_counter() - t0, "dimension": dim, "batches": dims,
                "peak_rss_mib": _peak_rss_mib(), "threads": threads}
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


def _timed(kind: str, data: str, **opts):
    """A side for :func:`_timing.interleave` (self-timed): one fresh worker process per call."""
    def call() -> tuple[float, dict]:
        r = _run(kind, data, **opts)
        return r["seconds"], r
    return call


# ------------------------------------------------------------------------------------------ sections


def _data(path: Path, n: int, dim: int, seed: int) -> str:
    from ttlab.intrinsic_dim import sample_manifold

    if not path.exists():
        X = sample_manifold("nonlinear", 10, dim, n, noise=0.01, seed=seed, dtype=np.float32)
        np.save(path, X)
    return str(path)


def _speed_section(t, names: dict[str, str]) -> dict:
    out = {key: {**t.results[side], **t[side].to_dict()} for key, side in names.items()}
    out["repeats"], out["warmup"] = t.repeats, t.warmup
    return out


def bench_exact(tmp: Path, n: int, dim: int, repeats: int, warmup: int, threads: int, skip_skdim: bool) -> dict:
    data = _data(tmp / f"exact_{n}_{dim}.npy", n, dim, 0)
    sides = {"floor": _timed("floor", data, threads=threads), "ours": _timed("ours", data, threads=threads)}
    if not skip_skdim:
        sides["skdim"] = _timed("skdim", data, threads=threads)
    t = interleave(sides, repeats=repeats, warmup=warmup, self_timed=True)
    out = {"n": n, "dim": dim, "threads": threads, **_speed_section(t, {s_: s_ for s_ in sides})}
    r = t.ratio("ours", "floor")
    out["ratio_to_floor"] = {"min": r.of_min, "median": r.of_median}
    if not skip_skdim:
        r = t.ratio("skdim", "ours")
        out["speedup_vs_skdim"] = {"min": r.of_min, "median": r.of_median}
        out["relative_difference"] = abs(out["ours"]["dimension"] - out["skdim"]["dimension"]) / out["skdim"]["dimension"]
    return out


def bench_protocol(tmp: Path, n: int, dim: int, batch: int, repeats: int, warmup: int, threads: int,
                   skip_skdim: bool) -> dict:
    data = _data(tmp / f"protocol_{n}_{dim}.npy", n, dim, 1)
    sides = {"ours": _timed("ours", data, batch_size=batch, threads=threads)}
    if not skip_skdim:
        sides["skdim"] = _timed("skdim", data, batch_size=batch, threads=threads)
    t = interleave(sides, repeats=repeats, warmup=warmup, self_timed=True)
    out = {"n": n, "dim": dim, "batch_size": batch, "threads": threads, **_speed_section(t, {s_: s_ for s_ in sides})}
    if not skip_skdim:
        r = t.ratio("skdim", "ours")
        out["speedup_vs_skdim"] = {"min": r.of_min, "median": r.of_median}
        b1, b2 = np.array(out["ours"]["batches"]), np.array(out["skdim"]["batches"])
        out["max_relative_batch_difference"] = float(np.max(np.abs(b1 - b2) / b2))
    return out


def bench_optional(tmp: Path, n: int, dim: int, threads: int) -> dict:
    import torch

    from ttlab.intrinsic_dim import faiss_available

    data = _data(tmp / f"exact_{n}_{dim}.npy", n, dim, 0)
    out: dict = {}
    if faiss_available():
        out["faiss_hnsw"] = _run("approx", data, backend="faiss-hnsw", threads=threads)
        out["faiss_flat"] = _run("approx", data, backend="faiss", threads=threads)
    else:
        out["faiss"] = "not installed (pip install faiss-cpu to measure)"
    if torch.cuda.is_available():
        out["cuda"] = _run("approx", data, backend="torch", device="cuda", threads=threads)
    else:
        out["cuda"] = "no GPU on this machine"
    return out


ACC_CASES = [("sphere", 2), ("sphere", 5), ("sphere", 10), ("cube", 3), ("cube", 8), ("linear", 5),
             ("swiss-roll", 2), ("nonlinear", 4), ("nonlinear", 8)]


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def reading(records: list[dict], names: list[str], k: int = 20) -> list[str]:
    """The reading paragraph of the accuracy doc, every statement computed from ``records`` (one per
    noise level, manifold, seed and estimator: true ``d``, ttlab's and scikit-dimension's estimates)."""
    noises = sorted({r["noise"] for r in records})
    lo, hi = noises[0], noises[-1]

    def mean_est(noise, m, d, name, key="ours"):
        return float(np.mean([r[key] for r in records if (r["noise"], r["manifold"], r["d"], r["name"]) == (noise, m, d, name)]))

    cases = sorted({(r["manifold"], r["d"], r["true"]) for r in records}, key=lambda c: (c[2], c[0]))
    out = []
    diff = max(abs(r["ours"] - r["skdim"]) for r in records)
    rel = max(abs(r["ours"] - r["skdim"]) / abs(r["skdim"]) for r in records)
    out.append(f"ttlab and scikit-dimension {'agree on' if rel <= 1e-6 else 'differ on some of'} the {len(records)} "
               f"estimates: the largest absolute difference is {diff:.1e} (relative {rel:.1e}).")
    # high intrinsic dimension: signed error of every estimator
    high = [c for c in cases if c[2] >= 8]
    if high:
        errs = [(mean_est(nz, m, d, name) - true) / true for nz in noises for m, d, true in high for name in names]
        below = sum(e < 0 for e in errs)
        out.append(f"At d ≥ 8 ({', '.join(f'{m} d={d}' for m, d, _ in high)}; n = {records[0]['n']}) {below} of "
                   f"{len(errs)} mean estimates (estimator × manifold × noise level) are below the true dimension; "
                   f"relative errors range from {_pct(min(errs))} to {_pct(max(errs))}.")
    # arithmetic mean of pointwise MLE: K-1 against K-2
    a, b = "MLE K=20, mean (paper)", "MLE K=20, mean, K-2"
    if a in names and b in names:
        ratios = [mean_est(nz, m, d, a) / mean_est(nz, m, d, b) for nz in noises for m, d, _ in cases]
        low = [c for c in cases if c[2] <= 5]
        sa = np.mean([(mean_est(lo, m, d, a) - t) / t for m, d, t in low])
        sb = np.mean([(mean_est(lo, m, d, b) - t) / t for m, d, t in low])
        span = (f"{min(ratios):.4f} times the K − 2 version in every case" if f"{min(ratios):.4f}" == f"{max(ratios):.4f}"
                else f"{min(ratios):.4f}–{max(ratios):.4f} times the K − 2 version (min–max over the cases)")
        out.append(f"The arithmetic mean of pointwise MLE estimates with K − 1 is {span} "
                   f"((K−1)/(K−2) = {(k - 1) / (k - 2):.4f}); at d ≤ 5 without "
                   f"noise their mean signed relative errors are {_pct(sa)} and {_pct(sb)}.")
    # noise: growth of the mean relative error per estimator
    if lo != hi:
        def mre(noise, name):
            return float(np.mean([abs(r["ours"] - r["true"]) / r["true"] for r in records
                                  if r["noise"] == noise and r["name"] == name]))
        growth = {name: mre(hi, name) - mre(lo, name) for name in names}
        most, least = max(growth, key=growth.get), min(growth, key=growth.get)
        out.append(f"Noise of standard deviation {hi:g} raises the mean relative error of every estimator by "
                   f"{100 * min(growth.values()):.1f} to {100 * max(growth.values()):.1f} percentage points: most for "
                   f"{most} (from {_pct(mre(lo, most))} to {_pct(mre(hi, most))}), least for {least} (from "
                   f"{_pct(mre(lo, least))} to {_pct(mre(hi, least))})."
                   if round(100 * min(growth.values()), 1) > 0 else
                   f"Noise of standard deviation {hi:g} changes the mean relative error by between "
                   f"{100 * min(growth.values()):+.1f} and {100 * max(growth.values()):+.1f} percentage points "
                   f"({most}: {100 * growth[most]:+.1f}; {least}: {100 * growth[least]:+.1f}).")
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
    records: list[dict] = []
    for noise in noise_levels:
        for name_m, d in ACC_CASES:
            true = true_dimension(name_m, d)
            for seed in range(seeds):
                X = sample_manifold(name_m, d, ambient, n, noise=noise, seed=100 + seed)
                for name, (ours, ref) in est.items():
                    records.append({"noise": noise, "manifold": name_m, "d": d, "true": true, "seed": seed, "n": n,
                                    "name": name, "ours": float(ours().fit(X).dimension_), "skdim": float(ref(X))})
    rows = []
    for noise in noise_levels:
        for name in est:
            sel = [r for r in records if r["noise"] == noise and r["name"] == name]
            o = np.mean([abs(r["ours"] - r["true"]) / r["true"] for r in sel])
            k = np.mean([abs(r["skdim"] - r["true"]) / r["true"] for r in sel])
            rows.append(f"| {noise:g} | {name} | {_pct(o)} | {_pct(k)} |")
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
        "Entry: mean over manifolds and seeds of the relative error |d̂ − d| / d, for ttlab's estimator and "
        "scikit-dimension's estimator of the same definition.",
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
    for noise in noise_levels:
        for m, d in ACC_CASES:
            means = [np.mean([r["ours"] for r in records if (r["noise"], r["manifold"], r["d"], r["name"]) == (noise, m, d, k)])
                     for k in est]
            lines.append(f"| {noise:g} | {m} | {true_dimension(m, d)} | " + " | ".join(f"{x:.2f}" for x in means) + " |")
    lines += ["", "Reading the table (every figure below is computed from the estimates above):", "",
              *[f"- {sentence}" for sentence in reading(records, list(est))], ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------ main


TARGET_SIZES = (20_000, 50_000)


def _verdict(speedup: dict, target: float) -> str:
    return ", ".join(f"{k} {'OK' if v >= target else 'MISSED'}" for k, v in speedup.items())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes (4,000 points exact, 20,480 protocol)")
    ap.add_argument("--n", help="comma-separated point counts for the exact-MLE benchmark (default 20000,50000)")
    ap.add_argument("--protocol-n", type=int, help="points for the protocol benchmark (default 128,000)")
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--batch-size", type=int, default=4096)
    ap.add_argument("--repeats", type=int, default=2, help="timed runs per method (default 2)")
    ap.add_argument("--warmup", type=int, default=0,
                    help="untimed interleaved runs per method before the timed ones (default 0: every run is a fresh "
                         "process that already warms up on 2,048 rows)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="threads for every method (default: all cores)")
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
    sizes = [int(v) for v in args.n.split(",")] if args.n else ([4000] if args.quick else [20_000, 50_000])
    pn = args.protocol_n or (20_480 if args.quick else 128_000)
    sections = args.only or ["exact", "protocol", "optional", "accuracy"]
    results: dict = {}
    target = 2.0
    print(load_note(), flush=True)
    with tempfile.TemporaryDirectory(prefix="ttlab-bench-id-") as tmpdir:
        tmp = Path(tmpdir)
        if "exact" in sections:
            results["exact"] = []
            for n in sizes:
                print(f"== exact MLE, K = 20, {n} x {args.dim} float32, {args.threads} threads for every method", flush=True)
                r = bench_exact(tmp, n, args.dim, args.repeats, args.warmup, args.threads, args.skip_skdim)
                results["exact"].append(r)
                o, f = r["ours"], r["floor"]
                print(f"  ttlab min {o['min_s']:.2f} s / median {o['median_s']:.2f} s; floor (bare {n}x{n}x{args.dim} "
                      f"matmul) min {f['min_s']:.2f} s / median {f['median_s']:.2f} s; ttlab/floor "
                      f"{r['ratio_to_floor']['min']:.2f} (min), {r['ratio_to_floor']['median']:.2f} (median); "
                      f"peak RSS {o['peak_rss_mib']:.0f} MiB; fallback rows {o['n_fallback']}")
                if "skdim" in r:
                    k, sp = r["skdim"], r["speedup_vs_skdim"]
                    print(f"  scikit-dimension min {k['min_s']:.2f} s / median {k['median_s']:.2f} s -> ttlab is "
                          f"{sp['min']:.2f}x (min) / {sp['median']:.2f}x (median) faster "
                          + (f"[target ≥ {target:g}x: {_verdict(sp, target)}]" if n in TARGET_SIZES else
                             f"[the ≥ {target:g}x target is for {' and '.join(f'{v:,}' for v in TARGET_SIZES)} points: not checked]")
                          + f"; ID {o['dimension']:.6f} vs {k['dimension']:.6f} "
                          f"(rel. diff {r['relative_difference']:.1e})")
                print(f"  [{r['repeats']} interleaved runs per method, {r['warmup']} warm-up runs each]", flush=True)
        if "protocol" in sections:
            print(f"== paper protocol, {pn} x {args.dim}, batches of {args.batch_size}, {args.threads} threads", flush=True)
            r = results["protocol"] = bench_protocol(tmp, pn, args.dim, args.batch_size, args.repeats, args.warmup,
                                                     args.threads, args.skip_skdim)
            print(f"  ttlab min {r['ours']['min_s']:.2f} s / median {r['ours']['median_s']:.2f} s, ID {r['ours']['dimension']:.4f}")
            if "skdim" in r:
                sp = r["speedup_vs_skdim"]
                print(f"  scikit-dimension batch by batch min {r['skdim']['min_s']:.2f} s / median {r['skdim']['median_s']:.2f} s "
                      f"-> ttlab is {sp['min']:.2f}x (min) / {sp['median']:.2f}x (median) faster; "
                      f"max rel. difference of batch values {r['max_relative_batch_difference']:.1e}")
            print(f"  [{r['repeats']} interleaved runs per method, {r['warmup']} warm-up runs each]", flush=True)
        if "optional" in sections:
            print("== optional neighbour back-ends", flush=True)
            results["optional"] = bench_optional(tmp, min(sizes[-1], 50_000), args.dim, args.threads)
            print("  " + json.dumps(results["optional"], indent=1).replace("\n", "\n  "))
        if set(sections) - {"accuracy"}:
            print(f"({load_note()} at the end of the timings)", flush=True)
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
