"""Paper A at GPT-2 vocabulary size in ``ttlab reproduce``: the part ``ntp_scale`` (``--full`` only; a test-only tiny
size in ``tiny`` mode) runs Algorithm 1 at |V| = 50,257 on 200,000 random sentences of length ≤ 32 by the structured
exact path.

Claims: the stage-1 direction, the final cos(W_kq, W*_kq) (≥ 0.9 holds, ≥ 0.5 partly, the ablations' threshold), the
norm bounds and loss rates with Figure 2's rules, and Theorem 3 on unseen sentences with ``ntp_generalization``'s
rules and controls (uniform and random values on W*_kq's support), in the max-margin limit (W*_kq scaled up) and for
the trained model.

May import: ttlab.reproduce (registry, report, verdicts, parts.common_ntp); inside the functions ttlab.ntp
(diagnostics, experiment, fastcheck, generate, scale, train).
"""

from __future__ import annotations

from pathlib import Path

from ttlab.reproduce.parts.common_ntp import (
    LIMIT_CONDITIONS,
    agreement_claim,
    bounds_and_rates_claims,
    fmt_g,
    pct,
    stage1_direction_claim,
    theorem_conditions,
    train_progress,
)
from ttlab.reproduce.registry import PartContext, PerMode, register_part
from ttlab.reproduce.report_blocks import Claims, Figure, Paragraph, Table
from ttlab.reproduce.verdicts import make_claim

#: the ntp_scale configurations: --full (GPT-2's vocabulary), test-only tiny; --quick does not run it.
#: Step sizes at |V| = 50,257: the defaults 0.2/√|V|, 0.05/√|V| would leave ‖W‖ ≤ tη far below ‖W*‖
#: (0.2 against ‖W*_kq‖ = 342.5 after 900 steps: nothing learned). "figure2" keeps Figure 2's ratios of the
#: final norm bound tη to ‖W*‖ (ttlab.ntp.config.FIGURE2_NORM_RATIOS, also `ntp run --step-sizes figure2`):
#: η0 = 9.23·224.2/900 ≈ 2.30, η = 2.06·342.5/900 ≈ 0.784 (‖W*_ov‖ = 224.2, ‖W*_kq‖ = 342.5 here, seed 0).
SCALE_CONFIGS = PerMode(
    quick=None, standard=None,  # not run: it takes the full tier's time
    full=dict(vocab=50_257, sentences=200_000, max_len=32, steps=900, samples=1000, step_sizes="figure2"),
    # above MATERIALIZE_LIMIT (2,048): no dense matrix is formed, as at the full size
    tiny=dict(vocab=2_500, sentences=800, max_len=10, steps=20, samples=100),
)


def claims(r: dict) -> list[dict]:
    if "skipped" in r:
        return []
    s1, s2 = r["stages"]["stage_1"], r["stages"]["stage_2"]
    c2 = s2["final_cosine"]
    out = [stage1_direction_claim("ntp_scale", s1), make_claim(
        "ntp_scale.stage2_direction",
        f"Stage 2: W_kq(t) moves toward the max-margin direction W*_kq at |V| = {r['dataset']['vocab_size']:,} "
        "(Theorem 1)", "at_least", {"value": c2, "conditions": theorem_conditions(r, s2["steps"])["theorem1"]},
        {"holds": 0.9, "partly": 0.5, "complement": True},
        quantity="the final cos(W_kq, W*_kq)",
        summary=f"final cos(W_kq, W*_kq) = {c2:.4f} after {s2['steps']} steps (from 0 at t = 0)", kind="paper", cite="Theorem 1")]
    linear = r.get("linear")
    if linear and "t1" in linear:
        linear = {**linear, "conditions": theorem_conditions(r, int(linear["t1"]))["theorem2"]}
    out += bounds_and_rates_claims("ntp_scale", s1, s2, linear)
    n_sent = r["generalization"]["n_sentences"]
    if "max_margin_limit" in r:
        lim = r["max_margin_limit"]
        out.append(agreement_claim(
            "ntp_scale.limit", "Theorem 3 / Proposition 2 at this vocabulary size: in the max-margin limit an unseen "
            "sentence continues with n(optimal token), or with n(x0) for a non-comparable x0 among non-optimal tokens",
            lim["by_case"], {"holds": 0.999, "partly": 0.9, "min_n": 10},
            f"on {n_sent} unseen sentences with W_kq = W*_kq scaled to norm {fmt_g(lim['wkq_norm'])}", lim.get("controls"),
            LIMIT_CONDITIONS))
    out.append(agreement_claim(
        "ntp_scale.generalization",
        "The trained model generalizes as Theorem 3 predicts on unseen sentences at this vocabulary size",
        r["generalization"]["by_case"], {"holds": 0.95, "partly": 0.8, "min_n": 10},
        f"on {n_sent} unseen sentences after {s2['steps']} steps, with ‖W_kq‖ = {fmt_g(s2['final_norm'])} "
        f"(‖W*_kq‖ = {fmt_g(r['wkq_star_norm'])}) and final minimum optimal attention "
        f"{fmt_g(s2['final_min_optimal_attention'], 3)}", r["generalization"].get("controls"),
        theorem_conditions(r, s2["steps"])["theorem1"]))
    return out


def render(r: dict) -> list:
    from ttlab.ntp.diagnostics import format_loss

    if "skipped" in r:
        return [Paragraph(r["skipped"])]
    s1, s2, ds, ph = r["stages"]["stage_1"], r["stages"]["stage_2"], r["dataset"], r["phases_s"]
    kq = r["wkq_star"]
    g = r["generalization"]
    lim = r.get("max_margin_limit")
    return [
        Paragraph(
            f"What was run: Algorithm 1 (two-stage NGD from zero, one-hot embeddings, the structured exact path) on a "
            f"random realizable dataset from the bounded-memory generator: |V| = {ds['vocab_size']:,}, "
            f"{ds['n_distinct_sentences']:,} distinct sentences ({r['tokens']:,} tokens), L_max = {ds['max_len']}, "
            f"{r['config']['stage1_steps']} + {r['config']['stage2_steps']} steps, η0 = {r['config']['eta0']:.4g}, "
            f"η = {r['config']['eta']:.4g}. Wall time: " + ", ".join(f"{k} {v:.1f} s" for k, v in ph.items())
            + f"; peak RSS of the process {r['peak_rss_gib']:.2f} GiB."),
        Figure(r["figure"], "The six panels of Figure 2 at this vocabulary size: loss, cosine to the max-margin "
                            "solution and norm with the bounds tη/(2‖W*‖) and tη; top W_ov, bottom W_kq."),
        Table(["stage", "final loss", "final cosine to W*", "final norm", "norm bounds hold", "‖W*‖"], [
            ["1 (W_ov)", format_loss(s1["final_loss"], s1.get("final_log_loss")), f"{s1['final_cosine']:.6f}",
             f"{s1['final_norm']:.4f}", pct(s1["norm_bounds"]["fraction"]), f"{r['wov_star_norm']:.4f}"],
            ["2 (W_kq)", f"{format_loss(s2['final_loss'])} (limit {format_loss(s2['limit_loss'])})",
             f"{s2['final_cosine']:.6f}", f"{s2['final_norm']:.4f}", pct(s2["norm_bounds"]["fraction"]),
             f"{r['wkq_star_norm']:.4f}"]]),
        Paragraph(f"W*_kq: {kq['n_constraints']:,} constraints solved per query column ({kq['method']}); certificate: "
                  f"min margin {kq['min_margin']:.12g}, max violation {kq['max_violation']:.3g}. Minimum attention on "
                  f"optimal tokens at the end: {s2['final_min_optimal_attention']:.4f}."),
        Table(["unseen sentences", "n", "agreement with Theorem 3, trained",
               "in the max-margin limit" if lim else "(limit not evaluated in this version)"],
              [[c, str(v["n"]), pct(v["agreement"]), pct(lim["by_case"][c]["agreement"]) if lim else "—"]
               for c, v in g["by_case"].items() if v["n"]]),
        Claims(r["claims"]),
    ]


@register_part("ntp_scale", paper="A", title="Paper A at GPT-2 vocabulary size (|V| = 50,257)",
               render=render, claims=claims, estimate=(0, 900), version=3)
def ntp_scale(out: Path, ctx: PartContext) -> dict:
    """Algorithm 1 at |V| = 50,257 with 200,000 sentences of length ≤ 32 (900 + 900 structured NGD steps, W*),
    Theorem 3 on unseen sentences; only with --full (a test-only tiny size in tiny mode)."""
    import resource
    import time

    from ttlab.ntp.config import TrainConfig
    from ttlab.ntp.diagnostics import TINY_GAP, fit_exp_vs_power, resolvable_until
    from ttlab.ntp.experiment import run_dynamics
    from ttlab.ntp.fastcheck import quick_check
    from ttlab.ntp.generate import generate_dataset
    from ttlab.ntp.scale import ScaleGeneralization, max_margin_limit_state, scale_controls

    c = ctx.pick(SCALE_CONFIGS)
    if c is None:  # quick and standard: not run
        return {"skipped": f"Not run in {ctx.mode} mode: this part trains at |V| = 50,257 on 200,000 sentences "
                           "(≈ 5 min on 2 cores); run `ttlab reproduce --full --part ntp_scale`."}
    phases: dict[str, float] = {}
    t0 = time.perf_counter()
    ctx.step("generating the dataset", 0, 1)
    ds = generate_dataset(c["vocab"], c["sentences"], 2, c["max_len"], seed=ctx.seed, method="large")
    phases["generate"] = time.perf_counter() - t0
    progress = train_progress(ctx)

    def report(stage: str, t: int, total: int) -> None:
        if stage == "W*_kq":
            ctx.step("W*_kq (query columns)", t, total)
        else:
            progress(stage, t, total)

    t0 = time.perf_counter()
    cfg = TrainConfig(stage1_steps=c["steps"], stage2_steps=c["steps"], seed=ctx.seed, impl="structured")
    summary = run_dynamics(ds, cfg, out / "ntp_scale", progress=report, step_sizes=c.get("step_sizes", "paper"))
    phases["check, W* and training"] = time.perf_counter() - t0
    res = summary["_result"]
    t0 = time.perf_counter()
    ctx.step("Theorem 3 on unseen sentences", 0, 1)
    gen = ScaleGeneralization.from_quick_check(quick_check(ds.to_text(), ds.source), ds)  # no second analyze
    sents = gen.sample(c["samples"], seed=ctx.seed)
    rep = gen.evaluate(res.structured, sents)
    limit_state, limit_norm = max_margin_limit_state(res.structured)
    limit = gen.evaluate(limit_state, sents)
    trained_controls = scale_controls(gen, res.structured, sents, float(res.structured.W_kq.norm()), ctx.seed)
    limit_controls = scale_controls(gen, res.structured, sents, limit_norm, ctx.seed)
    phases["generalization"] = time.perf_counter() - t0
    r = {k: v for k, v in summary.items() if not k.startswith("_")}
    rows2 = res.rows("2")
    r.update({
        "linear": fit_exp_vs_power(rows2["step"], rows2["loss"] - res.limit_loss, TINY_GAP * abs(res.limit_loss),
                                   t_max=resolvable_until(rows2["step"], 1.0 - rows2["min_optimal_attention"])),
        "figure": "ntp_scale/dynamics.png",
        "tokens": int(sum(len(s.tokens) * s.count for s in ds.sentences)),
        "generalization": {k: v for k, v in rep.items() if k != "cases"} | {"examples": rep["cases"][:3],
                                                                           "controls": trained_controls},
        "max_margin_limit": {"agreement": limit["agreement"], "by_case": limit["by_case"], "wkq_norm": limit_norm,
                             "controls": limit_controls,
                             "examples": [c for c in limit["cases"] if c["case"] == "non-comparable"][:3]},
        "phases_s": phases,
        "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
    })
    return r
