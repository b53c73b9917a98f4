"""What the language-model sweep parts of ``ttlab reproduce`` share (``lm_data_scaling``, ``lm_model_scaling``,
``lm_suite_scaling``, ``lm_id_ablations``): running a sweep and keeping what the claims need, Kaplan's data-rich
criterion, the claims more than one part makes, and a sweep's report section (:func:`render_scaling`: what was run,
the fitted points and exponents, the prediction band over ID estimators, the ID by model beside its untrained control,
the shuffled-token reading, and why every run stopped).

The sweeps run through :mod:`ttlab.lm.experiments` with the presets of ``ttlab lm data-sweep`` / ``model-sweep``
(``--quick`` in quick mode, the converged default in full mode; a tiny size for the tests). They cache every
finished run under ``DIR/<part>/``, so an interrupted part resumes.

Claims (rules of :mod:`ttlab.reproduce.verdicts`, printed with their reasons in the report): the loss falls as a
power law (the fitted exponent's interval excludes 0; inconclusive with step-capped runs); α_N = 2/d
*under-estimates* α̂_N, as the paper says (``exceeds_control``: α̂_N above the prediction by 1.96 combined standard
errors); the ID grows with model size — beyond the rise of untrained copies of the same sizes (the control, embedded
the same way). A claim the run cannot decide is inconclusive with what would decide it (:func:`decidable_claim`).
Exponents are read with the keys of :class:`ttlab.scaling.analysis.FittedExponent` (``alpha_hat``, ``alpha_hat_ci``,
``alpha_hat_ci_method``).

May import: :mod:`ttlab.reproduce` (parts.common_lm_id, registry, report, verdict_base, verdicts),
:mod:`ttlab.scaling.analysis` and, inside the functions, :mod:`ttlab.errors`, :mod:`ttlab.lm` and :mod:`ttlab.scaling`.
Not the CLI.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from ttlab.reproduce.parts.common_lm_id import (
    ID_SOURCE_RULE,
    alpha_d_claims,
    id_options,
    id_row,
    id_standard_error,
    prediction_sources,
    shuffled_control,
    shuffled_reading,
)
from ttlab.reproduce.registry import PartContext, PerMode, finite
from ttlab.reproduce.report_blocks import Claims, Figure, Paragraph, Table, fmt
from ttlab.reproduce.verdict_base import SHAPE_SE_MULT
from ttlab.reproduce.verdicts import NOT_AT_SCALE, make_claim, missing_claim
from ttlab.scaling.analysis import step_capped

_TINY_DATA = dict(corpus="builtin:sotu", max_docs=24, vocab_size=300, model=(1, 2, 32), block_size=16, sizes=(400, 1500, 5000),
                  max_iters=12, eval_interval=6, eval_iters=2, warmup_iters=2, batch_size=4, test_max_tokens=2000,
                  protocol="budget", workers=1, seeds=(0,), cap_doublings=0)
_TINY_MODEL = dict(corpus="builtin:sotu", max_docs=24, vocab_size=300, models=((1, 2, 16), (1, 2, 32), (1, 2, 48)), block_size=16,
                   max_tokens=5000, max_iters=12, eval_interval=6, eval_iters=2, warmup_iters=2, batch_size=4,
                   test_max_tokens=2000, protocol="budget", workers=1, lr=3e-3, lrs=(1e-3, 3e-3))


PRESETS = PerMode(quick="quick", standard="standard", full="full", tiny="quick")
"""The sweep preset of each mode (:data:`ttlab.lm.presets.DATA_SWEEP_PRESETS`; tiny overrides quick's sizes)."""
BOOTSTRAP = PerMode(quick=1000, standard=1000, full=1000, tiny=200)
"""Bootstrap resamples of the LM parts' fits."""


def sweep_results(kind: str, out: Path, ctx: PartContext, corpus: str | None = None) -> dict[str, Any]:
    from ttlab.lm.experiments import run_preset_sweep
    from ttlab.lm.presets import sweep_preset

    tiny = _TINY_DATA if kind == "data" else _TINY_MODEL
    overrides: dict[str, Any] = dict(ctx.pick(PerMode(quick={}, standard={}, full={}, tiny=tiny)))
    if corpus is not None:
        overrides["corpus"] = corpus
    preset = sweep_preset(kind, ctx.pick(PRESETS), **overrides, id_options=id_options(ctx))
    workers = min(preset.execution.workers, ctx.n_workers)
    execution = replace(preset.execution, backend=ctx.backend, ray_address=ctx.ray_address, workers=workers,
                        threads_per_task=max(1, ctx.n_workers // workers))
    preset = replace(preset, execution=execution, seeds=tuple(ctx.seed + s for s in preset.seeds))
    label = kind if corpus is None else f"{kind} ({corpus})"

    def progress(stage: str, done: int, total: int) -> None:
        ctx.step(f"{label} sweep: {stage}", done, total)

    return run_preset_sweep(preset, out, progress=progress, bootstrap=ctx.pick(BOOTSTRAP))


def _slim(res: dict[str, Any], sub: str) -> dict[str, Any]:
    keep = ("kind", "alpha_hat", "alpha_hat_ci", "alpha_hat_ci_method", "alpha_hat_offset", "intrinsic_dim", "intrinsic_dim_harmonic",
            "alpha_pred", "alpha_pred_harmonic", "alpha_pred_band", "points", "n_failed", "wall_time_s", "id_by_model")
    out = {k: res.get(k) for k in keep if k in res}
    out["runs"] = [{k: r.get(k) for k in ("name", "status", "train_tokens", "params_non_embedding", "seed", "lr", "iters",
                                          "stop_reason", "schedule_search", "epochs", "test_loss", "test_loss_best",
                                          "mean_5_lowest_test", "best_val_loss", "selected", "wall_time_s", "run_dir",
                                          "error", "capped_point", "continued_point", "point_chosen",
                                          "continuation_stop_reason")}
                   for r in res["runs"]]
    out["superseded_runs"] = [{k: r.get(k) for k in ("name", "train_tokens", "seed", "lr", "iters", "stop_reason",
                                                     "schedule_search", "best_val_loss", "superseded_by")}
                              for r in res.get("superseded_runs") or []]
    out["r2_log"] = (res["fits"].get("power") or {}).get("goodness_of_fit", {}).get("r2_log")
    c = res["config"]
    out["config"] = {k: c[k] for k in c if k != "data_summary"}
    ds = c["data_summary"]
    out["data"] = {"corpus": ds["corpus"].get("source", c["data"]["corpus"]), "n_docs": ds["corpus"].get("n_docs"),
                   "tokens": ds.get("tokens"), "vocab_size": ds.get("tokenizer", {}).get("vocab_size")}
    out["id_options"] = (res.get("id") or {}).get("options") or c.get("id_options")
    out["figure"] = f"{sub}/{res['figure']}" if res.get("figure") else None
    out["results_file"] = f"{sub}/results.json"
    return out


def scaling_part(kind: str, sub: str, out: Path, ctx: PartContext, corpus: str | None = None) -> dict:
    """Run (or resume) a sweep into ``DIR/<sub>``, measure its ID controls, and keep what the claims need.

    Controls (no training, embedding only, same windows, positions, K and batches as the ID they control):
    ``id_shuffled`` — the model whose ID predicts the exponent, on the test windows with their tokens shuffled;
    for a model sweep also ``id_untrained`` — untrained copies (same sizes, same init seed) of the measured models."""
    from ttlab.lm.experiments import measure_run_id

    res = sweep_results(kind, out / sub, ctx, corpus)
    if res["n_failed"]:
        raise RuntimeError(f"{res['n_failed']} training run(s) failed; finished runs are cached — re-run to retry")
    r = _slim(res, sub)
    if kind == "data":  # the ID that predicts α_D, and its control
        r["id_text"] = id_row(res["id"]["rows"][0]) if res.get("id") else None
        r["id_shuffled"] = shuffled_control(res["id"]["run_dir"], ctx) if res.get("id") else None
        return r
    r["kaplan"] = kaplan_regime(res["runs"])
    runs = {x["name"]: x for x in res["runs"]}
    measured = [runs[x["name"]] for x in res["id_by_model"]]  # the sweep's ID rows, by increasing size
    r["id_text"] = id_row(res["id_by_model"][-1]) if measured else None  # the largest model's: it predicts α_N
    r["id_untrained"] = []
    for i, run in enumerate(measured):
        ctx.step("ID controls: untrained copies", i, len(measured))
        row = measure_run_id(run["run_dir"], id_options(ctx), which="init")["rows"][0]
        r["id_untrained"].append(id_row(row, name=run["name"], params_non_embedding=run["params_non_embedding"]))
    ctx.step("ID controls: shuffled tokens", len(measured), len(measured) + 1)
    r["id_shuffled"] = shuffled_control(measured[-1]["run_dir"], ctx) if measured else None
    return r


def kaplan_regime(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Kaplan et al.'s data-rich criterion for a model sweep's largest selected model: the training tokens it had
    against the D = 5×10³·N^0.74 it needs (:func:`ttlab.scaling.theory.kaplan_data_need`); None without runs."""
    from ttlab.scaling.theory import kaplan_data_need

    sel = [r for r in runs if r.get("selected") and finite(r.get("params_non_embedding"), r.get("train_tokens"))]
    if not sel:
        return None
    big = max(sel, key=lambda r: r["params_non_embedding"])
    need = kaplan_data_need(float(big["params_non_embedding"]))
    return {"n_params": big["params_non_embedding"], "tokens_available": big["train_tokens"], "tokens_needed": need,
            "data_rich": big["train_tokens"] >= need}


def kaplan_why(k: dict[str, Any] | None) -> str | None:
    """Why a text model sweep cannot judge α_N (None when it is data-rich by Kaplan's criterion)."""
    if not k or k.get("data_rich"):
        return None
    return (f"not in the data-rich regime by Kaplan's criterion (D ≥ 5×10³·N^0.74): the largest model (N = "
            f"{k['n_params']:,.0f} non-embedding parameters) needs {k['tokens_needed']:.3g} training tokens and had "
            f"{k['tokens_available']:.3g} ({k['tokens_needed'] / k['tokens_available']:.0f}× short; the shipped corpora "
            "hold a few million tokens): its losses are limited by the data, not by the approximation rate α_N "
            "describes; α_N = 2β/d is judged in the approximation-limited synthetic sweep (model_scaling.rate_*) "
            "instead")


KAPLAN_COMMAND = ("ttlab lm model-sweep --corpus <a corpus of ≥ 7×10⁷ tokens> --models nano,micro,mini,small "
                  "--out runs/model_sweep (on a GPU)")
"""The command that would judge the text α_N claims where the data are rich (shown beside them)."""


def decidable_claim(claim_id: str, statement: str, why: str | None, measured: dict, rule: str, thresholds: dict,
               *, command: str | None = None, needs_mode: str | None = None, **kw: Any) -> dict:
    """``make_claim``, unless the run cannot decide the claim: then inconclusive with ``why`` (what would decide it),
    the measured numbers kept beside it; with ``command`` (what would judge it at scale) the claim is *not judged at
    this scale* (rule ``not_at_this_scale``: listed apart from the verdict counts); ``needs_mode``: the mode of
    ``ttlab reproduce`` whose run decides it (stored on the undecided record only)."""
    if why is None:
        return make_claim(claim_id, statement, rule, measured, thresholds, **kw)
    extra = {"command": command} if command else {}
    return make_claim(claim_id, statement, NOT_AT_SCALE if command else "unjudgeable", {"why": why, **extra, **measured},
                      {}, kind=kw["kind"],
                      cite=kw.get("cite", ""), quantity=kw.get("quantity", "the measured value"),
                      summary=kw.get("summary", ""), needs_mode=needs_mode)


SHAPE_DECADES = 1.0
"""A power-law claim on text holds only if the power law leaves ≥ 1 decade less unexplained variance (of log loss)
than both an exponential and a logarithmic curve fitted to the same points — the margin of paper A's
exponential-vs-power test (``exp_vs_power``); an alternative ahead by as much makes it not reproduced."""


def loss_curve_shapes(r: dict[str, Any]) -> dict[str, Any]:
    """The fitted points of a sweep (loss against training tokens or non-embedding parameters) scored as a power law
    against the closest of an exponential and a logarithmic curve (:func:`ttlab.scaling.analysis.curve_shapes`):
    ``decades`` (log10 RSS ratio, > 0 favours the power law) and ``closest``; empty when they cannot be fitted."""
    from ttlab.errors import TTLabInputError
    from ttlab.scaling.analysis import curve_shapes

    key = "train_tokens" if r.get("kind") == "data_sweep" else "params_non_embedding"
    pts = [p for p in r.get("points") or [] if isinstance(p, dict) and finite(p.get(key), p.get("loss"))]
    try:
        res = curve_shapes([p[key] for p in pts], [p["loss"] for p in pts])
    except TTLabInputError:
        return {}
    return {"decades": res["decades"][res["closest"]], "closest": res["closest"], "rss": res["rss"]}


def scaling_claims(r: dict[str, Any]) -> list[dict]:
    sym = "D" if r["kind"] == "data_sweep" else "N"
    x = "D" if sym == "D" else "N"
    a, ci, pred = r.get("alpha_hat"), r.get("alpha_hat_ci") or [None, None], r.get("alpha_pred")
    n_points = len(r.get("points", []))
    selected = [run for run in r.get("runs", []) if run.get("selected")]
    n_capped = sum(step_capped(run) for run in selected)
    capped_note = f"; {n_capped} of {len(selected)} selected runs hit the step cap" if n_capped else ""
    why = kaplan_why(r.get("kaplan")) if sym == "N" else None
    shape = loss_curve_shapes(r)
    out = [decidable_claim(
        f"lm_{'data' if sym == 'D' else 'model'}_scaling.power_law", f"Test loss falls as a power law in {x} (log-log linear)",
        why, {"alpha": a, "lo": ci[0], "hi": ci[1], "r2": r.get("r2_log"), "n_points": n_points, "n_capped": n_capped,
              "shape_decades": shape.get("decades"), "shape_closest": shape.get("closest")},
        "power_law_decay", {"min_r2": 0.9, "min_points": 3, "min_decades": SHAPE_DECADES}, quantity=f"test loss against {x}",
        summary=f"α̂_{sym} = {fmt(a, 3)} [{fmt(ci[0], 3)}, {fmt(ci[1], 3)}], R² (log) = {fmt(r.get('r2_log'), 3)} over "
                f"{n_points} {'data sizes' if sym == 'D' else 'model sizes'}" + capped_note, kind="paper",
        cite="Section 3, Figures 2–3", command=KAPLAN_COMMAND if why else None)]
    cid = f"lm_{'data' if sym == 'D' else 'model'}_scaling.id_prediction"
    if sym == "N":
        id_se = id_standard_error((r.get("id_by_model") or [{}])[-1])
        out.append(alpha_n_claim(cid, a, ci, pred, r.get("intrinsic_dim"), id_se, n_points, n_capped,
                                 r.get("alpha_pred_harmonic"), capped_note,
                                 shuffled=(r.get("id_shuffled") or {}).get("intrinsic_dim"), why=why))
        return out
    out += alpha_d_claims(cid, r, a, ci, n_points, n_capped, capped_note)
    return out


ALPHA_N_Z = 1.96
"""The α_N direction claims: the fitted α̂_N must exceed the prediction by 1.96 combined standard errors (95 %)."""


def alpha_n_claim(cid: str, a: Any, ci: list, pred: Any, d: Any, id_se: float | None, n_points: int, n_capped: int,
                  pred_harmonic: Any, note: str = "", shuffled: Any = None, why: str | None = None) -> dict:
    """Paper B's α_N statement as it is made: the prediction α_N = 2/d *under-estimates* the fitted α̂_N
    (Section 3, Figure 3), judged with ``exceeds_control`` (the prediction's standard error from the ID's:
    2·SE(d)/d²)."""
    stmt = ("The exponent predicted from the ID, α_N = 2/d, under-estimates the fitted α̂_N (paper: \"our predicted "
            "α_N under-estimates the empirical α̂_N\")")
    cite = "Section 3, Figure 3: α_N = 2β/d"
    if not finite(pred):
        return missing_claim(cid, stmt, "no ID-based prediction (the ID was not measured)", kind="paper", cite=cite)
    pred_se = 2 * id_se / d ** 2 if finite(id_se, d) and d > 0 else None
    return decidable_claim(
        cid, stmt, why, {"value": a, "lo": ci[0], "hi": ci[1], "control": pred, "control_se": pred_se, "n_points": n_points,
         "n_capped": n_capped, "intrinsic_dim": d, "intrinsic_dim_shuffled": shuffled},
        "exceeds_control", {"z": ALPHA_N_Z, "min_points": 3}, quantity="the fitted α̂_N against the predicted α_N = 2/d",
        summary=f"predicted {pred:.3f} (SE {fmt(pred_se, 2)}) from ID {fmt(d, 3)} (harmonic rule: {fmt(pred_harmonic, 3)}) "
                f"vs fitted {fmt(a, 3)} [{fmt(ci[0], 3)}, {fmt(ci[1], 3)}]" + (f": Δ = {a - pred:+.3f}" if finite(a) else "")
                + note, kind="paper", cite=cite, command=KAPLAN_COMMAND if why else None)


def id_grows_claim(claim_id: str, statement: str, rows: list[dict[str, Any]],
                   control: list[dict[str, Any]] | None) -> dict:
    """The ID of models listed by increasing size rises, judged against the ID batches' standard errors and
    against untrained copies of the same sizes embedded the same way (``control``, same order): it holds only
    when the trained rise exceeds the untrained one beyond their standard errors."""
    control = control or []
    listing = ", ".join(f"{fmt(x['intrinsic_dim'], 3)}" for x in rows)
    return make_claim(
        claim_id, statement, "exceeds_control",
        {"values": [x["intrinsic_dim"] for x in rows], "se": [id_standard_error(x) for x in rows],
         "control_values": [x.get("intrinsic_dim") for x in control], "control_se": [id_standard_error(x) for x in control]},
        {"direction": 1, "z": SHAPE_SE_MULT}, quantity="the ID by increasing model size",
        summary=f"ID by increasing size: {listing}; untrained copies: "
                + (", ".join(f"{fmt(x.get('intrinsic_dim'), 3)}" for x in control) or "not measured"),
        kind="paper", cite="Figure 4")


def render_scaling(r: dict[str, Any], claims: bool = True) -> list:
    c = r["config"]
    data_kind = r["kind"] == "data_sweep"
    t = c["train"]
    if data_kind:
        m = c["model"]
        what = (f"A {m['n_layer']}-layer, {m['n_head']}-head, {m['n_embd']}-wide GPT (block {m['block_size']}) trained on "
                f"{len(c['sizes'])} data sizes from {c['sizes'][0]:,} to {c['sizes'][-1]:,} tokens "
                f"({c['orders_of_magnitude']:.1f} orders of magnitude)")
    else:
        shapes = ", ".join(f"{m['n_layer']}L×{m['n_embd']}" for m in c["models"])
        what = f"{len(c['models'])} GPT shapes ({shapes}, block {c['models'][0]['block_size']}) trained on {fmt(c['max_tokens'])} tokens"
    proto = {"converged": "to convergence (early stopping, then a retrain with the schedule ending at the stopping point)",
             "early-stop": f"with early stopping on validation (patience {t['patience']}) under a {t['max_iters']}-step cap",
             "budget": f"for a fixed budget of {t['max_iters']} steps"}[c["protocol"]]
    idopt = r.get("id_options") or {}
    block = (c["model"] if data_kind else c["models"][-1])["block_size"]
    context = idopt.get("context") or block  # None means the model's block size
    paras = [
        Paragraph(f"What was run: {what} of `{r['data']['corpus']}` ({fmt(r['data']['n_docs'])} documents, BPE vocabulary "
                  f"{fmt(r['data']['vocab_size'])}), {proto}; seeds {c['seeds']}, learning rate(s) {c['lrs']}, AdamW with warmup "
                  f"and cosine decay, batch {t['batch_size']}. Loss fitted: `{c['loss']}` (mean of the 5 lowest test "
                  f"evaluations, as the authors did, unless stated). ID: final-layer embeddings of the "
                  f"{'largest-data' if data_kind else 'largest'} model on the test split — {idopt.get('windows_per_doc')} random "
                  f"{context}-token window(s) per document, {idopt.get('tokens_per_doc')} positions each, "
                  f"batches of {idopt.get('batch_size')}, MLE with K = {idopt.get('k')}, arithmetic mean of pointwise estimates "
                  f"(harmonic in brackets); last layer after the final LayerNorm. Wall time {fmt(r.get('wall_time_s'), 3)} s."),
    ]
    if r.get("figure"):
        paras.append(Figure(r["figure"], "Test loss against " + ("training tokens" if data_kind else "non-embedding parameters")
                            + " (log-log): points, fitted power law, the slope predicted from the ID (dashed) and the offset form."))
    xk = "train_tokens" if data_kind else "params_non_embedding"
    rows = [[p[xk], p["loss"], (p.get("all_metrics") or {}).get("test_loss"), p["lr"][0] if p.get("lr") else None]
            for p in r["points"]]
    paras.append(Table(["training tokens" if data_kind else "non-embedding parameters", "fitted loss",
                        "final test loss", "learning rate"], rows))
    ci = r.get("alpha_hat_ci") or [None, None]
    sym = "D" if data_kind else "N"
    band = r.get("alpha_pred_band") or {}
    paras.append(Table(["α̂ (log-log)", "95 % CI", "α (offset form)", "ID (mean)", "ID (harmonic)", f"predicted α_{sym}",
                        "predicted (harmonic)", "band over ID estimators"],
                       [[r.get("alpha_hat"), f"{fmt(ci[0], 3)} – {fmt(ci[1], 3)}", r.get("alpha_hat_offset"),
                         r.get("intrinsic_dim"), r.get("intrinsic_dim_harmonic"), r.get("alpha_pred"),
                         r.get("alpha_pred_harmonic"), f"{fmt(band.get('lo'), 3)} – {fmt(band.get('hi'), 3)}"]]))
    if band.get("estimators"):
        paras.append(Table(["ID estimator", "ID", f"α_{sym}"],
                           [[name, e.get("id"), e.get("alpha")] for name, e in band["estimators"].items()],
                           caption="The prediction band: every ID estimator on the same embedding batches (central: "
                                   "the paper's MLE, K = 20, arithmetic mean)."))
    if not data_kind and r.get("id_by_model"):
        control = {x["name"]: x for x in r.get("id_untrained") or []}
        paras.append(Table(["model", "non-embedding parameters", "ID (mean)", "SE", "ID (harmonic)", "α_N = 2/d",
                            "untrained copy: ID (mean)", "SE"],
                           [[x["name"], x["params_non_embedding"], x["intrinsic_dim"], id_standard_error(x),
                             x["intrinsic_dim_harmonic"], x["alpha_n_pred"], control.get(x["name"], {}).get("intrinsic_dim"),
                             id_standard_error(control.get(x["name"], {}))] for x in r["id_by_model"]],
                           caption="ID against model width (Figure 4, left), beside the control: the same architecture "
                                   "with its untrained initial weights (same init seed), embedded the same way."))
    paras.append(Paragraph(shuffled_reading(r.get("id_text"), r.get("id_shuffled"))))
    if data_kind:
        sources = prediction_sources(r)
        paras.append(Paragraph(sources[0].upper() + sources[1:] + ". Which ID decides (declared in docs/reproduce.md): "
                               + ID_SOURCE_RULE + "."))
    elif r.get("kaplan"):
        k = r["kaplan"]
        paras.append(Paragraph(kaplan_why(k) or (f"Data-rich by Kaplan's criterion: the largest model (N = "
                                                 f"{k['n_params']:,.0f}) needs {k['tokens_needed']:.3g} tokens and "
                                                 f"had {k['tokens_available']:.3g}.")))
    paras.append(_stops_table(r))
    paras.append(Paragraph(f"Every run, fit and bootstrap: `{r['results_file']}`."))
    if claims:
        paras.append(Claims(r["claims"]))
    return paras


def _stops_table(r: dict[str, Any]) -> Table:
    """Why every run stopped (the converged protocol: its search pass), selected runs marked, superseded runs last."""
    def row(x: dict[str, Any], note: str) -> list:
        search = x.get("schedule_search") or {}
        return [x.get("name"), x.get("seed"), x.get("lr"), search.get("stop_reason") or x.get("stop_reason"),
                search.get("iters") or x.get("iters"), search.get("best_iter"), note]

    rows = [row(x, ", ".join(n for n in ("selected" if x.get("selected") else "", continuation_note(x)) if n))
            for x in r.get("runs", [])]
    rows += [row(x, f"not kept: {x.get('superseded_by')} has the lower validation loss")
             for x in r.get("superseded_runs") or []]
    return Table(["run", "seed", "learning rate", "stopped by", "steps", "best step (search)", ""], rows,
                 caption="Why each run stopped: early_stop (validation stopped improving by more than min_delta) or "
                         "max_iters (the step cap: not converged). With cap doublings a capped run is continued from "
                         "its last checkpoint at its final learning rate until early stopping fires, and of the two "
                         "the one with the lower validation loss is kept (the other is listed as not kept); a run "
                         "whose continuation hit its cap too leaves its sweep's claims inconclusive.")


def continuation_note(x: dict[str, Any]) -> str:
    """How a continued run's kept point was chosen: both validation losses and which one won."""
    cap, cont = x.get("capped_point"), x.get("continued_point")
    if not cap or not cont:
        return ""
    return (f"{x.get('point_chosen')} point kept (best validation {fmt(cap.get('best_val_loss'), 4)} capped, "
            f"{fmt(cont.get('best_val_loss'), 4)} continued to step {cont.get('iters')}, "
            f"stopped by {x.get('continuation_stop_reason') or 'nothing: the continuation failed'})")
