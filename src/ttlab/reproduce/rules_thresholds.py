"""Verdict rules on single numbers: thresholds with controls (``at_least``/``at_most``), counts against chance,
error counts and set matches.
"""

from __future__ import annotations

import math
from typing import Any

from ttlab.reproduce.verdict_base import (
    HOLDS,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    PARTLY,
    Judgement,
    closest,
    finite_number,
    missing_inputs,
    register_rule,
    rel_distance,
    short_number,
    too_few_points,
)

# ---------------------------------------------------------------------------------------------
# generic thresholds


def threshold_rule(name: str, sign: int) -> None:
    """Register ``at_least`` (sign +1: larger is better) or ``at_most`` (sign −1): ``value`` meets holds →
    holds; meets partly → partly; else not reproduced; inconclusive when missing or covering too few items."""
    ok, bad_word, worse = ("≥", "below", "<") if sign > 0 else ("≤", "above", ">")

    def describe(th: dict, q: str) -> str:
        s = f"holds if {q} {ok} {short_number(th['holds'])}"
        if "partly" in th:
            s += f", partly if {ok} {short_number(th['partly'])}"
        if "control_margin" in th:
            s += (f"; a holds/partly verdict is inconclusive unless {q} beats every control measured in the same "
                  f"run (uniform or random attention, an untrained model) by at least {short_number(th['control_margin'])}: "
                  "a trivial model must fail the claim")
        return s + "; inconclusive if the measurement is missing" + (
            f" or covers fewer than {th['min_n']} items" if th.get("min_n", 1) > 1 else " or covers no item")

    def meets(v: float, bound: float) -> bool:
        return sign * v >= sign * bound

    @register_rule(name, (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), describe)
    def judge_threshold(m: dict, th: dict, q: str) -> Judgement:
        bad = missing_inputs(m, "value") or too_few_points(m, th)
        if bad:
            return bad
        v = float(m["value"])
        comp = bool(th.get("complement"))
        margin = closest(*(rel_distance(v, th[k], comp) for k in ("holds", "partly") if k in th))
        if meets(v, th["holds"]):
            verdict, reason = HOLDS, f"{q} = {short_number(v)} {ok} {short_number(th['holds'])}"
        elif "partly" in th and meets(v, th["partly"]):
            verdict, reason = PARTLY, f"{q} = {short_number(v)} is {bad_word} {short_number(th['holds'])} but {ok} {short_number(th['partly'])}"
        else:
            return NOT_REPRODUCED, f"{q} = {short_number(v)} {worse} {short_number(th.get('partly', th['holds']))}", margin
        if "control_margin" not in th:
            return verdict, reason, margin
        return _beyond_controls(verdict, reason, margin, v, sign, m.get("controls"), float(th["control_margin"]))


def _beyond_controls(verdict: str, reason: str, margin: float | None, v: float, sign: int, controls: Any,
                     need: float) -> Judgement:
    """A holds/partly verdict kept only when ``v`` beats every control (``{name: value}``, measured in the same
    run) by at least ``need`` in the claim's direction; otherwise inconclusive, saying which control came close.
    The margin then also counts the distance of the lead over the best control to ``need``."""
    vals = {k: finite_number(x) for k, x in (controls or {}).items()} if isinstance(controls, dict) else {}
    if not vals or any(x is None for x in vals.values()):
        gone = sorted(k for k, x in vals.items() if x is None)
        return INCONCLUSIVE, (f"{reason}, but the control{'s' if len(gone) != 1 else ''} "
                              f"{', '.join(gone) or '(none given)'} {'are' if len(gone) != 1 else 'is'} missing: "
                              "cannot tell it from a trivial model"), margin
    found = {k: x for k, x in vals.items() if x is not None}  # all of them (checked above)
    best = max(found, key=lambda k: sign * found[k])
    lead = sign * (v - found[best])
    margin = closest(margin, rel_distance(lead, need))
    text = ", ".join(f"{k} {short_number(x)}" for k, x in found.items())
    if lead < need:
        return INCONCLUSIVE, (f"{reason}, but the control {best} reaches {short_number(found[best])} (lead {lead:+.3g} < "
                              f"{short_number(need)}; controls: {text}): a trivial model nearly meets it too"), margin
    return verdict, f"{reason}; beats every control by ≥ {short_number(need)} (lead {lead:+.3g} over {best}; {text})", margin


threshold_rule("at_least", +1)
threshold_rule("at_most", -1)


def binomial_tail(k: int, n: int, p: float) -> float:
    """P(X ≥ k) for X ~ Binomial(n, p): the one-sided p-value of k successes in n against chance p."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    return min(1.0, sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1)))


CHANCE_LEVEL = 0.05
"""Significance of the one-sided binomial test of a ``count`` rule with a ``chance`` threshold."""


def _describe_count(th: dict, q: str) -> str:
    s = (f"holds if {q} in at least {100 * th['holds']:.0f} % of the cases, partly if in at least "
         f"{100 * th['partly']:.0f} %; inconclusive if there is no case")
    if "chance" in th:
        s += (f", or if a one-sided binomial test does not reject chance ({100 * th['chance']:.0f} % of cases by luck) "
              f"at {100 * CHANCE_LEVEL:.0f} % (a holds/partly count must beat chance)")
    return s


@register_rule("count", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_count)
def _count(m: dict, th: dict, q: str) -> Judgement:
    """``passed`` of ``total`` cases: fraction ≥ holds → holds, ≥ partly → partly; with ``chance`` p0 in the
    thresholds a holds/partly count must also reject chance (one-sided binomial test at 5 %), else inconclusive.
    Margin: on the fraction's complement (1 − k/n against 1 − threshold)."""
    bad = missing_inputs(m, "passed", "total")
    if bad:
        return bad
    k, n = int(m["passed"]), int(m["total"])
    if n <= 0:
        return INCONCLUSIVE, "no case to judge"
    frac = k / n
    margin = closest(rel_distance(frac, th["holds"], True), rel_distance(frac, th["partly"], True))
    if frac >= th["holds"]:
        verdict, reason = HOLDS, f"{k}/{n} cases ({q})"
    elif frac >= th["partly"]:
        verdict, reason = PARTLY, f"only {k}/{n} cases ({q}); {100 * th['holds']:.0f} % needed to hold"
    else:
        return NOT_REPRODUCED, f"{k}/{n} cases ({q}), below {100 * th['partly']:.0f} %", margin
    if "chance" not in th:
        return verdict, reason, margin
    p = binomial_tail(k, n, float(th["chance"]))
    margin = closest(margin, rel_distance(p, CHANCE_LEVEL))
    if p >= CHANCE_LEVEL:
        return INCONCLUSIVE, (f"{reason}, but chance ({100 * th['chance']:.0f} % per case) gives ≥ {k}/{n} with "
                              f"p = {p:.3g} ≥ {CHANCE_LEVEL:g}: not distinguishable from luck"), margin
    return verdict, f"{reason}; beats chance ({100 * th['chance']:.0f} % per case): one-sided binomial p = {p:.3g}", margin


def _describe_errors(th: dict, q: str) -> str:
    return (f"holds if the mean {q} ≤ {short_number(th['holds_mean'])} and the worst ≤ {short_number(th['holds_worst'])}, partly if the "
            f"mean ≤ {short_number(th['partly_mean'])}; inconclusive without cases")


@register_rule("errors_at_most", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_errors)
def _errors_at_most(m: dict, th: dict, q: str) -> Judgement:
    """Mean and worst error against their thresholds."""
    bad = missing_inputs(m, "mean", "worst") or too_few_points(m, th)
    if bad:
        return bad
    mean, worst = float(m["mean"]), float(m["worst"])
    margin = closest(rel_distance(mean, th["holds_mean"]), rel_distance(worst, th["holds_worst"]),
                     rel_distance(mean, th["partly_mean"]))
    if mean <= th["holds_mean"] and worst <= th["holds_worst"]:
        return HOLDS, f"mean {short_number(mean)} ≤ {short_number(th['holds_mean'])} and worst {short_number(worst)} ≤ {short_number(th['holds_worst'])}", margin
    if mean <= th["partly_mean"]:
        return (PARTLY, f"mean {short_number(mean)}, worst {short_number(worst)}: within the partly band (mean ≤ {short_number(th['partly_mean'])})",
                margin)
    return NOT_REPRODUCED, f"mean {short_number(mean)} > {short_number(th['partly_mean'])}", margin


def _describe_set(th: dict, q: str) -> str:
    return f"holds if the {q} found equal the expected ones exactly, partly if at least half are found; inconclusive if none is expected"


@register_rule("set_match", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_set)
def _set_match(m: dict, th: dict, q: str) -> Judgement:
    """``shared`` of ``expected`` items found, ``extra`` unexpected ones."""
    bad = missing_inputs(m, "expected", "shared", "extra")
    if bad:
        return bad
    e, s, x = int(m["expected"]), int(m["shared"]), int(m["extra"])
    if e <= 0:
        return INCONCLUSIVE, f"no expected {q} to compare with"
    margin = closest(rel_distance(s / e, 0.5))  # the exact match is a count with nothing near it but the half
    if s == e and x == 0:
        return HOLDS, f"all {e} expected {q} found, none extra", margin
    if s >= e / 2:
        return PARTLY, f"{s}/{e} expected {q} found, {x} extra", margin
    return NOT_REPRODUCED, f"only {s}/{e} expected {q} found, {x} extra", margin
