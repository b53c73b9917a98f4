"""Coverage of `ttlab scaling frontier`'s intervals on generated Chinchilla-like sets with a known answer (issue 35).

Run on demand: `python benchmarks/bench_frontier_coverage.py [--sets 50] [--bootstrap 100] [--quick] [--plot F.png]`.

Each set: the 48-run grid N ∈ 8 sizes 1e7…3e9 × D ∈ 6 sizes 1e9…3e11, losses from Hoffmann et al.'s fit
(E 1.69, A 406.4, α 0.34, B 410.7, β 0.28) times log-normal noise (σ = 0.01 in log loss), seeded by the set's
number. Each set is fitted in the Chinchilla form (summed Huber, pairs bootstrap) and its frontier computed at
1e20 and 1e22 FLOPs. Printed: the share of sets whose 95 % interval covers the true a, N_opt and L_opt (the
target is ≥ 90 %), the median interval widths, and the number of sets whose fit was flagged not identifiable.
`--quick`: 8 sets, 40 replicates. `--plot`: each set's interval of a against the truth.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ttlab.scaling.fit import fit_chinchilla
from ttlab.scaling.frontier import compute_optimal

TRUTH = {"E": 1.69, "A": 406.4, "B": 410.7, "alpha": 0.34, "beta": 0.28}
BUDGETS = (1e20, 1e22)


def generated(seed: int, noise: float = 0.01) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One generated set of runs (N, D, loss)."""
    n = np.repeat(np.geomspace(1e7, 3e9, 8), 6)
    d = np.tile(np.geomspace(1e9, 3e11, 6), 8)
    t = TRUTH
    loss = (t["E"] + t["A"] * n ** -t["alpha"] + t["B"] * d ** -t["beta"]) * np.exp(
        np.random.default_rng(seed).normal(0, noise, n.size))
    return n, d, loss


def one_set(seed: int, bootstrap: int) -> dict:
    """The frontier of one generated set, and whether each interval covers the truth."""
    n, d, loss = generated(seed)
    fit = fit_chinchilla(n, d, loss, bootstrap=bootstrap, seed=seed)
    f = compute_optimal(fit.params, BUDGETS, samples=fit.bootstrap_samples)
    true = compute_optimal(TRUTH, BUDGETS)
    row = {"seed": seed, "identifiable": fit.identifiable, "a": f.a, "covers": {}}
    row["covers"]["a"] = f.a["ci"][0] <= true.a["value"] <= f.a["ci"][1]
    for q in ("n_opt", "loss_opt"):
        for e, t in zip(f.budgets, true.budgets):
            lo, hi = e[q]["ci"]
            row["covers"][f"{q}@{e['compute']:.0e}"] = lo <= t[q]["value"] <= hi
            row.setdefault("width", {})[f"{q}@{e['compute']:.0e}"] = (hi - lo) / t[q]["value"]
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", type=int, default=50)
    ap.add_argument("--bootstrap", type=int, default=100)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--plot")
    args = ap.parse_args()
    sets, boot = (8, 40) if args.quick else (args.sets, args.bootstrap)
    t0 = time.perf_counter()
    rows = [one_set(seed, boot) for seed in range(sets)]
    true_a = compute_optimal(TRUTH, BUDGETS).a["value"]
    print(f"{sets} generated sets, {boot} pairs-bootstrap replicates each, {time.perf_counter() - t0:.0f} s; "
          f"true a = {true_a:.4f}")
    for key in rows[0]["covers"]:
        share = np.mean([r["covers"][key] for r in rows])
        width = np.median([r["width"][key] for r in rows]) if key in rows[0].get("width", {}) else None
        print(f"  {key:16s} covered in {share:6.1%} of sets" + (f"; median relative width {width:.3f}" if width else ""))
    print(f"  not identifiable: {sum(not r['identifiable'] for r in rows)} of {sets}")
    if args.plot:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(6, 3.5))
        ax = fig.add_subplot(1, 1, 1)
        for i, r in enumerate(rows):
            lo, hi = r["a"]["ci"]
            ax.plot([i, i], [lo, hi], color="tab:blue" if r["covers"]["a"] else "tab:red")
            ax.plot(i, r["a"]["value"], ".", color="k")
        ax.axhline(true_a, color="k", lw=0.8, ls="--", label=f"true a = {true_a:.3f}")
        ax.set_xlabel("generated set")
        ax.set_ylabel("a (N_opt ∝ C^a), 95 % interval")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
