"""Variable projection against the grid of starts on generated Chinchilla sets with a known answer (issue 35, item 3).

Run on demand: `python benchmarks/bench_varpro.py [--seeds 10] [--quick] [--bootstrap 50]`.

Each set: a k×k grid of N over [4e7, 1.6e10] and D over [8e8, 5e11] (Epoch AI's ranges), losses from Besiroglu et
al.'s fit (E 1.82, A 482, α 0.3478, B 2085, β 0.3658) times log-normal noise σ, seeded by the set's number; k ∈ {5, 8,
12}, σ ∈ {0.005, 0.02, 0.05}. Each set is fitted in the Chinchilla form (summed Huber, δ = 1e-3) with
``method="grid"`` and ``method="varpro"``. Printed per (k, σ): in how many sets varpro's objective is lower than the
grid fit's (by more than 1e-9 relative), higher, or the same; the largest relative differences each way; the median
absolute errors of α, β and E against the truth; the median seconds per fit. ``--bootstrap B``: also the seconds of
B pairs replicates of one 8×8 set by each method (varpro's refits search from scratch, the grid's start at the point
estimate). `--quick`: 3 seeds, k ∈ {5, 8}.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ttlab.scaling.fit import fit_chinchilla

TRUTH = {"E": 1.82, "A": 482.0, "alpha": 0.3478, "B": 2085.0, "beta": 0.3658}


def generated(seed: int, k: int, noise: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One generated set of runs (N, D, loss)."""
    n, d = np.meshgrid(np.geomspace(4e7, 1.6e10, k), np.geomspace(8e8, 5e11, k))
    n, d = n.ravel(), d.ravel()
    loss = TRUTH["E"] + TRUTH["A"] / n ** TRUTH["alpha"] + TRUTH["B"] / d ** TRUTH["beta"]
    return n, d, loss * np.exp(np.random.default_rng(seed).normal(0.0, noise, loss.size))


def compare(seeds: int, ks: tuple[int, ...], noises: tuple[float, ...]) -> None:
    """One line per (k, σ): varpro against the grid fit over ``seeds`` sets."""
    print(f"{'k':>3} {'sigma':>6} {'vp<grid':>8} {'vp>grid':>8} {'same':>5} {'max gain':>9} {'max loss':>9} "
          f"{'|dα| grid/vp':>14} {'|dβ| grid/vp':>14} {'|dE| grid/vp':>14} {'s/fit grid/vp':>14}")
    for k in ks:
        for noise in noises:
            rel, err, secs = [], {m: {p: [] for p in ("alpha", "beta", "E")} for m in ("grid", "varpro")}, {
                "grid": [], "varpro": []}
            for seed in range(seeds):
                n, d, loss = generated(seed, k, noise)
                fits = {}
                for m in ("grid", "varpro"):
                    t0 = time.perf_counter()
                    fits[m] = fit_chinchilla(n, d, loss, bootstrap=0, method=m)
                    secs[m].append(time.perf_counter() - t0)
                    for p in err[m]:
                        err[m][p].append(abs(fits[m].params[p] - TRUTH[p]))
                fg, fv = fits["grid"].optimizer["objective"], fits["varpro"].optimizer["objective"]
                rel.append((fv - fg) / fg)
            r = np.array(rel)
            med = {m: {p: float(np.median(v)) for p, v in e.items()} for m, e in err.items()}
            print(f"{k:>3} {noise:>6g} {int((r < -1e-9).sum()):>8} {int((r > 1e-9).sum()):>8} "
                  f"{int((abs(r) <= 1e-9).sum()):>5} {max(0.0, -r.min()):>9.2g} {max(0.0, r.max()):>9.2g} "
                  + " ".join(f"{med['grid'][p]:>6.3f}/{med['varpro'][p]:<7.3f}" for p in ("alpha", "beta", "E"))
                  + f" {np.median(secs['grid']):>6.2f}/{np.median(secs['varpro']):<7.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--bootstrap", type=int, default=0)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    seeds, ks = (3, (5, 8)) if args.quick else (args.seeds, (5, 8, 12))
    compare(seeds, ks, (0.005, 0.02, 0.05))
    if args.bootstrap:
        n, d, loss = generated(0, 8, 0.01)
        for m in ("grid", "varpro"):
            t0 = time.perf_counter()
            r = fit_chinchilla(n, d, loss, bootstrap=args.bootstrap, method=m)
            print(f"{m}: {args.bootstrap} pairs replicates {time.perf_counter() - t0:.1f} s; 95 % CI of α "
                  f"[{r.ci['alpha'][0]:.4f}, {r.ci['alpha'][1]:.4f}], β [{r.ci['beta'][0]:.4f}, {r.ci['beta'][1]:.4f}]")


if __name__ == "__main__":
    main()
