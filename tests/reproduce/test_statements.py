"""Paper statements: claims that judge one statement in several cases are counted once (ttlab.reproduce.statements)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ttlab.reproduce.statements import (
    STATEMENT_CASES,
    count_statements,
    group_statements,
    statement_headline,
    statement_id,
    statement_verdict,
)
from ttlab.reproduce.verdict_base import HOLDS, INCONCLUSIVE, NOT_REPRODUCED, PARTLY
from ttlab.reproduce.verdicts import NOT_AT_SCALE

STANDARD = Path(__file__).resolve().parents[2] / "docs" / "results" / "standard" / "results.json"


@pytest.mark.parametrize("claim, statement", [
    ("lm_data_scaling.power_law", "lm_data_scaling.power_law"),
    ("lm_data_scaling.python.power_law", "lm_data_scaling.power_law"),
    ("lm_data_scaling.python.id_prediction", "lm_data_scaling.id_prediction"),
    ("lm_data_scaling.python.id_prediction_own", "lm_data_scaling.id_prediction_own"),
    ("lm_suite_scaling.id_grows", "lm_model_scaling.id_grows"),
    ("lm_id_ablations.gemma_layer_peak", "lm_id_ablations.layer_peak"),
    ("lm_id_ablations.sequence_length", "lm_id_ablations.sequence_length"),  # one case: its own statement
    ("model_scaling.rate_relu_smooth_d4", "model_scaling.rate"),
    ("model_scaling.falls_with_d_mlp_holder", "model_scaling.falls_with_d_mlp"),
    ("model_scaling.falls_with_d_softmax_smooth", "model_scaling.falls_with_d"),
    ("manifold_regression.rate_softmax_b1_noisy_d2_D128", "manifold_regression.rate"),
    ("manifold_regression.id_recovered", "manifold_regression.id_recovered"),
    ("table1.chinchilla_2022", "table1.id_free_relation"),
    ("ntp_generalization.trained_long", "ntp_generalization.trained"),
    ("ntp_generalization.limit", "ntp_generalization.limit"),
    ("lm_data_scaling.a.b.power_law", "lm_data_scaling.a.b.power_law"),  # a pattern matches the whole id only
])
def test_statement_of_a_claim(claim, statement):
    assert statement_id(claim) == statement


def test_statement_verdict_rule():
    assert statement_verdict([]) == INCONCLUSIVE
    assert statement_verdict([INCONCLUSIVE, INCONCLUSIVE]) == INCONCLUSIVE
    assert statement_verdict([HOLDS, HOLDS]) == HOLDS
    assert statement_verdict([HOLDS, INCONCLUSIVE]) == HOLDS  # the decided cases agree
    assert statement_verdict([NOT_REPRODUCED, INCONCLUSIVE, NOT_REPRODUCED]) == NOT_REPRODUCED
    assert statement_verdict([PARTLY]) == PARTLY
    assert statement_verdict([HOLDS, NOT_REPRODUCED]) == PARTLY  # they disagree
    assert statement_verdict([HOLDS, PARTLY, INCONCLUSIVE]) == PARTLY


def _c(cid: str, verdict: str, kind: str = "paper", **kw) -> dict:
    return {"id": cid, "verdict": verdict, "kind": kind, "statement": f"S {cid}", "summary": f"s {cid}", **kw}


def test_grouping_counts_and_headline():
    claims = [_c("lm_data_scaling.id_prediction", PARTLY), _c("lm_data_scaling.power_law", INCONCLUSIVE),
              _c("lm_data_scaling.python.id_prediction", HOLDS), _c("table1.kaplan_2020", HOLDS),
              _c("table1.chinchilla_2022", NOT_REPRODUCED), _c("x.check", HOLDS, kind="check"),
              _c("lm_model_scaling.power_law", INCONCLUSIVE, rule_id=NOT_AT_SCALE),
              _c("lm_suite_scaling.power_law", INCONCLUSIVE, rule_id=NOT_AT_SCALE),
              _c("lm_model_scaling.id_grows", HOLDS), _c("lm_suite_scaling.id_grows", INCONCLUSIVE, rule_id=NOT_AT_SCALE),
              _c("y.ablation", NOT_REPRODUCED, kind="ablation")]
    st = {s["id"]: s for s in group_statements(claims)}
    assert list(st) == ["lm_data_scaling.id_prediction", "lm_data_scaling.power_law", "table1.id_free_relation",
                        "x.check", "lm_model_scaling.power_law", "lm_model_scaling.id_grows", "y.ablation"]
    idp = st["lm_data_scaling.id_prediction"]
    assert (idp["verdict"], idp["n_cases"], idp["n_decided"], idp["kind"]) == (PARTLY, 2, 2, "paper")
    assert idp["statement"] == "S lm_data_scaling.id_prediction"
    assert idp["cases"][1] == {"id": "lm_data_scaling.python.id_prediction", "verdict": HOLDS,
                               "summary": "s lm_data_scaling.python.id_prediction", "not_at_scale": False}
    assert st["table1.id_free_relation"]["verdict"] == PARTLY
    assert st["lm_model_scaling.power_law"]["not_at_scale"] is True  # every case outside this scale: apart
    grows = st["lm_model_scaling.id_grows"]  # the case outside this scale does not vote
    assert (grows["verdict"], grows["n_decided"], grows["not_at_scale"]) == (HOLDS, 1, False)
    by = count_statements(list(st.values()))
    assert by["paper"] == {HOLDS: 1, PARTLY: 2, NOT_REPRODUCED: 0, INCONCLUSIVE: 1}
    assert by["check"][HOLDS] == 1 and by["ablation"][NOT_REPRODUCED] == 1
    assert statement_headline(claims) == (
        "Paper statements (4): 1 hold, 2 partly, 0 not reproduced, 1 inconclusive — judged in 6 cases (each corpus, "
        "dimension, network or suite a case): 3 hold, 1 partly, 1 not reproduced, 1 inconclusive. Counted apart — "
        "checks of ttlab's own tools and runs (1 statements, 1 cases): 1 hold, 0 partly, 0 not reproduced, 0 "
        "inconclusive; ablations beyond the papers (1 statements, 1 cases): 0 hold, 0 partly, 1 not reproduced, 0 "
        "inconclusive. Not judged at this scale (3 case(s)): claims whose regime this run cannot reach, listed apart "
        "with what they need and the command that would judge them.")
    with pytest.raises(ValueError, match="different kinds"):
        group_statements([_c("table1.a", HOLDS), _c("table1.b", HOLDS, kind="check")])


def test_every_statement_of_the_committed_standard_run_has_one_kind():
    """The declared grouping applies to a full run's claims: each statement's cases share a kind; the 37 paper
    cases of the committed standard run are fewer statements, and every pattern of the table is used there or
    names a claim builder's id family."""
    claims = json.loads(STANDARD.read_text())["claims"]
    stmts = group_statements(claims)
    paper = [s for s in stmts if s["kind"] == "paper" and not s["not_at_scale"]]
    assert len(paper) < sum(c["kind"] == "paper" and c.get("rule_id") != NOT_AT_SCALE for c in claims)
    used = {s["id"] for s in stmts if s["n_cases"] > 1}
    assert used <= {sid for sid, _ in STATEMENT_CASES}
