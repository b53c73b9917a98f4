"""The ntp_scale part of `ttlab reproduce`: plumbing on the test-only tiny configuration, skipped in quick mode."""

from __future__ import annotations

import copy
import json

import pytest

from ttlab.reproduce import PartContext, run_reproduction
from ttlab.reproduce.parts.ntp_scale import SCALE_CONFIGS
from ttlab.reproduce.parts.ntp_scale import claims as scale_claims
from ttlab.reproduce.registry import PARTS
from ttlab.reproduce.verdict_base import VERDICTS


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("scale")
    steps: list = []
    res = run_reproduction(tmp_path, PartContext(mode="tiny"), parts=["ntp_scale"], progress=lambda *a: steps.append(a))
    return tmp_path, res, steps


def test_scale_part_tiny_end_to_end(tiny_run):
    tmp_path, res, steps = tiny_run
    rec = res["parts"]["ntp_scale"]
    assert rec["status"] == "ok", rec.get("error")
    r = rec["result"]
    c = SCALE_CONFIGS.tiny
    assert r["dataset"]["vocab_size"] == c["vocab"] and r["config"]["impl"] == "structured"
    from ttlab.ntp.limits import MATERIALIZE_LIMIT

    assert c["vocab"] > MATERIALIZE_LIMIT  # the full size's path: no dense |V| × |V| matrix
    assert r["stages"]["stage_1"]["steps"] == r["stages"]["stage_2"]["steps"] == c["steps"]
    assert r["wkq_star"]["max_violation"] == 0.0 and r["wkq_star"]["n_constraints"] > 0
    assert r["generalization"]["n_sentences"] == c["samples"]
    assert (tmp_path / "ntp_scale" / "dynamics.png").stat().st_size > 0
    ids = [x["id"] for x in r["claims"]]
    assert ids == ["ntp_scale.stage1_direction", "ntp_scale.stage2_direction", "ntp_scale.norm_bounds",
                   "ntp_scale.stage1_loss_rate", "ntp_scale.stage2_linear", "ntp_scale.limit",
                   "ntp_scale.generalization"]
    # Theorem 3 is exact in the max-margin limit: W*_kq scaled up must agree on every sentence of both cases
    lim = r["max_margin_limit"]
    assert lim["wkq_norm"] >= 10 * r["wkq_star_norm"] * (1 - 1e-12)
    for case in ("optimal", "non-comparable"):
        assert lim["by_case"][case]["n"] >= 10 and lim["by_case"][case]["agreement"] == 1.0, (case, lim["by_case"])
    assert next(x for x in r["claims"] if x["id"] == "ntp_scale.limit")["verdict"] == "holds"
    assert all(x["verdict"] in VERDICTS and x["reason"] for x in r["claims"])
    assert any(d.startswith("W*_kq") for _, d, *_ in steps) and any("stage 2" in d for _, d, *_ in steps)
    assert "ntp_scale" in (tmp_path / "report.md").read_text()
    json.dumps(r)  # JSON-able


def test_scale_part_claims_follow_the_numbers(tiny_run):
    _, res, _ = tiny_run
    r = copy.deepcopy(res["parts"]["ntp_scale"]["result"])
    g = r["generalization"]["by_case"]
    g["optimal"].update(n=500, agreement=1.0)
    g["non-comparable"].update(n=500, agreement=1.0)
    low = {"optimal": {"n": 500, "agreement": 0.3}, "non-comparable": {"n": 500, "agreement": 0.2}}
    r["generalization"]["controls"] = {"uniform attention": low, "random attention": low}
    r["max_margin_limit"]["controls"] = {"uniform attention": low, "random attention": low}
    r["stages"]["stage_2"]["final_cosine"] = 0.95
    v = {x["id"]: x["verdict"] for x in scale_claims(r)}
    assert v["ntp_scale.generalization"] == "holds" and v["ntp_scale.stage2_direction"] == "holds"
    g["non-comparable"]["agreement"] = 0.5
    r["stages"]["stage_2"]["final_cosine"] = 0.6
    v = {x["id"]: x["verdict"] for x in scale_claims(r)}
    assert v["ntp_scale.generalization"] == "not reproduced" and v["ntp_scale.stage2_direction"] == "partly"
    g["non-comparable"]["n"] = 3
    assert {x["id"]: x["verdict"] for x in scale_claims(r)}["ntp_scale.generalization"] == "inconclusive"
    lim = r["max_margin_limit"]["by_case"]
    for agreement, verdict in ((0.995, "partly"), (0.5, "not reproduced")):
        lim["non-comparable"]["agreement"] = agreement
        assert {x["id"]: x["verdict"] for x in scale_claims(r)}["ntp_scale.limit"] == verdict
    lim["optimal"]["n"] = 2
    assert {x["id"]: x["verdict"] for x in scale_claims(r)}["ntp_scale.limit"] == "inconclusive"
    del r["max_margin_limit"]  # a result of the part's version 1 has no limit: no claim, no error
    assert "ntp_scale.limit" not in {x["id"] for x in scale_claims(r)}


def test_scale_part_is_not_run_in_quick_mode(tmp_path):
    res = run_reproduction(tmp_path, PartContext(mode="quick"), parts=["ntp_scale"])
    r = res["parts"]["ntp_scale"]["result"]
    assert "--full" in r["skipped"] and r["claims"] == []
    assert PARTS["ntp_scale"].estimate[0] == 0 and PARTS["ntp_scale"].estimate[1] >= 600
