"""Verdict rules on single numbers and fits: thresholds with controls (``at_least``/``at_most``), counts against
chance, error counts, set matches, exponential and power-law decay, directions and fitted exponents.
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
    capped_count,
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


# ---------------------------------------------------------------------------------------------
# rates and exponents


def _describe_exp_decay(th: dict, q: str) -> str:
    return (f"holds if {q} decays exponentially at a fitted rate ≥ the reference rate with R² ≥ {short_number(th['min_r2'])}, "
            "partly if it decays (rate > 0) but slower or less cleanly; not reproduced if it does not decay; "
            "inconclusive without a fit")


@register_rule("exp_decay", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_exp_decay)
def _exp_decay(m: dict, th: dict, q: str) -> Judgement:
    """Fitted exponential ``rate`` (with ``r2``) against ``reference_rate`` (0 = any decay)."""
    bad = missing_inputs(m, "rate", "r2", "reference_rate")
    if bad:
        return bad
    rate, r2, ref = float(m["rate"]), float(m["r2"]), float(m["reference_rate"])
    margin = closest(rel_distance(rate, ref), rel_distance(r2, th["min_r2"], True))
    if rate <= 0:
        return NOT_REPRODUCED, f"{q} does not decay (fitted rate {short_number(rate)})", margin
    if rate >= ref and r2 >= th["min_r2"]:
        return HOLDS, f"rate {short_number(rate)} ≥ reference {short_number(ref)}, R² {r2:.3f}", margin
    return PARTLY, f"rate {short_number(rate)} (reference {short_number(ref)}), R² {r2:.3f} (need ≥ {short_number(th['min_r2'])})", margin


def _describe_exp_vs_power(th: dict, q: str) -> str:
    return (f"on the last decade of steps, log({q}) is fitted linearly in t (exponential: linear convergence) and in "
            f"log t (power law); with D = log10((1 − R²_power)/(1 − R²_exp)) (decades by which the exponential leaves "
            f"less unexplained variance): holds if the gap decays, D ≥ {short_number(th['min_decades'])} and R²_exp ≥ "
            f"{short_number(th['min_r2'])}; partly if D ≥ {short_number(th['min_decades'])} with a lower R²_exp; not reproduced if the "
            f"gap does not decay or the power law wins by as much (D ≤ −{short_number(th['min_decades'])}); inconclusive when "
            f"neither shape wins clearly or with fewer than {th.get('min_points', 10)} points")


@register_rule("exp_vs_power", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_exp_vs_power)
def _exp_vs_power(m: dict, th: dict, q: str) -> Judgement:
    """Linear convergence told from a power law: fitted exponential ``rate`` with ``r2_exp`` against a power law's
    ``r2_power`` on the same ``n_points`` steps (``t0``…``t1``, optional, quoted)."""
    bad = missing_inputs(m, "rate", "r2_exp", "r2_power", "n_points")
    if bad:
        return bad
    rate, r2e, r2p, n = float(m["rate"]), float(m["r2_exp"]), float(m["r2_power"]), int(m["n_points"])
    if n < th.get("min_points", 10):
        return INCONCLUSIVE, f"only {n} points on the last decade (need ≥ {th.get('min_points', 10)})"
    k = float(th["min_decades"])
    res_e, res_p = max(1.0 - r2e, 1e-300), max(1.0 - r2p, 1e-300)
    dec = math.log10(res_p / res_e)
    where = f" on t = {short_number(m['t0'])}…{short_number(m['t1'])}" if finite_number(m.get("t0")) is not None and finite_number(m.get("t1")) is not None else ""
    fits = f"R² exponential {r2e:.5f} vs power law {r2p:.5f}{where} (D = {dec:+.2f} decades)"
    margin = closest(rel_distance(dec, k), rel_distance(dec, -k), rel_distance(r2e, th["min_r2"], True))
    if rate <= 0:
        return NOT_REPRODUCED, f"{q} does not decay (fitted rate {short_number(rate)}); {fits}", margin
    if dec >= k:
        if r2e >= th["min_r2"]:
            return HOLDS, f"the exponential wins clearly: {fits}; rate {short_number(rate)} per step", margin
        return PARTLY, f"the exponential wins ({fits}) but R²_exp < {short_number(th['min_r2'])}", margin
    if dec <= -k:
        return NOT_REPRODUCED, f"a power law fits clearly better: {fits}", margin
    return INCONCLUSIVE, f"neither shape wins by {short_number(k)} decade(s): {fits}", margin


def _describe_direction(th: dict, q: str) -> str:
    return (f"holds if 1 − cos is at floating-point zero, or the final cosine ≥ {short_number(th['min_cosine'])} and the local "
            f"log-log slope of 1 − cos over the last decade of steps is at most the theory's ({q}) + {short_number(th['slack'])}; "
            "partly if 1 − cos falls (slope < −0.1) but slower or not yet close; not reproduced if it does not fall; "
            "inconclusive without a slope")


@register_rule("direction_rate", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_direction)
def _direction_rate(m: dict, th: dict, q: str) -> Judgement:
    """1 − cos to the max-margin direction falls at least as fast as the theorem's rate."""
    bad = missing_inputs(m, "final_cosine")
    if bad:
        return bad
    c = float(m["final_cosine"])
    if 1.0 - c <= th.get("exact", 1e-12):
        return HOLDS, f"final cosine {c:.12f}: on the max-margin direction to rounding"
    bad = missing_inputs(m, "slope", "theory_slope")
    if bad:
        return bad
    s, s_th = float(m["slope"]), float(m["theory_slope"])
    margin = closest(rel_distance(s, s_th + th["slack"]), rel_distance(c, th["min_cosine"], True), rel_distance(s, -0.1))
    if s <= s_th + th["slack"] and c >= th["min_cosine"]:
        return HOLDS, f"slope {s:.3f} ≤ theory {s_th:.3f} + {short_number(th['slack'])}, final cosine {c:.6f}", margin
    if s < -0.1:
        return (PARTLY, f"1 − cos falls (slope {s:.3f}) but theory {s_th:.3f} + {short_number(th['slack'])} / cosine {c:.6f} "
                        "not met", margin)
    return NOT_REPRODUCED, f"1 − cos does not fall (slope {s:.3f})", margin


def _describe_power(th: dict, q: str) -> str:
    shape = ""
    if "min_decades" in th:
        k = short_number(th["min_decades"])
        shape = (f"; and the shape: with D = log10(RSS_alternative / RSS_power) for an exponential and a logarithmic "
                 f"curve fitted to the same points (residuals of log {q}), not reproduced if an alternative wins by "
                 f"{k} decade(s) (D ≤ −{k}), inconclusive unless the power law beats both by {k} (D ≥ {k})")
    return (f"holds if the 95 % interval of the fitted exponent of {q} excludes 0 (decay) and R² (log) ≥ "
            f"{short_number(th['min_r2'])}; partly if it excludes 0 with a lower R²; not reproduced if it lies below 0 "
            f"(the loss grows); inconclusive with fewer than {th['min_points']} points, an interval containing 0 or "
            "any fitted run stopped by its step cap (the slope is then the budget's, not the law's)" + shape)


def _shape_problem(m: dict, th: dict) -> Judgement | None:
    """The curve-shape part of :func:`_power_law_decay` (only with ``min_decades``): ``shape_decades`` is
    log10(RSS of the closest alternative / RSS of the power law) and ``shape_closest`` that alternative's name."""
    if "min_decades" not in th:
        return None
    k, dec = float(th["min_decades"]), finite_number(m.get("shape_decades"))
    alt = str(m.get("shape_closest") or "other")
    alt = ("an " if alt[:1] in "aeiou" else "a ") + alt
    if dec is None:
        return INCONCLUSIVE, "no alternative curve compared on the same points: a power law cannot be told from another shape"
    margin = closest(rel_distance(dec, k), rel_distance(dec, -k))
    if dec <= -k:
        return NOT_REPRODUCED, f"{alt} curve fits the same points better by {-dec:.2f} decade(s) of residual", margin
    if dec < k:
        return INCONCLUSIVE, (f"the points do not tell a power law from {alt} curve (D = {dec:+.2f} decades, need "
                              f"≥ {short_number(k)}); what would decide it: sizes over a wider range"), margin
    return None


@register_rule("power_law_decay", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_power)
def _power_law_decay(m: dict, th: dict, q: str) -> Judgement:
    """A fitted power-law exponent ``alpha`` with interval [``lo``, ``hi``], ``r2`` and ``n_points``; with threshold
    ``min_decades`` also the curve shape against the closest alternative (:func:`_shape_problem`)."""
    bad = missing_inputs(m, "alpha", "n_points")
    if bad:
        return bad
    if m["n_points"] < th["min_points"]:
        return INCONCLUSIVE, f"only {m['n_points']} points (need ≥ {th['min_points']})"
    if capped_count(m):
        return INCONCLUSIVE, f"{capped_count(m)} fitted run(s) hit the step cap: the slope is budget-limited"
    bad = missing_inputs(m, "lo", "hi", "r2")
    if bad:
        return bad
    lo, hi, r2 = float(m["lo"]), float(m["hi"]), float(m["r2"])
    # the interval's end nearest 0, relative to the interval's width (how far the decision is from flipping)
    edge = closest(abs(lo) / (hi - lo) if hi > lo else None, abs(hi) / (hi - lo) if hi > lo else None)
    margin = closest(edge, rel_distance(r2, th["min_r2"], True))
    if hi < 0:
        return NOT_REPRODUCED, f"interval [{short_number(lo)}, {short_number(hi)}] lies below 0: the loss grows", margin
    if lo <= 0:
        return INCONCLUSIVE, f"interval [{short_number(lo)}, {short_number(hi)}] contains 0: cannot tell decay from none", margin
    shape = _shape_problem(m, th)
    if shape:
        verdict, why, *rest = shape
        return verdict, f"interval [{short_number(lo)}, {short_number(hi)}] excludes 0, but {why}", closest(margin, *rest)
    beats = (f"; beats the {m['shape_closest']} curve by {float(m['shape_decades']):.2f} decades"
             if "min_decades" in th else "")
    if r2 >= th["min_r2"]:
        return HOLDS, f"interval [{short_number(lo)}, {short_number(hi)}] excludes 0, R² {r2:.3f}" + beats, margin
    return PARTLY, (f"interval [{short_number(lo)}, {short_number(hi)}] excludes 0 but R² {r2:.3f} < "
                    f"{short_number(th['min_r2'])}" + beats), margin


def fit_problem(m: dict, th: dict, p: float) -> str | None:
    """Why a fitted exponent cannot be judged against the prediction ``p``, or None.

    Too few fitted points (``n_points`` < ``min_points``, default 2), runs stopped by the step cap
    (``n_capped``), or an interval (``lo``/``hi``, when either is given) missing or wider than the
    partly band (2 × ``partly_rel`` × |p|)."""
    if "n_points" in m and (finite_number(m["n_points"]) is None or m["n_points"] < th.get("min_points", 2)):
        return f"only {m['n_points']} fitted points (need ≥ {th.get('min_points', 2)})"
    if capped_count(m):
        return f"{capped_count(m)} fitted run(s) hit the step cap: the exponent is budget-limited"
    if "lo" in m or "hi" in m:
        bad = missing_inputs(m, "lo", "hi")
        if bad:
            return f"no interval for the fitted exponent ({bad[1]})"
        width = float(m["hi"]) - float(m["lo"])
        if width > 2 * th["partly_rel"] * abs(p):
            return (f"the interval [{short_number(m['lo'])}, {short_number(m['hi'])}] (width {short_number(width)}) is wider than the partly band "
                    f"±{100 * th['partly_rel']:.0f} % of {short_number(p)}: cannot discriminate")
    return None


def width_margin(m: dict, th: dict, p: float) -> float | None:
    """Relative distance of a fitted interval's width to the partly band 2 × partly_rel × |p| (None without one)."""
    lo, hi = finite_number(m.get("lo")), finite_number(m.get("hi"))
    if lo is None or hi is None:
        return None
    return rel_distance(hi - lo, 2 * th["partly_rel"] * abs(p))


def _describe_exponent(th: dict, q: str) -> str:
    s = (f"holds if |fitted − predicted| ≤ {100 * th['holds_rel']:.0f} % of the prediction ({q}), partly if ≤ "
         f"{100 * th['partly_rel']:.0f} %; inconclusive if the fitted exponent's interval is wider than the partly "
         f"band (2 × {100 * th['partly_rel']:.0f} % of the prediction)")
    if "min_points" in th:
        s += f", the fit has fewer than {th['min_points']} points, or any fitted run hit its step cap"
    if th.get("control"):
        s += ("; a holds or partly stands only if the fitted exponent's interval lies wholly outside the partly band "
              f"(±{100 * th['partly_rel']:.0f} %) of the prediction from the trivial control's ID (an untrained copy of "
              "the measuring network, embedded the same way) — if it does not, or the control was not measured, "
              "inconclusive: the agreement is no evidence")
    return s


@register_rule("exponent_match", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_exponent)
def _exponent_match(m: dict, th: dict, q: str) -> Judgement:
    """A fitted exponent (``fitted``, optional interval ``lo``/``hi``) against ``predicted``.

    Optional ``n_points`` (too few → inconclusive), ``n_capped`` (runs stopped by the step cap →
    inconclusive), ``band_lo``/``band_hi`` (the prediction's range over ID estimators, quoted in the reason).
    With threshold ``control``, a holds or partly needs the fitted interval to lie wholly outside the partly band of
    ``control_predicted`` (the prediction from a trivial control's ID).
    """
    found = _exponent(m, th)
    if not th.get("control") or found[0] not in (HOLDS, PARTLY):
        return found
    if finite_number(m.get("control_predicted")) is None:
        return INCONCLUSIVE, f"{found[1]}; but no trivial control was measured (an untrained copy's ID)", found[2]
    c, a = float(m["control_predicted"]), float(m["fitted"])
    lo_c, hi_c = sorted((c * (1 - th["partly_rel"]), c * (1 + th["partly_rel"])))
    lo, hi = finite_number(m.get("lo")), finite_number(m.get("hi"))
    lo, hi = (lo, hi) if lo is not None and hi is not None else (a, a)
    versus = (f"the untrained copy's ID predicts {short_number(c)}, partly band [{short_number(lo_c)}, "
              f"{short_number(hi_c)}]")
    if hi < lo_c or lo > hi_c:  # the fitted exponent and its whole interval miss the control's partly band
        return found[0], f"{found[1]}; {versus}: the fitted interval misses it", found[2]
    how = "holds the fitted exponent" if lo_c <= a <= hi_c else "overlaps the fitted interval"
    return INCONCLUSIVE, f"{found[1]}; but {versus}, which {how}: no evidence", found[2]


def _exponent(m: dict, th: dict) -> Judgement:
    """The exponent test of :func:`_exponent_match` on one prediction."""
    bad = missing_inputs(m, "fitted", "predicted")
    if bad:
        return bad
    a, p = float(m["fitted"]), float(m["predicted"])
    if p == 0:
        return INCONCLUSIVE, "the prediction is 0: no relative tolerance"
    rel = abs(a - p) / abs(p)
    band = ""
    if finite_number(m.get("band_lo")) is not None and finite_number(m.get("band_hi")) is not None:
        inside = m["band_lo"] <= a <= m["band_hi"]
        band = (f"; {'inside' if inside else 'outside'} the ID estimators' prediction band "
                f"[{short_number(m['band_lo'])}, {short_number(m['band_hi'])}]")
    if finite_number(th.get("paper_abs")) is not None:
        band += f"; {'within' if abs(a - p) <= th['paper_abs'] else 'outside'} the paper's ±{short_number(th['paper_abs'])}"
    margin = closest(rel_distance(rel, th["holds_rel"]), rel_distance(rel, th["partly_rel"]), width_margin(m, th, p))
    problem = fit_problem(m, th, p)
    if problem:
        return INCONCLUSIVE, problem + band, margin
    delta = f"fitted {short_number(a)} vs predicted {short_number(p)}: Δ = {a - p:+.3g} ({100 * rel:.0f} %)"
    if rel <= th["holds_rel"]:
        return HOLDS, delta + band, margin
    if rel <= th["partly_rel"]:
        return PARTLY, delta + band, margin
    return NOT_REPRODUCED, delta + band, margin


# ---------------------------------------------------------------------------------------------
# model-size exponent (Theorem 2 of paper B), judged only with a valid harness


def _describe_model_rate(th: dict, q: str) -> str:
    f = short_number(th["fraction"])
    return (f"inconclusive unless the positive control (a ReLU MLP) reaches ≥ {f} × its known rate in the same design "
            "(the harness does not reach the known rate) and a width passes the data check (its MSE falls by at most "
            "10 % with twice the samples; wider widths that fail are left out of the fit); then holds if the deciding "
            f"interval's lower end ≥ {f} × {q} and the untrained networks' interval lies wholly below it (a trivial "
            f"model must fail the claim); not reproduced if its upper end < {f} × {q}; inconclusive otherwise (the "
            "interval straddles the threshold, or fewer than 3 widths were fitted)")


@register_rule("model_rate", (HOLDS, NOT_REPRODUCED, INCONCLUSIVE), _describe_model_rate)
def _model_rate(m: dict, th: dict, q: str) -> Judgement:
    """``fitted``/``lo``/``hi`` (α̂_N and its deciding interval) against ``fraction`` × ``predicted``; ``control``
    (the positive control's α̂_N) against ``fraction`` × ``control_rate``; ``untrained_hi`` (the untrained
    networks' upper end) must lie below the threshold."""
    bad = missing_inputs(m, "predicted", "control_rate")
    if bad:
        return bad
    frac = float(th["fraction"])
    need, c_need = frac * float(m["predicted"]), frac * float(m["control_rate"])
    c = finite_number(m.get("control"))
    if c is None:
        return INCONCLUSIVE, "the positive control has no fit: the harness is not validated"
    if finite_number(m.get("control_data_ok")) == 0:
        return INCONCLUSIVE, ("the positive control is optimisation- or data-limited (no width passes the data check): "
                              "the harness is not validated")
    if c < c_need:
        return (INCONCLUSIVE, f"the harness does not reach the known rate: the control's α̂_N {short_number(c)} < "
                              f"{short_number(c_need)}", rel_distance(c, c_need))
    ok = finite_number(m.get("data_ok"))
    if ok is None or ok < 1:
        cmd = m.get("command")
        return INCONCLUSIVE, ("optimisation- or data-limited: no width passes the data check (its MSE still falls by "
                              "more than 10 % with twice the samples); a longer training budget would decide"
                              + (f" ({cmd})" if cmd else "")
                              if ok is not None else "the data check did not run: approximation-limited is not shown")
    bad = missing_inputs(m, "fitted", "lo", "hi")
    if bad:
        return INCONCLUSIVE, bad[1] + " (fewer than 3 widths fitted?)"
    a, lo, hi = float(m["fitted"]), float(m["lo"]), float(m["hi"])
    margin = closest(rel_distance(lo, need), rel_distance(hi, need))
    iv = f"α̂_N = {short_number(a)} [{short_number(lo)}, {short_number(hi)}]"
    if hi < need:
        return NOT_REPRODUCED, f"{iv}: upper end < {short_number(need)} = {short_number(frac)} × {q}", margin
    if lo < need:
        return INCONCLUSIVE, f"{iv} straddles {short_number(need)}: more seeds or widths would decide", margin
    u = finite_number(m.get("untrained_hi"))
    if u is None or u >= need:
        return (INCONCLUSIVE, f"{iv} ≥ {short_number(need)}, but the untrained networks' interval reaches "
                              f"{short_number(u) if u is not None else '(missing)'}: a trivial model is not excluded", margin)
    return HOLDS, f"{iv}: lower end ≥ {short_number(need)} = {short_number(frac)} × {q}; untrained ≤ {short_number(u)}", margin
