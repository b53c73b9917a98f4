"""Paper B's Figure 2 on real text in ``ttlab reproduce``: the part ``lm_data_scaling`` runs ``ttlab lm data-sweep``
(quick / standard / full preset) on SOTU — and in standard mode on the shipped code corpus too —, its shuffled-token
ID control and the Gemma prediction beside the own model's.

Claims per corpus (rules of :mod:`ttlab.reproduce.verdicts`): the loss falls as a power law in D
(:func:`~ttlab.reproduce.parts.common_lm_sweep.scaling_claims`); α_D = 2/(2+d) matches the fitted α̂_D within 10 %
(holds) / 35 % (partly) of the prediction — inconclusive with an interval wider than that band, fewer than 3 sizes or
step-capped runs —, judged per ID source (:func:`~ttlab.reproduce.parts.common_lm_id.alpha_d_claims`). The ID that
predicts the exponent is stored with a control: the same model on the same windows with their tokens shuffled
(``id_shuffled``), and a sentence, computed from the numbers, on what it shows.

May import: :mod:`ttlab.reproduce` (parts.common_lm_id, parts.common_lm_sweep, registry, report) and, inside the functions, :mod:`ttlab.lm`. Not the CLI.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ttlab.reproduce.parts.common_lm_id import gemma_prediction
from ttlab.reproduce.parts.common_lm_sweep import render_scaling, scaling_claims, scaling_part
from ttlab.reproduce.registry import PartContext, PerMode, register_part
from ttlab.reproduce.report_blocks import Claims, Paragraph


def data_corpora(ctx: PartContext) -> tuple[str, ...]:
    """The corpora of the data-scaling part: SOTU, and in standard (and tiny, to test it) mode also the shipped code
    corpus (:data:`ttlab.lm.presets.STANDARD_CORPORA`), each with its own sweep and ID prediction."""
    from ttlab.lm.presets import STANDARD_CORPORA

    one = STANDARD_CORPORA[:1]
    return ctx.pick(PerMode(quick=one, standard=STANDARD_CORPORA, full=one, tiny=STANDARD_CORPORA))


def claims(r: dict[str, Any]) -> list[dict]:
    """The data-sweep claims of the main corpus, then those of every further corpus (ids ``lm_data_scaling.<name>.*``)."""
    out = scaling_claims(r)
    for sub in r.get("more_corpora") or []:
        name = sub["corpus_name"]
        for c in scaling_claims(sub):
            out.append({**c, "id": c["id"].replace("lm_data_scaling.", f"lm_data_scaling.{name}.", 1),
                        "statement": f"{c['statement']} — on {sub['config']['data']['corpus']}"})
    return out


def render(r: dict[str, Any]) -> list:
    """The data sweep of the main corpus, then each further corpus, then all claims."""
    blocks = render_scaling(r, claims=False)
    for sub in r.get("more_corpora") or []:
        blocks.append(Paragraph(f"Second corpus: `{sub['config']['data']['corpus']}` (code), the same design."))
        blocks += render_scaling(sub, claims=False)
    blocks.append(Claims(r["claims"]))
    return blocks


def estimate(ctx: PartContext, out: Path | None) -> float:
    """Seconds on 2 quiet cores: quick measured (README), standard from one measured run (see
    :data:`STANDARD_DATA_SECONDS`), full the pilot's converged sweep."""
    return ctx.pick(PerMode(quick=QUICK_DATA_SECONDS, standard=STANDARD_DATA_SECONDS, full=14500.0,
                            tiny=QUICK_DATA_SECONDS))


QUICK_DATA_SECONDS = 200.0
"""The quick data sweep (10 runs of the 2×2×32 model, the ID and its control): its training pass took 490 s wall at
load 8–9 on 2 cores (other helpers running; 10–154 s per run, 4 of 10 runs at the 1,200-step cap), ≈ 200 s assumed
on 2 quiet cores."""
STANDARD_DATA_SECONDS = 1990.0
"""The standard data sweeps of both corpora. Calibration: the 320k-token search pass of the 4×4×64 model ran 2,000
steps (its evaluations included) in 136 s of CPU (604 s wall at load 9–10, other helpers running): ≈ 15 steps/s on
a quiet core. Assumed: the searches stop (min_delta 0.005) after ≈ 800 / 1,200 / 2,000 / 3,000 / 2,500 steps from 10k
to 320k tokens, the retrains last as long → ≈ 800 s of CPU per seed and corpus, 2 seeds × 2 corpora on 2 workers
≈ 1,600 s, plus the IDs (own model, shuffled control; Gemma and its untrained copy ≈ 2 min each per corpus when
installed)."""


@register_part("lm_data_scaling", paper="B", title="Data scaling of GPT models on real text (Figure 2 at our scale)",
               render=render, claims=claims, estimate=(QUICK_DATA_SECONDS, 14500), estimate_fn=estimate,
               estimate_standard=STANDARD_DATA_SECONDS, version=5)
def lm_data_scaling(out: Path, ctx: PartContext) -> dict:
    """``ttlab lm data-sweep`` (quick / standard / full preset) on SOTU — and in standard mode on the shipped code
    corpus too —, its shuffled-token ID control, the Gemma prediction beside the own model's, and its claims."""
    main, *more = data_corpora(ctx)
    r = scaling_part("data", "lm_data_scaling", out, ctx, corpus=main)
    r["gemma"] = gemma_prediction(r["config"]["data"]["corpus"], ctx)
    r["more_corpora"] = []
    for spec in more:
        name = spec.split(":", 1)[-1]
        sub = scaling_part("data", f"lm_data_scaling/{name}", out, ctx, corpus=spec)
        sub.update(corpus_name=name, gemma=gemma_prediction(spec, ctx))
        r["more_corpora"].append(sub)
    return r
