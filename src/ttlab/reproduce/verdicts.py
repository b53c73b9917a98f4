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

Imports: the standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "HOLDS",
    "INCONCLUSIVE",
    "KINDS",
    "NOT_REPRODUCED",
    "PARTLY",
    "RULES",
    "VERDICTS",
    "NEAR",
    "Rule",
    "assess",
    "binomial_tail",
    "closest",
    "conditions_met",
    "count_by_kind",
    "headline",
    "judge",
    "make_claim",
    "missing_claim",
    "near_threshold_claims",
    "rejudge",
    "rel_distance",
]

HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE = "holds", "partly", "not reproduced", "inconclusive"
VERDICTS = (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE)
PAPER_CLAIM, CHECK, ABLATION = "paper", "check", "ablation"
KINDS = (PAPER_CLAIM, CHECK, ABLATION)
"""What a claim is: a statement of the paper, a check of our own tools or run, or an ablation beyond the paper."""

Judgement = tuple  # (verdict, reason) or (verdict, reason, margin)
"""(verdict, reason[, margin]): ``margin`` is the relative distance of the deciding number to the nearest
threshold it was compared with (see :func:`closest`); a rule returning two items has no margin."""

NEAR = 0.10
"""A verdict whose margin is below this (within 10 % of a threshold) is flagged ``near_threshold``."""


@dataclass(frozen=True)
class Rule:
    """A named verdict rule: ``judge(measured, thresholds, quantity) -> (verdict, reason[, margin])`` and
    ``describe(thresholds, quantity) -> text``; ``outcomes`` lists every verdict it can give."""

    name: str
    outcomes: tuple[str, ...]
    judge: Callable[[dict, dict, str], Judgement]
    describe: Callable[[dict, str], str]


RULES: dict[str, Rule] = {}


def _rule(name: str, outcomes: Sequence[str], describe: Callable[[dict, str], str]):
    def deco(fn: Callable[[dict, dict, str], Judgement]) -> Callable[[dict, dict, str], Judgement]:
        RULES[name] = Rule(name=name, outcomes=tuple(outcomes), judge=fn, describe=describe)
        return fn

    return deco


def _num(x: Any) -> float | None:
    """A finite float, or None (missing, NaN, inf, not a number)."""
    if isinstance(x, bool) or x is None:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _missing(measured: dict, *names: str) -> Judgement | None:
    gone = [n for n in names if _num(measured.get(n)) is None]
    if gone:
        return INCONCLUSIVE, f"missing or non-finite input: {', '.join(gone)}"
    return None


def _n_capped(measured: dict) -> int:
    """``measured['n_capped']`` — how many of the judged runs or fits stopped at their step cap — as an int
    (0 when absent or not a positive finite number)."""
    n = _num(measured.get("n_capped"))
    return math.ceil(n) if n is not None and n > 0 else 0  # any positive count decides, as before


def _g(x: float) -> str:
    return f"{x:.4g}"


def rel_distance(x: Any, t: Any, complement: bool = False) -> float | None:
    """Relative distance |x − t| / |t| of a deciding number ``x`` to a threshold ``t`` (None when either is
    not finite or ``t`` is 0: a comparison with 0 — a sign, "every case" — has no relative scale).

    ``complement``: measure on 1 − x against 1 − t (cosines, R², fractions near 1: a cosine of 0.9995 is
    half-way between the thresholds 0.999 and 1, not 0.05 % from 0.999)."""
    x, t = _num(x), _num(t)
    if x is None or t is None:
        return None
    if complement:
        x, t = 1.0 - x, 1.0 - t
    if t == 0:
        return None
    return abs(x - t) / abs(t)


def closest(*distances: float | None) -> float | None:
    """The margin of a verdict: the smallest of the relative distances given (None entries are skipped;
    None when there is none)."""
    ds = [d for d in distances if d is not None and math.isfinite(d)]
    return min(ds) if ds else None


def _too_few(measured: dict, thresholds: dict) -> Judgement | None:
    """Inconclusive when ``measured['n']`` (how many items the value summarises) < ``thresholds['min_n']``."""
    if "n" not in measured:
        return None
    n, need = measured.get("n"), thresholds.get("min_n", 1)
    if _num(n) is None or n < need:
        return INCONCLUSIVE, f"only {n} item(s) to judge (need ≥ {need})"
    return None


# ---------------------------------------------------------------------------------------------
# generic thresholds


def _threshold_rule(name: str, sign: int) -> None:
    """Register ``at_least`` (sign +1: larger is better) or ``at_most`` (sign −1): ``value`` meets holds →
    holds; meets partly → partly; else not reproduced; inconclusive when missing or covering too few items."""
    ok, bad_word, worse = ("≥", "below", "<") if sign > 0 else ("≤", "above", ">")

    def describe(th: dict, q: str) -> str:
        s = f"holds if {q} {ok} {_g(th['holds'])}"
        if "partly" in th:
            s += f", partly if {ok} {_g(th['partly'])}"
        if "control_margin" in th:
            s += (f"; a holds/partly verdict is inconclusive unless {q} beats every control measured in the same "
                  f"run (uniform or random attention, an untrained model) by at least {_g(th['control_margin'])}: "
                  "a trivial model must fail the claim")
        return s + "; inconclusive if the measurement is missing" + (
            f" or covers fewer than {th['min_n']} items" if th.get("min_n", 1) > 1 else " or covers no item")

    def meets(v: float, bound: float) -> bool:
        return sign * v >= sign * bound

    @_rule(name, (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), describe)
    def judge_threshold(m: dict, th: dict, q: str) -> Judgement:
        bad = _missing(m, "value") or _too_few(m, th)
        if bad:
            return bad
        v = float(m["value"])
        comp = bool(th.get("complement"))
        margin = closest(*(rel_distance(v, th[k], comp) for k in ("holds", "partly") if k in th))
        if meets(v, th["holds"]):
            verdict, reason = HOLDS, f"{q} = {_g(v)} {ok} {_g(th['holds'])}"
        elif "partly" in th and meets(v, th["partly"]):
            verdict, reason = PARTLY, f"{q} = {_g(v)} is {bad_word} {_g(th['holds'])} but {ok} {_g(th['partly'])}"
        else:
            return NOT_REPRODUCED, f"{q} = {_g(v)} {worse} {_g(th.get('partly', th['holds']))}", margin
        if "control_margin" not in th:
            return verdict, reason, margin
        return _beyond_controls(verdict, reason, margin, v, sign, m.get("controls"), float(th["control_margin"]))


def _beyond_controls(verdict: str, reason: str, margin: float | None, v: float, sign: int, controls: Any,
                     need: float) -> Judgement:
    """A holds/partly verdict kept only when ``v`` beats every control (``{name: value}``, measured in the same
    run) by at least ``need`` in the claim's direction; otherwise inconclusive, saying which control came close.
    The margin then also counts the distance of the lead over the best control to ``need``."""
    vals = {k: _num(x) for k, x in (controls or {}).items()} if isinstance(controls, dict) else {}
    if not vals or any(x is None for x in vals.values()):
        gone = sorted(k for k, x in vals.items() if x is None)
        return INCONCLUSIVE, (f"{reason}, but the control{'s' if len(gone) != 1 else ''} "
                              f"{', '.join(gone) or '(none given)'} {'are' if len(gone) != 1 else 'is'} missing: "
                              "cannot tell it from a trivial model"), margin
    best = max(vals, key=lambda k: sign * vals[k])  # type: ignore[operator]
    lead = sign * (v - vals[best])  # type: ignore[operator]
    margin = closest(margin, rel_distance(lead, need))
    text = ", ".join(f"{k} {_g(x)}" for k, x in vals.items())  # type: ignore[arg-type]
    if lead < need:
        return INCONCLUSIVE, (f"{reason}, but the control {best} reaches {_g(vals[best])} (lead {lead:+.3g} < "
                              f"{_g(need)}; controls: {text}): a trivial model nearly meets it too"), margin
    return verdict, f"{reason}; beats every control by ≥ {_g(need)} (lead {lead:+.3g} over {best}; {text})", margin


_threshold_rule("at_least", +1)
_threshold_rule("at_most", -1)


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


@_rule("count", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_count)
def _count(m: dict, th: dict, q: str) -> Judgement:
    """``passed`` of ``total`` cases: fraction ≥ holds → holds, ≥ partly → partly; with ``chance`` p0 in the
    thresholds a holds/partly count must also reject chance (one-sided binomial test at 5 %), else inconclusive.
    Margin: on the fraction's complement (1 − k/n against 1 − threshold)."""
    bad = _missing(m, "passed", "total")
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
    return (f"holds if the mean {q} ≤ {_g(th['holds_mean'])} and the worst ≤ {_g(th['holds_worst'])}, partly if the "
            f"mean ≤ {_g(th['partly_mean'])}; inconclusive without cases")


@_rule("errors_at_most", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_errors)
def _errors_at_most(m: dict, th: dict, q: str) -> Judgement:
    """Mean and worst error against their thresholds."""
    bad = _missing(m, "mean", "worst") or _too_few(m, th)
    if bad:
        return bad
    mean, worst = float(m["mean"]), float(m["worst"])
    margin = closest(rel_distance(mean, th["holds_mean"]), rel_distance(worst, th["holds_worst"]),
                     rel_distance(mean, th["partly_mean"]))
    if mean <= th["holds_mean"] and worst <= th["holds_worst"]:
        return HOLDS, f"mean {_g(mean)} ≤ {_g(th['holds_mean'])} and worst {_g(worst)} ≤ {_g(th['holds_worst'])}", margin
    if mean <= th["partly_mean"]:
        return (PARTLY, f"mean {_g(mean)}, worst {_g(worst)}: within the partly band (mean ≤ {_g(th['partly_mean'])})",
                margin)
    return NOT_REPRODUCED, f"mean {_g(mean)} > {_g(th['partly_mean'])}", margin


def _describe_set(th: dict, q: str) -> str:
    return f"holds if the {q} found equal the expected ones exactly, partly if at least half are found; inconclusive if none is expected"


@_rule("set_match", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_set)
def _set_match(m: dict, th: dict, q: str) -> Judgement:
    """``shared`` of ``expected`` items found, ``extra`` unexpected ones."""
    bad = _missing(m, "expected", "shared", "extra")
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


# ---------------------------------------------------------------------------------------------
# rates and exponents


def _describe_exp_decay(th: dict, q: str) -> str:
    return (f"holds if {q} decays exponentially at a fitted rate ≥ the reference rate with R² ≥ {_g(th['min_r2'])}, "
            "partly if it decays (rate > 0) but slower or less cleanly; not reproduced if it does not decay; "
            "inconclusive without a fit")


@_rule("exp_decay", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_exp_decay)
def _exp_decay(m: dict, th: dict, q: str) -> Judgement:
    """Fitted exponential ``rate`` (with ``r2``) against ``reference_rate`` (0 = any decay)."""
    bad = _missing(m, "rate", "r2", "reference_rate")
    if bad:
        return bad
    rate, r2, ref = float(m["rate"]), float(m["r2"]), float(m["reference_rate"])
    margin = closest(rel_distance(rate, ref), rel_distance(r2, th["min_r2"], True))
    if rate <= 0:
        return NOT_REPRODUCED, f"{q} does not decay (fitted rate {_g(rate)})", margin
    if rate >= ref and r2 >= th["min_r2"]:
        return HOLDS, f"rate {_g(rate)} ≥ reference {_g(ref)}, R² {r2:.3f}", margin
    return PARTLY, f"rate {_g(rate)} (reference {_g(ref)}), R² {r2:.3f} (need ≥ {_g(th['min_r2'])})", margin


def _describe_exp_vs_power(th: dict, q: str) -> str:
    return (f"on the last decade of steps, log({q}) is fitted linearly in t (exponential: linear convergence) and in "
            f"log t (power law); with D = log10((1 − R²_power)/(1 − R²_exp)) (decades by which the exponential leaves "
            f"less unexplained variance): holds if the gap decays, D ≥ {_g(th['min_decades'])} and R²_exp ≥ "
            f"{_g(th['min_r2'])}; partly if D ≥ {_g(th['min_decades'])} with a lower R²_exp; not reproduced if the "
            f"gap does not decay or the power law wins by as much (D ≤ −{_g(th['min_decades'])}); inconclusive when "
            f"neither shape wins clearly or with fewer than {th.get('min_points', 10)} points")


@_rule("exp_vs_power", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_exp_vs_power)
def _exp_vs_power(m: dict, th: dict, q: str) -> Judgement:
    """Linear convergence told from a power law: fitted exponential ``rate`` with ``r2_exp`` against a power law's
    ``r2_power`` on the same ``n_points`` steps (``t0``…``t1``, optional, quoted)."""
    bad = _missing(m, "rate", "r2_exp", "r2_power", "n_points")
    if bad:
        return bad
    rate, r2e, r2p, n = float(m["rate"]), float(m["r2_exp"]), float(m["r2_power"]), int(m["n_points"])
    if n < th.get("min_points", 10):
        return INCONCLUSIVE, f"only {n} points on the last decade (need ≥ {th.get('min_points', 10)})"
    k = float(th["min_decades"])
    res_e, res_p = max(1.0 - r2e, 1e-300), max(1.0 - r2p, 1e-300)
    dec = math.log10(res_p / res_e)
    where = f" on t = {_g(m['t0'])}…{_g(m['t1'])}" if _num(m.get("t0")) is not None and _num(m.get("t1")) is not None else ""
    fits = f"R² exponential {r2e:.5f} vs power law {r2p:.5f}{where} (D = {dec:+.2f} decades)"
    margin = closest(rel_distance(dec, k), rel_distance(dec, -k), rel_distance(r2e, th["min_r2"], True))
    if rate <= 0:
        return NOT_REPRODUCED, f"{q} does not decay (fitted rate {_g(rate)}); {fits}", margin
    if dec >= k:
        if r2e >= th["min_r2"]:
            return HOLDS, f"the exponential wins clearly: {fits}; rate {_g(rate)} per step", margin
        return PARTLY, f"the exponential wins ({fits}) but R²_exp < {_g(th['min_r2'])}", margin
    if dec <= -k:
        return NOT_REPRODUCED, f"a power law fits clearly better: {fits}", margin
    return INCONCLUSIVE, f"neither shape wins by {_g(k)} decade(s): {fits}", margin


def _describe_direction(th: dict, q: str) -> str:
    return (f"holds if 1 − cos is at floating-point zero, or the final cosine ≥ {_g(th['min_cosine'])} and the local "
            f"log-log slope of 1 − cos over the last decade of steps is at most the theory's ({q}) + {_g(th['slack'])}; "
            "partly if 1 − cos falls (slope < −0.1) but slower or not yet close; not reproduced if it does not fall; "
            "inconclusive without a slope")


@_rule("direction_rate", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_direction)
def _direction_rate(m: dict, th: dict, q: str) -> Judgement:
    """1 − cos to the max-margin direction falls at least as fast as the theorem's rate."""
    bad = _missing(m, "final_cosine")
    if bad:
        return bad
    c = float(m["final_cosine"])
    if 1.0 - c <= th.get("exact", 1e-12):
        return HOLDS, f"final cosine {c:.12f}: on the max-margin direction to rounding"
    bad = _missing(m, "slope", "theory_slope")
    if bad:
        return bad
    s, s_th = float(m["slope"]), float(m["theory_slope"])
    margin = closest(rel_distance(s, s_th + th["slack"]), rel_distance(c, th["min_cosine"], True), rel_distance(s, -0.1))
    if s <= s_th + th["slack"] and c >= th["min_cosine"]:
        return HOLDS, f"slope {s:.3f} ≤ theory {s_th:.3f} + {_g(th['slack'])}, final cosine {c:.6f}", margin
    if s < -0.1:
        return (PARTLY, f"1 − cos falls (slope {s:.3f}) but theory {s_th:.3f} + {_g(th['slack'])} / cosine {c:.6f} "
                        "not met", margin)
    return NOT_REPRODUCED, f"1 − cos does not fall (slope {s:.3f})", margin


def _describe_power(th: dict, q: str) -> str:
    return (f"holds if the 95 % interval of the fitted exponent of {q} excludes 0 (decay) and R² (log) ≥ "
            f"{_g(th['min_r2'])}; partly if it excludes 0 with a lower R²; not reproduced if it lies below 0 "
            f"(the loss grows); inconclusive with fewer than {th['min_points']} points, an interval containing 0 or "
            "any fitted run stopped by its step cap (the slope is then the budget's, not the law's)")


@_rule("power_law_decay", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_power)
def _power_law_decay(m: dict, th: dict, q: str) -> Judgement:
    """A fitted power-law exponent ``alpha`` with interval [``lo``, ``hi``], ``r2`` and ``n_points``."""
    bad = _missing(m, "alpha", "n_points")
    if bad:
        return bad
    if m["n_points"] < th["min_points"]:
        return INCONCLUSIVE, f"only {m['n_points']} points (need ≥ {th['min_points']})"
    if _n_capped(m):
        return INCONCLUSIVE, f"{_n_capped(m)} fitted run(s) hit the step cap: the slope is budget-limited"
    bad = _missing(m, "lo", "hi", "r2")
    if bad:
        return bad
    lo, hi, r2 = float(m["lo"]), float(m["hi"]), float(m["r2"])
    # the interval's end nearest 0, relative to the interval's width (how far the decision is from flipping)
    edge = closest(abs(lo) / (hi - lo) if hi > lo else None, abs(hi) / (hi - lo) if hi > lo else None)
    margin = closest(edge, rel_distance(r2, th["min_r2"], True))
    if hi < 0:
        return NOT_REPRODUCED, f"interval [{_g(lo)}, {_g(hi)}] lies below 0: the loss grows", margin
    if lo <= 0:
        return INCONCLUSIVE, f"interval [{_g(lo)}, {_g(hi)}] contains 0: cannot tell decay from none", margin
    if r2 >= th["min_r2"]:
        return HOLDS, f"interval [{_g(lo)}, {_g(hi)}] excludes 0, R² {r2:.3f}", margin
    return PARTLY, f"interval [{_g(lo)}, {_g(hi)}] excludes 0 but R² {r2:.3f} < {_g(th['min_r2'])}", margin


def _fit_problem(m: dict, th: dict, p: float) -> str | None:
    """Why a fitted exponent cannot be judged against the prediction ``p``, or None.

    Too few fitted points (``n_points`` < ``min_points``, default 2), runs stopped by the step cap
    (``n_capped``), or an interval (``lo``/``hi``, when either is given) missing or wider than the
    partly band (2 × ``partly_rel`` × |p|)."""
    if "n_points" in m and (_num(m["n_points"]) is None or m["n_points"] < th.get("min_points", 2)):
        return f"only {m['n_points']} fitted points (need ≥ {th.get('min_points', 2)})"
    if _n_capped(m):
        return f"{_n_capped(m)} fitted run(s) hit the step cap: the exponent is budget-limited"
    if "lo" in m or "hi" in m:
        bad = _missing(m, "lo", "hi")
        if bad:
            return f"no interval for the fitted exponent ({bad[1]})"
        width = float(m["hi"]) - float(m["lo"])
        if width > 2 * th["partly_rel"] * abs(p):
            return (f"the interval [{_g(m['lo'])}, {_g(m['hi'])}] (width {_g(width)}) is wider than the partly band "
                    f"±{100 * th['partly_rel']:.0f} % of {_g(p)}: cannot discriminate")
    return None


def _width_margin(m: dict, th: dict, p: float) -> float | None:
    """Relative distance of a fitted interval's width to the partly band 2 × partly_rel × |p| (None without one)."""
    lo, hi = _num(m.get("lo")), _num(m.get("hi"))
    if lo is None or hi is None:
        return None
    return rel_distance(hi - lo, 2 * th["partly_rel"] * abs(p))


def _describe_exponent(th: dict, q: str) -> str:
    s = (f"holds if |fitted − predicted| ≤ {100 * th['holds_rel']:.0f} % of the prediction ({q}), partly if ≤ "
         f"{100 * th['partly_rel']:.0f} %; inconclusive if the fitted exponent's interval is wider than the partly "
         f"band (2 × {100 * th['partly_rel']:.0f} % of the prediction)")
    if "min_points" in th:
        s += f", the fit has fewer than {th['min_points']} points, or any fitted run hit its step cap"
    return s


@_rule("exponent_match", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_exponent)
def _exponent_match(m: dict, th: dict, q: str) -> Judgement:
    """A fitted exponent (``fitted``, optional interval ``lo``/``hi``) against ``predicted``.

    Optional ``n_points`` (too few → inconclusive), ``n_capped`` (runs stopped by the step cap →
    inconclusive), ``band_lo``/``band_hi`` (the prediction's range over ID estimators, quoted in the reason).
    """
    bad = _missing(m, "fitted", "predicted")
    if bad:
        return bad
    a, p = float(m["fitted"]), float(m["predicted"])
    if p == 0:
        return INCONCLUSIVE, "the prediction is 0: no relative tolerance"
    rel = abs(a - p) / abs(p)
    band = ""
    if _num(m.get("band_lo")) is not None and _num(m.get("band_hi")) is not None:
        inside = m["band_lo"] <= a <= m["band_hi"]
        band = (f"; {'inside' if inside else 'outside'} the ID estimators' prediction band "
                f"[{_g(m['band_lo'])}, {_g(m['band_hi'])}]")
    if _num(th.get("paper_abs")) is not None:
        band += f"; {'within' if abs(a - p) <= th['paper_abs'] else 'outside'} the paper's ±{_g(th['paper_abs'])}"
    margin = closest(rel_distance(rel, th["holds_rel"]), rel_distance(rel, th["partly_rel"]), _width_margin(m, th, p))
    problem = _fit_problem(m, th, p)
    if problem:
        return INCONCLUSIVE, problem + band, margin
    delta = f"fitted {_g(a)} vs predicted {_g(p)}: Δ = {a - p:+.3g} ({100 * rel:.0f} %)"
    if rel <= th["holds_rel"]:
        return HOLDS, delta + band, margin
    if rel <= th["partly_rel"]:
        return PARTLY, delta + band, margin
    return NOT_REPRODUCED, delta + band, margin


# ---------------------------------------------------------------------------------------------
# shapes of profiles


def _se_list(m: dict, n: int) -> list[float] | None:
    se = m.get("se")
    if se is None:
        return None
    vals = [_num(x) for x in se]
    if len(vals) != n or any(v is None for v in vals):
        return None
    return [float(v) for v in vals]  # type: ignore[arg-type]


def _profile(m: dict, need: int, shape: str, need_se: bool = True
             ) -> tuple[list[float], list[float] | None, Judgement | None]:
    """``values`` as floats and their standard errors ``se`` (None when absent or incomplete), or an
    inconclusive judgement when fewer than ``need`` finite values are given, or when ``need_se`` and
    there are no standard errors (a ``shape`` such as "a peak" cannot be told from noise)."""
    raw = [_num(v) for v in m.get("values") or []]
    if len(raw) < need or any(v is None for v in raw):
        return [], None, (INCONCLUSIVE, f"{len(raw)} value(s), some missing: need ≥ {need} finite values")
    vals = [float(v) for v in raw]  # type: ignore[arg-type]
    se = _se_list(m, len(vals))
    if se is None and need_se:
        return vals, None, (INCONCLUSIVE, f"no standard errors for the values (e.g. a single ID batch): cannot tell "
                                          f"{shape} from noise")
    return vals, se, None


def _describe_monotone(th: dict, q: str) -> str:
    way = "rises" if th["direction"] > 0 else "falls"
    return (f"holds if {q} {way} from the first to the last value by more than their combined standard error and no "
            "step goes clearly (beyond its standard error) the other way; partly if it does so overall but some step "
            "goes clearly the other way; not reproduced if it moves clearly the other way overall; inconclusive if the "
            "overall change is within the standard error (or there are fewer than 2 values or no standard errors)")


def _capped(m: dict) -> Judgement | None:
    """Inconclusive when ``measured['n_capped']`` > 0: values fitted on step-capped runs are budget-limited."""
    n = _n_capped(m)
    if n:
        return INCONCLUSIVE, f"{n} of the compared values come from fits that include step-capped runs: budget-limited"
    return None


@_rule("monotone", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_monotone)
def _monotone(m: dict, th: dict, q: str) -> Judgement:
    """``values`` (ordered) with standard errors ``se`` move in ``direction`` (+1 up, −1 down); inconclusive
    when ``n_capped`` of them come from step-capped fits."""
    vals, se, bad = _profile(m, 2, "a change", th.get("need_se", True))
    bad = bad or _capped(m)
    if bad:
        return bad
    se = se or [0.0] * len(vals)
    sgn = 1.0 if th["direction"] > 0 else -1.0
    v = [sgn * x for x in vals]  # type: ignore[operator]
    overall, s_all = v[-1] - v[0], math.hypot(se[0], se[-1])
    listing = ", ".join(f"{x:.3g}" for x in vals)  # type: ignore[union-attr]
    margin = closest(rel_distance(abs(overall), s_all))  # the overall change against its standard error
    if overall < -s_all:
        return NOT_REPRODUCED, f"{listing}: moves the other way overall ({abs(overall):.3g} > SE {s_all:.2g})", margin
    if overall <= s_all:
        return INCONCLUSIVE, f"{listing}: overall change {overall * sgn:+.3g} within SE {s_all:.2g}", margin
    against = [i for i in range(len(v) - 1) if v[i + 1] - v[i] < -math.hypot(se[i], se[i + 1])]
    if against:
        return (PARTLY, f"{listing}: overall change {overall * sgn:+.3g} (SE {s_all:.2g}) but {len(against)} step(s) go "
                        "the other way", margin)
    return HOLDS, f"{listing}: overall change {overall * sgn:+.3g} (SE {s_all:.2g}), no step clearly against", margin


def _describe_peak(th: dict, q: str) -> str:
    return (f"holds if an inner {q} exceeds both the first and the last by more than their combined standard error; "
            "partly if it clearly exceeds one end and ties the other (within the standard error); not reproduced if "
            "an end clearly exceeds every inner value; inconclusive otherwise (ties at both ends, fewer than 3 values, "
            "no standard errors)")


@_rule("inner_peak", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_peak)
def _inner_peak(m: dict, th: dict, q: str) -> Judgement:
    """``values`` (e.g. ID per layer) with standard errors ``se`` peak strictly inside."""
    vals, se, bad = _profile(m, 3, "a peak")
    if bad:
        return bad
    inner = max(range(1, len(vals) - 1), key=lambda i: vals[i])  # type: ignore[arg-type,return-value]
    pk = float(vals[inner])  # type: ignore[arg-type]

    def side(j: int) -> str:
        d, s = pk - float(vals[j]), math.hypot(se[inner], se[j])  # type: ignore[arg-type]
        return "above" if d > s else ("below" if d < -s else "tie")

    def dist(j: int) -> float | None:
        return rel_distance(abs(pk - float(vals[j])), math.hypot(se[inner], se[j]))  # type: ignore[arg-type]

    margin = closest(dist(0), dist(len(vals) - 1))
    a, b = side(0), side(len(vals) - 1)
    desc = f"inner maximum {pk:.3g} at position {inner} vs ends {vals[0]:.3g}, {vals[-1]:.3g}"
    if a == b == "above":
        return HOLDS, desc + ": above both ends beyond the standard error", margin
    if "below" in (a, b):
        return NOT_REPRODUCED, desc + ": an end is clearly above every inner value", margin
    if "above" in (a, b):
        return PARTLY, desc + ": clearly above one end, tied with the other", margin
    return INCONCLUSIVE, desc + ": within the standard error of both ends", margin


def _describe_attention(th: dict, q: str) -> str:
    clear = th.get("min_clearance", 0.0)
    return ("not reproduced if the final minimum attention on optimal tokens is below the theorem's bound "
            "1/(1 + L_max·exp(−C1 t)); inconclusive if the bound does not clear the uniform-attention baseline of the "
            f"same sentences (the control: W_kq = 0, no training) by at least {_g(clear)} (a bound that uniform "
            "attention nearly meets says nothing); otherwise holds if the attention gap decays at a fitted rate ≥ C1, "
            "partly if not")


@_rule("attention_bound", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_attention)
def _attention_bound(m: dict, th: dict, q: str) -> Judgement:
    """Theorem 2's attention bound judged against the uniform-attention baseline (the control): the bound must
    exceed it by ``min_clearance`` (default 0) for meeting the bound to say anything."""
    bad = _missing(m, "attention", "bound", "baseline")
    if bad:
        return bad
    att, bound, base = float(m["attention"]), float(m["bound"]), float(m["baseline"])
    clear = float(th.get("min_clearance", 0.0))
    rate, c1 = _num(m.get("gap_rate")), _num(m.get("c1"))
    margin = closest(rel_distance(att, bound), rel_distance(bound - base, clear), rel_distance(rate, c1))
    if att < bound:
        return NOT_REPRODUCED, f"attention {att:.4f} < bound {bound:.4f}", margin
    if bound - base < clear or bound <= base:
        return INCONCLUSIVE, (f"bound {bound:.4f} clears the uniform-attention baseline {base:.4f} by "
                              f"{bound - base:+.4f} < {_g(clear)}: uniform attention (no training) nearly meets it, so "
                              f"meeting it says nothing (attention {att:.4f})"), margin
    if rate is not None and c1 is not None and rate >= c1:
        return HOLDS, (f"attention {att:.4f} ≥ bound {bound:.4f}, which clears the uniform baseline {base:.4f} by "
                       f"{bound - base:.4f} ≥ {_g(clear)}; gap rate {_g(rate)} ≥ C1 {_g(c1)}"), margin
    return PARTLY, (f"attention {att:.4f} ≥ bound {bound:.4f} (baseline {base:.4f} + {bound - base:.4f}), but gap rate "
                    f"{'—' if rate is None else _g(rate)} < C1 {'—' if c1 is None else _g(c1)}"), margin


def _describe_agree(th: dict, q: str) -> str:
    return (f"holds if the 95 % intervals of {q} overlap and the point estimates lie within {_g(th['max_spread'])}; "
            "partly if only one of the two holds; not reproduced if neither; inconclusive with fewer than 2 intervals "
            f"or when overlapping intervals include one wider than the tolerance {_g(th['max_spread'])} (overlap of "
            "wide intervals cannot show agreement within the tolerance)")


@_rule("intervals_agree", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_agree)
def _intervals_agree(m: dict, th: dict, q: str) -> Judgement:
    """Estimates ``values`` with intervals ``intervals`` ([lo, hi] each) agree across settings; inconclusive
    when ``n_capped`` of them come from step-capped fits."""
    vals = [_num(v) for v in m.get("values") or []]
    ivs = [iv for iv in (m.get("intervals") or []) if iv and _num(iv[0]) is not None and _num(iv[1]) is not None]
    if len(ivs) < 2 or len(vals) != len(ivs) or any(v is None for v in vals):
        return INCONCLUSIVE, f"{len(ivs)} usable interval(s): need ≥ 2"
    capped = _capped(m)
    if capped:
        return capped
    overlap = max(iv[0] for iv in ivs) <= min(iv[1] for iv in ivs)
    spread = max(vals) - min(vals)  # type: ignore[type-var,operator]
    tol = float(th["max_spread"])
    close = spread <= tol
    width = max(float(iv[1]) - float(iv[0]) for iv in ivs)
    margin = closest(rel_distance(spread, tol), rel_distance(width, tol))
    desc = f"spread {spread:.3g}, intervals {'overlap' if overlap else 'do not overlap'}"
    if width > tol and overlap:  # disjoint intervals still show a difference, however wide
        return INCONCLUSIVE, (f"{desc}, but the widest interval ({width:.3g}) is wider than the tolerance {_g(tol)}: "
                              "their overlap cannot show agreement within the tolerance"), margin
    if overlap and close:
        return HOLDS, desc, margin
    if overlap or close:
        return PARTLY, desc, margin
    return NOT_REPRODUCED, desc, margin


@_rule("unjudgeable", (INCONCLUSIVE,),
       lambda th, q: "inconclusive: the numbers this claim needs are not available (the reason says why)")
def _unjudgeable(m: dict, th: dict, q: str) -> Judgement:
    """A claim whose inputs are missing (a sub-experiment did not run, stored numbers of an older schema)."""
    return INCONCLUSIVE, str(m.get("why") or "inputs missing")


# ---------------------------------------------------------------------------------------------
# exponents judged only where an oracle shows the design can show them


def _describe_oracle(th: dict, q: str) -> str:
    tol = _g(th["oracle_tol"])
    if th.get("bound"):
        return (f"bound form (noiseless regime): inconclusive if the oracle's slope is below the theory's exponent ({q}) "
                f"by more than {tol} (the design cannot show the bound); otherwise holds if the fitted exponent ≥ "
                f"(1 − {100 * th['holds_rel']:.0f} %) × theory, partly if ≥ (1 − {100 * th['partly_rel']:.0f} %) × theory, "
                f"not reproduced below; inconclusive if its interval is wider than 2 × {100 * th['partly_rel']:.0f} % of "
                f"the theory, the fit has fewer than {th.get('min_points', 2)} points or a fitted run hit its step cap"
                + _data_clause(th))
    return (f"inconclusive unless the oracle's slope lies within ±{tol} of the theory's exponent ({q}) — design not in "
            f"the asymptotic regime; then holds if |fitted − theory| ≤ {100 * th['holds_rel']:.0f} % of the theory, "
            f"partly if ≤ {100 * th['partly_rel']:.0f} %, not reproduced beyond; inconclusive if the fitted interval is "
            f"wider than 2 × {100 * th['partly_rel']:.0f} % of the theory, the fit has fewer than "
            f"{th.get('min_points', 2)} points or a fitted run hit its step cap" + _data_clause(th))


def _data_clause(th: dict) -> str:
    if "max_data_change" not in th:
        return ""
    return (f"; inconclusive if the widest model is data-limited (its loss at 2n differs from that at n by more than "
            f"{100 * th['max_data_change']:.0f} %)")


def _oracle_margin(m: dict, th: dict) -> float | None:
    """Margin of :func:`_oracle_validated_exponent`: the oracle's miss against its tolerance, the fitted exponent's
    relative error against the holds/partly bands, the interval's width against the partly band and the data check."""
    p, o = _num(m.get("predicted")), _num(m.get("oracle"))
    if p is None or o is None or p <= 0:
        return None
    bound = bool(th.get("bound"))
    a = _num(m.get("fitted"))
    rel = None if a is None else ((p - a) / p if bound else abs(a - p) / p)
    ratio = _num(m.get("data_ratio"))
    return closest(rel_distance(p - o if bound else abs(o - p), th["oracle_tol"]),
                   rel_distance(rel, th["holds_rel"]), rel_distance(rel, th["partly_rel"]), _width_margin(m, th, p),
                   rel_distance(abs(ratio - 1.0), th["max_data_change"]) if ratio is not None and "max_data_change" in th
                   else None)


@_rule("oracle_validated_exponent", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_oracle)
def _oracle_validated_exponent(m: dict, th: dict, q: str) -> Judgement:
    """See :func:`_oracle_core` (the verdict) and :func:`_oracle_margin` (its distance to the thresholds)."""
    verdict, reason = _oracle_core(m, th)
    return verdict, reason, _oracle_margin(m, th)


def _oracle_core(m: dict, th: dict) -> tuple[str, str]:
    """A network's fitted exponent judged only where an estimator of known rate (the oracle) shows the design
    can exhibit the theory's exponent.

    ``measured``: ``fitted`` (with ``lo``/``hi``), ``predicted``, ``oracle`` (the oracle's fitted slope on the
    same splits), optional ``n_points``, ``n_capped`` and ``data_ratio``. ``thresholds``: ``oracle_tol``
    (absolute), ``holds_rel``/``partly_rel`` (relative to the prediction), ``bound`` (1: the claim is the
    bound fitted ≥ predicted — the noiseless regime, where the minimax rate is faster), ``min_points``,
    and for a model-size exponent ``max_data_change``: inconclusive unless the widest model's loss at 2n
    is within this relative change of its loss at n (``data_ratio``), i.e. the sweep is not data-limited.
    """
    bad = _missing(m, "predicted", "oracle")
    if bad:
        return INCONCLUSIVE, f"no oracle check of the design ({bad[1]})"
    p, o, tol = float(m["predicted"]), float(m["oracle"]), float(th["oracle_tol"])
    if p <= 0:
        return INCONCLUSIVE, "the prediction is not positive: no relative tolerance"
    bound = bool(th.get("bound"))
    miss = o - p
    if bound and miss < -tol:
        return INCONCLUSIVE, (f"design not in the asymptotic regime: the oracle's slope {_g(o)} is shallower than the "
                              f"bound {_g(p)} by {-miss:.3g} > {_g(tol)}")
    if not bound and abs(miss) > tol:
        way = "steeper" if miss > 0 else "shallower"
        return INCONCLUSIVE, (f"design not in the asymptotic regime: the oracle's slope {_g(o)} is {way} than the "
                              f"theory's {_g(p)} by {abs(miss):.3g} > {_g(tol)}")
    design = f"oracle {_g(o)} within {_g(tol)} of {_g(p)}" if not bound else f"oracle {_g(o)} ≥ {_g(p)} − {_g(tol)}"
    if "max_data_change" in th:  # a model-size sweep: the widest model must not be data-limited
        ratio = _num(m.get("data_ratio"))
        if ratio is None:
            return INCONCLUSIVE, f"{design}, but no data-limit check (loss of the widest model at n and 2n)"
        if abs(ratio - 1.0) > th["max_data_change"]:
            return INCONCLUSIVE, (f"{design}, but the widest model is data-limited: its loss at 2n is {ratio:.3g} × "
                                  f"that at n (more than ±{100 * th['max_data_change']:.0f} %)")
        design += f"; widest model not data-limited (loss at 2n / n = {ratio:.3g})"
    bad = _missing(m, "fitted")
    if bad:
        return INCONCLUSIVE, f"{design}, but {bad[1]}"
    a = float(m["fitted"])
    problem = _fit_problem(m, th, p)
    if problem:
        return INCONCLUSIVE, f"{design}, but {problem}"
    rel = (a - p) / p
    delta = f"fitted {_g(a)} vs {_g(p)}: Δ = {a - p:+.3g} ({100 * rel:+.0f} %); {design}"
    if bound:
        if rel >= -th["holds_rel"]:
            return HOLDS, delta + " (the bound holds)"
        if rel >= -th["partly_rel"]:
            return PARTLY, delta + " (below the bound within the partly band)"
        return NOT_REPRODUCED, delta + " (below the bound)"
    if abs(rel) <= th["holds_rel"]:
        return HOLDS, delta
    if abs(rel) <= th["partly_rel"]:
        return PARTLY, delta
    return NOT_REPRODUCED, delta


def _describe_exceeds(th: dict, q: str) -> str:
    z, tail = _g(th.get("z", 1.0)), "inconclusive too when inputs are missing or a fitted run hit its step cap"
    if "direction" in th:  # a profile against the same profile of a trivial control
        return (f"judged as the monotone rule first ({q} {'rises' if th['direction'] > 0 else 'falls'}); then it "
                f"holds (or stays partly) only if its overall change, first to last value, exceeds the control's "
                f"(untrained copies measured the same way) by more than {z} × their combined standard error, "
                f"otherwise inconclusive: the control meets it; {tail}")
    return (f"holds if {q} exceeds the control by more than {z} × their combined standard error (a 95 % interval "
            f"gives the value's), not reproduced if it lies that far below, inconclusive in between; {tail}, or the "
            f"fit has fewer than {th.get('min_points', 2)} points")


def _se_of(m: dict, key: str) -> float | None:
    """Standard error of ``m[key]``: ``m[key + '_se']``, else from a 95 % interval ``lo``/``hi`` (value only)."""
    se = _num(m.get(f"{key}_se"))
    if se is not None:
        return se
    lo, hi = _num(m.get("lo")), _num(m.get("hi"))
    return (hi - lo) / (2 * 1.959964) if key == "value" and lo is not None and hi is not None else None


@_rule("exceeds_control", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_exceeds)
def _exceeds_control(m: dict, th: dict, q: str) -> tuple:
    """A measurement judged against a trivial control measured in the same run.

    Profile form: ``values``/``se`` (ordered, e.g. the ID by model size) and ``control_values``/``control_se``
    (the same for untrained copies); ``direction`` ±1. Single-value form: ``value`` with ``value_se`` or
    ``lo``/``hi``, against ``control`` (± ``control_se``; e.g. a prediction the paper says under-estimates the
    value). Optional ``n_capped`` and ``n_points`` (threshold ``min_points``); threshold ``z`` (default 1)."""
    z = float(th.get("z", 1.0))
    if _n_capped(m):
        return INCONCLUSIVE, f"{_n_capped(m)} fitted run(s) hit the step cap: the measurement is budget-limited"
    if "n_points" in m and (_num(m["n_points"]) is None or m["n_points"] < th.get("min_points", 2)):
        return INCONCLUSIVE, f"only {m['n_points']} fitted points (need ≥ {th.get('min_points', 2)})"
    profile_margin = None
    if "values" in m:
        trend = _monotone(m, {"direction": th["direction"]}, q)  # (verdict, reason[, margin])
        verdict, reason = trend[0], trend[1]
        profile_margin = trend[2] if len(trend) > 2 else None
        if verdict in (NOT_REPRODUCED, INCONCLUSIVE):
            return verdict, reason, profile_margin
        vals, se, _ = _profile(m, 2, "a change")
        cvals, cse, bad = _profile({"values": m.get("control_values"), "se": m.get("control_se")}, 2, "a change")
        if bad:
            return INCONCLUSIVE, f"{reason}; but no usable control ({bad[1]})"
        sgn = 1.0 if th["direction"] > 0 else -1.0
        value, value_se = sgn * (vals[-1] - vals[0]), math.hypot(se[0], se[-1])  # type: ignore[index]
        control, control_se = sgn * (cvals[-1] - cvals[0]), math.hypot(cse[0], cse[-1])  # type: ignore[index]
        what = "change"
    else:
        bad = _missing(m, "value", "control")
        if bad:
            return bad
        value, control = float(m["value"]), float(m["control"])
        value_se, control_se = _se_of(m, "value"), _se_of(m, "control") or 0.0
        if value_se is None:
            return INCONCLUSIVE, "no standard error or interval for the value: cannot tell it from the control"
        verdict, reason, what = HOLDS, f"{_g(value)} (SE {_g(value_se)})", "value"
    diff, s = value - control, z * math.hypot(value_se, control_se)
    versus = (f"{'it' if what == 'value' else 'the change'} {_g(value)} vs the control's {_g(control)} (SE "
              f"{_g(control_se)}): difference {diff:+.3g}, {z:g} × combined SE {s:.2g}")
    # margin: the difference's relative distance to the nearer threshold (±s for a value, +s for a profile,
    # whose own margin counts too)
    edge = abs(abs(diff) - s) if what == "value" else abs(diff - s)
    margins = [x for x in (profile_margin, edge / s if s > 0 else None) if x is not None]
    margin = min(margins) if margins else None
    if diff > s:
        return verdict, f"{reason}; {versus}: beyond the control", margin
    if diff < -s and what == "value":
        return NOT_REPRODUCED, f"{versus}: clearly below the control", margin
    return INCONCLUSIVE, f"{reason}; {versus}: the control meets it, so it is no evidence", margin


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
    margin = _num(out[2]) if len(out) > 2 else None
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
) -> dict:
    """A judged claim record (see the module docstring). ``kind`` is one of :data:`KINDS`; ``cite`` says
    where the paper states a ``paper`` claim; ``summary`` is the measured figure in words, built by the
    caller from the same numbers as ``measured``; ``quantity`` names what is measured."""
    if kind not in KINDS:
        raise ValueError(f"claim {claim_id}: kind must be one of {', '.join(KINDS)}, got {kind!r}")
    rec = {"id": claim_id, "statement": statement, "kind": kind, "cite": cite, "rule_id": rule_id,
           "quantity": quantity, "measured": dict(measured), "thresholds": dict(thresholds or {}), "summary": summary}
    return rejudge(rec)


def rejudge(record: dict) -> dict:
    """The claim record with ``verdict``, ``reason``, ``rule``, ``margin`` and ``near_threshold`` recomputed from
    its stored numbers."""
    return {**record, **assess(record["rule_id"], record["measured"], record["thresholds"],
                               record.get("quantity", "the measured value"))}


def missing_claim(claim_id: str, statement: str, why: str, *, kind: str, cite: str = "") -> dict:
    """An *inconclusive* claim record for a claim whose inputs are missing (it is reported, not dropped)."""
    return make_claim(claim_id, statement, "unjudgeable", {"why": why}, kind=kind, cite=cite,
                      summary=f"not measured: {why}")


def count_by_kind(claims: Sequence[dict]) -> dict[str, dict[str, int]]:
    """``{kind: {verdict: count}}`` for every kind and verdict (zeros included); a record without a kind
    (an older schema) counts as ``check``, never as a paper claim."""
    out = {k: {v: 0 for v in VERDICTS} for k in KINDS}
    for c in claims:
        kind = c.get("kind") if c.get("kind") in KINDS else CHECK
        out[kind][c["verdict"]] = out[kind].get(c["verdict"], 0) + 1
    return out


def _counts_text(counts: dict[str, int]) -> str:
    return (f"{counts[HOLDS]} hold, {counts[PARTLY]} partly, {counts[NOT_REPRODUCED]} not reproduced, "
            f"{counts[INCONCLUSIVE]} inconclusive")


def headline(by_kind: dict[str, dict[str, int]]) -> str:
    """The report's first line on verdicts: the paper claims by verdict, then checks and ablations apart."""
    n = {k: sum(by_kind[k].values()) for k in KINDS}
    return (f"Paper claims ({n[PAPER_CLAIM]}): {_counts_text(by_kind[PAPER_CLAIM])}. Counted apart — checks of "
            f"ttlab's own tools and runs ({n[CHECK]}): {_counts_text(by_kind[CHECK])}; ablations beyond the papers "
            f"({n[ABLATION]}): {_counts_text(by_kind[ABLATION])}.")


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
