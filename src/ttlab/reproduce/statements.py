"""Paper statements: the claims that judge one statement of a paper in several cases — each corpus, each ambient
dimension D and intrinsic dimension d, the model sweep and the model suite, each budget, each network — grouped into
one, so that the headline counts distinct statements, not cases.

Which claims are cases of one statement is declared once, in :data:`STATEMENT_CASES` (a claim id matching no pattern
is a statement of its own). A statement's verdict follows from its cases' by :func:`statement_verdict`:

* cases *not judged at this scale* are listed apart and do not vote; a statement all of whose cases are such is
  listed apart itself;
* no case decided (all inconclusive) → inconclusive;
* every decided case agrees → that verdict (inconclusive cases beside them are counted in ``n_decided``);
* decided cases disagree → partly (the statement holds in some cases and not in others).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ttlab.reproduce.verdict_base import (
    ABLATION,
    CHECK,
    HOLDS,
    INCONCLUSIVE,
    KINDS,
    NOT_REPRODUCED,
    PAPER_CLAIM,
    PARTLY,
    VERDICTS,
)
from ttlab.reproduce.verdicts import NOT_AT_SCALE, count_by_kind, counts_text

__all__ = ["CENTRAL_STATEMENTS", "STATEMENT_CASES", "count_statements", "group_statements", "statement_headline",
           "statement_id", "statement_verdict"]

STATEMENT_CASES: tuple[tuple[str, str], ...] = (
    ("lm_data_scaling.power_law", r"lm_data_scaling(\.[^.]+)?\.power_law"),  # each corpus
    ("lm_data_scaling.id_prediction", r"lm_data_scaling(\.[^.]+)?\.id_prediction"),
    ("lm_data_scaling.id_prediction_own", r"lm_data_scaling(\.[^.]+)?\.id_prediction_own"),
    ("lm_model_scaling.power_law", r"lm_(model|suite)_scaling\.power_law"),  # the sweep and its suite re-scoring
    ("lm_model_scaling.id_prediction", r"lm_(model|suite)_scaling\.id_prediction"),
    ("lm_model_scaling.id_grows", r"lm_(model|suite)_scaling\.id_grows"),
    ("lm_id_ablations.layer_peak", r"lm_id_ablations\.(gemma_)?layer_peak"),  # the trained model and Gemma
    ("model_scaling.harness", r"model_scaling\.harness_.+"),  # each target and d
    ("model_scaling.rate", r"model_scaling\.rate_.+"),  # each network, target and d
    ("model_scaling.falls_with_d", r"model_scaling\.falls_with_d_(softmax|relu)_.+"),  # each transformer, target
    ("model_scaling.falls_with_d_mlp", r"model_scaling\.falls_with_d_mlp_.+"),  # the control network's, a check
    ("manifold_regression.rate", r"manifold_regression\.rate_.+"),  # each network, β, noise, d and D
    ("manifold_regression.exponent_falls", r"manifold_regression\.exponent_falls_.+"),  # each network, β, noise, D
    ("manifold_regression.error_rises", r"manifold_regression\.error_rises_.+"),
    ("manifold_regression.ambient_invariance", r"manifold_regression\.ambient_invariance_.+"),  # each network, d
    ("table1.id_free_relation", r"table1\..+"),  # each published pair of exponents
    ("ntp_generalization.trained", r"ntp_generalization\.trained(_long)?"),  # each stage-2 budget
)
"""``(statement id, pattern)``: a claim whose id fully matches the pattern is a case of that statement."""

CENTRAL_STATEMENTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "B": ("the data-scaling exponent α_D = 2β/(2β+d) predicted from the intrinsic dimension",
          ("lm_data_scaling.id_prediction",  # on text, from the ID of a pretrained network (Section 3)
           "manifold_regression.rate")),  # on manifolds of known d (Theorem 1)
}
"""``{paper: (its central claim in words, the statements that judge it)}``: the report's bottom line says where each is
judged (which part, in which mode, with what verdict). Paper A states no single central claim: none is declared."""

_COMPILED = tuple((sid, re.compile(pat)) for sid, pat in STATEMENT_CASES)


def statement_id(claim_id: str) -> str:
    """The statement a claim is a case of (:data:`STATEMENT_CASES`; the claim's own id when no pattern matches)."""
    for sid, pat in _COMPILED:
        if pat.fullmatch(claim_id):
            return sid
    return claim_id


def statement_verdict(verdicts: Sequence[str]) -> str:
    """The verdict of a statement from its judged cases' (see the module docstring); inconclusive without cases."""
    decided = {v for v in verdicts if v in (HOLDS, PARTLY, NOT_REPRODUCED)}
    if not decided:
        return INCONCLUSIVE
    return decided.pop() if len(decided) == 1 else PARTLY


def group_statements(claims: Sequence[dict]) -> list[dict]:
    """One record per statement, in the order of its first case: ``id``, ``kind`` (its cases'; a statement whose
    cases differ in kind is an error of :data:`STATEMENT_CASES`), ``statement`` (its first case's), ``verdict``,
    ``cases`` (``id``, ``verdict`` and ``summary`` of every case), ``n_cases``, ``n_decided`` and ``not_at_scale``
    (True when no case could be judged at this scale)."""
    groups: dict[str, list[dict]] = {}
    for c in claims:
        groups.setdefault(statement_id(c["id"]), []).append(c)
    out = []
    for sid, cases in groups.items():
        kinds = {str(c.get("kind")) if c.get("kind") in KINDS else CHECK for c in cases}
        if len(kinds) > 1:
            raise ValueError(f"statement {sid!r} groups cases of different kinds ({sorted(kinds)}): "
                             f"{[c['id'] for c in cases]}")
        judged = [c for c in cases if c.get("rule_id") != NOT_AT_SCALE]
        verdict = statement_verdict([c["verdict"] for c in judged])
        out.append({"id": sid, "kind": kinds.pop(), "statement": cases[0].get("statement", ""), "verdict": verdict,
                    "cases": [{"id": c["id"], "verdict": c["verdict"], "summary": c.get("summary", ""),
                               "not_at_scale": c.get("rule_id") == NOT_AT_SCALE} for c in cases],
                    "n_cases": len(cases), "n_decided": sum(c["verdict"] != INCONCLUSIVE for c in judged),
                    "not_at_scale": not judged})
    return out


def count_statements(statements: Sequence[dict]) -> dict[str, dict[str, int]]:
    """``{kind: {verdict: count}}`` of statements (zeros included); those not judged at this scale left out."""
    out = {k: {v: 0 for v in VERDICTS} for k in KINDS}
    for s in statements:
        if not s["not_at_scale"]:
            out[s["kind"]][s["verdict"]] += 1
    return out


def statement_headline(claims: Sequence[dict]) -> str:
    """The report's first line on verdicts: the paper's distinct statements by verdict and the cases they were judged
    in, then checks and ablations apart, then how many cases this scale cannot judge (listed apart)."""
    stmts = group_statements(claims)
    by_s, by_c = count_statements(stmts), count_by_kind(claims)
    ns = {k: sum(by_s[k].values()) for k in KINDS}
    nc = {k: sum(by_c[k].values()) for k in KINDS}
    text = (f"Paper statements ({ns[PAPER_CLAIM]}): {counts_text(by_s[PAPER_CLAIM])} — judged in {nc[PAPER_CLAIM]} "
            f"cases (each corpus, dimension, network or suite a case): {counts_text(by_c[PAPER_CLAIM])}. Counted "
            f"apart — checks of ttlab's own tools and runs ({ns[CHECK]} statements, {nc[CHECK]} cases): "
            f"{counts_text(by_s[CHECK])}; ablations beyond the papers ({ns[ABLATION]} statements, {nc[ABLATION]} "
            f"cases): {counts_text(by_s[ABLATION])}.")
    n_apart = sum(c.get("rule_id") == NOT_AT_SCALE for c in claims)
    if n_apart:
        text += (f" Not judged at this scale ({n_apart} case(s)): claims whose regime this run cannot reach, listed "
                 "apart with what they need and the command that would judge them.")
    return text
