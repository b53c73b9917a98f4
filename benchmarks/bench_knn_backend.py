"""Benchmark: the neighbour backend ``auto`` picks for the shape of the data.

At low ambient dimension an exact k-d tree (``backend="tree"``) replaces the blocked matrix products
(which spend a full product width on 2 coordinates). This compares ttlab's MLE (K = 20, arithmetic
mean) with scikit-dimension's (``comb="mean"``, which uses scikit-learn's tree search) at
50,000 x 2 and 50,000 x 8, and checks that 768-dimensional data stays on the blocked path.

    .venv/bin/python benchmarks/bench_knn_backend.py                 # 50,000 points, 3 repeats
    .venv/bin/python benchmarks/bench_knn_backend.py --quick         # 20,000 points, 2 repeats
    .venv/bin/python benchmarks/bench_knn_backend.py --crossover     # tree vs blocked per dimension

Fairness: both sides run in this process on the same array with the same number of threads
(``--threads``: torch threads for ttlab, which the tree query uses as its worker count, and
``n_jobs`` for scikit-dimension), get the same warm-up (one fit on the first 2,048 points), and are
timed in interleaved repeats (ttlab, skdim, ttlab, skdim, ...). Min and median are printed; the
ratios are ttlab / skdim of the same statistic, measured in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np


def _ttlab_fit(X: np.ndarray, k: int, backend: str = "auto") -> tuple[float, str]:
    from ttlab.intrinsic_dim import MLE

    est = MLE(k=k, average="mean", backend=backend).fit(X)
    return est.dimension_, est.neighbors_backend_


def _skdim_fit(X: np.ndarray, k: int, threads: int) -> float:
    import skdim

    return float(skdim.id.MLE().fit(X, n_neighbors=k, comb="mean", n_jobs=threads).dimension_)


def _timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t0, out


def _stats(ts: list[float]) -> str:
    return f"min {min(ts):7.3f} s  median {statistics.median(ts):7.3f} s"


def compare(n: int, dim: int, k: int, repeats: int, threads: int) -> dict:
    """ttlab (auto backend) vs scikit-dimension on ``n`` points of a uniform ``dim``-cube."""
    from ttlab.intrinsic_dim import sample_manifold

    X = sample_manifold("cube", dim, dim, n, seed=0)
    _ttlab_fit(X[:2048], k)  # same warm-up on both sides
    _skdim_fit(X[:2048], k, threads)
    ours, theirs = [], []
    for _ in range(repeats):  # interleaved
        t, (d_ours, backend) = _timed(_ttlab_fit, X, k)
        ours.append(t)
        t, d_theirs = _timed(_skdim_fit, X, k, threads)
        theirs.append(t)
    row = {"n": n, "dim": dim, "backend": backend, "ttlab": ours, "skdim": theirs, "d_ttlab": d_ours,
           "d_skdim": d_theirs, "ratio_min": min(ours) / min(theirs),
           "ratio_median": statistics.median(ours) / statistics.median(theirs)}
    print(f"{n:,} x {dim}: ttlab ({backend}) {_stats(ours)} | skdim {_stats(theirs)} | ttlab/skdim: "
          f"min {row['ratio_min']:.2f}x, median {row['ratio_median']:.2f}x | ID {d_ours:.6f} vs {d_theirs:.6f} "
          f"(|diff| {abs(d_ours - d_theirs):.1e})", flush=True)
    return row


def high_dim_check(n: int, k: int, repeats: int) -> dict:
    """At D = 768 ``auto`` must stay on the blocked float32 path: compare it with backend='torch'."""
    from ttlab.intrinsic_dim import sample_manifold
    from ttlab.intrinsic_dim.knn import choose_backend

    X = sample_manifold("linear", 5, 768, n, seed=0)
    chosen = choose_backend(n, 768, "cpu")
    _ttlab_fit(X[:2048], k, "auto")
    _ttlab_fit(X[:2048], k, "torch")
    auto, forced = [], []
    for _ in range(repeats):
        t, (_, backend) = _timed(_ttlab_fit, X, k, "auto")
        auto.append(t)
        t, _ = _timed(_ttlab_fit, X, k, "torch")
        forced.append(t)
    print(f"{n:,} x 768: auto chose {chosen!r} ({backend}) {_stats(auto)} | backend='torch' {_stats(forced)} | "
          f"auto/torch: min {min(auto) / min(forced):.2f}x", flush=True)
    return {"chosen": chosen, "backend": backend, "auto": auto, "torch": forced}


def crossover(n: int, k: int, dims: list[int]) -> None:
    """Time the exact tree and the blocked search on the same data, per dimension (one run each after
    a warm-up); where the ratio crosses 1 is the crossover ``choose_backend`` encodes."""
    from ttlab.intrinsic_dim.knn import TREE_MAX_DIM, kneighbors

    kneighbors(np.random.default_rng(0).normal(size=(600, 4)), k, backend="tree")
    kneighbors(np.random.default_rng(0).normal(size=(600, 4)), k, backend="torch")
    print(f"crossover at n = {n:,}, K = {k} (auto uses the tree up to D = {TREE_MAX_DIM}):")
    for dim in dims:
        X = np.random.default_rng(dim).normal(size=(n, dim))
        t_tree, a = _timed(kneighbors, X, k, backend="tree")
        t_blk, b = _timed(kneighbors, X, k, backend="torch")
        same = np.array_equal(a.indices, b.indices) and np.array_equal(a.distances, b.distances)
        print(f"  D = {dim:4d}: tree {t_tree:7.3f} s, blocked {t_blk:7.3f} s, blocked/tree {t_blk / t_tree:6.2f}x, "
              f"identical results: {same}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="20,000 points, 2 repeats, 768-D check on 4,096 points.")
    ap.add_argument("--n", type=int, default=None, help="Points per data set (default 50,000; quick 20,000).")
    ap.add_argument("--repeats", type=int, default=None, help="Interleaved timed repeats per side (default 3; quick 2).")
    ap.add_argument("--threads", type=int, default=1, help="Threads for both sides (torch threads / skdim n_jobs).")
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--crossover", action="store_true", help="Also time tree vs blocked at D = 2..64.")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    warnings.simplefilter("ignore")
    n = args.n or (20_000 if args.quick else 50_000)
    repeats = args.repeats or (2 if args.quick else 3)
    print(f"K = {args.k}, {args.threads} thread(s) per side, {repeats} interleaved repeats after one warm-up fit")
    rows = [compare(n, dim, args.k, repeats, args.threads) for dim in (2, 8)]
    hd = high_dim_check(4096 if args.quick else 8192, args.k, repeats)
    if args.crossover:
        for m in (4096, n):
            crossover(m, args.k, [2, 4, 8, 12, 16, 32, 64])
    worst = max(r["ratio_median"] for r in rows)
    print(f"summary: worst ttlab/skdim median ratio {worst:.2f}x (target <= 1.2x: {'met' if worst <= 1.2 else 'NOT met'}); "
          f"768-D data uses {hd['backend']}")


if __name__ == "__main__":
    main()
