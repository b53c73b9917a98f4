"""Verdict rules: how ``ttlab reproduce`` judges a paper's claim from measured numbers.

A *claim record* (what ``results.json`` stores, one per claim) is a plain dict::

    {"id": "ntp_figure2.stage1_direction",          # stable identifier
     "statement": "Stage 1: W_ov(t) converges ...",   # the paper's claim
     "kind": "paper",                                 # paper | check | ablation (see KINDS)
     "cite": "Proposition 1",                         # where the paper states it (paper claims)
     "rule_id": "at_least",                           # the registered rule that judges it
     "rule": "holds if final cos ≥ 0.999, ...",       # the rule in words (from the rule and thresholds)
     "measured": {"value": 1.0},                      # named numbers; an interval is [lo, hi]
     "thresholds": {"holds": 0.999, "partly": 0.99},  # named numbers
     "verdict": "holds",                              # one of VERDICTS
     "reason": "final cos = 1 ≥ 0.999",               # why, in words, from the numbers
     "margin": 1.0,                                   # relative distance to the nearest threshold (or None)
     "near_threshold": False,                         # margin < NEAR (10 %): flagged in the report
     "summary": "final cos(W_ov, W*_ov) = 1.000000"}  # the measured figure as the report prints it

A claim this run could not judge may also name the mode of ``ttlab reproduce`` whose run judges it
(``"needs_mode": "standard"``, one of :data:`~ttlab.reproduce.registry.MODES`; set by the part that built it, which
knows why — the report's bottom line counts these claims by that mode, :func:`mode_that_judges`).

Three kinds (:data:`KINDS`): *paper* — a statement the paper makes (``cite`` says where); *check* — a
consistency or tool check (estimator recovery, solver agreement, closed forms, sanity of the run), counted
apart from the paper's claims; *ablation* — a question beyond the paper. Reports count paper claims by
verdict in their headline and list checks and ablations separately.

Four verdicts: *holds*, *partly*, *not reproduced* and *inconclusive* — the measurement cannot
discriminate (too few points, an interval wider than the tolerance, step-capped runs, a bound that
uniform attention already meets, missing inputs); the reason says which.

Every rule declares the verdicts it can give (``outcomes``); the test suite drives each rule to each of
them, from cases that sit ≥ 10 % away from every threshold. Verdicts are recomputed from ``measured`` and
``thresholds`` whenever a report is written (:func:`rejudge`), so a rule change applies to cached parts too.

Margins. Each rule also returns the *margin* of its verdict: the relative distance |x − t|/|t| of the deciding
number x to the nearest threshold t it was compared with (:func:`rel_distance`, :func:`closest`; a rule with
several comparisons takes the smallest). A threshold equal to 0 (a sign, "every case") has no relative scale and
is skipped — except the end of an interval compared with 0 (``power_law_decay``), measured in units of the
interval's width. Cosines, R² and fractions near 1 are measured on 1 − x (``"complement": 1`` among the
thresholds of ``at_least``/``at_most``; built into ``count``, ``exp_decay``, ``direction_rate`` and
``exp_vs_power``), so a cosine of 0.9995 is half-way between 0.999 and 1, not 0.05 % from 0.999. A verdict
resting on no number (missing inputs, an exact match) has margin None. The record stores ``margin`` and
``near_threshold`` (margin < :data:`NEAR`); the report flags those verdicts. A new rule returns
``(verdict, reason, margin)``; one returning ``(verdict, reason)`` has margin None.

Controls. ``at_least``/``at_most`` with a ``control_margin`` threshold compare the value with
``measured["controls"]`` (``{name: value}``, e.g. uniform or random attention measured in the same run): a
holds/partly verdict stands only when the value beats every control by that margin, else it is inconclusive.
``count`` with a ``chance`` threshold is inconclusive unless a one-sided binomial test rejects chance at 5 %.
``attention_bound``'s ``min_clearance``: the bound must clear the uniform-attention baseline by that much.

Conditions. A claim of a theorem may state the theorem's preconditions computed for the run in
``measured["conditions"]`` (``{"met": bool, ...}``, see :func:`conditions_met`); the report marks claims judged
outside them.
"""


from __future__ import annotations

from collections.abc import Sequence

from ttlab.reproduce import rules_exponents, rules_rates, rules_shapes, rules_thresholds, rules_unjudged
from ttlab.reproduce.registry import MODES
from ttlab.reproduce.verdict_base import (
    ABLATION,
    CHECK,
    HOLDS,
    INCONCLUSIVE,
    KINDS,
    NEAR,
    NOT_REPRODUCED,
    PAPER_CLAIM,
    PARTLY,
    RULES,
    VERDICTS,
    finite_number,
)

__all__ = [
    "NOT_AT_SCALE",
    "RULE_MODULES",
    "assess",
    "conditions_met",
    "count_by_kind",
    "counts_text",
    "not_at_scale",
    "headline",
    "judge",
    "make_claim",
    "missing_claim",
    "near_threshold_claims",
    "mode_that_judges",
    "rejudge",
]

RULE_MODULES = (rules_thresholds, rules_rates, rules_exponents, rules_shapes, rules_unjudged)
"""The modules whose ``@register_rule`` functions fill :data:`RULES` when they are imported (here)."""


# ---------------------------------------------------------------------------------------------
# records


def assess(rule_id: str, measured: dict, thresholds: dict, quantity: str = "the measured value") -> dict:
    """``{"verdict", "reason", "rule", "margin", "near_threshold"}`` of rule ``rule_id`` on ``measured`` and
    ``thresholds``. ``margin``: the relative distance of the deciding number to the nearest threshold (None when
    the verdict rests on no number, e.g. missing inputs); ``near_threshold``: margin < :data:`NEAR`."""
    if rule_id not in RULES:
        raise KeyError(f"unknown verdict rule {rule_id!r}; known: {', '.join(sorted(RULES))}")
    rule = RULES[rule_id]
    out = rule.judge(measured, thresholds, quantity)
    verdict, reason = out[0], out[1]
    margin = finite_number(out[2]) if len(out) > 2 else None
    if verdict not in rule.outcomes:  # a rule must stay inside what it declares (tested)
        raise AssertionError(f"rule {rule_id} gave undeclared verdict {verdict!r}")
    return {"verdict": verdict, "reason": reason, "rule": rule.describe(thresholds, quantity),
            "margin": margin, "near_threshold": margin is not None and margin < NEAR}


def judge(rule_id: str, measured: dict, thresholds: dict, quantity: str = "the measured value") -> tuple[str, str, str]:
    """(verdict, reason, rule text) of rule ``rule_id`` on ``measured`` and ``thresholds`` (see :func:`assess`)."""
    a = assess(rule_id, measured, thresholds, quantity)
    return a["verdict"], a["reason"], a["rule"]


def make_claim(
    claim_id: str,
    statement: str,
    rule_id: str,
    measured: dict,
    thresholds: dict | None = None,
    *,
    kind: str,
    cite: str = "",
    quantity: str = "the measured value",
    summary: str = "",
    needs_mode: str | None = None,
) -> dict:
    """A judged claim record (see the module docstring). ``kind`` is one of :data:`KINDS`; ``cite`` says
    where the paper states a ``paper`` claim; ``summary`` is the measured figure in words, built by the
    caller from the same numbers as ``measured``; ``quantity`` names what is measured; ``needs_mode``: the mode whose
    run judges a claim this run could not (stored only when given)."""
    if kind not in KINDS:
        raise ValueError(f"claim {claim_id}: kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if needs_mode is not None and needs_mode not in MODES:
        raise ValueError(f"claim {claim_id}: needs_mode must be one of {', '.join(MODES)}, got {needs_mode!r}")
    rec = {"id": claim_id, "statement": statement, "kind": kind, "cite": cite, "rule_id": rule_id,
           "quantity": quantity, "measured": dict(measured), "thresholds": dict(thresholds or {}), "summary": summary}
    if needs_mode is not None:
        rec["needs_mode"] = needs_mode
    return rejudge(rec)


def rejudge(record: dict) -> dict:
    """The claim record with ``verdict``, ``reason``, ``rule``, ``margin`` and ``near_threshold`` recomputed from
    its stored numbers."""
    return {**record, **assess(record["rule_id"], record["measured"], record["thresholds"],
                               record.get("quantity", "the measured value"))}


def missing_claim(claim_id: str, statement: str, why: str, *, kind: str, cite: str = "",
                  needs_mode: str | None = None) -> dict:
    """An *inconclusive* claim record for a claim whose inputs are missing (it is reported, not dropped);
    ``needs_mode``: the mode whose run measures them (see :func:`make_claim`)."""
    return make_claim(claim_id, statement, "unjudgeable", {"why": why}, kind=kind, cite=cite,
                      summary=f"not measured: {why}", needs_mode=needs_mode)


def mode_that_judges(record: dict) -> str | None:
    """The mode of ``ttlab reproduce`` whose run judges a claim this run could not (``record["needs_mode"]``), None
    when the record names none."""
    mode = record.get("needs_mode")
    return str(mode) if mode else None


NOT_AT_SCALE = "not_at_this_scale"
"""The rule of a claim this machine's run cannot reach: listed apart, never counted among the verdicts."""


def not_at_scale(claims: Sequence[dict]) -> list[dict]:
    """The claims not judged at this scale (rule :data:`NOT_AT_SCALE`)."""
    return [c for c in claims if c.get("rule_id") == NOT_AT_SCALE]


def count_by_kind(claims: Sequence[dict]) -> dict[str, dict[str, int]]:
    """``{kind: {verdict: count}}`` for every kind and verdict (zeros included); a record without a kind
    (an older schema) counts as ``check``, never as a paper claim; claims not judged at this scale are left out
    (:func:`not_at_scale` lists them)."""
    out = {k: {v: 0 for v in VERDICTS} for k in KINDS}
    for c in claims:
        if c.get("rule_id") == NOT_AT_SCALE:
            continue
        kind = str(c["kind"]) if c.get("kind") in KINDS else CHECK
        out[kind][c["verdict"]] = out[kind].get(c["verdict"], 0) + 1
    return out


def counts_text(counts: dict[str, int]) -> str:
    """``counts`` by verdict as text: "a hold, b partly, c not reproduced, d inconclusive"."""
    return (f"{counts[HOLDS]} hold, {counts[PARTLY]} partly, {counts[NOT_REPRODUCED]} not reproduced, "
            f"{counts[INCONCLUSIVE]} inconclusive")


def headline(by_kind: dict[str, dict[str, int]], n_not_at_scale: int = 0) -> str:
    """The report's first line on verdicts: the paper claims by verdict, then checks and ablations apart, then how
    many claims this scale cannot judge (listed apart, with what they need)."""
    n = {k: sum(by_kind[k].values()) for k in KINDS}
    text = (f"Paper claims ({n[PAPER_CLAIM]}): {counts_text(by_kind[PAPER_CLAIM])}. Counted apart — checks of "
            f"ttlab's own tools and runs ({n[CHECK]}): {counts_text(by_kind[CHECK])}; ablations beyond the papers "
            f"({n[ABLATION]}): {counts_text(by_kind[ABLATION])}.")
    if n_not_at_scale:
        text += (f" Not judged at this scale ({n_not_at_scale}): claims whose regime this run cannot reach, listed "
                 "apart with what they need and the command that would judge them.")
    return text


def near_threshold_claims(claims: Sequence[dict]) -> list[dict]:
    """The claims whose verdict lies within :data:`NEAR` (10 %) of a threshold (``near_threshold``)."""
    return [c for c in claims if c.get("near_threshold")]


def conditions_met(record: dict) -> bool | None:
    """Whether the claim was judged inside its theorem's conditions: ``measured["conditions"]["met"]`` (True |
    False), None when the record states no conditions."""
    cond = (record.get("measured") or {}).get("conditions")
    if not isinstance(cond, dict) or "met" not in cond:
        return None
    return bool(cond["met"])
