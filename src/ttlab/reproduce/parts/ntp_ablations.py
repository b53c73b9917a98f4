"""Paper A's ablations in ``ttlab reproduce``: the part ``ntp_ablations`` trains the Figure 2 data with random
initialization, joint training of both layers, plain GD and Adam instead of Algorithm 1's two-stage normalized GD.

Claims (reviewers' question, not a claim of the paper): the share of variants reaching cos(W_kq, W*_kq) ≥ 0.9 and a
majority of attention on optimal tokens.

May import: ttlab.reproduce (registry, report, verdicts, parts.common_ntp); inside the functions ttlab.ntp
(diagnostics, experiment, plots, train).
"""

from __future__ import annotations

from pathlib import Path

from ttlab.reproduce.parts.common_ntp import figure2_dataset, fmt_g, train_progress
from ttlab.reproduce.registry import PartContext, PerMode, finite, register_part
from ttlab.reproduce.report_blocks import Claims, Figure, Paragraph, Table
from ttlab.reproduce.verdicts import make_claim


def claims(r: dict) -> list[dict]:
    rows = r["rows"]
    cos = [x["final_cosine_kq"] for x in rows]
    att = [x["final_min_optimal_attention"] for x in rows]
    listing = "; ".join(f"{x['variant']}: {fmt_g(x['final_cosine_kq'])}" for x in rows)
    good_c = sum(finite(c) and c >= 0.9 for c in cos)
    good_a = sum(finite(a) and a > 0.5 for a in att)
    return [
        make_claim("ntp_ablations.direction",
                   "W_kq converges toward the max-margin direction W*_kq under every training variant "
                   "(reviewers' ablation, not a claim of the paper)",
                   "count", {"passed": good_c, "total": len(rows), "cosines": cos}, {"holds": 1.0, "partly": 0.5},
                   quantity="final cos(W_kq, W*_kq) ≥ 0.9",
                   summary=f"{good_c}/{len(rows)} variants reach cos ≥ 0.9 ({listing})", kind="ablation"),
        make_claim("ntp_ablations.attention",
                   "Attention selects the optimal tokens under every variant (reviewers' ablation)",
                   "count", {"passed": good_a, "total": len(rows), "attention": att}, {"holds": 1.0, "partly": 0.5},
                   quantity="final minimum attention on optimal tokens > 0.5",
                   summary=f"{good_a}/{len(rows)} variants put > 50 % attention on optimal tokens in every sentence "
                           f"(minimum {fmt_g(min(att) if att else None, 3)})", kind="ablation"),
    ]


def render(r: dict) -> list:
    from ttlab.ntp.diagnostics import format_loss

    return [
        Paragraph("What was run: the Figure 2 dataset trained with each variant reviewers asked about — random "
                  "initialization, joint training of both layers, plain GD and Adam instead of normalized GD — "
                  "with the same step counts."),
        Figure(r["figure"], "Every variant against the steps of W_kq (joint training: the joint steps)."),
        Table(["variant", "final loss", "cos(W_kq, W*_kq)", "‖W_kq‖", "cos(W_ov, W*_ov)", "min optimal attention"],
              [[row["variant"], format_loss(row["final_loss"]), f"{row['final_cosine_kq']:.4f}",
                f"{row['final_norm_kq']:.3f}",
                "—" if row["final_cosine_ov"] is None else f"{row['final_cosine_ov']:.4f}",
                f"{row['final_min_optimal_attention']:.4f}"] for row in r["rows"]]),
        Paragraph("Per-variant six-panel figures: " + ", ".join(f"`{row['figure']}`" for row in r["rows"]) + "."),
        Claims(r["claims"]),
    ]


@register_part("ntp_ablations", paper="A", title="Ablations: initialization, joint training, optimizers",
               render=render, claims=claims, estimate=(30, 30), version=3)
def ntp_ablations(out: Path, ctx: PartContext) -> dict:
    """Algorithm 1 against random init, joint training, plain GD and Adam on the Figure 2 data."""
    from ttlab.ntp.config import TrainConfig
    from ttlab.ntp.experiment import run_dynamics
    from ttlab.ntp.plots import ablation_figure

    ds = figure2_dataset(ctx)
    steps = ctx.pick(PerMode(quick=900, standard=900, full=900, tiny=40))
    common = dict(stage1_steps=steps, stage2_steps=steps, seed=ctx.seed)
    variants = {
        "paper (two-stage NGD, zero init)": TrainConfig(**common),
        "random init": TrainConfig(init="random", init_scale=0.1, **common),
        "joint training (NGD)": TrainConfig(schedule="joint", **common),
        "two-stage plain GD": TrainConfig(optimizer="gd", eta0=1.0, eta=1.0, **common),
        "two-stage Adam": TrainConfig(optimizer="adam", eta0=0.01, eta=0.01, **common),
    }
    rows, runs = [], []
    for i, (name, cfg) in enumerate(variants.items()):
        sub = f"ntp_ablations/{i}"
        s = run_dynamics(ds, cfg, out / sub, progress=train_progress(ctx, f"{name} ({i + 1}/{len(variants)}): "))
        last = list(s["stages"].values())[-1]
        runs.append((name, s["_result"]))
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
    ablation_figure(runs, out / "ntp_ablations" / "comparison.png")
    return {"rows": rows, "figure": "ntp_ablations/comparison.png"}
