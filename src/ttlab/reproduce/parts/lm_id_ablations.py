"""Paper B's Figure 4 on real text: how the measured ID depends on the layer, the sequence length and the data size.

The part ``lm_id_ablations`` reuses the data sweep's runs (``lm_data_scaling``'s, through
:func:`ttlab.reproduce.parts.common_lm_sweep.sweep_results`) and measures:

* the **layer profile** of the model trained on the largest data size, over :data:`PEAK_SEEDS` seeds (standard and
  full mode train the seeds the sweep lacks, with the sweep's own settings: :func:`ttlab.lm.experiments.train_seed_replicates`),
  each beside the same model *untrained* (its initial weights, embedded the same way) — the trivial control the
  inner-peak claim must beat; layer 0, the context-free lookup, is reported apart;
* the **sequence-length profile** on the reference network, Gemma 3 270M (standard and full mode, when installed):
  1,024-token windows, final-layer vectors grouped by how many tokens they have seen (1–32, 33–128, 129–512,
  513–1,024; equal groups, ≥ 4 ID batches each), against the same windows with their tokens shuffled (measured when
  the real profile falls: the control a "holds" must beat) — paper B's own statement (15.86 → 12.9);
* the own model's ID by position inside its 64-token window, an ablation (the window is far shorter than the
  paper's sequences);
* Gemma's layer profile, and the final-layer ID of the model trained on each data size.

May import: :mod:`ttlab.reproduce` (parts.common_lm_id, parts.common_lm_sweep, registry, report, verdicts); inside
the part :mod:`ttlab.lm` and :mod:`ttlab.scaling`. Not the CLI.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path
from typing import Any

from ttlab.reproduce.parts.common_lm_id import (
    GEMMA_LENGTH_SECONDS,
    GEMMA_PROFILE_SECONDS,
    gemma_layer_profile,
    gemma_length_profile,
    gemma_unavailable,
    id_batches,
    id_by_network,
    id_options,
    layer_profile,
    layer_summary,
    length_profile,
    seed_layer_profile,
)
from ttlab.reproduce.parts.common_lm_sweep import decidable_claim, sweep_results
from ttlab.reproduce.registry import PartContext, PerMode, load_part_record, register_part
from ttlab.reproduce.report_blocks import Claims, Figure, Paragraph, Table, fmt
from ttlab.reproduce.verdict_base import HOLDS, PARTLY
from ttlab.reproduce.verdicts import judge, missing_claim

MIN_LAYERS = 4
"""The layer-peak claim is judged on models with at least this many blocks (≥ 3 inner layers to peak in)."""
MIN_BATCHES = 4
"""A trend over position groups is judged only when every group holds at least this many ID batches (its SE
is the spread of the batches / √batches: fewer give no usable standard error)."""
PEAK_SEEDS = 3
"""The own model's layer peak is judged over this many seeds of the largest data size (their spread is part of each
layer's standard error); standard and full mode train the seeds the data sweep lacks."""
TRAINS_MISSING_SEEDS = PerMode(quick=False, standard=True, full=True, tiny=False)
"""The modes that train the seeds of :data:`PEAK_SEEDS` the data sweep lacks."""
SEED_TRAIN_SECONDS = 420.0
"""Training one more seed of the standard data sweep's largest size (320k tokens, converged protocol: the search
pass and the retrain; ≈ 250 s each measured in the 2026-12-01 standard run) on 2 cores."""

STANDARD_SECONDS = 150.0 + SEED_TRAIN_SECONDS
"""The part in standard mode without Gemma: the ID profiles (≈ 150 s) and the seed the data sweep lacks."""

POSITION_GROUPS = 4
"""The position ablation cuts the window into this many groups of equal length (the same vectors per group)."""
PROFILE_WINDOWS = 64
"""Test windows per document for the layer and position profiles in standard and full mode: 23 SOTU test documents ×
64 windows × 16 positions per group ≈ 23.5k vectors, ≥ 5 ID batches of 4,096 per group (quick keeps the sweep's 16)."""

LENGTH_STATEMENT = ("The ID falls with sequence length (Figure 4: 15.86 for very short sequences → 12.9 for sequences "
                    "around 1,024 tokens), measured by the reference network (Gemma 3 270M, final layer)")


def position_edges(block: int, groups: int = POSITION_GROUPS) -> list[int]:
    """Edges of ``groups`` position groups of equal length over a ``block``-token window (the last ones one token
    longer when ``block`` is not a multiple)."""
    if block < groups:
        raise ValueError(f"a {block}-token window cannot hold {groups} position groups")
    return [int(i * block // groups) for i in range(groups + 1)]


# ------------------------------------------------------------------------------------------------ claims
def _seed_profiles(r: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The trained and the untrained layer profile over the seeds of the record (an older record without
    ``per_layer_seeds``: its one profile, no control)."""
    seeds = r.get("per_layer_seeds")
    if seeds is None:
        return seed_layer_profile([r["per_layer"]["rows"]]), seed_layer_profile([])
    return (seed_layer_profile([s["rows"] for s in seeds]),
            seed_layer_profile([s["untrained_rows"] for s in seeds if s.get("untrained_rows")]))


def _layer_peak_claim(r: dict[str, Any]) -> dict:
    """The own model's layer peak over seeds, against its untrained copies."""
    n_layer = len(r["per_layer"]["rows"]) - 1
    trained, untrained = _seed_profiles(r)
    n = trained["n_seeds"]
    why = (f"the model has {n_layer} layer(s), so {max(0, n_layer - 1)} inner layer(s): an inner peak needs a model "
           f"with ≥ {MIN_LAYERS} layers (e.g. the standard preset's)" if n_layer < MIN_LAYERS else
           f"{n} seed(s) of the largest data size: the peak is judged over ≥ {PEAK_SEEDS} seeds, their spread in each "
           "layer's standard error (--standard trains the missing ones)" if n < PEAK_SEEDS else None)
    measured = {**trained, "control_values": untrained["values"], "control_se": untrained["se"]}
    return decidable_claim(
        "lm_id_ablations.layer_peak", "Across layers the ID rises, then falls back towards the final layer's value "
        "(Figure 4; layer 0, the context-free embedding lookup, reported apart)", why,
        measured, "inner_peak", {"control": True}, quantity="layer's ID (mean over seeds)",
        summary=layer_summary(f"ID by layer, mean of {n} seed(s)", trained)
        + "; untrained copies: " + (", ".join(f"{v:.3g}" for v in untrained["values"]) or "not measured"),
        kind="paper", cite="Figure 4", needs_mode="standard")


def length_claim(r: dict[str, Any]) -> dict:
    """Paper B's sequence-length statement on the reference network, against shuffled tokens."""
    g = r.get("gemma_length") or {"status": "not measured (results of an earlier version)"}
    if g.get("status") != "measured":
        return missing_claim("lm_id_ablations.sequence_length", LENGTH_STATEMENT,
                             f"the reference network's sequence-length profile was not measured ({g['status']}); this "
                             "verdict needs it: install the pretrained extra (make standard does) and run --standard",
                             kind="paper", cite="Figure 4", needs_mode="standard")
    prof, control = length_profile(g["rows"]), (g.get("control") or {}).get("rows")
    cprof = length_profile(control) if control else {"values": None, "se": None}
    few = (None if min(prof["batches"]) >= MIN_BATCHES else
           f"the sequence-length groups hold {', '.join(map(str, prof['batches']))} ID batch(es): a trend needs "
           f"≥ {MIN_BATCHES} per group (more test documents)")
    groups = ", ".join(f"{x['positions'][0] + 1}–{x['positions'][1]} tokens: {fmt(x['intrinsic_dim'], 3)}"
                       for x in g["rows"])
    shuffled = (", ".join(f"{v:.3g}" for v in cprof["values"]) if control else
                (g.get("control") or {}).get("status", "not measured"))
    return decidable_claim(
        "lm_id_ablations.sequence_length", LENGTH_STATEMENT, few,
        {**prof, "control_values": cprof["values"], "control_se": cprof["se"]},
        "exceeds_control", {"direction": -1, "z": 2.0}, quantity="the ID by sequence length",
        summary=f"Gemma 3 270M, ID by sequence length: {groups}; shuffled tokens (control): {shuffled}",
        kind="paper", cite="Figure 4")


def position_claim(r: dict[str, Any]) -> dict:
    """The own model's ID by position inside its short window (an ablation: the paper's sequences are 1,024 long)."""
    pos = r["per_position"]["rows"]
    batches = [id_batches(x) for x in pos]
    few = (None if pos and min(batches) >= MIN_BATCHES else
           f"the position groups hold {', '.join(map(str, batches)) or 'no'} ID batch(es) of "
           f"{pos[0]['batch_size'] if pos else '—'} vectors: a trend needs ≥ {MIN_BATCHES} batches per group "
           "(more test windows per group, e.g. the standard preset) for a standard error")
    return decidable_claim(
        "lm_id_ablations.position", f"Within the trained model's {r.get('context', '')}-token window, late tokens have a "
        "lower ID than early ones (an ablation of Figure 4's sequence-length statement on a short window)", few,
        length_profile(pos), "monotone", {"direction": -1}, quantity="the ID by window position",
        summary="ID by window range: " + ", ".join(f"{x['positions'][0]}–{x['positions'][1]}: "
                                                  f"{fmt(x['intrinsic_dim'], 3)}" for x in pos),
        kind="ablation", cite="Figure 4", needs_mode="standard")


def gemma_layer_claim(gemma: dict[str, Any]) -> dict:
    """Figure 4's layer peak judged on Gemma 3 270M's layers (a pretrained model of 18 layers, as the paper's are),
    against an untrained copy of its architecture (a record without one: no control, so no holds)."""
    layers = gemma["rows"]
    n_layer, profile = len(layers) - 1, layer_profile(layers)
    untrained = layer_profile(gemma.get("untrained_rows") or [])
    return decidable_claim(
        "lm_id_ablations.gemma_layer_peak", "Across the layers of a pretrained model (Gemma 3 270M) the ID rises, then "
        "falls back towards the final layer's value (Figure 4)",
        None if n_layer >= MIN_LAYERS else f"Gemma's profile has {n_layer} layer(s): an inner peak needs ≥ {MIN_LAYERS}",
        {**profile, "control_values": untrained["values"], "control_se": untrained["se"]}, "inner_peak",
        {"control": True}, quantity="layer's ID",
        summary=layer_summary("Gemma 3 270M, ID by layer", profile) + "; untrained copy: "
        + (", ".join(f"{v:.3g}" for v in untrained["values"]) or "not measured"), kind="paper", cite="Figure 4")


def claims(r: dict[str, Any]) -> list[dict]:
    gemma = r.get("gemma_layers") or {}
    extra = [gemma_layer_claim(gemma)] if gemma.get("status") == "measured" else []
    return [_layer_peak_claim(r), length_claim(r), position_claim(r)] + extra


# ------------------------------------------------------------------------------------------------ report
def _id_table(head: str, rows: list[dict[str, Any]], key: Any) -> Table:
    return Table([head, "ID (mean)", "ID (harmonic)", "vectors"],
                 [[key(x), x["intrinsic_dim"], x["intrinsic_dim_harmonic"], x["n_vectors"]] for x in rows])


def render(r: dict[str, Any]) -> list:
    layers = r["per_layer"]["rows"]
    pos = r["per_position"]["rows"]
    sizes = r.get("by_data", [])
    blocks = [
        Paragraph(f"What was run: the paper's ID protocol on the final model of the largest data size "
                  f"(`{r['run']}`), at every layer (0 = embeddings, last = after the final LayerNorm) and for token "
                  f"positions grouped by their place in the {r['context']}-token window; and the final-layer ID of the "
                  f"model trained on each data size. Mean rule (harmonic in the tables)."),
        Figure(r["figure"], "ID against model (left; here the data-sweep models, by data size), layer (middle) and "
                            "context position (right)."),
        _id_table("layer", layers, lambda x: x["layer"]),
        _id_table("window positions", pos, lambda x: f"{x['positions'][0]}–{x['positions'][1]}"),
    ]
    seeds = r.get("per_layer_seeds") or []
    if seeds:
        n_layer = len(layers)
        blocks.append(Table(
            ["seed", "run", *(f"layer {i}" for i in range(1, n_layer)), "untrained: " + ", ".join(
                f"{i}" for i in range(1, n_layer))],
            [[s["seed"], s["run"], *(x["intrinsic_dim"] for x in s["rows"] if x["layer"] != 0),
              ", ".join(fmt(x["intrinsic_dim"], 3) for x in s.get("untrained_rows") or [] if x["layer"] != 0)]
             for s in seeds],
            caption="The layer profile of every seed of the largest data size, and of the same model untrained (its "
                    "initial weights): the control the layer peak must beat."))
    net = r.get("id_by_network") or []
    if net:
        blocks.append(Table(
            ["measuring network", "trained", "non-embedding params", "tokens seen (at most)", "ID (mean)", "SE", "part"],
            [[x["network"], {True: "yes", False: "untrained copy"}.get(x["trained"], x["trained"]), x["params"] or "—",
              x["context"] or "—", x["intrinsic_dim"], fmt(x["se"], 2), x["source"]] for x in net],
            caption="The ID of the same test split as each network measured it: the α predictions assume it is a "
                    "property of the data, stable in the measuring model (paper B). The verdicts read the reference "
                    "network's (docs/reproduce.md, \"Which network measures the ID\")."))
    g = r.get("gemma_length") or {"status": "not measured (results of an earlier version)"}
    if g.get("status") == "measured":
        control = (g.get("control") or {}).get("rows") or []
        blocks.append(Table(
            ["sequence length (tokens)", "ID (mean)", "batches", "shuffled tokens (control)"],
            [[f"{x['positions'][0] + 1}–{x['positions'][1]}", x["intrinsic_dim"], id_batches(x),
              control[i]["intrinsic_dim"] if i < len(control) else (g.get("control") or {}).get("status", "—")]
             for i, x in enumerate(g["rows"])],
            caption=f"Gemma 3 270M, final layer, {g['context']}-token windows of the test split: the vector at window "
                    "position p has seen p + 1 tokens. The shuffled-token control is measured when the real profile "
                    "falls."))
    else:
        blocks.append(Paragraph(f"Gemma 3 270M's sequence-length profile: {g['status']}."))
    gemma = r.get("gemma_layers") or {"status": "not measured (results of an earlier version)"}
    if gemma.get("status") == "measured":
        blocks.append(Paragraph(f"Gemma 3 270M's layers, on the same corpus's test split ({gemma['context']}-token "
                                f"windows of its own tokens, the BOS position left out):"))
        untrained = {x["layer"]: x["intrinsic_dim"] for x in gemma.get("untrained_rows") or []}
        blocks.append(Table(["Gemma layer", "ID (mean)", "ID (harmonic)", "vectors", "untrained copy: ID"],
                            [[x["layer"], x["intrinsic_dim"], x["intrinsic_dim_harmonic"], x["n_vectors"],
                              untrained.get(x["layer"], "—")] for x in gemma["rows"]]))
    else:
        blocks.append(Paragraph(f"Gemma 3 270M's layer profile: {gemma['status']}."))
    if sizes:
        blocks.append(Table(["training tokens", "ID (mean)", "ID (harmonic)"],
                            [[x["train_tokens"], x["intrinsic_dim"], x["intrinsic_dim_harmonic"]] for x in sizes]))
    blocks.append(Claims(r["claims"]))
    return blocks


# ------------------------------------------------------------------------------------------------ the part
def estimate(ctx: PartContext, out: Path | None) -> float:
    """Seconds on 2 quiet cores: 20 quick, 150 standard, 600 full; with Gemma installed its layer and sequence-length
    profiles; in standard the seed the data sweep lacks."""
    base = ctx.pick(PerMode(quick=20.0, standard=STANDARD_SECONDS, full=600.0 + SEED_TRAIN_SECONDS, tiny=20.0))
    return base + (0.0 if gemma_unavailable(ctx) else GEMMA_PROFILE_SECONDS + GEMMA_LENGTH_SECONDS)


def missing_seeds(have: list[int], n: int) -> list[int]:
    """The ``n − len(have)`` smallest non-negative seeds not in ``have``."""
    free = (s for s in itertools.count() if s not in have)
    return [next(free) for _ in range(max(0, n - len(have)))]


def length_with_control(corpus: str, ctx: PartContext) -> dict[str, Any]:
    """Gemma's sequence-length profile and, when it falls (the monotone rule holds or partly), its shuffled-token
    control on the same windows (declared in docs/reproduce.md: the control is needed only to confirm a fall)."""
    g = gemma_length_profile(corpus, ctx)
    if g.get("status") != "measured":
        return g
    trend = judge("monotone", length_profile(g["rows"]), {"direction": -1})[0]
    g["control"] = (gemma_length_profile(corpus, ctx, shuffle_tokens=True) if trend in (HOLDS, PARTLY) else
                    {"status": f"not measured: the profile does not fall ({trend})"})
    return g


@register_part("lm_id_ablations", paper="B", title="ID ablations: layers, sequence length, training data (Figure 4)",
               render=render, claims=claims, estimate=(20, 600), estimate_standard=STANDARD_SECONDS,
               version=6,
               estimate_fn=estimate)
def lm_id_ablations(out: Path, ctx: PartContext) -> dict:
    """Per-layer ID of the largest data-sweep model over seeds (with untrained copies), per-position ID, ID by data
    size, and Gemma's layer and sequence-length profiles (reuses the data sweep's cached runs; trains them first if the
    data-scaling part has not run). Standard and full mode measure the profiles on :data:`PROFILE_WINDOWS` windows per
    test document and train the seeds the sweep lacks (:data:`PEAK_SEEDS`)."""
    from ttlab.lm.experiments import measure_run_id, train_seed_replicates
    from ttlab.lm.presets import Execution
    from ttlab.scaling.figures import plot_id_ablations

    res = sweep_results("data", out / "lm_data_scaling", ctx)
    sel = [r for r in res["runs"] if r.get("selected")]
    first = min((r["seed"] for r in sel), default=None)
    selected = sorted((r for r in sel if r["seed"] == first), key=lambda r: r["train_tokens"])
    if not selected:
        raise RuntimeError("the data sweep has no finished run to measure")
    opts = id_options(ctx)
    by_data = []
    for i, r in enumerate(selected):
        ctx.step("ID by data size", i, len(selected))
        same = res["id"] is not None and res["id"]["run_dir"] == r["run_dir"]  # the sweep measured this one already
        row = (res["id"] if same else measure_run_id(r["run_dir"], opts))["rows"][0]
        by_data.append({"train_tokens": r["train_tokens"], **row})
    largest = selected[-1]["train_tokens"]
    sub = out / "lm_id_ablations"
    seed_runs = sorted((r for r in sel if r["train_tokens"] == largest), key=lambda r: r["seed"])
    if ctx.pick(TRAINS_MISSING_SEEDS):
        extra = missing_seeds([r["seed"] for r in seed_runs], PEAK_SEEDS)
        ctx.step(f"training seed(s) {extra} of the largest size", 0, 5)
        seed_runs += train_seed_replicates(res, largest, extra, sub / "seeds", execution=Execution(workers=1))
    prof = replace(opts, windows_per_doc=ctx.pick(PerMode(quick=opts.windows_per_doc, standard=PROFILE_WINDOWS,
                                                          full=PROFILE_WINDOWS, tiny=opts.windows_per_doc)))
    all_layers = list(range(res["config"]["model"]["n_layer"] + 1))
    per_seed = []
    for i, r in enumerate(seed_runs):
        if r.get("status", "ok") != "ok":
            continue
        ctx.step(f"ID per layer, seed {r['seed']} (trained and untrained)", 1, 5)
        rows = measure_run_id(r["run_dir"], prof, layers=all_layers)
        init = measure_run_id(r["run_dir"], prof, layers=all_layers, which="init")
        run = Path(r["run_dir"])
        per_seed.append({"seed": r["seed"], "run": str(run.relative_to(out)) if run.is_relative_to(out) else str(run),
                         "rows": rows["rows"], "untrained_rows": init["rows"], "options": rows["options"]})
    per_layer = per_seed[0] if per_seed else {"rows": [], "options": None}
    block = res["config"]["model"]["block_size"]
    edges = position_edges(block)
    ctx.step("ID per position", 2, 5)
    per_pos = measure_run_id(selected[-1]["run_dir"], prof, position_edges=edges)
    fig_data = {"by_model": by_data, "per_layer": {"rows": per_layer["rows"]}, "per_position": {"rows": per_pos["rows"]}}
    plot_id_ablations(fig_data, sub / "id_ablations.png")
    corpus = res["config"]["data"]["corpus"]
    ctx.step("Gemma 3 270M per layer", 3, 5)
    gemma = gemma_layer_profile(corpus, ctx)
    ctx.step("Gemma 3 270M by sequence length", 4, 5)
    length = length_with_control(corpus, ctx)
    big = Path(selected[-1]["run_dir"])
    r = {"run": str(big.relative_to(out)) if big.is_relative_to(out) else str(big), "context": block,
            "per_layer": {"rows": per_layer["rows"]}, "per_layer_seeds": per_seed,
            "per_position": {"edges": edges, "rows": per_pos["rows"]},
            "by_data": [{k: x.get(k) for k in ("train_tokens", "intrinsic_dim", "intrinsic_dim_harmonic", "n_vectors",
                                                "intrinsic_dim_std", "batch_size", "n_duplicates_removed")}
                        for x in by_data],
            "id_options": per_layer["options"], "figure": "lm_id_ablations/id_ablations.png", "gemma_layers": gemma,
            "gemma_length": length}
    r["id_by_network"] = id_by_network(*(stored(out, name) for name in NETWORK_PARTS), r)
    return r


NETWORK_PARTS = ("lm_data_scaling", "lm_model_scaling", "lm_suite_scaling")
"""The parts whose stored IDs of the same corpus join the table of the ID by measuring network."""


def stored(out: Path, name: str) -> dict[str, Any] | None:
    """The result of part ``name`` stored in ``out`` by this or an earlier run (None when it has not run)."""
    rec = load_part_record(out, name)
    return rec["result"] if rec and rec.get("status") == "ok" and isinstance(rec.get("result"), dict) else None
