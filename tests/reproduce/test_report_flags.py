"""The report flags verdicts near a threshold (≈, with the margin) and claims judged outside their theorem's
conditions (†), in the summary table, in each part's claim table and in a sentence of the header."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from ttlab.reproduce import PARTS, PartContext, make_claim, register_part, run_reproduction
from ttlab.reproduce.report_blocks import Claims
from ttlab.reproduce.report_document import claim_flags
from ttlab.reproduce.verdicts import conditions_met, near_threshold_claims

OUTSIDE = {"met": False, "unmet": ["t ≥ 3e14·log²t"], "items": [{"name": "t", "required": 3e14, "actual": 900}]}
INSIDE = {"met": True, "items": []}


@pytest.fixture
def flagged_part():
    saved = dict(PARTS)
    PARTS.clear()

    @register_part("fake_flags", paper="A", title="Fake part with flagged claims", render=lambda r: [Claims(r["claims"])])
    def fake_flags(out: Path, ctx: PartContext) -> dict:
        return {"claims": [
            # 0.905 against 0.9: 0.56 % from the threshold → ≈
            make_claim("fake_flags.near", "Near claim", "at_least", {"value": 0.905}, {"holds": 0.9}, kind="paper",
                       summary="value 0.905"),
            # far from its threshold, but judged outside its theorem's conditions → †
            make_claim("fake_flags.outside", "Outside claim", "at_least", {"value": 0.5, "conditions": OUTSIDE},
                       {"holds": 0.2}, kind="paper", summary="value 0.5"),
            make_claim("fake_flags.clean", "Clean claim", "at_least", {"value": 0.5, "conditions": INSIDE},
                       {"holds": 0.2}, kind="check", summary="value 0.5 (clean)"),
        ]}

    try:
        yield
    finally:
        PARTS.clear()
        PARTS.update(saved)


def test_flags_of_a_record():
    near = make_claim("a.n", "Near", "at_least", {"value": 0.905}, {"holds": 0.9}, kind="paper")
    out = make_claim("a.o", "Out", "at_least", {"value": 0.5, "conditions": OUTSIDE}, {"holds": 0.2}, kind="paper")
    both = make_claim("a.b", "Both", "at_least", {"value": 0.205, "conditions": OUTSIDE}, {"holds": 0.2}, kind="paper")
    clean = make_claim("a.c", "Clean", "at_least", {"value": 0.5, "conditions": INSIDE}, {"holds": 0.2}, kind="paper")
    assert claim_flags(near) == "≈ 0.6 % from a threshold"
    assert claim_flags(out) == "† outside the theorem's conditions"
    assert claim_flags(both) == "≈ 2.5 % from a threshold; † outside the theorem's conditions"
    assert claim_flags(clean) == "" and conditions_met(clean) is True
    assert conditions_met(make_claim("a.x", "None", "at_least", {"value": 1.0}, {"holds": 0.2}, kind="paper")) is None
    assert [c["id"] for c in near_threshold_claims([near, out, both, clean])] == ["a.n", "a.b"]
    # a stored record of an older schema (no margin) has no flag
    assert claim_flags({k: v for k, v in near.items() if k not in ("margin", "near_threshold")}) == ""


def test_report_marks_near_and_outside_claims(tmp_path, flagged_part):
    res = run_reproduction(tmp_path, PartContext(mode="tiny"))
    md = (tmp_path / "report.md").read_text()
    page = html.unescape(re.sub(r"<[^>]+>", " ", (tmp_path / "report.html").read_text()))
    for doc in (md, page):
        assert "Flags: 1 verdict(s) lie within 10 % of a threshold" in doc
        assert "1 claim(s) were judged outside the conditions of the theorem they test" in doc and "1 inside" in doc
        assert "≈ 0.6 % from a threshold" in doc and "† outside the theorem's conditions" in doc
    # the summary table and the part's claim table both carry the flags column
    assert md.count("| ≈ 0.6 % from a threshold |") == 2 and md.count("| † outside the theorem's conditions |") == 2
    stored = json.loads((tmp_path / "results.json").read_text())
    by_id = {c["id"]: c for c in stored["claims"]}
    assert by_id["fake_flags.near"]["near_threshold"] and by_id["fake_flags.near"]["margin"] == pytest.approx(0.005 / 0.9)
    assert not by_id["fake_flags.outside"]["near_threshold"] and by_id["fake_flags.outside"]["margin"] == pytest.approx(1.5)
    assert res["claims"] == stored["claims"]
