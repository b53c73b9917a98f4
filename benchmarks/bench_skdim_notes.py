"""Where scikit-dimension is slow or gives a wrong number, measured; writes docs/scikit_dimension.md and
docs/figures/skdim_notes.png.

    .venv/bin/python benchmarks/bench_id_compare.py --json > /tmp/compare.json    # optional, for panel 3
    .venv/bin/python benchmarks/bench_skdim_notes.py --compare-json /tmp/compare.json

1. Duplicate points: a sphere of dimension 5 in R^64 (2,000 points, noise 0.01) in which a fraction of
   the points is replaced by copies of other points of the sample. Every estimator of `ttlab id compare`
   (ESS left out: scikit-dimension's ESS takes minutes here) is run by scikit-dimension with compare's
   settings and by ttlab's `compare`, which drops exact duplicates and counts them. Token embeddings
   have duplicates whenever two windows share a prefix (the first position of every window that starts
   with the same token, for a start).
2. Start-up: in a fresh process per estimator, the import and the first fit against the second fit on
   the same data (1,000 × 20), for scikit-dimension and for ttlab (same estimator, same settings); the
   first call of scikit-dimension's numba functions compiles them.
3. Speed: each estimator's time at 20,000 × 768 as `bench_id_compare.py --json` measured it (same
   settings on both sides; ttlab shares one neighbour search, shown as its own bar).

Every sentence of the doc is computed from these numbers.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_id_compare import _skdim_calls  # noqa: E402  (the skdim calls with compare's settings)

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "scikit_dimension.md"
FIG = ROOT / "docs" / "figures" / "skdim_notes.png"
FRACTIONS = (0.0, 0.001, 0.01, 0.05, 0.2)
MANIFOLD = ("sphere", 5, 64, 2000, 0.01)  # name, d, ambient, n, noise


def with_duplicates(X: np.ndarray, fraction: float, seed: int = 0) -> np.ndarray:
    """``X`` with ``round(fraction · n)`` rows replaced by copies of other rows (n unchanged)."""
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    m = int(round(fraction * n))
    out = X.copy()
    if m:
        targets = rng.choice(n, size=m, replace=False)
        rest = np.setdiff1d(np.arange(n), targets)
        out[targets] = X[rng.choice(rest, size=m)]
    return out


def _call(fn, X) -> tuple[float | None, str | None]:
    """(estimate, None) or (None, the exception's type and first line)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v = float(fn(X))
        return v, None
    except Exception as exc:  # noqa: BLE001 (recorded, not hidden: it is the finding)
        return None, f"{type(exc).__name__}: {str(exc).splitlines()[0][:80] if str(exc) else ''}"


def duplicates_experiment(methods: list[str]) -> dict:
    """scikit-dimension and ttlab on the sphere with each fraction of duplicated rows."""
    from ttlab.intrinsic_dim import sample_manifold
    from ttlab.intrinsic_dim.compare import compare

    name, d, D, n, noise = MANIFOLD
    X = sample_manifold(name, d, D, n, noise=noise, seed=0)
    calls = _skdim_calls(D)
    rows = []
    for f in FRACTIONS:
        Xf = with_duplicates(X, f)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = compare(Xf, methods)
        ours = {r.method: r.dimension for r in res.rows}
        for m in methods:
            v, err = _call(calls[m], Xf)
            rows.append({"fraction": f, "n_duplicates": res.n_duplicates_removed, "method": m,
                         "skdim": v, "skdim_error": err, "ttlab": ours[m]})
    return {"manifold": dict(zip(("name", "d", "ambient", "n", "noise"), MANIFOLD)), "fractions": list(FRACTIONS),
            "rows": rows}


_COLD = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
side, method, D = sys.argv[1], sys.argv[2], 20
t0 = time.perf_counter()
import numpy as np
if side == "skdim":
    sys.path.insert(0, {bench!r})
    from bench_id_compare import _skdim_calls
    import skdim  # noqa: F401
    fn = _skdim_calls(D)[method]
else:
    from ttlab.intrinsic_dim.compare import compare
    fn = lambda X: compare(X, [method]).rows[0].dimension
t1 = time.perf_counter()
X = np.random.default_rng(0).standard_normal((1000, D))
a = time.perf_counter(); fn(X); b = time.perf_counter(); fn(X); c = time.perf_counter()
print(json.dumps({{"import_s": t1 - t0, "first_s": b - a, "second_s": c - b}}))
"""


def cold_start_experiment(methods: list[str]) -> dict:
    """Import, first and second fit per estimator and side, each estimator in a fresh process."""
    code = _COLD.format(bench=str(Path(__file__).resolve().parent))
    out: dict[str, dict] = {}
    for m in methods:
        out[m] = {}
        for side in ("skdim", "ttlab"):
            p = subprocess.run([sys.executable, "-c", code, side, m], capture_output=True, text=True, check=True,
                               cwd=ROOT)
            out[m][side] = json.loads(p.stdout.strip().splitlines()[-1])
    return out


# ----------------------------------------------------------------------------------- reading


def _fmt(v: float | None) -> str:
    return "—" if v is None or not math.isfinite(v) else f"{v:.2f}"


def duplicate_sentences(dup: dict, tol: float = 0.01) -> list[str]:
    """What the duplicates do to each side, from the records: which scikit-dimension estimators fail or
    move by more than ``tol`` (relative) at each fraction, and how far ttlab's estimates move."""
    rows = dup["rows"]
    methods = list(dict.fromkeys(r["method"] for r in rows))
    base = {r["method"]: r for r in rows if r["fraction"] == 0.0}
    out = []
    for f in dup["fractions"]:
        if f == 0.0:
            continue
        sel = [r for r in rows if r["fraction"] == f]
        failed, moved = [], []
        for r in sel:
            b = base[r["method"]]["skdim"]
            if r["skdim"] is None or not math.isfinite(r["skdim"]):
                failed.append(r["method"] + (" (error)" if r["skdim_error"] else f" ({r['skdim']})"))
            elif b is not None and math.isfinite(b) and abs(r["skdim"] - b) > tol * abs(b):
                moved.append(f"{r['method']} {b:.2f} → {r['skdim']:.2f}")
        ours = [abs(r["ttlab"] - base[r["method"]]["ttlab"]) / abs(base[r["method"]]["ttlab"])
                for r in sel if r["ttlab"] is not None and base[r["method"]]["ttlab"]]
        n_dup = sel[0]["n_duplicates"]
        text = (f"With {100 * f:g} % of the points duplicated ({n_dup} rows): scikit-dimension gives no finite "
                f"number for {len(failed)} of {len(methods)} estimators"
                + (f" ({', '.join(failed)})" if failed else "")
                + f", and {len(moved)} more move by over {100 * tol:g} %"
                + (f" ({'; '.join(moved)})" if moved else "")
                + f". ttlab drops the {n_dup} duplicates and its estimates move by at most "
                  f"{100 * max(ours, default=0.0):.2g} % (the sample has {n_dup} fewer distinct points).")
        out.append(text)
    return out


def cold_sentences(cold: dict) -> list[str]:
    """Start-up cost per side, from the measurements: time to the first estimate in a fresh process, and
    the first fit's extra cost over the second."""
    def extra(side: str, m: str) -> float:
        c = cold[m][side]
        return c["first_s"] - c["second_s"]

    def first_answer(side: str) -> float:
        return float(np.median([cold[m][side]["import_s"] + cold[m][side]["first_s"] for m in methods]))

    methods = list(cold)
    worst = max(methods, key=lambda m: extra("skdim", m))
    slow_first = [m for m in methods if extra("skdim", m) > 1.0]
    tt_lo, tt_hi = min(extra("ttlab", m) for m in methods), max(extra("ttlab", m) for m in methods)
    return [
        f"Time to the first estimate in a fresh process (import and first fit; median over the {len(methods)} "
        f"estimators): scikit-dimension {first_answer('skdim'):.2f} s, ttlab {first_answer('ttlab'):.2f} s.",
        f"scikit-dimension's first fit costs more than its second by over 1 s for {len(slow_first)} of "
        f"{len(methods)} estimators" + (f" ({', '.join(slow_first)})" if slow_first else "")
        + f"; the largest gap is {worst}'s, {cold[worst]['skdim']['first_s']:.2f} s against "
          f"{cold[worst]['skdim']['second_s']:.2f} s (numba compiles its functions on the first call).",
        f"ttlab's first fit costs {tt_lo:.2f}–{tt_hi:.2f} s more than its second: its import is lazy and the first "
        "call loads PyTorch (the neighbour search and the thread settings), once per process.",
    ]


def speed_sentences(cmp: dict) -> list[str]:
    """The 20,000 × 768 comparison, from bench_id_compare's JSON."""
    o, s = cmp["per_method_ours_s"], cmp["per_method_skdim_s"]
    methods = cmp["methods"]
    slowest = max(methods, key=lambda m: s[m])
    return [
        f"At {cmp['n']:,} × {cmp['D']} all {len(methods)} estimators took scikit-dimension "
        f"{cmp['skdim_s']['min']:.0f} s (fastest of {cmp['repeats']} repeats) one after another, and ttlab's "
        f"compare {cmp['ours_s']['min']:.0f} s with one shared neighbour search of "
        f"{o['(shared kNN)']:.1f} s: {cmp['ratio_min']:.1f}× (median of the repeats {cmp['ratio_median']:.1f}×).",
        f"scikit-dimension's slowest estimator is {slowest} ({s[slowest]:.0f} s, {100 * s[slowest] / sum(s[m] for m in methods):.0f} % "
        f"of its total); the estimates agree to a relative {cmp['max_rel_difference']:.1e} at most.",
    ] + ([f"ESS, left out above (scikit-dimension's loops in Python over every neighbourhood's simplices): on "
          f"{cmp['ess']['n']} of the points scikit-dimension took {cmp['ess']['skdim_s']:.1f} s and ttlab "
          f"{cmp['ess']['ours_s']:.2f} s ({cmp['ess']['ratio']:.0f}×), estimates equal to a relative "
          f"{cmp['ess']['rel_difference']:.0e}."] if "ess" in cmp else [])


# ----------------------------------------------------------------------------------- output


def figure(dup: dict, cold: dict, cmp: dict | None, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ttlab.provenance import atomic_savefig

    ncols = 3 if cmp else 2
    fig, axes = plt.subplots(1, ncols, figsize=(5.2 * ncols, 4.2))
    ax = axes[0]
    rows = dup["rows"]
    methods = list(dict.fromkeys(r["method"] for r in rows))
    xs = [max(f, 3e-4) for f in dup["fractions"]]
    top = 1.0
    for r in rows:
        if r["skdim"] is not None and math.isfinite(r["skdim"]):
            top = max(top, r["skdim"])
    top *= 1.15
    for m in methods:
        sk = [next(r for r in rows if r["method"] == m and r["fraction"] == f)["skdim"] for f in dup["fractions"]]
        ys = [v if v is not None and math.isfinite(v) else top for v in sk]
        line, = ax.plot(xs, ys, "o-", ms=3, lw=1, label=m)
        bad = [(x, y) for x, y, v in zip(xs, ys, sk) if v is None or not math.isfinite(v)]
        if bad:
            ax.plot(*zip(*bad), "x", color=line.get_color(), ms=8, mew=2)
    ours = [[next(r for r in rows if r["method"] == m and r["fraction"] == f)["ttlab"] for f in dup["fractions"]]
            for m in methods]
    ax.fill_between(xs, np.nanmin(np.array(ours, dtype=float), axis=0), np.nanmax(np.array(ours, dtype=float), axis=0),
                    color="0.85", label="ttlab (all estimators)")
    ax.axhline(dup["manifold"]["d"], color="k", ls=":", lw=1)
    ax.set_xscale("log")
    ax.set_xlabel("fraction of rows duplicated (0 drawn at 3e-4)")
    ax.set_ylabel("estimated ID (× at the top: inf, nan or error)")
    ax.set_title(f"duplicates: sphere d = {dup['manifold']['d']}, n = {dup['manifold']['n']:,}")
    ax.legend(fontsize=6, ncol=2)

    ax = axes[1]
    cm = list(cold)
    y = np.arange(len(cm))
    ax.barh(y - 0.2, [cold[m]["skdim"]["first_s"] for m in cm], 0.4, label="scikit-dimension, first fit", color="C3")
    ax.barh(y - 0.2, [cold[m]["skdim"]["second_s"] for m in cm], 0.4, label="scikit-dimension, second fit", color="C1")
    ax.barh(y + 0.2, [cold[m]["ttlab"]["first_s"] for m in cm], 0.4, label="ttlab, first fit", color="C0")
    ax.barh(y + 0.2, [cold[m]["ttlab"]["second_s"] for m in cm], 0.4, label="ttlab, second fit", color="C9")
    ax.set_yticks(y, cm, fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("seconds (1,000 × 20, fresh process)")
    ax.set_title("start-up: first vs second fit")
    ax.legend(fontsize=6)

    if cmp:
        ax = axes[2]
        ms = cmp["methods"] + ["(shared kNN)"]
        y = np.arange(len(ms))
        ax.barh(y - 0.2, [cmp["per_method_skdim_s"].get(m, 0.0) for m in ms], 0.4, label="scikit-dimension", color="C3")
        ax.barh(y + 0.2, [cmp["per_method_ours_s"][m] for m in ms], 0.4, label="ttlab compare", color="C0")
        ax.set_yticks(y, ms, fontsize=7)
        ax.set_xscale("log")
        ax.set_xlabel("seconds")
        ax.set_title(f"speed at {cmp['n']:,} × {cmp['D']} ({cmp['ratio_min']:.1f}× in total)")
        ax.legend(fontsize=6)
    fig.tight_layout()
    atomic_savefig(fig, path, dpi=130)
    plt.close(fig)


def doc(dup: dict, cold: dict, cmp: dict | None, command: str, seconds: float) -> str:
    from ttlab.provenance import versions

    v = versions(extra=("scikit-dimension", "numba"))
    m = dup["manifold"]
    methods = list(dict.fromkeys(r["method"] for r in dup["rows"]))
    lines = [
        "# scikit-dimension: where it is slow or gives a wrong number",
        "",
        f"Generated by `{command}` in {seconds:.0f} s (ttlab {v['ttlab']}, scikit-dimension "
        f"{v['scikit-dimension']}, numba {v.get('numba')}, numpy {v['numpy']}). Settings: those of `ttlab id compare` "
        "on both sides (`benchmarks/bench_id_compare.py`).",
        "",
        f"![scikit-dimension notes](figures/{FIG.name})",
        "",
        "## Duplicate points",
        "",
        f"A {m['name']} of dimension {m['d']} in R^{m['ambient']} ({m['n']:,} points, noise {m['noise']:g}); a "
        "fraction of the rows replaced by copies of other rows. Estimates (scikit-dimension / ttlab):",
        "",
        "| estimator | " + " | ".join(f"{100 * f:g} %" for f in dup["fractions"]) + " |",
        "| --- | " + " | ".join("---" for _ in dup["fractions"]) + " |",
    ]
    for meth in methods:
        cells = []
        for f in dup["fractions"]:
            r = next(x for x in dup["rows"] if x["method"] == meth and x["fraction"] == f)
            sk = "error" if r["skdim_error"] else (_fmt(r["skdim"]) if r["skdim"] is not None and math.isfinite(r["skdim"])
                                                   else str(r["skdim"]))
            cells.append(f"{sk} / {_fmt(r['ttlab'])}")
        lines.append(f"| {meth} | " + " | ".join(cells) + " |")
    errors = sorted({f"{r['method']}: {r['skdim_error']}" for r in dup["rows"] if r["skdim_error"]})
    lines += ["", *[f"- {s}" for s in duplicate_sentences(dup)]]
    if errors:
        lines += ["", "scikit-dimension's errors: " + "; ".join(errors) + "."]
    lines += ["", "ttlab drops exact duplicates before any estimator runs, warns (`DuplicatePointsWarning`) and "
              "reports the count (`n_duplicates_removed`; the title line of `ttlab id compare`'s table).", "",
              "## Start-up", "", "| estimator | scikit-dimension import / first / second fit (s) | ttlab import / first / second (s) |",
              "| --- | --- | --- |"]
    for meth, c in cold.items():
        s, t = c["skdim"], c["ttlab"]
        lines.append(f"| {meth} | {s['import_s']:.2f} / {s['first_s']:.3f} / {s['second_s']:.3f} | "
                     f"{t['import_s']:.2f} / {t['first_s']:.3f} / {t['second_s']:.3f} |")
    lines += ["", *[f"- {s}" for s in cold_sentences(cold)]]
    if cmp:
        lines += ["", "## Speed", "", *[f"- {s}" for s in speed_sentences(cmp)],
                  f"- Measured with `benchmarks/bench_id_compare.py` ({cmp['repeats']} interleaved repeats per side, "
                  f"the same warm-up on both; load average {cmp['load_average'][0]:.1f} at the end)."]
    return "\n".join(lines) + "\n"


KEPT_HEADING = "\n## Conformance"
"""The hand-written section from this heading on (tests/intrinsic_dim/test_skdim_conformance.py) is kept."""


def _kept_sections(text: str) -> str:
    """The hand-written tail of the document (from :data:`KEPT_HEADING`), preserved when regenerating."""
    i = text.find(KEPT_HEADING)
    return "" if i < 0 else text[i:]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--compare-json", type=Path, help="bench_id_compare.py --json output (the speed panel)")
    ap.add_argument("--json-out", type=Path, help="also write every number here")
    args = ap.parse_args()
    from ttlab.intrinsic_dim.compare import COMPARE_METHODS
    from ttlab.provenance import atomic_write_json, atomic_write_text

    cmp = None
    if args.compare_json:
        try:
            text = args.compare_json.read_text()
            cmp = json.loads(text[text.index("{"):text.rindex("}") + 1])  # tolerate stray output around the JSON
            missing = [k for k in ("n", "D", "methods", "per_method_ours_s", "per_method_skdim_s") if k not in cmp]
            if missing:
                raise ValueError(f"no {', '.join(missing)}")
        except (OSError, ValueError, TypeError) as exc:
            ap.error(f"--compare-json {args.compare_json}: not the output of bench_id_compare.py --json ({exc})")
    methods = [m for m in COMPARE_METHODS if m != "ess"]
    t0 = time.perf_counter()
    dup = duplicates_experiment(methods)
    cold = cold_start_experiment(methods)
    seconds = time.perf_counter() - t0
    figure(dup, cold, cmp, FIG)
    command = "benchmarks/bench_skdim_notes.py " + " ".join(sys.argv[1:])
    kept = _kept_sections(DOC.read_text() if DOC.exists() else "")
    atomic_write_text(DOC, doc(dup, cold, cmp, command, seconds) + kept)
    if args.json_out:
        atomic_write_json(args.json_out, {"duplicates": dup, "cold_start": cold, "compare": cmp})
    print(DOC.read_text())


if __name__ == "__main__":
    main()
