"""Paper B's Theorem 1 tested directly in ``ttlab reproduce``: the part ``manifold_regression`` runs
:func:`ttlab.scaling.manifold_regression.run_manifold_sweep` (quick preset, the standard tier, or the full default
sweep) — regression on low-dimensional manifolds.

Claims (rules of :mod:`ttlab.reproduce.verdicts`, each printed with its thresholds and reason): per (arch, β, regime,
d, D), α̂_D against 2β/(2β+d) — judged only where the k-NN oracle's slope on the same splits validates the design
(``oracle_validated_exponent``; noisy regime: ≈, noiseless: the bound ≥); α̂_D falls and the error level rises with d;
α̂_D agrees across D; α̂_N against 2β/d (approximation oracle, data-limit check); the architectures compared; the MLE
recovers the inputs' ID. Exponents are read with the keys of :class:`ttlab.scaling.analysis.FittedExponent`
(``alpha_hat_ci``, …).

May import: :mod:`ttlab.reproduce` (parts.common_scaling, registry, verdicts, report) and, inside the functions,
:mod:`ttlab.scaling`. Not the CLI.
"""

from __future__ import annotations

import math
import os
from dataclasses import replace
from pathlib import Path

from ttlab.reproduce.parts.common_scaling import EXPONENT_TOLERANCE
from ttlab.reproduce.registry import PartContext, PerMode, finite, register_part
from ttlab.reproduce.report_blocks import Claims, Figure, Paragraph, Table, fmt
from ttlab.reproduce.verdicts import make_claim


def config(ctx: PartContext):
    from ttlab.scaling import manifold_config as mc

    configs = PerMode(quick=mc.quick_config, standard=mc.standard_config, full=mc.ManifoldSweepConfig, tiny=lambda: mc.quick_config(
        ds=(1, 2), ambients=(8, 16), n_min=64, n_max=256, points=3, n_test=256, width=16, tokens=2, id_points=400,
        bootstrap=50, bootstrap_offset=20, oracle_seeds=2, model_widths=(4, 8, 16), model_n=128, approx_cells=(8, 32, 128),
        train=mc.TrainSettings(epochs=2, min_steps=20, max_steps=30, eval_points=3, n_val_min=64)))
    return replace(ctx.pick(configs)(), problem_seed=ctx.seed)


def estimate(ctx: PartContext, out: Path | None) -> float:
    from ttlab.scaling import manifold_regression as mr

    fixed = ctx.pick(PerMode(quick=150.0, standard=None, full=None, tiny=90.0))  # else measured step times
    if fixed is not None:
        return fixed
    workers = ctx.n_workers
    cache = None if out is None else out / "manifold_regression" / "cache"
    cost = mr.estimate_cost(config(ctx), workers=workers, threads_per_task=max(1, (os.cpu_count() or 1) // workers),
                            cache_dir=cache)
    return cost["remaining_wall_seconds"] + 60.0  # + oracle runs, ID estimates and fits


def _ci_se(ci: list | None) -> float | None:
    """Standard error read off a 95 % interval (half-width / 1.96)."""
    return (ci[1] - ci[0]) / (2 * 1.96) if ci and finite(*ci[:2]) else None


ORACLE_THRESHOLDS = {"oracle_tol": 0.05, **EXPONENT_TOLERANCE, "min_points": 3}
"""The oracle guard (±0.05 on the oracle's slope) and the relative tolerances of the network's exponent."""
DATA_LIMIT = 0.15
"""A model-size sweep is data-limited when the widest model's loss at 2n differs from that at n by more."""


def _mse_at_ref_se(fit: dict) -> float | None:
    """Standard error over seeds of the geometric-mean test MSE at n_ref (None with one seed or no such point)."""
    from ttlab.scaling.manifold_analysis import geomean_se

    pts = [p for p in fit.get("points") or [] if p.get("n") == fit.get("n_ref")]
    vals = [v for v in (pts[0].get("test_mse") or []) if finite(v) and v > 0] if pts else []
    return geomean_se(vals)


def _regime_text(regime: str) -> str:
    return "noisy labels" if regime == "noisy" else "noiseless labels"


def _n_capped(fits: list[dict]) -> int:
    """How many of ``fits`` include step-capped runs (their α̂ is budget-limited)."""
    return sum(bool(f.get("includes_step_limited")) for f in fits)


def _rate_claims(fits: list[dict]) -> list[dict]:
    """Theorem 1 per (arch, β, regime, d, D): α̂_D against 2β/(2β+d), judged where the oracle validates the design."""
    out = []
    for f in fits:
        a, pred, regime = f.get("alpha_hat"), f["alpha_pred"], f.get("regime", "noisy")
        bound = regime == "noiseless"
        rel = "≥" if bound else "≈"
        stmt = (f"Theorem 1 ({_regime_text(regime)}): α̂_D {rel} 2β/(2β+d) for the {f['arch']} network on the "
                f"d = {f['d']} sphere in R^{f['ambient']} (β = {f['beta']:g})")
        cid = f"manifold_regression.rate_{f['arch']}_b{f['beta']:g}_{regime}_d{f['d']}_D{f['ambient']}"
        lo, hi = (f.get("alpha_hat_ci") or [None, None])[:2]
        star = " (fit includes step-limited sizes)" if f.get("includes_step_limited") else ""
        o = f.get("oracle_alpha")
        summary = (f"α̂_D = {fmt(a, 3)} [{fmt(lo, 3)}, {fmt(hi, 3)}] vs 2β/(2β+d) = {pred:.3f}"
                   + (f" (Δ {a - pred:+.3f})" if finite(a) else f" — {f.get('error', 'no fit')}")
                   + f"; k-NN oracle {fmt(o, 3)}" + (f"; noiseless reference 2β/d = {f['alpha_noiseless']:.3f}"
                                                     if bound else "") + star)
        out.append(make_claim(
            cid, stmt, "oracle_validated_exponent",
            {"fitted": a, "lo": lo, "hi": hi, "predicted": pred, "oracle": o,
             "n_points": len(f.get("sizes_fitted") or []), "n_capped": int(bool(f.get("includes_step_limited")))},
            {**ORACLE_THRESHOLDS, "bound": int(bound)}, quantity="2β/(2β+d)", summary=summary, kind="paper", cite="Theorem 1"))
    return out


def _shape_claims(r: dict, fits: list[dict]) -> list[dict]:
    """Per (arch, β, regime): α̂_D falls and the error at n_ref rises with d (each D); α̂_D agrees across D (each d)."""
    out = []
    combos = sorted({(f["arch"], f["beta"], f.get("regime", "noisy")) for f in fits}, key=str)
    for arch, beta, regime in combos:
        mine = [f for f in fits if (f["arch"], f["beta"], f.get("regime", "noisy")) == (arch, beta, regime)]
        tag = f"{arch}, β = {beta:g}, {regime}"
        key = f"{arch}_b{beta:g}_{regime}"
        for D in sorted({f["ambient"] for f in mine}):
            sel = sorted((f for f in mine if f["ambient"] == D), key=lambda f: f["d"])
            listing = ", ".join(f"d={f['d']}: {fmt(f.get('alpha_hat'), 3)}" for f in sel)
            out.append(make_claim(
                f"manifold_regression.exponent_falls_{key}_D{D}",
                f"The data-scaling exponent α̂_D falls as d grows ({tag}, D = {D})",
                "monotone", {"values": [f.get("alpha_hat") for f in sel], "se": [_ci_se(f.get("alpha_hat_ci")) for f in sel],
                             "d": [f["d"] for f in sel], "n_capped": _n_capped(sel)},
                {"direction": -1}, quantity="α̂_D", summary=listing, kind="paper", cite="Theorem 1"))
            ses = [_mse_at_ref_se(f) for f in sel]
            listing = ", ".join(f"d={f['d']}: {fmt(f.get('mse_at_n_ref'), 3)} (SE {fmt(e, 2)})" for f, e in zip(sel, ses))
            out.append(make_claim(
                f"manifold_regression.error_rises_{key}_D{D}",
                f"At fixed n (= {r.get('n_ref')}) the test error grows with the intrinsic dimension d ({tag}, D = {D})",
                "monotone", {"values": [f.get("mse_at_n_ref") for f in sel], "se": ses, "d": [f["d"] for f in sel]},
                {"direction": 1}, quantity="the test MSE", summary="test MSE " + listing, kind="paper", cite="Theorem 1"))
        for d in sorted({f["d"] for f in mine}):
            sel = sorted((f for f in mine if f["d"] == d), key=lambda f: f["ambient"])
            out.append(make_claim(
                f"manifold_regression.ambient_invariance_{key}_d{d}",
                f"α̂_D does not depend on the ambient dimension D, only on d ({tag}, d = {d}, "
                f"D ∈ {{{', '.join(str(f['ambient']) for f in sel)}}})",
                "intervals_agree", {"values": [f.get("alpha_hat") for f in sel],
                                    "intervals": [f.get("alpha_hat_ci") for f in sel], "ambient": [f["ambient"] for f in sel],
                                    "n_capped": _n_capped(sel)},
                {"max_spread": 0.05}, quantity="α̂_D across D",
                summary=", ".join(f"D={f['ambient']}: {fmt(f.get('alpha_hat'), 3)} [{fmt((f.get('alpha_hat_ci') or [None])[0], 3)}, "
                                  f"{fmt((f.get('alpha_hat_ci') or [None, None])[1], 3)}]" for f in sel), kind="paper", cite="Theorem 1"))
    return out


def _model_claims(r: dict) -> list[dict]:
    """Theorem 2 per (arch, β, d): α̂_N against 2β/d next to the approximation oracle and the data-limit check."""
    out = []
    for m in r.get("model_fits") or []:
        lo, hi = (m.get("alpha_hat_ci") or [None, None])[:2]
        dc = m.get("data_check") or {}
        out.append(make_claim(
            f"manifold_regression.model_rate_{m['arch']}_b{m['beta']:g}_d{m['d']}",
            f"Width sweep at a fixed training set (data-limited: it measures the data axis, not Theorem 2, which the "
            f"model_scaling part tests): test MSE against N^(−2β/d) ({m['arch']}, d = {m['d']}, "
            f"β = {m['beta']:g}, D = {m['ambient']}, n = {m['n']}, {_regime_text(m['regime'])})",
            "oracle_validated_exponent",
            {"fitted": m.get("alpha_hat"), "lo": lo, "hi": hi, "predicted": m["alpha_pred"],
             "oracle": m.get("oracle_alpha"), "n_points": len(m.get("sizes_fitted") or []),
             "n_capped": int(bool(m.get("includes_step_limited"))), "data_ratio": dc.get("ratio")},
            {**ORACLE_THRESHOLDS, "bound": 0, "max_data_change": DATA_LIMIT}, quantity="2β/d",
            summary=(f"α̂_N = {fmt(m.get('alpha_hat'), 3)} [{fmt(lo, 3)}, {fmt(hi, 3)}] vs 2β/d = {m['alpha_pred']:.3f}; "
                     f"approximation oracle {fmt(m.get('oracle_alpha'), 3)}; widest model (width {dc.get('width')}) "
                     f"MSE {fmt(dc.get('mse_n'), 3)} at n, {fmt(dc.get('mse_2n'), 3)} at 2n"), kind="ablation"))
    return out


def _arch_claims(fits: list[dict]) -> list[dict]:
    """The architectures give the same α̂_D (when several were trained), at the smallest D."""
    out = []
    archs = list(dict.fromkeys(f["arch"] for f in fits))
    if len(archs) > 1:  # the paper's architecture (ReLU attention, Definition 1) next to the others, at the smallest D
        D0 = min(f["ambient"] for f in fits)
        for beta, regime, d in sorted({(f["beta"], f.get("regime", "noisy"), f["d"]) for f in fits}, key=str):
            sel = [f for f in fits if (f["beta"], f.get("regime", "noisy"), f["d"], f["ambient"]) == (beta, regime, d, D0)]
            out.append(make_claim(
                f"manifold_regression.archs_agree_b{beta:g}_{regime}_d{d}",
                f"The exponent is a property of the data, not of the architecture: {', '.join(f['arch'] for f in sel)} "
                f"give the same α̂_D (β = {beta:g}, {regime}, d = {d}, D = {D0})",
                "intervals_agree", {"values": [f.get("alpha_hat") for f in sel], "intervals": [f.get("alpha_hat_ci") for f in sel],
                                    "arch": [f["arch"] for f in sel], "n_capped": _n_capped(sel)},
                {"max_spread": 0.05}, quantity="α̂_D across architectures",
                summary=", ".join(f"{f['arch']}: {fmt(f.get('alpha_hat'), 3)} [{fmt((f.get('alpha_hat_ci') or [None])[0], 3)}, "
                                  f"{fmt((f.get('alpha_hat_ci') or [None, None])[1], 3)}]" for f in sel)
                        + f" (theory {sel[0]['alpha_pred']:.3f})" if sel else "no fit", kind="ablation"))
    return out


def _id_claim(r: dict) -> dict:
    """The MLE recovers the regression inputs' intrinsic dimension."""
    ids = r.get("intrinsic_dim") or []
    rel = [abs(x["id_mean"] - x["d"]) / x["d"] for x in ids]
    return make_claim(
        "manifold_regression.id_recovered",
        "MLE (K = 20) recovers the regression inputs' intrinsic dimension, so α_D can be predicted from data",
        "at_most", {"value": max(rel) if rel else None, "n": len(rel)}, {"holds": 0.10, "partly": 0.20},
        quantity="the worst relative error of the estimated ID",
        summary="estimated ID " + ", ".join(f"{x['id_mean']:.2f} (d={x['d']}, D={x['ambient']})" for x in ids)
                + (f"; worst relative error {100 * max(rel):.1f} %" if rel else "none measured"), kind="check")


def claims(r: dict) -> list[dict]:
    """Every claim of the manifold-regression part, from its stored results ``r``."""
    fits = r["fits"]
    return [*_rate_claims(fits), *_shape_claims(r, fits), *_model_claims(r), *_arch_claims(fits), _id_claim(r)]


def _design_text(f: dict) -> str:
    from ttlab.scaling.manifold_config import design_check

    ok, _ = design_check(f, ORACLE_THRESHOLDS["oracle_tol"])
    return "—" if ok is None else ("passed" if ok else "failed")


def render(r: dict) -> list:
    c = r["config"]
    verdict_of = {x["id"]: x["verdict"] for x in r.get("claims", [])}
    rows = []
    for f in r["fits"]:
        ci = f.get("alpha_hat_ci") or [None, None]
        regime = f.get("regime", "noisy")
        cid = f"manifold_regression.rate_{f['arch']}_b{f['beta']:g}_{regime}_d{f['d']}_D{f['ambient']}"
        rows.append([f["arch"], f"{f['beta']:g}", regime, f["d"], f["ambient"], fmt(f.get("oracle_alpha"), 3),
                     _design_text(f), fmt(f.get("alpha_hat"), 3) + ("*" if f.get("includes_step_limited") else ""),
                     f"{fmt(ci[0], 3)} – {fmt(ci[1], 3)}", fmt(f["alpha_pred"], 3),
                     fmt(f.get("alpha_noiseless"), 3), fmt(f.get("mse_at_n_ref"), 3), verdict_of.get(cid, "—")])
    sw = r.get("sweep", {})
    blocks = [
        Paragraph(f"What was run: regression of a β-Hölder target (sum of {c['n_features']} random ridge features "
                  f"sin(r⟨θ,u⟩+φ), frequencies log-spaced on [r_0, {c['max_freq']:g}] "
                  f"(r_0 = {'max(1, d/2)' if c.get('min_freq') is None else format(c['min_freq'], 'g')}) with amplitudes "
                  f"∝ r^−β — energy above r ∝ r^−2β — unit variance) on the sphere S^d embedded isometrically in R^D, "
                  f"β ∈ {{{', '.join(f'{b:g}' for b in c['betas'])}}}, d ∈ {{{', '.join(map(str, c['ds']))}}}, "
                  f"D ∈ {{{', '.join(map(str, c['ambients']))}}}, n ∈ {{{', '.join(map(str, c['sizes']))}}}, "
                  f"{c['seeds']} seed(s) per network, {c['oracle_seeds']} for the oracle; regimes: "
                  + ", ".join(f"{rg} (σ = {c['noise'] if rg == 'noisy' else 0:g})" for rg in c["regimes"])
                  + f"; networks: {', '.join(c['archs'])} (width {c['width']}, {c['depth']} blocks, {c['tokens']} "
                  f"tokens) trained with AdamW + cosine decay and the best validation checkpoint; test MSE against the "
                  f"clean target; α̂_D is the fitted slope of log test MSE against log n "
                  f"({sw.get('n_ok', '?')}/{sw.get('n_tasks', '?')} tasks ok, backend {c.get('backend')}, "
                  f"{r.get('wall_seconds') or float('nan'):.0f} s)."),
        Paragraph("Two regimes. Noisy (σ² ≥ the target's variance): Theorem 1's exponent 2β/(2β+d) is the minimax "
                  "rate, so the claim is α̂_D ≈ 2β/(2β+d). Noiseless: the minimax rate is the faster 2β/d (shown as "
                  "the reference) and Theorem 1, an upper bound on the error, only claims α̂_D ≥ 2β/(2β+d). "
                  "The oracle — k-NN with k chosen on validation, minimax for β ≤ 1, fitted on the same splits — "
                  f"validates the design first: a network is judged only where the oracle's slope is within "
                  f"±{ORACLE_THRESHOLDS['oracle_tol']:g} of 2β/(2β+d) (noisy) or above the bound less "
                  f"{ORACLE_THRESHOLDS['oracle_tol']:g} (noiseless); otherwise the claim is inconclusive: the design "
                  "is not in the asymptotic regime."),
        Figure(r["figure"], "Test MSE against n per d (solid: fitted power law; dashed: the theory's slope "
                            "2β/(2β+d) through the fit's midpoint; ×: the k-NN oracle), and fitted against predicted "
                            "α_D per (β, regime)."),
        Table(["arch", "β", "regime", "d", "D", "oracle slope", "design", "α̂_D", "95 % CI", "2β/(2β+d)", "2β/d",
               f"MSE at n = {r.get('n_ref')}", "verdict"], rows,
              caption="design: the oracle's slope within ±0.05 of 2β/(2β+d) (noisy) or ≥ 2β/(2β+d) − 0.05 "
                      "(noiseless). *: the fit includes step-limited sizes. verdict: the rate claim's verdict."),
    ]
    mf = r.get("model_fits") or []
    if mf:
        blocks.append(Table(
            ["arch", "β", "d", "α̂_N", "95 % CI", "2β/d", "approximation oracle", "MSE at 2n / at n (widest)"],
            [[m["arch"], f"{m['beta']:g}", m["d"], fmt(m.get("alpha_hat"), 3),
              f"{fmt((m.get('alpha_hat_ci') or [None])[0], 3)} – {fmt((m.get('alpha_hat_ci') or [None, None])[1], 3)}",
              fmt(m["alpha_pred"], 3), fmt(m.get("oracle_alpha"), 3), fmt((m.get("data_check") or {}).get("ratio"), 3)]
             for m in mf],
            caption=f"Width sweep at a fixed n = {mf[0]['n']} ({mf[0]['regime']}), widths {c['model_widths']}: data-limited, "
                    "so α̂_N here measures the data axis (Theorem 2 is tested by the model_scaling part); the oracle is "
                    "the piecewise-constant approximation on N Voronoi cells."))
    blocks += [Paragraph(f"Full sweep output: `{r['results_file']}` (every run, fit and bootstrap)."), Claims(r["claims"])]
    return blocks


@register_part("manifold_regression", paper="B",
               title="Theorem 1 tested directly: regression on low-dimensional manifolds",
               render=render, claims=claims, estimate=(150, 60000), estimate_fn=estimate,
               estimate_standard=120, version=5)  # 5: the standard tier has no (data-limited) width sweep
def manifold_regression(out: Path, ctx: PartContext) -> dict:
    """ttlab.scaling.manifold_regression.run_manifold_sweep (quick preset, or the full default sweep)."""
    from ttlab.scaling import manifold_regression as mr

    cfg = config(ctx)
    workers = ctx.n_workers
    kwargs: dict = {"backend": ctx.backend, "workers": workers,
                    "threads_per_task": max(1, (os.cpu_count() or 1) // workers) if workers > 1 else None}
    if ctx.ray_address is not None:
        kwargs["ray_address"] = ctx.ray_address

    def progress(p) -> None:
        what = ("training runs" if "model" in p.record.config else
                "approximation-oracle runs" if "cells" in p.record.config else "k-NN oracle runs")
        ctx.step(f"manifold sweep: {what}", p.done, p.total)

    sub = out / "manifold_regression"
    payload = mr.run_manifold_sweep(cfg, sub, progress=progress, **kwargs)
    sw = payload["sweep"]
    if sw["n_failed"]:
        first = sw["failures"][0]["error"] if sw["failures"] else ""
        raise RuntimeError(f"{sw['n_failed']} of {sw['n_tasks']} sweep tasks failed (first: {first}); finished runs "
                           f"are cached in {sub / 'cache'} — re-run to retry the failed ones")
    fits = [{k: v for k, v in f.items() if k != "fit_details"} for f in payload["fits"]]
    r = {"config": payload["config"], "fits": fits, "knn_fits": payload.get("knn_fits", []),
         "model_fits": payload.get("model_fits", []), "approx_fits": payload.get("approx_fits", []), "intrinsic_dim": payload.get("intrinsic_dim", []),
         "n_ref": payload.get("n_ref"), "sweep": sw, "wall_seconds": payload.get("wall_seconds"),
         "figure": "manifold_regression/manifold_scaling.png", "results_file": "manifold_regression/results.json"}
    if not math.isfinite(r.get("wall_seconds") or float("nan")):
        r["wall_seconds"] = None
    return r
