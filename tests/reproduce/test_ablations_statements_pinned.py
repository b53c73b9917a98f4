"""Pinned behaviour of the paper-statement grouping (``ttlab.reproduce.statements``) and of Figure 4's ablation claim
builders and helpers (``ttlab.reproduce.parts.lm_id_ablations``), written against mutmut's survivors (issue 31, item 6;
docs/mutation.md): each expectation is a known answer, a number worked out by hand, or the text the report prints word
for word. No training, no model: plain result dicts and a stored part record in a temporary folder."""

from __future__ import annotations

import json
import re

import pytest

from ttlab.reproduce import statements as st
from ttlab.reproduce.parts import lm_id_ablations as abl
from ttlab.reproduce.parts.common_lm_id import GEMMA_LENGTH_EDGES
from ttlab.reproduce.registry import PartContext
from ttlab.reproduce.verdict_base import HOLDS, INCONCLUSIVE, NOT_REPRODUCED, PARTLY
from ttlab.reproduce.verdicts import NOT_AT_SCALE

# ------------------------------------------------------------------------------------------------ statements

# Every pattern of STATEMENT_CASES with a claim id it must take and near misses it must leave alone (a claim matching
# no pattern is a statement of its own, so a near miss maps to itself).
CASES = [
    ("lm_data_scaling.power_law", "lm_data_scaling.power_law"),
    ("lm_data_scaling.sotu.power_law", "lm_data_scaling.power_law"),
    ("lm_data_scaling.sotu.wiki.power_law", None),  # one corpus segment at most
    ("lm_data_scaling..power_law", None),  # an empty corpus name is not a corpus
    ("lm_data_scaling.sotu.power_laws", None),
    ("lm_data_scaling.id_prediction", "lm_data_scaling.id_prediction"),
    ("lm_data_scaling.python.id_prediction", "lm_data_scaling.id_prediction"),
    ("lm_data_scaling.python.id_prediction_own", "lm_data_scaling.id_prediction_own"),
    ("lm_data_scaling.id_prediction_own", "lm_data_scaling.id_prediction_own"),
    ("lm_data_scaling.id_prediction_band", None),
    ("lm_model_scaling.power_law", "lm_model_scaling.power_law"),
    ("lm_suite_scaling.power_law", "lm_model_scaling.power_law"),
    ("lm_data_scaling_x.power_law", None),
    ("lm_model_scaling.id_prediction", "lm_model_scaling.id_prediction"),
    ("lm_suite_scaling.id_prediction", "lm_model_scaling.id_prediction"),
    ("lm_other_scaling.id_prediction", None),
    ("lm_model_scaling.id_grows", "lm_model_scaling.id_grows"),
    ("lm_suite_scaling.id_grows", "lm_model_scaling.id_grows"),
    ("lm_id_ablations.layer_peak", "lm_id_ablations.layer_peak"),
    ("lm_id_ablations.gemma_layer_peak", "lm_id_ablations.layer_peak"),
    ("lm_id_ablations.qwen_layer_peak", None),
    ("lm_id_ablations.position", None),
    ("model_scaling.harness_smooth_d2", "model_scaling.harness"),
    ("model_scaling.harness_", None),  # a case needs a name after the underscore
    ("model_scaling.harness", None),
    ("model_scaling.rate_relu_holder_d4", "model_scaling.rate"),
    ("model_scaling.rates_relu", None),
    ("model_scaling.falls_with_d_softmax_smooth", "model_scaling.falls_with_d"),
    ("model_scaling.falls_with_d_relu_holder", "model_scaling.falls_with_d"),
    ("model_scaling.falls_with_d_mlp_smooth", "model_scaling.falls_with_d_mlp"),  # the control network: apart
    ("model_scaling.falls_with_d_gelu_smooth", None),
    ("model_scaling.falls_with_d_softmax_", None),
    ("manifold_regression.rate_attn_b1_noisy_d2_D8", "manifold_regression.rate"),
    ("manifold_regression.exponent_falls_mlp_b1_noiseless_D16", "manifold_regression.exponent_falls"),
    ("manifold_regression.error_rises_attn_b1_noisy_D8", "manifold_regression.error_rises"),
    ("manifold_regression.ambient_invariance_attn_d2", "manifold_regression.ambient_invariance"),
    ("manifold_regression.id_recovered", None),
    ("manifold_regression.rate", None),
    ("table1.kaplan_2020", "table1.id_free_relation"),
    ("table1.kaplan-2020", "table1.id_free_relation"),
    ("table1.", None),
    ("table10.kaplan_2020", None),
    ("ntp_generalization.trained", "ntp_generalization.trained"),
    ("ntp_generalization.trained_long", "ntp_generalization.trained"),
    ("ntp_generalization.trained_short", None),
    ("ntp_generalization.limit", None),
    ("xlm_data_scaling.power_law", None),  # the whole id must match, not a part of it
    ("lm_data_scaling.power_law.extra", None),
    ("lm_data_scaling.a.b.id_prediction", None),  # one corpus segment at most, for every lm_data_scaling statement
    ("lm_data_scaling.a.b.id_prediction_own", None),
    ("model_scaling.rate_", None),  # every "<family>_<case>" statement needs a case name after the underscore
    ("model_scaling.rated", None),
    ("model_scaling.falls_with_d_mlp_", None),
    ("model_scaling.falls_with_d_mlps", None),
    ("manifold_regression.rate_", None),
    ("manifold_regression.rated", None),
    ("manifold_regression.exponent_falls_", None),
    ("manifold_regression.exponent_fallsx", None),
    ("manifold_regression.error_rises_", None),
    ("manifold_regression.error_risesx", None),
    ("manifold_regression.ambient_invariance_", None),
    ("manifold_regression.ambient_invariancex", None),
]

# The separators are part of each pattern: a case id with its first "." or its first "_" changed is no case at all
# (except table1's, whose first "_" is in the free case name: "table1.kaplan-2020" is a case).
NEAR_MISSES = sorted({claim.replace(sep, "-", 1) for claim, s in CASES if s is not None for sep in "._"}
                     - {"table1.kaplan-2020"})


@pytest.mark.parametrize("claim, statement", CASES)
def test_each_statement_pattern_takes_its_cases_and_nothing_else(claim, statement):
    assert st.statement_id(claim) == (statement if statement is not None else claim)


@pytest.mark.parametrize("claim", NEAR_MISSES)
def test_a_case_id_with_a_changed_separator_is_a_statement_of_its_own(claim):
    assert st.statement_id(claim) == claim


def test_every_declared_statement_has_a_case_in_the_table_above():
    assert {sid for sid, _ in st.STATEMENT_CASES} == {s for _, s in CASES if s is not None}


def test_a_case_without_kind_statement_or_summary_is_a_check_with_empty_texts():
    """An older record (no ``kind``, ``statement``, ``summary``) counts as a check, never as a paper claim, and its
    texts are empty strings (the report joins them)."""
    old = {"id": "old.claim", "verdict": HOLDS}
    assert st.group_statements([old]) == [{
        "id": "old.claim", "kind": "check", "statement": "", "verdict": HOLDS,
        "cases": [{"id": "old.claim", "verdict": HOLDS, "summary": "", "not_at_scale": False}],
        "n_cases": 1, "n_decided": 1, "not_at_scale": False}]
    odd = {"id": "odd.claim", "verdict": NOT_REPRODUCED, "kind": "remark", "statement": "S", "summary": "s"}
    (g,) = st.group_statements([odd])
    assert g["kind"] == "check"
    counts = st.count_statements(st.group_statements([old, odd]))
    assert counts["check"] == {HOLDS: 1, PARTLY: 0, NOT_REPRODUCED: 1, INCONCLUSIVE: 0}
    assert sum(counts["paper"].values()) == 0 and sum(counts["ablation"].values()) == 0


def test_each_case_says_whether_this_scale_could_judge_it():
    claims = [{"id": "lm_model_scaling.power_law", "verdict": HOLDS, "kind": "paper", "statement": "S", "summary": "a"},
              {"id": "lm_suite_scaling.power_law", "verdict": INCONCLUSIVE, "kind": "paper", "summary": "b",
               "rule_id": NOT_AT_SCALE},
              {"id": "lm_model_scaling.id_grows", "verdict": INCONCLUSIVE, "kind": "paper", "rule_id": NOT_AT_SCALE}]
    pl, grows = st.group_statements(claims)
    assert pl["cases"] == [
        {"id": "lm_model_scaling.power_law", "verdict": HOLDS, "summary": "a", "not_at_scale": False},
        {"id": "lm_suite_scaling.power_law", "verdict": INCONCLUSIVE, "summary": "b", "not_at_scale": True}]
    assert (pl["verdict"], pl["n_cases"], pl["n_decided"], pl["not_at_scale"]) == (HOLDS, 2, 1, False)
    assert grows["cases"] == [{"id": "lm_model_scaling.id_grows", "verdict": INCONCLUSIVE, "summary": "",
                               "not_at_scale": True}]
    assert (grows["verdict"], grows["n_decided"], grows["not_at_scale"]) == (INCONCLUSIVE, 0, True)


def test_mixed_kinds_are_refused_word_for_word():
    msg = ("statement 'table1.id_free_relation' groups cases of different kinds (['check', 'paper']): "
           "['table1.a', 'table1.b']")
    with pytest.raises(ValueError, match=re.escape(msg)):
        st.group_statements([{"id": "table1.a", "verdict": HOLDS, "kind": "paper"},
                             {"id": "table1.b", "verdict": HOLDS}])


def test_headline_without_cases_apart_has_no_trailing_sentence():
    claims = [{"id": "table1.a", "verdict": HOLDS, "kind": "paper"},
              {"id": "table1.b", "verdict": INCONCLUSIVE, "kind": "paper"}]
    assert st.statement_headline(claims) == (
        "Paper statements (1): 1 hold, 0 partly, 0 not reproduced, 0 inconclusive — judged in 2 cases (each corpus, "
        "dimension, network or suite a case): 1 hold, 0 partly, 0 not reproduced, 1 inconclusive. Counted apart — "
        "checks of ttlab's own tools and runs (0 statements, 0 cases): 0 hold, 0 partly, 0 not reproduced, 0 "
        "inconclusive; ablations beyond the papers (0 statements, 0 cases): 0 hold, 0 partly, 0 not reproduced, 0 "
        "inconclusive.")


# ------------------------------------------------------------------------------------------------ ablations


def _row(d: float, n: int = 4096, bs: int = 1024, sd: float = 0.2, **kw) -> dict:
    return {"intrinsic_dim": d, "intrinsic_dim_std": sd, "intrinsic_dim_harmonic": d - 0.5, "n_vectors": n,
            "batch_size": bs, **kw}


def _length(values, control: dict | None = None) -> dict:
    edges = list(zip(GEMMA_LENGTH_EDGES, GEMMA_LENGTH_EDGES[1:]))
    g = {"status": "measured", "context": 1024, "rows": [_row(v, positions=list(e)) for v, e in zip(values, edges)]}
    if control is not None:
        g["control"] = control
    return {"gemma_length": g}


LENGTH_TEXT = ("The ID falls with sequence length (Figure 4: 15.86 for very short sequences → 12.9 for sequences "
               "around 1,024 tokens), measured by the reference network (Gemma 3 270M, final layer)")


@pytest.mark.parametrize("record, status", [
    ({}, "not measured (results of an earlier version)"),
    ({"gemma_length": None}, "not measured (results of an earlier version)"),
    ({"gemma_length": {"status": "not measured in quick mode (run --standard)"}},
     "not measured in quick mode (run --standard)"),
])
def test_an_unmeasured_length_profile_is_an_inconclusive_paper_claim_saying_what_it_needs(record, status):
    c = abl.length_claim(record)
    why = (f"the reference network's sequence-length profile was not measured ({status}); this verdict needs it: "
           "install the pretrained extra (make standard does) and run --standard")
    assert (c["id"], c["statement"], c["kind"], c["cite"], c["rule_id"], c["verdict"]) == (
        "lm_id_ablations.sequence_length", LENGTH_TEXT, "paper", "Figure 4", "unjudgeable", INCONCLUSIVE)
    assert c["measured"] == {"why": why} and c["summary"] == f"not measured: {why}"


def test_the_length_summary_gives_three_digits_and_the_controls_status_when_it_was_not_measured():
    values = [15.8612, 14.4237, 13.3719, 12.9048]
    rise = abl.length_claim(_length(values[::-1], control={
        "status": "not measured: the profile does not fall (not reproduced)"}))
    assert rise["summary"] == (
        "Gemma 3 270M, ID by sequence length: 1–32 tokens: 12.9, 33–128 tokens: 13.4, 129–512 tokens: 14.4, "
        "513–1024 tokens: 15.9; shuffled tokens (control): not measured: the profile does not fall (not reproduced)")
    assert (rise["statement"], rise["verdict"]) == (LENGTH_TEXT, NOT_REPRODUCED)
    assert rise["measured"]["control_values"] is None and rise["measured"]["control_se"] is None
    bare = abl.length_claim(_length(values))  # an earlier record: no control entry at all
    assert bare["summary"].endswith("513–1024 tokens: 12.9; shuffled tokens (control): not measured")
    empty = abl.length_claim(_length(values, control={"rows": []}))  # no rows and no status
    assert empty["summary"].endswith("; shuffled tokens (control): not measured")


def test_the_position_claim_states_the_window_and_gives_three_digits():
    pos = [_row(d, positions=p) for d, p in ((9.8765, [0, 16]), (8.7654, [16, 32]), (7.6543, [32, 64]))]
    c = abl.position_claim({"context": 64, "per_position": {"rows": pos}})
    assert c["statement"] == ("Within the trained model's 64-token window, late tokens have a lower ID than early ones "
                              "(an ablation of Figure 4's sequence-length statement on a short window)")
    assert c["summary"] == "ID by window range: 0–16: 9.88, 16–32: 8.77, 32–64: 7.65"
    assert (c["quantity"], c["verdict"]) == ("the ID by window position", HOLDS)
    older = abl.position_claim({"per_position": {"rows": pos}})  # a record without the window's length
    assert older["statement"].startswith("Within the trained model's -token window, late tokens")
    none = abl.position_claim({"context": 64, "per_position": {"rows": []}})
    assert none["verdict"] == INCONCLUSIVE and none["measured"]["why"] == (
        "the position groups hold no ID batch(es) of — vectors: a trend needs ≥ 4 batches per group (more test "
        "windows per group, e.g. the standard preset) for a standard error")


def test_the_gemma_layer_claim_states_the_paper_statement_word_for_word():
    layers = [_row(d, layer=i) for i, d in enumerate([5.0, 12.0, 14.0, 11.0, 10.0])]
    flat = [_row(30.0, layer=i) for i in range(5)]
    g = abl.gemma_layer_claim({"status": "measured", "rows": layers, "untrained_rows": flat})
    assert g["statement"] == ("Across the layers of a pretrained model (Gemma 3 270M) the ID rises, then falls back "
                              "towards the final layer's value (Figure 4)")
    assert (g["quantity"], g["verdict"]) == ("layer's ID", HOLDS)
    short = abl.gemma_layer_claim({"status": "measured", "rows": layers[:3]})
    assert short["measured"]["why"] == "Gemma's profile has 2 layer(s): an inner peak needs ≥ 4"
    assert short["statement"] == g["statement"] and short["quantity"] == "layer's ID"


def test_position_edges_cut_the_window_into_four_groups_of_equal_length():
    assert abl.position_edges(64) == [0, 16, 32, 48, 64]  # the standard window: 16 positions per group
    assert abl.position_edges(65) == [0, 16, 32, 48, 65]  # the last group one token longer
    assert abl.position_edges(67) == [0, 16, 33, 50, 67]
    assert abl.position_edges(4) == [0, 1, 2, 3, 4]  # one token per group: still a valid cut
    assert abl.position_edges(12, 3) == [0, 4, 8, 12]
    with pytest.raises(ValueError, match=re.escape("a 3-token window cannot hold 4 position groups")):
        abl.position_edges(3)


def test_the_length_profile_and_its_control_are_taken_on_the_part_s_corpus_and_context(monkeypatch):
    calls = []

    def fake(corpus, ctx, *, shuffle_tokens=False):
        calls.append((corpus, ctx, shuffle_tokens))
        return _length([16.0, 15.0, 14.0, 13.0])["gemma_length"]

    monkeypatch.setattr(abl, "gemma_length_profile", fake)
    ctx = PartContext(mode="standard")
    g = abl.length_with_control("builtin:sotu", ctx)
    assert calls == [("builtin:sotu", ctx, False), ("builtin:sotu", ctx, True)]
    assert g["control"]["status"] == "measured" and [x["intrinsic_dim"] for x in g["rows"]] == [16.0, 15.0, 14.0, 13.0]


@pytest.mark.parametrize("mode, gemma, want", [
    ("quick", False, 20.0), ("tiny", False, 20.0),
    ("standard", False, 150.0 + 420.0), ("full", False, 600.0 + 420.0),  # + one seed the sweep lacks
    ("standard", True, 150.0 + 420.0 + 400.0 + 420.0), ("full", True, 600.0 + 420.0 + 400.0 + 420.0),
])
def test_the_estimate_adds_the_seed_and_gemma_s_two_profiles(monkeypatch, mode, gemma, want):
    monkeypatch.setattr(abl, "gemma_unavailable", lambda ctx: None if gemma else "not installed")
    assert abl.estimate(PartContext(mode=mode), None) == pytest.approx(want, abs=1e-9)


def test_quick_mode_never_counts_gemma():
    """The real availability check: quick mode does not measure Gemma, whatever is installed."""
    assert abl.estimate(PartContext(mode="quick"), None) == 20.0


def test_stored_reads_only_a_finished_part_s_result(tmp_path):
    parts = tmp_path / "parts"
    parts.mkdir()
    recs = {"lm_data_scaling": {"status": "ok", "result": {"id": 1.5}},
            "lm_model_scaling": {"status": "failed", "result": {"id": 2.5}},
            "lm_suite_scaling": {"status": "ok", "result": [1, 2]},
            "other": {"status": "ok", "result": {"id": 3.5}}}
    for name, rec in recs.items():
        (parts / f"{name}.json").write_text(json.dumps(rec), encoding="utf-8")
    assert abl.stored(tmp_path, "lm_data_scaling") == {"id": 1.5}
    assert abl.stored(tmp_path, "other") == {"id": 3.5}
    assert abl.stored(tmp_path, "lm_model_scaling") is None  # a failed part: its result is not used
    assert abl.stored(tmp_path, "lm_suite_scaling") is None  # not a result dict
    assert abl.stored(tmp_path, "missing") is None
