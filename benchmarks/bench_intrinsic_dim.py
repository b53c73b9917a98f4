"""Benchmark of ttlab.intrinsic_dim: speed against the matrix-product floor and scikit-dimension,
the paper's batched protocol, optional approximate/GPU neighbours, and an accuracy table.

Run on demand (minutes at full size):

    .venv/bin/python benchmarks/bench_intrinsic_dim.py                 # full: 20,000 and 50,000 x 768, protocol 128,000 x 768
    .venv/bin/python benchmarks/bench_intrinsic_dim.py --quick         # 4,000 x 768 and protocol 20,480 x 768
    .venv/bin/python benchmarks/bench_intrinsic_dim.py --only accuracy # rewrite docs/intrinsic_dim_accuracy.md
        # (every estimator of compare; --acc-n/--acc-seeds/--acc-large-cases choose the cells run)

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
        from ttlab.intrinsic_dim.mle import mle_pointwise

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

# Labels of the estimators in the accuracy doc (compare's keys; the two extras are fitted on their own).
ACC_LABELS = {"mle": "MLE K=20, mean (paper)", "mle_harmonic": "MLE K=20, harmonic", "mle_median": "MLE K=20, median",
              "twonn": "TwoNN (10% discarded)", "gride": "GRIDE n1=1, n2=2", "tle": "TLE k=20", "mom": "MOM k=100",
              "mada": "MADA k=20", "mind_ml": "MiND_ML k=20, D=n_features", "corrint": "CorrInt k1=10, k2=20",
              "danco": "DANCo k=10, D=48", "ess": "ESS k=100", "lpca": "lPCA Fukunaga-Olsen 5 % (global)",
              "lpca_pr": "lPCA participation ratio (global)", "mle_k2": "MLE K=20, mean, K-2", "gride10": "GRIDE n1=10, n2=20"}
# scikit-dimension estimators of the same definition (the cross-check; run at n <= --acc-skdim-max-n)
ACC_SKDIM = {
    "mle": lambda skdim, X: skdim.id.MLE().fit(X, n_neighbors=20, comb="mean").dimension_,
    "mle_harmonic": lambda skdim, X: skdim.id.MLE().fit(X, n_neighbors=20, comb="mle").dimension_,
    "twonn": lambda skdim, X: skdim.id.TwoNN().fit(X).dimension_,
    "gride": lambda skdim, X: skdim.id.GRIDE().fit(X).dimension_,
    "mle_k2": lambda skdim, X: skdim.id.MLE(unbiased=True).fit(X, n_neighbors=20, comb="mean").dimension_,
    "gride10": lambda skdim, X: skdim.id.GRIDE(n1=10, n2=20).fit(X).dimension_,
}


def _pct(x: float) -> str:
    """A relative error as a percentage; — where no finite estimate entered the cell."""
    return f"{100 * x:.1f} %" if np.isfinite(x) else "—"


def _finite(x) -> bool:
    return x is not None and bool(np.isfinite(x))


def _mean_rel_err(sel: list[dict], key: str = "ours") -> float:
    errs = [abs(r[key] - r["true"]) / r["true"] for r in sel if _finite(r.get(key))]
    return float(np.mean(errs)) if errs else float("nan")


def _complete_pairs(records: list[dict], noises: list[float]) -> list[int]:
    """Sizes n at which every noise level was run on the same (manifold, seed) cases."""
    out = []
    for n in sorted({r["n"] for r in records}):
        sets = [{(r["manifold"], r["d"], r["seed"]) for r in records if r["n"] == n and r["noise"] == nz} for nz in noises]
        if all(sets) and all(s == sets[0] for s in sets):
            out.append(n)
    return out


def reading(records: list[dict], names: list[str], k: int = 20) -> list[str]:
    """The reading paragraph of the accuracy doc, every statement computed from ``records`` (one per
    size, noise level, manifold, seed and estimator: true ``d``, ttlab's estimate ``ours`` and
    scikit-dimension's ``skdim``, None where the cross-check was not run)."""
    noises = sorted({r["noise"] for r in records})
    sizes = sorted({r["n"] for r in records})
    lo, hi = noises[0], noises[-1]

    def mean_est(n, noise, m, d, name, key="ours"):
        vals = [r[key] for r in records if (r["n"], r["noise"], r["manifold"], r["d"], r["name"]) == (n, noise, m, d, name)
                and _finite(r[key])]
        return float(np.mean(vals)) if vals else float("nan")

    out = []
    checked = [r for r in records if _finite(r.get("skdim")) and _finite(r["ours"])]
    if checked:
        diff = max(abs(r["ours"] - r["skdim"]) for r in checked)
        rel = max(abs(r["ours"] - r["skdim"]) / abs(r["skdim"]) for r in checked)
        cn = sorted({r["n"] for r in checked})
        out.append(f"ttlab and scikit-dimension {'agree on' if rel <= 1e-6 else 'differ on some of'} the {len(checked)} "
                   f"cross-checked estimates ({len({r['name'] for r in checked})} estimators; n = "
                   f"{', '.join(str(n) for n in cn)}): the largest absolute difference is {diff:.1e} (relative {rel:.1e}).")
    bad = [r for r in records if not _finite(r["ours"])]
    if bad:
        def where(nm: str) -> str:
            sizes = sorted({r["n"] for r in bad if r["name"] == nm})
            return f"{sum(r['name'] == nm for r in bad)}, at n = {', '.join(str(n) for n in sizes)}"

        out.append(f"{len(bad)} of {len(records)} ttlab estimates are not finite (refused or failed; — in the table) "
                   "and left out of the means: " + "; ".join(f"{nm} ({where(nm)})"
                                                           for nm in dict.fromkeys(r["name"] for r in bad))
                   + ".")
        from ttlab.intrinsic_dim.ph import PH_MAX_POINTS

        if any(r.get("method") == "ph" and r["n"] > PH_MAX_POINTS for r in bad):
            out.append(f"PH refuses batches of more than {PH_MAX_POINTS:,} points (its n × n distance matrix), so it "
                       "has no estimate at the larger sizes.")
    # high intrinsic dimension: signed error of every estimator, per size
    for n in sizes:
        cases = sorted({(r["manifold"], r["d"], r["true"]) for r in records if r["n"] == n}, key=lambda c: (c[2], c[0]))
        high = [c for c in cases if c[2] >= 8]
        errs = [((mean_est(n, nz, m, d, name) - true) / true, name) for nz in noises for m, d, true in high for name in names
                if any((r["n"], r["noise"], r["manifold"], r["d"]) == (n, nz, m, d) for r in records)]
        errs = [(e, nm) for e, nm in errs if np.isfinite(e)]
        if errs:
            below = sum(e < 0 for e, _ in errs)
            above = list(dict.fromkeys(nm for e, nm in errs if e >= 0))
            out.append(f"At d ≥ 8 ({', '.join(f'{m} d={d}' for m, d, _ in high)}; n = {n}) {below} of "
                       f"{len(errs)} mean estimates (estimator × manifold × noise level) are below the true dimension; "
                       f"relative errors range from {_pct(min(e for e, _ in errs))} to {_pct(max(e for e, _ in errs))}"
                       + (f"; at or above it: {', '.join(above)}." if above else "."))
    # arithmetic mean of pointwise MLE: K-1 against K-2
    a, b = ACC_LABELS["mle"], ACC_LABELS["mle_k2"]
    if a in names and b in names:
        n = sizes[0]
        cases = sorted({(r["manifold"], r["d"], r["true"]) for r in records if r["n"] == n}, key=lambda c: (c[2], c[0]))
        ratios = [mean_est(n, nz, m, d, a) / mean_est(n, nz, m, d, b) for nz in noises for m, d, _ in cases]
        ratios = [x for x in ratios if np.isfinite(x)]
        low = [c for c in cases if c[2] <= 5]
        sa = np.mean([(mean_est(n, lo, m, d, a) - t) / t for m, d, t in low])
        sb = np.mean([(mean_est(n, lo, m, d, b) - t) / t for m, d, t in low])
        span = (f"{min(ratios):.4f} times the K − 2 version in every case" if f"{min(ratios):.4f}" == f"{max(ratios):.4f}"
                else f"{min(ratios):.4f}–{max(ratios):.4f} times the K − 2 version (min–max over the cases)")
        out.append(f"The arithmetic mean of pointwise MLE estimates with K − 1 is {span} "
                   f"((K−1)/(K−2) = {(k - 1) / (k - 2):.4f}; n = {n}); at d ≤ 5 without "
                   f"noise their mean signed relative errors are {_pct(sa)} and {_pct(sb)}.")
    # ranking: lowest and highest mean relative error per size and noise level (complete cells only)
    for n in sizes:
        for nz in noises:
            sel = [r for r in records if r["n"] == n and r["noise"] == nz]
            if not sel:
                continue
            mres = {name: _mean_rel_err([r for r in sel if r["name"] == name]) for name in names}
            mres = {nm: v for nm, v in mres.items() if np.isfinite(v)}
            if len(mres) < 2:
                continue
            order = sorted(mres, key=mres.get)
            nm_cases = len({(r["manifold"], r["d"]) for r in sel})
            out.append(f"At n = {n}, noise {nz:g} ({nm_cases} manifold{'s' if nm_cases != 1 else ''}, "
                       f"{len({r['seed'] for r in sel})} seed(s)): lowest mean relative error {order[0]} ({_pct(mres[order[0]])}), "
                       f"then {order[1]} ({_pct(mres[order[1]])}); highest {order[-1]} ({_pct(mres[order[-1]])}).")
    # more points at the same noise level: which estimators improve, and which manifolds drive a rise
    if len(sizes) > 1:
        n0, n1 = sizes[0], sizes[-1]
        for nz in noises:
            cases = ({(r["manifold"], r["d"]) for r in records if r["n"] == n0 and r["noise"] == nz}
                     & {(r["manifold"], r["d"]) for r in records if r["n"] == n1 and r["noise"] == nz})
            if not cases:
                continue

            def err(n, name=None, case=None):
                return _mean_rel_err([r for r in records if r["n"] == n and r["noise"] == nz
                                      and (r["manifold"], r["d"]) in ({case} if case else cases)
                                      and (name is None or r["name"] == name)])
            change = {nm: err(n1, nm) - err(n0, nm) for nm in names}
            change = {nm: c for nm, c in change.items() if np.isfinite(c)}
            if not change:
                continue
            # changes are counted at the precision printed (0.1 percentage point)
            worse = sorted((nm for nm, c in change.items() if round(100 * c, 1) > 0), key=change.get, reverse=True)
            better = [nm for nm, c in change.items() if round(100 * c, 1) < 0]
            rise = {c: round(100 * err(n1, case=c), 1) - round(100 * err(n0, case=c), 1) for c in cases}
            top = [c for c in sorted(cases, key=rise.get, reverse=True)[:2] if rise[c] > 0]
            text = (f"With noise {nz:g}, going from n = {n0} to {n1} (the {len(cases)} manifolds run at both) lowers the "
                    f"mean relative error of {len(better)} of {len(change)} estimators")
            if worse:
                w = worse[0]
                text += (f" and raises it for {len(worse)}, most for {w} (from {_pct(err(n0, w))} to {_pct(err(n1, w))})")
            if len(change) - len(better) - len(worse):
                text += f"; {len(change) - len(better) - len(worse)} unchanged at 0.1 % precision"
            if top:
                text += ("; the largest rises, averaged over the estimators, are on "
                         + ", ".join(f"{m} d={d} ({_pct(err(n0, case=(m, d)))} → {_pct(err(n1, case=(m, d)))})"
                                     for m, d in top))
            out.append(text + ".")
    # noise: growth of the mean relative error per estimator, at sizes where every noise level ran on the same cases
    if lo != hi:
        for n in _complete_pairs(records, [lo, hi]):
            def mre(noise, name):
                return _mean_rel_err([r for r in records if r["n"] == n and r["noise"] == noise and r["name"] == name])
            growth = {name: mre(hi, name) - mre(lo, name) for name in names}
            growth = {nm: g for nm, g in growth.items() if np.isfinite(g)}
            if not growth:
                continue
            most, least = max(growth, key=growth.get), min(growth, key=growth.get)
            where = f" (n = {n})" if len(sizes) > 1 else ""
            out.append(f"Noise of standard deviation {hi:g}{where} raises the mean relative error of every estimator by "
                       f"{100 * min(growth.values()):.1f} to {100 * max(growth.values()):.1f} percentage points: most for "
                       f"{most} (from {_pct(mre(lo, most))} to {_pct(mre(hi, most))}), least for {least} (from "
                       f"{_pct(mre(lo, least))} to {_pct(mre(hi, least))})."
                       if round(100 * min(growth.values()), 1) > 0 else
                       f"Noise of standard deviation {hi:g}{where} changes the mean relative error by between "
                       f"{100 * min(growth.values()):+.1f} and {100 * max(growth.values()):+.1f} percentage points "
                       f"({most}: {100 * growth[most]:+.1f}; {least}: {100 * growth[least]:+.1f}).")
    return out


def _load_cache(path: Path | None) -> dict[str, list[dict]]:
    """Finished datasets of an earlier (interrupted) accuracy run: key -> its records."""
    if path is None or not path.exists():
        return {}
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or data.get("schema") != "ttlab.bench.accuracy-cache/1":
        raise SystemExit(f"{path}: not an accuracy cache written by this benchmark; remove it or pass another --acc-cache")
    return data["datasets"]


def accuracy_records(n: int, ambient: int, seeds: int, noise_levels: tuple[float, ...], skdim_check: bool,
                     cases: list[tuple[str, int]] | None = None, cache_path: Path | None = None) -> list[dict]:
    """Every estimator of :func:`ttlab.intrinsic_dim.compare` (one shared kNN search per dataset) plus
    MLE with K − 2 and GRIDE n1=10 (own fits), on the manifolds of known dimension: one record per
    noise level, manifold, seed and estimator (each with the dataset's ``seconds``).

    With ``cache_path``, every finished dataset is written there atomically and a rerun skips the
    datasets already in it, so an interrupted run resumes without redoing finished work."""
    from ttlab.intrinsic_dim import GRIDE, MLE, sample_manifold, true_dimension
    from ttlab.intrinsic_dim.compare import COMPARE_METHODS, compare
    from ttlab.provenance import atomic_write_json

    skdim = None
    if skdim_check:
        import skdim
    warnings.simplefilter("ignore")
    extras = {"mle_k2": lambda: MLE(k=20, unbiased=True), "gride10": lambda: GRIDE(n1=10)}
    labels = {**{m: ACC_LABELS.get(m, COMPARE_METHODS[m][0]) for m in COMPARE_METHODS}, **{m: ACC_LABELS[m] for m in extras}}
    records: list[dict] = []
    cache = _load_cache(cache_path)
    for noise in noise_levels:
        for name_m, d in cases or ACC_CASES:
            true = true_dimension(name_m, d)
            for seed in range(seeds):
                key = f"n={n} noise={noise:g} {name_m}:{d} seed={seed} ambient={ambient} skdim={skdim_check}"
                if key in cache:
                    records += cache[key]
                    continue
                t0 = time.perf_counter()
                done: list[dict] = []
                X = sample_manifold(name_m, d, ambient, n, noise=noise, seed=100 + seed)
                res = compare(X, "all")
                ests = {row.method: row.dimension for row in res.rows}
                ests.update({m: float(f().fit(X).dimension_) for m, f in extras.items()})
                for m, v in ests.items():
                    ref = float(ACC_SKDIM[m](skdim, X)) if skdim is not None and m in ACC_SKDIM else None
                    done.append({"noise": noise, "manifold": name_m, "d": d, "true": true, "seed": seed, "n": n,
                                 "method": m, "name": labels[m], "ours": float("nan") if v is None else float(v),
                                 "skdim": ref})
                seconds = time.perf_counter() - t0
                for r in done:
                    r["seconds"] = seconds
                records += done
                if cache_path is not None:
                    cache[key] = done
                    atomic_write_json(cache_path, {"schema": "ttlab.bench.accuracy-cache/1", "datasets": cache})
    return records


def _compute_seconds(records: list[dict]) -> dict[int, float]:
    """Seconds of computation per size: the sum over datasets of each dataset's time (resumed runs included)."""
    per_dataset = {(r["n"], r["noise"], r["manifold"], r["d"], r["seed"]): r.get("seconds", float("nan")) for r in records}
    out: dict[int, float] = {}
    for (n, *_), sec in per_dataset.items():
        out[n] = out.get(n, 0.0) + sec
    return out


def accuracy_doc(records: list[dict], ambient: int, command: str) -> str:
    """The accuracy doc (markdown) from :func:`accuracy_records` output; says which cells were run."""
    from ttlab.intrinsic_dim import true_dimension
    from ttlab.provenance import versions

    methods = list(dict.fromkeys(r["method"] for r in records))
    label = {r["method"]: r["name"] for r in records}
    names = [label[m] for m in methods]
    sizes = sorted({r["n"] for r in records})
    noises = sorted({r["noise"] for r in records})
    cols = [(n, nz) for n in sizes for nz in noises]
    v = versions(extra=("scikit-dimension", "scikit-learn"))
    secs = _compute_seconds(records)

    def sel(n, nz, m=None):
        return [r for r in records if r["n"] == n and r["noise"] == nz and (m is None or r["method"] == m)]

    def coverage(n, nz):
        rs = sel(n, nz)
        return {(r["manifold"], r["d"]) for r in rs}, sorted({r["seed"] for r in rs})

    lines = [
        "# Intrinsic-dimension estimators: accuracy on manifolds of known dimension",
        "",
        f"Generated by `{command}` in {sum(secs.values()):.0f} s of computation "
        f"({', '.join(f'n = {n}: {t:.0f} s' for n, t in sorted(secs.items()))}; the sum over datasets of each one's "
        "time, scikit-dimension cross-checks included) "
        f"(ttlab {v['ttlab']}, scikit-dimension {v['scikit-dimension']}, numpy {v['numpy']}).",
        "",
        f"Data: {len(ACC_CASES)} manifolds ({', '.join(f'{m} d={d}' for m, d in ACC_CASES)}), "
        f"isometrically rotated into R^{ambient}, Gaussian noise of the given standard deviation per ambient "
        "coordinate, seeds 100, 101, ... (`ttlab.intrinsic_dim.manifolds`).",
        "Estimators: every estimator of `ttlab.intrinsic_dim.compare` with its settings (one shared exact "
        "kNN search per dataset), plus MLE with K − 2 and GRIDE n1=10, n2=20 (fitted on their own).",
        "",
        "Cells run (a cell not listed here was not run):",
        "",
    ]
    for n, nz in cols:
        cov, seeds = coverage(n, nz)
        if cov:
            which = ("all manifolds" if len(cov) == len(ACC_CASES)
                     else ", ".join(f"{m} d={d}" for m, d in ACC_CASES if (m, d) in cov))
            lines.append(f"- n = {n}, noise {nz:g}: {which}; {len(seeds)} seed(s) ({', '.join(str(100 + s) for s in seeds)}).")
    lines += [
        "",
        "Entry: mean over the manifolds and seeds run of the relative error |d̂ − d| / d of ttlab's estimate; "
        "in brackets scikit-dimension's estimator of the same definition where the cross-check was run; "
        "\"not run\" where the cell was not run.",
        "",
        "| estimator | " + " | ".join(f"n = {n}, noise {nz:g}" for n, nz in cols) + " |",
        "| --- | " + " | ".join("---" for _ in cols) + " |",
    ]
    for m in methods:
        cells = []
        for n, nz in cols:
            s = sel(n, nz, m)
            if not s:
                cells.append("not run")
                continue
            cell = _pct(_mean_rel_err(s))
            if all(_finite(r["skdim"]) for r in s):
                cell += f" ({_pct(_mean_rel_err(s, 'skdim'))})"
            cells.append(cell)
        lines.append(f"| {label[m]} | " + " | ".join(cells) + " |")
    lines += ["", "Per manifold (ttlab, mean estimate over the seeds run; column keys are `compare`'s method names):", "",
              "| n | noise | manifold | d | " + " | ".join(methods) + " |",
              "| --- | --- | --- | --- | " + " | ".join("---" for _ in methods) + " |"]
    for n, nz in cols:
        for m_, d in ACC_CASES:
            rs = [r for r in sel(n, nz) if (r["manifold"], r["d"]) == (m_, d)]
            if not rs:
                continue
            means = []
            for m in methods:
                vals = [r["ours"] for r in rs if r["method"] == m and _finite(r["ours"])]
                means.append(f"{np.mean(vals):.2f}" if vals else "—")
            lines.append(f"| {n} | {nz:g} | {m_} | {true_dimension(m_, d)} | " + " | ".join(means) + " |")
    lines += ["", "Keys: " + "; ".join(f"`{m}` = {label[m]}" for m in methods)
              + " (settings as in `ttlab.intrinsic_dim.compare.COMPARE_METHODS`).", "",
              "Reading the table (every figure below is computed from the estimates above):", "",
              *[f"- {sentence}" for sentence in reading(records, names)], ""]
    return "\n".join(lines)


def bench_accuracy(sizes: list[int], ambient: int, seeds: list[int], noise_levels: tuple[float, ...],
                   skdim_max_n: int, command: str, large_cases: list[tuple[str, int]] | None = None,
                   cache_path: Path | None = None) -> tuple[str, list[dict]]:
    """Run :func:`accuracy_records` for every size (``seeds[i]`` seeds at ``sizes[i]``; sizes above the
    first restricted to ``large_cases`` if given); return the doc and the records."""
    records: list[dict] = []
    for i, (n, s) in enumerate(zip(sizes, seeds)):
        if s > 0:
            records += accuracy_records(n, ambient, s, noise_levels, n <= skdim_max_n,
                                        cases=large_cases if i > 0 else None, cache_path=cache_path)
    return accuracy_doc(records, ambient, command), records


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
    ap.add_argument("--acc-n", default="2000,20000", help="comma-separated sizes for the accuracy table")
    ap.add_argument("--acc-seeds", default="3,1", help="seeds per size, comma-separated (0 = size not run)")
    ap.add_argument("--acc-large-cases", default="",
                    help="manifolds run at the sizes after the first, e.g. cube:8,sphere:10 (default: all)")
    ap.add_argument("--acc-skdim-max-n", type=int, default=2000,
                    help="cross-check against scikit-dimension at sizes up to this (default 2000)")
    ap.add_argument("--acc-cache", type=Path,
                    help="JSON file of finished accuracy datasets: written after each one, read to resume an interrupted run")
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

        acc_n = [int(v) for v in args.acc_n.split(",")]
        acc_seeds = [int(v) for v in args.acc_seeds.split(",")]
        if len(acc_seeds) != len(acc_n):
            ap.error("--acc-seeds needs one count per --acc-n size")
        known = {f"{m}:{d}": (m, d) for m, d in ACC_CASES}
        large = [c.strip() for c in args.acc_large_cases.split(",") if c.strip()]
        for c in large:
            if c not in known:
                ap.error(f"--acc-large-cases: unknown case {c!r}; choose from {', '.join(known)}")
        command = "benchmarks/bench_intrinsic_dim.py " + " ".join(sys.argv[1:])
        text, results["accuracy_records"] = bench_accuracy(acc_n, 64, acc_seeds, (0.0, 0.01), args.acc_skdim_max_n, command,
                                                           large_cases=[known[c] for c in large] or None,
                                                           cache_path=args.acc_cache)
        atomic_write_text(DOC, text)
        print(text)
    if args.json_out:
        from ttlab.provenance import atomic_write_json, versions

        atomic_write_json(args.json_out, {"results": results, "args": {k: v for k, v in vars(args).items() if not k.startswith("_")},
                                          "versions": versions(extra=("scikit-dimension", "scikit-learn", "faiss-cpu"))})


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
