"""Paper B's Figure 3 method on an existing model suite in ``ttlab reproduce``: the part ``lm_suite_scaling`` runs
``ttlab lm suite`` on the model sweep's own runs (trains them first, or reuses the sweep's cache), scoring every model
on the same held-out text windows, beside two controls: untrained copies of the same sizes and the reference model on
shuffled tokens.

Claims (rules of :mod:`ttlab.reproduce.verdicts`): the held-out loss falls as a power law in N; α_N = 2/d
*under-estimates* α̂_N — both not judged at this scale when the sweep is not data-rich by Kaplan's criterion —; the
final-layer ID grows with model size beyond the untrained copies' rise.

May import: :mod:`ttlab.reproduce` (parts.common_lm_id, parts.common_lm_sweep, registry, report) and, inside the
functions, :mod:`ttlab.lm`. Not the CLI.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from ttlab.reproduce.parts.common_lm_id import id_row, id_standard_error, shuffled_reading
from ttlab.reproduce.parts.common_lm_sweep import (
    BOOTSTRAP,
    KAPLAN_COMMAND,
    alpha_n_claim,
    decidable_claim,
    id_grows_claim,
    kaplan_regime,
    kaplan_why,
    sweep_results,
)
from ttlab.reproduce.registry import PartContext, PerMode, register_part
from ttlab.reproduce.report_blocks import Claims, Figure, Paragraph, Table, fmt
from ttlab.scaling.analysis import step_capped

_TINY_SUITE = dict(window_bytes=48, windows_per_doc=8, id_tokens_per_doc=8, id_batch_size=60, id_k=5, batch_tokens=512)


def _suite_config(ctx: PartContext, sweep: dict[str, Any]) -> Any:
    """The suite evaluation of the model sweep's runs: the sweep's corpus and test split, windows of the
    runs' block size, 16 windows per test document (the sweep's ID protocol), tiny sizes in tiny mode."""
    from ttlab.lm.suite_windows import SuiteConfig

    data, block = sweep["config"]["data"], sweep["config"]["models"][0]["block_size"]
    common = dict(corpus=data["corpus"], split="test", split_seed=data["split_seed"], val_frac=data["val_frac"],
                  test_frac=data["test_frac"], max_corpus_docs=data["max_docs"], field_name=data["field_name"],
                  context=block, seed=ctx.seed)
    if ctx.pick(PerMode(quick=False, standard=False, full=False, tiny=True)):
        return SuiteConfig(**common, **_TINY_SUITE)
    opts = sweep["config"]["id_options"]
    return SuiteConfig(**common, windows_per_doc=16, id_tokens_per_doc=opts["tokens_per_doc"],
                       id_batch_size=opts["batch_size"], id_k=opts["k"], id_average=opts["average"])


def claims(r: dict[str, Any]) -> list[dict]:
    f = r.get("fit_loss") or {}
    a, ci, pred, n = f.get("alpha_hat"), f.get("alpha_hat_ci") or [None, None], r.get("alpha_pred"), f.get("n_points", 0)
    capped = r.get("n_capped") or 0
    note = f"; {capped} of the suite's {len(r.get('models', []))} training runs hit the step cap" if capped else ""
    out = [decidable_claim(
        "lm_suite_scaling.power_law", "Held-out loss of a model suite falls as a power law in N (Figure 3)",
        kaplan_why(r.get("kaplan")), {"alpha": a, "lo": ci[0], "hi": ci[1], "r2": f.get("r2_log"), "n_points": n,
                                      "n_capped": capped},
        "power_law_decay", {"min_r2": 0.9, "min_points": 3}, quantity="held-out loss against non-embedding N",
        summary=f"α̂_N = {fmt(a, 3)} [{fmt(ci[0], 3)}, {fmt(ci[1], 3)}], R² (log) = {fmt(f.get('r2_log'), 3)} over {n} models "
                f"(bits per byte: {fmt((r.get('fit_bpb') or {}).get('alpha_hat'), 3)})" + note, kind="paper", cite="Figure 3",
        command=KAPLAN_COMMAND if kaplan_why(r.get("kaplan")) else None)]
    rows = [m for m in r.get("models", []) if m.get("intrinsic_dim") is not None]
    ref = next((m for m in rows if m.get("name") == r.get("reference")), None)
    out.append(alpha_n_claim("lm_suite_scaling.id_prediction", a, ci, pred, r.get("intrinsic_dim"),
                             id_standard_error(ref) if ref else None, n, capped, r.get("alpha_pred_harmonic"),
                             f" (ID of {r.get('reference')})" + note,
                             shuffled=(r.get("id_shuffled") or {}).get("intrinsic_dim"), why=kaplan_why(r.get("kaplan"))))
    out.append(id_grows_claim(
        "lm_suite_scaling.id_grows", "The final-layer ID grows with model size across the suite (Figure 4: 15.56 at "
        "410M → 20.02 at 12.8B on the Pile)", rows, _matched(rows, r.get("models_untrained"))))
    return out


def _matched(rows: list[dict[str, Any]], control: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """The control rows of the same models as ``rows``, in their order (by name; None when not measured)."""
    if control is None:
        return None
    by_name = {x["name"]: x for x in control}
    return [by_name.get(m["name"], {}) for m in rows]


def render(r: dict[str, Any]) -> list:
    c, w = r["config"], r["windows"]
    paras = [
        Paragraph(f"What was run: paper B's Figure-3 method on an existing suite — here the {len(r['models'])} models of "
                  f"the model sweep (`{r['sweep_dir']}`), loaded from their run folders and evaluated, not trained, on "
                  f"the same {w['n_windows']} text windows ({fmt(w['bytes'])} bytes, {c['window_bytes_used']}-byte "
                  f"word-aligned windows, {c['windows_per_doc']} per document) of the {w['split']} split of "
                  f"`{c['corpus']}`. Each model scores every byte with its own tokenizer ({c['context']}-token forward "
                  f"passes, a start token in front of each window); bits per byte = nats / ln 2 / bytes. N is Kaplan's "
                  f"non-embedding count. ID: the paper's protocol on the final-layer vectors of the same forward passes "
                  f"({c['id_tokens_per_doc']} positions per window, batches of {c['id_batch_size']}, MLE with K = "
                  f"{c['id_k']}, {c['id_average']} rule); α_N = 2/d from {r['reference'] or 'no model'} (the largest). "
                  f"Wall time {fmt(r.get('wall_time_s'), 3)} s."),
    ]
    if r.get("figure"):
        paras.append(Figure(r["figure"], "Held-out loss (left) and bits per byte (right) against non-embedding parameters "
                                         "(log-log): the suite, the fitted power law and the slope predicted from the ID."))
    control = {x["name"]: x for x in r.get("models_untrained") or []}
    paras.append(Table(["model", "non-embedding N", "tokens", "loss (nats/token)", "bits per byte", "ID (mean)",
                        "ID (harmonic)", "α_N = 2/d", "untrained copy: ID (mean)", "its loss"],
                       [[m["name"], m.get("params_non_embedding"), m.get("tokens"), m.get("loss"), m.get("bpb"),
                         m.get("intrinsic_dim"), m.get("intrinsic_dim_harmonic"), m.get("alpha_n_pred"),
                         control.get(m["name"], {}).get("intrinsic_dim"), control.get(m["name"], {}).get("loss")]
                        for m in r["models"]],
                       caption="The control columns: each model's untrained initial weights (same init seed), scored "
                               "and embedded on the same windows with the same ID protocol."))
    rows = []
    for label, f in (("loss", r.get("fit_loss") or {}), ("bits per byte", r.get("fit_bpb") or {})):
        ci = f.get("alpha_hat_ci") or [None, None]
        rows.append([label, f.get("alpha_hat"), f"{fmt(ci[0], 3)} – {fmt(ci[1], 3)}", f.get("r2_log"), r.get("alpha_pred")])
    rows.append(["training sweep (mean of 5 lowest test losses)", r.get("sweep_alpha_hat"),
                 "–".join(fmt(x, 3) for x in (r.get("sweep_alpha_hat_ci") or [None, None])), None, r.get("alpha_pred")])
    paras.append(Table(["fitted on", "α̂_N", "95 % CI", "R² (log)", "predicted α_N"], rows))
    paras.append(Paragraph(shuffled_reading(next((m for m in r["models"] if m["name"] == r.get("reference")), None),
                                            r.get("id_shuffled"))))
    paras.append(Paragraph(f"Every model, window and fit: `{r['results_file']}`."))
    paras.append(Claims(r["claims"]))
    return paras


def estimate(ctx: PartContext, out: Path | None) -> float:
    # quick: 4 models × ~32k tokens + their IDs took 85 s on 2 busy cores; the controls (4 untrained copies, the
    # largest on shuffled tokens) 24 s + 8 s, measured on 2 cores at load 9–12
    own = ctx.pick(PerMode(quick=120.0, standard=120.0, full=850.0, tiny=120.0))
    if out is not None and (out / "lm_model_scaling" / "results.json").is_file():
        return own
    from ttlab.reproduce.registry import PARTS

    return own + PARTS["lm_model_scaling"].estimated_seconds(ctx, out)


@register_part("lm_suite_scaling", paper="B", title="Model scaling from an existing model suite (Figure 3's method)",
               render=render, claims=claims, estimate=(420, 15000), estimate_fn=estimate, version=3)
def lm_suite_scaling(out: Path, ctx: PartContext) -> dict:
    """``ttlab lm suite`` on the model sweep's own runs (trains them first, or reuses the sweep's cache)."""
    from ttlab.lm.presets import Execution
    from ttlab.lm.suite import run_suite
    from ttlab.lm.suite_models import resolve_model

    sweep = sweep_results("model", out / "lm_model_scaling", ctx)
    selected = sorted((r for r in sweep["runs"] if r.get("selected") and r["seed"] == min(x["seed"] for x in sweep["runs"])),
                      key=lambda r: r["params_non_embedding"])
    if not selected:
        raise RuntimeError("the model sweep has no finished run to evaluate")

    def progress(stage: str, done: int, total: int) -> None:
        ctx.step(f"suite: {stage}", done, total)

    cfg, execution = _suite_config(ctx, sweep), Execution(backend=ctx.backend, ray_address=ctx.ray_address, workers=1)
    res = run_suite([r["run_dir"] for r in selected], out / "lm_suite_scaling", cfg,
                    bootstrap=ctx.pick(BOOTSTRAP), progress=progress, execution=execution)
    # the control: untrained copies (same sizes, same init seed) scored on the same windows, same ID protocol
    untrained = [{**resolve_model(r["run_dir"], label=f"{r['name']} (untrained)"), "which": "init"} for r in selected]
    ctl = run_suite(untrained, out / "lm_suite_scaling" / "untrained", cfg, bootstrap=0, figure=False,
                    progress=lambda stage, done, total: ctx.step(f"suite control (untrained): {stage}", done, total),
                    execution=execution)
    # the second control: the reference model (whose ID predicts α_N) on the same windows with shuffled tokens
    ref = next((r for r in selected if r["name"] == (res["reference"] or {}).get("name")), None)
    shuf = run_suite([ref["run_dir"]], out / "lm_suite_scaling" / "shuffled", replace(cfg, shuffle_tokens=True),
                     bootstrap=0, figure=False, execution=execution) if ref else None
    for what, x in (("", res), (" (untrained control)", ctl), (" (shuffled-token control)", shuf or {"n_failed": 0})):
        if x["n_failed"]:
            raise RuntimeError(f"{x['n_failed']} model(s) of the suite{what} failed: "
                               + "; ".join(f"{m['name']}: {m['error']}" for m in x["models"] if m["status"] != "ok"))
    keep = ("name", "params", "params_non_embedding", "tokens", "bytes", "loss", "bpb", "intrinsic_dim", "intrinsic_dim_std",
            "intrinsic_dim_harmonic", "alpha_n_pred", "n_vectors", "batch_size", "wall_time_s", "status", "cached")
    fit = {k: {x: res["fits"][k].get(x) for x in ("alpha_hat", "alpha_hat_ci", "alpha_hat_ci_method", "r2_log", "n_points")}
           for k in ("loss", "bpb")}
    sub = Path(sweep["runs"][0]["run_dir"]).parent.parent
    return {"models": [{k: m.get(k) for k in keep} for m in res["models"]], "fit_loss": fit["loss"], "fit_bpb": fit["bpb"],
            "models_untrained": [id_row(m, name=r["name"], params_non_embedding=m.get("params_non_embedding"),
                                         loss=m.get("loss")) for r, m in zip(selected, ctl["models"])],
            "id_shuffled": id_row(shuf["models"][0], loss=shuf["models"][0].get("loss")) if shuf else None,
            "alpha_pred": res["alpha_pred"], "alpha_pred_harmonic": res["alpha_pred_harmonic"],
            "intrinsic_dim": res["intrinsic_dim"], "reference": (res["reference"] or {}).get("name"),
            "n_capped": sum(step_capped(r) for r in selected), "sweep_alpha_hat": sweep.get("alpha_hat"),
            "kaplan": kaplan_regime(sweep["runs"]),
            "sweep_alpha_hat_ci": sweep.get("alpha_hat_ci"), "windows": {k: res["windows"].get(k) for k in
                                                                         ("n_windows", "n_docs", "bytes", "split", "sha256")},
            "config": {k: res["config"][k] for k in ("corpus", "context", "window", "window_bytes_used", "windows_per_doc",
                                                     "id_tokens_per_doc", "id_batch_size", "id_k", "id_average", "dtype",
                                                     "device")},
            "sweep_dir": str(sub.relative_to(out)) if sub.is_relative_to(out) else str(sub),
            "wall_time_s": res["wall_time_s"], "figure": "lm_suite_scaling/suite_scaling.png" if res.get("figure") else None,
            "results_file": "lm_suite_scaling/results.json"}
