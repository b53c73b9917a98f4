"""Paper B's ID estimator checked where the answer is known, in ``ttlab reproduce``: the part ``id_accuracy`` runs
MLE (mean and harmonic), TwoNN and GRIDE on synthetic manifolds of known dimension (table, figure and claims).

Claims (rules of :mod:`ttlab.reproduce.verdicts`, each printed with its thresholds and reason): the paper's estimator
(MLE, K = 20, arithmetic mean) recovers d ≤ 10 on noise-free manifolds (mean and worst relative error); the
cross-check on a 5-dim linear subspace of R^768 (≈ 5.3 mean, ≈ 5.0 harmonic); the harmonic rule is less biased at low
d.

May import: :mod:`ttlab.reproduce` (registry, verdicts, report), :mod:`ttlab.provenance` and, inside the functions,
:mod:`ttlab.intrinsic_dim`. Not the CLI.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from ttlab.reproduce.registry import PartContext, PerMode, register_part
from ttlab.reproduce.report_blocks import Claims, Figure, Paragraph, Table
from ttlab.reproduce.verdicts import make_claim

ID_CASES = [("sphere", 2), ("sphere", 5), ("sphere", 10), ("cube", 3), ("cube", 8), ("linear", 5),
            ("swiss-roll", 2), ("nonlinear", 4), ("nonlinear", 8)]
PAPER_EST = "MLE K=20, mean (paper)"
HARMONIC_EST = "MLE K=20, harmonic"


def _estimators() -> dict:
    from ttlab.intrinsic_dim import GRIDE, MLE, PAPER, TwoNN

    return {
        PAPER_EST: lambda: MLE(k=PAPER.k, average=PAPER.average),
        HARMONIC_EST: lambda: MLE(k=PAPER.k, average="harmonic"),
        "TwoNN (10% discarded)": lambda: TwoNN(),
        "GRIDE n1=10, n2=20": lambda: GRIDE(n1=10),
    }


def _id_figure(rows: list[dict], names: list[str], noises: list[float], path: Path) -> None:
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as MplFigure

    from ttlab.provenance import atomic_savefig

    fig = MplFigure(figsize=(5.2 * len(noises), 4.6), layout="constrained")
    FigureCanvasAgg(fig)
    dmax = max(r["d"] for r in rows) * 1.15
    markers = ["o", "s", "^", "D", "v"]
    for j, noise in enumerate(noises):
        ax = fig.add_subplot(1, len(noises), j + 1)
        grid = np.linspace(0, dmax, 50)
        ax.fill_between(grid, 0.9 * grid, 1.1 * grid, color="0.9", label="±10 %")
        ax.plot(grid, grid, color="k", lw=1, label="d̂ = d")
        for i, name in enumerate(names):
            sel = [r for r in rows if r["noise"] == noise]
            x = np.array([r["d"] for r in sel], dtype=float) + 0.12 * (i - (len(names) - 1) / 2)
            y = np.array([r["estimates"][name]["mean"] for r in sel])
            e = np.array([r["estimates"][name]["std"] for r in sel])
            ax.errorbar(x, y, yerr=e, fmt=markers[i % len(markers)], ms=4, capsize=2, color=f"C{i}", label=name)
        ax.set(xlabel="true intrinsic dimension d", ylabel="estimated dimension d̂", xlim=(0, dmax), ylim=(0, None),
               title=f"noise σ = {noise:g} per coordinate")
        ax.legend(fontsize=7, loc="upper left")
    atomic_savefig(fig, path, dpi=100)


def claims(r: dict) -> list[dict]:
    clean = [x for x in r["rows"] if x["noise"] == 0.0 and x["d"] <= 10]
    rel = [abs(x["estimates"][PAPER_EST]["mean"] - x["d"]) / x["d"] for x in clean]
    mean_rel = sum(rel) / len(rel) if rel else None
    worst = max(rel) if rel else None
    worst_case = f"{clean[rel.index(worst)]['manifold']} d={clean[rel.index(worst)]['d']}" if rel else "—"
    out = [make_claim(
        "id_accuracy.paper_estimator",
        "Paper B's estimator (MLE, K = 20, arithmetic mean) recovers the intrinsic dimension (d ≤ 10, no noise)",
        "errors_at_most", {"mean": mean_rel, "worst": worst, "n": len(rel)},
        {"holds_mean": 0.10, "holds_worst": 0.15, "partly_mean": 0.20}, quantity="relative error |d̂ − d|/d",
        summary=(f"mean relative error {100 * mean_rel:.1f} %, worst {100 * worst:.1f} % ({worst_case}) over "
                 f"{len(clean)} manifolds, n = {r['n']}") if rel else "no noise-free case with d ≤ 10", kind="check")]
    x = r["cross_check"]
    dm, dh = abs(x["mean"] - 5.3), abs(x["harmonic"] - 5.0)
    out.append(make_claim(
        "id_accuracy.cross_check",
        f"Cross-check: 5-dim linear subspace of R^{x['ambient']}, n = {x['n']}, K = 20 gives ≈ 5.3 (mean) and "
        "≈ 5.0 (harmonic)",
        "at_most", {"value": max(dm, dh), "mean": x["mean"], "harmonic": x["harmonic"]}, {"holds": 0.1, "partly": 0.3},
        quantity="the larger distance from 5.3 (mean) / 5.0 (harmonic)",
        summary=f"mean {x['mean']:.3f}, harmonic {x['harmonic']:.3f}", kind="check"))
    low = [x for x in r["rows"] if x["noise"] == 0.0 and x["d"] <= 5]
    better = sum(abs(x["estimates"][HARMONIC_EST]["mean"] - x["d"]) < abs(x["estimates"][PAPER_EST]["mean"] - x["d"])
                 for x in low)
    out.append(make_claim(
        "id_accuracy.harmonic_less_biased",
        "The harmonic (MacKay–Ghahramani) combination is less biased than the arithmetic mean at low d",
        "count", {"passed": better, "total": len(low)}, {"holds": 0.75, "partly": 0.5, "chance": 0.5},
        quantity="the harmonic estimate is closer to d",
        summary=f"closer to d in {better}/{len(low)} noise-free cases with d ≤ 5", kind="check"))
    return out


def render(r: dict) -> list:
    names = r["estimators"]
    summary = []
    for noise in r["noises"]:
        sel = [x for x in r["rows"] if x["noise"] == noise]
        summary.append([f"{noise:g}"] + [f"{100 * sum(x['estimates'][n]['rel_error'] for x in sel) / len(sel):.1f} %"
                                         for n in names])
    per = [[f"{x['noise']:g}", x["manifold"], x["d"]] + [f"{x['estimates'][n]['mean']:.2f}" for n in names]
           for x in r["rows"]]
    c = r["cross_check"]
    return [
        Paragraph(f"What was run: every estimator on {len(r['cases'])} manifolds of known dimension "
                  f"({', '.join(f'{m} d={d}' for m, d in r['cases'])}), n = {r['n']} points each, isometrically "
                  f"rotated into R^{r['ambient']}, {r['seeds']} seed(s), Gaussian noise σ ∈ {{{', '.join(f'{v:g}' for v in r['noises'])}}} "
                  "per ambient coordinate (ttlab.intrinsic_dim.sample_manifold). Paper B estimates the ID of "
                  "text with the MLE (K = 20); this checks that tool where the answer is known."),
        Figure(r["figure"], "Estimated against true intrinsic dimension (mean ± std over seeds); grey band ±10 %."),
        Table(["noise"] + [f"{n}: mean rel. error" for n in names], summary),
        Table(["noise", "manifold", "d"] + names, per, caption="Mean estimate over seeds."),
        Paragraph(f"Cross-check (known values for the paper's protocol): 5-dim linear subspace of R^{c['ambient']}, n = {c['n']}, K = 20: "
                  f"arithmetic mean {c['mean']:.3f}, harmonic {c['harmonic']:.3f}."),
        Claims(r["claims"]),
    ]


@register_part("id_accuracy", paper="B", title="Intrinsic-dimension estimators on manifolds of known dimension",
               render=render, claims=claims, estimate=(15, 120), version=2)
def id_accuracy(out: Path, ctx: PartContext) -> dict:
    """MLE (mean and harmonic), TwoNN and GRIDE on synthetic manifolds; table, figure and claims."""
    import numpy as np

    from ttlab.intrinsic_dim import MLE, PAPER, sample_manifold, true_dimension

    cases = ctx.pick(PerMode(quick=ID_CASES, standard=ID_CASES, full=ID_CASES, tiny=ID_CASES[:2] + [("cube", 3)]))
    n = ctx.pick(PerMode(quick=2000, standard=2000, full=4000, tiny=400))
    ambient = 64
    seeds = ctx.pick(PerMode(quick=2, standard=2, full=5, tiny=1))
    noises = ctx.pick(PerMode(quick=[0.0], standard=[0.0], full=[0.0, 0.01], tiny=[0.0]))
    est = _estimators()
    rows = []
    total, done = len(noises) * len(cases) * seeds + 1, 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for noise in noises:
            for m, d in cases:
                true = true_dimension(m, d)
                vals: dict[str, list[float]] = {k: [] for k in est}
                for s in range(seeds):
                    X = sample_manifold(m, d, ambient, n, noise=noise, seed=1000 * ctx.seed + 100 + s)
                    for name, make in est.items():
                        vals[name].append(float(make().fit(X).dimension_))
                    done += 1
                    ctx.step("ID estimators on manifolds", done, total)
                rows.append({"manifold": m, "d": true, "noise": noise, "estimates": {
                    k: {"mean": float(np.mean(v)), "std": float(np.std(v)), "values": v,
                        "rel_error": float(np.mean([abs(x - true) / true for x in v]))} for k, v in vals.items()}})
        cn, camb = ctx.pick(PerMode(quick=3600, standard=3600, full=3600, tiny=1000)), 768
        X = sample_manifold("linear", 5, camb, cn, seed=ctx.seed)
        mean = MLE(k=PAPER.k, average=PAPER.average).fit(X).dimension_
        harm = MLE(k=PAPER.k, average="harmonic").fit(X).dimension_
        ctx.step("ID estimators on manifolds", total, total)
    cross = {"manifold": "linear", "d": 5, "ambient": camb, "n": cn, "k": PAPER.k, "mean": float(mean),
             "harmonic": float(harm)}
    fig = "id_accuracy/estimated_vs_true.png"
    _id_figure(rows, list(est), noises, out / fig)
    r = {"cases": [list(c) for c in cases], "n": n, "ambient": ambient, "seeds": seeds, "noises": noises,
         "estimators": list(est), "rows": rows, "cross_check": cross, "figure": fig}
    return r
