"""Verdict rules on how a quantity decays: exponential decay against a reference rate, an exponential told from a
power law, the direction's convergence rate, power-law decay (with the curve's shape against alternatives) and the
attention bound of Theorem 2 (paper A) with the gap's rate against C1.
"""

from __future__ import annotations

import math

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
)


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


# ---------------------------------------------------------------------------------------------
# the attention bound (Theorem 2 of paper A), judged against the uniform-attention baseline


def _describe_attention(th: dict, q: str) -> str:
    clear = th.get("min_clearance", 0.0)
    return ("not reproduced if the final minimum attention on optimal tokens is below the theorem's bound "
            "1/(1 + L_max·exp(−C1 t)); inconclusive if the bound does not clear the uniform-attention baseline of the "
            f"same sentences (the control: W_kq = 0, no training) by at least {short_number(clear)} (a bound that uniform "
            "attention nearly meets says nothing); otherwise holds if the attention gap decays at a fitted rate ≥ C1, "
            "partly if not")


@register_rule("attention_bound", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_attention)
def _attention_bound(m: dict, th: dict, q: str) -> Judgement:
    """Theorem 2's attention bound judged against the uniform-attention baseline (the control): the bound must
    exceed it by ``min_clearance`` (default 0) for meeting the bound to say anything."""
    bad = missing_inputs(m, "attention", "bound", "baseline")
    if bad:
        return bad
    att, bound, base = float(m["attention"]), float(m["bound"]), float(m["baseline"])
    clear = float(th.get("min_clearance", 0.0))
    rate, c1 = finite_number(m.get("gap_rate")), finite_number(m.get("c1"))
    margin = closest(rel_distance(att, bound), rel_distance(bound - base, clear), rel_distance(rate, c1))
    if att < bound:
        return NOT_REPRODUCED, f"attention {att:.4f} < bound {bound:.4f}", margin
    if bound - base < clear or bound <= base:
        return INCONCLUSIVE, (f"bound {bound:.4f} clears the uniform-attention baseline {base:.4f} by "
                              f"{bound - base:+.4f} < {short_number(clear)}: uniform attention (no training) nearly meets it, so "
                              f"meeting it says nothing (attention {att:.4f})"), margin
    if rate is not None and c1 is not None and rate >= c1:
        return HOLDS, (f"attention {att:.4f} ≥ bound {bound:.4f}, which clears the uniform baseline {base:.4f} by "
                       f"{bound - base:.4f} ≥ {short_number(clear)}; gap rate {short_number(rate)} ≥ C1 {short_number(c1)}"), margin
    return PARTLY, (f"attention {att:.4f} ≥ bound {bound:.4f} (baseline {base:.4f} + {bound - base:.4f}), but gap rate "
                    f"{'—' if rate is None else short_number(rate)} < C1 {'—' if c1 is None else short_number(c1)}"), margin
