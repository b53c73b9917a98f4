"""Benchmark of `ttlab id compare`: every estimator with one shared neighbour search, against calling
the same scikit-dimension estimators (same settings) one after another.

    .venv/bin/python benchmarks/bench_id_compare.py --quick     # 3,000 x 768
    .venv/bin/python benchmarks/bench_id_compare.py             # 20,000 x 768

Both sides get the same warm-up (one call of every estimator on a 400-point subset: imports, numba
compilation, BLAS start-up) and the same number of interleaved timed repeats (ours, theirs, ours,
theirs, …) on the same data in the same process; min and median are reported, and the ratio of
each. ESS is left out by default: scikit-dimension's ESS loops in Python over every simplex of
every neighbourhood (hours at these sizes); ``--ess-n`` times it once on a small subset instead.
The agreement of the numbers is printed too (largest relative difference between the two sides).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
import warnings

import numpy as np

DANCO_D = 48  # ttlab compare's DANCo calibration range, used on both sides


def _skdim_calls(n_features: int) -> dict:
    import skdim

    id_ = skdim.id
    return {
        "mle": lambda X: id_.MLE().fit(X, n_neighbors=20, comb="mean").dimension_,
        "mle_harmonic": lambda X: id_.MLE().fit(X, n_neighbors=20, comb="mle").dimension_,
        "mle_median": lambda X: id_.MLE().fit(X, n_neighbors=20, comb="median").dimension_,
        "twonn": lambda X: id_.TwoNN().fit(X).dimension_,
        "gride": lambda X: id_.GRIDE().fit(X).dimension_,
        "tle": lambda X: id_.TLE().fit(X, n_neighbors=20, comb="mean").dimension_,
        "mom": lambda X: id_.MOM().fit(X, n_neighbors=100, comb="mean").dimension_,
        "mada": lambda X: id_.MADA().fit(X, n_neighbors=20, comb="mean").dimension_,
        "mind_ml": lambda X: id_.MiND_ML(D=n_features).fit(X).dimension_,
        "corrint": lambda X: id_.CorrInt().fit(X).dimension_,
        "danco": lambda X: id_.DANCo(D=min(n_features, DANCO_D), random_state=0).fit(X).dimension_,
        "ess": lambda X: id_.ESS().fit(X, n_neighbors=100, comb="mean").dimension_,
        "lpca": lambda X: id_.lPCA().fit(X).dimension_,
        "lpca_pr": lambda X: id_.lPCA(ver="participation_ratio").fit(X).dimension_,
        "fishers": lambda X: id_.FisherS().fit(X).dimension_,
        "knn": lambda X: id_.KNN(random_state=0).fit(X).dimension_,
        "ph": lambda X: id_.PH(nsteps=20, subsamples=5, random_state=0).fit(X).dimension_,
    }


def run_theirs(X: np.ndarray, methods: list[str]) -> tuple[float, dict, dict]:
    calls = _skdim_calls(X.shape[1])
    times, vals = {}, {}
    t0 = time.perf_counter()
    for m in methods:
        t = time.perf_counter()
        vals[m] = float(calls[m](X))
        times[m] = time.perf_counter() - t
    return time.perf_counter() - t0, times, vals


def run_ours(X: np.ndarray, methods: list[str]) -> tuple[float, dict, dict]:
    from ttlab.intrinsic_dim import compare

    t0 = time.perf_counter()
    res = compare(X, methods)
    total = time.perf_counter() - t0
    times = {r.method: r.seconds for r in res.rows}
    times["(shared kNN)"] = res.knn_seconds
    return total, times, {r.method: r.dimension for r in res.rows}


def skdim_cold_start() -> dict:
    """Import of scikit-dimension and its first DANCo fit (numba compilation) vs the second, in a fresh process."""
    code = (
        "import time; t=time.perf_counter(); import skdim; t1=time.perf_counter(); import numpy as np;"
        "X=np.random.default_rng(0).standard_normal((200, 10));"
        "a=time.perf_counter(); skdim.id.DANCo(D=5, random_state=0).fit(X); b=time.perf_counter();"
        "skdim.id.DANCo(D=5, random_state=0).fit(X); c=time.perf_counter();"
        "print(t1-t, b-a, c-b)"
    )
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, check=True)
    imp, first, second = (float(v) for v in out.stdout.split())
    return {"import_s": imp, "danco_first_fit_s": first, "danco_second_fit_s": second}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="3,000 x 768 instead of 20,000 x 768")
    ap.add_argument("--n", type=int, default=None, help="number of points (overrides --quick)")
    ap.add_argument("--repeats", type=int, default=2, help="interleaved timed repeats per side")
    ap.add_argument("--methods", default=None, help="comma-separated (default: all but ess)")
    ap.add_argument("--ess-n", type=int, default=300, help="time ESS alone on this many points (0: skip)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    from ttlab.intrinsic_dim import sample_manifold
    from ttlab.intrinsic_dim.compare import COMPARE_METHODS

    n = args.n or (3000 if args.quick else 20000)
    D = 768
    methods = args.methods.split(",") if args.methods else [m for m in COMPARE_METHODS if m != "ess"]
    X = sample_manifold("nonlinear", 12, D, n, noise=0.01, seed=0).astype(np.float64)
    warm = X[:400]
    run_ours(warm, methods)
    run_theirs(warm, methods)
    ours, theirs = [], []
    for i in range(args.repeats):
        ours.append(run_ours(X, methods))
        print(f"repeat {i + 1}: ttlab {ours[-1][0]:.2f} s {ours[-1][1]}", file=sys.stderr, flush=True)
        theirs.append(run_theirs(X, methods))
        print(f"repeat {i + 1}: skdim {theirs[-1][0]:.2f} s {theirs[-1][1]}", file=sys.stderr, flush=True)
    o_tot = [t[0] for t in ours]
    s_tot = [t[0] for t in theirs]
    vo, vs = ours[-1][2], theirs[-1][2]
    rel = {m: abs(vo[m] - vs[m]) / abs(vs[m]) for m in methods if vo[m] is not None and vs[m]}
    out = {
        "n": n, "D": D, "methods": methods, "repeats": args.repeats,
        "ours_s": {"min": min(o_tot), "median": statistics.median(o_tot)},
        "skdim_s": {"min": min(s_tot), "median": statistics.median(s_tot)},
        "ratio_min": min(s_tot) / min(o_tot), "ratio_median": statistics.median(s_tot) / statistics.median(o_tot),
        "per_method_ours_s": ours[-1][1], "per_method_skdim_s": theirs[-1][1],
        "max_rel_difference": max(rel.values()) if rel else None, "rel_difference": rel,
        "load_average": list(__import__("os").getloadavg()), "machine": platform.processor() or platform.machine(),
    }
    if args.ess_n:
        Xe = X[: args.ess_n]
        run_ours(Xe[:150], ["ess"])  # warm-up on both sides
        run_theirs(Xe[:150], ["ess"])
        to, _, eo = run_ours(Xe, ["ess"])
        ts, _, es = run_theirs(Xe, ["ess"])
        out["ess"] = {"n": args.ess_n, "ours_s": to, "skdim_s": ts, "ratio": ts / to,
                      "rel_difference": abs(eo["ess"] - es["ess"]) / abs(es["ess"])}
    out["skdim_cold_start"] = skdim_cold_start()
    if args.json:
        print(json.dumps(out, indent=1))
        return
    print(f"compare, {len(methods)} estimators on {n} x {D} ({args.repeats} interleaved repeats, load {out['load_average'][0]:.1f})")
    print(f"  ttlab compare: min {out['ours_s']['min']:.2f} s, median {out['ours_s']['median']:.2f} s")
    print(f"  scikit-dimension one after another: min {out['skdim_s']['min']:.2f} s, median {out['skdim_s']['median']:.2f} s")
    print(f"  ratio (skdim / ttlab): min {out['ratio_min']:.1f}x, median {out['ratio_median']:.1f}x")
    print(f"  largest relative difference of the estimates: {out['max_rel_difference']:.2e}")
    print("  per estimator (last repeat), ttlab vs skdim, seconds:")
    for m in methods:
        print(f"    {m:14s} {out['per_method_ours_s'][m]:8.2f} {out['per_method_skdim_s'][m]:9.2f}")
    print(f"    {'(shared kNN)':14s} {out['per_method_ours_s']['(shared kNN)']:8.2f}")
    if "ess" in out:
        e = out["ess"]
        print(f"  ESS alone on {e['n']} points: ttlab {e['ours_s']:.2f} s, skdim {e['skdim_s']:.2f} s ({e['ratio']:.0f}x), "
              f"rel. difference {e['rel_difference']:.1e}")
    c = out["skdim_cold_start"]
    print(f"  skdim cold start: import {c['import_s']:.2f} s; first DANCo fit (numba compilation) {c['danco_first_fit_s']:.2f} s "
          f"vs second {c['danco_second_fit_s']:.2f} s")


if __name__ == "__main__":
    main()
