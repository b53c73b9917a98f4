"""Paper A's Theorem 3 in ``ttlab reproduce``: the part ``ntp_generalization`` evaluates the Figure 2 model on unseen
sentences.

Claims: agreement with Theorem 3 in the max-margin limit, after the paper's 900 stage-2 steps and after longer
training, each beside uniform attention and a random W_kq of the same norm (seeded): holds only 0.1 above both.

May import: ttlab.reproduce (registry, report, parts.common_ntp); inside the part ttlab.ntp.generalize.
"""

from __future__ import annotations

from pathlib import Path

from ttlab.reproduce.parts.common_ntp import (
    LIMIT_CONDITIONS,
    agreement_claim,
    figure2_dataset,
    pct,
    theorem_conditions,
    train_progress,
)
from ttlab.reproduce.registry import PartContext, PerMode, register_part
from ttlab.reproduce.report_blocks import Bullets, Claims, Paragraph, Table


def claims(r: dict) -> list[dict]:
    lim = r["max_margin_limit"]
    out = [agreement_claim("ntp_generalization.limit",
                           "Theorem 3 / Proposition 2: in the max-margin limit an unseen sentence continues with "
                           "n(optimal token), or with n(x0) for a non-comparable x0 among non-optimal tokens",
                           lim["by_case"], {"holds": 0.999, "partly": 0.9, "min_n": 10},
                           f"on {r['n_sentences']} unseen sentences", lim.get("controls"), LIMIT_CONDITIONS)]
    paper, last = r["rows"][0], r["rows"][-1]
    for suffix, row, when in (("trained", paper, "the paper's stage-2 length"), ("trained_long", last, "longer training")):
        t = row["stage2_steps"]
        out.append(agreement_claim(
            f"ntp_generalization.{suffix}", f"The trained model generalizes as Theorem 3 predicts (after {t} stage-2 "
            f"steps: {when})", row["by_case"], {"holds": 0.95, "partly": 0.8, "min_n": 10},
            f"after {t} stage-2 steps; cos(W_kq, W*_kq) = {row['cosine_kq']:.4f}", row.get("controls"),
            theorem_conditions(r["run"], t)["theorem1"] if "run" in r else None))
    return out


def render(r: dict) -> list:
    rows = [[f"Algorithm 1, {row['stage2_steps']} stage-2 steps", f"{row['cosine_kq']:.4f}",
             pct(row["by_case"]["optimal"]["agreement"]), pct(row["by_case"]["non-comparable"]["agreement"]),
             pct(row["agreement"])] for row in r["rows"]]
    lim = r["max_margin_limit"]
    rows.append(["max-margin limit (W*_kq scaled up)", "1", pct(lim["by_case"]["optimal"]["agreement"]),
                 pct(lim["by_case"]["non-comparable"]["agreement"]), pct(lim["agreement"])])
    for where, ctl in [(f"{row['stage2_steps']} steps' norm", row.get("controls")) for row in r["rows"]] + [
            ("the limit's norm", lim.get("controls"))]:
        for name, bc in (ctl or {}).items():
            if name == "uniform attention" and where != "the limit's norm":
                continue  # the same at every norm: shown once
            label = name if name == "uniform attention" else f"{name} (W_kq random, {where})"
            rows.append([f"control: {label}", "—", pct(bc["optimal"]["agreement"]),
                         pct(bc["non-comparable"]["agreement"]), "—"])
    ex = [f"`{c['sentence']}` ({c['case']}): theory {c['theory_prediction']}, model {c['model_prediction']}"
          for c in r["examples"]]
    return [
        Paragraph(f"What was run: the Figure 2 model trained to {max(x['stage2_steps'] for x in r['rows'])} stage-2 "
                  f"steps ({r.get('training', '')}), evaluated at each checkpoint and in the max-margin limit on "
                  f"{r['n_sentences']} unseen sentences, half holding an optimal token and half holding a "
                  "non-comparable token among non-optimal ones (Theorem 3's two cases)."),
        Table(["model", "cos(W_kq, W*_kq)", "agreement: holds an optimal token",
               "agreement: non-comparable + non-optimal only", "overall"], rows),
        Paragraph("Examples (max-margin limit):"),
        Bullets(ex),
        Claims(r["claims"]),
    ]


@register_part("ntp_generalization", paper="A", title="Generalization to unseen sentences (Theorem 3)",
               render=render, claims=claims, estimate=(8, 25), version=5)
def ntp_generalization(out: Path, ctx: PartContext) -> dict:
    """Theorem 3 on unseen sentences: after 900 stage-2 steps, after longer training, and in the max-margin
    limit itself (W*_kq scaled to :func:`~ttlab.ntp.generalize.max_margin_limit_norm`)."""
    from ttlab.ntp.generalize import generalization_study

    steps = ctx.pick(PerMode(quick=[900, 3000], standard=[900, 3000], full=[900, 3000, 10000], tiny=[30, 60]))
    samples = ctx.pick(PerMode(quick=1000, standard=1000, full=1000, tiny=100))
    return generalization_study(figure2_dataset(ctx), steps, samples, ctx.seed, train_progress(ctx))
