"""Paper B's Figure 3 on real text in ``ttlab reproduce``: the part ``lm_model_scaling`` runs ``ttlab lm model-sweep``
(quick / full preset), with the ID against width and its controls (untrained copies of every size, shuffled tokens
for the largest).

Claims (rules of :mod:`ttlab.reproduce.verdicts`): the loss falls as a power law in N; α_N = 2/d *under-estimates*
α̂_N, as the paper says — both not judged at this scale when the sweep is not data-rich by Kaplan's criterion
(:func:`~ttlab.reproduce.parts.common_lm_sweep.scaling_claims`); the ID grows with model size beyond the rise of
untrained copies of the same sizes (:func:`~ttlab.reproduce.parts.common_lm_sweep.id_grows_claim`).

May import: :mod:`ttlab.reproduce` (parts.common_lm_sweep, registry). Not the CLI.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ttlab.reproduce.parts.common_lm_sweep import id_grows_claim, render_scaling, scaling_claims, scaling_part
from ttlab.reproduce.registry import PartContext, register_part


def claims(r: dict[str, Any]) -> list[dict]:
    out = scaling_claims(r)
    out.append(id_grows_claim(
        "lm_model_scaling.id_grows", "The estimated ID grows with model size / width (Figure 4: 15.56 → 18.68 from "
        "width 768 to 1536)", r.get("id_by_model") or [], r.get("id_untrained")))
    return out


def render(r: dict[str, Any]) -> list:
    """The model sweep's report section: :func:`~ttlab.reproduce.parts.common_lm_sweep.render_scaling`, claims last."""
    return render_scaling(r)


@register_part("lm_model_scaling", paper="B", title="Model scaling of GPT models on real text (Figure 3 at our scale)",
               render=render, claims=claims, estimate=(180, 14500), version=6)
def lm_model_scaling(out: Path, ctx: PartContext) -> dict:
    """``ttlab lm model-sweep`` (quick / full preset) and its claims, with ID against width and its controls
    (untrained copies of every size, shuffled tokens for the largest)."""
    return scaling_part("model", "lm_model_scaling", out, ctx)
