"""Views of what the scaling commands return: the tables and lines ``ttlab scaling …`` prints, built from the
library's dictionaries (:mod:`~ttlab.scaling.predictions`, :func:`~ttlab.scaling.fit_csv.fit_csv`,
:func:`~ttlab.scaling.manifold_regression.run_manifold_experiment`). They never print.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rich import box
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from ttlab.markup import markup, plain
from ttlab.scaling.manifold_config import ORACLE_TOL, ManifoldSweepConfig, design_check
from ttlab.scaling.predictions import TABLE1_ROWS

__all__ = ["band_view", "fit_view", "frontier_view", "isoflop_view", "manifold_cost_view", "manifold_progress_line", "manifold_view", "model_size_cost_view",
           "model_size_progress_line", "model_size_view", "prediction_view",
           "ray_note_view", "table1_view", "values_view"]


def _fmt(v: Any) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def values_view(title: str, rows: dict[str, Any]) -> list[RenderableType]:
    """A two-column table (quantity, value) of a flat dictionary: floats to 6 significant digits."""
    t = Table(title=plain(title), show_header=True)
    t.add_column("quantity")
    t.add_column("value", justify="right")
    for k, v in rows.items():
        t.add_row(plain(k), plain(_fmt(v)))
    return [t]


def prediction_view(out: dict[str, Any], intrinsic_dim: float | None, beta: float) -> list[RenderableType]:
    """What ``scaling predict`` shows of :func:`~ttlab.scaling.predictions.predict_exponents`: the exponents of one
    ID, or the band over several estimates (when ``out`` has a ``source``)."""
    if "source" in out:
        return band_view(out, beta)
    return values_view(f"Predicted scaling exponents for d = {intrinsic_dim:g}, β = {beta:g}", out)


def band_view(band: dict[str, Any], beta: float) -> list[RenderableType]:
    """A prediction band: the central estimator's exponents, the band's ends and every estimator's row."""
    t = Table(title=plain(f"Predicted exponents, β = {beta:g}: central from {band['central_estimator']}, band over "
                          f"{len(band['estimator_set'])} estimator(s)"))
    for col in ("", "d", "α_D", "α_N"):
        t.add_column(col, justify="left" if not col else "right")
    rows = [(f"central ({band['central_estimator']})", band["central"]), ("band low (largest d)", band["lo"]),
            ("band high (smallest d)", band["hi"]), *((f"  {name}", v) for name, v in band["estimators"].items())]
    for label, v in rows:
        t.add_row(plain(label), f"{v['id']:.3f}", f"{v['alpha_d']:.4f}", f"{v['alpha_n']:.4f}")
    out: list[RenderableType] = [t]
    if band["not_in_band"]:
        out.append(plain("not in the band (not manifold-dimension estimators of the set): "
                         f"{', '.join(band['not_in_band'])}"))
    return out


def table1_view(payload: dict[str, Any], beta: float) -> list[RenderableType]:
    """The recomputed Table 1 (:func:`~ttlab.scaling.predictions.table1_payload`): one column per source."""
    rows = payload["rows"]
    t = Table(title=plain(f"Table 1 recomputed: ID-free scaling exponents (β = {beta:g})"))
    t.add_column("quantity")
    for r in rows:
        t.add_column(plain(r["short_name"]), justify="right")
    for key, label, fmt in TABLE1_ROWS:
        t.add_row(plain(label), *(format(r[key], fmt) for r in rows))
    return [t]


PARAM_LABELS = {("chinchilla", "alpha"): "alpha (exponent of N)",
                ("chinchilla", "beta"): "beta (exponent of D; not paper B's Hölder β)"}
"""How a fit's parameter is named in the printed table where its key alone would mislead (the JSON keeps Hoffmann et
al.'s names E, A, B, alpha, beta)."""


def prediction_at_line(pa: dict[str, Any]) -> str:
    """The loss a fit predicts at a new point, its confidence and prediction intervals, and how far it extrapolates."""
    at = ", ".join(f"{k} = {v:.4g}" for k, v in pa["at"].items())
    level = f"{pa['ci_level']:.0%}"
    ci = f"; {level} CI [{pa['ci'][0]:.4f}, {pa['ci'][1]:.4f}], PI [{pa['pi'][0]:.4f}, {pa['pi'][1]:.4f}]" if pa["ci"] \
        else " (no bootstrap: no intervals)"
    names = {"x": list(pa["at"])[0], "x2": (list(pa["at"]) + [""])[1], "compute": "C = 6·N·D"}
    far = [f"{v:+.2f} decades of {names[k]}" for k, v in pa["decades_outside"].items() if v]
    where = "inside the fitted range" if not far else "outside the fitted range by " + ", ".join(far)
    return f"predicted loss at {at}: {pa['loss']:.4f}{ci}; {where}"


def fit_view(p: dict[str, Any]) -> list[RenderableType]:
    """A scaling-law fit (:func:`~ttlab.scaling.fit_csv.fit_csv`): parameters with intervals, goodness of fit, the
    objective, the predicted exponent, identifiability and the plot."""
    t = Table(title=plain(f"{p['form']} fit of {p['config']['y']} vs {p['config']['x']} ({p['n_points']} points)"))
    t.add_column("parameter")
    t.add_column("estimate", justify="right")
    t.add_column(f"{p['ci_level']:.0%} bootstrap CI", justify="right")
    for k, v in p["params"].items():
        lo_hi = p["ci"].get(k)
        t.add_row(plain(PARAM_LABELS.get((p["form"], k), k)), f"{v:.6g}",
                  plain(f"[{lo_hi[0]:.6g}, {lo_hi[1]:.6g}]") if lo_hi else "—")
    out: list[RenderableType] = [t]
    g = {k: ("n/a" if v is None else format(v, ".5f" if k == "r2_log" else ".4g"))
         for k, v in p["goodness_of_fit"].items()}
    out.append(plain(
        f"R² (log) = {g['r2_log']}   RMSE (log) = {g['rmse_log']}   RMSE = {g['rmse']}   "
        f"bootstrap: {p['bootstrap']['n_used']} × {p['bootstrap']['method']}, seed {p['bootstrap']['seed']}"
    ))
    if p["fit_config"].get("objective"):
        scale = p["optimizer"].get("scale")
        out.append(plain(f"objective: {p['fit_config']['objective']} (δ = {p['fit_config']['huber_delta']:g})"
                         + ("" if scale is None else f", fitted scale σ = {scale:.4g}")))
    fc = p["fit_config"]
    how = [f"starts: {fc['method']}"] if fc.get("method", "grid") != "grid" else []
    by_compute = (p.get("config") or {}).get("weight_by_compute")
    how += ([f"weighted by compute (w ∝ {'√C' if by_compute == 'sqrt' else 'C'}, C = k·N·D)" if by_compute
             else "weighted"] if fc.get("weighted") else [])
    how += [f"asymmetry {fc['asymmetry']:g}"] if fc.get("asymmetry", 1.0) != 1.0 else []
    how += [f"{fc['drop_highest']} highest-loss point(s) dropped"] if fc.get("drop_highest") else []
    if how:
        out.append(plain("fit: " + "; ".join(how)))
    if "prediction_at" in p:
        out.append(plain(prediction_at_line(p["prediction_at"])))
    if "prediction" in p:
        pr = p["prediction"]
        out.append(plain(
            f"predicted α from d = {pr['id']:g} (β = {pr['beta']:g}, {pr['kind']}): "
            f"{pr['alpha_predicted']:.4f}; fitted {pr['alpha_fitted']:.4f}"
        ))
    if not p.get("identifiable", True):
        out.append(markup("[bold yellow]not identifiable[/]: see the warnings above; the parameters are not "
                                    "meaningful one by one."))
    if "plot" in p:
        out.append(plain(f"plot written to {p['plot']}"))
    return out


# ---------------------------------------------------------------------------------------------
# ttlab scaling manifold


def ray_note_view(cost: dict[str, Any], backend: str, ray_address: str | None, cpus: int) -> list[RenderableType]:
    """Where a Ray sweep runs (when it has runs to do); nothing for the local backend."""
    if backend == "ray" and cost["n_cached"] < cost["n_train_runs"] + cost["n_knn_runs"]:
        where = ray_address or os.environ.get("RAY_ADDRESS") or f"a local Ray with {cpus} CPU(s)"
        return [plain(f"running on Ray: {where} (a new local Ray takes several seconds to start)")]
    return []


def manifold_cost_view(cfg: ManifoldSweepConfig, out: Path, cost: dict[str, Any], full_cost: dict[str, Any] | None,
                       workers: int, tpt: int) -> list[RenderableType]:
    """The sweep's estimated cost (and, with ``quick``, the full default sweep's: ``full_cost``), as
    :func:`~ttlab.scaling.manifold_regression.run_manifold_experiment` passes them to ``on_estimate``."""
    from ttlab.scaling.manifold_regression import minutes_text

    msg = (f": {cost['n_train_runs']} training runs ({','.join(cfg.archs)}, "
           f"β={list(cfg.betas)}, {','.join(cfg.regimes)}, d={list(cfg.ds)}, D={list(cfg.ambients)}, n={cfg.sizes()}, "
           f"{cfg.seeds} seed(s), lr={list(cfg.lrs)}) + {cost['n_knn_runs']} k-NN oracle runs; estimated cost ≈ {minutes_text(cost['task_seconds'])} of task time, "
           f"≈ {minutes_text(cost['wall_seconds'])} wall on {workers} worker(s) × {tpt} thread(s) "
           "(full schedules at the step times measured now; early stopping shortens, a busy machine lengthens)")
    if cost["n_cached"]:
        msg += (f"; {cost['n_cached']} run(s) already in {out / 'cache'}, remaining ≈ "
                f"{minutes_text(cost['remaining_wall_seconds'])} wall")
    view: list[RenderableType] = [Text.assemble(("manifold sweep", "bold"), msg)]
    if full_cost is not None:
        full = ManifoldSweepConfig()
        view.append(plain(
            f"full default sweep ({','.join(full.archs)}, β={list(full.betas)}, {','.join(full.regimes)}, "
            f"d={list(full.ds)}, D={list(full.ambients)}, {full.points} sizes {full.n_min}..{full.n_max}, {full.seeds} "
            f"seeds, model widths {list(full.model_widths)}): {full_cost['n_train_runs']} runs, estimated ≈ "
            f"{minutes_text(full_cost['wall_seconds'])} wall on {workers} worker(s)"))
    return view


def manifold_progress_line(p: Any) -> Text:
    """One line of a finished sweep task (a :mod:`ttlab.sweep` progress event: ``done``, ``total``, ``record``)."""
    r = p.record
    c = r.config
    what = ("approx. oracle" if "cells" in c else "k-NN oracle" if "model" not in c
            else f"{c['model']['arch']} w={c['model']['n_embd']}")
    state = "cached" if r.cached else ("ok" if r.ok else "FAILED")
    extra = f"test MSE {r.result.get('test_mse', r.result.get('approx_mse')):.4g}" if r.ok else ((r.error or "").strip().splitlines() or [""])[-1]
    return Text(f"[{p.done}/{p.total}] {what} β={c['problem']['beta']:g} {c.get('regime')} d={c['d']} "
                f"D={c['ambient']} n={c['n']} seed={c['seed']}: "
                f"{state} ({r.seconds:.1f} s) {extra}")


def _num(v: Any, fmt: str = ".3f") -> str:
    return "—" if v is None else format(v, fmt)


def manifold_view(p: dict[str, Any]) -> list[RenderableType]:
    """The manifold sweep's results (``results.json``): one table per (architecture, β, regime), the legend, the
    model-size fits and the files written."""
    view: list[RenderableType] = []
    num = _num
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for f in p["fits"]:  # one narrow table per (arch, β, regime)
        groups.setdefault((f["arch"], f["beta"], f["regime"]), []).append(f)
    for (arch, beta, regime), fits in groups.items():
        noiseless = regime == "noiseless"
        t = Table(title=plain(f"Data scaling on manifolds ({arch}, β = {beta:g}, {regime})"), box=box.SIMPLE_HEAD,
                  padding=(0, 1), show_edge=False)
        for col in ["d", "D", "α̂", "CI", "oracle", "design", "theory"] + (["2β/d"] if noiseless else []) + ["MSE"]:
            t.add_column(col, justify="right", no_wrap=True)
        for f in fits:
            ci, (ok, _) = f.get("alpha_hat_ci") or [None, None], design_check(f)
            star = "*" if f.get("includes_step_limited") else ""
            t.add_row(plain(f["d"]), plain(f["ambient"]), plain(num(f["alpha_hat"], ".2f") + star),
                      plain(f"{num(ci[0], '.2f')}-{num(ci[1], '.2f')}"), num(f.get("oracle_alpha"), ".2f"),
                      "—" if ok is None else ("pass" if ok else "FAIL"), num(f["alpha_pred"], ".2f"),
                      *([num(f.get("alpha_noiseless"), ".2f")] if noiseless else []), num(f.get("mse_at_n_ref"), ".3g"))
        view.append(t)
    view.append(plain(
        f"α̂: fitted slope of test MSE vs n (CI 95%); oracle: k-NN slope on the same splits; design: oracle "
        f"within ±{ORACLE_TOL:g} of 2β/(2β+d) (noisy) or ≥ 2β/(2β+d) − {ORACLE_TOL:g} (noiseless); theory: "
        f"2β/(2β+d); 2β/d: noiseless minimax rate; MSE: at n = {p['n_ref']}; *: fit includes step-limited "
        "sizes"))
    for m in p.get("model_fits", []):
        dc = m.get("data_check") or {}
        ci = m.get("alpha_hat_ci") or [None, None]
        view.append(plain(
            f"model size ({m['arch']}, β={m['beta']:g}, {m['regime']}) at n = {m['n']}, d={m['d']} "
            f"D={m['ambient']}: α̂_N = {num(m['alpha_hat'])} [{num(ci[0])}, {num(ci[1])}] vs "
            f"2β/d = {m['alpha_pred']:.3f}; approximation oracle {num(m.get('oracle_alpha'))}; widest model's "
            f"MSE at 2n / at n = {num(dc.get('ratio'))}"
            + (" (includes step-limited widths)" if m.get("includes_step_limited") else "")))
    view.append(plain(f"wrote {p['files']['results']} and {p['files']['figure']} in {p['wall_seconds']:.0f} s"))
    return view


def model_size_cost_view(cost: dict[str, Any], out: Path) -> list[RenderableType]:
    """The cost line ``ttlab scaling model-size`` prints before any work."""
    from ttlab.scaling.manifold_regression import minutes_text

    msg = (f"model-size sweep: {cost['n_train_runs']} training runs + {cost['n_oracle_runs']} oracle runs; estimated "
           f"≈ {minutes_text(cost['wall_seconds'])} wall on {cost['workers']} worker(s) (step times measured now)")
    if cost["n_cached"]:
        msg += (f"; {cost['n_cached']} run(s) already in {out / 'cache'}, remaining ≈ "
                f"{minutes_text(cost['remaining_wall_seconds'])}")
    return [Text(msg)]


def model_size_progress_line(p: Any) -> Text:
    """One line per finished task of the model-size sweep."""
    r, c = p.record, p.record.config
    what = f"{c['arch']} w={c['width']} seed={c['seed']}" + (" (2× samples)" if c.get("check") else "") \
        if "arch" in c else f"oracles N={c['n_params']}"
    state = "cached" if r.cached else ("ok" if r.ok else "FAILED")
    res = r.result or {}
    extra = (f"MSE/Var {res['nmse']:.4g}" if "nmse" in res else
             f"constant {res['nmse_constant']:.4g}, linear {res['nmse_linear']:.4g}" if "nmse_constant" in res else
             ((r.error or "").strip().splitlines() or [""])[-1])
    return Text(f"[{p.done}/{p.total}] {c['target_name']} d={c['target']['d']} {what}: {state} ({r.seconds:.1f} s) {extra}")


def _fit_text(fit: dict[str, Any]) -> str:
    from ttlab.scaling.model_scaling_analysis import fit_text

    return fit_text(fit, ".3f")


def model_size_view(p: dict[str, Any]) -> list[RenderableType]:
    """The model-size results: per (target, d, network) α̂_N with its deciding interval, the rates, the data check
    and the harness; the oracles; the files written."""
    t = Table(title="α̂_N: −slope of log(MSE/Var f) against log parameter count", box=box.SIMPLE_HEAD)
    for col in ("target", "d", "network", "N", "α̂_N [interval]", "2β/d", "4/d", "data check", "untrained α̂_N"):
        t.add_column(col)
    for e in p["results"]:
        for arch, s in e["archs"].items():
            ratio = ", ".join(f"w={c['width']} ×{c['ratio']:.3f}" + (" left out" if c["limited"] else "")
                              for c in s.get("data_checks") or [] if c.get("ratio") is not None) or "—"
            t.add_row(plain(e["target"]), plain(e["d"]), plain(arch + (" (control)" if arch == "mlp" else "")),
                      f"{min(s['n_params']):,}–{max(s['n_params']):,}", plain(_fit_text(s["fit"])), f"{e['alpha_pred']:.3g}",
                      f"{e['alpha_4d']:.3g}", plain(ratio), plain(_fit_text(s["untrained"])))
    lines: list[RenderableType] = [t]
    for e in p["results"]:
        valid = {True: "valid", False: "NOT valid (the control misses 0.8 × its known rate)", None: "not validated"}
        lines.append(Text(f"{e['target']} d={e['d']}: harness {valid[e['harness_valid']]}; oracles: piecewise-constant "
                          f"{_fit_text(e['oracles']['constant'])}, piecewise-linear {_fit_text(e['oracles']['linear'])}"))
    ids = ", ".join(f"d={x['d']}: MLE {x['mle']:.2f}, TwoNN {x['twonn']:.2f}" for x in p.get("input_ids", []))
    lines.append(Text(f"inputs' ID: {ids}"))
    files = p.get("files") or {}
    lines.append(Text(f"wrote {files.get('results', '')} and {files.get('figure', '')} "
                      f"({p.get('wall_seconds', float('nan')):.0f} s); verdicts: ttlab reproduce (docs/model_scaling.md)"))
    return lines


def _with_ci(entry: dict[str, Any], fmt: str) -> str:
    """``value [lo, hi]`` of a ``{"value", "ci"}`` entry (no interval: the value alone)."""
    ci = entry["ci"]
    return format(entry["value"], fmt) + (f" [{format(ci[0], fmt)}, {format(ci[1], fmt)}]" if ci else "")


def frontier_view(p: dict[str, Any]) -> list[RenderableType]:
    """``ttlab scaling frontier``: the exponents a, b with intervals, one row per budget (N_opt, D_opt, D/N, L_opt with
    intervals), the ID's prediction beside the fit, the notes and the files."""
    out: list[RenderableType] = []
    pred = p.get("predicted")
    if "a" in p:
        level = f"{p['ci_level']:.0%}"
        out.append(plain(f"N_opt ∝ C^a, a = {_with_ci(p['a'], '.4f')}; D_opt ∝ C^b, b = {_with_ci(p['b'], '.4f')} "
                         f"({level} intervals over {p['n_replicates']} bootstrap replicates; C = {p['flops_per_token']:g}·N·D)"))
        t = Table(title=plain("compute-optimal allocation"))
        for col in ("compute (FLOPs)", "N_opt", "D_opt", "D/N", "loss"):
            t.add_column(col, justify="right")
        for e in p["budgets"]:
            t.add_row(f"{e['compute']:.3g}", plain(_with_ci(e["n_opt"], ".3g")), plain(_with_ci(e["d_opt"], ".3g")),
                      plain(_with_ci(e["tokens_per_param"], ".3g")), plain(_with_ci(e["loss_opt"], ".4f")))
        out.append(t)
    if pred is not None:
        out.append(plain(f"predicted from ID d = {pred['id']:g} (β = {pred['beta']:g}): α_N = {pred['alpha_n']:.4f}, "
                         f"α_D = {pred['alpha_d']:.4f} → a = {pred['a']:.4f}, b = {pred['b']:.4f}"))
        if "a_lo" in pred:
            out.append(plain(f"  band over {len(pred['estimators'])} estimators of {pred['source']}: a "
                             f"{pred['a_lo']:.4f} – {pred['a_hi']:.4f} (central: {pred['central_estimator']})"))
    cmp_ = p.get("comparison")
    if cmp_ is not None:
        inside = {True: "inside", False: "outside", None: "without"}[cmp_["predicted_in_ci"]]
        out.append(plain(f"fitted a − predicted a = {cmp_['difference']:+.4f}: the prediction is {inside} the fit's "
                         "interval"))
    if p.get("isoflop"):
        out += _isoflop_beside_fit(p["isoflop"])
    out += [markup("[yellow]note[/]: {}", w) for w in p.get("warnings", [])]
    if p.get("plot"):
        out.append(plain(f"wrote {p['plot']}"))
    return out


def _isoflop_beside_fit(iso: dict[str, Any]) -> list[RenderableType]:
    """The IsoFLOP profiles' exponent and optima beside the fit's (``frontier --isoflop``): one row per IsoFLOP budget
    with both N_opt and their ratio."""
    lines: list[RenderableType] = []
    if iso.get("a_isoflop"):
        lines.append(plain(f"IsoFLOP profiles ({iso['source']}): a = {_with_ci(iso['a_isoflop'], '.4f')}; the fit's a = "
                           f"{_with_ci(iso['a_parametric'], '.4f')}"))
    t = Table(title=plain("parametric N_opt against the IsoFLOP optima"))
    for col in ("compute (FLOPs)", "IsoFLOP N_opt", "fit's N_opt", "fit / IsoFLOP", "IsoFLOP in fit's CI"):
        t.add_column(col, justify="right")
    for e in iso["budgets"]:
        if e["n_opt_isoflop"] is None:
            t.add_row(f"{e['compute']:.3g}", "—", "—", "—", plain(e["note"]))
            continue
        inside = {True: "yes", False: "no", None: "—"}[e["isoflop_in_ci"]]
        t.add_row(f"{e['compute']:.3g}", plain(_with_ci(e["n_opt_isoflop"], ".3g")),
                  plain(_with_ci(e["n_opt_parametric"], ".3g")), f"{e['ratio']:.3f}", plain(inside))
    return [*lines, t]


def isoflop_view(p: dict[str, Any]) -> list[RenderableType]:
    """``ttlab scaling isoflop``: the exponent a with its interval and the optimal N per budget (or why none)."""
    out: list[RenderableType] = [plain(
        f"N_opt ∝ C^a, a = {_with_ci(p['a'], '.4f')} ({p['ci_level']:.0%} interval over {p['n_replicates']} "
        "bootstrap replicates; IsoFLOP parabolas, Hoffmann et al.'s Approach 2)")]
    k = p.get("flops_per_token")
    t = Table(title=plain("optimal size per compute budget" + ("" if k is None else f" (D_opt = C/({k:g}·N_opt))")))
    for col in ("compute (FLOPs)", "runs", "N_opt", "D_opt", "loss at N_opt"):
        t.add_column(col, justify="right")
    for e in p["budgets"]:
        if e["n_opt"] is None:
            t.add_row(f"{e['compute']:.3g}", f"{e['n_runs']:d}", "—", "—", plain(e["note"]))
        else:
            t.add_row(f"{e['compute']:.3g}", f"{e['n_runs']:d}", plain(_with_ci(e["n_opt"], ".3g")),
                      plain(_with_ci(e["d_opt"], ".3g")) if e.get("d_opt") else "—", f"{e['loss_opt']:.4f}")
    return [*out, t]
