"""Paper B's model-size exponent decided in ``ttlab reproduce``: the part ``model_scaling``, the approximation-limited
sweep with a positive control.

Design, targets and thresholds are declared in ``docs/model_scaling.md`` (run by
:func:`ttlab.scaling.model_scaling.run_model_scaling`). Claims:

* ``model_scaling.harness_<target>_d<d>`` (check): the ReLU-MLP control reaches ≥ 0.8 × its known rate (4/d on
  the smooth target, 2β/d on the Hölder one) — the harness is valid there;
* ``model_scaling.rate_<arch>_<target>_d<d>`` (paper, Theorem 2): α_N ≥ 2β/d, rule ``model_rate`` (inconclusive
  where the harness is not valid; the untrained networks must fail);
* ``model_scaling.falls_with_d_<arch>_<target>`` (paper for the transformers, check for the control): α̂_N falls
  as d grows, beyond 2 combined standard errors;
* ``model_scaling.inputs_id`` (check): MLE recovers the inputs' d.

May import: :mod:`ttlab.reproduce` (registry, verdicts, report) and, inside the part, :mod:`ttlab.scaling`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ttlab.reproduce.registry import PartContext, PerMode, register_part
from ttlab.reproduce.report_blocks import Claims, Figure, Paragraph, Table, fmt
from ttlab.reproduce.verdict_base import SHAPE_SE_MULT
from ttlab.reproduce.verdicts import make_claim

FRACTION = 0.8
"""The declared fraction of a rate (docs/model_scaling.md): the control's validity and the claim's threshold —
:data:`ttlab.scaling.model_scaling.VALID_FRACTION`, restated here because claims are rebuilt from stored results
without importing torch (a test keeps the two equal)."""
SE_MULT = SHAPE_SE_MULT
"""Shape rules decide beyond this many combined standard errors (the house rule, :data:`SHAPE_SE_MULT`)."""
CONTROL = "mlp"
DECIDE_COMMAND = "ttlab scaling model-size --transformer-spp 16000 --device cuda --out runs/model-size-gpu"
"""A budget like the control's (which passes the data check at 16,000 samples per parameter), where there is a GPU."""


def _se(fit: dict[str, Any]) -> float | None:
    iv = fit.get("interval")
    return None if not iv else (iv[1] - iv[0]) / (2 * 1.96)


def _iv(fit: dict[str, Any]) -> str:
    from ttlab.scaling.model_scaling_analysis import fit_text

    return fit_text(fit)


def checks_text(s: dict[str, Any]) -> str:
    """The data checks of one network, widest first: ``"w=24 ×0.33 (left out), w=16 ×0.95 (passes)"``."""
    parts = [f"w={c['width']} ×{fmt(c.get('ratio'), 3)} " + ("(left out)" if c.get("limited") else "(passes)")
             for c in s.get("data_checks") or []]
    if not parts:
        return "not run"
    return ", ".join(parts) + ("" if s.get("data_check_passed") else "; no width passes")


def _harness_claims(results: list[dict[str, Any]]) -> list[dict]:
    out = []
    for e in results:
        ctrl = e["archs"].get(CONTROL, {})
        fit = ctrl.get("fit", {})
        rate = e["control_rate"]
        which = "4/d" if e["target"] == "smooth" else "2β/d"
        cid = f"model_scaling.harness_{e['target']}_d{e['d']}"
        stmt = (f"The harness reaches the known rate: the ReLU-MLP control's α̂_N ≥ {FRACTION:g} × {which} = "
                f"{FRACTION * rate:.3g} ({e['target']} target, d = {e['d']})")
        summary = f"control α̂_N = {_iv(fit)} vs {which} = {rate:.3g}; data check: {checks_text(ctrl)}"
        if ctrl.get("data_check_passed") is False:
            out.append(make_claim(cid, stmt, "unjudgeable", {"why": "the control is optimisation- or data-limited: no "
                                                             "width passes the data check", "value": fit.get("alpha_hat")},
                                  quantity="the control's α̂_N", summary=summary, kind="check"))
            continue
        out.append(make_claim(cid, stmt, "at_least", {"value": fit.get("alpha_hat")}, {"holds": FRACTION * rate},
                              quantity="the control's α̂_N", summary=summary, kind="check"))
    return out


def _rate_claims(results: list[dict[str, Any]]) -> list[dict]:
    out = []
    for e in results:
        ctrl = e["archs"].get(CONTROL, {}).get("fit", {})
        ctrl_pass = e["archs"].get(CONTROL, {}).get("data_check_passed")
        for arch, s in e["archs"].items():
            if arch == CONTROL:
                continue
            fit, un = s["fit"], s["untrained"]
            lo, hi = (fit.get("interval") or [None, None])
            reaches = lo is not None and lo >= FRACTION * e["alpha_4d"]
            bound = "a lower bound: the target is smooth" if e["target"] == "smooth" else "the sharp rate"
            check = f"; data check: {checks_text(s)}"
            out.append(make_claim(
                f"model_scaling.rate_{arch}_{e['target']}_d{e['d']}",
                f"Theorem 2: squared error ∝ N^(−2β/d) — α_N ≥ 2β/d = {e['alpha_pred']:.3g} ({bound}) for the {arch} "
                f"transformer ({e['target']} target, β = {e['beta']:g}, d = {e['d']}, online noiseless samples)",
                "model_rate",
                {"fitted": fit.get("alpha_hat"), "lo": lo, "hi": hi, "predicted": e["alpha_pred"],
                 "control": ctrl.get("alpha_hat"), "control_rate": e["control_rate"],
                 "control_data_ok": None if ctrl_pass is None else int(ctrl_pass),
                 "untrained_hi": (un.get("interval") or [None, None])[1], "reaches_4d": int(reaches),
                 "data_ok": None if s.get("data_check_passed") is None else int(s["data_check_passed"]),
                 "command": DECIDE_COMMAND},
                {"fraction": FRACTION}, quantity="2β/d",
                summary=(f"α̂_N = {_iv(fit)} vs 2β/d = {e['alpha_pred']:.3g}; reaches 4/d = {e['alpha_4d']:.3g}: "
                         f"{'yes' if reaches else 'no'}; control (MLP) {_iv(ctrl)}; untrained {_iv(un)}; oracles: "
                         f"piecewise-constant {fmt(e['oracles']['constant'].get('alpha_hat'), 3)}, piecewise-linear "
                         f"{fmt(e['oracles']['linear'].get('alpha_hat'), 3)}{check}"),
                kind="paper", cite="Theorem 2"))
    return out


def _falls_claims(results: list[dict[str, Any]]) -> list[dict]:
    out = []
    for target in dict.fromkeys(e["target"] for e in results):
        mine = sorted((e for e in results if e["target"] == target), key=lambda e: e["d"])
        if len(mine) < 2:
            continue
        for arch in dict.fromkeys(a for e in mine for a in e["archs"]):
            fits = [e["archs"].get(arch, {}).get("fit", {}) for e in mine]
            listing = ", ".join(f"d={e['d']}: {_iv(f)}" for e, f in zip(mine, fits, strict=True))
            who = "the ReLU-MLP control's" if arch == CONTROL else f"the {arch} transformer's"
            out.append(make_claim(
                f"model_scaling.falls_with_d_{arch}_{target}",
                f"The model-size exponent falls as the intrinsic dimension grows ({who} α̂_N, {target} target)",
                "monotone", {"values": [f.get("alpha_hat") for f in fits], "se": [_se(f) for f in fits],
                             "d": [e["d"] for e in mine]},
                {"direction": -1, "se_mult": SE_MULT}, quantity="α̂_N",
                summary=listing + " (theory: 2β/d " + ", ".join(f"{e['alpha_pred']:.3g}" for e in mine) + ")",
                kind="check" if arch == CONTROL else "paper", cite="" if arch == CONTROL else "Theorem 2"))
    return out


def _id_claim(r: dict[str, Any]) -> dict:
    ids = r.get("input_ids") or []
    rel = [abs(x["mle"] - x["d"]) / x["d"] for x in ids]
    return make_claim(
        "model_scaling.inputs_id", "MLE (K = 20) recovers the intrinsic dimension d of the experiment's inputs",
        "at_most", {"value": max(rel) if rel else None, "n": len(rel)}, {"holds": 0.10, "partly": 0.20},
        quantity="the worst relative error of the MLE",
        summary=", ".join(f"d={x['d']}: MLE {x['mle']:.2f}, TwoNN {x['twonn']:.2f}" for x in ids), kind="check")


def claims(r: dict[str, Any]) -> list[dict]:
    """Every claim of the part from its stored result ``r``."""
    res = r["results"]
    return [*_harness_claims(res), *_rate_claims(res), *_falls_claims(res), _id_claim(r)]


def _table(r: dict[str, Any]) -> Table:
    verdict_of = {c["id"]: c["verdict"] for c in r.get("claims", [])}
    rows = []
    for e in r["results"]:
        for arch, s in e["archs"].items():
            fit = s["fit"]
            cid = (f"model_scaling.harness_{e['target']}_d{e['d']}" if arch == CONTROL
                   else f"model_scaling.rate_{arch}_{e['target']}_d{e['d']}")
            local = ", ".join(f"{x[2]:.2f}" for x in fit.get("local_slopes") or [])
            rows.append([e["target"], e["d"], arch + (" (control)" if arch == CONTROL else ""),
                         f"{min(s['n_params']):,}–{max(s['n_params']):,}", _iv(fit), local,
                         f"{e['alpha_pred']:.3g}", f"{e['alpha_4d']:.3g}", checks_text(s), _iv(s["untrained"]),
                         verdict_of.get(cid, "—")])
    return Table(["target", "d", "network", "N", "α̂_N [deciding interval]", "local slopes", "2β/d", "4/d",
                  "data check: MSE at 2× / 1× samples", "untrained α̂_N", "verdict"], rows,
                 caption="Deciding interval: the hull of the seed bootstrap, the t-interval and the leave-one-width-out "
                         "range. Verdict: the control's harness check, or the network's Theorem-2 claim.")


def render(r: dict[str, Any]) -> list:
    c = r["config"]
    orc = [[e["target"], e["d"], _iv(e["oracles"]["constant"]), f"{e['alpha_2d'] if e['target'] == 'smooth' else e['alpha_pred']:.3g}",
            _iv(e["oracles"]["linear"]), f"{e['alpha_4d'] if e['target'] == 'smooth' else e['alpha_pred']:.3g}"]
           for e in r["results"]]
    return [
        Paragraph(f"What was run (design declared in docs/model_scaling.md): networks trained online — fresh, noiseless "
                  f"samples at every step — on targets on S^d in R^{c['ambient']}, d ∈ {{{', '.join(map(str, c['ds']))}}}, "
                  f"targets {', '.join(c['targets'])} (Hölder β = {c['holder_beta']:g}); the ReLU-MLP control at widths "
                  f"{list(c['mlp_widths'])} ({c['control_seeds']} seed(s)), transformers {', '.join(c['archs'])} at widths "
                  f"{list(c['transformer_widths'])} ({c['seeds']} seed(s)); normalised test MSE on {c['n_test']:,} clean "
                  f"points; α̂_N is −slope of log MSE against log parameter count "
                  f"({r['sweep'].get('n_ok', '?')}/{r['sweep'].get('n_tasks', '?')} tasks ok, "
                  f"{r['sweep'].get('n_cached', 0)} of them reused from the cache; "
                  f"{r['sweep'].get('task_seconds') or float('nan'):,.0f} s of task time, "
                  f"{r.get('wall_seconds') or float('nan'):,.0f} s of wall time in this call)."),
        Figure(r["figure"], "Normalised test MSE against parameter count per (target, d): networks (seed means), "
                            "oracles (dotted: piecewise-constant, dashed: piecewise-linear) and slopes 2β/d and 4/d."),
        _table(r),
        Table(["target", "d", "piecewise-constant α̂", "its rate", "piecewise-linear α̂", "its rate"], orc,
              caption="Oracles on the same N axis (N cells, or N/(d+1) affine cells): which regime is reachable."),
        Paragraph(f"Full output: `{r['results_file']}` (every run, its training trace and every fit)."),
        Claims(r["claims"]),
    ]


def config(ctx: PartContext) -> Any:
    from dataclasses import replace

    from ttlab.scaling import model_scaling_config as msc

    # standard runs the quick size: the standard tier's hour cannot decide the transformers (docs/reproduce.md)
    configs = PerMode(quick=msc.quick_model_config, standard=msc.quick_model_config, tiny=msc.tiny_model_config,
                      full=lambda: msc.standard_model_config(seeds=3, control_seeds=3))
    return replace(ctx.pick(configs)(), problem_seed=ctx.seed)


@register_part("model_scaling", paper="B",
               title="Theorem 2 decided: model-size scaling in the approximation-limited regime, with a positive control",
               render=render, claims=claims, estimate=(100, 4800), version=1)
def model_scaling(out: Path, ctx: PartContext) -> dict:
    """ttlab.scaling.model_scaling.run_model_scaling at the mode's size."""
    from ttlab.scaling.model_scaling import run_model_scaling

    def progress(p: Any) -> None:
        what = "training runs" if "arch" in p.record.config else "oracle runs"
        ctx.step(f"model-size sweep: {what}", p.done, p.total)

    sub = out / "model_scaling"
    payload = run_model_scaling(config(ctx), sub, progress=progress, backend=ctx.backend, workers=ctx.n_workers,
                                ray_address=ctx.ray_address)
    sw = payload["sweep"]
    if sw["n_failed"]:
        first = sw["failures"][0]["error"] if sw["failures"] else ""
        raise RuntimeError(f"{sw['n_failed']} of {sw['n_tasks']} sweep tasks failed (first: {first}); finished runs "
                           f"are cached in {sub / 'cache'} — re-run to retry the failed ones")
    return {"config": payload["config"], "results": payload["results"], "input_ids": payload["input_ids"],
            "sweep": {k: sw[k] for k in ("n_tasks", "n_ok", "n_failed", "n_cached", "task_seconds") if k in sw},
            "wall_seconds": payload["wall_seconds"], "figure": "model_scaling/model_scaling.png",
            "results_file": "model_scaling/results.json"}
