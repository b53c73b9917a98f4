"""The main job: reproduce the papers' experiments at this machine's scale and write a report.

Each part writes its own ``parts/<name>.json`` atomically; on re-run a part whose file exists with the
same configuration is reused, so an interrupted run resumes without losing finished work. A part that
fails is recorded (error message) and the others still run.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from pathlib import Path

from ttlab.provenance import atomic_write_json, atomic_write_text, versions

PartFn = Callable[[Path, bool], dict]


def _part_ntp_figure2(out: Path, quick: bool) -> dict:
    from ttlab.ntp.experiment import run_dynamics
    from ttlab.ntp.generate import generate_dataset
    from ttlab.ntp.train import TrainConfig

    ds = generate_dataset(20, 100, 2, 6, seed=0)
    summary = run_dynamics(ds, TrainConfig(), out / "ntp_figure2")
    return {k: v for k, v in summary.items() if not k.startswith("_")} | {"figure": "ntp_figure2/dynamics.png"}


def _part_ntp_ablations(out: Path, quick: bool) -> dict:
    from ttlab.ntp.experiment import run_dynamics
    from ttlab.ntp.generate import generate_dataset
    from ttlab.ntp.train import TrainConfig

    ds = generate_dataset(20, 100, 2, 6, seed=0)
    variants = {
        "paper (two-stage NGD, zero init)": TrainConfig(),
        "random init": TrainConfig(init="random", init_scale=0.1),
        "joint training (NGD)": TrainConfig(schedule="joint"),
        "two-stage plain GD": TrainConfig(optimizer="gd", eta0=1.0, eta=1.0),
        "two-stage Adam": TrainConfig(optimizer="adam", eta0=0.01, eta=0.01),
    }
    rows = []
    for i, (name, cfg) in enumerate(variants.items()):
        sub = f"ntp_ablations/{i}"
        s = run_dynamics(ds, cfg, out / sub)
        last = list(s["stages"].values())[-1]
        rows.append({
            "variant": name,
            "config": s["config"],
            "final_loss": last["final_loss"],
            "final_cosine_kq": last["final_cosine"],
            "final_norm_kq": last["final_norm"],
            "final_cosine_ov": last.get("final_cosine_ov"),
            "final_min_optimal_attention": last["final_min_optimal_attention"],
            "figure": f"{sub}/dynamics.png",
        })
    return {"rows": rows}


def _part_ntp_generalization(out: Path, quick: bool) -> dict:
    """Theorem 3 on unseen sentences, after the paper's 900 stage-2 steps, after longer training, and in
    the max-margin limit itself (W*_kq scaled up)."""
    import torch

    from ttlab.ntp.generalize import evaluate_generalization, unseen_sentences
    from ttlab.ntp.generate import generate_dataset
    from ttlab.ntp.model import NTPTransformer
    from ttlab.ntp.train import TrainConfig, train

    ds = generate_dataset(20, 100, 2, 6, seed=0)
    model = NTPTransformer(ds)
    sents = unseen_sentences(model.structure, n_samples=1000, seed=0)
    rows = []
    for steps in (900, 3000) if quick else (900, 3000, 10000):
        res = train(ds, TrainConfig(stage2_steps=steps), model=model)
        rep = evaluate_generalization(model, res.W_ov, res.W_kq, sents)
        rows.append({"stage2_steps": steps, "agreement": rep["agreement"], "by_case": rep["by_case"]})
    limit_W = torch.as_tensor(res.wkq_star.W) * (10 * float(res.W_kq.norm()) / res.wkq_star.norm)
    limit = evaluate_generalization(model, res.W_ov, limit_W, sents)
    return {"n_sentences": len(sents), "rows": rows,
            "max_margin_limit": {"agreement": limit["agreement"], "by_case": limit["by_case"]},
            "examples": [c for c in limit["cases"][:3]] + [c for c in limit["cases"] if c["case"] == "non-comparable"][:3]}


def _part_ntp_svop(out: Path, quick: bool) -> dict:
    from ttlab.ntp.walkthrough import svop_walkthrough

    return svop_walkthrough()


PARTS: dict[str, PartFn] = {
    "ntp_figure2": _part_ntp_figure2,
    "ntp_ablations": _part_ntp_ablations,
    "ntp_generalization": _part_ntp_generalization,
    "ntp_svop": _part_ntp_svop,
}


def run_reproduction(
    out_dir: str | Path,
    quick: bool = True,
    parts: list[str] | None = None,
    on_part: Callable[[str, str], None] | None = None,
) -> dict:
    """Run every part (or ``parts``), reusing finished ones; write results.json and report.md."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    names = list(PARTS) if parts is None else parts
    results: dict = {"mode": "quick" if quick else "full", "versions": versions(), "parts": {}}
    for name in names:
        path = out / "parts" / f"{name}.json"
        cached = _load(path)
        if cached is not None and cached.get("mode") == results["mode"] and cached.get("status") == "ok":
            results["parts"][name] = cached
            if on_part:
                on_part(name, "reused")
            continue
        if on_part:
            on_part(name, "running")
        t0 = time.perf_counter()
        try:
            data = PARTS[name](out, quick)
            rec = {"status": "ok", "mode": results["mode"], "wall_time_s": time.perf_counter() - t0, "result": data}
        except Exception as exc:  # a failing part is reported, the others still run
            rec = {"status": "failed", "mode": results["mode"], "wall_time_s": time.perf_counter() - t0,
                   "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
        atomic_write_json(path, rec)
        results["parts"][name] = rec
        if on_part:
            on_part(name, rec["status"])
    atomic_write_json(out / "results.json", results)
    atomic_write_text(out / "report.md", render_markdown(results))
    return results


def _load(path: Path) -> dict | None:
    import json

    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def render_markdown(results: dict) -> str:
    """The report in Markdown (figures referenced by relative path)."""
    lines = ["# ttlab reproduction report", "", f"Mode: {results['mode']}.", ""]
    parts = results["parts"]
    lines += ["## Paper A — next-token prediction (Huang, Liang, Yang 2024)", ""]
    p = parts.get("ntp_figure2")
    if p and p["status"] == "ok":
        r = p["result"]
        s1, s2 = r["stages"]["stage_1"], r["stages"]["stage_2"]
        lines += [
            "### Figure 2: training dynamics (|V| = 20, d = |V|, 900 + 900 NGD steps)",
            "",
            f"![dynamics]({r['figure']})",
            "",
            "| stage | final loss | final cosine to W* | final norm | norm bounds hold | ‖W*‖ |",
            "|---|---|---|---|---|---|",
            f"| 1 (W_ov) | {s1['final_loss']:.3e} | {s1['final_cosine']:.6f} | {s1['final_norm']:.4f} | "
            f"{100 * s1['norm_bounds']['fraction']:.0f}% | {r['wov_star_norm']:.4f} |",
            f"| 2 (W_kq) | {s2['final_loss']:.4f} (limit {s2['limit_loss']:.4f}) | {s2['final_cosine']:.6f} | "
            f"{s2['final_norm']:.4f} | {100 * s2['norm_bounds']['fraction']:.0f}% | {r['wkq_star_norm']:.4f} |",
            "",
        ]
        fit = s2["direction_fit"]
        if "log_t_over_t" in fit:
            lines += [
                f"Stage 2: 1 − cos falls with log-log slope {fit['loglog_slope']:.2f}; fitted constants "
                f"C = {fit['log_t_over_t']['C']:.3g} (log t/t, residual spread {fit['log_t_over_t']['log_residual_std']:.2f}) "
                f"and C = {fit['log2_t_over_t']['C']:.3g} (log²t/t, spread {fit['log2_t_over_t']['log_residual_std']:.2f}). "
                f"Minimum attention on optimal tokens at the end: {s2['final_min_optimal_attention']:.4f}.",
                "",
            ]
    p = parts.get("ntp_ablations")
    if p and p["status"] == "ok":
        lines += ["### Ablations", "", "| variant | final loss | cos(W_kq, W*_kq) | ‖W_kq‖ | cos(W_ov, W*_ov) | min optimal attention |",
                  "|---|---|---|---|---|---|"]
        for row in p["result"]["rows"]:
            lines.append(
                f"| {row['variant']} | {row['final_loss']:.4f} | {row['final_cosine_kq']:.4f} | {row['final_norm_kq']:.3f} | "
                f"{row['final_cosine_ov']:.4f} | {row['final_min_optimal_attention']:.4f} |"
            )
        lines.append("")
    p = parts.get("ntp_generalization")
    if p and p["status"] == "ok":
        r = p["result"]
        lines += [f"### Generalization to {r['n_sentences']} unseen sentences (Theorem 3)", "",
                  "| model | agreement: holds an optimal token | agreement: non-comparable + non-optimal only |", "|---|---|---|"]
        for row in r["rows"]:
            lines.append(f"| Algorithm 1, {row['stage2_steps']} stage-2 steps | {_pct(row['by_case']['optimal']['agreement'])} | "
                         f"{_pct(row['by_case']['non-comparable']['agreement'])} |")
        lim = r["max_margin_limit"]["by_case"]
        lines += [f"| max-margin limit (W*_kq scaled up) | {_pct(lim['optimal']['agreement'])} | {_pct(lim['non-comparable']['agreement'])} |", ""]
    p = parts.get("ntp_svop")
    if p and p["status"] == "ok":
        r = p["result"]
        lines += ["### Examples 1–2 (SVOP)", "", "Orders: " + "; ".join(r["orders"].values()), ""]
        for sent, d in r["unseen"].items():
            lines.append(f"- unseen {sent}: model predicts {d['model']} (p = {d['prob']:.3f}), paper says {d['expected']}")
        lines.append("")
    failed = [n for n, p in parts.items() if p["status"] != "ok"]
    if failed:
        lines += ["## Failed parts", ""] + [f"- {n}: {parts[n]['error']}" for n in failed] + [""]
    return "\n".join(lines)
